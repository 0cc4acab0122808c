"""GP-EI: Spearmint-style Bayesian optimisation (dngo.txt Sec. 2.1, 3.3; fabolas.txt Sec. 2, 3.4).

A GP with an ARD Matern-5/2 kernel on the unit cube, constant mean and Gaussian noise;
its hyperparameters are integrated out with emcee (priors of fabolas.txt Sec. 3.4) and
expected improvement is averaged over the samples ("integrated acquisition", Snoek et al.
2012). The chain is burnt in once and continued ``chain_length`` steps per ask (default 200, RoBO's;
Spearmint's ``mcmc_iters`` is 10, about 10x cheaper at n = 500: see ``models/mcmc.py``). EI is
maximised over Sobol candidates plus a spray around the best observations, refined with L-BFGS-B
on the exact gradient of integrated EI (plain Matern GP; finite differences for the warped one).
Speed options (issue 24), off by default until a regret table shows they decide as well (the
first one, on 6-7 Hartmann6 seeds, was inconclusive: docs in studies/gp_ei_regret.py):
``chain_length=10``; ``screen_samples=4`` ranks the candidates by the EI of 4 evenly spaced
hyperparameter samples and scores only the best 10% with all of them; ``batch_starts=auto``
runs the L-BFGS-B starts as one batched ascent from n = 150 on.

Parallel workers: the outcomes of running trials are Monte Carlo fantasies (dngo.txt
Sec. 3.3): for every hyperparameter sample, ``n_fantasies`` joint draws from the posterior
predictive at the pending points are appended to the data and EI is averaged over samples
and fantasies. ``pending="mean"`` instead hallucinates the posterior mean (kriging believer).

``input_warping`` (off by default) puts each input through a Beta CDF with sampled shapes, as
in the input-warped GP of Snoek et al. (2014) that dngo.txt Table 1 ran as "Spearmint"
(Sec. 4.1). ``length_scale_prior=tophat`` replaces the log-uniform length-scale prior of
fabolas.txt Sec. 3.4 by the one in Spearmint's released code, uniform on (0, 10]; on the
Hartmann6 seeds where the GP stalls it changed nothing (docs/results/dngo.md).

Discrete and mixed spaces are handled by rounding in the unit cube (every candidate is
snapped to the centre of its level's bin before it is scored). The fidelity axis is
ignored: every evaluation is at full fidelity.
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import NONNEGATIVE_INT, POSITIVE_INT, Setting

from .acquisition import optimize as acq_opt
from .acquisition.functions import integrated_ei, integrated_ei_grad
from .common.bo_common import design_step, setup_matern_gp, single_threaded_blas
from .inference.mcmc import MCMC_SETTINGS
from .kernels.continuous import LENGTH_SCALE_PRIORS
from .models import gp
from .models.posterior import condition_on_pending, pending_settings


class GPEI(Optimizer):
    """GP with MCMC-marginalised hyperparameters and integrated expected improvement."""

    needs = ("emcee",)  # the [bo] extra
    name = "gp_ei"
    initial_points_setting = "n_init"  # a budget of at most this many is random search
    description = "GP (Matern-5/2 ARD, emcee hyperparameters) + expected improvement, Spearmint style"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed"}, fidelity="ignores", parallel=True)
    # small settings for quick conformance checks (tests/test_every_plugin.py)
    test_settings = {"burnin": 5, "chain_length": 3, "n_init": 3, "n_candidates": 64, "n_spray": 16,
                     "n_starts": 1, "maxiter": 5}
    settings_spec = {
        "n_init": Setting(3, "initial Latin-hypercube design size (RoBO bayesian_optimization default n_init=3)",
                          domain=POSITIVE_INT),
        "input_warping": Setting(False, "Beta-CDF input warping, its shapes marginalised with the other "
                                        "hyperparameters (Snoek et al. 2014; the Spearmint of dngo.txt Table 1, "
                                        "Sec. 4.1); off: the plain GP of Snoek et al. 2012", type=bool),
        "length_scale_prior": Setting("log_uniform", "prior on each length scale (unit cube): log_uniform on "
                                                     "[e^-10, e^2] (fabolas.txt Sec. 3.4, RoBO) or tophat, uniform "
                                                     "on (0, 10] (Spearmint's released code)",
                                      choices=LENGTH_SCALE_PRIORS),
        **MCMC_SETTINGS,
        **acq_opt.SMOOTH_SEARCH_SETTINGS,
        "screen_samples": Setting(0, "hyperparameter samples (evenly spaced) whose averaged EI ranks the global "
                                     "candidates; only the best 10% are then scored with every sample. 0 scores "
                                     "every candidate with every sample (our choice, issue 24)",
                                  domain=NONNEGATIVE_INT),
        "batch_starts": Setting("never", "L-BFGS-B starts run as one batched ascent on their sum (as BoTorch does) "
                                        "or one after the other, each stopping on its own; auto batches from "
                                        "gp.TRSM_MIN_N observations on, where every call reads all factors "
                                        "(our choice, issue 24: separate runs took fewer evaluations at n = 100)",
                                choices=("auto", "always", "never")),
        **pending_settings(1, "one set per sample is an unbiased Monte Carlo estimate of the double integral"),
    }

    def setup(self) -> None:
        setup_matern_gp(self, input_warping=bool(self.settings["input_warping"]),
                        length_scale_prior=self.settings["length_scale_prior"])
        self.n_asked = 0
        self.last_timing: dict[str, float] = {}

    def _data(self) -> tuple[np.ndarray, np.ndarray]:
        configs, losses, _ = self.observations()
        X = self.space.to_unit(configs) if configs else np.empty((0, self.dim))
        return X, np.asarray(losses, dtype=float)

    def fit(self) -> gp.GPPosterior:
        """Sample hyperparameters on the current data and return the posterior (for tests too)."""
        X, y = self._data()
        return self.sampler.fit(X, y)

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        with single_threaded_blas():
            return self._ask(pending)

    def _ask(self, pending: Sequence[Trial]) -> Suggestion:
        X, y = self._data()
        init = design_step(self, len(y))
        if init is not None:
            return init
        t0, c0 = time.perf_counter(), time.process_time()
        post = self.sampler.fit(X, y)
        t1, c1 = time.perf_counter(), time.process_time()
        Xp = self.snap(self.space.to_unit([t.config for t in pending])) if pending else None
        post = condition_on_pending(post, Xp, self.rng, self.settings["pending"], int(self.settings["n_fantasies"]))
        best = post.best()  # lowest (observed or fantasised) value per sample (dngo.txt Eq. 2)

        def acq(Xc: np.ndarray) -> np.ndarray:
            return integrated_ei(post.predict(Xc), best)

        screen = None
        k = int(self.settings["screen_samples"])
        if 0 < k < post.n_samples:
            idx = np.unique(np.linspace(0, post.n_samples - 1, k).round().astype(int))
            sub, sub_best = post.subset(idx), best[idx]

            def screen(Xc: np.ndarray) -> np.ndarray:
                return integrated_ei(sub.predict(Xc), sub_best)

        acq_grad = None
        if hasattr(self.kernel, "cross_grad"):  # analytic gradient for the plain Matern GP (not the warped one)

            def acq_grad(Xc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                p, dmu, dvar = post.predict_grad(Xc)
                return integrated_ei_grad(p, dmu, dvar, best)

        mode = self.settings["batch_starts"]
        batch = mode == "always" or (mode == "auto" and X.shape[0] >= gp.TRSM_MIN_N)
        x, _ = acq_opt.maximize_smooth(acq, self.dim, self.rng, self.settings, X, y, snap=self.snap, screen=screen,
                                       batch_starts=batch, fn_grad=acq_grad)
        t2, c2 = time.perf_counter(), time.process_time()
        self.last_timing = {"mcmc_s": t1 - t0, "acq_s": t2 - t1, "mcmc_cpu_s": c1 - c0, "acq_cpu_s": c2 - c1}
        return Suggestion(self.space.from_unit(x), self.full_fidelity(), {"phase": "bo"})
