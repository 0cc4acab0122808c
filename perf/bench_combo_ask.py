"""Time one COMBO ``ask`` on a 60-binary-variable problem with 250 observations.

Issue 6 asks for at most 15 s per ask on MaxSAT60 with 250 observations, and for the split
between slice sampling and acquisition optimisation. As in a run, COMBO is told ``n_init``
random observations and asks once (that ask includes the 100 burn-in sweeps, at 20
observations); then it is told random observations up to 249, asks once (not timed: the
chain adapts to the new data), and the next ``--repeats`` asks are timed: the steady state
of a run, where each ask continues the chain with 10 sweeps at 250+ observations.

    .venv/bin/python perf/bench_combo_ask.py                # maxsat60 (synthetic if no data)
    .venv/bin/python perf/bench_combo_ask.py --problem synthetic --set n_random=5000

Not a test: timings depend on the machine and its load.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import statistics
import sys
import time

import numpy as np

from benchsuite.benchmark import Benchmark, Result
from benchsuite.errors import BenchsuiteError
from benchsuite.optimizer import Trial
from benchsuite.registry import make_benchmark
from benchsuite.settings import parse_assignments
from benchsuite.space import Binary, Space
from benchsuite.optimizers.combo import Combo


class SyntheticMaxSAT(Benchmark):
    """A random weighted MaxSAT-like problem on 60 binary variables (stand-in when the data are missing)."""

    name = "synthetic_maxsat60"
    kind = "synthetic"

    def setup(self) -> None:
        self.space = Space([Binary(f"x{i:02d}") for i in range(60)])
        rng = np.random.default_rng(12345)
        n_clauses = 300
        self.lits = rng.integers(0, 60, size=(n_clauses, 3))
        self.signs = rng.integers(0, 2, size=(n_clauses, 3))
        w = rng.standard_normal(n_clauses)
        self.weights = (w - w.mean()) / w.std()

    def evaluate(self, config: dict, fidelity: float | None = None, seed: int = 0) -> Result:
        x = self.space.to_codes(config)
        sat = (x[self.lits] == self.signs).any(axis=1)
        return Result(loss=-float(self.weights[sat].sum()), cost_s=1.0)


def main(argv: list[str] | None = None) -> int:
    """Run the timing and print one line per ask plus a summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="maxsat60", help="benchmark name, or 'synthetic'")
    ap.add_argument("--n-obs", type=int, default=250)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", default=[], help="combo setting key=value")
    args = ap.parse_args(argv)

    if args.problem == "synthetic":
        bench: Benchmark = SyntheticMaxSAT()
    else:
        try:
            bench = make_benchmark(args.problem)
        except BenchsuiteError as exc:
            print(f"{args.problem} unavailable ({exc}); using the synthetic 60-variable problem", file=sys.stderr)
            bench = SyntheticMaxSAT()
    rng = np.random.default_rng(args.seed)
    opt = Combo(bench.space, None, np.random.default_rng(args.seed + 1), **parse_assignments(args.set))

    def tell(config: dict, tid: int) -> None:
        opt.tell(Trial(tid, config, None), bench.evaluate(config))

    def timed_ask() -> tuple[float, dict]:
        t0 = time.perf_counter()
        s = opt.ask(())
        return time.perf_counter() - t0, s.config

    tid = 0
    for _ in range(opt.settings["n_init"]):
        tell(bench.space.sample(rng), tid)
        tid += 1
    first, cfg = timed_ask()
    t = opt.last_timing
    print(f"first model-based ask ({len(opt.history)} obs, {t['burn_in_sweeps']:.0f} burn-in + "
          f"{opt.settings['n_samples']} sweeps): {first:.2f} s (sampling {t['sampling_s']:.2f} s, "
          f"acquisition {t['acquisition_s']:.2f} s)")
    while tid < args.n_obs - 1:
        tell(bench.space.sample(rng), tid)
        tid += 1
    dt, cfg = timed_ask()
    print(f"ask after jumping to {len(opt.history)} obs (not counted): {dt:.2f} s")
    times, samp, acq = [], [], []
    for _ in range(args.repeats):
        tell(cfg, tid)
        tid += 1
        dt, cfg = timed_ask()
        t = opt.last_timing
        times.append(dt)
        samp.append(t["sampling_s"])
        acq.append(t["acquisition_s"])
        print(f"ask with {len(opt.history)} obs: {dt:.2f} s (sampling {t['sampling_s']:.2f} s, "
              f"{t['n_logp']:.0f} likelihood evaluations; acquisition {t['acquisition_s']:.2f} s)")
    print(f"{bench.name}: median steady-state ask {statistics.median(times):.2f} s = sampling "
          f"{statistics.median(samp):.2f} s + acquisition {statistics.median(acq):.2f} s (target <= 15 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
