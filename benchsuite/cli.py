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
import logging
import math
import os
import sys
import time
import traceback
from pathlib import Path
from collections.abc import Sequence

from .errors import BenchsuiteError, PluginError, one_line, shorten
from .locks import OutputLock, _lock_next_to  # noqa: F401  (re-exported: the lock next to --out)

EXIT_USAGE = 2
RESTART_HELP = ("ignore the finished trials an interrupted attempt kept in <out>.partial.csv and start over "
                "(default: a simulated-backend run resumes from them)")
MAX_ERROR_CHARS = 2000  # longest error line; the middle of a longer one is cut (issue 26)
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


def _int_in(low: int, high: int, what: str):
    """An argparse type: an integer in [low, high]."""
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} must be in {low}..{high}, got {value}")
        return value
    return parse


def _finite_float():
    """An argparse type: a finite float (nan and inf would make a run stop at once or never)."""
    def parse(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        return value
    return parse


# seeds are hashed into numpy SeedSequences; 2**63 - 1 keeps them within a signed 64-bit column
_SEED = _int_in(0, 2**63 - 1, "a seed")
# one worker slot is a few list entries; beyond a million a typo, not an experiment
_WORKERS = _int_in(1, 100_000, "the number of workers")  # = protocol.MAX_WORKERS (protocol.py is imported lazily)


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
                                   "writes one CSV result file (first line: JSON provenance).")
    r.add_argument("--benchmark", "-b", required=True, help="benchmark name (see `benchsuite list`)")
    r.add_argument("--optimizer", "-o", required=True, help="optimizer name (see `benchsuite list`)")
    r.add_argument("--seed", type=_SEED, default=0, help="run seed (default 0)")
    r.add_argument("--budget-evals", type=_int_in(-2**63, 2**63 - 1, "the budget"), metavar="N",
                   help="stop starting trials after N evaluations")
    r.add_argument("--budget-seconds", type=_finite_float(), metavar="T",
                   help="stop starting trials at simulated time T")
    r.add_argument("--workers", type=_WORKERS, default=1, help="asynchronous parallel workers (default 1)")
    r.add_argument("--out", required=True, help="result file to write (CSV)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", dest="settings",
                   help="optimizer setting (repeatable); see `benchsuite describe OPTIMIZER`")
    r.add_argument("--benchmark-set", action="append", metavar="KEY=VALUE", dest="benchmark_settings",
                   help="benchmark setting (repeatable); see `benchsuite describe BENCHMARK`")
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
                        "LocalCluster")
    r.add_argument("--no-overhead", action="store_true",
                   help="leave the optimizer's measured overhead off the simulated clock (fully deterministic times)")
    r.add_argument("--overhead-clock", choices=("wall", "cpu"), default="wall",
                   help="how the optimizer's overhead is timed: wall seconds (default) or this process's CPU "
                        "seconds, which other jobs sharing the machine do not stretch (run the optimizer on one "
                        "thread, OMP_NUM_THREADS=1, for CPU seconds to read as an idle machine's wall seconds)"),
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
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
    j.add_argument("repetition", type=_int_in(0, 10**9, "a repetition"), help="the repetition (0-based)")
    j.add_argument("--out", help="result file to write (CSV); required unless --print-command")
    j.add_argument("--print-command", action="store_true", help="print the equivalent `benchsuite run` and exit")
    j.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    j.add_argument("--restart", action="store_true", help=RESTART_HELP)
    j.add_argument("--pdb", action="store_true", help="as for `benchsuite run`")
    j.add_argument("--backend", choices=("simulated", "local", "dask"),
                   help="where evaluations run (default: the protocol's `backend:`, else simulated); the workflow "
                        "passes `--config backend=local`")
    j.add_argument("--scheduler", metavar="ADDRESS", help="with the dask backend: a running scheduler's address")

    rp = sub.add_parser("replay", help="re-drive a run's optimizer with its recorded results; check it proposes the "
                                       "same configurations",
                        description="Replay a result file: a fresh optimizer (the run's settings and seed) is told the "
                                    "recorded results in the recorded order (asks and tells as the run loop made them) "
                                    "and must propose the recorded configurations. Exit 0 with a one-line summary when "
                                    "every trial matches, 1 naming the first that differs. It checks that the "
                                    "optimizer, not the timing of a real backend, made the decisions.")
    rp.add_argument("result", help="a result file (CSV) of `benchsuite run`")

    e = sub.add_parser("evaluate", help="evaluate one configuration of a benchmark and print the result as JSON")
    e.add_argument("--benchmark", "-b", required=True, help="benchmark name")
    e.add_argument("--config", required=True, help='configuration as JSON, e.g. \'{"x1": 1.0, "x2": 2.0}\', or a string the space '
                        'accepts as it is (a NAS-Bench-201 architecture string \'|op~0|+|op~0|op~1|+|op~0|op~1|op~2|\')')
    e.add_argument("--fidelity", type=_finite_float(), help="fidelity value (default: full)")
    e.add_argument("--seed", type=_SEED, default=0, help="evaluation seed (default 0)")
    e.add_argument("--benchmark-set", action="append", metavar="KEY=VALUE", dest="benchmark_settings",
                   help="benchmark setting (repeatable)")

    sub.add_parser("list", help="list benchmarks and optimizers (built-in and plugins)")
    d = sub.add_parser("describe", help="describe a benchmark or optimizer: space, fidelity, optimum, settings")
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
    out = check_writable(args.out)
    return _run_and_report(args, out, parse_assignments(args.settings), parse_assignments(args.benchmark_settings),
                           parse_assignments(args.meta))


