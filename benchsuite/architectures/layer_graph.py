"""NASBOT's layer-graph architecture space: networks as DAGs of labelled layers.

Source: K. Kandasamy et al., "Neural Architecture Search with Bayesian Optimisation and
Optimal Transport", NeurIPS 2018 (``/work/shared/papers/nasbot.txt``), Sec. 2.2 (the
formalism), Sec. 4 and Table 2 (the modifiers). The appendices are not in our copy; the
gaps are filled from the authors' public code (kirthevasank/nasbot: ``nn/neural_network.py``
for labels and validity, ``nn/nn_constraint_checkers.py`` for the constraints,
``nn/nn_examples.py`` + ``opt/nn_opt_utils.py`` for the initial pool,
``nn/nn_modifiers.py`` for the modifiers; the same code lives on in
dragonfly/dragonfly ``dragonfly/nn/``). Nothing is copied from it.

A network (:class:`LayerGraph`) is a tuple of layers in a topological order: layer 0 is the
input ``ip``, the last layer the output ``op``; every edge ``(p, c)`` has ``p < c``. Each
layer has a label and a unit count (channels for conv/res, neurons for fc and MLP layers;
``None`` for ip, op, the decision layers and pools). The decision layers (``linear`` for
regression MLPs, ``softmax`` for CNNs) are exactly the parents of ``op`` (authors' code,
``_check_if_layers_before_op_are``); several parents of a layer are concatenated
(nasbot.txt Sec. 2.2), several decision layers are averaged.

CNN strides: conv/res layers carry stride 1 or 2; pooling layers always halve the image
(the authors' pools have no stride of their own and halve, ``_check_image_size_consistency``),
which we store explicitly as stride 2; every other layer has ``None``.

Validity (:func:`validate_graph`, the authors' ``_check_if_valid_network`` and its CNN
checks): one ip, one op, no cycle or self edge, every layer on a path from ip to op, units a
positive integer exactly on the layers that have them, only decision layers feed op and they
feed only op; CNNs also: the input feeds convolutions only, the parents of a layer agree on
the image size, and conv/pool layers never follow a flat (fc/softmax) layer. The limits of
:class:`Constraints` come on top. The canonical form numbers layers by a topological order
that depends only on the network (:func:`_canonical_order`), so the space's key is the same
however a network was written or produced.

Where paper and code differ we follow the code and say so at the constant: the modifiers'
details (Table 2 is one line each), their sampling masses (not in the paper), the layer
masses' floor of 100 and fc weight 0.1 (:func:`layer_masses`).
"""
from __future__ import annotations

import heapq
import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import InvalidConfigError

# -- labels (authors' code, nn/neural_network.py: MLP_RECTIFIERS, MLP_SIGMOIDS,
#    get_cnn_layer_labels) -----------------------------------------------------------------
MLP_RECTIFIERS: tuple[str, ...] = ("relu", "crelu", "leaky-relu", "softplus", "elu")
MLP_SIGMOIDS: tuple[str, ...] = ("logistic", "tanh")
#: processing-layer labels of MLPs (the activation families; nasbot.txt Sec. 5 "MLP")
MLP_LABELS: tuple[str, ...] = MLP_RECTIFIERS + MLP_SIGMOIDS
#: convolutional labels (kernel sizes 3, 5, 7 as ``get_cnn_layer_labels(max_conv_size=7)``)
CNN_CONV_LABELS: tuple[str, ...] = ("conv3", "conv5", "conv7", "res3", "res5", "res7")
CNN_POOL_LABELS: tuple[str, ...] = ("max-pool", "avg-pool")
#: processing-layer labels of CNNs
CNN_LABELS: tuple[str, ...] = CNN_CONV_LABELS + CNN_POOL_LABELS + ("fc",)
#: input, output and the decision labels (``linear`` ends a regression MLP, ``softmax`` a CNN)
SPECIAL_LABELS: tuple[str, ...] = ("ip", "op", "softmax", "linear")
DECISION_LABEL: dict[str, str] = {"mlp": "linear", "cnn": "softmax"}
KINDS: tuple[str, ...] = ("mlp", "cnn")

_PROCESSING = {"mlp": frozenset(MLP_LABELS), "cnn": frozenset(CNN_LABELS)}


def is_conv(label: str) -> bool:
    """Whether a label is a convolution (plain or residual) with a kernel size."""
    return label in CNN_CONV_LABELS


def is_pool(label: str) -> bool:
    """Whether a label is a pooling layer."""
    return label in CNN_POOL_LABELS


def has_units(kind: str, label: str) -> bool:
    """Whether layers with this label carry a unit count (processing layers except pools)."""
    return label in _PROCESSING[kind] and not is_pool(label)


