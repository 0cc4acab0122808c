"""Two `benchsuite run` writing the same --out: the second refuses; a stale lock is taken over (issue 14, item 8)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchsuite import runner
from benchsuite.cli import OutputLock, _lock_next_to, main
from benchsuite.errors import OutputError
from benchsuite.results import load_result

RUN = ["run", "-b", "branin", "-o", "random_search", "--budget-evals", "5", "-q"]


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def holder(tmp_path: Path):
    """A live process holding the lock of ``tmp_path/r.csv`` (it sleeps until killed)."""
    out = tmp_path / "r.csv"
    code = ("import sys, time; from pathlib import Path; from benchsuite.cli import OutputLock; "
            f"OutputLock(Path({str(out)!r})).acquire(); print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        yield out, proc
    finally:
        proc.kill()
        proc.wait()


def test_second_writer_of_the_same_out_is_refused_in_one_line(holder, capsys) -> None:
    out, proc = holder
    lock = _lock_next_to(out)
    before = lock.read_bytes()
    assert main([*RUN, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("benchsuite: error: "), err
    assert str(out) in err[0] and f"pid {proc.pid}" in err[0]
    assert not out.exists()  # nothing written over the holder's file
    assert lock.read_bytes() == before  # the holder's lock is left alone
    proc.kill()
    proc.wait()
    # the holder died without cleaning up (as kill -9 does): its lock is now stale
    assert main([*RUN, "--out", str(out)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "took over the stale lock" in err[0] and f"pid {proc.pid}" in err[0], err
    assert len(load_result(out)) == 5 and not lock.exists()


def test_a_stale_lock_with_a_dead_pid_is_taken_over_with_one_notice(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.csv"
    pid = dead_pid()
    lock = _lock_next_to(out)
    lock.write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "start": None, "started": "earlier"}))
    assert main([*RUN, "--out", str(out)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"benchsuite: took over the stale lock {lock} (pid {pid}, started earlier, no longer running)"]
    assert len(load_result(out)) == 5
    assert not lock.exists()  # released at the end


def test_a_reused_pid_does_not_keep_a_lock_alive(tmp_path: Path, capsys) -> None:
    """The lock records the holder's start time: a live process that got the same pid later is not the holder."""
    out = tmp_path / "r.csv"
    _lock_next_to(out).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "start": "1"}))
    assert main([*RUN, "--out", str(out)]) == 0
    assert "took over the stale lock" in capsys.readouterr().err


def test_a_lock_from_another_host_is_never_taken_over(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    _lock_next_to(out).write_text(json.dumps({"pid": dead_pid(), "host": "elsewhere.invalid", "start": None}))
    with pytest.raises(OutputError, match=r"on host elsewhere\.invalid"):
        OutputLock(out).acquire()


def test_a_lock_from_a_slurm_job_on_another_host_is_stale_once_slurm_says_the_job_ended(tmp_path: Path, monkeypatch,
                                                                                         capsys) -> None:
    """A run killed on a compute node (a time limit's SIGKILL, a node failure) leaves its lock behind; its rerun
    runs on another node, which asks squeue about the job the lock names instead of refusing for ever."""
    fake = tmp_path / "bin"
    fake.mkdir()
    squeue = fake / "squeue"
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    out = tmp_path / "r.csv"

    def lock_from_node(job: str) -> None:
        _lock_next_to(out).write_text(json.dumps({"pid": 4242, "host": "node17.invalid", "start": "9",
                                                  "slurm_job": job}))

    def answers(script: str) -> None:
        squeue.write_text("#!/bin/sh\n" + script)
        squeue.chmod(0o755)

    lock_from_node("901")
    answers('echo RUNNING\n')  # the job still runs there: its lock holds
    with pytest.raises(OutputError, match=r"pid 4242 on host node17\.invalid in SLURM job 901, running"):
        OutputLock(out).acquire()
    answers('echo "slurm_load_jobs error: Unable to contact slurm controller (connect failure)" >&2; exit 1\n')
    with pytest.raises(OutputError, match="in SLURM job 901"):  # SLURM cannot tell: still held
        OutputLock(out).acquire()
    answers('echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1\n')  # long gone
    with OutputLock(out):
        assert json.loads(_lock_next_to(out).read_text())["pid"] == os.getpid()
    assert "took over the stale lock" in capsys.readouterr().err
    lock_from_node("902")
    answers('echo CANCELLED\n')  # scancel'ed (with SIGKILL: no chance to remove the lock)
    with OutputLock(out):
        pass
    lock_from_node("903")
    answers('echo RUNNING\n')
    monkeypatch.setenv("SLURM_JOB_ID", "903")  # this job, requeued onto another node
    with OutputLock(out) as mine:
        assert json.loads(mine.path.read_text())["slurm_job"] == "903"


def test_a_lock_being_created_is_respected_an_old_empty_one_is_stale(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    lock = _lock_next_to(out)
    lock.write_text("")  # created with O_EXCL, its holder not yet written to it
    with pytest.raises(OutputError, match="being created"):
        OutputLock(out).acquire()
    old = time.time() - 60
    os.utime(lock, (old, old))  # its creator died before writing
    with OutputLock(out):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert not lock.exists()


def test_the_lock_is_removed_on_error_and_on_ctrl_c(tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "r.csv"
    assert main([*RUN[:-3], "--budget-evals", "0", "--out", str(out)]) == 2  # refused after the lock was taken
    assert not _lock_next_to(out).exists() and not out.exists()

    def interrupted(*_a, **_k):
        assert _lock_next_to(out).exists()  # held while the run runs
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run", interrupted)
    assert main([*RUN, "--out", str(out)]) == 130
    assert not _lock_next_to(out).exists() and not out.exists()
    capsys.readouterr()


def test_a_long_output_name_gets_a_lock_name_that_fits(tmp_path: Path) -> None:
    a, b = tmp_path / ("x" * 240 + "a.csv"), tmp_path / ("x" * 240 + "b.csv")
    assert _lock_next_to(a) != _lock_next_to(b)
    assert all(len(os.fsencode(_lock_next_to(p).name)) <= 255 for p in (a, b))
    with OutputLock(a), OutputLock(b):  # distinct files, distinct locks
        pass
