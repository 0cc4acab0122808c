"""CPU and wall seconds of one steady-state ``dngo`` ask at n observations, per training recipe.

    OMP_NUM_THREADS=1 nice -n 5 .venv/bin/python perf/dngo_ask_cost.py [--n 150] [--benchmark hartmann6]

Tells ``n`` uniform random points of the benchmark (seed 0), asks once to burn the chain in,
then times ``--asks`` more asks for each recipe in one process: the default (Adam, 500 epochs
of batch 10, at most 3,000 steps), the same without the step cap (pybnn's 500 epochs), and the
recipe before issue 23 (SGD). Prints CPU seconds (``time.process_time``), wall seconds and the
load average, and the ratios to the default measured in this run (the machine is shared).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from benchsuite.optimizer import Trial
from benchsuite.optimizers.dngo import DNGO
from benchsuite.registry import make_benchmark

RECIPES = {
    "default": {},
    "no_step_cap": {"max_steps": None},
    "before_issue_23": {"optimizer": "sgd", "learning_rate": 0.05, "epochs": 100, "batch_size": 64,
                        "min_steps": 2000, "max_steps": None, "weight_decay": 1e-4, "normalize_input": False},
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=150)
    p.add_argument("--benchmark", default="hartmann6")
    p.add_argument("--asks", type=int, default=2)
    args = p.parse_args()
    bench = make_benchmark(args.benchmark)
    cpu: dict[str, float] = {}
    for name, st in RECIPES.items():
        rng = np.random.default_rng(0)
        opt = DNGO(bench.space, None, np.random.default_rng(1), **st)
        for i in range(args.n):
            c = bench.space.sample(rng)
            opt.tell(Trial(i, c, None), bench.evaluate(c))
        opt.n_asked = 99  # past the initial design
        opt.ask()  # the first fit burns the chain in
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(args.asks):
            opt.ask()
        cpu[name] = (time.process_time() - c0) / args.asks
        wall = (time.perf_counter() - w0) / args.asks
        print(f"{name:16s} n={args.n}: {cpu[name]:.2f} CPU s, {wall:.2f} wall s per ask; "
              f"load {os.getloadavg()[0]:.1f}; CPU ratio to default {cpu[name] / cpu['default']:.2f}", flush=True)


if __name__ == "__main__":
    main()
