"""BOCS's simulated annealing, the SA baseline of COMBO's binary tables (combo.txt Table 1; BOCS ``simulated_annealing.m``)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from benchsuite.benchmark import Result
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import POSITIVE, POSITIVE_INT, Interval, Setting

from .acquisition.annealing import random_moves, unordered_mask


class SimulatedAnnealingBOCS(Optimizer):
    """Simulated annealing as in BOCS's MATLAB baseline (Baptista and Poloczek 2018, ``algorithms/simulated_annealing.m``).

    combo.txt's binary experiments (Sec. 4.1, Table 1; Supp. 4.1) compare against BOCS's
    baselines, whose code the COMBO authors ran on their exported instances; this is that
    SA. The walk starts at one random configuration; before every proposal the temperature
    is multiplied by 0.8, starting from T = 1 in the objective's own units (so the first
    proposal runs at 0.8 and, after about 20 steps, T < 0.01 and the walk is a greedy
    one-bit-flip search); a proposal flips one uniformly chosen bit and is accepted when it
    is better, else with probability ``exp((f_old - f_new) / T)``. Every proposal is
    evaluated, including ones seen before (BOCS keeps no memory), so the budget of 170
    evaluations is one start plus 169 proposals. On non-binary variables the move is the
    suite's one-variable move (a categorical jumps to another level, an ordinal steps to
    a neighbour), which BOCS's binary code does not define.

    Settings beyond BOCS: ``n_init`` > 1 starts from the best of that many random
    configurations (BOCS: 1; the COMBO authors' own SA for pest control starts from the
    best of their 20 initial points). Failed evaluations are rejected proposals. One
    worker only: each Metropolis step needs the previous decision. COMBO's SA for the
    ordinal and categorical tables, with its own schedule, is ``simulated_annealing``.
    """

    name = "simulated_annealing_bocs"
    initial_points_setting = "n_init"  # a budget of at most this many is random search
    description = "BOCS's simulated annealing (T=1, x0.8 per step, one bit flip): combo.txt Table 1's SA baseline"
    supports = Capabilities(spaces={"discrete"}, fidelity="ignores", parallel=False)
    test_settings = {"n_init": 1}
    settings_spec = {
        "n_init": Setting(1, "random configurations before the walk starts at the best (BOCS: 1)",
                          domain=POSITIVE_INT),
        "t_init": Setting(1.0, "initial temperature in the objective's units (BOCS simulated_annealing.m: 1)",
                          domain=POSITIVE),
        "cooling": Setting(0.8, "factor on T before each proposal (BOCS simulated_annealing.m: 0.8)",
                           type=float, domain=Interval(float, 0, 1, closed="neither")),
    }

    def setup(self) -> None:
        self.n_levels = self.space.n_levels
        self.unordered = unordered_mask(self.space)
        self.current: np.ndarray | None = None
        self.current_loss = math.inf
        self.temperature = float(self.settings["t_init"])
        self.accepted = 0

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        if self.current is None:
            return Suggestion(self.space.sample(self.rng), self.full_fidelity())
        self.temperature *= self.settings["cooling"]  # BOCS cools before each proposal
        cand = random_moves(self.current[None, :], self.n_levels, self.unordered, self.rng)[0]
        return Suggestion(self.space.from_codes(cand), self.full_fidelity(),
                          info={"temperature": self.temperature})

    def tell(self, trial: Trial, result: Result) -> None:
        super().tell(trial, result)
        if self.current is None:
            _, losses, _ = self.observations()
            if len(losses) >= self.settings["n_init"]:
                self.current = self.space.to_codes(self.recommend())
                self.current_loss = float(losses.min())
            return
        if result.failed or not math.isfinite(result.loss) or "temperature" not in trial.info:
            return
        t = float(trial.info["temperature"])
        delta = self.current_loss - float(result.loss)
        # BOCS: (new < old) || (rand < exp((old - new) / T)); rand drawn only when not better.
        # T underflows to 0 after ~3,300 steps: then only improvements are taken
        if delta > 0 or self.rng.random() < (math.exp(delta / t) if t > 0 else 0.0):
            self.current = self.space.to_codes(trial.config)
            self.current_loss = float(result.loss)
            self.accepted += 1
