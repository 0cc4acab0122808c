"""Build hook: the wheel gets the repository's Snakefile and profiles/ as benchsuite/workflow/.

Everything else is declared in pyproject.toml. The workflow files live at the top of the
repository (``snakemake all`` there finds them) and have no Python package to belong to, so
they are copied into the built package here rather than linked into ``benchsuite/``.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPyWithWorkflow(build_py):
    """build_py, plus Snakefile and profiles/ copied to benchsuite/workflow/ (not in editable mode)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads them from the checkout (benchsuite.paths)
        target = Path(self.build_lib) / "benchsuite" / "workflow"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / "Snakefile", target / "Snakefile")
        shutil.copytree(ROOT / "profiles", target / "profiles", dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildPyWithWorkflow})
