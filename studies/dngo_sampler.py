"""Does DNGO's hyperparameter sampler decide where a run goes? (issue 23, item 1: slice sampling vs emcee,
number of samples, burn-in.)

    OMP_NUM_THREADS=1 nice -n 5 .venv/bin/python studies/dngo_sampler.py --benchmark hartmann6 \\
        --reps 0 1 2 3 4 5 6 7 8 9 --n 100 200 --json studies/results/dngo_sampler.json
    .venv/bin/python studies/dngo_sampler.py --summary studies/results/dngo_sampler.json

For each committed run of ``dngo`` in ``reproductions/dngo_table1/runs.columns.xz`` (the protocol's own
runs: no rerun is needed to get their data) and each n, the model is fitted on the run's first n
trials exactly as ``ask`` fits it (the network trained by ``DNGO.fit``; a fresh chain: 100 burn-in
sweeps, 10 samples), and then, on the *same* basis and the same Eq. (8) posterior over
``[log alpha, log beta, lambda, c, log Lambda]``:

* ``ask``: the plugin's own 10 slice samples;
* ``slice_long``: 500 burn-in + 1,000 sweeps of the same coordinate-wise slice sampler, every 10th kept;
* ``emcee``: the affine-invariant ensemble sampler that pybnn/RoBO's DNGO uses (emcee), 2 x dim walkers
  started in a small ball around the ask's last sample, 2,000 burn-in + 2,000 steps (pybnn's numbers),
  100 samples kept from the last step's walkers and earlier steps.

All three target one posterior, so where they agree the sampler (its kind, length and burn-in) is
not what sends a run to one basin or the other; where the short chain differs from the long ones,
it is. Reported per sampler: posterior quantiles (5 %, 50 %, 95 %) of log beta (noise precision),
log alpha and the largest log Lambda_kk (the quadratic prior mean's curvature); on 500 uniform
random points the RMSE and the share inside the central 95 % interval of the predictive mixture
(noise included); at the benchmark's known minimiser the predicted mean and sd and the largest EI
within 0.05 of it (1,000 points), against the largest EI over the random points. The network is
trained once per (run, n); only the sampler changes.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np

OPTIMA = {"hartmann6": [0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573],
          "branin": [-math.pi, 12.275]}


def committed_run(protocol: str, benchmark: str, optimizer: str, rep: int) -> tuple[list[dict], np.ndarray]:
    """Configs and losses of one committed run, in evaluation order."""
    from benchsuite.analysis.reproductions import default_root, load_committed

    df, _ = load_committed(default_root(), protocol)
    if df is None:
        raise SystemExit(f"no committed runs of {protocol}")
    d = df[(df["benchmark"] == benchmark) & (df["optimizer"] == optimizer) & (df["repetition"] == rep)]
    if not len(d):
        raise SystemExit(f"{protocol}: no committed run of {optimizer} on {benchmark}, repetition {rep}")
    d = d.sort_values("evaluation")
    return [json.loads(c) for c in d["config"]], d["loss"].to_numpy(float)


def emcee_samples(logpost, theta0: np.ndarray, rng: np.random.Generator, n_burn: int, n_steps: int,
                  keep: int) -> tuple[np.ndarray, float]:
    """``keep`` rows from an emcee chain (walkers in a ball around ``theta0``) and its mean acceptance."""
    import emcee

    dim = theta0.size
    walkers = 2 * dim
    p0 = theta0[None, :] + 1e-3 * rng.standard_normal((walkers, dim))
    for w in range(walkers):  # every walker must start inside the support
        while not math.isfinite(logpost(p0[w])):
            p0[w] = theta0 + 1e-4 * rng.standard_normal(dim)
    sampler = emcee.EnsembleSampler(walkers, dim, logpost)
    start = emcee.State(p0, random_state=np.random.RandomState(int(rng.integers(2**31))).get_state())
    state = sampler.run_mcmc(start, n_burn, progress=False)
    sampler.reset()
    sampler.run_mcmc(state, n_steps, progress=False)
    chain = sampler.get_chain()  # (steps, walkers, dim)
    flat = chain[::max(1, n_steps * walkers // keep // walkers)].reshape(-1, dim)
    idx = rng.choice(len(flat), size=min(keep, len(flat)), replace=False)
    return flat[idx], float(np.mean(sampler.acceptance_fraction))


def summarise(name: str, theta: np.ndarray, post, R: np.ndarray, truth: np.ndarray, star: np.ndarray | None,
              near: np.ndarray | None, K: int) -> dict:
    from benchsuite.optimizers.acquisition.functions import integrated_ei

    def q(v: np.ndarray) -> list[float]:
        return [round(float(x), 3) for x in np.percentile(v, [5, 50, 95])]

    pts = np.vstack([R] + ([star[None, :], near] if star is not None else []))
    P = post.predict(pts)
    noise = P.noise[:, None]
    mu = P.mean.mean(0)
    sd = np.sqrt((P.variance + noise).mean(0) + P.mean.var(0))
    ei = integrated_ei(P, post.best(), include_noise=True)
    m = len(R)
    z = (truth - mu[:m]) / sd[:m]
    out = {"sampler": name, "samples": int(theta.shape[0]),
           "log_beta": q(theta[:, 1]), "log_alpha": q(theta[:, 0]),
           "max_log_Lambda": q(theta[:, 3 + K:3 + 2 * K].max(1)),
           "rmse": round(float(np.sqrt(np.mean((truth - mu[:m]) ** 2))), 4),
           "coverage95": round(float(np.mean(np.abs(z) < 1.96)), 3),
           "max_ei_random": float(ei[:m].max())}
    if star is not None:
        out.update(mean_at_optimum=round(float(mu[m]), 3), sd_at_optimum=round(float(sd[m]), 3),
                   max_ei_near_optimum=float(ei[m + 1:].max()))
    return out


def summary(path: str, target: float = 0.02) -> None:
    """A Markdown table from ``--json`` output: per n and sampler, the runs that ended in the global basin
    (final within ``target`` of the optimum) beside those that did not; medians over runs."""
    from benchsuite.registry import make_benchmark

    with open(path) as fh:
        data = json.load(fh)
    opt = make_benchmark(data["benchmark"], {}).optimum
    rows = data["rows"]
    print("| n | sampler | runs | ended in | median log beta | median max log Lambda | 95 % coverage | "
          f"predicted mean at the optimum (true {opt:.3f}) | runs with EI > 1e-6 within 0.05 of the optimum | CPU s |")
    print("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for n in sorted({r["n"] for r in rows}):
        for sampler in ("ask", "slice_long", "emcee"):
            for basin, ok in (("global basin", True), ("elsewhere", False)):
                g = [r for r in rows if r["n"] == n and r["sampler"] == sampler
                     and (abs(r["run_final"] - opt) <= target) == ok]
                if not g:
                    continue
                med = lambda k, i=None: float(np.median([r[k][i] if i is not None else r[k] for r in g]))  # noqa: E731
                hits = sum(r["max_ei_near_optimum"] > 1e-6 for r in g)
                print(f"| {n} | {sampler} | {len(g)} | {basin} | {med('log_beta', 1):.2f} | "
                      f"{med('max_log_Lambda', 1):.2f} | {med('coverage95'):.0%} | {med('mean_at_optimum'):.2f} | "
                      f"{hits} of {len(g)} | {med('cpu_s'):.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocol", default="dngo_table1")
    ap.add_argument("--benchmark", default="hartmann6")
    ap.add_argument("--optimizer", default="dngo", help="the committed label whose runs' data are refitted")
    ap.add_argument("--reps", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--n", type=int, nargs="+", default=[100, 200])
    ap.add_argument("--points", type=int, default=500)
    ap.add_argument("--json", help="write the rows here (atomically)")
    ap.add_argument("--summary", metavar="JSON", help="print the Markdown table of a --json file and stop")
    a = ap.parse_args()
    if a.summary:
        summary(a.summary)
        return

    from benchsuite import registry
    from benchsuite.optimizers.dngo import DNGO
    from benchsuite.optimizers.models.adaptive_basis import AdaptiveBasisPosterior, slice_sweeps

    bench = registry.make_benchmark(a.benchmark, {})
    rng = np.random.default_rng(1)
    K = len(bench.space.names)
    R = rng.random((a.points, K))
    truth = np.array([bench.evaluate(bench.space.from_unit(r)).loss for r in R])
    star = None
    if a.benchmark in OPTIMA:
        star = bench.space.to_unit([dict(zip(bench.space.names, OPTIMA[a.benchmark]))])[0]
    rows = []
    for rep in a.reps:
        configs, losses = committed_run(a.protocol, a.benchmark, a.optimizer, rep)
        final = float(np.min(losses))
        for n in a.n:
            X = bench.space.to_unit(configs[:n])
            y = losses[:n]
            opt = DNGO(bench.space, None, np.random.default_rng(0))
            t0 = time.process_time()
            post = opt.fit(X, y)
            stats, feats = post.stats, post.features
            ys_min = float(((y - post.y_shift) / post.y_scale).min())
            near = (np.clip(star + rng.uniform(-0.05, 0.05, (1000, K)), 0, 1) if star is not None else None)

            def logpost(t: np.ndarray) -> float:
                lp = opt.prior.log_prior(t, K)
                return lp + stats.log_likelihood(t) if math.isfinite(lp) else -math.inf

            sets = {"ask": (post.theta, time.process_time() - t0)}
            t1 = time.process_time()
            long = slice_sweeps(stats, opt.prior, post.theta[-1], np.random.default_rng(rep * 1000 + n), 1000, 500)
            sets["slice_long"] = (long[::10], time.process_time() - t1)
            t2 = time.process_time()
            em, acc = emcee_samples(logpost, post.theta[-1], np.random.default_rng(rep * 1000 + n + 1), 2000, 2000, 100)
            sets["emcee"] = (em, time.process_time() - t2)
            for name, (theta, cpu) in sets.items():
                p = AdaptiveBasisPosterior(feats, stats, theta, post.y_shift, post.y_scale, ys_min)
                r = summarise(name, theta, p, R, truth, star, near, K)
                r.update(rep=rep, n=n, run_final=round(final, 4), cpu_s=round(cpu, 2))
                if name == "emcee":
                    r["acceptance"] = round(acc, 3)
                rows.append(r)
                print(json.dumps(r), flush=True)
    if a.json:
        tmp = a.json + ".part"
        with open(tmp, "w") as fh:
            json.dump({"benchmark": a.benchmark, "protocol": a.protocol, "optimizer": a.optimizer,
                       "load_average": os.getloadavg(), "rows": rows}, fh, indent=1)
        os.replace(tmp, a.json)


if __name__ == "__main__":
    main()
