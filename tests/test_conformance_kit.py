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
    with pytest.raises(PluginError, match="a configuration the space does not hold"):
        check_optimizer(OutOfRange)


def test_kit_catches_missing_incumbent():
    with pytest.raises(AssertionError, match="recommend"):
        check_optimizer(NeverRecommends)


class _EmptyCells(Optimizer):
    """Proposes COMBO cells without any edge (infeasible: no input-output path) on binary spaces."""

    name = "empty_cells"
    description = "test: infeasible cells"
    supports = Capabilities(spaces={"discrete"}, feasible_only=True)

    def ask(self, pending=()):
        config = self.space.sample(self.rng)
        binary_edges = {k for k, v in config.items() if k.startswith("edge_") and v in (0, 1)}  # not NB201's ops
        return Suggestion({k: 0 if k in binary_edges else v for k, v in config.items()}, self.full_fidelity())


def test_constrained_spaces_count_infeasible_proposals_and_hold_feasible_only_to_its_word():
    from dataclasses import replace

    from benchsuite.testing import check_constrained

    with pytest.raises(AssertionError, match="empty_cells on the combo_nas cell space: it declares feasible_only "
                                             "but proposed 8 infeasible"):
        check_constrained(_EmptyCells, budget=8)

    class Honest(_EmptyCells):
        name = "honest_empty_cells"
        supports = replace(_EmptyCells.supports, feasible_only=False)

    cases = {c.space: c for c in check_constrained(Honest, budget=8)}
    assert cases["combo_nas cell"].infeasible == 8 and cases["nb201 cell"].infeasible == 0
    assert set(cases) == {"combo_nas cell", "nb201 cell"}  # only the spaces of the kinds it supports
