"""DeepArchitect draws on product spaces: walked (a graph per draw) against the declared product path.

For each space that declares ``product = True`` (Genetic, Flat, the NAS-Bench-201 cell), draw
``--n`` architectures from one seed twice in the same process, interleaved in blocks: once through
the space as registered (one walk, then one ``rng.integers`` per position) and once through the
same space function without the declaration (a walk per draw, as before). Prints milliseconds per
draw (median of the blocks), the ratio, and checks that both gave the same value lists. Then, with
``--smbo``, one SMBO decision's candidate scoring (``da_smbo``'s 512 draws and their feature buckets) on
the NB201 cell once every cell's buckets are in ``da_smbo``'s memo (as late in a run), both ways.

    OMP_NUM_THREADS=1 .venv/bin/python perf/bench_da_sample.py --n 200 --smbo
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import itertools
import statistics
import time

import numpy as np


def _walked(sp):  # the same space function without the product declaration: every draw walks
    from benchsuite.architectures.deeparchitect import DASpace

    fn = lambda n_classes=10: sp.space_fn(n_classes)  # noqa: E731
    return DASpace(sp.name, fn)


def main() -> None:
    """Measure and print one row per space."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="draws per space and way")
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--spaces", nargs="*", default=["genetic", "flat", "nb201"])
    ap.add_argument("--smbo", action="store_true", help="also time SMBO's 512-candidate scoring on nb201")
    args = ap.parse_args()

    from benchsuite.architectures.deeparchitect import make_space

    print(f"{'space':8s} {'walked ms/draw':>15s} {'product ms/draw':>16s} {'ratio':>7s} same")
    for name in args.spaces:
        fast = make_space(name)
        slow = _walked(fast)
        per = max(1, args.n // args.blocks)
        t_fast, t_slow, same = [], [], True
        for b in range(args.blocks):
            r1, r2 = np.random.default_rng(b), np.random.default_rng(b)
            t = time.process_time()
            a = [fast.sample(r1) for _ in range(per)]
            t_fast.append((time.process_time() - t) / per)
            t = time.process_time()
            c = [slow.sample(r2) for _ in range(per)]
            t_slow.append((time.process_time() - t) / per)
            same &= a == c
        f, s = statistics.median(t_fast), statistics.median(t_slow)
        print(f"{name:8s} {1e3 * s:15.3f} {1e3 * f:16.4f} {s / f:7.0f} {same}")

    if args.smbo:
        from benchsuite.optimizers.deeparchitect import DASMBO, random_draw

        print("\nSMBO's candidate scoring on nb201 (512 draws + feature buckets, every cell's buckets in da_smbo's "
              "memo), CPU s per ask")
        for label, sp in (("product", make_space("nb201")), ("walked", _walked(make_space("nb201")))):
            rng = np.random.default_rng(0)
            smbo = DASMBO(sp, None, np.random.default_rng(0))
            doms = [d for _, d in sp.hyperparameters(sp.sample(rng))]
            for v in itertools.product(*doms):  # every one of the 15,625 cells' buckets in the memo
                smbo.buckets(v)
            times = []
            for _ in range(5):
                t = time.process_time()
                for _ in range(512):
                    smbo.buckets(random_draw(sp, rng)[0])
                times.append(time.process_time() - t)
            print(f"  {label:8s} {statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
