"""Execution backends (issue 28): local worker processes and dask run trials at once, in real time.

Each test is small: ``sleep_branin`` sleeps a fraction of a second per evaluation, so the overlap
of the workers shows in the wall-clock times of the result file. The dask tests need the
``[dask]`` extra (installed by scripts/test.sh through ``[all]``); without it they are skipped.
"""
from __future__ import annotations

import functools
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import redirect_stdout
import re
from pathlib import Path

import pytest

from benchsuite import api
from benchsuite.backends import BenchmarkSpec, WorkerEvaluationError, WorkerLost
from benchsuite.benchmarks.sleep_branin import SleepBranin
from benchsuite.cli import main
from benchsuite.errors import BackendError, BudgetError, InvalidSettingError, MissingExtraError, TrialFailure
from benchsuite.execute import execute_run
from benchsuite.results import TIMING_COLUMNS, load_result

ROOT = Path(__file__).resolve().parent.parent


class RaisingSleepBranin(SleepBranin):
    """A benchmark defined outside the suite (here): workers import it through the driver's sys.path."""

    name = "raising_sleep_branin_test"

    def evaluate(self, config, fidelity=None, seed=0):
        if config["x1"] > 2.5:
            raise ValueError(f"x1={config['x1']:.3f} is too large for this test")
        return super().evaluate(config, fidelity, seed)


class MemoSleepBranin(SleepBranin):
    """Memoises a test loss while it evaluates, as a live benchmark's full-fidelity training does."""

    name = "memo_sleep_branin_test"

    def evaluate(self, config, fidelity=None, seed=0):
        result = super().evaluate(config, fidelity, seed)
        self.memo_test_loss(self.space.key(config), lambda: result.loss + 100.0)
        return result

    def test_loss(self, config):
        return self.memo_test_loss(self.space.key(self.space.validate(config)), lambda: -1.0)


@pytest.fixture(scope="module")
def dask_cluster():
    """One LocalCluster (2 single-threaded worker processes) for the dask tests that pass its address."""
    distributed = pytest.importorskip("distributed")
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=40)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def _run(backend: str, **kw):
    kw.setdefault("benchmark_settings", {"sleep_s": 0.5})
    return api.run("sleep_branin", kw.pop("optimizer", "random_search"), backend=backend, **kw)


# -- overlap: 16 evaluations of 0.5 s on 4 workers take about 2 s, not 8 --------------------------
def test_local_four_workers_run_sixteen_half_second_trials_in_about_two_seconds() -> None:
    df = _run("local", seed=0, budget_evals=16, workers=4)
    assert len(df) == 16 and sorted(df["trial"]) == list(range(16))
    assert set(df["worker"]) == {0, 1, 2, 3}
    wall = df["told_time"].max()  # seconds since the workers were ready
    assert 1.9 < wall < 6.0, wall
    assert (df["end_time"] - df["start_time"] >= 0.45).all()  # each trial really slept
    prov = df.attrs["provenance"]
    assert prov["backend"]["name"] == "local" and len(prov["backend"]["workers"]) == 4
    assert all(w["device"] for w in prov["backend"]["workers"])


def test_dask_local_cluster_runs_sixteen_half_second_trials_in_about_two_seconds() -> None:
    pytest.importorskip("distributed")
    df = _run("dask", seed=0, budget_evals=16, workers=4)
    assert len(df) == 16
    wall = df["told_time"].max()
    assert 1.9 < wall < 6.0, wall
    prov = df.attrs["provenance"]
    assert prov["backend"]["name"] == "dask" and prov["backend"]["scheduler"] == "LocalCluster"
    assert len(prov["backend"]["workers"]) == 4


# -- budgets: each backend honours evaluations and seconds of wall time -----------------------------
@pytest.mark.parametrize("backend", ["local", "dask"])
def test_each_backend_honours_both_budget_kinds(backend: str, request) -> None:
    kw = {"workers": 2, "benchmark_settings": {"sleep_s": 0.25}}
    if backend == "dask":
        kw["scheduler"] = request.getfixturevalue("dask_cluster")
    by_evals = _run(backend, seed=1, budget_evals=5, **kw)
    assert len(by_evals) == 5
    by_time = _run(backend, seed=1, budget_seconds=1.0, **kw)
    # trials start only before 1 s of wall time; those running then finish and are recorded
    assert (by_time["ask_time"] < 1.0).all()
    assert 4 <= len(by_time) <= 10, len(by_time)
    assert by_time["told_time"].max() >= 1.0
    both = _run(backend, seed=1, budget_evals=3, budget_seconds=30.0, **kw)
    assert len(both) == 3


