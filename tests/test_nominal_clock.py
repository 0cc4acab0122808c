"""Reproducible runs with several workers on benchmarks whose measured costs vary (issue 26 item 6).

With ``clock="measured"`` the simulated clock runs on each evaluation's reported cost; for a live
benchmark that is measured seconds, so which trial completes first, and every later decision of an
optimizer that learns from its tells, depends on the machine's timing. ``clock="nominal"`` runs the
clock on the benchmark's deterministic cost model instead, and the measured seconds stay in cost_s.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from benchsuite import registry
from benchsuite.benchmark import Benchmark, Result
from benchsuite.errors import InvalidSettingError, PluginError
from benchsuite.protocol import parse_protocol
from benchsuite.runner import run
from benchsuite.space import Ordinal, Space


class Jittery(Benchmark):
    """A discrete problem whose reported cost is noise (as measured seconds are), with a cost model beside it."""

    name = "jittery"
    kind = "live"
    description = "test benchmark: deterministic loss, random reported cost"

    def setup(self) -> None:
        self.space = Space([Ordinal(f"x{i}", list(range(5))) for i in range(4)])

    def evaluate(self, config, fidelity=None, seed=0):
        loss = float(sum((config[f"x{i}"] - 2) ** 2 for i in range(4)))
        cost = 1.0 + int.from_bytes(os.urandom(2), "little") / 65535.0  # machine-dependent, like a timing
        return Result(loss, cost)

    def test_loss(self, config):
        return self.evaluate(config).loss

    def nominal_cost(self, config, fidelity=None):
        return 1.0 + 0.1 * config["x0"]


def _configs(clock: str) -> list[str]:
    out = run(Jittery(), registry.get_optimizer("regularized_evolution"), seed=4, budget_evals=40, workers=3,
              optimizer_settings={"population_size": 6, "sample_size": 2}, clock=clock)
    return [r["config"] for r in out.rows]


def test_the_nominal_clock_makes_a_run_with_noisy_costs_repeat_itself() -> None:
    runs = [_configs("nominal") for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    measured = [_configs("measured") for _ in range(3)]
    # the same seed, but the completion order follows the noise: the runs part ways
    assert len({tuple(m) for m in measured}) > 1


def test_nominal_rows_keep_the_measured_cost_and_record_the_nominal_one() -> None:
    out = run(Jittery(), registry.get_optimizer("random_search"), seed=0, budget_evals=6, workers=2, clock="nominal")
    for r in out.rows:
        cfg = json.loads(r["config"])
        assert r["info"]["nominal_cost_s"] == pytest.approx(1.0 + 0.1 * cfg["x0"])
        assert r["end_time"] - r["start_time"] == pytest.approx(r["info"]["nominal_cost_s"])
        assert 1.0 <= r["cost_s"] <= 2.0  # the measured (here: noisy) cost, as reported
    assert out.provenance["clock"] == "nominal"


def test_the_clock_is_refused_where_it_cannot_apply() -> None:
    rs = registry.get_optimizer("random_search")
    with pytest.raises(InvalidSettingError, match="has no nominal cost model"):
        run(registry.make_benchmark("branin", {}), rs, seed=0, budget_evals=3, clock="nominal")
    with pytest.raises(InvalidSettingError, match="clock must be one of measured, nominal"):
        run(Jittery(), rs, seed=0, budget_evals=3, clock="wall")

    class Broken(Jittery):
        def nominal_cost(self, config, fidelity=None):
            return float("nan")

    with pytest.raises(PluginError, match="nominal_cost returned nan"):
        run(Broken(), rs, seed=0, budget_evals=3, clock="nominal")


def test_protocols_default_to_the_nominal_clock_for_live_benchmarks_with_a_model() -> None:
    import yaml

    raw = {"benchmarks": [{"name": "nasbot_mlp_naval"}, "branin"], "optimizers": ["random_search"],
           "repetitions": 1, "budget": {"evaluations": 5}}
    p = parse_protocol(raw, "p.yaml")
    live, synth = p.job("nasbot_mlp_naval", "random_search", 0), p.job("branin", "random_search", 0)
    assert p.clock_for(live) == "nominal" and p.clock_for(synth) == "measured"
    argv = p.command(live)
    assert argv[argv.index("--clock") + 1] == "nominal" and "--clock" not in p.command(synth)
    assert p.clock_for(live, backend="local") == "measured"  # a real backend's clock is real
    measured = parse_protocol({**raw, "clock": "measured"}, "p.yaml")
    assert measured.clock_for(measured.job("nasbot_mlp_naval", "random_search", 0)) == "measured"
    with pytest.raises(Exception, match="clock"):
        parse_protocol(yaml.safe_load(yaml.safe_dump({**raw, "clock": "wall"})), "p.yaml")
    with pytest.raises(Exception, match="clock: nominal needs a cost model, and benchmark branin has none"):
        parse_protocol({**raw, "clock": "nominal"}, "p.yaml")


def test_verify_draws_from_multi_worker_protocols_only_where_every_clock_is_nominal() -> None:
    from benchsuite.analysis.reproductions import deterministic

    live = {"benchmarks": [{"name": "nasbot_mlp_naval"}], "optimizers": ["random_search"], "repetitions": 1,
            "budget": {"evaluations": 5}, "workers": 2, "include_overhead": True}
    assert deterministic(parse_protocol(live, "p.yaml")) == ""  # nominal clock: overhead off it, costs modelled
    measured = deterministic(parse_protocol({**live, "clock": "measured"}, "p.yaml"))
    assert "measured overhead on the clock" in measured
    no_overhead = deterministic(parse_protocol({**live, "clock": "measured", "include_overhead": False}, "p.yaml"))
    assert "measured training times (nasbot_mlp_naval)" in no_overhead
    mixed = {**live, "benchmarks": [{"name": "nasbot_mlp_naval"}, "branin"]}  # branin's clock is measured
    assert "measured overhead on the clock" in deterministic(parse_protocol(mixed, "p.yaml"))
    assert deterministic(parse_protocol({**mixed, "include_overhead": False}, "p.yaml")) == ""
    assert deterministic(parse_protocol({**live, "workers": 1, "clock": "measured"}, "p.yaml")) == ""
    timed = {**live, "workers": 1, "budget": {"evaluations": 5, "seconds": 100}}  # one worker, a time budget
    assert "budget in seconds" in deterministic(parse_protocol(timed, "p.yaml"))
    assert deterministic(parse_protocol({**timed, "include_overhead": False}, "p.yaml")) == ""


def test_a_live_training_benchmarks_model_counts_work() -> None:
    pytest.importorskip("torch")
    b = registry.make_benchmark("nasbot_mlp_naval", registry.get_benchmark("nasbot_mlp_naval").test_settings)
    rng = np.random.default_rng(0)
    configs = [b.space.sample(rng) for _ in range(3)]
    full = [b.nominal_cost(c, None) for c in configs]
    assert all(x > 0 for x in full) and full == [b.nominal_cost(c, None) for c in configs]  # deterministic
    if b.fidelity is not None:
        low = b.fidelity.low
        assert b.nominal_cost(configs[0], low) < full[0]  # fewer epochs, less work
