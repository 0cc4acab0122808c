"""Is nb201_authors' CIFAR-100 REA row (0.17 points under the authors' Table 5) the budget translation?

``nb201_authors`` gives each run 200,000 s of the table's 200-epoch training, the authors' 12,000 s of
12-epoch training scaled by 200/12. On ImageNet16-120 that was measured to buy fewer evaluations than the
authors had (``studies/nb201_search_signal.py``). On CIFAR-100 our random search matches the paper at the
translated budget (55 evaluations on average) while our REA, at 47, ends 0.17 points under the paper's 71.84.
REA gains more per evaluation than random search, so a budget that is a little short would show on REA
first. This runs our two optimizers as the protocol sets them up (REA: population 10, sample 3; one
sequential worker; 200-epoch validation error as the signal) with an evaluation budget instead of a time
budget, and reports the test accuracy of the incumbent after k evaluations for a grid of k: if REA reaches
the paper's value at a k where random search still matches the paper's, one larger budget explains both
rows (the 12-epoch times the authors' budget was spent on are not in the table to check it directly).
The run of a sequential optimizer does not depend on its budget, so one run of the largest k gives every
smaller k. Seeds are not the protocol's (these are new runs): 10_000 + i.

    .venv/bin/python studies/nb201_rea_budget.py [--runs 500] [--json studies/results/nb201_rea_budget.json]

Result (2026-11-27, 500 runs per optimizer, ``studies/results/nb201_rea_budget.json``; mean +- standard error
of the test accuracy in %):

| k | random search (paper 71.04) | REA (paper 71.84) |
|---|---|---|
| 30 | 70.67 +- 0.04 | 71.11 +- 0.05 |
| 47 | 70.97 +- 0.04 | 71.75 +- 0.05 |
| 55 | 71.07 +- 0.04 | 71.94 +- 0.05 |
| 65 | 71.17 +- 0.04 | 72.12 +- 0.04 |
| 80 | 71.31 +- 0.04 | 72.36 +- 0.04 |

REA reaches the paper's 71.84 at about 51 evaluations. Under the translated time budget our committed REA runs
complete 46.2 on average (39 to 59; REA moves to architectures that train longer: 4,289 s per evaluation
against random search's 3,656 s, so it completes fewer than random search's 54.2) and end at 71.67, what the
curve gives near k = 46. A budget about 10 % larger would put REA on the paper's value and keep random search
within its match (71.07 at 55, 71.17 at 65 against 71.04 +- 0.13 for a match): the same cause, a translated
budget short of the authors', as measured on ImageNet16-120 (where it is short by a larger factor).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import benchsuite

PAPER = {"random_search": (71.04, 1.07), "regularized_evolution": (71.84, 0.99)}  # Table 5, CIFAR-100: mean, sd
SETTINGS = {"random_search": {}, "regularized_evolution": {"population_size": 10, "sample_size": 3}}
KS = (30, 47, 55, 65, 80, 100, 125, 150)


def main() -> None:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--benchmark", default="nb201_cifar100")
    ap.add_argument("--json")
    args = ap.parse_args()
    acc = {o: np.empty((args.runs, len(KS))) for o in SETTINGS}
    t0 = time.time()
    for i in range(args.runs):
        for opt, settings in SETTINGS.items():
            df = benchsuite.run(args.benchmark, opt, seed=10_000 + i, budget_evals=max(KS),
                                optimizer_settings=settings, include_overhead=False)
            test = df.sort_values("evaluation")["incumbent_test_loss"].to_numpy()
            acc[opt][i] = [100.0 * (1.0 - test[k - 1]) for k in KS]
        if (i + 1) % 20 == 0:
            print(f"{i + 1}/{args.runs} runs, {time.time() - t0:.0f} s", flush=True)
    out = {"benchmark": args.benchmark, "runs": args.runs, "k": list(KS), "paper": PAPER, "rows": {}}
    print(f"| k | {' | '.join(f'{o} (paper {PAPER[o][0]})' for o in SETTINGS)} |")
    print("|---|---|---|")
    for j, k in enumerate(KS):
        cells = []
        for o in SETTINGS:
            a = acc[o][:, j]
            se = a.std(ddof=1) / np.sqrt(len(a))
            out["rows"].setdefault(o, []).append({"k": k, "mean": float(a.mean()), "se": float(se),
                                                  "sd": float(a.std(ddof=1))})
            cells.append(f"{a.mean():.2f} +- {se:.2f} (sd {a.std(ddof=1):.2f})")
        print(f"| {k} | {' | '.join(cells)} |")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