# -- faults: a worker killed mid-trial is a failed trial; the run completes -------------------------
def test_a_local_worker_killed_mid_trial_fails_its_trial_and_the_run_completes(tmp_path: Path) -> None:
    seen = []
    output, _ = execute_run("sleep_branin", "random_search", seed=0, budget_evals=8, workers=2, backend="local",
                            benchmark_settings={"sleep_s": 0.2, "die_once": str(tmp_path / "token")},
                            on_failure=lambda trial, exc, bench: seen.append((trial.id, exc)))
    rows = output.rows
    assert sorted(r["trial"] for r in rows) == list(range(8))
    failed = [r for r in rows if r["status"] == "failed"]
    assert len(failed) == 1
    assert "SIGKILL" in failed[0]["info"]["error"] and "during the evaluation" in failed[0]["info"]["error"]
    assert [t for t, _ in seen] == [failed[0]["trial"]] and isinstance(seen[0][1], WorkerLost)
    backend = output.provenance["backend"]
    assert backend["restarts"] == 1 and backend["retired"] == []
    assert len(backend["workers"][failed[0]["worker"]]["pids"]) == 2  # the slot got a fresh process


def test_a_dask_worker_killed_mid_trial_fails_its_trial(tmp_path: Path, dask_cluster: str) -> None:
    output, _ = execute_run("sleep_branin", "random_search", seed=0, budget_evals=6, workers=2, backend="dask",
                            scheduler=dask_cluster,
                            benchmark_settings={"sleep_s": 0.2, "die_once": str(tmp_path / "token")})
    assert len(output.rows) == 6
    failed = [r for r in output.rows if r["status"] == "failed"]
    # dask's KilledWorker (four sentences and a link) said in one of ours, naming the worker
    error = failed[0]["info"]["error"]
    assert len(failed) == 1 and re.search(r"^dask worker (\S+ died|lost) during the evaluation \(.*\)$", error), error


def test_an_evaluation_that_raises_in_a_worker_is_a_failed_trial_with_its_remote_traceback() -> None:
    seen = []
    output, _ = execute_run(RaisingSleepBranin(sleep_s=0.05), "random_search", seed=3, budget_evals=8, workers=2,
                            backend="local", on_failure=lambda trial, exc, bench: seen.append(exc))
    failed = [r for r in output.rows if r["status"] == "failed"]
    assert failed and all("too large for this test" in r["info"]["error"] for r in failed)
    assert len(seen) == len(failed) and isinstance(seen[0], WorkerEvaluationError)
    assert "raise ValueError" in str(seen[0].__cause__)  # the worker's traceback travels as the cause
    assert output.provenance["backend"]["restarts"] == 0


def test_test_losses_a_worker_memoised_reach_the_driver() -> None:
    """The incumbent's test loss is the one the evaluation measured, as in the simulated loop (not the driver's
    own computation: a live benchmark would train the network again there, from another seed)."""
    for backend in ("simulated", "local"):
        df = api.run(MemoSleepBranin(sleep_s=0.05), "random_search", seed=0, budget_evals=6, workers=2,
                     backend=backend)
        assert (df["incumbent_test_loss"] == df["incumbent_loss"] + 100.0).all(), backend


def test_sleep_branin_hook_raises_instead_of_killing_the_driver(tmp_path: Path) -> None:
    bench = SleepBranin(sleep_s=0.0, die_once=str(tmp_path / "token"))
    with pytest.raises(TrialFailure, match="driver"):
        bench.evaluate({"x1": 0.0, "x2": 0.0})
    assert bench.evaluate({"x1": 0.0, "x2": 0.0}).loss > 0  # only once


# The driver under test gets Ctrl-C's default disposition whatever this process inherited: a shell that
# starts pytest in the background without job control (nohup ... &) hands its children SIGINT ignored, and
# a Python started so never raises KeyboardInterrupt (so the test would wait out its timeout).
SIGINT_AS_A_TERMINAL_SENDS = functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL)


