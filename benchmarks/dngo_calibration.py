"""Is DNGO's predictive distribution calibrated where a run stalls? (dngo.txt Table 1, Hartmann6.)

    .venv/bin/python benchmarks/dngo_calibration.py RESULT.csv [RESULT.csv ...] --n 70 100 \
        [--set weight_decay=0.01 ...] [--points 500]

For each result file of a run on a synthetic benchmark, and each n: fit DNGO (defaults, or the
``--set`` overrides) on the run's first n trials exactly as ``ask`` does, then compare its
predictive distribution (the mixture over the slice samples, noise included) with the true
function on ``--points`` uniform random points: RMSE, the true values' spread, mean predicted
standard deviation, and the share inside the central 95 % interval. Also printed: EI at the
incumbent, the largest EI over the random points and, where the benchmark's optimiser is known
(Hartmann6, Branin's first minimiser), the predicted mean, sd and EI there; and for the whole
run, the share of its last 100 evaluations on a face of the unit cube (any coordinate at 0 or 1).
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from benchsuite import registry
from benchsuite.optimizers.dngo import DNGO
from benchsuite.optimizers.models.acquisition import integrated_ei
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", help="result files of runs on one synthetic benchmark")
    p.add_argument("--n", type=int, nargs="+", default=[70, 100], help="fit on the first n trials")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="dngo setting")
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
            opt = DNGO(bench.space, None, np.random.default_rng(0), **settings)
            post = opt.fit(X, y)
            rows = [X[np.argmin(y)]] + ([bench.space.to_unit([dict(zip(names, star))])[0]] if star else [])
            P = post.predict(np.vstack([*rows, R]))
            noise = 0.0 if P.noise is None else P.noise[:, None]
            mu = P.mean.mean(0)
            sd = np.sqrt((P.variance + noise).mean(0) + P.mean.var(0))
            ei = integrated_ei(P, post.best(), include_noise=True)
            k = len(rows)
            z = (truth - mu[k:]) / sd[k:]
            line = (f"  n={n:4d}: RMSE {np.sqrt(np.mean((truth - mu[k:]) ** 2)):.3f} (true sd {truth.std():.3f}), "
                    f"mean predicted sd {sd[k:].mean():.3f}, 95% coverage {np.mean(np.abs(z) < 1.96):.0%}; "
                    f"EI incumbent {ei[0]:.2e}, max EI random {ei[k:].max():.2e}")
            if star:
                line += f"; at the optimum: mean {mu[1]:.3f} sd {sd[1]:.3f} EI {ei[1]:.2e}"
            print(line)


if __name__ == "__main__":
    main()
