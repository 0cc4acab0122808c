"""Reader of the NAS-Bench-201 source files in the data folder (for the table build).

Two files (``../shared/data/README.md``), both located and sha256-verified through
:func:`benchsuite.data.data_file`:

* ``nas_bench_201/test_accuracy_200ep.csv``: 15,625 rows in the benchmark's index order
  with the test accuracy (percent, mean over seeds, 200 epochs) on CIFAR-10, CIFAR-100 and
  ImageNet16-120, the architecture string and the published ``UniqueString``.
* ``nas_bench_201/per_seed_valid_runtime.pkl``: a pickle of plain numpy arrays, per dataset
  (``cifar10``, ``cifar100``, ``imagenet``) ``loss`` = 100 - validation accuracy of one
  (architecture, seed) run, and that architecture's ``runtime`` (training seconds) and
  ``size_in_mb`` (parameters / 1e6) repeated on each of its seed entries. It is read with a
  restricted unpickler that can build numpy arrays, dicts and lists and nothing else.

Grouping the per-seed entries into architectures
------------------------------------------------
The 39,419 entries hold 15,625 architectures with 2 or 3 seeds each, consecutive, in the
CSV's order, and nothing but equal ``runtime`` and ``size_in_mb`` marks which entries
belong together. :func:`group_entries` cuts the sequence wherever either value changes
and requires every run to have 2 or 3 entries; a longer run would mean two neighbouring
architectures with identical runtime and size, whose boundary could not be placed, and is
refused with a :class:`~benchsuite.errors.DataError`, as is a run count other than the
CSV's row count or boundaries that differ between the three datasets. In the shipped file
every run has 2 or 3 entries (7,456 and 8,169 architectures), the three datasets have
identical boundaries, and no two neighbouring architectures share a runtime, so the
grouping is forced; ``tables/nas_bench_201/check_param_counts.py`` shows that it is also
right (parameter counts, validation-vs-test agreement; ``PARAM_COUNTS.md``).

The seed columns are replicates, not seed identities: within an architecture the entries
are not in a consistent seed order (the same run appears in different columns for
different architectures), so column k of two architectures is not the same seed.

``size_in_mb`` is kept as published. For 150 of the 15,625 architectures it is the
parameter count of another architecture of the same published isomorphism class, whose
training run NAS-Bench-201 reused; ``size_in_mb_model`` gives the exact count of the
network the architecture string builds (:func:`benchsuite.architectures.nb201.param_count`),
which equals ``size_in_mb`` on the other 15,475 (see ``PARAM_COUNTS.md``).
"""
from __future__ import annotations

import csv
import functools
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from .. import data
from ..errors import DataError
from . import nb201

CSV_FILE = "nas_bench_201/test_accuracy_200ep.csv"
PICKLE_FILE = "nas_bench_201/per_seed_valid_runtime.pkl"
DATASETS: tuple[str, ...] = ("cifar10", "cifar100", "imagenet16")
PICKLE_KEY = {"cifar10": "cifar10", "cifar100": "cifar100", "imagenet16": "imagenet"}
CSV_COLUMN = {
    "cifar10": "CIFAR10TestAccuracy200Epochs",
    "cifar100": "CIFAR100TestAccuracy200Epochs",
    "imagenet16": "ImageNetTestAccuracy200Epochs",
}
CSV_HEADER = (*CSV_COLUMN.values(), "ArchitectureString", "UniqueString")
NUM_CLASSES = {"cifar10": 10, "cifar100": 100, "imagenet16": 120}  # ImageNet16-120
MAX_SEEDS = 3
MIN_SEEDS = 2


# -- restricted unpickling ------------------------------------------------------------------
def _reconstruct_ndarray(cls: Any, shape: Any, dtype: Any) -> np.ndarray:
    if cls is not np.ndarray:
        raise pickle.UnpicklingError(f"refusing to build {cls!r}")
    return np.ndarray.__new__(np.ndarray, shape, dtype)


class _ArrayOnlyUnpickler(pickle.Unpickler):
    """Builds numpy arrays, dicts and lists; refuses every other global, so no code runs."""

    _ALLOWED: dict[tuple[str, str], Any] = {
        ("numpy.core.multiarray", "_reconstruct"): _reconstruct_ndarray,  # numpy < 2 pickles
        ("numpy._core.multiarray", "_reconstruct"): _reconstruct_ndarray,
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("builtins", "dict"): dict,
        ("builtins", "list"): list,
    }

    def find_class(self, module: str, name: str) -> Any:
        try:
            return self._ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"refusing to load global {module}.{name}") from None


