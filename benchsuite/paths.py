"""Where the suite's own files are: one answer for a clone and for an installed wheel.

In a clone, ``benchsuite/optimizers``, ``benchsuite/analysis``, ``benchsuite/tables``,
``benchsuite/protocols`` and ``benchsuite/workflow/Snakefile`` are symbolic links to the
repository's top-level folders and its Snakefile; a wheel holds real copies at the same places
(see ``[tool.setuptools.package-data]`` in pyproject.toml). Every path here is therefore
inside the ``benchsuite`` package and never depends on the current directory.
"""
from __future__ import annotations

from pathlib import Path

#: the ``benchsuite`` package folder
PACKAGE_DIR = Path(__file__).resolve().parent
#: committed lookup tables (``tables/<name>/<name>.h5`` with a ``.sha256`` sidecar)
TABLES_DIR = (PACKAGE_DIR / "tables").resolve()
#: the suite's experiment protocols (``protocols/*.yaml``)
PROTOCOLS_DIR = (PACKAGE_DIR / "protocols").resolve()
#: the workflow (the repository's Snakefile)
SNAKEFILE = PACKAGE_DIR / "workflow" / "Snakefile"


def checkout_root() -> Path | None:
    """The repository root when benchsuite runs from a git checkout (editable install or clone),
    None for an installed wheel (whose site-packages may well lie inside some other checkout)."""
    root = (PACKAGE_DIR / "protocols").resolve().parent
    if root == PACKAGE_DIR or not (root / "pyproject.toml").is_file() or not (root / ".git").exists():
        return None
    return root
