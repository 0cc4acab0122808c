"""Effective sample size of gp_ei's hyperparameter chain with 10 steps per fit (issue 24, item 2).

Two measurements on Hartmann6 data (random inputs, seeded):

1. **Autocorrelation at fixed data.** After a burn-in of ``--burnin`` steps, the sampler is
   refit ``--fits`` times on the same n points, ``chain_length`` steps each (exactly what an
   ask does, continuing the chain), and the integrated autocorrelation time tau of every
   hyperparameter is estimated from the concatenated chain (``emcee.autocorr``, mean over
   walkers as emcee does). ESS per fit = walkers x steps per fit / tau; after k fits the
   ensemble has had k x steps / tau autocorrelation times to forget where it was.
2. **Tracking growing data.** A run is mimicked: the chain is burnt in on 20 points and then
   refit once per added point (10 steps each) up to n; its final walkers are compared with a
   long fresh chain (burn-in 1000, then 1000 steps) on the same n points: per hyperparameter,
   the difference of the means in units of the long chain's standard deviation, and the ratio
   of the standard deviations.

    nice -n 5 .venv/bin/python studies/gp_mcmc_ess.py --n 50 100 --json studies/results/gp_mcmc_ess.json
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from benchsuite.registry import make_benchmark

    bench = make_benchmark("hartmann6")
    rng = np.random.default_rng(seed)
    X = rng.random((n, 6))
    y = np.array([bench.evaluate(bench.space.from_unit(x), None).loss for x in X])
    return X, y


def autocorr(n: int, fits: int, steps: int, burnin: int, seed: int) -> dict:
    """Integrated autocorrelation times of the continued chain at fixed data."""
    import emcee
    from benchsuite.optimizers.inference import mcmc
    from benchsuite.optimizers.kernels.continuous import Matern52

    X, y = _data(n, seed)
    k = Matern52(range(6))
    s = mcmc.HyperparameterSampler(k, np.random.default_rng(seed + 1), burnin=burnin, chain_length=steps)
    c0 = time.process_time()
    s.sample(X, y)
    chains = []
    for _ in range(fits):
        s.sample(X, y)
        chains.append(s.last_chain)
    chain = np.concatenate(chains)  # (fits * steps, W, P)
    tau = emcee.autocorr.integrated_time(chain, c=5, tol=0, quiet=True)
    names = k.param_names() + ["mean", "log_noise"]
    W = chain.shape[1]
    return {"n": n, "walkers": W, "steps_per_fit": steps, "steps": chain.shape[0], "cpu_s": time.process_time() - c0,
            "tau": dict(zip(names, tau.tolist())), "tau_max": float(tau.max()),
            "ess_per_fit_min": float(W * steps / tau.max()), "ess_total_min": float(W * chain.shape[0] / tau.max()),
            "chain_over_tau_min": float(chain.shape[0] / tau.max())}


def tracking(n: int, steps: int, seed: int) -> dict:
    """Final walkers of a mimicked run vs a long fresh chain on the same data."""
    from benchsuite.optimizers.inference import mcmc
    from benchsuite.optimizers.kernels.continuous import Matern52

    X, y = _data(n, seed)
    k = Matern52(range(6))
    c0 = time.process_time()
    run = mcmc.HyperparameterSampler(k, np.random.default_rng(seed + 2), burnin=100, chain_length=steps)
    for m in range(20, n + 1):
        th_run = run.sample(X[:m], y[:m])
    long = mcmc.HyperparameterSampler(k, np.random.default_rng(seed + 3), burnin=1000, chain_length=1000)
    long.sample(X, y)
    ref = long.last_chain[-1000:].reshape(-1, th_run.shape[1])  # (1000 W, P)
    names = k.param_names() + ["mean", "log_noise"]
    sd = ref.std(0)
    return {"n": n, "cpu_s": time.process_time() - c0,
            "mean_diff_in_sd": dict(zip(names, ((th_run.mean(0) - ref.mean(0)) / sd).round(3).tolist())),
            "sd_ratio": dict(zip(names, (th_run.std(0) / sd).round(3).tolist()))}


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", nargs="+", type=int, default=[50, 100])
    ap.add_argument("--fits", type=int, default=200)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--burnin", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tracking-only", action="store_true", help="skip the autocorrelation measurement")
    ap.add_argument("--json")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()}", flush=True)
    out = []
    for n in args.n:
        a = None if args.tracking_only else autocorr(n, args.fits, args.steps, args.burnin, args.seed)
        print(json.dumps(a), flush=True)
        t = tracking(n, args.steps, args.seed)
        print(json.dumps(t), flush=True)
        out.append({"steps_per_fit": args.steps, "autocorr": a, "tracking": t})
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=1)
    print(f"load average {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
