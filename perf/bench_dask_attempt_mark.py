"""What the dask backend's attempt mark costs per trial on a running scheduler.

With ``--scheduler`` each trial first looks up and sets a dask ``Variable`` on the scheduler (so that a task
run again after its worker died comes back as a failed trial), and the driver deletes it when the trial is
told. This script runs random search on ``sleep_branin`` with ``sleep_s=0`` (the trial is nothing but the
backend's round trip) against one LocalCluster of 2 single-threaded workers, passed as a scheduler address,
alternately with the mark (as shipped) and without it (``attempt=None``, patched here only), and prints the
wall milliseconds per trial of each run.

    .venv/bin/python perf/bench_dask_attempt_mark.py [--evals 200] [--repeats 3]
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import statistics
import time


def main() -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--evals", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    import distributed

    import benchsuite.backends as B
    from benchsuite.registry import get_optimizer, make_benchmark
    from benchsuite.runner import run

    shipped = B.dask_evaluate

    def unmarked(spec, gpus, config, fidelity, seed, attempt=None):  # noqa: ANN001, ANN202
        return shipped(spec, gpus, config, fidelity, seed, None)

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=40)
    times: dict[str, list[float]] = {"with the mark": [], "without": []}
    try:
        for _ in range(args.repeats):
            for label in times:
                B.dask_evaluate = shipped if label == "with the mark" else unmarked
                t0 = time.perf_counter()
                out = run(make_benchmark("sleep_branin", {"sleep_s": 0.0}), get_optimizer("random_search"), seed=0,
                          budget_evals=args.evals, workers=2, backend="dask", scheduler=cluster.scheduler_address)
                times[label].append((time.perf_counter() - t0) / args.evals * 1000)
                assert len(out.rows) == args.evals
    finally:
        B.dask_evaluate = shipped
        cluster.close()
    for label, ms in times.items():
        print(f"{label}: {statistics.median(ms):.1f} ms per trial (median of {len(ms)} runs: "
              f"{', '.join(f'{m:.1f}' for m in ms)})")
    print(f"ratio: {statistics.median(times['with the mark']) / statistics.median(times['without']):.2f}")


if __name__ == "__main__":
    main()