def test_interrupting_the_driver_stops_its_workers(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "benchsuite.cli", "run", "-b", "sleep_branin", "-o",
                             "random_search", "--budget-evals", "200", "--workers", "2", "--backend", "local",
                             "--benchmark-set", "sleep_s=1", "-q", "--out", str(tmp_path / "r.csv")],
                            env=env, stderr=subprocess.PIPE, text=True, preexec_fn=SIGINT_AS_A_TERMINAL_SENDS)
    try:
        kids: list[int] = []
        deadline = time.monotonic() + 30
        while len(kids) < 2 and time.monotonic() < deadline:
            time.sleep(0.3)
            kids = _children(proc.pid)
        assert len(kids) == 2, "the workers did not start"
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "interrupted" in err
    time.sleep(0.5)
    assert not [k for k in kids if _alive(k)], "a worker outlived its driver"
    assert not (tmp_path / "r.csv").exists()


def test_an_interrupted_run_keeps_its_finished_trials_beside_the_output(tmp_path: Path) -> None:
    """Issue 28 item 3: Ctrl-C leaves a valid result file of the finished trials, never at --out itself."""
    from benchsuite.results import load_result

    env = {**os.environ, "PYTHONHASHSEED": "0"}
    out = tmp_path / "r.csv"
    proc = subprocess.Popen([sys.executable, "-m", "benchsuite.cli", "run", "-b", "sleep_branin", "-o",
                             "random_search", "--budget-evals", "500", "--workers", "2", "--backend", "local",
                             "--benchmark-set", "sleep_s=0.2", "--out", str(out)],
                            env=env, stderr=subprocess.PIPE, text=True, preexec_fn=SIGINT_AS_A_TERMINAL_SENDS)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120  # a loaded machine starts worker processes slowly
        while not any(" 1/500 trials" in x for x in lines) and time.monotonic() < deadline:
            time.sleep(0.2)  # the driver's first progress line: a trial has finished
        time.sleep(1.0)  # a few more 0.2 s trials finish meanwhile
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        reader.join(timeout=10)
        err = "".join(lines)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and not out.exists()
    partial = tmp_path / "r.csv.partial.csv"
    assert partial.exists() and f"kept in {partial}" in err, err
    df = load_result(partial)
    assert len(df) >= 1 and (df["status"] == "ok").all()
    assert "interrupted (Ctrl-C) after" in df.attrs["provenance"]["interrupted"]
    assert df.attrs["provenance"]["n_trials"] == len(df)
    # the complete rerun writes --out and drops the superseded partial file
    from benchsuite.cli import main as cli_main

    assert cli_main(["run", "-b", "sleep_branin", "-o", "random_search", "--budget-evals", "3", "--benchmark-set",
                     "sleep_s=0", "-q", "--out", str(out)]) == 0
    assert out.exists() and not partial.exists()


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# -- replay: the recorded results in the recorded order give the recorded configurations -----------
def _replay(path: Path) -> tuple[int, str]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(["replay", str(path)])
    return code, buf.getvalue().strip()


def test_replay_passes_on_a_local_run_and_fails_on_a_doctored_file(tmp_path: Path) -> None:
    out = tmp_path / "run.csv"
    assert main(["run", "-b", "sleep_branin", "-o", "tpe", "--set", "n_init=3", "--budget-evals", "10",
                 "--workers", "3", "--backend", "local", "--benchmark-set", "sleep_s=0.15", "--seed", "4", "-q",
                 "--out", str(out)]) == 0
    code, line = _replay(out)
    assert code == 0 and "OK, 10 trials of tpe on sleep_branin" in line and "local backend" in line
    assert len(line.splitlines()) == 1

    from benchsuite.results import write_result

    df = load_result(out)

    def doctored(path: Path, i: int, **cells) -> Path:  # the run's file with cells of row i changed
        rows = df.to_dict("records")
        for r in rows:
            r["info"] = json.loads(r["info"])
        rows[i].update(cells)
        write_result(path, rows, df.attrs["provenance"])
        return path

    # a configuration the optimizer did not propose: the replay names that trial
    k = 5
    i = next(i for i, r in enumerate(df.itertuples()) if r.trial == k)
    config = json.loads(df["config"][i])
    doctored_config = dict(config, x1=config["x1"] / 2 + 1.0)
    bad = doctored(tmp_path / "config.csv", i, config=json.dumps(doctored_config, separators=(",", ":")))
    code, line = _replay(bad)
    assert code == 1 and f"trial {k} differs" in line, line

    # a loss the optimizer was not told: a later proposal differs
    i0 = next(i for i, r in enumerate(df.itertuples()) if r.trial == 0)
    bad_loss = doctored(tmp_path / "loss.csv", i0, loss=-1000.0)
    code, line = _replay(bad_loss)
    assert code == 1 and "differs" in line, line


