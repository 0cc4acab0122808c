"""Entropy search, Fabolas, MTBO, entropy_search and gp_ei plugins (small settings)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from benchsuite.optimizers.acquisition.entropy import (
    EntropySearch,
    _argmin_counts,
    _updated_argmin_counts,
    entropy_of_counts,
    sample_representers,
)
from benchsuite.optimizers.entropy_search import EntropySearchOptimizer
from benchsuite.optimizers.fabolas import Fabolas
from benchsuite.optimizers.gp_ei import GPEI
from benchsuite.optimizers.kernels.continuous import Matern52
from benchsuite.optimizers.models import gp
from benchsuite.optimizers.mtbo import MTBO

from benchsuite.benchmark import Fidelity, Result
from benchsuite.optimizer import Trial
from benchsuite.registry import make_benchmark
from benchsuite.runner import run
from benchsuite.space import Float, Space
from benchsuite.testing import check_optimizer

MCMC = {"burnin": 5, "chain_length": 3}
ES = {"n_representers": 10, "n_pmin_samples": 32, "n_innovations": 3, "n_pool": 64, "n_candidates": 32,
      "n_spray": 8, "local_rounds": 1, "n_local": 8}
GPEI_SMALL = {**MCMC, "n_init": 3, "n_candidates": 64, "n_spray": 16, "n_starts": 1, "maxiter": 5}
ES_SMALL = {**MCMC, **ES}
FID_SMALL = {**MCMC, **ES, "n_init": 3, "overhead_in_cost": False}


def _posterior_1d(theta_ls: float = math.log(0.15), noise: float = 1e-4):
    k = Matern52([0])
    X = np.array([[0.1], [0.45], [0.8], [0.95]])
    y = np.array([1.0, -0.5, 0.2, 0.9])
    theta = np.array([[0.0, theta_ls, 0.0, math.log(noise)]])
    return k, gp.GPPosterior(k, X, y, theta)


@pytest.mark.parametrize("layout", ["C", "as in EntropySearch._gain"])
@pytest.mark.parametrize(("shape", "slab"), [((2, 3, 5, 7, 30), 1), ((2, 3, 5, 7, 30), 7 * 30),
                                             ((2, 3, 5, 7, 30), 3 * 7 * 30), ((2, 3, 5, 7, 30), 1 << 19),
                                             ((1, 1, 1, 50, 200), 1 << 19), ((3, 5, 1, 50, 200), 1 << 19),
                                             ((2, 5, 33, 50, 200), 1 << 16), ((2, 5, 40, 50, 200), 1 << 19)])
def test_updated_argmin_counts_in_slabs_equal_the_whole_array(shape, slab, layout):
    """Slab by slab gives exactly the counts of the whole (S, K, m, nb, M) array, ties included,
    and the entropies computed from them are bit-identical (the layout decides their rounding)."""
    rng = np.random.default_rng(3)
    S, K, m, nb, M = shape
    F = rng.standard_normal((S, nb, M)).astype(np.float32)
    F[:, 1] = F[:, 0]  # exact ties count for both representers
    if layout == "C":
        c = rng.standard_normal((S, m, nb)).astype(np.float32)
        delta = rng.standard_normal((S, K, m, M)).astype(np.float32)
    else:  # transposed views cast to float32 keep their memory order, as in _gain
        c = np.swapaxes(rng.standard_normal((S, nb, m)), 1, 2).astype(np.float32)
        y_k, y_samp = rng.standard_normal((S, K, m)), rng.standard_normal((S, M, m))
        delta = (y_k[:, :, :, None] - np.swapaxes(y_samp, 1, 2)[:, None, :, :]).astype(np.float32)
    c[:, :, 1] = c[:, :, 0]
    Fn = c[:, None, :, :, None] * delta[:, :, :, None, :]
    Fn += F[:, None, None, :, :]
    want = _argmin_counts(Fn)
    got = _updated_argmin_counts(F, c, delta, slab=slab)
    assert got.shape == (S, K, m, nb)
    np.testing.assert_array_equal(got, want)
    assert (got[..., 0] == got[..., 1]).all() and got[..., 0].sum() > 0
    log_b = rng.standard_normal(nb)
    assert np.array_equal(entropy_of_counts(got, log_b), entropy_of_counts(want, log_b))


def test_pmin_entropy_is_uniform_for_exchangeable_and_small_for_a_clear_minimum():
    rng = np.random.default_rng(0)
    k = Matern52([0])
    # representers far apart with a tiny length scale: iid values, p_min uniform, H = log nb
    post = gp.GPPosterior(k, np.array([[0.0]]), np.array([0.0]), np.array([[0.0, math.log(1e-3), 0.0, -10.0]]))
    Z = np.linspace(0.1, 0.9, 10)[:, None]
    es = EntropySearch(post, Z, np.zeros(10), rng, n_samples=20000, n_innovations=3)
    assert es.H0[0] == pytest.approx(math.log(10), abs=0.01)
    np.testing.assert_allclose(es.pmin()[0], 0.1, atol=0.015)
    # one representer sits at a very low observation: p_min concentrates there
    k2, post2 = _posterior_1d(noise=1e-6)
    X2 = np.vstack([post2.X, [[0.3]]])
    y2 = np.append(post2.y[0], -50.0)
    post3 = gp.GPPosterior(k2, X2, y2, post2.theta)
    Z2 = np.array([[0.3], [0.6], [0.7], [0.05]])
    es2 = EntropySearch(post3, Z2, np.zeros(4), rng, n_samples=5000, n_innovations=3)
    assert es2.pmin()[0, 0] > 0.99
    assert es2.H0[0] < 0.05
    # the representer density enters as -sum p log b
    counts = np.array([[5, 5]])
    assert entropy_of_counts(counts, np.log([2.0, 2.0]))[0] == pytest.approx(math.log(2) - math.log(2))


def test_information_gain_matches_brute_force_conditioning():
    rng = np.random.default_rng(1)
    k, post = _posterior_1d()
    Z = np.linspace(0.05, 0.95, 8)[:, None]
    log_b = np.zeros(8)
    es = EntropySearch(post, Z, log_b, rng, n_samples=40000, n_innovations=7)
    x = np.array([[0.62]])
    gain = es(x)[0]
    # brute force: condition the GP on each quadrature value of y exactly and re-estimate p_min
    nodes, w = np.polynomial.hermite_e.hermegauss(7)
    w = w / w.sum()
    mu_x, var_x = post.predict(x)
    sy = math.sqrt(var_x[0, 0] + post.noise_var[0])

    def entropy(p: gp.GPPosterior) -> float:
        mu, cov, _, _ = p.predict_joint(Z, Z[:0])
        f = rng.multivariate_normal(mu[0], cov[0] + 1e-12 * np.eye(8), size=40000, method="cholesky")
        counts = np.bincount(f.argmin(1), minlength=8)[None]
        return float(entropy_of_counts(counts, log_b)[0])

    h_new = sum(wk * entropy(post.augmented(x, np.array([[mu_x[0, 0] + sy * g]]))) for g, wk in zip(nodes, w))
    brute = entropy(post) - h_new
    assert brute > 0.05  # the candidate is informative, so the comparison means something
    assert gain == pytest.approx(brute, abs=0.03)
    # a point that is (numerically) uncorrelated with every representer gains nothing
    far = gp.GPPosterior(Matern52([0]), post.X, post.y[0], np.array([[0.0, math.log(1e-3), 0.0, -9.0]]))
    es_far = EntropySearch(far, Z, log_b, rng, n_samples=500, n_innovations=3)
    assert es_far(np.array([[0.5]]))[0] == pytest.approx(0.0, abs=1e-9)


def test_representers_follow_the_score():
    rng = np.random.default_rng(2)
    Z, log_b = sample_representers(lambda X: (X[:, 0] < 0.25).astype(float), 2, rng, 20, 512)
    assert Z.shape == (20, 2) and np.all(Z[:, 0] < 0.25)
    np.testing.assert_allclose(log_b, math.log(4), atol=0.05)  # density 4x the uniform one on a quarter
    Zu, lbu = sample_representers(lambda X: np.zeros(len(X)), 2, rng, 5, 64)
    assert Zu.shape == (5, 2) and np.all(lbu == 0)


@pytest.mark.parametrize("cls, settings", [(GPEI, GPEI_SMALL), (EntropySearchOptimizer, ES_SMALL),
                                           (Fabolas, FID_SMALL), (MTBO, FID_SMALL)])
def test_conformance(cls, settings):
    check_optimizer(cls, settings=settings, budget=8)


def test_fabolas_design_scaling_and_incumbent():
    bench = make_benchmark("branin_mf")
    opt = Fabolas(bench.space, bench.fidelity, np.random.default_rng(3), **{**FID_SMALL, "n_init": 10})
    # s is log-scaled into [0, 1]: 1/128 -> 0, 1 -> 1 (RoBO's transform)
    np.testing.assert_allclose(opt.fid_coord([1 / 128, 1 / 16, 1.0]), [0.0, 3 / 7, 1.0], atol=1e-12)
    # a linearly declared axis is log-scaled too, as the original implementation always does
    lin = Fabolas(bench.space, Fidelity("epochs", 1, 27, log=False), np.random.default_rng(3), **FID_SMALL)
    np.testing.assert_allclose(lin.fid_coord([1, 3, 27]), [0.0, 1 / 3, 1.0], atol=1e-12)
    assert lin.fid_value(1 / 3) == pytest.approx(3.0)
    fids = [s for _, s in opt.design]
    np.testing.assert_allclose(fids[:5], [1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 64])
    out = run(bench, Fabolas, seed=4, budget_evals=14, optimizer_settings={**FID_SMALL, "n_init": 10})
    assert [r["fidelity"] for r in out.rows[:4]] == pytest.approx([1 / 64, 1 / 32, 1 / 16, 1 / 8])
    assert all(bench.fidelity.low <= r["fidelity"] <= 1.0 for r in out.rows)
    opt = out.optimizer
    inc = opt.recommend()
    configs, X, y, _ = opt._data()
    post = gp.GPPosterior(opt.k_loss, X, y, opt.theta_loss)
    mu = post.predict(np.column_stack([X[:, :2], np.ones(len(X))])).mean.mean(0)
    assert bench.space.key(inc) == bench.space.key(configs[int(np.argmin(mu))])


def test_fabolas_and_mtbo_snap_to_allowed_fidelity_values():
    values = tuple(2.0**-k for k in range(8))
    fid = Fidelity("s", 1 / 128, 1.0, log=True, values=values)
    space = Space([Float("x0", -10, 10), Float("x1", -10, 10)])

    def fake_loss(c, s):
        return (c["x0"] / 10) ** 2 + (c["x1"] / 10 - 0.3) ** 2 + 0.2 * (1 - s)

    for cls in (Fabolas, MTBO):
        opt = cls(space, fid, np.random.default_rng(5), **FID_SMALL)
        for i in range(8):
            sug = opt.ask()
            assert sug.fidelity in values, (cls.name, sug.fidelity)
            if cls is MTBO:
                assert sug.fidelity in (0.25, 1.0)
                if i < 3:
                    assert sug.fidelity == 0.25  # the initial design runs on the auxiliary task
            result = Result(fake_loss(sug.config, sug.fidelity), 1 + 10 * sug.fidelity)
            opt.tell(Trial(i, sug.config, sug.fidelity), result)
        assert opt.recommend() is not None


def test_gp_ei_asks_full_fidelity_and_improves_on_branin():
    bench = make_benchmark("branin_mf")
    out = run(bench, GPEI, seed=6, budget_evals=6, optimizer_settings=GPEI_SMALL, workers=2)
    assert all(r["fidelity"] == 1.0 for r in out.rows)
    out = run(make_benchmark("branin"), GPEI, seed=6, budget_evals=14,
              optimizer_settings={**GPEI_SMALL, "burnin": 30, "chain_length": 10, "n_candidates": 256})
    losses = [r["loss"] for r in out.rows]
    # the model-based phase finds better points than the 3-point initial design
    assert min(losses[3:]) < min(losses[:3])
