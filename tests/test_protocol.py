"""Protocol schema: validation messages name the file and the key; seeds and commands are stable."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from benchsuite import registry
from benchsuite.cli import _parser
from benchsuite.errors import ProtocolError
from benchsuite.protocol import (
    SET_FILE,
    load_protocol,
    load_protocols,
    load_set,
    parse_protocol,
    protocol_files,
)
from benchsuite.registry import Entry
from benchsuite.seeding import derive_seed

ROOT = Path(__file__).resolve().parent.parent

BASE = {
    "benchmarks": ["branin", {"name": "branin_mf", "settings": {"cost_s": 10.0}, "budget": {"seconds": 50}}],
    "optimizers": ["random_search"],
    "repetitions": 3,
    "budget": {"evaluations": 10},
}


def write(tmp_path: Path, doc: dict, name: str = "proto") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def bad(tmp_path: Path, doc: dict) -> str:
    path = write(tmp_path, doc)
    with pytest.raises(ProtocolError) as info:
        load_protocol(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: "), msg  # the file comes first
    return msg


def test_repository_protocols_are_valid() -> None:
    protos = load_protocols(ROOT / "protocols")
    assert {"smoke", "synthetic", "synthetic_async"} <= set(protos)
    default = load_set(ROOT / "protocols", protos)
    assert "smoke" not in default and default
    assert all(f.name != SET_FILE for f in protocol_files(ROOT / "protocols"))


def test_defaults_and_per_benchmark_budget(tmp_path: Path) -> None:
    p = load_protocol(write(tmp_path, BASE))
    assert p.name == "proto" and p.workers == 1 and p.include_overhead is True
    assert p.quantity == "incumbent_test_loss" and p.plots.x == ("time", "evaluations")
    assert [b.budget.evaluations for b in p.benchmarks] == [10, None]
    assert [b.budget.seconds for b in p.benchmarks] == [None, 50.0]
    assert p.benchmarks[1].settings == {"cost_s": 10.0}
    assert len(p.jobs()) == 2 * 1 * 3
    assert p.job("branin_mf", "random_search", 2).result_path == "results/proto/branin_mf/random_search/rep002.csv"


@pytest.mark.parametrize("mutate, key, words", [
    (lambda d: d.update(repetitons=3), "repetitons", "did you mean 'repetitions'"),
    (lambda d: d["budget"].update(evalutions=5), "budget.evalutions", "did you mean 'evaluations'"),
    (lambda d: d.update(budget={"evaluations": -5}), "budget.evaluations", "must be >= 1"),
    (lambda d: d.update(budget={"seconds": -1.0}), "budget.seconds", "must be positive"),
    (lambda d: d.update(budget={"evaluations": 2.5}), "budget.evaluations", "integer"),
    (lambda d: d.update(optimizers=["random_serch"]), "optimizers[0].name", "did you mean 'random_search'"),
    (lambda d: d.update(optimizers=["no_such_optimizer_xyz"]), "optimizers[0].name", "unknown optimizer"),
    (lambda d: d.update(optimizers=[{"name": "random_search", "setings": {}}]), "optimizers[0].setings",
     "did you mean 'settings'"),
    (lambda d: d["benchmarks"].append("hartman6"), "benchmarks[2].name", "did you mean 'hartmann6'"),
    (lambda d: d["benchmarks"][1]["settings"].update(cost=3), "benchmarks[1].settings.cost", "did you mean 'cost_s'"),
    (lambda d: d["benchmarks"][1]["settings"].update(cost_s="cheap"), "benchmarks[1].settings", "cost_s"),
    (lambda d: d.update(repetitions=0), "repetitions", "must be >= 1"),
    (lambda d: d.update(workers="two"), "workers", "integer"),
    (lambda d: d.update(quantity="test_loss"), "quantity", "incumbent_test_loss"),
    (lambda d: d.update(plots={"x": ["wallclock"]}), "plots.x[0]", "time"),
    (lambda d: d.update(plots={"time_scale": "logarithmic"}), "plots.time_scale", "log"),
    (lambda d: d.update(include_overhead="yes please"), "include_overhead", "true or false"),
    (lambda d: d.update(name="other"), "name", "must equal the file name"),
    (lambda d: d.update(optimizers=["random_search", "random_search"]), "optimizers", "used twice"),
    (lambda d: d.update(optimizers=[{"name": "random_search", "label": "bad label"}]), "optimizers[0].label",
     "letters"),
    (lambda d: d.update(benchmark="branin"), "benchmarks", "exactly one of"),
    (lambda d: d.pop("budget"), "budget", "required"),
    (lambda d: d.update(table={"at": "time"}), "table.at", "budget in seconds"),
    (lambda d: d.update(resources={"gpu": -1}), "resources.gpu", ">= 0"),
])
def test_invalid_protocols_name_file_and_key(tmp_path: Path, mutate, key: str, words: str) -> None:
    doc = copy.deepcopy(BASE)
    mutate(doc)
    msg = bad(tmp_path, doc)
    assert f": {key}: " in msg, msg
    assert words in msg, msg


def test_invalid_yaml_and_empty_file(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("optimizers: [random_search\n", encoding="utf-8")
    with pytest.raises(ProtocolError, match="broken.yaml: not valid YAML"):
        load_protocol(tmp_path / "broken.yaml")
    (tmp_path / "empty.yaml").write_text("", encoding="utf-8")
    with pytest.raises(ProtocolError, match="empty.yaml: the file is empty"):
        load_protocol(tmp_path / "empty.yaml")


def test_unsupported_pairing_is_rejected(tmp_path: Path) -> None:
    """An optimizer that cannot run on a synthetic benchmark's space fails at validation."""
    discrete_only = [name for name, e in registry.optimizers().items()
                     if e.obj is not None and "continuous" not in e.obj.supports.spaces]
    if not discrete_only:  # pragma: no cover - depends on which plugins exist
        pytest.skip("no discrete-only optimizer registered")
    doc = copy.deepcopy(BASE)
    doc["optimizers"] = [discrete_only[0]]
    msg = bad(tmp_path, doc)
    assert ": optimizers: " in msg and "cannot run on branin" in msg


