"""The ``benchsuite`` command line: run, list, describe (workflow and protocols: cli_workflow.py).

Errors a user can cause print one line and exit with status 2; no traceback, and no
partial result file (results are written atomically once a run completes). argparse's
errors are one line too; the output path is probed before the run starts
(:func:`benchsuite.results.check_writable`). A plugin that raises gives one line naming it
and the method (``optimizer 'x' raised in ask(): ...``); its traceback goes to
``<out>.traceback.log`` next to the result file (a temporary file for ``evaluate``), whose
path the line ends with. An evaluation that raises inside a run is a failed trial: one line on
stderr (the workflow's ``rep*.log``) and its traceback appended to ``<out>.failures.log``;
``--pdb`` opens the debugger at the exception first (and at a plugin's exception). Two runs
writing the same ``--out`` at once: the second refuses in one line naming the pid that holds
``<out>.lock`` (:class:`OutputLock`).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import traceback
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from .cli_types import integer, number
from .errors import BenchsuiteError, PluginError, one_line, shorten, shorten_words
from .locks import OutputLock, _lock_next_to  # noqa: F401  (re-exported: the lock next to --out)
from .results import PROVENANCE_SUFFIX, RESULT_FORMAT, RESULT_SUFFIX

EXIT_USAGE = 2
RESTART_HELP = ("ignore the finished trials an interrupted attempt kept in <out>.partial.csv and start over "
                "(default: a simulated-backend run resumes from them)")
MAX_ERROR_CHARS = 1000  # longest error line; the middle of a longer one is cut
# the methods a plugin's traceback is attributed to (the outermost one the suite called)
PLUGIN_METHODS = ("setup", "prepare", "ask", "tell", "recommend", "test_loss", "evaluate", "check_supports")


class UsageError(BenchsuiteError):
    """A command line argparse rejects (unknown option, missing argument, a value of the wrong type)."""


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line (argparse prints the usage block and the error: two lines or more)."""

    def error(self, message: str):  # type: ignore[override]
        # the error line already starts with "benchsuite: error:"; name only the subcommand, if any
        where = self.prog.removeprefix("benchsuite").strip()
        raise UsageError(f"{where + ': ' if where else ''}{message} (see `{self.prog} --help`)")


OUT_HELP = (f"result file to write: {RESULT_FORMAT}, named *{RESULT_SUFFIX} (another extension is refused); its "
            f"provenance goes beside it in *{PROVENANCE_SUFFIX}")
QUIET_HELP = ("no progress display (neither the bar on a terminal nor the lines in a log file) and no summary line; "
              "notes and errors are still printed")
PRESET_HELP = ("a live benchmark's named settings, the same as --benchmark-set preset=NAME (cpu_small: a quick "
               "try on one CPU thread; `benchsuite describe BENCHMARK` lists its presets)")

