"""CPU seconds per TreeBO decision (one ``ask``) with 50 and 100 evaluated networks, against nasbot.txt's 7.83 s.

nasbot.txt Sec. 5 reports the time each method takes to determine the next architecture: TreeBO 7.83 s, NASBOT
46.13 s, RAND 26.43 s, EA 0.19 s (their machine; how many networks were evaluated then is not said). As in a
run, the plugin is told the space's initial pool and then random feed-forward networks of its tree
(``ChainTree.sample``) with a cheap synthetic loss up to ``n - 1`` evaluations; then, ``repeats`` times, one
more network is told and the next ask is timed in CPU seconds of this process (``time.process_time``). Every
ask refits the hyperparameters (type-II ML) and maximises EI in every leaf, so the asks cost alike; the split
(hyperparameter fit, EI search) comes from the plugin's ``last_timing``.

Spaces: ``paper`` is the authors' limits (5-60 layers, 8-1024 units: 56 depths to search) and ``cpu`` the
nasbot_cpu protocol's (at most 15 layers of 64 units: 11 depths). Run it on one thread::

    OMP_NUM_THREADS=1 .venv/bin/python perf/bench_treebo_decision.py
    OMP_NUM_THREADS=1 .venv/bin/python perf/bench_treebo_decision.py --kinds mlp --spaces cpu --n 50 --repeats 2

Not a test: timings depend on the machine and its load (the footer prints the load average).
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

SPACES = {"paper": {}, "cpu": {"max_num_layers": 15, "max_num_units_per_layer": 64}}
PAPER_S = 7.83  # nasbot.txt Sec. 5, TreeBO's time per decision


def synthetic_loss(g) -> float:
    """Smooth in log total units and the number of layers: a stand-in for a trained network."""
    units = sum(u for u in g.units if u)
    return float((math.log2(max(units, 1)) - 9.0) ** 2 / 4.0 + (g.n_layers - 9) ** 2 / 16.0)


def time_decisions(kind: str, space_name: str, n_obs: int, repeats: int, seed: int, settings: dict) -> dict:
    """Steady-state ask timings of ``treebo`` at ``n_obs`` evaluated networks."""
    from benchsuite.architectures.layer_graph_space import LayerGraphSpace
    from benchsuite.optimizers.treebo import TreeBO

    space = LayerGraphSpace(kind, **SPACES[space_name])
    tree = space.feed_forward()
    rng = np.random.default_rng(seed)
    opt = TreeBO(space, None, np.random.default_rng(seed + 1), **settings)
    tid = 0

    def tell(g) -> None:
        nonlocal tid
        opt.tell(Trial(tid, g, None), Result(synthetic_loss(space.validate(g)), 1.0))
        tid += 1

    for g in opt.design:
        tell(g)
    while tid < n_obs - 1:
        tell(tree.to_config(tree.sample(rng)))
    opt.n_asked = tid  # as if every told network had been asked for
    cpus, walls, parts = [], [], []
    for _ in range(repeats):
        tell(tree.to_config(tree.sample(rng)))
        t0, c0 = time.perf_counter(), time.process_time()
        opt.ask()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        parts.append(dict(opt.last_timing))
    return {
        "kind": kind, "space": space_name, "depths": len(tree.depths), "n_evaluated": n_obs, "repeats": repeats,
        "decision_cpu_s_mean": statistics.mean(cpus), "decision_cpu_s_max": max(cpus),
        "decision_cpu_s_all": [round(t, 3) for t in cpus], "decision_wall_s_mean": statistics.mean(walls),
        "fit_s_mean": statistics.mean(p["fit_s"] for p in parts),
        "acq_s_mean": statistics.mean(p["acq_s"] for p in parts), "settings": opt.settings,
    }


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", nargs="+", default=["mlp", "cnn"], choices=["mlp", "cnn"])
    ap.add_argument("--spaces", nargs="+", default=["cpu", "paper"], choices=list(SPACES))
    ap.add_argument("--n", nargs="+", type=int, default=[50, 100], help="evaluated networks")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", help="plugin setting key=value (repeatable)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    from benchsuite.settings import parse_assignments

    settings = parse_assignments(args.set or [])
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; paper: {PAPER_S} s per TreeBO decision")
    out = []
    for space_name in args.spaces:
        for kind in args.kinds:
            for n in args.n:
                r = time_decisions(kind, space_name, n, args.repeats, args.seed, settings)
                out.append(r)
                print(f"{kind} {space_name} ({r['depths']} depths) n={n}: {r['decision_cpu_s_mean']:.2f} CPU s per "
                      f"decision (max {r['decision_cpu_s_max']:.2f}; fit {r['fit_s_mean']:.2f} s, EI search "
                      f"{r['acq_s_mean']:.2f} s wall), {r['decision_cpu_s_mean'] / PAPER_S:.2f} x the paper's",
                      flush=True)
    print(json.dumps(out, indent=1, default=str))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main()
