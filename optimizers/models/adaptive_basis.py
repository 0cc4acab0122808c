"""Bayesian linear regression on a learned basis with a quadratic prior mean (dngo.txt Sec. 3, 3.1.3).

The network is trained elsewhere (``optimizers/dngo.py``); this module sees only its basis
``phi(x)`` (``D`` features) through a callable, and works in standardised target units.

Model (dngo.txt Eqs. 4-9): ``y = w^T phi(x) + eta(x) + noise``, ``w ~ N(0, I / alpha)``, noise
precision ``beta``, prior mean ``eta(x) = lambda + (x - c)^T Lambda (x - c)``. Because ``eta``
is linear in the fixed features ``q(x) = [1, x, x^2]`` with coefficients
``[lambda + sum_k Lambda_k c_k^2, -2 Lambda c, diag Lambda]``, every quantity of Eq. (8)
follows from sufficient statistics computed once per fit in ``O(N D^2)``:

    Phi^T Phi = U diag(s) U^T,  U^T Phi^T y,  U^T Phi^T Q,  Q^T Q,  Q^T y,  y^T y.

With ``d = beta s + alpha``, ``z = U^T Phi^T y~`` and ``m' = beta z / d`` (the weight mean in the
eigenbasis), Eq. (8) is a sum over ``D`` terms, so one log-likelihood evaluation costs
``O(D K)`` after the one ``O(D^3)`` eigendecomposition: the slice sampler never touches N.

Hyperparameters (one row per sample): ``[log alpha, log beta, lambda, c_1..c_K, log Lambda_1..K]``,
sampled jointly by coordinate-wise slice sampling (Neal 2003, :mod:`.slice_sampling`).
Priors: flat on ``log alpha`` and ``log beta`` in ``[-10, 10]`` (the authors' follow-up code,
pybnn/RoBO ``DNGO.marginal_log_likelihood``); ``c_k ~ N(0.5, center_std^2)`` (dngo.txt 3.1.3:
Gaussian at the centre of the cube; the width is ours); horseshoe on ``Lambda_k``
(dngo.txt 3.1.3, :mod:`..inference.horseshoe`, sampled in log space with its Jacobian);
``lambda ~ N(0, offset_std^2)`` (ours: the paper names no prior for the offset).

:class:`AdaptiveBasisPosterior` implements the posterior contract
(:mod:`.posterior`): adding ``p`` fantasised observations updates ``Phi^T Phi`` by
``Phi_p^T Phi_p`` and ``Phi^T y~`` per fantasy set, ``O(p D^2 + D^3)`` in all, independent of N.

:class:`LaplaceLogistic` is the constraint model of dngo.txt Sec. 3.2: Bayesian logistic
regression on a basis with a Gaussian prior, its posterior approximated by Laplace
(MAP by Newton's method, covariance the inverse Hessian), the predictive probability by
the probit approximation (MacKay 1992).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..inference.horseshoe import horseshoe_log_prior
from ..inference.slice_sampling import slice_sample_1d
from .posterior import Posterior

Features = Callable[[np.ndarray], np.ndarray]  # unit-cube inputs (m, K) -> basis (m, D)
LOG_PRECISION_BOUNDS = (-10.0, 10.0)  # pybnn DNGO.marginal_log_likelihood: flat prior on log alpha, log beta
LOG_LAMBDA_BOUNDS = (-15.0, 5.0)  # ours: keeps the quadratic's scales finite in standardised units
_LOG_2PI = math.log(2.0 * math.pi)


def quadratic_features(X: np.ndarray) -> np.ndarray:
    """``q(x) = [1, x, x^2]``, the features in which the quadratic mean is linear: ``(m, 2K + 1)``."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    return np.hstack([np.ones((X.shape[0], 1)), X, X**2])


def quadratic_coefficients(theta: np.ndarray, K: int) -> np.ndarray:
    """Coefficients ``(R, 2K + 1)`` of ``eta`` on :func:`quadratic_features` for hyperparameter rows."""
    theta = np.atleast_2d(theta)
    lam, c, Lam = theta[:, 2], theta[:, 3:3 + K], np.exp(theta[:, 3 + K:3 + 2 * K])
    return np.hstack([(lam + (Lam * c**2).sum(1))[:, None], -2.0 * Lam * c, Lam])


