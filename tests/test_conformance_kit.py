"""The conformance kit must catch plugins that break the contract."""
import itertools

import numpy as np
import pytest

from benchsuite.errors import PluginError
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion
from benchsuite.testing import check_optimizer

_counter = itertools.count()


class HiddenState(Optimizer):
    """Uses state outside its seeded Generator (a module-level counter)."""

    name = "hidden_state"
    description = "bad: not reproducible"
    supports = Capabilities(spaces={"continuous"})

    def ask(self, pending=()):
        rng = np.random.default_rng(next(_counter))
        return Suggestion(self.space.sample(rng), self.full_fidelity())


class OutOfRange(Optimizer):
    """Suggests a value outside the space."""

    name = "out_of_range"
    description = "bad: invalid configurations"
    supports = Capabilities(spaces={"continuous"})

    def ask(self, pending=()):
        cfg = self.space.sample(self.rng)
        cfg[self.space.names[0]] = 1e9
        return Suggestion(cfg, self.full_fidelity())


class NeverRecommends(Optimizer):
    """Forgets to give an incumbent."""

    name = "never_recommends"
    description = "bad: recommend returns None"
    supports = Capabilities(spaces={"continuous"})

    def ask(self, pending=()):
        return Suggestion(self.space.sample(self.rng), self.full_fidelity())

    def recommend(self):
        return None


def test_kit_catches_hidden_random_state():
    with pytest.raises(AssertionError, match="same seed gave different suggestions"):
        check_optimizer(HiddenState)


def test_kit_catches_invalid_configurations():
    with pytest.raises(PluginError, match="invalid configuration"):
        check_optimizer(OutOfRange)


def test_kit_catches_missing_incumbent():
    with pytest.raises(AssertionError, match="recommend"):
        check_optimizer(NeverRecommends)
