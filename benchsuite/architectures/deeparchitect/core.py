"""DeepArchitect's search space language: hyperparameters, modules, lazy substitution, traversal.

deeparchitect.txt Sec. 4 (components), Sec. 6 (semantics and mechanics: Algorithms 1, 2,
3, 5) and Appendices A, C, E. Framework-free: no torch here; a basic module names an
operation (``op``) that a backend (``torch_backend.py``) knows how to compile.

Components
----------
* :class:`Independent` (``D``): a hyperparameter with a finite list of values, assigned by
  the search algorithm.
* :class:`Dependent`: a hyperparameter whose value is a function of other hyperparameters,
  computed as soon as they all have values (Algorithm 1, lines 3-7).
* :class:`BasicModule`: named inputs/outputs and properties (hyperparameters or constants);
  it computes once compiled.
* :class:`SubstitutionModule`: named inputs/outputs and hyperparameters; once all its
  hyperparameters have values it is replaced by the sub-space its function returns and its
  connections are rerouted (Algorithm 1, lines 8-17). Sub-spaces are created lazily, so a
  branch not chosen never exists.

A search space is a function returning ``(inputs, outputs)`` (dicts of local name ->
:class:`Input` / :class:`Output`), called inside a :class:`Graph`, which names modules and
hyperparameters, tracks pending substitutions and dependent hyperparameters, and resolves
them after each assignment (:meth:`Graph.assign`, Algorithm 1).

Traversal
---------
:meth:`Graph.ordered_modules` is Algorithm 5 (start at the modules of the space's outputs
in sorted local-name order, walk inputs backwards in sorted local-name order);
:meth:`Graph.ordered_hyperparameters` is Algorithm 2 (each module's hyperparameters in
sorted local-name order, then the dependencies of dependent hyperparameters).
:meth:`Graph.walk` is the specification loop of Algorithm 3 with the value chosen by a
callback, so an architecture is exactly the list of values assigned, in that order.
"""
from __future__ import annotations

import gc
import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...errors import InvalidConfigError

JSONScalar = (str, int, float, bool, type(None))


# -- hyperparameters -------------------------------------------------------------------------
class Hyperparameter:
    """A hyperparameter of a search space (independent or dependent)."""

    __slots__ = ("explicit_name", "name", "value", "assigned", "modules", "dependents")

    def __init__(self, name: str | None = None):
        self.explicit_name = name
        self.name: str = name or ""
        self.value: Any = None
        self.assigned = False
        self.modules: list[Module] = []
        self.dependents: list[Dependent] = []
        _current_graph()._register_hyperparameter(self)

    def __repr__(self) -> str:
        state = repr(self.value) if self.assigned else "unassigned"
        return f"{type(self).__name__}({self.name!r}, {state})"


