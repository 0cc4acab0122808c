"""Our `nb201` protocol's final test accuracies next to those the NAS-Bench-201 authors published.

    .venv/bin/python analysis/nb201_published.py [--results results/nb201]

Reads every finished run under ``results/nb201/<benchmark>/<optimizer>/rep*.csv`` (all of them
or whichever have finished: the table says how many), takes each run's final incumbent test
error, and prints per dataset and optimizer the mean +- standard deviation of the test
accuracy in percent, the number of runs and the mean number of evaluations, beside the
published numbers for random search and regularized evolution (NAS-Bench-201, Dong & Yang,
ICLR 2020, Table 5: mean +- std over their runs of test accuracy after 200 epochs, searched
with a 12,000 s budget of 12-epoch proxy training; see protocols/nb201.yaml for what differs).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def published(protocol_path: Path | None = None) -> dict[tuple[str, str], tuple[float, float]]:
    """NAS-Bench-201 Table 5 (test accuracy %, mean, std) by (benchmark, optimizer label).

    The numbers are data in the ``published:`` block of ``protocols/nb201.yaml`` (with their source).
    """
    from benchsuite.paths import PROTOCOLS_DIR
    from benchsuite.protocol import load_protocol

    proto = load_protocol(protocol_path or PROTOCOLS_DIR / "nb201.yaml")
    return {(c.benchmark, c.optimizer): (c.value, c.error) for c in proto.published.cells
            if c.paper == "NAS-Bench-201" and c.optimizer is not None}


# the best test accuracy of any cell of the table (%), for the table's captions
OPTIMUM = {"nb201_cifar10": 94.37, "nb201_cifar100": 73.51, "nb201_imagenet16": 47.31}


def summarise(root: Path) -> list[dict]:
    """One row per (benchmark, optimizer label) with the final test accuracies of its runs."""
    from benchsuite.analysis.load import load_runs

    rows = []
    for bench_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for opt_dir in sorted(p for p in bench_dir.iterdir() if p.is_dir()):
            files = sorted(f for f in opt_dir.glob("rep*.csv") if not f.name.endswith(".partial.csv"))
            if not files:
                continue
            df = load_runs(files)
            last = df.groupby("repetition").tail(1)
            acc = 100.0 * (1.0 - last["incumbent_test_loss"].to_numpy())
            evals = df.groupby("repetition")["evaluation"].max().to_numpy()
            rows.append({"benchmark": bench_dir.name, "optimizer": opt_dir.name, "n": len(acc),
                         "mean": float(np.mean(acc)), "std": float(np.std(acc, ddof=1)) if len(acc) > 1 else 0.0,
                         "evals": float(np.mean(evals))})
    return rows


def to_markdown(rows: list[dict]) -> str:
    """The comparison table in Markdown."""
    out = ["| dataset | optimizer | runs | evaluations (mean) | test accuracy % (ours) | published (NAS-Bench-201 Table 5) |",
           "|---|---|---|---|---|---|"]
    table5 = published()
    for r in rows:
        name = r["optimizer"]
        pub = table5.get((r["benchmark"], name))
        pub_text = f"{pub[0]:.2f} +- {pub[1]:.2f}" if pub else ""
        out.append(f"| {r['benchmark']} (best {OPTIMUM.get(r['benchmark'], float('nan')):.2f}) | {name} | {r['n']} | "
                   f"{r['evals']:.0f} | {r['mean']:.2f} +- {r['std']:.2f} | {pub_text} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", type=Path, default=Path("results/nb201"))
    args = p.parse_args(argv)
    if not args.results.is_dir():
        p.error(f"{args.results} does not exist; run `snakemake nb201` (or some of its runs) first")
    print(to_markdown(summarise(args.results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
