"""Set-up and query cost of a table surrogate, before and after the fitted-model cache (issue 14, item 9).

    .venv/bin/python perf/bench_surrogate.py [--benchmark svm_mnist_surrogate] [--n 2000] [--repeats 15]

Measured in one run, against the surrogate code before the cache (``benchsuite/surrogate.py``
at ``--before``, default: the newest commit whose version has no fitted-model cache):

* set-up: a fresh Python process imports the registry and constructs the benchmark, with
  the old code (it fits every time), with the new code on an empty cache directory (fit +
  write) and on the warm cache (read + checks); import time is printed separately;
* one query: ``evaluate(config, fidelity, seed)`` on random configurations, fidelities and
  seeds (noise on, the default, and off), and ``predict_one`` (mean, std, cost; no
  Result), microseconds per query, best of ``repeats`` interleaved batches, in CPU time of
  the process and in wall-clock time (the machine's load average is printed: shared cores
  inflate every figure, wall-clock ones most);
* sameness: every query's (loss, cost, mean, std) and test loss, old against new, bit for bit;
* where the time goes: numpy's ``power(r, 3)`` over one kernel row (libm ``pow``, the one
  step the exact result needs), and, for comparison only, a kernel cubed by two products
  (``r * r * r``): its time per query and how far its predictions move from the exact ones.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODULE = "benchsuite/surrogate.py"


def before_source(rev: str) -> tuple[str, str]:
    """(commit, source) of the surrogate module before the cache: ``rev``, or the newest commit without it."""
    revs = [rev] if rev else subprocess.run(["git", "log", "--format=%H", "--", MODULE], cwd=ROOT, check=True,
                                            capture_output=True, text=True).stdout.split()
    for r in revs:
        src = subprocess.run(["git", "show", f"{r}:{MODULE}"], cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout
        if rev or "CACHE_FORMAT" not in src:
            return r, src
    raise SystemExit("no commit of benchsuite/surrogate.py without the cache found; pass --before REV")


def load_before(path: str, cls: type) -> type:
    """A copy of benchmark class ``cls`` on the old surrogate module stored at ``path``."""
    spec = importlib.util.spec_from_file_location("benchsuite._surrogate_before", path)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "benchsuite"  # its relative imports resolve against the installed package
    spec.loader.exec_module(mod)
    attrs = {k: getattr(cls, k) for k in ("name", "description", "table_spec", "fidelity_log", "fidelity_unit",
                                          "s_weight", "smoothing", "settings_spec")}
    return type(cls.__name__ + "Before", (mod.SurrogateBenchmark,), {**attrs, "make_space": cls.make_space})


def child(name: str, before: str) -> None:
    """Construct the benchmark in this fresh process and print the seconds it took as JSON."""
    t0 = time.perf_counter()
    from benchsuite.registry import get_benchmark

    cls = get_benchmark(name)
    if before:
        cls = load_before(before, cls)
    t1 = time.perf_counter()
    b = cls()
    t2 = time.perf_counter()
    print(json.dumps({"import_s": t1 - t0, "setup_s": t2 - t1, "source": getattr(b, "model_source", "fit (old)")}))


def setup_cost(name: str, cache: str, before: str = "") -> dict:
    """Set-up seconds of one fresh process (``cache`` is its BENCHSUITE_CACHE)."""
    cmd = [sys.executable, __file__, "--child", "--benchmark", name] + (["--before-file", before] if before else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "BENCHSUITE_CACHE": cache})
    return json.loads(out.stdout.strip().splitlines()[-1])


def per_query(fns: dict, n: int, repeats: int, batch: int = 100) -> dict[str, float]:
    """Best CPU microseconds per call of each ``fn(i)`` over interleaved batches of ``batch`` calls.

    CPU time of this process (``process_time``), so that time spent waiting for a shared core
    does not count; the best wall-clock figure of each is kept in ``per_query.wall``.
    """
    best = {k: float("inf") for k in fns}
    wall = dict(best)
    for r in range(repeats):
        start = (r * batch) % max(1, n - batch)
        for k, fn in fns.items():
            t, c = time.perf_counter(), time.process_time()
            for i in range(start, start + batch):
                fn(i)
            best[k] = min(best[k], (time.process_time() - c) / batch)
            wall[k] = min(wall[k], (time.perf_counter() - t) / batch)
    per_query.wall = {k: v * 1e6 for k, v in wall.items()}
    return {k: v * 1e6 for k, v in best.items()}


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--benchmark", default="svm_mnist_surrogate", help="a surrogate benchmark")
    p.add_argument("--n", type=int, default=2000, help="random queries (sameness check and timing)")
    p.add_argument("--repeats", type=int, default=30, help="timed batches per variant (best counts)")
    p.add_argument("--before", default="", help="git revision of the old surrogate.py (default: found)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--before-file", default="", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.benchmark, args.before_file)
        return 0

    rev, src = before_source(args.before)
    tmp = Path(tempfile.mkdtemp(prefix="bench_surrogate."))
    try:
        return measure(args, rev, src, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure(args: argparse.Namespace, rev: str, src: str, tmp: Path) -> int:
    """Everything the module docstring lists, printed."""
    old_file = tmp / "surrogate_before.py"
    old_file.write_text(src)
    cache = str(tmp / "cache")
    print(f"{args.benchmark}; old code: {MODULE} at {rev[:12]}; cache {cache}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    runs = [("old code (fits every run)", setup_cost(args.benchmark, cache, str(old_file))),
            ("new, cold cache (fit + write)", setup_cost(args.benchmark, cache)),
            ("new, warm cache", setup_cost(args.benchmark, cache)),
            ("new, warm cache again", setup_cost(args.benchmark, cache))]
    for what, r in runs:
        print(f"set-up {what:32s} {r['setup_s']:7.3f} s  (model: {r['source']}; imports {r['import_s']:.2f} s)")

    os.environ["BENCHSUITE_CACHE"] = cache
    from benchsuite import surrogate as su
    from benchsuite.registry import get_benchmark

    cls = get_benchmark(args.benchmark)
    new = cls()
    quiet = cls(noise=False)
    old_cls = load_before(str(old_file), cls)
    old, old_quiet = old_cls(), old_cls(noise=False)
    rng = np.random.default_rng(0)
    n = args.n
    configs = [new.space.sample(rng) for _ in range(n)]
    f = new.fidelity
    s = np.exp2(rng.uniform(np.log2(f.low), np.log2(f.high), n)) if f.log else rng.uniform(f.low, f.high, n)
    fids = np.clip(s, f.low, f.high).tolist()
    seeds = rng.integers(0, 2**62, n).tolist()

    diff = 0
    for c, fi, sd in zip(configs, fids, seeds):
        a, b = old.evaluate(c, fi, sd), new.evaluate(c, fi, sd)
        diff += (a.loss, a.cost_s, a.info) != (b.loss, b.cost_s, b.info) or old.test_loss(c) != new.test_loss(c)
    print(f"sameness: {n - diff} of {n} queries bit-identical (loss, cost, mean, std, test loss)")

    t = per_query({
        "old evaluate": lambda i: old.evaluate(configs[i], fids[i], seeds[i]),
        "new evaluate": lambda i: new.evaluate(configs[i], fids[i], seeds[i]),
        "old evaluate, noise off": lambda i: old_quiet.evaluate(configs[i], fids[i], seeds[i]),
        "new evaluate, noise off": lambda i: quiet.evaluate(configs[i], fids[i], seeds[i]),
        "new predict_one (mean, std, cost)": lambda i: new.predict_one(configs[i], fids[i]),
        "old test_loss": lambda i: old.test_loss(configs[i]),
        "new test_loss": lambda i: new.test_loss(configs[i]),
        "noise draw default_rng(seed).standard_normal()": lambda i: np.random.default_rng(seeds[i]).standard_normal(),
    }, n, args.repeats)
    for k, v in t.items():
        print(f"{k:48s} {v:8.1f} us per query CPU ({per_query.wall[k]:8.1f} us wall)")
    print(f"speed-up of evaluate: {t['old evaluate'] / t['new evaluate']:.1f}x (noise off "
          f"{t['old evaluate, noise off'] / t['new evaluate, noise off']:.1f}x)")

    # where the time goes: the exact kernel needs libm pow on every centre
    point = new._point
    u = point.inputs([configs[0][k] for k in new.space.names], fids[0])
    row = point.kernel(u)
    r = np.cbrt(row)
    t_pow = per_query({"pow": lambda i: np.power(r, 3), "products": lambda i: r * r * r}, n, args.repeats)
    print(f"numpy power(r, 3) over one kernel row of {row.size} centres: {t_pow['pow']:.1f} us "
          f"(r * r * r: {t_pow['products']:.1f} us)")

    class Products(su._Kernel):
        """The kernel row cubed by two products (NOT the model's arithmetic; comparison only)."""

        def __call__(self, u):  # noqa: ANN001, ANN204
            acc = np.square(self.levels[0] - u[0])
            for k in range(1, len(self.levels)):
                acc = acc + np.square(self.levels[k] - u[k])
            np.sqrt(acc, out=acc)
            return (acc * acc * acc).reshape(1, -1)

    if point.kernel.levels is not None:
        alt = cls(noise=False)
        alt._point = su.PointModel(new.model, new.table, new.s_weight, new.fidelity_log)
        alt._point.kernel = alt._point.cost_kernel = Products(new.model.loss.x)
        rel = [0.0, 0.0]
        for c, fi in zip(configs, fids):
            a, b = quiet.predict_one(c, fi), alt.predict_one(c, fi)
            rel = [max(rel[0], abs(a[0] - b[0]) / abs(a[0])), max(rel[1], abs(a[2] - b[2]) / abs(a[2]))]
        ta = per_query({"alt": lambda i: alt.evaluate(configs[i], fids[i], seeds[i])}, n, args.repeats)["alt"]
        print(f"comparison only, kernel as r * r * r: evaluate (noise off) {ta:.1f} us; largest relative change "
              f"from the exact predictions: mean loss {rel[0]:.1e}, cost {rel[1]:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
