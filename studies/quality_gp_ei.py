"""Quality of gp_ei on Branin and Hartmann6 over seeds (issue 5, "Quality on synthetic problems").

Targets: on Branin within 0.01 of 0.397887 after 50 evaluations, on Hartmann6 within 0.1
of -3.32237 after 100 evaluations, in the median over 10 seeds. Each seed is one full run
through the runner (same code path as ``benchsuite run``); the quantity is the best loss
evaluated so far (= the incumbent's loss: gp_ei's incumbent is the best observation).

    nice .venv/bin/python studies/quality_gp_ei.py --benchmark branin --evals 50 --seeds 10 --jobs 2
    nice .venv/bin/python studies/quality_gp_ei.py --benchmark hartmann6 --evals 100 --seeds 10 --jobs 2

Prints one line per seed and the median gap to the optimum; ``--json`` writes everything.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from multiprocessing import Pool

TARGETS = {"branin": (50, 0.01), "hartmann6": (100, 0.1)}


def one_seed(args: tuple[str, int, int, dict]) -> dict:
    """Run gp_ei once and return its best-so-far curve."""
    bench_name, seed, evals, settings = args
    from benchsuite.registry import make_benchmark
    from benchsuite.runner import run
    from benchsuite.optimizers.gp_ei import GPEI

    bench = make_benchmark(bench_name)
    t0 = time.perf_counter()
    out = run(bench, GPEI, seed=seed, budget_evals=evals, optimizer_settings=settings, include_overhead=True)
    best, curve = float("inf"), []
    for r in out.rows:
        if r["status"] == "ok":
            best = min(best, r["loss"])
        curve.append(best)
    return {"seed": seed, "best": best, "gap": best - bench.optimum, "curve": curve,
            "wall_s": time.perf_counter() - t0, "mean_overhead_s": sum(r["overhead_s"] for r in out.rows) / len(out.rows)}


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--benchmark", choices=sorted(TARGETS), default="branin")
    ap.add_argument("--evals", type=int, default=None)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--seed-list", help="comma-separated seeds (overrides --seeds/--first-seed)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    evals = args.evals or TARGETS[args.benchmark][0]
    tol = TARGETS[args.benchmark][1]
    seeds = ([int(v) for v in args.seed_list.split(",")] if args.seed_list
             else list(range(args.first_seed, args.first_seed + args.seeds)))
    tasks = [(args.benchmark, s, evals, {}) for s in seeds]
    res = []
    with Pool(args.jobs) as pool:
        for r in pool.imap_unordered(one_seed, tasks):
            res.append(r)
            print(f"seed {r['seed']}: best {r['best']:.5f} gap {r['gap']:.5f} wall {r['wall_s']:.0f} s "
                  f"mean overhead {r['mean_overhead_s']:.2f} s", flush=True)
    res.sort(key=lambda r: r["seed"])
    gaps = [r["gap"] for r in res]
    med = statistics.median(gaps)
    print(f"{args.benchmark}: median gap after {evals} evaluations over {len(res)} seeds = {med:.5f} "
          f"(target < {tol}); within target: {sum(g < tol for g in gaps)}/{len(gaps)}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"benchmark": args.benchmark, "evals": evals, "tolerance": tol, "median_gap": med,
                       "runs": res}, fh, indent=1)


if __name__ == "__main__":
    main()