@dataclass(frozen=True)
class LayerGraph:
    """An immutable network: labelled layers with units, in topological order, and edges."""

    kind: str
    labels: tuple[str, ...]
    units: tuple[int | None, ...]
    edges: tuple[tuple[int, int], ...]
    strides: tuple[int | None, ...] | None = None

    def __post_init__(self) -> None:
        # accept lists (from JSON or user code) but store tuples so the graph is hashable
        object.__setattr__(self, "labels", tuple(self.labels))
        object.__setattr__(self, "units", tuple(self.units))
        object.__setattr__(self, "edges", tuple(tuple(e) for e in self.edges))
        if self.strides is not None:
            object.__setattr__(self, "strides", tuple(self.strides))

    @property
    def n_layers(self) -> int:
        """Number of layers, input and output included."""
        return len(self.labels)

    @cached_property
    def _adjacency(self) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
        n = len(self.labels)
        par: list[list[int]] = [[] for _ in range(n)]
        chi: list[list[int]] = [[] for _ in range(n)]
        for p, c in self.edges:
            if 0 <= p < n and 0 <= c < n:
                chi[p].append(c)
                par[c].append(p)
        return tuple(tuple(sorted(x)) for x in par), tuple(tuple(sorted(x)) for x in chi)

    def parents(self, i: int) -> tuple[int, ...]:
        """Indices of the layers feeding layer ``i`` (ascending)."""
        return self._adjacency[0][i]

    def children(self, i: int) -> tuple[int, ...]:
        """Indices of the layers layer ``i`` feeds (ascending)."""
        return self._adjacency[1][i]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (lists, ints, strings, None)."""
        d: dict[str, Any] = {
            "kind": self.kind,
            "labels": list(self.labels),
            "units": list(self.units),
            "edges": [list(e) for e in self.edges],
        }
        if self.strides is not None:
            d["strides"] = list(self.strides)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "LayerGraph":
        """Validated graph (canonical numbering) from :meth:`to_dict`'s output."""
        return validate_graph(d)

    def to_json(self) -> str:
        """Compact JSON text of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "LayerGraph":
        """Validated graph from JSON text; a one-line :class:`InvalidConfigError` if bad."""
        return validate_graph(_parse_json(text))

    def describe(self) -> str:
        """One line per layer: index, label, units, stride, children."""
        rows = []
        for i, lab in enumerate(self.labels):
            u = "" if self.units[i] is None else f", {self.units[i]}"
            s = " /2" if self.strides is not None and self.strides[i] == 2 and is_conv(lab) else ""
            rows.append(f"{i}: {lab}{s}{u} -> {list(self.children(i))}")
        return "\n".join(rows)



# ==========================================================================================
# Constraints
# ==========================================================================================
@dataclass(frozen=True)
class Constraints:
    """Limits on a network, as the authors' ``NNConstraintChecker`` (``None``: no limit).

    Names and defaults are the authors' (``nn/nn_constraint_checkers.py``; the values are
    those of their demos, ``demos/demo_mlp.py`` and ``demos/demo_cnn.py``, used for the
    paper's experiments: 5-60 layers, 8-1024 units per layer, in-degree <= 5,
    out-degree <= 55, <= 200 edges, no mass limit). ``max_num_2strides`` (CNNs only) bounds
    the number of halvings of the image on any path (the authors' default: no bound).
    """

    max_num_layers: int | None = 60
    min_num_layers: int | None = 5
    max_mass: float | None = None
    min_mass: float | None = None
    max_in_degree: int | None = 5
    max_out_degree: int | None = 55
    max_num_edges: int | None = 200
    max_num_units_per_layer: int | None = 1024
    min_num_units_per_layer: int | None = 8
    max_num_2strides: int | None = None

    @classmethod
    def make(cls, value: "Constraints | Mapping[str, Any] | None") -> "Constraints | None":
        """``None``, a :class:`Constraints`, or one built from a mapping of its field names."""
        if value is None or isinstance(value, Constraints):
            return value
        if not isinstance(value, Mapping):
            raise InvalidConfigError(f"layer graph constraints must be a mapping, got {type(value).__name__}")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(value) - known)
        if unknown:
            from ..errors import InvalidSettingError
            raise InvalidSettingError(
                f"unknown layer-graph constraint(s) {unknown}; known: {sorted(known)}")
        return cls(**dict(value))

    def violation(self, g: LayerGraph) -> str:
        """Empty string if ``g`` (a structurally valid graph) satisfies every limit, else why not."""
        n = g.n_layers
        if self.max_num_layers is not None and n > self.max_num_layers:
            return f"violates constraint max_num_layers={self.max_num_layers} (it has {n} layers)"
        if self.min_num_layers is not None and n < self.min_num_layers:
            return f"violates constraint min_num_layers={self.min_num_layers} (it has {n} layers)"
        if self.max_mass is not None or self.min_mass is not None:
            mass = sum(layer_masses(g))
            if self.max_mass is not None and mass > self.max_mass:
                return f"violates constraint max_mass={self.max_mass:g} (its mass is {mass:g})"
            if self.min_mass is not None and mass < self.min_mass:
                return f"violates constraint min_mass={self.min_mass:g} (its mass is {mass:g})"
        if self.max_out_degree is not None:
            d = max(len(g.children(i)) for i in range(n))
            if d > self.max_out_degree:
                return f"violates constraint max_out_degree={self.max_out_degree} (a layer has {d} children)"
        if self.max_in_degree is not None:
            d = max(len(g.parents(i)) for i in range(n))
            if d > self.max_in_degree:
                return f"violates constraint max_in_degree={self.max_in_degree} (a layer has {d} parents)"
        if self.max_num_edges is not None and len(g.edges) > self.max_num_edges:
            return f"violates constraint max_num_edges={self.max_num_edges} (it has {len(g.edges)} edges)"
        us = [u for u in g.units if u is not None]
        if us and self.max_num_units_per_layer is not None and max(us) > self.max_num_units_per_layer:
            return (f"violates constraint max_num_units_per_layer={self.max_num_units_per_layer} "
                    f"(a layer has {max(us)} units)")
        if us and self.min_num_units_per_layer is not None and min(us) < self.min_num_units_per_layer:
            return (f"violates constraint min_num_units_per_layer={self.min_num_units_per_layer} "
                    f"(a layer has {min(us)} units)")
        if g.kind == "cnn" and self.max_num_2strides is not None:
            _, post = image_sizes(g)
            k = max(int(s).bit_length() - 1 for s in post if s is not None)
            if k > self.max_num_2strides:
                return f"violates constraint max_num_2strides={self.max_num_2strides} (the image is halved {k} times)"
        return ""


DEFAULT_CONSTRAINTS = Constraints()


# ==========================================================================================
# Graph analyses on a structurally valid graph (layers in topological order)
# ==========================================================================================
def image_sizes(g: LayerGraph) -> tuple[list[int | None], list[int | None]]:
    """Inverse image sizes (1 = input size, 2 = halved, ...) into and out of each CNN layer.

    ``None`` means no image: fc, softmax and op produce flat vectors. As the authors'
    ``_check_image_size_consistency``: pools and stride-2 convolutions halve the image.
    """
    n = g.n_layers
    pre: list[int | None] = [None] * n
    post: list[int | None] = [None] * n
    pre[0] = post[0] = 1
    for i in range(1, n):
        ps = g.parents(i)
        pre[i] = post[ps[0]] if ps else None
        lab = g.labels[i]
        if is_pool(lab) or (is_conv(lab) and g.strides is not None and g.strides[i] == 2):
            post[i] = None if pre[i] is None else 2 * pre[i]
        elif is_conv(lab):
            post[i] = pre[i]
    return pre, post


def dists_from_ip(g: LayerGraph) -> list[int]:
    """Shortest number of hops from the input to each layer."""
    d = [0] * g.n_layers
    for i in range(1, g.n_layers):
        d[i] = 1 + min(d[p] for p in g.parents(i))
    return d


def dists_to_op(g: LayerGraph) -> list[int]:
    """Shortest number of hops from each layer to the output."""
    n = g.n_layers
    d = [0] * n
    for i in range(n - 2, -1, -1):
        d[i] = 1 + min(d[c] for c in g.children(i))
    return d


_NON_PROC_MASS_FRAC = 0.1   # zeta of nasbot.txt Sec. 3 ("we use zeta = 0.1")
_FC_MASS_COEFF = 0.1        # authors' code, nn/neural_network.py _FC_LAYER_MASS_COEFF
_MIN_NON_PROC_MASS = 100.0  # authors' code: max(zeta * total, 100); not in the paper


def layer_masses(g: LayerGraph, fc_coeff: float = _FC_MASS_COEFF) -> list[float]:
    """Layer masses of nasbot.txt Sec. 3 as the authors compute them (``compute_layer_masses``).

    Processing layers: units x incoming units (the input counts as 1 unit, as in the authors'
    code); fc layers x ``fc_coeff`` (0.1 in the authors' code; the masses printed in the
    paper's Fig. 1 use 1); pools: their incoming channels. Input and output each get
    ``max(0.1 * total processing mass, 100)`` and the decision layers share that amount
    (the paper has zeta * total without the floor of 100).
    """
    n = g.n_layers
    out_ch: list[float | None] = [None] * n
    out_ch[0] = 1
    mass = [0.0] * n
    decision = []
    for i in range(1, n - 1):
        lab = g.labels[i]
        if lab in ("softmax", "linear"):
            decision.append(i)
            continue
        cin = float(sum(out_ch[p] or 0 for p in g.parents(i)))
        if is_pool(lab):
            out_ch[i] = cin
            mass[i] = cin
        else:
            out_ch[i] = g.units[i]
            mass[i] = cin * float(g.units[i]) * (fc_coeff if lab == "fc" else 1.0)
    non_proc = max(_NON_PROC_MASS_FRAC * sum(mass), _MIN_NON_PROC_MASS)
    mass[0] = mass[n - 1] = non_proc
    for i in decision:
        mass[i] = non_proc / len(decision)
    return mass


# ==========================================================================================
# Validation and the canonical form
# ==========================================================================================
_FIELDS = ("kind", "labels", "units", "edges", "strides")


def _bad(msg: str) -> InvalidConfigError:
    return InvalidConfigError("layer graph: " + msg)


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise _bad(f"not valid JSON ({str(exc).splitlines()[0]})") from None


def _as_int_or_none(v: Any, what: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or int(v) != v:
        raise _bad(f"{what} must be an integer or null, got {v!r}")
    return int(v)


def _raw_fields(g: Any) -> tuple[str, list, list, list, list | None]:
    if isinstance(g, LayerGraph):
        return g.kind, list(g.labels), list(g.units), [tuple(e) for e in g.edges], \
            None if g.strides is None else list(g.strides)
    if isinstance(g, (str, bytes)):
        g = _parse_json(g)
    if not isinstance(g, Mapping):
        raise _bad(f"expected a LayerGraph, a dict or JSON text with keys {list(_FIELDS)}, got {type(g).__name__}")
    unknown = [k for k in g if k not in _FIELDS]
    if unknown:
        raise _bad(f"unknown key(s) {unknown}; allowed keys are {list(_FIELDS)}")
    missing = [k for k in _FIELDS[:4] if k not in g]
    if missing:
        raise _bad(f"missing key(s) {missing}; a network needs {list(_FIELDS[:4])} (+ 'strides' for a cnn)")
    kind, labels, units, edges, strides = (g.get(k) for k in _FIELDS)
    for name, val in (("labels", labels), ("units", units), ("edges", edges)):
        if not isinstance(val, (list, tuple)):
            raise _bad(f"'{name}' must be a list, got {type(val).__name__}")
    if strides is not None and not isinstance(strides, (list, tuple)):
        raise _bad(f"'strides' must be a list or null, got {type(strides).__name__}")
    return kind, list(labels), list(units), list(edges), None if strides is None else list(strides)


def _find_cycle(n: int, par: list[list[int]], left: set[int]) -> list[int]:
    """A cycle among ``left`` (nodes Kahn's algorithm could not place): walk up to a repeat."""
    v = min(left)
    seen: dict[int, int] = {}
    path: list[int] = []
    while v not in seen:
        seen[v] = len(path)
        path.append(v)
        v = min(p for p in par[v] if p in left)
    cyc = path[seen[v]:]
    cyc.reverse()  # walked against the edges
    return cyc + [cyc[0]]


def _rank(items: list) -> list[int]:
    index = {x: r for r, x in enumerate(sorted(set(items)))}
    return [index[x] for x in items]


def _canonical_order(labels: list[str], units: list, strides: list | None,
                     par: list[list[int]], chi: list[list[int]]) -> list[int]:
    """A topological order that depends only on the network, not on how it is numbered.

    Colour refinement (1-WL on the DAG, with parent and child colours) gives each layer a
    colour from its label, units, stride and neighbourhood; Kahn's algorithm then always
    places the ready layer with the smallest (colour, positions of its parents). Layers that
    still tie are interchangeable (an automorphism swaps them) in all but pathological graphs
    where 1-WL fails, so two numberings of one network give the same canonical form.
    """
    n = len(labels)
    color = _rank([(labels[i], -1 if units[i] is None else units[i],
                    -1 if strides is None or strides[i] is None else strides[i]) for i in range(n)])
    n_cls = len(set(color))
    while True:
        new = _rank([(color[i], tuple(sorted(color[p] for p in par[i])),
                      tuple(sorted(color[c] for c in chi[i]))) for i in range(n)])
        k = len(set(new))
        color = new
        if k == n_cls:
            break
        n_cls = k
    indeg = [len(par[i]) for i in range(n)]
    heap: list[tuple[int, tuple[int, ...], int]] = [(color[i], (), i) for i in range(n) if indeg[i] == 0]
    heapq.heapify(heap)
    order: list[int] = []
    pos: dict[int, int] = {}
    while heap:
        _, _, v = heapq.heappop(heap)
        pos[v] = len(order)
        order.append(v)
        for c in chi[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                # equal colours are told apart by where their parents were placed, so that the
                # two halves of symmetric branches stay paired with their own parents
                heapq.heappush(heap, (color[c], tuple(sorted(pos[p] for p in par[c])), c))
    return order


def _mark(g: LayerGraph, cons: Constraints | None) -> LayerGraph:
    # remember (outside the dataclass fields) that g is canonical and which limits it meets,
    # so that key() and validate() of an already-validated graph cost nothing
    g.__dict__["_canonical"] = True
    g.__dict__.setdefault("_meets", set()).add(cons)
    return g


def validate_graph(g: LayerGraph | Mapping[str, Any] | str,
                   constraints: Constraints | Mapping[str, Any] | None = None) -> LayerGraph:
    """Canonical form of ``g`` or a one-line :class:`InvalidConfigError` naming the problem.

    ``g`` may be a :class:`LayerGraph`, its dict form or JSON text, numbered in any order;
    the result is re-numbered by :func:`_canonical_order`. With ``constraints`` (a
    :class:`Constraints` or a mapping of its fields) the limits are checked too.
    """
    cons = Constraints.make(constraints)
    if isinstance(g, LayerGraph) and g.__dict__.get("_canonical") and cons in g.__dict__.get("_meets", ()):
        return g
    kind, labels, units, edges, strides = _raw_fields(g)
    if kind not in KINDS:
        raise _bad(f"kind must be one of {list(KINDS)}, got {kind!r}")
    n = len(labels)
    allowed = ("ip", "op", DECISION_LABEL[kind]) + (MLP_LABELS if kind == "mlp" else CNN_LABELS)
    for i, lab in enumerate(labels):
        if lab not in allowed:
            raise _bad(f"layer {i} has unknown label {lab!r}; {kind} labels are {', '.join(allowed)}")
    if len(units) != n:
        raise _bad(f"'units' has {len(units)} entries but there are {n} layers; give one per layer (null where none)")
    units = [_as_int_or_none(u, f"units of layer {i}") for i, u in enumerate(units)]
    n_ip, n_op = labels.count("ip"), labels.count("op")
    if n_ip != 1:
        raise _bad("no input layer (label 'ip'); add exactly one" if n_ip == 0
                   else f"{n_ip} input layers (label 'ip'); a network has exactly one")
    if n_op != 1:
        raise _bad("missing output layer (label 'op'); add exactly one, fed by the decision layers" if n_op == 0
                   else f"{n_op} output layers (label 'op'); a network has exactly one")
    # edges
    eset: set[tuple[int, int]] = set()
    for e in edges:
        if not isinstance(e, (list, tuple)) or len(e) != 2:
            raise _bad(f"edge {e!r} is not a pair [parent, child]")
        p, c = (_as_int_or_none(x, f"edge {list(e)!r} endpoint") for x in e)
        if p is None or c is None or not (0 <= p < n and 0 <= c < n):
            raise _bad(f"edge {list(e)!r} refers to a layer outside 0..{n - 1}")
        if p == c:
            raise _bad(f"edge {list(e)!r} connects layer {p} ({labels[p]}) to itself; remove it")
        if (p, c) in eset:
            raise _bad(f"edge {list(e)!r} is listed twice; a layer feeds another at most once, remove the copy")
        eset.add((p, c))
    par: list[list[int]] = [[] for _ in range(n)]
    chi: list[list[int]] = [[] for _ in range(n)]
    for p, c in sorted(eset):
        par[c].append(p)
        chi[p].append(c)
    # cycles (Kahn)
    indeg = [len(par[i]) for i in range(n)]
    stack = [i for i in range(n) if indeg[i] == 0]
    placed = 0
    while stack:
        v = stack.pop()
        placed += 1
        for c in chi[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                stack.append(c)
    if placed < n:
        left = {i for i in range(n) if indeg[i] > 0}
        cyc = _find_cycle(n, par, left)
        raise _bad("the edges form a cycle " + " -> ".join(str(v) for v in cyc) + "; a network must be acyclic")
    ip, op = labels.index("ip"), labels.index("op")
    if par[ip]:
        raise _bad(f"the input layer {ip} has parents {par[ip]}; nothing may feed the input")
    if chi[op]:
        raise _bad(f"the output layer {op} has children {chi[op]}; the output feeds nothing")
    fwd = _reach(ip, chi)
    for i in range(n):
        if i not in fwd:
            raise _bad(f"layer {i} ({labels[i]}) is not reachable from the input layer; connect it or remove it")
    bwd = _reach(op, par)
    for i in range(n):
        if i not in bwd:
            raise _bad(f"layer {i} ({labels[i]}) has no path to the output layer; connect it or remove it")
    # units
    for i, lab in enumerate(labels):
        u = units[i]
        if has_units(kind, lab):
            if u is None or u <= 0:
                raise _bad(f"layer {i} ({lab}) has {0 if u is None else u} units; "
                           "give every processing layer a positive number of units")
        elif u is not None:
            raise _bad(f"layer {i} ({lab}) has units {u} but {lab} layers have none; use null")
    # decision layers are exactly the parents of the output (authors' _check_if_layers_before_op_are)
    dec = DECISION_LABEL[kind]
    for p in par[op]:
        if labels[p] != dec:
            raise _bad(f"layer {p} ({labels[p]}) feeds the output; only {dec} layers may feed 'op'")
    for i, lab in enumerate(labels):
        if lab == dec and chi[i] != [op]:
            raise _bad(f"decision layer {i} ({lab}) must feed only the output layer, not {chi[i]}")
    # strides
    if kind == "mlp":
        if strides is not None and any(s is not None for s in strides):
            raise _bad("an mlp has no strides; drop 'strides' or use null")
        strides = None
    else:
        if strides is None:
            strides = [1 if is_conv(lab) else 2 if is_pool(lab) else None for lab in labels]
        if len(strides) != n:
            raise _bad(f"'strides' has {len(strides)} entries but there are {n} layers")
        strides = [_as_int_or_none(s, f"stride of layer {i}") for i, s in enumerate(strides)]
        for i, lab in enumerate(labels):
            s = strides[i]
            if is_conv(lab):
                if s not in (1, 2):
                    raise _bad(f"layer {i} ({lab}) has stride {s}; convolutions take stride 1 or 2")
            elif is_pool(lab):
                if s not in (None, 2):
                    raise _bad(f"layer {i} ({lab}) has stride {s}; pooling layers always halve the image (2)")
                strides[i] = 2
            elif s is not None:
                raise _bad(f"layer {i} ({lab}) has stride {s}; only conv/res/pool layers have strides (use null)")
        for c in chi[ip]:
            if not is_conv(labels[c]):
                raise _bad(f"layer {c} ({labels[c]}) follows the input; the input must feed convolutions only")
    # canonical numbering
    order = _canonical_order(labels, units, strides, par, chi)
    new = {old: k for k, old in enumerate(order)}
    out = LayerGraph(kind, tuple(labels[o] for o in order), tuple(units[o] for o in order),
                     tuple(sorted((new[p], new[c]) for p, c in eset)),
                     None if strides is None else tuple(strides[o] for o in order))
    if kind == "cnn":
        _check_image_sizes(out)
    if cons is not None:
        why = cons.violation(out)
        if why:
            raise _bad(why)
    return _mark(out, cons)


def _reach(start: int, nbrs: list[list[int]]) -> set[int]:
    seen = {start}
    stack = [start]
    while stack:
        v = stack.pop()
        for w in nbrs[v]:
            if w not in seen:
                seen.add(w)
                stack.append(w)
    return seen


def _check_image_sizes(g: LayerGraph) -> None:
    """Parents of a layer must agree on the image size; conv/pool need an image (not after fc)."""
    _, post = image_sizes(g)
    for i in range(1, g.n_layers):
        sizes = {post[p] for p in g.parents(i)}
        lab = g.labels[i]
        if len(sizes) > 1:
            shown = ", ".join(f"{p}:{'flat' if post[p] is None else '1/' + str(post[p])}" for p in g.parents(i))
            raise _bad(f"layer {i} ({lab}) merges parents of different image sizes ({shown}); "
                       "parents of a layer must have equal sizes")
        if (is_conv(lab) or is_pool(lab)) and None in sizes:
            raise _bad(f"layer {i} ({lab}) follows a flat (fc/softmax) layer; convolutions and pools need an image")


# ==========================================================================================
# The authors' initial pool (opt/nn_opt_utils.py get_initial_pool; nn/nn_examples.py)
# ==========================================================================================
def _dflt_unit_sizes(n_blocks: int) -> list[int]:
    """64, 128, 256, 512, 512, ... (authors' ``_dflt_unit_sizes``)."""
    out, u = [], 64
    for _ in range(n_blocks):
        out.append(u)
        u = min(2 * u, 512)
    return out


def _chain(kind: str, labels: list[str], units: list, strides: list | None) -> LayerGraph:
    n = len(labels)
    return validate_graph(LayerGraph(kind, labels, units, [(i, i + 1) for i in range(n - 1)], strides))


def _vgg(n_conv_per_block: int) -> LayerGraph:
    """Authors' ``get_vgg_net``: 2x(conv3 x2 + max-pool) then 3 blocks of 128/256/512."""
    labels = ["ip", "conv3", "conv3", "max-pool", "conv3", "conv3", "max-pool"]
    units: list = [None, 64, 64, None, 128, 128, None]
    for bfs in (128, 256, 512):
        labels += ["conv3"] * n_conv_per_block + ["max-pool"]
        units += [bfs] * n_conv_per_block + [None]
    labels += ["fc", "fc", "fc", "softmax", "op"]
    units += [128, 256, 512, None, None]
    strides = [1 if is_conv(lab) else 2 if is_pool(lab) else None for lab in labels]
    return _chain("cnn", labels, units, strides)


def _blocked_cnn(n_blocks: int, n_per_block: int, n_fc: int, block_label: str = "conv3") -> LayerGraph:
    """Authors' ``get_blocked_cnn``: conv7 + max-pool, blocks whose first conv has stride 2,
    avg-pool, fc layers of twice the last block's filters, softmax."""
    sizes = _dflt_unit_sizes(n_blocks)
    labels, units, strides = ["ip", "conv7", "max-pool"], [None, 64, None], [None, 1, 2]
    for b in range(n_blocks):
        labels += [block_label] * n_per_block
        units += [sizes[b]] * n_per_block
        strides += [2] + [1] * (n_per_block - 1)
    labels += ["avg-pool"] + ["fc"] * n_fc + ["softmax", "op"]
    units += [None] + [2 * sizes[-1]] * n_fc + [None, None]
    strides += [2] + [None] * (n_fc + 2)
    return _chain("cnn", labels, units, strides)


def _blocked_mlp(n_blocks: int, n_per_block: int, rotation: int) -> LayerGraph:
    """Authors' ``get_blocked_mlp`` (regression): blocks alternate a rectifier and a sigmoid,
    block b has ``_dflt_unit_sizes`` units, then a linear decision layer.

    The authors shuffle the activation lists with global random state; we rotate them by the
    network's position in the pool instead, which is deterministic and still varies labels.
    (Their code also extends the unit list it was given instead of a fresh one, which shifts
    the units by ``n_blocks`` places; we use the evident intent, block b has size b.)
    """
    rect = ["relu", "elu", "crelu", "leaky-relu", "softplus"]
    sig = ["logistic", "tanh"]
    rect = rect[rotation % 5:] + rect[:rotation % 5]
    sig = sig[rotation % 2:] + sig[:rotation % 2]
    sizes = _dflt_unit_sizes(n_blocks)
    labels, units = ["ip"], [None]
    for b in range(n_blocks):
        lab = rect[(b // 2) % len(rect)] if b % 2 == 0 else sig[(b // 2) % len(sig)]
        labels += [lab] * n_per_block
        units += [sizes[b]] * n_per_block
    labels += ["linear", "op"]
    units += [None, None]
    return _chain("mlp", labels, units, None)


# (n_blocks, n_layers_per_block) of the authors' get_initial_mlp_pool, and the CNN pool
_MLP_POOL = ((3, 2), (4, 2), (5, 2), (3, 4), (6, 2), (8, 2), (6, 3), (10, 2), (4, 6), (8, 3))
_CNN_POOL_VGG = (1, 2, 3, 4)
_CNN_POOL_BLOCKED = ((3, 1, 1), (3, 2, 1), (3, 3, 1), (3, 4, 1), (3, 5, 1), (4, 4, 1))


def initial_pool(kind: str) -> list[LayerGraph]:
    """The authors' hand-made initial networks (``opt/nn_opt_utils.py`` ``get_initial_pool``).

    MLP: 10 feed-forward blocked MLPs of 6-24 hidden layers. CNN: VGG nets with 1-4 convs per
    block and 6 blocked CNNs (3-16 conv layers). Their EA, NASBOT's acquisition optimiser and
    their random sampler all start from these.
    """
    if kind == "mlp":
        return [_blocked_mlp(b, k, j) for j, (b, k) in enumerate(_MLP_POOL)]
    if kind == "cnn":
        return [_vgg(k) for k in _CNN_POOL_VGG] + [_blocked_cnn(*a) for a in _CNN_POOL_BLOCKED]
    raise InvalidConfigError(f"layer graph kind must be one of {list(KINDS)}, got {kind!r}")


# ==========================================================================================
# The nine modifiers of nasbot.txt Table 2 (details from the authors' nn/nn_modifiers.py)
# ==========================================================================================
#: unnormalised sampling masses of the authors' code (``_PRIMITIVE_PROB_MASSES``; their
#: names swap_layer and branch are Table 2's swap_label and dup_path); the paper gives none
MODIFIER_MASSES: dict[str, float] = {
    "inc_single": 0.1, "dec_single": 0.1, "inc_en_masse": 0.1, "dec_en_masse": 0.1,
    "remove_layer": 0.1, "wedge_layer": 0.1, "swap_label": 0.2, "dup_path": 0.2, "skip": 0.2,
}
_MASS_TOTAL = sum(MODIFIER_MASSES.values())
#: the nine modifiers and the probability of drawing each (masses normalised to sum to 1)
MODIFIERS: dict[str, float] = {k: v / _MASS_TOTAL for k, v in MODIFIER_MASSES.items()}
#: probabilities of 1..5 modifier steps per mutation in NASBOT's EA and the authors' random
#: sampler (``ga_mutation_op_distro`` 'd0.5-0.25-0.125-0.075-0.05' in opt/nasbot.py)
MUTATION_STEP_PROBS: tuple[float, ...] = (0.5, 0.25, 0.125, 0.075, 0.05)

_CHANGE_FRAC = 0.125          # "by 1/8", nasbot.txt Table 2 (authors' _DFLT_CHANGE_FRAC)
_WEDGE_POOL_PROB = 0.05       # authors' choose_pool_with_prob
_STRIDE2_PROB = 0.05          # authors' choose_stride_2_with_prob / change_stride_with_prob
_BRANCH_KEEP_PROB = 0.5       # authors' keep_layer_with_prob (create_duplicate_branch)
_BRANCH_MIN_PATH = 4          # authors' min_path_length
_BRANCH_END_PROB = 0.2        # authors' end_path_prob
_MAX_TRIES = 10               # candidates tried per apply_modifier call before giving up
_MAX_DRAWS = 20               # modifier draws per mutation step (authors: max(2n, 20) draws)

# swap_label candidates and their probabilities (authors' get_list_of_swap_layer_modifiers)
_SWAP_TABLE: dict[str, tuple[tuple[str, ...], tuple[float, ...] | None]] = {
    "conv3": (("res3", "res5", "conv5", "conv7", "max-pool", "avg-pool"), (.25, .25, .15, .25, .05, .05)),
    "conv5": (("res3", "res5", "conv3", "conv7", "max-pool", "avg-pool"), (.25, .25, .2, .2, .05, .05)),
    "conv7": (("res3", "res5", "conv3", "conv5", "max-pool", "avg-pool"), (.25, .25, .25, .15, .05, .05)),
    "res3": (("conv3", "conv5", "res5", "res7", "max-pool", "avg-pool"), (.25, .25, .15, .25, .05, .05)),
    "res5": (("conv3", "conv5", "res3", "res7", "max-pool", "avg-pool"), (.25, .25, .2, .2, .05, .05)),
    "res7": (("conv3", "conv5", "res3", "res5", "max-pool", "avg-pool"), (.25, .25, .25, .15, .05, .05)),
    "avg-pool": (("max-pool",), None),
    "max-pool": (("avg-pool",), None),
}
for _lab in MLP_RECTIFIERS:
    _SWAP_TABLE[_lab] = (MLP_SIGMOIDS, None)     # a rectifier becomes a sigmoid ...
for _lab in MLP_SIGMOIDS:
    _SWAP_TABLE[_lab] = (MLP_RECTIFIERS, None)   # ... and vice versa (authors' code)


@dataclass
class _Edit:
    """A mutable copy of a graph that a modifier changes before it is validated again."""

    kind: str
    labels: list
    units: list
    strides: list | None
    edges: set

    @classmethod
    def of(cls, g: LayerGraph) -> "_Edit":
        return cls(g.kind, list(g.labels), list(g.units), None if g.strides is None else list(g.strides), set(g.edges))

    def add_layer(self, label: str, units: int | None, stride: int | None) -> int:
        self.labels.append(label)
        self.units.append(units)
        if self.strides is not None:
            self.strides.append(stride)
        return len(self.labels) - 1

    def graph(self) -> LayerGraph:
        return LayerGraph(self.kind, tuple(self.labels), tuple(self.units), tuple(sorted(self.edges)),
                          None if self.strides is None else tuple(self.strides))


def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def _modifiable(g: LayerGraph) -> list[int]:
    """Layers whose units the unit modifiers change (authors' _get_directly_modifable_layer_idxs)."""
    return [i for i, lab in enumerate(g.labels) if has_units(g.kind, lab)]


def _processing(g: LayerGraph) -> list[int]:
    return [i for i, lab in enumerate(g.labels) if lab in _PROCESSING[g.kind]]


def _gen_single(g: LayerGraph, rng: np.random.Generator, ratio: float) -> Iterator[_Edit]:
    for i in rng.permutation(_modifiable(g)):
        new = _round_half_up(ratio * g.units[i])
        if new != g.units[i]:
            e = _Edit.of(g)
            e.units[i] = new
            yield e


def _gen_en_masse(g: LayerGraph, rng: np.random.Generator, ratio: float) -> Iterator[_Edit]:
    # the authors change one contiguous group (in topological order) of the modifiable layers:
    # a half if >= 4 internal layers, also a quarter if >= 8, also an eighth if >= 16
    n_internal = g.n_layers - 2
    groups = [(k, m) for m, need in ((2, 4), (4, 8), (8, 16)) if n_internal >= need for k in range(1, m + 1)]
    mod = _modifiable(g)
    for j in rng.permutation(len(groups)):
        k, m = groups[j]
        chosen = mod[(k - 1) * len(mod) // m: k * len(mod) // m]
        e = _Edit.of(g)
        for i in chosen:
            e.units[i] = _round_half_up(ratio * g.units[i])
        if chosen and e.units != list(g.units):
            yield e


def _gen_swap(g: LayerGraph, rng: np.random.Generator) -> Iterator[_Edit]:
    for i in rng.permutation(g.n_layers):
        lab = g.labels[i]
        if lab not in _SWAP_TABLE:
            continue  # ip, op, fc and the decision layers keep their labels (authors' code)
        cands, probs = _SWAP_TABLE[lab]
        p = None if probs is None else np.asarray(probs) / sum(probs)
        new = str(cands[int(rng.choice(len(cands), p=p))])
        e = _Edit.of(g)
        e.labels[i] = new
        if g.kind == "cnn":
            if is_pool(new):
                e.units[i], e.strides[i] = None, 2
            elif is_conv(new) and rng.random() < _STRIDE2_PROB:
                e.strides[i] = 1 if g.strides[i] == 2 else 2
        yield e


def _wedge_units(g: LayerGraph, u: int, v: int) -> int:
    """Units of a layer wedged into edge (u, v): the authors' _determine_num_units_for_wedge_layer."""
    vals = [g.units[x] for x in (u, v) if g.units[x] is not None]
    if vals:
        return max(1, _round_half_up(sum(vals) / len(vals)))
    if not g.parents(u):  # u is the input
        vals = [g.units[c] for c in g.children(u) if g.units[c] is not None] or [16]
        return max(1, _round_half_up(sum(vals) / len(vals)))
    vals = [g.units[p] for p in g.parents(u) if g.units[p] is not None]
    if not vals:
        vals = [_wedge_units(g, p, u) for p in g.parents(u)]
    return max(1, _round_half_up(sum(vals) / len(vals)))


def _gen_wedge(g: LayerGraph, rng: np.random.Generator) -> Iterator[_Edit]:
    op = g.n_layers - 1
    edges = list(g.edges)
    for j in rng.permutation(len(edges)):
        u, v = edges[j]
        if v == op:
            continue  # nothing is wedged before the output (authors' code)
        stride = None
        if g.kind == "cnn" and g.labels[u] == "fc":
            lab, units = "fc", g.units[u]
        else:
            if g.kind == "cnn" and u != 0 and rng.random() < _WEDGE_POOL_PROB:
                lab = str(rng.choice(CNN_POOL_LABELS))
            else:
                cands = CNN_CONV_LABELS if g.kind == "cnn" else MLP_LABELS
                lab = str(cands[int(rng.integers(len(cands)))])
            units = None if is_pool(lab) else _wedge_units(g, u, v)
            if is_conv(lab):
                stride = 2 if rng.random() < _STRIDE2_PROB else 1
            elif is_pool(lab):
                stride = 2
        e = _Edit.of(g)
        w = e.add_layer(lab, units, stride)
        e.edges.discard((u, v))
        e.edges |= {(u, w), (w, v)}
        yield e


def _gen_remove(g: LayerGraph, rng: np.random.Generator) -> Iterator[_Edit]:
    if not _processing(g):
        return
    pre, post = image_sizes(g) if g.kind == "cnn" else (None, None)
    for idx in rng.permutation(g.n_layers):
        idx = int(idx)
        lab = g.labels[idx]
        if lab in SPECIAL_LABELS:
            continue
        parents, children = g.parents(idx), g.children(idx)
        if lab == "fc" and any(g.labels[p] != "fc" for p in parents):
            continue  # an fc layer goes only if it is not the first one (authors' code)
        e = _Edit.of(g)
        if g.kind == "cnn" and pre[idx] != post[idx]:
            # the layer halved the image: hand the halving to its children, or else its parents,
            # when they are all stride-1 convolutions (authors' code)
            for group in (children, parents):
                if all(is_conv(g.labels[x]) and g.strides[x] == 1 for x in group):
                    for x in group:
                        e.strides[x] = 2
                    break
        must_children = [c for c in children if len(g.parents(c)) == 1]
        must_parents = [p for p in parents if len(g.children(p)) == 1]
        must_children = [must_children[k] for k in rng.permutation(len(must_children))]
        must_parents = [must_parents[k] for k in rng.permutation(len(must_parents))]
        while must_children and must_parents:
            e.edges.add((must_parents.pop(), must_children.pop()))
        for c in must_children:
            e.edges.add((int(rng.choice(parents)), c))
        for p in must_parents:
            e.edges.add((p, int(rng.choice(children))))
        # drop the layer: its edges go, later layers shift down by one
        e.edges = {(a - (a > idx), b - (b > idx)) for a, b in e.edges if idx not in (a, b)}
        del e.labels[idx], e.units[idx]
        if e.strides is not None:
            del e.strides[idx]
        yield e


def _start_probs(g: LayerGraph) -> np.ndarray:
    """Start-layer weights for dup_path and skip: 1/sqrt(1 + hops from the input), zero for
    op, fc and decision layers (authors' _get_start_layer_probs_for_branching_and_skipping)."""
    d = dists_from_ip(g)
    return np.array([0.0 if lab in ("op", "softmax", "linear", "fc") else 1.0 / math.sqrt(1 + d[i])
                     for i, lab in enumerate(g.labels)])


def _gen_dup_path(g: LayerGraph, rng: np.random.Generator) -> Iterator[_Edit]:
    if not _processing(g):
        return
    probs = _start_probs(g)
    op = g.n_layers - 1
    for _ in range(2 * g.n_layers):
        if probs.sum() <= 0:
            return
        start = int(rng.choice(g.n_layers, p=probs / probs.sum()))
        probs[start] *= 0.9
        path = [start]
        while True:  # a random walk to the output, stopping early with prob 0.2 per step
            ch = g.children(path[-1])
            nxt = int(ch[int(rng.integers(len(ch)))])
            path.append(nxt)
            if nxt == op or (len(path) >= _BRANCH_MIN_PATH and rng.random() < _BRANCH_END_PROB):
                break
        kept, fc_seen = [path[0]], False
        for idx in path[1:-1]:  # which inner layers the duplicate keeps (authors' rules)
            lab = g.labels[idx]
            if idx == path[1] and path[0] == 0:
                kept.append(idx)
            elif idx == path[-2] and len(kept) == 1:
                kept.append(idx)
            elif is_pool(lab) or lab in ("linear", "softmax") or (g.strides is not None and g.strides[idx] == 2):
                kept.append(idx)
            elif lab == "fc" and not fc_seen:
                kept.append(idx)
                fc_seen = True
            elif rng.random() < _BRANCH_KEEP_PROB:
                kept.append(idx)
        kept.append(path[-1])
        e = _Edit.of(g)
        prev = kept[0]
        for idx in kept[1:-1]:
            w = e.add_layer(g.labels[idx], g.units[idx], None if g.strides is None else g.strides[idx])
            e.edges.add((prev, w))
            prev = w
        e.edges.add((prev, kept[-1]))
        if len(e.labels) > g.n_layers or len(e.edges) > len(g.edges):
            yield e


def _gen_skip(g: LayerGraph, rng: np.random.Generator) -> Iterator[_Edit]:
    probs = _start_probs(g)
    probs[0] = 0.0
    dip, dop = dists_from_ip(g), dists_to_op(g)
    pre, post = image_sizes(g) if g.kind == "cnn" else (None, None)
    for _ in range(2 * g.n_layers):
        if probs.sum() <= 0:
            return
        u = int(rng.choice(g.n_layers, p=probs / probs.sum()))
        ends = np.zeros(g.n_layers)
        for v, lab in enumerate(g.labels):  # the authors' _get_end_layer_probs_for_skipping
            # (a regression MLP's linear layer may be the end, as in the authors' code)
            if dip[v] - 1 <= dip[u] or dop[v] + 1 >= dop[u] or lab in ("ip", "op", "softmax"):
                continue
            if g.kind == "cnn" and (pre[v] is None or post[u] is None or post[u] > pre[v]):
                continue
            if lab == "fc" and not all(is_pool(g.labels[p]) or is_conv(g.labels[p]) for p in g.parents(v)):
                continue
            ends[v] = 1.0
        if ends.sum() == 0:
            continue
        v = int(rng.choice(g.n_layers, p=ends / ends.sum()))
        e = _Edit.of(g)
        if g.kind == "cnn" and post[u] != pre[v]:
            # the image sizes differ: pass through avg-pools (authors' create_skipped_network)
            prev = u
            for _k in range(int(round(math.log2(pre[v] / post[u])))):
                w = e.add_layer("avg-pool", None, 2)
                e.edges.add((prev, w))
                prev = w
            e.edges.add((prev, v))
        else:
            e.edges.add((u, v))
        yield e


_GENERATORS: dict[str, Callable[[LayerGraph, np.random.Generator], Iterator[_Edit]]] = {
    "inc_single": lambda g, rng: _gen_single(g, rng, 1 + _CHANGE_FRAC),
    "dec_single": lambda g, rng: _gen_single(g, rng, 1 - _CHANGE_FRAC),
    "inc_en_masse": lambda g, rng: _gen_en_masse(g, rng, 1 + _CHANGE_FRAC),
    "dec_en_masse": lambda g, rng: _gen_en_masse(g, rng, 1 - _CHANGE_FRAC),
    "remove_layer": _gen_remove,
    "wedge_layer": _gen_wedge,
    "swap_label": _gen_swap,
    "dup_path": _gen_dup_path,
    "skip": _gen_skip,
}


def _results(g: LayerGraph, name: str, rng: np.random.Generator, cons: Constraints | None,
             max_tries: int) -> Iterator[LayerGraph]:
    """Valid graphs from modifier ``name``'s candidates (at most ``max_tries`` candidates tried)."""
    for k, edit in enumerate(_GENERATORS[name](g, rng)):
        if k >= max_tries:
            return
        try:
            new = validate_graph(edit.graph(), cons)
        except InvalidConfigError:
            continue
        if new != g:
            yield new


def _check_name(name: str) -> None:
    if name not in MODIFIERS:
        from ..errors import UnknownNameError
        raise UnknownNameError(f"unknown modifier {name!r}; the modifiers are {', '.join(MODIFIERS)}")


def apply_modifier(g: LayerGraph, name: str, rng: np.random.Generator,
                   constraints: Constraints | Mapping[str, Any] | None = DEFAULT_CONSTRAINTS) -> LayerGraph | None:
    """One random application of modifier ``name`` to ``g`` (a new valid graph), or ``None``.

    ``None`` when no candidate of the modifier gives a valid network within ``constraints``
    (the authors' defaults unless given; ``None`` checks validity only) in a few tries.
    """
    _check_name(name)
    cons = Constraints.make(constraints)
    g = validate_graph(g)
    return next(_results(g, name, rng, cons, _MAX_TRIES), None)


def _draw_modifier(rng: np.random.Generator) -> str:
    names = list(MODIFIERS)
    return names[int(rng.choice(len(names), p=np.fromiter(MODIFIERS.values(), float)))]


def mutate(g: LayerGraph, rng: np.random.Generator, n_steps: int = 1,
           constraints: Constraints | Mapping[str, Any] | None = DEFAULT_CONSTRAINTS) -> LayerGraph:
    """``n_steps`` random modifiers in a row, each drawn with :data:`MODIFIERS`' probabilities.

    A drawn modifier that cannot apply is redrawn (up to 20 draws per step, as the authors'
    NNModifier draws 20 groups); a step where none applies leaves the network as it is, so
    the result is always valid (possibly ``g`` itself when nothing applies at all).
    """
    cons = Constraints.make(constraints)
    cur = validate_graph(g, cons)
    for _ in range(int(n_steps)):
        for _d in range(_MAX_DRAWS):
            new = next(_results(cur, _draw_modifier(rng), rng, cons, _MAX_TRIES), None)
            if new is not None:
                cur = new
                break
    return cur


def draw_n_steps(rng: np.random.Generator) -> int:
    """A number of modifier steps, 1-5, with the authors' probabilities :data:`MUTATION_STEP_PROBS`."""
    return 1 + int(rng.choice(len(MUTATION_STEP_PROBS), p=np.asarray(MUTATION_STEP_PROBS)))


# ==========================================================================================
# The search space
# ==========================================================================================
def _fit_units(g: LayerGraph, cons: Constraints) -> LayerGraph:
    """Scale a pool network's units into the unit limits (for spaces narrower than the authors')."""
    us = [u for u in g.units if u is not None]
    hi, lo = cons.max_num_units_per_layer, cons.min_num_units_per_layer
    factor = hi / max(us) if hi is not None and us and max(us) > hi else 1.0
    units = []
    for u in g.units:
        if u is not None:
            u = max(1, _round_half_up(u * factor))
            if lo is not None:
                u = max(u, lo)
            if hi is not None:
                u = min(u, hi)
        units.append(u)
    return LayerGraph(g.kind, g.labels, tuple(units), g.edges, g.strides)
