"""Golden runs: record, then check, that a refactoring leaves every result bit-identical.

    python scripts/golden.py record golden.json     # before moving anything
    python scripts/golden.py check golden.json      # after every step
    python scripts/golden.py check golden.json --only default_   # just what `snakemake all` runs

Each case is one run through the CLI (the path users take): every registered optimizer on a
benchmark it supports (with its small ``test_settings``) on 1 and 4 workers (``benchsuite run``);
every benchmark (with its ``test_settings``) under a searcher for its space; and every
(benchmark, optimizer) pair of every protocol of the default set, repetition 0, exactly as
``snakemake all`` runs it (``benchsuite run-job``). A case's fingerprint is the sha256 of the result
file's reproducible columns (``results.TIMING_COLUMNS`` dropped, and ``cost_s`` with the
clock-dependent ``info`` for live benchmarks, whose costs are measured seconds) plus the
provenance's optimizer settings.

A case that fails (a non-zero exit) fails the check even when it failed the same way when recorded:
"identical" is claimed only for runs that finish, so a job that has always failed cannot pass. Fabolas
and MTBO runs of protocols that put the overhead on the clock decide on their measured overhead (the
paper's rule, ``overhead_in_cost``), so two runs of the same code differ: for them only finishing is
checked, and the output says so. Benchmarks whose data files this machine lacks are skipped, named.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

# (optimizer, benchmark, evaluations, workers)
OPT_CASES = [
    ("random_search", "branin", 12, (1, 4)), ("random_search", "nb201_cifar10", 12, (1, 4)),
    ("regularized_evolution", "nb201_cifar10", 30, (1, 4)), ("regularized_evolution", "ising", 30, (1, 4)),
    ("simulated_annealing", "pest_control", 30, (1, 4)), ("simulated_annealing", "branin_discrete", 30, (1,)),
    ("combo", "contamination", 12, (1, 4)), ("combo", "nb201_cifar10", 10, (1,)),
    ("bocs", "ising", 12, (1, 4)), ("smac", "branin", 12, (1, 4)), ("smac", "maxsat28", 12, (1,)),
    ("tpe", "branin", 14, (1, 4)), ("tpe", "pest_control", 14, (1,)),
    ("gp_ei", "branin", 10, (1, 4)), ("gp_ei", "nb201_cifar10", 8, (1,)),
    ("dngo", "hartmann3", 10, (1, 4)), ("entropy_search", "branin", 8, (1, 4)),
    ("fabolas", "svm_mnist", 8, (1, 4)), ("mtbo", "svm_mnist", 8, (1, 4)), ("hyperband", "svm_mnist", 20, (1, 4)),
    ("hyperband", "branin_mf", 20, (1,)), ("fabolas", "branin_mf", 8, (1,)),
    ("da_random", "da_nb201_cifar10", 12, (1, 4)), ("da_mcts", "da_nb201_cifar10", 12, (1, 4)),
    ("da_smbo", "da_nb201_cifar10", 8, (1, 4)), ("da_evolution", "da_nb201_cifar10", 30, (1, 4)),
    ("regularized_evolution", "da_nb201_cifar10", 30, (1,)),
    ("nasbot", "nasbot_mlp_naval", 4, (1,)), ("nasbot_ea", "nasbot_mlp_naval", 4, (1,)),
    ("nasbot_rand", "nasbot_mlp_naval", 4, (1,)),
]
# searchers for benchmarks whose space random_search cannot serve
SEARCHER = {"da_": "da_random", "nasbot_": "nasbot_rand", "deeparchitect_": "da_random"}


def protocol_cases() -> list[dict]:
    """Every (benchmark, optimizer) pair of the default set's protocols, repetition 0, as ``snakemake all`` runs it."""
    from benchsuite.paths import PROTOCOLS_DIR
    from benchsuite.protocol import load_protocol, load_set, protocol_files
    from benchsuite import registry

    protocols = {p.name: p for p in (load_protocol(f) for f in protocol_files(PROTOCOLS_DIR))}
    out = []
    for name in load_set(PROTOCOLS_DIR, protocols):
        p = protocols[name]
        for job in p.jobs():
            if job.repetition != 0:
                continue
            live = registry.get_benchmark(job.benchmark.name).kind == "live"
            spec = registry.get_optimizer(job.optimizer.name).settings_spec.get("overhead_in_cost")
            timed = p.include_overhead and spec is not None and job.optimizer.settings.get(
                "overhead_in_cost", spec.default)
            out.append({"protocol": p.path, "protocol_name": name, "benchmark": job.benchmark.label,
                        "optimizer": job.optimizer.label, "live": live, "timing_dependent": bool(timed)})
    return out


