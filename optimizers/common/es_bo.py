"""Shared machinery of the entropy-search plugins: entropy_search, fabolas and mtbo.

:class:`CostAwareES` is the information-gain-per-cost loop of fabolas.txt Algorithm 1:
fit a GP on the loss and one on the log cost over (x, fidelity coordinate), both with
MCMC-marginalised hyperparameters; sample representer points at the target fidelity from
an EI-based measure; maximise ``information gain about the minimiser at the target /
(predicted cost + optimizer overhead)`` (Eq. 7 and Sec. 3.2); the incumbent is the
evaluated configuration with the lowest predicted loss at the target (Sec. 3.2); before
the first model fit (during the initial design, where the paper's Algorithm 1 has no
incumbent rule) it is the best configuration seen at any fidelity. Fabolas
and MTBO differ only in the fidelity coordinate (continuous log-scaled s vs. a task index),
the kernels and the initial design.

Pending trials of other workers are hallucinated at the posterior mean of every
hyperparameter sample (kriging believer), which keeps the entropy computation at one
posterior per sample; gp_ei uses Monte Carlo fantasies instead.
"""
from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchsuite.optimizer import Optimizer, Suggestion, Trial
from benchsuite.settings import NONNEGATIVE_INT, POSITIVE_INT, Setting

from ..acquisition import optimize as acq_opt
from ..acquisition.entropy import EntropySearch, sample_representers
from ..acquisition.functions import integrated_ei
from ..inference.mcmc import HyperparameterSampler
from ..kernels.continuous import Kernel
from ..models import gp
from ..models.posterior import condition_on_pending
from .bo_common import check_vector_space, single_threaded_blas, unit_snap

ES_SETTINGS: dict[str, Setting] = {
    "n_representers": Setting(50, "representer points for p_min (Hennig and Schuler 2012; RoBO n_representer=50)",
                              domain=POSITIVE_INT),
    "n_pmin_samples": Setting(200, "Monte Carlo draws of f at the representers per hyperparameter sample "
                                   "(our choice: p_min is estimated by Monte Carlo, see optimizers/acquisition/entropy.py)",
                              domain=POSITIVE_INT),
    "n_innovations": Setting(5, "Gauss-Hermite nodes for the expectation over the new observation (our choice)",
                             domain=POSITIVE_INT),
    "n_pool": Setting(1000, "Sobol pool resampled into representers by EI (our choice)", domain=POSITIVE_INT),
    "n_candidates": Setting(256, "Sobol candidates for the global stage of the acquisition search (our choice)",
                            domain=POSITIVE_INT),
    "n_spray": Setting(64, "candidates sprayed around the best observations (our choice)", domain=NONNEGATIVE_INT),
    "n_starts": Setting(2, "local random-search starts from the best candidates (our choice)", domain=POSITIVE_INT),
    "local_rounds": Setting(3, "rounds of local random search, radius halving each round (our choice)",
                            domain=POSITIVE_INT),
    "n_local": Setting(32, "points per start and round of local search (our choice)", domain=POSITIVE_INT),
}


def _transform_loss(losses: np.ndarray, how: str) -> np.ndarray:
    if how == "log" or (how == "auto" and losses.size and np.all(losses > 0)):
        return np.log(np.maximum(losses, 1e-300))
    return losses


