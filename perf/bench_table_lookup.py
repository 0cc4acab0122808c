"""Lookup speed of any tabular benchmark, against a pandas-indexed lookup of the same table.

    .venv/bin/python perf/bench_table_lookup.py --benchmark nb201_cifar10 [--n 100000] [--repeats 5]
    .venv/bin/python perf/bench_table_lookup.py --benchmark svm_mnist [--surrogate svm_mnist_surrogate]

Targets (issue 10): one lookup (``query``) <= 2 us, 10^5 lookups in one batch <= 50 ms, opening the
table < 0.5 s and < 100 MB resident memory. Measured, best of ``repeats``, on random
configurations (and fidelities where the table has several) and random seeds:

* ``evaluate``: the whole Benchmark interface (validation on the slow path, a Result);
* ``query``: one lookup, (loss, cost) of one seed replicate, without building a Result;
* a vectorised batch of ``n``: configurations -> rows, then ``lookup`` (and ``lookup``
  alone, on precomputed rows);
* the same table in a pandas DataFrame with a MultiIndex (configuration values, fidelity,
  seed), the way other suites serve tables: one ``.loc`` per lookup, and one ``reindex``
  for the batch; the ratios against ours are printed;
* opening: a fresh Python process imports the benchmark and opens the table; its wall
  time and peak resident memory (and the interpreter's baseline) are printed.
"""
from __future__ import annotations

import _clock  # prints CPU s, wall s and the load average at exit; repeat_seconds

import argparse
import json
import subprocess
import sys

import numpy as np


def best(fn, repeats: int) -> float:
    """Best wall seconds of ``repeats`` calls of ``fn``."""
    return min(_clock.repeat_seconds(fn, repeats))


_OPEN_SNIPPET = """
import json, sys, time
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
base = status("VmRSS:")
t0 = time.perf_counter()
import importlib
from benchsuite.registry import get_benchmark
cls = get_benchmark(sys.argv[1])
t1 = time.perf_counter()
before = status("VmRSS:")
b = cls()
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "open_s": t2 - t1, "rss_before_open_mb": before,
                  "rss_after_open_mb": status("VmRSS:"), "peak_rss_mb": status("VmHWM:"), "start_rss_mb": base}))
"""


