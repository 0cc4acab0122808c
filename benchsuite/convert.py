"""Public converters from a benchsuite :class:`~benchsuite.space.Space` to ConfigSpace and to Optuna, and
from a run's trials to the data frames of Optuna and Syne Tune.

Use them to drive an outside optimizer library on a benchsuite benchmark (the SMAC and TPE
bridges do)::

    from benchsuite.convert import to_configspace, from_configspace
    cs = to_configspace(bench.space, seed=0)
    config = from_configspace(bench.space, cs.sample_configuration())

ConfigSpace and Optuna are optional extras, imported inside the functions: this module
imports without them, and a missing library raises
:class:`~benchsuite.errors.UnsupportedError` with one line saying which extra to install.

Mapping:

=============  ===================================  =======================================
benchsuite     ConfigSpace                          Optuna
=============  ===================================  =======================================
Float          UniformFloatHyperparameter (log)     FloatDistribution (log)
Integer        UniformIntegerHyperparameter (log)   IntDistribution (log)
Ordinal        OrdinalHyperparameter (levels)       IntDistribution over the level index
Categorical    CategoricalHyperparameter            CategoricalDistribution
Binary         CategoricalHyperparameter (0, 1)     CategoricalDistribution (0, 1)
=============  ===================================  =======================================

Optuna has no ordinal distribution; the level index keeps the order, which is what TPE's
numeric Parzen estimators need. ``ordinal_as="categorical"`` gives the index as an
unordered choice instead (what an ``hp.choice`` encoding in hyperopt does). Variable
names and defaults carry over; architecture spaces (a :class:`~benchsuite.space.SearchSpace`
that is not a :class:`~benchsuite.space.Space`) have no equivalent and are refused.

A run's trials (the frame of :func:`benchsuite.results.load_result`, :func:`benchsuite.load_results`
of one file or :func:`benchsuite.run`) in the columns other libraries' tools read; neither
library is needed for this:

- :func:`to_optuna_trials`: the columns of Optuna's ``study.trials_dataframe()``: ``number``
  (the trial id, in ask order), ``value`` (the loss; empty for a failed trial),
  ``datetime_start`` / ``datetime_complete`` (ask and tell on the run's clock, from ``origin``),
  ``duration``, ``params_<variable>``, ``user_attrs_fidelity`` / ``_worker`` / ``_cost_s`` and
  ``state`` (``COMPLETE`` or ``FAIL``).
- :func:`to_syne_tune_results`: the columns of Syne Tune's results frame: ``trial_id``, the
  metric (``loss`` by default), ``st_worker_time`` (evaluation seconds), ``st_worker_iter``,
  ``st_tuner_time`` (when the result was told, on the run's clock), ``st_status``
  (``Completed`` or ``Failed``), ``fidelity`` where the run has one, and ``config_<variable>``,
  in the order the results arrived.
"""
from __future__ import annotations

import importlib
import json
from typing import Any

from .errors import DataError, UnsupportedError
from .space import Binary, Categorical, Float, Integer, Ordinal, SearchSpace, Space

__all__ = ["from_configspace", "from_optuna", "optuna_params", "require", "to_configspace", "to_configspace_config",
           "to_optuna_distributions", "to_optuna_trials", "to_syne_tune_results"]


def require(module: str, extra: str) -> Any:
    """Import ``module`` or raise :class:`UnsupportedError` telling how to install it."""
    try:
        # looked up on the module at call time, so tests can simulate a missing library
        return importlib.import_module(module)
    except ImportError as exc:
        raise UnsupportedError(
            f"the optional package {module!r} is missing ({exc}); install it with: pip install 'benchsuite[{extra}]'"
        ) from None


def _vector_space(space: SearchSpace, who: str) -> Space:
    if not isinstance(space, Space):
        raise UnsupportedError(f"{who} works on spaces of typed variables (benchsuite.space.Space), "
                               f"not on {type(space).__name__}")
    return space


def _plain(v: Any) -> Any:
    """A numpy scalar as the Python scalar it holds (ConfigSpace returns numpy types)."""
    return v.item() if hasattr(v, "item") else v


