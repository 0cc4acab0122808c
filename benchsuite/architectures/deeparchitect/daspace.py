"""A DeepArchitect search space as a suite :class:`SearchSpace`: an architecture is its value list.

A configuration is the tuple of values assigned, in traversal order, to the independent
hyperparameters met while specifying the space (deeparchitect.txt Sec. 6.3 and
Appendix E.2: the ``vs`` list the authors' searchers log and replay with ``specify``).
Replaying a value list rebuilds the same terminal space, so the tuple is the exact key and
its JSON list is the stored form.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import InvalidConfigError
from ...space import SearchSpace
from . import core

if TYPE_CHECKING:  # pragma: no cover
    import torch.nn as nn

SpaceFn = Callable[[int], core.IO]
ChooseFn = Callable[[int, str, tuple], int]
_MAX_SAMPLE_TRIES = 10_000
_CACHE = 16


def _short(values: Sequence[Any], n: int = 8) -> str:
    vals = list(values)
    text = ", ".join(repr(v) for v in vals[:n])
    return "[" + text + (", ..." if len(vals) > n else "") + "]"


class DASpace(SearchSpace):
    """A search space written in the DeepArchitect language; configurations are value tuples."""

    kind = "architecture"

    def __init__(self, name: str, space_fn: SpaceFn, description: str = "",
                 settings: dict[str, Any] | None = None):
        self.name = name
        self.space_fn = space_fn
        self.description = description
        self.settings = dict(settings or {})
        self._cache: OrderedDict[tuple, tuple[core.Graph, list[core.Independent]]] = OrderedDict()

    # -- traversal -------------------------------------------------------------------------
    def graph(self, n_classes: int = 10) -> core.Graph:
        """A fresh, unspecified copy of the space (frame a of Figure 5)."""
        return core.Graph(lambda: self.space_fn(n_classes))

    def walk(self, choose: ChooseFn) -> tuple:
        """Specify the space; ``choose(position, name, values)`` returns an index into ``values``."""
        g = self.graph()

        def ch(pos: int, h: core.Independent) -> Any:
            k = choose(pos, h.name, h.values)
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= int(k) < len(h.values):
                raise InvalidConfigError(f"{self.name}: choose() returned {k!r} for hyperparameter {h.name!r} at "
                                         f"position {pos}; it must be an index in [0, {len(h.values) - 1}]")
            return h.values[int(k)]

        hs = core.walk(g, ch)
        values = tuple(h.value for h in hs)
        self._remember(values, g, hs)
        return values

    def _remember(self, values: tuple, g: core.Graph, hs: list[core.Independent]) -> None:
        self._cache[values] = (g, hs)
        self._cache.move_to_end(values)
        while len(self._cache) > _CACHE:
            self._cache.popitem(last=False)

    def _replay(self, values: Any, n_classes: int = 10) -> tuple[core.Graph, list[core.Independent]]:
        """The terminal graph of a value list; one-line InvalidConfigError if the list does not fit."""
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise InvalidConfigError(f"{self.name}: an architecture is a list of hyperparameter values, got "
                                     f"{type(values).__name__}")
        vals = list(values)
        key = tuple(vals) if all(isinstance(v, core.JSONScalar) for v in vals) else None
        if n_classes == 10 and key is not None and key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]

        def ch(pos: int, h: core.Independent) -> Any:
            if pos >= len(vals):
                raise InvalidConfigError(
                    f"{self.name}: value list too short: {len(vals)} value(s) given, the space needs a value for "
                    f"hyperparameter {h.name!r} at position {pos} (one of {_short(h.values)})")
            k = h.index_of(vals[pos])
            if k < 0:
                raise InvalidConfigError(
                    f"{self.name}: value {vals[pos]!r} at position {pos} is not allowed for hyperparameter "
                    f"{h.name!r}; allowed: {_short(h.values)}")
            return h.values[k]

        g = self.graph(n_classes)
        hs = core.walk(g, ch)
        if len(hs) < len(vals):
            raise InvalidConfigError(
                f"{self.name}: value list too long: the architecture is fully specified after {len(hs)} value(s), "
                f"{len(vals)} given (extra from position {len(hs)}: {vals[len(hs)]!r})")
        if n_classes == 10:
            self._remember(tuple(h.value for h in hs), g, hs)
        return g, hs

    def hyperparameters(self, values: Any) -> list[tuple[str, tuple]]:
        """``(name, domain)`` of each position of a value list."""
        _, hs = self._replay(values)
        return [(h.name, h.values) for h in hs]

    # -- SearchSpace -------------------------------------------------------------------------
    def validate(self, config: Any) -> tuple:
        """The canonical value tuple of a list (replayed through the space)."""
        _, hs = self._replay(config)
        return tuple(h.value for h in hs)

    def key(self, config: Any) -> Hashable:
        """The value tuple itself (it determines the architecture)."""
        return tuple(config)

    def to_json(self, config: Any) -> str:
        """A JSON list of the values."""
        return json.dumps(list(config), separators=(",", ":"))

    def from_json(self, text: str) -> tuple:
        """Inverse of :meth:`to_json`, validated."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidConfigError(f"{self.name}: architecture is not valid JSON ({exc.msg})") from None
        return self.validate(data)

    def is_valid(self, config: Any) -> bool:
        """False for value lists the space's own rules reject (e.g. a Nasbench cell without a path)."""
        g, _ = self._replay(config)
        return not g.infeasible

    def why_invalid(self, config: Any) -> str | None:
        """The reason a value list is infeasible, or ``None``."""
        g, _ = self._replay(config)
        return "; ".join(g.infeasible) if g.infeasible else None

    def sample(self, rng: np.random.Generator) -> tuple:
        """Uniform choice at every hyperparameter (Algorithm 3), redrawn until feasible."""
        prefix: list[tuple[str, Any]] = []
        sampler = getattr(self.space_fn, "prefix_sampler", None)

        def ch(pos: int, h: core.Independent) -> Any:
            if pos < len(prefix) and prefix[pos][0] == h.name and h.index_of(prefix[pos][1]) >= 0:
                return prefix[pos][1]
            return h.values[int(rng.integers(len(h.values)))]

        for _ in range(_MAX_SAMPLE_TRIES):
            # a space may draw its leading values itself (the same distribution as rejecting whole walks,
            # without building a graph per rejected draw); see spaces.nasbench
            prefix = sampler(rng) if sampler is not None else []
            g = self.graph()
            hs = core.walk(g, ch, stop_if_infeasible=True)  # a draw is rejected as soon as it is infeasible
            if not g.infeasible:
                values = tuple(h.value for h in hs)
                self._remember(values, g, hs)
                return values
        raise RuntimeError(f"{self.name}: no feasible architecture in {_MAX_SAMPLE_TRIES} draws")

    def _rewalk(self, values: tuple, pos: int, new_value: Any,
                fallback: Callable[[tuple], int]) -> tuple:
        """Change position ``pos``; later hyperparameters keep their old value where the name and value fit."""
        _, hs = self._replay(values)
        old = {h.name: v for h, v in zip(hs, values)}

        def choose(p: int, name: str, vals: tuple) -> int:
            if p < pos:
                target = values[p]
            elif p == pos:
                target = new_value
            else:
                target = old.get(name, _MISSING)
            for k, v in enumerate(vals):
                if core._same_value(v, target):
                    return k
            return fallback(vals)

        return self.walk(choose)

    def neighbours(self, config: Any) -> list[tuple]:
        """Every architecture one value away (later values reused where they still fit, else the first)."""
        values = self.validate(config)
        _, hs = self._replay(values)
        out: dict[tuple, None] = {}
        for pos, h in enumerate(hs):
            for v in h.values:
                if core._same_value(v, values[pos]):
                    continue
                nb = self._rewalk(values, pos, v, lambda vals: 0)
                if nb != values:
                    out.setdefault(nb, None)
        return list(out)

    def mutate(self, config: Any, rng: np.random.Generator) -> tuple:
        """Change one value chosen uniformly among all (position, other value) pairs; re-walk the rest."""
        values = self.validate(config)
        _, hs = self._replay(values)
        pairs = [(pos, v) for pos, h in enumerate(hs) for v in h.values if not core._same_value(v, values[pos])]
        if not pairs:
            return values
        pos, v = pairs[int(rng.integers(len(pairs)))]
        return self._rewalk(values, pos, v, lambda vals: int(rng.integers(len(vals))))

    # -- features, networks ------------------------------------------------------------------------
    def features(self, values: Any) -> list[str]:
        """SMBO features (the authors' ``extract_features``): modules, connections, module hyperparameters."""
        g, _ = self._replay(values)
        mods = g.ordered_modules()
        feats: list[str] = []
        for m in mods:
            feats.append(f"m:{m.name}")
        for m in mods:
            for oname in sorted(m.outputs):
                for inp in m.outputs[oname].dsts:
                    feats.append(f"c:{m.name}.{oname}|->{inp.module.name}.{inp.name}")
        for m in mods:
            for local, h in m.hyperps.items():
                feats.append(f"h:{m.name}/{local}:{h.name}={h.value!r}")
        return feats

    def build(self, values: Any, in_shape: Sequence[int] = (3, 32, 32), n_classes: int = 10) -> nn.Module:
        """Compile the architecture into a ``torch.nn.Module`` (shapes inferred from a dummy input)."""
        g, _ = self._replay(values, n_classes=int(n_classes))
        if g.infeasible:
            raise InvalidConfigError(f"{self.name}: architecture {_short(values)} is not in the space: "
                                     f"{'; '.join(g.infeasible)}")
        from .torch_backend import compile_graph

        return compile_graph(g, tuple(int(s) for s in in_shape))

    def nb201_arch(self, values: Any) -> str:
        """The NAS-Bench-201 architecture string (only the ``nb201`` space has one)."""
        raise InvalidConfigError(f"space {self.name!r} is not the NAS-Bench-201 cell; only 'nb201' maps onto the "
                                 f"NAS-Bench-201 table")

    def describe(self) -> str:
        """The space in words."""
        extra = ", ".join(f"{k}={v}" for k, v in self.settings.items())
        return f"DeepArchitect space {self.name!r}" + (f" ({extra})" if extra else "") + \
            (f": {self.description}" if self.description else "")


_MISSING = object()
