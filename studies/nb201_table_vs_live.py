"""How the table's ranking of NAS-Bench-201 cells compares with live training at small CPU settings.

    .venv/bin/python studies/nb201_table_vs_live.py [--n-cells 10] [--channels 8] [--cells-per-stage 1]
        [--n-train 2000] [--n-val 1000] [--epochs 4] [--seed 0] [--out table_vs_live.json]

Picks ``n_cells`` connected cells spread over the table's CIFAR-10 range (evenly spaced
quantiles of the mean validation error, drawn with ``seed``), trains each with
``nb201_live`` (the same network, NAS-Bench-201's recipe, at the given small sizes, one torch
thread) and prints both validation errors per cell and the Spearman rank correlation between
the table's mean (200 epochs, full network, 25k images) and the live one. Small settings
change the network and the data, so a modest correlation is what to expect; the number is
reported as it comes out.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    from scipy.stats import spearmanr

    from benchsuite.architectures import nb201
    from benchsuite.registry import make_benchmark

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n-cells", type=int, default=10)
    p.add_argument("--channels", type=int, default=8)
    p.add_argument("--cells-per-stage", type=int, default=1)
    p.add_argument("--n-train", type=int, default=2000)
    p.add_argument("--n-val", type=int, default=1000)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="", help="also write the per-cell numbers as JSON here")
    args = p.parse_args(argv)

    table = make_benchmark("nb201_cifar10")
    mean = table.table.seed_mean()[..., 0].reshape(-1)
    configs = nb201.all_configs()
    connected = np.array([nb201.is_connected(c) for c in configs])
    rows = np.flatnonzero(connected & np.isfinite(mean))
    order = rows[np.argsort(mean[rows])]
    rng = np.random.default_rng(args.seed)
    # one cell from each of n equal-width quantile bins of the table's validation error
    bins = np.array_split(order, args.n_cells)
    picked = [int(b[rng.integers(len(b))]) for b in bins]
    live = make_benchmark("nb201_live", {"channels": args.channels, "cells_per_stage": args.cells_per_stage,
                                         "n_train": args.n_train, "n_val": args.n_val, "n_test": 200,
                                         "epochs": args.epochs, "threads": 1, "test_eval": False})
    live.prepare()
    out = []
    for k, r in enumerate(picked):
        cfg = configs[r]
        t = time.perf_counter()
        res = live.evaluate(cfg, None, seed=args.seed + k)
        out.append({"arch": nb201.to_arch_string(cfg), "table_val_error": float(mean[r]),
                    "live_val_error": float(res.loss), "failed": res.failed, "seconds": time.perf_counter() - t})
        print(f"[{k + 1}/{len(picked)}] table {mean[r]:.4f}  live {res.loss:.4f}  "
              f"({out[-1]['seconds']:.0f} s)  {out[-1]['arch']}", flush=True)
    ok = [o for o in out if not o["failed"]]
    rho, pval = spearmanr([o["table_val_error"] for o in ok], [o["live_val_error"] for o in ok])
    print(f"Spearman rank correlation, table (200 epochs, C=16, N=5, 25k images) vs live "
          f"(C={args.channels}, N={args.cells_per_stage}, {args.n_train} images, {args.epochs} epochs): "
          f"{rho:.3f} (p = {pval:.3f}, {len(ok)} cells)")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"settings": vars(args), "cells": out, "spearman": rho, "p_value": pval}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
