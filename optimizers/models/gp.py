"""Gaussian-process core shared by gp_ei, entropy_search, fabolas and mtbo.

Inputs live in the unit cube (``Space.to_unit``; Fabolas appends the log-scaled subset
size s, MTBO a task index). A model is a kernel (:mod:`benchsuite.optimizers.kernels.continuous`)
plus a constant mean and Gaussian noise; its hyperparameters form one row ``theta`` per sample::

    theta = [kernel parameters..., mean, log noise variance]

with the mean and noise on the scale of the standardised targets. Every computation is
batched over a leading sample axis: the kernel returns ``(S, n, m)`` matrices and
:class:`GPPosterior` predicts ``(S, m)`` means and variances in one pass, so predicting
10,000 candidates for 20 hyperparameter samples is a handful of batched matrix products.

Priors of the mean and noise (fabolas.txt Sec. 3.4, "chiefly adopting the choices of the
spearmint toolbox"): a horseshoe with scale 0.1 on the noise variance, N(0, 1) on the constant
mean; the kernel's own priors are in its module.
"""
from __future__ import annotations

import math

import numpy as np

from ..inference import horseshoe
from ..kernels.continuous import Kernel, _normal_logpdf
from .linalg import cho_solve, cholesky_jitter, tri_inv, tri_solve
from .posterior import Posterior

HORSESHOE_SCALE = 0.1  # fabolas.txt Sec. 3.4: horseshoe prior with scale 0.1 on the noise variance
# Support of the log noise variance (standardised targets). Not in the paper: a floor keeps the
# Cholesky factor well conditioned for noiseless functions, a ceiling of e^2 ~ 7x the data variance
# excludes "everything is noise" fits that the horseshoe alone does not rule out.
LOG_NOISE_BOUNDS = (-20.0, 2.0)
MEAN_PRIOR_STD = 1.0  # N(0, 1) on the constant mean of standardised targets (our choice; not stated in the paper)


def horseshoe_log_prior(log_var: np.ndarray, scale: float = HORSESHOE_SCALE) -> np.ndarray:
    """Log density of ``log sigma^2`` when ``sigma^2`` has Spearmint's horseshoe prior.

    The shared horseshoe bound (:mod:`..inference.horseshoe`) with Spearmint's factor 3, plus the
    Jacobian ``log v`` of sampling in ``log v``, which makes the density proper; ``-inf``
    outside :data:`LOG_NOISE_BOUNDS`.
    """
    z = np.asarray(log_var, dtype=float)
    lo, hi = LOG_NOISE_BOUNDS
    zc = np.clip(z, lo, hi)
    out = horseshoe.horseshoe_log_prior(np.exp(zc), scale, factor=3.0) + zc
    return np.where((z >= lo) & (z <= hi), out, -np.inf)


# -- hyperparameter vector: [kernel params, mean, log noise] ---------------------------------------

def n_hyper(kernel: Kernel) -> int:
    """Length of a full hyperparameter row for ``kernel`` (kernel + mean + log noise)."""
    return kernel.n_params + 2


def log_prior(kernel: Kernel, theta: np.ndarray) -> np.ndarray:
    """Log prior of full hyperparameter rows ``(S, n_hyper)``."""
    theta = np.atleast_2d(theta)
    kp = kernel.n_params
    return (kernel.log_prior(theta[:, :kp]) + _normal_logpdf(theta[:, kp], MEAN_PRIOR_STD)
            + horseshoe_log_prior(theta[:, kp + 1]))


def sample_prior(kernel: Kernel, rng: np.random.Generator, n: int) -> np.ndarray:
    """Initial walker positions: kernel prior draws, mean near 0, noise in [1e-6, 1e-2]."""
    return np.column_stack([kernel.sample_prior(rng, n), rng.normal(0.0, 0.1, size=n),
                            rng.uniform(math.log(1e-6), math.log(1e-2), size=n)])


