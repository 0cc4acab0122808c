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
    diagonal. Cost matrices are built with one vectorised pass per row network; zero-mass
    padding (ignored by the network simplex) makes each pair's problem a contiguous view.
    ``n_jobs > 1`` solves rows in that many threads (the OT solves dominate and release the GIL).
    """
    nap = _check_nap(non_assignment_penalty)
    if int(n_jobs) != n_jobs or n_jobs < 1:
        raise InvalidSettingError(f"OTMANN: n_jobs must be a positive integer, got {n_jobs!r}")
    n_jobs = int(n_jobs)
    nus = _check_nus(nu_strs)
    symmetric = graphs_b is None or graphs_b is graphs_a
    PA = [prepare(g) for g in graphs_a]
    PB = PA if symmetric else [prepare(g) for g in graphs_b]
    nA, nB, nN = len(PA), len(PB), len(nus)
    D = np.zeros((nN, nA, nB))
    Dbar = np.zeros((nN, nA, nB))
    if nA == 0 or nB == 0:
        return D, Dbar
    kinds = {p.kind for p in PA} | {p.kind for p in PB}
    if len(kinds) != 1:
        raise InvalidConfigError(f"OTMANN: cannot compare networks of different kinds {sorted(kinds)}")
    kind = kinds.pop()
    M = _vocab_matrix(kind, nap)
    solve = _solver()

    # ip and op only match ip and op (every other label cost is infinite), so by the argument
    # below their part of the optimum is closed-form: for masses m1, m2 at cost c, match
    # min(m1, m2) at min(c, 2 * penalty) and leave |m1 - m2| unassigned. The OT problem is then
    # solved on the remaining "core" layers with their own sinks (fewer arcs, same optimum).
    # Padded layout for B's core: every network gets P slots (zero mass beyond its layers, which
    # the network simplex ignores) and the sink in slot P, so each pair is a contiguous view.
    P = max(p.n_layers for p in PB) - 2
    nF = PB[0].features.shape[1]
    tmB = np.array([p.total_mass for p in PB])
    massB = np.zeros((nB, P))
    labB = np.zeros((nB, P), dtype=np.intp)
    featB = np.zeros((nB, P, nF))
    endsB = np.empty((nB, 2, nF))      # features of ip and op
    endmB = np.empty((nB, 2))          # masses of ip and op
    for j, p in enumerate(PB):
        massB[j, :p.n_layers - 2] = p.masses[1:-1]
        labB[j, :p.n_layers - 2] = p.label_idx[1:-1]
        featB[j, :p.n_layers - 2] = p.features[1:-1]
        endsB[j] = p.features[[0, -1]]
        endmB[j] = p.masses[[0, -1]]
    coreB = tmB - endmB.sum(axis=1)

    # Disparate labels: the authors put 7.65432e5 (INF_COST) in the OT cost matrix. Any value
    # >= 2 * penalty gives the same optimum: mass moved between layers i and j can always be
    # rerouted to both sinks for 2 * penalty instead (the sink-to-sink flow equals the matched
    # mass, so there is room), and a moderate value lets the network simplex finish ~20% sooner.
    big = 4.0 * nap

    def row(i: int) -> None:
        js = np.arange(i + 1, nB) if symmetric else np.arange(nB)
        if js.size == 0:
            return
        pa = PA[i]
        n1, k = pa.n_layers - 2, js.size
        m1 = pa.masses[1:-1]
        core1 = float(m1.sum())
        tot = core1 + coreB[js]                                        # (k,) core masses
        # augmented, normalised core mass vectors (sink last); rescale b so both sum to a's total
        a = np.empty((k, n1 + 1))
        a[:, :n1] = m1[None, :] / tot[:, None]
        a[:, n1] = coreB[js] / tot
        b = np.zeros((k, P + 1))
        b[:, :P] = massB[js] / tot[:, None]
        b[:, P] = core1 / tot
        b *= (a.sum(axis=1) / b.sum(axis=1))[:, None]
        # label and structural costs against every core slot of the selected B networks, (k, n1, P)
        lab = M[pa.label_idx[1:-1]][:, labB[js].reshape(-1)].reshape(n1, k, P).transpose(1, 0, 2)
        inf = ~np.isfinite(lab)
        lab = np.where(inf, 0.0, lab)
        struct = _struct_cost(pa.features[1:-1], featB[js].reshape(k * P, nF)).reshape(n1, k, P).transpose(1, 0, 2)
        # ip-ip and op-op: structural cost only (same label), (k, 2)
        s_ends = np.abs(pa.features[[0, -1]][None] - endsB[js]).sum(axis=2) / nF
        m_ends = pa.masses[[0, -1]][None]
        matched, unmatched = np.minimum(m_ends, endmB[js]), np.abs(m_ends - endmB[js])
        total = pa.total_mass + tmB[js]
        C = np.empty((k, n1 + 1, P + 1))
        C[:, n1, :] = nap
        C[:, :n1, P] = nap
        C[:, n1, P] = 0.0
        body = C[:, :n1, :P]
        for q, nu in enumerate(nus):
            np.multiply(struct, nu, out=body)
            body += lab
            body[inf] = big
            ends = (np.minimum(nu * s_ends, 2 * nap) * matched + nap * unmatched).sum(axis=1)
            core = np.fromiter((solve(a[t], b[t], C[t]) for t in range(k)), float, count=k)
            d = core * tot + ends
            D[q, i, js] = d
            Dbar[q, i, js] = d / total

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
