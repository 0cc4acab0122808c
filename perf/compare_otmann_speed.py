"""Before/after timings of OTMANN and NASBOT decisions in one run (issue 24 item 4).

    OMP_NUM_THREADS=1 .venv/bin/python perf/compare_otmann_speed.py BEFORE_TREE [--rounds 2] [--n 50 100]

``BEFORE_TREE`` is another checkout of this project (e.g. ``git archive main`` unpacked); the
installed (editable) tree is "after". Each measurement runs in a fresh subprocess that imports
the library of one tree (``perf/_tree.py``) with this checkout's perf scripts; before and after
alternate, so a shared machine's load falls on both alike. Measured:

* the symmetric 100 x 100 OTMANN matrix of random 20-layer CNNs (``bench_otmann.random_cnn``,
  seed 0) over the four NASBOT weights, cold (per-graph quantities included): min and median
  of 5 CPU and wall times; both trees' matrices are saved and their largest difference printed;
* ``nasbot`` decisions on the CNN space at each ``--n`` evaluated networks
  (``bench_nasbot_decision.time_decisions``, 7 asks, one hyperparameter re-draw): mean and max
  CPU and wall seconds per ask, and whether both trees made the same decisions.

Ratios are what to read (CPU seconds are the better estimate of an idle core); the load
average is printed with every figure.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(tree: str, part: str, n: int, out: str) -> None:
    """One measurement in this process, printed as JSON (runs in a subprocess)."""
    import _tree
    if tree != "-":
        _tree.use(tree)
    import numpy as np

    load0 = os.getloadavg()[0]
    if part == "matrix":
        from bench_otmann import random_cnn

        from benchsuite.architectures import otmann as O
        rng = np.random.default_rng(0)
        A = [random_cnn(20, rng) for _ in range(100)]
        O.otmann_matrix(A[:3], None)  # imports POT
        cpu, wall = [], []
        for _ in range(5):
            O._prepare_cached.cache_clear()
            c, t = time.process_time(), time.perf_counter()
            D, Dbar = O.otmann_matrix(A, None, O.DEFAULT_NU_STRS)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        np.save(out, np.stack([D, Dbar]))
        res = {"cpu_min": min(cpu), "cpu_median": statistics.median(cpu), "wall_min": min(wall),
               "wall_median": statistics.median(wall)}
    else:
        from bench_nasbot_decision import time_decisions

        r = time_decisions("cnn", n, 7, 0, {})
        res = {"cpu_mean": r["decision_cpu_s_mean"], "cpu_max": r["decision_cpu_s_max"],
               "wall_mean": r["decision_s_mean"], "wall_max": r["decision_s_max"],
               "cpu_all": r["decision_cpu_s_all"], "picks": r["picks"]}
    res["load"] = [load0, os.getloadavg()[0]]
    print("RESULT " + json.dumps(res), flush=True)


def run(tree: str, part: str, n: int, out: str) -> dict:
    """``worker`` in a subprocess; its parsed result."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", tree, part, str(n), out]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=HERE), check=True)
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def main() -> None:
    """Alternate before and after; print one line per measurement and a summary."""
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        tree, part, n, out = sys.argv[2:6]
        return worker(tree, part, int(n), out)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", help="root of the checkout to compare against")
    ap.add_argument("--rounds", type=int, default=2, help="matrix rounds (each: before and after)")
    ap.add_argument("--n", nargs="+", type=int, default=[50, 100], help="evaluated networks per decision case")
    args = ap.parse_args()
    trees = {"before": os.path.abspath(args.before), "after": "-"}
    tmp = tempfile.mkdtemp()
    results: dict = {}
    jobs = [("matrix", 0)] * args.rounds + [("decision", n) for n in args.n]
    for k, (part, n) in enumerate(jobs):
        order = ("before", "after") if k % 2 == 0 else ("after", "before")
        for name in order:
            out = os.path.join(tmp, f"{name}.npy")
            r = run(trees[name], part, n, out)
            results.setdefault((part, n, name), []).append(r)
            show = {k2: v for k2, v in r.items() if k2 != "picks"}
            print(f"{part} n={n} {name}: {json.dumps(show)}", flush=True)
        if part == "matrix":
            import numpy as np
            a, b = np.load(os.path.join(tmp, "before.npy")), np.load(os.path.join(tmp, "after.npy"))
            rel = np.abs(a - b) / np.maximum(np.abs(a), 1e-300)
            print(f"  matrix difference: max abs D {np.abs(a[0] - b[0]).max():.3g}, max abs Dbar "
                  f"{np.abs(a[1] - b[1]).max():.3g}, max rel {rel[a != 0].max():.3g}", flush=True)
        else:
            same = results[(part, n, "before")][-1]["picks"] == results[(part, n, "after")][-1]["picks"]
            print(f"  decisions identical: {same}", flush=True)
    print("\nsummary (CPU s; wall s; load average at the start of each measurement)")
    for (part, n, name), rs in sorted(results.items()):
        if part == "matrix":
            cpu = min(r["cpu_min"] for r in rs)
            wall = min(r["wall_min"] for r in rs)
            print(f"matrix 100x100 {name:6s}: CPU min {cpu:.3f}, wall min {wall:.3f}; loads "
                  f"{[round(r['load'][0], 2) for r in rs]}")
        else:
            r = rs[-1]
            print(f"decision n={n:<3d} {name:6s}: CPU mean {r['cpu_mean']:.2f} max {r['cpu_max']:.2f}; wall mean "
                  f"{r['wall_mean']:.2f} max {r['wall_max']:.2f}; load {r['load'][0]:.2f}")
    for part, n in dict.fromkeys(jobs):
        b, a = results[(part, n, "before")], results[(part, n, "after")]
        if part == "matrix":
            print(f"ratio after/before, matrix CPU min: {min(r['cpu_min'] for r in a) / min(r['cpu_min'] for r in b):.2f}")
        else:
            print(f"ratio after/before, decision n={n}: CPU mean {a[-1]['cpu_mean'] / b[-1]['cpu_mean']:.2f}, "
                  f"CPU max {a[-1]['cpu_max'] / b[-1]['cpu_max']:.2f}")


if __name__ == "__main__":
    main()
