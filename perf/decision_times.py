"""Seconds per decision of the model-based optimizers at n observations (issue 24, item 1).

For every (plugin, n) a fresh worker process is told ``n`` observations of random
configurations (real losses on synthetic benchmarks; elsewhere random losses, since the
decision's cost depends on the number of observations, not on their values), skips the
initial design (its asks are discarded, never told), and then times

* the **first** model-based ask, at 20 observations (for the GP family: the MCMC burn-in,
  which a run pays once, early), then, after the observations up to n - 1 are told and one
  untimed ask has continued the chain onto them,
* ``--repeats`` **steady-state** asks at n, n + 1, ..., each after one more observation is
  told (the GP chain continues, as in a run);

in process CPU seconds and wall seconds, with the load average before and after. For the GP
family the CPU seconds inside the hyperparameter MCMC (``HyperparameterSampler.sample``) and
inside the acquisition search (``acq_opt.maximize``) are reported apart.

``--code LABEL=PATH`` runs the workers against another checkout of the code (``PATH`` a
directory holding ``benchsuite/``, or ``git:REV`` for an archive of that revision, unpacked under
/tmp), so "before" and "after" are measured in the same run::

    nice -n 5 .venv/bin/python perf/decision_times.py --plugins gp_ei entropy_search --n 50 200 \\
        --code before=git:26bcf31 --code after=. --json perf/results/decision_times.json

Not a test: timings depend on the machine and its load.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE_VAR = "BENCHSUITE_PERF_TREE"  # a worker imports benchsuite from this source tree (perf/_tree.py)

# plugin label -> (optimizer, benchmark, settings, sizes where the method is used at such sizes)
PLUGINS: dict[str, tuple[str, str, dict, tuple[int, ...]]] = {
    "gp_ei": ("gp_ei", "hartmann6", {}, (50, 200, 500)),
    # the speed options of issue 24 item 2 (Spearmint's 10 MCMC steps per ask, screening, batched starts)
    "gp_ei_fast": ("gp_ei", "hartmann6", {"chain_length": 10, "screen_samples": 4, "batch_starts": "auto"},
                   (50, 200, 500)),
    "gp_ei_warped": ("gp_ei", "hartmann6", {"input_warping": True}, (50, 200)),
    "entropy_search": ("entropy_search", "hartmann6", {}, (50, 200)),
    "mtbo": ("mtbo", "branin_mf", {"overhead_in_cost": False}, (50, 200)),
    "fabolas": ("fabolas", "branin_mf", {"overhead_in_cost": False}, (50, 200)),
    "dngo": ("dngo", "hartmann6", {}, (50, 200, 500)),
    "smac": ("smac", "hartmann6", {}, (50, 200, 500)),
    "tpe": ("tpe", "hartmann6", {}, (50, 200, 500)),
    "combo": ("combo", "contamination", {}, (50, 200)),
    "bocs": ("bocs", "contamination", {}, (50, 200)),
    "bocs_sdp": ("bocs", "contamination", {"acquisition": "sdp"}, (50, 200)),  # BOCS-SDP's acquisition
    "nasbot": ("nasbot", "nasbot_mlp_naval", {}, (50, 200)),
    "da_smbo": ("da_smbo", "da_nb201_cifar10", {}, (50, 200)),
}
NATURAL = {"smac", "tpe"}  # bridges that ignore observations they did not suggest
FIRST_AT = 20  # the first model-based ask (the GP's burn-in) comes at this many observations, as in a run
GP_FAMILY = {"gp_ei", "gp_ei_fast", "gp_ei_warped", "entropy_search", "mtbo", "fabolas"}


def _random_fidelity(bench, rng):
    fid = bench.fidelity
    if fid is None:
        return None
    if getattr(fid, "values", None) is not None:
        return float(rng.choice(np.asarray(fid.values)))  # noqa: F821 - numpy imported in the worker
    return float(fid.snap(fid.from_unit(rng.random())))


def worker(label: str, n: int, repeats: int, seed: int, warmup: bool = True) -> dict:
    """Time the first and the steady-state decisions of one plugin at ``n`` observations."""
    global np
    import numpy as np

    from benchsuite.benchmark import Result
    from benchsuite.optimizer import Trial
    from benchsuite.registry import get_optimizer, make_benchmark

    name, bench_name, settings, _ = PLUGINS[label]
    cls = get_optimizer(name)
    bench = make_benchmark(bench_name)
    synthetic = getattr(bench, "kind", "") == "synthetic"
    if not synthetic and hasattr(bench, "prepare"):
        try:
            bench.prepare()
        except Exception:  # noqa: BLE001 - random losses need no data
            pass
    rng = np.random.default_rng(seed)
    opt = cls(bench.space, bench.fidelity, np.random.default_rng(seed + 1), **settings)

    cpu_in = {"mcmc": 0.0, "acq": 0.0}
    if label in GP_FAMILY:  # CPU seconds inside the MCMC and inside the acquisition search
        try:
            from benchsuite.optimizers.acquisition import optimize as acq_opt
            from benchsuite.optimizers.inference import mcmc
        except ImportError:  # revisions before the structure change (issue 22) kept both under models/
            from benchsuite.optimizers.models import acq_opt, mcmc

        def timed(fn, key):
            def wrapper(*a, **kw):
                c = time.process_time()
                try:
                    return fn(*a, **kw)
                finally:
                    cpu_in[key] += time.process_time() - c
            return wrapper

        mcmc.HyperparameterSampler.sample = timed(mcmc.HyperparameterSampler.sample, "mcmc")
        acq_opt.maximize = timed(acq_opt.maximize, "acq")

    next_id = [0]

    def tell_random() -> None:
        if label in NATURAL:  # these only learn from their own suggestions: ask, evaluate, tell
            sug = opt.ask()
            opt.tell(Trial(next_id[0], sug.config, sug.fidelity), bench.evaluate(sug.config, sug.fidelity))
            next_id[0] += 1
            return
        cfg = bench.space.sample(rng)
        s = _random_fidelity(bench, rng)
        if synthetic:
            res = bench.evaluate(cfg, s)
        else:
            res = Result(float(rng.normal()), float(rng.uniform(1, 10)))
        opt.tell(Trial(next_id[0], cfg, s), res)
        next_id[0] += 1

    n_first = min(n, FIRST_AT)
    for _ in range(n_first):
        tell_random()
    first = {}
    for _ in range(200):  # past the initial design: its suggestions are dropped, never told
        for k in cpu_in:
            cpu_in[k] = 0.0
        c0, w0 = time.process_time(), time.perf_counter()
        sug = opt.ask()
        first = {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0, "n": n_first, **dict(cpu_in)}
        if (getattr(sug, "info", None) or {}).get("phase") != "init":
            break
    for _ in range(n_first, n - 1):
        tell_random()
    if n > n_first and warmup:
        opt.ask()  # not timed: the chain continues onto the n - 1 points (in a run they arrive one by one)
    steady = []
    for _ in range(repeats):
        tell_random()
        for k in cpu_in:
            cpu_in[k] = 0.0
        c0, w0 = time.process_time(), time.perf_counter()
        opt.ask()
        steady.append({"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0, **dict(cpu_in)})
    import benchsuite

    return {"plugin": label, "n": n, "first": first, "steady": steady, "code": str(Path(benchsuite.__file__).parent)}


def tree_env(code: str) -> dict[str, str]:
    """Environment of a worker process that imports benchsuite from the source tree ``code`` (one BLAS thread)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop(TREE_VAR, None)
    if Path(code).resolve() != REPO:
        env[TREE_VAR] = str(Path(code).resolve())
    return env


