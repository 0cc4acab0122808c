"""Marginalising GP hyperparameters with emcee (fabolas.txt Sec. 3.4; Snoek et al. 2012).

An affine-invariant ensemble (emcee's stretch move) runs over the full hyperparameter row
of :mod:`benchsuite.optimizers.models.gp` (kernel parameters, constant mean, log noise). As in RoBO's
``GaussianProcessMCMC`` (the Fabolas authors' implementation) the chain is burnt in once,
then every later fit continues from the walkers' last positions for ``chain_length`` steps,
and the walkers' final positions are the hyperparameter samples (one per walker). The sampler
keeps every walker's Cholesky factor, so the first evaluation on grown data is a rank-k
extension and the posterior built after the run factors nothing again.

Defaults, with their sources (used by the plugins' settings):

* walkers: 3 x the number of hyperparameters, rounded up to even (RoBO
  ``fmin/bayesian_optimization.py`` and ``fmin/fabolas.py``: ``n_hypers = 3 * len(kernel)``);
* gp_ei, entropy_search: burn-in 100, then 200 steps per fit (RoBO's ``bayesian_optimization``);
  ``chain_length=10`` is Spearmint's ``DEFAULT_MCMC_ITERS`` and ~10x cheaper, kept opt-in until it
  is shown to decide as well (issue 24; see :data:`MCMC_SETTINGS`);
* fabolas / mtbo: burn-in 100, chain length 100 (RoBO ``fmin/fabolas.py`` signature).

The log posterior is evaluated for a whole half-ensemble at once (``vectorize=True``), so a
step costs one kernel evaluation (lower triangle only) and one batched Cholesky factorisation.
"""
from __future__ import annotations

import contextlib
import io
import math

import numpy as np

from benchsuite.settings import NONNEGATIVE_INT, POSITIVE_INT, Setting

from ..kernels.continuous import Kernel
from ..models import gp
from ..models.linalg import cholesky_each, extend_cholesky, log_marginal_likelihood


def default_walkers(n_params: int) -> int:
    """RoBO's rule: three walkers per hyperparameter, an even number."""
    w = 3 * n_params
    return w + (w % 2)


def _log_posterior_factors(kernel: Kernel, X: np.ndarray, y_std: np.ndarray, theta: np.ndarray
                           ) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """Log posterior of rows ``theta`` and each row's Cholesky factor (None where rejected)."""
    theta = np.atleast_2d(theta)
    lp = gp.log_prior(kernel, theta)
    ok = np.isfinite(lp)
    out = np.full(theta.shape[0], -np.inf)
    factors: list[np.ndarray | None] = [None] * theta.shape[0]
    if not ok.any() or X.shape[0] == 0:
        return np.where(ok, lp, -np.inf), factors
    th = gp.clip_theta(kernel, theta[ok])
    # all walkers of the batch in one kernel evaluation and one batched factorisation
    L, good = cholesky_each(gp.train_covariance_lower(kernel, th, X))
    ll = np.full(th.shape[0], -np.inf)
    if good.any():
        resid = y_std[None, :] - th[good, kernel.n_params][:, None]
        ll[good] = log_marginal_likelihood(L[good], resid)
    out[ok] = lp[ok] + np.where(np.isfinite(ll), ll, -np.inf)
    for j, i in enumerate(np.flatnonzero(ok)):
        if good[j] and np.isfinite(out[i]):
            factors[i] = L[j]
    return out, factors


