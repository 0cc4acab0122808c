"""Build the SVM-on-MNIST lookup table in shards, with the live benchmark's own code.

    python tables/svm_mnist/build.py shard --shard K --of N   # one shard -> shards/shard_K_of_N.npz
    python tables/svm_mnist/build.py merge [--allow-partial]   # shards -> svm_mnist.h5

Grid (issue 4 / fabolas.txt Sec. 4.1, Figure 1): 20 x 20 equally spaced (log C, log gamma)
over [-10, 10]^2, fractions s = 1/128 ... 1/2 with 3 replicate subsets each (seeds fixed per
(s, replicate), the same subsets at every grid point) and s = 1 once, plus the test error
of the s = 1 model. Grid point ``i`` (flat index ``i = iC * 20 + iG``) belongs to shard
``i % N``, which spreads the slow corners (large C) over all shards. A shard file is
written to a temporary name and renamed, so a killed build leaves no partial shard, and
a rerun skips shards that exist (``--force`` recomputes).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import socket
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run as a script from anywhere in the checkout

from benchsuite.benchmarks import svm_mnist as sm  # noqa: E402

SHARD_DIR = HERE / "shards"
N_GRID = sm.GRID_LEVELS.size


def shard_path(k: int, n: int) -> Path:
    """File of shard ``k`` of ``n``."""
    return SHARD_DIR / f"shard_{k:03d}_of_{n:03d}.npz"


def compute_point(splits: sm.MnistSplits, flat: int) -> dict[str, np.ndarray]:
    """All fits of one grid point: arrays over (fraction, replicate) and the test error."""
    ic, ig = divmod(flat, N_GRID)
    log_c, log_g = float(sm.GRID_LEVELS[ic]), float(sm.GRID_LEVELS[ig])
    shape = (len(sm.FRACTIONS), sm.N_REPLICATES)
    out = {k: np.full(shape, np.nan) for k in ("loss", "cost", "wall", "n_support")}
    test = np.nan
    for si, s in enumerate(sm.FRACTIONS):
        reps = sm.N_REPLICATES if s < 1 else 1
        for r in range(reps):
            if s < 1:
                rng = np.random.default_rng(sm.table_subset_seed(si, r))
                idx = sm.stratified_sample(splits.y_pool, sm.subset_size(s), rng)
            else:
                idx = None
            o = sm.fit_evaluate(splits, log_c, log_g, idx, with_test=(s == 1))
            out["loss"][si, r], out["cost"][si, r], out["wall"][si, r] = o.val_error, o.cpu_s, o.wall_s
            out["n_support"][si, r] = o.n_support
            if s == 1:
                test = o.test_error
    out["test_error"] = np.array(test)
    return out


def run_shard(k: int, n: int, force: bool = False) -> Path:
    """Compute shard ``k`` of ``n`` unless its file exists; returns the file."""
    path = shard_path(k, n)
    if path.exists() and not force:
        print(f"shard {k}/{n} exists, skipping", flush=True)
        return path
    splits = sm.load_splits()
    points = np.arange(k, N_GRID * N_GRID, n)
    rows = []
    t0 = time.perf_counter()
    for flat in points:
        rows.append(compute_point(splits, int(flat)))
        print(f"shard {k}/{n}: point {flat} done ({time.perf_counter() - t0:.0f} s)", flush=True)
    arrays = {key: np.stack([r[key] for r in rows]) for key in rows[0]}
    SHARD_DIR.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}.npz")
    np.savez_compressed(tmp, points=points, host=np.array(socket.gethostname()),
                        date=np.array(_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")),
                        **arrays)
    os.replace(tmp, path)
    return path


def main(argv: list[str] | None = None) -> int:
    """Command line of the table build."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("shard", help="compute one shard")
    a.add_argument("--shard", type=int, required=True)
    a.add_argument("--of", type=int, required=True)
    a.add_argument("--force", action="store_true")
    m = sub.add_parser("merge", help="merge shards into the HDF5 table")
    m.add_argument("--of", type=int, default=40)
    m.add_argument("--out", type=Path, default=sm.TABLE_PATH)
    m.add_argument("--allow-partial", action="store_true", help="fill missing shards with NaN (testing only)")
    args = p.parse_args(argv)
    if args.cmd == "shard":
        if not 0 <= args.shard < args.of:
            p.error("need 0 <= --shard < --of")
        run_shard(args.shard, args.of, args.force)
        return 0
    from merge import merge  # noqa: PLC0415  (same folder)
    merge(args.of, args.out, args.allow_partial)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