def use_tree_from_env() -> None:
    """In a worker: point the editable install at the tree :func:`tree_env` named (``perf/_tree.py``)."""
    if os.environ.get(TREE_VAR):
        import _tree

        _tree.use(os.environ[TREE_VAR])


def _code_path(spec: str) -> str:
    if spec.startswith("git:"):
        rev = spec[4:]
        full = subprocess.run(["git", "-C", str(REPO), "rev-parse", rev], check=True, capture_output=True,
                              text=True).stdout.strip()
        dest = Path(f"/tmp/benchsuite-{full[:12]}")
        if not (dest / "benchsuite").exists():
            dest.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(["git", "-C", str(REPO), "archive", full], check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return str(dest)
    return str(Path(spec).resolve())


def run_one(code: str, label: str, n: int, repeats: int, seed: int, timeout: float, warmup: bool = True) -> dict:
    """One worker process against the code at ``code``; returns its result or the failure."""
    env = tree_env(code)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", label, "--n", str(n),
           "--repeats", str(repeats), "--seed", str(seed)] + ([] if warmup else ["--skip-warmup"])
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"plugin": label, "n": n, "error": f"timed out after {timeout:.0f} s"}
    if p.returncode != 0:
        return {"plugin": label, "n": n, "error": (p.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def _row(code_label: str, r: dict) -> str:
    if "error" in r:
        return f"| {r['plugin']} | {code_label} | {r['n']} | failed: {r['error']} | | | | |"
    f, st = r["first"], r["steady"]
    med = lambda k: statistics.median(s[k] for s in st) if st else float("nan")  # noqa: E731
    return (f"| {r['plugin']} | {code_label} | {r['n']} | {f['cpu_s']:.2f} | {f['wall_s']:.2f} | "
            f"{med('cpu_s'):.2f} | {med('wall_s'):.2f} | {med('mcmc'):.2f} / {med('acq'):.2f} |")


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugins", nargs="+", default=list(PLUGINS), choices=list(PLUGINS))
    ap.add_argument("--n", nargs="+", type=int, default=None, help="sizes (default: each plugin's own)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--code", action="append", default=[], help="LABEL=PATH or LABEL=git:REV (repeatable)")
    ap.add_argument("--only-gp-before", action="store_true", help="run codes other than the last only for the GP family")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--skip-warmup", action="store_true",
                    help="no untimed ask at n before the timed ones (the first timed ask then continues the chain "
                         "onto all new points; its cost per step is the same)")
    ap.add_argument("--json")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        use_tree_from_env()
        print(json.dumps(worker(args.worker, args.n[0], args.repeats, args.seed, not args.skip_warmup)))
        return
    # the parent only: a worker's stderr must end with its own error, which run_one reports
    import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit; children included)
    codes = [c.split("=", 1) for c in args.code] or [["current", "."]]
    codes = [(lab, _code_path(spec)) for lab, spec in codes]
    print(f"load average at start {os.getloadavg()}, {os.cpu_count()} CPUs", flush=True)
    print("| plugin | code | n | first ask CPU s (20 obs) | first ask wall s | steady ask CPU s (median) | steady wall s | "
          "steady CPU in MCMC / acq. search |")
    print("|---|---|---|---|---|---|---|---|")
    out = []
    for label in args.plugins:
        for n in args.n or PLUGINS[label][3]:
            if n not in PLUGINS[label][3] and args.n is None:
                continue
            for i, (code_label, path) in enumerate(codes):
                if args.only_gp_before and i < len(codes) - 1 and label not in GP_FAMILY:
                    continue
                load0 = os.getloadavg()[0]
                r = run_one(path, label, n, args.repeats, args.seed, args.timeout, not args.skip_warmup)
                r.update({"code_label": code_label, "load_before": load0, "load_after": os.getloadavg()[0]})
                out.append(r)
                print(_row(code_label, r) + f" load {load0:.1f}->{r['load_after']:.1f}", flush=True)
                if args.json:
                    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
                    Path(args.json).write_text(json.dumps(out, indent=1))
    print(f"load average at end {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
