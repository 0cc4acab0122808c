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

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...errors import InvalidConfigError

JSONScalar = (str, int, float, bool, type(None))


# -- hyperparameters -------------------------------------------------------------------------
class Hyperparameter:
    """A hyperparameter of a search space (independent or dependent)."""

    def __init__(self, name: str | None = None):
        self.explicit_name = name
        self.name: str = name or ""
        self.value: Any = None
        self.assigned = False
        self.modules: list[Module] = []
        self.dependents: list[Dependent] = []
        graph = _current_graph()
        graph._register_hyperparameter(self)

    def __repr__(self) -> str:
        state = repr(self.value) if self.assigned else "unassigned"
        return f"{type(self).__name__}({self.name!r}, {state})"


def _same_value(a: Any, b: Any) -> bool:
    """Equality that keeps True apart from 1 (JSON distinguishes them)."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)


class Independent(Hyperparameter):
    """An independent hyperparameter with a finite list of possible values (the paper's ``D``)."""

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

    def __init__(self, fn: Callable[[dict[str, Any]], Any], deps: Mapping[str, Hyperparameter],
                 name: str | None = None):
        self.fn = fn
        self.deps = dict(sorted(deps.items()))
        super().__init__(name)
        for h in self.deps.values():
            h.dependents.append(self)

    def ready(self) -> bool:
        """All the hyperparameters it depends on have values."""
        return all(h.assigned for h in self.deps.values())


# -- inputs, outputs, modules --------------------------------------------------------------
class Input:
    """A named input of a module; connected to at most one output."""

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

    is_basic = False

    def __init__(self, type_name: str, input_names: Sequence[str], output_names: Sequence[str],
                 hyperps: Mapping[str, Hyperparameter]):
        self.type_name = type_name
        graph = _current_graph()
        self.name = graph._unique(type_name)
        self.inputs = {n: Input(self, n) for n in input_names}
        self.outputs = {n: Output(self, n) for n in output_names}
        self.hyperps: dict[str, Hyperparameter] = {}
        for local in sorted(hyperps):
            h = hyperps[local]
            if not isinstance(h, Hyperparameter):
                raise TypeError(f"module {self.name}: {local!r} must be a Hyperparameter, got {h!r}")
            self.hyperps[local] = h
            h.modules.append(self)
            if not h.name:
                h.name = graph._hyperparameter_name(f"{self.name}.{local}")
        self.graph = graph
        graph._register_module(self)

    def io(self) -> tuple[dict[str, Input], dict[str, Output]]:
        """The module as a search space: (inputs, outputs) by local name."""
        return dict(self.inputs), dict(self.outputs)

    def __repr__(self) -> str:
        return self.name


class BasicModule(Module):
    """A module that computes: operation ``op`` with properties (hyperparameters or constants)."""

    is_basic = True

    def __init__(self, op: str, props: Mapping[str, Any], input_names: Sequence[str] = ("in",),
                 output_names: Sequence[str] = ("out",), type_name: str | None = None):
        hyperps = {k: v for k, v in props.items() if isinstance(v, Hyperparameter)}
        self.op = op
        self.static = {k: v for k, v in props.items() if not isinstance(v, Hyperparameter)}
        super().__init__(type_name or op, input_names, output_names, hyperps)

    def props(self) -> dict[str, Any]:
        """All property values (hyperparameter values and constants), for compilation."""
        out = dict(self.static)
        for k, h in self.hyperps.items():
            out[k] = h.value
        return out


class SubstitutionModule(Module):
    """A module replaced, once its hyperparameters all have values, by ``fn(dh) -> (inputs, outputs)``."""

    def __init__(self, type_name: str, fn: Callable[[dict[str, Any]], tuple[dict, dict]],
                 hyperps: Mapping[str, Hyperparameter], input_names: Sequence[str] = ("in",),
                 output_names: Sequence[str] = ("out",)):
        self.fn = fn
        self.done = False
        super().__init__(type_name, input_names, output_names, hyperps)

    def ready(self) -> bool:
        """All hyperparameters have values."""
        return all(h.assigned for h in self.hyperps.values())


# -- the graph (a search space under specification) ---------------------------------------------
_LOCAL = threading.local()


def _current_graph() -> Graph:
    stack = getattr(_LOCAL, "stack", None)
    if not stack:
        raise RuntimeError("DeepArchitect modules and hyperparameters must be created inside a Graph")
    return stack[-1]


def mark_infeasible(reason: str) -> None:
    """Called by a substitution function: the architecture being specified is not in the space."""
    _current_graph().infeasible.append(reason)


class Graph:
    """A search space being specified: its modules, hyperparameters and named inputs/outputs."""

    def __init__(self, space_fn: Callable[[], tuple[dict, dict]]):
        self.counters: dict[str, int] = {}
        self.names: dict[str, Hyperparameter] = {}
        self.hyperparameters: list[Hyperparameter] = []
        self.modules: list[Module] = []
        self._fresh: list[Any] = []  # modules and dependent hyperparameters created since the last check
        self.infeasible: list[str] = []
        with self:
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

    def _register_module(self, m: Module) -> None:
        self.modules.append(m)
        if isinstance(m, SubstitutionModule):
            self._fresh.append(m)
        for h in m.hyperps.values():
            if h.name and h.name not in self.names:
                self.names[h.name] = h

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
        dh = {k: h.value for k, h in m.hyperps.items()}
        new_inputs, new_outputs = m.fn(dh)
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

    # -- Algorithms 5 and 2 (ordered traversal)
    def ordered_modules(self) -> list[Module]:
        """Modules reachable backwards from the outputs, in the unique order of Algorithm 5."""
        space_inputs = {id(i) for i in self.inputs.values()}
        order: list[Module] = []
        seen: set[int] = set()
        for s in sorted(self.outputs):
            m = self.outputs[s].module
            if id(m) not in seen:
                seen.add(id(m))
                order.append(m)
        k = 0
        while k < len(order):
            m = order[k]
            for s in sorted(m.inputs):
                inp = m.inputs[s]
                if inp.src is None:
                    if id(inp) not in space_inputs:
                        raise InvalidConfigError(
                            f"module {m.name} ({m.type_name}) leaves input {s!r} unconnected; connect it "
                            f"or name it as an input of the search space")
                    continue
                m2 = inp.src.module
                if id(m2) not in seen:
                    seen.add(id(m2))
                    order.append(m2)
            k += 1
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
    """
    assigned: list[Independent] = []
    while True:
        pending = [h for h in graph.ordered_hyperparameters() if isinstance(h, Independent) and not h.assigned]
        if not pending:
            return assigned
        for h in pending:
            v = choose(len(assigned), h)
            graph.assign(h, v)
            assigned.append(h)
            if stop_if_infeasible and graph.infeasible:
                return assigned


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
            type_name: str = "SISOOr") -> IO:
    """Choose one of several search spaces by ``h`` (an index, or a key of a dict of functions)."""
    table = dict(fns) if isinstance(fns, Mapping) else dict(enumerate(fns))

    def sub(dh: dict[str, Any]) -> IO:
        return table[dh["idx"]]()

    return SubstitutionModule(type_name, sub, {"idx": h}).io()


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
