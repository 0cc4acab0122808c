"""Entropy search (Hennig and Schuler 2012), the ES baseline of fabolas.txt (Sec. 2.2, Eq. 3; Sec. 4).

Standard Bayesian optimisation at full fidelity with the same GP as gp_ei (Matern-5/2
ARD, emcee-marginalised hyperparameters) and the entropy-search acquisition of
``optimizers/acquisition/entropy.py``: representer points drawn from an EI-based measure, p_min
by Monte Carlo with common random numbers, expected information gain over Gauss-Hermite
innovations, averaged over hyperparameter samples. Running trials of other workers are
hallucinated at the posterior mean. Discrete/mixed spaces: rounding in the unit cube.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import POSITIVE_INT, Setting

from .acquisition import optimize as acq_opt
from .acquisition.entropy import EntropySearch as _ES
from .acquisition.entropy import sample_representers
from .acquisition.functions import integrated_ei
from .common.bo_common import design_step, setup_matern_gp, single_threaded_blas
from .common.es_bo import ES_SETTINGS
from .inference.mcmc import MCMC_SETTINGS
from .models.posterior import condition_on_pending


class EntropySearchOptimizer(Optimizer):
    """GP + entropy search about the location of the minimum, always at full fidelity."""

    needs = ("emcee",)  # the [bo] extra
    name = "entropy_search"
    initial_points_setting = "n_init"  # a budget of at most this many is random search
    description = "GP (Matern-5/2 ARD, emcee) + Hennig-Schuler entropy search, Monte Carlo p_min"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed"}, fidelity="ignores", parallel=True)
    # small settings for quick conformance checks (tests/test_every_plugin.py)
    test_settings = {"burnin": 5, "chain_length": 3, "n_representers": 10, "n_pmin_samples": 32,
                     "n_innovations": 3, "n_pool": 64, "n_candidates": 32, "n_spray": 8, "local_rounds": 1,
                     "n_local": 8}
    settings_spec = {
        "n_init": Setting(3, "initial Latin-hypercube design size (RoBO default n_init=3)", domain=POSITIVE_INT),
        **MCMC_SETTINGS,
        **ES_SETTINGS,
    }

    def setup(self) -> None:
        setup_matern_gp(self)
        self.n_asked = 0

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        with single_threaded_blas():
            return self._ask(pending)

    def _ask(self, pending: Sequence[Trial]) -> Suggestion:
        configs, y, _ = self.observations()
        init = design_step(self, len(y))
        if init is not None:
            return init
        st = self.settings
        X = self.space.to_unit(configs)
        post = self.sampler.fit(X, y)
        Xp = self.snap(self.space.to_unit([t.config for t in pending])) if pending else None
        post = condition_on_pending(post, Xp, self.rng, "mean")
        best = post.best()

        def ei(Z: np.ndarray) -> np.ndarray:
            return integrated_ei(post.predict(Z), best)

        Z, log_b = sample_representers(ei, self.dim, self.rng, st["n_representers"], st["n_pool"], self.snap)
        es = _ES(post, Z, log_b, self.rng, st["n_pmin_samples"], st["n_innovations"])
        x, v = acq_opt.maximize(es, self.dim, self.rng, n_candidates=st["n_candidates"],
                                anchors=X[np.argsort(y)[:5]], n_spray=st["n_spray"], n_starts=st["n_starts"],
                                local="random", local_rounds=st["local_rounds"], n_local=st["n_local"],
                                snap=self.snap)
        return Suggestion(self.space.from_unit(x), self.full_fidelity(), {"phase": "bo", "acq": float(v)})
