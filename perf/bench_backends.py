"""Wall time of the real backends (issue 28): sleep_branin on 1, 2, 4, 8 workers, local and dask.

Each run is random search for ``--evals`` evaluations that each sleep ``--sleep`` seconds. For every
(backend, workers) it prints:

- ``run s``: the run's own wall-clock time (the result file's last ``told_time``: seconds since the
  workers were ready);
- ``ideal s``: ``ceil(evals / workers) * sleep``, what perfect workers would take;
- ``speed-up``: the 1-worker run's time over this one's;
- ``overhead/trial ms``: worker time not spent in evaluations, per trial:
  ``(run s * workers - evals * sleep) / evals`` (dispatch, result return, the optimizer's ask
  and tell, idle slots at the end);
- ``start s``: starting the workers (and closing them), outside the run's clock.

    .venv/bin/python perf/bench_backends.py [--evals 16] [--sleep 0.25] [--workers 1 2 4 8]
        [--backends local dask] [--json out.json]

This machine has 2 cores shared with other jobs: a worker mostly sleeps, so 8 of them still overlap,
but their start (imports) competes for the cores; read the load average printed at the end.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import json
import math
import time

from benchsuite.registry import get_optimizer, make_benchmark
from benchsuite.runner import run


def one(backend: str, workers: int, evals: int, sleep: float) -> dict:
    """One run; its run time, total time (with starting and closing the workers) and per-trial overhead."""
    bench = make_benchmark("sleep_branin", {"sleep_s": sleep})
    t0 = time.perf_counter()
    out = run(bench, get_optimizer("random_search"), seed=0, budget_evals=evals, workers=workers, backend=backend)
    total = time.perf_counter() - t0
    assert len(out.rows) == evals and not any(r["status"] == "failed" for r in out.rows)
    run_s = max(r["told_time"] for r in out.rows)
    return {"backend": backend, "workers": workers, "evals": evals, "sleep_s": sleep, "run_s": run_s,
            "ideal_s": math.ceil(evals / workers) * sleep, "total_s": total,
            "overhead_per_trial_s": (run_s * workers - evals * sleep) / evals,
            "ask_tell_per_trial_s": sum(r["overhead_s"] for r in out.rows) / evals}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--evals", type=int, default=16)
    p.add_argument("--sleep", type=float, default=0.25)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    p.add_argument("--backends", nargs="+", default=["local", "dask"], choices=["local", "dask"])
    p.add_argument("--json", help="also write the rows as JSON here")
    args = p.parse_args()
    if max(args.workers) > 8:
        p.error("at most 8 workers on this machine")
    rows = []
    print(f"sleep_branin, random search, {args.evals} evaluations of {args.sleep:g} s each")
    print(f"{'backend':<8}{'workers':>8}{'run s':>9}{'ideal s':>9}{'speed-up':>10}{'overhead/trial ms':>19}"
          f"{'ask+tell ms':>13}{'start s':>9}")
    for backend in args.backends:
        base = None
        for w in args.workers:
            r = one(backend, w, args.evals, args.sleep)
            base = base if base is not None else (r["run_s"] if w == 1 else None)
            r["speedup"] = None if base is None else base / r["run_s"]
            rows.append(r)
            speed = "" if r["speedup"] is None else f"{r['speedup']:.2f}x"
            print(f"{backend:<8}{w:>8}{r['run_s']:>9.2f}{r['ideal_s']:>9.2f}{speed:>10}"
                  f"{1000 * r['overhead_per_trial_s']:>19.1f}{1000 * r['ask_tell_per_trial_s']:>13.2f}"
                  f"{r['total_s'] - r['run_s']:>9.2f}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
