"""The run loop: N asynchronous workers on an event queue with a simulated clock.

Time model (Syne Tune's simulator backend is the model): the optimizer is one process, so
``ask`` and ``tell`` calls are serialised on it. A free worker asks at
``max(worker free, optimizer free)``; the trial starts when ``ask`` returns (its measured
overhead added to the clock unless ``include_overhead=False``) and ends ``cost_s`` later,
the cost being tabulated, surrogate-predicted or measured by the benchmark. The earliest
ending trial is told next. Evaluations run eagerly in the order trials start; only their
*simulated* times overlap.

Budgets: ``budget_evals`` caps the number of trials started; ``budget_seconds`` stops
starting trials at that simulated time (trials already running finish and are recorded;
analysis cuts curves at the budget). Either or both may be given.

Backends (issue 28, :mod:`benchsuite.backends`): this loop is the ``simulated`` backend, the default.
With ``backend="local"`` or ``"dask"`` the same asks and tells drive evaluations in worker processes
(:func:`_run_real`): trials really overlap, and the result file's times are wall-clock seconds since
the run started, in the same columns, so analysis and figures apply unchanged.
"""
from __future__ import annotations

import heapq
import math
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .benchmark import Benchmark, Result
from .errors import BudgetError, InvalidConfigError, InvalidSettingError, PluginError, UnsupportedError, shorten
from .optimizer import Optimizer, Suggestion, Trial
from .provenance import run_provenance
from .seeding import evaluation_seed, optimizer_rng

ProgressFn = Callable[[int, float], None]

#: seconds the clock is charged for a trial whose reported cost is not a finite number >= 0 when no
#: trial of the run has reported a valid cost yet; afterwards, the mean valid cost so far (issue 26:
#: a NaN cost used to leave the clock standing, so a budget in seconds never ran out)
INVALID_COST_FALLBACK_S = 1.0


def checked_cost(result: Result, mean_cost: float | None) -> Result:
    """``result`` if its cost is a finite number >= 0; else a failed trial saying so, charged ``mean_cost``
    seconds (or :data:`INVALID_COST_FALLBACK_S`), the reported cost kept in its info."""
    try:
        cost = float(result.cost_s)
    except (TypeError, ValueError, OverflowError):
        cost = math.nan
    if math.isfinite(cost) and cost >= 0:
        return result
    charged = INVALID_COST_FALLBACK_S if mean_cost is None else float(mean_cost)
    shown = repr(result.cost_s)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    info = {**dict(result.info or {}), "reported_cost": shown,
            "error": f"the benchmark reported the cost {shown}, not a finite number of seconds >= 0; the "
                     f"clock was charged {charged:g} s (the run's mean valid cost so far, else "
                     f"{INVALID_COST_FALLBACK_S:g} s)"}
    return Result(loss=math.nan, cost_s=charged, info=info, failed=True)


@dataclass
class RunOutput:
    """Rows (one dict per finished trial, in tell order) and the run's provenance."""

    rows: list[dict[str, Any]]
    provenance: dict[str, Any]
    optimizer: Optimizer | None = field(default=None, repr=False)


def check_budget(budget_evals: int | None, budget_seconds: float | None) -> None:
    """Raise :class:`BudgetError` unless at least one positive budget is given."""
    if budget_evals is None and budget_seconds is None:
        raise BudgetError("give a budget: --budget-evals N and/or --budget-seconds T")
    if budget_evals is not None and (int(budget_evals) != budget_evals or budget_evals <= 0):
        raise BudgetError(f"budget in evaluations must be a positive integer, got {budget_evals}")
    if budget_seconds is not None and not (budget_seconds > 0 and math.isfinite(budget_seconds)):
        raise BudgetError(f"budget in seconds must be positive, got {budget_seconds}")


INITIAL_DESIGNS = ("optimizer", "benchmark")


