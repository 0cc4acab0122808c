"""The suite's micro-benchmarks on two commits side by side: what a change costs or saves, and whether it computes the same.

    .venv/bin/python perf/ab.py BASE [HEAD] [--quick] [--rounds N] [--only NAME ...] [--json FILE]

``BASE`` and ``HEAD`` are git revisions; ``HEAD`` left out is this checkout's working tree as it is
(uncommitted changes included), and ``BASE`` may be ``merge-base``: where this branch left ``main`` (on
``main`` itself: the commit before the last merge, so that a merged change is measured against what it
changed). Each revision is checked out with ``git worktree add --detach`` under a temporary folder, removed
at the end. Both sides run in this checkout's virtual environment with their own code: a ``sitecustomize``
on ``PYTHONPATH`` points the editable install at the tree under test (``perf/_tree.py``), in every process
the side starts, so the ``benchsuite`` command and its re-execution run that tree too.

The micro-benchmarks (``--list`` names them), each timed in CPU seconds of one thread (BLAS, OpenMP and
MKL at one thread each):

* ``nb201_eval``, ``svm_eval``: one lookup through ``evaluate`` (random configurations, fidelities and seeds);
* ``nb201_batch``, ``svm_batch``: 100,000 lookups in one batch (configurations -> rows -> ``lookup``);
* ``surrogate_eval``: one ``evaluate`` of the SVM grid's surrogate;
* ``run_trial``: a whole run's CPU time per trial on ``nb201_cifar10`` with random search; ``runloop``: the
  run loop's own share of it (minus the same asks, evaluations, tells and recommendations made directly: a
  difference of two larger numbers, so its spread is wide);
* ``result_write``, ``result_read``: a 1,000-trial run's result file written and read back;
* ``da_smbo_100``: one ``da_smbo`` decision on ``da_nb201_cifar10`` after 100 observations, in a fresh
  process (nothing remembered from earlier decisions: the 512 candidates' features are computed);
* ``import_cli``: ``python -c "import benchsuite.cli"``; ``version``: ``benchsuite --version``;
  ``cli_run``: ``benchsuite run`` of one trial on ``nb201_cifar10`` (a new process each, as a shell or
  Snakemake starts it; its CPU time includes the re-execution that fixes the hash seed).

Rounds alternate the two sides (BASE first in even rounds, HEAD first in odd ones), so load that comes
and goes falls on both. Each group of in-process benchmarks (the NB201 lookups, the SVM grid's, ...) runs in a
process of its own (measured: a run's CPU per trial came out 7 % apart between two commits after the table
benchmarks in the same process, and 3 % the other way alone), and takes the best of a few repeats. On
identical code (one commit against itself, 7 rounds at load 3.3-3.7, 2026-11-28) every median came out
between 0.95 and 1.06 and every spread straddled 1.00: smaller differences than that are not measured here. The
table gives each side's median CPU time per operation over the rounds, the ratio HEAD / BASE (the median
of the per-round ratios, with their smallest and largest: a spread that straddles 1.00 is no measured
difference), the wall times, and whether both sides computed the same thing (a digest of each
benchmark's outputs: losses looked up, the run's rows without their timing columns, the file read back,
the suggestion made). Timings depend on the machine and its load; read the ratios and the load average
printed beside them. Nothing here fails on a slowdown: it informs (CI prints ``--quick`` against the
merge base). ``--quick`` (three rounds, smaller repeats) takes under two minutes on two shared cores.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import hashlib
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TREE_VAR = "BENCHSUITE_AB_TREE"
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

# name -> (unit, scale from seconds, description); in-process ones first, then the ones that start a process
BENCHES: dict[str, tuple[str, float, str]] = {
    "nb201_eval": ("us", 1e6, "NB201 table: one evaluate"),
    "nb201_batch": ("ms", 1e3, "NB201 table: 1e5 lookups in one batch"),
    "svm_eval": ("us", 1e6, "SVM grid table: one evaluate"),
    "svm_batch": ("ms", 1e3, "SVM grid table: 1e5 lookups in one batch"),
    "surrogate_eval": ("us", 1e6, "SVM grid surrogate: one evaluate"),
    "run_trial": ("us", 1e6, "a run per trial (nb201_cifar10, random search: ask, evaluate, tell, loop)"),
    "runloop": ("us", 1e6, "run loop per trial (the run minus the same calls made directly)"),
    "result_write": ("ms", 1e3, "write a 1,000-trial result file"),
    "result_read": ("ms", 1e3, "read a 1,000-trial result file"),
    "da_smbo_100": ("s", 1.0, "da_smbo decision at 100 observations (fresh process)"),
    "import_cli": ("s", 1.0, "python -c 'import benchsuite.cli'"),
    "version": ("s", 1.0, "benchsuite --version"),
    "cli_run": ("s", 1.0, "benchsuite run: 1 trial on nb201_cifar10"),
}
PROCESS_BENCHES = ("import_cli", "version", "cli_run")
# the tree's root goes last on sys.path too: commits before 2026-11-25 import their plugins as the top-level
# package ``optimizers``, which the editable install does not map
SITECUSTOMIZE = """\
import os, sys
if os.environ.get({var!r}):
    sys.path.insert(0, {perf!r})
    import _tree
    _tree.use(os.environ[{var!r}])
    sys.path.remove({perf!r})
    sys.path.append(os.environ[{var!r}])
