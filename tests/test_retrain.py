"""A protocol's "best model retrained" step (NASBOT Table 3's 150K-iteration column): the `retrain:` key, the
retraining job end to end on CPU at a tiny size, its committed record, and the GPU protocol's plan."""
from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path

import pytest
import yaml

from benchsuite import registry
from benchsuite.cli import main
from benchsuite.errors import ProtocolError
from benchsuite.protocol import load_protocol, parse_protocol, retrained_path
from benchsuite.testing import missing_data

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
from test_workflow import planned, snake  # noqa: E402  (the one dry-run parser)

TINY_MLP = {"iterations": 30, "eval_every": 10, "n_train": 600, "n_val": 300, "lr": 0.01, "max_num_layers": 10,
            "max_num_units_per_layer": 32, "device": "cpu", "threads": 1}
TREEBO = {"n_random": 10, "local_starts": 0, "local_steps": 1, "restarts": 0}
TINY = {"benchmarks": [{"name": "nasbot_mlp_naval", "label": "naval", "settings": TINY_MLP}],
        "optimizers": ["nasbot_rand", {"name": "treebo", "settings": TREEBO}],
        "repetitions": 1, "budget": {"evaluations": 7}, "workers": 2,
        "retrain": {"settings": {"iterations": 90}, "optimizers": ["treebo"]}}


def _need_naval() -> None:
    bench = registry.get_benchmark("nasbot_mlp_naval")
    why = missing_data(bench, bench.test_settings)
    if why:
        pytest.skip(why)


def _write(folder: Path, doc: dict, name: str = "tiny") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


# -- the key ---------------------------------------------------------------------------------------------
def test_the_retrain_key_names_its_jobs_and_files(tmp_path: Path) -> None:
    p = load_protocol(_write(tmp_path, TINY))
    assert p.retrain.settings == {"iterations": 90} and p.retrain.optimizers == ("treebo",)
    assert [j.key for j in p.retrain_jobs()] == [("tiny", "naval", "treebo", 0)]
    assert p.retrained_paths() == ["results/tiny/naval/treebo/rep000.retrained.json"]
    assert retrained_path("results/x/b/o/rep003.csv") == "results/x/b/o/rep003.retrained.json"
    assert load_protocol(ROOT / "protocols" / "nasbot_cpu.yaml").retrain_jobs() == []  # no key, no retraining


@pytest.mark.parametrize("change, words", [
    (lambda d: d["retrain"]["settings"].update(iteration=5), "has no setting 'iteration'; did you mean 'iterations'"),
    (lambda d: d["retrain"]["settings"].update(test_eval=False), "would not score its test set"),
    (lambda d: d["retrain"].update(optimizers=["trebo"]), "did you mean 'treebo'"),
    (lambda d: d["retrain"].update(benchmarks=["navel"]), "did you mean 'naval'"),
    (lambda d: d["retrain"].update(gpu_s=100), "retrain.basis: say where gpu_s comes from"),
    (lambda d: d["retrain"].pop("settings"), "retrain.settings: required key is missing"),
    (lambda d: d.update(benchmarks=["branin"], optimizers=["random_search"], retrain={"settings": {}}),
     "benchmark branin is synthetic, not live"),
])
def test_a_bad_retrain_key_is_one_line_naming_it(change, words: str) -> None:
    doc = copy.deepcopy(TINY)
    change(doc)
    with pytest.raises(ProtocolError) as err:
        parse_protocol(doc, "tiny.yaml")
    assert words in str(err.value) and "\n" not in str(err.value)


# -- the GPU protocol -------------------------------------------------------------------------------------
def test_the_gpu_protocol_plans_its_retrainings(tmp_path: Path, capsys) -> None:
    """nasbot_table3_w4 retrains every CIFAR-10 run's incumbent (3 repetitions x 4 methods), jobs of their own
    after each run, as a dry run shows; the estimate: 12 x 150 x 14.83 s per 1,000 iterations on an H200."""
    p = load_protocol(ROOT / "protocols" / "nasbot_table3_w4.yaml")
    assert p.retrain.settings == {"iterations": 150_000} and p.retrain.benchmarks == ("nasbot_cnn_cifar10",)
    assert {j.optimizer.label for j in p.retrain_jobs()} == {"nasbot", "nasbot_ea", "nasbot_rand", "treebo"}
    assert p.retrain_gpu_hours() == pytest.approx(12 * 2224 / 3600)
    assert main(["retrain-job", "nasbot_table3_w4", "--estimate"]) == 0
    assert "12 retraining job(s)" in capsys.readouterr().out
    jobs = planned(snake(tmp_path, "-n", "nasbot_table3_w4"))
    assert sorted(jobs["retrain"]) == sorted(p.retrained_paths())
    assert sorted(jobs["run"]) == sorted(p.result_paths())  # TreeBO's runs among them


