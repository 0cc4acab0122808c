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
from ...space import ArchitectureSpace
from . import core

if TYPE_CHECKING:  # pragma: no cover
    import torch.nn as nn

SpaceFn = Callable[[int], core.IO]
ChooseFn = Callable[[int, str, tuple], int]
_MAX_SAMPLE_TRIES = 10_000
# Terminal graphs kept per space, most recent first out last: the walk just made is what
# ``features``, ``build`` and ``neighbours`` ask for next. Few, because a graph is thousands of
# objects in reference cycles: kept long, they reach the collector's oldest generation,
# whose collections then cost more than the walks (measured on Nasnet).
_GRAPHS = 4
# Value lists this space object has walked, with what ``validate``, ``hyperparameters``,
# ``is_valid`` and ``neighbours`` need from their walk (no graph, no cycles: cheap to keep).
_RECORDS = 4096


def _short(values: Sequence[Any], n: int = 8) -> str:
    vals = list(values)
    text = ", ".join(repr(v) for v in vals[:n])
    return "[" + text + (", ..." if len(vals) > n else "") + "]"


class _Record:
    """What a walk established about a value list, kept without its graph."""

    __slots__ = ("values", "names", "domains", "infeasible", "last_round", "static")

    def __init__(self, g: core.Graph, hs: list[core.Independent]):
        self.values = tuple(h.value for h in hs)
        self.names = tuple(h.name for h in hs)
        self.domains = tuple(h.values for h in hs)
        self.infeasible = tuple(g.infeasible)
        self.last_round = g.round_starts[-1] if g.round_starts else 0
        self.static: tuple[bool, ...] | None = None  # see DASpace._static

    @classmethod
    def like(cls, template: _Record, values: tuple) -> _Record:
        """The record of another value list of a product space (see :meth:`DASpace.sample`): the same
        positions, domains and rounds, no infeasibility."""
        rec = cls.__new__(cls)
        rec.values, rec.names, rec.domains = values, template.names, template.domains
        rec.infeasible, rec.last_round, rec.static = (), template.last_round, template.static
        return rec

    def canonical(self, pos: int, value: Any) -> Any:
        """The domain's own copy of ``value`` at ``pos`` (the first equal one, as a walk picks it)."""
        dom = self.domains[pos]
        for v in dom:
            if core._same_value(v, value):
                return v
        raise ValueError(value)  # pragma: no cover - callers pass values of the domain


