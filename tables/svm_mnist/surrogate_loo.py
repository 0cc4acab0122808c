"""Leave-one-grid-point-out error of the SVM surrogate on the table.

    python tables/svm_mnist/surrogate_loo.py [--table PATH] [--out tables/svm_mnist/surrogate_loo.md]

For every grid point (log C, log gamma, s) the surrogate's interpolant is refitted without
that point and its prediction compared with the point's tabulated mean validation error
(closed form, Rippa's identity, see ``CubicRbf.loo_residuals``). Several input scalings
(weight of the log2 s axis) and ridges are compared; the chosen pair is marked. For
reference: the replicate standard deviation of the table (the noise of a single lookup).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from benchsuite.benchmarks import svm_mnist as sm  # noqa: E402
from benchsuite.surrogate import CubicRbf, surrogate_training_data  # noqa: E402
from benchsuite.tabular import Table  # noqa: E402

S_WEIGHTS = (0.25, 0.5, 1.0, 2.0)
SMOOTHINGS = (0.0, 1e-4, 1e-3)


def loo_table(table: Table) -> tuple[list[dict], dict]:
    """LOO statistics for every (s weight, ridge) pair, and the per-s breakdown of the chosen one."""
    base = surrogate_training_data(table, sm.SURROGATE_S_WEIGHT, fidelity_log=True)
    rows, chosen = [], {}
    for w in S_WEIGHTS:
        x = base["x"].copy()
        x[:, 2] *= w / sm.SURROGATE_S_WEIGHT
        for lam in SMOOTHINGS:
            e = CubicRbf(x, base["mean"], lam).loo_residuals()
            ec = CubicRbf(x, base["log_cost"], lam).loo_residuals()
            row = {"s_weight": w, "smoothing": lam, "rmse": float(np.sqrt(np.mean(e**2))),
                   "mae": float(np.mean(np.abs(e))), "p90": float(np.quantile(np.abs(e), 0.9)),
                   "max": float(np.abs(e).max()), "cost_rmse_log": float(np.sqrt(np.mean(ec**2)))}
            rows.append(row)
            if w == sm.SURROGATE_S_WEIGHT and lam == sm.SURROGATE_SMOOTHING:
                i_s = base["index"][:, 2]
                chosen = {float(table.fidelities[k]): (float(np.sqrt(np.mean(e[i_s == k] ** 2))),
                                              float(np.mean(base["std"][i_s == k])))
                          for k in range(table.fidelities.size)}
    return rows, chosen


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--table", default="")
    p.add_argument("--out", type=Path, default=HERE / "surrogate_loo.md")
    args = p.parse_args(argv)
    table = sm.load_table(args.table or None)
    rows, per_s = loo_table(table)
    n = int(np.isfinite(table.loss[..., 0]).sum())
    lines = ["# Leave-one-grid-point-out error of `svm_mnist_surrogate`",
             "",
             f"Table {table.path.name} (sha256 {table.sha256[:16]}..., "
             f"{'complete' if table.complete else 'PARTIAL'}), {n} grid points "
             "(log C x log gamma x s). Target: mean validation error over the replicates; "
             "residual = target minus the prediction of the interpolant refitted without the point. "
             "Cost: RMSE of log CPU seconds.",
             "",
             "| s weight | ridge | RMSE | MAE | 90% abs | max abs | cost RMSE (log s) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        mark = " (chosen)" if (r["s_weight"], r["smoothing"]) == (sm.SURROGATE_S_WEIGHT, sm.SURROGATE_SMOOTHING) else ""
        lines.append(f"| {r['s_weight']:g}{mark} | {r['smoothing']:g} | {r['rmse']:.4f} | {r['mae']:.4f} | "
                     f"{r['p90']:.4f} | {r['max']:.4f} | {r['cost_rmse_log']:.3f} |")
    lines += ["", "Chosen surrogate by s: LOO RMSE vs. mean replicate std (the table's own noise):", "",
              "| s | LOO RMSE | replicate std |", "|---|---|---|"]
    for s, (rmse, std) in per_s.items():
        lines.append(f"| {'1' if s == 1 else f'1/{round(1 / s)}'} | {rmse:.4f} | {std:.4f} |")
    text = "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
