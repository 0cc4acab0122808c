"""One run path: the checks in one order, the run, the result file (issue 22, item 3).

``benchsuite run`` and :func:`benchsuite.api.run` both call :func:`execute_run`; the event loop
itself is :func:`benchsuite.runner.run`. The order of checks is the command line's: the output
path (writable, then locked for the whole run), the budget, the optimizer's name, the benchmark
(its name, settings and construction); only then does anything run. The backend
(:mod:`benchsuite.backends`) is checked with the budget. With ``out`` the result file
is written atomically; without it, nothing touches the disk and the caller gets the text of its files
(:class:`~benchsuite.results.ResultText`).
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ContextManager

from .benchmark import Benchmark
from .errors import InvalidSettingError
from .optimizer import Optimizer, Trial
from .runner import ProgressFn, Resume, RunOutput

#: wraps plugin code (benchmark construction, the run); the CLI turns plugin exceptions into one line
Guard = Callable[[str], ContextManager[Any]]


def resolve_benchmark(benchmark: str | type[Benchmark] | Benchmark,
                      settings: Mapping[str, Any] | None = None) -> Benchmark:
    """A benchmark instance from a registered name, a Benchmark subclass or an instance."""
    if isinstance(benchmark, str):
        from . import registry

        return registry.make_benchmark(benchmark, dict(settings or {}))
    if isinstance(benchmark, type) and issubclass(benchmark, Benchmark):
        return benchmark(**dict(settings or {}))
    if isinstance(benchmark, Benchmark):
        if settings:
            raise InvalidSettingError(f"benchmark_settings were given with a constructed benchmark "
                                      f"{benchmark.name!r}; pass them to its constructor, or pass its name or class")
        return benchmark
    raise InvalidSettingError(f"benchmark must be a registered name, a Benchmark subclass or instance, "
                              f"got {type(benchmark).__name__}")


def resolve_optimizer(optimizer: str | type[Optimizer]) -> type[Optimizer]:
    """An optimizer class from a registered name or the class itself."""
    if isinstance(optimizer, str):
        from . import registry

        return registry.get_optimizer(optimizer)
    if isinstance(optimizer, type) and issubclass(optimizer, Optimizer):
        return optimizer
    if isinstance(optimizer, Optimizer):
        # the run constructs the plugin itself, with the space and the generator derived from its seed
        raise InvalidSettingError(f"pass the optimizer's class ({type(optimizer).__name__}) or its name, not an "
                                  "instance: the run constructs it with the run's seed; settings go in "
                                  "optimizer_settings")
    raise InvalidSettingError(f"optimizer must be a registered name or an Optimizer subclass, "
                              f"got {type(optimizer).__name__}")


@contextlib.contextmanager
def _partial_on_interrupt(target: Path | None) -> Any:
    """Keep an interrupted run's finished trials in ``<out>.partial.csv``, then let the interrupt go on."""
    try:
        yield
    except KeyboardInterrupt as exc:
        _keep_partial(target, exc)
        raise


def _name(x: Any) -> str:
    return x if isinstance(x, str) else str(getattr(x, "name", "") or getattr(x, "__name__", type(x).__name__))


