"""COMBO's graph GP: the ARD diffusion kernel on a graph Cartesian product, and its priors.

combo.txt Sec. 2.2-2.3: every discrete variable ``i`` gets a small graph ``G_i`` (a path
for ordinal and integer variables, a complete graph for categorical ones); the search
space is the graph Cartesian product ``G = G_1 x ... x G_d``, whose Laplacian is the
Kronecker sum of the ``L_i``. The ARD diffusion kernel ``exp(-sum_i beta_i L_i)`` (eq. 5)
is then the Kronecker product of per-variable kernels

    K_i(v, v') = sum_k exp(-beta_i lambda_ik) u_ik(v) u_ik(v')

built from each small graph's eigensystem, computed once (closed forms exist for paths
and complete graphs). The full graph is never formed: ``K(x, x') = prod_i K_i(x_i, x'_i)``.
As in the reference implementation (combo.txt Supp. 2.1, remark after eq. 8) each factor
is divided by ``mean_k exp(-beta_i lambda_ik)`` for numerical stability, which makes the
mean of its diagonal 1 (exactly 1 everywhere for complete graphs).

Vectorised evaluation: the product is taken in log space, where it becomes a sum over
variables that a one-hot matrix product computes for all pairs at once (``n`` training
points x ``m`` candidates x ``S`` hyperparameter samples, one BLAS call per sample).

:class:`DiffusionGP` holds the data, the supplement's priors (Supp. 2.2) and the
slice-sampling sweep (Supp. 2.1, 2.3); :class:`GPPosterior` predicts at candidates for a
set of hyperparameter samples, optionally with hallucinated pending points.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .horseshoe import horseshoe_log_prior
from .linalg import cholesky_jitter, log_marginal_likelihood, posterior
from .posterior import Posterior
from .slice_sampling import slice_sample_1d

GRAPH_KINDS = ("path", "complete")
# log(0) stand-in for kernel entries that underflow (far-apart levels of a long path at small beta)
_LOG_FLOOR = -700.0


# --------------------------------------------------------------------------------------------
# per-variable graphs
# --------------------------------------------------------------------------------------------
def path_laplacian(n: int) -> np.ndarray:
    """Laplacian ``D - A`` of the path graph on ``n`` vertices (levels in order)."""
    A = np.zeros((n, n))
    idx = np.arange(n - 1)
    A[idx, idx + 1] = A[idx + 1, idx] = 1.0
    return np.diag(A.sum(1)) - A


def complete_laplacian(n: int) -> np.ndarray:
    """Laplacian ``n I - 1 1^T`` of the complete graph on ``n`` vertices."""
    return n * np.eye(n) - np.ones((n, n))


@dataclass(frozen=True)
class GraphEigensystem:
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of one variable's Laplacian."""

    kind: str
    n: int
    eigvals: np.ndarray
    eigvecs: np.ndarray

    def laplacian(self) -> np.ndarray:
        """The Laplacian matrix this eigensystem diagonalises."""
        return path_laplacian(self.n) if self.kind == "path" else complete_laplacian(self.n)

    def adjacency_table(self) -> np.ndarray:
        """``(n, max_degree)`` table of each vertex's neighbours, padded with -1."""
        if self.kind == "path":
            tab = np.stack([np.arange(self.n) - 1, np.arange(self.n) + 1], axis=1)
            tab[tab >= self.n] = -1
            return tab
        if self.n == 1:
            return -np.ones((1, 0), dtype=int)
        full = np.tile(np.arange(self.n), (self.n, 1))
        return full[~np.eye(self.n, dtype=bool)].reshape(self.n, self.n - 1)


def path_eigensystem(n: int) -> GraphEigensystem:
    """Closed form for a path: ``lambda_k = 2 - 2 cos(pi k / n)``, ``u_k(j) ~ cos(pi k (j + 1/2) / n)``."""
    k = np.arange(n)
    vals = 2.0 - 2.0 * np.cos(np.pi * k / n)
    vecs = np.cos(np.pi * np.outer(np.arange(n) + 0.5, k) / n)
    vecs *= np.where(k == 0, math.sqrt(1.0 / n), math.sqrt(2.0 / n))
    vals[0] = 0.0
    return GraphEigensystem("path", n, vals, vecs)