@dataclass(frozen=True)
class QuadraticPrior:
    """Priors of the hyperparameters (see the module docstring for sources)."""

    center_std: float = 0.25
    offset_std: float = 1.0
    horseshoe_scale: float = 1.0

    def log_prior(self, theta: np.ndarray, K: int) -> float:
        """Log prior density of one row ``[log alpha, log beta, lambda, c, log Lambda]``."""
        la, lb = theta[0], theta[1]
        lo, hi = LOG_PRECISION_BOUNDS
        if not (lo <= la <= hi and lo <= lb <= hi):
            return -math.inf
        ll = theta[3 + K:3 + 2 * K]
        if np.any(ll < LOG_LAMBDA_BOUNDS[0]) or np.any(ll > LOG_LAMBDA_BOUNDS[1]):
            return -math.inf
        c = theta[3:3 + K]
        out = -0.5 * (theta[2] / self.offset_std) ** 2
        out += -0.5 * float(np.sum(((c - 0.5) / self.center_std) ** 2))
        # horseshoe on Lambda_k, plus log Lambda_k: the Jacobian of sampling in log space
        out += float(np.sum(horseshoe_log_prior(np.exp(ll), self.horseshoe_scale) + ll))
        return out


class BasisStatistics:
    """The sufficient statistics of Eq. (8) for a basis matrix ``Phi`` and standardised targets."""

    def __init__(self, Phi: np.ndarray, X: np.ndarray, y: np.ndarray):
        Phi = np.asarray(Phi, dtype=np.float64)  # float64 throughout: pybnn's float32 Phi^T Phi goes singular
        Q = quadratic_features(X)
        y = np.asarray(y, dtype=float)
        self.N, self.D = Phi.shape
        self.K = X.shape[1]
        self.PtP = Phi.T @ Phi
        self.Pty = Phi.T @ y
        self.PtQ = Phi.T @ Q
        self.QtQ = Q.T @ Q
        self.Qty = Q.T @ y
        self.yty = float(y @ y)
        self._eig()

    def _eig(self) -> None:
        s, U = np.linalg.eigh(self.PtP)
        self.s, self.U = np.maximum(s, 0.0), U
        self.UtPty = U.T @ self.Pty
        self.UtPtQ = U.T @ self.PtQ

    def log_likelihood(self, theta: np.ndarray) -> float:
        """Eq. (8): ``log p(y | X, alpha, beta, eta)`` for one hyperparameter row, in O(D K)."""
        alpha, beta = math.exp(theta[0]), math.exp(theta[1])
        w = quadratic_coefficients(theta, self.K)[0]
        yy = self.yty - 2.0 * float(w @ self.Qty) + float(w @ self.QtQ @ w)  # ||y~||^2
        z = self.UtPty - self.UtPtQ @ w  # U^T Phi^T y~
        d = beta * self.s + alpha
        m = beta * z / d
        fit = max(yy - 2.0 * float(m @ z) + float(self.s @ m**2), 0.0)  # ||y~ - Phi m||^2
        return (0.5 * self.D * theta[0] + 0.5 * self.N * theta[1] - 0.5 * self.N * _LOG_2PI
                - 0.5 * beta * fit - 0.5 * alpha * float(m @ m) - 0.5 * float(np.log(d).sum()))


def initial_theta(K: int) -> np.ndarray:
    """Chain start: alpha 1, beta 1000 (pybnn DNGO defaults), no offset, centre 0.5, small Lambda."""
    return np.concatenate([[0.0, math.log(1000.0), 0.0], np.full(K, 0.5), np.full(K, math.log(0.1))])


def constant_mean_theta(theta: np.ndarray, K: int) -> np.ndarray:
    """``theta`` with the quadratic switched off: centre 0.5, ``Lambda_kk`` at the lower bound e^-15 (about 3e-7)."""
    theta = np.array(theta, dtype=float)
    theta[3:3 + K] = 0.5
    theta[3 + K:3 + 2 * K] = LOG_LAMBDA_BOUNDS[0]
    return theta


