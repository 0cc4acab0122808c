"""Tests of COMBO: graph eigensystems, the Kronecker diffusion kernel, slice sampling, horseshoe, EI search."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.linalg
from benchsuite.optimizers.acquisition.functions import integrated_ei
from benchsuite.optimizers.combo import Combo, kernel_for_space, unique_rows
from benchsuite.optimizers.inference.horseshoe import horseshoe_log_prior
from benchsuite.optimizers.inference.slice_sampling import slice_sample_1d, slice_sample_chain
from benchsuite.optimizers.kernels.diffusion import (DiffusionKernel, complete_eigensystem, graph_eigensystem,
                                                     path_eigensystem)
from benchsuite.optimizers.models.graph_gp import DiffusionGP, GPParams, GPPosterior, PriorConfig
from benchsuite.optimizers.models.posterior import condition_on_pending
from scipy import integrate

from benchsuite.benchmark import Benchmark, Result
from benchsuite.errors import UnsupportedError
from benchsuite.optimizer import Trial
from benchsuite.space import Binary, Categorical, Float, Integer, Ordinal, Space
from benchsuite.testing import check_optimizer

SMALL = {"n_init": 4, "n_burn": 5, "n_samples": 2, "n_random": 300, "n_spray": 5, "n_ascent": 4}


# -- graphs and kernel ---------------------------------------------------------------------------
@pytest.mark.parametrize("maker", [path_eigensystem, complete_eigensystem])
@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_closed_form_eigensystems_diagonalise_the_laplacian(maker, n):
    g = maker(n)
    L = g.laplacian()
    assert np.allclose(g.eigvecs.T @ g.eigvecs, np.eye(n), atol=1e-12)
    assert np.allclose(L @ g.eigvecs, g.eigvecs * g.eigvals, atol=1e-12)
    assert np.allclose(np.sort(g.eigvals), np.linalg.eigvalsh(L), atol=1e-12)


def _product_graph_laplacian(graphs, betas):
    """Brute force: enumerate every vertex of the product graph and connect single-variable moves."""
    verts = list(itertools.product(*[range(g.n) for g in graphs]))
    index = {v: j for j, v in enumerate(verts)}
    W = np.zeros((len(verts), len(verts)))
    for v in verts:
        for i, g in enumerate(graphs):
            A = -g.laplacian()
            for w_i in range(g.n):
                if w_i != v[i] and A[v[i], w_i] > 0:
                    w = v[:i] + (w_i,) + v[i + 1:]
                    W[index[v], index[w]] = betas[i]
    return np.diag(W.sum(1)) - W, np.array(verts)


def test_kronecker_kernel_equals_matrix_exponential_of_the_full_laplacian():
    graphs = [graph_eigensystem("path", 3), graph_eigensystem("complete", 3), graph_eigensystem("complete", 2)]
    betas = np.array([0.7, 0.3, 1.9])
    L, verts = _product_graph_laplacian(graphs, betas)
    brute = scipy.linalg.expm(-L)
    norm = np.prod([np.exp(-b * g.eigvals).mean() for g, b in zip(graphs, betas)])
    K = DiffusionKernel(graphs).gram(betas, verts)
    assert np.allclose(K, brute / norm, rtol=1e-10, atol=1e-12)
    # and the spectrum bounds used by the amplitude prior are the extreme eigenvalues
    lo, hi = DiffusionKernel(graphs).log_spectrum_bounds(betas)
    ev = np.linalg.eigvalsh(brute / norm)
    assert math.isclose(math.exp(lo), ev.min(), rel_tol=1e-8) and math.isclose(math.exp(hi), ev.max(), rel_tol=1e-8)


def test_kernel_cross_gram_diag_and_batches_agree():
    k = DiffusionKernel([graph_eigensystem("path", 5), graph_eigensystem("complete", 4), graph_eigensystem("path", 2)])
    rng = np.random.default_rng(0)
    X1 = rng.integers(0, k.n_levels, size=(7, 3))
    X2 = rng.integers(0, k.n_levels, size=(9, 3))
    betas = rng.uniform(0.05, 2.0, size=(3, 3))
    lg = k.log_gram(betas, X1, X2)
    for s in range(3):
        direct = np.ones((7, 9))
        for i in range(3):
            direct *= k.factor(i, betas[s, i])[X1[:, i][:, None], X2[:, i][None, :]]
        assert np.allclose(np.exp(lg[s]), direct, rtol=1e-10)
        assert np.allclose(np.exp(k.log_diag(betas, X2)[s]), np.diag(k.gram(betas[s], X2)), rtol=1e-10)


@pytest.mark.parametrize("levels", [[2] * 60, [2, 5, 3, 7], [4096] * 6])
def test_unique_rows_is_numpys_unique_along_rows(levels):
    """The packed-key path (and its fallback past 63 bits) returns np.unique(axis=0) exactly."""
    rng = np.random.default_rng(len(levels))
    n_levels = np.array(levels)
    codes = rng.integers(0, n_levels, size=(3000, len(levels)))
    codes = np.concatenate([codes, codes[:500]])  # duplicates
    np.testing.assert_array_equal(unique_rows(codes, n_levels), np.unique(codes, axis=0))


def test_onehot_marks_each_variables_level_above_the_baseline():
    k = DiffusionKernel([graph_eigensystem("path", 3), graph_eigensystem("complete", 2), graph_eigensystem("path", 4)])
    X = np.array([[0, 0, 0], [2, 1, 3], [1, 0, 2]])
    expected = np.array([[0, 0, 0, 0, 0, 0], [0, 1, 1, 0, 0, 1], [1, 0, 0, 0, 1, 0]], dtype=float)
    np.testing.assert_array_equal(k.onehot(X), expected)


def test_neighbours_are_the_product_graph_edges():
    graphs = [graph_eigensystem("path", 3), graph_eigensystem("complete", 3), graph_eigensystem("complete", 2)]
    L, verts = _product_graph_laplacian(graphs, np.ones(3))
    nb, owner = DiffusionKernel(graphs).neighbours(verts)
    got = {(int(o), tuple(row)) for o, row in zip(owner, nb)}
    want = {(a, tuple(verts[b])) for a, b in zip(*np.nonzero((L < 0)))}
    assert got == want


def test_categorical_graph_setting_and_unsupported_spaces():
    space = Space([Categorical("c", list("abcd")), Ordinal("o", [1, 2, 3]), Integer("n", 0, 4), Binary("b")])
    assert [g.kind for g in kernel_for_space(space).graphs] == ["complete", "path", "path", "complete"]
    assert kernel_for_space(space, "path").graphs[0].kind == "path"
    with pytest.raises(UnsupportedError):
        Combo(Space([Float("x", 0, 1), Binary("b")]), None, 0)


# -- horseshoe and slice sampling -------------------------------------------------------------------
def _horseshoe_density(x, tau):
    """The horseshoe density by quadrature over the half-Cauchy local scale."""
    f = lambda lam: (np.exp(-0.5 * (x / (lam * tau)) ** 2) / (math.sqrt(2 * math.pi) * lam * tau)
                     * 2.0 / (math.pi * (1 + lam**2)))
    return integrate.quad(f, 0, np.inf, limit=200)[0]


@pytest.mark.parametrize("x,tau", [(0.1, 1.0), (1.0, 1.0), (3.0, 5.0), (0.02, math.sqrt(0.005))])
def test_horseshoe_log_prior_is_the_upper_bound_of_the_density(x, tau):
    p = _horseshoe_density(x, tau)
    upper = math.exp(horseshoe_log_prior(x, tau))
    K = 1.0 / math.sqrt(2 * math.pi**3)
    lower = 0.5 * K / tau * math.log1p(4 * tau**2 / x**2)  # Carvalho et al. (2010), Theorem 1
    assert math.isclose(upper, K / tau * math.log1p(2 * tau**2 / x**2), rel_tol=1e-12)
    assert lower < p < upper
    assert upper / p < 2.5  # a bound, but a tight one


def test_slice_sampler_recovers_a_gaussian_and_a_bounded_gamma():
    rng = np.random.default_rng(1)
    xs = slice_sample_chain(lambda x: -0.5 * ((x - 2.0) / 0.5) ** 2, 0.0, rng, n_samples=4000, n_burn=50)
    assert abs(xs.mean() - 2.0) < 0.06 and abs(xs.var() - 0.25) < 0.04
    # Gamma(3, 1): support x > 0 (log density -inf outside), mean 3, variance 3
    lg = lambda x: 2.0 * math.log(x) - x if x > 0 else -math.inf
    xs = slice_sample_chain(lg, 1.0, rng, n_samples=4000, n_burn=50, width=0.5)
    assert abs(xs.mean() - 3.0) < 0.2 and abs(xs.var() - 3.0) < 0.5
    assert (xs > 0).all()


def test_slice_sampler_rejects_a_start_outside_the_support():
    with pytest.raises(ValueError):
        slice_sample_1d(lambda x: -math.inf, 0.0, np.random.default_rng(0))


# -- GP model ---------------------------------------------------------------------------------------
def _toy_data(n=30, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d))
    y = X[:, 0] * 2.0 - X[:, 1] + 0.5 * X[:, 0] * X[:, 2] + 0.01 * rng.standard_normal(n)
    k = DiffusionKernel([graph_eigensystem("complete", 2)] * d)
    return k, X, y


def test_sweep_keeps_the_chain_in_the_support_and_matches_the_full_likelihood():
    k, X, y = _toy_data()
    gp = DiffusionGP(k, X, y)
    rng = np.random.default_rng(0)
    samples = gp.sample(gp.initial_params(), rng, n_samples=5, n_burn=5)
    assert len(samples) == 5
    for p in samples:
        assert math.isfinite(gp.log_posterior(p))
    # the incremental bookkeeping (one factor swapped per beta update) matches a fresh Gram matrix
    assert math.isclose(gp.last_loglik, gp.log_likelihood(samples[-1]), rel_tol=1e-8, abs_tol=1e-8)
    # the chain moved, and every beta moved at least once
    assert len({p.mean for p in samples}) > 1
    assert (np.ptp(np.stack([p.log_beta for p in samples]), axis=0) > 0).all()


def test_posterior_interpolates_and_hallucinated_pending_points_shrink_variance():
    k, X, y = _toy_data()
    gp = DiffusionGP(k, X, y)
    p = GPParams(float(y.mean()), math.log(y.var()), math.log(1e-4), np.full(k.d, -0.5))
    post = GPPosterior(gp, [p, p])
    mu, sd = post.predict(X[:5]).mean, post.predict(X[:5]).std
    assert np.allclose(mu[0], y[:5], atol=0.05) and (sd < 0.1).all()
    new = np.array([[1, 1, 1, 1, 1, 1]]) if not (X == 1).all(1).any() else np.array([[0, 1, 0, 1, 0, 1]])
    mu0, sd0 = post.predict(new).mean, post.predict(new).std
    post_p = condition_on_pending(GPPosterior(gp, [p, p]), new, np.random.default_rng(0), "mean")
    mu1, sd1 = post_p.predict(new).mean, post_p.predict(new).std
    assert np.allclose(mu0, mu1, atol=1e-6)
    assert (sd1 < 0.5 * sd0).all()


# -- the plugin ---------------------------------------------------------------------------------------
class _BinaryToy(Benchmark):
    """A small binary benchmark with second-order interactions (not registered)."""

    name = "binary_toy"

    def setup(self) -> None:
        self.space = Space([Binary(f"b{i}") for i in range(10)])
        rng = np.random.default_rng(3)
        self.Q = rng.standard_normal((10, 10))

    def evaluate(self, config, fidelity=None, seed=0):
        x = self.space.to_codes(config).astype(float)
        return Result(loss=float(x @ self.Q @ x), cost_s=1.0)


def _fitted(n_obs=25, seed=0, **settings):
    bench = _BinaryToy()
    opt = Combo(bench.space, None, np.random.default_rng(seed), **{**SMALL, **settings})
    rng = np.random.default_rng(seed + 100)
    for i in range(n_obs):
        c = bench.space.sample(rng)
        opt.tell(Trial(i, c, None), bench.evaluate(c))
    return bench, opt


def test_ei_maximisation_returns_an_unevaluated_vertex_at_least_as_good_as_random_ones():
    bench, opt = _fitted()
    configs, y, _ = opt.observations()
    X = bench.space.to_codes(configs)
    gp = DiffusionGP(opt.kernel, X, y, opt.priors)
    samples = gp.sample(gp.initial_params(), np.random.default_rng(0), n_samples=3, n_burn=10)
    post = GPPosterior(gp, samples)

    def acq(C):
        return integrated_ei(post.predict(C), float(y.min()))

    seen = {row.astype(np.int32).tobytes() for row in X}
    codes, value = opt.optimise_acquisition(acq, X[np.argmin(y)], seen)
    assert codes.astype(np.int32).tobytes() not in seen
    assert math.isclose(value, float(acq(codes[None, :])[0]), rel_tol=1e-9)
    rand = bench.space.sample_codes(np.random.default_rng(7), 500)
    rand = rand[[r.astype(np.int32).tobytes() not in seen for r in rand]]
    assert value >= acq(rand).max() - 1e-12
    # a local maximum: no neighbour is better
    nb, _ = opt.kernel.neighbours(codes[None, :])
    assert value >= acq(nb).max() - 1e-12 or any(r.astype(np.int32).tobytes() in seen for r in nb)


def test_ask_avoids_evaluated_and_pending_configurations_and_reports_timing():
    bench, opt = _fitted()
    pend = [Trial(100, bench.space.sample(np.random.default_rng(5)), None)]
    s = opt.ask(pend)
    keys = {bench.space.key(t.config) for t in opt.history} | {bench.space.key(pend[0].config)}
    assert bench.space.key(s.config) not in keys
    assert opt.last_timing["burn_in_sweeps"] == SMALL["n_burn"] and opt.last_timing["sampling_s"] > 0
    opt.tell(Trial(200, s.config, None), bench.evaluate(s.config))
    opt.ask()
    assert opt.last_timing["burn_in_sweeps"] == 0  # the chain continues


def test_combo_passes_the_conformance_kit():
    check_optimizer(Combo, settings=SMALL, budget=8)


def test_combo_finds_the_optimum_of_a_tiny_binary_problem():
    """2^10 vertices: with 40 evaluations COMBO finds one of the 3 best (random search: ~11% chance)."""
    bench, opt = _fitted(n_obs=10)
    for i in range(30):
        s = opt.ask()
        opt.tell(Trial(1000 + i, s.config, None), bench.evaluate(s.config))
    all_codes = np.array(list(itertools.product([0, 1], repeat=10)))
    vals = np.einsum("ni,ij,nj->n", all_codes, bench.Q, all_codes)
    best = min(t.result.loss for t in opt.history)
    assert best <= np.sort(vals)[2] + 1e-12


def test_constant_losses_and_single_level_variables_do_not_break_the_model():
    space = Space([Binary("a"), Integer("one", 3, 3), Ordinal("o", [1, 2, 4, 8]), Categorical("c", ["x", "y", "z"])])
    opt = Combo(space, None, np.random.default_rng(0), **SMALL)
    rng = np.random.default_rng(1)
    for i in range(6):
        opt.tell(Trial(i, space.sample(rng), None), Result(loss=1.5, cost_s=1.0))
    s = opt.ask()
    space.validate(s.config)
    assert space.key(s.config) not in {space.key(t.config) for t in opt.history}


def test_log_jacobian_setting_turns_the_horseshoe_into_a_prior_on_the_original_scale():
    k, X, y = _toy_data()
    ref = DiffusionGP(k, X, y)
    jac = DiffusionGP(k, X, y, PriorConfig(log_jacobian=True))
    for lb in (-8.0, 0.0, 3.0):
        assert math.isclose(jac.log_prior_beta(lb) - ref.log_prior_beta(lb), lb, abs_tol=1e-12)
        assert math.isclose(jac.log_prior_noise(lb) - ref.log_prior_noise(lb), lb, abs_tol=1e-12)
    assert ref.log_prior_beta(-13.0) == -math.inf and ref.log_prior_beta(5.0) == -math.inf
    opt = Combo(Space([Binary("a"), Binary("b")]), None, 0, log_jacobian=True)
    assert opt.priors.log_jacobian
