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


def priority_order(n: int) -> list[int]:
    """Shards ordered so that a partial table is most useful: gamma columns nearest the
    good region (log gamma about -4) first, then spreading outwards; both halves of a column
    (even and odd log C indices) are adjacent. With ``n`` = 40 a shard is half a column."""
    centre = 6  # log gamma = -3.68, the middle of the region of low error at every s
    cols = sorted(range(N_GRID), key=lambda ig: (abs(ig - centre), ig))
    order = []
    for ig in cols:
        order += [k for k in range(n) if (k % N_GRID) == ig and k not in order]
    return order + [k for k in range(n) if k not in order]


def run_lanes(n: int, lanes: int, wait_pids: list[int]) -> None:
    """Compute every missing shard in :func:`priority_order` with ``lanes`` parallel processes.

    Each lane first waits for one of ``wait_pids`` (shards already running elsewhere) to
    exit; shards are claimed atomically (``mkdir``) so that lanes never duplicate work.
    This is an alternative driver to the Snakemake rules; both call ``shard``.
    """
    import subprocess
    import threading

    claims = SHARD_DIR / f".claims_{os.getpid()}"
    claims.mkdir(parents=True, exist_ok=True)
    log_dir = HERE / "logs"
    log_dir.mkdir(exist_ok=True)

    def lane(wait_pid: int | None) -> None:
        while wait_pid is not None:
            try:
                os.kill(wait_pid, 0)
            except OSError:
                break
            time.sleep(5)
        for k in priority_order(n):
            if shard_path(k, n).exists():
                continue
            try:
                (claims / str(k)).mkdir()
            except FileExistsError:
                continue
            with open(log_dir / f"shard_{k:03d}.log", "w") as log:
                subprocess.run([sys.executable, str(Path(__file__).resolve()), "shard", "--shard", str(k),
                                "--of", str(n)], stdout=log, stderr=subprocess.STDOUT, check=False)

    waits = list(wait_pids) + [None] * max(0, lanes - len(wait_pids))
    threads = [threading.Thread(target=lane, args=(w,)) for w in waits[:lanes]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main(argv: list[str] | None = None) -> int:
    """Command line of the table build."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("shard", help="compute one shard")
    a.add_argument("--shard", type=int, required=True)
    a.add_argument("--of", type=int, required=True)
    a.add_argument("--force", action="store_true")
    r = sub.add_parser("run", help="compute all missing shards, most informative first (no Snakemake)")
    r.add_argument("--of", type=int, default=40)
    r.add_argument("--lanes", type=int, default=2)
    r.add_argument("--wait-for", type=int, nargs="*", default=[], help="PIDs of shards already running")
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
    if args.cmd == "run":
        run_lanes(args.of, args.lanes, args.wait_for)
        return 0
    from merge import merge  # noqa: PLC0415  (same folder)
    merge(args.of, args.out, args.allow_partial)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