def load_pickle_arrays(path: str | os.PathLike) -> Any:
    """Unpickle a file of numpy arrays in dicts/lists only; anything else is a DataError."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            return _ArrayOnlyUnpickler(fh).load()
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc}") from None
    except Exception as exc:  # UnpicklingError, EOFError, ValueError, ... from a damaged file
        raise DataError(f"{path} is not a readable pickle of numpy arrays ({type(exc).__name__}: {exc}); "
                        f"delete it and fetch it again") from None


# -- grouping ---------------------------------------------------------------------------------
def group_entries(runtime: np.ndarray, size: np.ndarray, where: str = "pickle") -> np.ndarray:
    """Start index of each architecture's run of consecutive entries with equal runtime and size."""
    runtime, size = np.asarray(runtime), np.asarray(size)
    n = runtime.shape[0]
    if n == 0:
        raise DataError(f"{where}: no entries")
    change = np.ones(n, dtype=bool)
    change[1:] = (runtime[1:] != runtime[:-1]) | (size[1:] != size[:-1])
    starts = np.flatnonzero(change)
    lens = np.diff(np.append(starts, n))
    bad = np.flatnonzero((lens < MIN_SEEDS) | (lens > MAX_SEEDS))
    if bad.size:
        k = int(bad[0])
        raise DataError(
            f"{where}: entries {int(starts[k])}..{int(starts[k] + lens[k] - 1)} form a run of {int(lens[k])} "
            f"with equal runtime and size, but an architecture has {MIN_SEEDS} or {MAX_SEEDS} seeds; the grouping is ambiguous "
            f"({len(bad)} such runs); the file is not the one this reader was written for")
    return starts


def _check_array(x: Any, name: str) -> np.ndarray:
    if not isinstance(x, np.ndarray) or x.ndim != 1 or x.dtype.kind not in "fiu":
        raise DataError(f"{PICKLE_FILE}: {name} is not a 1-D numeric array")
    x = x.astype(np.float64)
    if not np.all(np.isfinite(x)):
        raise DataError(f"{PICKLE_FILE}: {name} has non-finite values")
    return x


