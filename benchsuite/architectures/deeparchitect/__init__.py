"""DeepArchitect (Negrinho et al. 2019): a language for modular search spaces, compiled to PyTorch.

* ``core``: the language (hyperparameters, basic and substitution modules, traversal);
* ``daspace``: :class:`DASpace`, a space in the language as a suite ``SearchSpace`` whose
  configurations are value tuples, with ``walk`` for searchers;
* ``spaces``: Nasbench, Nasnet, Flat, Genetic (deeparchitect.txt Sec. 7.1) and the
  NAS-Bench-201 cell;
* ``torch_backend``: compilation of a specified space into an ``nn.Module`` (the only
  module that imports torch, and only when a network is built).

Use :func:`make_space` (``make_space("genetic")``, ``make_space("nasnet", init_filters=8)``).
"""
from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from ...errors import InvalidConfigError, InvalidSettingError, UnknownNameError
from .. import nb201 as _nb201
from . import spaces as _spaces
from .daspace import DASpace

__all__ = ["SPACES", "DASpace", "NB201DASpace", "make_space"]


class NB201DASpace(DASpace):
    """The NAS-Bench-201 cell in the language; value tuples are the six operations in string order."""

    def nb201_arch(self, values: Any) -> str:
        """The official architecture string ``|op~0|+|op~0|op~1|+|op~0|op~1|op~2|``."""
        vals = self.validate(values)
        return _nb201.to_arch_string(dict(zip(_nb201.EDGE_NAMES, vals)))

    def from_nb201_arch(self, arch: str) -> tuple:
        """The value tuple of an official architecture string (inverse of :meth:`nb201_arch`)."""
        cfg = _nb201.from_arch_string(arch)
        return self.validate([cfg[name] for name in _nb201.EDGE_NAMES])


_DESCRIPTIONS = {
    "nasbench": "NAS-Bench-101 cell (21 edge bits + 5 operations, shared), 3 stacks x 3 cells",
    "nasnet": "NASNet cells (normal + reduction: 5 nodes x 2 inputs and operations), 18 + 2 cells",
    "flat": "Liu et al.'s flat 11-node motif (55 edges over 6 primitives), used 6 times",
    "genetic": "Genetic CNN stages of 3, 4, 5 nodes (19 connection bits)",
    "nb201": "NAS-Bench-201 cell (6 edges x 5 operations), the suite's NB201 table network",
}


def _factory(name: str, builder: Callable[..., Any], cls: type[DASpace] = DASpace) -> Callable[..., DASpace]:
    def make(**kwargs: Any) -> DASpace:
        try:
            fn = builder(**kwargs)
        except TypeError as exc:
            raise InvalidSettingError(f"space {name!r}: {exc}") from None
        return cls(name, fn, _DESCRIPTIONS[name], settings=kwargs)

    make.__doc__ = f"The {name!r} DeepArchitect space ({_DESCRIPTIONS[name]})."
    return make


SPACES: dict[str, Callable[..., DASpace]] = {
    "nasbench": _factory("nasbench", _spaces.nasbench),
    "nasnet": _factory("nasnet", _spaces.nasnet),
    "flat": _factory("flat", _spaces.flat),
    "genetic": _factory("genetic", _spaces.genetic),
    "nb201": _factory("nb201", _spaces.nb201, NB201DASpace),
}


def make_space(name: str, **kwargs: Any) -> DASpace:
    """The DeepArchitect space called ``name``, with size settings ``kwargs``."""
    if name not in SPACES:
        close = difflib.get_close_matches(str(name), list(SPACES), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(SPACES)}"
        raise UnknownNameError(f"unknown DeepArchitect space {name!r}; {hint}")
    return SPACES[name](**kwargs)


_ = InvalidConfigError  # re-exported error type used by callers of DASpace
