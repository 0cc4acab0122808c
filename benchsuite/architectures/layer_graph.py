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

This module is the graph, its analyses and its validation; the authors' initial pool is in
:mod:`.layer_graph_pool`, the nine modifiers of Table 2 in :mod:`.layer_graph_modifiers`, the
search space over both in :mod:`.layer_graph_space` and the PyTorch compiler in :mod:`.layer_graph_torch`.
"""
from __future__ import annotations

import heapq
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

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
