"""Lookup speed of the SVM-on-MNIST table (issue 4 targets: one query <= 5 us, 1e5 vectorised <= 50 ms).

    .venv/bin/python benchmarks/bench_svm_lookup.py [--table PATH] [--n 100000] [--repeats 5]

Measures, on random configurations and fidelities, with the best of ``repeats`` runs:
``SvmMnistTabular.query`` (scalar fast path: range check, snap, replicate from the seed),
``evaluate`` (the full Benchmark interface with validation and a Result), the vectorised
``lookup`` over integer grid indices for a batch of ``n`` (plus snapping a batch of float
inputs with ``SvmTable.index``), and the surrogate's ``evaluate`` and batch ``predict``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from benchsuite.benchmarks import svm_mnist as sm


def best(fn, repeats: int) -> float:
    """Best wall seconds of ``repeats`` calls of ``fn``."""
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--table", default="")
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-surrogate", action="store_true")
    args = p.parse_args(argv)
    b = sm.SvmMnistTabular(table=args.table, allow_partial=True)
    t = b.table
    rng = np.random.default_rng(0)
    n = args.n
    x0 = rng.uniform(-10, 10, n)
    x1 = rng.uniform(-10, 10, n)
    if not t.complete:  # draw only near filled grid points (same lookup work, no NaN)
        filled = np.argwhere(np.isfinite(t.test_error))
        pick = filled[rng.integers(0, len(filled), n)]
        half = (t.log_c[1] - t.log_c[0]) / 2.01
        x0 = np.clip(t.log_c[pick[:, 0]] + rng.uniform(-half, half, n), -10, 10)
        x1 = np.clip(t.log_gamma[pick[:, 1]] + rng.uniform(-half, half, n), -10, 10)
    i_s = rng.integers(0, t.s.size, n)
    s = t.s[i_s]
    seeds = rng.integers(0, 2**62, n)
    xs, ys, ss, sd = x0.tolist(), x1.tolist(), s.tolist(), seeds.tolist()
    m = min(n, 20_000)

    def scalar() -> None:
        q = b.query
        for k in range(m):
            q(xs[k], ys[k], ss[k], sd[k])

    configs = [{"x0": xs[k], "x1": ys[k]} for k in range(m)]

    def full() -> None:
        ev = b.evaluate
        for k in range(m):
            ev(configs[k], ss[k], sd[k])

    def batch() -> None:
        ic, ig = t.index(x0, x1)
        b.lookup(ic, ig, i_s, seeds)

    ic, ig = t.index(x0, x1)
    print(f"table {t.path} ({'complete' if t.complete else 'partial'}), shape {t.loss.shape}")
    print(f"query (scalar fast path): {best(scalar, args.repeats) / m * 1e6:.2f} us per query")
    print(f"evaluate (validated, Result): {best(full, args.repeats) / m * 1e6:.2f} us per query")
    print(f"lookup, vectorised batch of {n}: {best(lambda: b.lookup(ic, ig, i_s, seeds), args.repeats) * 1e3:.2f} ms")
    print(f"snap floats + lookup, batch of {n}: {best(batch, args.repeats) * 1e3:.2f} ms")
    if not args.no_surrogate:
        t0 = time.perf_counter()
        sb = sm.SvmMnistSurrogate(table=args.table, allow_partial=True)
        print(f"surrogate setup (3 RBF fits): {time.perf_counter() - t0:.2f} s")
        k = 2000
        ev = sb.evaluate
        sec = best(lambda: [ev(configs[j], ss[j], sd[j]) for j in range(k)], args.repeats) / k
        print(f"surrogate evaluate: {sec * 1e6:.1f} us per query")
        nb = min(n, 10_000)
        sec = best(lambda: sb.predict(x0[:nb], x1[:nb], s[:nb]), args.repeats)
        print(f"surrogate predict, batch of {nb}: {sec * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
