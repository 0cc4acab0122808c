"""kill -9 at several moments, then a rerun that recomputes nothing completed (issue 14, item 8).

Each test runs a tiny protocol (Branin, random search, a few runs of some seconds each) with
`benchsuite workflow`, kills part of it with SIGKILL, reruns, and checks that every result
file that existed after the kill is the same file (inode and mtime) and that everything
finishes. The kill tests are marked slow (each takes 20-60 s); the first tests here are fast
checks of what the rerun relies on.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from benchsuite.cli import OutputLock, _lock_next_to, main
from benchsuite.cli_workflow import _incomplete_marks, check_live_runs, keep_completed_runs
from benchsuite.errors import OutputError
from benchsuite.protocol import load_protocol
from benchsuite.results import load_result, provenance_path

BENCHSUITE = Path(sys.executable).parent / "benchsuite"


def protocol(tmp_path: Path, repetitions: int, evaluations: int) -> tuple[Path, list[Path], Path]:
    """(protocol file, its result files, the results folder) of a Branin protocol of a few seconds per run."""
    path = tmp_path / "killme.yaml"
    path.write_text(yaml.safe_dump({"benchmark": "branin", "optimizers": ["random_search"],
                                    "repetitions": repetitions, "budget": {"evaluations": evaluations},
                                    "plots": {"x": ["evaluations"]}}))
    results = tmp_path / "res"
    return path, [results / p for p in load_protocol(path).result_paths()], results


def start(proto: Path, results: Path, log: Path) -> subprocess.Popen:
    """`benchsuite workflow` in its own process group (so that killpg reaches Snakemake and its runs)."""
    with open(log, "w") as fh:
        return subprocess.Popen([str(BENCHSUITE), "workflow", str(proto), "--results", str(results), "--cores", "1"],
                                cwd=proto.parent, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)


def rerun(proto: Path, results: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(BENCHSUITE), "workflow", str(proto), "--results", str(results), "--cores", "1"],
                          cwd=proto.parent, capture_output=True, text=True, timeout=timeout)


def wait_for(cond: Callable[[], object], timeout: float, what: str, proc: subprocess.Popen | None = None,
             log: Path | None = None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = cond()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.01)
    text = log.read_text() if log is not None and log.exists() else ""
    raise AssertionError(f"timed out waiting for {what}\n{text[-3000:]}")


def identity(paths: list[Path]) -> dict[Path, tuple[int, int]]:
    """(inode, mtime) of every file that exists: a recomputed file is a new file, renamed into place."""
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in paths if p.exists()}


def live_lock(paths: list[Path]) -> tuple[Path, int] | None:
    """(result file, pid) of a run that holds its result file's lock now."""
    for p in paths:
        try:
            return p, int(json.loads(_lock_next_to(p).read_text())["pid"])
        except (OSError, ValueError, KeyError):
            continue
    return None


def finish_and_check(proto: Path, results: Path, paths: list[Path], before: dict[Path, tuple[int, int]],
                     evaluations: int) -> subprocess.CompletedProcess:
    """Rerun: it succeeds, recomputes none of ``before``, and completes every run and the report."""
    again = rerun(proto, results)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
    assert identity(list(before)) == before, "a completed result file was recomputed"
    assert all(len(load_result(p)) == evaluations for p in paths)
    assert (results / "reports" / "killme" / "index.md").stat().st_size > 0
    assert not any(_lock_next_to(p).exists() for p in paths)
    return again


# -- fast -----------------------------------------------------------------------------------
def mark_incomplete(results: Path, output: Path) -> Path:
    """Mark ``output`` incomplete exactly as Snakemake's file persistence does (its own path encoding)."""
    from types import SimpleNamespace

    from snakemake.persistence.file import FilePersistence

    base = results / ".snakemake" / "incomplete"
    marker = Path(FilePersistence._record_path(SimpleNamespace(_fetch_max_len=lambda _s: 255), str(base),
                                               str(output)))
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text('{"external_jobid": null}')
    return marker


def test_only_complete_valid_results_of_the_asked_runs_lose_their_mark(tmp_path: Path, capsys) -> None:
    proto_path, paths, results = protocol(tmp_path, repetitions=4, evaluations=5)
    proto = load_protocol(proto_path)
    for job, path in zip(proto.jobs(), paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        assert main(proto.command(job, out=str(path), exe=()) + ["-q"]) == 0
    lines = paths[1].read_text().splitlines(keepends=True)
    paths[1].write_text("".join(lines[:-1]))  # cut: fewer rows than its provenance's n_trials
    for a, b in ((paths[2], paths[3]), (provenance_path(paths[2]), provenance_path(paths[3]))):
        a.write_bytes(b.read_bytes())  # complete, but another run's files (seed, repetition)
    other = tmp_path / "res" / "results" / "elsewhere.csv"
    other.write_bytes(paths[0].read_bytes())  # not an output of the asked protocols
    markers = [mark_incomplete(results, p) for p in [*paths[:3], other]]
    capsys.readouterr()
    assert keep_completed_runs(results, {proto.name: proto}) == [paths[0]]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("benchsuite: kept results/killme/branin/random_search/rep000.csv "
                                               "(5 trials"), err
    assert [m.exists() for m in markers] == [False, True, True, True]
    assert {os.path.normpath(k) for _m, k in _incomplete_marks(results)} == {str(paths[1]), str(paths[2]), str(other)}


def test_a_run_still_writing_refuses_the_workflow_a_dead_ones_lock_is_removed(tmp_path: Path) -> None:
    proto_path, paths, results = protocol(tmp_path, repetitions=2, evaluations=5)
    proto = load_protocol(proto_path)
    paths[0].parent.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _lock_next_to(paths[0]).write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "start": None}))
    with OutputLock(paths[1]):  # this process stands for a run a killed workflow left running
        with pytest.raises(OutputError, match=rf"rep001.csv is still being written .*\(pid {os.getpid()}"):
            check_live_runs(results, {proto.name: proto})
    check_live_runs(results, {proto.name: proto})
    assert not any(_lock_next_to(p).exists() for p in paths)


