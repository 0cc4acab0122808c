"""A result page's table from the committed runs alone: each optimizer's reported quantity per benchmark.

Reads ``reproductions/<protocol>/runs.columns.xz`` (what ``benchsuite reproductions`` reads), takes each
run's value at the protocol's table point (``analysis.scorecard.run_values``, the scorecard's own
reading) and prints a Markdown table: runs, mean evaluations, mean, standard deviation and standard
error, optionally as ``offset + scale * value`` (``--scale -100 --offset 100``: a test error as an
accuracy in percent).

    .venv/bin/python studies/committed_table.py deeparchitect_nb201 --scale -100 --offset 100
    .venv/bin/python studies/committed_table.py nb201 --benchmark nb201_cifar10 --scale -100 --offset 100
"""
from __future__ import annotations

import argparse
import math
import sys

from benchsuite.analysis.reproductions import default_root, load_committed
from benchsuite.analysis.scorecard import run_values
from benchsuite.paths import checkout_root
from benchsuite.protocol import load_protocol


def table(protocol_name: str, benchmark: str | None = None, scale: float = 1.0, offset: float = 0.0,
          digits: int = 2) -> str:
    """The Markdown table of one protocol's committed runs (one row per benchmark and optimizer)."""
    protocol = load_protocol(checkout_root() / "protocols" / f"{protocol_name}.yaml")
    df, _ = load_committed(default_root(), protocol_name)
    if df is None:
        raise SystemExit(f"{protocol_name}: no committed runs (reproductions/{protocol_name}/runs.columns.xz)")
    if benchmark:
        df = df[df["benchmark"] == benchmark]
    evals = df.groupby(["benchmark", "optimizer", "repetition"])["trial"].count().groupby(
        ["benchmark", "optimizer"]).mean()
    vals = run_values(protocol, df)
    vals["value"] = offset + scale * vals["value"].astype(float)
    rows = ["| benchmark | optimizer | runs | evaluations (mean) | mean | sd | se |", "|---|---|---:|---:|---:|---:|---:|"]
    for (b, o), g in vals.groupby(["benchmark", "optimizer"], sort=False):
        v = g["value"].to_numpy(float)
        sd = float(v.std(ddof=1)) if len(v) > 1 else math.nan
        rows.append(f"| {b} | {o} | {len(v)} | {evals[(b, o)]:.0f} | {v.mean():.{digits}f} | {sd:.{digits}f} | "
                    f"{sd / math.sqrt(len(v)):.{digits + 1}f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("protocol")
    ap.add_argument("--benchmark", default=None, help="only this benchmark label")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--offset", type=float, default=0.0)
    ap.add_argument("--digits", type=int, default=2)
    a = ap.parse_args(argv)
    print(table(a.protocol, a.benchmark, a.scale, a.offset, a.digits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
