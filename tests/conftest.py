"""Fixtures shared by the test modules."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load_script(relpath: str, name: str | None = None) -> ModuleType:
    """Import a script of the checkout that is not in the package (``studies/*.py``, ``tables/*/build.py``)
    as a module, with its folder on ``sys.path`` while it loads (for its sibling imports)."""
    path = ROOT / relpath
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(path.parent))
    return mod


@pytest.fixture(scope="session")
def load_script():
    """``load_script("studies/x.py")``: the script imported as a module (see ``_load_script``)."""
    return _load_script
