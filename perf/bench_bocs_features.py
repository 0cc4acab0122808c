"""BOCS's interaction features: the float-product build against the boolean build, and their share of a run.

    OMP_NUM_THREADS=1 .venv/bin/python perf/bench_bocs_features.py [--repeats 20] [--run 60]

BOCS evaluates its Thompson sample at every annealing step (5 chains x 500 steps per ask), and each
evaluation builds the configurations' interaction features. For BOCS-SA3 (third order) on wMaxSAT60
that is 36,050 features per row, and a profile of a 90-evaluation run (cProfile, 2026-11-27) put 77 % of
its time in that build, against 17 % in the Gibbs sampler. Part 1 times the float-product build (the
code before 2026-11-27, written out here as the reference) against ``InteractionFeatures.__call__`` for
5 rows (an annealing step) and 200 rows (the model's X), after checking both give the same bytes.
Part 2 (``--run N``) profiles a BOCS-SA3 run of N evaluations on maxsat60 and prints its CPU seconds and
the share spent building features. Run with another checkout's python (its editable install), the same
file times that checkout's code: start both at once and compare the ratio,

    (cd ../old-worktree && .venv/bin/python ../main/perf/bench_bocs_features.py --run 50) &
    .venv/bin/python perf/bench_bocs_features.py --run 50
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import cProfile
import pstats
import statistics
import time

import numpy as np

from benchsuite.optimizers.bocs import InteractionFeatures


def product_build(f: InteractionFeatures, codes: np.ndarray) -> np.ndarray:
    """The features as built before: float indicators, their product over each term's columns."""
    z = f.indicators(codes)
    cols = [z[:, t].prod(axis=2) if t.shape[1] > 1 else z[:, t[:, 0]] for t in f.terms]
    return np.concatenate(cols, axis=1)


def cpu_ms(fn, repeats: int) -> float:  # noqa: ANN001 - any callable
    """Median process CPU milliseconds of one call."""
    out = []
    for _ in range(repeats):
        t = time.process_time()
        fn()
        out.append(time.process_time() - t)
    return 1e3 * statistics.median(out)


def main() -> None:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--run", type=int, default=0, metavar="N", help="also profile a BOCS-SA3 run of N evaluations")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print("| features | rows | float products, ms | boolean build, ms | ratio |")
    print("|---|---:|---:|---:|---:|")
    for order in (2, 3):
        f = InteractionFeatures(np.full(60, 2), order)
        for rows in (5, 200):
            codes = rng.integers(0, 2, (rows, 60))
            if product_build(f, codes).tobytes() != f(codes).tobytes():
                raise SystemExit("the two builds differ: the timing would compare different things")
            old = cpu_ms(lambda: product_build(f, codes), args.repeats)  # noqa: B023
            new = cpu_ms(lambda: f(codes), args.repeats)  # noqa: B023
            print(f"| order {order}, 60 binary ({f.n_features:,}) | {rows} | {old:.2f} | {new:.2f} | {old / new:.1f}x |")
    if args.run:
        import benchsuite

        prof = cProfile.Profile(time.process_time)  # CPU time, as the total it is a share of
        t = time.process_time()
        prof.runcall(benchsuite.run, "maxsat60", "bocs", seed=3, budget_evals=args.run,
                     optimizer_settings={"n_init": 20, "order": 3})
        total = time.process_time() - t
        stats = pstats.Stats(prof).stats
        feat = sum(v[3] for k, v in stats.items() if k[2] == "__call__" and k[0].endswith("bocs.py"))
        gibbs = sum(v[3] for k, v in stats.items() if k[2] == "fit" and k[0].endswith("sparse_blr.py"))
        print(f"BOCS-SA3, maxsat60, {args.run} evaluations: {total:.1f} CPU s; building features "
              f"{100 * feat / total:.0f} % (profiled), Gibbs sampler {100 * gibbs / total:.0f} %")


if __name__ == "__main__":
    main()
