"""Which component of DNGO carries the gap to dngo.txt Table 1? (issue 23, item 1.)

    OMP_NUM_THREADS=1 nice -n 5 .venv/bin/python studies/dngo_components.py \\
        --benchmark branin --evals 50 --seeds 0-9 --variant adam_norm --variant sgd_old \\
        --out studies/results/dngo_components.jsonl [--coverage-n 50 100 200]

Runs the suite's BO loop (``benchsuite.runner.run``, one worker, no overhead on the clock) with
``dngo`` under one *variant* (a set of its settings, table ``VARIANTS``) per run, and appends one
JSON line per run: final incumbent, regret against the known optimum, the incumbent after
25/50/100/150/200 evaluations, the share of the last half of the run on a face of the unit
cube, the number of diverged (visibly retried) network fits, CPU seconds, and for each n in
``--coverage-n`` not above the budget the model refitted on the run's first n trials (as
``ask`` fits it) scored on 500 uniform random points: RMSE, the share inside the central 95 %
interval of the predictive mixture (noise included), and the median sampled noise sd 1/sqrt(beta)
in the objective's units. ``--seeds`` are run seeds (``benchsuite run --seed``), not the
protocol's, so that the final check on ``dngo_table1``'s seeds is held out.

Variant ``pybnn`` puts pybnn's DNGO model (automl/pybnn 0.0.5, the authors' group's code, its
defaults: Adam 0.01, 500 epochs of batch 10, inputs and outputs normalised, emcee over
(alpha, beta) with 20 walkers, 2,000 burn-in + 2,000 steps; no prior mean) inside our loop and
our EI search: the model lives in its own venv (``--pybnn-python``, default
/tmp/pybnn-venv/bin/python; never a suite dependency), in a worker process that this script
starts with ``--pybnn-worker`` and talks to through pickled numpy arrays on stdin/stdout. EI is
taken on pybnn's predictive variance, which includes its noise 1/beta (as RoBO's EI does).

Summarise a JSONL file with ``--summary FILE``: per (benchmark, evals, variant), runs, mean and
median final regret, runs with regret above 0.1 ("stuck", the issue's diagnosis) and within
0.001 / 0.02 (the issue's targets), coverage at each n, diverged fits.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import struct
import subprocess
import sys
import time
from typing import Any

import numpy as np

OPTIMUM = {"branin": 0.397887, "hartmann6": -3.32237}
# Settings of each variant; "today" is dngo's default before issue 23 (SGD 0.05, 100 epochs of 64 or
# 2,000 steps, l2 1e-4, unit-cube inputs); "adam_norm" pybnn's training recipe inside ours.
TODAY = {"optimizer": "sgd", "learning_rate": 0.05, "epochs": 100, "batch_size": 64, "min_steps": 2000,
         "max_steps": None, "weight_decay": 1e-4, "normalize_input": False}
VARIANTS: dict[str, dict[str, Any]] = {
    "today": TODAY,
    "today_lr001": {**TODAY, "learning_rate": 0.01},
    "today_adam": {**TODAY, "optimizer": "adam", "learning_rate": 0.01},
    "today_norm": {**TODAY, "normalize_input": True},
    "today_adam_norm": {**TODAY, "optimizer": "adam", "learning_rate": 0.01, "normalize_input": True},
    "adam_norm": {},  # the new defaults: pybnn's recipe (Adam 0.01, 500 epochs of batch 10, no l2, rescaled x),
    # at most 3,000 steps
    "adam_norm_wd1e-4": {"weight_decay": 1e-4},
    "adam_norm_nocap": {"max_steps": None},
    "adam_norm_const": {"prior_mean": "constant"},
    "adam_norm_latent_ei": {"noisy_ei": False},
    "adam_norm_samples30": {"n_samples": 30},
    "adam_norm_ninit10": {"n_init": 10},
    "adam_norm_search": {"n_candidates": 8000, "n_starts": 20},
    "adam_norm_eta4": {"eta_target": 4.0},
    "sgd_norm_epochs": {"optimizer": "sgd", "learning_rate": 0.01},
    "pybnn": {},
}


# ----------------------------------------------------------------------------- pybnn worker half
def _send(stream: Any, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=4)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _recv(stream: Any) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("pybnn worker closed its pipe")
    return pickle.loads(stream.read(struct.unpack("<Q", head)[0]))


def pybnn_worker() -> None:
    """The worker loop (pybnn's venv): ('fit', X, y, seed) -> None; ('predict', X) -> (mean, var)."""
    import contextlib
    import io

    import torch
    from pybnn.dngo import DNGO as PDNGO

    torch.set_num_threads(1)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    model = None
    state = None  # pybnn keeps its emcee walkers across train() calls of one model object; so do we
    while True:
        try:
            msg = _recv(inp)
        except EOFError:
            return
        if msg[0] == "fit":
            _, X, y, seed = msg
            torch.manual_seed(int(seed))
            if model is None:
                model = PDNGO(rng=np.random.RandomState(int(seed) % 2**32))
            else:
                model.rng = np.random.RandomState(int(seed) % 2**32)
            with contextlib.redirect_stdout(io.StringIO()):
                model.train(X, y, do_optimize=True)
            state = np.asarray(model.hypers, dtype=float)
            _send(out, {"alpha": state[:, 0].tolist(), "beta": state[:, 1].tolist()})
        elif msg[0] == "predict":
            m, v = model.predict(msg[1])
            _send(out, (np.asarray(m, dtype=float), np.asarray(v, dtype=float)))


# ----------------------------------------------------------------------------- our half
def _make_pybnn_class(python: str):
    from benchsuite.optimizers.dngo import DNGO
    from benchsuite.optimizers.models.posterior import Posterior

    class PybnnPosterior:
        """pybnn's predictive mean and variance (noise included) as a one-row Posterior."""

        def __init__(self, proc: subprocess.Popen, y: np.ndarray):
            self.proc, self.y_min = proc, float(np.min(y))
            self.n_samples = 1

        def predict(self, X: np.ndarray) -> Posterior:
            _send(self.proc.stdin, ("predict", np.atleast_2d(np.asarray(X, dtype=float))))
            m, v = _recv(self.proc.stdout)
            return Posterior(m[None], np.maximum(v, 1e-300)[None], np.zeros(1))

        def best(self) -> np.ndarray:
            return np.array([self.y_min])

    class PybnnDNGO(DNGO):
        """Our loop, design and EI search around pybnn's DNGO model (a worker process in its own venv)."""

        name = "dngo_pybnn"

        def setup(self) -> None:
            super().setup()
            self.settings = {**self.settings, "noisy_ei": False}  # pybnn's variance already holds 1/beta
            self.proc = subprocess.Popen([python, os.path.abspath(__file__), "--pybnn-worker"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         env={**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
            self.hypers: list[dict] = []

        def fit(self, X: np.ndarray, y: np.ndarray) -> PybnnPosterior:
            _send(self.proc.stdin, ("fit", np.asarray(X, dtype=float), np.asarray(y, dtype=float),
                                    int(self.rng.integers(0, 2**31 - 1))))
            self.hypers.append(_recv(self.proc.stdout))
            return PybnnPosterior(self.proc, y)

        def close(self) -> None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)

    return PybnnDNGO


def _mixture(post: Any, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mixture mean and variance (noise included) over the posterior's rows, and the noise variances."""
    p = post.predict(X)
    noise = np.broadcast_to(np.asarray(p.noise, dtype=float).reshape(-1, 1), p.mean.shape)
    mean = p.mean.mean(0)
    var = (p.variance + noise + p.mean**2).mean(0) - mean**2
    return mean, np.maximum(var, 1e-300), np.asarray(p.noise, dtype=float).ravel()


def coverage_at(cls: type, settings: dict, bench: Any, rows: list[dict], n: int, seed: int) -> dict[str, float]:
    """Refit the variant's model on the run's first ``n`` successful trials; score it on 500 random points."""
    ok = [r for r in rows if r["status"] == "ok"][:n]
    configs = [bench.space.from_json(r["config"]) for r in ok]
    y = np.array([r["loss"] for r in ok])
    opt = cls(bench.space, None, np.random.default_rng(seed), **settings)
    X = opt.snap(bench.space.to_unit(configs))
    post = opt.fit(X, y)
    rng = np.random.default_rng(12345)
    Xt = rng.random((500, len(bench.space)))
    yt = np.array([bench.evaluate(bench.space.from_unit(x), None, seed=0).loss for x in Xt])
    mean, var, noise = _mixture(post, Xt)
    out = {"rmse": float(np.sqrt(np.mean((mean - yt) ** 2))), "spread": float(np.std(yt)),
           "cov95": float(np.mean(np.abs(yt - mean) <= 1.96 * np.sqrt(var))),
           "mean_sd": float(np.mean(np.sqrt(var))),
           "noise_sd": float(np.median(np.sqrt(noise))) if noise.size and np.any(noise > 0) else None}
    if hasattr(opt, "close"):
        opt.close()
    return out


def run_one(benchmark: str, variant: str, seed: int, evals: int, coverage_n: list[int], pybnn_python: str) -> dict:
    """One BO run of ``dngo`` (or pybnn's model) under ``variant``; its summary as a dict."""
    from benchsuite.optimizers.dngo import DNGO
    from benchsuite.registry import make_benchmark
    from benchsuite.runner import run

    bench = make_benchmark(benchmark)
    cls = _make_pybnn_class(pybnn_python) if variant == "pybnn" else DNGO
    settings = dict(VARIANTS[variant])
    made: list[Any] = []

    class Tracked(cls):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            super().setup()
            made.append(self)

    Tracked.name = cls.name
    c0, w0 = time.process_time(), time.perf_counter()
    out = run(bench, Tracked, seed=seed, budget_evals=evals, optimizer_settings=settings, include_overhead=False)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    if hasattr(made[0], "close"):
        made[0].close()
    import resource
    cpu += resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime  # the pybnn worker, if any
    rows = out.rows
    inc = [r["incumbent_loss"] for r in rows]
    unit = np.array([bench.space.to_unit([bench.space.from_json(r["config"])])[0] for r in rows])
    half = unit[len(unit) // 2:]
    face = float((((half <= 1e-9) | (half >= 1 - 1e-9)).any(1)).mean())
    rec = {"benchmark": benchmark, "variant": variant, "seed": seed, "evals": evals, "settings": settings,
           "final": float(inc[-1]), "regret": float(inc[-1] - OPTIMUM[benchmark]),
           "trajectory": {k: float(inc[k - 1]) for k in (10, 25, 50, 100, 150, 200) if k <= len(inc)},
           "face_share_last_half": face, "failed": sum(r["status"] != "ok" for r in rows),
           "fit_retries": int(max([r["info"].get("fit_retries_run", 0) for r in rows] or [0])),
           "cpu_s": cpu, "wall_s": wall, "load": os.getloadavg()[0]}
    cov = {}
    for n in coverage_n:
        if n <= evals:
            cov[str(n)] = coverage_at(cls, settings, bench, rows, n, seed)
    rec["coverage"] = cov
    return rec


def _parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            seeds += list(range(int(a), int(b) + 1))
        else:
            seeds.append(int(part))
    return seeds


def summary(path: str) -> None:
    """Print a Markdown table of the runs in a JSONL file."""
    recs = [json.loads(line) for line in open(path) if line.strip()]
    groups: dict[tuple, list[dict]] = {}
    for r in recs:
        groups.setdefault((r["benchmark"], r["evals"], r["variant"]), []).append(r)
    ns = sorted({int(n) for r in recs for n in r["coverage"]})
    print("| benchmark (evals) | variant | runs | mean final | median regret | regret > 0.1 | within 0.001 | "
          "within 0.02 | " + " | ".join(f"cov95 / RMSE @ n={n}" for n in ns) + " | diverged fits | CPU s per run |")
    print("|---|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(ns) + "---:|---:|")
    for (b, e, v), rs in sorted(groups.items()):
        reg = np.array([r["regret"] for r in rs])
        cells = []
        for n in ns:
            c = [r["coverage"][str(n)] for r in rs if str(n) in r["coverage"]]
            cells.append(f"{np.mean([x['cov95'] for x in c]):.2f} / {np.mean([x['rmse'] for x in c]):.3g}"
                         if c else "")
        print(f"| {b} ({e}) | {v} | {len(rs)} | {np.mean([r['final'] for r in rs]):.4f} | {np.median(reg):.4f} | "
              f"{int((reg > 0.1).sum())} | {int((reg <= 0.001).sum())} | {int((reg <= 0.02).sum())} | "
              + " | ".join(cells) + f" | {sum(r['fit_retries'] for r in rs)} | "
              f"{np.mean([r['cpu_s'] for r in rs]):.0f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchmark", choices=sorted(OPTIMUM), default="branin")
    p.add_argument("--evals", type=int, default=50)
    p.add_argument("--seeds", default="0-9", help="run seeds: '0-9' or '0,3,5'")
    p.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="repeatable")
    p.add_argument("--coverage-n", type=int, nargs="*", default=[50, 100, 200])
    p.add_argument("--out", default="studies/results/dngo_components.jsonl")
    p.add_argument("--pybnn-python", default="/tmp/pybnn-venv/bin/python")
    p.add_argument("--summary", metavar="JSONL", help="print the table of a results file and stop")
    args = p.parse_args()
    if args.summary:
        summary(args.summary)
        return
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    variants = args.variant or ["adam_norm"]
    jobs = [(v, s) for s in _parse_seeds(args.seeds) for v in variants]  # seed-major: every variant gets seeds early
    done = set()
    if os.path.exists(args.out):  # resume: skip (benchmark, evals, variant, seed) already in the file
        for line in open(args.out):
            if line.strip():
                r = json.loads(line)
                done.add((r["benchmark"], r["evals"], r["variant"], r["seed"]))
    for variant, seed in jobs:
        if (args.benchmark, args.evals, variant, seed) in done:
            continue
        if True:
            rec = run_one(args.benchmark, variant, seed, args.evals, args.coverage_n, args.pybnn_python)
            with open(args.out, "a") as f:
                f.write(json.dumps(rec) + "\n")
            print(f"{variant} seed {seed}: final {rec['final']:.5f} regret {rec['regret']:.4f} "
                  f"face {rec['face_share_last_half']:.2f} retries {rec['fit_retries']} cpu {rec['cpu_s']:.0f}s "
                  f"cov {json.dumps({k: round(v['cov95'], 2) for k, v in rec['coverage'].items()})}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--pybnn-worker":
        pybnn_worker()
    else:
        main()