def to_configspace(space: SearchSpace, seed: int | None = None) -> Any:
    """A ``ConfigSpace.ConfigurationSpace`` with one hyperparameter per variable, same names and defaults."""
    space = _vector_space(space, "the ConfigSpace converter")
    cs_mod = require("ConfigSpace", "smac")
    hps = []
    for v in space.variables:
        if isinstance(v, Float):
            hps.append(cs_mod.UniformFloatHyperparameter(v.name, v.low, v.high, log=v.log, default_value=v.default))
        elif isinstance(v, Integer):
            hps.append(cs_mod.UniformIntegerHyperparameter(v.name, v.low, v.high, log=v.log,
                                                           default_value=v.default))
        elif isinstance(v, Categorical):  # before Ordinal: Categorical (and Binary) subclass it
            hps.append(cs_mod.CategoricalHyperparameter(v.name, list(v.levels), default_value=v.default))
        elif isinstance(v, Ordinal):
            hps.append(cs_mod.OrdinalHyperparameter(v.name, list(v.levels), default_value=v.default))
        else:
            raise UnsupportedError(f"no ConfigSpace equivalent for variable {v!r}")
    cs = cs_mod.ConfigurationSpace(seed=seed)
    if hasattr(cs, "add"):  # ConfigSpace >= 1.0
        cs.add(hps)
    else:
        cs.add_hyperparameters(hps)
    return cs


def to_configspace_config(cs: Any, space: SearchSpace, config: dict[str, Any]) -> Any:
    """One of our configurations as a ``Configuration`` of ``cs`` (made by :func:`to_configspace` from ``space``)."""
    space = _vector_space(space, "the ConfigSpace converter")
    cs_mod = require("ConfigSpace", "smac")
    config = space.validate(config)
    return cs_mod.Configuration(cs, values={v.name: _plain(config[v.name]) for v in space.variables})


def from_configspace(space: Space, config: Any) -> dict[str, Any]:
    """Our (validated) configuration from a ConfigSpace ``Configuration`` or a dict."""
    values = dict(config)
    out = {}
    for v in space.variables:
        x = _plain(values[v.name])
        if isinstance(v, Binary):
            x = int(x)
        out[v.name] = x
    return space.validate(out)


def to_optuna_distributions(space: SearchSpace, ordinal_as: str = "index") -> dict[str, Any]:
    """Optuna distributions by variable name; ordinal variables as their level index or as categories."""
    if ordinal_as not in ("index", "categorical"):
        raise UnsupportedError(f"ordinal_as must be 'index' or 'categorical', got {ordinal_as!r}")
    space = _vector_space(space, "the Optuna converter")
    dist = require("optuna.distributions", "tpe")
    out: dict[str, Any] = {}
    for v in space.variables:
        if isinstance(v, Float):
            out[v.name] = dist.FloatDistribution(v.low, v.high, log=v.log)
        elif isinstance(v, Integer):
            out[v.name] = dist.IntDistribution(v.low, v.high, log=v.log)
        elif isinstance(v, Categorical):
            out[v.name] = dist.CategoricalDistribution(list(v.levels))
        elif isinstance(v, Ordinal):
            out[v.name] = dist.IntDistribution(0, v.n_levels - 1) if ordinal_as == "index" \
                else dist.CategoricalDistribution(list(range(v.n_levels)))
        else:
            raise UnsupportedError(f"no Optuna distribution for variable {v!r}")
    return out


def from_optuna(space: Space, params: dict[str, Any]) -> dict[str, Any]:
    """Our (validated) configuration from Optuna trial parameters (either ``ordinal_as``)."""
    out = {}
    for v in space.variables:
        x = _plain(params[v.name])
        if isinstance(v, Ordinal) and not isinstance(v, Categorical):
            x = v.from_code(int(x))
        out[v.name] = x
    return space.validate(out)


def optuna_params(space: Space, config: dict[str, Any]) -> dict[str, Any]:
    """Optuna parameter values of one of our configurations (inverse of :func:`from_optuna`)."""
    out = {}
    for v in space.variables:
        x = config[v.name]
        out[v.name] = v.to_code(x) if isinstance(v, Ordinal) and not isinstance(v, Categorical) else x
    return out


# -- a run's trials as other libraries' data frames ---------------------------------------------------
_RUN_LABELS = ("benchmark", "optimizer", "repetition")