def benchmark_design(benchmark: Benchmark, optimizer_cls: type[Optimizer], initial_design: str) -> list[Any]:
    """The configurations a run starts from: none (``"optimizer"``) or the benchmark's, checked."""
    if initial_design not in INITIAL_DESIGNS:
        raise InvalidSettingError(f"initial_design must be one of {', '.join(INITIAL_DESIGNS)}, "
                                  f"got {initial_design!r}")
    if initial_design == "optimizer":
        return []
    if not optimizer_cls.supports.initial_design:
        raise UnsupportedError(f"optimizer {optimizer_cls.name!r} cannot start from the benchmark's initial design; "
                               "drop initial_design: benchmark for it (it draws its own initial points)")
    design = benchmark.initial_design()
    if not design:
        raise InvalidSettingError(f"benchmark {benchmark.name!r} has no initial design of its own with these "
                                  "settings (COMBO's binary problems have one with instance_mode=combo_authors); "
                                  "drop initial_design: benchmark")
    try:
        return [benchmark.check(config, None)[0] for config in design]
    except InvalidConfigError as exc:
        raise PluginError(f"benchmark {benchmark.name!r}: its initial design has an invalid configuration: "
                          f"{exc}") from None


CLOCKS = ("measured", "nominal")


def nominal_clock(benchmark: Benchmark, clock: str, backend: str) -> Callable[[Any, Any], float] | None:
    """The cost function the simulated clock runs on: ``None`` for the measured costs, else a checked
    :meth:`Benchmark.nominal_cost`. Refused where it cannot apply (no model; a real backend's clock is real)."""
    if clock not in CLOCKS:
        raise InvalidSettingError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
    if clock == "measured":
        return None
    if backend != "simulated":
        raise InvalidSettingError(f"clock=nominal is for the simulated backend; the {backend} backend's clock is "
                                  "real time (drop --clock nominal or use --backend simulated)")
    if type(benchmark).nominal_cost is Benchmark.nominal_cost:
        raise InvalidSettingError(f"benchmark {benchmark.name!r} has no nominal cost model (clock=nominal is for live "
                                  "benchmarks; its reported costs are used as they are): drop --clock nominal")

    def cost(config: Any, fidelity: Any) -> float:
        try:
            value = benchmark.nominal_cost(config, fidelity)
        except PluginError:
            raise
        except Exception as exc:  # noqa: BLE001 - the cost model is the benchmark's; say which and on what
            raise PluginError(f"benchmark {benchmark.name!r}: nominal_cost failed on {shorten(repr(config), 160)} "
                              f"at fidelity {fidelity!r}: {type(exc).__name__}: {shorten(exc, 200)}") from None
        if value is None or not (math.isfinite(value) and value >= 0):
            raise PluginError(f"benchmark {benchmark.name!r}: nominal_cost returned {value!r}; it must be a finite "
                              "number >= 0")
        return float(value)

    return cost


RowFn = Callable[[Trial, Result, Any, float, float, float, float, float], dict[str, Any]]


@dataclass
class Resume:
    """The finished trials of an interrupted attempt at the same run (``<out>.partial.csv``), to reuse.

    ``rows`` are the file's rows as text cells (``csv.DictReader``), ``provenance`` its provenance record.
    :func:`run` (simulated backend) reuses a recorded trial only where the run is the same
    (:data:`RESUME_KEYS` of the provenance agree) and the optimizer, re-driven by the recorded
    results in the recorded order, asks for the very configuration and fidelity the row records;
    from the first trial where it asks for something else, everything is evaluated afresh.
    ``report`` says what happened: ``reused`` (trials), ``refused`` (why nothing was reused) or
    ``diverged_at`` (the first trial asked afresh although recorded)."""

    provenance: Mapping[str, Any]
    rows: list[dict[str, str]]
    source: str
    report: dict[str, Any] = field(default_factory=dict)