# -- end to end on CPU ------------------------------------------------------------------------------------
def test_a_run_then_its_retraining_then_commit_and_restore(tmp_path: Path, capsys) -> None:
    _need_naval()
    proto = _write(tmp_path / "protocols", TINY)
    p = load_protocol(proto)
    job = p.job("naval", "treebo", 0)
    run = tmp_path / job.result_path
    rec = tmp_path / retrained_path(job.result_path)
    run.parent.mkdir(parents=True)
    assert main(["run-job", str(proto), "naval", "treebo", "0", "--quiet", "--out", str(run)]) == 0
    assert main(["retrain-job", str(proto), "naval", "treebo", "0", "--out", str(rec)]) == 0
    record = json.loads(rec.read_text())
    from benchsuite.results import load_result

    df = load_result(run)
    assert record["status"] == "ok" and record["incumbent"] == df["incumbent"].iloc[-1]
    assert record["search_test_loss"] == pytest.approx(float(df["incumbent_test_loss"].iloc[-1]))
    assert record["benchmark_settings"]["iterations"] == 90 and record["retrain_settings"] == {"iterations": 90}
    # the retrained value is the test loss of the incumbent trained for 90 iterations from the test-loss seed
    bench = registry.make_benchmark("nasbot_mlp_naval", {**TINY_MLP, "iterations": 90})
    again = bench.test_loss(bench.space.from_json(record["incumbent"]))
    assert math.isfinite(again) and record["retrained_test_loss"] == pytest.approx(again, rel=1e-9)
    # not a job of the step, and another job's run: one line each, nothing written
    assert main(["retrain-job", str(proto), "naval", "nasbot_rand", "0", "--out", str(tmp_path / "x.json")]) == 2
    other = tmp_path / "other.retrained.json"
    assert main(["retrain-job", str(proto), "naval", "treebo", "0", "--run", str(tmp_path / "nope.csv"),
                 "--out", str(other)]) == 2
    assert not other.exists() and not (tmp_path / "x.json").exists()
    err = capsys.readouterr().err
    assert "does not retrain nasbot_rand's runs" in err
    # committed beside the runs, read back, and restored for a resumed workflow
    repro = tmp_path / "repro"
    assert main(["reproductions", "collect", "tiny", "--results", str(tmp_path / "results"), "--dir", str(repro),
                 "--protocols", str(proto.parent)]) == 0
    from benchsuite.analysis.reproductions import load_retrained

    got = load_retrained(repro, "tiny")
    assert list(got[["benchmark", "optimizer", "repetition"]].itertuples(index=False, name=None)) == \
        [("naval", "treebo", 0)]
    assert got["retrained_test_loss"].iloc[0] == pytest.approx(record["retrained_test_loss"])
    fresh = tmp_path / "fresh"
    assert main(["reproductions", "restore", "tiny", "--results", str(fresh / "results"), "--dir", str(repro),
                 "--protocols", str(proto.parent)]) == 0
    assert json.loads((fresh / retrained_path(job.result_path)).read_text()) == record
    assert (fresh / job.result_path).exists()


@pytest.mark.slow
def test_the_workflow_runs_the_step_as_a_job_of_its_own(tmp_path: Path) -> None:
    """`snakemake tiny`: the runs, then the retraining of TreeBO's run, then the report; a second call has
    nothing to do, and a deleted record is retrained again without repeating the search (90 s on 2 loaded cores)."""
    _need_naval()
    proto = _write(tmp_path / "protocols", TINY)
    p = load_protocol(proto)
    work = tmp_path / "work"
    work.mkdir()
    cfg = ["--config", f"protocols=[{proto}]"]
    snake(work, "tiny", *cfg, timeout=600)
    rec = work / p.retrained_paths()[0]
    first = json.loads(rec.read_text())
    assert first["status"] == "ok"
    run = work / p.job("naval", "treebo", 0).result_path
    mtime = run.stat().st_mtime_ns
    again = snake(work, "-n", "tiny", *cfg)
    assert "Nothing to be done" in again.stdout + again.stderr
    rec.unlink()
    jobs = planned(snake(work, "-n", "tiny", *cfg))
    assert jobs["retrain"] == [str(p.retrained_paths()[0])] and "run" not in jobs
    snake(work, "tiny", *cfg, timeout=600)
    assert json.loads(rec.read_text())["retrained_test_loss"] == first["retrained_test_loss"]
    assert run.stat().st_mtime_ns == mtime  # the search was not repeated
