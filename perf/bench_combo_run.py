"""CPU seconds of whole COMBO runs, two revisions of the code side by side (issue 24, item 3).

One worker process per (code, benchmark, seed) runs ``combo`` through the runner (the path a
protocol takes: COMBO's 20 initial points, then one model-based ask per evaluation) and
reports its process CPU seconds, the wall seconds spent sampling hyperparameters and
optimising the acquisition, and a hash of the suggested configurations, so that a speed-up
meant to keep suggestions identical is checked in the same run. Codes alternate per seed
(A B A B ...), so load drifts hit both alike; compare the ratio, not the seconds::

    .venv/bin/python perf/bench_combo_run.py --code before=git:HEAD --code after=. \\
        --benchmarks ising contamination --evals 60 --seeds 0 1

Not a test: timings depend on the machine and its load.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from decision_times import _code_path, tree_env, use_tree_from_env

# combo_binary's instances (combo.txt Sec. 4.1): the authors' Ising and contamination problems
SETTINGS = {"ising": {"lambda": 0.0, "instance_mode": "combo_authors"},
            "contamination": {"lambda": 0.0, "instance_mode": "combo_authors"}}


def worker(bench_name: str, evals: int, seed: int) -> dict:
    """One COMBO run; CPU seconds, sampling/acquisition wall seconds and the suggestions' hash."""
    from benchsuite.registry import get_optimizer, make_benchmark
    from benchsuite.runner import run

    bench = make_benchmark(bench_name, SETTINGS.get(bench_name, {}))
    cls = get_optimizer("combo")
    split = {"sampling_s": 0.0, "acquisition_s": 0.0}
    ask_model = cls._ask_model

    def timed(self, *a, **kw):
        out = ask_model(self, *a, **kw)
        for k in split:
            split[k] += self.last_timing.get(k, 0.0)
        return out

    cls._ask_model = timed
    c0, w0 = time.process_time(), time.perf_counter()
    out = run(bench, cls, seed=seed, budget_evals=evals, optimizer_settings={"n_init": 20})
    configs = json.dumps([r["config"] for r in out.rows], sort_keys=True, default=str)
    return {"benchmark": bench_name, "seed": seed, "evals": evals, "cpu_s": time.process_time() - c0,
            "wall_s": time.perf_counter() - w0, **split, "best": min(r["loss"] for r in out.rows),
            "configs_sha": hashlib.sha256(configs.encode()).hexdigest()[:16]}


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--code", action="append", default=[], help="LABEL=PATH or LABEL=git:REV (repeatable)")
    ap.add_argument("--benchmarks", nargs="+", default=["ising", "contamination"])
    ap.add_argument("--evals", type=int, default=60)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--json")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        use_tree_from_env()
        b, n, s = args.worker
        print(json.dumps(worker(b, int(n), int(s))))
        return
    codes = [(lab, _code_path(spec)) for lab, spec in (c.split("=", 1) for c in (args.code or ["current=."]))]
    print(f"load average at start {os.getloadavg()}, {os.cpu_count()} CPUs", flush=True)
    print("| code | benchmark | seed | evaluations | CPU s | wall s | sampling s | acquisition s | best | configs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for bench in args.benchmarks:
        for seed in args.seeds:
            for label, code in codes:
                env = tree_env(code)
                p = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", bench,
                                    str(args.evals), str(seed)], env=env, capture_output=True, text=True)
                if p.returncode:
                    print(f"| {label} | {bench} | {seed} | failed: {(p.stderr.strip().splitlines() or ['?'])[-1]} |", flush=True)
                    continue
                r = json.loads(p.stdout.strip().splitlines()[-1])
                r["code_label"] = label
                rows.append(r)
                print(f"| {label} | {bench} | {seed} | {r['evals']} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | "
                      f"{r['sampling_s']:.1f} | {r['acquisition_s']:.1f} | {r['best']:.6g} | {r['configs_sha']} |",
                      flush=True)
    if len(codes) > 1:
        base = codes[0][0]
        for label, _ in codes[1:]:
            ratios = [a["cpu_s"] / b["cpu_s"] for a in rows if a["code_label"] == base
                      for b in rows if b["code_label"] == label and (b["benchmark"], b["seed"]) == (a["benchmark"], a["seed"])]
            same = all(a["configs_sha"] == b["configs_sha"] for a in rows if a["code_label"] == base
                       for b in rows if b["code_label"] == label and (b["benchmark"], b["seed"]) == (a["benchmark"], a["seed"]))
            if ratios:
                print(f"{base} / {label} CPU seconds: median {statistics.median(ratios):.2f}x "
                      f"(min {min(ratios):.2f}, max {max(ratios):.2f}) over {len(ratios)} runs; "
                      f"suggestions identical: {same}")
    print(f"load average at end {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
