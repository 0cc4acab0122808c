"""Per-repetition problem instances (COMBO's 5 instances x 5 initial designs)."""
from pathlib import Path

import pytest
import yaml

from benchsuite.errors import ProtocolError
from benchsuite.protocol import load_protocol


def _write(tmp_path: Path, instances) -> Path:
    doc = {"benchmarks": [{"name": "branin_mf", "settings": {"cost_s": 5.0}, "instances": instances}],
           "optimizers": ["random_search"], "repetitions": 7, "budget": {"evaluations": 5}}
    path = tmp_path / "inst.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def seeded(monkeypatch):
    from benchsuite import registry
    from benchsuite.benchmarks.synthetic import MultiFidelityBranin
    from benchsuite.settings import Setting

    class Seeded(MultiFidelityBranin):
        name = "branin_mf_seeded"
        settings_spec = {**MultiFidelityBranin.settings_spec, "problem_seed": Setting(0, "instance")}

    # branin_mf with an integer problem_seed, registered for the duration of a test
    benches, opts = dict(registry.benchmarks()), dict(registry.optimizers())
    benches["branin_mf"] = registry.Entry("branin_mf", Seeded, "builtin")
    monkeypatch.setattr(registry, "_all", lambda kind: benches if kind == "benchmark" else opts)
    return Seeded


def test_repetitions_cycle_through_instances(tmp_path, seeded):
    p = load_protocol(_write(tmp_path, {"setting": "problem_seed", "count": 3}))
    jobs = p.jobs()
    assert [j.benchmark.settings_for(j.repetition)["problem_seed"] for j in jobs] == [0, 1, 2, 0, 1, 2, 0]
    cmd = p.command(jobs[4])
    assert "problem_seed=1" in cmd and "cost_s=5.0" in cmd
    assert len({j.seed for j in jobs}) == 7  # the run seeds still differ per repetition


@pytest.mark.parametrize("instances,message", [
    ({"setting": "cost_s", "count": 3}, "not an integer setting"),
    ({"setting": "nope", "count": 3}, "has no setting 'nope'"),
    ({"setting": "problem_seed", "count": 0}, "positive integer"),
    ({"setting": "problem_seed"}, "count"),
])
def test_bad_instances_name_the_key(tmp_path, seeded, instances, message):
    with pytest.raises(ProtocolError, match="instances") as err:
        load_protocol(_write(tmp_path, instances))
    assert message in str(err.value)