# -- CSV ----------------------------------------------------------------------------------------
def read_csv(path: str | os.PathLike) -> dict[str, Any]:
    """The CSV's columns: test accuracies (percent) per dataset, arch strings (and parsed configs), unique strings."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"cannot read {path}: {exc}") from None
    if not rows or tuple(rows[0]) != CSV_HEADER:
        raise DataError(f"{path}: header {rows[0] if rows else '(empty)'} is not {list(CSV_HEADER)}")
    body = rows[1:]
    if len(body) != nb201.N_CELLS:
        raise DataError(f"{path}: {len(body)} rows, expected {nb201.N_CELLS}")
    acc = np.empty((len(CSV_COLUMN), len(body)))
    arch, uniq, configs = [], [], []
    for r, row in enumerate(body, start=2):
        if len(row) != len(CSV_HEADER):
            raise DataError(f"{path}: line {r} has {len(row)} fields, expected {len(CSV_HEADER)}")
        try:
            acc[:, r - 2] = [float(v) for v in row[:3]]
        except ValueError:
            raise DataError(f"{path}: line {r} has a non-numeric accuracy {row[:3]}") from None
        try:
            configs.append(nb201.from_arch_string(row[3]))
        except Exception as exc:  # InvalidConfigError: the file, not the user, is wrong here
            raise DataError(f"{path}: line {r}: {exc}") from None
        arch.append(row[3])
        uniq.append(row[4])
    if not (np.all(np.isfinite(acc)) and acc.min() >= 0 and acc.max() <= 100):
        raise DataError(f"{path}: accuracies outside [0, 100]")
    if len(set(arch)) != nb201.N_CELLS:
        raise DataError(f"{path}: {nb201.N_CELLS - len(set(arch))} architecture strings repeat; "
                        f"the file must list every cell once")
    return {"arch_strings": arch, "unique_strings": uniq, "configs": configs,
            "test_accuracy": {ds: acc[k] for k, ds in enumerate(CSV_COLUMN)}}


# -- the reader ---------------------------------------------------------------------------------
def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@functools.lru_cache(maxsize=4)
def _read(csv_path: str, pkl_path: str, _stamp: tuple) -> dict[str, Any]:
    table = read_csv(csv_path)
    n_arch = len(table["arch_strings"])
    raw = load_pickle_arrays(pkl_path)
    if not isinstance(raw, dict):
        raise DataError(f"{PICKLE_FILE}: top level is a {type(raw).__name__}, expected a dict")
    out: dict[str, Any] = {"arch_strings": tuple(table["arch_strings"]),
                           "unique_strings": tuple(table["unique_strings"]), "n_arch": n_arch}
    starts_ref: np.ndarray | None = None
    for ds in DATASETS:
        entry = raw.get(PICKLE_KEY[ds])
        if not isinstance(entry, dict) or not {"loss", "runtime", "size_in_mb"} <= set(entry):
            raise DataError(f"{PICKLE_FILE}: missing {PICKLE_KEY[ds]!r} with loss, runtime and size_in_mb")
        loss = _check_array(entry["loss"], f"{PICKLE_KEY[ds]}.loss")
        runtime = _check_array(entry["runtime"], f"{PICKLE_KEY[ds]}.runtime")
        size = _check_array(entry["size_in_mb"], f"{PICKLE_KEY[ds]}.size_in_mb")
        if not (loss.shape == runtime.shape == size.shape):
            raise DataError(f"{PICKLE_FILE}: {PICKLE_KEY[ds]} arrays have different lengths")
        if loss.min() < 0 or loss.max() > 100 or runtime.min() <= 0 or size.min() <= 0:
            raise DataError(f"{PICKLE_FILE}: {PICKLE_KEY[ds]} has losses outside [0, 100] or non-positive costs")
        starts = group_entries(runtime, size, where=f"{PICKLE_FILE} ({PICKLE_KEY[ds]})")
        if starts.size != n_arch:
            raise DataError(f"{PICKLE_FILE} ({PICKLE_KEY[ds]}): {starts.size} architectures after grouping, "
                            f"the CSV has {n_arch}")
        if starts_ref is None:
            starts_ref = starts
        elif not np.array_equal(starts, starts_ref):
            raise DataError(f"{PICKLE_FILE}: {PICKLE_KEY[ds]} groups its seeds differently from cifar10")
        n_seeds = np.diff(np.append(starts, loss.size))
        val = np.full((n_arch, MAX_SEEDS), np.nan)
        for k in range(MAX_SEEDS):
            has = n_seeds > k
            val[has, k] = loss[starts[has] + k] / 100.0
        counts = nb201.param_counts_table(table["configs"], NUM_CLASSES[ds])
        acc = table["test_accuracy"][ds]
        out[ds] = {
            "val_loss": _frozen(val),
            "n_seeds": _frozen(n_seeds.astype(np.int64)),
            "runtime": _frozen(runtime[starts].copy()),
            "size_in_mb": _frozen(size[starts].copy()),
            "size_in_mb_model": _frozen(counts / 1e6),
            "n_params_model": _frozen(counts),
            "test_accuracy": _frozen(acc.copy()),
            "test_error": _frozen(1.0 - acc / 100.0),
            "num_classes": NUM_CLASSES[ds],
            "pickle_key": PICKLE_KEY[ds],
        }
    return out


def read_source(data_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """Read and check both NAS-Bench-201 source files; one entry per architecture, CSV order.

    Returns a dict with ``arch_strings`` and ``unique_strings`` (15,625 each, index order),
    ``n_arch``, ``sha256`` (file name -> hash), and per dataset in :data:`DATASETS` a dict of
    read-only arrays: ``val_loss`` (n_arch, 3) validation error as a fraction, NaN where an
    architecture has only 2 seeds (columns are replicates in file order, not seed
    identities); ``n_seeds``; ``runtime`` (seconds for 200 epochs);
    ``size_in_mb`` (as published); ``size_in_mb_model`` and ``n_params_model`` (the exact
    count of the network the string builds); ``test_accuracy`` (percent, from the CSV) and
    ``test_error`` (fraction); plus ``num_classes`` and ``pickle_key``. Files that are missing, have the wrong
    checksum or do not parse raise :class:`~benchsuite.errors.DataError`.
    """
    csv_path = data.data_file(CSV_FILE, data_dir)
    pkl_path = data.data_file(PICKLE_FILE, data_dir)
    stamp = tuple((p.stat().st_size, p.stat().st_mtime_ns) for p in (csv_path, pkl_path))
    cached = _read(str(csv_path.resolve()), str(pkl_path.resolve()), stamp)
    out = dict(cached)
    out["arch_strings"] = list(cached["arch_strings"])  # copies: the cached tuples stay intact
    out["unique_strings"] = list(cached["unique_strings"])
    out["sha256"] = {CSV_FILE: data.sha256_of(CSV_FILE, data_dir), PICKLE_FILE: data.sha256_of(PICKLE_FILE, data_dir)}
    for ds in DATASETS:
        out[ds] = dict(cached[ds])
    return out


def mean_val_loss(val_loss: np.ndarray) -> np.ndarray:
    """Mean over the available seeds of each architecture (ignoring the NaN padding)."""
    v = np.asarray(val_loss, dtype=float)
    return np.nansum(v, axis=1) / np.maximum(np.sum(~np.isnan(v), axis=1), 1)


__all__ = ["read_source", "group_entries", "load_pickle_arrays", "read_csv", "mean_val_loss", "DATASETS",
           "NUM_CLASSES", "CSV_FILE", "PICKLE_FILE"]