def _same_value(a: Any, b: Any) -> bool:
    """Equality that keeps True apart from 1 (JSON distinguishes them)."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)


class Independent(Hyperparameter):
    """An independent hyperparameter with a finite list of possible values (the paper's ``D``)."""

    __slots__ = ("values",)

    def __init__(self, values: Sequence[Any], name: str | None = None):
        vals = tuple(values)
        if not vals:
            raise ValueError(f"hyperparameter {name!r} needs at least one value")
        for v in vals:
            if not isinstance(v, JSONScalar):
                raise ValueError(f"hyperparameter {name!r}: value {v!r} is not a plain JSON scalar")
        self.values = vals
        super().__init__(name)

    def index_of(self, value: Any) -> int:
        """Position of ``value`` in the domain, or -1."""
        for k, v in enumerate(self.values):
            if _same_value(v, value):
                return k
        return -1


D = Independent


def Bool(name: str | None = None) -> Independent:
    """A 0/1 hyperparameter (the authors' ``Bool``, values as integers)."""
    return Independent((0, 1), name)


class Dependent(Hyperparameter):
    """A hyperparameter computed by ``fn(dh)`` from the values ``dh`` of the ones it depends on."""

    __slots__ = ("fn", "deps")

    def __init__(self, fn: Callable[[dict[str, Any]], Any], deps: Mapping[str, Hyperparameter],
                 name: str | None = None):
        self.fn = fn
        self.deps = dict(sorted(deps.items()))
        super().__init__(name)
        for h in self.deps.values():
            h.dependents.append(self)

    def ready(self) -> bool:
        """All the hyperparameters it depends on have values."""
        for h in self.deps.values():  # a loop: all() over a generator costs more for these few
            if not h.assigned:
                return False
        return True


# -- inputs, outputs, modules --------------------------------------------------------------
class Input:
    """A named input of a module; connected to at most one output."""

    __slots__ = ("module", "name", "src")

    def __init__(self, module: Module, name: str):
        self.module, self.name = module, name
        self.src: Output | None = None

    def connect(self, out: Output) -> None:
        """Connect an output to this input."""
        out.connect(self)

    def __repr__(self) -> str:
        return f"{self.module.name}.{self.name}"


class Output:
    """A named output of a module; may feed several inputs."""

    __slots__ = ("module", "name", "dsts")

    def __init__(self, module: Module, name: str):
        self.module, self.name = module, name
        self.dsts: list[Input] = []

    def connect(self, inp: Input) -> None:
        """Connect this output to an input (an input takes one output only)."""
        if inp.src is not None:
            raise ValueError(f"input {inp!r} is already connected to {inp.src!r}")
        inp.src = self
        self.dsts.append(inp)

    def __repr__(self) -> str:
        return f"{self.module.name}.{self.name}"


class Module:
    """Common part of basic and substitution modules (inputs, outputs, hyperparameters by local name)."""

    __slots__ = ("type_name", "name", "inputs", "outputs", "in_order", "hyperps", "graph")
    is_basic = False
    is_substitution = False

    def __init__(self, type_name: str, input_names: Sequence[str], output_names: Sequence[str],
                 hyperps: Mapping[str, Hyperparameter] | None):
        # written out for speed (SMBO builds hundreds of graphs of hundreds of modules per decision): this is
        # _current_graph(), graph._unique(type_name) and graph._register_module(self), with one-input
        # one-output modules made directly
        try:
            graph = _LOCAL.stack[-1]
        except (AttributeError, IndexError):
            _current_graph()  # raises the error that says where modules are made
            raise
        self.type_name = type_name
        counters = graph.counters
        n = counters.get(type_name, 0) + 1
        counters[type_name] = n
        self.name = name = f"{type_name}-{n}"
        if input_names == ("in",):
            # made without a call of Input.__init__ (the same three fields): most modules have one input
            i = _new(Input)
            i.module, i.name, i.src = self, "in", None
            self.inputs = {"in": i}
            # the inputs in sorted local-name order (the traversal order of Algorithms 2 and 5), once
            self.in_order: tuple[Input, ...] = (i,)
        else:
            self.inputs = inputs = {n: Input(self, n) for n in input_names}
            self.in_order = (tuple(inputs.values()) if len(inputs) < 2
                             else tuple(inputs[n] for n in sorted(inputs)))
        if output_names == ("out",):  # as for the input
            o = _new(Output)
            o.module, o.name, o.dsts = self, "out", []
            self.outputs = {"out": o}
        else:
            self.outputs = {n: Output(self, n) for n in output_names}
        self.hyperps: dict[str, Hyperparameter] = {}
        self.graph = graph
        if hyperps:
            for local in sorted(hyperps):
                h = hyperps[local]
                if not isinstance(h, Hyperparameter):
                    raise TypeError(f"module {name}: {local!r} must be a Hyperparameter, got {h!r}")
                self.hyperps[local] = h
                h.modules.append(self)
                if not h.name:
                    h.name = graph._hyperparameter_name(f"{name}.{local}")
            names = graph.names
            for h in self.hyperps.values():
                if h.name not in names:
                    names[h.name] = h
        graph.modules.append(self)
        if self.is_substitution:
            graph._fresh.append(self)

    def io(self) -> tuple[dict[str, Input], dict[str, Output]]:
        """The module as a search space: (inputs, outputs) by local name."""
        return dict(self.inputs), dict(self.outputs)

    def __repr__(self) -> str:
        return self.name


_HYPERPARAMETER = itertools.repeat(Hyperparameter)  # isinstance's second argument, for map()


class BasicModule(Module):
    """A module that computes: operation ``op`` with properties (hyperparameters or constants)."""

    __slots__ = ("op", "static")
    is_basic = True

    def __init__(self, op: str, props: Mapping[str, Any], input_names: Sequence[str] = ("in",),
                 output_names: Sequence[str] = ("out",), type_name: str | None = None):
        self.op = op
        static = dict(props)
        hyperps = None
        # most modules have no hyperparameter among their properties: one pass in C says so
        if static and any(map(isinstance, static.values(), _HYPERPARAMETER)):
            hyperps = {k: v for k, v in props.items() if isinstance(v, Hyperparameter)}
            for k in hyperps:  # the constants stay in their order
                del static[k]
        self.static = static
        Module.__init__(self, type_name or op, input_names, output_names, hyperps)

    def props(self) -> dict[str, Any]:
        """All property values (hyperparameter values and constants), for compilation."""
        out = dict(self.static)
        for k, h in self.hyperps.items():
            out[k] = h.value
        return out


class SubstitutionModule(Module):
    """A module replaced, once its hyperparameters all have values, by ``fn(dh) -> (inputs, outputs)``.

    ``closed=True`` declares that, for every ``dh``, the expansion (with whatever it expands
    in turn) creates no independent hyperparameter and uses only hyperparameters that already
    have values: changing the module's values then changes modules, never what the walk
    meets next. :class:`~.daspace.DASpace` uses this to find neighbours and mutations
    without re-walking the space; every real expansion of a closed module checks the
    promise (ValueError naming the module if broken).
    """

    __slots__ = ("fn", "done", "closed")
    is_substitution = True

    def __init__(self, type_name: str, fn: Callable[[dict[str, Any]], tuple[dict, dict]],
                 hyperps: Mapping[str, Hyperparameter], input_names: Sequence[str] = ("in",),
                 output_names: Sequence[str] = ("out",), closed: bool = False):
        self.fn = fn
        self.done = False
        self.closed = bool(closed)
        Module.__init__(self, type_name, input_names, output_names, hyperps)

    def ready(self) -> bool:
        """All hyperparameters have values."""
        for h in self.hyperps.values():  # a loop: all() over a generator costs more for these few
            if not h.assigned:
                return False
        return True


# -- the graph (a search space under specification) ---------------------------------------------
_LOCAL = threading.local()
_new = object.__new__


def _current_graph() -> Graph:
    stack = getattr(_LOCAL, "stack", None)
    if not stack:
        raise RuntimeError("DeepArchitect modules and hyperparameters must be created inside a Graph")
    return stack[-1]


def mark_infeasible(reason: str) -> None:
    """Called by a substitution function: the architecture being specified is not in the space."""
    _current_graph().infeasible.append(reason)


def _linked(mods: Sequence[Module]) -> list[Module]:
    """The modules at the other end of every connection of ``mods`` (sources of their inputs, then the modules
    their outputs feed), in list comprehensions: a closed expansion's check runs this on every expansion."""
    return [s.module for m in mods for i in m.in_order if (s := i.src) is not None] + \
        [d.module for m in mods for o in m.outputs.values() for d in o.dsts]


def _unlink(modules: Sequence[Module], hyperparameters: Sequence[Hyperparameter]) -> None:
    """Break the reference cycles through these modules and hyperparameters (see :meth:`Graph.dispose`).

    The fewest links that leave no cycle: a module no longer holds its inputs and outputs, an output no longer
    holds the inputs it feeds, a hyperparameter no longer holds its modules and dependents (an input still names
    its source and its module, a module its graph and hyperparameters: none of these leads back)."""
    for m in modules:
        for o in m.outputs.values():
            o.dsts = None  # type: ignore[assignment]
        m.inputs = m.outputs = m.in_order = None  # type: ignore[assignment]
    for h in hyperparameters:
        h.modules = []
        h.dependents = []


class _Snapshot:
    """A graph's state for :meth:`Graph.restore`: its counters, names and lists, and every module's links,
    every unexpanded substitution module and every hyperparameter's value, name and lists as they are."""

    __slots__ = ("n_modules", "n_hyperparameters", "srcs", "dsts", "substituted", "hyperps", "counters", "names",
                 "inputs", "outputs", "infeasible", "round_starts", "skipped")

    def __init__(self, g: Graph):
        self.n_modules, self.n_hyperparameters = len(g.modules), len(g.hyperparameters)
        self.srcs = [(i, i.src) for m in g.modules for i in m.in_order]
        self.dsts = [(o, tuple(o.dsts)) for m in g.modules for o in m.outputs.values()]
        self.substituted = [m for m in g.modules if m.is_substitution and not m.done]  # type: ignore[attr-defined]
        self.hyperps = [(h, h.value, h.assigned, h.name, len(h.modules), len(h.dependents))
                        for h in g.hyperparameters]
        self.counters, self.names = dict(g.counters), dict(g.names)
        self.inputs, self.outputs = dict(g.inputs), dict(g.outputs)
        self.infeasible, self.round_starts, self.skipped = tuple(g.infeasible), tuple(g.round_starts), g.skipped


class Graph:
    """A search space being specified: its modules, hyperparameters and named inputs/outputs."""

    def __init__(self, space_fn: Callable[[], tuple[dict, dict]], lean: bool = False):
        # lean: closed substitution modules are left unexpanded (only the value list of a walk is
        # wanted); :func:`walk` raises LeanWalkUnsure where that could change what it meets
        self.lean = lean
        self.skipped = 0
        self.counters: dict[str, int] = {}
        self.names: dict[str, Hyperparameter] = {}
        self.hyperparameters: list[Hyperparameter] = []
        self.modules: list[Module] = []
        self._fresh: list[Any] = []  # modules and dependent hyperparameters created since the last check
        self.infeasible: list[str] = []
        self.round_starts: list[int] = []
        with self, paused_gc():
            inputs, outputs = space_fn()
            self.inputs: dict[str, Input] = dict(inputs)
            self.outputs: dict[str, Output] = dict(outputs)
            self._resolve()

    def __enter__(self) -> Graph:
        if not hasattr(_LOCAL, "stack"):
            _LOCAL.stack = []
        _LOCAL.stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _LOCAL.stack.pop()

    # -- registration
    def _unique(self, prefix: str) -> str:
        n = self.counters.get(prefix, 0) + 1
        self.counters[prefix] = n
        return f"{prefix}-{n}"

    def _hyperparameter_name(self, base: str) -> str:
        return base if base not in self.names else self._unique(base)

    def _register_hyperparameter(self, h: Hyperparameter) -> None:
        if h.explicit_name is not None:
            if h.explicit_name in self.names:
                raise ValueError(f"two hyperparameters are named {h.explicit_name!r}; names must be unique")
            self.names[h.explicit_name] = h
        self.hyperparameters.append(h)
        if isinstance(h, Dependent):
            self._fresh.append(h)

    # -- Algorithm 1 (Transition)
    def assign(self, h: Independent, value: Any) -> None:
        """Assign a value to an independent hyperparameter and resolve what it triggers."""
        h.value, h.assigned = value, True
        with self:
            self._resolve([h])

    def _resolve(self, seeds: Sequence[Hyperparameter] = ()) -> None:
        """Assign ready dependent hyperparameters and substitute ready modules until none is left.

        Event driven (the paper's remark after Algorithm 1: only neighbours of what changed
        can become ready): a newly assigned hyperparameter wakes its dependents and modules,
        and anything newly created is checked once. First in, first out, so the order, and
        hence the generated names, is deterministic.
        """
        work: list[Hyperparameter] = list(seeds)
        k = 0
        while True:
            if self._fresh:
                fresh, self._fresh = self._fresh, []
                for x in fresh:
                    if isinstance(x, Dependent):
                        if not x.assigned and x.ready():
                            x.value, x.assigned = x.fn({n: d.value for n, d in x.deps.items()}), True
                            work.append(x)
                    elif isinstance(x, SubstitutionModule) and not x.done and x.ready():
                        self._substitute(x)
                continue
            if k >= len(work):
                return
            h = work[k]
            k += 1
            for d in h.dependents:
                if not d.assigned and d.ready():
                    d.value, d.assigned = d.fn({n: e.value for n, e in d.deps.items()}), True
                    work.append(d)
            for m in h.modules:
                if isinstance(m, SubstitutionModule) and not m.done and m.ready():
                    self._substitute(m)

    def _substitute(self, m: SubstitutionModule) -> None:
        if self.lean and m.closed:
            m.done = True
            self.skipped += 1
            return
        dh = {k: h.value for k, h in m.hyperps.items()}
        n_h, n_m, n_i = len(self.hyperparameters), len(self.modules), len(self.infeasible)
        new_inputs, new_outputs = m.fn(dh)
        if m.closed:
            self._check_closed(m, n_h, n_m, n_i)
        for local, old in m.inputs.items():
            if local not in new_inputs:
                raise ValueError(f"substitution of {m.name} gave no input {local!r}")
            new = new_inputs[local]
            src = old.src
            if src is not None:
                src.dsts = [d for d in src.dsts if d is not old]
                old.src = None
                src.connect(new)
            for k, v in self.inputs.items():
                if v is old:
                    self.inputs[k] = new
        for local, old in m.outputs.items():
            if local not in new_outputs:
                raise ValueError(f"substitution of {m.name} gave no output {local!r}")
            new = new_outputs[local]
            for d in list(old.dsts):
                d.src = None
                new.connect(d)
            old.dsts = []
            for k, v in self.outputs.items():
                if v is old:
                    self.outputs[k] = new
        m.done = True

    def _check_closed(self, m: SubstitutionModule, n_h: int, n_m: int, n_i: int) -> None:
        """The expansion of a module declared closed created nothing the walk would have to assign,
        connected only its own modules and did not mark the architecture infeasible."""
        if len(self.infeasible) > n_i:
            raise ValueError(f"substitution module {m.name} is declared closed but its expansion marks the "
                             f"architecture infeasible; drop closed=True")
        mods = self.modules[n_m:]
        own = set(mods)  # modules hash by identity
        if not own.issuperset(_linked(mods)):  # one pass over all the connections; a module named below
            m2 = next(x for x in mods if not own.issuperset(_linked((x,))))
            raise ValueError(f"substitution module {m.name} is declared closed but its expansion connects "
                             f"{m2.name} to a module outside it; drop closed=True")
        for m2 in [x for x in mods if x.is_substitution or x.hyperps]:  # most new modules are basic, without any
            if m2.is_substitution and not m2.closed:  # type: ignore[attr-defined]
                raise ValueError(f"substitution module {m.name} is declared closed but its expansion creates "
                                 f"{m2.name}, which is not; declare both closed or neither")
            for h in m2.hyperps.values():
                if isinstance(h, Independent) and not h.assigned:
                    raise ValueError(f"substitution module {m.name} is declared closed but its expansion uses "
                                     f"unassigned hyperparameter {h.name!r}; drop closed=True")
        new = self.hyperparameters[n_h:]
        if new:
            new_ids = set(map(id, new))
            for h in new:
                if isinstance(h, Independent) or (h.explicit_name is not None):
                    raise ValueError(f"substitution module {m.name} is declared closed but its expansion creates "
                                     f"hyperparameter {h.name or h.explicit_name!r}; drop closed=True")
                if not all(d.assigned or id(d) in new_ids for d in h.deps.values()):  # type: ignore[attr-defined]
                    raise ValueError(f"substitution module {m.name} is declared closed but its expansion creates a "
                                     f"dependent hyperparameter on unassigned ones; drop closed=True")

    def dispose(self) -> None:
        """Break the graph's reference cycles so that reference counting frees it at once; unusable afterwards.

        Modules point at their graph, inputs and outputs at their module and at each other, hyperparameters at
        their modules and dependents: a graph is thousands of objects in cycles, which the cyclic collector
        (running as soon as a walk re-enables it) would otherwise trace generation after generation. With
        this, and graphs of their own for SMBO's features, a ``da_smbo`` decision whose 512 candidates all need
        their features took 0.68 instead of 1.79 CPU s (``perf/ab.py``, ``da_smbo_100``). Only for a graph
        nothing else holds (:meth:`~.daspace.DASpace.features` walks one of its own where the space is no
        product; a product space's features assign one graph again and again, see :meth:`restore`).
        """
        _unlink(self.modules, self.hyperparameters)
        self.modules, self.hyperparameters, self.names, self._fresh = [], [], {}, []
        self.inputs, self.outputs = {}, {}

    def snapshot(self) -> _Snapshot:
        """What :meth:`restore` needs to put the graph back as it is now (every value and link that assigning
        and substituting change)."""
        if self._fresh:
            raise RuntimeError("a graph is snapshot only between assignments, with nothing left to resolve")
        return _Snapshot(self)

    def restore(self, snap: _Snapshot) -> None:
        """Put the graph back as it was at ``snap`` (taken from this graph): the modules and hyperparameters
        made since are unlinked (freed at once, as by :meth:`dispose`), the others get back their values,
        links and names. Assigning the same values afterwards builds what a fresh copy of the space builds,
        with the same names: a product space's features (:meth:`~.daspace.DASpace.features`) assign every
        value list on one graph instead of building the network's skeleton afresh for each."""
        _unlink(self.modules[snap.n_modules:], self.hyperparameters[snap.n_hyperparameters:])
        del self.modules[snap.n_modules:]
        del self.hyperparameters[snap.n_hyperparameters:]
        for i, src in snap.srcs:
            i.src = src
        for o, dsts in snap.dsts:
            o.dsts = list(dsts)
        for m in snap.substituted:
            m.done = False
        for h, value, assigned, name, n_mods, n_deps in snap.hyperps:
            h.value, h.assigned, h.name = value, assigned, name
            del h.modules[n_mods:]
            del h.dependents[n_deps:]
        self.counters, self.names = dict(snap.counters), dict(snap.names)
        self.inputs, self.outputs = dict(snap.inputs), dict(snap.outputs)
        self.infeasible, self.round_starts, self.skipped = list(snap.infeasible), list(snap.round_starts), snap.skipped
        self._fresh = []

    # -- Algorithms 5 and 2 (ordered traversal)
    def ordered_modules(self) -> list[Module]:
        """Modules reachable backwards from the outputs, in the unique order of Algorithm 5."""
        outputs = self.outputs
        order: list[Module] = []
        seen: set[Module] = set()  # modules hash by identity
        for s in sorted(outputs):
            m = outputs[s].module
            if m not in seen:
                seen.add(m)
                order.append(m)
        add_seen, append = seen.add, order.append
        for m in order:  # breadth first: the list is the queue, read while it grows
            for inp in m.in_order:
                src = inp.src
                if src is None:
                    if not any(inp is i for i in self.inputs.values()):
                        raise InvalidConfigError(
                            f"module {m.name} ({m.type_name}) leaves input {inp.name!r} unconnected; connect it "
                            f"or name it as an input of the search space")
                    continue
                m2 = src.module
                if m2 not in seen:
                    add_seen(m2)
                    append(m2)
        return order

    def ordered_hyperparameters(self) -> list[Hyperparameter]:
        """Hyperparameters of the reachable modules in the unique order of Algorithm 2."""
        hq: list[Hyperparameter] = []
        seen: set[int] = set()
        for m in self.ordered_modules():
            for h in m.hyperps.values():
                if id(h) not in seen:
                    seen.add(id(h))
                    hq.append(h)
        k = 0
        while k < len(hq):  # dependencies of dependent hyperparameters (Algorithm 2, lines 10-17)
            h = hq[k]
            if isinstance(h, Dependent):
                for h2 in h.deps.values():
                    if id(h2) not in seen:
                        seen.add(id(h2))
                        hq.append(h2)
            k += 1
        return hq

    def is_terminal(self) -> bool:
        """No unassigned independent hyperparameter is reachable (the paper's set T)."""
        return not any(isinstance(h, Independent) and not h.assigned for h in self.ordered_hyperparameters())

    def basic_modules(self) -> list[BasicModule]:
        """The basic modules of a terminal space, in traversal order."""
        mods = self.ordered_modules()
        for m in mods:
            if not m.is_basic:
                raise InvalidConfigError(f"module {m.name} is an unresolved substitution; the architecture "
                                         f"is not fully specified")
        return mods  # type: ignore[return-value]


Chooser = Callable[[int, Independent], Any]


def walk(graph: Graph, choose: Chooser, stop_if_infeasible: bool = False) -> list[Independent]:
    """Specify ``graph`` (Algorithm 3's loop): ``choose(position, h)`` returns ``h``'s value.

    Returns the independent hyperparameters in the order they were assigned; with
    ``stop_if_infeasible`` it returns early once a substitution marked the graph infeasible.
    The walk goes in rounds: the unassigned reachable hyperparameters are listed, all of
    them are assigned in that order, then the list is made again; ``graph.round_starts``
    records the position at which each round began (used by :class:`~.daspace.DASpace` to
    recognise values whose change cannot alter the rest of the walk).
    """
    assigned: list[Independent] = []
    starts: list[int] = []
    graph.round_starts = starts
    with paused_gc():
        while True:
            pending = [h for h in graph.ordered_hyperparameters() if isinstance(h, Independent) and not h.assigned]
            if not pending:
                # in a lean graph an unexpanded closed module reaches at least what its expansion
                # would: nothing pending here means nothing pending in the full graph either
                return assigned
            if graph.skipped:
                # ... but the order in which the rest would be met depends on the expansions
                raise LeanWalkUnsure(f"{graph.skipped} closed module(s) left unexpanded before round {len(starts)}")
            starts.append(len(assigned))
            for h in pending:
                v = choose(len(assigned), h)
                graph.assign(h, v)
                assigned.append(h)
                if stop_if_infeasible and graph.infeasible:
                    return assigned


class LeanWalkUnsure(Exception):
    """A lean walk (closed modules unexpanded) cannot tell the order of what is left; walk in full."""


class paused_gc:
    """Context: Python's cyclic garbage collector paused (a walk allocates thousands of small
    objects linked in cycles; collections triggered during it cost more than the walk, and
    the graph is collected afterwards all the same). Re-entrant; restores the previous state."""

    __slots__ = ("was",)

    def __enter__(self) -> None:
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: Any) -> None:
        if self.was:
            gc.enable()