# seeds are hashed into numpy SeedSequences; 2**63 - 1 keeps them within a signed 64-bit column
_SEED = integer(0, 2**63 - 1, "a seed")
# one worker slot is a few list entries; beyond a million a typo, not an experiment
_WORKERS = integer(1, 100_000, "the number of workers")  # = protocol.MAX_WORKERS (protocol.py is imported lazily)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="benchsuite",
        description="Reproducible benchmarks for Bayesian optimisation and NAS.",
        epilog="Examples:\n  benchsuite list\n  benchsuite describe branin\n"
               "  benchsuite evaluate --benchmark branin --config '{\"x1\": 3.14, \"x2\": 2.27}'\n"
               "  benchsuite run --benchmark branin --optimizer random_search --seed 0 --budget-evals 50 --out r.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from .version import __version__

    p.add_argument("--version", action="version", version=f"benchsuite {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("run", help="run one optimizer on one benchmark and write a result file",
                       description="Run one optimizer on one benchmark with a seed and a budget; "
                                   f"writes one {RESULT_FORMAT} result file, one row per trial, and its provenance "
                                   f"beside it (r{RESULT_SUFFIX} -> r{PROVENANCE_SUFFIX}).")
    r.add_argument("--benchmark", "-b", required=True, help="benchmark name (see `benchsuite list`)")
    r.add_argument("--optimizer", "-o", required=True, help="optimizer name (see `benchsuite list`)")
    r.add_argument("--seed", type=_SEED, default=0, help="run seed (default 0)")
    r.add_argument("--budget-evals", type=integer(1, 2**63 - 1, "the budget in evaluations"), metavar="N",
                   help="stop starting trials after N evaluations")
    r.add_argument("--budget-seconds", type=number(), metavar="T",
                   help="stop starting trials at simulated time T")
    r.add_argument("--workers", type=_WORKERS, default=1, help="asynchronous parallel workers (default 1)")
    r.add_argument("--out", required=True, help=OUT_HELP)
    r.add_argument("--set", action="append", metavar="KEY=VALUE", dest="settings",
                   help="optimizer setting (repeatable); see `benchsuite describe OPTIMIZER`")
    r.add_argument("--benchmark-set", action="append", metavar="KEY=VALUE", dest="benchmark_settings",
                   help="benchmark setting (repeatable); see `benchsuite describe BENCHMARK`")
    r.add_argument("--preset", metavar="NAME", help=PRESET_HELP)
    r.add_argument("--meta", action="append", metavar="KEY=VALUE",
                   help="extra provenance to record (the workflow records the protocol)")
    r.add_argument("--initial-design", choices=("optimizer", "benchmark"), default="optimizer",
                   help="where the first points come from: the optimizer's own random initial points (default) "
                        "or the benchmark's initial design (COMBO's binary problems with "
                        "instance_mode=combo_authors: the authors' 20 points of the run)")
    r.add_argument("--clock", choices=("measured", "nominal"), default="measured",
                   help="what the simulated clock runs on: the measured costs (default) or the benchmark's "
                        "deterministic cost model (live benchmarks), so that a seeded run with several workers "
                        "makes the same decisions on any machine; measured seconds stay in cost_s")
    r.add_argument("--backend", choices=("simulated", "local", "dask"), default="simulated",
                   help="where evaluations run: simulated (default: one after another in this process, times on a "
                        "simulated clock), local (--workers processes on this machine, one GPU each when there are "
                        "GPUs) or dask (a dask LocalCluster, or --scheduler); real backends record wall-clock times")
    r.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --backend dask: the address of a running dask scheduler (tcp://host:8786) instead of a "
                        "LocalCluster; one you trust: the benchmark and trials travel to its workers as pickles")
    r.add_argument("--trial-timeout", type=number(lambda value: value > 0, "a finite, positive number of seconds",
                                                  noun="a number of seconds"), metavar="S",
                   help="with --backend local or dask: a trial still running after S seconds is stopped and recorded "
                        "as a failed trial, and its worker replaced (default: no limit; a hung evaluation would "
                        "otherwise hold the run)")
    r.add_argument("--no-overhead", action="store_true",
                   help="leave the optimizer's measured overhead off the simulated clock (fully deterministic times)")
    r.add_argument("--overhead-clock", choices=("wall", "cpu"), default="wall",
                   help="how the optimizer's overhead is timed: wall seconds (default) or this process's CPU "
                        "seconds, which other jobs sharing the machine do not stretch (run the optimizer on one "
                        "thread, OMP_NUM_THREADS=1, for CPU seconds to read as an idle machine's wall seconds)"),
    r.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    r.add_argument("--restart", action="store_true", help=RESTART_HELP)
    r.add_argument("--pdb", action="store_true",
                   help="open the Python debugger where an evaluation or a plugin raises (post mortem); "
                        "after you leave it, a failed evaluation is recorded as a failed trial and the run goes on")

    j = sub.add_parser("run-job", help="run one job of a protocol by name (what the workflow runs)",
                       description="Run one (benchmark label, optimizer label, repetition) of a protocol and write its "
                                   "result file: settings, budget, workers and seed come from the protocol object, "
                                   "never through shell text. `snakemake` runs every job this way; "
                                   "`benchsuite run-job PROTOCOL ... --print-command` shows the same run as a "
                                   "`benchsuite run` command line.")
    j.add_argument("protocol", help="a protocol name (protocols/<name>.yaml of the suite) or a protocol file")
    j.add_argument("benchmark_label", help="the benchmark's label in the protocol")
    j.add_argument("optimizer_label", help="the optimizer's label in the protocol")
    j.add_argument("repetition", type=integer(0, 10**9, "a repetition"), help="the repetition (0-based)")
    j.add_argument("--out", help=OUT_HELP + "; required unless --print-command")
    j.add_argument("--print-command", action="store_true", help="print the equivalent `benchsuite run` and exit")
    j.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    j.add_argument("--restart", action="store_true", help=RESTART_HELP)
    j.add_argument("--pdb", action="store_true", help="as for `benchsuite run`")
    j.add_argument("--backend", choices=("simulated", "local", "dask"),
                   help="where evaluations run (default: the protocol's `backend:`, else simulated); the workflow "
                        "passes `--config backend=local`")
    j.add_argument("--scheduler", metavar="ADDRESS", help="with the dask backend: a running scheduler's address")

    t = sub.add_parser("retrain-job", help="retrain a finished run's final incumbent (a protocol's `retrain:` step)",
                       description="The \"best model retrained\" step of a protocol (its `retrain:` key; NASBOT's "
                                   "Table 3): train the final incumbent of one finished run again with the "
                                   "protocol's retraining settings and record its test loss as the run's retrained "
                                   "value. The workflow runs it after each run of such a protocol; --estimate prints "
                                   "the protocol's retraining jobs and their GPU-hours instead.")
    t.add_argument("protocol", help="a protocol name (protocols/<name>.yaml of the suite) or a protocol file")
    t.add_argument("benchmark_label", nargs="?", help="the benchmark's label in the protocol")
    t.add_argument("optimizer_label", nargs="?", help="the optimizer's label in the protocol")
    t.add_argument("repetition", nargs="?", type=integer(0, 10**9, "a repetition"),
                   help="the repetition (0-based)")
    t.add_argument("--run", metavar="FILE", help="the run's result file (default: --out's repNNN.csv)")
    t.add_argument("--out", metavar="FILE", help="the record to write (repNNN.retrained.json)")
    t.add_argument("--estimate", action="store_true",
                   help="print the protocol's retraining jobs and their GPU-hours (its retrain.gpu_s) and exit")

    rp = sub.add_parser("replay", help="re-drive a run's optimizer with its recorded results; check it proposes the "
                                       "same configurations",
                        description="Replay a result file: a fresh optimizer (the run's settings and seed) is told the "
                                    "recorded results in the recorded order (asks and tells as the run loop made them) "
                                    "and must propose the recorded configurations. Exit 0 with a one-line summary when "
                                    "every trial matches, 1 naming the first that differs. It checks that the "
                                    "optimizer, not the timing of a real backend, made the decisions.")
    rp.add_argument("result", help=f"a result file ({RESULT_FORMAT}) of `benchsuite run`")

    e = sub.add_parser("evaluate", help="evaluate one configuration of a benchmark and print the result as JSON")
    e.add_argument("--benchmark", "-b", required=True, help="benchmark name")
    e.add_argument("--config", required=True, help='configuration as JSON, e.g. \'{"x1": 1.0, "x2": 2.0}\', or a string the space '
                        'accepts as it is (a NAS-Bench-201 architecture string \'|op~0|+|op~0|op~1|+|op~0|op~1|op~2|\')')
    e.add_argument("--fidelity", type=number(), help="fidelity value (default: full)")
    e.add_argument("--seed", type=_SEED, default=0, help="evaluation seed (default 0)")
    e.add_argument("--benchmark-set", action="append", metavar="KEY=VALUE", dest="benchmark_settings",
                   help="benchmark setting (repeatable)")
    e.add_argument("--preset", metavar="NAME", help=PRESET_HELP)

    sub.add_parser("list", help="list benchmarks and optimizers (built-in and plugins)")
    d = sub.add_parser("describe", help="describe a benchmark or optimizer: space, fidelity, optimum, settings "
                                        "(also one whose extra is not installed, naming the extra)")
    d.add_argument("name")

    # -- workflow subcommands (workflow, validate-protocol, analyse): benchsuite/cli_workflow.py --
    from .cli_workflow import add_workflow_parsers

    add_workflow_parsers(sub)
    from .cli_check import add_parser as add_check_parser

    add_check_parser(sub)
    from .cli_reproductions import add_parser as add_reproductions_parser

    add_reproductions_parser(sub)
    from .cli_race import add_parsers as add_race_parsers

    add_race_parsers(sub)  # race, stats
    return p