def cases() -> list[dict]:
    """Every case: the optimizer cases above, each benchmark with its test settings, the default set's pairs."""
    from benchsuite import registry
    from benchsuite.testing import missing_data

    out = []
    for opt, bench, n, workers in OPT_CASES:
        cls = registry.get_optimizer(opt)
        bcls = registry.get_benchmark(bench)
        for w in workers:
            out.append({"optimizer": opt, "set": dict(cls.test_settings), "benchmark": bench,
                        "bset": dict(bcls.test_settings) if bcls.kind == "live" else {}, "evals": n,
                        "workers": w, "live": bcls.kind == "live"})
    for name, entry in sorted(registry.benchmarks().items()):
        bcls = registry.get_benchmark(name)
        if missing_data(bcls, bcls.test_settings):  # a data file this machine lacks: nothing to compare
            print(f"skipped {name}: {missing_data(bcls, bcls.test_settings)}", file=sys.stderr)
            continue
        searcher = next((v for k, v in SEARCHER.items() if name.startswith(k)), "random_search")
        out.append({"optimizer": searcher, "set": {}, "benchmark": name, "bset": dict(bcls.test_settings),
                    "evals": 3, "workers": 1, "live": bcls.kind == "live"})
    return out + protocol_cases()


def key(c: dict) -> str:
    """A readable, unique name of a case."""
    if "protocol" in c:
        return f"{c['protocol_name']}/{c['benchmark']}/{c['optimizer']}/rep000"
    return f"{c['optimizer']}@{c['benchmark']}/w{c['workers']}/n{c['evals']}" + ("/test" if c["bset"] else "")


def fingerprint(c: dict, workdir: str) -> tuple[str, float]:
    """Run the case through the CLI; sha256 of its reproducible content, and the wall seconds."""
    from benchsuite.results import TIMING_COLUMNS, load_result

    out = os.path.join(workdir, key(c).replace("/", "_").replace("@", "_") + ".csv")
    if "protocol" in c:
        argv = [sys.executable, "-m", "benchsuite.cli", "run-job", c["protocol"], c["benchmark"], c["optimizer"],
                "000", "--out", out]
    else:
        argv = [sys.executable, "-m", "benchsuite.cli", "run", "-b", c["benchmark"], "-o", c["optimizer"], "--seed",
                "7", "--budget-evals", str(c["evals"]), "--workers", str(c["workers"]), "--no-overhead", "-q",
                "--out", out]
        for k, v in c["set"].items():
            argv += ["--set", f"{k}={v if isinstance(v, str) else json.dumps(v)}"]
        for k, v in c["bset"].items():
            argv += ["--benchmark-set", f"{k}={v if isinstance(v, str) else json.dumps(v)}"]
    t = time.time()
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        return "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1], time.time() - t
    df = load_result(out)
    prov = df.attrs["provenance"]
    drop = list(TIMING_COLUMNS) + (["cost_s", "info"] if c["live"] else [])
    df = df.drop(columns=[x for x in drop if x in df.columns])
    blob = df.to_csv(index=False) + json.dumps(prov.get("optimizer_settings"), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest(), time.time() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["record", "check"])
    ap.add_argument("file", help="the golden JSON file")
    ap.add_argument("--jobs", type=int, default=2, help="cases run at once")
    ap.add_argument("--only", default="", help="substring of the case names to run")
    args = ap.parse_args()
    todo = [c for c in cases() if args.only in key(c)]
    by_key = {key(c): c for c in todo}
    golden = json.load(open(args.file)) if args.mode == "check" else {}
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip([key(c) for c in todo], pool.map(lambda c: fingerprint(c, tmp), todo)))
    bad = 0
    for k, (h, secs) in results.items():
        if args.mode == "record":
            print(f"{secs:6.1f}s {k} {h[:16]}")
        else:
            failed = h.startswith("FAILED")
            # Fabolas and MTBO decide on their own measured overhead (the paper's rule) where the protocol puts it
            # on the clock: their runs differ from one run to the next at the same code, so only finishing counts
            timed = by_key[k].get("timing_dependent", False)
            ok = not failed and (timed or golden.get(k) == h)
            bad += not ok
            verdict = "FAIL" if failed else ("ran (timing-dependent, not compared)" if timed else "same") if ok \
                else "DIFF"
            print(f"{verdict} {secs:6.1f}s {k}" + ("" if ok else f" {golden.get(k, 'missing')[:40]} -> {h[:200]}"))
    failed = [k for k, (h, _) in results.items() if h.startswith("FAILED")]
    if args.mode == "record":
        json.dump({k: h for k, (h, _) in results.items()}, open(args.file, "w"), indent=1, sort_keys=True)
        print(f"recorded {len(results)} cases ({len(failed)} failed: {failed}) in {args.file}")
        return 1 if failed else 0
    timed = sum(by_key[k].get("timing_dependent", False) and not h.startswith("FAILED") for k, (h, _) in results.items())
    print(f"{len(results) - bad - timed} of {len(results)} cases identical, {timed} timing-dependent ran "
          f"(not compared), {len(failed)} failed to run, {bad} differ or failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