"""


# -- the micro-benchmarks, run inside a worker process of one side ---------------------------------------------

def _digest(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


def _best(fn, repeats: int) -> tuple[float, float]:  # noqa: ANN001 - any callable
    """Least CPU seconds of ``repeats`` calls of ``fn``, with the wall seconds of that call."""
    best = (float("inf"), float("inf"))
    for _ in range(repeats):
        c, w = time.process_time(), time.perf_counter()
        fn()
        best = min(best, (time.process_time() - c, time.perf_counter() - w))
    return best


def _table_lookups(name: str, quick: bool) -> dict[str, dict]:
    """One evaluate and a batch of 1e5 on a table benchmark."""
    import numpy as np

    from benchsuite.registry import make_benchmark

    b = make_benchmark(name)
    t = b.table
    rng = np.random.default_rng(0)
    n_batch, n_one = 100_000, (5_000 if quick else 20_000)
    configs = [b.space.sample(rng) for _ in range(n_batch)]
    fid_idx = rng.integers(0, t.fidelities.size, n_batch)
    fids = [None if t.fidelities.size == 1 else float(t.fidelities[i]) for i in fid_idx]
    seeds = rng.integers(0, 2**62, n_batch)
    sd = seeds.tolist()
    ev = b.evaluate
    out: list = []

    def one() -> None:
        out.clear()
        for k in range(n_one):
            out.append(ev(configs[k], fids[k], sd[k]).loss)

    def batch() -> None:
        out[:] = [b.lookup(b.rows(configs), fid_idx, seeds)[0]]

    repeats = 3 if quick else 5
    cpu, wall = _best(one, repeats)
    res = {"eval": {"cpu": cpu / n_one, "wall": wall / n_one, "digest": _digest(out)}}
    cpu, wall = _best(batch, repeats)
    res["batch"] = {"cpu": cpu, "wall": wall, "digest": _digest(out[0].tobytes())}
    return res


def bench_nb201(quick: bool) -> dict[str, dict]:
    r = _table_lookups("nb201_cifar10", quick)
    return {"nb201_eval": r["eval"], "nb201_batch": r["batch"]}


def bench_svm(quick: bool) -> dict[str, dict]:
    r = _table_lookups("svm_mnist", quick)
    return {"svm_eval": r["eval"], "svm_batch": r["batch"]}


def bench_surrogate(quick: bool) -> dict[str, dict]:
    import numpy as np

    from benchsuite.registry import make_benchmark

    b = make_benchmark("svm_mnist_surrogate")
    rng = np.random.default_rng(0)
    configs = [b.space.sample(rng) for _ in range(1000 if quick else 2000)]
    f = b.fidelity.full if b.fidelity else None
    out: list = []

    def go() -> None:
        out[:] = [b.evaluate(c, f, 1).loss for c in configs]

    cpu, wall = _best(go, 3 if quick else 5)
    return {"surrogate_eval": {"cpu": cpu / len(configs), "wall": wall / len(configs), "digest": _digest(out)}}


def _timing_free(rows: list[dict]) -> list:
    timing = ("time", "overhead", "_s")
    return [sorted((k, repr(v)) for k, v in r.items() if not any(t in k for t in timing)) for r in rows]


def bench_runloop(quick: bool) -> dict[str, dict]:
    """CPU per trial of a whole run minus that of the same calls made directly (perf/bench_runner_overhead.py)."""
    from benchsuite.optimizer import Trial
    from benchsuite.registry import get_optimizer, make_benchmark
    from benchsuite.runner import run
    from benchsuite.seeding import evaluation_seed, optimizer_rng

    n = 5000 if quick else 20_000
    bench, opt_cls = make_benchmark("nb201_cifar10"), get_optimizer("random_search")
    rows: list = []

    def whole() -> None:
        rows[:] = run(bench, opt_cls, seed=0, budget_evals=n, include_overhead=False).rows

    def direct() -> None:
        opt = opt_cls(bench.space, bench.fidelity, optimizer_rng(0))
        seen: dict = {}
        for i in range(n):
            s = opt.ask(())
            r = bench.evaluate(s.config, s.fidelity, seed=evaluation_seed(0, i))
            opt.tell(Trial(i, s.config, s.fidelity), r)
            inc = opt.recommend()
            key = bench.space.key(inc)
            if key not in seen:
                seen[key] = bench.test_loss(inc)

    runs, calls = [], []
    for _ in range(3 if quick else 5):  # a run and its direct calls in turn; the least time of each
        runs.append(_best(whole, 1))
        calls.append(_best(direct, 1))
    (cw, ww), (cd, wd) = min(runs), min(calls)
    digest = _digest(_timing_free(rows))
    return {"runloop": {"cpu": (cw - cd) / n, "wall": (ww - wd) / n, "digest": digest},
            "run_trial": {"cpu": cw / n, "wall": ww / n, "digest": digest}}


def bench_results(quick: bool) -> dict[str, dict]:
    from benchsuite.registry import get_optimizer, make_benchmark
    from benchsuite.results import load_result, write_result
    from benchsuite.runner import run

    out = run(make_benchmark("nb201_cifar10"), get_optimizer("random_search"), seed=0, budget_evals=1000,
              include_overhead=False)
    tmp = Path(tempfile.mkdtemp(prefix="ab-result-"))
    try:
        path = tmp / "run.csv"
        repeats = 3 if quick else 7
        cpu_w, wall_w = _best(lambda: write_result(path, out.rows, out.provenance), repeats)
        frames: list = []
        cpu_r, wall_r = _best(lambda: frames.__setitem__(slice(None), [load_result(path)]), repeats)
        df = frames[0]
        cols = [c for c in df.columns if not any(t in c for t in ("time", "overhead", "_s"))]
        read = _digest(df[cols].to_csv(index=False))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"result_write": {"cpu": cpu_w, "wall": wall_w, "digest": _digest(_timing_free(out.rows))},
            "result_read": {"cpu": cpu_r, "wall": wall_r, "digest": read}}


def bench_da_smbo(quick: bool) -> dict[str, dict]:
    """A da_smbo decision after 100 observations of random architectures, nothing remembered from earlier asks."""
    import numpy as np

    from benchsuite.benchmark import Result
    from benchsuite.optimizer import Trial
    from benchsuite.registry import get_optimizer, make_benchmark

    bench, cls = make_benchmark("da_nb201_cifar10"), get_optimizer("da_smbo")
    rng = np.random.default_rng(0)
    opt = cls(bench.space, bench.fidelity, np.random.default_rng(1), exploration_prob=0.0)
    for i in range(100):
        opt.tell(Trial(i, bench.space.sample(rng), None), Result(float(rng.uniform(0.05, 0.5)), 1.0))
    picks: list = []
    cpu, wall = _best(lambda: picks.append(opt.ask().config), 1 if quick else 2)
    return {"da_smbo_100": {"cpu": cpu, "wall": wall, "digest": _digest(picks)}}


WORKER_GROUPS = {
    "nb201_eval": bench_nb201, "nb201_batch": bench_nb201, "svm_eval": bench_svm, "svm_batch": bench_svm,
    "surrogate_eval": bench_surrogate, "run_trial": bench_runloop, "runloop": bench_runloop,
    "result_write": bench_results,
    "result_read": bench_results, "da_smbo_100": bench_da_smbo,
}


def worker(names: list[str], quick: bool) -> dict[str, dict]:
    """Run the in-process benchmarks ``names`` (each group once); a failing one is reported, not raised."""
    out: dict[str, dict] = {}
    for fn in dict.fromkeys(WORKER_GROUPS[n] for n in names):
        try:
            out.update(fn(quick))
        except Exception as exc:  # noqa: BLE001 - an older tree may lack a benchmark: say so and go on
            msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
            out.update({n: {"error": msg} for n, f in WORKER_GROUPS.items() if f is fn})
    import benchsuite

    return {"_tree": str(Path(benchsuite.__file__).resolve().parent.parent),
            **{n: v for n, v in out.items() if n in names}}


# -- the two sides, alternated ---------------------------------------------------------------------------------

def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True).stdout.strip()


def resolve_base(spec: str) -> str:
    """A revision's full hash. ``merge-base``: where HEAD's branch left ``main`` (or ``origin/main``); on ``main``
    itself, HEAD's first parent (``main`` before the last change was merged), so it measures one change."""
    if spec != "merge-base":
        return _git("rev-parse", "--verify", f"{spec}^{{commit}}")
    head = _git("rev-parse", "HEAD")
    for ref in ("main", "origin/main"):
        try:
            base = _git("merge-base", "HEAD", ref)
        except subprocess.CalledProcessError:
            continue
        if base != head:
            return base
        break
    parents = _git("rev-list", "--parents", "-n", "1", "HEAD").split()[1:]
    if not parents:
        raise SystemExit("ab: no merge base and no parent of HEAD in this clone (a shallow clone?); give BASE")
    return parents[0]


