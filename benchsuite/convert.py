"""Public converters from a benchsuite :class:`~benchsuite.space.Space` to ConfigSpace and to Optuna.

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
"""
from __future__ import annotations

import importlib
from typing import Any

from .errors import UnsupportedError
from .space import Binary, Categorical, Float, Integer, Ordinal, SearchSpace, Space

__all__ = ["from_configspace", "from_optuna", "optuna_params", "require", "to_configspace", "to_configspace_config",
           "to_optuna_distributions"]


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
