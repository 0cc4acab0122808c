"""OTMANN: the optimal-transport distance between layer-graph networks (NASBOT's kernel distance).

Source: Kandasamy et al., "Neural Architecture Search with Bayesian Optimisation and Optimal
Transport", NeurIPS 2018 (``/work/shared/papers/nasbot.txt``), Sec. 3. Our copy lacks the
appendices; the gaps are filled from the authors' code, read (not copied) in
kirthevasank/nasbot (``nn/nn_comparators.py``, ``nn/neural_network.py``, ``nn/nn_gp.py``) and
its successor dragonfly/dragonfly (``dragonfly/nn/otmann.py``, ``dragonfly/nn/neural_network.py``,
``dragonfly/utils/graph_utils.py``, ``dragonfly/utils/oper_utils.py``).

The program (nasbot.txt eq. (3)) matches the layer masses of two networks. Each unit of mass
moved from layer i of G1 to layer j of G2 costs ``M(label_i, label_j) + nu_str * C_str(i, j)``;
mass left unmatched costs the non-assignment penalty per unit. As in the paper (Appendix A,
realised in the authors' ``get_ot_cost_matrix``) this is an ordinary OT problem on masses
augmented with one "sink" per side: G1's sink carries G2's total mass and vice versa, a real
layer sent to the other sink pays the penalty, sink to sink is free. ``d`` is the optimal
cost; ``dbar = d / (tm(G1) + tm(G2))`` (Sec. 3, after Theorem 1), which is exactly the optimal
cost with both augmented mass vectors normalised to one (authors' "emd" value).

Where the paper and the authors' code differ we follow the code (the cross-check in
``studies/crosscheck_otmann_dragonfly.py`` reproduces dragonfly-opt to ~1e-12):

* layer masses: fc layers get ``0.1 * in * units`` (code ``_FC_LAYER_MASS_COEFF``; the paper's
  Fig. 1 uses ``in * units``); ip/op/decision mass is ``max(zeta * processing mass, 100)``
  (code; the paper has no floor of 100). Pass ``fc_mass_coeff=1.0, min_special_mass=0.0``
  to :func:`layer_masses` for the paper's Sec. 3 definition.
* structural term: the paper averages the 6 path lengths (shortest/longest/random-walk, from
  ip and to op). The code averages the same 6 lengths over several *layer groups* (CNN: all,
  conv, pool, fc; MLP: all, rectifier, sigmoid) where a hop only counts if it leaves (towards
  op) / enters (towards ip) a layer of the group; the "all" group is the paper's term.
* label costs: the paper's Table 1 is "an example"; we use the authors' code values
  (conv-conv ``sqrt(2)/10 * sqrt(|k1 - k2|)``, pool-pool 0.5, ...), all scaled by the
  non-assignment penalty. The code replaces infinite costs by 7.65432e5 before OT; we use
  4 x penalty, which gives the same optimum (see ``otmann_matrix``) and a faster solve.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..errors import InvalidConfigError, InvalidSettingError, UnknownNameError

if TYPE_CHECKING:  # pragma: no cover
    from .layer_graph import LayerGraph

__all__ = [
    "DEFAULT_NU_STRS", "DRAGONFLY_NU_STRS", "NON_ASSIGNMENT_PENALTY", "PAPER_NU_STR",
    "label_mismatch_cost", "label_mismatch_matrix", "layer_masses", "path_lengths",
    "prepare", "PreparedGraph", "otmann_distance", "otmann_matrix",
]

# -- constants ---------------------------------------------------------------------------------
#: cost of leaving one unit of mass unassigned (nasbot.txt Sec. 3 "implies that the cost for not
#: assigning unit mass is 1"; authors' code default ``non_assignment_penalty=1.0``)
NON_ASSIGNMENT_PENALTY = 1.0
#: zeta, the fraction of processing mass given to ip/op and shared by the decision layers
#: (nasbot.txt Sec. 3: "In all our experiments, we use zeta = 0.1")
ZETA = 0.1
#: floor on the ip/op mass (authors' code, nn/neural_network.py ``compute_layer_masses``)
MIN_SPECIAL_MASS = 100.0
#: fc layers' mass is scaled by this (authors' code ``_FC_LAYER_MASS_COEFF``; paper: 1)
FC_MASS_COEFF = 0.1
#: stand-in for infinite label costs in the OT solver (authors' code ``REPLACE_COST_INF_WITH``)
INF_COST = 7.65432e5
#: conv-conv cost scale and conv-res blend (authors' code, ``get_cnn_layer_label_mismatch_penalties``
#: ``conv_scale=sqrt(2)/10`` and ``CONV_RES_RAW_COST_FRAC``)
CONV_SCALE = float(np.sqrt(2.0) / 10.0)
CONV_RES_RAW_COST_FRAC = 0.9
POOL_POOL_COST = 0.5  # authors' code (the paper's Table 1 example shows 0.25)
#: MLP activation costs: same family / different families (authors' code,
#: ``get_mlp_layer_label_mismatch_penalties``)
MLP_SAME_FAMILY_COST = 0.1
MLP_CROSS_FAMILY_COST = 0.25
#: the structural weights the authors' NASBOT kernel sums over (one OTMANN distance per value,
#: mislabel coefficients all 1): kirthevasank/nasbot ``nn/nn_gp.py`` option ``struct_coeffs``
#: default ``'0.1-0.2-0.4-0.8'`` -- the code released with the paper.
DEFAULT_NU_STRS: tuple[float, ...] = (0.1, 0.2, 0.4, 0.8)
#: the later default of dragonfly-opt (``dragonfly/nn/nn_gp.py`` and ``otmann.py``)
DRAGONFLY_NU_STRS: tuple[float, ...] = (0.1, 0.25, 0.61, 1.5)
#: the structural weight of the paper's worked example (Fig. 1 caption: nu_str = 0.5)
PAPER_NU_STR = 0.5

# labels (authors' code, nn/neural_network.py MLP_RECTIFIERS / MLP_SIGMOIDS); kept local so this
# module works on any object with the LayerGraph fields
_RECTIFIERS = ("relu", "crelu", "leaky-relu", "softplus", "elu")
_SIGMOIDS = ("logistic", "tanh")
_DECISION = ("softmax", "linear")
_POOLS = ("max-pool", "avg-pool")
_CONV_RE = re.compile(r"^(conv|res)([1-9][0-9]?)$")
_CNN_KERNELS = tuple(range(1, 16))
_PATH_GROUPS = {"cnn": ("all", "conv", "pool", "fc"), "mlp": ("all", "rectifier", "sigmoid")}

_VOCAB: dict[str, tuple[str, ...]] = {
    "mlp": ("ip", "op") + _DECISION + _RECTIFIERS + _SIGMOIDS,
    "cnn": ("ip", "op", "softmax", "fc") + _POOLS
    + tuple(f"{t}{k}" for k in _CNN_KERNELS for t in ("conv", "res")),
}
_VOCAB_INDEX = {kind: {lab: i for i, lab in enumerate(v)} for kind, v in _VOCAB.items()}


# -- label mismatch ---------------------------------------------------------------------------
def label_mismatch_cost(a: str, b: str, kind: str, non_assignment_penalty: float = NON_ASSIGNMENT_PENALTY) -> float:
    """Cost M(a, b) of moving one unit of mass between labels ``a`` and ``b`` (inf if disparate)."""
    _check_kind(kind)
    for lab in (a, b):
        if lab not in _VOCAB_INDEX[kind]:
            raise UnknownNameError(f"OTMANN: unknown {kind} layer label {lab!r}; known: {', '.join(_VOCAB[kind])}")
    nap = float(non_assignment_penalty)
    if a == b:
        return 0.0
    if kind == "mlp":
        same = (a in _RECTIFIERS and b in _RECTIFIERS) or (a in _SIGMOIDS and b in _SIGMOIDS)
        if same:
            return MLP_SAME_FAMILY_COST * nap
        acts = _RECTIFIERS + _SIGMOIDS
        return MLP_CROSS_FAMILY_COST * nap if (a in acts and b in acts) else float("inf")
    ma, mb = _CONV_RE.match(a), _CONV_RE.match(b)
    if ma and mb:
        raw = CONV_SCALE * float(np.sqrt(abs(int(ma.group(2)) - int(mb.group(2)))))
        if ma.group(1) == mb.group(1):
            cost = raw
        else:
            # conv <-> res: between the conv-conv cost and non-assignment (authors' code compares
            # the unscaled raw cost with the penalty; we keep that comparison)
            cost = raw if raw > nap else CONV_RES_RAW_COST_FRAC * raw + (1 - CONV_RES_RAW_COST_FRAC) * nap
        return cost * nap
    if a in _POOLS and b in _POOLS:
        return POOL_POOL_COST * nap
    return float("inf")


@lru_cache(maxsize=16)
def _vocab_matrix(kind: str, nap: float) -> np.ndarray:
    labels = _VOCAB[kind]
    return np.array([[label_mismatch_cost(a, b, kind, nap) for b in labels] for a in labels])


def label_mismatch_matrix(labels_a: Sequence[str], labels_b: Sequence[str], kind: str,
                          non_assignment_penalty: float = NON_ASSIGNMENT_PENALTY) -> np.ndarray:
    """C_lmm(i, j) = M(labels_a[i], labels_b[j]) (nasbot.txt Sec. 3, phi_lmm)."""
    _check_kind(kind)
    M = _vocab_matrix(kind, float(non_assignment_penalty))
    return M[np.ix_(_label_idx(labels_a, kind), _label_idx(labels_b, kind))]


def _label_idx(labels: Sequence[str], kind: str) -> np.ndarray:
    index = _VOCAB_INDEX[kind]
    try:
        return np.array([index[lab] for lab in labels], dtype=np.intp)
    except KeyError as exc:
        raise UnknownNameError(
            f"OTMANN: unknown {kind} layer label {exc.args[0]!r}; known: {', '.join(_VOCAB[kind])}") from None


def _check_kind(kind: str) -> None:
    if kind not in _VOCAB:
        raise InvalidConfigError(f"OTMANN: network kind {kind!r} is not 'mlp' or 'cnn'")


# -- per-graph quantities ----------------------------------------------------------------------
def _check_graph(g: "LayerGraph") -> None:
    _check_kind(g.kind)
    n = len(g.labels)
    if n < 3 or g.labels[0] != "ip" or g.labels[-1] != "op":
        raise InvalidConfigError("OTMANN: a network needs layer 0 labelled 'ip' and its last layer 'op'")
    if len(g.units) != n:
        raise InvalidConfigError(f"OTMANN: {len(g.units)} unit counts for {n} layers")
    for p, c in g.edges:
        if not 0 <= p < c < n:
            raise InvalidConfigError(f"OTMANN: edge ({p}, {c}) is not forward in the layer order")


def layer_masses(g: "LayerGraph", zeta: float = ZETA, fc_mass_coeff: float = FC_MASS_COEFF,
                 min_special_mass: float = MIN_SPECIAL_MASS) -> np.ndarray:
    """Layer masses l_m (nasbot.txt Sec. 3; fc coefficient and floor from the authors' code).

    Processing layers: incoming units times own units (pools: incoming units; fc: times
    ``fc_mass_coeff``), where the input emits one unit; ip and op each get
    ``max(zeta * total processing mass, min_special_mass)``, shared equally by the decision layers.
    """
    _check_graph(g)
    n = len(g.labels)
    out_units: list[float | None] = [1.0] + [None] * (n - 1)
    masses = np.zeros(n)
    n_decision = 0
    for i in range(1, n - 1):
        lab = g.labels[i]
        incoming = 0.0
        for p in g.parents(i):
            if out_units[p] is None:
                raise InvalidConfigError(f"OTMANN: layer {i} ({lab}) is fed by layer {p} ({g.labels[p]}) which has no output units")
            incoming += out_units[p]
        if lab in _DECISION:
            n_decision += 1
            continue
        if lab in _POOLS:
            out_units[i] = incoming
            masses[i] = incoming
            continue
        u = g.units[i]
        if u is None or u <= 0:
            raise InvalidConfigError(f"OTMANN: layer {i} ({lab}) needs a positive unit count, got {u!r}")
        out_units[i] = float(u)
        masses[i] = incoming * float(u) * (fc_mass_coeff if lab == "fc" else 1.0)
    if n_decision == 0:
        raise InvalidConfigError("OTMANN: the network has no decision layer ('softmax' or 'linear')")
    special = max(zeta * masses.sum(), min_special_mass)
    for i, lab in enumerate(g.labels):
        if lab in _DECISION:
            masses[i] = special / n_decision
    masses[0] = masses[-1] = special
    return masses


def _group_weights(labels: Sequence[str], kind: str) -> np.ndarray:
    """(n, n_groups) 0/1: whether a hop at each layer counts for each layer group."""
    def member(lab: str, group: str) -> bool:
        if group == "all":
            return True
        if group == "conv":
            return _CONV_RE.match(lab) is not None
        if group == "pool":
            return lab in _POOLS
        if group == "fc":
            return lab == "fc"
        if group == "rectifier":
            return lab in _RECTIFIERS
        return lab in _SIGMOIDS  # sigmoid
    groups = _PATH_GROUPS[kind]
    return np.array([[1.0 if member(lab, gr) else 0.0 for gr in groups] for lab in labels])


def _hop(L: np.ndarray, u: int, nb: tuple, wu: np.ndarray) -> None:
    """``L[u]`` = (min, max, mean over the neighbours ``nb`` of their lengths) + ``wu``."""
    if len(nb) == 1:  # a chain link: the three statistics of one value are the value itself
        np.add(L[nb[0]], wu, out=L[u])
        return
    v = L[list(nb)]
    L[u, 0] = np.minimum.reduce(v[:, 0], axis=0) + wu
    L[u, 1] = np.maximum.reduce(v[:, 1], axis=0) + wu
    L[u, 2] = np.add.reduce(v[:, 2], axis=0) / len(nb) + wu  # as ndarray.mean: sum, then divide


def path_lengths(g: "LayerGraph") -> tuple[np.ndarray, np.ndarray]:
    """Shortest/longest/random-walk path lengths from ip and to op, per layer group.

    Returns ``(from_ip, to_op)``, each of shape (n_layers, 3 * n_groups), columns
    ``[group0-sp, group0-lp, group0-rw, group1-sp, ...]``; group 0 is "all" (nasbot.txt Sec. 3;
    e.g. Fig. 1c's layer 1 has 5, 7, 5.67 hops to op). For the other groups a hop counts only
    when it leaves (towards op) or enters (towards ip) a layer of the group (authors' code,
    ``_compute_ip_op_path_lengths``). A random walk picks a child (parent) uniformly.
    """
    _check_graph(g)
    n = len(g.labels)
    w = _group_weights(g.labels, g.kind)
    ng = w.shape[1]
    to_op = np.zeros((n, 3, ng))
    from_ip = np.zeros((n, 3, ng))
    for u in range(n - 2, -1, -1):
        ch = g.children(u)
        if not ch:
            raise InvalidConfigError(f"OTMANN: layer {u} ({g.labels[u]}) has no path to the output layer")
        _hop(to_op, u, ch, w[u])
    for u in range(1, n):
        par = g.parents(u)
        if not par:
            raise InvalidConfigError(f"OTMANN: layer {u} ({g.labels[u]}) is not reachable from the input layer")
        _hop(from_ip, u, par, w[u])
    order = lambda a: a.transpose(0, 2, 1).reshape(n, 3 * ng)  # noqa: E731 (group-major columns)
    return order(from_ip), order(to_op)


@dataclass(frozen=True)
class PreparedGraph:
    """Everything OTMANN needs from one network, computed once (masses, labels, path lengths)."""

    kind: str
    masses: np.ndarray        # (n,)
    total_mass: float
    label_idx: np.ndarray     # (n,) indices into the kind's label vocabulary
    features: np.ndarray      # (n, 6 * n_groups): [from_ip | to_op] path lengths

    @property
    def n_layers(self) -> int:
        """Number of layers."""
        return len(self.masses)


@lru_cache(maxsize=8192)
def _prepare_cached(g: "LayerGraph", fc_mass_coeff: float) -> PreparedGraph:
    masses = layer_masses(g, fc_mass_coeff=fc_mass_coeff)
    from_ip, to_op = path_lengths(g)
    feats = np.ascontiguousarray(np.hstack([from_ip, to_op]))
    idx = _label_idx(g.labels, g.kind)
    for arr in (masses, feats, idx):
        arr.setflags(write=False)  # shared through the cache
    return PreparedGraph(g.kind, masses, float(masses.sum()), idx, feats)


def prepare(g: "LayerGraph | PreparedGraph", fc_mass_coeff: float = FC_MASS_COEFF) -> PreparedGraph:
    """Per-graph OTMANN quantities (cached for hashable graphs such as the frozen LayerGraph).

    ``fc_mass_coeff=1.0`` gives the paper's fc masses (Fig. 1) instead of the authors' code's 0.1.
    """
    if isinstance(g, PreparedGraph):
        return g
    try:
        return _prepare_cached(g, float(fc_mass_coeff))
    except TypeError:  # unhashable graph-like object
        return _prepare_cached.__wrapped__(g, float(fc_mass_coeff))


def _struct_cost(f1: np.ndarray, f2: np.ndarray) -> np.ndarray:
    """C_str(i, j): mean absolute path-length difference (nasbot.txt Sec. 3, phi_str)."""
    from scipy.spatial.distance import cdist

    return cdist(f1, f2, "cityblock") / f1.shape[1]


# -- OT solver ----------------------------------------------------------------------------------
_POT_BACKEND_SWITCHES = {"torch": "POT_BACKEND_DISABLE_PYTORCH", "jax": "POT_BACKEND_DISABLE_JAX",
                         "cupy": "POT_BACKEND_DISABLE_CUPY", "tensorflow": "POT_BACKEND_DISABLE_TENSORFLOW"}


def _import_pot():  # noqa: ANN202 - returns the module
    """Import POT without making it import torch/jax/cupy/tf when they are not loaded yet.

    We only pass numpy arrays, and POT's backend registration imports torch (about 8 s on this
    machine when nothing else has). The switches are POT's environment variables, read once
    at its import; we restore the environment right after. Frameworks already imported stay
    registered as usual.
    """
    import os
    import sys

    if "ot" in sys.modules:
        return sys.modules["ot"]
    added = [k for mod, k in _POT_BACKEND_SWITCHES.items() if mod not in sys.modules and k not in os.environ]
    for k in added:
        os.environ[k] = "1"
    try:
        import ot
    except ImportError:  # pragma: no cover - POT is a core dependency
        raise InvalidSettingError("OTMANN needs the POT package: pip install pot") from None
    finally:
        for k in added:
            os.environ.pop(k, None)
    return ot


@lru_cache(maxsize=1)
def _solver() -> Callable[[np.ndarray, np.ndarray, np.ndarray], float]:
    """The exact network-simplex EMD of POT; returns <T, C> for mass vectors summing to one."""
    ot = _import_pot()
    try:
        # the C solver behind ot.emd2; calling it directly skips ~150 us of backend checks per
        # problem (our inputs are already float64, C-contiguous and balanced)
        from ot.lp.emd_wrap import check_result, emd_c

        def solve(a: np.ndarray, b: np.ndarray, C: np.ndarray) -> float:
            _, cost, _, _, code = emd_c(a, b, C, 100000, 1)
            if code != 1:
                check_result(code)  # warns like ot.emd2 on non-convergence
            return float(cost)
    except ImportError:  # pragma: no cover - other POT layouts
        def solve(a: np.ndarray, b: np.ndarray, C: np.ndarray) -> float:
            return float(ot.emd2(a, b, C))
    return solve


@lru_cache(maxsize=1)
def _plan_solver() -> Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, float]]:
    """As :func:`_solver`, but also returns the optimal plan (the parametric shortcut needs it)."""
    ot = _import_pot()
    try:
        from ot.lp.emd_wrap import check_result, emd_c

        def solve(a: np.ndarray, b: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, float]:
            G, cost, _, _, code = emd_c(a, b, C, 100000, 1)
            if code != 1:
                check_result(code)
            return G, float(cost)
    except ImportError:  # pragma: no cover - other POT layouts
        def solve(a: np.ndarray, b: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, float]:
            G = np.asarray(ot.emd(a, b, C))
            return G, float(np.vdot(G, C))
    return solve


@lru_cache(maxsize=1)
def _emd_c():  # noqa: ANN202 - POT's C entry point, or None
    """POT's network simplex ``emd_c(a, b, C, max_iter, threads) -> (plan, cost, u, v, code)``."""
    _import_pot()
    try:
        from ot.lp.emd_wrap import emd_c
    except ImportError:  # pragma: no cover - other POT layouts
        return None
    return emd_c


def _check_code(code: int) -> None:
    from ot.lp.emd_wrap import check_result

    check_result(code)  # warns like ot.emd2 on non-convergence


@lru_cache(maxsize=16)
def _label_classes(kind: str, nap: float) -> np.ndarray:
    """Class id of every vocabulary label: the connected components of "mismatch cost < 2 x penalty".

    Mass moved between layers whose cost is at least twice the non-assignment penalty can be
    sent to the two sinks instead at no higher cost (see :func:`otmann_matrix`), so such arcs
    never matter and the OT problem splits into one independent problem per class. With the
    authors' costs (nasbot.txt Sec. 3, Table 1 as realised in their code) the CNN classes are
    {ip}, {op}, {softmax}, {fc}, {max-pool, avg-pool}, {conv*, res*}; the MLP classes are
    {ip}, {op}, {linear}, {softmax} and the activations.
    """
    M = _vocab_matrix(kind, nap)
    cheap = M < 2.0 * nap  # inf compares False
    cheap = cheap | cheap.T
    comp = np.full(len(M), -1, dtype=np.intp)
    n_comp = 0
    for s in range(len(M)):
        if comp[s] >= 0:
            continue
        comp[s], stack = n_comp, [s]
        while stack:
            u = stack.pop()
            for v in np.flatnonzero(cheap[u]):
                if comp[v] < 0:
                    comp[v] = n_comp
                    stack.append(int(v))
        n_comp += 1
    comp.setflags(write=False)
    return comp


@dataclass(frozen=True)
class _ClassLayout:
    """The layers of a list of networks grouped by label class, padded per class.

    For class ``c``: ``count[c]`` (n,) layers per network, ``mass[c]`` (n, P_c) with zero mass
    in the padding (ignored by the network simplex and by the greedy rule), ``label[c]``
    (n, P_c) vocabulary indices, ``feat[c]`` (n, P_c, n_features) path lengths, ``total[c]`` (n,).
    """

    count: list[np.ndarray]
    mass: list[np.ndarray]
    label: list[np.ndarray]
    feat: list[np.ndarray]
    total: list[np.ndarray]
    pos: list[np.ndarray]     # (n, P_c) layer index in its network (padding: a large number)


def _class_layout(P: Sequence[PreparedGraph], cls_of: np.ndarray, n_classes: int) -> _ClassLayout:
    sizes = np.array([p.n_layers for p in P], dtype=np.intp)
    lab = np.concatenate([p.label_idx for p in P])
    mass = np.concatenate([p.masses for p in P])
    feat = np.concatenate([p.features for p in P])
    net = np.repeat(np.arange(len(P)), sizes)
    cls = cls_of[lab]
    order = np.lexsort((cls, net))  # by network, then class, layer order kept within a class
    key = net[order] * n_classes + cls[order]
    first = np.r_[0, np.flatnonzero(np.diff(key)) + 1]
    rank = np.arange(len(key)) - np.repeat(first, np.diff(np.r_[first, len(key)]))
    out = _ClassLayout([], [], [], [], [], [])
    layer = np.concatenate([np.arange(n) for n in sizes])
    nF = feat.shape[1]
    for c in range(n_classes):
        sel = order[cls[order] == c]
        r = rank[cls[order] == c]
        cnt = np.bincount(net[sel], minlength=len(P))
        width = int(cnt.max()) if len(P) else 0
        m = np.zeros((len(P), width))
        m[net[sel], r] = mass[sel]
        lb = np.zeros((len(P), width), dtype=np.intp)
        lb[net[sel], r] = lab[sel]
        ft = np.zeros((len(P), width, nF))
        ft[net[sel], r] = feat[sel]
        out.count.append(cnt)
        out.mass.append(m)
        out.label.append(lb)
        out.feat.append(ft)
        out.total.append(m.sum(axis=1))
        ps = np.full((len(P), width), np.iinfo(np.intp).max // 2, dtype=np.intp)
        ps[net[sel], r] = layer[sel]
        out.pos.append(ps)
    return out


def _greedy_value(single: np.ndarray, other: np.ndarray, cost: np.ndarray, nap: float) -> np.ndarray:
    """Optimal cost of a class problem where one side has a single layer (closed form).

    ``single`` (K,) the lone layer's mass, ``other`` (K, L) the other side's masses (zero =
    padding), ``cost`` (nN, K, L) the arc costs (finite). The problem is
    ``nap * (total masses) + min sum_j x_j (c_j - 2 nap)`` over ``0 <= x_j <= other_j``,
    ``sum_j x_j <= single`` (the sink form of :func:`otmann_matrix`), a fractional knapsack
    with unit weights: filling the cheapest arcs first is optimal.
    """
    order = np.argsort(cost, axis=-1, kind="stable")
    cs = np.take_along_axis(cost, order, axis=-1)
    ws = np.take_along_axis(np.broadcast_to(other, cost.shape), order, axis=-1)
    before = np.cumsum(ws, axis=-1) - ws
    x = np.minimum(np.maximum(single[None, :, None] - before, 0.0), ws)
    gain = np.minimum(cs - 2.0 * nap, 0.0)
    return nap * (single + other.sum(axis=-1))[None, :] + (x * gain).sum(axis=-1)


def _parametric_emd(a: np.ndarray, b: np.ndarray, base: np.ndarray, slope: np.ndarray,
                    nus: np.ndarray) -> np.ndarray:
    """Optimal costs ``(len(nus), K)`` of the K problems ``(a[t], b[t], base[t] + nu * slope[t])``.

    ``nus`` sorted ascending. The optimal cost f(nu) is concave and piecewise linear in nu
    (a minimum over plans T of <T, base> + nu <T, slope>). Both ends are solved; if the plan
    optimal at one end is also optimal at the other (its cost there equals the optimum, to
    1e-13 relative), f is that plan's line on the whole interval (concavity puts f above
    the chord, the plan's line is the chord and bounds f from above), so the values inside
    are read off the line. Otherwise the middle value is solved and both halves are treated
    alike. With the four NASBOT weights this takes about 2.7 instead of 4 solves per pair;
    the values agree with solving every nu to ~1e-15 relative (the tolerance bounds the error).
    """
    emd = _emd_c()
    nN, K = len(nus), a.shape[0]
    f = np.zeros((nN, K))
    A = np.zeros((nN, K))  # <T_q, base> and <T_q, slope> of the plan solved at nus[q]
    B = np.zeros((nN, K))

    def solve_at(q: int, ts: np.ndarray) -> None:
        bs, ss = (base, slope) if len(ts) == K else (base[ts], slope[ts])
        C = bs + nus[q] * ss
        if emd is None:  # pragma: no cover - other POT layouts
            res = [_plan_solver()(x, y, z) + (0, 0, 1) for x, y, z in zip(a[ts], b[ts], C)]
        else:
            sub = (a, b) if len(ts) == K else (a[ts], b[ts])
            res = [emd(x, y, z, 100000, 1) for x, y, z in zip(*sub, C)]
        for r in res:
            if r[4] != 1:
                _check_code(r[4])
        G = np.stack([r[0] for r in res])
        f[q, ts] = [r[1] for r in res]
        A[q, ts] = np.einsum("tij,tij->t", G, bs)
        B[q, ts] = np.einsum("tij,tij->t", G, ss)

    def interval(lo: int, hi: int, ts: np.ndarray) -> None:
        inner = list(range(lo + 1, hi))
        if not inner or not len(ts):
            return
        tol_hi = 1e-13 * np.maximum(1.0, np.abs(f[hi, ts]))
        tol_lo = 1e-13 * np.maximum(1.0, np.abs(f[lo, ts]))
        ok_lo = A[lo, ts] + nus[hi] * B[lo, ts] <= f[hi, ts] + tol_hi
        ok_hi = ~ok_lo & (A[hi, ts] + nus[lo] * B[hi, ts] <= f[lo, ts] + tol_lo)
        for end, ok in ((lo, ok_lo), (hi, ok_hi)):
            tt = ts[ok]
            for q in inner:
                f[q, tt] = A[end, tt] + nus[q] * B[end, tt]
        rest = ts[~(ok_lo | ok_hi)]
        if len(rest):
            mid = inner[len(inner) // 2]
            solve_at(mid, rest)
            interval(lo, mid, rest)
            interval(mid, hi, rest)

    everyone = np.arange(K)
    solve_at(0, everyone)
    if nN > 1:
        solve_at(nN - 1, everyone)
        interval(0, nN - 1, everyone)
    return f


def _check_nap(nap: float) -> float:
    nap = float(nap)
    if not np.isfinite(nap) or nap <= 0:
        raise InvalidSettingError(f"OTMANN: non_assignment_penalty must be a positive number, got {nap}")
    return nap


def _check_nus(nu_strs: Sequence[float]) -> np.ndarray:
    nus = np.atleast_1d(np.asarray(nu_strs, dtype=float))
    if nus.ndim != 1 or nus.size == 0 or not np.all(np.isfinite(nus)) or np.any(nus < 0):
        raise InvalidSettingError(f"OTMANN: nu_str values must be non-negative numbers, got {list(np.ravel(nus))}")
    return nus


def otmann_distance(g1: "LayerGraph | PreparedGraph", g2: "LayerGraph | PreparedGraph",
                    nu_str: float = PAPER_NU_STR,
                    non_assignment_penalty: float = NON_ASSIGNMENT_PENALTY) -> tuple[float, float]:
    """OTMANN ``(d, dbar)`` between two networks of the same kind (nasbot.txt Sec. 3, eq. (3))."""
    D, Dbar = otmann_matrix([g1], [g2], nu_strs=(nu_str,), non_assignment_penalty=non_assignment_penalty)
    return float(D[0, 0, 0]), float(Dbar[0, 0, 0])


def otmann_matrix(graphs_a: Sequence["LayerGraph | PreparedGraph"],
                  graphs_b: Sequence["LayerGraph | PreparedGraph"] | None = None,
                  nu_strs: Sequence[float] = DEFAULT_NU_STRS,
                  non_assignment_penalty: float = NON_ASSIGNMENT_PENALTY,
                  n_jobs: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """OTMANN distances between every network of ``graphs_a`` and of ``graphs_b``.

    Returns ``(D, Dbar)``, each of shape (len(nu_strs), len(a), len(b)). ``graphs_b=None`` (or
    the same list object) computes the symmetric matrix once per unordered pair, with zero
    diagonal. ``n_jobs > 1`` solves rows in that many threads (the OT solves release the GIL).

    How (the value is the optimum of nasbot.txt eq. (3) in the sink form of its Appendix A;
    only the route to it is ours). With ``nap`` the non-assignment penalty, the sink problem
    equals ``nap * (tm1 + tm2) + min sum_ij T_ij (C_ij - 2 nap)`` over partial plans (row sums
    at most G1's masses, column sums at most G2's): each real layer's unmatched mass goes to
    the other side's sink at cost nap, and the sinks' remaining masses meet at cost 0. Arcs
    with ``C_ij >= 2 nap`` never lower that minimum, so the problem splits into independent
    problems, one per label class (:func:`_label_classes`: CNN ip, op, softmax, fc, pools,
    conv/res), each again in sink form with its own masses. A class with a single layer on
    one side (always ip and op, mostly softmax and fc) has a closed form
    (:func:`_greedy_value`); the others go to POT's exact network simplex, over the
    structural weights by the parametric shortcut of :func:`_parametric_emd`. Disparate
    labels inside a class (none with the authors' costs) cost 4 x penalty instead of the
    authors' 7.65432e5: any value >= 2 x penalty gives the same optimum by the argument above.
    """
    nap = _check_nap(non_assignment_penalty)
    if int(n_jobs) != n_jobs or n_jobs < 1:
        raise InvalidSettingError(f"OTMANN: n_jobs must be a positive integer, got {n_jobs!r}")
    n_jobs = int(n_jobs)
    nus_in = _check_nus(nu_strs)
    symmetric = graphs_b is None or graphs_b is graphs_a
    PA = [prepare(g) for g in graphs_a]
    PB = PA if symmetric else [prepare(g) for g in graphs_b]
    nA, nB, nN = len(PA), len(PB), len(nus_in)
    D = np.zeros((nN, nA, nB))
    Dbar = np.zeros((nN, nA, nB))
    if nA == 0 or nB == 0:
        return D, Dbar
    kinds = {p.kind for p in PA} | {p.kind for p in PB}
    if len(kinds) != 1:
        raise InvalidConfigError(f"OTMANN: cannot compare networks of different kinds {sorted(kinds)}")
    kind = kinds.pop()
    M = _vocab_matrix(kind, nap)
    cls_of = _label_classes(kind, nap)
    nC = int(cls_of.max()) + 1
    nus, back = np.unique(nus_in, return_inverse=True)  # the parametric shortcut wants them sorted
    nU = len(nus)
    LB = _class_layout(PB, cls_of, nC)
    LA = LB if symmetric else _class_layout(PA, cls_of, nC)
    nF = PB[0].features.shape[1]
    tmB = np.array([p.total_mass for p in PB])
    big = 4.0 * nap

    def class_costs(i: int, c: int, js: np.ndarray) -> tuple:
        """Label costs (disparate: ``big``) and structural costs (disparate: 0), each (k, n1, P)."""
        n1, k, P = int(LA.count[c][i]), len(js), LB.mass[c].shape[1]
        lab = M[LA.label[c][i, :n1]][:, LB.label[c][js].reshape(-1)].reshape(n1, k, P).transpose(1, 0, 2)
        inf = ~np.isfinite(lab)
        struct = _struct_cost(LA.feat[c][i, :n1], LB.feat[c][js].reshape(k * P, nF))
        struct = struct.reshape(n1, k, P).transpose(1, 0, 2)
        if inf.any():
            lab = np.where(inf, big, lab)
            struct = np.where(inf, 0.0, struct)
        return lab, struct

    def at_nus(lab: np.ndarray, struct: np.ndarray) -> np.ndarray:
        return lab[None] + nus.reshape((-1,) + (1,) * lab.ndim) * struct[None]

    def row(i: int) -> None:
        js = np.arange(i + 1, nB) if symmetric else np.arange(nB)
        k = js.size
        if k == 0:
            return
        d = np.zeros((nU, k))
        multi = []  # classes with two or more layers in network i: solved below
        for c in range(nC):
            n1 = int(LA.count[c][i])
            mass1, mass2 = float(LA.total[c][i]), LB.total[c][js]
            if n1 == 0 or LB.mass[c].shape[1] == 0:
                d += nap * (mass1 + mass2)
            elif n1 == 1:
                lab, struct = class_costs(i, c, js)
                d += _greedy_value(np.full(k, mass1), LB.mass[c][js], at_nus(lab[:, 0], struct[:, 0]), nap)
            else:
                multi.append(c)
        if not multi:
            return finish(i, js, d)
        # the classes with several layers are solved together (one network simplex per pair and
        # weight: separate calls cost more in fixed overhead than the smaller problems save); a
        # pair whose network j has at most one layer in each of them has closed forms instead
        for group in (multi,):
            costs = [class_costs(i, c, js) for c in group]
            n2 = np.stack([LB.count[c][js] for c in group])            # (len(group), k)
            solo = (n2 <= 1).all(axis=0)
            if solo.any():
                t = np.flatnonzero(solo)
                for c, (lab, struct), n2c in zip(group, costs, n2):
                    n1 = int(LA.count[c][i])
                    m1 = LA.mass[c][i, :n1]
                    mass1 = float(LA.total[c][i])
                    one = t[n2c[t] == 1]
                    none = t[n2c[t] == 0]
                    d[:, none] += nap * mass1
                    if len(one):
                        d[:, one] += _greedy_value(LB.mass[c][js[one], 0], np.broadcast_to(m1, (len(one), n1)),
                                                   at_nus(lab[one, :, 0], struct[one, :, 0]), nap)
            t = np.flatnonzero(~solo)
            if len(t):
                d[:, t] += group_emd(i, group, costs, js, t)
        finish(i, js, d)

    def group_emd(i: int, group: list, costs: list, js: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Optimal costs (nU, len(t)) of the classes ``group`` together, by the network simplex."""
        n1s = [int(LA.count[c][i]) for c in group]
        Ps = [LB.mass[c].shape[1] for c in group]
        N1, PP, kE = sum(n1s), sum(Ps), len(t)
        m1 = np.concatenate([LA.mass[c][i, :n] for c, n in zip(group, n1s)])
        w2 = np.concatenate([LB.mass[c][js[t]] for c in group], axis=1)   # (kE, PP)
        mass1, mass2 = float(m1.sum()), w2.sum(axis=1)
        tot = mass1 + mass2
        a = np.empty((kE, N1 + 1))
        a[:, :N1] = m1[None, :] / tot[:, None]
        a[:, N1] = mass2 / tot
        lab = np.full((kE, N1, PP), big) if len(group) > 1 else None   # across classes: never used
        struct = np.zeros((kE, N1, PP)) if len(group) > 1 else None
        if len(group) == 1:
            lab, struct = costs[0][0][t], costs[0][1][t]
        else:
            r0 = c0 = 0
            for (lb, st), n, P in zip(costs, n1s, Ps):
                lab[:, r0:r0 + n, c0:c0 + P] = lb[t]
                struct[:, r0:r0 + n, c0:c0 + P] = st[t]
                r0, c0 = r0 + n, c0 + P
        # the network simplex is faster on layers in network order (the structural costs grow
        # away from the diagonal) than grouped by class: restore that order on both sides, and
        # drop each pair's padding (zero mass, last after the sort)
        if len(group) > 1:
            rows = np.argsort(np.concatenate([LA.pos[c][i, :n] for c, n in zip(group, n1s)]), kind="stable")
            m1 = m1[rows]
            a[:, :N1] = a[:, :N1][:, rows]
            lab, struct = lab[:, rows], struct[:, rows]
        width = int((w2 > 0).sum(axis=1).max())
        if width < PP or len(group) > 1:
            pos2 = np.concatenate([LB.pos[c][js[t]] for c in group], axis=1)
            keep = np.argsort(pos2, axis=1, kind="stable")[:, :width]
            w2 = np.take_along_axis(w2, keep, axis=1)
            lab = np.take_along_axis(lab, keep[:, None, :], axis=2)
            struct = np.take_along_axis(struct, keep[:, None, :], axis=2)
            PP = width
        b = np.empty((kE, PP + 1))
        b[:, :PP] = w2 / tot[:, None]
        b[:, PP] = mass1 / tot
        b *= (a.sum(axis=1) / b.sum(axis=1))[:, None]
        base = np.empty((kE, N1 + 1, PP + 1))
        slope = np.zeros((kE, N1 + 1, PP + 1))
        base[:, N1, :] = nap
        base[:, :N1, PP] = nap
        base[:, N1, PP] = 0.0
        base[:, :N1, :PP] = lab
        slope[:, :N1, :PP] = struct
        return _parametric_emd(a, b, base, slope, nus) * tot[None, :]

    def finish(i: int, js: np.ndarray, d: np.ndarray) -> None:
        total = PA[i].total_mass + tmB[js]
        D[:, i, js] = d[back]
        Dbar[:, i, js] = d[back] / total

    if n_jobs == 1 or nA == 1:
        for i in range(nA):
            row(i)
    else:
        # POT's C solver releases the GIL; rows write disjoint entries of D and Dbar
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            list(pool.map(row, range(nA)))
    if symmetric:
        D = D + D.transpose(0, 2, 1)
        Dbar = Dbar + Dbar.transpose(0, 2, 1)
    return D, Dbar
