"""Sparse Bayesian linear regression with the horseshoe prior, sampled by Gibbs (BOCS's model).

Model (Carvalho et al. 2010; the Gibbs scheme of Makalic and Schmidt 2016, as used by
BOCS, Baptista and Poloczek 2018, Sec. 3.1):

    y = b0 + X beta + e,  e ~ N(0, sigma^2),
    beta_j ~ N(0, sigma^2 tau^2 lambda_j^2),  lambda_j ~ C+(0, 1),  tau ~ C+(0, 1),
    p(sigma^2) ~ 1 / sigma^2,

with inverse-gamma auxiliaries nu_j, xi making every conditional a standard
distribution. The intercept has a flat prior and is integrated out by centring y and the
columns of X; :meth:`HorseshoeRegression.intercept` gives its conditional mean for a beta.
beta is drawn by Cholesky of ``X^T X + D^-1`` when p <= n and by the O(n^2 p) algorithm
of Bhattacharya, Chakraborty and Mallick (2016) when p > n, which is the common case
for second-order BOCS features.

Unlike BOCS's code, which restarts a 1000-step chain at every iteration, the sampler
keeps its state between calls (:meth:`HorseshoeRegression.fit` with ``warm=True``), so
a few steps per iteration suffice after the first burn-in.
"""
from __future__ import annotations

import numpy as np


def _inv_gamma(rng: np.random.Generator, shape: float | np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """Draw from InvGamma(shape, scale) (density proportional to x^(-shape-1) exp(-scale/x))."""
    return scale / rng.gamma(shape, 1.0, size=np.shape(scale) or None)


class HorseshoeRegression:
    """Gibbs sampler for linear regression with a horseshoe prior; state persists across fits."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.p: int | None = None
        self.beta = self.lam2 = self.nu = None
        self.tau2 = self.xi = self.sigma2 = 1.0
        self.y_mean = 0.0
        self.x_mean: np.ndarray | None = None
        self._work: tuple[np.ndarray, np.ndarray] | None = None  # the draw's work arrays (see _buffers)
        self._work_key: tuple | None = None

    def _reset(self, p: int) -> None:
        self.p = p
        self.beta = np.zeros(p)
        self.lam2 = np.ones(p)
        self.nu = np.ones(p)
        self.tau2, self.xi, self.sigma2 = 1.0, 1.0, 1.0

    def _buffers(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Two work arrays laid out as ``X`` (kept while its shape and layout stay): ``X / s`` and ``X / s * d``.

        The same values as allocating them at every draw, but freshly allocated arrays of this size
        (36,050 features x 270 rows for BOCS-SA3 on wMaxSAT60: 78 MB each) cost their page faults at every
        sweep. The layout must be ``X``'s, as ``X / s`` gives (BOCS's features are Fortran-ordered): the
        product's BLAS path, and so its last bits, depend on it."""
        key = (X.shape, X.strides)
        if self._work is None or self._work_key != key:
            self._work, self._work_key = (np.empty_like(X), np.empty_like(X)), key
        return self._work

    def _draw_beta(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        n, p = X.shape
        d = self.sigma2 * self.tau2 * self.lam2  # prior variances of beta
        d = np.clip(d, 1e-300, 1e300)
        rng = self.rng
        if p > n:
            # Bhattacharya et al. (2016): exact draw from N(A^-1 X^T y, sigma^2 A^-1) in O(n^2 p)
            s = np.sqrt(self.sigma2)
            phi, phi_d = self._buffers(X)
            np.divide(X, s, out=phi)
            u = rng.standard_normal(p) * np.sqrt(d)
            v = phi @ u + rng.standard_normal(n)
            np.multiply(phi, d, out=phi_d)
            m = phi_d @ phi.T + np.eye(n)
            w = np.linalg.solve(m, y / s - v)
            return u + d * (phi.T @ w)
        a = X.T @ X + np.diag(1.0 / d * self.sigma2)
        chol = np.linalg.cholesky(a)
        mean = np.linalg.solve(chol.T, np.linalg.solve(chol, X.T @ y))
        noise = np.linalg.solve(chol.T, rng.standard_normal(p))
        return mean + np.sqrt(self.sigma2) * noise

    def step(self, X: np.ndarray, y: np.ndarray) -> None:
        """One sweep of the Gibbs sampler on centred targets ``y``."""
        n, p = X.shape
        rng = self.rng
        self.beta = self._draw_beta(X, y)
        resid = y - X @ self.beta
        b2 = self.beta**2
        shrink = np.sum(b2 / (self.tau2 * self.lam2))
        self.sigma2 = float(_inv_gamma(rng, (n + p) / 2.0, (resid @ resid + shrink) / 2.0))
        self.sigma2 = min(max(self.sigma2, 1e-12), 1e12)
        self.lam2 = _inv_gamma(rng, 1.0, 1.0 / self.nu + b2 / (2.0 * self.tau2 * self.sigma2))
        self.lam2 = np.clip(self.lam2, 1e-12, 1e12)
        self.tau2 = float(_inv_gamma(rng, (p + 1) / 2.0, 1.0 / self.xi + np.sum(b2 / self.lam2) / (2.0 * self.sigma2)))
        self.tau2 = min(max(self.tau2, 1e-12), 1e12)
        self.nu = _inv_gamma(rng, 1.0, 1.0 + 1.0 / self.lam2)
        self.xi = float(_inv_gamma(rng, 1.0, 1.0 + 1.0 / self.tau2))

    def fit(self, X: np.ndarray, y: np.ndarray, n_steps: int, warm: bool = True) -> np.ndarray:
        """Run ``n_steps`` sweeps (from the previous state when ``warm``) and return the last beta."""
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        if not warm or self.p != X.shape[1]:
            self._reset(X.shape[1])
        self.y_mean = float(y.mean())
        self.x_mean = X.mean(axis=0)
        xc, yc = X - self.x_mean, y - self.y_mean
        for _ in range(max(int(n_steps), 1)):
            self.step(xc, yc)
        return self.beta.copy()

    def intercept(self, beta: np.ndarray | None = None) -> float:
        """Intercept ``b0`` that goes with ``beta`` (uncentred features): mean(y) - mean(X) beta."""
        return self.y_mean - float(self.x_mean @ (self.beta if beta is None else beta))

    def predict(self, X: np.ndarray, beta: np.ndarray | None = None) -> np.ndarray:
        """Predictions ``b0 + X beta`` for a drawn (or the current) beta."""
        beta = self.beta if beta is None else beta
        return self.intercept(beta) + np.asarray(X, dtype=float) @ beta
