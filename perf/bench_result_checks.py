"""What the result reader's cell checks cost: ``load_result`` of one run's file with and without them.

    OMP_NUM_THREADS=1 .venv/bin/python perf/bench_result_checks.py [--trials 20000] [--repeats 7]

The reader (:func:`benchsuite.results.load_result`) checks every cell a run writes: times and costs
finite (a cost >= 0), an ok trial's loss finite, the configuration and incumbent JSON
(``results._check_cells``). This script writes one random-search run on Branin of ``--trials``
trials (the simulated clock, no overhead: a few seconds) and reads it back ``--repeats`` times
with the checks and as many times with ``_check_cells`` replaced by a no-op, alternating, and
prints the median CPU seconds of each and their ratio. Ratios measured in one run are the figures
to compare; the load average is printed at the end.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()

    from benchsuite import results
    from benchsuite.execute import execute_run

    with tempfile.TemporaryDirectory(prefix="benchsuite-perf-") as tmp:
        path = Path(tmp) / "r.csv"
        execute_run("branin", "random_search", seed=0, budget_evals=args.trials, include_overhead=False, out=path)
        checks = results._check_cells
        times: dict[str, list[float]] = {"with the checks": [], "without": []}
        for _ in range(args.repeats):
            for label, fn in (("with the checks", checks), ("without", lambda path, df: None)):
                results._check_cells = fn
                t = time.process_time()
                results.load_result(path)
                times[label].append(time.process_time() - t)
        results._check_cells = checks
        size = path.stat().st_size
    a, b = (statistics.median(times[k]) for k in ("with the checks", "without"))
    print(f"load_result of {args.trials} trials ({size / 1e6:.1f} MB), median of {args.repeats} CPU s: "
          f"{a:.3f} with the cell checks, {b:.3f} without; ratio {a / b:.2f}")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
