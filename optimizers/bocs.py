"""BOCS-SA: Bayesian optimisation of combinatorial structures (Baptista and Poloczek 2018).

The baseline combo.txt Sec. 4 compares with (BOCS-SA; the SDP variant is not provided).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from benchsuite.benchmark import Result
from benchsuite.errors import InvalidSettingError
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import NONNEGATIVE_INT, POSITIVE_INT, Setting

from .acquisition.annealing import all_neighbours, anneal_batch, unordered_mask
from .common.bo_common import single_threaded_blas
from .models.sparse_blr import HorseshoeRegression


class InteractionFeatures:
    """Indicator features of a discrete space and their products up to a given order.

    Each variable with L levels contributes L - 1 indicators (level 0 is the baseline;
    for binary variables the indicator is the bit itself, as in BOCS). Features of order
    k are products of k indicators belonging to k different variables (BOCS Sec. 3.1; its
    supplement's extension to categorical variables by one-hot encoding).
    """

    def __init__(self, n_levels: np.ndarray, order: int):
        self.n_levels = np.asarray(n_levels)
        owner, level = [], []
        for j, nl in enumerate(self.n_levels):
            for k in range(1, int(nl)):
                owner.append(j)
                level.append(k)
        self.owner, self.level = np.array(owner), np.array(level)
        m = len(owner)
        self.terms: list[np.ndarray] = [np.arange(m)[:, None]]
        for k in range(2, order + 1):
            combos = [c for c in itertools.combinations(range(m), k)
                      if len(set(self.owner[list(c)])) == k]
            if combos:
                self.terms.append(np.array(combos, dtype=np.int64))
        self.n_features = sum(len(t) for t in self.terms)

    def indicators(self, codes: np.ndarray) -> np.ndarray:
        """0/1 indicator matrix ``(n, m)`` of integer codes ``(n, d)``."""
        codes = np.atleast_2d(codes)
        return (codes[:, self.owner] == self.level).astype(np.float64)

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        """Feature matrix ``(n, n_features)`` of integer codes ``(n, d)``."""
        z = self.indicators(codes)
        cols = [z[:, t].prod(axis=2) if t.shape[1] > 1 else z[:, t[:, 0]] for t in self.terms]
        return np.concatenate(cols, axis=1)


class BOCS(Optimizer):
    """Sparse Bayesian linear regression on interaction features, Thompson sampling, SA.

    The surrogate is a linear model on all indicator interactions up to ``order``
    (default 2, BOCS's and combo.txt's setting) with a horseshoe prior, sampled by Gibbs
    (:mod:`benchsuite.optimizers.models.sparse_blr`). Each ask draws one posterior sample of the
    coefficients (Thompson sampling, BOCS Sec. 3.2) and minimises that sampled model over
    the space by simulated annealing (``sa_restarts`` chains of ``sa_steps`` steps, one
    starting at the incumbent, the others at random points). A minimiser that was already
    evaluated or is running is replaced by the best fresh end state of the other chains,
    else a fresh neighbour of it.

    Deviation: BOCS's code reruns a fresh 1000-step Gibbs chain at every iteration; we
    keep the chain (burn-in ``gibbs_burnin`` at the first fit, then ``gibbs_steps`` warm
    sweeps per ask), so a run of a few hundred iterations takes minutes, not hours.
    """

    name = "bocs"
    description = "BOCS-SA: horseshoe sparse Bayesian regression on 2nd-order interactions, Thompson sampling + SA"
    supports = Capabilities(spaces={"discrete"}, fidelity="ignores", parallel=True, initial_design=True)
    # small settings for quick conformance checks (tests/test_every_plugin.py)
    test_settings = {"n_init": 4, "gibbs_burnin": 30, "gibbs_steps": 3, "sa_steps": 40}
    settings_spec = {
        "n_init": Setting(20, "random configurations before the model is used (combo.txt Sec. 4: 20)",
                          domain=POSITIVE_INT),
        "order": Setting(2, "highest order of interaction features (BOCS / combo.txt: 2)", domain=POSITIVE_INT),
        "gibbs_burnin": Setting(1000, "Gibbs sweeps at the first fit (BOCS: 1000 per fit)", domain=NONNEGATIVE_INT),
        "gibbs_steps": Setting(20, "warm Gibbs sweeps per ask after the first fit", domain=POSITIVE_INT),
        "sa_restarts": Setting(5, "annealing chains per ask (BOCS code: 5 reruns)", domain=POSITIVE_INT),
        "sa_steps": Setting(500, "annealing steps per chain", domain=POSITIVE_INT),
        "max_features": Setting(200_000, "refuse spaces whose feature count exceeds this (memory)",
                                domain=POSITIVE_INT),
    }

    def setup(self) -> None:
        self.n_levels = self.space.n_levels
        self.unordered = unordered_mask(self.space)
        self.features = InteractionFeatures(self.n_levels, self.settings["order"])
        if self.features.n_features > self.settings["max_features"]:
            raise InvalidSettingError(
                f"bocs: order {self.settings['order']} gives {self.features.n_features} features for this space, "
                f"more than max_features={self.settings['max_features']}; lower order or raise max_features")
        self.model = HorseshoeRegression(self.rng)
        self.fitted = False
        self.codes: list[np.ndarray] = []
        self.losses: list[float] = []

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        if len(self.losses) < max(self.settings["n_init"], 2):
            return Suggestion(self.sample_initial(), self.full_fidelity())
        # matrices of a few hundred rows: BLAS threads only add contention (50x slower under load)
        with single_threaded_blas():
            return self._model_ask(pending)

    def _model_ask(self, pending: Sequence[Trial]) -> Suggestion:
        X = self.features(np.array(self.codes))
        y = np.array(self.losses)
        steps = self.settings["gibbs_steps"] if self.fitted else self.settings["gibbs_burnin"]
        beta = self.model.fit(X, y, steps, warm=True)
        self.fitted = True
        b0 = self.model.intercept(beta)

        def surrogate(codes: np.ndarray) -> np.ndarray:
            return b0 + self.features(codes) @ beta

        n_chains = max(self.settings["sa_restarts"], 1)
        starts = self.space.sample_codes(self.rng, n_chains)
        starts[0] = self.codes[int(np.argmin(y))]
        best, fbest = anneal_batch(surrogate, starts, self.n_levels, self.unordered, self.rng,
                                   n_steps=self.settings["sa_steps"])
        taken = {tuple(int(v) for v in c) for c in self.codes}
        taken |= {tuple(int(v) for v in self.space.to_codes(t.config)) for t in pending}
        for i in np.argsort(fbest):
            if tuple(int(v) for v in best[i]) not in taken:
                return Suggestion(self.space.from_codes(best[i]), self.full_fidelity(),
                                  info={"predicted": float(fbest[i])})
        nbrs = all_neighbours(best[int(np.argmin(fbest))], self.n_levels, self.unordered)
        fresh = [r for r in nbrs if tuple(int(v) for v in r) not in taken]
        if fresh:
            vals = surrogate(np.array(fresh))
            return Suggestion(self.space.from_codes(fresh[int(np.argmin(vals))]), self.full_fidelity())
        return Suggestion(self.space.sample(self.rng), self.full_fidelity())

    def tell(self, trial: Trial, result: Result) -> None:
        super().tell(trial, result)
        if result.failed or not math.isfinite(result.loss):
            return
        self.codes.append(self.space.to_codes(trial.config))
        self.losses.append(float(result.loss))
