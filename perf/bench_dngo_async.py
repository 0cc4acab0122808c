"""Many asynchronous workers on a table benchmark: makespan and overhead per decision (dngo.txt Sec. 3.3).

One run of the suite's event-queue runner (``benchsuite.runner.run``, the same loop as
``benchsuite run --workers W``) with W simulated workers on a tabulated benchmark (default:
100 workers on ``svm_mnist``, the SVM-on-MNIST table, with ``dngo``). The optimizer is one
process, so its decisions are serialised; each finished trial's row carries ``overhead_s``
(its ask plus its tell, measured) and the simulated times. To take the ask apart from
the tell and to know how many running trials each decision fantasised, the plugin class
is subclassed here (nothing else changes) so that every ``ask`` records its wall and CPU
seconds, the number of pending trials and the number of results it saw in the
suggestion's ``info`` (the result file's ``info`` column).

Reported (JSON, and a PNG of seconds per decision against the number of results seen):
whether the run finished, trials and failures, makespan (simulated seconds, measured
overhead included), mean / median / max seconds per model-based decision (``ask``) and
per trial (``overhead_s`` = ask + tell), the pending trials per decision, worker
utilisation (tabulated cost / (workers x makespan)), the best loss and the final
incumbent's test loss, distinct configurations, the run's wall seconds and ``uptime``.

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 BENCHSUITE_DATA=/work/shared/data \\
        .venv/bin/python perf/bench_dngo_async.py --optimizer dngo --budget-evals 1000 \\
        --csv /tmp/svm_w100_dngo.csv --out docs/results/dngo_async_dngo

Not a test: overheads depend on the machine and its load.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import dataclasses
import json
import math
import os
import time
from collections.abc import Sequence

import numpy as np

from benchsuite.optimizer import Suggestion, Trial
from benchsuite.registry import get_optimizer, make_benchmark
from benchsuite.results import read_provenance as load_provenance
from benchsuite.results import write_result
from benchsuite.runner import run


def timed_class(name: str) -> type:
    """The registered plugin ``name`` with every ask's seconds, pending and observed counts in its info."""
    base = get_optimizer(name)

    class Timed(base):  # type: ignore[misc, valid-type]
        """``base`` whose ``ask`` records its own wall time."""

        def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
            n_seen = sum(1 for t in self.history if t.result is not None)
            t0, c0 = time.perf_counter(), time.process_time()
            s = super().ask(pending)
            info = {**s.info, "ask_s": time.perf_counter() - t0, "ask_cpu_s": time.process_time() - c0,
                    "n_pending": len(pending), "n_seen": n_seen}
            return dataclasses.replace(s, info=info)

    Timed.__name__ = Timed.__qualname__ = f"Timed_{base.__name__}"
    return Timed


def _stats(v: Sequence[float]) -> dict[str, float | None]:
    a = np.asarray(v, dtype=float)
    if a.size == 0:
        return {"n": 0, "mean": None, "median": None, "max": None, "sum": None}
    return {"n": int(a.size), "mean": float(a.mean()), "median": float(np.median(a)), "max": float(a.max()),
            "sum": float(a.sum())}


def summarise(rows: list[dict], workers: int) -> dict:
    """The quantities reported for one run (see the module docstring)."""
    bo = [r for r in rows if r["info"].get("phase") == "bo"]
    ok = [r for r in rows if r["status"] == "ok"]
    makespan = max(r["told_time"] for r in rows)
    last = rows[-1]
    by_decile: dict[str, dict] = {}
    if bo:
        # five bins of equal decision counts by results seen (an ask's cost grows with n, if at all)
        seen = np.array([r["info"]["n_seen"] for r in bo])
        ask = np.array([r["info"]["ask_s"] for r in bo])
        cpu = np.array([r["info"].get("ask_cpu_s", math.nan) for r in bo])
        for part in np.array_split(np.argsort(seen, kind="stable"), 5):
            if part.size:
                by_decile[f"{int(seen[part].min())}-{int(seen[part].max())}"] = {
                    "wall": _stats(ask[part]), "cpu_mean": float(cpu[part].mean())}
    return {
        "n_trials": len(rows),
        "n_failed": sum(r["status"] == "failed" for r in rows),
        "n_model_based": len(bo),
        "distinct_configs": len({r["config"] if isinstance(r["config"], str) else json.dumps(r["config"])
                                 for r in rows}),
        "makespan_s": float(makespan),
        "ask_s_model_based": _stats([r["info"]["ask_s"] for r in bo]),
        # CPU seconds of the same asks: on a shared machine, wall seconds measure the neighbours too
        "ask_cpu_s_model_based": _stats([r["info"]["ask_cpu_s"] for r in bo if "ask_cpu_s" in r["info"]]),
        "ask_s_model_based_by_results_seen": by_decile,
        "overhead_s_per_trial": _stats([r["overhead_s"] for r in rows]),
        "tell_s": _stats([r["overhead_s"] - r["info"]["ask_s"] for r in rows]),
        "pending_per_decision": _stats([r["info"]["n_pending"] for r in bo]),
        "cost_s": _stats([r["cost_s"] for r in rows]),
        "worker_utilisation": float(sum(r["cost_s"] for r in rows) / (workers * makespan)),
        "best_loss": float(min(r["loss"] for r in ok)) if ok else None,
        "final_incumbent_loss": last["incumbent_loss"],
        "final_incumbent_test_loss": last["incumbent_test_loss"],
    }


