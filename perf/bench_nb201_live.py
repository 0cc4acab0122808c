"""Seconds per epoch of the live NAS-Bench-201 benchmark (``nb201_live``), small and full size.

    .venv/bin/python perf/bench_nb201_live.py [--channels 8] [--cells 1] [--n-train 2000]
        [--n-val 1000] [--epochs 2] [--threads 1] [--arch STRING] [--device auto|cpu|cuda]
        [--full] [--json FILE]

It evaluates one cell through the benchmark itself (``make_benchmark("nb201_live", ...)``,
so the measured time is what a trial costs) and prints, from the run's per-epoch curve,
the first epoch (which also holds the network build and putting the data on the device)
and the mean of the later epochs, with images per second and the device. ``--full`` then
trains one epoch of the full-size setting (C = 16, N = 5, the 25,000 + 25,000 images of
the cifar10-valid split): minutes on a GPU's worth of work, tens of minutes on 2 CPU cores.
Loading CIFAR-10 is timed apart (a JPEG decode on the very first call, then the cache).
On a shared CPU use ``--threads 1``: torch's intra-op threads slow down by an order of
magnitude when other processes compete for the cores.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import json
import os
import platform
import time

import numpy as np

BEST = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"


def measure(settings: dict, arch: str, epochs: int, seed: int) -> dict:
    """Train ``arch`` for ``epochs`` epochs through the benchmark; per-epoch seconds from the curve."""
    from benchsuite.registry import make_benchmark

    bench = make_benchmark("nb201_live", {**settings, "epochs": max(epochs, 2)})
    t = time.perf_counter()
    splits = bench.splits()
    load_s = time.perf_counter() - t
    res = bench.evaluate(arch, epochs, seed=seed)
    if res.failed:
        raise SystemExit(f"training failed: {res.info.get('error')}")
    ends = [c["seconds"] for c in res.info["curve"]]
    per_epoch = np.diff([0.0] + ends)
    later = float(np.mean(per_epoch[1:])) if len(per_epoch) > 1 else float(per_epoch[0])
    n = len(splits.y_train)
    return {"channels": settings["channels"], "cells_per_stage": settings["cells_per_stage"], "n_train": n,
            "n_val": len(splits.y_val), "epochs": epochs, "load_s": load_s, "first_epoch_s": float(per_epoch[0]),
            "epoch_s": later, "images_per_s": n / later, "cost_s": res.cost_s, "val_error": res.loss,
            "device": res.info["device"], "precision": res.info["precision"], "n_params": res.info["n_params"],
            "data_source": splits.source}


def show(label: str, row: dict) -> None:
    """One result line."""
    print(f"{label}: C={row['channels']} N={row['cells_per_stage']} n_train={row['n_train']} n_val={row['n_val']} "
          f"({row['n_params']:,} parameters) on {row['device']} [{row['precision']}]: first epoch "
          f"{row['first_epoch_s']:.2f} s, later epochs {row['epoch_s']:.2f} s ({row['images_per_s']:.0f} images/s), "
          f"val error {row['val_error']:.3f} after {row['epochs']} epoch(s); data loaded in {row['load_s']:.1f} s "
          f"({row['data_source']})", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--channels", type=int, default=8, help="channels of the first stage (default 8)")
    p.add_argument("--cells", type=int, default=1, help="cells per stage N (default 1)")
    p.add_argument("--n-train", type=int, default=2000, help="training images (default 2000)")
    p.add_argument("--n-val", type=int, default=1000, help="validation images (default 1000)")
    p.add_argument("--epochs", type=int, default=2, help="epochs of the small run (default 2)")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: leave as is)")
    p.add_argument("--arch", default=BEST, help="architecture string (default: NAS-Bench-201's best CIFAR-10 cell)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    p.add_argument("--data-dir", default="", help="data directory (default: $BENCHSUITE_DATA or ../shared/data)")
    p.add_argument("--full", action="store_true", help="also train one full-size epoch (C=16, N=5, 25k images)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default="", help="also write the measurements to this JSON file")
    args = p.parse_args(argv)

    import torch

    common = {"data_dir": args.data_dir, "batch_size": args.batch_size, "threads": args.threads,
              "device": args.device}
    cuda = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    print(f"torch {torch.__version__}, CUDA device: {cuda}, {args.threads or torch.get_num_threads()} CPU threads, "
          f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}", flush=True)
    rows = []
    small = {**common, "channels": args.channels, "cells_per_stage": args.cells, "n_train": args.n_train,
             "n_val": args.n_val, "n_test": 1000}
    rows.append(measure(small, args.arch, args.epochs, args.seed))
    show("small", rows[-1])
    if args.full:
        full = {**common, "channels": 16, "cells_per_stage": 5, "n_train": 25_000, "n_val": 25_000, "n_test": 10_000}
        rows.append(measure(full, args.arch, 1, args.seed))
        show("full", rows[-1])
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"arch": args.arch, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
