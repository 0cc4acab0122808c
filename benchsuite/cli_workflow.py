"""Workflow subcommands of the ``benchsuite`` CLI: ``validate-protocol`` and ``analyse``.

``benchsuite/cli.py`` wires them in with two calls::

    from .cli_workflow import add_workflow_parsers, run_workflow_command
    add_workflow_parsers(sub)                      # in _parser(), after the other subcommands
    code = run_workflow_command(args)              # in main(), before print_help(); None if not ours

Errors raise :class:`~benchsuite.errors.BenchsuiteError` subclasses, which ``main`` turns
into one line and exit status 2.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

COMMANDS = ("validate-protocol", "analyse")


def add_workflow_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``validate-protocol`` and ``analyse`` subcommands to the CLI's subparsers."""
    v = sub.add_parser("validate-protocol", help="check protocol files and show the runs they expand to",
                       description="Validate experiment protocols (protocols/*.yaml) as the workflow does before "
                                   "any job runs; print each protocol's runs, budget and seeds.")
    v.add_argument("files", nargs="+", metavar="FILE", help="protocol YAML files")
    v.add_argument("--jobs", action="store_true", help="also list every run with its seed and result file")
    a = sub.add_parser("analyse", help="aggregate a protocol's result files and write its figures, tables and report",
                       description="What the workflow's aggregate and report steps do, for result files that exist: "
                                   "results/<protocol>/runs.csv.gz and reports/<protocol>/ (PNG, PDF, MD, CSV, TeX).")
    a.add_argument("file", metavar="FILE", help="protocol YAML file")
    a.add_argument("--root", default=".", help="folder holding results/ and reports/ (default: .)")


def _validate(files: list[str], jobs: bool) -> int:
    from .protocol import load_protocol

    for f in files:
        p = load_protocol(f)
        runs = p.jobs()
        print(f"{f}: protocol {p.name!r} is valid: {len(p.benchmarks)} benchmark(s) x {len(p.optimizers)} "
              f"optimizer(s) x {p.repetitions} repetition(s) = {len(runs)} runs, {p.workers} worker(s), "
              f"reports {p.quantity}")
        for label, why in p.skipped:
            print(f"  skipped optimizer {label}: {why}")
        if jobs:
            for j in runs:
                inst = j.benchmark.instances
                extra = f"  {inst[0]}={j.benchmark.settings_for(j.repetition)[inst[0]]}" if inst else ""
                print(f"  {j.result_path}  seed {j.seed}{extra}")
    return 0


def _analyse(file: str, root: str) -> int:
    from analysis.load import load_protocol_results, write_aggregate
    from analysis.outputs import aggregate_outputs
    from analysis.report import write_protocol_report

    from .protocol import load_protocol

    p = load_protocol(file)
    base = Path(root)
    df = load_protocol_results(p, root=base)
    runs, prov = (base / x for x in aggregate_outputs(p))
    runs.parent.mkdir(parents=True, exist_ok=True)
    write_aggregate(df, runs, prov)
    written = write_protocol_report(p, runs, prov, base / "reports" / p.name)
    print(f"wrote {len(written)} files to {base / 'reports' / p.name}", file=sys.stderr)
    return 0


def run_workflow_command(args: argparse.Namespace) -> int | None:
    """Run ``args.command`` if it is one of :data:`COMMANDS`; ``None`` otherwise."""
    if args.command == "validate-protocol":
        return _validate(args.files, args.jobs)
    if args.command == "analyse":
        return _analyse(args.file, args.root)
    return None
