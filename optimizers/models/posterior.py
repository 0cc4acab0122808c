"""The posterior contract every surrogate model honours (GP, COMBO's diffusion GP, DNGO).

BoTorch's lesson (DESIGN.md, "Models to learn from"): one object that every model returns
and every acquisition consumes, so that no acquisition has to guess what it was given.

* :class:`Posterior`: predictive **mean and latent variance** (never a standard
  deviation), one row per MCMC/hyperparameter sample: two ``(S, m)`` arrays, plus the
  observation-noise variance per sample where the model has one (``(S,)``), so that an
  acquisition can use the noisy predictive variance (dngo.txt Eq. 5 adds ``1/beta``)
  without knowing the model. It unpacks as ``mean, variance = model.predict(X)``.
* :class:`PredictiveModel`: what a conditioned model offers: ``predict`` (a Posterior),
  ``best`` (the lowest observed or fantasised target per sample, the EI incumbent of
  dngo.txt Eq. 2), ``sample_y`` (joint draws of noisy outcomes at given inputs) and
  ``augmented`` (the model with extra observations, hyperparameters kept).
* :func:`condition_on_pending`: the one place where running trials enter a model, either
  as Monte Carlo fantasies (Snoek et al. 2012; dngo.txt Sec. 3.3) or as the posterior mean
  (kriging believer). With ``F`` fantasy sets a model of ``S`` samples becomes one of
  ``F * S`` samples (fantasy-major), over which integrated EI simply averages.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from benchsuite.settings import POSITIVE_INT, Setting

PENDING_STRATEGIES = ("fantasies", "mean")


@dataclass(frozen=True)
class Posterior:
    """Predictive mean and latent (noise-free) variance per sample, each ``(S, m)``; noise ``(S,)``."""

    mean: np.ndarray
    variance: np.ndarray
    noise: np.ndarray | None = None

    def __post_init__(self) -> None:
        mean = np.atleast_2d(np.asarray(self.mean, dtype=float))
        var = np.atleast_2d(np.asarray(self.variance, dtype=float))
        if mean.shape != var.shape:
            raise ValueError(f"posterior mean {mean.shape} and variance {var.shape} differ in shape")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "variance", var)
        if self.noise is not None:
            noise = np.broadcast_to(np.asarray(self.noise, dtype=float).reshape(-1), (mean.shape[0],))
            object.__setattr__(self, "noise", noise)

    def __iter__(self) -> Iterator[np.ndarray]:
        # lets linear-algebra callers write ``mu, var = model.predict(X)``
        return iter((self.mean, self.variance))

    @property
    def std(self) -> np.ndarray:
        """Predictive standard deviation, ``sqrt(max(variance, 0))``."""
        return np.sqrt(np.maximum(self.variance, 0.0))

    def predictive_variance(self) -> np.ndarray:
        """Variance of a noisy observation: latent variance plus the noise variance (if any)."""
        if self.noise is None:
            return self.variance
        return self.variance + self.noise[:, None]

    @property
    def n_samples(self) -> int:
        """Number of samples ``S`` (hyperparameter samples x fantasy sets)."""
        return self.mean.shape[0]


@runtime_checkable
class PredictiveModel(Protocol):
    """A model conditioned on data, for ``S`` hyperparameter samples at once."""

    def predict(self, X: np.ndarray) -> Posterior:
        """Posterior at inputs ``X`` ``(m, d)``."""

    def best(self) -> np.ndarray:
        """Lowest observed (or fantasised) target per sample, ``(S,)``: EI's incumbent."""

    def sample_y(self, Xp: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` joint draws of noisy outcomes at ``Xp`` per sample, ``(n, S, p)``."""

    def augmented(self, Xp: np.ndarray, yp: np.ndarray) -> PredictiveModel:
        """The model with observations ``yp`` (``(S, p)`` or ``(F, S, p)``) at ``Xp`` added."""


def condition_on_pending(model: PredictiveModel, Xp: np.ndarray | None, rng: np.random.Generator,
                         strategy: str = "fantasies", n_fantasies: int = 1) -> PredictiveModel:
    """The model conditioned on running trials at ``Xp``: fantasies or posterior mean.

    ``"fantasies"`` draws ``n_fantasies`` joint outcome sets per sample from the
    predictive distribution (dngo.txt Sec. 3.3); ``"mean"`` imputes each sample's
    predictive mean, which leaves the mean unchanged and shrinks the variance there.
    Returns ``model`` itself when nothing is pending.
    """
    if Xp is None or len(Xp) == 0:
        return model
    if strategy not in PENDING_STRATEGIES:
        raise ValueError(f"pending strategy must be one of {PENDING_STRATEGIES}, got {strategy!r}")
    Xp = np.atleast_2d(Xp)
    if strategy == "mean":
        return model.augmented(Xp, model.predict(Xp).mean)
    if n_fantasies < 1:
        raise ValueError(f"n_fantasies must be at least 1, got {n_fantasies}")
    return model.augmented(Xp, model.sample_y(Xp, rng, int(n_fantasies)))


def pending_settings(n_fantasies: int, source: str) -> dict[str, Setting]:
    """The ``pending`` / ``n_fantasies`` settings of a plugin that calls :func:`condition_on_pending`."""
    return {
        "pending": Setting("fantasies", "running trials: Monte Carlo fantasies (dngo.txt 3.3) or posterior mean",
                           choices=PENDING_STRATEGIES),
        "n_fantasies": Setting(n_fantasies, f"fantasy sets per hyperparameter sample; EI averages over samples "
                                            f"x fantasies ({source})", domain=POSITIVE_INT),
    }