def clip_theta(kernel: Kernel, theta: np.ndarray) -> np.ndarray:
    """Move rows into the support so that they can be evaluated (their prior stays ``-inf``)."""
    theta = np.array(np.atleast_2d(theta), dtype=float, copy=True)
    kp = kernel.n_params
    theta[:, :kp] = kernel.clip(theta[:, :kp])
    theta[:, kp] = np.clip(theta[:, kp], -50, 50)
    theta[:, kp + 1] = np.clip(theta[:, kp + 1], *LOG_NOISE_BOUNDS)
    return theta


def standardise(y: np.ndarray) -> tuple[float, float]:
    """Shift and scale that map ``y`` to zero mean and unit variance (scale 1 if constant)."""
    y = np.asarray(y, dtype=float)
    if y.size == 0:
        return 0.0, 1.0
    sd = float(np.std(y))
    return float(np.mean(y)), (sd if sd > 1e-12 else 1.0)


def train_covariance(kernel: Kernel, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``K(X, X) + noise I`` per sample, ``(S, n, n)`` (standardised units)."""
    theta = np.atleast_2d(theta)
    kp = kernel.n_params
    K = kernel(theta[:, :kp], X, X)
    idx = np.arange(X.shape[0])
    K[:, idx, idx] += np.exp(theta[:, kp + 1])[:, None]
    return K


def train_covariance_lower(kernel: Kernel, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
    """:func:`train_covariance` with only the lower triangle guaranteed (what a Cholesky factor reads)."""
    theta = np.atleast_2d(theta)
    kp = kernel.n_params
    K = kernel.train_lower(theta[:, :kp], X)
    idx = np.arange(X.shape[0])
    K[:, idx, idx] += np.exp(theta[:, kp + 1])[:, None]
    return K


# From this many training points on, predictions solve with the Cholesky factor (a BLAS triangular
# solve, n^2 m flops) instead of multiplying by its explicit inverse (2 n^2 m flops, but one batched
# call): measured on one core, the solve wins from a few hundred points, the matmul below.
TRSM_MIN_N = 150


class GPPosterior:
    """A GP conditioned on data for each of ``S`` hyperparameter samples (batched).

    ``y`` is ``(n,)`` or ``(S, n)`` (one target vector per sample, used for fantasies);
    ``y_shift``/``y_scale`` standardise it (by default computed from ``y``). Predictions and
    covariances come back in the original units of ``y``. Implements the
    :class:`~benchsuite.optimizers.models.posterior.PredictiveModel` contract.
    """

    def __init__(self, kernel: Kernel, X: np.ndarray, y: np.ndarray, theta: np.ndarray,
                 y_shift: float | None = None, y_scale: float | None = None, factor: np.ndarray | None = None):
        self.kernel = kernel
        self.X = np.asarray(X, dtype=float)
        self.theta = np.atleast_2d(np.asarray(theta, dtype=float))
        y = np.asarray(y, dtype=float)
        if y_shift is None or y_scale is None:
            y_shift, y_scale = standardise(y if y.ndim == 1 else y[0])
        self.y_shift, self.y_scale = float(y_shift), float(y_scale)
        S, kp = self.theta.shape[0], kernel.n_params
        self.kparams = self.theta[:, :kp]
        self.mean = self.theta[:, kp]
        self.noise = np.exp(self.theta[:, kp + 1])
        self.y = np.broadcast_to(y, (S, self.X.shape[0])) if y.ndim == 1 else y
        yc = (self.y - self.y_shift) / self.y_scale - self.mean[:, None]
        if factor is not None and factor.shape == (S, self.X.shape[0], self.X.shape[0]) and np.all(np.isfinite(factor)):
            # the MCMC sampler's factors at these very hyperparameters (no jitter was needed there)
            self.L, self.jitter = factor, 0.0
        else:
            self.L, self.jitter = cholesky_jitter(train_covariance_lower(kernel, self.theta, self.X))
        self._Linv: np.ndarray | None = None
        self.alpha = cho_solve(self.L, yc[..., None])[..., 0]

    @property
    def n_samples(self) -> int:
        """Number of hyperparameter samples ``S``."""
        return self.theta.shape[0]

    def subset(self, idx: np.ndarray) -> GPPosterior:
        """The posterior of the samples ``idx`` only, sharing this one's factors (nothing is refactored)."""
        idx = np.asarray(idx, dtype=int)
        sub = object.__new__(GPPosterior)
        sub.kernel, sub.X, sub.y_shift, sub.y_scale, sub.jitter = self.kernel, self.X, self.y_shift, self.y_scale, self.jitter
        for name in ("theta", "kparams", "mean", "noise", "y", "L", "alpha"):
            setattr(sub, name, getattr(self, name)[idx])
        sub._Linv = None if self._Linv is None else self._Linv[idx]
        return sub

    @property
    def noise_var(self) -> np.ndarray:
        """Observation noise variance per sample, original units, ``(S,)``."""
        return self.noise * self.y_scale**2

    @property
    def Linv(self) -> np.ndarray:
        """Inverses of the Cholesky factors, ``(S, n, n)`` (computed on first use)."""
        if self._Linv is None:
            self._Linv = tri_inv(self.L)
        return self._Linv

    def _V(self, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        Ks = self.kernel(self.kparams, self.X, Xs)  # (S, n, m)
        if self.X.shape[0] < TRSM_MIN_N:  # small: one batched matmul beats S triangular solves
            return Ks, self.Linv @ Ks
        return Ks, tri_solve(self.L, Ks)  # large: a triangular solve costs half a matmul with the inverse

    def best(self) -> np.ndarray:
        """Lowest observed (or fantasised) value per sample, ``(S,)`` (dngo.txt Eq. 2)."""
        return self.y.min(axis=1)

    def predict(self, Xs: np.ndarray, chunk: int | None = None) -> Posterior:
        """Posterior mean and (noise-free) variance at ``Xs`` ``(m, D)``, each ``(S, m)``."""
        Xs = np.atleast_2d(np.asarray(Xs, dtype=float))
        if chunk is None:  # keep the (S, n, chunk) intermediates near 16 M numbers
            chunk = max(64, int(1.6e7 // max(1, self.n_samples * self.X.shape[0])))
        means, variances = [], []
        for a in range(0, max(Xs.shape[0], 1), chunk):
            Xc = Xs[a:a + chunk]
            Ks, V = self._V(Xc)
            mu = np.einsum("snm,sn->sm", Ks, self.alpha) + self.mean[:, None]
            kss = self.kernel.diag(self.kparams, Xc)
            var = np.maximum(kss - (V**2).sum(1), 1e-12 * np.maximum(kss, 1e-300))
            means.append(mu * self.y_scale + self.y_shift)
            variances.append(var * self.y_scale**2)
        return Posterior(np.concatenate(means, 1), np.concatenate(variances, 1), self.noise_var)

    def predict_grad(self, Xs: np.ndarray) -> tuple[Posterior, np.ndarray, np.ndarray]:
        """:meth:`predict` at ``Xs`` ``(m, D)`` plus the gradients of mean and variance, each ``(S, m, D)``.

        For kernels with ``cross_grad`` (:class:`Matern52`); the variance gradient is zero where
        the variance sits on its floor.
        """
        Xs = np.atleast_2d(np.asarray(Xs, dtype=float))
        Ks, g, diff, inv2 = self.kernel.cross_grad(self.kparams, self.X, Xs)
        V = self.Linv @ Ks if self.X.shape[0] < TRSM_MIN_N else tri_solve(self.L, Ks)
        W = np.swapaxes(self.Linv, 1, 2) @ V if self.X.shape[0] < TRSM_MIN_N else tri_solve(self.L, V, trans=True)
        mu = np.einsum("snm,sn->sm", Ks, self.alpha) + self.mean[:, None]
        kss = self.kernel.diag(self.kparams, Xs)
        raw = kss - (V**2).sum(1)
        floor = 1e-12 * np.maximum(kss, 1e-300)
        var = np.maximum(raw, floor)
        # dK/dx = g * diff * inv2: contract g with the weights over n first, then the D axis
        dmu = np.einsum("snm,nmd->smd", g * self.alpha[:, :, None], diff) * inv2[:, None, :]
        dvar = -2.0 * np.einsum("snm,nmd->smd", g * W, diff) * inv2[:, None, :]
        dvar[raw <= floor] = 0.0
        s = self.y_scale
        return (Posterior(mu * s + self.y_shift, var * s**2, self.noise_var), dmu * s, dvar * s**2)

    def predict_joint(self, Xa: np.ndarray, Xb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Means at ``Xa`` and ``Xb``, the full posterior covariance of ``Xa`` and the cross covariance.

        Returns ``mu_a (S, ma)``, ``cov_aa (S, ma, ma)``, ``mu_b (S, mb)``, ``cov_ab (S, ma, mb)``,
        original units, noise-free.
        """
        Ka, Va = self._V(Xa)
        Kb, Vb = self._V(Xb)
        mu_a = np.einsum("snm,sn->sm", Ka, self.alpha) + self.mean[:, None]
        mu_b = np.einsum("snm,sn->sm", Kb, self.alpha) + self.mean[:, None]
        Kaa = self.kernel(self.kparams, Xa, Xa)
        Kab = self.kernel(self.kparams, Xa, Xb)
        cov_aa = Kaa - np.swapaxes(Va, 1, 2) @ Va
        cov_ab = Kab - np.swapaxes(Va, 1, 2) @ Vb
        s2 = self.y_scale**2
        return (mu_a * self.y_scale + self.y_shift, cov_aa * s2, mu_b * self.y_scale + self.y_shift, cov_ab * s2)

    def cache(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Precomputed ``(Z, Linv K(X, Z))`` for repeated :meth:`predict_cross` calls against fixed points."""
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        return Z, self._V(Z)[1]

    def predict_cross(self, Xs: np.ndarray, cache: tuple[np.ndarray, np.ndarray]
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean ``(S, m)``, variance ``(S, m)`` at ``Xs`` and posterior covariance ``(S, nz, m)`` with cached ``Z``."""
        Z, Vz = cache
        Ks, V = self._V(Xs)
        mu = np.einsum("snm,sn->sm", Ks, self.alpha) + self.mean[:, None]
        kss = self.kernel.diag(self.kparams, Xs)
        var = np.maximum(kss - (V**2).sum(1), 1e-12 * np.maximum(kss, 1e-300))
        cov = self.kernel(self.kparams, Z, Xs) - np.swapaxes(Vz, 1, 2) @ V
        s2 = self.y_scale**2
        return mu * self.y_scale + self.y_shift, var * s2, cov * s2

    def sample_y(self, Xp: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        """Joint draws of noisy observations at ``Xp``: ``(n, S, p)`` (for Monte Carlo fantasies)."""
        mu, cov, _, _ = self.predict_joint(Xp, Xp[:0])
        cov = cov + self.noise_var[:, None, None] * np.eye(Xp.shape[0])
        L, _ = cholesky_jitter(cov)
        z = rng.standard_normal((n, self.n_samples, Xp.shape[0]))
        return mu[None] + np.einsum("spq,nsq->nsp", L, z)

    def augmented(self, Xp: np.ndarray, yp: np.ndarray) -> GPPosterior:
        """The posterior with extra observations ``yp`` at ``Xp``.

        ``yp`` is ``(S, p)`` (one set per hyperparameter sample, e.g. the posterior mean) or
        ``(F, S, p)`` for ``F`` fantasy sets; then the result has ``F * S`` samples (fantasy-major).
        The hyperparameters are not resampled, as in Snoek et al. (2012).
        """
        yp = np.asarray(yp, dtype=float)
        if yp.ndim == 2:
            yp = yp[None]
        F = yp.shape[0]
        X2 = np.vstack([self.X, Xp])
        y2 = np.concatenate([np.broadcast_to(self.y, (F,) + self.y.shape), yp], axis=2).reshape(F * self.n_samples, -1)
        theta = np.tile(self.theta, (F, 1))
        return GPPosterior(self.kernel, X2, y2, theta, self.y_shift, self.y_scale)
