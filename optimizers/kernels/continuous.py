"""GP kernels on the unit cube, and on a fidelity or task axis beside it (gp_ei, entropy_search, fabolas, mtbo).

A kernel maps its parameter rows ``(S, n_params)`` and inputs to ``(S, n, m)`` covariance
matrices, batched over hyperparameter samples; it carries its own prior (``log_prior``,
``sample_prior``, ``clip``). The model around it (constant mean, noise, the posterior) is
:mod:`benchsuite.optimizers.models.gp`.

Priors (fabolas.txt Sec. 3.4, "chiefly adopting the choices of the spearmint toolbox"):
uniform on log length scales in [-10, 2]; lognormal(0, 1) on the amplitude (so its log is
N(0, 1)). Kernels of the fidelity axis (Fabolas' finite-rank kernel, MTBO's task kernel) carry
N(0, 1) priors on their log weights / Cholesky entries, as RoBO's ``EnvPrior`` and ``MTBOPrior`` do.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

LOG_LS_BOUNDS = (-10.0, 2.0)  # fabolas.txt Sec. 3.4 (Spearmint): uniform prior on log length scales
# Spearmint's own code (HIPS/Spearmint, kernels/matern.py) puts a top-hat on the length scale itself,
# uniform on (0, 10] in the unit cube: in log space a density proportional to the length scale,
# which favours long length scales where the log-uniform prior of RoBO and fabolas.txt is flat.
# Its lower end keeps LOG_LS_BOUNDS' floor (a length scale of e^-10 is already a white-noise fit).
TOPHAT_LS_MAX = 10.0
LENGTH_SCALE_PRIORS = ("log_uniform", "tophat")
_LOG_2PI = math.log(2 * math.pi)


def _normal_logpdf(z: np.ndarray, std: float = 1.0) -> np.ndarray:
    return -0.5 * (z / std) ** 2 - math.log(std) - 0.5 * _LOG_2PI


def _uniform_logpdf(z: np.ndarray, lo: float, hi: float) -> np.ndarray:
    inside = np.all((z >= lo) & (z <= hi), axis=-1)
    return np.where(inside, -z.shape[-1] * math.log(hi - lo), -np.inf)


def _matern52_of_r(r: np.ndarray) -> np.ndarray:
    """(1 + u + u^2 / 3) exp(-u) with u = sqrt(5) r, the Matern-5/2 shape at scaled distances ``r``
    (overwritten: the buffer is reused), for the full and the lower-triangle covariances alike."""
    u = r
    u *= math.sqrt(5.0)
    e = np.exp(-u)
    poly = u * u
    poly *= 1.0 / 3.0
    poly += u
    poly += 1.0
    poly *= e
    return poly

class Kernel(ABC):
    """A covariance function with a vector of (log-scale) parameters per sample."""

    @property
    @abstractmethod
    def n_params(self) -> int:
        """Number of parameters."""

    @abstractmethod
    def param_names(self) -> list[str]:
        """Names, for diagnostics."""

    @abstractmethod
    def log_prior(self, P: np.ndarray) -> np.ndarray:
        """Log prior density of parameter rows ``P`` ``(S, p)``; ``-inf`` outside the support."""

    @abstractmethod
    def sample_prior(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` draws from the prior, ``(n, p)``."""

    @abstractmethod
    def __call__(self, P: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """Covariance matrices ``(S, n1, n2)`` between inputs ``X1`` ``(n1, D)`` and ``X2`` ``(n2, D)``."""

    @abstractmethod
    def diag(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Prior variances ``(S, n)``."""

    def clip(self, P: np.ndarray) -> np.ndarray:
        """Parameters moved into the support (used to evaluate walkers the prior rejects)."""
        return P

    def train_lower(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``K(X, X)`` ``(S, n, n)`` of which only the lower triangle (with the diagonal) is guaranteed.

        What a Cholesky factorisation reads; kernels override it to skip the upper half.
        """
        return self(P, X, X)


class Matern52(Kernel):
    """ARD Matern-5/2 on columns ``dims`` (fabolas.txt Eq. 1), with an optional amplitude.

    Parameters: ``[log amplitude] + [log length scale per dim]``; distance
    ``r^2 = sum_d (x_d - x'_d)^2 / l_d^2``.
    """

    def __init__(self, dims: Sequence[int], amplitude: bool = True, length_scale_prior: str = "log_uniform"):
        if length_scale_prior not in LENGTH_SCALE_PRIORS:
            raise ValueError(f"length_scale_prior must be one of {LENGTH_SCALE_PRIORS}, got {length_scale_prior!r}")
        self.dims = np.asarray(list(dims), dtype=int)
        self.amplitude = bool(amplitude)
        self.length_scale_prior = length_scale_prior
        self.log_ls_bounds = (LOG_LS_BOUNDS if length_scale_prior == "log_uniform"
                              else (LOG_LS_BOUNDS[0], math.log(TOPHAT_LS_MAX)))

    @property
    def n_params(self) -> int:
        return len(self.dims) + int(self.amplitude)

    def param_names(self) -> list[str]:
        return (["log_amp"] if self.amplitude else []) + [f"log_ls{d}" for d in self.dims]

    def _split(self, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        P = np.atleast_2d(P)
        if self.amplitude:
            return np.exp(P[:, 0]), np.exp(P[:, 1:])
        return np.ones(P.shape[0]), np.exp(P)

    def log_prior(self, P: np.ndarray) -> np.ndarray:
        P = np.atleast_2d(P)
        z = P[:, int(self.amplitude):]
        lp = _uniform_logpdf(z, *self.log_ls_bounds)
        if self.length_scale_prior == "tophat":  # uniform in l: the Jacobian l = e^z, up to a constant
            lp = lp + z.sum(1)
        if self.amplitude:
            lp = lp + _normal_logpdf(P[:, 0])  # lognormal(0, 1) on the amplitude
        return lp

    def sample_prior(self, rng: np.random.Generator, n: int) -> np.ndarray:
        # Length scales start in [-3, 1] (lengths 0.05..2.7 in the unit cube) rather than the whole
        # [-10, 2] support, so that walkers begin where the likelihood is informative; the prior
        # itself is the full uniform.
        ls = rng.uniform(-3.0, 1.0, size=(n, len(self.dims)))
        if self.amplitude:
            return np.column_stack([rng.normal(0.0, 1.0, size=n), ls])
        return ls

    def clip(self, P: np.ndarray) -> np.ndarray:
        P = np.array(P, dtype=float, copy=True)
        P[:, int(self.amplitude):] = np.clip(P[:, int(self.amplitude):], *self.log_ls_bounds)
        if self.amplitude:
            P[:, 0] = np.clip(P[:, 0], -10, 10)
        return P

    def __call__(self, P: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        # inputs are (n, D), shared by every sample, or (S, n, D), one per sample (warped inputs)
        amp, ls = self._split(P)
        A = X1[..., self.dims] / ls[:, None, :]
        B = X2[..., self.dims] / ls[:, None, :]
        r2 = (A**2).sum(-1)[:, :, None] + (B**2).sum(-1)[:, None, :] - 2.0 * np.matmul(A, np.swapaxes(B, 1, 2))
        # in place on one buffer: with u = sqrt(5) r, k = amp (1 + u + u^2 / 3) exp(-u)
        np.maximum(r2, 0.0, out=r2)
        poly = _matern52_of_r(np.sqrt(r2, out=r2))
        poly *= amp[:, None, None]
        return poly

    def diag(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        amp, _ = self._split(P)
        return np.broadcast_to(amp[:, None], (amp.shape[0], X.shape[-2])).copy()

    def cross_grad(self, P: np.ndarray, X1: np.ndarray, X2: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``K(X1, X2)`` ``(S, n1, n2)`` and the factors of its gradient in ``X2`` (shared 2-D inputs).

        With ``u = sqrt(5) r``: ``dk/dx2_d = g (x2_d - x1_d) / l_d^2``, ``g = -(5/3) amp (1 + u) exp(-u)``.
        Returns ``K``, ``g`` ``(S, n1, n2)``, the differences ``(n1, n2, D)`` (zero outside
        ``dims``) and ``1 / l^2`` ``(S, D)`` (zero outside ``dims``), so that a caller contracts
        ``g`` with its weights before touching the ``D`` axis.
        """
        amp, ls = self._split(P)
        D = X2.shape[1]
        inv2 = np.zeros((amp.shape[0], D))
        inv2[:, self.dims] = 1.0 / ls**2
        diff = np.zeros((X1.shape[0], X2.shape[0], D))
        diff[..., self.dims] = X2[None, :, self.dims] - X1[:, None, self.dims]
        r2 = np.einsum("ijd,sd->sij", diff**2, inv2)
        u = np.sqrt(5.0 * np.maximum(r2, 0.0))
        e = np.exp(-u)
        K = amp[:, None, None] * (1.0 + u + u * u / 3.0) * e
        g = (-5.0 / 3.0) * amp[:, None, None] * (1.0 + u) * e
        return K, g, diff, inv2

    def _pair_table(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # squared differences per dimension over the lower-triangle pairs of X, (d, n(n+1)/2), kept
        # for the last X: an MCMC run evaluates hundreds of walkers on the same inputs
        cached = getattr(self, "_pairs", None)
        if cached is not None and cached[0].shape == X.shape and np.array_equal(cached[0], X):
            return cached[1], cached[2], cached[3]
        n = X.shape[0]
        il, jl = np.tril_indices(n)
        Xd = X[:, self.dims]
        D2 = np.ascontiguousarray(((Xd[il] - Xd[jl]) ** 2).T)
        self._pairs = (np.array(X, copy=True), D2, il, jl)
        return D2, il, jl

    def train_lower(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        if X.ndim != 2:  # per-sample (warped) inputs: no shared pair table
            return self(P, X, X)
        amp, ls = self._split(P)
        D2, il, jl = self._pair_table(X)
        # r^2 summed from the per-dimension table (exact, no cancellation), on n(n+1)/2 pairs only
        u = (1.0 / ls**2) @ D2
        poly = _matern52_of_r(np.sqrt(u, out=u))
        poly *= amp[:, None]
        n = X.shape[0]
        K = np.zeros((poly.shape[0], n, n))  # zeros, not garbage, above the diagonal: products stay finite
        K[:, il, jl] = poly
        return K


# Input warping (Snoek, Swersky, Zemel & Adams 2014, "Input warping for Bayesian optimization of
# non-stationary functions"): the GP Spearmint ran in dngo.txt Table 1 (Sec. 4.1: "the input-warped
# Gaussian process method of Snoek et al. (2014)"). Each warped input goes through a Beta CDF whose
# two shape parameters are hyperparameters, marginalised with the others. Prior: log-normal with
# log-scale standard deviation 0.5, truncated to [0.1, 30], as in Spearmint's released BetaWarp;
# centred on 1 (our choice: the identity warp is the prior's median).
WARP_LOG_STD = 0.5
WARP_BOUNDS = (0.1, 30.0)


class BetaWarp(Kernel):
    """``inner`` evaluated on inputs whose columns ``dims`` pass through Beta CDFs, one per sample.

    Parameters: ``[log a per dim] + [log b per dim] + inner parameters``; column ``d`` of
    ``x`` becomes ``I_x(a_d, b_d)`` (the regularised incomplete beta function), a monotone
    map of ``[0, 1]`` onto itself that is the identity at ``a = b = 1``.
    """

    def __init__(self, inner: Kernel, dims: Sequence[int]):
        self.inner = inner
        self.dims = np.asarray(list(dims), dtype=int)

    @property
    def n_params(self) -> int:
        return 2 * len(self.dims) + self.inner.n_params

    def param_names(self) -> list[str]:
        return ([f"log_warp_a{d}" for d in self.dims] + [f"log_warp_b{d}" for d in self.dims]
                + self.inner.param_names())

    def _split(self, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        P = np.atleast_2d(P)
        return P[:, :2 * len(self.dims)], P[:, 2 * len(self.dims):]

    def log_prior(self, P: np.ndarray) -> np.ndarray:
        w, inner = self._split(P)
        lo, hi = (math.log(b) for b in WARP_BOUNDS)
        inside = np.all((w >= lo) & (w <= hi), axis=1)
        lp = _normal_logpdf(w, WARP_LOG_STD).sum(1) + self.inner.log_prior(inner)
        return np.where(inside, lp, -np.inf)

    def sample_prior(self, rng: np.random.Generator, n: int) -> np.ndarray:
        lo, hi = (math.log(b) for b in WARP_BOUNDS)
        w = np.clip(rng.normal(0.0, WARP_LOG_STD, size=(n, 2 * len(self.dims))), lo, hi)
        return np.column_stack([w, self.inner.sample_prior(rng, n)])

    def clip(self, P: np.ndarray) -> np.ndarray:
        w, inner = self._split(P)
        lo, hi = (math.log(b) for b in WARP_BOUNDS)
        return np.column_stack([np.clip(w, lo, hi), self.inner.clip(inner)])

    def warp(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Warped copies of ``X`` ``(n, D)``, one per sample: ``(S, n, D)``."""
        from scipy.special import betainc

        w, _ = self._split(P)
        k = len(self.dims)
        a, b = np.exp(w[:, :k]), np.exp(w[:, k:])
        out = np.broadcast_to(np.asarray(X, dtype=float), (w.shape[0],) + np.shape(X)).copy()
        cols = np.clip(out[..., self.dims], 0.0, 1.0)
        out[..., self.dims] = betainc(a[:, None, :], b[:, None, :], cols)
        return out

    def __call__(self, P: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        _, inner = self._split(P)
        return self.inner(inner, self.warp(P, X1), self.warp(P, X2))

    def diag(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        _, inner = self._split(P)
        return self.inner.diag(inner, X)


BASIS_FUNCTIONS = {
    # fabolas.txt Sec. 3.1: phi_f(s) = (1, (1 - s)^2) for the loss, phi_c(s) = (1, s) for the log cost
    "loss": lambda s: np.stack([np.ones_like(s), (1.0 - s) ** 2], axis=-1),
    "cost": lambda s: np.stack([np.ones_like(s), s], axis=-1),
}


class FiniteRankKernel(Kernel):
    """Fabolas' degenerate kernel ``phi(s)^T Sigma phi(s')`` on column ``dim`` (fabolas.txt Eq. 6).

    ``Sigma = diag(exp(p))`` with N(0, 1) priors on ``p``, as RoBO's
    ``BayesianLinearRegressionKernel`` with ``EnvPrior`` (two log weights). ``basis`` is
    ``"loss"`` or ``"cost"`` (:data:`BASIS_FUNCTIONS`).
    """

    def __init__(self, dim: int, basis: str):
        if basis not in BASIS_FUNCTIONS:
            raise ValueError(f"basis must be one of {sorted(BASIS_FUNCTIONS)}, got {basis!r}")
        self.dim, self.basis = int(dim), basis
        self._phi = BASIS_FUNCTIONS[basis]

    @property
    def n_params(self) -> int:
        return 2

    def param_names(self) -> list[str]:
        return ["log_w0", "log_w1"]

    def log_prior(self, P: np.ndarray) -> np.ndarray:
        P = np.atleast_2d(P)
        lp = _normal_logpdf(P).sum(-1)
        return np.where(np.all(np.abs(P) <= 10, axis=-1), lp, -np.inf)

    def sample_prior(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.normal(0.0, 1.0, size=(n, 2))

    def clip(self, P: np.ndarray) -> np.ndarray:
        return np.clip(P, -10, 10)

    def __call__(self, P: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        w = np.exp(np.atleast_2d(P))  # (S, 2)
        f1, f2 = self._phi(X1[:, self.dim]), self._phi(X2[:, self.dim])  # (n, 2)
        return np.einsum("ik,sk,jk->sij", f1, w, f2)

    def diag(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        w = np.exp(np.atleast_2d(P))
        f = self._phi(X[:, self.dim])
        return w @ (f**2).T


class TaskKernel(Kernel):
    """MTBO's free-form task covariance ``K_T = L L^T`` on an integer task column (fabolas.txt Eq. 4).

    ``L`` is lower triangular with log-scale diagonal; its entries are sampled by MCMC with
    N(0, 1) priors, as RoBO's ``MTBOPrior`` does (Swersky et al. 2013 sample the Cholesky
    factor together with the other hyperparameters).
    """

    def __init__(self, dim: int, n_tasks: int = 2):
        self.dim, self.n_tasks = int(dim), int(n_tasks)
        self._rows, self._cols = np.tril_indices(self.n_tasks)

    @property
    def n_params(self) -> int:
        return len(self._rows)

    def param_names(self) -> list[str]:
        return [f"L{i}{j}" for i, j in zip(self._rows, self._cols)]

    def log_prior(self, P: np.ndarray) -> np.ndarray:
        P = np.atleast_2d(P)
        return np.where(np.all(np.abs(P) <= 10, axis=-1), _normal_logpdf(P).sum(-1), -np.inf)

    def sample_prior(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.normal(0.0, 1.0, size=(n, self.n_params))

    def clip(self, P: np.ndarray) -> np.ndarray:
        return np.clip(P, -10, 10)

    def task_cov(self, P: np.ndarray) -> np.ndarray:
        """The ``(S, T, T)`` task covariance matrices."""
        P = np.atleast_2d(P)
        L = np.zeros((P.shape[0], self.n_tasks, self.n_tasks))
        vals = np.where(self._rows == self._cols, np.exp(P), P)
        L[:, self._rows, self._cols] = vals
        return L @ np.swapaxes(L, 1, 2)

    def _tasks(self, X: np.ndarray) -> np.ndarray:
        return np.clip(np.rint(X[:, self.dim]), 0, self.n_tasks - 1).astype(int)

    def __call__(self, P: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        KT = self.task_cov(P)
        return KT[:, self._tasks(X1)][:, :, self._tasks(X2)]

    def diag(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        KT = self.task_cov(P)
        t = self._tasks(X)
        return KT[:, t, t]


class ProductKernel(Kernel):
    """Product of kernels on (usually disjoint) columns; parameters concatenated."""

    def __init__(self, *kernels: Kernel):
        self.kernels = kernels
        self._cuts = np.cumsum([0] + [k.n_params for k in kernels])

    @property
    def n_params(self) -> int:
        return int(self._cuts[-1])

    def param_names(self) -> list[str]:
        return [f"k{i}.{n}" for i, k in enumerate(self.kernels) for n in k.param_names()]

    def _parts(self, P: np.ndarray) -> list[np.ndarray]:
        P = np.atleast_2d(P)
        return [P[:, a:b] for a, b in zip(self._cuts[:-1], self._cuts[1:])]

    def log_prior(self, P: np.ndarray) -> np.ndarray:
        return sum(k.log_prior(p) for k, p in zip(self.kernels, self._parts(P)))

    def sample_prior(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.column_stack([k.sample_prior(rng, n) for k in self.kernels])

    def clip(self, P: np.ndarray) -> np.ndarray:
        return np.column_stack([k.clip(p) for k, p in zip(self.kernels, self._parts(P))])

    def __call__(self, P: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        out = None
        for k, p in zip(self.kernels, self._parts(P)):
            m = k(p, X1, X2)
            out = m if out is None else out * m
        return out

    def diag(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        out = None
        for k, p in zip(self.kernels, self._parts(P)):
            m = k.diag(p, X)
            out = m if out is None else out * m
        return out

    def train_lower(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        out = None
        for k, p in zip(self.kernels, self._parts(P)):
            m = k.train_lower(p, X)
            out = m if out is None else out * m  # the lower triangles multiply elementwise
        return out