# -- substitution modules used by the paper (Figures 2, 13, 18) ----------------------------------
IO = tuple[dict[str, Input], dict[str, Output]]


def identity() -> IO:
    """A single-input single-output identity basic module."""
    return BasicModule("identity", {}).io()


def siso_sequential(ios: Sequence[IO]) -> IO:
    """Connect single-input single-output search spaces in series (the paper's ``siso_sequential``)."""
    ios = [io for io in ios if io is not None]
    if not ios:
        return identity()
    for (_, prev_out), (nxt_in, _) in zip(ios[:-1], ios[1:]):
        prev_out["out"].connect(nxt_in["in"])
    return ios[0][0], ios[-1][1]


def siso_or(fns: Sequence[Callable[[], IO]] | Mapping[Any, Callable[[], IO]], h: Hyperparameter,
            type_name: str = "SISOOr", closed: bool = False) -> IO:
    """Choose one of several search spaces by ``h`` (an index, or a key of a dict of functions).

    ``closed``: every option is free of unassigned hyperparameters (see :class:`SubstitutionModule`).
    """
    table = dict(fns) if isinstance(fns, Mapping) else dict(enumerate(fns))

    def sub(dh: dict[str, Any]) -> IO:
        return table[dh["idx"]]()

    return SubstitutionModule(type_name, sub, {"idx": h}, closed=closed).io()


