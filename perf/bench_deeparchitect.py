"""Speed of the DeepArchitect language: sample, replay, features and compile one architecture per space.

    OMP_NUM_THREADS=1 .venv/bin/python perf/bench_deeparchitect.py [--n 10] [--shape 3 32 32] [--json OUT]

For each space at its published size (deeparchitect.txt Sec. 7.1; ``nb201`` at C=16, N=5):

* ``sample``: one uniform walk (Algorithm 3), feasibility rejection included (Nasbench);
* ``walk``: one ``space.walk`` with uniform choices (what MCTS and evolution call; no rejection);
* ``validate``: replaying a stored value list (cache bypassed: a fresh space object);
* ``known``: ``validate`` of a value list this space object produced (its record, no replay);
* ``features``: the SMBO feature strings of one architecture, right after its walk;
* ``neighbours``: every architecture one value away, for the first ``--neighbours`` architectures;
* ``compile``: value list -> ``nn.Module`` with shapes inferred on a dummy batch, CPU;
* ``forward``: one forward pass of a batch of 2 on CPU (the dummy pass is of the same size).

Median milliseconds over ``n`` architectures (compile: ``max(2, n // 4)``), parameter counts
(median) and the value-list length.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import json
import statistics
import time

import numpy as np


def main() -> None:
    """Measure and print one row per space."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--shape", type=int, nargs=3, default=(3, 32, 32))
    ap.add_argument("--spaces", nargs="*", default=["genetic", "flat", "nasbench", "nasnet", "nb201"])
    ap.add_argument("--neighbours", type=int, default=1, help="architectures whose neighbours are timed")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()

    import torch

    from benchsuite.architectures.deeparchitect import make_space
    from benchsuite.training import count_parameters as count_params

    torch.set_num_threads(1)
    rows = []
    print(f"{'space':10s} {'len':>4s} {'sample ms':>10s} {'walk ms':>8s} {'validate ms':>12s} {'known ms':>9s} "
          f"{'features ms':>12s} {'neighbours ms':>14s} {'compile ms':>11s} {'forward ms':>11s} {'params':>10s}")
    for name in args.spaces:
        sp = make_space(name)
        rng = np.random.default_rng(0)
        t_sample, t_val, t_feat, t_comp, t_fwd, params, vals = [], [], [], [], [], [], []
        t_walk, t_known, t_nb, n_nb = [], [], [], []
        for k in range(args.n):
            t = time.perf_counter()
            sp.walk(lambda _p, _n, values: int(rng.integers(len(values))))
            t_walk.append(time.perf_counter() - t)
            t = time.perf_counter()
            v = sp.sample(rng)
            t_sample.append(time.perf_counter() - t)
            vals.append(v)
            t = time.perf_counter()
            sp.validate(list(v))
            t_known.append(time.perf_counter() - t)
            fresh = make_space(name)
            t = time.perf_counter()
            fresh.validate(list(v))
            t_val.append(time.perf_counter() - t)
            t = time.perf_counter()
            sp.features(v)
            t_feat.append(time.perf_counter() - t)
        for v in vals[:args.neighbours]:
            t = time.perf_counter()
            n_nb.append(len(sp.neighbours(v)))
            t_nb.append(time.perf_counter() - t)
        for v in vals[:max(2, args.n // 4)]:
            t = time.perf_counter()
            net = sp.build(v, tuple(args.shape))
            t_comp.append(time.perf_counter() - t)
            params.append(count_params(net))
            x = torch.zeros(2, *args.shape)
            with torch.no_grad():
                net.eval()
                t = time.perf_counter()
                net(x)
                t_fwd.append(time.perf_counter() - t)
        row = {"space": name, "length": len(vals[0]),
               "sample_ms": 1e3 * statistics.median(t_sample), "walk_ms": 1e3 * statistics.median(t_walk),
               "validate_ms": 1e3 * statistics.median(t_val), "known_ms": 1e3 * statistics.median(t_known),
               "features_ms": 1e3 * statistics.median(t_feat),
               "neighbours_ms": 1e3 * statistics.median(t_nb) if t_nb else float("nan"),
               "neighbours_count": n_nb, "compile_ms": 1e3 * statistics.median(t_comp),
               "forward_ms": 1e3 * statistics.median(t_fwd), "params_median": int(statistics.median(params))}
        rows.append(row)
        print(f"{name:10s} {row['length']:4d} {row['sample_ms']:10.2f} {row['walk_ms']:8.2f} "
              f"{row['validate_ms']:12.2f} {row['known_ms']:9.3f} {row['features_ms']:12.2f} "
              f"{row['neighbours_ms']:14.1f} {row['compile_ms']:11.1f} {row['forward_ms']:11.1f} "
              f"{row['params_median'] / 1e6:9.2f}M", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"shape": list(args.shape), "n": args.n, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