class Side:
    """One side of the comparison: a label, the tree its code comes from, the environment of its processes."""

    def __init__(self, label: str, rev: str | None, work: Path):
        self.label, self.rev = label, rev
        if rev is None:
            self.tree, self.owned = REPO, False
            self.title = "working tree"
        else:
            self.tree = work / f"tree-{label}"
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(self.tree), rev],
                           check=True, capture_output=True, text=True)
            self.owned = True
            self.title = _git("log", "-1", "--format=%h %ad", "--date=short", rev)
        self.env = dict(os.environ, **ONE_THREAD, **{TREE_VAR: str(self.tree)})
        self.env["PYTHONPATH"] = os.pathsep.join([str(work / "site"), *filter(None, [os.environ.get("PYTHONPATH")])])
        self.env.pop("PYTHONHASHSEED", None)  # as a user's shell: the CLI re-executes itself to fix it

    def prepare(self) -> None:
        """Byte-compile the tree, so that no round pays for writing ``__pycache__``."""
        dirs = [str(self.tree / d) for d in ("benchsuite", "optimizers", "analysis") if (self.tree / d).is_dir()]
        subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], env=self.env, capture_output=True)

    def close(self) -> None:
        if self.owned:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(self.tree)],
                           capture_output=True)


class _Stopped(Exception):
    """A SIGTERM (a timeout): the rounds done are summarised and the worktrees removed."""


