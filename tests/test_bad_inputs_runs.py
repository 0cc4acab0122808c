"""Bad inputs to runs, resumes, backends and the reproductions command: no run that never ends, no file
written over another run's, no resume that cannot resume, no traceback, nothing accepted silently.

The contract of tests/test_bad_inputs.py, plus a bound on time enforced while the case runs (a SIGALRM
raises into it, so a hang fails the case instead of holding the suite): exit status 2 (0 where the
input is handled, such as a damaged partial file the run starts over from), exactly one line on stderr,
no traceback, no file left behind and every earlier file byte for byte as it was. Families, in the
order of the issue that asked for them: a clock that stands still; result names that are another
result's files; damaged partial files; trials that hang on a real backend; worker counts; tracebacks
(dask addresses, a worker whose driver is gone, a reproductions folder that is a file); silent
acceptance (reproductions options, labels with a final newline, tables with non-finite costs); long
values in messages; labels of a committed frame that name a path outside the results folder.
"""
from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from benchsuite import registry
from benchsuite.benchmark import Benchmark, Result
from benchsuite.benchmarks.sleep_branin import SleepBranin
from benchsuite.cli import main
from benchsuite.errors import BudgetError, OutputError
from benchsuite.execute import execute_run, partial_path
from benchsuite.registry import Entry
from benchsuite.results import load_result, provenance_path
from benchsuite.runner import STALL_TRIALS, RunInterrupted
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion
from benchsuite.settings import NONNEGATIVE, Setting
from benchsuite.space import Float, Space

ROOT = Path(__file__).resolve().parent.parent
SVM_TABLE = ROOT / "tables" / "svm_mnist" / "svm_mnist.h5"
RUN = ["run", "-b", "branin", "-o", "random_search", "--budget-evals", "3", "-q"]


