"""Where the suite's own files are: one answer for a clone and for an installed wheel.

A wheel holds the lookup tables, the protocols and the workflow inside the package
(``benchsuite/tables``, ``benchsuite/protocols``, ``benchsuite/workflow/Snakefile``; see
pyproject.toml and setup.py). A clone (editable install, or the checkout on ``sys.path``) has
them at the repository's top level (``tables/``, ``protocols/``, ``Snakefile``), beside the
``benchsuite`` folder. No symbolic link is involved and nothing depends on the current directory.
"""
from __future__ import annotations

import os
from pathlib import Path

#: the ``benchsuite`` package folder
PACKAGE_DIR = Path(os.path.abspath(os.path.dirname(__file__)))
_INSTALLED = (PACKAGE_DIR / "protocols").is_dir()
_BASE = PACKAGE_DIR if _INSTALLED else PACKAGE_DIR.parent
#: committed lookup tables (``tables/<name>/<name>.h5`` with a ``.sha256`` sidecar)
TABLES_DIR = _BASE / "tables"
#: the suite's experiment protocols (``protocols/*.yaml``)
PROTOCOLS_DIR = _BASE / "protocols"
#: the committed runs of the paper protocols: in a clone the whole record (``reproductions/<protocol>/``), in a
#: wheel only what a race reads of it (``<protocol>/race.csv.xz``, benchsuite.analysis.baselines)
REPRODUCTIONS_DIR = _BASE / "reproductions"
#: the workflow (the repository's Snakefile)
SNAKEFILE = (PACKAGE_DIR / "workflow" / "Snakefile") if _INSTALLED else (_BASE / "Snakefile")


def checkout_root() -> Path | None:
    """The repository root when benchsuite runs from a git checkout (editable install or clone),
    None for an installed wheel (whose site-packages may well lie inside some other checkout)."""
    root = PACKAGE_DIR.parent
    if _INSTALLED or not (root / "pyproject.toml").is_file() or not (root / ".git").exists():
        return None
    return root