def test_the_replay_order_is_the_run_loops() -> None:
    """First trial of each slot at the start, then after each tell the next trial of the freed slot."""
    rows = [{"trial": 1, "worker": 1}, {"trial": 0, "worker": 0}, {"trial": 2, "worker": 1},
            {"trial": 3, "worker": 0}]
    from benchsuite.replay import event_order

    assert event_order(rows) == [("ask", 0), ("ask", 1), ("tell", 1), ("ask", 2), ("tell", 0), ("ask", 3),
                                 ("tell", 2), ("tell", 3)]


def test_replay_passes_on_a_simulated_run(tmp_path: Path) -> None:
    out = tmp_path / "sim.csv"
    assert main(["run", "-b", "branin", "-o", "tpe", "--set", "n_init=3", "--budget-evals", "10", "--workers", "3",
                 "-q", "--out", str(out)]) == 0
    code, line = _replay(out)
    assert code == 0 and "simulated backend" in line


# -- the simulated backend is the default, unchanged -----------------------------------------------
def test_backend_simulated_gives_the_default_result(tmp_path: Path) -> None:
    a, b = tmp_path / "default.csv", tmp_path / "simulated.csv"
    common = ["run", "-b", "branin_mf", "-o", "hyperband", "--budget-evals", "20", "--workers", "3", "--seed", "5",
              "--no-overhead", "-q"]
    assert main([*common, "--out", str(a)]) == 0
    assert main([*common, "--backend", "simulated", "--out", str(b)]) == 0
    da, db = load_result(a), load_result(b)
    # with --no-overhead every column but the measured overhead_s is reproducible
    assert da.drop(columns="overhead_s").equals(db.drop(columns="overhead_s"))
    pa, pb = (dict(d.attrs["provenance"]) for d in (da, db))
    for p in (pa, pb):
        p.pop("finished_utc")
    assert pa == pb and "backend" not in pa


def test_real_backend_times_are_wall_clock_in_the_same_columns() -> None:
    df = _run("local", seed=2, budget_evals=4, workers=2, benchmark_settings={"sleep_s": 0.1})
    for col in TIMING_COLUMNS:
        assert (df[col] >= 0).all()
    assert (df["ask_time"] <= df["start_time"]).all() and (df["start_time"] < df["end_time"]).all()
    assert (df["end_time"] <= df["told_time"]).all()
    assert list(df["told_time"]) == sorted(df["told_time"])  # rows in tell order