def test_settings_are_coerced_and_passed_to_the_cli(tmp_path: Path) -> None:
    doc = copy.deepcopy(BASE)
    doc["benchmarks"][1]["settings"] = {"cost_s": 7}  # int -> float by the declared setting
    doc["workers"] = 3
    doc["include_overhead"] = False
    p = load_protocol(write(tmp_path, doc))
    assert p.benchmarks[1].settings == {"cost_s": 7.0}
    job = p.job("branin_mf", "random_search", 1)
    argv = p.command(job, out="x.csv")
    args = _parser().parse_args(argv[1:])
    assert (args.benchmark, args.optimizer, args.seed, args.workers) == ("branin_mf", "random_search", job.seed, 3)
    assert args.budget_seconds == 50.0 and args.budget_evals is None and args.no_overhead
    assert args.benchmark_settings == ["cost_s=7.0"]
    assert "protocol=proto" in args.meta and "repetition=1" in args.meta and args.out == "x.csv"


def test_seeds_do_not_change_when_optimizers_or_repetitions_are_added(tmp_path: Path) -> None:
    p1 = load_protocol(write(tmp_path, BASE))
    doc = copy.deepcopy(BASE)
    doc["optimizers"] = [{"name": "random_search", "label": "rs_other"}, "random_search"]
    doc["repetitions"] = 5
    doc["benchmarks"].insert(0, "hartmann3")
    p2 = load_protocol(write(tmp_path, doc))
    seeds1 = {j.key: j.seed for j in p1.jobs()}
    seeds2 = {j.key: j.seed for j in p2.jobs()}
    assert all(seeds2[k] == s for k, s in seeds1.items())
    assert len(set(seeds2.values())) == len(seeds2)  # distinct per run
    j = p1.jobs()[0]
    assert j.seed == derive_seed("proto", j.benchmark.label, j.optimizer.label, j.repetition)


def test_unavailable_optimizer_is_skipped_with_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = dict(registry.optimizers())
    table["needs_missing_dep"] = Entry("needs_missing_dep", None, "builtin", "No module named 'smac'")
    monkeypatch.setattr(registry, "optimizers", lambda: table)
    doc = copy.deepcopy(BASE)
    doc["optimizers"] = ["random_search", "needs_missing_dep"]
    p = load_protocol(write(tmp_path, doc))
    assert [o.label for o in p.optimizers] == ["random_search"]
    assert p.skipped == (("needs_missing_dep", "No module named 'smac'"),)
    doc["optimizers"] = ["needs_missing_dep"]
    assert "no optimizer of this protocol is available" in bad(tmp_path, doc)