def execute_run(benchmark: str | type[Benchmark] | Benchmark, optimizer: str | type[Optimizer], *, seed: int,
                budget_evals: int | None = None, budget_seconds: float | None = None, workers: int = 1,
                optimizer_settings: Mapping[str, Any] | None = None,
                benchmark_settings: Mapping[str, Any] | None = None, include_overhead: bool = True,
                extra_provenance: Mapping[str, Any] | None = None, out: str | Path | None = None,
                progress: ProgressFn | None = None,
                on_failure: Callable[[Trial, Exception, Benchmark], None] | None = None,
                guard: Guard | None = None, initial_design: str = "optimizer", backend: str = "simulated",
                scheduler: str | None = None, clock: str = "measured", resume: bool = True,
                overhead_clock: str = "wall", trial_timeout: float | None = None) -> tuple[RunOutput, str]:
    """Check, run and (with ``out``) write one run; returns the run and the text of its result files
    (:class:`~benchsuite.results.ResultText`: the CSV and its provenance file).

    ``guard(what)`` wraps the plugin code (default: nothing); ``on_failure(trial, exc, benchmark)``
    sees each evaluation that raised (the run records it as a failed trial and goes on);
    ``initial_design``, ``backend`` (``simulated``, ``local``, ``dask``), ``scheduler`` (a dask
    scheduler's address), ``clock`` (``measured``, ``nominal``), ``overhead_clock`` (``wall``, ``cpu``) and
    ``trial_timeout`` (seconds a trial may run on a real backend) are :func:`benchsuite.runner.run`'s; the
    backend is checked with the budget, before the benchmark is built.

    The output lock is released on every way out: an error, Ctrl-C, and SIGTERM or SIGHUP (a scheduler
    cancelling the job, a closed terminal), which stop the run as Ctrl-C does while the lock is held.

    Interrupted and resumed: Ctrl-C or SIGTERM keeps the finished trials in ``<out>.partial.csv``
    (:func:`partial_path`). With ``resume`` (the default), a simulated-backend run whose ``<out>.partial.csv``
    is there continues from it (:class:`benchsuite.runner.Resume`): its trials are told to the optimizer,
    not evaluated again, as long as the optimizer asks for what they record, so an interrupted
    live run loses only the trial in progress; one line on stderr says how many were reused, or why none.
    """
    from .locks import OutputLock
    from .results import check_writable, format_result, provenance_path, write_result_text
    from .runner import check_budget, run

    guard = guard or (lambda what: contextlib.nullcontext())
    target = check_writable(out) if out is not None else None
    with _stop_signals_interrupt() if target is not None else contextlib.nullcontext(), \
            OutputLock(target) if target is not None else contextlib.nullcontext():
        check_budget(budget_evals, budget_seconds)
        if backend != "simulated" or scheduler is not None or trial_timeout is not None:
            from .backends import check_backend

            check_backend(backend, workers, scheduler, trial_timeout)
        opt_cls = resolve_optimizer(optimizer)
        with guard(f"benchmark {_name(benchmark)!r}"):
            bench = resolve_benchmark(benchmark, benchmark_settings)
        failure_hook = None if on_failure is None else (lambda trial, exc: on_failure(trial, exc, bench))
        earlier = read_partial(target) if resume and target is not None and backend == "simulated" else None
        notice = budget_notice(opt_cls, optimizer_settings, bench, budget_evals, workers)
        if notice:
            _note(notice)
        with guard(f"optimizer {_name(optimizer)!r} on benchmark {_name(benchmark)!r}"), \
                _partial_on_interrupt(target):
            try:
                output = run(bench, opt_cls, seed=seed, budget_evals=budget_evals, budget_seconds=budget_seconds,
                             workers=workers, optimizer_settings=dict(optimizer_settings or {}),
                             include_overhead=include_overhead, progress=progress,
                             extra_provenance=dict(extra_provenance) if extra_provenance else None,
                             on_failure=failure_hook, initial_design=initial_design, backend=backend, clock=clock,
                             scheduler=scheduler, resume=earlier, overhead_clock=overhead_clock,
                             trial_timeout=trial_timeout)
            except KeyboardInterrupt:
                _say_resumed(earlier)
                raise
            # (after an error the error's one line is all that is said)
            _say_resumed(earlier)
        ending = end_notice(output.rows, bench, notice)
        output.notes += [n for n in (notice, ending) if n]
        if ending:
            _note(ending)
        text = format_result(output.rows, output.provenance)
        if target is not None:
            write_result_text(target, text)
            partial = partial_path(target)
            for stale in (partial, provenance_path(partial)):
                try:  # an earlier interrupted attempt's finished trials are superseded by the complete run
                    stale.unlink(missing_ok=True)
                except OSError:
                    pass
    return output, text


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def _stop_signals_interrupt() -> Any:
    """While a run holds its output lock: SIGTERM and SIGHUP stop it as Ctrl-C does (the lock is released, the
    finished trials kept), where they would otherwise end the process at once and leave the lock behind. A
    signal set to be ignored (``nohup``) stays ignored; outside the main thread nothing can be installed."""
    import signal
    import threading

    saved: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) is signal.SIG_DFL:
                saved[sig] = signal.signal(sig, _interrupt)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _note(text: str) -> None:
    """One line that the run goes on despite (what its settings cannot do within its budget): on stderr, through
    the command line's progress display when there is one."""
    from . import activity

    activity.note(f"benchsuite: note: {text}")


def budget_notice(opt_cls: type[Optimizer], settings: Mapping[str, Any] | None, bench: Benchmark,
                  budget_evals: int | None, workers: int) -> str:
    """The optimizer's :meth:`~benchsuite.optimizer.Optimizer.budget_notice` for its resolved settings on this
    benchmark ('' when the pairing or its settings are invalid: the run itself then refuses them in one line)."""
    from .errors import BenchsuiteError
    from .settings import resolve_settings

    try:
        opt_cls.check_supports(bench.space, bench.fidelity, workers)
        resolved = resolve_settings(f"optimizer {opt_cls.name!r}", opt_cls.settings_spec, settings)
        opt_cls.check_settings(resolved, bench.fidelity)  # contradictory settings: the run's one line, no note
        return opt_cls.budget_notice(resolved, bench.fidelity, budget_evals, workers)
    except (BenchsuiteError, KeyError, TypeError, ValueError):
        return ""


