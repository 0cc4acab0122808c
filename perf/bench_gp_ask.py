"""Time one ``ask`` of gp_ei (Hartmann6) and of fabolas (multi-fidelity Branin) at 100 observations.

Issue 5 asks for at most 2 s per gp_ei ask with 100 observations in 6 dimensions including
MCMC (and for the split between MCMC and acquisition optimisation), and at most 20 s per
fabolas ask with 100 observations. As in a run, the plugin is told 20 random observations
and asks once (that ask includes the MCMC burn-in), is told random observations up to 100,
asks once more (not timed: the chain adapts to the new data), and then the next
``--repeats`` asks are timed: the steady state of a run, where every ask continues the
chain for ``chain_length`` steps and maximises the acquisition.

    .venv/bin/python perf/bench_gp_ask.py                   # both, default settings
    .venv/bin/python perf/bench_gp_ask.py --only gp_ei --repeats 5
    .venv/bin/python perf/bench_gp_ask.py --only fabolas --set n_pmin_samples=100

Not a test: timings depend on the machine and its load (``uptime`` is printed).
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
from benchsuite.registry import make_benchmark
from benchsuite.settings import parse_assignments


def _feed(opt, bench, rng, n_from: int, n_to: int, fidelity: bool) -> None:
    for i in range(n_from, n_to):
        c = bench.space.sample(rng)
        s = float(bench.fidelity.from_unit(rng.random())) if fidelity else None
        opt.tell(Trial(i, c, s), bench.evaluate(c, s))


def time_plugin(cls, bench_name: str, settings: dict, repeats: int, n_obs: int, seed: int,
                fidelity: bool) -> dict:
    """Steady-state ask timings of one plugin at ``n_obs`` observations."""
    bench = make_benchmark(bench_name)
    rng = np.random.default_rng(seed)
    opt = cls(bench.space, bench.fidelity, np.random.default_rng(seed + 1), **settings)
    n_design = len(opt.design)
    _feed(opt, bench, rng, 0, 20, fidelity)
    opt.n_asked = n_design  # past the initial design: every ask below is a model-based one
    t0 = time.perf_counter()
    opt.ask()
    first = time.perf_counter() - t0
    _feed(opt, bench, rng, 20, n_obs, fidelity)
    opt.ask()
    total, cpu, mcmc, acq = [], [], [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        opt.ask()
        total.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        mcmc.append(opt.last_timing["mcmc_s"])
        acq.append(opt.last_timing["acq_s"])
    return {"plugin": cls.name, "benchmark": bench_name, "n_obs": n_obs, "first_ask_with_burnin_s_at_20": first,
            "ask_s_median": statistics.median(total), "ask_s_max": max(total),
            "ask_cpu_s_median": statistics.median(cpu),
            "mcmc_s_median": statistics.median(mcmc), "acq_s_median": statistics.median(acq),
            "repeats": repeats, "settings": opt.settings}


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["gp_ei", "fabolas"], default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-obs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", help="plugin setting key=value (repeatable)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    from benchsuite.optimizers.fabolas import Fabolas
    from benchsuite.optimizers.gp_ei import GPEI

    extra = parse_assignments(args.set)
    runs = [("gp_ei", GPEI, "hartmann6", False, 2.0), ("fabolas", Fabolas, "branin_mf", True, 20.0)]
    out = []
    print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs")
    for name, cls, bench, fid, limit in runs:
        if args.only and args.only != name:
            continue
        settings = {k: cls.settings_spec[k].coerce(name, k, v) for k, v in extra.items() if k in cls.settings_spec}
        r = time_plugin(cls, bench, settings, args.repeats, args.n_obs, args.seed, fid)
        r["limit_s"] = limit
        out.append(r)
        print(f"{name} on {bench}, {r['n_obs']} observations: ask {r['ask_s_median']:.2f} s median "
              f"(max {r['ask_s_max']:.2f}; limit {limit:g} s) = MCMC {r['mcmc_s_median']:.2f} s + acquisition "
              f"{r['acq_s_median']:.2f} s (CPU time of the ask {r['ask_cpu_s_median']:.2f} s); "
              f"first ask incl. burn-in at 20 obs {r['first_ask_with_burnin_s_at_20']:.2f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
