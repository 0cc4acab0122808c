"""The ``benchsuite`` command line: run, list, describe (workflow and protocols: cli_workflow.py).

Errors a user can cause print one line and exit with status 2; no traceback, and no
partial result file (results are written atomically once a run completes).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from .errors import BenchsuiteError

EXIT_USAGE = 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="benchsuite",
        description="Reproducible benchmarks for Bayesian optimisation and NAS.",
        epilog="Examples:\n  benchsuite list\n  benchsuite describe branin\n"
               "  benchsuite evaluate --benchmark branin --config '{\"x1\": 3.14, \"x2\": 2.27}'\n"
               "  benchsuite run --benchmark branin --optimizer random_search --seed 0 --budget-evals 50 --out r.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("run", help="run one optimizer on one benchmark and write a result file",
                       description="Run one optimizer on one benchmark with a seed and a budget; "
                                   "writes one CSV result file (first line: JSON provenance).")
    r.add_argument("--benchmark", "-b", required=True, help="benchmark name (see `benchsuite list`)")
    r.add_argument("--optimizer", "-o", required=True, help="optimizer name (see `benchsuite list`)")
    r.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    r.add_argument("--budget-evals", type=int, metavar="N", help="stop starting trials after N evaluations")
    r.add_argument("--budget-seconds", type=float, metavar="T", help="stop starting trials at simulated time T")
    r.add_argument("--workers", type=int, default=1, help="asynchronous parallel workers (default 1)")
    r.add_argument("--out", required=True, help="result file to write (CSV)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", dest="settings",
                   help="optimizer setting (repeatable); see `benchsuite describe OPTIMIZER`")
    r.add_argument("--benchmark-set", action="append", metavar="KEY=VALUE", dest="benchmark_settings",
                   help="benchmark setting (repeatable); see `benchsuite describe BENCHMARK`")
    r.add_argument("--meta", action="append", metavar="KEY=VALUE",
                   help="extra provenance to record (the workflow records the protocol)")
    r.add_argument("--no-overhead", action="store_true",
                   help="leave the optimizer's measured overhead off the simulated clock (fully deterministic times)")
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    e = sub.add_parser("evaluate", help="evaluate one configuration of a benchmark and print the result as JSON")
    e.add_argument("--benchmark", "-b", required=True, help="benchmark name")
    e.add_argument("--config", required=True, help='configuration as JSON, e.g. \'{"x1": 1.0, "x2": 2.0}\', or a string the space '
                        'accepts as it is (a NAS-Bench-201 architecture string \'|op~0|+|op~0|op~1|+|op~0|op~1|op~2|\')')
    e.add_argument("--fidelity", type=float, help="fidelity value (default: full)")
    e.add_argument("--seed", type=int, default=0, help="evaluation seed (default 0)")
    e.add_argument("--benchmark-set", action="append", metavar="KEY=VALUE", dest="benchmark_settings",
                   help="benchmark setting (repeatable)")

    sub.add_parser("list", help="list benchmarks and optimizers (built-in and plugins)")
    d = sub.add_parser("describe", help="describe a benchmark or optimizer: space, fidelity, optimum, settings")
    d.add_argument("name")

    # -- workflow subcommands (workflow, validate-protocol, analyse): benchsuite/cli_workflow.py --
    from .cli_workflow import add_workflow_parsers

    add_workflow_parsers(sub)
    return p


def _cmd_run(args: argparse.Namespace) -> int:
    from . import registry
    from .results import check_writable, write_result
    from .runner import check_budget, run
    from .settings import parse_assignments

    out = check_writable(args.out)
    check_budget(args.budget_evals, args.budget_seconds)
    opt_cls = registry.get_optimizer(args.optimizer)
    bench = registry.make_benchmark(args.benchmark, parse_assignments(args.benchmark_settings))
    opt_settings = parse_assignments(args.settings)
    meta = parse_assignments(args.meta)

    bars: list = []  # created on the first report, so a run refused up front prints only its error
    # A terminal gets a live bar; a log file (the workflow's rep*.log) gets a plain line at
    # most every 30 s, since \r-updates without a newline would sit in stderr's buffer.
    tty = sys.stderr.isatty()
    started = time.monotonic()
    last_line = [started]

    def progress(n: int, clock: float) -> None:
        if args.quiet:
            return
        if not tty:
            now = time.monotonic()
            if now - last_line[0] >= 30.0 or (args.budget_evals and n >= args.budget_evals):
                last_line[0] = now
                total = f"/{args.budget_evals}" if args.budget_evals else ""
                print(f"{args.optimizer} on {args.benchmark}: {n}{total} trials, simulated clock {clock:,.0f} s, "
                      f"{now - started:,.0f} s elapsed", file=sys.stderr, flush=True)
            return
        if not bars:
            from tqdm import tqdm

            bars.append(tqdm(total=args.budget_evals, desc=f"{args.optimizer} on {args.benchmark}", unit="trial",
                             file=sys.stderr, dynamic_ncols=True, mininterval=0.5))
        bar = bars[0]
        bar.update(n - bar.n)
        bar.set_postfix_str(f"clock {clock:,.0f}s", refresh=False)

    try:
        output = run(bench, opt_cls, seed=args.seed, budget_evals=args.budget_evals,
                     budget_seconds=args.budget_seconds, workers=args.workers, optimizer_settings=opt_settings,
                     include_overhead=not args.no_overhead, progress=progress, extra_provenance=meta or None)
    finally:
        for bar in bars:
            bar.close()
    write_result(out, output.rows, output.provenance)
    best = min((r["incumbent_test_loss"] for r in output.rows if r["incumbent_test_loss"] is not None), default=None)
    if not args.quiet:
        print(f"wrote {out} ({len(output.rows)} trials; final incumbent test loss {best})", file=sys.stderr)
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    import json

    from . import registry
    from .errors import InvalidConfigError
    from .settings import parse_assignments

    bench = registry.make_benchmark(args.benchmark, parse_assignments(args.benchmark_settings))
    try:
        raw = json.loads(args.config)
    except json.JSONDecodeError as exc:
        # not JSON: a space may take a configuration string as it is (a NAS-Bench-201 architecture string)
        try:
            config, fidelity = bench.check(args.config, args.fidelity)
        except InvalidConfigError as why:
            raise InvalidConfigError(f"--config is not valid JSON ({exc}), nor a configuration string "
                                     f"{args.benchmark!r} accepts ({why})") from None
    else:
        config, fidelity = bench.check(raw, args.fidelity)
    result = bench.evaluate(config, fidelity, seed=args.seed)
    print(json.dumps({"loss": result.loss, "cost_s": result.cost_s, "failed": result.failed,
                      "info": dict(result.info)}, default=str))
    return 0


def _cmd_list() -> int:
    from . import registry

    for title, table in (("benchmarks", registry.benchmarks()), ("optimizers", registry.optimizers())):
        print(f"{title}:")
        width = max((len(n) for n in table), default=0)
        for name, entry in table.items():
            src = "" if entry.source == "builtin" else f"  [{entry.source}]"
            print(f"  {name:<{width}}  {entry.description}{src}")
    return 0


def _cmd_describe(name: str) -> int:
    from . import registry
    from .errors import UnknownNameError

    if name in registry.benchmarks():
        print(registry.make_benchmark(name).describe())
    elif name in registry.optimizers():
        print(registry.get_optimizer(name).describe())
    else:
        raise UnknownNameError(f"no benchmark or optimizer named {name!r} (see `benchsuite list`)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``benchsuite`` console script."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["workflow"]:
        # `benchsuite workflow`: the options it does not know are Snakemake's (benchsuite/cli_workflow.py)
        from .cli_workflow import split_workflow_argv

        ours, snakemake_args = split_workflow_argv(argv[1:])
        args = parser.parse_args(["workflow", *ours])
        args.snakemake_args = snakemake_args
    else:
        args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "evaluate":
            return _cmd_evaluate(args)
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
    except BenchsuiteError as exc:
        print(f"benchsuite: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("benchsuite: interrupted; no result file was written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