def mimo_or(fns: Sequence[Callable[[], IO]], h: Hyperparameter, input_names: Sequence[str],
            output_names: Sequence[str]) -> IO:
    """Multi-input multi-output ``or`` (Figure 13, top left)."""
    def sub(dh: dict[str, Any]) -> IO:
        return fns[dh["idx"]]()

    return SubstitutionModule("MIMOOr", sub, {"idx": h}, input_names, output_names).io()


def siso_optional(fn: Callable[[], IO], h: Hyperparameter) -> IO:
    """Include ``fn()`` when ``h`` is true, else an identity (Sec. 4, Optional-1 in Figure 5)."""
    def sub(dh: dict[str, Any]) -> IO:
        return fn() if dh["opt"] else identity()

    return SubstitutionModule("SISOOptional", sub, {"opt": h}).io()


def siso_repeat(fn: Callable[[], IO], h: Hyperparameter) -> IO:
    """``h`` copies of ``fn()`` in series (Figure 13, bottom left)."""
    def sub(dh: dict[str, Any]) -> IO:
        n = int(dh["num_reps"])
        if n < 1:
            raise InvalidConfigError(f"siso_repeat needs at least one repetition, got {n}")
        return siso_sequential([fn() for _ in range(n)])

    return SubstitutionModule("SISORepeat", sub, {"num_reps": h}).io()


