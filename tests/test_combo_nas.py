"""COMBO's NAS cell (combo.txt Sec. 4.4, Supp. 4.4): space, validity, network, FLOPs, live benchmark."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from benchsuite import datasets
from benchsuite.architectures import combo_cell as cc
from benchsuite.benchmark import Result
from benchsuite.benchmarks.combo_nas import LAMBDA, ComboNas, penalised, repeat_seeds
from benchsuite.errors import InvalidConfigError, InvalidSettingError
from benchsuite.registry import get_benchmark, get_optimizer
from benchsuite.runner import run

TINY = {"channels": 4, "n_train": 300, "n_val": 200, "n_test": 100, "epochs": 1, "n_repeats": 1, "threads": 1}


def fake_splits(n_train: int = 400, n_val: int = 300, n_test: int = 150, seed: int = 0) -> datasets.ArraySplits:
    """CIFAR-shaped random images whose label shifts the mean colour (learnable, but not trivially)."""
    rng = np.random.default_rng(seed)

    def part(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, 10, n)
        x = rng.integers(0, 200, (n, 32, 32, 3)) + 5 * y[:, None, None, None]
        return x.astype(np.uint8), y.astype(np.int64)

    (xtr, ytr), (xva, yva), (xte, yte) = part(n_train), part(n_val), part(n_test)
    return datasets.ArraySplits(xtr, ytr, xva, yva, xte, yte, scheme="combo", source="fake", sha256="fake")


@pytest.fixture
def fake_data(monkeypatch):
    """combo_nas reads synthetic images instead of CIFAR-10 (the live path is the same)."""
    splits = fake_splits()
    monkeypatch.setattr(datasets, "cifar10_splits", lambda scheme, data_dir=None, source="auto": splits)
    return splits


def with_edges(edges: set[tuple[int, int]], op: str = "conv3x3") -> dict[str, int]:
    return cc.encode([op] * 5, edges)


# -- the space ----------------------------------------------------------------------------
def test_space_has_31_binaries_in_the_authors_order() -> None:
    space = cc.make_space()
    assert len(space) == 31 and space.kind == "discrete"
    assert int(np.prod(space.n_levels.astype(object))) == 2**31
    assert space.names[:4] == ["h1_conv", "h1_large", "h2_conv", "h2_large"]
    assert space.names[10:17] == ["edge_in_h1", "edge_in_h2", "edge_in_h3", "edge_in_h4", "edge_in_h5",
                                  "edge_in_out", "edge_h1_h2"]
    assert space.names[-1] == "edge_h5_out" and len(cc.EDGES) == 21
    # the authors' array2network fills row i of the upper triangle with the next n - i - 1 bits
    bits = np.arange(21)
    adj = -np.ones((7, 7), dtype=int)
    pos = 0
    for i in range(7):
        adj[i, i + 1:] = bits[pos:pos + 6 - i]
        pos += 6 - i
    assert [adj[i, j] for i, j in cc.EDGES] == list(range(21))


def test_two_bits_select_the_four_operations() -> None:
    cfg = cc.encode(["id", "maxpool3x3", "conv3x3", "conv5x5", "id"], {(0, 6)})
    assert [cfg[f"h{k}_conv"] for k in range(1, 6)] == [0, 0, 1, 1, 0]
    assert [cfg[f"h{k}_large"] for k in range(1, 6)] == [0, 1, 0, 1, 0]
    assert cc.decode(cfg).ops == ("id", "maxpool3x3", "conv3x3", "conv5x5", "id")
    assert cc.encode(cc.decode(cfg).ops, cc.decode(cfg).edges) == cfg


def test_decode_rejects_missing_or_non_binary_values() -> None:
    cfg = cc.max_flops_config()
    with pytest.raises(InvalidConfigError, match="h1_conv"):
        cc.decode({k: v for k, v in cfg.items() if k != "h1_conv"})
    with pytest.raises(InvalidConfigError, match="0 or 1"):
        cc.decode({**cfg, "edge_in_out": 2})


# -- validity and pruning ---------------------------------------------------------------
def test_table5_example_is_valid_and_prunes_to_in_h1_out() -> None:
    cfg = with_edges(set(cc.EXAMPLE_EDGES))
    assert cc.is_valid(cfg) and cc.invalid_reason(cfg) is None
    cell = cc.pruned_cell(cfg)
    # H2 has no input, H4 only hangs off H2, H5 has no output and H3 only feeds H5
    assert cell.edges == {(0, 1), (1, 6)} and cc.active_nodes(cell) == [1]
    assert cc.canonical_key(cfg) == cc.canonical_key(with_edges({(0, 1), (1, 6)}))
    default = cc.make_space().default()
    assert cc.decode(default).edges == cc.EXAMPLE_EDGES and cc.is_valid(default)


@pytest.mark.parametrize("edges", [set(), {(0, 1), (1, 2), (2, 3)}, {(1, 6), (2, 6), (0, 3)}])
def test_cells_without_a_path_from_in_to_out_are_invalid(edges: set) -> None:
    cfg = with_edges(edges)
    assert not cc.is_valid(cfg) and cc.invalid_reason(cfg) == "no path from IN to OUT"
    assert cc.canonical_key(cfg) == ("invalid",)
    with pytest.raises(InvalidConfigError, match="is_valid"):
        cc.build_network(cfg)


def test_direct_in_out_edge_is_a_valid_identity_cell() -> None:
    cfg = with_edges({(0, 6)}, "conv5x5")
    assert cc.is_valid(cfg) and cc.active_nodes(cc.pruned_cell(cfg)) == []
    assert cc.canonical_key(cfg) == cc.canonical_key(with_edges({(0, 6)}, "id"))  # ops of pruned states ignored


def test_canonical_key_identifies_relabelled_cells_but_not_different_networks() -> None:
    parallel_a = cc.encode(["conv3x3", "conv5x5", "id", "id", "id"], {(0, 1), (0, 2), (1, 6), (2, 6)})
    parallel_b = cc.encode(["id", "conv5x5", "conv3x3", "id", "id"], {(0, 2), (0, 3), (2, 6), (3, 6)})
    assert cc.canonical_key(parallel_a) == cc.canonical_key(parallel_b)
    assert cc.make_space().key(parallel_a) != cc.make_space().key(parallel_b)  # the exact key stays distinct
    chain_a = cc.encode(["conv3x3", "conv5x5", "id", "id", "id"], {(0, 1), (1, 2), (2, 6)})
    chain_b = cc.encode(["conv5x5", "conv3x3", "id", "id", "id"], {(0, 1), (1, 2), (2, 6)})
    assert cc.canonical_key(chain_a) != cc.canonical_key(chain_b)


def test_pruning_keeps_exactly_the_states_on_in_out_paths() -> None:
    rng = np.random.default_rng(4)
    space = cc.make_space()
    for cfg in space.sample(rng, 200):
        edges = cc.decode(cfg).edges
        # reachability by boolean matrix powers, as the authors' valid_net_topo does it
        adj = np.zeros((7, 7), dtype=int)
        for i, j in edges:
            adj[i, j] = 1
        reach = np.eye(7, dtype=int)
        power = np.eye(7, dtype=int)
        for _ in range(6):
            power = (power @ adj > 0).astype(int)
            reach |= power
        pruned = cc.prune(edges)
        assert (pruned is None) == (reach[0, 6] == 0)
        if pruned is not None:
            keep = {v for v in range(7) if reach[0, v] and reach[v, 6]}
            assert pruned == {(i, j) for i, j in edges if i in keep and j in keep}


# -- network and FLOPs --------------------------------------------------------------------
def test_network_shapes_operations_and_sum_of_inputs() -> None:
    import torch

    cfg = cc.encode(["conv5x5", "maxpool3x3", "conv3x3", "id", "id"], {(0, 1), (0, 2), (1, 3), (2, 3), (3, 6)})
    net = cc.build_network(cfg, channels=4)
    out = net(torch.zeros(2, 3, 32, 32))
    assert out.shape == (2, 10)
    convs = {name: m.kernel_size for name, m in net.cell1.named_modules() if isinstance(m, torch.nn.Conv2d)}
    assert convs == {"ops.h1.0": (5, 5), "ops.h3.0": (3, 3)}
    assert isinstance(net.cell1.ops["h2"], torch.nn.MaxPool2d) and "h4" not in net.cell1.ops
    assert net.cell1.inputs[3] == [1, 2]  # H3 sums H1 and H2
    assert [net.cell2.ops["h1"][0].in_channels, net.cell3.ops["h1"][0].in_channels] == [8, 16]
    assert net.fc.in_features == 16 * 4 * 4


def test_importing_the_cell_module_does_not_import_torch() -> None:
    code = "import sys, benchsuite.architectures.combo_cell as c; c.make_space(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_flop_counter_agrees_with_a_hand_count_on_a_tiny_net() -> None:
    # stem 3->1 (3x3) on 8x8; cell: IN -> H1 (conv 3x3, 1 channel) -> OUT at 8x8, 4x4 (2 ch), 2x2 (4 ch);
    # 1x1 convs 1->2 on 4x4 and 2->4 on 2x2; linear 4*1*1 -> 2. 2 FLOPs per multiply-accumulate.
    cfg = with_edges({(0, 1), (1, 6)})
    hand = 2 * (8 * 8 * 1 * 3 * 9 + 8 * 8 * 1 * 1 * 9 + 4 * 4 * 2 * 1 + 4 * 4 * 2 * 2 * 9
                + 2 * 2 * 4 * 2 + 2 * 2 * 4 * 4 * 9 + 4 * 2)
    net = cc.build_network(cfg, channels=1, num_classes=2, image_size=8)
    assert cc.count_flops(net, (1, 3, 8, 8)) == hand
    assert cc.network_flops(cfg, channels=1, num_classes=2, image_size=8) == hand


def test_closed_form_flops_match_pytorch_counter_on_random_cells() -> None:
    rng = np.random.default_rng(1)
    valid = [c for c in cc.make_space().sample(rng, 40) if cc.is_valid(c)][:8]
    for cfg in valid + [cc.max_flops_config()]:
        net = cc.build_network(cfg, channels=3)
        assert cc.count_flops(net, (1, 3, 32, 32)) == cc.network_flops(cfg, channels=3)


def test_max_flops_cell_is_the_maximum_and_matches_the_hand_formula() -> None:
    c = 16
    # stem + five 5x5 convs per cell at (32x32, C), (16x16, 2C), (8x8, 4C) + two 1x1 convs + linear
    hand = 2 * (32 * 32 * 3 * 9 * c + 5 * 25 * c * c * 3072 + 16 * 16 * c * 2 * c + 8 * 8 * 2 * c * 4 * c
                + 4 * 4 * 4 * c * 10)
    top = cc.network_flops(cc.max_flops_config())
    assert top == hand == 198_037_504
    rng = np.random.default_rng(2)
    flops = [cc.network_flops(x) for x in cc.make_space().sample(rng, 500) if cc.is_valid(x)]
    assert max(flops) <= top and len(flops) > 300
    assert ComboNas(channels=c).max_flops == top


# -- the benchmark --------------------------------------------------------------------------
def test_benchmark_is_registered_with_the_paper_fidelity_and_defaults() -> None:
    b = get_benchmark("combo_nas")()
    assert b.kind == "live" and len(b.space) == 31
    assert (b.fidelity.name, b.fidelity.low, b.fidelity.high, b.fidelity.full) == ("epochs", 1, 20, 20)
    st = b.settings
    assert (st["n_repeats"], st["batch_size"], st["weight_decay"], st["lambda"], st["channels"]) == \
           (4, 100, 5e-5, 0.02, 16)
    assert (st["n_train"], st["n_val"], st["early_stop_window"]) == (30000, 10000, 10)
    ts = b.train_settings(20)
    assert (ts.optimizer, ts.lr, ts.schedule, ts.augment, ts.early_stop_window) == ("adam", 1e-3, "constant",
                                                                                    False, 10)
    assert ComboNas(epochs=1).fidelity is None
    with pytest.raises(InvalidSettingError, match="channels"):
        ComboNas(channels=0)


def test_invalid_cell_scores_0_9_plus_penalty_without_training(monkeypatch) -> None:
    b = ComboNas(**TINY, invalid_cost_s=0.5)
    monkeypatch.setattr(ComboNas, "_train_runs", lambda *a, **k: pytest.fail("an invalid cell was trained"))
    monkeypatch.setattr(ComboNas, "splits", lambda self: pytest.fail("data were loaded for an invalid cell"))
    res = b.evaluate(with_edges({(0, 1), (1, 2)}), None, seed=0)
    assert not res.failed and res.loss == pytest.approx(0.9 + LAMBDA * 1.0) and res.cost_s == 0.5
    assert res.info["invalid"] == "no path from IN to OUT"
    assert b.test_loss(with_edges(set())) == pytest.approx(0.92)


def test_tiny_live_evaluation_gives_finite_loss_and_the_objective_formula(fake_data) -> None:
    b = ComboNas(**TINY)
    cfg = cc.encode(["conv3x3", "maxpool3x3", "id", "conv5x5", "id"], {(0, 1), (1, 2), (2, 6), (0, 4), (4, 6)})
    res = b.evaluate(cfg, None, seed=11)
    assert not res.failed and math.isfinite(res.loss) and res.cost_s > 0
    info = res.info
    assert info["flops"] == cc.network_flops(cfg, 4) and info["max_flops"] == cc.network_flops(cc.max_flops_config(), 4)
    assert info["flops_ratio"] == pytest.approx(info["flops"] / info["max_flops"])
    assert 0 < info["flops_ratio"] < 1 and info["n_params"] > 0 and len(info["curves"][0]) == 1
    assert info["val_error"] == pytest.approx(np.mean(info["val_errors"]))
    assert res.loss == pytest.approx(info["val_error"] + 0.02 * info["flops_ratio"])
    assert b.splits().x_train.shape == (300, 32, 32, 3) and b.splits().x_val.shape[0] == 200
    np.testing.assert_allclose(b.splits().mean, [0.4914 * 255, 0.4822 * 255, 0.4465 * 255])


def test_error_is_the_best_epoch_and_the_mean_over_repeats(fake_data) -> None:
    b = ComboNas(**{**TINY, "epochs": 2, "n_repeats": 2})
    res = b.evaluate(with_edges({(0, 1), (1, 6)}), 1.6, seed=5)  # fidelity rounds to 2 epochs
    assert res.info["epochs"] == 2 and res.info["epochs_run"] == [2, 2]
    best = [min(c) for c in res.info["curves"]]
    assert res.info["val_errors"] == pytest.approx(best)
    assert res.info["val_error"] == pytest.approx(np.mean(best))
    assert penalised(0.25, 0.5) == pytest.approx(0.26)


def test_same_seed_same_result_and_repeat_seeds_are_distinct(fake_data) -> None:
    b = ComboNas(**{**TINY, "n_repeats": 2})
    cfg = with_edges({(0, 2), (2, 6)}, "conv5x5")
    r1, r2 = b.evaluate(cfg, None, seed=3), b.evaluate(cfg, None, seed=3)
    assert r1.loss == r2.loss and r1.info["curves"] == r2.info["curves"]
    assert repeat_seeds(3, 4)[:2] == repeat_seeds(3, 2) and len(set(repeat_seeds(3, 4))) == 4
    assert repeat_seeds(3, 2) != repeat_seeds(4, 2)


def test_test_loss_is_penalised_cached_and_can_be_switched_off(fake_data, monkeypatch) -> None:
    b = ComboNas(**TINY)
    cfg = with_edges({(0, 1), (1, 6)})
    t = b.test_loss(cfg)
    assert math.isfinite(t) and t >= LAMBDA * b.flops_ratio(cfg)
    monkeypatch.setattr(ComboNas, "_train_runs", lambda *a, **k: pytest.fail("not cached"))
    # same network (H2's operation is pruned away): served from the cache
    assert b.test_loss(cc.encode(["conv3x3", "conv5x5", "id", "id", "id"], {(0, 1), (1, 6), (0, 2)})) == t
    assert math.isnan(ComboNas(**TINY, test_eval=False).test_loss(cfg))


def test_a_failed_run_fails_the_trial_and_stops_the_repeats(fake_data, monkeypatch) -> None:
    import benchsuite.training as training

    real, seeds = training.train, []

    def boom() -> None:
        raise RuntimeError("loss is nan")

    def second_fails(build, data, settings, seed, progress=None):  # noqa: ANN001, ANN202
        seeds.append(seed)
        return real(boom if len(seeds) == 2 else build, data, settings, seed)

    monkeypatch.setattr(training, "train", second_fails)
    res = ComboNas(**{**TINY, "n_repeats": 3}).evaluate(with_edges({(0, 1), (1, 6)}), None, seed=0)
    assert res.failed and math.isnan(res.loss) and res.cost_s > 0
    assert "training run 2 of 3" in res.info["error"] and "loss is nan" in res.info["error"]
    assert len(seeds) == 2


@pytest.mark.parametrize("optimizer", ["random_search", "regularized_evolution", "simulated_annealing",
                                       "bocs", "combo"])
def test_binary_space_optimizers_run_on_it(optimizer: str, monkeypatch) -> None:
    """Each binary-space optimizer asks, is told (invalid cells included) and recommends."""
    def fake_eval(self, config, fidelity=None, seed=0):  # the space and validity are real, training is not
        config, _ = self.check(config, fidelity)
        if not cc.is_valid(config):
            return Result(0.92, 1.0, {"invalid": cc.invalid_reason(config)})
        return Result(0.5 + 0.02 * self.flops_ratio(config), 10.0)

    monkeypatch.setattr(ComboNas, "evaluate", fake_eval)
    monkeypatch.setattr(ComboNas, "test_loss", lambda self, c: 0.0)
    small = {"combo": {"n_init": 3, "n_burn": 5, "n_samples": 2, "n_random": 200, "n_ascent": 2},
             "bocs": {"n_init": 3, "gibbs_burnin": 20, "sa_restarts": 1, "sa_steps": 20},
             "simulated_annealing": {"n_init": 3}, "regularized_evolution": {"population_size": 3,
                                                                              "sample_size": 2}}
    out = run(ComboNas(), get_optimizer(optimizer), seed=0, budget_evals=6,
              optimizer_settings=small.get(optimizer, {}))
    assert len(out.rows) == 6 and all(r["status"] == "ok" for r in out.rows)


# -- real data and GPU ----------------------------------------------------------------------
@pytest.mark.slow
def test_tiny_evaluation_on_real_cifar10() -> None:
    b = ComboNas(**TINY)
    res = b.evaluate(b.space.default(), None, seed=0)
    assert math.isfinite(res.loss) and res.cost_s > 0 and b.splits().scheme == "combo"


@pytest.mark.gpu
def test_full_size_epoch_on_cuda() -> None:
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    b = ComboNas(epochs=1, n_repeats=1, device="cuda")
    res = b.evaluate(cc.max_flops_config(), None, seed=0)
    assert not res.failed and res.info["device"].startswith("cuda")
    assert res.info["val_error"] < 0.8 and res.cost_s > 0
    print(f"full-size max cell, 1 epoch on {torch.cuda.get_device_name()}: {res.cost_s:.1f} s, "
          f"val error {res.info['val_error']:.3f}")


def test_regularized_evolution_mutates_only_into_valid_cells():
    """combo.txt Supp. 4.4.4: RE was given the advantage of valid architectures in mutation steps."""
    from benchsuite.optimizers.regularized_evolution import RegularizedEvolution
    from benchsuite.optimizer import Trial

    space = cc.make_space()
    # a parent one bit away from invalid: only the IN->H1->OUT path (cutting either edge kills it)
    parent = cc.encode(("conv3x3",) * 5, {(0, 1), (1, 6)})
    assert space.is_valid(parent)
    for valid_only, expect_invalid in ((True, False), (False, True)):
        opt = RegularizedEvolution(space, None, rng=1, population_size=1, sample_size=1, valid_only=valid_only)
        opt.tell(Trial(0, parent, None), Result(0.5, 1.0))
        children = [opt.ask().config for _ in range(60)]
        assert all(space.validate(c) == c for c in children)
        assert any(not space.is_valid(c) for c in children) == expect_invalid


def test_an_invalid_cell_runs_on_the_nominal_clock_at_its_invalid_cost(fake_data) -> None:
    """A cell without an input-output path is a proposal the paper's BOCS and COMBO make (Supp. 4.4.2 scores
    it at 10 % accuracy); the nominal clock, the default for live runs, charges it ``invalid_cost_s`` instead of
    building its network (which raised and stopped `snakemake all` at default_combo_nas' BOCS run)."""
    from benchsuite.optimizer import Optimizer, Suggestion

    invalid, valid = with_edges({(0, 1), (1, 2)}), with_edges({(0, 1), (1, 6)})

    class Alternating(Optimizer):
        name = "alternating"
        description = "test: an invalid cell, then a valid one"

        def ask(self, pending=()):
            return Suggestion(invalid if len(self.history) % 2 == 0 else valid, self.full_fidelity())

    b = ComboNas(**TINY, invalid_cost_s=0.5)
    assert b.nominal_cost(invalid, None) == 0.5 and b.nominal_cost(valid, None) > 0
    out = run(b, Alternating, seed=0, budget_evals=4, clock="nominal")
    assert [r["status"] for r in out.rows] == ["ok"] * 4
    first = out.rows[0]
    assert first["loss"] == pytest.approx(0.92) and first["info"]["nominal_cost_s"] == 0.5
    assert out.rows[1]["info"]["nominal_cost_s"] == b.nominal_cost(valid, None)
