"""Synthetic benchmarks: known optima at their known minimisers."""
import math

import numpy as np
import pytest

from benchsuite.registry import make_benchmark


@pytest.mark.parametrize("name,config", [
    ("branin", {"x1": -math.pi, "x2": 12.275}),
    ("branin", {"x1": math.pi, "x2": 2.275}),
    ("branin", {"x1": 9.42478, "x2": 2.475}),
    ("hartmann3", {"x0": 0.114614, "x1": 0.555649, "x2": 0.852547}),
    ("hartmann6", dict(zip([f"x{i}" for i in range(6)], [0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573]))),
    ("camelback", {"x1": 0.0898, "x2": -0.7126}),
    ("camelback", {"x1": -0.0898, "x2": 0.7126}),
])
def test_known_minimisers_reach_the_optimum(name, config):
    bench = make_benchmark(name)
    assert bench.evaluate(config).loss == pytest.approx(bench.optimum, abs=1e-4)
    assert bench.test_loss(config) == bench.evaluate(config).loss


@pytest.mark.parametrize("name", ["branin", "hartmann3", "hartmann6", "camelback", "branin_discrete"])
def test_random_points_never_beat_the_optimum(name):
    bench = make_benchmark(name)
    configs = bench.space.sample(np.random.default_rng(0), 2000)
    assert min(bench.evaluate(c).loss for c in configs) >= bench.optimum - 1e-9


def test_discretized_branin_grid():
    bench = make_benchmark("branin_discrete")
    x1, x2 = bench.space["x1"], bench.space["x2"]
    assert x1.n_levels == x2.n_levels == 51
    assert 2.5 in x1.levels and 7.5 in x2.levels  # the centre is on the grid (combo.txt Supp. 4.2.1)
    assert bench.space.kind == "discrete"
    assert 0.3979 < bench.optimum < 0.45  # the grid misses the continuous minimisers slightly


def test_multi_fidelity_branin():
    bench = make_benchmark("branin_mf")
    cfg = {"x1": math.pi, "x2": 2.275}
    full, low = bench.evaluate(cfg, 1.0), bench.evaluate(cfg, 1 / 128)
    assert full.loss == pytest.approx(0.397887, abs=1e-5) and low.loss != full.loss
    assert low.cost_s < full.cost_s
    assert bench.evaluate({"x1": 10.0, "x2": 2.0}, 1.0).cost_s == pytest.approx(2 * bench.evaluate({"x1": -5.0, "x2": 2.0}, 1.0).cost_s)