def _cmd_run_job(args: argparse.Namespace) -> int:
    """``benchsuite run-job``: one job of a protocol, its typed settings taken from the protocol object."""
    import shlex

    from .paths import PROTOCOLS_DIR
    from .protocol import load_protocol
    from .results import check_writable

    name = args.protocol
    path = Path(name) if name.endswith((".yaml", ".yml")) or os.sep in name else PROTOCOLS_DIR / f"{name}.yaml"
    proto = load_protocol(path)
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
        overhead_clock=proto.overhead_clock)
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


class _TrainingProgress(logging.Handler):
    """During a live trial, the training harness's per-epoch (or per-scoring) lines on stderr, at most one every
    ``every`` seconds (and every early stop), through the progress bar when there is one."""

    def __init__(self, bars: list, every: float = 10.0):
        super().__init__(logging.INFO)
        self.bars, self.every, self.last = bars, every, -math.inf
        self.logger = logging.getLogger("benchsuite.training")
        self.saved = (self.logger.level, self.logger.propagate)

    def attach(self) -> None:
        self.logger.addHandler(self)
        self.logger.setLevel(logging.INFO)
        self.logger.propagate = False

    def detach(self) -> None:
        self.logger.removeHandler(self)
        self.logger.setLevel(self.saved[0])
        self.logger.propagate = self.saved[1]

    def emit(self, record: logging.LogRecord) -> None:
        now = time.monotonic()
        text = record.getMessage()
        if now - self.last < self.every and not text.startswith("early stop"):
            return
        self.last = now
        line = f"  training: {text}"
        if self.bars:
            self.bars[0].write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)


