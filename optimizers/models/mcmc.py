"""Marginalising GP hyperparameters with emcee (fabolas.txt Sec. 3.4; Snoek et al. 2012).

An affine-invariant ensemble (emcee's stretch move) runs over the full hyperparameter row
of :mod:`benchsuite.optimizers.models.gp` (kernel parameters, constant mean, log noise). As in RoBO's
``GaussianProcessMCMC`` (the Fabolas authors' implementation) the chain is burnt in once,
then every later fit continues from the walkers' last positions for ``chain_length`` steps,
and the walkers' final positions are the hyperparameter samples (one per walker).

Defaults, with their sources (used by the plugins' settings):

* walkers: 3 x the number of hyperparameters, rounded up to even (RoBO
  ``fmin/bayesian_optimization.py`` and ``fmin/fabolas.py``: ``n_hypers = 3 * len(kernel)``);
* gp_ei: burn-in 100, chain length 200 (RoBO ``bayesian_optimization``, model ``gp_mcmc``);
* fabolas / mtbo: burn-in 100, chain length 100 (RoBO ``fmin/fabolas.py`` signature).

The log posterior is evaluated for a whole half-ensemble at once (``vectorize=True``), so a
step costs one batched Cholesky factorisation.
"""
from __future__ import annotations

import contextlib
import io
import math

import numpy as np

from benchsuite.settings import NONNEGATIVE_INT, POSITIVE_INT, Setting

from . import gp
from .linalg import log_marginal_likelihood


def default_walkers(n_params: int) -> int:
    """RoBO's rule: three walkers per hyperparameter, an even number."""
    w = 3 * n_params
    return w + (w % 2)


def log_posterior(kernel: gp.Kernel, X: np.ndarray, y_std: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Unnormalised log posterior of hyperparameter rows ``(W, P)`` given standardised targets."""
    theta = np.atleast_2d(theta)
    lp = gp.log_prior(kernel, theta)
    ok = np.isfinite(lp)
    out = np.full(theta.shape[0], -np.inf)
    if not ok.any() or X.shape[0] == 0:
        return np.where(ok, lp, -np.inf)
    th = gp.clip_theta(kernel, theta[ok])
    K = gp.train_covariance(kernel, th, X)
    resid = y_std[None, :] - th[:, kernel.n_params][:, None]
    ll = np.full(th.shape[0], -np.inf)
    try:
        L = np.linalg.cholesky(K)
        ll = log_marginal_likelihood(L, resid)
    except np.linalg.LinAlgError:
        # factor walker by walker: a non-positive-definite walker is rejected, the others are kept
        for i in range(th.shape[0]):
            try:
                Li = np.linalg.cholesky(K[i])
            except np.linalg.LinAlgError:
                continue
            ll[i] = log_marginal_likelihood(Li, resid[i])
    out[ok] = lp[ok] + np.where(np.isfinite(ll), ll, -np.inf)
    return out


class HyperparameterSampler:
    """emcee ensemble over one GP's hyperparameters, warm-started from one fit to the next."""

    def __init__(self, kernel: gp.Kernel, rng: np.random.Generator, n_walkers: int = 0,
                 burnin: int = 100, chain_length: int = 200):
        self.kernel, self.rng = kernel, rng
        p = gp.n_hyper(kernel)
        # emcee's stretch move needs at least twice as many walkers as dimensions
        w = max(int(n_walkers) if n_walkers else default_walkers(p), 2 * p)
        self.n_walkers = w + (w % 2)
        self.burnin, self.chain_length = int(burnin), int(chain_length)
        self.positions: np.ndarray | None = None

    def sample(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Run the chain on data ``(X, y)`` (``y`` in original units) and return ``(W, P)`` samples."""
        import emcee  # heavy-ish import kept local

        y = np.asarray(y, dtype=float)
        shift, scale = gp.standardise(y)
        y_std = (y - shift) / scale
        p = gp.n_hyper(self.kernel)

        def fn(theta: np.ndarray) -> np.ndarray:
            return log_posterior(self.kernel, X, y_std, theta)

        steps = self.chain_length
        p0 = self.positions
        if p0 is None or not np.all(np.isfinite(fn(p0))):
            p0 = gp.sample_prior(self.kernel, self.rng, self.n_walkers)
            bad = ~np.isfinite(fn(p0))
            for _ in range(20):  # redraw walkers the prior or the data reject outright
                if not bad.any():
                    break
                p0[bad] = gp.sample_prior(self.kernel, self.rng, int(bad.sum()))
                bad = ~np.isfinite(fn(p0))
            steps += self.burnin
        if steps > 0:
            sampler = emcee.EnsembleSampler(self.n_walkers, p, fn, vectorize=True)
            seed = int(self.rng.integers(0, 2**32 - 1))
            state = emcee.State(p0, random_state=np.random.RandomState(seed).get_state())
            # emcee prints the walker's parameters and a traceback whenever the log-probability
            # raises, Ctrl-C included; the exception itself still propagates, the printing does not
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                final = sampler.run_mcmc(state, steps, progress=False)
            p0 = np.array(final.coords)
        self.positions = p0
        return p0.copy()

    def reset(self) -> None:
        """Forget the walkers (the next fit burns in again)."""
        self.positions = None


def effective_log_likelihood(kernel: gp.Kernel, X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Log evidence of rows ``theta`` on original-unit ``y`` (for tests and diagnostics)."""
    shift, scale = gp.standardise(y)
    y_std = (np.asarray(y, dtype=float) - shift) / scale
    return log_posterior(kernel, X, y_std, theta) - gp.log_prior(kernel, theta) - len(y) * math.log(scale)


# The settings every plugin with an emcee-marginalised GP declares (defaults: RoBO's
# bayesian_optimization / entropy_search / fabolas drivers, which fabolas.txt 3.4 used).
MCMC_SETTINGS = {
    "n_walkers": Setting(0, "emcee walkers; 0 = 3 x number of GP hyperparameters, even (RoBO n_hypers rule)",
                         domain=NONNEGATIVE_INT),
    "burnin": Setting(100, "MCMC burn-in steps at the first fit (RoBO: burnin=100)", domain=NONNEGATIVE_INT),
    "chain_length": Setting(200, "MCMC steps per later fit, continuing the chain (RoBO: chain_length=200)",
                            domain=POSITIVE_INT),
}
