"""Smoke check of protocols/combo_binary.yaml: every optimizer, a few repetitions, a small budget, the authors' instances.

Not the paper's table (170 evaluations x 25 repetitions is the lead's run): it checks that
every optimizer of the protocol runs on the COMBO authors' instances without failed trials
and prints the best value each run found, per (benchmark, optimizer), with the pair of
seeds it solved. Run::

    OMP_NUM_THREADS=1 nice -n 5 .venv/bin/python studies/combo_binary_smoke.py --reps 0 5 --budget 40

A cheap cell at the paper's size (BOCS's SA costs about a CPU second per run)::

    .venv/bin/python studies/combo_binary_smoke.py --reps $(seq 0 24) --budget 170 \
        --benchmarks ising_lambda0 --optimizers simulated_annealing_bocs
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from benchsuite.protocol import load_protocol
from benchsuite.registry import get_optimizer, make_benchmark
from benchsuite.runner import run


def main() -> None:
    """Run the selected jobs of the protocol at a small budget and print one line per run."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--protocol", default="protocols/combo_binary.yaml")
    ap.add_argument("--reps", type=int, nargs="+", default=[0, 5])
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--benchmarks", nargs="*", default=["ising_lambda0", "contamination_lambda0"])
    ap.add_argument("--optimizers", nargs="*", default=[], help="optimizer labels (default: all)")
    args = ap.parse_args()
    proto = load_protocol(args.protocol)
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    rows = []
    for job in proto.jobs():
        if job.repetition not in args.reps or (args.benchmarks and job.benchmark.label not in args.benchmarks):
            continue
        if args.optimizers and job.optimizer.label not in args.optimizers:
            continue
        bench = make_benchmark(job.benchmark.name, job.benchmark.settings_for(job.repetition))
        c0, w0 = time.process_time(), time.perf_counter()
        out = run(bench, get_optimizer(job.optimizer.name), seed=job.seed, budget_evals=args.budget,
                  optimizer_settings=job.optimizer.settings, include_overhead=False)
        losses = [r["loss"] for r in out.rows if r["status"] == "ok"]
        row = {"benchmark": job.benchmark.label, "optimizer": job.optimizer.label, "rep": job.repetition,
               "pair": list(bench.authors_pair) if bench.authors_pair else None, "n": len(out.rows),
               "failed": len(out.rows) - len(losses), "best": round(min(losses), 6),
               "cpu_s": round(time.process_time() - c0, 1), "wall_s": round(time.perf_counter() - w0, 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    by_cell: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        by_cell.setdefault((r["benchmark"], r["optimizer"]), []).append(r["best"])
    for (b, o), v in by_cell.items():
        se = float(np.std(v, ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan")
        print(json.dumps({"cell": [b, o], "runs": len(v), "mean_best": round(float(np.mean(v)), 4),
                          "std_err": round(se, 4)}))
    print(json.dumps({"runs": len(rows), "failed_trials": sum(r["failed"] for r in rows),
                      "cpu_s": round(time.process_time() - t_cpu, 1), "wall_s": round(time.perf_counter() - t_wall, 1),
                      "load_average": os.getloadavg()}))


if __name__ == "__main__":
    main()
