"""COMBO's graph GP: a GP with the ARD diffusion kernel (:mod:`benchsuite.optimizers.kernels.diffusion`),
the supplement's priors (Supp. 2.2) and its slice-sampling sweep (Supp. 2.1, 2.3).

:class:`DiffusionGP` holds the data, the priors and the sweep; :class:`GPPosterior` predicts at
candidates for a set of hyperparameter samples, optionally with hallucinated pending points.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..inference.horseshoe import horseshoe_log_prior
from ..inference.slice_sampling import slice_sample_1d
from ..kernels.diffusion import DiffusionKernel
from .linalg import cho_solve, cholesky_jitter, log_marginal_likelihood, posterior
from .posterior import Posterior

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
        # K^-1 (y - mean) per sample, solved once here rather than at every predict call
        self.alpha = np.stack([cho_solve(self.L[s], self.y_centred[s][:, None])[:, 0] for s in range(self.S)])
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
                mu, var = posterior(self.L[s], self.y_centred[s], Ks[s], kss[s], alpha=self.alpha[s])
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
