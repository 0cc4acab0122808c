"""What a race costs: its CPU seconds, split into the new optimizer's runs and the suite's own work.

    .venv/bin/python perf/race_cost.py OPTIMIZER [--suite quick] [--reps N] [--out DIR] [race options ...]

Runs ``benchsuite race OPTIMIZER --suite ...`` in a child process (``--jobs 1``, one thread per BLAS, so that CPU
seconds read as an idle core's) and prints: the race's CPU seconds (the child and the worker it waited for),
the CPU seconds its runs took as the result files' provenance does not record them but ``race`` measures them
per run (each ``race: [i/n] ...`` line), the rest (planning, reading the committed runs, the statistics, the
power simulation, the figures), and the size of the compact record the wheel ships
(``reproductions/*/race.csv.xz``). A second call on the same ``--out`` reruns nothing (the race is resumable):
its CPU seconds are the suite's own work alone.

The measurements docs/race.md quotes (Measured) were made with this script.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path


def child_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("optimizer")
    ap.add_argument("--suite", default="quick")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--out", default="")
    args, extra = ap.parse_known_args()
    out = args.out or f"race-cost-{re.sub(r'[^A-Za-z0-9_.+-]', '_', args.optimizer)}"
    cmd = [sys.executable, "-m", "benchsuite.cli", "race", args.optimizer, "--suite", args.suite, "--out", out,
           "--jobs", "1", *(["--reps", str(args.reps)] if args.reps else []), *extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "PYTHONHASHSEED": "0"}
    c0, w0 = child_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    cpu, wall = child_cpu() - c0, time.perf_counter() - w0
    sys.stderr.write(proc.stderr[-4000:])
    if proc.returncode not in (0, 1):
        raise SystemExit(f"race_cost: the race failed (exit {proc.returncode})")
    runs = [float(x) for x in re.findall(r"\(([\d.]+) CPU s\)$", proc.stderr, re.M)]
    from benchsuite.paths import REPRODUCTIONS_DIR

    size = sum(p.stat().st_size for p in Path(REPRODUCTIONS_DIR).glob("*/race.csv.xz"))
    print(f"race of {args.optimizer} on --suite {args.suite}{f' --reps {args.reps}' if args.reps else ''}: "
          f"{cpu:.1f} CPU s in all ({wall:.1f} wall s); its {len(runs)} run(s) now {sum(runs):.1f} CPU s "
          f"(slowest {max(runs, default=0):.1f}); the suite's own work {cpu - sum(runs):.1f} CPU s")
    print(f"compact record of the committed runs ({REPRODUCTIONS_DIR}/*/race.csv.xz): {size / 1e6:.2f} MB")
    print(f"report: {proc.stdout.strip()}")


if __name__ == "__main__":
    main()