#: what must agree between an interrupted attempt and the run that resumes it (provenance keys)
RESUME_KEYS = ("benchmark", "benchmark_settings", "optimizer", "optimizer_settings", "seed", "workers",
               "budget_evals", "budget_seconds", "include_overhead", "initial_design", "clock", "overhead_clock")

#: how the optimizer's overhead (its ask and tell) is timed: ``wall`` (``time.perf_counter``, the default) or
#: ``cpu`` (``time.process_time``: this process's CPU seconds, every thread's; one thread's on a machine with
#: nothing else running is its wall time, and it does not grow when other jobs share the cores)
OVERHEAD_CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _resume_refusal(resume: Resume, now: Mapping[str, Any]) -> str | None:
    """Why ``resume`` cannot continue the run described by ``now`` (its would-be provenance), or None."""
    import json

    from .results import to_json

    if "backend" in resume.provenance:  # only the real backends record one
        return "it ran on a real backend (only the simulated backend's runs are resumed)"
    for key in RESUME_KEYS:
        if json.loads(to_json(resume.provenance.get(key))) != json.loads(to_json(now.get(key))):
            return f"its {key} differs ({shorten(repr(resume.provenance.get(key)), 60)} there, " \
                   f"{shorten(repr(now.get(key)), 60)} now)"
    return None


def _recorded_result(row: Mapping[str, str]) -> tuple[Result, dict[str, float]]:
    """A recorded row's result and its clock values (ask, start, end, told, overhead)."""
    import json

    info = json.loads(row["info"]) if row.get("info") else {}
    failed = row["status"] == "failed"
    loss = math.nan if failed or row["loss"] in ("", "nan") else float(row["loss"])
    times = {k: float(row[k]) for k in ("ask_time", "start_time", "end_time", "told_time", "overhead_s")}
    return Result(loss=loss, cost_s=float(row["cost_s"]), info=info, failed=failed), times


def _resumable(resume: Resume | None, benchmark: Benchmark, opt: Optimizer, extra: Mapping[str, Any], *,
               seed: int, workers: int, budget_evals: int | None, budget_seconds: float | None,
               include_overhead: bool) -> dict[int, dict[str, str]] | None:
    """The recorded rows by trial id where ``resume`` continues this very run (else None, the reason in its
    report); the recorded incumbents' test losses go into the benchmark's test-loss cache."""
    if resume is None or not resume.rows:
        return None
    now = {"benchmark": benchmark.name, "benchmark_settings": benchmark.settings, "optimizer": opt.name,
           "optimizer_settings": opt.settings, "seed": int(seed), "workers": int(workers),
           "budget_evals": budget_evals, "budget_seconds": budget_seconds,
           "include_overhead": bool(include_overhead), **extra}
    why = _resume_refusal(resume, now)
    if why is not None:
        resume.report["refused"] = why
        return None
    space = benchmark.space
    for row in resume.rows:
        text, value = row.get("incumbent") or "", row.get("incumbent_test_loss") or ""
        if text and value not in ("", "nan"):
            key = space.key(space.validate(space.from_json(text)))
            benchmark.memo_test_loss(key, lambda v=float(value): v)
    return {int(row["trial"]): row for row in resume.rows}


def _same_fidelity(a: Any, recorded: str) -> bool:
    if recorded in ("", "nan", "None"):
        return a is None
    return a is not None and math.isclose(float(a), float(recorded), rel_tol=1e-12, abs_tol=1e-12)


