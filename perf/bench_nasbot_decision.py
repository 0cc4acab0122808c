"""Seconds per NASBOT decision (one ``ask``) with 50 and 100 evaluated networks, MLP and CNN spaces.

nasbot.txt Sec. 5 reports 46.13 s on average for NASBOT to determine the next architecture
(RAND 26.43 s, EA 0.19 s); issue 12 asks for at most 5 s here. As in a run, the plugin is
told the initial pool and then random networks of the space (``LayerGraphSpace.sample``)
with a cheap synthetic loss up to ``n - 1`` evaluations; one untimed ask fills the distance
cache (in a run those rows are computed one per ask); then, ``repeats`` times, one more
network is told and the next ask is timed, so every timed ask computes the OTMANN rows of
one new network, may re-draw the hyperparameters (every 7 asks: ``refit_every``) and runs
the EA over ``clip(25 sqrt(t), 50, 500)`` candidates, ``t`` = networks sent so far. The
default 7 repeats cover one full hyperparameter cycle, so their mean is the average
decision time and their max the ask with the hyperparameter draw. The split (distances to
new networks, GP fit, EI maximisation incl. the candidates' OTMANN rows) comes from the
plugin's ``last_timing``.

    .venv/bin/python perf/bench_nasbot_decision.py
    .venv/bin/python perf/bench_nasbot_decision.py --kinds mlp --n 50 --repeats 3

Not a test: timings depend on the machine and its load (``uptime`` is printed).
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import json
import math
import os
import statistics
import time

import numpy as np

from benchsuite.benchmark import Result
from benchsuite.optimizer import Trial


def synthetic_loss(g) -> float:
    """Smooth in log total units and depth (longest ip-op path): a stand-in for a trained network."""
    depth = [0] * g.n_layers
    for i in range(g.n_layers):
        ps = g.parents(i)
        depth[i] = max(depth[p] for p in ps) + 1 if ps else 0
    units = sum(u for u in g.units if u)
    return float((math.log2(max(units, 1)) - 11.0) ** 2 / 4.0 + (depth[-1] - 9) ** 2 / 16.0)


def time_decisions(kind: str, n_obs: int, repeats: int, seed: int, settings: dict) -> dict:
    """Steady-state ask timings of ``nasbot`` at ``n_obs`` evaluated networks."""
    from benchsuite.architectures.layer_graph_space import LayerGraphSpace
    from benchsuite.optimizers.nasbot import NASBOT, acquisition_evaluations

    space = LayerGraphSpace(kind)
    rng = np.random.default_rng(seed)
    opt = NASBOT(space, None, np.random.default_rng(seed + 1), **settings)
    tid = 0

    def tell(g) -> None:
        nonlocal tid
        opt.tell(Trial(tid, g, None), Result(synthetic_loss(g), 1.0))
        tid += 1

    for g in opt.design:
        tell(g)
    while tid < n_obs - 1:
        tell(space.sample(rng))
    opt.n_asked = tid  # as if every told network had been asked for
    t0 = time.perf_counter()
    opt.ask()
    warm = time.perf_counter() - t0
    totals, cpus, parts, picks = [], [], [], []
    for _ in range(repeats):
        tell(space.sample(rng))
        t0, c0 = time.perf_counter(), time.process_time()
        s = opt.ask()
        totals.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        parts.append(dict(opt.last_timing))
        picks.append(space.to_json(s.config))
    return {
        "kind": kind, "n_evaluated": n_obs, "repeats": repeats,
        "ea_evals_per_ask": acquisition_evaluations(n_obs),
        "decision_s_mean": statistics.mean(totals), "decision_s_median": statistics.median(totals),
        "decision_s_max": max(totals), "decision_cpu_s_mean": statistics.mean(cpus),
        "decision_cpu_s_max": max(cpus), "decision_cpu_s_all": [round(t, 3) for t in cpus],
        "decision_s_all": [round(t, 3) for t in totals],
        "refit_asks": int(sum(p["refit"] for p in parts)),
        "distances_s_mean": statistics.mean(p["distances_s"] for p in parts),
        "fit_s_mean": statistics.mean(p["fit_s"] for p in parts),
        "acq_s_mean": statistics.mean(p["acq_s"] for p in parts),
        "cache_fill_ask_s": warm, "settings": opt.settings, "picks": picks,
    }


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", nargs="+", default=["mlp", "cnn"], choices=["mlp", "cnn"])
    ap.add_argument("--n", nargs="+", type=int, default=[50, 100], help="evaluated networks")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", help="plugin setting key=value (repeatable)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    from benchsuite.settings import parse_assignments

    settings = parse_assignments(args.set or [])
    print(f"load average: {os.getloadavg()}  (goal: <= 5 s per decision; paper: 46.13 s)")
    out = []
    for kind in args.kinds:
        for n in args.n:
            r = time_decisions(kind, n, args.repeats, args.seed, settings)
            out.append(r)
            print(f"{kind} n={n}: mean {r['decision_s_mean']:.2f} s, max {r['decision_s_max']:.2f} s "
                  f"(distances {r['distances_s_mean']:.2f}, fit {r['fit_s_mean']:.2f}, EI-EA {r['acq_s_mean']:.2f}; "
                  f"{r['ea_evals_per_ask']} EA evaluations, {r['refit_asks']} hyperparameter draw(s))", flush=True)
    print(json.dumps(out, indent=1, default=str))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main()
