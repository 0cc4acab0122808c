"""Execution backends: where a run's evaluations happen (issue 28).

``simulated`` (the default) is :func:`benchsuite.runner.run`'s own loop: evaluations run one after
another in the driver and only their *simulated* times overlap. The real backends run them in
other processes, at the same time, and the run's times are wall-clock seconds since the run
started (the workers being ready):

``local``
    N worker processes on this machine (``python -c ...`` children talking over a pipe). When
    CUDA GPUs are present each worker sees one (``CUDA_VISIBLE_DEVICES`` set per worker, round
    robin when there are more workers than GPUs); otherwise each gets ``cores // N`` threads
    (``OMP_NUM_THREADS``, which torch and the BLAS libraries read at start).
``dask``
    a ``dask.distributed`` client: a ``LocalCluster`` of N single-threaded worker processes by
    default, or the scheduler at ``scheduler`` (``tcp://host:8786``; a SLURM/PBS cluster started
    with dask-jobqueue, see docs/backends.md). The run keeps N trials in flight.

The driver (the run loop) asks when a worker slot is free and tells when an evaluation
completes; the optimizer and benchmark interfaces are the same for every backend. A worker
rebuilds the benchmark from its importable class and resolved settings (:class:`BenchmarkSpec`),
so a benchmark class must live in an importable module, not in ``__main__``.

Faults: an evaluation that raises is a failed trial, as in the simulated loop. A worker process
that dies mid-trial (killed, out of memory, a CUDA error that takes the process down) turns its
trial into a failed trial naming the cause, and the slot gets a fresh worker (up to
:data:`MAX_RESTARTS` times; then the run goes on with the others). The driver polls every
:data:`POLL_S` seconds, so a dead worker never hangs a run; workers exit when the driver goes away
(Ctrl-C, kill: a watchdog thread in each worker checks its parent), quietly: a worker whose driver is
gone exits without a traceback. A trial still running after the run's ``trial_timeout`` seconds is a
failed trial saying so; its local worker process is stopped and a fresh one takes the slot (not
counted among the restarts), a dask worker is restarted by its nanny.

Bounds: the local backend, and a dask LocalCluster, start one process per worker on this machine, at
most :data:`MAX_LOCAL_WORKERS`, and a run starts no more than its budget in evaluations can use.
Trust: a dask scheduler and its workers receive the benchmark's spec and every trial as pickles, and
the driver unpickles what they send back; give ``--scheduler`` only an address of your own cluster.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .benchmark import Benchmark, Result
from .errors import BackendError, BudgetError, InvalidSettingError, one_line, shorten

BACKENDS = ("simulated", "local", "dask")
REAL_BACKENDS = ("local", "dask")
#: seconds between the driver's checks on its workers while it waits for a completion
POLL_S = 0.5
#: fresh processes a worker slot gets after its worker died; after that the slot is retired
MAX_RESTARTS = 3
#: seconds a worker may take to start (import the benchmark, load its data) before the run gives up
START_TIMEOUT_S = 300.0
#: seconds a dask scheduler address has to answer
CONNECT_TIMEOUT_S = 10.0
#: worker processes a run may start on this machine (the local backend, a dask LocalCluster): each is a Python
#: process holding the benchmark (hundreds of MB for a live one), and a machine has far fewer cores or GPUs; a
#: running dask scheduler's workers are its own, and a run keeps up to protocol.MAX_WORKERS trials in flight there
MAX_LOCAL_WORKERS = 256
#: environment variable every worker process has (its slot); ``sleep_branin``'s fault hook reads it
WORKER_ENV = "BENCHSUITE_WORKER"
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def worker_limit(backend: str, scheduler: str | None = None) -> int | None:
    """The most workers ``backend`` may be given: :data:`MAX_LOCAL_WORKERS` where each is a process started here
    (``local``, dask without a scheduler), else None (the caller's own bound: slots of the simulated loop, trials
    in flight on a running dask scheduler)."""
    if backend == "local" or (backend == "dask" and not scheduler):
        return MAX_LOCAL_WORKERS
    return None


def check_backend(backend: str, workers: int, scheduler: str | None = None,
                  trial_timeout: float | None = None) -> None:
    """One-line errors for a backend choice before anything starts (the protocol's checks are the same)."""
    import math

    if not isinstance(backend, str) or backend not in BACKENDS:
        raise InvalidSettingError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if isinstance(workers, bool) or int(workers) != workers or workers < 1:
        raise BudgetError(f"workers must be a positive integer, got {workers}")
    limit = worker_limit(backend, scheduler)
    if limit is not None and workers > limit:
        raise BudgetError(f"the {backend} backend starts one process per worker on this machine, at most {limit}; "
                          f"got {workers} workers")
    if scheduler is not None and backend != "dask":
        raise InvalidSettingError(f"a scheduler address is for the dask backend; got --scheduler with "
                                  f"backend {backend!r}")
    if trial_timeout is not None:
        if isinstance(trial_timeout, bool) or not isinstance(trial_timeout, (int, float)) or \
                not (math.isfinite(trial_timeout) and trial_timeout > 0):
            raise BudgetError(f"the per-trial time limit must be a positive number of seconds, got {trial_timeout!r}")
        if backend not in REAL_BACKENDS:
            raise InvalidSettingError("a per-trial time limit (--trial-timeout) is for the local and dask backends: "
                                      "the simulated backend evaluates in this process, which cannot stop a trial "
                                      "half-way; add --backend local")
    if backend == "dask":
        from .extras import import_optional

        import_optional("distributed", "the dask backend (--backend dask)")
        if scheduler is not None:
            check_scheduler_address(scheduler)


def check_scheduler_address(scheduler: str) -> None:
    """A one-line error for a dask scheduler address that cannot name one (``tcp://host:8786``), before a client
    is made: a client whose construction fails on its address is left half started, and its finaliser prints a
    traceback at exit."""
    from distributed.comm import get_address_host_port

    try:
        _, port = get_address_host_port(scheduler)
    except (ValueError, TypeError) as exc:
        raise InvalidSettingError(f"--scheduler {scheduler!r} is not a dask scheduler address such as "
                                  f"tcp://host:8786 ({one_line(exc)})") from None
    if not 0 < int(port) < 65536:
        raise InvalidSettingError(f"--scheduler {scheduler!r}: port {port} is not in 1..65535")


# -- what a worker needs to rebuild the benchmark ------------------------------------------------
@dataclass(frozen=True)
class BenchmarkSpec:
    """A benchmark as a worker rebuilds it: its class (module and qualified name) and its resolved settings."""

    module: str
    qualname: str
    settings: dict[str, Any]

    @classmethod
    def of(cls, benchmark: Benchmark) -> BenchmarkSpec:
        """The spec of a constructed benchmark; refuses one whose class a worker cannot import."""
        kind = type(benchmark)
        if kind.__module__ == "__main__" or "<locals>" in kind.__qualname__:
            raise InvalidSettingError(
                f"benchmark class {kind.__qualname__} is defined in {'__main__' if kind.__module__ == '__main__' else 'a function'}; "
                "the local and dask backends rebuild the benchmark in each worker from its class and settings: "
                "define it in an importable module (or register it as a plugin)")
        spec = cls(kind.__module__, kind.__qualname__, dict(benchmark.settings))
        try:
            pickle.dumps(spec)
        except Exception as exc:  # noqa: BLE001 - a setting value that cannot travel
            raise InvalidSettingError(f"benchmark {benchmark.name!r}: its settings cannot be sent to a worker "
                                      f"process ({one_line(exc)})") from None
        return spec

    def build(self) -> Benchmark:
        """A fresh benchmark of this class and settings, prepared for evaluations."""
        obj: Any = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            obj = getattr(obj, part)
        bench = obj(**self.settings)
        bench.prepare()
        for module in getattr(bench, "needs", ()) or ():  # torch: seconds to import, not on the first trial's clock
            try:
                importlib.import_module(module)
            except ImportError:
                pass
        from .live import LiveTrainingBenchmark

        if isinstance(bench, LiveTrainingBenchmark):  # torch's compiler stack and the CUDA context, before the clock
            try:
                from .training import _warm_up, pick_device

                _warm_up(pick_device(str(bench.settings.get("device", "auto"))))
            except Exception:  # noqa: BLE001 - the first trial then pays for it, as in the simulated loop
                pass
        return bench


class RemoteTraceback(Exception):
    """The traceback of an exception in a worker process, as text (the cause of a :class:`WorkerEvaluationError`)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class WorkerEvaluationError(Exception):
    """An evaluation that raised in a worker process; its ``__cause__`` holds the worker's traceback."""


class WorkerLost(Exception):
    """A worker process that died (or was lost) while it evaluated a trial."""


def _is_cuda_error(exc: BaseException) -> bool:
    """Whether an exception leaves the process's CUDA context unusable (the worker is then replaced)."""
    text = f"{type(exc).__name__} {exc}"
    return "CUDA" in text or "cuda" in type(exc).__module__


_MEMO = "_test_loss_memo"  # the attribute Benchmark.memo_test_loss keeps its cache in


def evaluate_in_worker(bench: Benchmark, config: Any, fidelity: float | None, seed: int
                       ) -> tuple[Result, str | None, bool, dict[Any, float]]:
    """One evaluation as a worker runs it: (result, the traceback text if it raised, replace this worker, the
    test losses the evaluation memoised). A live benchmark's full-fidelity training scores the test set and
    memoises it (:meth:`Benchmark.memo_test_loss`); the driver, which computes the incumbent's test loss,
    gets those entries, so its test losses are the simulated loop's."""
    memo = bench.__dict__.get(_MEMO) or {}
    before = set(memo)
    t1 = time.perf_counter()
    try:
        result, tb, replace = bench.evaluate(config, fidelity, seed=seed), None, False
    except Exception as exc:  # noqa: BLE001 - a crashed evaluation is a failed trial, as in the simulated loop
        result = Result.failure(time.perf_counter() - t1, f"{type(exc).__name__}: {exc}")
        tb, replace = traceback.format_exc(), _is_cuda_error(exc)
    memo = bench.__dict__.get(_MEMO) or {}
    return result, tb, replace, {k: v for k, v in memo.items() if k not in before}


def merge_test_losses(bench: Benchmark, memo: dict[Any, float] | None) -> None:
    """Enter a worker's memoised test losses into the driver's benchmark (the first value of a key stays)."""
    if memo:
        cache = bench.__dict__.setdefault(_MEMO, {})
        for k, v in memo.items():
            cache.setdefault(k, v)


def remote_error(tb_text: str, result: Result) -> WorkerEvaluationError:
    """The exception a run's ``on_failure`` hook sees for an evaluation that raised in a worker."""
    err = WorkerEvaluationError(str((result.info or {}).get("error", "the evaluation raised")))
    err.__cause__ = RemoteTraceback(tb_text)
    return err


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


def death_reason(slot: int, pid: int, returncode: int | None) -> str:
    """Why a worker process is gone, in words (a SIGKILL is most often the kernel's out-of-memory killer)."""
    if returncode is None:
        how = "closed its connection"
    elif returncode < 0:
        name = _signal_name(-returncode)
        how = f"was killed by {name}" + (" (out of memory? the kernel's OOM killer sends SIGKILL)"
                                         if name == "SIGKILL" else "")
    else:
        how = f"exited with status {returncode}"
    return f"worker {slot} (pid {pid}) {how} during the evaluation"


def gpu_devices() -> list[str]:
    """The CUDA devices this machine offers: ``CUDA_VISIBLE_DEVICES`` when set, else ``nvidia-smi``'s list,
    else none (torch is not imported for this: it would take seconds and hold a CUDA context)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [d.strip() for d in env.split(",") if d.strip() and d.strip() != "-1"]
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip().isdigit()]


def worker_placement(workers: int, gpus: list[str] | None = None) -> list[dict[str, Any]]:
    """Per worker slot: its device and the environment it starts with (one GPU each, or cores // N threads)."""
    gpus = gpu_devices() if gpus is None else gpus
    cores = os.cpu_count() or 1
    threads = max(1, cores // workers)
    out = []
    for slot in range(workers):
        env = {WORKER_ENV: str(slot)}
        if gpus:
            gpu = gpus[slot % len(gpus)]
            env["CUDA_VISIBLE_DEVICES"] = gpu
            out.append({"slot": slot, "device": f"cuda (CUDA_VISIBLE_DEVICES={gpu})", "env": env})
        else:
            env.update({v: str(threads) for v in _THREAD_VARS})
            env["CUDA_VISIBLE_DEVICES"] = ""  # a machine without GPUs: say so to torch at once
            out.append({"slot": slot, "device": "cpu", "threads": threads, "env": env})
    return out


@dataclass
class Completion:
    """A trial whose evaluation ended (or whose worker died): what the driver tells the optimizer."""

    slot: int
    trial_id: int
    result: Result
    received: float  # time.perf_counter() when the driver learnt of it
    error: BaseException | None = None  # for the run's on_failure hook
    test_losses: dict[Any, float] | None = None  # what the evaluation memoised (merge_test_losses)


class Backend(ABC):
    """A pool of ``workers`` slots that evaluate trials of one benchmark; a trial running longer than
    ``trial_timeout`` seconds is a failed trial (:meth:`wait` reports it) and its worker is replaced."""

    name: str = ""

    def __init__(self, workers: int, trial_timeout: float | None = None):
        self.workers = int(workers)
        self.trial_timeout = trial_timeout

    def timeout_reason(self, trial_id: int) -> str:
        """What a trial stopped at the time limit records as its error."""
        return (f"trial {trial_id} ran past its time limit of {self.trial_timeout:g} s (--trial-timeout, protocol "
                "key trial_timeout) and was stopped; its worker was replaced")

    @abstractmethod
    def start(self, spec: BenchmarkSpec) -> None:
        """Start the workers and wait until each can evaluate; a failure is a :class:`BackendError`."""

    @abstractmethod
    def submit(self, slot: int, trial_id: int, config: Any, fidelity: float | None, seed: int) -> None:
        """Start evaluating trial ``trial_id`` on worker slot ``slot`` (which is free)."""

    @abstractmethod
    def wait(self, timeout: float) -> list[Completion]:
        """The completions that arrived within ``timeout`` seconds (possibly none), in arrival order."""

    def usable(self, slot: int) -> bool:
        """Whether the slot may be given another trial (False once it is retired)."""
        return True

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """The backend's provenance: its name, the workers and their devices."""

    @abstractmethod
    def close(self) -> None:
        """Stop every worker (idempotent; called on success, errors and Ctrl-C alike)."""


def make_backend(name: str, workers: int, scheduler: str | None = None,
                 trial_timeout: float | None = None) -> Backend:
    """The real backend called ``name`` (``local`` or ``dask``); ``trial_timeout``: seconds a trial may run before
    it is a failed trial and its worker is replaced (None: no limit)."""
    check_backend(name, workers, scheduler, trial_timeout)
    if name == "local":
        return LocalBackend(workers, trial_timeout=trial_timeout)
    if name == "dask":
        return DaskBackend(workers, scheduler, trial_timeout=trial_timeout)
    raise InvalidSettingError(f"backend {name!r} runs in the driver's own loop, not through make_backend")


# -- local: worker processes on this machine -----------------------------------------------------
_WORKER_CODE = "import sys; from benchsuite.backends import worker_main; worker_main(int(sys.argv[1]))"


def _watch_parent(parent: int) -> None:
    """Exit this worker when the driver is gone (killed, or ended without stopping its workers)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(70)


def worker_main(fd: int) -> None:
    """A local worker process: rebuild the benchmark, then evaluate what the driver sends until told to stop."""
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the driver decides
    parent = os.getppid()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    conn = Connection(fd)
    try:
        init = conn.recv()
        for p in reversed(init["sys_path"]):  # the driver's import path: benchmarks defined in its modules
            if p not in sys.path:
                sys.path.insert(0, p)
        bench = pickle.loads(init["spec"]).build()
    except Exception as exc:  # noqa: BLE001 - reported to the driver as one line
        try:
            _send(conn, ("error", f"{type(exc).__name__}: {one_line(exc)}"))
        finally:
            os._exit(1)
    _send(conn, ("ready", os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        if msg[0] != "eval":
            os._exit(0)
        _, trial_id, config, fidelity, seed = msg
        result, tb, replace, memo = evaluate_in_worker(bench, config, fidelity, seed)
        try:
            data = pickle.dumps(("done", trial_id, result, tb, replace, memo))
        except Exception as exc:  # noqa: BLE001 - an info value that cannot be pickled
            data = pickle.dumps(("done", trial_id, Result.failure(result.cost_s, f"the result cannot be sent to the "
                                                                                 f"driver ({one_line(exc)})"),
                                 None, replace, {}))
        _send(conn, data, pickled=True)
        if replace:  # a CUDA error leaves the context unusable: the driver starts a fresh worker
            conn.close()
            os._exit(75)


def _send(conn: Any, msg: Any, pickled: bool = False) -> None:
    """Send to the driver; a driver that is gone (killed, or its pipe closed) ends this worker quietly: nobody
    is left to read the message, nor a traceback."""
    try:
        if pickled:
            conn.send_bytes(msg)
        else:
            conn.send(msg)
    except (OSError, ValueError):  # BrokenPipeError, ConnectionResetError, a closed connection
        os._exit(0)


@dataclass
class _Proc:
    slot: int
    proc: subprocess.Popen
    conn: Any  # multiprocessing.connection.Connection
    ready: bool = False  # it said "ready" (a fresh worker takes trials at once: they wait in its pipe)


class LocalBackend(Backend):
    """N worker processes on this machine, one GPU each when there are GPUs."""

    name = "local"

    def __init__(self, workers: int, gpus: list[str] | None = None, trial_timeout: float | None = None):
        super().__init__(workers, trial_timeout)
        self._gpus = gpus
        self.placement: list[dict[str, Any]] = []
        self.procs: dict[int, _Proc] = {}
        self.busy: dict[int, tuple[int, float]] = {}  # slot -> (trial id, sent at)
        self.restarts = [0] * self.workers
        self.retired: set[int] = set()
        self.pids: list[list[int]] = [[] for _ in range(self.workers)]
        # slot -> when its trial's time limit started counting: when it was sent to a ready worker, else when the
        # fresh worker it waits for said ready (starting a worker is not the trial's time)
        self.running_since: dict[int, float] = {}
        self.timeouts = 0
        self._init: dict[str, Any] = {}
        self._closed = False

    # starting workers
    def _spawn(self, slot: int) -> _Proc:
        from multiprocessing import Pipe

        parent_conn, child_conn = Pipe(duplex=True)
        env = {**os.environ, **self.placement[slot]["env"]}
        env.setdefault("PYTHONHASHSEED", "0")  # as `benchsuite run` runs: hash order never decides a result
        fd = child_conn.fileno()
        try:
            proc = subprocess.Popen([sys.executable, "-c", _WORKER_CODE, str(fd)], pass_fds=(fd,), env=env,
                                    stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno() if _has_fd(sys.stderr)
                                    else None, close_fds=True)
        except OSError as exc:
            raise BackendError(f"cannot start worker process {slot} ({exc.strerror or exc})") from None
        finally:
            child_conn.close()
        p = _Proc(slot, proc, parent_conn)
        parent_conn.send(self._init)
        return p

    def _await_ready(self, pending: dict[int, _Proc]) -> None:
        from multiprocessing.connection import wait

        deadline = time.monotonic() + START_TIMEOUT_S
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BackendError(f"worker(s) {sorted(pending)} did not start within {START_TIMEOUT_S:g} s")
            for conn in wait([p.conn for p in pending.values()], min(left, POLL_S)):
                p = next(q for q in pending.values() if q.conn is conn)
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    msg = ("error", death_reason(p.slot, p.proc.pid, p.proc.wait(5)).replace(" during the evaluation",
                                                                                               " as it started"))
                if msg[0] != "ready":
                    raise BackendError(f"worker {p.slot} could not start: {msg[1]}")
                p.ready = True
                self.procs[p.slot] = p
                self.pids[p.slot].append(p.proc.pid)
                del pending[p.slot]
            for p in list(pending.values()):
                if p.proc.poll() is not None and not p.conn.poll():
                    raise BackendError(f"worker {p.slot} could not start: "
                                       + death_reason(p.slot, p.proc.pid, p.proc.returncode)
                                       .replace(" during the evaluation", " as it started"))

    def start(self, spec: BenchmarkSpec) -> None:
        self.placement = worker_placement(self.workers, self._gpus)
        self._init = {"sys_path": [p for p in sys.path if p], "spec": pickle.dumps(spec)}
        pending: dict[int, _Proc] = {}
        try:
            for slot in range(self.workers):
                pending[slot] = self._spawn(slot)
            self._await_ready(pending)
        except BaseException:
            for p in pending.values():
                _stop(p)
            self.close()
            raise

    def submit(self, slot: int, trial_id: int, config: Any, fidelity: float | None, seed: int) -> None:
        self.busy[slot] = (trial_id, time.perf_counter())
        self.running_since.pop(slot, None)
        if slot in self.procs and self.procs[slot].ready:
            self.running_since[slot] = self.busy[slot][1]
        try:
            self.procs[slot].conn.send(("eval", trial_id, config, fidelity, seed))
        except (OSError, ValueError):
            pass  # the worker is gone: the next wait() sees it dead and fails the trial

    def usable(self, slot: int) -> bool:
        return slot not in self.retired

    def _lost(self, slot: int, received: float, why: str | None = None, timed_out: bool = False
              ) -> Completion | None:
        """The worker of ``slot`` is dead (or could not start: ``why``; or was stopped at the time limit:
        ``timed_out``): its trial (if any) failed; the slot gets a fresh worker, started without waiting for it, or
        retires after :data:`MAX_RESTARTS` of them (a worker stopped at the time limit did not fail, and is not
        counted)."""
        p = self.procs.pop(slot)
        try:
            code = p.proc.wait(timeout=0 if timed_out else 5)
        except subprocess.TimeoutExpired:
            _stop(p)
            code = p.proc.returncode
        p.conn.close()
        reason = why or death_reason(slot, p.proc.pid, code)
        if timed_out:
            self.procs[slot] = self._spawn(slot)
        elif self.restarts[slot] >= MAX_RESTARTS:
            self.retired.add(slot)
            print(f"benchsuite: worker {slot} retired after {MAX_RESTARTS} fresh processes: {reason}",
                  file=sys.stderr, flush=True)
        else:
            self.restarts[slot] += 1
            self.procs[slot] = self._spawn(slot)
        if len(self.retired) == self.workers:
            raise BackendError(f"every worker died {MAX_RESTARTS + 1} times; the last: {reason}")
        if slot not in self.busy:
            return None
        trial_id, sent = self.busy.pop(slot)
        self.running_since.pop(slot, None)
        return Completion(slot, trial_id, Result.failure(received - sent, reason), received, WorkerLost(reason))

    def wait(self, timeout: float) -> list[Completion]:
        from multiprocessing.connection import wait

        out: list[Completion] = []
        watched = [p.conn for s, p in self.procs.items() if s in self.busy or not p.ready]
        if watched:
            ready = wait(watched, timeout)
        else:
            time.sleep(min(timeout, 0.05))
            ready = []
        for conn in ready:
            slot = next((s for s, p in self.procs.items() if p.conn is conn), None)
            if slot is None:
                continue
            p = self.procs[slot]
            received = time.perf_counter()
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                lost = self._lost(slot, received)
                if lost is not None:
                    out.append(lost)
                continue
            if msg[0] == "ready":
                p.ready = True
                self.pids[slot].append(msg[1])
                if slot in self.busy:  # the trial waiting in its pipe starts now
                    self.running_since[slot] = received
                continue
            if msg[0] == "error":  # a fresh worker that could not rebuild the benchmark
                lost = self._lost(slot, received, f"worker {slot} could not start again: {msg[1]}")
                if lost is not None:
                    out.append(lost)
                continue
            _, trial_id, result, tb, replace, memo = msg
            self.busy.pop(slot, None)
            self.running_since.pop(slot, None)
            out.append(Completion(slot, trial_id, result, received,
                                  None if tb is None else remote_error(tb, result), memo))
            if replace:  # the worker exits after a CUDA error: a fresh one takes the slot's next trial
                self._lost(slot, received)
        for slot, p in list(self.procs.items()):  # a dead worker whose pipe is still held open elsewhere
            if p.proc.poll() is not None and not p.conn.poll():
                lost = self._lost(slot, time.perf_counter())
                if lost is not None:
                    out.append(lost)
        if self.trial_timeout is not None:  # a trial past its time limit: stop its worker, start a fresh one
            now = time.perf_counter()
            for slot, (trial_id, _) in list(self.busy.items()):
                since = self.running_since.get(slot)
                if since is not None and now - since > self.trial_timeout and slot in self.procs:
                    self.timeouts += 1
                    lost = self._lost(slot, now, self.timeout_reason(trial_id), timed_out=True)
                    if lost is not None:
                        out.append(lost)
        return out

    def describe(self) -> dict[str, Any]:
        workers = []
        for place in self.placement:
            slot = place["slot"]
            entry = {"slot": slot, "device": place["device"], "pids": self.pids[slot]}
            if "threads" in place:
                entry["threads"] = place["threads"]
            workers.append(entry)
        out = {"name": self.name, "workers": workers, "restarts": sum(self.restarts),
               "retired": sorted(self.retired), "hostname": os.uname().nodename}
        if self.trial_timeout is not None:  # recorded only when set, so other runs' files are unchanged
            out.update(trial_timeout=self.trial_timeout, trials_timed_out=self.timeouts)
        return out

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for p in self.procs.values():
            try:
                p.conn.send(("stop",))
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + 2.0
        for p in self.procs.values():
            try:
                p.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _stop(p)
            p.conn.close()
        self.procs.clear()


def _has_fd(stream: Any) -> bool:
    try:
        stream.fileno()
        return True
    except (AttributeError, OSError, ValueError):
        return False


def _stop(p: _Proc) -> None:
    """Terminate a worker process, then kill it if it does not go within a second."""
    if p.proc.poll() is None:
        p.proc.terminate()
        try:
            p.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            p.proc.kill()
            p.proc.wait()


# -- dask: a dask.distributed cluster ------------------------------------------------------------
_DASK_BENCHMARKS: dict[bytes, Benchmark] = {}  # per dask worker process: benchmark spec -> the built benchmark


def _dask_benchmark(spec_bytes: bytes, gpus: list[str], worker: Any = None) -> tuple[Benchmark, dict[str, Any]]:
    """This dask worker's benchmark (built on first use) and the worker's facts (pid, address)."""
    facts: dict[str, Any] = {"pid": os.getpid()}
    if worker is None:
        try:
            from distributed import get_worker

            worker = get_worker()
        except (ImportError, ValueError):
            worker = None
    name = getattr(worker, "name", None)
    if worker is not None:
        facts["address"] = worker.address
    bench = _DASK_BENCHMARKS.get(spec_bytes)
    if bench is None:
        slot = name if isinstance(name, int) else 0
        os.environ[WORKER_ENV] = str(slot)
        if gpus and "torch" not in sys.modules:  # a LocalCluster on a GPU machine: one GPU per worker
            os.environ["CUDA_VISIBLE_DEVICES"] = gpus[slot % len(gpus)]
        bench = _DASK_BENCHMARKS[spec_bytes] = pickle.loads(spec_bytes).build()
    return bench, facts


def dask_prepare(spec_bytes: bytes, gpus: list[str], dask_worker: Any = None) -> dict[str, Any]:
    """Build the benchmark on a dask worker before the run's clock starts (``Client.run`` on every worker)."""
    return _dask_benchmark(spec_bytes, gpus, dask_worker)[1]


def _earlier_attempt(name: str, facts: dict[str, Any]) -> dict[str, Any] | None:
    """Where an earlier attempt of this task ran, if one did; else record this one (a dask ``Variable`` called
    ``name`` on the scheduler: the driver deletes it when the trial is told)."""
    from distributed import Variable, get_client

    var = Variable(name, client=get_client())
    try:
        return dict(var.get(timeout=0))
    except TimeoutError:
        var.set({"address": facts.get("address"), "pid": facts.get("pid")})
        return None


def dask_evaluate(spec_bytes: bytes, gpus: list[str], config: Any, fidelity: float | None, seed: int,
                  attempt: str | None = None) -> tuple[Result, str | None, bool, dict[Any, float], dict[str, Any]]:
    """One evaluation on a dask worker (the benchmark built once per worker process).

    ``attempt`` names the trial's attempt record. A scheduler that was not started with the backend's
    ``allowed-failures: 0`` (a ``dask scheduler`` or dask-jobqueue cluster as users start them: 3 by default)
    runs a task whose worker died again on another worker; that second attempt finds the first one's record and
    returns a failed trial naming the lost worker at once, so a worker's death is a failed trial on every
    cluster, as with the local backend, instead of a trial silently rerun whose times include the lost one."""
    bench, facts = _dask_benchmark(spec_bytes, gpus)
    if attempt is not None:
        earlier = _earlier_attempt(attempt, facts)
        if earlier is not None:
            reason = (f"dask worker {earlier.get('address')} (pid {earlier.get('pid')}) was lost during the "
                      f"evaluation; the scheduler started the trial again on {facts.get('address')}, which stopped "
                      "it")
            return Result.failure(0.0, reason), None, False, {}, {**facts, "lost": reason}
    return (*evaluate_in_worker(bench, config, fidelity, seed), facts)


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    """``os.environ`` with ``values`` set for the block (a process started in it inherits them)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _dask_facts() -> dict[str, Any]:
    return {"pid": os.getpid(), "hostname": os.uname().nodename,
            "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")}


def _dask_lost(exc: BaseException) -> str:
    """Why a dask task ended without a result, in one sentence of ours: dask's KilledWorker message (four
    sentences and a link) becomes the worker's address; anything else keeps its own words."""
    name = type(exc).__name__
    if name == "KilledWorker":
        import re

        found = re.search(r"\b((?:tcp|tls|ucx|inproc)://[\w.\-\[\]:]+?)\.?(?:\s|$)", str(exc))
        where = f" {found.group(1)}" if found else ""
        return (f"dask worker{where} died during the evaluation (KilledWorker; with allowed-failures 0 the "
                "scheduler does not rerun the trial elsewhere)")
    return f"dask worker lost during the evaluation ({name}: {shorten(exc, 200)})"


class DaskBackend(Backend):
    """Trials as dask tasks: a LocalCluster of N single-threaded worker processes, or a running scheduler."""

    name = "dask"

    def __init__(self, workers: int, scheduler: str | None = None, trial_timeout: float | None = None):
        super().__init__(workers, trial_timeout)
        self.scheduler = scheduler
        self.timeouts = 0
        self.client: Any = None
        self.cluster: Any = None
        self.futures: dict[Any, tuple[int, int, float]] = {}  # future -> (slot, trial id, sent at)
        self.done: queue.Queue = queue.Queue()
        self.workers_seen: dict[str, dict[str, Any]] = {}
        self._spec = b""
        self._gpus: list[str] = []

    def start(self, spec: BenchmarkSpec) -> None:
        from .extras import import_optional

        distributed = import_optional("distributed", "the dask backend (--backend dask)")
        import dask

        self._spec = pickle.dumps(spec)
        try:
            if self.scheduler:
                try:
                    self.client = distributed.Client(self.scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
                except (OSError, TimeoutError, ValueError) as exc:
                    raise BackendError(f"no dask scheduler answers at {self.scheduler!r} within "
                                       f"{CONNECT_TIMEOUT_S:g} s ({one_line(exc) or type(exc).__name__})") from None
                self.client.wait_for_workers(1, timeout=START_TIMEOUT_S)
            else:
                import logging

                place = worker_placement(self.workers, [])
                self._gpus = gpu_devices()
                env = {k: v for k, v in place[0]["env"].items() if k in _THREAD_VARS}
                # a task whose worker dies is a failed trial at once (the scheduler would rerun it elsewhere);
                # workers fork from a server that imported distributed once (spawning each one imports it
                # anew: 3 s of CPU per worker), and that server starts with the workers' thread counts
                with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                                      "distributed.worker.multiprocessing-method": "forkserver",
                                      "distributed.nanny.pre-spawn-environ": env}), _environ(env):
                    self.cluster = distributed.LocalCluster(n_workers=self.workers, threads_per_worker=1,
                                                            processes=True, dashboard_address=None,
                                                            silence_logs=logging.CRITICAL)
                self.client = distributed.Client(self.cluster, set_as_default=False)
                self.client.wait_for_workers(self.workers, timeout=START_TIMEOUT_S)
            for address, facts in self.client.run(_dask_facts).items():
                self.workers_seen[address] = facts
            try:  # the benchmark built (data loaded, torch imported) on each worker before the clock starts
                self.client.run(dask_prepare, self._spec, self._gpus)
            except Exception as exc:  # noqa: BLE001 - a worker that cannot build it: one line
                raise BackendError(f"a dask worker could not build benchmark {spec.qualname} "
                                   f"({type(exc).__name__}: {one_line(exc)})") from None
        except BackendError:
            self.close()
            raise
        except (OSError, TimeoutError, RuntimeError) as exc:  # RuntimeError: "Nanny failed to start."
            self.close()
            raise BackendError(f"the dask cluster did not start ({type(exc).__name__}: {one_line(exc)})") from None
        except BaseException:
            self.close()
            raise

    def submit(self, slot: int, trial_id: int, config: Any, fidelity: float | None, seed: int) -> None:
        key = f"benchsuite-trial-{trial_id}-{os.getpid()}-{id(self)}"
        # the LocalCluster never runs a task twice (allowed-failures 0); a running scheduler may (dask_evaluate)
        attempt = f"{key}-attempt" if self.scheduler else None
        fut = self.client.submit(dask_evaluate, self._spec, self._gpus, config, fidelity, seed, attempt,
                                 pure=False, key=key)
        self.futures[fut] = (slot, trial_id, time.perf_counter())
        fut.add_done_callback(lambda f: self.done.put((f, time.perf_counter())))

    def wait(self, timeout: float) -> list[Completion]:
        out: list[Completion] = []
        try:
            item = self.done.get(timeout=timeout)
        except queue.Empty:
            if self.client is not None and self.client.status not in ("running", "connecting"):
                raise BackendError(f"the dask client lost its scheduler (status {self.client.status!r})") from None
            return self._timed_out()
        items = [item]
        while True:
            try:
                items.append(self.done.get_nowait())
            except queue.Empty:
                break
        for fut, received in items:
            if fut not in self.futures:  # a trial already failed at its time limit, whose task ended since
                continue
            slot, trial_id, sent = self.futures.pop(fut)
            error: BaseException | None = None
            memo = None
            self._forget_attempt(fut)
            if fut.status == "finished":
                result, tb, _, memo, facts = fut.result()
                if facts.get("address"):
                    self.workers_seen.setdefault(facts["address"], {}).setdefault("pid", facts.get("pid"))
                if facts.get("lost"):  # the second attempt of a trial whose first worker died
                    result = Result.failure(received - sent, facts["lost"])
                    error = WorkerLost(facts["lost"])
                elif tb is not None:
                    error = remote_error(tb, result)
            else:
                try:
                    exc = fut.exception(timeout=5)
                except BaseException as why:  # noqa: BLE001 - cancelled, or the scheduler is gone
                    exc = why
                if type(exc).__name__ in ("KilledWorker", "CancelledError", "FutureCancelledError"):
                    reason = _dask_lost(exc)
                else:  # dask_evaluate itself raised: a worker whose benchsuite differs from the driver's, say
                    reason = (f"the dask task failed before evaluating ({type(exc).__name__}: {one_line(exc)}); "
                              "do the workers run this benchsuite version?")
                result = Result.failure(received - sent, reason)
                error = WorkerLost(reason)
            out.append(Completion(slot, trial_id, result, received, error, memo))
        return out + self._timed_out()

    def _timed_out(self) -> list[Completion]:
        """The trials past their time limit (counted from their submission: dask does not say when a task began),
        as failed trials; the worker running each is restarted (a running task cannot be cancelled)."""
        if self.trial_timeout is None or self.client is None:
            return []
        now = time.perf_counter()
        late = [(fut, entry) for fut, entry in self.futures.items() if now - entry[2] > self.trial_timeout]
        if not late:
            return []
        try:
            processing = self.client.processing()
        except Exception:  # noqa: BLE001 - the scheduler cannot say: the tasks are still failed and cancelled
            processing = {}
        out, stuck = [], set()
        for fut, (slot, trial_id, sent) in late:
            del self.futures[fut]
            self.timeouts += 1
            stuck.update(addr for addr, keys in processing.items() if fut.key in keys)
            reason = self.timeout_reason(trial_id)
            out.append(Completion(slot, trial_id, Result.failure(now - sent, reason), now, WorkerLost(reason)))
        try:
            self.client.cancel([fut for fut, _ in late], force=True)
            if stuck:
                self.client.restart_workers(sorted(stuck), timeout=START_TIMEOUT_S, raise_for_error=False)
        except Exception as exc:  # noqa: BLE001 - the run goes on with the workers it has
            print(f"benchsuite: could not restart the dask worker(s) {sorted(stuck)} of a trial past its time limit "
                  f"({type(exc).__name__}: {one_line(exc)})", file=sys.stderr, flush=True)
        return out

    def _forget_attempt(self, fut: Any, client: Any = None) -> None:
        """Delete a finished or cancelled trial's attempt record on the scheduler (dask_evaluate)."""
        client = client or self.client
        if self.scheduler and client is not None:
            from distributed import Variable

            try:
                Variable(f"{fut.key}-attempt", client=client).delete()
            except Exception:  # noqa: BLE001 - a record left on a scheduler that went away: nothing to do
                pass

    def describe(self) -> dict[str, Any]:
        workers = [{"address": a, **f} for a, f in sorted(self.workers_seen.items())]
        out = {"name": self.name, "slots": self.workers,
               "scheduler": self.scheduler or "LocalCluster", "workers": workers}
        if self.trial_timeout is not None:  # recorded only when set, so other runs' files are unchanged
            out.update(trial_timeout=self.trial_timeout, trials_timed_out=self.timeouts)
        return out

    def close(self) -> None:
        client, cluster = self.client, self.cluster
        self.client = self.cluster = None
        if client is not None:
            try:
                if self.futures:
                    client.cancel(list(self.futures))
                    for fut in self.futures:
                        self._forget_attempt(fut, client)
                client.close(timeout=10)
            except Exception:  # noqa: BLE001 - closing after a failure: nothing more to do
                pass
        if cluster is not None:
            try:
                cluster.close(timeout=10)
            except Exception:  # noqa: BLE001
                pass