# -- a plugin that raises: one line naming it and the method, the traceback in a log file --
def _log_next_to(out: Path) -> Path:
    """Where a run's traceback goes: next to its result file (the name shortened to fit NAME_MAX)."""
    name = out.name if len(os.fsencode(out.name)) <= 240 else out.name[:200]
    return out.with_name(name + ".traceback.log")


def _log_in_tmp() -> Path:
    """Where a traceback goes when a command writes no file: a new file in the temporary directory."""
    import tempfile

    fd, name = tempfile.mkstemp(prefix="benchsuite-traceback-", suffix=".log")
    os.close(fd)
    return Path(name)


def _culprit(exc: BaseException) -> tuple[str, str] | None:
    """(plugin, method) of the outermost plugin method in ``exc``'s traceback, or None if no plugin is in it."""
    from .benchmark import Benchmark
    from .optimizer import Optimizer

    frames = [f for f, _ in traceback.walk_tb(exc.__traceback__)]
    found = None
    for frame in frames:
        obj = frame.f_locals.get("self")
        if isinstance(obj, (Optimizer, Benchmark)):
            kind = "optimizer" if isinstance(obj, Optimizer) else "benchmark"
            here = (f"{kind} {getattr(obj, 'name', '') or type(obj).__name__!r}", frame.f_code.co_name)
            if frame.f_code.co_name in PLUGIN_METHODS:
                return here
            found = found or here
    return found