def _run_and_report(args: argparse.Namespace, out: Path, opt_settings: dict, bench_settings: dict,
                    meta: dict) -> int:
    """The one run path (:func:`benchsuite.execute.execute_run`) with a progress display, a failure log next to
    ``out`` and plugin errors as one line."""
    from .execute import execute_run

    bars: list = []  # created on the first report, so a run refused up front prints only its error
    # A terminal gets a live bar; a log file (the workflow's rep*.log) gets a plain line at
    # most every 30 s, since \r-updates without a newline would sit in stderr's buffer.
    tty = sys.stderr.isatty()
    started = time.monotonic()
    last_line = [started]
    clock_name = "simulated clock" if args.backend == "simulated" else f"{args.backend} backend, wall clock"

    def progress(n: int, clock: float) -> None:
        if args.quiet:
            return
        if not tty:
            now = time.monotonic()
            # the first finished trial says the run is alive; then a line every 30 s, and the last
            if n == 1 or now - last_line[0] >= 30.0 or (args.budget_evals and n >= args.budget_evals):
                last_line[0] = now
                total = f"/{args.budget_evals}" if args.budget_evals else ""
                print(f"{args.optimizer} on {args.benchmark}: {n}{total} trials, {clock_name} {clock:,.0f} s, "
                      f"{now - started:,.0f} s elapsed", file=sys.stderr, flush=True)
            return
        if not bars:
            from tqdm import tqdm

            bars.append(tqdm(total=args.budget_evals, desc=f"{args.optimizer} on {args.benchmark}", unit="trial",
                             file=sys.stderr, dynamic_ncols=True, mininterval=0.5))
        bar = bars[0]
        bar.update(n - bar.n)
        bar.set_postfix_str(f"clock {clock:,.0f}s", refresh=False)

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
        brief = one_line(f"{type(exc).__name__}: {exc}")[:300]
        line = f"benchsuite: trial {trial.id} failed, evaluate() raised {brief} ({where})"
        if bars:
            bars[0].write(line, file=sys.stderr)
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
    training_lines = None if args.quiet else _TrainingProgress(bars)
    if training_lines is not None:
        training_lines.attach()
    try:
        output, _ = execute_run(args.benchmark, args.optimizer, seed=args.seed, budget_evals=args.budget_evals,
                                budget_seconds=args.budget_seconds, workers=args.workers,
                                optimizer_settings=opt_settings, benchmark_settings=bench_settings,
                                include_overhead=not args.no_overhead, extra_provenance=meta or None, out=out,
                                progress=progress, on_failure=on_failure, guard=guard,
                                initial_design=args.initial_design, backend=args.backend,
                                scheduler=args.scheduler, clock=args.clock, resume=not args.restart,
                                overhead_clock=args.overhead_clock)
    finally:
        if training_lines is not None:
            training_lines.detach()
        for bar in bars:
            bar.close()
    try:  # a failed earlier attempt's traceback no longer applies
        _log_next_to(out).unlink(missing_ok=True)
    except OSError:
        pass
    best = min((r["incumbent_test_loss"] for r in output.rows if r["incumbent_test_loss"] is not None), default=None)
    if not args.quiet:
        print(f"wrote {out} ({len(output.rows)} trials; final incumbent test loss {best})", file=sys.stderr)
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    import json

    from . import registry
    from .errors import InvalidConfigError, show
    from .settings import parse_assignments

    settings = parse_assignments(args.benchmark_settings)
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
    lines = _TrainingProgress([])
    lines.attach()
    try:
        with _plugin_errors(f"benchmark {args.benchmark!r}", None):
            result = bench.evaluate(config, fidelity, seed=args.seed)
    finally:
        lines.detach()
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

    if name in registry.benchmarks():
        obj = registry.make_benchmark(name)
        text, values = obj.describe(), obj.settings
    elif name in registry.optimizers():
        obj = registry.get_optimizer(name)
        text, values = obj.describe(), None
    else:
        known = [*registry.benchmarks(), *registry.optimizers()]
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {', '.join(repr(x) for x in close)}?" if close else ""
        raise UnknownNameError(f"no benchmark or optimizer named {name!r}{hint} (see `benchsuite list`)")
    # the settings block with each setting's domain (the same objects construction checks)
    head = text.split("\nsettings:\n", 1)[0]
    print("\n".join([head, *describe_settings(obj.settings_spec, values)]))
    return 0


def _say(message: object) -> None:
    """Print ``benchsuite: error: MESSAGE`` on one line of stderr, whatever characters it holds."""
    line = f"benchsuite: error: {shorten(message, MAX_ERROR_CHARS)}\n"  # a 100 kB input is not echoed whole
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
