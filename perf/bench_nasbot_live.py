"""Seconds per SGD iteration and per evaluation of the live NASBOT benchmarks (``nasbot_live``).

    .venv/bin/python perf/bench_nasbot_live.py [--device auto|cpu|cuda] [--threads 1]
        [--mlp-iters 60] [--cnn-iters 12] [--skip-cnn] [--json FILE]

Three networks, each trained through the benchmark itself (``evaluate``), so the time is what
a trial costs:

* a typical paper-sized MLP on naval: the network ``LayerGraphSpace("mlp").sample`` draws
  from seed 0 with the authors' constraints (5-60 layers, 8-1024 units), batch 256;
* a CPU-protocol MLP on naval (at most 15 layers of at most 64 units, ``nasbot_cpu.yaml``);
* a typical CNN on CIFAR-10: ``LayerGraphSpace("cnn").sample`` from seed 0, batch 32 (the
  paper's), 2,000 training images (the per-iteration time does not depend on the set size).

Each network is trained for ``n`` and for ``2n`` iterations, scored once at the end; the
seconds per iteration are the difference of the two costs over ``n`` (what is left of the
network build, data placement and the final scoring cancels). The script also prints the
projected cost of one full evaluation: 20,000 iterations (MLPs) or 60,000 (CNN), plus the
scorings of the authors' code (every 100 / 4,000 steps), from a measured scoring time.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import json
import os
import platform

import numpy as np


def per_iteration(bench_name: str, settings: dict, n: int, seed: int = 0) -> dict:
    """Train the seed-``seed`` sample of the benchmark's space for n and 2n iterations; seconds per iteration."""
    from benchsuite.registry import make_benchmark

    bench = make_benchmark(bench_name, {**settings, "iterations": 2 * n, "eval_every": 2 * n, "test_eval": False})
    bench.prepare()
    g = bench.space.sample(np.random.default_rng(seed))
    bench.evaluate(g, n, seed=0)  # warm-up: the first call pays for one-time set-up
    short = bench.evaluate(g, n, seed=0)
    long = bench.evaluate(g, 2 * n, seed=0)
    if short.failed or long.failed:
        raise SystemExit(f"training failed: {short.info.get('error') or long.info.get('error')}")
    it_s = (long.cost_s - short.cost_s) / n
    # one scoring of the validation set: what the short run cost beyond its iterations, minus a build estimate
    score_s = max(0.0, short.cost_s - n * it_s)
    return {"benchmark": bench_name, "n_layers": g.n_layers, "n_params": short.info["n_params"],
            "device": short.info["device"], "precision": short.info["precision"], "batch_size": bench.settings[
                "batch_size"], "iteration_s": it_s, "overhead_and_one_scoring_s": score_s,
            "cost_n_s": short.cost_s, "cost_2n_s": long.cost_s, "n": n, "n_val": len(bench.splits().y_val)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mlp-iters", type=int, default=60)
    ap.add_argument("--cnn-iters", type=int, default=12)
    ap.add_argument("--skip-cnn", action="store_true")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    common = {"device": args.device, "threads": args.threads}
    rows = []
    cases = [
        ("MLP naval, paper-sized (authors' constraints)", "nasbot_mlp_naval", {**common}, args.mlp_iters,
         20_000, 100),
        ("MLP naval, CPU protocol (<= 15 layers, <= 64 units)", "nasbot_mlp_naval",
         {**common, "max_num_layers": 15, "max_num_units_per_layer": 64}, args.mlp_iters, 1_000, 200),
    ]
    if not args.skip_cnn:
        cases.append(("CNN CIFAR-10, paper-sized (authors' constraints), batch 32", "nasbot_cnn_cifar10",
                      {**common, "n_train": 2000, "n_val": 500, "n_test": 500}, args.cnn_iters, 60_000, 4_000))
    for label, name, settings, n, full, every in cases:
        row = per_iteration(name, settings, n)
        row["label"] = label
        row["projected_full_eval_s"] = full * row["iteration_s"] + (full // every) * row["overhead_and_one_scoring_s"]
        row["projected_iterations"] = full
        rows.append(row)
        print(f"{label}: {row['n_layers']} layers, {row['n_params']:,} parameters, on {row['device']} "
              f"[{row['precision']}], batch {row['batch_size']}: {1e3 * row['iteration_s']:.2f} ms per iteration "
              f"(costs {row['cost_n_s']:.2f} s for {n} and {row['cost_2n_s']:.2f} s for {2 * n} iterations); "
              f"projected {full:,}-iteration evaluation with the authors' scorings: "
              f"{row['projected_full_eval_s'] / 60:.1f} min", flush=True)
    meta = {"machine": platform.machine(), "cpus": os.cpu_count(), "threads": args.threads}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