class _plugin_errors:
    """Turn an exception from plugin code (anything but the suite's own errors) into one PluginError line.

    The line names the plugin and its method (``optimizer 'x' raised in ask``) and the log file
    the full traceback was written to; an exception no plugin frame is in still gives one line,
    naming the run it happened in."""

    def __init__(self, context: str, log: Path | None, debug: bool = False):
        self.context, self.log, self.debug = context, log, debug  # log None: a new file in the temporary directory

    def __enter__(self) -> None:
        return None

    def __exit__(self, typ, exc, tb) -> bool:
        if exc is None or not isinstance(exc, Exception) or isinstance(exc, BenchsuiteError):
            return False
        if isinstance(exc, RecursionError):
            return False  # main() reports it as input nested too deeply
        where = _culprit(exc)
        if self.debug:
            _post_mortem(exc)
        log = self._write(exc, where)
        brief = one_line(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        if len(brief) > 300:
            brief = brief[:297] + "..."
        shown = f"traceback in {log}" if log is not None else "no traceback log could be written"
        if where is not None:
            plugin, method = where
            raise PluginError(f"{plugin} raised in {method}(): {brief} ({shown})") from None
        raise PluginError(f"unexpected error in the run of {self.context}: {brief} ({shown})") from None

    def _write(self, exc: BaseException, where: tuple[str, str] | None) -> Path | None:
        head = f"benchsuite {' '.join(sys.argv[1:])}\n" + (f"{where[0]} raised in {where[1]}()\n" if where else "")
        text = head + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        for target in (self.log, None):
            try:
                path = target if target is not None else _log_in_tmp()
                path.write_text(text, encoding="utf-8", errors="backslashreplace")
                return path
            except OSError:
                continue
        return None


def _post_mortem(exc: BaseException) -> None:
    """``--pdb``: the traceback, then the debugger in the frame that raised."""
    import pdb

    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    if exc.__traceback__ is None:  # raised in a worker process (--backend local/dask): no frame here to debug
        print("benchsuite --pdb: the evaluation ran in a worker process; its traceback is above, there is no "
              "frame to debug here (run it with --backend simulated to debug it)", file=sys.stderr, flush=True)
        return
    print("benchsuite --pdb: post-mortem debugging; `c` or `q` leaves the debugger", file=sys.stderr, flush=True)
    pdb.post_mortem(exc.__traceback__)


def _failures_next_to(out: Path) -> Path:
    """Where the tracebacks of a run's failed evaluations go (the name shortened to fit NAME_MAX)."""
    name = out.name if len(os.fsencode(out.name)) <= 240 else out.name[:200]
    return out.with_name(name + ".failures.log")


def _cmd_run(args: argparse.Namespace) -> int:
    """``benchsuite run``: settings given as KEY=VALUE text."""
    from .results import check_writable
    from .settings import parse_assignments

    from . import registry

    # names first: an unknown (or not installed) benchmark or optimizer is the mistake to report, before a
    # missing budget or an unwritable output
    registry.get_benchmark(args.benchmark)
    registry.get_optimizer(args.optimizer)
    bench_settings = _with_preset(args.benchmark, parse_assignments(args.benchmark_settings), args.preset)
    out = check_writable(args.out)
    return _run_and_report(args, out, parse_assignments(args.settings), bench_settings, parse_assignments(args.meta))


def _with_preset(benchmark: str, settings: dict, preset: str | None) -> dict:
    """``--preset NAME``: the benchmark setting ``preset=NAME``, refused in one line where it cannot apply."""
    if preset is None:
        return settings
    from . import registry
    from .errors import InvalidSettingError

    if "preset" not in getattr(registry.get_benchmark(benchmark), "settings_spec", {}):
        with_presets = [n for n, e in registry.benchmarks().items()
                        if "preset" in getattr(e.obj or e.cls, "settings_spec", {})]
        raise InvalidSettingError(f"--preset: benchmark {benchmark!r} has no presets (the live benchmarks have "
                                  f"them: {', '.join(with_presets)}); drop --preset")
    if settings.get("preset", preset) != preset:
        raise InvalidSettingError(f"--preset {preset} and --benchmark-set preset={settings['preset']} disagree; "
                                  "give one of them")
    return {**settings, "preset": preset}


def _protocol_named(name: str) -> Any:
    """A protocol by name (``protocols/<name>.yaml`` of the suite) or by file."""
    from .paths import PROTOCOLS_DIR
    from .protocol import load_protocol

    path = Path(name) if name.endswith((".yaml", ".yml")) or os.sep in name else PROTOCOLS_DIR / f"{name}.yaml"
    return load_protocol(path)


def _cmd_retrain_job(args: argparse.Namespace) -> int:
    """``benchsuite retrain-job``: one retraining of a protocol's ``retrain:`` step, or (``--estimate``) their plan."""
    from .protocol import RETRAINED_SUFFIX
    from .results import check_writable
    from .retrain import retrain_run

    proto = _protocol_named(args.protocol)
    if proto.retrain is None:
        raise UsageError(f"retrain-job: protocol {proto.name!r} has no `retrain:` key; nothing to retrain")
    if args.estimate:
        jobs = proto.retrain_jobs()
        hours = proto.retrain_gpu_hours()
        print(f"{proto.name}: {len(jobs)} retraining job(s) (optimizers {', '.join(proto.retrain.optimizers)} x "
              f"benchmarks {', '.join(proto.retrain.benchmarks)} x {proto.repetitions} repetition(s)), settings "
              f"{json.dumps(proto.retrain.settings)}")
        if hours is None:
            print(f"{proto.name}: no GPU estimate (give retrain.gpu_s and retrain.basis)")
        else:
            print(f"{proto.name}: about {hours:.1f} GPU-hours ({proto.retrain.gpu_s:g} GPU s each: "
                  f"{proto.retrain.basis})")
        return 0
    if args.benchmark_label is None or args.optimizer_label is None or args.repetition is None:
        raise UsageError("retrain-job: give BENCHMARK_LABEL OPTIMIZER_LABEL REPETITION (or --estimate)")
    if not args.out:
        raise UsageError("retrain-job: give --out FILE (the record, repNNN.retrained.json)")
    job = proto.job(args.benchmark_label, args.optimizer_label, args.repetition)
    if job.key not in {j.key for j in proto.retrain_jobs()}:
        raise UsageError(f"retrain-job: protocol {proto.name!r} does not retrain {job.optimizer.label}'s runs on "
                         f"{job.benchmark.label} (its `retrain:` key)")
    run = args.run
    if run is None:
        if not args.out.endswith(RETRAINED_SUFFIX):
            raise UsageError(f"retrain-job: give --run FILE (--out does not end in {RETRAINED_SUFFIX})")
        run = args.out[:-len(RETRAINED_SUFFIX)] + ".csv"
    if not args.out.endswith(RETRAINED_SUFFIX):
        raise UsageError(f"retrain-job: --out must end in {RETRAINED_SUFFIX} (the record beside the run's result)")
    out = check_writable(args.out, result=False)
    record = retrain_run(proto, job, run, out)
    print(f"{proto.name} {job.benchmark.label} {job.optimizer.label} rep {job.repetition}: retrained test loss "
          f"{record['retrained_test_loss']:.6g} (search: {record['search_test_loss']:.6g}; {record['status']}, "
          f"{record['seconds']:.1f} s) -> {out}", file=sys.stderr)
    return 0


def _cmd_run_job(args: argparse.Namespace) -> int:
    """``benchsuite run-job``: one job of a protocol, its typed settings taken from the protocol object."""
    import shlex

    from .results import check_writable

    proto = _protocol_named(args.protocol)
    job = proto.job(args.benchmark_label, args.optimizer_label, args.repetition)
    if args.print_command:
        print(shlex.join(proto.command(job, out=args.out, backend=args.backend, scheduler=args.scheduler)))
        return 0
    if not args.out:
        raise UsageError("run-job: give --out FILE (or --print-command)")
    out = check_writable(args.out)
    budget = job.benchmark.budget
    run_args = argparse.Namespace(
        benchmark=job.benchmark.name, optimizer=job.optimizer.name, seed=job.seed, budget_evals=budget.evaluations,
        budget_seconds=None if budget.seconds is None else float(budget.seconds), workers=proto.workers,
        no_overhead=not proto.include_overhead, quiet=args.quiet, pdb=args.pdb,
        initial_design=job.optimizer.initial_design, backend=args.backend or proto.backend,
        scheduler=args.scheduler, clock=proto.clock_for(job, args.backend), restart=args.restart,
        overhead_clock=proto.overhead_clock, trial_timeout=proto.trial_timeout_for(args.backend))
    # as `--meta KEY=VALUE` records them (text), so a job's provenance is the same either way
    meta = {"protocol": proto.name, "benchmark_label": job.benchmark.label, "optimizer_label": job.optimizer.label,
            "repetition": str(job.repetition)}
    return _run_and_report(run_args, out, dict(job.optimizer.settings), job.benchmark.settings_for(job.repetition),
                           meta)


def _say_paper_sized(benchmark: str) -> None:
    """Print :func:`_paper_sized_notice` on stderr when there is one."""
    notice = _paper_sized_notice(benchmark)
    if notice:
        print(f"benchsuite: {notice}", file=sys.stderr, flush=True)


def _paper_sized_notice(benchmark: str) -> str:
    """For a live benchmark run with no settings given: what each trial trains and what that cost (else '')."""
    from . import registry
    from .errors import BenchsuiteError
    from .live import LiveTrainingBenchmark

    try:
        cls = registry.get_benchmark(benchmark)
        if not (isinstance(cls, type) and issubclass(cls, LiveTrainingBenchmark) and cls.presets):
            return ""
        return cls().paper_sized_notice()
    except BenchsuiteError:  # an unknown name or a missing extra: the run itself says so in one line
        return ""


def _run_and_report(args: argparse.Namespace, out: Path, opt_settings: dict, bench_settings: dict,
                    meta: dict) -> int:
    """The one run path (:func:`benchsuite.execute.execute_run`) with its progress display
    (:class:`benchsuite.cli_progress.RunProgress`), a failure log next to ``out`` and plugin errors as one line."""
    from .cli_progress import RunProgress, TrainingLines
    from .execute import execute_run

    clock_name = "simulated clock" if args.backend == "simulated" else f"{args.backend} backend, wall clock"
    display = None if args.quiet else RunProgress(f"{args.optimizer} on {args.benchmark}", args.budget_evals,
                                                  clock_name)
    failures = _failures_next_to(out)

    def on_failure(trial, exc: Exception, bench) -> None:
        """A failed evaluation: the debugger (--pdb), its traceback in the failure log, one line on stderr."""
        if args.pdb:
            _post_mortem(exc)
        text = (f"trial {trial.id} (worker {trial.worker}, fidelity {trial.fidelity}): "
                f"{bench.space.to_json(trial.config)}\n"
                + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)) + "\n")
        try:
            with open(failures, "a", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(text)
            where = f"traceback in {failures}"
        except OSError as err:
            where = f"no traceback log could be written: {err.strerror}"
        brief = shorten(f"{type(exc).__name__}: {exc}", 300)  # a long message cut in its middle, marked
        line = f"benchsuite: trial {trial.id} failed, evaluate() raised {brief} ({where})"
        if display is not None:
            display.write(line)
        else:
            print(line, file=sys.stderr, flush=True)

    def guard(what: str) -> _plugin_errors:
        if what.startswith("optimizer"):  # the run starts: an earlier attempt's failures are not this run's
            try:
                failures.unlink(missing_ok=True)
            except OSError:
                pass
        return _plugin_errors(what, _log_next_to(out), debug=args.pdb)

    if not args.quiet and not bench_settings:
        _say_paper_sized(args.benchmark)
    with display or contextlib.nullcontext(), TrainingLines(display) if display else contextlib.nullcontext():
        output, _ = execute_run(args.benchmark, args.optimizer, seed=args.seed, budget_evals=args.budget_evals,
                                budget_seconds=args.budget_seconds, workers=args.workers,
                                optimizer_settings=opt_settings, benchmark_settings=bench_settings,
                                include_overhead=not args.no_overhead, extra_provenance=meta or None, out=out,
                                progress=None if display is None else display.trial_done, on_failure=on_failure,
                                guard=guard, initial_design=args.initial_design, backend=args.backend,
                                scheduler=args.scheduler, clock=args.clock, resume=not args.restart,
                                overhead_clock=args.overhead_clock, trial_timeout=args.trial_timeout)
    try:  # a failed earlier attempt's traceback no longer applies
        _log_next_to(out).unlink(missing_ok=True)
    except OSError:
        pass
    if display is not None:
        print(f"wrote {out} ({_summary(output.rows, display.trainings_text())})", file=sys.stderr)
    return 0


def _summary(rows: list[dict], trainings: str) -> str:
    """The run's summary in a few words: trials, networks trained (for trials, for test losses), the final
    incumbent's test loss or why there is none."""
    failed = sum(r["status"] != "ok" for r in rows)
    parts = [f"{len(rows)} trials" + (f", {failed} failed" if failed else "")]
    if trainings:
        parts.append(trainings)
    last = rows[-1] if rows else None
    if last is None or last["incumbent"] is None:
        parts.append("no incumbent")
    else:
        test = last["incumbent_test_loss"]
        if test is None or (isinstance(test, float) and math.isnan(test)):
            parts.append(f"final incumbent loss {last['incumbent_loss']:.6g} (no test loss: the benchmark has none "
                         "or test_eval=false)")
        else:
            parts.append(f"final incumbent test loss {test:.6g}")
    return "; ".join(parts)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from . import registry
    from .errors import InvalidConfigError, show
    from .settings import parse_assignments

    settings = _with_preset(args.benchmark, parse_assignments(args.benchmark_settings), args.preset)
    with _plugin_errors(f"benchmark {args.benchmark!r}", None):
        bench = registry.make_benchmark(args.benchmark, settings)
    try:
        raw = json.loads(args.config)
    except json.JSONDecodeError as exc:
        # not JSON: a space may take a configuration string as it is (a NAS-Bench-201 architecture string)
        try:
            config, fidelity = bench.check(args.config, args.fidelity)
        except InvalidConfigError as why:
            # meant as JSON, or a space that takes no strings ("... got str"): the JSON error is the one to fix
            if args.config.lstrip()[:1] in ("{", "[", '"') or "got str" in str(why):
                raise InvalidConfigError(f"--config {show(args.config)} is not valid JSON ({exc})") from None
            # meant as a configuration string: say what is wrong with it, not that it is not JSON
            raise InvalidConfigError(f"--config for {args.benchmark!r}: {why}") from None
    else:
        config, fidelity = bench.check(raw, args.fidelity)
    if not settings:
        _say_paper_sized(args.benchmark)
    from .cli_progress import TrainingLines

    with TrainingLines(), _plugin_errors(f"benchmark {args.benchmark!r}", None):
        result = bench.evaluate(config, fidelity, seed=args.seed)
    from .results import to_json

    print(to_json({"loss": result.loss, "cost_s": result.cost_s, "failed": result.failed, "info": dict(result.info)}))
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    """``benchsuite replay RESULT``: exit 0 and one line when the optimizer proposes the recorded configurations."""
    from .replay import replay

    outcome = replay(args.result)
    print(outcome.summary)
    return 0 if outcome.ok else 1


def _cmd_list() -> int:
    from . import registry

    for title, table in (("benchmarks", registry.benchmarks()), ("optimizers", registry.optimizers())):
        print(f"{title}:")
        width = max((len(n) for n in table), default=0)
        for name, entry in table.items():
            src = "" if entry.source == "builtin" else f"  [{entry.source}]"
            print(f"  {name:<{width}}  {entry.description}{src}")
            caps = _capability_line(title, entry)
            if caps:
                print(f"  {'':<{width}}    {caps}")
    return 0


def _capability_line(kind: str, entry) -> str:
    """For an architecture benchmark, the capabilities its space offers; for an optimizer, the space kinds
    and capabilities it needs (what `list` shows so every NAS method finds every space that can serve it)."""
    cls = entry.obj
    if cls is None:
        return ""
    if kind == "optimizers":
        caps = cls.supports
        if "architecture" not in caps.spaces:
            return ""
        need = f"needs {', '.join(sorted(caps.needs))}" if caps.needs else "needs no space capability"
        use = f"; uses {', '.join(sorted(caps.uses))} when offered" if caps.uses else ""
        return f"-> spaces: {', '.join(sorted(caps.spaces))}; {need}{use}"
    space_cls = getattr(cls, "space_class", None)
    offered = getattr(space_cls, "capabilities", None) if space_cls is not None else None
    if offered is None:
        return ""
    return f"-> space {space_cls.__name__} offers {', '.join(sorted(offered)) or 'nothing optional'}"


def _cmd_describe(name: str) -> int:
    import difflib

    from . import registry
    from .errors import UnknownNameError
    from .settings import describe_settings

    entry = registry.benchmarks().get(name) or registry.optimizers().get(name)
    if entry is None:
        known = [*registry.benchmarks(), *registry.optimizers()]
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {', '.join(repr(x) for x in close)}?" if close else ""
        raise UnknownNameError(f"no benchmark or optimizer named {name!r}{hint} (see `benchsuite list`)")
    kind = "benchmark" if name in registry.benchmarks() else "optimizer"
    cls = entry.obj or entry.cls
    if cls is None:  # its module does not even import: the registry's reason is all there is
        registry.get_benchmark(name) if kind == "benchmark" else registry.get_optimizer(name)
    missing = "" if entry.obj is not None else f"not usable here: it {entry.error}"
    text, values, spec = _describe_text(cls, kind)
    lines = ([f"({missing})"] if missing else []) + [text.split("\nsettings:\n", 1)[0]]
    # the settings block with each setting's domain (the same objects construction checks)
    print("\n".join([*lines, *describe_settings(spec, values)]))
    return 0


def _describe_text(cls: type, kind: str) -> tuple[str, dict | None, dict]:
    """What ``describe`` prints of a plugin class: a benchmark's own description (its instance with the default
    settings; a class-level summary when building one needs a missing package), or an optimizer's."""
    if kind == "optimizer":
        return cls.describe(), None, cls.settings_spec
    try:
        obj = cls()
    except ModuleNotFoundError:
        head = f"{cls.name} ({getattr(cls, 'kind', '')}): {cls.description}"
        return head + "\n(space and fidelity: shown once its extra is installed)", None, cls.settings_spec
    return obj.describe(), obj.settings, obj.settings_spec


def _say(message: object) -> None:
    """Print ``benchsuite: error: MESSAGE`` on one line of stderr, whatever characters it holds."""
    # a 100 kB input is not echoed whole: a long value keeps its two ends, then the line as a whole is bounded
    line = f"benchsuite: error: {shorten(shorten_words(message), MAX_ERROR_CHARS)}\n"
    enc = getattr(sys.stderr, "encoding", None) or "utf-8"
    sys.stderr.write(line.encode(enc, "backslashreplace").decode(enc, "replace"))
    sys.stderr.flush()


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "check":
        from .cli_check import main as check_main

        return check_main(args)
    if args.command == "reproductions":
        from .cli_reproductions import main as reproductions_main

        return reproductions_main(args)
    if args.command in ("race", "stats"):
        from .cli_race import main as race_main

        return race_main(args, guard=_plugin_errors, log_next_to=_log_next_to)  # a race's runs fail as `run`'s do
    if args.command == "run":
        return _cmd_run(args)
    if args.command == "run-job":
        return _cmd_run_job(args)
    if args.command == "retrain-job":
        return _cmd_retrain_job(args)
    if args.command == "evaluate":
        return _cmd_evaluate(args)
    if args.command == "replay":
        return _cmd_replay(args)
    if args.command == "list":
        return _cmd_list()
    if args.command == "describe":
        return _cmd_describe(args.name)
    # -- workflow subcommands: benchsuite/cli_workflow.py --
    from .cli_workflow import run_workflow_command

    code = run_workflow_command(args)
    if code is not None:
        return code
    parser.print_help()
    return EXIT_USAGE


#: commands whose results must not depend on the process: Python randomises string hashing per process,
#: and SMAC iterates a hash-ordered collection, so its suggestions changed from one process to the next
#: under the same seed (measured: two `run -o smac` differed from the 21st trial on; with
#: PYTHONHASHSEED=0 they are identical). These commands run with PYTHONHASHSEED=0 (re-executed once
#: when it is unset); provenance records the value.
_HASH_STABLE_COMMANDS = ("run", "run-job", "replay", "race")


def _hash_stable_reexec(argv: list[str]) -> None:
    """Re-execute this command with PYTHONHASHSEED=0 when it is unset (console entry only, never in-process)."""
    if argv[:1] and argv[0] in _HASH_STABLE_COMMANDS and os.environ.get("PYTHONHASHSEED") is None:
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, "-m", "benchsuite.cli", *argv], env)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``benchsuite`` console script."""
    if argv is None:
        _hash_stable_reexec(sys.argv[1:])
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # argparse's answer, without building every subcommand's parser (and its imports)
        from .version import __version__

        print(f"benchsuite {__version__}")
        return 0
    try:
        parser = _parser()
        if argv[:1] == ["workflow"]:
            # `benchsuite workflow`: the options it does not know are Snakemake's (benchsuite/cli_workflow.py)
            from .cli_workflow import split_workflow_argv

            ours, snakemake_args = split_workflow_argv(argv[1:])
            args = parser.parse_args(["workflow", *ours])
            args.snakemake_args = snakemake_args
        else:
            args, extra = parser.parse_known_args(argv)
            if extra and getattr(args, "protocol_names", None) is not None and not any(
                    a.startswith("-") for a in extra):
                # `reproductions collect --rewrite NAME`: argparse ends an optional positional list at the first
                # option and leaves the names after it over; they are the protocol names all the same
                args.protocol_names = [*args.protocol_names, *extra]
            elif extra:
                args = parser.parse_args(argv)  # argparse's own one-line error for what it does not know
        return _dispatch(parser, args)
    except BenchsuiteError as exc:
        _say(exc)
        return EXIT_USAGE
    except ModuleNotFoundError as exc:  # an optional dependency imported lazily: name the extra to install
        from .extras import missing_extra_error

        err = missing_extra_error(exc, f"`benchsuite {argv[0]}`" if argv else "benchsuite")
        if err is None:
            raise
        _say(err)
        return EXIT_USAGE
    except RecursionError:
        _say("an input (a --config, a --set value, a protocol) is nested too deeply to read")
        return EXIT_USAGE
    except SystemExit as exc:  # --help, or a library that exits
        if isinstance(exc.code, int) or exc.code is None:
            return exc.code or 0
        _say(exc.code)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("benchsuite: interrupted; no result file was written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