def _stop(*_: object) -> None:
    raise _Stopped


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_process_bench(name: str, side: Side, work: Path) -> dict:
    """CPU and wall seconds of one new process (and what it started) doing ``name``."""
    bin_dir = Path(sys.executable).parent
    cli = str(bin_dir / "benchsuite") if (bin_dir / "benchsuite").exists() else None
    out = work / f"cli-{side.label}.csv"
    for p in (out, out.with_name(out.name + ".provenance.json")):
        p.unlink(missing_ok=True)
    cmd = {
        "import_cli": [sys.executable, "-c", "import benchsuite.cli"],
        "version": [cli, "--version"] if cli else [sys.executable, "-m", "benchsuite.cli", "--version"],
        "cli_run": ([cli] if cli else [sys.executable, "-m", "benchsuite.cli"])
        + ["run", "-b", "nb201_cifar10", "-o", "random_search", "--budget-evals", "1", "--seed", "0", "-q",
           "--out", str(out)],
    }[name]
    c0, w0 = _child_cpu(), time.perf_counter()
    p = subprocess.run(cmd, env=side.env, capture_output=True, text=True, cwd=work)
    cpu, wall = _child_cpu() - c0, time.perf_counter() - w0
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1][:160]}
    digest = p.stdout.strip() if name == "version" else ""
    if name == "cli_run":
        import csv

        with open(out, newline="", encoding="utf-8") as fh:
            rows = [r for r in csv.reader(line for line in fh if not line.startswith("#"))]
        keep = [k for k, h in enumerate(rows[0]) if not any(t in h for t in ("time", "overhead", "_s"))]
        digest = _digest([[r[k] for k in keep] for r in rows])
    return {"cpu": cpu, "wall": wall, "digest": digest}


