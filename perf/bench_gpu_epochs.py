"""Seconds per epoch of every GPU-sized live benchmark, at the protocols' sizes, and what a run costs.

    python perf/bench_gpu_epochs.py [--device auto|cpu|cuda] [--epochs 3] [--cases da_genetic,nb201,...]
        [--small] [--json FILE]

The scorecard's ``not-run (gpu)`` rows carry a GPU-hours estimate from each protocol's
``published.gpu.evaluation_s``. This script measures what those estimates rest on: for each
GPU-sized benchmark it builds the benchmark with the protocol's settings (full data sizes,
the paper's batch size and optimiser) and trains one or two sampled architectures for
``--epochs`` epochs through ``Benchmark.evaluate``, so the time is what a trial costs:

* ``da_genetic``, ``da_flat``, ``da_nasbench``, ``da_nasnet``: ``deeparchitect_cifar10``
  (deeparchitect.txt Sec. 7: 40,000 training images, Adam, batch 256; 25 epochs per evaluation);
* ``nb201``: ``nb201_live``, NAS-Bench-201's best CIFAR-10 cell at C = 16, N = 5 (200 epochs);
* ``combo_nas``: COMBO's cell with the most FLOPs (combo.txt Supp. 4.4: 30,000 images, batch
  100; one evaluation is 4 trainings of up to 20 epochs; measured with one training);
* ``nasbot_cnn``: ``nasbot_cnn_cifar10``, one sampled CNN, seconds per 1,000 SGD iterations
  (batch 32; 60K iterations at full fidelity).

The per-epoch figure is the mean of the epochs after the first (the first also holds building
the network and moving the data to the device). ``evaluation_s`` is the estimated cost of one
full-fidelity evaluation (epochs x per-epoch + the first epoch's extra). ``--small`` shrinks every
data set and network size so the script can be dry-run on a CPU in a minute. Measurements are
written (atomically) to ``--json`` after each case, so a run cut off keeps what it measured.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from typing import Any

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)
import numpy as np

NB201_BEST = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"

#: label -> (benchmark, settings, epochs of one full-fidelity evaluation, trainings per evaluation, architectures)
CASES: dict[str, tuple[str, dict[str, Any], int, int, int]] = {
    "da_genetic": ("deeparchitect_cifar10", {"space": "genetic"}, 25, 1, 2),
    "da_flat": ("deeparchitect_cifar10", {"space": "flat"}, 25, 1, 1),
    "da_nasbench": ("deeparchitect_cifar10", {"space": "nasbench"}, 25, 1, 1),
    "da_nasnet": ("deeparchitect_cifar10", {"space": "nasnet"}, 25, 1, 1),
    "nb201": ("nb201_live", {}, 200, 1, 1),
    "combo_nas": ("combo_nas", {"n_repeats": 1, "early_stop_window": 100}, 20, 4, 1),
    "nasbot_cnn": ("nasbot_cnn_cifar10", {}, 60_000, 1, 1),
}

#: what ``--small`` sets, per benchmark (a CPU dry run of the same code path)
SMALL: dict[str, dict[str, Any]] = {
    "deeparchitect_cifar10": {"n_train": 512, "n_val": 256, "n_test": 256, "batch_size": 128},
    "nb201_live": {"channels": 4, "cells_per_stage": 1, "n_train": 512, "n_val": 256, "n_test": 256},
    "combo_nas": {"channels": 4, "n_train": 512, "n_val": 256},
    "nasbot_cnn_cifar10": {"n_train": 512, "n_val": 256, "n_test": 256},
}


def _atomic_json(path: str, obj: Any) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".bench_gpu_", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=1)
    os.replace(tmp, path)


def _config(label: str, bench: Any, k: int) -> Any:
    """The architecture measured: NB201's best cell, COMBO's largest cell, else the k-th seeded sample."""
    if label == "nb201":
        return NB201_BEST
    if label == "combo_nas":
        from benchsuite.architectures import combo_cell

        return combo_cell.max_flops_config()
    rng = np.random.default_rng(1000 + k)
    for _ in range(50):  # a Nasbench walk can leave the space (no input-output path): draw again
        cfg = bench.space.sample(rng)
        if not (hasattr(bench.space, "why_invalid") and bench.space.why_invalid(cfg)):
            return cfg
    raise SystemExit(f"{label}: no valid architecture in 50 draws")


def measure(label: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Train the case's architectures for ``--epochs`` epochs (or iterations); one row each."""
    from benchsuite.registry import make_benchmark

    name, settings, full_epochs, trainings, n_arch = CASES[label]
    settings = {**settings, "device": args.device, "test_eval": False}
    if args.data_dir:
        settings["data_dir"] = args.data_dir
    if args.small:
        settings.update(SMALL[name])
        if settings.get("space") == "genetic":  # the one space with size options
            settings["space_options"] = {"filters_per_stage": [4, 8, 8], "fc_units": 16}
    iterations = name == "nasbot_cnn_cifar10"
    steps = args.iterations if iterations else args.epochs
    settings["iterations" if iterations else "epochs"] = max(steps, 2)
    bench = make_benchmark(name, settings)
    t = time.perf_counter()
    splits = bench.splits()
    load_s = time.perf_counter() - t
    rows = []
    for k in range(1 if args.small else n_arch):
        cfg = _config(label, bench, k)
        t = time.perf_counter()
        res = bench.evaluate(cfg, steps, seed=k)
        wall = time.perf_counter() - t
        if res.failed:
            rows.append({"case": label, "arch": k, "failed": True, "error": str(res.info.get("error"))})
            print(f"{label} #{k}: FAILED: {res.info.get('error')}", flush=True)
            continue
        info = res.info
        if iterations:
            per_k = res.cost_s / steps * 1000.0
            evaluation_s = per_k * full_epochs / 1000.0
            unit, per_unit, first_extra = "1000 iterations", per_k, 0.0
        else:
            if "curve" in info:
                ends = [c["seconds"] for c in info["curve"]]
            else:  # combo_nas: one training per evaluation here; its cost is that training's
                ends = list(np.linspace(res.cost_s / steps, res.cost_s, steps))
            per_epoch = np.diff([0.0] + ends)
            per_unit = float(np.mean(per_epoch[1:])) if len(per_epoch) > 1 else float(per_epoch[0])
            first_extra = float(per_epoch[0] - per_unit)
            evaluation_s = trainings * (full_epochs * per_unit + max(first_extra, 0.0))
            unit = "epoch"
        row = {"case": label, "benchmark": name, "arch": k, "n_train": len(splits.y_train),
               "n_params": int(info.get("n_params", 0)), "device": info.get("device"),
               "precision": info.get("precision"), "steps": steps, "unit": unit, "per_unit_s": per_unit,
               "first_extra_s": first_extra, "cost_s": float(res.cost_s), "wall_s": wall, "load_s": load_s,
               "loss": float(res.loss), "full_fidelity": full_epochs, "trainings_per_evaluation": trainings,
               "evaluation_s": evaluation_s}
        rows.append(row)
        print(f"{label} #{k}: {row['n_params']:,} parameters on {row['device']} [{row['precision']}], "
              f"{row['n_train']} training images: {per_unit:.2f} s per {unit} (first extra {first_extra:.2f} s); "
              f"one evaluation ({trainings} x {full_epochs} {'iterations' if iterations else 'epochs'}) "
              f"about {evaluation_s:.0f} s; loss {res.loss:.3f} after {steps}; data loaded in {load_s:.1f} s",
              flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default auto)")
    p.add_argument("--epochs", type=int, default=3, help="epochs trained per architecture (default 3)")
    p.add_argument("--iterations", type=int, default=2000, help="SGD iterations for nasbot_cnn (default 2000)")
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated subset of {', '.join(CASES)}")
    p.add_argument("--data-dir", default="", help="data directory (default: $BENCHSUITE_DATA or ../shared/data)")
    p.add_argument("--small", action="store_true", help="tiny sizes: a CPU dry run of the same code path")
    p.add_argument("--json", default="", help="write the measurements to this JSON file (after each case)")
    args = p.parse_args(argv)
    labels = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in labels if c not in CASES]
    if unknown:
        p.error(f"unknown case(s) {unknown}; choose from {list(CASES)}")

    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    header = {"torch": torch.__version__, "cuda_device": gpu, "cores": os.cpu_count(),
              "machine": platform.machine(), "date": time.strftime("%Y-%m-%d"), "small": args.small}
    print(f"torch {header['torch']}, CUDA device: {gpu}, {os.cpu_count()} cores", flush=True)
    rows: list[dict[str, Any]] = []
    for label in labels:
        t = time.perf_counter()
        try:
            rows.extend(measure(label, args))
        except Exception as exc:  # noqa: BLE001 - one case's failure must not lose the others' measurements
            rows.append({"case": label, "failed": True, "error": f"{type(exc).__name__}: {exc}"})
            print(f"{label}: ERROR {type(exc).__name__}: {exc}", flush=True)
        print(f"  ({label}: {time.perf_counter() - t:.1f} s wall)", flush=True)
        if args.json:
            _atomic_json(args.json, {**header, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