def _row_maker(benchmark: Benchmark) -> RowFn:
    """``record(trial, result, incumbent, ask, start, end, told, overhead)``: the result-file row of a told trial
    (every loop's: the incumbent's losses kept per configuration, its JSON text and test loss memoised)."""
    space = benchmark.space
    inc_text: dict[Any, str] = {}  # incumbent key -> its JSON text (the test loss: benchmark.memo_test_loss)
    best_loss: dict[Any, tuple[int, float]] = {}  # key -> (is full fidelity, best loss)
    fid_axis = benchmark.fidelity
    last_incumbent: list[Any] = [None, None]  # (object recommend() returned, its key)

    def record(trial: Trial, result: Result, incumbent: Any, t_ask: float, start: float, end: float, told: float,
               overhead: float) -> dict[str, Any]:
        if not result.failed:
            key = space.key(trial.config)
            rank = (int(fid_axis is None or fid_axis.is_full(trial.fidelity)), -result.loss)
            old = best_loss.get(key)
            if old is None or rank > (old[0], -old[1]):
                best_loss[key] = (rank[0], result.loss)
        inc_json = inc_loss = inc_test = None
        if incumbent is not None:
            if incumbent is not last_incumbent[0]:  # most tells leave the incumbent unchanged
                last_incumbent[:] = [incumbent, space.key(space.validate(incumbent))]
            ikey = last_incumbent[1]
            inc_loss = best_loss.get(ikey, (0, math.nan))[1]
            if ikey not in inc_text:
                inc_text[ikey] = space.to_json(incumbent)
            inc_json = inc_text[ikey]
            inc_test = benchmark.memo_test_loss(ikey, lambda: benchmark.test_loss(incumbent))
        info = {**trial.info, **result.info}  # trial.info is the suggestion's info
        return {
            "trial": trial.id, "worker": trial.worker, "status": "failed" if result.failed else "ok",
            "config": space.to_json(trial.config), "fidelity": trial.fidelity,
            "ask_time": t_ask, "start_time": start, "end_time": end, "told_time": told,
            "loss": float(result.loss), "cost_s": float(result.cost_s), "overhead_s": overhead,
            "incumbent": inc_json, "incumbent_loss": inc_loss, "incumbent_test_loss": inc_test,
            "info": info,
        }

    return record


def _asked(opt: Optimizer, benchmark: Benchmark, pending: Mapping[int, Trial], trial_id: int,
           timer: Callable[[], float] = time.perf_counter) -> tuple[Suggestion, Any, Any, float]:
    """``opt.ask(pending)`` checked: the one place every plugin's ask is called, for every backend (the
    suggestion, its canonical config and fidelity, and the seconds ``ask`` itself took, on ``timer``)."""
    t0 = timer()
    suggestion = opt.ask(tuple(pending.values()))
    ask_s = timer() - t0
    if not isinstance(suggestion, Suggestion):
        raise PluginError(f"optimizer {opt.name or type(opt).__name__!r}: ask must return a Suggestion "
                          f"(benchsuite.optimizer.Suggestion(config, fidelity)), it returned "
                          f"{shorten(repr(suggestion), 80)} of type {type(suggestion).__name__}")
    try:
        config, fid = benchmark.check(suggestion.config, suggestion.fidelity)
    except InvalidConfigError as exc:
        # a malformed suggestion is the plugin's bug: the run stops here, naming the optimizer, the trial and the
        # configuration (a well-formed one the space calls infeasible is evaluated: the benchmark scores it)
        raise PluginError(f"optimizer {opt.name!r} asked for a configuration the space does not hold at trial "
                          f"{trial_id} ({exc}): "
                          f"{shorten(repr(suggestion.config), 160)}") from None
    return suggestion, config, fid, ask_s