def plot(rows: list[dict], title: str, path: str) -> None:
    """Wall and CPU seconds per model-based decision against the number of results it saw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bo = [r for r in rows if r["info"].get("phase") == "bo"]
    seen = [r["info"]["n_seen"] for r in bo]
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    ax.scatter(seen, [r["info"]["ask_s"] for r in bo], s=6, label="wall seconds (shared machine)")
    if all("ask_cpu_s" in r["info"] for r in bo):
        ax.scatter(seen, [r["info"]["ask_cpu_s"] for r in bo], s=6, marker="x", label="CPU seconds")
    pend = sorted({r["info"]["n_pending"] for r in bo})
    ax.set_xlabel("results seen at the decision")
    ax.set_ylabel("seconds per ask")
    ax.set_title(f"{title}; running trials fantasised: {pend[0]}-{pend[-1]}" if pend else title, fontsize=9)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def rows_from_csv(path: str) -> list[dict]:
    """The rows of a result file written by this script (``info`` parsed), for ``--replot``."""
    from benchsuite.results import load_result

    df = load_result(path)
    rows = df.to_dict("records")
    for r in rows:
        r["info"] = json.loads(r["info"]) if isinstance(r["info"], str) else {}
    return rows


def main() -> None:
    """Run one asynchronous run and write ``OUT.json`` and ``OUT.png`` (and the result CSV if asked)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", default="svm_mnist")
    ap.add_argument("--optimizer", default="dngo")
    ap.add_argument("--workers", type=int, default=100)
    ap.add_argument("--budget-evals", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="optimizer setting")
    ap.add_argument("--csv", help="also write the run's result file here")
    ap.add_argument("--out", default="docs/results/dngo_async")
    ap.add_argument("--replot", metavar="CSV", help="only redraw OUT.png from a result file this script wrote")
    args = ap.parse_args()
    if args.replot:
        rows = rows_from_csv(args.replot)
        prov = load_provenance(args.replot)
        plot(rows, f"{prov['optimizer']}, {prov['workers']} async workers, {prov['benchmark']} ({len(rows)} trials)",
             args.out + ".png")
        return
    settings = {}
    for kv in args.set:
        k, _, v = kv.partition("=")
        try:
            settings[k] = json.loads(v)
        except json.JSONDecodeError:  # a bare string such as fantasies
            settings[k] = v
    up0 = os.popen("uptime").read().strip()
    print("uptime:", up0, flush=True)
    bench = make_benchmark(args.benchmark)
    last = [time.perf_counter()]

    def progress(n: int, t: float) -> None:
        if time.perf_counter() - last[0] > 30:
            last[0] = time.perf_counter()
            print(f"{n} trials told, simulated t = {t:.1f} s, {os.popen('uptime').read().strip()}", flush=True)

    t0 = time.perf_counter()
    res = run(bench, timed_class(args.optimizer), seed=args.seed, budget_evals=args.budget_evals,
              workers=args.workers, optimizer_settings=settings, progress=progress)
    wall = time.perf_counter() - t0
    if args.csv:
        write_result(args.csv, res.rows, res.provenance)
    out = {"benchmark": args.benchmark, "optimizer": args.optimizer, "workers": args.workers,
           "budget_evals": args.budget_evals, "seed": args.seed, "settings": settings,
           "finished": len(res.rows) == args.budget_evals, "wall_s": wall,
           "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
           "uptime_start": up0, "uptime_end": os.popen("uptime").read().strip(),
           **summarise(res.rows, args.workers)}
    with open(args.out + ".json", "w") as fh:
        json.dump(out, fh, indent=1, default=lambda o: None if isinstance(o, float) and math.isnan(o) else str(o))
    plot(res.rows, f"{args.optimizer}, {args.workers} async workers, {args.benchmark} "
                   f"({len(res.rows)} trials)", args.out + ".png")
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
