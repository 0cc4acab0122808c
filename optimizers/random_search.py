"""Random search: uniform samples from the space, always at full fidelity."""
from __future__ import annotations

from collections.abc import Sequence

from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial


class RandomSearch(Optimizer):
    """Uniform random sampling (Bergstra and Bengio, 2012); the baseline in every paper."""

    name = "random_search"
    description = "uniform random configurations at full fidelity (every paper's baseline)"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed", "architecture"}, fidelity="ignores", parallel=True)

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        return Suggestion(self.space.sample(self.rng), self.full_fidelity())
