"""DeepArchitect searchers: decision times, and final test accuracies on the NAS-Bench-201 table.

    python perf/bench_da_searchers.py decision [--space genetic] [--repeat 5]
    python perf/bench_da_searchers.py nb201 [--reps 30] [--optimizers da_random,da_mcts,...]
        [--set da_smbo.n_samples=64] [--out docs/results/deeparchitect_nb201.json]

``decision`` times one SMBO ask (512 candidates scored by the fitted surrogate, after 20
observations) and one ask of each other searcher on a DeepArchitect space. ``nb201`` runs the
searchers on ``da_nb201_cifar10`` with protocol deeparchitect_nb201's budget (150,000 simulated
seconds, at most 1,000 evaluations, 4 workers, overhead off the clock) and the protocol's seeds,
and prints the final incumbent's test accuracy (mean +- std over repetitions).
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def decision(space_name: str, repeat: int) -> dict:
    """Milliseconds per ask of each searcher on ``space_name`` (SMBO: a surrogate decision)."""
    from benchsuite.architectures.deeparchitect import make_space
    from benchsuite.benchmark import Result
    from benchsuite.optimizer import Trial
    from benchsuite.optimizers.deeparchitect import DAEvolution, DAMCTS, DARandom, DASMBO

    space = make_space(space_name)
    out = {}
    for cls, st in ((DARandom, {}), (DAMCTS, {}), (DASMBO, {"exploration_prob": 0.0}),
                    (DAEvolution, {"population_size": 20, "sample_size": 5})):
        opt = cls(space, None, np.random.default_rng(0), **st)
        rng = np.random.default_rng(1)
        for i in range(20):  # 20 observations (SMBO: a fitted surrogate; evolution: past the random start)
            s = opt.ask()
            opt.tell(Trial(i, s.config, None), Result(float(rng.random()), 1.0))
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            opt.ask()
            times.append(1e3 * (time.perf_counter() - t0))
        out[cls.name] = {"median_ms": statistics.median(times), "min_ms": min(times), "repeat": repeat}
        print(f"{space_name} {cls.name}: one ask {statistics.median(times):.1f} ms (median of {repeat}; "
              f"min {min(times):.1f})", flush=True)
    return out


def nb201(reps: int, optimizers: list[str], overrides: dict[str, dict]) -> dict:
    """Final incumbent test accuracy of each optimizer on da_nb201_cifar10 (protocol deeparchitect_nb201)."""
    from benchsuite.protocol import load_protocol
    from benchsuite.registry import get_optimizer, make_benchmark
    from benchsuite.runner import run

    proto = load_protocol(ROOT / "protocols" / "deeparchitect_nb201.yaml")
    bench = make_benchmark("da_nb201_cifar10")
    spec = proto.benchmarks[0]
    labels = {o.label: o for o in proto.optimizers}
    out = {}
    for label in optimizers:
        o = labels[label]
        settings = {**o.settings, **overrides.get(label, {})}
        cls = get_optimizer(o.name)
        accs, secs, evals = [], [], []
        for job in [j for j in proto.jobs() if j.optimizer.label == label][:reps]:
            t0 = time.perf_counter()
            res = run(bench, cls, seed=job.seed, budget_evals=spec.budget.evaluations,
                      budget_seconds=spec.budget.seconds, workers=proto.workers, optimizer_settings=settings,
                      include_overhead=False)
            secs.append(time.perf_counter() - t0)
            last = res.rows[-1]
            accs.append(100.0 * (1.0 - last["incumbent_test_loss"]))
            evals.append(len(res.rows))
        out[label] = {"settings": settings, "reps": len(accs), "test_acc": accs,
                      "mean": statistics.fmean(accs), "std": statistics.stdev(accs) if len(accs) > 1 else math.nan,
                      "evaluations_mean": statistics.fmean(evals), "wall_s_per_run": statistics.fmean(secs)}
        print(f"{label}: {out[label]['mean']:.2f} +- {out[label]['std']:.2f} % test accuracy over {len(accs)} "
              f"runs ({out[label]['evaluations_mean']:.0f} evaluations, {out[label]['wall_s_per_run']:.1f} s/run)",
              flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("decision", "nb201"))
    ap.add_argument("--space", default="genetic")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--optimizers", default="da_random,da_mcts,da_smbo,da_evolution,random_search,"
                                            "regularized_evolution,rea_nb201")
    ap.add_argument("--set", action="append", default=[], help="LABEL.setting=value")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    if a.what == "decision":
        res = decision(a.space, a.repeat)
    else:
        overrides: dict[str, dict] = {}
        for item in a.set:
            k, v = item.split("=", 1)
            label, setting = k.split(".", 1)
            overrides.setdefault(label, {})[setting] = json.loads(v)
        res = nb201(a.reps, a.optimizers.split(","), overrides)
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
