"""Random search: uniform samples from the space, always at full fidelity."""
from __future__ import annotations

from collections.abc import Sequence

from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial


class RandomSearch(Optimizer):
    """Uniform random sampling (Bergstra and Bengio, 2012); the baseline in every paper.

    Given an initial design (``initial_design: benchmark``), its points come first.
    """

    name = "random_search"
    description = "uniform random configurations at full fidelity (every paper's baseline)"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed", "architecture"}, fidelity="ignores", parallel=True,
                            initial_design=True)

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        return Suggestion(self.sample_initial(), self.full_fidelity())
