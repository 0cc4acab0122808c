"""Re-evaluate each run's incumbent under other benchmark settings.

A protocol reduced for CPU (fewer training images, fewer epochs) reports higher errors than the
paper it follows; this script measures how much of the gap each reduction accounts for, by
training every run's best configuration again with the settings given here (dngo.txt Table 1's
logistic regression: the same incumbents with all 50,000 training images).

    BENCHSUITE_DATA=../shared/data OMP_NUM_THREADS=1 .venv/bin/python studies/rescore_incumbents.py \\
        results/dngo_table1/logreg_mnist_cpu/gp_ei/rep00[0-4].csv -b logreg_mnist \\
        --set n_train=10000 --set n_train=50000 --common epochs_factor=0.01 --common device=cpu

Each ``--set`` is one column (a setting changed from ``--common``); every incumbent is trained
once per column with evaluation seed 0. Prints one row per result file and the column means.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd

from benchsuite.registry import make_benchmark
from benchsuite.settings import parse_assignments


def _incumbent(path: str) -> dict:
    df = pd.read_csv(path, comment="#")
    ok = df[df["status"] == "ok"] if "status" in df else df
    return json.loads(ok["config"][ok["loss"].idxmin()])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="result files (CSV) of runs on one benchmark")
    ap.add_argument("-b", "--benchmark", required=True, help="registered benchmark to re-evaluate on")
    ap.add_argument("--common", action="append", default=[], metavar="KEY=VALUE", help="setting for every column")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="one column per --set")
    args = ap.parse_args(argv)
    common = parse_assignments(args.common)
    benches = {}
    for c in args.set or [None]:
        settings = {**common, **parse_assignments([c] if c else [])}
        benches[c or "as given"] = make_benchmark(args.benchmark, settings)
    rows = []
    for path in args.results:
        config = _incumbent(path)
        row = {"file": path}
        for name, bench in benches.items():
            t0 = time.perf_counter()
            r = bench.evaluate(config, seed=0)
            row[f"{name}: loss"] = r.loss
            row[f"{name}: test"] = (r.info or {}).get("test_loss")
            row[f"{name}: s"] = round(time.perf_counter() - t0, 1)
            print(json.dumps({"file": path, "column": name, "config": config, "loss": r.loss,
                              "test_loss": row[f"{name}: test"], "seconds": row[f"{name}: s"]}), flush=True)
        rows.append(row)
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False))
        print("mean:", table.drop(columns="file").apply(lambda s: np.nanmean(s.astype(float))).round(4).to_dict())


if __name__ == "__main__":
    main()
