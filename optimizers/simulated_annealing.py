"""Simulated annealing over a discrete space (COMBO's SA baseline, combo.txt Sec. 4; Spears 1993)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchsuite.benchmark import Fidelity, Result
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import NONNEGATIVE_INT, POSITIVE, POSITIVE_INT, Setting, require_at_most

from .acquisition.annealing import random_moves, unordered_mask


class SimulatedAnnealing(Optimizer):
    """Metropolis walk over one-variable moves with a geometric cooling schedule.

    After ``n_init`` random configurations (the shared initial design of combo.txt's
    experiments) the walk starts at the best of them. Each step proposes a random
    neighbour (ordinal: adjacent level; categorical/binary: any other level) and accepts
    a worse one with probability ``exp(-(f' - f) / T)``. Temperatures are multiples of
    the spread (standard deviation) of the initial losses, so the schedule does not depend
    on the objective's units; T falls geometrically from ``t_max`` to ``t_min`` over
    ``n_steps`` steps and stays at ``t_min`` afterwards. A proposal that was already
    evaluated is accepted or rejected with its known loss without spending an evaluation
    (at most ``max_free_steps`` such steps per ask). With several workers, proposals are
    drawn from the current state while earlier ones are still running.
    """

    name = "simulated_annealing"
    initial_points_setting = "n_init"  # a budget of at most this many is random search
    description = "simulated annealing over one-variable moves, geometric cooling (COMBO's SA baseline)"
    supports = Capabilities(spaces={"discrete"}, fidelity="ignores", parallel=True, initial_design=True)
    test_settings = {"n_init": 3}  # small: quick conformance checks
    settings_spec = {
        "n_init": Setting(20, "random configurations before the walk starts at the best (combo.txt Sec. 4: 20)",
                          domain=POSITIVE_INT),
        "t_max": Setting(1.0, "initial temperature, in units of the initial losses' standard deviation",
                         domain=POSITIVE),
        "t_min": Setting(0.01, "final temperature, same units", domain=POSITIVE),
        "n_steps": Setting(250, "Metropolis steps over which T cools from t_max to t_min", domain=POSITIVE_INT),
        "max_free_steps": Setting(100, "steps on already-evaluated neighbours allowed per ask",
                                  domain=NONNEGATIVE_INT),
    }

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any], fidelity: Fidelity | None) -> None:
        """The schedule cools: t_min <= t_max (equal: a constant temperature)."""
        require_at_most(f"optimizer {cls.name!r}", settings, "t_min", "t_max",
                        "the temperature falls from t_max to t_min")

    def setup(self) -> None:
        self.n_levels = self.space.n_levels
        self.unordered = unordered_mask(self.space)
        self.known: dict[tuple, float] = {}
        self.current: np.ndarray | None = None
        self.current_loss = math.inf
        self.steps = 0
        self.scale: float | None = None

    def temperature(self) -> float:
        """Current temperature in the objective's units."""
        s = self.settings
        frac = min(self.steps / max(s["n_steps"] - 1, 1), 1.0)
        return (self.scale or 1.0) * s["t_max"] * (s["t_min"] / s["t_max"]) ** frac

    def _metropolis(self, code: np.ndarray, loss: float) -> None:
        if self.current is None:
            return
        delta = loss - self.current_loss
        t = self.temperature()
        if delta <= 0 or (t > 0 and self.rng.random() < math.exp(-delta / t)):
            self.current, self.current_loss = code, loss
        self.steps += 1

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        if self.current is None:
            return Suggestion(self.sample_initial(), self.full_fidelity())
        busy = {self.space.key(t.config) for t in pending}
        for _ in range(self.settings["max_free_steps"] + 1):
            cand = random_moves(self.current[None, :], self.n_levels, self.unordered, self.rng)[0]
            key = tuple(int(c) for c in cand)
            if key in self.known:
                self._metropolis(cand, self.known[key])
                continue
            config = self.space.from_codes(cand)
            if self.space.key(config) in busy:
                continue
            return Suggestion(config, self.full_fidelity(), info={"temperature": self.temperature()})
        return Suggestion(self.space.from_codes(cand), self.full_fidelity())

    def tell(self, trial: Trial, result: Result) -> None:
        super().tell(trial, result)
        if result.failed or not math.isfinite(result.loss):
            return
        code = self.space.to_codes(trial.config)
        self.known[tuple(int(c) for c in code)] = result.loss
        if self.current is not None:
            self._metropolis(code, result.loss)
            return
        _, losses, _ = self.observations()
        if len(losses) >= max(self.settings["n_init"], 1):
            self.scale = float(np.std(losses)) or float(np.abs(losses).mean()) or 1.0
            best = self.space.to_codes(self.recommend())
            self.current, self.current_loss = best, float(losses.min())
