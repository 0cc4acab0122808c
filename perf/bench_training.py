"""Seconds per epoch of the training harness (``benchsuite.training.train``) on CIFAR-10 subsets.

    .venv/bin/python perf/bench_training.py [--model small_cnn] [--n-train 2000 4000]
        [--n-val 500] [--epochs 3] [--batch-size 128] [--threads 2] [--augment]
        [--source auto|jpeg|official|synthetic] [--device auto|cpu|cuda]

For every training-set size it trains the chosen built-in network (``--list`` shows them)
on a class-stratified subset of the NAS-Bench-201 split and prints the seconds of the first
epoch (which also holds the model build and putting the data on the device) and the mean
of the later ones; every epoch includes scoring the ``--n-val`` validation images. With a
real source it also reports how long loading CIFAR-10 took (a JPEG decode on the first
call, the ``.npz`` cache afterwards). ``--source synthetic`` uses random images (no data
needed). On a shared CPU, compare ``--threads 1`` and ``--threads 2``: torch's threads
slow down badly when other processes compete for the cores.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import json
import os
import platform
import time
from collections.abc import Callable

import numpy as np


def _small_cnn() -> "torch.nn.Module":  # noqa: F821
    """Three conv-BN-ReLU blocks (16, 32, 64 channels) with max pooling and a linear head (~25k params)."""
    from torch import nn

    def block(cin: int, cout: int) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    return nn.Sequential(*block(3, 16), nn.MaxPool2d(2), *block(16, 32), nn.MaxPool2d(2), *block(32, 64),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


def _tiny_cnn() -> "torch.nn.Module":  # noqa: F821
    """One conv layer (8 channels) and a linear head: the harness's overhead more than compute."""
    from torch import nn

    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(),
                         nn.Linear(128, 10))


def _mlp() -> "torch.nn.Module":  # noqa: F821
    """A two-hidden-layer MLP (256, 128) on the flattened image."""
    from torch import nn

    return nn.Sequential(nn.Flatten(), nn.Linear(3072, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


MODELS: dict[str, Callable[[], object]] = {"small_cnn": _small_cnn, "tiny_cnn": _tiny_cnn, "mlp": _mlp}


def load_splits(source: str, n_val: int, n_train: int):
    """The NAS-Bench-201 split of CIFAR-10 (or random images) and the seconds loading took."""
    from benchsuite.datasets import ArraySplits, cifar10_splits

    t = time.perf_counter()
    if source == "synthetic":
        rng = np.random.default_rng(0)
        n = n_train + n_val
        x = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        y = np.arange(n) % 10
        splits = ArraySplits(x[n_val:], y[n_val:], x[:n_val], y[:n_val])
    else:
        splits = cifar10_splits("nb201", source=source)
    return splits, time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="small_cnn", choices=sorted(MODELS))
    p.add_argument("--list", action="store_true", help="list the built-in networks and exit")
    p.add_argument("--n-train", type=int, nargs="+", default=[2000], help="training-set sizes to measure")
    p.add_argument("--n-val", type=int, default=500)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: leave as is)")
    p.add_argument("--augment", action="store_true", help="random crop + flip")
    p.add_argument("--source", default="auto", choices=["auto", "jpeg", "official", "synthetic"])
    p.add_argument("--device", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default="", help="also write the measurements to this JSON file")
    args = p.parse_args(argv)
    if args.list:
        for name, fn in MODELS.items():
            print(f"{name}: {fn.__doc__}")
        return 0

    import torch

    from benchsuite.training import TrainSettings, count_parameters, train

    splits, load_s = load_splits(args.source, args.n_val, max(args.n_train))
    print(f"data: {args.source} (loaded in {load_s:.2f} s), torch {torch.__version__}, "
          f"{args.threads or torch.get_num_threads()} threads, {os.cpu_count()} cores, {platform.processor() or platform.machine()}")
    build = MODELS[args.model]
    print(f"model {args.model}: {count_parameters(build()):,} parameters, batch {args.batch_size}, "
          f"augment {args.augment}")
    rows = []
    for n_train in args.n_train:
        sub = splits.subset(n_train, args.n_val, seed=args.seed)
        settings = TrainSettings(epochs=args.epochs, batch_size=args.batch_size, augment=args.augment,
                                 threads=args.threads, device=args.device, lr=0.05)
        out = train(build, sub, settings, seed=args.seed, progress=lambda line: None)
        if out.failed:
            print(f"n_train {n_train}: FAILED ({out.reason})")
            continue
        ends = [c["seconds"] for c in out.curve]
        per_epoch = np.diff([0.0] + ends)
        later = float(np.mean(per_epoch[1:])) if len(per_epoch) > 1 else float(per_epoch[0])
        row = {"model": args.model, "n_train": n_train, "n_val": args.n_val, "epochs": args.epochs,
               "first_epoch_s": float(per_epoch[0]), "epoch_s": later, "total_s": out.seconds,
               "val_error": out.val_loss, "device": out.device, "precision": out.precision,
               "threads": torch.get_num_threads() if args.threads is None else args.threads}
        rows.append(row)
        print(f"n_train {n_train:>6}: first epoch {row['first_epoch_s']:.2f} s, later epochs {later:.2f} s "
              f"({later / n_train * 1e3:.3f} ms/image), val error {out.val_loss:.3f} after {args.epochs} epochs "
              f"[{out.device}, {out.precision}]")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"load_s": load_s, "source": args.source, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