def run(
    benchmark: Benchmark,
    optimizer_cls: type[Optimizer],
    *,
    seed: int,
    budget_evals: int | None = None,
    budget_seconds: float | None = None,
    workers: int = 1,
    optimizer_settings: Mapping[str, Any] | None = None,
    include_overhead: bool = True,
    progress: ProgressFn | None = None,
    extra_provenance: Mapping[str, Any] | None = None,
    on_failure: Callable[[Trial, Exception], None] | None = None,
    initial_design: str = "optimizer",
    backend: str = "simulated",
    scheduler: str | None = None,
    clock: str = "measured",
    resume: Resume | None = None,
    overhead_clock: str = "wall",
) -> RunOutput:
    """Run one optimizer on one benchmark and return its rows and provenance.

    An exception inside ``benchmark.evaluate`` is a failed trial (its message in the row's
    ``info``); ``on_failure(trial, exc)`` then sees the exception with its traceback (the CLI
    keeps it in the run's failure log, or opens the debugger there with ``--pdb``).

    Configurations an optimizer proposes: one the space does not hold (``space.validate`` refuses
    it) is the plugin's bug and stops the run with a :class:`PluginError` naming the optimizer, the
    trial and the shortened configuration (one line from the CLI, exit status 2); a well-formed one
    the space calls infeasible (``space.is_valid`` false: a COMBO cell without an input-output path)
    is a legitimate proposal, evaluated like any other (the benchmark scores it or fails the trial),
    and a benchmark's cost model must price it too (``benchsuite.testing.check_benchmark`` checks both).

    ``initial_design="benchmark"`` hands the benchmark's initial design
    (:meth:`Benchmark.initial_design`, e.g. the COMBO authors' 20 points of a run) to the optimizer,
    which evaluates it first in place of its own random initial points; the default
    ``"optimizer"`` lets the optimizer draw its own.

    ``clock="nominal"`` puts the benchmark's deterministic cost model (:meth:`Benchmark.nominal_cost`) on the
    simulated clock instead of the measured ``cost_s`` (which the rows still record), so that a seeded run with
    several workers completes its trials in the same order, and makes the same decisions, on any machine
    (issue 26 item 6); the rows' times are then nominal seconds, the optimizer's overhead stays off the clock
    (recorded in ``overhead_s``, as with ``include_overhead=False``) and each row's ``info`` has ``nominal_cost_s``.

    ``overhead_clock`` times the optimizer's ask and tell (``overhead_s``, and the clock when the overhead is
    on it): ``"wall"`` (default) in wall seconds, ``"cpu"`` in this process's CPU seconds
    (:data:`OVERHEAD_CLOCKS`), which a machine shared with other jobs does not stretch: a protocol whose
    result is a time (Fabolas' Figure 2) then reads the same on a loaded machine as on an idle one, as long
    as the optimizer runs on one thread (``OMP_NUM_THREADS=1``; the CPU seconds of several threads add up).
    Simulated backend only.

    ``backend`` is where evaluations run (:mod:`benchsuite.backends`): ``"simulated"`` (this loop, the
    default), ``"local"`` (``workers`` processes here) or ``"dask"`` (a dask LocalCluster, or the scheduler
    at ``scheduler``); the real backends' times are wall-clock seconds since the run started.

    ``resume`` (simulated backend) continues an interrupted attempt: its recorded trials are told
    to the optimizer instead of being evaluated again, with their recorded times, as long as the
    optimizer asks for what they record (:class:`Resume`); their test losses are reused too. Ctrl-C
    or SIGTERM (a scheduler cancelling the job) stops the simulated loop between trials and raises
    :class:`RunInterrupted` with the finished trials, as the real backends do."""
    check_budget(budget_evals, budget_seconds)
    if overhead_clock not in OVERHEAD_CLOCKS:
        raise BudgetError(f"overhead_clock must be one of {', '.join(OVERHEAD_CLOCKS)}, got {overhead_clock!r}")
    if overhead_clock != "wall" and backend != "simulated":
        raise BudgetError(f"overhead_clock {overhead_clock!r} is for the simulated backend; the {backend} "
                          "backend's times are wall-clock seconds")
    timer = OVERHEAD_CLOCKS[overhead_clock]
    if int(workers) != workers or workers < 1:
        raise BudgetError(f"workers must be a positive integer, got {workers}")
    if backend != "simulated" or scheduler is not None:
        from .backends import check_backend

        check_backend(backend, workers, scheduler)
    if int(seed) != seed or seed < 0:
        raise BudgetError(f"seed must be a non-negative integer, got {seed}")
    optimizer_cls.check_supports(benchmark.space, benchmark.fidelity, workers)
    benchmark.prepare()  # a missing data file is an error now, not a failed trial each time
    nominal = nominal_clock(benchmark, clock, backend)
    if nominal is not None:  # measured ask/tell seconds on the clock would bring the machine's timing back
        include_overhead = False
    design = benchmark_design(benchmark, optimizer_cls, initial_design)
    opt = optimizer_cls(benchmark.space, benchmark.fidelity, optimizer_rng(seed), initial_design=design,
                        **dict(optimizer_settings or {}))
    opt.timer = timer  # a plugin that decides on its own overhead measures it on the run's clock
    if backend != "simulated":
        return _run_real(benchmark, opt, backend=backend, scheduler=scheduler, seed=seed, budget_evals=budget_evals,
                         budget_seconds=budget_seconds, workers=workers, include_overhead=include_overhead,
                         progress=progress, extra_provenance=extra_provenance, on_failure=on_failure,
                         initial_design=initial_design)

    heap: list[tuple[float, int, Trial, Result, float, float, float, dict[str, float] | None]] = []
    worker_free = [0.0] * workers
    free_workers = list(range(workers))
    opt_free = 0.0
    pending: dict[int, Trial] = {}
    n_started = 0
    rows: list[dict[str, Any]] = []
    record = _row_maker(benchmark)
    valid_costs = [0.0, 0]  # sum and count of the valid costs reported so far
    extra = dict(extra_provenance or {})
    if initial_design != "optimizer":  # recorded only when used, so other runs' files are unchanged
        extra["initial_design"] = initial_design
    if clock != "measured":
        extra["clock"] = clock
    if overhead_clock != "wall":  # recorded only when used, so other runs' files are unchanged
        extra["overhead_clock"] = overhead_clock
    recorded = _resumable(resume, benchmark, opt, extra, seed=seed, workers=workers, budget_evals=budget_evals,
                          budget_seconds=budget_seconds, include_overhead=include_overhead)

    def can_start(t: float) -> bool:
        if budget_evals is not None and n_started >= budget_evals:
            return False
        return budget_seconds is None or t < budget_seconds

    previous = _stop_on_sigterm()
    interrupted: KeyboardInterrupt | None = None
    try:
        while True:
            # every free worker asks, in worker order, while the budget allows
            while free_workers:
                w = free_workers[0]
                t_ask = max(worker_free[w], opt_free)
                if not can_start(t_ask):
                    break
                free_workers.pop(0)
                suggestion, config, fid, ask_s = _asked(opt, benchmark, pending, n_started, timer)
                trial = Trial.from_suggestion(suggestion, n_started, config=config, fidelity=fid, worker=w)
                n_started += 1
                times = None
                rec = recorded.get(trial.id) if recorded else None
                if rec is not None:
                    if rec["config"] == benchmark.space.to_json(config) and _same_fidelity(fid, rec["fidelity"]):
                        result, times = _recorded_result(rec)
                    else:  # the optimizer asks for something else: from here on the run is a new one
                        resume.report["diverged_at"] = trial.id
                        recorded = None
                start = t_ask + (ask_s if include_overhead else 0.0)
                if times is None:
                    t1 = time.perf_counter()
                    try:
                        result = benchmark.evaluate(config, fid, seed=evaluation_seed(seed, trial.id))
                        if not math.isfinite(result.loss) and not result.failed:
                            result = Result.failure(result.cost_s, f"non-finite loss {result.loss!r}")
                    except Exception as exc:  # noqa: BLE001 - a crashed evaluation is a failed trial
                        result = Result.failure(time.perf_counter() - t1, f"{type(exc).__name__}: {exc}")
                        if on_failure is not None:
                            on_failure(trial, exc)
                else:  # a reused trial keeps the times it had
                    resume.report["reused"] = resume.report.get("reused", 0) + 1
                    t_ask = times["ask_time"]
                checked = checked_cost(result, valid_costs[0] / valid_costs[1] if valid_costs[1] else None)
                if checked is result:  # a valid cost (returned as it was)
                    valid_costs[0] += float(result.cost_s)
                    valid_costs[1] += 1
                result = checked
                pending[trial.id] = trial
                on_clock = max(0.0, float(result.cost_s)) if nominal is None else nominal(config, fid)
                opt_free = start if times is None else times["start_time"]
                end = start + on_clock if times is None else times["end_time"]
                heapq.heappush(heap, (end, trial.id, trial, result, t_ask, ask_s, on_clock, times))
            if not heap:
                break
            end, _, trial, result, t_ask, ask_s, on_clock, times = heapq.heappop(heap)
            del pending[trial.id]
            t_tell = max(end, opt_free)
            t0 = timer()
            opt.tell(trial, result)
            incumbent = opt.recommend()
            tell_s = timer() - t0
            told = t_tell + (tell_s if include_overhead else 0.0)
            overhead = ask_s + tell_s
            if times is not None:
                told, overhead = times["told_time"], times["overhead_s"]
            opt_free = told
            worker_free[trial.worker] = end
            free_workers.append(trial.worker)
            free_workers.sort()

            began = end - on_clock if times is None else times["start_time"]
            row = record(trial, result, incumbent, t_ask, began, end, told, overhead)
            if nominal is not None:
                row["info"] = {**row["info"], "nominal_cost_s": on_clock}
            rows.append(row)
            if progress is not None:
                progress(len(rows), told)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM between trials: the finished ones are kept
        interrupted = exc
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if resume is not None and resume.report.get("reused"):
        extra["resumed"] = {"from": resume.source, "trials_reused": resume.report["reused"]}
    if interrupted is not None:
        extra["interrupted"] = f"interrupted ({str(interrupted) or 'Ctrl-C'}) after {len(rows)} finished trial(s)"
    provenance = run_provenance(benchmark, opt, seed=seed, workers=workers, budget_evals=budget_evals,
                                budget_seconds=budget_seconds, include_overhead=include_overhead,
                                n_trials=len(rows), extra=extra or None)
    if interrupted is not None:
        raise RunInterrupted(RunOutput(rows, provenance, opt)) from interrupted
    return RunOutput(rows, provenance, opt)


