"""Acquisition functions shared by the model-based plugins (minimisation throughout).

:func:`expected_improvement` is the closed form on explicit means and standard
deviations. The plugins call :func:`integrated_ei`, which takes a
:class:`~benchsuite.optimizers.models.posterior.Posterior` (mean and *variance* per sample) and
averages EI over its samples (Spearmint, Fabolas 3.4, COMBO, DNGO 3.3), so that no
caller can hand it a variance where a standard deviation was meant, or the reverse.
"""
from __future__ import annotations

import numpy as np
from scipy.special import erfc

from ..models.posterior import Posterior

_SQRT2 = np.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def expected_improvement(mean: np.ndarray, std: np.ndarray, best: float | np.ndarray, xi: float = 0.0) -> np.ndarray:
    """Expected improvement below ``best`` (Mockus; Jones et al. 1998), vectorised.

    ``EI = (best - mu - xi) Phi(z) + sigma phi(z)``, ``z = (best - mu - xi) / sigma``.
    """
    mean = np.asarray(mean, dtype=float)
    std = np.maximum(np.asarray(std, dtype=float), 1e-12)
    imp = np.asarray(best, dtype=float) - mean - xi
    z = imp / std
    cdf = 0.5 * erfc(-z / _SQRT2)
    pdf = _INV_SQRT_2PI * np.exp(-0.5 * z**2)
    return np.maximum(imp * cdf + std * pdf, 0.0)


def integrated_ei(post: Posterior, bests: np.ndarray | float, xi: float = 0.0,
                  include_noise: bool = False) -> np.ndarray:
    """EI averaged over a posterior's ``S`` samples, ``(m,)``; ``bests`` is ``(S,)`` or a scalar.

    ``include_noise`` uses the noisy predictive variance (dngo.txt Eq. 5) instead of the latent one.
    """
    if not isinstance(post, Posterior):
        raise TypeError(f"integrated_ei takes a Posterior (mean and variance per sample), got {type(post).__name__}")
    bests = np.asarray(bests, dtype=float)
    if bests.ndim == 1:
        bests = bests[:, None]
    var = post.predictive_variance() if include_noise else post.variance
    return expected_improvement(post.mean, np.sqrt(np.maximum(var, 0.0)), bests, xi).mean(axis=0)


def integrated_ei_grad(post: Posterior, dmean: np.ndarray, dvar: np.ndarray,
                       bests: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`integrated_ei` (latent variance, ``xi = 0``) and its gradient ``(m, D)`` in the inputs.

    ``dmean``/``dvar`` ``(S, m, D)`` are the gradients of the posterior mean and variance
    (:meth:`~benchsuite.optimizers.models.gp.GPPosterior.predict_grad`); per sample
    ``dEI = -Phi(z) dmu + phi(z) dsigma``, ``dsigma = dvar / (2 sigma)``.
    """
    bests = np.asarray(bests, dtype=float)
    if bests.ndim == 1:
        bests = bests[:, None]
    raw_std = np.sqrt(np.maximum(post.variance, 0.0))
    std = np.maximum(raw_std, 1e-12)
    imp = bests - post.mean
    z = imp / std
    cdf = 0.5 * erfc(-z / _SQRT2)
    pdf = _INV_SQRT_2PI * np.exp(-0.5 * z**2)
    ei = imp * cdf + std * pdf
    pos = ei > 0
    dstd = np.where((raw_std > 1e-12)[..., None], dvar / (2.0 * std[..., None]), 0.0)
    g = -cdf[..., None] * dmean + pdf[..., None] * dstd
    g = np.where(pos[..., None], g, 0.0)
    return np.maximum(ei, 0.0).mean(axis=0), g.mean(axis=0)
