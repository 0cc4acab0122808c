"""Run-loop overhead per trial: random search on Branin, overhead kept off the clock.

Two measurements in the same process, both in CPU time (``time.process_time``) so that
other processes on a shared machine do not inflate them:

1. the whole run: ``run(branin, random_search, budget_evals=N)``;
2. the same work without the run loop: N direct calls of ``ask``, ``evaluate``,
   ``tell``, ``recommend`` and (cached, as the runner does) ``test_loss``.

The loop's own overhead per trial is (1 - 2) / N. Target (foundation issue): at most
50 microseconds. Wall-clock numbers are printed too, for comparison.

    .venv/bin/python perf/bench_runner_overhead.py [--trials 20000] [--repeats 5]
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import time

from benchsuite.optimizer import Trial
from benchsuite.registry import get_optimizer, make_benchmark
from benchsuite.runner import run
from benchsuite.seeding import optimizer_rng


def _whole_run(n: int) -> tuple[float, float]:
    bench, opt = make_benchmark("branin"), get_optimizer("random_search")
    c0, w0 = time.process_time(), time.perf_counter()
    out = run(bench, opt, seed=0, budget_evals=n, include_overhead=False)
    c1, w1 = time.process_time(), time.perf_counter()
    assert len(out.rows) == n
    return (c1 - c0) / n, (w1 - w0) / n


def _direct_calls(n: int) -> tuple[float, float]:
    bench = make_benchmark("branin")
    opt = get_optimizer("random_search")(bench.space, bench.fidelity, optimizer_rng(0))
    seen: dict = {}
    c0, w0 = time.process_time(), time.perf_counter()
    for i in range(n):
        s = opt.ask(())
        r = bench.evaluate(s.config, s.fidelity, seed=i)
        opt.tell(Trial(i, s.config, s.fidelity), r)
        inc = opt.recommend()
        key = bench.space.key(inc)
        if key not in seen:
            seen[key] = bench.test_loss(inc)
    c1, w1 = time.process_time(), time.perf_counter()
    return (c1 - c0) / n, (w1 - w0) / n


def main() -> None:
    """Print per-trial CPU and wall times over a few repeats (the minimum is the least noisy)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=20000)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    loop_cpu, loop_wall = [], []
    for _ in range(args.repeats):
        run_cpu, run_wall = _whole_run(args.trials)
        dir_cpu, dir_wall = _direct_calls(args.trials)
        loop_cpu.append(run_cpu - dir_cpu)
        loop_wall.append(run_wall - dir_wall)
        print(f"CPU per trial: whole run {run_cpu * 1e6:6.1f} us, direct calls {dir_cpu * 1e6:6.1f} us, "
              f"loop {loop_cpu[-1] * 1e6:5.1f} us | wall: run {run_wall * 1e6:6.1f} us, loop {loop_wall[-1] * 1e6:5.1f} us")
    med = sorted(loop_cpu)[len(loop_cpu) // 2]
    print(f"run-loop overhead per trial (CPU time): min {min(loop_cpu) * 1e6:.1f} us, median {med * 1e6:.1f} us "
          f"over {args.repeats} x {args.trials} trials; target <= 50 us")


if __name__ == "__main__":
    main()