def slice_sweeps(stats: BasisStatistics, prior: QuadraticPrior, theta0: np.ndarray, rng: np.random.Generator,
                 n_samples: int, n_burn: int = 0, width: float = 1.0, quadratic: bool = True) -> np.ndarray:
    """``n_samples`` coordinate-wise slice-sampling sweeps after ``n_burn``: rows ``(n_samples, 3 + 2K)``.

    ``quadratic=False`` samples only ``log alpha``, ``log beta`` and the offset ``lambda`` (a
    constant prior mean, for the component study; not the paper's Sec. 3.1.3): the centre and
    scales are held at :func:`constant_mean_theta`'s values.
    """
    K = stats.K
    theta = np.array(theta0, dtype=float) if quadratic else constant_mean_theta(theta0, K)
    n_coords = theta.size if quadratic else 3

    def logpost(t: np.ndarray) -> float:
        lp = prior.log_prior(t, K)
        return lp + stats.log_likelihood(t) if math.isfinite(lp) else -math.inf

    lp = logpost(theta)
    if not math.isfinite(lp):  # a carried-over state outside the support: restart
        theta = initial_theta(K) if quadratic else constant_mean_theta(initial_theta(K), K)
        lp = logpost(theta)
    out = np.empty((int(n_samples), theta.size))
    for sweep in range(int(n_burn) + int(n_samples)):
        for j in range(n_coords):
            def f(v: float, j: int = j) -> float:
                t = theta.copy()
                t[j] = v
                return logpost(t)

            # c lives in the unit cube: a narrower starting interval wastes fewer evaluations
            w = 0.25 if 3 <= j < 3 + K else width
            theta[j], lp = slice_sample_1d(f, theta[j], rng, width=w, logp_x0=lp)
        if sweep >= n_burn:
            out[sweep - n_burn] = theta
    return out


