"""A benchmark's own initial design handed to the optimizer (issue 23: COMBO's 25 (instance, design) pairs)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsuite import registry
from benchsuite.cli import main
from benchsuite.errors import InvalidSettingError, ProtocolError, UnsupportedError
from benchsuite.protocol import parse_protocol
from benchsuite.results import load_result
from benchsuite.runner import run

AUTHORS = {"instance_mode": "combo_authors", "problem_seed": 7}


def _plugin(name: str) -> type:
    try:
        return registry.get_optimizer(name)
    except Exception as exc:  # noqa: BLE001 - an optional extra that is not installed
        pytest.skip(f"{name} is not installed here: {exc}")


@pytest.mark.parametrize("name", ["random_search", "simulated_annealing", "regularized_evolution", "bocs", "combo",
                                  "smac", "tpe"])
def test_every_declaring_plugin_evaluates_the_design_first_in_order(name: str) -> None:
    cls = _plugin(name)
    bench = registry.make_benchmark("ising", AUTHORS)
    design = bench.initial_design()
    assert len(design) == 20
    settings = {**cls.test_settings, **({"n_init": 20} if "n_init" in cls.settings_spec else {}),
                **({"population_size": 20} if "population_size" in cls.settings_spec else {})}
    out = run(bench, cls, seed=3, budget_evals=23, optimizer_settings=settings, initial_design="benchmark")
    assert [json.loads(r["config"]) for r in out.rows[:20]] == design
    assert out.provenance["initial_design"] == "benchmark"
    # and without it, the plugin draws its own points (the same run seed gives other ones)
    own = run(registry.make_benchmark("ising", AUTHORS), cls, seed=3, budget_evals=20, optimizer_settings=settings)
    assert [json.loads(r["config"]) for r in own.rows] != design and "initial_design" not in own.provenance


def test_a_plugin_that_does_not_declare_it_is_refused_before_anything_runs() -> None:
    bench = registry.make_benchmark("ising", AUTHORS)
    with pytest.raises(UnsupportedError, match="simulated_annealing_bocs.*cannot start from the benchmark"):
        run(bench, registry.get_optimizer("simulated_annealing_bocs"), seed=0, budget_evals=5,
            initial_design="benchmark")


def test_a_benchmark_without_a_design_or_an_unknown_choice_is_one_line() -> None:
    rs = registry.get_optimizer("random_search")
    with pytest.raises(InvalidSettingError, match="has no initial design of its own.*combo_authors"):
        run(registry.make_benchmark("ising", {}), rs, seed=0, budget_evals=5, initial_design="benchmark")
    with pytest.raises(InvalidSettingError, match="must be one of optimizer, benchmark"):
        run(registry.make_benchmark("branin", {}), rs, seed=0, budget_evals=5, initial_design="latin")


def test_a_design_longer_than_the_budget_is_cut_by_the_budget() -> None:
    out = run(registry.make_benchmark("contamination", AUTHORS), registry.get_optimizer("random_search"), seed=0,
              budget_evals=5, initial_design="benchmark")
    assert [json.loads(r["config"]) for r in out.rows] == registry.make_benchmark(
        "contamination", AUTHORS).initial_design()[:5]


GOOD = """
name: p
benchmarks:
  - {name: ising, settings: {instance_mode: combo_authors}, instances: {setting: problem_seed, count: 25}}
optimizers:
  - {name: random_search, initial_design: benchmark}
  - simulated_annealing_bocs
repetitions: 2
budget: {evaluations: 30}
"""


def test_protocol_entries_carry_it_into_the_jobs_command() -> None:
    import yaml

    proto = parse_protocol(yaml.safe_load(GOOD), "p.yaml")
    rs = proto.job("ising", "random_search", 1)
    argv = proto.command(rs)
    assert argv[argv.index("--initial-design") + 1] == "benchmark"
    assert "--initial-design" not in proto.command(proto.job("ising", "simulated_annealing_bocs", 1))


@pytest.mark.parametrize("old, new, words", [
    ("- simulated_annealing_bocs", "- {name: simulated_annealing_bocs, initial_design: benchmark}",
     "cannot start from the benchmark's initial design"),
    ("{name: random_search, initial_design: benchmark}", "{name: random_search, initial_design: latin}",
     "is not one of optimizer, benchmark"),
    ("settings: {instance_mode: combo_authors}, ", "", "has none with these settings"),
])
def test_protocol_mistakes_are_one_line_naming_the_key(old: str, new: str, words: str) -> None:
    import yaml

    with pytest.raises(ProtocolError) as err:
        parse_protocol(yaml.safe_load(GOOD.replace(old, new)), "p.yaml")
    assert words in str(err.value) and "\n" not in str(err.value) and "optimizers" in str(err.value)


def test_run_and_run_job_write_the_same_first_points(tmp_path: Path, capsys) -> None:
    proto = tmp_path / "p.yaml"
    proto.write_text(GOOD)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["run-job", str(proto), "ising", "random_search", "1", "--out", str(a), "--quiet"]) == 0
    assert main(["run", "-b", "ising", "-o", "random_search", "--seed", "0", "--budget-evals", "20", "--quiet",
                 "--benchmark-set", "instance_mode=combo_authors", "--benchmark-set", "problem_seed=1",
                 "--initial-design", "benchmark", "--out", str(b)]) == 0
    capsys.readouterr()
    ra, rb = load_result(a), load_result(b)
    assert ra.attrs["provenance"]["initial_design"] == rb.attrs["provenance"]["initial_design"] == "benchmark"
    assert list(ra["config"][:20]) == list(rb["config"][:20])


def test_the_conformance_kit_catches_a_plugin_that_declares_it_but_ignores_it() -> None:
    from benchsuite.optimizer import Capabilities, Optimizer, Suggestion
    from benchsuite.testing import check_optimizer

    class Ignores(Optimizer):
        name = "ignores_design"
        description = "random points; claims to take a design"
        supports = Capabilities(spaces={"continuous"}, initial_design=True)

        def ask(self, pending=()):
            return Suggestion(self.space.sample(self.rng), None)

    with pytest.raises(AssertionError, match="did not ask for the given initial design first"):
        check_optimizer(Ignores)
    Ignores.ask = lambda self, pending=(): Suggestion(self.sample_initial(), None)
    check_optimizer(Ignores)