def test_gpu_resource_follows_benchmark_requirements(tmp_path: Path) -> None:
    p = parse_protocol(copy.deepcopy(BASE), str(tmp_path / "proto.yaml"))
    assert p.job_resources(p.benchmarks[0]) == {"mem_mb": 2000, "runtime": 60, "gpu": 0}
    doc = copy.deepcopy(BASE)
    doc["resources"] = {"gpu": 1, "mem_mb": 100, "runtime": 5}
    p = parse_protocol(doc, str(tmp_path / "proto.yaml"))
    assert p.job_resources(p.benchmarks[0]) == {"mem_mb": 100, "runtime": 5, "gpu": 1}


def test_default_set_names_known_protocols(tmp_path: Path) -> None:
    write(tmp_path, BASE, "alpha")
    (tmp_path / SET_FILE).write_text("protocols: [alpah]\n", encoding="utf-8")
    protos = load_protocols(tmp_path)
    assert set(protos) == {"alpha"}
    with pytest.raises(ProtocolError, match=r"default_set.yaml: protocols\[0\]: .*did you mean 'alpha'"):
        load_set(tmp_path, protos)


def test_cli_validate_protocol(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from benchsuite.cli import main

    good = write(tmp_path, BASE)
    assert main(["validate-protocol", str(good), "--jobs"]) == 0
    out = capsys.readouterr().out
    assert "protocol 'proto' is valid" in out and "= 6 runs" in out
    assert "results/proto/branin_mf/random_search/rep002.csv" in out
    doc = copy.deepcopy(BASE)
    doc["budget"] = {"evaluations": 0}
    broken = write(tmp_path, doc, "broken")
    assert main(["validate-protocol", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("benchsuite: error: ") and "broken.yaml: budget.evaluations: must be >= 1" in err
    assert len(err.strip().splitlines()) == 1  # one line, no traceback


def test_run_job_by_name_equals_the_run_command_line(tmp_path: Path) -> None:
    """`benchsuite run-job` (the workflow's path: typed settings from the protocol object) writes the same
    result as the `benchsuite run` command line the protocol spells out, provenance included."""
    from benchsuite.cli import main
    from benchsuite.results import TIMING_COLUMNS, load_result

    raw = {"benchmarks": [{"name": "ising", "label": "ising_small", "settings": {"lambda": 0.01},
                           "instances": {"setting": "problem_seed", "count": 5}}],
           "optimizers": [{"name": "simulated_annealing", "label": "sa", "settings": {"n_init": 5, "t_max": 2.5}}],
           "repetitions": 7, "budget": {"evaluations": 15}, "workers": 2, "quantity": "incumbent_loss",
           "plots": {"x": ["evaluations"]}, "table": {"at": "budget"}}
    path = tmp_path / "jobs_by_name.yaml"
    path.write_text(yaml.safe_dump(raw))
    proto = load_protocol(path)
    job = proto.job("ising_small", "sa", 6)
    by_line, by_name = tmp_path / "line.csv", tmp_path / "name.csv"
    assert main(proto.command(job, out=str(by_line), exe=()) + ["-q"]) == 0
    assert main(["run-job", str(path), "ising_small", "sa", "6", "--out", str(by_name), "-q"]) == 0
    a, b = load_result(by_line), load_result(by_name)
    assert a.drop(columns=list(TIMING_COLUMNS)).equals(b.drop(columns=list(TIMING_COLUMNS)))
    skip = {"finished_utc"}
    assert {k: v for k, v in a.attrs["provenance"].items() if k not in skip} == \
        {k: v for k, v in b.attrs["provenance"].items() if k not in skip}
    assert b.attrs["provenance"]["benchmark_settings"]["problem_seed"] == 1  # repetition 6 -> instance 6 % 5


def test_run_job_names_a_missing_job_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from benchsuite.cli import main

    assert main(["run-job", "smoke", "branin", "no_such_optimizer", "0", "--out", str(tmp_path / "x.csv")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no run" in err[0]
    assert not (tmp_path / "x.csv").exists()
