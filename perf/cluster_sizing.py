"""What each paper protocol asks of a cluster: its jobs, each job's resources, and the compute they took.

    .venv/bin/python perf/cluster_sizing.py            # one Markdown row per paper protocol (docs/cluster.md)

For every protocol outside the default set (the paper experiments, ``snakemake papers``):

* **jobs**: its runs (benchmarks x optimizers x repetitions), each one SLURM job under ``profiles/slurm``;
* **per job**: what the run job asks for (the protocol's ``resources``: ``mem_mb``, ``runtime`` in minutes,
  ``gpu``, which the profile turns into ``--mem``, ``-t`` and ``--gpus``), and the cores it takes (one, or one
  per worker with the local backend);
* **measured**: from the committed runs (``reproductions/<protocol>/provenance.json``): runs done, compute-hours
  (the optimizer's measured overhead plus measured live training, one thread per run), and the longest cell's
  hours per run (for a GPU protocol, its GPU estimate per run), which the job's time limit must exceed with a
  margin (marked where it does not);
* **target**: the compute-hours of all the protocol's runs at its repetitions, per cell as
  ``perf/protocol_cost.py`` counts them (measured per committed run, else its decision-time estimate; a cell with
  neither is counted as unknown);
* **GPU protocols**: the scorecard's GPU-hour estimate (``analysis.scorecard.gpu_hours``: GPU seconds per
  evaluation measured on an H200, or a time budget times the workers).

Measured hours are wall seconds of runs made on a shared 2-core machine (load 3-8), so they are upper bounds
for a dedicated core.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import _clock  # noqa: F401 - prints CPU s, wall s and the load average at exit
from protocol_cost import cells, load_table

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    """Command-line entry point."""
    from benchsuite.analysis.scorecard import gpu_hours, needs_gpu
    from benchsuite.protocol import load_protocols, load_set

    protocols = load_protocols(REPO / "protocols")
    default = set(load_set(REPO / "protocols", protocols)) | {"smoke"}
    rows = load_table()
    print("| protocol | jobs | per job: cores, mem, time limit, GPUs | runs committed | compute-hours measured | "
          "longest cell, h per run | all runs, hours |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, p in sorted(protocols.items()):
        if name in default:
            continue
        jobs = p.jobs()
        gpus = max((p.job_resources(j.benchmark)["gpu"] for j in jobs), default=0)
        cores = p.workers if p.backend == "local" else 1
        if p.backend == "local" and gpus:
            gpus = max(gpus, p.workers)  # one GPU per worker (the Snakefile's _gpus)
        per_job = f"{cores}, {p.resources.mem_mb} MB, {p.resources.runtime} min" + (f", {gpus}" if gpus else "")
        prov_path = REPO / "reproductions" / name / "provenance.json"
        prov = json.loads(prov_path.read_text()) if prov_path.exists() else {}
        n_done = sum(n for c in prov.get("repetitions_done", {}).values() for n in c.values())
        measured = sum(h for c in prov.get("compute_hours", {}).values() for h in c.values())
        longest, target, unknown = 0.0, 0.0, 0
        for c in cells(name, rows):
            per_run = c["measured"] if c["measured"] is not None else c["estimated"]
            if per_run is None:
                unknown += 1
                continue
            longest = max(longest, per_run)
            target += per_run * c["target"]
        if needs_gpu(p):  # a run's time is its training: the GPU estimate per run, not the decisions
            g, _basis = gpu_hours(p)
            total = "GPU estimate: " + ("no estimate" if math.isnan(g) else f"about {g:,.0f} GPU-hours")
            longest = g / len(jobs) if jobs and not math.isnan(g) else 0.0
        else:
            total = f"{target:,.1f} CPU" + (f" (+{unknown} cells unknown)" if unknown else "")
        over = " (over the limit)" if longest * 60 > p.resources.runtime else ""
        print(f"| {name} | {len(jobs)} | {per_job} | {n_done} | {measured:,.1f} | "
              f"{longest:.2f}{over} | {total} |")


if __name__ == "__main__":
    main()