def run_worker(side: Side, names: list[str], quick: bool) -> dict[str, dict]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", ",".join(names)] + (["--quick"] if quick else [])
    p = subprocess.run(cmd, env=side.env, capture_output=True, text=True, cwd=str(REPO))
    try:
        out = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        err = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1][:160]
        return {n: {"error": f"worker failed: {err}"} for n in names}
    if Path(out.pop("_tree")) != side.tree.resolve():  # the redirection is what makes the comparison mean anything
        raise SystemExit(f"ab: the {side.label} worker imported benchsuite from outside {side.tree}")
    return out


def _fmt(x: float, unit: str) -> str:
    return f"{x:.3g}" if unit != "s" else f"{x:.3f}"


def summarise(names: list[str], results: dict[str, dict[str, list[dict]]], sides: list[Side]) -> list[str]:
    """The table: per benchmark, each side's median CPU and wall per operation and the ratio HEAD / BASE."""
    base, head = sides
    lines = [f"| micro-benchmark | unit | BASE CPU | HEAD CPU | HEAD / BASE CPU (median [min, max] of {len(results[base.label][names[0]])} rounds) "
             f"| BASE wall | HEAD wall | same output |",
             "|---|---|---|---|---|---|---|---|"]
    for n in names:
        unit, scale, what = BENCHES[n]
        b, h = results[base.label][n], results[head.label][n]
        errs = [f"{s.label}: {next(r['error'] for r in rs if 'error' in r)}" for s, rs in ((base, b), (head, h))
                if any("error" in r for r in rs)]
        if errs:
            lines.append(f"| {n} ({what}) | {unit} | | | n/a ({'; '.join(errs)}) | | | |")
            continue
        med = lambda rs, k: statistics.median(r[k] for r in rs) * scale  # noqa: E731
        ratios = sorted(hr["cpu"] / br["cpu"] for br, hr in zip(b, h) if br["cpu"] > 0 and hr["cpu"] > 0)
        same = {r["digest"] for r in b} == {r["digest"] for r in h} and len({r["digest"] for r in b}) == 1
        rtxt = (f"{statistics.median(ratios):.2f} [{ratios[0]:.2f}, {ratios[-1]:.2f}]" if ratios else "n/a")
        if len(ratios) < len(b):  # a difference of two timings can come out at or below zero: noise
            rtxt += f" ({len(b) - len(ratios)} round(s) at or below 0 left out)"
        lines.append(f"| {n} ({what}) | {unit} | {_fmt(med(b, 'cpu'), unit)} | {_fmt(med(h, 'cpu'), unit)} | {rtxt} | "
                     f"{_fmt(med(b, 'wall'), unit)} | {_fmt(med(h, 'wall'), unit)} | {'yes' if same else 'NO'} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("base", nargs="?", help="a git revision, or 'merge-base'")
    p.add_argument("head", nargs="?", help="a git revision (default: this checkout's working tree)")
    p.add_argument("--quick", action="store_true", help="three rounds, fewer repeats (under two minutes)")
    p.add_argument("--rounds", type=int, help="rounds of each side (default 3 with --quick, else 7)")
    p.add_argument("--only", nargs="+", choices=list(BENCHES), metavar="NAME", help="these benchmarks only")
    p.add_argument("--list", action="store_true", help="name the micro-benchmarks and exit")
    p.add_argument("--json", help="also write every round's numbers to this file")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker.split(","), args.quick)))
        return 0
    if args.list:
        for n, (unit, _, what) in BENCHES.items():
            print(f"{n:15s} {unit:3s} {what}")
        return 0
    if not args.base:
        p.error("give BASE (a git revision, or 'merge-base')")
    names = args.only or list(BENCHES)
    rounds = args.rounds or (3 if args.quick else 7)
    signal.signal(signal.SIGTERM, _stop)
    work = Path(tempfile.mkdtemp(prefix="benchsuite-ab-"))
    (work / "site").mkdir()
    (work / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE.format(var=TREE_VAR, perf=str(HERE)))
    sides: list[Side] = []
    try:
        sides.append(Side("base", resolve_base(args.base), work))
        sides.append(Side("head", resolve_base(args.head) if args.head else None, work))
        for s in sides:
            s.prepare()
        load0 = os.getloadavg()
        print(f"A/B: BASE {sides[0].title} vs HEAD {sides[1].title}; {rounds} rounds alternating, one thread; "
              f"load average {load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f} on {os.cpu_count()} cores", flush=True)
        inproc = [n for n in names if n not in PROCESS_BENCHES]
        groups = [[n for n in inproc if WORKER_GROUPS[n] is fn] for fn in dict.fromkeys(WORKER_GROUPS[n] for n in inproc)]
        results: dict[str, dict[str, list[dict]]] = {s.label: {n: [] for n in names} for s in sides}
        done = 0
        try:
            for r in range(rounds):
                order = sides if r % 2 == 0 else sides[::-1]
                got: dict[str, dict[str, dict]] = {s.label: {} for s in sides}
                for group in groups:  # a process per group of benchmarks: one's garbage never weighs on another
                    for s in order:
                        got[s.label].update(run_worker(s, group, args.quick))
                for n in names:
                    if n in PROCESS_BENCHES:
                        for s in order:
                            got[s.label][n] = run_process_bench(n, s, work)
                for s in sides:  # a round counts whole, so that both sides have the same rounds
                    for n in names:
                        results[s.label][n].append(got[s.label][n])
                done += 1
                print(f"  round {r + 1}/{rounds} done (load {os.getloadavg()[0]:.2f})", flush=True)
        except _Stopped:
            print(f"  stopped (SIGTERM) after {done} of {rounds} rounds", flush=True)
        if not done:
            return 1
        print("\n".join(summarise(names, results, sides)))
        load1 = os.getloadavg()
        print(f"load average at the end {load1[0]:.2f} / {load1[1]:.2f} / {load1[2]:.2f}; CPU times per operation, "
              "the ratio is HEAD's over BASE's (below 1: HEAD is faster)")
        if args.json:
            Path(args.json).write_text(json.dumps({"base": sides[0].title, "head": sides[1].title, "rounds": rounds,
                                                   "load": [load0, load1], "results": results}, indent=1))
    finally:
        for s in sides:
            s.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