def complete_eigensystem(n: int) -> GraphEigensystem:
    """Closed form for a complete graph: eigenvalue 0 (constant vector) and ``n`` (Helmert basis)."""
    vecs = np.zeros((n, n))
    vecs[:, 0] = 1.0 / math.sqrt(n)
    for k in range(1, n):
        vecs[:k, k] = 1.0
        vecs[k, k] = -float(k)
        vecs[:, k] /= math.sqrt(k * (k + 1))
    vals = np.full(n, float(n))
    vals[0] = 0.0
    return GraphEigensystem("complete", n, vals, vecs)


def graph_eigensystem(kind: str, n: int) -> GraphEigensystem:
    """Eigensystem of the ``kind`` graph (``"path"`` or ``"complete"``) on ``n`` vertices."""
    if n < 1:
        raise ValueError(f"a variable graph needs at least one vertex, got {n}")
    if kind == "path":
        return path_eigensystem(n)
    if kind == "complete":
        return complete_eigensystem(n)
    raise ValueError(f"unknown graph kind {kind!r}; choose one of {GRAPH_KINDS}")


# --------------------------------------------------------------------------------------------
# the ARD diffusion kernel
# --------------------------------------------------------------------------------------------
class DiffusionKernel:
    """ARD diffusion kernel on the Cartesian product of per-variable graphs (combo.txt eq. 5).

    Inputs are integer codes, shape ``(n, d)``; ``beta`` has one entry per variable. The
    kernel has unit amplitude; the GP multiplies it by the signal variance.
    """

    def __init__(self, graphs: Sequence[GraphEigensystem]):
        if not graphs:
            raise ValueError("a diffusion kernel needs at least one variable graph")
        self.graphs = list(graphs)
        self.d = len(self.graphs)
        self.n_levels = np.array([g.n for g in self.graphs], dtype=int)
        # one-hot columns for levels 1..n_i-1 of each variable (level 0 is the baseline)
        self.offsets = np.concatenate([[0], np.cumsum(self.n_levels - 1)])
        self.width = int(self.offsets[-1])
        self.adjacency = [g.adjacency_table() for g in self.graphs]
        self.pair_dtype = np.uint8 if int(self.n_levels.max()) ** 2 <= 256 else np.int32

    # -- per-variable factors ----------------------------------------------------------------
    def factor(self, i: int, beta: float | np.ndarray) -> np.ndarray:
        """Normalised factor ``U exp(-beta Lambda) U^T / mean(exp(-beta Lambda))``; batched over ``beta``."""
        g = self.graphs[i]
        b = np.asarray(beta, dtype=float)
        e = np.exp(-b[..., None] * g.eigvals)  # (..., n_i)
        e = e / e.mean(-1, keepdims=True)
        return np.einsum("ak,...k,bk->...ab", g.eigvecs, e, g.eigvecs)

    def log_factor(self, i: int, beta: float | np.ndarray) -> np.ndarray:
        """Log of :meth:`factor`, with underflowed entries set to a large negative floor."""
        F = self.factor(i, beta)
        with np.errstate(divide="ignore"):
            return np.maximum(np.log(np.maximum(F, 0.0)), _LOG_FLOOR)

    def log_spectrum_bounds(self, beta: np.ndarray | float = 1.0) -> tuple[float, float]:
        """Log of the smallest and largest eigenvalue of the normalised kernel on the full graph."""
        b = np.broadcast_to(np.asarray(beta, dtype=float), (self.d,))
        lo = hi = 0.0
        for g, bi in zip(self.graphs, b):
            e = np.exp(-bi * g.eigvals)
            log_mean = math.log(e.mean())
            hi += -log_mean  # exp(-beta * 0) / mean
            lo += -bi * float(g.eigvals.max()) - log_mean
        return lo, hi

    # -- Gram matrices -------------------------------------------------------------------------
    def onehot(self, X: np.ndarray) -> np.ndarray:
        """``(n, width)`` indicator of levels ``>= 1`` (level 0 is each variable's baseline)."""
        X = np.asarray(X)
        out = np.zeros((X.shape[0], self.width))
        rows = np.arange(X.shape[0])
        for i in range(self.d):
            nz = X[:, i] > 0
            out[rows[nz], self.offsets[i] + X[nz, i] - 1] = 1.0
        return out

    def _row_terms(self, log_factors: list[np.ndarray], X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-row baseline ``sum_i F_i[x_i, 0]`` ``(S, n)`` and level offsets ``(S, n, width)``."""
        S = log_factors[0].shape[0]
        base = np.zeros((S, X.shape[0]))
        A = np.empty((S, X.shape[0], self.width))
        for i, F in enumerate(log_factors):
            rows = F[:, X[:, i], :]  # (S, n, n_i)
            base += rows[:, :, 0]
            A[:, :, self.offsets[i]:self.offsets[i + 1]] = rows[:, :, 1:] - rows[:, :, :1]
        return base, A

    def log_factors(self, betas: np.ndarray) -> list[np.ndarray]:
        """Per-variable log factors for ``betas`` ``(S, d)``: a list of ``(S, n_i, n_i)``."""
        betas = np.atleast_2d(np.asarray(betas, dtype=float))
        return [self.log_factor(i, betas[:, i]) for i in range(self.d)]

    def log_gram(self, betas: np.ndarray, X1: np.ndarray, X2: np.ndarray | None = None,
                 log_factors: list[np.ndarray] | None = None) -> np.ndarray:
        """``log K(X1, X2)`` for each of ``S`` beta vectors: ``(S, n1, n2)``.

        ``sum_i F_i[x1_i, x2_i] = sum_i F_i[x1_i, 0] + (offsets of x1) @ onehot(x2)^T``: one
        matrix product per sample instead of ``d`` gathers of ``n1 x n2`` entries.
        """
        X1 = np.asarray(X1)
        X2 = X1 if X2 is None else np.asarray(X2)
        lf = self.log_factors(betas) if log_factors is None else log_factors
        base, A = self._row_terms(lf, X1)
        return base[:, :, None] + A @ self.onehot(X2).T

    def log_diag(self, betas: np.ndarray, X: np.ndarray, log_factors: list[np.ndarray] | None = None) -> np.ndarray:
        """``log K(x, x)`` for each row of ``X`` and each sample: ``(S, n)``."""
        X = np.asarray(X)
        lf = self.log_factors(betas) if log_factors is None else log_factors
        out = np.zeros((lf[0].shape[0], X.shape[0]))
        for i, F in enumerate(lf):
            out += F[:, X[:, i], X[:, i]]
        return out

    def gram(self, beta: np.ndarray, X1: np.ndarray, X2: np.ndarray | None = None) -> np.ndarray:
        """Kernel matrix ``K(X1, X2)`` for one beta vector ``(d,)``."""
        return np.exp(self.log_gram(np.asarray(beta, dtype=float)[None, :], X1, X2))[0]

    def pair_index(self, X: np.ndarray) -> np.ndarray:
        """``(d, n, n)`` flat indices ``x_ai * n_i + x_bi`` into each factor, for fast Gram updates."""
        X = np.asarray(X)
        out = np.empty((self.d, X.shape[0], X.shape[0]), dtype=self.pair_dtype)
        for i in range(self.d):
            out[i] = X[:, i][:, None] * self.n_levels[i] + X[:, i][None, :]
        return out

    # -- graph structure -----------------------------------------------------------------------
    def neighbours(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All vertices adjacent to the rows of ``X`` in the product graph.

        Returns ``(nbrs, owner)``: neighbour codes ``(k, d)`` and the row of ``X`` each came from.
        """
        X = np.asarray(X)
        blocks, owners = [], []
        rows = np.arange(X.shape[0])
        for i, tab in enumerate(self.adjacency):
            if tab.shape[1] == 0:
                continue
            nb = tab[X[:, i]]  # (n, deg)
            r, c = np.nonzero(nb >= 0)
            Y = X[r].copy()
            Y[:, i] = nb[r, c]
            blocks.append(Y)
            owners.append(rows[r])
        if not blocks:
            return np.empty((0, self.d), dtype=X.dtype), np.empty(0, dtype=int)
        return np.concatenate(blocks), np.concatenate(owners)


# --------------------------------------------------------------------------------------------
# the GP with the supplement's priors, sampled by slice sampling
# --------------------------------------------------------------------------------------------
LOG_LOWER = -12.0  # numerical bounds on log amplitude, log noise and log beta (reference code)
LOG_UPPER_VAR = math.log(1e4)  # upper bound for log amplitude and log noise variance
LOG_UPPER_BETA = math.log(100.0)  # upper bound for log beta


@dataclass(frozen=True)
class GPParams:
    """One hyperparameter sample: constant mean, log signal variance, log noise variance, log betas."""

    mean: float
    log_amp: float
    log_noise: float
    log_beta: np.ndarray


@dataclass(frozen=True)
class PriorConfig:
    """Scales of the priors in combo.txt Supp. 2.2."""

    beta_scale: float = 5.0  # horseshoe tau for beta (Supp. 2.2.3)
    noise_scale: float = math.sqrt(0.005)  # horseshoe tau for the noise variance (Spearmint's 0.1 = sqrt(2) tau)
    # add the log-Jacobian when sampling beta and the noise variance in log space, so the horseshoe is the
    # prior on the original scale; False reproduces the reference implementation (density used as is)
    log_jacobian: bool = False


class DiffusionGP:
    """GP with constant mean and ARD diffusion kernel; hyperparameters by slice sampling.

    Priors (combo.txt Supp. 2.2): a Gaussian on the constant mean centred at the mid-range
    of ``y``, truncated to ``[min y, max y]`` with std a quarter of the range; a log-normal
    on the signal variance truncated to ``[var(y) / k_max, var(y) / k_min]`` (``k_min``,
    ``k_max``: extreme eigenvalues of the normalised kernel at ``beta = 1``, as the
    reference implementation computes them) with std a quarter of the log range; horseshoe
    bounds on ``beta_i`` and on the noise variance. Like the reference implementation, the
    amplitude, noise and betas are sampled in log space with the horseshoe densities written
    on the original scale (no log-Jacobian; ``PriorConfig.log_jacobian`` adds it) and boxed
    to ``[e^-12, 1e4]`` (``[e^-12, 100]`` for beta); where the paper's amplitude truncation
    and that box do not overlap (almost constant ``y``) only the box is kept.
    """

    def __init__(self, kernel: DiffusionKernel, X: np.ndarray, y: np.ndarray, priors: PriorConfig = PriorConfig(),
                 slice_width: float = 1.0, max_doublings: int = 10):
        self.kernel, self.priors = kernel, priors
        self.slice_width, self.max_doublings = float(slice_width), int(max_doublings)
        self.X = np.asarray(X, dtype=int)
        self.y = np.asarray(y, dtype=float)
        if self.X.ndim != 2 or self.X.shape[0] != self.y.shape[0] or self.X.shape[1] != kernel.d:
            raise ValueError(f"need codes (n, {kernel.d}) and n targets, got {self.X.shape} and {self.y.shape}")
        self.n_logp = 0
        self._set_prior_bounds()

    # -- priors --------------------------------------------------------------------------------
    def _set_prior_bounds(self) -> None:
        y = self.y
        lo, hi = float(y.min()), float(y.max())
        mid = 0.5 * (lo + hi)
        half = max(0.5 * (hi - lo), 1e-8 * (1.0 + abs(mid)))
        self.mean_mid, self.mean_half = mid, half
        var = max(float(y.var()), 1e-300)
        log_kmin, log_kmax = self.kernel.log_spectrum_bounds(1.0)
        a_lo, a_hi = math.log(var) - log_kmax, math.log(var) - log_kmin
        self.amp_mid, self.amp_std = 0.5 * (a_lo + a_hi), max(0.25 * (a_hi - a_lo), 1e-3)
        lo_b, hi_b = max(a_lo, LOG_LOWER), min(a_hi, LOG_UPPER_VAR)
        self.amp_bounds = (lo_b, hi_b) if lo_b < hi_b else (LOG_LOWER, LOG_UPPER_VAR)
        self.log_var_y = math.log(var)

    def log_prior_mean(self, m: float) -> float:
        """Truncated Gaussian on the constant mean (Supp. 2.2.1, eq. 9)."""
        if abs(m - self.mean_mid) > self.mean_half:
            return -math.inf
        std = 0.5 * self.mean_half
        return -0.5 * ((m - self.mean_mid) / std) ** 2

    def log_prior_amp(self, log_amp: float) -> float:
        """Truncated log-normal on the signal variance (Supp. 2.2.2, eq. 10), in log space."""
        if not self.amp_bounds[0] <= log_amp <= self.amp_bounds[1]:
            return -math.inf
        return -0.5 * ((log_amp - self.amp_mid) / self.amp_std) ** 2

    def log_prior_noise(self, log_noise: float) -> float:
        """Horseshoe bound on the noise variance (Supp. 2.2.3, eq. 11), boxed."""
        if not LOG_LOWER <= log_noise <= LOG_UPPER_VAR:
            return -math.inf
        jac = log_noise if self.priors.log_jacobian else 0.0
        return horseshoe_log_prior(math.exp(log_noise), self.priors.noise_scale) + jac

    def log_prior_beta(self, log_beta: float) -> float:
        """Horseshoe bound on one diffusion weight ``beta_i`` (Supp. 2.2.3, eq. 11), boxed."""
        if not LOG_LOWER <= log_beta <= LOG_UPPER_BETA:
            return -math.inf
        jac = log_beta if self.priors.log_jacobian else 0.0
        return horseshoe_log_prior(math.exp(log_beta), self.priors.beta_scale) + jac

    def initial_params(self) -> GPParams:
        """Starting point of the chain (reference ``init_param``): mean of y, half its variance, beta = 1."""
        m = float(np.clip(self.y.mean(), self.mean_mid - 0.99 * self.mean_half, self.mean_mid + 0.99 * self.mean_half))
        a_lo, a_hi = self.amp_bounds
        pad = 0.01 * (a_hi - a_lo)
        log_amp = float(np.clip(self.log_var_y - math.log(2.0), a_lo + pad, a_hi - pad))
        log_noise = float(np.clip(self.log_var_y - math.log(1e3), LOG_LOWER + 1.0, LOG_UPPER_VAR - 1.0))
        return GPParams(m, log_amp, log_noise, np.zeros(self.kernel.d))

    def feasible(self, p: GPParams) -> GPParams:
        """``p`` moved inside the prior supports for this data (the data changes between asks)."""
        a_lo, a_hi = self.amp_bounds
        pad = 1e-6 * (a_hi - a_lo)
        return GPParams(
            float(np.clip(p.mean, self.mean_mid - 0.999 * self.mean_half, self.mean_mid + 0.999 * self.mean_half)),
            float(np.clip(p.log_amp, a_lo + pad, a_hi - pad)),
            float(np.clip(p.log_noise, LOG_LOWER, LOG_UPPER_VAR)),
            np.clip(np.asarray(p.log_beta, dtype=float), LOG_LOWER, LOG_UPPER_BETA),
        )

    # -- likelihood ----------------------------------------------------------------------------
    def _loglik(self, K: np.ndarray, p_mean: float) -> float:
        """Log marginal likelihood given the full covariance ``K`` (noise included)."""
        self.n_logp += 1
        try:
            L, _ = cholesky_jitter(K)
        except np.linalg.LinAlgError:
            return -math.inf
        return float(log_marginal_likelihood(L, self.y - p_mean))

    @staticmethod
    def _cov(gram: np.ndarray, log_amp: float, log_noise: float) -> np.ndarray:
        K = math.exp(log_amp) * gram
        K.flat[:: K.shape[0] + 1] += math.exp(log_noise)
        return K

    def log_likelihood(self, p: GPParams) -> float:
        """Log marginal likelihood of the data under ``p`` (Supp. eq. 7)."""
        gram = np.exp(self.kernel.log_gram(np.exp(p.log_beta)[None, :], self.X)[0])
        return self._loglik(self._cov(gram, p.log_amp, p.log_noise), p.mean)

    def log_posterior(self, p: GPParams) -> float:
        """Unnormalised log posterior of ``p``."""
        lp = (self.log_prior_mean(p.mean) + self.log_prior_amp(p.log_amp) + self.log_prior_noise(p.log_noise)
              + sum(self.log_prior_beta(b) for b in p.log_beta))
        return lp + self.log_likelihood(p) if math.isfinite(lp) else -math.inf

    # -- slice sampling --------------------------------------------------------------------------
    def sweep(self, p: GPParams, rng: np.random.Generator) -> GPParams:
        """One Gibbs sweep of univariate slice-sampling updates (Supp. 2.1).

        Order: constant mean, signal variance, noise variance, then every ``beta_i`` in a
        random order. Changing one ``beta_i`` only swaps that variable's factor in the log
        Gram matrix (a gather of ``n^2`` precomputed pair indices), never the others.
        """
        k = self.kernel
        betas = np.exp(p.log_beta)
        lfs = [k.log_factor(i, betas[i]) for i in range(k.d)]
        pairs = self._pairs()
        contrib = [lf.ravel()[pairs[i]] for i, lf in enumerate(lfs)]
        log_gram = np.sum(contrib, axis=0) if k.d > 1 else contrib[0].copy()
        mean, log_amp, log_noise = p.mean, p.log_amp, p.log_noise
        log_beta = np.array(p.log_beta, dtype=float)
        kw = {"width": self.slice_width, "max_doublings": self.max_doublings}

        gram = np.exp(log_gram)  # fixed while the mean, amplitude and noise move
        ll = self._loglik(self._cov(gram, log_amp, log_noise), mean)
        if not math.isfinite(ll):
            raise FloatingPointError("the GP likelihood is not finite at the chain's current state")

        def lp_mean(m: float) -> float:
            pr = self.log_prior_mean(m)
            return pr + self._loglik(self._cov(gram, log_amp, log_noise), m) if math.isfinite(pr) else -math.inf

        mean, lp = slice_sample_1d(lp_mean, mean, rng, logp_x0=self.log_prior_mean(mean) + ll, **kw)
        ll = lp - self.log_prior_mean(mean)

        def lp_amp(a: float) -> float:
            pr = self.log_prior_amp(a)
            return pr + self._loglik(self._cov(gram, a, log_noise), mean) if math.isfinite(pr) else -math.inf

        log_amp, lp = slice_sample_1d(lp_amp, log_amp, rng, logp_x0=self.log_prior_amp(log_amp) + ll, **kw)
        ll = lp - self.log_prior_amp(log_amp)

        def lp_noise(s: float) -> float:
            pr = self.log_prior_noise(s)
            return pr + self._loglik(self._cov(gram, log_amp, s), mean) if math.isfinite(pr) else -math.inf

        log_noise, lp = slice_sample_1d(lp_noise, log_noise, rng, logp_x0=self.log_prior_noise(log_noise) + ll, **kw)
        ll = lp - self.log_prior_noise(log_noise)

        noise = math.exp(log_noise)
        n = self.X.shape[0]
        for i in rng.permutation(k.d):
            rest = log_gram - contrib[i]
            rest_amp = rest + log_amp
            pi = pairs[i].astype(np.intp)

            def lp_beta(lb: float, i: int = i, rest_amp: np.ndarray = rest_amp, pi: np.ndarray = pi) -> float:
                pr = self.log_prior_beta(lb)
                if not math.isfinite(pr):
                    return -math.inf
                K = np.take(k.log_factor(i, math.exp(lb)).ravel(), pi)
                K += rest_amp
                np.exp(K, out=K)
                K.flat[:: n + 1] += noise
                return pr + self._loglik(K, mean)

            lb, lp = slice_sample_1d(lp_beta, log_beta[i], rng, logp_x0=self.log_prior_beta(log_beta[i]) + ll, **kw)
            ll = lp - self.log_prior_beta(lb)
            log_beta[i] = lb
            contrib[i] = np.take(k.log_factor(i, math.exp(lb)).ravel(), pi)
            log_gram = rest + contrib[i]
        self.last_loglik = ll  # tracked through the sweep; equals log_likelihood(returned params)
        return GPParams(float(mean), float(log_amp), float(log_noise), log_beta)

    def _pairs(self) -> np.ndarray:
        if getattr(self, "_pair_cache", None) is None:
            self._pair_cache = self.kernel.pair_index(self.X)
        return self._pair_cache

    def sample(self, p0: GPParams, rng: np.random.Generator, n_samples: int, n_burn: int = 0) -> list[GPParams]:
        """``n_samples`` consecutive sweeps (no thinning, combo.txt Sec. 2.4) after ``n_burn`` discarded ones."""
        p = self.feasible(p0)
        out = []
        for s in range(int(n_burn) + int(n_samples)):
            try:
                p = self.sweep(p, rng)
            except FloatingPointError:  # the carried-over state does not suit the new data: restart
                p = self.sweep(self.initial_params(), rng)
            if s >= n_burn:
                out.append(p)
        return out


class GPPosterior:
    """Predictions of a :class:`DiffusionGP` under ``S`` hyperparameter samples at once.

    Implements the :class:`~benchsuite.optimizers.models.posterior.PredictiveModel` contract:
    running evaluations enter through :func:`~benchsuite.optimizers.models.posterior.condition_on_pending`
    (COMBO uses the kriging believer: each sample's own posterior mean as the value, which
    leaves the mean unchanged and shrinks the variance around them).
    """

    def __init__(self, gp: DiffusionGP, samples: Sequence[GPParams], X: np.ndarray | None = None,
                 y: np.ndarray | None = None):
        self.gp = gp
        self.kernel = gp.kernel
        self.samples = list(samples)
        self.S = len(self.samples)
        self.betas = np.exp(np.stack([s.log_beta for s in self.samples]))
        self.means = np.array([s.mean for s in self.samples])
        self.amps = np.exp(np.array([s.log_amp for s in self.samples]))
        self.noises = np.exp(np.array([s.log_noise for s in self.samples]))
        self.log_factors = self.kernel.log_factors(self.betas)
        self.X = gp.X if X is None else np.asarray(X, dtype=int)
        y = gp.y if y is None else np.asarray(y, dtype=float)
        self.y = np.broadcast_to(y, (self.S, self.X.shape[0])).copy()
        self._factorise()

    def _factorise(self) -> None:
        lg = self.kernel.log_gram(self.betas, self.X, log_factors=self.log_factors)
        K = self.amps[:, None, None] * np.exp(lg)
        idx = np.arange(self.X.shape[0])
        K[:, idx, idx] += self.noises[:, None]
        self.L = np.stack([cholesky_jitter(K[s])[0] for s in range(self.S)])
        self.y_centred = self.y - self.means[:, None]
        self._base, self._A = self.kernel._row_terms(self.log_factors, self.X)

    def best(self) -> np.ndarray:
        """Lowest observed (or hallucinated) value per sample, ``(S,)``."""
        return self.y.min(axis=1)

    def predict(self, C: np.ndarray, chunk: int | None = None) -> Posterior:
        """Latent posterior means and variances at candidate codes ``C``, each ``(S, m)``."""
        C = np.asarray(C, dtype=int)
        m = C.shape[0]
        n = self.X.shape[0]
        chunk = chunk or max(256, int(4_000_000 // max(1, self.S * n)))
        means = np.empty((self.S, m))
        variances = np.empty((self.S, m))
        for a in range(0, m, chunk):
            Cb = C[a:a + chunk]
            log_ks = self._base[:, :, None] + self._A @ self.kernel.onehot(Cb).T
            Ks = self.amps[:, None, None] * np.exp(log_ks)
            kss = self.amps[:, None] * np.exp(self.kernel.log_diag(self.betas, Cb, log_factors=self.log_factors))
            for s in range(self.S):  # 2-D calls: one triangular solve (BLAS trsm) per sample
                mu, var = posterior(self.L[s], self.y_centred[s], Ks[s], kss[s])
                means[s, a:a + chunk] = mu + self.means[s]
                variances[s, a:a + chunk] = var
        return Posterior(means, variances, self.noises)

    def sample_y(self, Xp: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        """Joint draws of noisy outcomes at codes ``Xp``, ``(n, S, p)`` (Monte Carlo fantasies)."""
        Xp = np.asarray(Xp, dtype=int)
        p = Xp.shape[0]
        lf = self.log_factors
        Ks = self.amps[:, None, None] * np.exp(self.kernel.log_gram(self.betas, self.X, Xp, log_factors=lf))
        Kpp = self.amps[:, None, None] * np.exp(self.kernel.log_gram(self.betas, Xp, log_factors=lf))
        out = np.empty((int(n), self.S, p))
        for s in range(self.S):
            mu, cov = posterior(self.L[s], self.y_centred[s], Ks[s], np.diagonal(Kpp[s]), full_cov=True,
                                K_star_star=Kpp[s])
            Lc, _ = cholesky_jitter(cov + self.noises[s] * np.eye(p))
            out[:, s] = mu + self.means[s] + rng.standard_normal((int(n), p)) @ Lc.T
        return out

    def augmented(self, Xp: np.ndarray, yp: np.ndarray) -> GPPosterior:
        """The posterior with values ``yp`` (``(S, p)``, or ``(F, S, p)`` fantasy-major) at codes ``Xp``."""
        yp = np.asarray(yp, dtype=float)
        if yp.ndim == 2:
            yp = yp[None]
        F = yp.shape[0]
        X2 = np.concatenate([self.X, np.asarray(Xp, dtype=int)])
        y2 = np.concatenate([np.broadcast_to(self.y, (F,) + self.y.shape), yp], axis=2).reshape(F * self.S, -1)
        return GPPosterior(self.gp, self.samples * F, X2, y2)