def end_notice(rows: list[dict[str, Any]], bench: Benchmark, notice: str = "") -> str:
    """One line when a finished run has no incumbent, or none evaluated at full fidelity ('' otherwise);
    ``notice`` is what was said at the start (the line then points back to it)."""
    if not rows:
        return ""
    ok = [r for r in rows if r["status"] == "ok"]
    fid = bench.fidelity
    at_full = [r for r in ok if fid is None or fid.is_full(r["fidelity"])]
    back = "; see the note at the start" if notice else ""
    if not ok:
        return f"all {len(rows)} trials failed, so the run has no incumbent (each trial's error is in its info)"
    if at_full:
        return ""
    if rows[-1]["incumbent"] is None:
        return (f"the run ended with no incumbent: none of its {len(ok)} successful trials ran at full "
                f"fidelity{back}")
    return (f"the run's incumbent was seen at lower fidelities only: none of its {len(ok)} successful trials "
            f"ran at full fidelity{back}")


def read_partial(out: Path) -> Resume | None:
    """The finished trials an interrupted attempt at ``out`` kept (``<out>.partial.csv``), or None.

    A partial file that cannot be read (truncated, malformed) is not used: one line says so and the
    run starts over (the file is replaced when this run completes or is interrupted in turn)."""
    import sys

    from .errors import DataError
    from .results import load_result_cells

    path = partial_path(out)
    try:
        if not path.is_file():
            return None
    except OSError:  # a path the file system cannot even look up holds no partial file
        return None
    try:
        # the one reader's checks (truncation, columns, n_trials, the provenance file), and the cells as
        # written, so that floats and JSON are reused exactly
        df, rows = load_result_cells(path)
        prov = df.attrs["provenance"]
    except (DataError, OSError, UnicodeDecodeError) as exc:
        why = str(exc).removeprefix(f"{path}: ")  # the reader's message names the file; the line names it once
        print(f"benchsuite: not resuming from {path}: {why}; starting the run over", file=sys.stderr)
        return None
    return Resume(provenance=prov, rows=rows, source=path.name)


def _say_resumed(earlier: Resume | None) -> None:
    """One line on stderr: how many recorded trials a resumed run reused, or why it reused none."""
    import sys

    if earlier is None:
        return
    rep, n = earlier.report, len(earlier.rows)
    if rep.get("refused"):
        print(f"benchsuite: not resuming from {earlier.source}: {rep['refused']}; starting the run over",
              file=sys.stderr)
        return
    line = f"benchsuite: resumed from {earlier.source}: {rep.get('reused', 0)} of its {n} finished trial(s) reused"
    if rep.get("diverged_at") is not None:
        line += (f"; from trial {rep['diverged_at']} the optimizer asked for other configurations than recorded, "
                 "so the rest was evaluated afresh")
    print(line, file=sys.stderr)


def partial_path(out: Path) -> Path:
    """Where an interrupted run keeps its finished trials: ``<out>.partial.csv``, never ``out`` itself (a
    workflow would take a file at ``out`` for a finished run)."""
    from .locks import sidecar_path
    from .results import PARTIAL_SUFFIX

    return sidecar_path(out, PARTIAL_SUFFIX)


def _keep_partial(target: Path | None, exc: BaseException) -> None:
    """Write an interrupted run's finished trials next to ``target`` (atomically), and say so."""
    import sys

    from .results import format_result, write_result_text
    from .runner import RunInterrupted

    if target is None or not isinstance(exc, RunInterrupted) or not exc.output.rows:
        return
    path = partial_path(target)
    try:
        write_result_text(path, format_result(exc.output.rows, exc.output.provenance))
    except OSError as err:
        print(f"benchsuite: could not keep the finished trials in {path} ({err})", file=sys.stderr)
        return
    simulated = "backend" not in exc.output.provenance
    again = ("rerun the same command to resume from them" if simulated else
             "a rerun starts the run over (real-backend runs are not resumed)")
    print(f"benchsuite: {len(exc.output.rows)} finished trial(s) kept in {path} (a valid result file, not the "
          f"run's: {target} is written only by a complete run; {again})", file=sys.stderr)