def siso_split_combine(fn: Callable[[], IO], combine_fn: Callable[[int], IO], h: Hyperparameter) -> IO:
    """``h`` parallel copies of ``fn()`` joined by ``combine_fn(h)`` (Figure 13, right)."""
    def sub(dh: dict[str, Any]) -> IO:
        n = int(dh["num_splits"])
        branches = [fn() for _ in range(n)]
        c_in, c_out = combine_fn(n)
        i_in, i_out = identity()
        for k, (b_in, b_out) in enumerate(branches):
            i_out["out"].connect(b_in["in"])
            c_in[f"in{k}"].connect(b_out["out"])
        return i_in, c_out

    return SubstitutionModule("SISOSplitCombine", sub, {"num_splits": h}).io()


def add(n: int) -> IO:
    """Elementwise sum of ``n`` inputs ``in0..in{n-1}``."""
    return BasicModule("add", {}, [f"in{k}" for k in range(n)]).io()


def siso_residual(fn: Callable[[], IO]) -> IO:
    """``x + fn(x)``: a residual connection around a search space."""
    i_in, i_out = identity()
    f_in, f_out = fn()
    a_in, a_out = add(2)
    i_out["out"].connect(f_in["in"])
    i_out["out"].connect(a_in["in0"])
    f_out["out"].connect(a_in["in1"])
    return i_in, a_out
