"""Tests for the OTMANN distance (nasbot.txt Sec. 3): distance properties, the paper's Fig. 1,
the authors' label costs, and agreement of the batched matrix with pairwise calls."""
from __future__ import annotations

import numpy as np
import pytest

from benchsuite.architectures import otmann as O
from benchsuite.architectures.layer_graph import LayerGraph
from benchsuite.errors import InvalidConfigError, InvalidSettingError, UnknownNameError

CONVS = ("conv3", "conv5", "conv7", "res3", "res5", "res7")
ACTS = ("relu", "crelu", "leaky-relu", "softplus", "elu", "logistic", "tanh")


def random_graph(kind: str, n_layers: int, rng: np.random.Generator) -> LayerGraph:
    """A random valid-for-OTMANN network: a chain with random skip edges (test helper)."""
    n_proc = n_layers - 3
    if kind == "cnn":
        n_fc = int(rng.integers(1, 3))
        labels = ["conv3"]
        for _ in range(n_proc - n_fc - 1):
            labels.append(str(rng.choice(("max-pool", "avg-pool"))) if rng.random() < 0.15 else str(rng.choice(CONVS)))
        labels += ["fc"] * n_fc
        labels = ["ip"] + labels + ["softmax", "op"]
    else:
        labels = ["ip"] + [str(rng.choice(ACTS)) for _ in range(n_proc)] + ["linear", "op"]
    units = [None if lab in ("ip", "op", "softmax", "linear", "max-pool", "avg-pool")
             else int(rng.choice((8, 16, 32, 64, 128))) for lab in labels]
    edges = {(i, i + 1) for i in range(n_layers - 1)}
    for _ in range(int(rng.integers(0, n_layers // 3 + 1))):
        p = int(rng.integers(0, n_layers - 3))
        c = int(rng.integers(p + 2, n_layers - 1)) if p + 2 < n_layers - 1 else p + 1
        if p == 0 and kind == "cnn" and not labels[c].startswith(("conv", "res")):
            continue
        edges.add((p, c))
    return LayerGraph(kind, tuple(labels), tuple(units), tuple(sorted(edges)))


def _graphs(kind: str, count: int, seed: int, lo: int = 6, hi: int = 14) -> list[LayerGraph]:
    rng = np.random.default_rng(seed)
    return [random_graph(kind, int(rng.integers(lo, hi)), rng) for _ in range(count)]


def _chain(kind: str, labels: list[str], units: list[int | None]) -> LayerGraph:
    return LayerGraph(kind, tuple(labels), tuple(units), tuple((i, i + 1) for i in range(len(labels) - 1)))


# -- the paper's Fig. 1 networks (nasbot.txt Sec. 2.2 / Sec. 3 and the Fig. 1 caption) ----------
def fig1_a() -> LayerGraph:
    return _chain("cnn", ["ip", "conv3", "conv3", "conv3", "conv5", "max-pool", "fc", "softmax", "op"],
                  [None, 16, 16, 32, 32, None, 16, None, None])


def fig1_b() -> LayerGraph:
    # "both layers 2 and 3 take the output of layer 1"; "layer 5 sees 16 + 16 from layers 3 and 4"
    return LayerGraph("cnn", ("ip", "conv3", "conv3", "conv3", "conv3", "conv5", "max-pool", "fc", "softmax", "op"),
                      (None, 16, 16, 16, 16, 32, None, 16, None, None),
                      ((0, 1), (1, 2), (1, 3), (2, 4), (3, 5), (4, 5), (5, 6), (6, 7), (7, 8), (8, 9)))


def fig1_c() -> LayerGraph:
    # our reading of Fig. 1c, renumbered topologically: it has the figure's masses and the text's
    # path (2, 5, 8, 13) and shortest/longest/random-walk lengths 5, 7, 5.67 from layer 1 to op
    labels = ("ip", "conv7", "conv5", "conv3", "conv3", "avg-pool", "max-pool", "max-pool", "fc",
              "conv3", "max-pool", "fc", "softmax", "softmax", "op")
    units = (None, 16, 32, 16, 16, None, None, None, 16, 16, None, 16, None, None, None)
    edges = ((0, 1), (1, 2), (1, 3), (1, 4), (2, 5), (3, 7), (4, 6), (5, 8), (6, 9), (7, 11),
             (8, 13), (9, 10), (10, 11), (11, 12), (12, 14), (13, 14))
    return LayerGraph("cnn", labels, units, edges)


def test_fig1_masses_and_path_lengths():
    """Masses shown in Fig. 1 (paper masses: fc = in * units) and Sec. 3's path-length example."""
    np.testing.assert_allclose(O.layer_masses(fig1_a(), fc_mass_coeff=1.0),
                               [235.2, 16, 256, 512, 1024, 32, 512, 235.2, 235.2])
    np.testing.assert_allclose(O.layer_masses(fig1_b(), fc_mass_coeff=1.0),
                               [235.2, 16, 256, 256, 256, 1024, 32, 512, 235.2, 235.2])
    mc = O.layer_masses(fig1_c(), fc_mass_coeff=1.0)
    assert mc[0] == mc[-1] == 240.0 and list(mc[[12, 13]]) == [120.0, 120.0]
    assert sorted(mc[1:12]) == sorted([16, 512, 256, 256, 32, 16, 16, 512, 256, 16, 512])
    _, to_op = O.path_lengths(fig1_c())
    np.testing.assert_allclose(to_op[1, :3], [5.0, 7.0, 17.0 / 3.0])
    # the authors' code scales fc mass by 0.1 (nn/neural_network.py); the floor of 100 is inactive here
    assert O.layer_masses(fig1_a())[6] == pytest.approx(51.2)


def test_fig1_distance_a_b_matches_paper():
    """Fig. 1 caption, nu_str = 0.5: d(a, b) = 175.1, dbar(a, b) = 0.0286 (paper's fc masses)."""
    a, b = (O.prepare(g, fc_mass_coeff=1.0) for g in (fig1_a(), fig1_b()))
    d, dbar = O.otmann_distance(a, b, nu_str=O.PAPER_NU_STR)
    assert d == pytest.approx(175.1, abs=0.05)
    assert dbar == pytest.approx(0.0286, abs=5e-5)
    # c is far from both, and further than a is from b (caption: 1479.3 and 1621.4)
    c = O.prepare(fig1_c(), fc_mass_coeff=1.0)
    assert min(O.otmann_distance(a, c, 0.5)[0], O.otmann_distance(b, c, 0.5)[0]) > 5 * d


# -- label mismatch costs (authors' code values) ---------------------------------------------------
def test_label_costs_authors_values():
    lc = O.label_mismatch_cost
    assert lc("conv3", "conv5", "cnn") == pytest.approx(0.2)            # sqrt(2)/10 * sqrt(2)
    assert lc("conv3", "conv7", "cnn") == pytest.approx(np.sqrt(2) / 5)
    assert lc("conv3", "res3", "cnn") == pytest.approx(0.1)             # 0.9 * 0 + 0.1 * 1
    assert lc("conv3", "res5", "cnn") == pytest.approx(0.28)
    assert lc("max-pool", "avg-pool", "cnn") == 0.5
    assert lc("conv3", "fc", "cnn") == np.inf and lc("fc", "softmax", "cnn") == np.inf
    assert lc("relu", "elu", "mlp") == pytest.approx(0.1)
    assert lc("logistic", "tanh", "mlp") == pytest.approx(0.1)
    assert lc("relu", "tanh", "mlp") == pytest.approx(0.25)
    assert lc("relu", "linear", "mlp") == np.inf
    assert lc("conv3", "conv5", "cnn", non_assignment_penalty=2.0) == pytest.approx(0.4)
    M = O.label_mismatch_matrix(["ip", "conv3", "op"], ["conv5", "ip"], "cnn")
    assert M.shape == (3, 2) and M[1, 0] == pytest.approx(0.2) and M[0, 1] == 0.0 and M[2, 0] == np.inf


def test_changing_one_label_increases_distance():
    base = _chain("cnn", ["ip", "conv3", "conv3", "conv3", "max-pool", "fc", "softmax", "op"],
                  [None, 16, 32, 32, None, 16, None, None])
    m = O.layer_masses(base)[2]

    def relabel(lab: str) -> LayerGraph:
        labels = list(base.labels)
        labels[2] = lab
        return LayerGraph("cnn", tuple(labels), base.units, base.edges)

    d5 = O.otmann_distance(base, relabel("conv5"))[0]
    d7 = O.otmann_distance(base, relabel("conv7"))[0]
    dr = O.otmann_distance(base, relabel("res3"))[0]
    assert 0 < d5 <= m * 0.2 + 1e-9          # keeping the matching costs exactly m * M
    assert d5 < d7 <= m * np.sqrt(2) / 5 + 1e-9
    assert 0 < dr <= m * 0.1 + 1e-9
    mlp = _chain("mlp", ["ip", "relu", "relu", "linear", "op"], [None, 16, 16, None, None])
    same_family = _chain("mlp", ["ip", "relu", "elu", "linear", "op"], [None, 16, 16, None, None])
    other_family = _chain("mlp", ["ip", "relu", "tanh", "linear", "op"], [None, 16, 16, None, None])
    assert 0 < O.otmann_distance(mlp, same_family)[0] < O.otmann_distance(mlp, other_family)[0]


# -- distance properties (Theorem 1) ----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["cnn", "mlp"])
def test_self_distance_zero_and_symmetry(kind):
    gs = _graphs(kind, 8, seed=1)
    for g in gs:
        twin = LayerGraph(g.kind, tuple(g.labels), tuple(g.units), tuple(g.edges))
        d, dbar = O.otmann_distance(g, twin, nu_str=0.8)
        assert abs(d) < 1e-8 * O.prepare(g).total_mass and abs(dbar) < 1e-10
    for g1, g2 in zip(gs[:-1], gs[1:]):
        for nu in (0.1, 1.5):
            d12, b12 = O.otmann_distance(g1, g2, nu)
            d21, b21 = O.otmann_distance(g2, g1, nu)
            assert d12 > 0 and d12 == pytest.approx(d21, rel=1e-9) and b12 == pytest.approx(b21, rel=1e-9)


@pytest.mark.parametrize("kind", ["cnn", "mlp"])
def test_triangle_inequality_random_triples(kind):
    gs = _graphs(kind, 12, seed=2)
    rng = np.random.default_rng(3)
    nus = (0.1, 0.5, 1.5)
    D, _ = O.otmann_matrix(gs, nu_strs=nus)
    checked = 0
    for _ in range(60):
        i, j, k = rng.choice(len(gs), size=3, replace=False)
        for q in range(len(nus)):
            assert D[q, i, k] <= D[q, i, j] + D[q, j, k] + 1e-9 * D[q].max()
            checked += 1
    assert checked == 180
    assert np.all(D >= 0) and np.allclose(D, D.transpose(0, 2, 1))


@pytest.mark.parametrize("kind", ["cnn", "mlp"])
def test_dbar_normalised(kind):
    gs = _graphs(kind, 6, seed=4)
    D, Dbar = O.otmann_matrix(gs, nu_strs=(0.1, 0.8))
    tm = np.array([O.prepare(g).total_mass for g in gs])
    assert np.all(Dbar >= 0) and np.all(Dbar <= 1 + 1e-12)
    np.testing.assert_allclose(Dbar, D / (tm[:, None] + tm[None, :]), rtol=1e-12)
    # networks of disjoint labels can never match: dbar = 1 (everything goes to the sinks)
    a = _chain("mlp", ["ip", "relu", "linear", "op"], [None, 8, None, None])
    b = _chain("mlp", ["ip", "tanh", "linear", "op"], [None, 8, None, None])
    assert 0 < O.otmann_distance(a, b, nu_str=100.0)[1] <= 1.0


def test_structural_term_grows_with_nu():
    a = _chain("cnn", ["ip", "conv3", "conv3", "fc", "softmax", "op"], [None, 16, 16, 16, None, None])
    b = _chain("cnn", ["ip", "conv3", "conv3", "conv3", "conv3", "fc", "softmax", "op"],
               [None, 16, 16, 16, 16, 16, None, None])
    ds = [O.otmann_distance(a, b, nu)[0] for nu in (0.0, 0.1, 0.4, 1.6)]
    assert all(x < y for x, y in zip(ds, ds[1:]))


# -- the batched matrix ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["cnn", "mlp"])
def test_matrix_matches_pairwise(kind):
    gs = _graphs(kind, 7, seed=5, lo=5, hi=16)   # different sizes: exercises the zero-mass padding
    nus = O.DEFAULT_NU_STRS
    D, Dbar = O.otmann_matrix(gs, nu_strs=nus)
    assert D.shape == Dbar.shape == (len(nus), 7, 7)
    for i in range(7):
        for j in range(7):
            for q, nu in enumerate(nus):
                d, dbar = O.otmann_distance(gs[i], gs[j], nu)
                assert D[q, i, j] == pytest.approx(d, rel=1e-9, abs=1e-9)
                assert Dbar[q, i, j] == pytest.approx(dbar, rel=1e-9, abs=1e-12)
    D2, Dbar2 = O.otmann_matrix(gs[:3], gs[2:], nu_strs=nus)   # rectangular, non-symmetric path
    np.testing.assert_allclose(D2, D[:, :3, 2:], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(Dbar2, Dbar[:, :3, 2:], rtol=1e-9, atol=1e-12)
    assert np.all(np.diag(D[0]) == 0)


def test_matches_plain_pot_on_the_augmented_problem():
    """Independent route: the paper's sink construction solved by ot.emd2 with the authors'
    7.65432e5 for infinite costs (our solver uses 4 x penalty there and zero-mass padding)."""
    import ot

    g1, g2 = _graphs("cnn", 2, seed=8, lo=9, hi=18)
    p1, p2 = O.prepare(g1), O.prepare(g2)
    nu = 0.61
    body = O.label_mismatch_matrix(g1.labels, g2.labels, "cnn") + nu * O._struct_cost(p1.features, p2.features)
    body[~np.isfinite(body)] = O.INF_COST
    C = np.ones((p1.n_layers + 1, p2.n_layers + 1))
    C[:-1, :-1] = body
    C[-1, -1] = 0.0
    a = np.append(p1.masses, p2.total_mass)
    b = np.append(p2.masses, p1.total_mass)
    d_ref = float(ot.emd2(a / a.sum(), b / b.sum(), C)) * a.sum()
    d, dbar = O.otmann_distance(g1, g2, nu)
    assert d == pytest.approx(d_ref, rel=1e-9)
    assert dbar == pytest.approx(d_ref / (p1.total_mass + p2.total_mass), rel=1e-9)


def test_threads_give_the_same_matrix():
    gs = _graphs("cnn", 9, seed=9)
    D1, B1 = O.otmann_matrix(gs, nu_strs=(0.2, 0.8))
    D2, B2 = O.otmann_matrix(gs, nu_strs=(0.2, 0.8), n_jobs=2)
    np.testing.assert_array_equal(D1, D2)
    np.testing.assert_array_equal(B1, B2)
    with pytest.raises(InvalidSettingError, match="n_jobs"):
        O.otmann_matrix(gs, n_jobs=0)


def test_matrix_edge_cases_and_errors():
    gs = _graphs("cnn", 2, seed=6)
    D, Dbar = O.otmann_matrix([], gs)
    assert D.shape == (len(O.DEFAULT_NU_STRS), 0, 2)
    mlp = _graphs("mlp", 1, seed=6)[0]
    with pytest.raises(InvalidConfigError, match="different kinds"):
        O.otmann_distance(gs[0], mlp)
    with pytest.raises(InvalidSettingError, match="non_assignment_penalty"):
        O.otmann_distance(gs[0], gs[1], non_assignment_penalty=0.0)
    with pytest.raises(InvalidSettingError, match="nu_str"):
        O.otmann_matrix(gs, nu_strs=(-1.0,))
    bad = LayerGraph("cnn", ("ip", "conv4x", "softmax", "op"), (None, 8, None, None), ((0, 1), (1, 2), (2, 3)))
    with pytest.raises(UnknownNameError, match="conv4x"):
        O.otmann_distance(gs[0], bad)
    dangling = LayerGraph("cnn", ("ip", "conv3", "conv3", "softmax", "op"), (None, 8, 8, None, None),
                          ((0, 1), (0, 2), (1, 3), (3, 4)))
    with pytest.raises(InvalidConfigError, match="no path to the output"):
        O.otmann_distance(gs[0], dangling)


def test_nonassignment_penalty_scales_distance():
    """MLP label costs are multiples of the penalty (authors' code), so with nu_str = 0 the
    distance is linear in it. (CNN conv<->res costs are not: the authors blend the unscaled
    conv cost with the penalty before scaling.)"""
    g1, g2 = _graphs("mlp", 2, seed=7)
    d1 = O.otmann_distance(g1, g2, nu_str=0.0, non_assignment_penalty=1.0)[0]
    d3 = O.otmann_distance(g1, g2, nu_str=0.0, non_assignment_penalty=3.0)[0]
    assert d1 > 0 and d3 == pytest.approx(3 * d1, rel=1e-9)


def _reference_matrix(gs_a, gs_b, nus):
    """Straightforward OTMANN: the paper's sink construction on whole networks (ip and op
    included), the authors' 7.65432e5 for infinite costs, one ot.emd2 per pair and weight."""
    import ot

    D = np.zeros((len(nus), len(gs_a), len(gs_b)))
    for i, g1 in enumerate(gs_a):
        for j, g2 in enumerate(gs_b):
            p1, p2 = O.prepare(g1), O.prepare(g2)
            lab = O.label_mismatch_matrix(g1.labels, g2.labels, g1.kind)
            struct = np.abs(p1.features[:, None, :] - p2.features[None, :, :]).mean(axis=2)
            a = np.append(p1.masses, p2.total_mass)
            b = np.append(p2.masses, p1.total_mass)
            tot = a.sum()
            for q, nu in enumerate(nus):
                C = np.ones((p1.n_layers + 1, p2.n_layers + 1))
                body = lab + nu * struct
                body[~np.isfinite(body)] = O.INF_COST
                C[:-1, :-1] = body
                C[-1, -1] = 0.0
                D[q, i, j] = float(ot.emd2(a / tot, b / tot, C, numItermax=10**7)) * tot
    return D


@pytest.mark.parametrize("kind", ["cnn", "mlp"])
def test_fast_matrix_equals_straightforward_reference(kind):
    """The fast route (ip/op in closed form, zero-mass padding, 4 x penalty for disparate labels,
    batched rows) gives the value of the plain per-pair OT on whole networks to 1e-12 (relative)."""
    from benchsuite.architectures.layer_graph_space import LayerGraphSpace

    rng = np.random.default_rng(24)
    space = LayerGraphSpace(kind)
    gs = [space.sample(rng) for _ in range(6)] + _graphs(kind, 3, seed=24, lo=5, hi=18)
    nus = O.DEFAULT_NU_STRS + (0.0, 1.5)
    D, Dbar = O.otmann_matrix(gs[:4], gs[4:], nu_strs=nus)
    ref = _reference_matrix(gs[:4], gs[4:], nus)
    np.testing.assert_allclose(D, ref, rtol=1e-12, atol=0)
    tm = np.array([O.prepare(g).total_mass for g in gs])
    np.testing.assert_allclose(Dbar, ref / (tm[:4, None] + tm[None, 4:]), rtol=1e-12, atol=0)
    Ds, _ = O.otmann_matrix(gs, nu_strs=nus)   # the symmetric path
    np.testing.assert_allclose(Ds[:, :4, 4:], ref, rtol=1e-12, atol=0)

