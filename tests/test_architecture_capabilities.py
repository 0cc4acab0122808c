"""Declared architecture capabilities (issue 22, item 4): spaces announce what they can do, optimizers
state what they need, and a mismatch is one line naming the missing capability."""
from __future__ import annotations

import numpy as np
import pytest

from benchsuite import registry
from benchsuite.errors import UnsupportedError
from benchsuite.space import SPACE_CAPABILITIES, SearchSpace
from benchsuite.testing import ToyChainSpace

# capability -> the method a space that announces it must have
METHOD = {"build": "build", "mutate": "mutate", "distance": "distance", "initial_pool": "initial_pool",
          "walk": "walk", "hyperparameters": "hyperparameters", "features": "features",
          "canonical_key": "canonical", "otmann": None, "feed_forward": "feed_forward"}
# capabilities whose method no base class defines: having the method without announcing it is a mistake
NOT_INHERITED = ("distance", "initial_pool", "walk", "hyperparameters", "features", "feed_forward")


def _space_classes() -> dict[str, type]:
    out = {}
    for name, entry in registry.benchmarks().items():
        cls = getattr(entry.obj, "space_class", None)
        if cls is not None:
            out[cls.__name__] = cls
    out["ToyChainSpace"] = ToyChainSpace
    return out


def test_the_vocabulary_has_a_method_for_each_capability() -> None:
    assert set(METHOD) == set(SPACE_CAPABILITIES)


@pytest.mark.parametrize("cls", list(_space_classes().values()), ids=list(_space_classes()))
def test_a_space_announces_exactly_what_it_implements(cls: type) -> None:
    caps = cls.capabilities
    assert caps <= set(SPACE_CAPABILITIES), f"{cls.__name__} announces unknown {sorted(caps - set(SPACE_CAPABILITIES))}"
    for cap in caps:
        if METHOD[cap] is not None:
            assert callable(getattr(cls, METHOD[cap], None)), f"{cls.__name__} announces {cap} but has no {METHOD[cap]}"
    for cap in NOT_INHERITED:
        if callable(getattr(cls, METHOD[cap], None)):
            assert cap in caps, f"{cls.__name__} has {METHOD[cap]}() but does not announce {cap!r}"


def test_every_architecture_benchmark_declares_its_space_class() -> None:
    names = ["nb201_cifar10", "nb201_live", "combo_nas", "nasbot_mlp_naval", "nasbot_cnn_cifar10",
             "deeparchitect_cifar10", "da_nb201_cifar10"]
    for name in names:
        cls = registry.get_benchmark(name).space_class
        assert cls is not None and "build" in cls.capabilities, name


def test_every_nas_optimizer_runs_on_every_space_that_serves_it() -> None:
    """Pairings are decided by kinds and capabilities alone (no duck typing): each optimizer that searches
    architecture spaces accepts each registered architecture space offering what it needs."""
    spaces = {n: c for n, c in _space_classes().items() if c is not ToyChainSpace}
    accepted = 0
    for name, entry in registry.optimizers().items():
        if entry.obj is None:  # unavailable here (an optional extra is missing): nothing to pair
            continue
        caps = entry.obj.supports
        if "architecture" not in caps.spaces:
            continue
        for space_cls in spaces.values():
            if caps.needs <= space_cls.capabilities:
                accepted += 1
            elif "DeepArchitect" in caps.needs_hint:
                assert "walk" in caps.needs and "walk" not in space_cls.capabilities
    assert accepted >= 10


def test_a_missing_capability_is_one_line_naming_it() -> None:
    class WalkOnly(ToyChainSpace):
        capabilities = frozenset({"walk"})

    smbo = registry.get_optimizer("da_smbo")
    with pytest.raises(UnsupportedError) as err:
        smbo.check_supports(WalkOnly(), None, 1)  # walks, but announces no features
    msg = str(err.value)
    assert "\n" not in msg and "features" in msg and "WalkOnly offers walk" in msg
    smbo.check_supports(ToyChainSpace(), None, 1)
    registry.get_optimizer("da_mcts").check_supports(ToyChainSpace(), None, 2)  # walk is all MCTS needs


def test_a_network_building_vector_space_serves_the_nas_optimizers() -> None:
    """The NAS-Bench-201 cell is a categorical space that builds networks: NASBOT's searchers take it
    (with their fallback distance), DeepArchitect's refuse it for want of the language's walk."""
    bench = registry.make_benchmark("nb201_cifar10")
    registry.get_optimizer("nasbot").check_supports(bench.space, bench.fidelity, 1)
    with pytest.raises(UnsupportedError, match="capability walk"):
        registry.get_optimizer("da_random").check_supports(bench.space, bench.fidelity, 1)


def test_the_one_build_signature(tmp_path) -> None:
    """Every building space answers build(config, in_shape, n_out) with a torch module of that output size."""
    torch = pytest.importorskip("torch")
    from benchsuite.architectures import combo_cell, nb201
    from benchsuite.architectures.deeparchitect import make_space
    from benchsuite.architectures.layer_graph_space import LayerGraphSpace

    rng = np.random.default_rng(0)
    cases = [(nb201.cell_space(), (3, 8, 8), 5), (combo_cell.make_space(), (3, 8, 8), 4),
             (LayerGraphSpace("mlp", max_num_units_per_layer=64), (7,), 1),
             (make_space("nb201"), (3, 8, 8), 3)]
    for space, shape, n_out in cases:
        assert "build" in space.capabilities
        config = space.sample(rng)
        if not space.is_valid(config):
            config = next(c for c in (space.sample(rng) for _ in range(100)) if space.is_valid(c))
        net = space.build(config, shape, n_out)
        out = net(torch.zeros((2, *shape)))
        assert tuple(out.shape) == (2, n_out), type(space).__name__


def test_plain_search_spaces_announce_nothing() -> None:
    assert SearchSpace.capabilities == frozenset()