def log_posterior(kernel: Kernel, X: np.ndarray, y_std: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Unnormalised log posterior of hyperparameter rows ``(W, P)`` given standardised targets."""
    return _log_posterior_factors(kernel, X, y_std, theta)[0]


class HyperparameterSampler:
    """emcee ensemble over one GP's hyperparameters, continued from one fit to the next.

    Besides the walkers' positions it keeps the Cholesky factor of every walker's training
    covariance: when the next fit's inputs extend the last ones (the usual case: one new
    observation), the walkers' starting log posteriors come from factors extended by the new rows
    (:func:`~.linalg.extend_cholesky`, ``O(n^2)``) instead of new factorisations, and
    :meth:`fit` hands the final walkers' factors to the posterior, which then factors nothing.
    """

    def __init__(self, kernel: Kernel, rng: np.random.Generator, n_walkers: int = 0,
                 burnin: int = 100, chain_length: int = 200):
        self.kernel, self.rng = kernel, rng
        p = gp.n_hyper(kernel)
        # emcee's stretch move needs at least twice as many walkers as dimensions
        w = max(int(n_walkers) if n_walkers else default_walkers(p), 2 * p)
        self.n_walkers = w + (w % 2)
        self.burnin, self.chain_length = int(burnin), int(chain_length)
        self.positions: np.ndarray | None = None
        self.factors: list[np.ndarray | None] | None = None  # per walker, for inputs self._X
        self._X: np.ndarray | None = None
        self.last_chain: np.ndarray | None = None  # (steps, W, P) of the last run, for diagnostics
        self.n_evaluations = 0  # walker log-posterior evaluations so far (factorisations)
        self.n_extended = 0  # walker log posteriors obtained by extending a kept factor

    def _start(self, X: np.ndarray, y_std: np.ndarray) -> tuple[np.ndarray, list[np.ndarray | None]]:
        # log posterior and factors at the kept positions on the new data, reusing the kept factors
        p0 = self.positions
        old, Xo = self.factors, self._X
        n0 = 0 if Xo is None else Xo.shape[0]
        if (old is None or Xo is None or X.shape[0] < n0 or X.shape[1] != Xo.shape[1]
                or any(f is None for f in old) or not np.array_equal(X[:n0], Xo)):
            self.n_evaluations += p0.shape[0]
            return _log_posterior_factors(self.kernel, X, y_std, p0)
        lp = gp.log_prior(self.kernel, p0)
        if not np.all(np.isfinite(lp)):
            self.n_evaluations += p0.shape[0]
            return _log_posterior_factors(self.kernel, X, y_std, p0)
        kp = self.kernel.n_params
        L = np.stack(old)
        if X.shape[0] > n0:
            Xn = X[n0:]
            K12 = self.kernel(p0[:, :kp], X[:n0], Xn)
            K22 = self.kernel(p0[:, :kp], Xn, Xn)
            idx = np.arange(Xn.shape[0])
            K22[:, idx, idx] += np.exp(p0[:, kp + 1])[:, None]
            L, good = extend_cholesky(L, K12, K22)
        else:
            good = np.ones(p0.shape[0], dtype=bool)
        self.n_extended += p0.shape[0]
        out = np.full(p0.shape[0], -np.inf)
        if good.any():
            resid = y_std[None, :] - p0[good, kp][:, None]
            out[good] = lp[good] + log_marginal_likelihood(L[good], resid)
        factors = [L[i] if good[i] and np.isfinite(out[i]) else None for i in range(p0.shape[0])]
        return out, factors

    def sample(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Run the chain on data ``(X, y)`` (``y`` in original units) and return ``(W, P)`` samples."""
        import emcee  # heavy-ish import kept local

        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        shift, scale = gp.standardise(y)
        y_std = (y - shift) / scale
        p = gp.n_hyper(self.kernel)
        fresh: dict[bytes, np.ndarray] = {}  # factors of the rows evaluated in the current step

        def evaluate(theta: np.ndarray) -> tuple[np.ndarray, list[np.ndarray | None]]:
            self.n_evaluations += theta.shape[0]
            return _log_posterior_factors(self.kernel, X, y_std, theta)

        def fn(theta: np.ndarray) -> np.ndarray:
            lp, facs = evaluate(theta)
            for row, f in zip(theta, facs):
                if f is not None:
                    fresh[row.tobytes()] = f
            return lp

        steps = self.chain_length
        p0 = self.positions
        if p0 is not None:
            lp0, factors = self._start(X, y_std)
        if p0 is None or not np.all(np.isfinite(lp0)):
            p0 = gp.sample_prior(self.kernel, self.rng, self.n_walkers)
            lp0, factors = evaluate(p0)
            for _ in range(20):  # redraw walkers the prior or the data reject outright
                bad = ~np.isfinite(lp0)
                if not bad.any():
                    break
                p0[bad] = gp.sample_prior(self.kernel, self.rng, int(bad.sum()))
                lp_b, f_b = evaluate(p0[bad])
                lp0[bad] = lp_b
                for i, f in zip(np.flatnonzero(bad), f_b):
                    factors[i] = f
            steps += self.burnin
        self.last_chain = None
        if steps > 0:
            sampler = emcee.EnsembleSampler(self.n_walkers, p, fn, vectorize=True)
            seed = int(self.rng.integers(0, 2**32 - 1))
            state = emcee.State(p0, log_prob=lp0, random_state=np.random.RandomState(seed).get_state())
            # emcee prints the walker's parameters and a traceback whenever the log-probability
            # raises, Ctrl-C included; the exception itself still propagates, the printing does not
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                for state in sampler.sample(state, iterations=steps):
                    # a walker that moved sits on a row evaluated in this step; one that stayed keeps its factor
                    for i, row in enumerate(state.coords):
                        f = fresh.get(row.tobytes())
                        if f is not None:
                            factors[i] = f.copy()  # a copy: a view would keep its whole batch alive
                    fresh.clear()
            p0 = np.array(state.coords)
            self.last_chain = sampler.get_chain()
        self.positions = p0
        self.factors = factors
        self._X = X.copy()
        return p0.copy()

    def fit(self, X: np.ndarray, y: np.ndarray) -> gp.GPPosterior:
        """Run the chain and return the posterior at the final walkers, built on their kept factors."""
        theta = self.sample(X, y)
        factor = None
        if self.factors is not None and all(f is not None for f in self.factors) and X.shape[0]:
            factor = np.stack(self.factors)
        return gp.GPPosterior(self.kernel, X, y, theta, factor=factor)

    def reset(self) -> None:
        """Forget the walkers (the next fit burns in again)."""
        self.positions = None
        self.factors = None
        self._X = None


