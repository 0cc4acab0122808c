"""Are the networks of the CPU-sized NASBOT search still learning when their training stops?

The scorecard puts ``nasbot_cpu`` (MLPs of at most 15 layers of at most 64 units, 1,000 Adam
iterations, 30 evaluations) beside nasbot.txt Table 3, whose searches trained every network for
20,000 iterations for 8 hours. This reads the committed runs alone
(``reproductions/nasbot_cpu/runs.columns.xz``) and measures, per benchmark, what the training budget
does to the search: each trial's ``info`` holds its validation curve (every 200 iterations), so the
drop of validation MSE over the last 200 and 400 iterations shows whether the networks had
converged; the best validation MSE of all networks trained says what the 30-evaluation searches
could have found at this size; the paper's values say where they would have to land.

    .venv/bin/python studies/nasbot_cpu_training.py [--json studies/results/nasbot_cpu_training.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np
import pandas as pd

from benchsuite.analysis.reproductions import default_root, load_committed
from benchsuite.paths import checkout_root
from benchsuite.protocol import load_protocol


def curves(df: pd.DataFrame) -> pd.DataFrame:
    """One row per trial with a curve of at least 3 points: the last three validation MSEs."""
    rows = []
    for r in df.itertuples(index=False):
        try:
            curve = json.loads(r.info).get("curve") or []
        except (TypeError, ValueError):
            continue
        if len(curve) >= 3 and r.status == "ok":
            rows.append({"benchmark": r.benchmark, "optimizer": r.optimizer, "repetition": r.repetition,
                         "loss": float(r.loss), "v_minus400": float(curve[-3]["val_loss"]),
                         "v_minus200": float(curve[-2]["val_loss"]), "v_end": float(curve[-1]["val_loss"]),
                         "iterations": int(curve[-1]["iteration"])})
    return pd.DataFrame(rows)


def summary(top: int = 30) -> dict[str, Any]:
    protocol = load_protocol(checkout_root() / "protocols" / "nasbot_cpu.yaml")
    df, _ = load_committed(default_root(), "nasbot_cpu")
    if df is None:
        raise SystemExit("nasbot_cpu: no committed runs (reproductions/nasbot_cpu/runs.columns.xz)")
    paper: dict[str, dict[str, float]] = {}
    for cell in protocol.published.cells if protocol.published else ():
        paper.setdefault(cell.benchmark, {})[cell.method] = cell.value
    out: dict[str, Any] = {}
    for bench, g in curves(df).groupby("benchmark"):
        best = g.nsmallest(top, "loss")
        values = paper.get(bench, {})
        lowest = min(values.values()) if values else float("nan")
        out[bench] = {
            "runs": int(g[["optimizer", "repetition"]].drop_duplicates().shape[0]),
            "networks": len(g),
            "iterations": int(g["iterations"].max()),
            "share_still_falling_last200": round(float((g["v_end"] < g["v_minus200"]).mean()), 3),
            f"best{top}_median_ratio_last200": round(float((best["v_end"] / best["v_minus200"]).median()), 3),
            f"best{top}_median_ratio_last400": round(float((best["v_end"] / best["v_minus400"]).median()), 3),
            "min_validation_mse": round(float(g["loss"].min()), 5),
            "validation_mse_quantiles_1_5_50": [round(float(q), 5) for q in g["loss"].quantile([0.01, 0.05, 0.5])],
            "paper_values": values,
            "networks_below_lowest_paper_value": int((g["loss"] < lowest).sum()),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the summary to this file")
    ap.add_argument("--top", type=int, default=30, help="how many of the best networks the ratios are taken over")
    a = ap.parse_args(argv)
    res = summary(a.top)
    text = json.dumps(res, indent=1)
    print(text)
    if a.json:
        from benchsuite.results import atomic_write_text

        atomic_write_text(a.json, text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