# -- bad input: one line each ------------------------------------------------------------------------
def test_bad_backend_choices_are_one_line_errors(monkeypatch, capsys) -> None:
    with pytest.raises(InvalidSettingError, match="backend must be one of simulated, local, dask"):
        _run("ray", budget_evals=2)
    with pytest.raises(BudgetError, match="workers"):
        _run("local", budget_evals=2, workers=0)
    with pytest.raises(InvalidSettingError, match="scheduler address is for the dask backend"):
        _run("local", budget_evals=2, scheduler="tcp://127.0.0.1:1")
    assert main(["run", "-b", "branin", "-o", "random_search", "--budget-evals", "2", "--backend", "ray",
                 "--out", "x.csv"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "invalid choice: 'ray'" in err

    monkeypatch.setitem(sys.modules, "distributed", None)  # dask not installed
    with pytest.raises(MissingExtraError, match=r"benchsuite\[dask\]"):
        _run("dask", budget_evals=2)


def test_a_scheduler_that_does_not_answer_is_a_backend_error(monkeypatch) -> None:
    pytest.importorskip("distributed")
    import benchsuite.backends as backends

    monkeypatch.setattr(backends, "CONNECT_TIMEOUT_S", 2.0)
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="no dask scheduler answers at 'tcp://127.0.0.1:9'"):
        _run("dask", budget_evals=2, scheduler="tcp://127.0.0.1:9")
    assert time.monotonic() - t0 < 15


def test_a_benchmark_class_in_main_cannot_go_to_workers() -> None:
    bench = SleepBranin(sleep_s=0.0)
    fake = type("MainBranin", (SleepBranin,), {"__module__": "__main__", "name": "main_branin"})
    with pytest.raises(InvalidSettingError, match="importable module"):
        BenchmarkSpec.of(fake(sleep_s=0.0))
    assert BenchmarkSpec.of(bench).build().settings == bench.settings


# -- the choice reaches every entry point ------------------------------------------------------------
def test_sleep_branin_is_listed(capsys) -> None:
    assert main(["list"]) == 0
    assert "sleep_branin" in capsys.readouterr().out


def test_protocols_and_run_job_choose_the_backend(tmp_path: Path) -> None:
    from benchsuite.errors import ProtocolError
    from benchsuite.protocol import load_protocol

    path = tmp_path / "live2.yaml"
    path.write_text("benchmarks: [{name: sleep_branin, settings: {sleep_s: 0.05}}]\noptimizers: [random_search]\n"
                    "repetitions: 1\nbudget: {evaluations: 4}\nworkers: 2\nbackend: local\n")
    proto = load_protocol(path)
    assert proto.backend == "local"
    job = proto.jobs()[0]
    argv = proto.command(job)
    assert argv[argv.index("--backend") + 1] == "local"
    assert "--backend" not in proto.command(job, backend="simulated")
    out = tmp_path / "r.csv"
    assert main(["run-job", str(path), "sleep_branin", "random_search", "0", "--out", str(out), "-q"]) == 0
    assert load_result(out).attrs["provenance"]["backend"]["name"] == "local"
    assert main(["run-job", str(path), "sleep_branin", "random_search", "0", "--backend", "simulated",
                 "--out", str(out), "-q"]) == 0
    assert "backend" not in load_result(out).attrs["provenance"]

    path.write_text(path.read_text().replace("backend: local", "backend: locale"))
    with pytest.raises(ProtocolError, match="did you mean 'local'"):
        load_protocol(path)


# -- a live benchmark (torch training) on two local workers ------------------------------------------
@pytest.mark.slow  # two workers each import torch: 10-40 s on a shared 2-core machine
def test_a_live_benchmark_at_tiny_settings_runs_on_two_local_workers(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    tiny = {"iterations": 30, "eval_every": 10, "n_train": 600, "n_val": 300, "lr": 1e-2, "threads": 1,
            "max_num_layers": 10, "max_num_units_per_layer": 32, "test_eval": False, "device": "cpu"}
    out = tmp_path / "naval.csv"
    df = api.run("nasbot_mlp_naval", "nasbot_rand", seed=0, budget_evals=4, workers=2, backend="local",
                 benchmark_settings=tiny, out=out)
    assert len(df) == 4 and (df["status"] == "ok").all()
    assert len(load_result(out)) == 4
    # the workers start warm (torch imported, its compiler stack loaded): no trial pays seconds for it
    assert (df["end_time"] - df["start_time"]).max() < 5.0
    code, line = _replay(out)
    assert code == 0, line


def test_the_workflow_runs_a_protocol_on_the_backend_its_config_names(tmp_path: Path) -> None:
    pytest.importorskip("snakemake")
    smoke = json.dumps([str(ROOT / "protocols" / "smoke.yaml")])

    def dry(*config: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "-d",
                               str(tmp_path), "-n", "-p", "smoke", "--cores", "4", "--config", f"protocols={smoke}",
                               *config], capture_output=True, text=True, timeout=120)

    local = dry("backend=local")
    assert local.returncode == 0, local.stderr[-2000:]
    commands = [line for line in local.stdout.splitlines() if "run-job" in line]
    assert commands and all("--backend local" in line for line in commands)
    bad = dry("backend=ray")
    assert bad.returncode != 0
    assert "--config backend=ray: must be one of simulated, local, dask" in bad.stdout + bad.stderr
