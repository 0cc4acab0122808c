"""The posterior contract: every model returns mean and variance per sample; pending trials in one place."""
from __future__ import annotations

import math

import numpy as np
import pytest
from benchsuite.optimizers.acquisition.functions import expected_improvement, integrated_ei
from benchsuite.optimizers.kernels.continuous import Matern52
from benchsuite.optimizers.kernels.diffusion import DiffusionKernel, graph_eigensystem
from benchsuite.optimizers.models import gp
from benchsuite.optimizers.models.adaptive_basis import AdaptiveBasisPosterior, BasisStatistics
from benchsuite.optimizers.models.graph_gp import DiffusionGP, GPParams
from benchsuite.optimizers.models.graph_gp import GPPosterior as ComboPosterior
from benchsuite.optimizers.models.posterior import Posterior, PredictiveModel, condition_on_pending


def _gp_model():
    rng = np.random.default_rng(0)
    X, y = rng.random((12, 2)), rng.random(12)
    k = Matern52(range(2))
    th = gp.sample_prior(k, rng, 2)
    th[:, -1] = math.log(1e-3)
    return gp.GPPosterior(k, X, y, th), np.array([[0.5, 0.5], [0.1, 0.9]])


def _combo_model():
    rng = np.random.default_rng(1)
    k = DiffusionKernel([graph_eigensystem("path", 4) for _ in range(3)])
    X = rng.integers(0, 4, (15, 3))
    y = X.sum(1) + 0.1 * rng.standard_normal(15)
    p = GPParams(float(y.mean()), math.log(y.var()), math.log(1e-3), np.full(3, -0.5))
    return ComboPosterior(DiffusionGP(k, X, y), [p, p]), np.array([[3, 3, 3], [0, 3, 0]])


def _dngo_model():
    rng = np.random.default_rng(2)
    X = rng.random((25, 2))
    W = rng.standard_normal((2, 8))
    feats = lambda Z: np.tanh(3 * Z @ W)  # noqa: E731
    y = np.sin(5 * X[:, 0]) + X[:, 1]
    theta = np.array([[0.0, math.log(400.0), 0.0, 0.5, 0.5, -2.0, -2.0]] * 2)
    theta[1, 1] = math.log(100.0)
    return AdaptiveBasisPosterior(feats, BasisStatistics(feats(X), X, y), theta, 0.0, 1.0, y.min()), \
        np.array([[0.5, 0.5], [0.1, 0.9]])


MODELS = {"gp": _gp_model, "combo": _combo_model, "dngo": _dngo_model}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_model_honours_the_contract(name):
    model, Xp = MODELS[name]()
    assert isinstance(model, PredictiveModel)
    post = model.predict(Xp)
    assert isinstance(post, Posterior)
    S = post.n_samples
    assert post.mean.shape == post.variance.shape == (S, len(Xp))
    assert np.all(post.variance > 0) and post.noise.shape == (S,)
    np.testing.assert_allclose(post.std**2, post.variance)
    np.testing.assert_allclose(post.predictive_variance(), post.variance + post.noise[:, None])
    assert model.best().shape == (S,)
    # fantasies: F sets per sample, fantasy-major; they shrink the variance at the pending points
    fant = condition_on_pending(model, Xp, np.random.default_rng(0), "fantasies", 3)
    pf = fant.predict(Xp)
    assert pf.n_samples == 3 * S
    assert np.all(pf.variance < np.tile(post.variance, (3, 1)))
    assert np.all(fant.best() <= np.tile(model.best(), 3) + 1e-12)
    # the kriging believer keeps the mean
    bel = condition_on_pending(model, Xp, np.random.default_rng(0), "mean")
    np.testing.assert_allclose(bel.predict(Xp).mean, post.mean, rtol=1e-5, atol=1e-5)
    # nothing pending: the model itself
    assert condition_on_pending(model, None, np.random.default_rng(0)) is model
    assert condition_on_pending(model, Xp[:0], np.random.default_rng(0)) is model


def test_integrated_ei_takes_a_posterior_and_never_guesses():
    mu, sd = np.array([[0.3, -0.2]]), np.array([[0.5, 0.1]])
    with pytest.raises(TypeError, match="Posterior"):
        integrated_ei((mu, sd), 0.2)
    post = Posterior(mu, sd**2, noise=np.array([0.25]))
    np.testing.assert_allclose(integrated_ei(post, 0.2), expected_improvement(mu[0], sd[0], 0.2))
    noisy = integrated_ei(post, 0.2, include_noise=True)
    np.testing.assert_allclose(noisy, expected_improvement(mu[0], np.sqrt(sd[0] ** 2 + 0.25), 0.2))
    mean, var = post  # unpacks as (mean, variance) for the linear-algebra callers
    assert var is post.variance
    with pytest.raises(ValueError, match="differ in shape"):
        Posterior(mu, np.ones((2, 2)))


def test_unknown_pending_strategy_is_rejected():
    model, Xp = _gp_model()
    with pytest.raises(ValueError, match="pending strategy"):
        condition_on_pending(model, Xp, np.random.default_rng(0), "guess")
