"""``benchsuite race`` and ``benchsuite stats``: a new optimizer against the committed runs; tests on any runs.

    benchsuite race my_pkg.opt:MyOpt --suite quick                    # CI-sized: tables and synthetic problems
    benchsuite race botorch_qlogei --suite cpu-papers --jobs 8         # every CPU paper protocol
    benchsuite race dngo --protocol combo_maxsat --reps 5 --fail-if-worse-than random_search
    benchsuite stats results/ my_runs/ --out stats                     # Friedman, Holm-Wilcoxon, CD diagram

``race`` plans the race (:func:`benchsuite.analysis.race.plan`), runs only the new optimizer's jobs that are
not finished yet (``--jobs`` at once, each through :func:`benchsuite.execute.execute_run`, the one run path),
reads the committed runs (:mod:`benchsuite.analysis.baselines`) and writes ``<out>/report/index.md`` with its CSV
and figures. A second call runs only what is missing; a result file of the same label made with other settings
refuses the race (nothing is overwritten). A job whose plugin raises is one line (its traceback in
``repNNN.csv.traceback.log`` beside the result) and the race goes on; the exit status is 1 when a job failed or
a ``--fail-if-...`` check failed, 2 for bad input, else 0.

``benchsuite/cli.py`` wires both in with :func:`add_parsers` and :func:`main`.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cli_types import integer, number
from .errors import BenchsuiteError, DataError, InvalidSettingError, one_line


#: the argparse types of race's and stats' options
_positive, _count = integer(1), integer(0)
_probability = number(lambda value: 0 < value < 1, "a number between 0 and 1")
_fraction = number(lambda value: 0 < value <= 1, "a fraction of the budget in (0, 1]")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``race`` and ``stats`` subcommands to the CLI's subparsers."""
    from .analysis.race_suites import SUITES

    r = sub.add_parser(
        "race", help="race a new optimizer on the paper protocols against their committed runs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run only OPTIMIZER's repetitions of the paper protocols (the protocols' seeds rule with its own "
                    "label, budgets, workers, initial design, clock and overhead rule), compare them with every "
                    "committed run of the protocols' methods and the published numbers, and write a report: per "
                    "protocol the paper's table with a column for the new method and its verdict against each "
                    "baseline, anytime curves, and over all protocols Friedman, Holm-corrected Wilcoxon tests and "
                    "a critical-difference diagram. Resumable: a second call runs only what is missing.",
        epilog="Suites: " + "; ".join(f"{s.name}: {s.description}" + (f" ({s.repetitions} repetitions)"
                                                                        if s.repetitions else "")
                                      for s in SUITES.values()) + "\n\nExamples:\n"
               "  benchsuite race my_optimizer --suite quick --fail-if-worse-than random_search\n"
               "  benchsuite race path/to/file.py:MyOpt --protocol combo_maxsat --reps 5 --jobs 2\n"
               "  benchsuite race botorch_qlogei --suite cpu-papers --label qlogei --jobs 8")
    r.add_argument("optimizer", metavar="OPTIMIZER",
                   help="a registered optimizer (built-in or a plugin's entry point), module:Class or file.py:Class")
    r.add_argument("--protocol", action="append", dest="protocols", default=[], metavar="P",
                   help="a protocol name (protocols/<P>.yaml of the suite) or file; repeatable")
    r.add_argument("--suite", choices=sorted(SUITES), help="a named set of protocols")
    r.add_argument("--settings", "--set", action="append", dest="settings", metavar="KEY=VALUE",
                   help="the optimizer's setting (repeatable), as `benchsuite run --set`")
    r.add_argument("--label", default="", help="the new method's label (default: the optimizer's name); it names "
                                               "its result folders and its seeds")
    r.add_argument("--reps", type=_positive, metavar="N",
                   help="repetitions per protocol, 0..N-1, at most the protocol's (default: the suite's, else the "
                        "protocol's)")
    r.add_argument("--jobs", "-j", type=_positive, default=1, metavar="N", help="runs at once (processes; default 1)")
    r.add_argument("--backend", choices=("simulated", "local", "dask"), default="simulated",
                   help="where each run's evaluations happen, as `benchsuite run --backend` (the protocol's workers "
                        "are the run's workers; default: simulated)")
    r.add_argument("--scheduler", metavar="ADDRESS", help="with --backend dask: a running scheduler's address")
    r.add_argument("--out", default="", metavar="DIR",
                   help="the race's folder: results/ (the workflow's layout) and report/ (default: race-<label>)")
    r.add_argument("--baselines", choices=("auto", "runs", "compact"), default="auto",
                   help="where the committed runs are read: auto (default: the runs in a clone, the compact form "
                        "an installed wheel ships), runs, compact")
    r.add_argument("--alpha", type=_probability, default=0.05, help="significance level of the tests (default 0.05)")
    r.add_argument("--fail-if-worse-than", action="append", default=[], metavar="METHOD",
                   help="exit 1 when the new method is significantly worse (at --alpha) than METHOD over all "
                        "protocols at the budget; repeatable")
    r.add_argument("--fail-if-rank-below", type=_positive, metavar="K",
                   help="exit 1 when the new method's mean rank over all protocols at the budget places it below K")
    r.add_argument("--power-draws", type=_count, default=200, metavar="N",
                   help="simulated races for the power statement (default 200; 0: none)")
    r.add_argument("--protocols-dir", metavar="DIR", help="folder of protocol files (default: the suite's)")
    r.add_argument("--reproductions", metavar="DIR",
                   help="folder of committed runs (default: reproductions/ of the clone, or the wheel's)")
    r.add_argument("--quiet", "-q", action="store_true", help="no line per finished run")
    r.set_defaults(command="race")

    s = sub.add_parser(
        "stats", help="Friedman, Holm-corrected Wilcoxon tests and critical-difference diagrams of result files",
        description="The statistics of `analyse` and `race` for any result files: blocks are (benchmark, "
                    "repetition) pairs (the repetition from the run's provenance, else its seed); each run's value "
                    "is its quantity at each fraction of the budget. Prints the tables; --out also writes "
                    "stats.md, stats.csv and the diagrams.")
    s.add_argument("paths", nargs="+", metavar="PATH", help="result files or folders of them (searched recursively)")
    s.add_argument("--quantity", choices=("incumbent_test_loss", "incumbent_loss", "regret"),
                   default="incumbent_test_loss", help="the compared quantity (default incumbent_test_loss)")
    s.add_argument("--x", choices=("evaluations", "time"), default="evaluations",
                   help="the budget's axis (default evaluations)")
    s.add_argument("--budget", type=float, metavar="B",
                   help="the budget on that axis (default: per benchmark, the largest x every run reached)")
    s.add_argument("--fraction", action="append", type=_fraction, dest="fractions", metavar="F",
                   help="compare at F x budget (repeatable; default 0.25 and 1)")
    s.add_argument("--alpha", type=_probability, default=0.05, help="significance level (default 0.05)")
    s.add_argument("--out", metavar="DIR", help="also write stats.md, stats.csv and cd_*.png/pdf here")
    s.set_defaults(command="stats")