class CostAwareES(Optimizer):
    """Base of fabolas and mtbo: entropy search about the minimiser at the target fidelity per unit cost."""

    needs = ("emcee",)  # the [bo] extra
    name = ""  # abstract: not registered
    common_settings: dict[str, Setting] = {
        **ES_SETTINGS,
        "burnin": Setting(100, "MCMC burn-in steps at the first fit (RoBO fmin/fabolas.py burnin=100)",
                          domain=NONNEGATIVE_INT),
        "chain_length": Setting(100, "MCMC steps per later fit (RoBO fmin/fabolas.py chain_length=100)",
                                domain=POSITIVE_INT),
        "n_walkers": Setting(12, "emcee walkers = hyperparameter samples (RoBO fmin/fabolas.py n_hypers=12); raised "
                                 "to emcee's minimum of 2 x the number of hyperparameters", domain=POSITIVE_INT),
        "overhead_in_cost": Setting(True, "add the optimizer's last measured overhead (on the run's clock, "
                                          "Optimizer.timer) to the predicted cost (fabolas.txt Sec. 3.2); false "
                                          "makes runs timing-independent"),
        "loss_transform": Setting("auto", "model log(loss) (RoBO's Fabolas and MTBO do) or the raw loss; auto = log "
                                          "when every loss is positive", choices=("auto", "log", "none")),
    }

    # -- what subclasses provide ----------------------------------------------------------------
    @abstractmethod
    def make_kernels(self, d: int) -> tuple[Kernel, Kernel]:
        """Kernels of the loss and the log-cost GP over ``d`` cube dims plus the fidelity column."""

    @abstractmethod
    def fid_coord(self, values: Sequence[float | None]) -> np.ndarray:
        """Fidelity values to the model's fidelity coordinate."""

    @abstractmethod
    def fid_value(self, coord: float) -> float:
        """A model coordinate to an allowed fidelity value."""

    @abstractmethod
    def snap_coord(self, coords: np.ndarray) -> np.ndarray:
        """Coordinates moved onto the allowed set (a column vector)."""

    @abstractmethod
    def initial_design(self) -> list[tuple[np.ndarray, float]]:
        """The initial (cube point, fidelity value) pairs."""

    target_coord: float = 1.0

    # -- the loop ----------------------------------------------------------------------------------
    def setup(self) -> None:
        self.space = check_vector_space(self.space, self.name)
        if self.fidelity is None:
            from benchsuite.errors import UnsupportedError

            raise UnsupportedError(f"optimizer {self.name!r} needs a benchmark with a fidelity axis")
        self.d = len(self.space)
        self.x_snap = unit_snap(self.space)
        self.k_loss, self.k_cost = self.make_kernels(self.d)
        st = self.settings
        self.s_loss = HyperparameterSampler(self.k_loss, self.rng, st["n_walkers"], st["burnin"], st["chain_length"])
        self.s_cost = HyperparameterSampler(self.k_cost, self.rng, st["n_walkers"], st["burnin"], st["chain_length"])
        self.design = self.initial_design()
        self.n_asked = 0
        self.theta_loss: np.ndarray | None = None
        self.last_overhead = 0.0
        self.last_timing: dict[str, float] = {}

    def _snap(self, C: np.ndarray) -> np.ndarray:
        return np.column_stack([self.x_snap(C[:, :self.d]), self.snap_coord(C[:, self.d])])

    def _data(self) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray]:
        done = [t for t in self.history if t.result is not None and not t.result.failed]
        configs = [t.config for t in done]
        if not done:
            return configs, np.empty((0, self.d + 1)), np.empty(0), np.empty(0)
        X = np.column_stack([self.space.to_unit(configs), self.fid_coord([t.fidelity for t in done])])
        y = _transform_loss(np.array([t.result.loss for t in done], dtype=float), self.settings["loss_transform"])
        c = np.log(np.maximum(np.array([t.result.cost_s for t in done], dtype=float), 1e-6))
        return configs, X, y, c

    def _at_target(self, Xcube: np.ndarray) -> np.ndarray:
        return np.column_stack([Xcube, np.full(Xcube.shape[0], self.target_coord)])

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        with single_threaded_blas():
            return self._ask(pending)

    def _ask(self, pending: Sequence[Trial]) -> Suggestion:
        t_start = self.timer()
        i = self.n_asked
        self.n_asked += 1
        configs, X, y, c = self._data()
        if i < len(self.design) or len(y) < 2:
            if i < len(self.design):
                x, s = self.design[i]
            else:  # failures ate the design: another random point at the design's cheapest fidelity
                x, s = self.x_snap(self.rng.random((1, self.d)))[0], self.design[0][1]
            return Suggestion(self.space.from_unit(x), s, {"phase": "init"})
        st = self.settings
        post = self.s_loss.fit(X, y)
        post_c = self.s_cost.fit(X, c)
        self.theta_loss = post.theta
        t_fit = self.timer()
        Xp = None
        if pending:
            Xp = np.column_stack([self.x_snap(self.space.to_unit([t.config for t in pending])),
                                  self.fid_coord([t.fidelity for t in pending])])
        post = condition_on_pending(post, Xp, self.rng, "mean")
        # representers: EI at the target fidelity against the best predicted loss of an evaluated configuration
        mu_obs = post.predict(self._at_target(X[:, :self.d])).mean
        bests = mu_obs.min(1)

        def ei_target(Zx: np.ndarray) -> np.ndarray:
            return integrated_ei(post.predict(self._at_target(Zx)), bests)

        Zx, log_b = sample_representers(ei_target, self.d, self.rng, st["n_representers"], st["n_pool"], self.x_snap)
        es = EntropySearch(post, self._at_target(Zx), log_b, self.rng, st["n_pmin_samples"], st["n_innovations"])
        overhead = self.last_overhead if st["overhead_in_cost"] else 0.0

        def acq(C: np.ndarray) -> np.ndarray:
            cost = np.exp(post_c.predict(C).mean.mean(0))
            return es(C) / (cost + overhead)

        anchors = X[np.argsort(mu_obs.mean(0))[:5]]
        x, v = acq_opt.maximize(acq, self.d + 1, self.rng, n_candidates=st["n_candidates"], anchors=anchors,
                                n_spray=st["n_spray"], n_starts=st["n_starts"], local="random",
                                local_rounds=st["local_rounds"], n_local=st["n_local"], snap=self._snap)
        t_end = self.timer()
        self.last_overhead = t_end - t_start
        self.last_timing = {"mcmc_s": t_fit - t_start, "acq_s": t_end - t_fit}
        s = self.fid_value(float(x[self.d]))
        return Suggestion(self.space.from_unit(x[:self.d]), s, {"phase": "bo", "acq": float(v)})

    def recommend(self) -> Any | None:
        """The evaluated configuration with the lowest predicted loss at the target fidelity (fabolas.txt 3.2)."""
        if self.theta_loss is None:
            return super().recommend()
        with single_threaded_blas():
            return self._recommend()

    def _recommend(self) -> Any | None:
        configs, X, y, _ = self._data()
        if len(y) < 2:
            return super().recommend()
        post = gp.GPPosterior(self.k_loss, X, y, self.theta_loss)
        keys, first = {}, []
        for j, cfg in enumerate(configs):
            k = self.space.key(cfg)
            if k not in keys:
                keys[k] = j
                first.append(j)
        Xt = self._at_target(X[first, :self.d])
        mu = post.predict(Xt).mean.mean(0)
        return configs[first[int(np.argmin(mu))]]


def log_fraction_value(fidelity: Any, fraction: float) -> float:
    """The allowed fidelity value nearest ``fraction`` of the full value."""
    return fidelity.snap(min(max(fidelity.full * fraction, fidelity.low), fidelity.high))