def _one_run(df: Any, who: str) -> Any:
    """``df`` checked to be one run's trials (with the result file's columns)."""
    missing = [c for c in ("trial", "worker", "status", "config", "fidelity", "ask_time", "start_time", "end_time",
                           "told_time", "loss", "cost_s") if c not in df.columns]
    if missing:
        raise DataError(f"{who}: the frame lacks column(s) {', '.join(missing)}; give one run's frame "
                        "(benchsuite.results.load_result, benchsuite.load_results of one file, benchsuite.run)")
    labels = [c for c in _RUN_LABELS if c in df.columns]
    if labels and len(df.drop_duplicates(labels)) > 1:
        raise DataError(f"{who}: the frame holds {len(df.drop_duplicates(labels))} runs; convert one at a time "
                        f"(for _, run in df.groupby({labels!r}): ...)")
    return df


def _configs(run: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Each row's configuration (from the JSON ``config`` column) and the variable names, in the space's order."""
    configs = [json.loads(c) for c in run["config"]]
    configs = [c if isinstance(c, dict) else {} for c in configs]
    return configs, list(dict.fromkeys(k for c in configs for k in c))


def to_optuna_trials(df: Any, space: Space | None = None, origin: Any = "1970-01-01") -> Any:
    """One run's trials as Optuna's ``study.trials_dataframe()`` lays them out (see the module docstring).

    Rows are sorted by ``number`` (the trial id). ``params_<variable>`` hold the configuration's
    values; with ``space``, the values :func:`optuna_params` gives (an ordinal variable's level
    index, matching :func:`to_optuna_distributions`). Times are the run's clock in seconds,
    placed after ``origin`` (any ``pandas.Timestamp`` argument; the Unix epoch by default).
    """
    import numpy as np
    import pandas as pd

    run = _one_run(df, "to_optuna_trials").sort_values("trial", kind="stable")
    configs, names = _configs(run)
    if space is not None:
        space = _vector_space(space, "to_optuna_trials")
        configs = [optuna_params(space, c) for c in configs]
        names = space.names
    start = pd.Timestamp(origin)
    ok = (run["status"] == "ok").to_numpy()
    ask = pd.to_timedelta(run["ask_time"].to_numpy(dtype=float), unit="s")
    told = pd.to_timedelta(run["told_time"].to_numpy(dtype=float), unit="s")
    out = pd.DataFrame({
        "number": run["trial"].to_numpy(dtype=int),
        "value": np.where(ok, run["loss"].to_numpy(dtype=float), np.nan),
        "datetime_start": start + ask,
        "datetime_complete": start + told,
        "duration": told - ask,
    })
    for name in names:
        out[f"params_{name}"] = [c.get(name) for c in configs]
    out["user_attrs_fidelity"] = run["fidelity"].to_numpy()
    out["user_attrs_worker"] = run["worker"].to_numpy(dtype=int)
    out["user_attrs_cost_s"] = run["cost_s"].to_numpy(dtype=float)
    out["state"] = np.where(ok, "COMPLETE", "FAIL")
    return out


def to_syne_tune_results(df: Any, metric: str = "loss") -> Any:
    """One run's trials as Syne Tune's results frame (``tuner.results`` / ``results.csv.zip``) lays them out.

    One row per result, in the order the results arrived (the run's tell order); the loss goes
    in the column ``metric``; ``fidelity`` is there when the run evaluated at fidelities.
    """
    import numpy as np
    import pandas as pd

    run = _one_run(df, "to_syne_tune_results")
    configs, names = _configs(run)
    ok = (run["status"] == "ok").to_numpy()
    out = pd.DataFrame({
        "trial_id": run["trial"].to_numpy(dtype=int),
        metric: np.where(ok, run["loss"].to_numpy(dtype=float), np.nan),
        "st_worker_time": (run["end_time"] - run["start_time"]).to_numpy(dtype=float),
        "st_worker_iter": np.zeros(len(run), dtype=int),
        "st_tuner_time": run["told_time"].to_numpy(dtype=float),
        "st_status": np.where(ok, "Completed", "Failed"),
    })
    if run["fidelity"].notna().any():
        out["fidelity"] = run["fidelity"].to_numpy()
    for name in names:
        out[f"config_{name}"] = [c.get(name) for c in configs]
    return out