def main(args: argparse.Namespace, guard: Any = None, log_next_to: Any = None) -> int:
    """Run ``race`` or ``stats``. ``guard(what, log)`` wraps each run's plugin code and turns what it raises into
    one line (the command line's ``_plugin_errors``, with ``log_next_to(out)`` the traceback's file); it is
    handed in by :mod:`benchsuite.cli`, which this module does not import."""
    if args.command == "stats":
        return _stats(args)
    return _race(args, guard, log_next_to)


# -- race ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    """One run of the new optimizer, as plain data a worker process can take."""

    optimizer: str
    settings: dict[str, Any]
    benchmark: str
    benchmark_settings: dict[str, Any]
    seed: int
    budget_evals: int | None
    budget_seconds: float | None
    workers: int
    include_overhead: bool
    initial_design: str
    backend: str
    scheduler: str | None
    clock: str
    overhead_clock: str
    meta: dict[str, Any] = field(default_factory=dict)
    out: str = ""
    what: str = ""


_CLASSES: dict[str, type] = {}


def _optimizer_class(spec: str) -> type:
    """The optimizer class of ``spec`` (loaded once per process: a file plugin is imported once)."""
    from .cli_check import load_plugin
    from .optimizer import Optimizer

    if spec not in _CLASSES:
        cls = load_plugin(spec)
        if not issubclass(cls, Optimizer):
            raise InvalidSettingError(f"race: {spec!r} is a benchmark, not an optimizer")
        _CLASSES[spec] = cls
    return _CLASSES[spec]


