"""Seconds per ``ask`` against the number of observations n, for dngo and gp_ei (dngo.txt Figure 1).

One run: each plugin is told random Hartmann6 observations in growing batches; at every n
it asks with 0, 10 and 100 running trials (random configurations) to fantasise,
``--repeats`` times each (default 3), and each ask is timed (wall seconds, whole ask: network
training or MCMC, slice sampling, fantasies, EI maximisation). Before the first timed ask one
untimed ask burns in the hyperparameter chain, so every timed ask is a steady-state one that
continues the chain, as in a run. gp_ei stops growing once one ask exceeds ``--gp-limit``
seconds (its cost is cubic in n).

Slopes are least-squares fits of log(median seconds) on log(n), over all n and over n >= 1000.
The figure draws the median of the repeats with a bar from the fastest to the slowest.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python perf/bench_dngo_scaling.py \\
        --out docs/results/dngo_scaling      # writes .json and .png

Not a test: timings depend on the machine and its load (``uptime`` is printed).
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import json
import os
import time

import numpy as np

from benchsuite.optimizer import Trial
from benchsuite.registry import get_optimizer, make_benchmark

PENDING = (0, 10, 100)


def measure(name: str, ns: list[int], seed: int, limit: float, settings: dict, repeats: int = 1) -> list[dict]:
    """``repeats`` timed asks per pending count of one plugin at every n (while under ``limit`` seconds)."""
    bench = make_benchmark("hartmann6")
    rng = np.random.default_rng(seed)
    opt = get_optimizer(name)(bench.space, None, np.random.default_rng(seed + 1), **settings)
    rows, told = [], 0
    pend_all = [Trial(10**6 + j, bench.space.sample(rng), None) for j in range(max(PENDING))]
    for n in ns:
        while told < n:
            c = bench.space.sample(rng)
            opt.tell(Trial(told, c, None), bench.evaluate(c))
            told += 1
        opt.n_asked = 10**6  # past the initial design
        if not rows:
            opt.ask()  # untimed: burn-in of the hyperparameter chain
        slowest = 0.0
        for p in PENDING:
            for r in range(repeats):
                t0 = time.perf_counter()
                opt.ask(pend_all[:p])
                dt = time.perf_counter() - t0
                slowest = max(slowest, dt)
                rows.append({"optimizer": name, "n": n, "pending": p, "repeat": r, "seconds": dt, **opt.last_timing})
                print(json.dumps(rows[-1]), flush=True)
        if slowest > limit:
            break
    return rows


def per_n(rows: list[dict], key: tuple[str, int]) -> list[tuple[int, float, float, float]]:
    """(n, median, fastest, slowest seconds) of one (optimizer, pending) curve, by n (rows without ``repeat``,
    from before repeats were timed, are single asks)."""
    by_n: dict[int, list[float]] = {}
    for r in rows:
        if (r["optimizer"], r["pending"]) == key:
            by_n.setdefault(r["n"], []).append(r["seconds"])
    return [(n, float(np.median(v)), min(v), max(v)) for n, v in sorted(by_n.items())]


def slopes(rows: list[dict]) -> dict:
    """Least-squares slope of log median seconds on log n per (optimizer, pending), all n and n >= 1000."""
    out = {}
    for key in sorted({(r["optimizer"], r["pending"]) for r in rows}):
        pts = [(n, med) for n, med, _, _ in per_n(rows, key)]
        n, s = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
        entry = {"all": float(np.polyfit(n, s, 1)[0]) if len(pts) > 1 else None}
        big = [(a, b) for a, b in pts if a >= 1000]
        entry["n>=1000"] = float(np.polyfit(np.log([a for a, _ in big]), np.log([b for _, b in big]), 1)[0]) \
            if len(big) > 1 else None
        out[f"{key[0]} pending={key[1]}"] = entry
    return out


def plot(rows: list[dict], fits: dict, path: str) -> None:
    """Log-log figure of seconds per ask against n: the median of the repeats, a bar from fastest to slowest."""
    from benchsuite.analysis.plots import _pyplot, log_ticks

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    styles = {"dngo": "-", "gp_ei": "--"}
    repeats = max((r.get("repeat", 0) for r in rows), default=0) + 1
    for i, key in enumerate(sorted({(r["optimizer"], r["pending"]) for r in rows})):
        pts = per_n(rows, key)
        n = np.array([p[0] for p in pts], float) * 1.03 ** (i % 3 - 1)  # the three pending counts side by side
        med = np.array([p[1] for p in pts])
        err = [med - np.array([p[2] for p in pts]), np.array([p[3] for p in pts]) - med]
        f = fits[f"{key[0]} pending={key[1]}"]["all"]
        label = f"{key[0]}, {key[1]} pending" + (f" (slope {f:.2f})" if f is not None else "")
        ax.errorbar(n, med, yerr=err if repeats > 1 else None, fmt=styles.get(key[0], "-"), marker="o", ms=4,
                    capsize=2, elinewidth=1, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    log_ticks(ax.xaxis)
    log_ticks(ax.yaxis)
    ax.set_xlabel("observations n")
    ax.set_ylabel("seconds per ask")
    spread = f"median of {repeats} asks, bars fastest to slowest" if repeats > 1 else "one ask per point"
    ax.set_title(f"Hartmann6: one ask (fit + fantasies + EI maximisation)\n{spread}", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    """Run the measurement and write ``OUT.json`` and ``OUT.png``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dngo-n", default="50,100,200,500,1000,2000,5000")
    ap.add_argument("--gp-n", default="50,100,200,500,1000,2000")
    ap.add_argument("--gp-limit", type=float, default=60.0, help="stop gp_ei after an ask this slow (seconds)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="timed asks per n and pending count (their spread)")
    ap.add_argument("--replot", action="store_true", help="only redraw OUT.png from OUT.json")
    ap.add_argument("--only", choices=("dngo", "gp_ei"))
    ap.add_argument("--out", default="dngo_scaling")
    args = ap.parse_args()
    if args.replot:
        with open(args.out + ".json") as fh:
            saved = json.load(fh)
        plot(saved["rows"], saved["slopes"], args.out + ".png")
        return
    print("uptime:", os.popen("uptime").read().strip(), flush=True)
    rows: list[dict] = []
    if args.only in (None, "dngo"):
        rows += measure("dngo", [int(v) for v in args.dngo_n.split(",")], args.seed, float("inf"), {}, args.repeats)
    if args.only in (None, "gp_ei"):
        rows += measure("gp_ei", [int(v) for v in args.gp_n.split(",")], args.seed, args.gp_limit, {},
                        args.repeats)
    fits = slopes(rows)
    with open(args.out + ".json", "w") as fh:
        json.dump({"rows": rows, "slopes": fits, "uptime": os.popen("uptime").read().strip()}, fh, indent=1)
    plot(rows, fits, args.out + ".png")
    print(json.dumps(fits, indent=1))


if __name__ == "__main__":
    main()
