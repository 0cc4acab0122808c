"""``python -m benchsuite.analysis``: the workflow's aggregation and report steps.

    python -m benchsuite.analysis aggregate PROTOCOL.yaml           # results/<p>/runs.csv.gz + provenance.json
    python -m benchsuite.analysis report PROTOCOL.yaml              # reports/<p>/ figures, tables, index.md
    python -m benchsuite.analysis index P1.yaml P2.yaml --out reports/index.md
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchsuite.errors import BenchsuiteError


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m benchsuite.analysis``."""
    p = argparse.ArgumentParser(prog="python -m benchsuite.analysis", description="aggregate result files and write reports")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("aggregate", help="load all result files of a protocol into one tidy table")
    a.add_argument("protocol")
    a.add_argument("--results", default="results", help="results folder (default results)")
    r = sub.add_parser("report", help="figures, tables and the report page of one protocol")
    r.add_argument("protocol")
    r.add_argument("--results", default="results")
    r.add_argument("--reports", default="reports", help="reports folder (default reports)")
    i = sub.add_parser("index", help="the top-level report page over several protocols")
    i.add_argument("protocols", nargs="+")
    i.add_argument("--reports", default="reports")
    i.add_argument("--out", default=None, help="default REPORTS/index.md")
    i.add_argument("--results", default=None, help="results folder: protocols with missing runs there are marked")
    args = p.parse_args(argv)
    try:
        from benchsuite.protocol import load_protocol

        from .outputs import aggregate_outputs

        if args.command == "aggregate":
            from .load import load_protocol_results, write_aggregate

            proto = load_protocol(args.protocol)
            df = load_protocol_results(proto, root=Path(args.results).parent)
            runs, prov = aggregate_outputs(proto, args.results)
            write_aggregate(df, runs, prov)
        elif args.command == "report":
            from .report import write_protocol_report

            proto = load_protocol(args.protocol)
            runs, prov = aggregate_outputs(proto, args.results)
            write_protocol_report(proto, runs, prov, Path(args.reports) / proto.name)
        else:
            from .report import write_index

            protos = [load_protocol(x) for x in args.protocols]
            write_index(protos, args.reports, args.out or Path(args.reports) / "index.md",
                        results_root=None if args.results is None else Path(args.results).parent)
    except BenchsuiteError as exc:
        print(f"analysis: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
