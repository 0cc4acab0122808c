"""Regularized (aging) evolution, Real et al. 2019, as COMBO's NAS baseline (combo.txt Supp. 4.4.4)."""
from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from benchsuite.benchmark import Fidelity, Result
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import POSITIVE_INT, Setting, require_at_most


class RegularizedEvolution(Optimizer):
    """Tournament selection with aging: the oldest member, not the worst, leaves the population.

    The first ``population_size`` trials are random. Afterwards each ask samples
    ``sample_size`` members uniformly without replacement, mutates the best of them
    (one random neighbour: on a binary space a single bit flip, which covers every
    mutation of Real et al. in COMBO's binary NAS space, Supp. 4.4.4) and, when the child
    is told, appends it and removes the oldest member. Population 50 and sample 15 are
    the sizes the COMBO authors used for budgets of a few hundred evaluations (Supp. 4.4.4;
    the numbers are lost from our text of the paper, taken from the authors' code).
    Failed trials do not enter the population. Works on any space with ``neighbours``,
    including architecture spaces. With ``valid_only`` a child that the space says is not
    valid (``SearchSpace.is_valid``: COMBO's cells without an input-output path) is mutated
    again, as the COMBO authors gave RE "an advantage by only allowing valid architectures
    in mutation steps" (Supp. 4.4.4); the random initial population is not filtered.
    """

    name = "regularized_evolution"
    initial_points_setting = "population_size"  # a budget of at most this many is random search
    description = "regularized (aging) evolution with tournament selection (Real et al. 2019)"
    supports = Capabilities(spaces={"discrete", "architecture"}, fidelity="ignores",
                            parallel=True, initial_design=True)
    test_settings = {"population_size": 4, "sample_size": 2}  # small: quick conformance checks
    settings_spec = {
        "population_size": Setting(50, "population size P (COMBO Supp. 4.4.4 / authors' code: 50)",
                                   domain=POSITIVE_INT),
        "sample_size": Setting(15, "tournament sample size S (COMBO Supp. 4.4.4 / authors' code: 15)",
                               domain=POSITIVE_INT),
        "avoid_duplicates": Setting(True, "re-mutate (up to 20 times) a child that was already evaluated"),
        "valid_only": Setting(True, "re-mutate (up to 20 times) a child the space calls invalid (COMBO Supp. 4.4.4)"),
    }

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any], fidelity: Fidelity | None) -> None:
        """A tournament draws ``sample_size`` members of the population: S <= P (Real et al. 2019)."""
        require_at_most(f"optimizer {cls.name!r}", settings, "sample_size", "population_size",
                        "a tournament samples members of the population")

    def setup(self) -> None:
        self.population: deque[tuple[object, float]] = deque()
        self.seen: set = set()

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        if len(self.population) < self.settings["population_size"] and \
                len(self.history) + len(pending) < self.settings["population_size"]:
            return Suggestion(self.sample_initial(), self.full_fidelity())
        if not self.population:  # all initial trials failed
            return Suggestion(self.space.sample(self.rng), self.full_fidelity())
        members = list(self.population)
        k = min(self.settings["sample_size"], len(members))
        idx = self.rng.choice(len(members), size=k, replace=False)
        parent = min((members[i] for i in idx), key=lambda m: m[1])[0]
        busy = {self.space.key(t.config) for t in pending}
        child = self.space.mutate(parent, self.rng)
        for _ in range(20):
            if self._acceptable(child, busy):
                break
            child = self.space.mutate(parent, self.rng)
        return Suggestion(child, self.full_fidelity())

    def _acceptable(self, child: object, busy: set) -> bool:
        if self.settings["valid_only"] and not self.space.is_valid(child):
            return False
        if self.settings["avoid_duplicates"]:
            key = self.space.key(child)
            return key not in self.seen and key not in busy
        return True

    def tell(self, trial: Trial, result: Result) -> None:
        super().tell(trial, result)
        self.seen.add(self.space.key(trial.config))
        if result.failed or not math.isfinite(result.loss):
            return
        self.population.append((trial.config, result.loss))
        while len(self.population) > self.settings["population_size"]:
            self.population.popleft()
