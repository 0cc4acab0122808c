"""Seconds per ask of ``botorch_qlogei`` and ``gp_ei`` side by side, in one process (issue 24, item 5).

BoTorch's SingleTaskGP + qLogEI is the speed anchor of issue 24: ``gp_ei``'s decisions are compared
with it on the same data, in the same run, so the ratio means something on a shared machine. For
each benchmark (Branin, Hartmann6) and each number of observations ``n`` (50 and 100 by default),
both plugins are told the same ``n`` random observations and then asked ``--repeats`` times,
alternating gp_ei and BoTorch ask by ask (nothing is told in between, so ``n`` stays fixed):

* ``gp_ei`` as in a run: it is told 20 observations and asks once (the MCMC burn-in, reported as its
  first ask), is told the rest up to ``n`` and asks once more (not timed: the chain adapts), then the
  timed asks continue the chain ``chain_length`` steps each and maximise integrated EI;
* ``botorch_qlogei`` refits its GP from BoTorch's defaults at every ask (it keeps no state), so every
  ask is a steady-state one; one throwaway ask (Branin, 10 observations) before the table pays the
  process's one-off costs (lazy imports and initialisation inside torch and BoTorch), printed apart.

Both at their default settings, one thread each (``gp_ei`` limits BLAS; BoTorch sets one torch
thread), CPU seconds of the process (``time.process_time``) and wall seconds per ask, medians.

    OMP_NUM_THREADS=1 .venv/bin/python perf/bench_botorch_vs_gp_ei.py
    OMP_NUM_THREADS=1 .venv/bin/python perf/bench_botorch_vs_gp_ei.py --n 100 500 --benchmarks hartmann6 --repeats 3

Not a test: timings depend on the machine and its load (printed with every table, and at exit).
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import json
import os
import statistics
import time

import numpy as np

from benchsuite.optimizer import Trial
from benchsuite.registry import get_optimizer, make_benchmark


def _feed(opt, bench, configs, start: int, stop: int) -> None:
    for i in range(start, stop):
        opt.tell(Trial(i, configs[i], None), bench.evaluate(configs[i]))


def _timed_ask(opt) -> tuple[float, float, dict]:
    t0, c0 = time.perf_counter(), time.process_time()
    s = opt.ask()
    return time.perf_counter() - t0, time.process_time() - c0, dict(opt.last_timing, phase=s.info.get("phase"))


def compare(bench_name: str, n: int, repeats: int, seed: int) -> dict:
    """Timings of both plugins on one benchmark at ``n`` observations (the same observations)."""
    bench = make_benchmark(bench_name)
    configs = bench.space.sample(np.random.default_rng(seed), n)
    gp_cls, bt_cls = get_optimizer("gp_ei"), get_optimizer("botorch_qlogei")

    gp = gp_cls(bench.space, None, np.random.default_rng(seed + 1))
    gp.n_asked = len(gp.design)  # past the initial design: every ask below is a model-based one
    _feed(gp, bench, configs, 0, min(20, n))
    gp_first = _timed_ask(gp)  # includes the burn-in
    _feed(gp, bench, configs, min(20, n), n)
    _timed_ask(gp)

    bt = bt_cls(bench.space, None, np.random.default_rng(seed + 1))
    bt.n_asked = bt.n_init
    _feed(bt, bench, configs, 0, n)

    rows: dict[str, list[tuple[float, float, dict]]] = {"gp_ei": [], "botorch_qlogei": []}
    for _ in range(repeats):  # alternate, so both see the same load
        rows["gp_ei"].append(_timed_ask(gp))
        rows["botorch_qlogei"].append(_timed_ask(bt))
    for name, rs in rows.items():
        assert all(r[2]["phase"] == "bo" for r in rs), (name, [r[2] for r in rs])

    def summary(rs: list, parts: tuple[str, str]) -> dict:
        return {"wall_s": statistics.median(r[0] for r in rs), "cpu_s": statistics.median(r[1] for r in rs),
                "wall_s_max": max(r[0] for r in rs),
                **{p: statistics.median(r[2][p] for r in rs) for p in parts}}

    out = {"benchmark": bench_name, "n": n, "repeats": repeats, "load": os.getloadavg()[0],
           "gp_ei": summary(rows["gp_ei"], ("mcmc_cpu_s", "acq_cpu_s")),
           "botorch_qlogei": summary(rows["botorch_qlogei"], ("fit_cpu_s", "acq_cpu_s")),
           "gp_ei_first_ask_with_burnin_at_20": {"wall_s": gp_first[0], "cpu_s": gp_first[1]}}
    out["ratio_cpu"] = out["gp_ei"]["cpu_s"] / out["botorch_qlogei"]["cpu_s"]
    out["ratio_wall"] = out["gp_ei"]["wall_s"] / out["botorch_qlogei"]["wall_s"]
    return out


def warm_up(seed: int) -> tuple[float, float, dict]:
    """One BoTorch ask at 10 Branin observations: the process's one-off torch/BoTorch costs, kept out of the table."""
    bench = make_benchmark("branin")
    opt = get_optimizer("botorch_qlogei")(bench.space, None, np.random.default_rng(seed))
    opt.n_asked = opt.n_init
    _feed(opt, bench, bench.space.sample(np.random.default_rng(seed), 10), 0, 10)
    return _timed_ask(opt)


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--benchmarks", nargs="+", default=["branin", "hartmann6"])
    ap.add_argument("--n", nargs="+", type=int, default=[50, 100], help="observations the asks see")
    ap.add_argument("--repeats", type=int, default=5, help="timed asks per plugin and case")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    import botorch
    import torch

    print(f"botorch {botorch.__version__}, torch {torch.__version__}; load average {os.getloadavg()}, "
          f"{os.cpu_count()} CPUs; medians of {args.repeats} asks, CPU s (wall s)")
    print(f"{'benchmark':<10} {'n':>4}  {'gp_ei ask':>16}  {'= MCMC + EI (CPU)':>18}  {'botorch ask':>16}  "
          f"{'= fit + qLogEI (CPU)':>20}  {'gp_ei/botorch CPU':>17}  load")
    first_bt = warm_up(args.seed)
    results = []
    for bench in args.benchmarks:
        for n in args.n:
            r = compare(bench, n, args.repeats, args.seed)
            results.append(r)
            g, b = r["gp_ei"], r["botorch_qlogei"]
            print(f"{bench:<10} {n:>4}  {g['cpu_s']:>6.3f} ({g['wall_s']:6.3f})  "
                  f"{g['mcmc_cpu_s']:>8.3f} + {g['acq_cpu_s']:.3f}  {b['cpu_s']:>6.3f} ({b['wall_s']:6.3f})  "
                  f"{b['fit_cpu_s']:>10.3f} + {b['acq_cpu_s']:.3f}  {r['ratio_cpu']:>16.1f}x  {r['load']:.2f}",
                  flush=True)
    burnin = ", ".join(f"{r['benchmark']} {r['gp_ei_first_ask_with_burnin_at_20']['cpu_s']:.2f}" for r in results
                       if r["n"] == args.n[0])
    print(f"first asks (not in the table): gp_ei's, with the MCMC burn-in at 20 observations, CPU s: {burnin}; "
          f"botorch's first in the process (Branin, 10 observations): {first_bt[1]:.2f} CPU s "
          f"({first_bt[0]:.2f} wall s)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
