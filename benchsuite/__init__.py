"""benchsuite: a reproducible benchmark suite for Bayesian optimisation and NAS.

The Python API (:mod:`benchsuite.api`: ``run``, ``load_results``, ``plot``, ``statistics``) is imported on
first use, so ``import benchsuite`` and the command line do not load pandas or matplotlib.
"""
from __future__ import annotations

from typing import Any

from .version import __version__  # noqa: E402

from .benchmark import Benchmark, Fidelity, Requirements, Result  # noqa: E402
from .errors import (  # noqa: E402
    BenchsuiteError,
    BudgetError,
    DataError,
    InvalidConfigError,
    InvalidSettingError,
    PluginError,
    TrialFailure,
    UnknownNameError,
    UnsupportedError,
)
from .optimizer import Capabilities, Optimizer, Suggestion, Trial  # noqa: E402
from .settings import Setting  # noqa: E402
from .space import Binary, Categorical, Float, Integer, Ordinal, SearchSpace, Space  # noqa: E402

__all__ = [
    "Benchmark", "BenchsuiteError", "Binary", "BudgetError", "Capabilities", "Categorical", "DataError",
    "Fidelity", "Float", "Integer", "InvalidConfigError", "InvalidSettingError", "Optimizer", "Ordinal",
    "PluginError", "Requirements", "Result", "SearchSpace", "Setting", "Space", "Suggestion", "Trial",
    "TrialFailure", "UnknownNameError", "UnsupportedError", "__version__",
    "load_results", "plot", "run", "statistics",
]

_API = ("load_results", "plot", "run", "statistics")  # benchsuite.api, imported lazily (pandas, matplotlib)


def __getattr__(name: str) -> Any:
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'benchsuite' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
