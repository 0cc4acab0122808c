"""Speed of the DeepArchitect language: sample, replay, features and compile one architecture per space.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_deeparchitect.py [--n 10] [--shape 3 32 32] [--json OUT]

For each space at its published size (deeparchitect.txt Sec. 7.1; ``nb201`` at C=16, N=5):

* ``sample``: one uniform walk (Algorithm 3), feasibility rejection included (Nasbench);
* ``validate``: replaying a stored value list (cache bypassed: a fresh space object);
* ``features``: the SMBO feature strings of one architecture (cached graph);
* ``compile``: value list -> ``nn.Module`` with shapes inferred on a dummy batch, CPU;
* ``forward``: one forward pass of a batch of 2 on CPU (the dummy pass is of the same size).

Median milliseconds over ``n`` architectures (compile: ``max(2, n // 4)``), parameter counts
(median) and the value-list length.
"""
from __future__ import annotations

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
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()

    import torch

    from benchsuite.architectures.deeparchitect import make_space
    from benchsuite.architectures.deeparchitect.torch_backend import count_params

    torch.set_num_threads(1)
    rows = []
    print(f"{'space':10s} {'len':>4s} {'sample ms':>10s} {'validate ms':>12s} {'features ms':>12s} "
          f"{'compile ms':>11s} {'forward ms':>11s} {'params':>10s}")
    for name in args.spaces:
        sp = make_space(name)
        rng = np.random.default_rng(0)
        t_sample, t_val, t_feat, t_comp, t_fwd, params, vals = [], [], [], [], [], [], []
        for k in range(args.n):
            t = time.perf_counter()
            v = sp.sample(rng)
            t_sample.append(time.perf_counter() - t)
            vals.append(v)
            fresh = make_space(name)
            t = time.perf_counter()
            fresh.validate(list(v))
            t_val.append(time.perf_counter() - t)
            t = time.perf_counter()
            sp.features(v)
            t_feat.append(time.perf_counter() - t)
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
               "sample_ms": 1e3 * statistics.median(t_sample), "validate_ms": 1e3 * statistics.median(t_val),
               "features_ms": 1e3 * statistics.median(t_feat), "compile_ms": 1e3 * statistics.median(t_comp),
               "forward_ms": 1e3 * statistics.median(t_fwd), "params_median": int(statistics.median(params))}
        rows.append(row)
        print(f"{name:10s} {row['length']:4d} {row['sample_ms']:10.1f} {row['validate_ms']:12.1f} "
              f"{row['features_ms']:12.2f} {row['compile_ms']:11.1f} {row['forward_ms']:11.1f} "
              f"{row['params_median'] / 1e6:9.2f}M")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"shape": list(args.shape), "n": args.n, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
