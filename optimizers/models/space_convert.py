"""Moved to :mod:`benchsuite.convert` (public); these names stay importable from here for old code."""
from __future__ import annotations

from benchsuite.convert import from_configspace, from_optuna, optuna_params, require, to_configspace
from benchsuite.convert import to_optuna_distributions as to_optuna

__all__ = ["from_configspace", "from_optuna", "optuna_params", "require", "to_configspace", "to_optuna"]
