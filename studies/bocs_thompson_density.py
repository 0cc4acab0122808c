"""Why BOCS-SA3's proposals on wMaxSAT60 are dense: the Thompson sample's spread against the number of bits set.

Our committed BOCS-SA3 runs on wMaxSAT60 (``combo_maxsat``, ``maxsat60``, ``bocs_sa3``) propose points worse
than random ones for about 100 evaluations, and those points set about 41 of the 60 bits (random points 30;
the optimum sets none, and every set pair of bits that shares a binary clause breaks it).
``studies/bocs_code_model.py`` found that no detail of the BOCS authors' model alone changes that, and left
one reading unmeasured: *a Thompson sample of 36,050 coefficients varies most where the most features are
active, so its minimum lies at dense assignments.* This script measures that reading, and the one detail
that study could not afford in whole runs (a fresh 1,000-sweep chain per fit, with the code's other model
details), on the data of a committed run, without running the search.

For each committed run (``--reps``) and each training size n (``--n``: the run's first n trials), each
model variant draws ``--samples`` Thompson samples of the coefficients:

``ours``
    :class:`benchsuite.optimizers.models.sparse_blr.HorseshoeRegression` as BOCS uses it: a 1,000-sweep
    burn-in, then the warm chain's 20 sweeps between samples (BOCS's ``gibbs_steps``).
``code``
    the BOCS code's model (``studies/bocs_code_model.py``'s ``CodeRegression``: zero columns dropped,
    uncentred features with the intercept at mean(y), a fresh 1,000-sweep chain for every sample).

For every sample it records:

- the minimiser of the sampled surrogate found by BOCS's own annealer (5 chains of 500 steps, one from
  the incumbent, :func:`benchsuite.optimizers.acquisition.annealing.anneal_batch`, as ``BOCS._model_ask``):
  its number of bits set, its true loss, and its sampled value;
- on fixed random assignments with exactly k bits set (k = 0, 5, ..., 60; ``--per-k`` of each): the
  sampled values. Over the samples this gives, per k, the posterior mean, the posterior spread (standard
  deviation across samples at a fixed assignment, averaged over the assignments), its share from the
  highest order's coefficients alone (third order for BOCS-SA3), and the mean over samples of the lowest
  sampled value at that k;
- the true loss of those assignments, per k.

If the reading holds, the posterior mean at dense k is not low (the data say dense is bad, or nothing),
but the spread grows with k fast enough that the lowest sampled value falls at dense k.

    .venv/bin/python studies/bocs_thompson_density.py --reps 0 1 --n 20 40 --samples 10 \\
        --json studies/results/bocs_thompson_density.json

Results (2026-11-27, the command above, one thread, load 5; 10 samples per cell, 50 assignments per k;
``studies/results/bocs_thompson_density.json``). Bits set by the annealed minimiser, its true loss (random
points: -49), and the sampled surrogate's spread at k = 0 / 30 / 45 / 60 bits set:

========  ===  =====  =======  =========  ==================  ==========
rep, n    ord  model  bits     true loss  spread 0/30/45/60   lowest at k
========  ===  =====  =======  =========  ==================  ==========
0, 20     3    ours   42.9     +45.4      488 1505 3073 4772  45
0, 20     3    code   42.6     +43.8      0 745 1056 591      50
0, 40     3    ours   40.1     +21.0      123 455 611 333     50
0, 40     3    code   40.6     +25.6      0 336 496 366       40
1, 20     3    ours   42.5     +40.1      398 2079 3242 4021  50
1, 20     3    code   41.4     +31.9      0 686 1071 843      50
1, 40     3    ours   40.9     +28.0      103 454 662 780     45
1, 40     3    code   41.3     +30.1      0 347 514 303       45
0, 40     2    ours   26.7     -71.1      9 27 32 16          10
0, 40     2    code   35.1     -15.8      0 49 51 33          35
1, 40     2    ours   27.2     -68.6      8 25 27 13          15
1, 40     2    code   35.2     -11.9      0 46 49 40          35
========  ===  =====  =======  =========  ==================  ==========

("lowest at k": the k whose assignments hold the lowest sampled values, on average over samples; at
n = 20 the order-2 rows set 34-39 bits.)

- **The reading holds, at third order.** The true loss rises with the bits set (-195.7 at k = 0, -49 at
  30, +61 at 45, +195.7 at 60), and so, roughly, does the posterior mean. But a sample's spread across
  the posterior is 300-3,000 at k = 30-45, nearly all of it from the 34,220 third-order coefficients,
  against a signal of about 100 between k = 30 and 45: the lowest sampled values lie at k = 40-50, and
  the annealer's minimisers set 40-43 bits with true losses +21 to +45, worse than random points.
  With second-order features the spread is 20-50 and the data win: 27 bits and -70 at n = 40 (ours).
- **The BOCS code's model does the same.** Its whole model (zero columns dropped, uncentred features,
  a fresh 1,000-sweep chain per sample) sets 40.6-42.6 bits against ours' 40.1-42.9 on the same data,
  with true losses as bad. Its spread is smaller (no intercept term; 0 at k = 0 by construction) but
  still far above the signal. So neither a detail of the model nor the warm chain (our deviation) makes
  BOCS-SA3's points dense; Thompson sampling of this many third-order coefficients does.
- **Why only wMaxSAT60.** The two max-cut instances (wMaxSAT28 and 43) score an assignment and its
  complement the same (``max |loss(x) - loss(1 - x)|`` is 0 over 2,000 random x) and their mean loss is
  flat in the bits set, so a pull toward dense assignments costs nothing there (our BOCS-SA3 is better
  than the paper's on both). On frb10-6-4 the optimum sets no bit and every bit set costs.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchsuite.analysis.reproductions import default_root, load_committed
from benchsuite.benchmarks.maxsat import MaxSAT60
from benchsuite.optimizers.acquisition.annealing import anneal_batch, unordered_mask
from benchsuite.optimizers.bocs import InteractionFeatures
from benchsuite.optimizers.models.sparse_blr import HorseshoeRegression

from bocs_code_model import CodeRegression  # this folder: on sys.path when run as a script

ROOT = Path(__file__).resolve().parents[1]
KS = list(range(0, 61, 5))


@functools.lru_cache(maxsize=1)
def _committed_bocs_sa3() -> pd.DataFrame:
    """The committed BOCS-SA3 trials on wMaxSAT60, read once (the suite's reader, as the scorecard reads them)."""
    df, _ = load_committed(default_root(), "combo_maxsat")
    if df is None:
        raise SystemExit("no committed runs of combo_maxsat under reproductions/")
    return df[(df.benchmark == "maxsat60") & (df.optimizer == "bocs_sa3")]


def committed_run(rep: int, space) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001 - a benchsuite Space
    """Codes (in ``space``) and losses of one committed BOCS-SA3 run on wMaxSAT60, in trial order."""
    d = _committed_bocs_sa3()
    d = d[d.repetition == rep].sort_values("trial")
    if d.empty:
        raise SystemExit(f"no committed bocs_sa3 run with repetition {rep} on maxsat60")
    return space.to_codes([json.loads(c) for c in d.config]), d.loss.to_numpy(float)


def fixed_assignments(rng: np.random.Generator, d: int, per_k: int) -> np.ndarray:
    rows = []
    for k in KS:
        for _ in range(per_k):
            x = np.zeros(d, dtype=np.int64)
            x[rng.choice(d, size=k, replace=False)] = 1
            rows.append(x)
    return np.array(rows)


def samples(variant: str, X: np.ndarray, y: np.ndarray, n_samples: int, rng: np.random.Generator):
    """Yield (beta, b0) Thompson samples of one model variant fitted to (X, y)."""
    if variant == "ours":
        model = HorseshoeRegression(rng)
        for i in range(n_samples):
            beta = model.fit(X, y, 1000 if i == 0 else 20, warm=True)
            yield beta, model.intercept(beta), model.tau2, model.sigma2
    elif variant == "code":
        model = CodeRegression(rng, zero=True, uncentred=True, fresh=1000)
        for _ in range(n_samples):
            beta = model.fit(X, y, 1000, warm=True)
            yield beta, model.intercept(beta), model.tau2, model.sigma2
    else:
        raise SystemExit(f"unknown variant {variant!r}: ours or code")


def study(rep: int, n: int, variant: str, n_samples: int, per_k: int, seed: int, order: int = 3) -> dict:
    bench = MaxSAT60()
    codes, losses = committed_run(rep, bench.space)
    codes, losses = codes[:n], losses[:n]
    feats = InteractionFeatures(bench.space.n_levels, order)
    n3 = len(feats.terms[-1])  # the highest order's features come last
    X = feats(codes)
    rng = np.random.default_rng(seed)
    grid = fixed_assignments(np.random.default_rng(seed + 1), codes.shape[1], per_k)
    G = feats(grid)
    true_grid = bench.evaluate_codes(grid)
    vals, vals3, found = [], [], []
    t0 = time.process_time()
    for beta, b0, tau2, sigma2 in samples(variant, X, losses, n_samples, rng):
        vals.append(b0 + G @ beta)
        vals3.append(G[:, -n3:] @ beta[-n3:])

        def surrogate(c: np.ndarray) -> np.ndarray:
            return b0 + feats(c) @ beta

        starts = bench.space.sample_codes(rng, 5)
        starts[0] = codes[int(np.argmin(losses))]
        best, fbest = anneal_batch(surrogate, starts, bench.space.n_levels, unordered_mask(bench.space), rng,
                                   n_steps=500)
        i = int(np.argmin(fbest))
        found.append({"bits": int(best[i].sum()), "true": float(bench.evaluate_codes(best[i:i + 1])[0]),
                      "sampled": float(fbest[i]), "tau2": float(tau2), "sigma2": float(sigma2),
                      "fit_rmse": float(np.sqrt(np.mean((b0 + X @ beta - losses) ** 2))),
                      "nonzero_beta_share": float(np.mean(np.abs(beta) > 1e-3))})
    vals, vals3 = np.array(vals), np.array(vals3)  # (samples, grid)
    per_k_rows = []
    for j, k in enumerate(KS):
        sl = slice(j * per_k, (j + 1) * per_k)
        per_k_rows.append({
            "k": k,
            "true_mean": float(true_grid[sl].mean()),
            "posterior_mean": float(vals[:, sl].mean()),
            "spread": float(vals[:, sl].std(axis=0, ddof=1).mean()),
            "spread_top_order": float(vals3[:, sl].std(axis=0, ddof=1).mean()),
            "sample_min_mean": float(vals[:, sl].min(axis=1).mean()),
        })
    return {"rep": rep, "n": n, "variant": variant, "order": order, "samples": n_samples, "per_k": per_k,
            "data_bits_mean": float(codes.sum(axis=1).mean()), "found": found, "by_k": per_k_rows,
            "cpu_s": round(time.process_time() - t0, 1)}


def report(r: dict) -> None:
    f = r["found"]
    bits = np.array([x["bits"] for x in f])
    true = np.array([x["true"] for x in f])
    print(f"\nrep {r['rep']}, n {r['n']}, order {r['order']}, {r['variant']}: data set {r['data_bits_mean']:.1f} "
          f"bits on average; annealed minimisers set {bits.mean():.1f} bits (min {bits.min()}, max {bits.max()}), "
          f"true loss {true.mean():+.1f}; median tau2 {np.median([x['tau2'] for x in f]):.3g}, sigma2 "
          f"{np.median([x['sigma2'] for x in f]):.3g}, fit RMSE {np.median([x['fit_rmse'] for x in f]):.3g}; "
          f"{r['cpu_s']} CPU s", flush=True)
    print("   k   true  post.mean  spread  (top order)  mean sample min")
    for row in r["by_k"]:
        print(f"  {row['k']:2d} {row['true_mean']:+7.1f} {row['posterior_mean']:+9.1f} {row['spread']:7.1f} "
              f"{row['spread_top_order']:9.1f} {row['sample_min_mean']:+10.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, nargs="+", default=[0])
    ap.add_argument("--n", type=int, nargs="+", default=[20, 40])
    ap.add_argument("--variants", default="ours,code")
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--per-k", type=int, default=50, help="random assignments per number of bits set")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--order", type=int, nargs="+", default=[3],
                    help="interaction orders of the model (3: BOCS-SA3, the committed runs'; 2: BOCS-SA's)")
    ap.add_argument("--json", type=Path, help="write the results here (after every cell, atomically)")
    args = ap.parse_args()
    os.environ.setdefault("BENCHSUITE_DATA", str(ROOT.parent / "shared" / "data"))
    out = []
    for rep in args.reps:
        for n in args.n:
            for order, variant in [(o, v) for o in args.order for v in args.variants.split(",")]:
                r = study(rep, n, variant, args.samples, args.per_k, args.seed, order)
                report(r)
                out.append(r)
                if args.json:
                    tmp = args.json.with_suffix(".tmp")
                    tmp.write_text(json.dumps(out, indent=1))
                    tmp.replace(args.json)


if __name__ == "__main__":
    main()
