"""CPU-hours of the CPU-sized paper protocols: measured per run where runs are committed, estimated from
the decision-time table elsewhere (issue 24, item 1).

For every (benchmark, optimizer) cell of a protocol:

* **measured**: hours per committed run (``reproductions/<protocol>/provenance.json``: the optimizer's
  measured overhead plus measured live training time, summed per run, divided by the runs done);
* **estimated** (model-based optimizers in ``perf/decision_times.py``'s table): the sum, over the asks
  of one run (from the initial design's end to the budget), of the steady-state CPU seconds per
  decision interpolated linearly between the table's sizes (held constant beyond its largest),
  plus the first ask; evaluation cost is not included (zero for synthetic and tabular benchmarks);
* the protocol's total at its target repetitions: measured where there are runs, else estimated.

A run's size is the evaluations its committed runs made (mean over the benchmark's runs: what a time
budget really buys), else the budget's evaluations. Measured hours are wall seconds of the optimizer's
overhead (and live training), so they grow with the machine's load; the estimates are CPU seconds.

    .venv/bin/python perf/protocol_cost.py --table perf/results/decision_times_all.json

Optimizers without a row in the table (random search, evolution, annealing) cost seconds per run.
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np

from benchsuite.analysis import reproductions as R

REPO = Path(__file__).resolve().parents[1]
PROTOCOLS = ("dngo_table1", "combo_binary", "combo_binary_independent", "combo_maxsat", "combo_ordinal_categorical",
             "fabolas_branin_mf", "nasbot_cpu", "deeparchitect_nb201", "nb201")
# protocol optimizer (name, settings) -> the decision table's plugin label
def _plugin(name: str, settings: dict) -> str | None:
    if name == "gp_ei":
        if settings.get("input_warping"):
            return "gp_ei_warped"
        return "gp_ei_fast" if int(settings.get("chain_length", 200)) <= 10 else "gp_ei"
    return name


def _per_ask(rows: list[dict], plugin: str) -> tuple[float, np.ndarray, np.ndarray] | None:
    got = [r for r in rows if r.get("plugin") == plugin and "steady" in r and r["steady"]]
    if not got:
        return None
    got.sort(key=lambda r: r["n"])
    first = statistics.median(r["first"]["cpu_s"] for r in got)
    ns = np.array([r["n"] for r in got], float)
    cpu = np.array([statistics.median(s["cpu_s"] for s in r["steady"]) for r in got])
    return first, ns, cpu


def estimate_run_hours(rows: list[dict], plugin: str, n_init: int, budget: int) -> float | None:
    """Decision CPU-hours of one run of ``budget`` evaluations after ``n_init`` initial ones."""
    t = _per_ask(rows, plugin)
    if t is None:
        return None
    first, ns, cpu = t
    asks = np.arange(n_init + 1, budget)
    return float(first + np.interp(asks, ns, cpu).sum()) / 3600.0


def load_table(paths: list[str] | None = None) -> list[dict]:
    """The decision-time table's rows of the current code (``perf/decision_times.py``'s output)."""
    paths = paths or [str(REPO / "perf/results/decision_times_all.json")]
    return [r for path in paths for r in json.loads(Path(path).read_text())
            if r.get("code_label", "current") in ("current", "after")]


def cells(name: str, rows: list[dict]) -> list[dict]:
    """Per (benchmark, optimizer) cell of protocol ``name``: runs done, the target repetitions, measured hours per
    committed run (None without runs) and the estimated decision hours per run (None without a table row)."""
    from benchsuite.protocol import load_protocol

    p = load_protocol(REPO / "protocols" / f"{name}.yaml")
    prov_path = REPO / "reproductions" / name / "provenance.json"
    prov = json.loads(prov_path.read_text()) if prov_path.exists() else {}
    done, hours = prov.get("repetitions_done", {}), prov.get("compute_hours", {})
    runs_path = R.runs_path(REPO / "reproductions" / name)
    made = {}  # evaluations the committed runs made, per benchmark (a time budget's real size)
    if runs_path.exists():
        r = R.read_runs(runs_path, decode=False)
        made = r.groupby(["benchmark", "optimizer", "repetition"])["evaluation"].max().groupby("benchmark").mean()
    out = []
    for b in p.benchmarks:
        evals = int(round(made[b.label])) if b.label in made else b.budget.evaluations
        for o in p.optimizers:
            n_done = int(done.get(b.label, {}).get(o.label, 0))
            measured = hours.get(b.label, {}).get(o.label, 0.0) / n_done if n_done else None
            est = None
            if evals:
                est = estimate_run_hours(rows, _plugin(o.name, o.settings), int(o.settings.get("n_init", 20)),
                                         int(evals))
            out.append({"benchmark": b.label, "optimizer": o.label, "done": n_done, "target": p.repetitions,
                        "measured": measured, "estimated": est})
    return out


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--table", nargs="+", default=[str(REPO / "perf/results/decision_times_all.json")])
    ap.add_argument("--protocols", nargs="+", default=list(PROTOCOLS))
    args = ap.parse_args()
    rows = load_table(args.table)
    print("| protocol | benchmark | optimizer | runs done / target | measured h per run | estimated decision h "
          "per run | h for the target |")
    print("|---|---|---|---|---|---|---|")
    totals = {}
    for name in args.protocols:
        total = 0.0
        for c in cells(name, rows):
            measured, est = c["measured"], c["estimated"]
            per_run = measured if measured is not None else est
            target = per_run * c["target"] if per_run is not None else None
            total += target or 0.0
            fmt = lambda v: "" if v is None else f"{v:.3f}"  # noqa: E731
            print(f"| {name} | {c['benchmark']} | {c['optimizer']} | {c['done']} / {c['target']} | {fmt(measured)} | "
                  f"{fmt(est)} | {fmt(target)} |")
        totals[name] = total
    print()
    for name, h in totals.items():
        print(f"{name}: about {h:.1f} CPU-hours at the target repetitions (cells with neither a run nor a table "
              "row count as zero)")


if __name__ == "__main__":
    main()
