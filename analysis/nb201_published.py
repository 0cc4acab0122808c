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

# NAS-Bench-201 (ICLR 2020) Table 5, test accuracy (%) mean +- std
PUBLISHED = {
    ("nb201_cifar10", "random_search"): (93.70, 0.36),
    ("nb201_cifar10", "regularized_evolution"): (93.92, 0.30),
    ("nb201_cifar100", "random_search"): (71.04, 1.07),
    ("nb201_cifar100", "regularized_evolution"): (71.84, 0.99),
    ("nb201_imagenet16", "random_search"): (44.57, 1.25),
    ("nb201_imagenet16", "regularized_evolution"): (45.54, 1.03),
}
OPTIMUM = {"nb201_cifar10": 94.37, "nb201_cifar100": 73.51, "nb201_imagenet16": 47.31}


def summarise(root: Path) -> list[dict]:
    """One row per (benchmark, optimizer label) with the final test accuracies of its runs."""
    from benchsuite.analysis.load import load_runs

    rows = []
    for bench_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for opt_dir in sorted(p for p in bench_dir.iterdir() if p.is_dir()):
            files = sorted(opt_dir.glob("rep*.csv"))
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
    for r in rows:
        name = r["optimizer"]
        pub_key = "regularized_evolution" if name in ("regularized_evolution", "rea_nb201") else name
        pub = PUBLISHED.get((r["benchmark"], pub_key))
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
