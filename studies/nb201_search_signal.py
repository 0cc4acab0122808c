"""How much of our NAS-Bench-201 lead over the authors' Table 5 the search signal and the budget explain.

The authors' random search and REA (NAS-Bench-201, Dong & Yang 2020, Sec. 5) search on 12-epoch
validation accuracy with a 12,000 s budget of 12-epoch training; the ``nb201`` protocol searches on
one seed's 200-epoch validation error with about 330 evaluations (4 workers). The table has only
200-epoch numbers, so the 12-epoch signal cannot be replayed; what can be measured is random search
itself, by Monte Carlo over the table (each draw: ``k`` architectures uniformly with replacement, the
incumbent chosen by a signal, its 200-epoch test accuracy reported):

* ``k`` = the evaluations our committed random-search runs made (per dataset), and a grid of smaller ``k``;
* the signal: one training seed's 200-epoch validation error (ours), the mean test error (an oracle).

If ours equals the oracle, our signal is as good as searching on test; the ``k`` at which our signal
falls to the paper's mean says how many of our evaluations the authors' search was worth.

    .venv/bin/python studies/nb201_search_signal.py [--draws 4000] [--json studies/results/nb201_search_signal.json]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import h5py
import numpy as np

from benchsuite.analysis.reproductions import read_runs, runs_path

REPO = Path(__file__).resolve().parents[1]
TASKS = {"cifar10": "nb201_cifar10", "cifar100": "nb201_cifar100", "imagenet16": "nb201_imagenet16"}
PAPER_RS = {"cifar10": (93.70, 0.36), "cifar100": (71.04, 1.07), "imagenet16": (44.57, 1.25)}  # Table 5, mean, sd


def random_search(val: np.ndarray, n_seeds: np.ndarray, test: np.ndarray, k: int, draws: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Test accuracy (%) of the incumbent of ``draws`` random searches of ``k`` evaluations: by one seed's
    validation error, and by the test error itself."""
    idx = rng.integers(0, len(test), size=(draws, k))
    seed = rng.integers(0, 1 << 30, size=(draws, k)) % n_seeds[idx]
    by_val = idx[np.arange(draws), np.argmin(val[idx, seed], axis=1)]
    by_test = idx[np.arange(draws), np.argmin(test[idx], axis=1)]
    return 100 * (1 - test[by_val]), 100 * (1 - test[by_test])


def main() -> None:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    runs = read_runs(runs_path(REPO / "reproductions/nb201"), decode=False)
    rs = runs[runs.optimizer == "random_search"].groupby(["benchmark", "repetition"])["evaluation"].max()
    out = {}
    print("| dataset | k (evaluations) | ours: by 200-epoch validation (one seed) | oracle: by test | paper RS |")
    print("|---|---|---|---|---|")
    with h5py.File(REPO / "tables/nas_bench_201/nas_bench_201.h5", "r") as f:
        for task, label in TASKS.items():
            g = f[task]
            test = g["test_error"][...].ravel()
            val = g["val_error"][...].reshape(len(test), -1)
            n_seeds = g["n_seeds"][...].ravel().astype(int)
            k_ours = int(round(rs.loc[label].mean()))
            rows = []
            for k in sorted({k_ours, 300, 100, 50, 25, 10, 5}, reverse=True):
                a, b = random_search(val, n_seeds, test, k, args.draws, rng)
                rows.append({"k": k, "ours_mean": a.mean(), "ours_sd": a.std(), "oracle_mean": b.mean(),
                             "oracle_sd": b.std()})
                p = PAPER_RS[task]
                tag = " (our runs' mean)" if k == k_ours else ""
                print(f"| {label} | {k}{tag} | {a.mean():.2f} +- {a.std():.2f} | {b.mean():.2f} +- {b.std():.2f} | "
                      f"{p[0]:.2f} +- {p[1]:.2f} |")
            out[label] = {"k_ours": k_ours, "paper_rs": PAPER_RS[task], "rows": rows}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