class AdaptiveBasisPosterior:
    """BLR posteriors on one basis for ``R`` rows (hyperparameter samples x fantasy sets).

    Targets are standardised with ``y_shift``/``y_scale``; predictions, draws and
    :meth:`best` are in original units. Implements the
    :class:`~benchsuite.optimizers.models.posterior.PredictiveModel` contract.
    """

    def __init__(self, features: Features, stats: BasisStatistics, theta: np.ndarray,
                 y_shift: float, y_scale: float, y_min_std: float | np.ndarray,
                 t: np.ndarray | None = None):
        self.features, self.stats = features, stats
        self.theta = np.atleast_2d(np.asarray(theta, dtype=float))
        self.y_shift, self.y_scale = float(y_shift), float(y_scale)
        R, K = self.theta.shape[0], stats.K
        self.alpha, self.beta = np.exp(self.theta[:, 0]), np.exp(self.theta[:, 1])
        self.w = quadratic_coefficients(self.theta, K)  # (R, 2K + 1)
        # Phi^T y~ per row, in the original basis (fantasies add to it)
        self.t = stats.Pty[None, :] - self.w @ stats.PtQ.T if t is None else np.asarray(t, dtype=float)
        self.d = self.beta[:, None] * stats.s[None, :] + self.alpha[:, None]  # (R, D)
        self.m = self.beta[:, None] * (self.t @ stats.U) / self.d  # weight means in the eigenbasis
        self.y_min_std = np.broadcast_to(np.asarray(y_min_std, dtype=float), (R,)).copy()

    @property
    def n_samples(self) -> int:
        """Number of rows ``R``."""
        return self.theta.shape[0]

    def _predict_std(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        G = self.features(X) @ self.stats.U  # (m, D)
        mean = self.m @ G.T + self.w @ quadratic_features(X).T  # Eq. (4), (R, m)
        var = (1.0 / self.d) @ (G**2).T  # phi^T K^-1 phi of Eq. (5), latent part
        return mean, var

    def predict(self, X: np.ndarray) -> Posterior:
        """Eqs. (4)-(5) at ``X``: mean, latent variance ``(R, m)``, noise ``1/beta`` ``(R,)``; original units."""
        mean, var = self._predict_std(X)
        s2 = self.y_scale**2
        return Posterior(mean * self.y_scale + self.y_shift, var * s2, s2 / self.beta)

    def best(self) -> np.ndarray:
        """Lowest observed (or fantasised) value per row, ``(R,)``."""
        return self.y_min_std * self.y_scale + self.y_shift

    def sample_y(self, Xp: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        """Joint draws of noisy outcomes at ``Xp`` per row: ``(n, R, p)``, original units."""
        Xp = np.atleast_2d(np.asarray(Xp, dtype=float))
        p = Xp.shape[0]
        G = self.features(Xp) @ self.stats.U
        mean, _ = self._predict_std(Xp)
        out = np.empty((int(n), self.n_samples, p))
        eye = np.eye(p)
        for r in range(self.n_samples):
            cov = (G / self.d[r]) @ G.T + eye / self.beta[r]
            L = np.linalg.cholesky(cov + 1e-12 * np.trace(cov) / p * eye)
            out[:, r] = mean[r] + rng.standard_normal((int(n), p)) @ L.T
        return out * self.y_scale + self.y_shift

    def augmented(self, Xp: np.ndarray, yp: np.ndarray) -> AdaptiveBasisPosterior:
        """The posterior with ``yp`` (``(R, p)`` or ``(F, R, p)``, original units) at ``Xp``; O(p D^2 + D^3).

        Fantasy sets are fantasy-major (``F * R`` rows); alpha, beta and the prior mean are
        kept, as Snoek et al. (2012) keep the GP's hyperparameters.
        """
        Xp = np.atleast_2d(np.asarray(Xp, dtype=float))
        yp = np.asarray(yp, dtype=float)
        if yp.ndim == 2:
            yp = yp[None]
        F = yp.shape[0]
        ys = (yp - self.y_shift) / self.y_scale  # (F, R, p)
        Phi_p = self.features(Xp)
        resid = ys - (self.w @ quadratic_features(Xp).T)[None]  # y~ at the pending points
        t = (self.t[None] + resid @ Phi_p).reshape(F * self.n_samples, -1)
        stats = _extended(self.stats, Phi_p, Xp)
        y_min = np.minimum(self.y_min_std[None], ys.min(axis=2)).reshape(-1)
        return AdaptiveBasisPosterior(self.features, stats, np.tile(self.theta, (F, 1)), self.y_shift,
                                      self.y_scale, y_min, t)


def _extended(stats: BasisStatistics, Phi_p: np.ndarray, Xp: np.ndarray) -> BasisStatistics:
    """Statistics with extra rows of Phi whose targets are carried per row elsewhere (Phi^T Phi only)."""
    new = object.__new__(BasisStatistics)
    new.__dict__.update(stats.__dict__)
    new.N = stats.N + Phi_p.shape[0]
    new.PtP = stats.PtP + Phi_p.T @ Phi_p
    new.PtQ = stats.PtQ + Phi_p.T @ quadratic_features(Xp)
    new._eig()
    # the targets of the new rows are per fantasy set, so target statistics no longer apply
    new.Pty = new.Qty = new.UtPty = None
    new.yty = math.nan
    return new


class LaplaceLogistic:
    """Bayesian logistic regression on a basis (with bias), Laplace approximation (dngo.txt Sec. 3.2)."""

    def __init__(self, Phi: np.ndarray, c: np.ndarray, prior_precision: float = 1.0, max_iter: int = 50):
        A = np.hstack([np.asarray(Phi, dtype=float), np.ones((len(Phi), 1))])
        c = np.asarray(c, dtype=float)
        P = prior_precision * np.eye(A.shape[1])
        w = np.zeros(A.shape[1])
        for _ in range(int(max_iter)):  # Newton's method on the log posterior (concave)
            pr = 1.0 / (1.0 + np.exp(-(A @ w)))
            grad = A.T @ (c - pr) - P @ w
            H = (A * (pr * (1 - pr))[:, None]).T @ A + P
            step = np.linalg.solve(H, grad)
            w = w + step
            if np.max(np.abs(step)) < 1e-8:
                break
        pr = 1.0 / (1.0 + np.exp(-(A @ w)))
        H = (A * (pr * (1 - pr))[:, None]).T @ A + P
        self.w_map = w
        self.cov = np.linalg.inv(H)  # the Laplace approximation's covariance

    def prob(self, Phi: np.ndarray) -> np.ndarray:
        """Predictive ``P(c = 1 | x)`` (probit approximation of the logistic-Gaussian integral)."""
        A = np.hstack([np.asarray(Phi, dtype=float), np.ones((len(Phi), 1))])
        mu = A @ self.w_map
        var = np.einsum("md,de,me->m", A, self.cov, A)
        return 1.0 / (1.0 + np.exp(-mu / np.sqrt(1.0 + math.pi * var / 8.0)))
