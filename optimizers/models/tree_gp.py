"""Jenatton et al.'s tree-structured surrogate (TreeBO; ICML 2017): fitting its hyperparameters.

The model is one GP whose covariance, :class:`~benchsuite.optimizers.kernels.tree.TreeKernel`, is that
of independent GPs per leaf plus a Bayesian linear model on the variables shared along the tree's
paths (the weights integrated out); conditioned on data it is the suite's
:class:`~benchsuite.optimizers.models.gp.GPPosterior`, so predictions, running trials and fantasies
need nothing of their own.

Hyperparameters (the leaf amplitude and length scales, the weights' prior variance, the noise) are
point estimates maximising the log marginal likelihood (type-II maximum likelihood) over a box, by
L-BFGS-B from the previous estimate, the box's centre and a few random starts. How the paper sets
them is not in the part of its text we could read (its abstract and introduction); this is our
choice, and so are the boxes and the number of starts. The constant mean is the mean of the
observations (0 after standardising).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize

from ..kernels.tree import TreeKernel
from . import gp
from .linalg import CholeskyError, cholesky_jitter, log_marginal_likelihood

#: log box of the noise variance (standardised targets; our choice: a network's validation loss
#: changes between trainings, but rarely by more than its spread over networks)
LOG_NOISE_BOUNDS = (math.log(1e-4), math.log(1.0))


def theta_bounds(kernel: TreeKernel) -> list[tuple[float, float]]:
    """Box of a full hyperparameter row ``[kernel params..., mean, log noise]`` (the mean is fixed at 0)."""
    return kernel.bounds() + [(0.0, 0.0), LOG_NOISE_BOUNDS]


def log_evidence(kernel: TreeKernel, theta: np.ndarray, X: np.ndarray, y_std: np.ndarray) -> float:
    """Log marginal likelihood of standardised targets ``y_std`` at rows ``X`` for one row ``theta``."""
    K = gp.train_covariance(kernel, np.atleast_2d(theta), X)[0]
    try:
        L, _ = cholesky_jitter(K)
    except CholeskyError:
        return -math.inf
    mean = float(np.atleast_2d(theta)[0, kernel.n_params])
    return float(log_marginal_likelihood(L, y_std - mean))


def fit(kernel: TreeKernel, X: np.ndarray, y: np.ndarray, rng: np.random.Generator, restarts: int = 3,
        start: np.ndarray | None = None, maxiter: int = 100) -> np.ndarray:
    """Type-II maximum-likelihood hyperparameters ``(n_hyper,)`` for observations ``y`` (any units) at ``X``.

    Starts: ``start`` (the previous estimate) when given, the box's centre, and ``restarts`` uniform
    draws in the box; the best local optimum wins.
    """
    shift, scale = gp.standardise(y)
    ys = (np.asarray(y, dtype=float) - shift) / scale
    bounds = theta_bounds(kernel)
    free = [k for k, (lo, hi) in enumerate(bounds) if hi > lo]
    lo = np.array([bounds[k][0] for k in free])
    hi = np.array([bounds[k][1] for k in free])
    full = np.zeros(len(bounds))

    def negative(z: np.ndarray) -> float:
        full[free] = z
        v = log_evidence(kernel, full, X, ys)
        return 1e10 if not math.isfinite(v) else -v

    starts = [0.5 * (lo + hi)] + [rng.uniform(lo, hi) for _ in range(int(restarts))]
    if start is not None:
        starts.insert(0, np.clip(np.asarray(start, dtype=float)[free], lo, hi))
    best_z, best_v = starts[0], math.inf
    for z0 in starts:
        res = minimize(negative, z0, method="L-BFGS-B", bounds=list(zip(lo, hi)), options={"maxiter": maxiter})
        if res.fun < best_v:
            best_z, best_v = res.x, float(res.fun)
    out = np.zeros(len(bounds))
    out[free] = best_z
    return out


def posterior(kernel: TreeKernel, X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> gp.GPPosterior:
    """The model conditioned on ``y`` at ``X`` with hyperparameters ``theta`` (standardised as :func:`fit`)."""
    shift, scale = gp.standardise(y)
    return gp.GPPosterior(kernel, X, y, np.atleast_2d(theta), shift, scale)