def run_task(task: Task, guard: Any = None, log_next_to: Any = None) -> tuple[bool, str, float]:
    """Run one task: (finished, one line, CPU seconds of this process it took). With ``guard`` (see :func:`main`)
    a plugin that raises is one line naming it, its traceback next to the result file; the result file is
    written only by a complete run."""
    import contextlib

    from .execute import execute_run

    t0 = time.process_time()
    out = Path(task.out)
    log = log_next_to(out) if log_next_to is not None else None
    try:
        cls = _optimizer_class(task.optimizer)
        out.parent.mkdir(parents=True, exist_ok=True)
        wrap = guard(f"optimizer {task.optimizer!r} on benchmark {task.benchmark!r}", log) if guard is not None \
            else contextlib.nullcontext()
        with wrap:
            output, _ = execute_run(task.benchmark, cls, seed=task.seed, budget_evals=task.budget_evals,
                                    budget_seconds=task.budget_seconds, workers=task.workers,
                                    optimizer_settings=task.settings, benchmark_settings=task.benchmark_settings,
                                    include_overhead=task.include_overhead, extra_provenance=task.meta, out=out,
                                    initial_design=task.initial_design, backend=task.backend,
                                    scheduler=task.scheduler, clock=task.clock, overhead_clock=task.overhead_clock)
    except BenchsuiteError as exc:
        return False, one_line(str(exc)), time.process_time() - t0
    except OSError as exc:
        return False, f"{out}: {exc.strerror or exc}", time.process_time() - t0
    try:
        if log is not None:
            log.unlink(missing_ok=True)  # an earlier failed attempt's traceback no longer applies
    except OSError:
        pass
    return True, f"{len(output.rows)} trials", time.process_time() - t0


def tasks_of(plan: Any, jobs: list[tuple[Any, Any]]) -> list[Task]:
    """The tasks of ``(leg, job)`` pairs: the protocol's job with the new optimizer, as the workflow runs a job
    (:meth:`benchsuite.protocol.Protocol.command` gives the same settings, budget, clock and provenance)."""
    out = []
    for leg, job in jobs:
        p = leg.race
        budget = job.benchmark.budget
        out.append(Task(
            optimizer=plan.options.optimizer, settings=dict(plan.settings), benchmark=job.benchmark.name,
            benchmark_settings=job.benchmark.settings_for(job.repetition), seed=job.seed,
            budget_evals=budget.evaluations, budget_seconds=None if budget.seconds is None else float(budget.seconds),
            workers=p.workers, include_overhead=p.include_overhead, initial_design=job.optimizer.initial_design,
            backend=plan.options.backend, scheduler=plan.options.scheduler,
            clock=p.clock_for(job, plan.options.backend), overhead_clock=p.overhead_clock,
            meta={"protocol": p.name, "benchmark_label": job.benchmark.label, "optimizer_label": job.optimizer.label,
                  "repetition": str(job.repetition), "race_optimizer": plan.options.optimizer},
            out=str(plan.out / job.result_path), what=f"{p.name} {job.benchmark.label} rep {job.repetition}"))
    return out


def run_tasks(tasks: list[Task], n_parallel: int, quiet: bool = False, guard: Any = None,
              log_next_to: Any = None) -> tuple[list[str], float]:
    """Run ``tasks`` (``n_parallel`` processes at once, or here when 1; ``guard`` and ``log_next_to`` as for
    :func:`run_task`, module-level objects that a worker process unpickles by name); (one line per failed task,
    the CPU seconds the worker processes took, 0 when the tasks ran in this process)."""
    import functools

    one = functools.partial(run_task, guard=guard, log_next_to=log_next_to)
    failures: list[str] = []
    child_cpu = 0.0

    def report(i: int, task: Task, ok: bool, line: str, cpu: float) -> None:
        if not ok:
            failures.append(f"{task.what}: {line}")
        if not quiet or not ok:
            state = line if ok else f"FAILED: {line}"
            print(f"race: [{i}/{len(tasks)}] {task.what}: {state} ({cpu:.1f} CPU s)", file=sys.stderr, flush=True)

    if n_parallel <= 1 or len(tasks) <= 1:
        for i, task in enumerate(tasks, 1):
            report(i, task, *one(task))
        return failures, 0.0
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawned, not forked: a fork copies a parent's threads' locks in whatever state they are (BLAS, torch)
    with ProcessPoolExecutor(max_workers=min(n_parallel, len(tasks)),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(one, t): t for t in tasks}
        for i, fut in enumerate(as_completed(futures), 1):
            task = futures[fut]
            try:
                ok, line, cpu = fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker that died (killed, out of memory) is one failed task
                ok, line, cpu = False, f"the worker process ended: {one_line(str(exc)) or type(exc).__name__}", 0.0
            child_cpu += cpu
            report(i, task, ok, line, cpu)
    return failures, child_cpu


