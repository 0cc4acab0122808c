"""Exclusive locks on result files, and whether the process holding one still runs.

``benchsuite run`` holds ``<out>.lock`` while it writes ``<out>`` (:class:`OutputLock`); the
workflow commands use the same liveness checks for Snakemake's own processes.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks since boot) of a Linux process; None where unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) ": the command may hold spaces
    return fields[0], fields[19]


def _alive(pid: int, start: str | None = None) -> bool:
    """Whether process ``pid`` runs here (not a zombie, not a later process given the same pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    stat = _proc_stat(pid)
    if stat is not None:
        state, started = stat
        if state in ("Z", "X") or (start is not None and started != start):
            return False
    return True


def sidecar_path(out: Path, suffix: str) -> Path:
    """A file next to a result file, named after it plus ``suffix`` (``.lock``, ``.partial.csv``); a long name is
    shortened, with a checksum of the whole, so that the sidecar's name still fits NAME_MAX."""
    import zlib

    name = out.name
    if len(os.fsencode(name)) > 240:
        name = f"{name[:200]}.{zlib.crc32(os.fsencode(name)):08x}"
    return out.with_name(name + suffix)


def _lock_next_to(out: Path) -> Path:
    """The lock file of a result file."""
    return sidecar_path(out, ".lock")


# SLURM job states in which a job's processes may still run (squeue's %T); any other state, or a job SLURM no
# longer knows, has ended
_SLURM_LIVE_STATES = frozenset({"PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "RESIZING",
                                "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STAGE_OUT", "STOPPED"})


def slurm_job_state(job_id: str) -> str | None:
    """A SLURM job's state as squeue reports it ("RUNNING", ...), "ENDED" for a job SLURM no longer lists, or
    None when that cannot be told here (no squeue, no answer from the controller)."""
    import subprocess

    try:
        out = subprocess.run(["squeue", "-h", "-j", str(job_id), "-o", "%T"], capture_output=True, text=True,
                             timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode == 0:
        return out.stdout.split()[0] if out.stdout.split() else "ENDED"
    return "ENDED" if "invalid job id" in out.stderr.lower() else None


def judge_lock(raw: str, mtime: float, creating_s: float) -> tuple[bool, str | None]:
    """(live, who) for a lock file's text: who is "pid N[ on host H][, started T]", None for one being created.

    A lock held from another host cannot be checked through /proc: it is live, unless its holder ran in a SLURM
    job that SLURM says has ended (a run killed on a compute node, by a time limit's SIGKILL or a node failure,
    must not block its rerun on another node for ever)."""
    import json
    import socket

    try:
        rec = json.loads(raw)
        pid = int(rec["pid"])
    except (ValueError, KeyError, TypeError):
        # empty or cut: created with O_EXCL and not yet written, or its creator died right then
        return (True, None) if time.time() - mtime < creating_s else (False, "an unreadable lock")
    host = rec.get("host")
    here = host == socket.gethostname()
    live = _alive(pid, rec.get("start")) if here else True
    job = rec.get("slurm_job")
    state = None
    if not here and job:
        if str(job) == os.environ.get("SLURM_JOB_ID"):  # this very job, requeued onto another node: its earlier run
            state, live = "requeued", False
        else:
            state = slurm_job_state(str(job))
            live = state is None or state in _SLURM_LIVE_STATES
    who = f"pid {pid}" + ("" if here else f" on host {host}") + \
          (f" in SLURM job {job}" + (f", {state.lower()}" if state else "") if not here and job else "") + \
          (f", started {rec['started']}" if rec.get("started") else "")
    return live, who


class OutputLock:
    """An exclusive lock on a result file: ``<out>.lock``, created with O_EXCL, holding pid, host and start time.

    Two ``benchsuite run`` writing the same ``--out`` at once would silently overwrite each
    other's file; the second refuses instead (an :class:`OutputError` naming the file and the
    pid that holds it). A lock whose process is gone (kill -9, power loss) is stale and taken
    over with a one-line notice on stderr. Taking over holds ``flock`` on the stale file and
    checks that the name still refers to it, so two processes taking over the same stale lock
    cannot both win. A lock held from another host is treated as live (it cannot be checked from
    here), unless it names a SLURM job that SLURM says has ended (:func:`judge_lock`)."""

    # a lock file caught between its O_EXCL creation and its first write is being created, not stale
    CREATING_S = 10.0

    def __init__(self, out: Path):
        self.out, self.path = out, _lock_next_to(out)
        self._ino: int | None = None

    def __enter__(self) -> "OutputLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _describe(self) -> dict:
        import datetime
        import socket

        stat = _proc_stat(os.getpid())
        return {"pid": os.getpid(), "host": socket.gethostname(), "start": stat[1] if stat else None,
                "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                "slurm_job": os.environ.get("SLURM_JOB_ID"), "argv": sys.argv[1:]}

    def acquire(self) -> None:
        """Create the lock file, taking over a stale one; OutputError if a live process holds it."""
        import json

        from .errors import OutputError

        for _attempt in range(20):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                self._take_over_if_stale()
                continue
            except OSError as exc:
                raise OutputError(f"cannot create the lock file {str(self.path)!r} next to the output "
                                  f"({exc.strerror or exc})") from None
            try:
                os.write(fd, (json.dumps(self._describe()) + "\n").encode())
                self._ino = os.fstat(fd).st_ino
            finally:
                os.close(fd)
            return
        raise OutputError(f"cannot lock {str(self.out)!r}: its lock file {str(self.path)!r} keeps changing; "
                          "is another run starting there?")

    def _take_over_if_stale(self, notice: bool = True) -> None:
        """Remove the existing lock file if its process is gone (one-line notice); raise OutputError if it lives."""
        import fcntl

        from .errors import OutputError

        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:  # released meanwhile: try again
            return
        except OSError as exc:
            raise OutputError(f"{self.out} is locked by {self.path}, which cannot be read ({exc.strerror or exc}); "
                              "give another --out") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # one taker-over at a time (released when fd closes)
            except OSError:  # a file system without flock: the inode check below still applies
                pass
            try:
                if os.stat(self.path).st_ino != os.fstat(fd).st_ino:
                    return  # replaced or removed meanwhile: look again
            except FileNotFoundError:
                return
            live, who = judge_lock(os.read(fd, 1 << 16).decode("utf-8", "replace"), os.fstat(fd).st_mtime,
                                   self.CREATING_S)
            if live and who is None:
                raise OutputError(f"{self.out} is being written by another benchsuite run (its lock "
                                  f"{self.path} is being created); wait for it or give another --out")
            if live:
                raise OutputError(f"{self.out} is being written by another benchsuite run ({who}; lock "
                                  f"{self.path}): wait for it to finish, stop it, or give another --out")
            os.unlink(self.path)
            if notice:
                print(f"benchsuite: took over the stale lock {self.path} ({who}, no longer running)",
                      file=sys.stderr, flush=True)
        finally:
            os.close(fd)

    def remove_if_stale(self) -> None:
        """Remove the lock file, without a notice, if its process is gone; OutputError if it lives."""
        if self.path.exists():
            self._take_over_if_stale(notice=False)

    def holder(self) -> str | None:
        """The live process holding this lock (pid, host, start), or None when unlocked or stale."""
        try:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                live, who = judge_lock(fh.read(1 << 16), os.fstat(fh.fileno()).st_mtime, self.CREATING_S)
        except OSError:
            return None
        return (who or "a run starting now") if live else None

    def release(self) -> None:
        """Remove the lock file if it is still this process's."""
        if self._ino is None:
            return
        try:
            if os.stat(self.path).st_ino == self._ino:
                os.unlink(self.path)
        except OSError:
            pass
        self._ino = None
