"""Is a BO model's predictive distribution calibrated where a run stalls? (dngo.txt Table 1, Hartmann6.)

    .venv/bin/python studies/dngo_calibration.py RESULT.csv [RESULT.csv ...] --n 70 100 \
        [--optimizer dngo|gp_ei] [--set weight_decay=0.01 ...] [--points 500]

For each result file of a run on a synthetic benchmark, and each n: fit the model of ``dngo`` or
``gp_ei`` (defaults, or the ``--set`` overrides) on the run's first n trials as ``ask`` does
(``gp_ei``: from a fresh MCMC chain with its burn-in, where a run continues one chain across
asks), then compare its predictive distribution (the mixture over the slice samples, noise included) with the true
function on ``--points`` uniform random points: RMSE, the true values' spread, mean predicted
standard deviation, and the share inside the central 95 % interval. Also printed: EI at the
incumbent, the largest EI over the random points and, where the benchmark's optimiser is known
(Hartmann6, Branin's first minimiser), the predicted mean, sd and EI there; and for the whole
run, the share of its last 100 evaluations on a face of the unit cube (any coordinate at 0 or 1).
Where the optimiser is known, one more line tells a model that rules the optimum out from a
search that misses it: the largest EI within 0.05 of the optimiser (1,000 points) against the
point the plugin's own EI search returns (``acq_opt.maximize_smooth``, as ``ask`` calls it).
"""
from __future__ import annotations

import argparse
import json

import numpy as np
from benchsuite.optimizers.acquisition import optimize as acq_opt
from benchsuite.optimizers.acquisition.functions import integrated_ei
from benchsuite.optimizers.dngo import DNGO
from benchsuite.optimizers.gp_ei import GPEI
from benchsuite.optimizers.models import gp

from benchsuite import registry
from benchsuite.results import load_result
from benchsuite.settings import parse_assignments

#: known minimisers in the benchmarks' own coordinates
OPTIMA = {
    "hartmann6": [0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573],
    "branin": [-np.pi, 12.275],
}


def face_share(X_unit: np.ndarray, last: int = 100) -> float:
    on = ((X_unit <= 1e-9) | (X_unit >= 1 - 1e-9)).any(1)
    return float(on[-last:].mean())


def fit_model(optimizer: str, space, settings: dict, X: np.ndarray, y: np.ndarray):
    """(plugin, posterior, EI on the noisy variance?) as the plugin's ``ask`` fits them on (X, y)."""
    if optimizer == "dngo":
        opt = DNGO(space, None, np.random.default_rng(0), **settings)
        return opt, opt.fit(X, y), bool(opt.settings["noisy_ei"])
    opt = GPEI(space, None, np.random.default_rng(0), **settings)
    return opt, gp.GPPosterior(opt.kernel, X, y, opt.sampler.sample(X, y)), False


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", help="result files of runs on one synthetic benchmark")
    p.add_argument("--n", type=int, nargs="+", default=[70, 100], help="fit on the first n trials")
    p.add_argument("--optimizer", choices=["dngo", "gp_ei"], default="dngo", help="whose model to fit")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="the plugin's setting")
    p.add_argument("--points", type=int, default=500, help="random test points")
    a = p.parse_args()
    settings = parse_assignments(a.set)
    for path in a.results:
        df = load_result(path)
        name = df.attrs["provenance"]["benchmark"]
        bench = registry.make_benchmark(name, {})
        names = bench.space.names
        X_all = np.array([[json.loads(c)[k] for k in names] for c in df["config"]])
        print(f"{path}: {name}, {len(df)} trials, best {df['loss'].min():.4f}; "
              f"last 100 evaluations on a face of the cube: {face_share(bench.space.to_unit(list(map(json.loads, df['config'])))):.0%}")
        rng = np.random.default_rng(1)
        R = rng.random((a.points, len(names)))
        R_cfg = [bench.space.from_unit(r) for r in R]
        truth = np.array([bench.evaluate(c).loss for c in R_cfg])
        star = OPTIMA.get(name)
        for n in a.n:
            X = bench.space.to_unit([dict(zip(names, x)) for x in X_all[:n]])
            y = df["loss"].to_numpy()[:n]
            opt, post, noisy = fit_model(a.optimizer, bench.space, settings, X, y)
            rows = [X[np.argmin(y)]] + ([bench.space.to_unit([dict(zip(names, star))])[0]] if star else [])
            P = post.predict(np.vstack([*rows, R]))
            noise = 0.0 if P.noise is None else P.noise[:, None]
            mu = P.mean.mean(0)
            sd = np.sqrt((P.variance + noise).mean(0) + P.mean.var(0))
            ei = integrated_ei(P, post.best(), include_noise=noisy)
            k = len(rows)
            z = (truth - mu[k:]) / sd[k:]
            line = (f"  n={n:4d}: RMSE {np.sqrt(np.mean((truth - mu[k:]) ** 2)):.3f} (true sd {truth.std():.3f}), "
                    f"mean predicted sd {sd[k:].mean():.3f}, 95% coverage {np.mean(np.abs(z) < 1.96):.0%}; "
                    f"EI incumbent {ei[0]:.2e}, max EI random {ei[k:].max():.2e}")
            if star:
                line += f"; at the optimum: mean {mu[1]:.3f} sd {sd[1]:.3f} EI {ei[1]:.2e}"
            print(line)
            if star:
                def acq(Xc: np.ndarray) -> np.ndarray:
                    return integrated_ei(post.predict(Xc), post.best(), include_noise=noisy)

                near = np.clip(rows[1] + rng.uniform(-0.05, 0.05, (1000, len(names))), 0.0, 1.0)
                x_s, v_s = acq_opt.maximize_smooth(acq, len(names), np.random.default_rng(n), opt.settings, X, y)
                print(f"    EI search returns {v_s:.2e} at distance {np.linalg.norm(x_s - rows[1]):.2f} from the "
                      f"optimiser, true value {bench.evaluate(bench.space.from_unit(x_s)).loss:.4f}; "
                      f"largest EI within 0.05 of the optimiser {acq(near).max():.2e}")


if __name__ == "__main__":
    main()