def effective_log_likelihood(kernel: Kernel, X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Log evidence of rows ``theta`` on original-unit ``y`` (for tests and diagnostics)."""
    shift, scale = gp.standardise(y)
    y_std = (np.asarray(y, dtype=float) - shift) / scale
    return log_posterior(kernel, X, y_std, theta) - gp.log_prior(kernel, theta) - len(y) * math.log(scale)


# The settings every plugin with an emcee-marginalised GP declares. Walkers and burn-in: RoBO's
# bayesian_optimization / entropy_search drivers (which fabolas.txt 3.4 used) and Spearmint
# (DEFAULT_BURNIN = 100). Steps per later fit: Spearmint's DEFAULT_MCMC_ITERS = 10 continuing the
# chain (combo.txt Supp. 2 describes the same: "100 burn-in steps and at every new evaluation, 10
# more samples"); RoBO's gp_mcmc runs chain_length=200 per fit, 20x the cost per ask (set
# chain_length=200 for RoBO's). Ten stretch-move steps of 3 walkers per hyperparameter evaluate the
# marginal likelihood about as often as Spearmint's ten slice-sampling sweeps (a few evaluations per
# coordinate and sweep).
MCMC_SETTINGS = {
    "n_walkers": Setting(0, "emcee walkers; 0 = 3 x number of GP hyperparameters, even (RoBO n_hypers rule)",
                         domain=NONNEGATIVE_INT),
    "burnin": Setting(100, "MCMC burn-in steps at the first fit (RoBO burnin=100; Spearmint DEFAULT_BURNIN=100)",
                      domain=NONNEGATIVE_INT),
    "chain_length": Setting(200, "MCMC steps per later fit, continuing the chain from the last walkers (RoBO "
                                "gp_mcmc: 200, the default until the faster Spearmint DEFAULT_MCMC_ITERS=10 is shown "
                                "to decide as well: issue 24's regret table is not yet conclusive)",
                            domain=POSITIVE_INT),
}