# -- slow: real kills -------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("moment", ["first_result", "reporting"])
def test_kill_9_of_the_whole_workflow_recomputes_nothing_completed(tmp_path: Path, moment: str) -> None:
    """kill -9 of `benchsuite workflow`, Snakemake and the run in flight: as the first result file
    appears (when Snakemake may not yet have recorded its job as finished), or once every run is
    done and the aggregate or report runs."""
    proto, paths, results = protocol(tmp_path, repetitions=3, evaluations=20000)
    log = tmp_path / "first.log"
    first = start(proto, results, log)
    try:
        if moment == "first_result":
            wait_for(lambda: any(p.exists() for p in paths), 90, "a result file", first, log)
        else:
            wait_for(lambda: all(p.exists() for p in paths), 120, "every result file", first, log)
        assert first.poll() is None, "the workflow ended before the kill:\n" + log.read_text()[-2000:]
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    before = identity(paths)
    assert before and all(len(load_result(p)) == 20000 for p in before)  # what exists is complete
    if moment == "reporting":
        assert len(before) == len(paths)
    again = finish_and_check(proto, results, paths, before, 20000)
    assert sum("cleared a stale Snakemake lock" in ln for ln in again.stderr.splitlines()) == 1


@pytest.mark.slow
def test_kill_9_of_snakemake_alone_keeps_the_run_that_finished_after_it(tmp_path: Path) -> None:
    """Snakemake is killed while a run job runs on; the run completes its file afterwards. Snakemake
    had marked that file incomplete; the rerun keeps it (one line) instead of deleting and redoing it."""
    proto, paths, results = protocol(tmp_path, repetitions=2, evaluations=60000)
    log = tmp_path / "first.log"
    first = start(proto, results, log)
    try:
        out, run_pid = wait_for(lambda: live_lock(paths), 90, "a run to start", first, log)
        records = list((results / ".snakemake" / "benchsuite").glob("*.json"))
        assert len(records) == 1
        os.kill(int(json.loads(records[0].read_text())["pid"]), signal.SIGKILL)  # Snakemake only
        first.wait(timeout=30)
        assert not out.exists()
        # while the orphaned run still writes, a rerun is refused in one line (not started twice)
        busy = rerun(proto, results, timeout=60)
        if live_lock([out]) is not None and not out.exists():
            lines = busy.stderr.strip().splitlines()
            assert busy.returncode == 2 and len(lines) == 1 and "still being written" in lines[0], busy.stderr
            assert f"pid {run_pid}" in lines[0]
        wait_for(lambda: out.exists() and not _lock_next_to(out).exists(), 90, "the orphaned run to finish")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
    marked = {os.path.normpath(key) for _m, key in _incomplete_marks(results)}
    assert str(out) in marked  # the state this test is about: a complete file Snakemake marks incomplete
    before = identity(paths)
    again = finish_and_check(proto, results, paths, before, 60000)
    kept = [ln for ln in again.stderr.splitlines() if ln.startswith("benchsuite: kept ")]
    assert len(kept) == 1 and str(out.relative_to(results)) in kept[0], again.stderr
    assert str(out) not in {os.path.normpath(k) for _m, k in _incomplete_marks(results)}


@pytest.mark.slow
def test_kill_9_of_one_run_redoes_only_that_run(tmp_path: Path) -> None:
    """The second run of the workflow is killed: Snakemake stops with the job failed; the rerun
    removes the dead run's stale lock, redoes that run (and the third), and keeps the first.
    (Snakemake picks the order of the runs: the first to finish may be any repetition.)"""
    proto, paths, results = protocol(tmp_path, repetitions=3, evaluations=30000)
    log = tmp_path / "first.log"
    first = start(proto, results, log)
    try:
        done = wait_for(lambda: next((p for p in paths if p.exists()), None), 90, "the first result file", first,
                        log)
        victim, pid = wait_for(lambda: live_lock([p for p in paths if p != done]), 60, "the second run to start",
                               first, log)
        os.kill(pid, signal.SIGKILL)
        assert first.wait(timeout=60) != 0  # Snakemake reports the failed job
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert not victim.exists() and _lock_next_to(victim).exists()  # no file; its lock left behind
    before = identity(paths)
    assert done in before
    again = finish_and_check(proto, results, paths, before, 30000)  # the dead run's lock is gone too
    assert "still being written" not in again.stderr  # a dead run's lock does not stop the rerun