class Overtime(BaseException):
    """Raised into a case that ran past its bound (a BaseException: no ``except Exception`` in a run swallows it)."""


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail the block if it runs longer than ``seconds`` (SIGALRM: the main thread, where pytest runs tests)."""
    def expire(signum: int, frame: Any) -> None:
        raise Overtime(f"still running after {seconds:g} s: a hang")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def cli(capsys: pytest.CaptureFixture, argv: Sequence[str], bound: float = 60.0) -> tuple[int, list[str]]:
    """The command line in-process, within ``bound`` seconds: (exit status, stderr lines)."""
    capsys.readouterr()
    with within(bound):
        code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    return code, err.strip("\n").splitlines()


def one_line_error(capsys: pytest.CaptureFixture, argv: Sequence[str], bound: float = 60.0) -> str:
    """The bad-input contract: exit status 2, one line, no traceback, within ``bound`` seconds."""
    code, lines = cli(capsys, argv, bound)
    assert code == 2, (code, lines)
    assert len(lines) == 1 and lines[0].startswith("benchsuite: error: "), lines
    return lines[0]


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` by relative name, with the sha256 of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def console(argv: Sequence[str], bound: float, cwd: Path) -> subprocess.CompletedProcess:
    """The console script as a user runs it (its real stderr, the finalisers at exit), within ``bound`` s."""
    return subprocess.run([sys.executable, "-m", "benchsuite.cli", *map(str, argv)], capture_output=True, text=True,
                          cwd=cwd, timeout=bound, env={**os.environ, "PYTHONHASHSEED": "0"})


def assert_console_one_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.strip("\n").splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("benchsuite: error: "), proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    return lines[0]


# -- 1. a clock that stands still: a budget in seconds alone is never spent --------------------------
class FreeNominal(Benchmark):
    """A benchmark whose evaluations take time but whose nominal cost model charges nothing (an infeasible
    walk of DeepArchitect's costs 0 on the nominal clock); ``every``: only every n-th configuration is free."""

    name = "free_nominal_test"
    kind = "synthetic"
    description = "nominal cost 0"
    every = 1

    def setup(self) -> None:
        self.space = Space([Float("x", 0.0, 1.0)])

    def evaluate(self, config, fidelity=None, seed=0):
        return Result(float(config["x"]), 1.0)

    def test_loss(self, config) -> float:
        return float(config["x"])

    def nominal_cost(self, config, fidelity=None) -> float:
        return 0.0 if int(config["x"] * 1e6) % self.every == 0 else 2.0


@pytest.fixture()
def free_nominal(monkeypatch: pytest.MonkeyPatch):
    def install(every: int = 1) -> None:
        cls = type("FreeNominal", (FreeNominal,), {"every": every})
        monkeypatch.setitem(registry.benchmarks(), "free_nominal_test", Entry("free_nominal_test", cls, "test"))
    return install


STALL_CASES = {
    "no overhead": ["--no-overhead"],
    "overhead on the clock": [],
    "three workers": ["--no-overhead", "--workers", "3"],
    "cpu overhead clock": ["--overhead-clock", "cpu"],
}


@pytest.mark.parametrize("case", list(STALL_CASES))
def test_zero_cost_trials_under_a_budget_in_seconds_are_refused(capsys, tmp_path, case) -> None:
    out = tmp_path / "r.csv"
    line = one_line_error(capsys, ["run", "-b", "branin", "-o", "random_search", "--budget-seconds", "10",
                                   "--benchmark-set", "cost_s=0", "-q", *STALL_CASES[case], "--out", out], bound=60)
    assert f"0 s for {STALL_TRIALS} trials in a row" in line and "--budget-evals" in line
    assert list(tmp_path.iterdir()) == []


def test_the_nominal_clock_cannot_stand_still_either(capsys, tmp_path, free_nominal) -> None:
    free_nominal()
    line = one_line_error(capsys, ["run", "-b", "free_nominal_test", "-o", "random_search", "--budget-seconds", "5",
                                   "--clock", "nominal", "-q", "--out", tmp_path / "r.csv"])
    assert "nominal cost model" in line and list(tmp_path.iterdir()) == []


def test_some_free_trials_among_costly_ones_do_not_stop_a_run(capsys, tmp_path, free_nominal) -> None:
    free_nominal(every=3)  # about a third of the trials cost nothing on the clock
    code, lines = cli(capsys, ["run", "-b", "free_nominal_test", "-o", "random_search", "--budget-seconds", "40",
                               "--clock", "nominal", "-q", "--out", tmp_path / "r.csv"])
    assert code == 0 and lines == [] and len(load_result(tmp_path / "r.csv")) > 10


def test_zero_cost_trials_with_a_budget_in_evaluations_too_run_to_it(capsys, tmp_path) -> None:
    code, lines = cli(capsys, ["run", "-b", "branin", "-o", "random_search", "--budget-seconds", "10",
                               "--budget-evals", str(STALL_TRIALS + 5), "--benchmark-set", "cost_s=0", "-q",
                               "--out", tmp_path / "r.csv"])
    assert code == 0 and len(load_result(tmp_path / "r.csv")) == STALL_TRIALS + 5


def test_the_api_refuses_a_clock_that_stands_still(tmp_path) -> None:
    import benchsuite

    with within(60), pytest.raises(BudgetError, match="in a row"):
        benchsuite.run("branin", "random_search", budget_seconds=3, benchmark_settings={"cost_s": 0.0},
                       include_overhead=False, out=tmp_path / "r.csv")
    assert list(tmp_path.iterdir()) == []


# -- 2. result names: a run never writes another run's files ---------------------------------------
NAME_CASES = {  # --out given after a run wrote r.csv -> what the one line says
    "no .csv (would share r.provenance.json)": ("r", "give 'r.csv'"),
    "the provenance file": ("r.provenance.json", "provenance file"),
    "the partial file": ("r.csv.partial.csv", "interrupted run"),
    "the partial's provenance file": ("r.csv.partial.provenance.json", "provenance file"),
    "the lock file": ("r.csv.lock", "ends in .csv"),
    "the traceback log": ("r.csv.traceback.log", "ends in .csv"),
    "the failure log": ("r.csv.failures.log", "ends in .csv"),
    "only a suffix": (".csv", "ends in .csv"),
    "upper-case suffix": ("r.CSV", "give 'r.CSV.csv'"),
}


@pytest.mark.parametrize("case", list(NAME_CASES))
def test_a_result_name_that_is_another_results_file_is_refused(capsys, tmp_path, case) -> None:
    name, message = NAME_CASES[case]
    assert main([*RUN, "--out", str(tmp_path / "r.csv")]) == 0
    before = snapshot(tmp_path)
    line = one_line_error(capsys, [*RUN, "--out", tmp_path / name])
    assert message in line
    assert snapshot(tmp_path) == before
    assert main(["replay", str(tmp_path / "r.csv")]) == 0  # its provenance still belongs to it


def test_run_job_and_the_api_refuse_such_names_too(capsys, tmp_path) -> None:
    import benchsuite

    proto = tmp_path / "p.yaml"
    proto.write_text("optimizers: [random_search]\nrepetitions: 1\nbudget: {evaluations: 3}\nbenchmarks: [branin]\n")
    assert "give 'x.csv'" in one_line_error(capsys, ["run-job", proto, "branin", "random_search", "0",
                                                    "--out", tmp_path / "x"])
    with pytest.raises(OutputError, match="provenance file"):
        benchsuite.run("branin", "random_search", budget_evals=2, out=tmp_path / "x.provenance.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.yaml"]


# -- 3. damaged partial files: the run starts over, saying why in one line ---------------------------
COMPARED = ["trial", "worker", "status", "config", "ask_time", "start_time", "end_time", "told_time", "loss",
            "cost_s", "incumbent", "incumbent_loss", "incumbent_test_loss"]


class StopAtSix(SleepBranin):
    """sleep_branin (named branin's way below) whose sixth evaluation is interrupted, as Ctrl-C would."""

    calls = 0

    def evaluate(self, config, fidelity=None, seed=0):
        type(self).calls += 1
        if type(self).calls == 6:
            raise KeyboardInterrupt
        return super().evaluate(config, fidelity, seed)


def _interrupted(out: Path) -> Path:
    """An interrupted run of sleep_branin at ``out`` (5 finished trials kept); its partial file."""
    StopAtSix.calls = 0
    with pytest.raises(RunInterrupted):
        execute_run(StopAtSix(sleep_s=0.0), "random_search", seed=3, budget_evals=12, include_overhead=False, out=out)
    return partial_path(out)


def _doctor(partial: Path, edit) -> None:
    """Edit the partial file's rows (a list of dicts of cells) and record the new bytes' sha256 in its provenance
    file, as a user who fixes the checksum would: the cells must be checked, not only the checksum."""
    rows = list(csv.DictReader(io.StringIO(partial.read_text())))
    edit(rows)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    data = buf.getvalue()
    partial.write_text(data)
    side = provenance_path(partial)
    record = json.loads(side.read_text())
    record["data_sha256"] = hashlib.sha256(data.encode()).hexdigest()
    side.write_text(json.dumps(record))


def _cell(row: int, column: str, value: str):
    def edit(rows):
        rows[row][column] = value
    return edit


def _duplicate(rows):
    rows[1]["trial"] = rows[0]["trial"]


PARTIAL_CASES = {  # edit -> what the line says
    "incumbent not JSON": (_cell(2, "incumbent", "{bad"), "incumbent of trial 2 is not JSON"),
    "incumbent out of range": (_cell(2, "incumbent", '{"x1": 99.0, "x2": 1.0}'), "not a configuration"),
    "incumbent of unknown variables": (_cell(0, "incumbent", '{"y": 1}'), "not a configuration"),
    "incumbent a list": (_cell(1, "incumbent", "[1, 2]"), "not a configuration"),
    "cost infinite": (_cell(1, "cost_s", "inf"), "cost_s of trial 1"),
    "cost negative": (_cell(1, "cost_s", "-5"), "cost_s of trial 1"),
    "cost NaN": (_cell(3, "cost_s", "nan"), "column 'cost_s' is empty in row 4"),
    "config not JSON": (_cell(0, "config", "x1=1"), "config of trial 0 is not JSON"),
    "ok trial without a loss": (_cell(4, "loss", ""), "trial 4 is ok but its loss"),
    "ok trial with an infinite loss": (_cell(4, "loss", "-inf"), "trial 4 is ok but its loss"),
    "told time infinite": (_cell(2, "told_time", "inf"), "told_time of trial 2"),
    "fidelity text": (_cell(2, "fidelity", "full"), "'fidelity' holds non-numbers"),
    "a trial recorded twice": (_duplicate, "records trial 0 twice"),
}


@pytest.mark.parametrize("case", list(PARTIAL_CASES))
def test_a_damaged_partial_file_starts_the_run_over_in_one_line(capsys, tmp_path, case) -> None:
    edit, message = PARTIAL_CASES[case]
    out = tmp_path / "r.csv"
    partial = _interrupted(out)
    _doctor(partial, edit)
    argv = ["run", "-b", "sleep_branin", "-o", "random_search", "--seed", "3", "--budget-evals", "12",
            "--benchmark-set", "sleep_s=0", "--no-overhead", "-q", "--out"]
    code, lines = cli(capsys, [*argv, out])
    assert code == 0 and len(lines) == 1, lines
    assert lines[0].startswith("benchsuite: not resuming from ") and partial.name in lines[0], lines
    assert message in lines[0], lines
    assert lines[0].endswith("starting the run over")
    assert not partial.exists() and not provenance_path(partial).exists()  # superseded by the complete run
    # the run that started over is the uninterrupted run
    assert main([*argv, str(tmp_path / "fresh.csv")]) == 0
    a, b = load_result(out), load_result(tmp_path / "fresh.csv")
    assert a[COMPARED].equals(b[COMPARED])


def test_every_later_attempt_is_not_stuck_on_a_damaged_partial_file(capsys, tmp_path) -> None:
    """What the first run made of a damaged file is gone; an interrupted second attempt resumes as usual."""
    out = tmp_path / "r.csv"
    _doctor(_interrupted(out), _cell(2, "incumbent", "{bad"))
    with within(60), pytest.raises(RunInterrupted):
        StopAtSix.calls = 0
        execute_run(StopAtSix(sleep_s=0.0), "random_search", seed=3, budget_evals=12, include_overhead=False,
                    out=out)
    capsys.readouterr()
    code, lines = cli(capsys, ["run", "-b", "sleep_branin", "-o", "random_search", "--seed", "3", "--budget-evals",
                               "12", "--benchmark-set", "sleep_s=0", "--no-overhead", "-q", "--out", out])
    assert code == 0 and lines == ["benchsuite: resumed from r.csv.partial.csv: 5 of its 5 finished trial(s) reused"]


# -- 4. trials that hang on a real backend: --trial-timeout ------------------------------------------
class HangOnceBranin(SleepBranin):
    """sleep_branin whose first evaluation (the one that creates the token file ``hang_once``) sleeps ``hang_s``."""

    name = "hang_once_branin_test"
    settings_spec = {**SleepBranin.settings_spec,
                     "hang_once": Setting("", "token file: the evaluation that creates it hangs", type=str),
                     "hang_s": Setting(1000.0, "seconds that evaluation sleeps", type=float, domain=NONNEGATIVE)}

    def evaluate(self, config, fidelity=None, seed=0):
        if self.settings["hang_once"] and self._claim(self.settings["hang_once"]):
            time.sleep(float(self.settings["hang_s"]))
        return super().evaluate(config, fidelity, seed)


@pytest.fixture()
def hang_once(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(registry.benchmarks(), HangOnceBranin.name, Entry(HangOnceBranin.name, HangOnceBranin, "test"))


@pytest.mark.parametrize("hang_s", [40.0, 1000.0])
def test_a_hung_trial_fails_at_its_time_limit_and_its_worker_is_replaced(capsys, tmp_path, hang_once,
                                                                         hang_s) -> None:
    out = tmp_path / "r.csv"
    t0 = time.monotonic()
    code, lines = cli(capsys, ["run", "-b", HangOnceBranin.name, "-o", "random_search", "--budget-evals", "12",
                               "--workers", "2", "--backend", "local", "--trial-timeout", "2", "--benchmark-set",
                               f"hang_once={tmp_path / 'token'}", "--benchmark-set", f"hang_s={hang_s}",
                               "--benchmark-set", "sleep_s=0.5", "-q", "--out", out], bound=90)
    assert code == 0, lines
    # 11 trials of 0.5 s on two workers and one stopped at 2 s, plus starting the workers (and a fresh one)
    assert time.monotonic() - t0 < 60
    df = load_result(out)
    failed = df[df["status"] == "failed"]
    assert len(df) == 12 and len(failed) == 1 and (df["status"] == "ok").sum() == 11
    assert "ran past its time limit of 2 s" in failed["info"].iloc[0]
    backend = df.attrs["provenance"]["backend"]
    assert backend["trial_timeout"] == 2.0 and backend["trials_timed_out"] == 1 and backend["restarts"] == 0
    assert len(backend["workers"][failed["worker"].iloc[0]]["pids"]) == 2  # a fresh process took the slot
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.csv.failures.log", "r.provenance.json",
                                                          "token"]  # the lock was released


def test_a_hung_trial_on_dask_fails_at_its_time_limit(capsys, tmp_path, hang_once) -> None:
    pytest.importorskip("distributed")
    out = tmp_path / "r.csv"
    code, lines = cli(capsys, ["run", "-b", HangOnceBranin.name, "-o", "random_search", "--budget-evals", "4",
                               "--workers", "2", "--backend", "dask", "--trial-timeout", "4", "--benchmark-set",
                               f"hang_once={tmp_path / 'token'}", "--benchmark-set", "sleep_s=0.1", "-q",
                               "--out", out], bound=150)
    assert code == 0, lines
    df = load_result(out)
    assert len(df) == 4 and (df["status"] == "failed").sum() == 1
    assert "ran past its time limit of 4 s" in df.loc[df["status"] == "failed", "info"].iloc[0]
    assert not (tmp_path / "r.csv.lock").exists()


TIMEOUT_ARG_CASES = {
    "simulated backend": (["--trial-timeout", "5"], "is for the local and dask backends"),
    "zero": (["--backend", "local", "--trial-timeout", "0"], "positive number of seconds"),
    "negative": (["--backend", "local", "--trial-timeout", "-2"], "positive number of seconds"),
    "nan": (["--backend", "local", "--trial-timeout", "nan"], "finite"),
    "inf": (["--backend", "local", "--trial-timeout", "inf"], "finite"),
    "text": (["--backend", "local", "--trial-timeout", "soon"], "expected a number"),
}


@pytest.mark.parametrize("case", list(TIMEOUT_ARG_CASES))
def test_bad_trial_timeouts_are_one_line(capsys, tmp_path, case) -> None:
    extra, message = TIMEOUT_ARG_CASES[case]
    assert message in one_line_error(capsys, [*RUN, *extra, "--out", tmp_path / "r.csv"])
    assert list(tmp_path.iterdir()) == []


def test_sigterm_and_sighup_release_the_lock(tmp_path) -> None:
    """A run stopped by SIGTERM or SIGHUP (a scheduler's cancel, a closed terminal) removes its lock and keeps its
    finished trials, on the simulated backend as on a real one."""
    import threading

    for sig, backend in ((signal.SIGTERM, "simulated"), (signal.SIGHUP, "simulated"), (signal.SIGHUP, "local")):
        out = tmp_path / f"{sig.name}-{backend}.csv"
        proc = subprocess.Popen([sys.executable, "-m", "benchsuite.cli", "run", "-b", "sleep_branin", "-o",
                                 "random_search", "--budget-evals", "500", "--backend", backend, "--benchmark-set",
                                 "sleep_s=0.2", "--out", str(out)], stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONHASHSEED": "0"},
                                # under nohup (a CI runner's shell, say) SIGHUP is inherited as ignored, and the run
                                # rightly keeps it so: start the run with the default disposition a terminal gives
                                preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True)
        reader.start()
        try:
            deadline = time.monotonic() + 90
            while not any(" 1/500 trials" in x for x in lines) and time.monotonic() < deadline:
                time.sleep(0.2)  # the first progress line: a trial has finished
            assert Path(str(out) + ".lock").exists()
            proc.send_signal(sig)
            proc.wait(timeout=30)
            reader.join(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
        err = "".join(lines)
        assert proc.returncode == 130 and "Traceback" not in err, err
        assert not Path(str(out) + ".lock").exists() and not out.exists()
        assert len(load_result(partial_path(out))) >= 1


# -- 5. worker counts: a documented limit, processes started as needed -------------------------------
def test_local_and_local_cluster_worker_counts_are_bounded(capsys, tmp_path) -> None:
    from benchsuite.backends import MAX_LOCAL_WORKERS

    over = str(MAX_LOCAL_WORKERS + 1)
    for extra in (["--backend", "local"], ["--backend", "dask"]):
        line = one_line_error(capsys, [*RUN, "--workers", over, *extra, "--out", tmp_path / "r.csv"])
        assert f"at most {MAX_LOCAL_WORKERS}" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("workers,backend,ok", [(100_000, "local", False), (257, "local", False),
                                                (256, "local", True), (100_000, "simulated", True),
                                                (100_000, "dask", True)])
def test_validate_protocol_agrees_with_the_command_line(capsys, tmp_path, workers, backend, ok) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(f"optimizers: [random_search]\nrepetitions: 1\nbudget: {{evaluations: 3}}\nbenchmarks: [branin]\n"
                    f"workers: {workers}\nbackend: {backend}\n")
    if ok:
        assert cli(capsys, ["validate-protocol", path])[0] == 0
    else:
        assert "at most 256" in one_line_error(capsys, ["validate-protocol", path])


def test_run_job_on_the_local_backend_refuses_a_protocol_with_too_many_workers(capsys, tmp_path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("optimizers: [random_search]\nrepetitions: 1\nbudget: {evaluations: 3}\nbenchmarks: [branin]\n"
                    "workers: 5000\n")
    line = one_line_error(capsys, ["run-job", path, "branin", "random_search", "0", "--backend", "local",
                                   "--out", tmp_path / "r.csv"])
    assert "at most 256" in line and sorted(p.name for p in tmp_path.iterdir()) == ["p.yaml"]


def test_the_local_backend_starts_no_more_workers_than_the_budget_can_use(capsys, tmp_path) -> None:
    out = tmp_path / "r.csv"
    code, _ = cli(capsys, ["run", "-b", "sleep_branin", "-o", "random_search", "--budget-evals", "1", "--workers",
                           "12", "--backend", "local", "--benchmark-set", "sleep_s=0", "-q", "--out", out])
    assert code == 0
    prov = load_result(out).attrs["provenance"]
    assert prov["workers"] == 12 and len(prov["backend"]["workers"]) == 1


# -- 6. tracebacks: dask addresses, a worker whose driver is gone, a folder that is a file --------------
@pytest.mark.parametrize("address,message", [("notanaddress", "missing port"), ("tcp://host", "missing port"),
                                             ("foo://x:1", "unknown address scheme"),
                                             ("tcp://127.0.0.1:99999", "not in 1..65535")])
def test_a_malformed_scheduler_address_is_one_line_and_nothing_after_it(tmp_path, address, message) -> None:
    pytest.importorskip("distributed")
    t0 = time.monotonic()
    proc = console([*RUN, "--backend", "dask", "--scheduler", address, "--out", "r.csv"], 60, tmp_path)
    assert message in assert_console_one_line(proc)
    assert time.monotonic() - t0 < 30 and list(tmp_path.iterdir()) == []


def test_a_local_worker_whose_driver_is_gone_exits_quietly() -> None:
    """The worker's send to a driver that was killed: no (chained) BrokenPipeError traceback, a quiet exit."""
    code = ("from multiprocessing import Pipe\nfrom benchsuite.backends import _send\nfrom benchsuite.benchmark "
            "import Result\na, b = Pipe()\na.close()\nimport pickle\n"
            "_send(b, pickle.dumps(('done', 0, Result(1.0, 1.0), None, False, {})), pickled=True)\n"
            "print('not reached')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "" and "not reached" not in proc.stdout


def test_workers_of_a_killed_driver_leave_no_traceback(tmp_path) -> None:
    """kill -9 of a local run's driver while its workers evaluate: they exit, and write nothing to stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "benchsuite.cli", "run", "-b", "sleep_branin", "-o",
                             "random_search", "--budget-evals", "500", "--workers", "2", "--backend", "local",
                             "--benchmark-set", "sleep_s=0.05", "-q", "--out", str(tmp_path / "r.csv")],
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    try:
        time.sleep(8)  # workers started, trials flowing
        proc.kill()
        proc.wait(timeout=10)
        time.sleep(3)  # the workers notice within a second; their stderr is the same pipe
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


class TellRaises(Optimizer):
    """Random proposals; ``tell`` raises: an error in the driver while workers evaluate."""

    name = "tell_raises_test"
    description = "raises in tell"
    supports = Capabilities()

    def ask(self, pending=()):
        return Suggestion(self.space.sample(self.rng), None)

    def tell(self, trial, result) -> None:
        raise RuntimeError("tell broke")


def _live_children() -> set[int]:
    """This process's live children, but multiprocessing's own helpers (the forkserver dask's workers fork from,
    the resource tracker), which live as long as the process that started them, run or no run."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            helper = b"multiprocessing.forkserver" in command or b"multiprocessing.resource_tracker" in command
            if int(fields[1]) == os.getpid() and fields[0] != "Z" and not helper:
                out.add(int(entry.name))
    return out


@pytest.mark.parametrize("backend", ["local", "dask"])
def test_an_error_in_the_driver_stops_every_worker_quietly(capsys, tmp_path, monkeypatch, backend) -> None:
    if backend == "dask":
        pytest.importorskip("distributed")
    monkeypatch.setitem(registry.optimizers(), TellRaises.name, Entry(TellRaises.name, TellRaises, "test"))
    before = _live_children()
    out = tmp_path / "r.csv"
    line = one_line_error(capsys, ["run", "-b", "sleep_branin", "-o", TellRaises.name, "--budget-evals", "6",
                                   "--workers", "2", "--backend", backend, "--benchmark-set", "sleep_s=0.1", "-q",
                                   "--out", out], bound=150)
    assert "raised in tell()" in line and not out.exists() and not Path(str(out) + ".lock").exists()
    deadline = time.monotonic() + 10
    while _live_children() - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _live_children() - before, "a worker process outlived the run"


def test_a_reproductions_folder_that_is_a_file_is_one_line(capsys, tmp_path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    for argv in (["reproductions", "--dir", f], ["reproductions", "restore", "x", "--results", tmp_path, "--dir", f],
                 ["reproductions", "collect", "x", "--results", tmp_path, "--dir", f]):
        assert "not a folder" in one_line_error(capsys, argv)
    assert f.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["f"]


# -- 7. silent acceptance --------------------------------------------------------------------------
REPRO_ARG_CASES = {
    "folder that does not exist": (["--dir", "{tmp}/typo-folder"], "no such folder"),
    "restore from a folder that does not exist": (["restore", "mini", "--results", "{tmp}", "--dir",
                                                   "{tmp}/typo-folder"], "no such folder"),
    "verify with a folder that does not exist": (["--verify", "1", "--dir", "{tmp}/typo-folder"], "no such folder"),
    "negative timeout": (["--verify", "1", "--timeout", "-5"], "positive, finite number of seconds"),
    "zero timeout": (["--verify", "1", "--timeout", "0"], "positive, finite number of seconds"),
    "nan timeout": (["--verify", "1", "--timeout", "nan"], "positive, finite number of seconds"),
    "infinite timeout": (["--verify", "1", "--timeout", "inf"], "positive, finite number of seconds"),
    "text timeout": (["--verify", "1", "--timeout", "later"], "number of seconds"),
    "verify zero": (["--verify", "0"], "integer >= 1"),
    "verify negative": (["--verify", "-3"], "integer >= 1"),
    "negative seed": (["--verify", "1", "--seed", "-1"], "integer >= 0"),
}


@pytest.mark.parametrize("case", list(REPRO_ARG_CASES))
def test_reproductions_options_are_checked(capsys, tmp_path, case) -> None:
    args, message = REPRO_ARG_CASES[case]
    argv = ["reproductions", *(a.replace("{tmp}", str(tmp_path)) for a in args)]
    assert message in one_line_error(capsys, argv)
    assert list(tmp_path.iterdir()) == []  # the typo folder was not created


GOOD = "optimizers: [random_search]\nrepetitions: 1\nbudget: {evaluations: 3}\nbenchmarks: [branin]\n"
LABEL_CASES = {
    "optimizer label ending in a newline": {"optimizers": [{"name": "random_search", "label": "rs\n"}]},
    "benchmark label ending in a newline": {"benchmarks": [{"name": "branin", "label": "b\n"}]},
    "label with a newline inside": {"benchmarks": [{"name": "branin", "label": "b\nc"}]},
    "label ending in a carriage return": {"benchmarks": [{"name": "branin", "label": "b\r"}]},
    "trial_timeout negative": {"trial_timeout": -1},
    "trial_timeout text": {"trial_timeout": "an hour"},
    "trial_timeout infinite": {"trial_timeout": float("inf")},
}


@pytest.mark.parametrize("case", list(LABEL_CASES))
def test_protocol_values_that_used_to_pass(capsys, tmp_path, case) -> None:
    raw = {**yaml.safe_load(GOOD), **LABEL_CASES[case]}
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(raw))
    line = one_line_error(capsys, ["validate-protocol", path])
    assert ("label" in line) if "label" in case else ("trial_timeout" in line)


def test_a_protocol_trial_timeout_reaches_the_local_runs_command(tmp_path) -> None:
    from benchsuite.protocol import load_protocol

    path = tmp_path / "p.yaml"
    path.write_text(GOOD + "trial_timeout: 90\n")
    p = load_protocol(path)
    job = p.jobs()[0]
    assert "--trial-timeout" not in p.command(job)  # the simulated backend cannot stop a trial
    local = p.command(job, backend="local")
    assert local[local.index("--trial-timeout") + 1] == "90.0"


def _table_with_costs(tmp: Path, make) -> Path:
    import h5py

    from benchsuite.data import sha256_file
    from benchsuite.tabular import sidecar

    path = tmp / "svm.h5"
    shutil.copy(SVM_TABLE, path)
    with h5py.File(path, "r+") as f:
        cost = f["cost"][()]
        del f["cost"]
        f.create_dataset("cost", data=make(cost))
    sidecar(path).write_text(sha256_file(path) + "  svm.h5\n")  # a valid checksum: the contents are checked
    return path


TABLE_COST_CASES = {
    "all NaN": lambda c: np.full_like(c, np.nan),
    "one NaN": lambda c: np.where(np.arange(c.size).reshape(c.shape) == 7, np.nan, c),
    "all infinite": lambda c: np.full_like(c, np.inf),
    "negative": lambda c: -c,
    "one negative": lambda c: np.where(np.arange(c.size).reshape(c.shape) == 0, -1.0, c),
}


@pytest.mark.parametrize("case", list(TABLE_COST_CASES))
def test_a_table_with_non_finite_or_negative_costs_is_refused_when_opened(capsys, tmp_path, case) -> None:
    table = _table_with_costs(tmp_path, TABLE_COST_CASES[case])
    out = tmp_path / "r.csv"
    line = one_line_error(capsys, ["run", "-b", "svm_mnist", "-o", "random_search", "--budget-evals", "3",
                                   "--benchmark-set", f"table={table}", "-q", "--out", out])
    assert "cost objective 'cost'" in line and str(table) in line and not out.exists()


# -- 8. messages: long values elided in the middle, ranges as a user writes them -----------------------
LONG = "a" * 100_000
MESSAGE_CASES = {
    "a long configuration value": ["evaluate", "-b", "branin", "--config", f'{{"x1": "{LONG}", "x2": 1}}'],
    "a long variable name": ["evaluate", "-b", "branin", "--config", f'{{"x1": 1, "x2": 1, "{LONG}": 1}}'],
    "a long setting name": [*RUN, "--set", f"{LONG}=1", "--out", "r.csv"],
    "a long benchmark name": ["run", "-b", LONG, "-o", "random_search", "--budget-evals", "3", "--out", "r.csv"],
    "a long name to describe": ["describe", LONG],
    "a long value with spaces": ["evaluate", "-b", "branin", "--config", '{"x1": "' + "a " * 50_000 + '", "x2": 1}'],
}


@pytest.mark.parametrize("case", list(MESSAGE_CASES))
def test_a_long_value_is_elided_in_the_middle(capsys, tmp_path, monkeypatch, case) -> None:
    monkeypatch.chdir(tmp_path)
    line = one_line_error(capsys, MESSAGE_CASES[case])
    assert len(line) <= 1100 and "characters cut" in line, len(line)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value,message", [(str(10**21), "a positive integer of at most 9223372036854775807"),
                                           (str(2**63), "a positive integer of at most 9223372036854775807"),
                                           ("0", "positive integer"), ("-1", "positive integer")])
def test_the_budget_range_is_quoted_as_a_user_writes_it(capsys, tmp_path, value, message) -> None:
    line = one_line_error(capsys, ["run", "-b", "branin", "-o", "random_search", "--budget-evals", value,
                                   "--out", tmp_path / "r.csv"])
    assert message in line and "-9223372036854775808" not in line


# -- 9. a committed frame's labels never name a path outside --results ---------------------------------
@pytest.mark.parametrize("label", ["../../../escaped", "/tmp/absolute", "random_search/../../x", "not_a_job"])
def test_restore_writes_only_the_protocols_own_job_paths(capsys, tmp_path, label) -> None:
    from benchsuite.analysis import reproductions as R
    from benchsuite.data import sha256_file
    from benchsuite.protocol import load_protocol

    data = ROOT / "tests" / "data" / "reproductions"
    committed = tmp_path / "repro"
    shutil.copytree(data / "committed", committed)
    d = committed / "mini"
    df = R.read_runs(d / R.RUNS_FILE)
    first = df["optimizer"].iloc[0]
    df.loc[df["optimizer"] == first, "optimizer"] = label  # a crafted frame: one optimizer's runs relabelled
    R._write_runs(df, d / R.RUNS_FILE, whole=True)
    prov = R.read_provenance(d / "provenance.json")
    R.write_provenance(d, {**prov, "runs_sha256": sha256_file(d / R.RUNS_FILE)})  # its checksum made to agree
    results = tmp_path / "wf" / "results"
    code, lines = cli(capsys, ["reproductions", "restore", data / "protocols" / "mini.yaml", "--results", results,
                               "--dir", committed, "--protocols", data / "protocols"])
    assert code == 0 and len(lines) == 0
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("rep*.csv"))
    assert written and all(str(p).startswith(f"wf{os.sep}results{os.sep}mini{os.sep}") for p in written), written
    assert not any(label.strip("/.").split("/")[0] in str(p) for p in written)
    assert not Path("/tmp/absolute").exists()
    mini = load_protocol(data / "protocols" / "mini.yaml")
    assert len(written) == len([j for j in mini.jobs() if j.optimizer.label != first])


def test_the_docs_say_a_dask_scheduler_must_be_trusted() -> None:
    page = (ROOT / "docs" / "backends.md").read_text(encoding="utf-8")  # the README links the backends page
    assert "pickles" in page and "you control" in page
    from benchsuite.cli import _parser

    assert "trust" in _parser()._subparsers._group_actions[0].choices["run"].format_help()


# -- the tally of the suite ------------------------------------------------------------------------
def test_the_tally_script_counts_clean_and_failed_cases(tmp_path, load_script) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "bad_inputs.py"), "-k", "budget_range"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_bad_inputs_runs.py: 4 cases, 4 clean, 0 failed, 0 skipped" in proc.stdout
    assert "bad-input suite: 4 cases, 4 clean, 0 failed" in proc.stdout and "load average" in proc.stdout
    report = tmp_path / "r.xml"
    report.write_text('<testsuites><testsuite><testcase classname="tests.test_x" name="a"/>'
                      '<testcase classname="tests.test_x" name="b"><failure/></testcase>'
                      '<testcase classname="tests.test_x" name="c"><skipped/></testcase></testsuite></testsuites>')
    assert load_script("scripts/bad_inputs.py").tally(report) == {
        "test_x.py": {"cases": 3, "clean": 1, "failed": 1, "skipped": 1}}
