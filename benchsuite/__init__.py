"""benchsuite: a reproducible benchmark suite for Bayesian optimisation and NAS."""
from __future__ import annotations

__version__ = "0.1.0"

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
]
