"""Regret of gp_ei on Branin and Hartmann6 over seeds, for a before/after comparison (issue 24, item 2).

Builds on ``benchmarks/quality_gp_ei.py``: each seed is one full run through the runner (the
``benchsuite run`` code path); the regret after ``k`` evaluations is the best loss among the first
``k`` minus the known optimum. The code measured is whatever ``benchsuite`` the interpreter imports,
so the "before" is the same script run against an older checkout::

    git archive 26bcf31 | tar -x -C /tmp/gp-before
    PYTHONPATH=/tmp/gp-before nice -n 5 .venv/bin/python studies/gp_ei_regret.py --label before \\
        --benchmark hartmann6 --evals 100 --seeds 10 --json studies/results/regret_before_hartmann6.json
    nice -n 5 .venv/bin/python studies/gp_ei_regret.py --label after --benchmark hartmann6 --evals 200 ...

``--summarise a.json b.json ...`` prints the before/after table (median, quartiles and mean of the
regret at each checkpoint) from saved files. Also records the process CPU seconds of each run.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

CHECKPOINTS = (25, 50, 100, 200)


def one_seed(bench_name: str, seed: int, evals: int, settings: dict) -> dict:
    """Run gp_ei once; return its best-so-far regret curve and CPU seconds."""
    import benchsuite
    from benchsuite.optimizers.gp_ei import GPEI
    from benchsuite.registry import make_benchmark
    from benchsuite.runner import run

    bench = make_benchmark(bench_name)
    t0, c0 = time.perf_counter(), time.process_time()
    out = run(bench, GPEI, seed=seed, budget_evals=evals, optimizer_settings=settings, include_overhead=True)
    best, curve = float("inf"), []
    for r in out.rows:
        if r["status"] == "ok":
            best = min(best, r["loss"])
        curve.append(best - bench.optimum)
    return {"seed": seed, "regret": curve, "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - t0,
            "overhead_s": sum(r["overhead_s"] for r in out.rows), "code": os.path.dirname(benchsuite.__file__)}


def summarise(paths: list[str]) -> None:
    """Print median [quartiles] and mean regret per checkpoint, pooling the files of one label and benchmark."""
    pooled: dict[tuple[str, str], dict] = {}
    for p in paths:
        with open(p) as fh:
            d = json.load(fh)
        key = (d["label"], d["benchmark"])
        entry = pooled.setdefault(key, {"evals": d["evals"], "runs": {}})
        entry["evals"] = min(entry["evals"], d["evals"])
        for r in d["runs"]:
            entry["runs"][r["seed"]] = r
    print("| label | benchmark | seeds | evaluations | median regret [q1, q3] | mean regret | CPU s per run |")
    print("|---|---|---|---|---|---|---|")
    for (label, bench), entry in sorted(pooled.items(), key=lambda kv: (kv[0][1], kv[0][0] != "before")):
        runs = list(entry["runs"].values())
        for k in CHECKPOINTS:
            if k > entry["evals"]:
                continue
            vals = sorted(r["regret"][k - 1] for r in runs)
            q = statistics.quantiles(vals, n=4, method="inclusive") if len(vals) > 1 else [vals[0]] * 3
            cpu = statistics.mean(r["cpu_s"] for r in runs)
            print(f"| {label} | {bench} | {len(runs)} | {k} | {q[1]:.3g} [{q[0]:.3g}, {q[2]:.3g}] | "
                  f"{statistics.mean(vals):.3g} | {cpu:.0f} (whole run of {entry['evals']}) |")


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--benchmark", choices=["branin", "hartmann6"], default="branin")
    ap.add_argument("--evals", type=int, default=50)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--label", default="")
    ap.add_argument("--set", action="append", default=[], help="gp_ei setting key=value (repeatable)")
    ap.add_argument("--json")
    ap.add_argument("--summarise", nargs="+", metavar="JSON")
    args = ap.parse_args()
    if args.summarise:
        summarise(args.summarise)
        return
    from benchsuite.settings import parse_assignments

    settings = parse_assignments(args.set)
    print(f"load average {os.getloadavg()}", flush=True)
    res = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        r = one_seed(args.benchmark, seed, args.evals, settings)
        res.append(r)
        print(f"seed {seed}: regret {r['regret'][-1]:.5g} after {args.evals}, CPU {r['cpu_s']:.0f} s, "
              f"wall {r['wall_s']:.0f} s", flush=True)
        if args.json:  # rewritten after every seed so that an interrupted study keeps what it has
            with open(args.json, "w") as fh:
                json.dump({"label": args.label, "benchmark": args.benchmark, "evals": args.evals,
                           "settings": settings, "runs": res}, fh)
    print(f"load average {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