def _race(args: argparse.Namespace, guard: Any, log_next_to: Any) -> int:
    from .analysis import baselines as B
    from .analysis import race as R
    from .settings import parse_assignments

    t0 = time.process_time()
    options = R.RaceOptions(
        optimizer=args.optimizer, label=args.label, settings=parse_assignments(args.settings),
        protocols=tuple(args.protocols), suite=args.suite, repetitions=args.reps, jobs=args.jobs,
        backend=args.backend, scheduler=args.scheduler, out=args.out, baselines=args.baselines, alpha=args.alpha,
        fail_if_worse_than=tuple(args.fail_if_worse_than), fail_if_rank_below=args.fail_if_rank_below,
        power_draws=args.power_draws, protocols_dir=args.protocols_dir, reproductions_dir=args.reproductions).check()
    plan = R.plan(options, _optimizer_class(options.optimizer))
    # every job's state first: a result of this label made otherwise refuses the race before anything runs
    todo, conflicts = [], []
    for leg in plan.legs:
        for job in leg.jobs():
            finished, why = R.done(plan, leg, job)
            if why:
                conflicts.append(why)
            elif not finished:
                todo.append((leg, job))
    if conflicts:
        raise DataError(f"race: {len(conflicts)} result file(s) of label {plan.label!r} in {plan.out} are not this "
                        f"race's (first: {conflicts[0]}); give another --label or --out, or move them away")
    root = Path(options.reproductions_dir) if options.reproductions_dir else B.default_root()
    base, heads = {}, {}
    for leg in plan.legs:  # the committed runs before any run: a missing record stops the race at once
        base[leg.name], heads[leg.name] = B.committed_curves(leg.protocol, root, options.baselines)
    n_jobs = len(plan.jobs())
    print(f"race: {plan.label} on {sum(len(leg.benchmarks) for leg in plan.legs)} benchmark(s) of {len(plan.legs)} "
          f"protocol(s): {n_jobs} run(s), {n_jobs - len(todo)} finished already, {len(todo)} to run in {plan.out}",
          file=sys.stderr, flush=True)
    failures, child_cpu = run_tasks(tasks_of(plan, todo), options.jobs, args.quiet, guard, log_next_to)
    new = {leg.name: R.new_curves(plan, leg) for leg in plan.legs}
    report = R.compute(plan, base, heads, new, cpu_seconds=math.nan)
    report.failures = failures
    report.cost["race_cpu_seconds"] = time.process_time() - t0 + child_cpu
    files = R.write_report(report, base, new)
    index = next(f for f in files if f.endswith("index.md"))
    for ok, text in report.checks:
        print(f"race: {'pass' if ok else 'FAIL'}: {text}", file=sys.stderr)
    if failures:
        print(f"race: {len(failures)} run(s) failed (listed in the report); rerun the same command to retry them",
              file=sys.stderr)
    print(index)
    return 1 if failures or report.failed else 0


# -- stats -----------------------------------------------------------------------------------
def _stats(args: argparse.Namespace) -> int:
    from .analysis import stats as S
    from .api import statistics

    fractions = tuple(sorted(set(args.fractions))) if args.fractions else S.DEFAULT_FRACTIONS
    comparisons = statistics(args.paths, quantity=args.quantity, x=args.x, budget=args.budget,
                             fractions=fractions, alpha=args.alpha)
    text = "\n".join(f"## At {c.at}\n\n{c.to_markdown()}" for c in comparisons)
    if args.out:
        import pandas as pd

        from .errors import MissingExtraError
        from .results import atomic_write_text

        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(f"--out {out}: cannot create the folder ({exc.strerror})") from None
        figures = []
        try:
            for c in comparisons:
                slug = "budget" if c.at == "the budget" else c.at.split(" ")[0]
                c.figure = S.plot_cd(c, out / f"cd_{slug}")
                figures += c.figure
        except MissingExtraError as exc:
            text += f"\nNo diagrams: {exc}.\n"
        page = "# Statistics\n\n" + "\n".join(
            f"## At {c.at}\n\n{c.to_markdown()}" + (f"\n![critical-difference diagram]({Path(c.figure[0]).name})\n"
                                                   if c.figure else "") for c in comparisons)
        atomic_write_text(out / "stats.md", page)
        atomic_write_text(out / "stats.csv", pd.concat([c.to_frame() for c in comparisons],
                                                       ignore_index=True).to_csv(index=False))
        print(f"wrote {out / 'stats.md'}, {out / 'stats.csv'}" + (f" and {len(figures)} figure file(s)"
                                                                    if figures else ""), file=sys.stderr)
    print(text)
    return 0
