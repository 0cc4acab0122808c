"""Run-loop overhead per trial: random search on Branin, overhead excluded from the clock.

The loop's own overhead is the wall time per trial minus the time spent inside the
optimizer (ask, tell, recommend) and the benchmark (evaluate, test_loss), measured in the
same run by wrapping those calls. Target (foundation issue): at most 50 microseconds.

    .venv/bin/python benchmarks/bench_runner_overhead.py [--trials 20000] [--repeats 5]
"""
from __future__ import annotations

import argparse
import time

from benchsuite.registry import get_optimizer, make_benchmark
from benchsuite.runner import run


def measure(n: int) -> tuple[float, float]:
    """Return (wall seconds per trial, seconds per trial inside plugin and benchmark calls)."""
    bench = make_benchmark("branin")
    inside = [0.0]

    def timed(fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                inside[0] += time.perf_counter() - t
        return wrapper

    bench.evaluate = timed(bench.evaluate)
    bench.test_loss = timed(bench.test_loss)
    base = get_optimizer("random_search")

    class Timed(base):
        ask = timed(base.ask)
        tell = timed(base.tell)
        recommend = timed(base.recommend)

    Timed.name = base.name
    t0 = time.perf_counter()
    out = run(bench, Timed, seed=0, budget_evals=n, include_overhead=False)
    wall = time.perf_counter() - t0
    assert len(out.rows) == n
    return wall / n, inside[0] / n


def main() -> None:
    """Print per-trial times over a few repeats (the minimum is the least noisy)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=20000)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    loop = []
    for _ in range(args.repeats):
        wall, inside = measure(args.trials)
        loop.append(wall - inside)
        print(f"wall {wall * 1e6:7.1f} us/trial, inside plugin+benchmark {inside * 1e6:6.1f} us, "
              f"run loop {(wall - inside) * 1e6:6.1f} us")
    print(f"run-loop overhead per trial: min {min(loop) * 1e6:.1f} us, median {sorted(loop)[len(loop) // 2] * 1e6:.1f} us "
          f"over {args.repeats} runs of {args.trials} trials")


if __name__ == "__main__":
    main()
