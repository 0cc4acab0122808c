"""Build the NAS-Bench-201 table from the shared data files (seconds, no training).

    python tables/nas_bench_201/build.py [--data-dir DIR] [--out tables/nas_bench_201/nas_bench_201.h5]

Reads ``nas_bench_201/per_seed_valid_runtime.pkl`` (per-seed validation losses, training
times, parameter sizes; restricted unpickler) and ``nas_bench_201/test_accuracy_200ep.csv``
(test accuracies and architecture strings in benchmark index order) through
:func:`benchsuite.architectures.nb201_source.read_source`, checks that every row belongs to
its architecture (see ``PARAM_COUNTS.md``), and writes one gzip-compressed HDF5 table in
the suite's generic layout (:mod:`benchsuite.tabular`), one task group per dataset, with
the cells on a 5^6 grid of the six edges (axis levels in the order of
``benchsuite.architectures.nb201.OPS``). Provenance: the source files' sha256, the build
command, versions and date.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import platform
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from benchsuite.architectures import nb201  # noqa: E402
from benchsuite.architectures.nb201_source import read_source  # noqa: E402
from benchsuite.benchmarks.nb201 import NB201_FILE, NB201_TASKS  # noqa: E402
from benchsuite.tabular import TABLES_DIR, TaskArrays, write_table  # noqa: E402

GRID = (len(nb201.OPS),) * len(nb201.EDGE_NAMES)


def grid_order(arch_strings: list[str]) -> np.ndarray:
    """Grid position (code order) of each official benchmark index."""
    pos = np.array([nb201.config_index(nb201.from_arch_string(s)) for s in arch_strings], dtype=np.int64)
    if np.unique(pos).size != nb201.N_CELLS or pos.size != nb201.N_CELLS:
        raise SystemExit(f"the source lists {pos.size} architectures, {np.unique(pos).size} distinct; "
                         f"expected all {nb201.N_CELLS}")
    return pos


def task_arrays(src: dict, pos: np.ndarray, arch_index: np.ndarray) -> TaskArrays:
    """One dataset's arrays on the 5^6 grid."""
    n = nb201.N_CELLS
    val = np.asarray(src["val_loss"], dtype=float)  # (n, 3), fractions, NaN-padded
    seeds = val.shape[1]

    def on_grid(a: np.ndarray) -> np.ndarray:
        out = np.empty((n,) + a.shape[1:], dtype=a.dtype)
        out[pos] = a
        return out.reshape(GRID + a.shape[1:])

    n_seeds = np.asarray(src["n_seeds"], dtype=np.int8)
    runtime = np.asarray(src["runtime"], dtype=float)
    cost = np.where(np.arange(seeds) < n_seeds[:, None], runtime[:, None], np.nan)
    test_error = 1.0 - np.asarray(src["test_accuracy"], dtype=float) / 100.0
    return TaskArrays(
        axes={name: np.array(nb201.OPS, dtype=object) for name in nb201.EDGE_NAMES},
        fidelity_name="epochs", fidelities=np.array([200.0]),
        objectives={"val_error": on_grid(val)[..., None, :], "cost": on_grid(cost)[..., None, :]},
        n_seeds=on_grid(n_seeds)[..., None],
        loss="val_error", cost="cost", test_loss="test_error",
        extras={"test_error": on_grid(test_error), "size_in_mb": on_grid(np.asarray(src["size_in_mb"], float)),
                "n_params": on_grid(np.asarray(src["n_params_model"], dtype=np.int64)),
                "arch_index": on_grid(arch_index)},
        descriptions={
            "val_error": "validation error (fraction) of each training seed after 200 epochs",
            "cost": "training seconds of the architecture (published; the same for every seed)",
            "test_error": "1 - test accuracy after 200 epochs, mean over seeds",
            "size_in_mb": ("parameters in millions as published; for 150 cells the count of an isomorphic "
                           "sibling whose training run NAS-Bench-201 reused (PARAM_COUNTS.md)"),
            "n_params": "exact parameter count of the network the cell's string builds",
            "arch_index": "the architecture's index in NAS-Bench-201",
            "epochs": "training epochs (only the final 200-epoch numbers are published here)"},
        attrs={"dataset": NB201_TASKS[src["task"]][2], "num_classes": NB201_TASKS[src["task"]][1]})


def build(out: Path, data_dir: str | None = None) -> Path:
    """Read the sources, check them, write the table and its sha256 sidecar."""
    src = read_source(data_dir)
    pos = grid_order(src["arch_strings"])
    arch_index = np.arange(nb201.N_CELLS, dtype=np.int32)
    tasks = {}
    for task in NB201_TASKS:
        d = dict(src[task], task=task)
        tasks[task] = task_arrays(d, pos, arch_index)
    import h5py

    attrs = {
        "source": ("NAS-Bench-201 (Dong & Yang, ICLR 2020) per-seed validation errors, training times and sizes "
                   "(per_seed_valid_runtime.pkl) and 200-epoch test accuracies (test_accuracy_200ep.csv); "
                   "see ../shared/data/README.md"),
        "recipe": "python tables/nas_bench_201/build.py  (Snakemake: snakemake --cores 1 nb201_table)",
        "data_note": "final (200-epoch) numbers only; CIFAR-10 validation numbers are the cifar10-valid protocol",
        "built": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": f"python {platform.python_version()}, numpy {np.__version__}, h5py {h5py.__version__}",
        "complete": True,
    }
    for name, digest in src["sha256"].items():
        attrs[f"sha256:{name}"] = digest
    return write_table(out, tasks, attrs)


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default=None, help="data directory (default: $BENCHSUITE_DATA or ../shared/data)")
    p.add_argument("--out", type=Path, default=TABLES_DIR / NB201_FILE)
    args = p.parse_args(argv)
    out = build(args.out, args.data_dir)
    print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
