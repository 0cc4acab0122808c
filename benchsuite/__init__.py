"""benchsuite: a reproducible benchmark suite for Bayesian optimisation and NAS.

Every public name is imported on first use (PEP 562): ``import benchsuite.cli`` (the ``benchsuite``
command, which re-executes itself once before a run) and ``benchsuite --version`` then load neither
numpy nor YAML, and the Python API (:mod:`benchsuite.api`: ``run``, ``load_results``, ``plot``,
``statistics``) loads pandas and matplotlib only when called.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

# public name -> the module that defines it
_LAZY = {
    **dict.fromkeys(("Benchmark", "Fidelity", "Requirements", "Result"), "benchmark"),
    **dict.fromkeys(("BenchsuiteError", "BudgetError", "DataError", "InvalidConfigError", "InvalidSettingError",
                     "PluginError", "TrialFailure", "UnknownNameError", "UnsupportedError"), "errors"),
    **dict.fromkeys(("Capabilities", "Optimizer", "Suggestion", "Trial"), "optimizer"),
    "Setting": "settings",
    **dict.fromkeys(("Binary", "Categorical", "Float", "Integer", "Ordinal", "SearchSpace", "Space"), "space"),
    **dict.fromkeys(("load_results", "plot", "run", "statistics"), "api"),
}

__all__ = sorted([*_LAZY, "__version__"])

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .api import load_results, plot, run, statistics
    from .benchmark import Benchmark, Fidelity, Requirements, Result
    from .errors import (BenchsuiteError, BudgetError, DataError, InvalidConfigError, InvalidSettingError,
                         PluginError, TrialFailure, UnknownNameError, UnsupportedError)
    from .optimizer import Capabilities, Optimizer, Suggestion, Trial
    from .settings import Setting
    from .space import Binary, Categorical, Float, Integer, Ordinal, SearchSpace, Space


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'benchsuite' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    if module != "api":  # api's names are functions that stay looked up there (tests patch them)
        globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