def _run_real(benchmark: Benchmark, opt: Optimizer, *, backend: str, scheduler: str | None, seed: int,
              budget_evals: int | None, budget_seconds: float | None, workers: int, include_overhead: bool,
              progress: ProgressFn | None, extra_provenance: Mapping[str, Any] | None,
              on_failure: Callable[[Trial, Exception], None] | None, initial_design: str) -> RunOutput:
    """The run loop of the real backends: the same asks and tells, evaluations in worker processes, real time.

    A free worker slot asks at once (in slot order) while the budget allows; each completion is told as it
    arrives, then the slot it freed asks. So after the first ``workers`` asks every ask follows the tell of
    the previous trial on its slot: the order ``benchsuite replay`` re-drives the optimizer in. Times are
    ``time.perf_counter()`` seconds since the workers were ready; ``budget_seconds`` stops starting trials
    at that wall-clock time."""
    from .backends import POLL_S, BenchmarkSpec, make_backend, merge_test_losses

    spec = BenchmarkSpec.of(benchmark)
    pool = make_backend(backend, workers, scheduler)
    rows: list[dict[str, Any]] = []
    record = _row_maker(benchmark)
    valid_costs = [0.0, 0]
    pending: dict[int, Trial] = {}
    running: dict[int, tuple[Trial, float, float, float]] = {}  # trial id -> (trial, ask, start, ask seconds)
    free = list(range(workers))
    n_started = 0
    previous = _stop_on_sigterm()
    interrupted: KeyboardInterrupt | None = None
    described: dict[str, Any] = {}
    try:
        pool.start(spec)
        t0 = time.perf_counter()

        def can_start() -> bool:
            if budget_evals is not None and n_started >= budget_evals:
                return False
            return budget_seconds is None or time.perf_counter() - t0 < budget_seconds

        def ask_free() -> None:
            nonlocal n_started
            while free and can_start():
                w = free.pop(0)
                t_ask = time.perf_counter() - t0
                suggestion, config, fid, ask_s = _asked(opt, benchmark, pending, n_started)
                trial = Trial.from_suggestion(suggestion, n_started, config=config, fidelity=fid, worker=w)
                n_started += 1
                pending[trial.id] = trial
                start = time.perf_counter() - t0
                pool.submit(w, trial.id, config, fid, evaluation_seed(seed, trial.id))
                running[trial.id] = (trial, t_ask, start, ask_s)

        ask_free()
        while running:
            for done in pool.wait(POLL_S):
                trial, t_ask, start, ask_s = running.pop(done.trial_id)
                del pending[trial.id]
                end = done.received - t0
                result = done.result
                merge_test_losses(benchmark, done.test_losses)
                if not result.failed and not math.isfinite(result.loss):
                    result = Result.failure(result.cost_s, f"non-finite loss {result.loss!r}")
                if done.error is not None and on_failure is not None:
                    on_failure(trial, done.error)
                checked = checked_cost(result, valid_costs[0] / valid_costs[1] if valid_costs[1] else None)
                if checked is result:
                    valid_costs[0] += float(result.cost_s)
                    valid_costs[1] += 1
                result = checked
                t1 = time.perf_counter()
                opt.tell(trial, result)
                incumbent = opt.recommend()
                tell_s = time.perf_counter() - t1
                told = time.perf_counter() - t0
                rows.append(record(trial, result, incumbent, t_ask, start, end, told, ask_s + tell_s))
                if progress is not None:
                    progress(len(rows), told)
                if pool.usable(trial.worker):
                    free.append(trial.worker)
                    free.sort()
                ask_free()
        described = pool.describe()
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the finished trials are kept (RunInterrupted)
        interrupted = exc
        try:
            described = pool.describe()
        except Exception:  # noqa: BLE001 - a pool stopped half-way may not describe itself
            described = {"backend": backend, "workers": workers}
    finally:
        pool.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    extra = dict(extra_provenance or {})
    if interrupted is not None:
        extra["interrupted"] = f"interrupted ({str(interrupted) or 'Ctrl-C'}) after {len(rows)} finished trial(s)"
    if initial_design != "optimizer":
        extra["initial_design"] = initial_design
    if not include_overhead:  # wall-clock time holds the optimizer's overhead whatever was asked
        described["include_overhead_requested"] = False
    extra["backend"] = described
    provenance = run_provenance(benchmark, opt, seed=seed, workers=workers, budget_evals=budget_evals,
                                budget_seconds=budget_seconds, include_overhead=True,
                                n_trials=len(rows), extra=extra)
    if interrupted is not None:
        raise RunInterrupted(RunOutput(rows, provenance, opt)) from interrupted
    return RunOutput(rows, provenance, opt)


class RunInterrupted(KeyboardInterrupt):
    """A real-backend run stopped by Ctrl-C or SIGTERM; ``output`` holds its finished trials (provenance
    marked ``interrupted``), which :func:`benchsuite.execute.execute_run` keeps in ``<out>.partial.csv``."""

    def __init__(self, output: RunOutput):
        super().__init__(f"interrupted after {len(output.rows)} finished trial(s)")
        self.output = output


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _stop_on_sigterm() -> Any:
    """While a real backend runs, SIGTERM (a scheduler cancelling the job) stops the workers as Ctrl-C does;
    returns the handler to restore (None when not in the main thread, where no handler can be installed)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _interrupt)
