"""Optional dependencies: which pip extra provides which module, and one-line errors naming it.

The core install (``pip install benchsuite``) holds what the lookup tables, the synthetic
benchmarks and the non-torch optimizers need. A plugin that needs more declares the extras in
its class attribute ``needs`` (import names, e.g. ``needs = ("torch",)``); the registry lists it
as unavailable, naming the extra that installs the missing module. Code that needs an
optional module only in some modes imports it lazily; a missing one surfaces as
:class:`MissingExtraError` (through :func:`import_optional`, or the CLI's translation of a
``ModuleNotFoundError``), never a traceback.
"""
from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .errors import MissingExtraError

#: the importable top-level modules of each extra (pyproject.toml [project.optional-dependencies])
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "nas": ("torch", "ot"),
    "bo": ("emcee",),
    "svm": ("sklearn",),
    "plot": ("matplotlib",),
    "stats": ("scikit_posthocs",),
    "workflow": ("snakemake",),
    "smac": ("smac", "ConfigSpace"),
    "tpe": ("optuna",),
    "dask": ("dask", "distributed"),
    "botorch": ("botorch", "gpytorch"),
}

#: top-level module -> the extra that installs it
MODULE_EXTRA: dict[str, str] = {m: extra for extra, mods in EXTRA_MODULES.items() for m in mods}


def install_hint(extra: str) -> str:
    """The pip command that installs ``extra``."""
    return f"pip install 'benchsuite[{extra}]'"


def missing_modules(modules: tuple[str, ...] | list[str]) -> list[str]:
    """The ``modules`` (top-level import names) that cannot be imported here, found without importing them."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def unavailable_reason(modules: tuple[str, ...] | list[str]) -> str:
    """Empty if every module in ``modules`` is installed, else one line naming the extra(s) to install
    (a third-party plugin may need a package no benchsuite extra provides: then it says so)."""
    missing = missing_modules(modules)
    if not missing:
        return ""
    extras = sorted({MODULE_EXTRA[m] for m in missing if m in MODULE_EXTRA})
    others = [m for m in missing if m not in MODULE_EXTRA]
    hints = [install_hint(e) for e in extras] + ([f"install {', '.join(others)} (no benchsuite extra provides it)"]
                                                 if others else [])
    return f"needs {', '.join(missing)}: " + " and ".join(hints)


def missing_extra_error(exc: ModuleNotFoundError, what: str = "this") -> MissingExtraError | None:
    """The one-line error for an import of an optional module that failed, or None if ``exc``
    is about a module no extra provides (a real bug, left to propagate)."""
    top = (exc.name or "").split(".")[0]
    extra = MODULE_EXTRA.get(top)
    if extra is None:
        return None
    return MissingExtraError(f"{what} needs the optional package {top!r}, which is not installed: "
                             f"{install_hint(extra)}")


def import_optional(module: str, what: str) -> ModuleType:
    """Import ``module`` (an optional dependency) or raise :class:`MissingExtraError` naming its extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        err = missing_extra_error(exc, what)
        if err is None:
            raise
        raise err from None
