"""da_smbo on da_nb201_cifar10 on two commits side by side: its decisions' CPU seconds, and whether it suggests the same.

    .venv/bin/python perf/bench_da_smbo.py BASE [HEAD] [--seeds 0 1 2] [--evals 120] [--workers 4]

Each seed is one run of ``da_smbo`` (the paper's settings: 512 candidates, exploration 0.1) on the
NAS-Bench-201 cell written in the DeepArchitect language, evaluated from the table, with protocol
``deeparchitect_nb201``'s 4 workers, the overhead off the clock and timed in CPU seconds (``overhead_clock:
cpu``), in a fresh process of each side (``perf/ab.py``'s worktrees and redirection; the sides alternate).
Printed per seed and side: the sha256 of the suggestions (every trial's configuration, in trial order) and
of the run's timing-free columns, the CPU seconds of the optimizer's ask and tell recorded with the trials
around 50 and 100 observations (the median of trials 45-55 and 95-105), and the whole run's. A decision
early in a run computes the features of most of its 512 candidates afresh; later ones find them
remembered (the cell has 15,625 architectures), which the two columns show.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import ab


def worker(seed: int, evals: int, workers: int) -> dict:
    """One run in this process (the side's code); its digests and decision CPU seconds."""
    from benchsuite.registry import get_optimizer, make_benchmark
    from benchsuite.runner import run

    out = run(make_benchmark("da_nb201_cifar10"), get_optimizer("da_smbo"), seed=seed, budget_evals=evals,
              workers=workers, include_overhead=False, overhead_clock="cpu")
    rows = sorted(out.rows, key=lambda r: r["trial"])
    configs = [json.dumps(list(r["config"])) for r in rows]
    over = [r["overhead_s"] for r in out.rows]  # in tell order: row k is told after k observations
    med = lambda a, b: statistics.median(over[a:b]) if len(over) >= b else float("nan")  # noqa: E731
    return {"suggestions": hashlib.sha256("\n".join(configs).encode()).hexdigest()[:16],
            "rows": ab._digest(ab._timing_free(out.rows)), "cpu_at_50": med(45, 55), "cpu_at_100": med(95, 105),
            "cpu_run": sum(over), "trials": len(out.rows)}


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("base", nargs="?", help="a git revision, or 'merge-base'")
    p.add_argument("head", nargs="?", help="a git revision (default: this checkout's working tree)")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--evals", type=int, default=120, help="evaluations per run (default 120)")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.evals, args.workers)))
        return 0
    if not args.base:
        p.error("give BASE (a git revision, or 'merge-base')")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a timeout removes the worktrees too
    work = Path(tempfile.mkdtemp(prefix="benchsuite-ab-"))
    (work / "site").mkdir()
    (work / "site" / "sitecustomize.py").write_text(ab.SITECUSTOMIZE.format(var=ab.TREE_VAR, perf=str(ab.HERE)))
    sides: list[ab.Side] = []
    try:
        sides = [ab.Side("base", ab.resolve_base(args.base), work),
                 ab.Side("head", ab.resolve_base(args.head) if args.head else None, work)]
        for s in sides:
            s.prepare()
        print(f"da_smbo on da_nb201_cifar10, {args.evals} evaluations, {args.workers} workers: BASE {sides[0].title} "
              f"vs HEAD {sides[1].title}; load average {os.getloadavg()[0]:.2f}", flush=True)
        print("| seed | side | suggestions sha256 | rows sha256 | CPU s per decision at 50 / at 100 observations | "
              "run's CPU s in the optimizer | load |")
        print("|---|---|---|---|---|---|---|")
        same = []
        for k, seed in enumerate(args.seeds):
            got = {}
            for s in (sides if k % 2 == 0 else sides[::-1]):
                cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(seed), "--evals", str(args.evals),
                       "--workers", str(args.workers)]
                proc = subprocess.run(cmd, env=s.env, capture_output=True, text=True, cwd=str(ab.REPO))
                if proc.returncode != 0:
                    print(f"| {seed} | {s.label} | failed: {(proc.stderr.strip().splitlines() or ['?'])[-1][:200]} |")
                    continue
                r = got[s.label] = json.loads(proc.stdout.strip().splitlines()[-1])
                print(f"| {seed} | {s.label} | {r['suggestions']} | {r['rows']} | {r['cpu_at_50']:.3f} / "
                      f"{r['cpu_at_100']:.3f} | {r['cpu_run']:.1f} | {os.getloadavg()[0]:.2f} |", flush=True)
            if len(got) == 2:
                same.append(got["base"]["suggestions"] == got["head"]["suggestions"]
                            and got["base"]["rows"] == got["head"]["rows"])
        print(f"identical suggestions and rows: {sum(same)} of {len(args.seeds)} seeds")
    finally:
        for s in sides:
            s.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