def open_cost(name: str) -> dict:
    """Seconds and peak RSS of importing a benchmark and opening its table in a fresh process."""
    out = subprocess.run([sys.executable, "-c", _OPEN_SNIPPET, name], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    from benchsuite.registry import make_benchmark

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--benchmark", default="nb201_cifar10", help="a tabular benchmark (default nb201_cifar10)")
    p.add_argument("--n", type=int, default=100_000, help="batch size and number of scalar lookups (capped at 20,000)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-pandas", action="store_true", help="skip the pandas comparison")
    p.add_argument("--surrogate", default="", help="also time this surrogate benchmark's evaluate and predict")
    args = p.parse_args(argv)
    b = make_benchmark(args.benchmark)
    t = b.table
    rng = np.random.default_rng(0)
    n, m = args.n, min(args.n, 20_000)
    configs = [b.space.sample(rng) for _ in range(n)]
    fid_idx = rng.integers(0, t.fidelities.size, n)
    fids = [None if t.fidelities.size == 1 else float(t.fidelities[i]) for i in fid_idx]
    seeds = rng.integers(0, 2**62, n)
    sd = seeds.tolist()
    print(f"{args.benchmark}: table {t.path} task {t.task!r}, {t.loss.size} entries, shape {t.loss.shape}")

    ev = b.evaluate

    def scalar_eval() -> None:
        for k in range(m):
            ev(configs[k], fids[k], sd[k])

    query = b.query

    def scalar_query() -> None:
        for k in range(m):
            query(configs[k], fids[k], sd[k])

    rows = b.rows(configs)

    def batch() -> None:
        b.lookup(b.rows(configs), fid_idx, seeds)

    t_eval = best(scalar_eval, args.repeats) / m
    t_row = best(scalar_query, args.repeats) / m
    t_batch = best(batch, args.repeats)
    t_lookup = best(lambda: b.lookup(rows, fid_idx, seeds), args.repeats)
    print(f"evaluate (validated, Result):          {t_eval * 1e6:8.2f} us per lookup")
    print(f"query -> (loss, cost), one lookup:      {t_row * 1e6:8.2f} us per lookup")
    print(f"batch of {n}: configs -> rows -> lookup {t_batch * 1e3:8.2f} ms")
    print(f"batch of {n}: lookup on rows           {t_lookup * 1e3:8.2f} ms")

    if not args.no_pandas:
        import pandas as pd

        names = b.space.names
        shape = t.shape
        grids = np.meshgrid(*[np.arange(s) for s in shape], np.arange(t.fidelities.size),
                            np.arange(t.loss.shape[-1]), indexing="ij")
        cols = {name: t.axes[k][grids[k].ravel()] for k, name in enumerate(names)}
        cols["fidelity"] = grids[-2].ravel()
        cols["seed"] = grids[-1].ravel()
        df = pd.DataFrame({**cols, "loss": t.loss.ravel(), "cost": t.cost.ravel()})
        df = df.set_index(names + ["fidelity", "seed"]).sort_index()
        ns_arr = t.n_seeds.reshape(-1, t.fidelities.size)
        keys = []
        for k in range(n):
            r, f = int(rows[k]), int(fid_idx[k])
            keys.append(tuple(t.axes[j][np.unravel_index(r, shape)[j]] for j in range(len(names)))
                        + (f, int(seeds[k] % ns_arr[r, f])))
        mp = min(m, 2000)

        def pandas_scalar() -> None:
            loc = df.loc
            for k in range(mp):
                loc[keys[k], "loss"]

        idx = pd.MultiIndex.from_tuples(keys, names=df.index.names)

        def pandas_batch() -> None:
            df.reindex(idx)["loss"].to_numpy()

        def pandas_batch_from_keys() -> None:
            df.reindex(pd.MultiIndex.from_tuples(keys, names=df.index.names))["loss"].to_numpy()

        ours = b.lookup(rows, fid_idx, seeds)[0]
        theirs = df.reindex(idx)["loss"].to_numpy()
        assert np.array_equal(ours, theirs, equal_nan=True), "pandas and the table disagree"
        tp = best(pandas_scalar, max(1, args.repeats // 2)) / mp
        tb = best(pandas_batch, max(1, args.repeats // 2))
        print(f"pandas .loc per lookup:                {tp * 1e6:8.2f} us  ({tp / t_eval:.0f}x our evaluate)")
        tk = best(pandas_batch_from_keys, max(1, args.repeats // 2))
        print(f"pandas reindex on a prebuilt index, batch of {n}: {tb * 1e3:8.2f} ms "
              f"({tb / t_lookup:.1f}x our lookup on rows)")
        print(f"pandas index from keys + reindex, batch of {n}: {tk * 1e3:8.2f} ms "
              f"({tk / t_batch:.1f}x our configs -> rows -> lookup)")

    oc = open_cost(args.benchmark)
    print(f"open in a fresh process: import of the registry {oc['import_s']:.3f} s; opening the table "
          f"(read + sha256 check + index) {oc['open_s']:.3f} s; resident memory {oc['rss_before_open_mb']:.0f} MB "
          f"before the open, {oc['rss_after_open_mb']:.0f} MB after ({oc['rss_after_open_mb'] - oc['rss_before_open_mb']:.0f} MB "
          f"for the table), peak {oc['peak_rss_mb']:.0f} MB")

    if args.surrogate:
        sb = make_benchmark(args.surrogate)
        sc = [sb.space.sample(rng) for _ in range(2000)]
        f = sb.fidelity.full if sb.fidelity else None
        sec = best(lambda: [sb.evaluate(c, f, 1) for c in sc], args.repeats) / len(sc)
        print(f"surrogate {args.surrogate} evaluate: {sec * 1e6:.1f} us per query")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
