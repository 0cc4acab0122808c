"""Acquisition functions shared by the model-based plugins (minimisation throughout).

Each takes predictive means and standard deviations of any shape; averaging over
hyperparameter samples (Spearmint, Fabolas 3.4, COMBO) is ``.mean(axis=0)`` over a
leading sample axis, done by the caller or by :func:`integrated_ei`.
"""
from __future__ import annotations

import numpy as np
from scipy.special import erfc

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


def integrated_ei(means: np.ndarray, stds: np.ndarray, bests: np.ndarray | float, xi: float = 0.0) -> np.ndarray:
    """EI averaged over hyperparameter samples: inputs ``(S, m)``, ``bests`` ``(S,)`` or scalar."""
    bests = np.asarray(bests, dtype=float)
    if bests.ndim == 1:
        bests = bests[:, None]
    return expected_improvement(means, stds, bests, xi).mean(axis=0)