class DASpace(ArchitectureSpace):
    """A search space written in the DeepArchitect language; configurations are value tuples."""

    kind = "architecture"
    capabilities = frozenset({"build", "mutate", "walk", "hyperparameters", "features"})

    def __init__(self, name: str, space_fn: SpaceFn, description: str = "",
                 settings: dict[str, Any] | None = None):
        self.name = name
        self.space_fn = space_fn
        self.description = description
        self.settings = dict(settings or {})
        self._graphs: OrderedDict[tuple, tuple[core.Graph, list[core.Independent]]] = OrderedDict()
        self._records: OrderedDict[tuple, _Record] = OrderedDict()
        self._features: dict[int, list[str]] = {}  # id(graph) -> features, for the graphs kept
        self._product: _Record | None = None  # a product space's first sampled record (see sample)
        self._unassigned: tuple[core.Graph, core._Snapshot] | None = None  # see _product_features

    # -- traversal -------------------------------------------------------------------------
    def graph(self, n_classes: int = 10) -> core.Graph:
        """A fresh, unspecified copy of the space (frame a of Figure 5)."""
        return core.Graph(lambda: self.space_fn(n_classes))

    def walk(self, choose: ChooseFn) -> tuple:
        """Specify the space; ``choose(position, name, values)`` returns an index into ``values``.

        Only the value list is returned, so the walk first goes lean (closed modules unexpanded,
        about half of a Nasnet walk); where that cannot tell the order of what is left it walks
        in full, replaying the choices already made, so ``choose`` is called exactly once per
        position, in order, as in a full walk.
        """
        made: list[int] = []

        def ch(pos: int, h: core.Independent) -> Any:
            if pos < len(made):
                return h.values[made[pos]]
            k = choose(pos, h.name, h.values)
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= int(k) < len(h.values):
                raise InvalidConfigError(f"{self.name}: choose() returned {k!r} for hyperparameter {h.name!r} at "
                                         f"position {pos}; it must be an index in [0, {len(h.values) - 1}]")
            made.append(int(k))
            return h.values[int(k)]

        g = core.Graph(lambda: self.space_fn(10), lean=True)
        try:
            hs = core.walk(g, ch)
            return self._remember(g, hs, keep_graph=False).values
        except core.LeanWalkUnsure:
            pass
        g = self.graph()
        hs = core.walk(g, ch)
        return self._remember(g, hs).values

    def _remember(self, g: core.Graph, hs: list[core.Independent], keep_graph: bool = True) -> _Record:
        rec = _Record(g, hs)
        values = rec.values
        graphs = self._graphs
        if keep_graph:
            if values in graphs:
                self._features.pop(id(graphs[values][0]), None)
            graphs[values] = (g, hs)
            graphs.move_to_end(values)
            while len(graphs) > _GRAPHS:
                old, _ = graphs.popitem(last=False)[1]
                self._features.pop(id(old), None)
        records = self._records
        if values in records and records[values].static is not None and records[values].values == values:
            rec.static = records[values].static
        self._keep_record(rec)
        return rec

    def _keep_record(self, rec: _Record) -> None:
        values, records = rec.values, self._records
        records[values] = rec
        records.move_to_end(values)
        while len(records) > _RECORDS:
            records.popitem(last=False)

    @staticmethod
    def _key(values: Any) -> tuple | None:
        """The lookup key of a value list (None when it holds something that is no JSON scalar)."""
        vals = tuple(values)
        return vals if all(isinstance(v, core.JSONScalar) for v in vals) else None

    def _known(self, values: Any) -> _Record | None:
        """The record of a value list this space walked (True and 1 kept apart), or None."""
        if type(values) is tuple:  # the very tuple a draw or walk returned (SMBO asks twice for each of 512)
            try:
                rec = self._records.get(values)
            except TypeError:  # something unhashable in it: no record has that
                return None
            if rec is not None and rec.values is values:
                self._records.move_to_end(values)
                return rec
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            return None
        key = self._key(values)
        rec = self._records.get(key) if key is not None else None
        if rec is None:
            return None
        # tuples compare True == 1 == 1.0; a boolean where the space has a number is a different list
        if any(isinstance(a, bool) != isinstance(b, bool) for a, b in zip(key, rec.values)):
            return None
        self._records.move_to_end(key)
        return rec

    def _record(self, values: Any) -> _Record:
        rec = self._known(values)
        if rec is None:
            self._replay(values)
            rec = self._known(values)
            assert rec is not None
        return rec

    def _replay(self, values: Any, n_classes: int = 10) -> tuple[core.Graph, list[core.Independent]]:
        """The terminal graph of a value list; one-line InvalidConfigError if the list does not fit."""
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise InvalidConfigError(f"{self.name}: an architecture is a list of hyperparameter values, got "
                                     f"{type(values).__name__}")
        vals = list(values)
        if n_classes == 10:
            rec = self._known(vals)
            if rec is not None and rec.values in self._graphs:
                self._graphs.move_to_end(rec.values)
                return self._graphs[rec.values]
        g, hs = self._specify(vals, n_classes)
        if n_classes == 10:
            self._remember(g, hs)
        return g, hs

    def _specify(self, vals: list, n_classes: int = 10) -> tuple[core.Graph, list[core.Independent]]:
        """A new terminal graph of a value list (nothing remembered); one-line InvalidConfigError if it does not fit.

        A product space (see :meth:`sample`) assigns the positions of its first walk by name, in that walk's
        order, without the walk's traversals (which list what is left to assign before and after): the same
        assignments in the same order, so the same graph. A list that does not fit that shape is walked, and
        the walk says what is wrong with it.
        """
        if self._product is not None and len(vals) == len(self._product.names):
            g = self.graph(n_classes)
            hs = self._assign_product(g, vals)
            if hs is not None:
                return g, hs

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
        return g, hs

    def _assign_product(self, g: core.Graph, vals: Sequence[Any]) -> list[core.Independent] | None:
        """Assign a product space's value list on an unassigned graph of the space, by name in the first walk's
        order (see :meth:`_specify`); None, the graph part assigned, where the list does not fit that shape."""
        tmpl = self._product
        assert tmpl is not None
        if len(vals) != len(tmpl.names):
            return None
        hs = []
        names = g.names
        with core.paused_gc():
            for pos, name in enumerate(tmpl.names):
                h = names.get(name)
                if not isinstance(h, core.Independent) or h.assigned or h.values != tmpl.domains[pos]:
                    return None
                k = h.index_of(vals[pos])
                if k < 0:
                    return None
                g.assign(h, h.values[k])
                hs.append(h)
        g.round_starts = [0]
        return hs

    def hyperparameters(self, values: Any) -> list[tuple[str, tuple]]:
        """``(name, domain)`` of each position of a value list."""
        rec = self._record(values)
        return list(zip(rec.names, rec.domains))

    # -- SearchSpace -------------------------------------------------------------------------
    def validate(self, config: Any) -> tuple:
        """The canonical value tuple of a list (replayed through the space unless this space walked it)."""
        return self._record(config).values

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
        return not self._record(config).infeasible

    def why_invalid(self, config: Any) -> str | None:
        """The reason a value list is infeasible, or ``None``."""
        rec = self._record(config)
        return "; ".join(rec.infeasible) if rec.infeasible else None

    def sample(self, rng: np.random.Generator) -> tuple:
        """Uniform choice at every hyperparameter (Algorithm 3), redrawn until feasible.

        A space function that declares ``product = True`` (Genetic, Flat, the NAS-Bench-201 cell:
        every hyperparameter is created before the walk and read only by closed substitution
        modules, and no value list is infeasible) is walked once; after that a draw is one
        ``rng.integers(len(domain))`` per position, in the walk's order, without building a graph:
        the same calls on ``rng`` that a walk makes, so the same value list and the same generator
        state (``tests/test_deeparchitect_language.py`` compares both ways). The first walk checks the
        declaration: a single round of assignments and every position static (:meth:`_static`).
        """
        tmpl = self._product
        if tmpl is not None:
            values = tuple(dom[int(rng.integers(len(dom)))] for dom in tmpl.domains)
            self._keep_record(_Record.like(tmpl, values))
            return values
        values = self._sample_walked(rng)
        if getattr(self.space_fn, "product", False):
            rec = self._record(values)
            if rec.last_round != 0 or rec.infeasible or getattr(self.space_fn, "prefix_sampler", None) \
                    or not all(self._static(rec)):
                raise RuntimeError(f"{self.name}: the space function declares product = True, but its walk is not a "
                                   f"single round of independent choices; remove the declaration")
            self._product = rec
        return values

    def _sample_walked(self, rng: np.random.Generator) -> tuple:
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
                return self._remember(g, hs).values
        raise RuntimeError(f"{self.name}: no feasible architecture in {_MAX_SAMPLE_TRIES} draws")

    def _static(self, rec: _Record) -> tuple[bool, ...]:
        """Per position: whether changing that value provably leaves the rest of the walk as it is.

        True when the position is in the walk's last round (every hyperparameter met after it was
        already listed when it was assigned), the walk left no independent hyperparameter
        unassigned, and every substitution module that reads the value, directly or through
        dependent hyperparameters, is declared closed (its expansions assign nothing new). Then
        re-walking with the one value changed meets the same hyperparameters in the same order
        and ends in the same round, so the new value list is the old one with that value
        replaced: what :meth:`neighbours` and :meth:`mutate` return without re-walking.
        """
        if rec.static is None:
            g, hs = self._replay(rec.values)
            if any(isinstance(h, core.Independent) and not h.assigned for h in g.hyperparameters):
                rec.static = (False,) * len(hs)
            else:
                flags = []
                for pos, h in enumerate(hs):
                    ok = pos >= rec.last_round
                    todo: list[core.Hyperparameter] = [h]
                    seen = {id(h)}
                    while ok and todo:
                        x = todo.pop()
                        for m in x.modules:
                            if m.is_substitution and m.done and not m.closed:  # type: ignore[attr-defined]
                                ok = False
                                break
                        for d in x.dependents:
                            if id(d) not in seen:
                                seen.add(id(d))
                                todo.append(d)
                    flags.append(ok)
                rec.static = tuple(flags)
        return rec.static

    def _changed(self, rec: _Record, pos: int, new_value: Any) -> tuple:
        """The value list of a re-walk with ``pos`` changed, where :meth:`_static` allows it without walking."""
        vals = [rec.canonical(p, v) for p, v in enumerate(rec.values)]
        vals[pos] = rec.canonical(pos, new_value)
        return tuple(vals)

    def _rewalk(self, values: tuple, pos: int, new_value: Any,
                fallback: Callable[[tuple], int]) -> tuple:
        """Change position ``pos``; later hyperparameters keep their old value where the name and value fit."""
        rec = self._record(values)
        if self._static(rec)[pos]:
            return self._changed(rec, pos, new_value)
        old = dict(zip(rec.names, values))

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

        return self.walk(choose)  # lean where it can be (see walk)

    def neighbours(self, config: Any) -> list[tuple]:
        """Every architecture one value away (later values reused where they still fit, else the first).

        A change that cannot alter the rest of the walk (see :meth:`_static`: every value of the
        Genetic, Flat and NAS-Bench-201 spaces, Nasnet's operations) costs no walk; the others
        re-walk the space once each, without expanding closed modules where the walk allows it.
        """
        values = self.validate(config)
        rec = self._record(values)
        out: dict[tuple, None] = {}
        with core.paused_gc():  # the walks' graphs are garbage at once: one collection afterwards, not one per walk
            for pos, dom in enumerate(rec.domains):
                for v in dom:
                    if core._same_value(v, values[pos]):
                        continue
                    nb = self._rewalk(values, pos, v, _first)
                    if nb != values:
                        out.setdefault(nb, None)
        return list(out)

    def mutate(self, config: Any, rng: np.random.Generator) -> tuple:
        """Change one value chosen uniformly among all (position, other value) pairs; re-walk the rest."""
        values = self.validate(config)
        rec = self._record(values)
        pairs = [(pos, v) for pos, dom in enumerate(rec.domains) for v in dom
                 if not core._same_value(v, values[pos])]
        if not pairs:
            return values
        pos, v = pairs[int(rng.integers(len(pairs)))]
        return self._rewalk(values, pos, v, lambda vals: int(rng.integers(len(vals))))

    # -- features, networks ------------------------------------------------------------------------
    def features(self, values: Any) -> list[str]:
        """SMBO features (the authors' ``extract_features``): modules, connections, module hyperparameters.

        Nothing is remembered per value list beyond the few graphs kept (see ``_GRAPHS``): a caller that asks
        for the same lists again keeps what it derives from them (``da_smbo`` keeps each list's feature
        buckets). A second copy here cost more than it saved: every feature string of every list asked for
        stayed alive, so a process that scores many new lists kept growing its memory instead of reusing it.
        """
        rec = self._known(values)
        kept = self._graphs.get(rec.values) if rec is not None else None
        if kept is not None:  # the walk just made (Nasbench, Nasnet sample by walking): its id is its own
            g = kept[0]
            feats = self._features.get(id(g))
            if feats is None:
                feats = self._features[id(g)] = graph_features(g)
            return list(feats)
        # no graph kept: SMBO asks for hundreds of lists no walk made (product spaces)
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise InvalidConfigError(f"{self.name}: an architecture is a list of hyperparameter values, got "
                                     f"{type(values).__name__}")
        vals = list(values)
        with core.paused_gc():
            if self._product is not None:
                feats = self._product_features(vals, remember=rec is None)
                if feats is not None:
                    return feats
            g, hs = self._specify(vals)
            if rec is None:
                self._remember(g, hs, keep_graph=False)
            feats = graph_features(g)
            g.dispose()  # freed now, not by the cyclic collector (see core.Graph.dispose)
        return feats

    def _product_features(self, vals: list, remember: bool) -> list[str] | None:
        """Features of a product space's value list from the one unassigned graph this space keeps for them:
        assigned, read, then restored (:meth:`core.Graph.restore`), so that the network's skeleton, the same for
        every list, is built once instead of once per list. None where the list does not fit the product's
        shape (the caller then walks it, which says what is wrong)."""
        kept, self._unassigned = self._unassigned, None  # taken while in use: another thread makes its own
        if kept is None:
            g = self.graph()
            kept = (g, g.snapshot())
        g, snap = kept
        try:
            hs = self._assign_product(g, vals)
            if hs is None:
                return None
            if remember:
                self._remember(g, hs, keep_graph=False)
            return graph_features(g)
        finally:
            g.restore(snap)
            self._unassigned = kept

    def build(self, values: Any, in_shape: Sequence[int] = (3, 32, 32), n_out: int = 10,
              n_classes: int | None = None) -> nn.Module:
        """Compile the architecture into a ``torch.nn.Module`` for ``n_out`` classes (shapes inferred from a
        dummy input); ``n_classes`` is the older name of ``n_out``."""
        g, _ = self._replay(values, n_classes=int(n_out if n_classes is None else n_classes))
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


def graph_features(g: core.Graph) -> list[str]:
    """The feature strings of a terminal graph (see :meth:`DASpace.features`)."""
    mods = g.ordered_modules()
    feats = [f"m:{m.name}" for m in mods]
    # comprehensions rather than loops: SMBO makes these strings for every candidate it has not seen
    feats += [f"c:{m.name}.{oname}|->{inp.module.name}.{inp.name}" for m in mods
              for oname, out in (m.outputs.items() if len(m.outputs) < 2 else sorted(m.outputs.items()))
              for inp in out.dsts]
    feats += [f"h:{m.name}/{local}:{h.name}={h.value!r}" for m in mods if m.hyperps for local, h in m.hyperps.items()]
    return feats


_MISSING = object()


def _first(vals: tuple) -> int:
    return 0
