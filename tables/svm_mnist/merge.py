"""Merge the SVM-on-MNIST table shards into one gzip-compressed HDF5 file with provenance."""
from __future__ import annotations

import datetime as _dt
import platform
import socket
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from benchsuite.benchmarks import svm_mnist as sm  # noqa: E402

SHARD_DIR = HERE / "shards"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def write_table(out: Path, log_c: np.ndarray, log_gamma: np.ndarray, fractions: np.ndarray,
                arrays: dict[str, np.ndarray], test_error: np.ndarray, n_train: np.ndarray,
                reps: np.ndarray, attrs: dict) -> Path:
    """Write the SVM table in the suite's generic table layout (benchsuite.tabular), atomically."""
    from benchsuite.tabular import TaskArrays
    from benchsuite.tabular import write_table as write_generic

    shape = (len(log_c), len(log_gamma), len(fractions))
    task = TaskArrays(
        axes={"log_C": np.asarray(log_c, float), "log_gamma": np.asarray(log_gamma, float)},
        fidelity_name="s", fidelities=np.asarray(fractions, float),
        objectives={k: arrays[k] for k in ("loss", "cost", "wall", "n_support")},
        n_seeds=np.broadcast_to(np.asarray(reps, dtype=np.int8), shape).copy(),
        loss="loss", cost="cost", test_loss="test_error",
        extras={"test_error": test_error, "n_train": np.asarray(n_train, dtype=np.int64)},
        descriptions={"log_C": "natural log of the SVM's C", "log_gamma": "natural log of the RBF kernel's gamma",
                      "s": "fraction of the training pool",
                      "seed": "index of the independently drawn training subset",
                      "loss": "validation error (fraction misclassified)",
                      "cost": "CPU seconds (process time) of fit + validation predict",
                      "wall": "wall-clock seconds of fit + validation predict",
                      "n_support": "number of support vectors",
                      "test_error": "test error of the model trained at s = 1",
                      "n_train": "training images at each s"})
    return write_generic(out, {"": task}, attrs)


def provenance(splits: sm.MnistSplits, pool_size: int, n_val: int, n_test: int) -> dict:
    """Attributes every table carries: data hashes, split sizes and seeds, versions, machine."""
    import h5py
    import scipy
    import sklearn

    a = {"definition": ("sklearn SVC(kernel='rbf', C=exp(log_C), gamma=exp(log_gamma), cache_size="
                        f"{sm.SVC_CACHE_MB}); pixels/255; subsets stratified; code: "
                        "benchsuite/benchmarks/svm_mnist.py fit_evaluate")}
    for name, sha in splits.sha256.items():
        a[f"sha256:{name}"] = sha
    a["pool_size"], a["n_val"], a["n_test"] = pool_size, n_val, n_test
    a["pool_seed"], a["val_seed"], a["test_seed"] = sm.POOL_SEED, sm.VAL_SEED, sm.TEST_SEED
    a["versions"] = (f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
                     f"scikit-learn {sklearn.__version__}, h5py {h5py.__version__}")
    a["build_machine"] = f"{platform.machine()} {platform.system()} {platform.release()}; CPU {_cpu_model()}"
    a["merged"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds") + f" on {socket.gethostname()}"
    return a


def merge(n_shards: int, out: Path, allow_partial: bool = False, shard_dir: Path = SHARD_DIR) -> Path:
    """Assemble every shard file into ``out``; missing shards are an error unless ``allow_partial``."""
    ng, nf, nr = sm.GRID_LEVELS.size, len(sm.FRACTIONS), sm.N_REPLICATES
    shape = (ng, ng, nf, nr)
    arr = {k: np.full(shape, np.nan) for k in ("loss", "cost", "wall", "n_support")}
    test = np.full((ng, ng), np.nan)
    hosts, dates, missing = set(), [], []
    for k in range(n_shards):
        path = shard_dir / f"shard_{k:03d}_of_{n_shards:03d}.npz"
        if not path.exists():
            missing.append(k)
            continue
        with np.load(path) as z:
            ic, ig = np.divmod(z["points"], ng)
            for key in arr:
                arr[key][ic, ig] = z[key]
            test[ic, ig] = z["test_error"]
            hosts.add(str(z["host"]))
            dates.append(str(z["date"]))
    if missing and not allow_partial:
        raise SystemExit(f"{len(missing)} of {n_shards} shards missing ({missing[:10]}...); "
                         "run the svm_table_shards rule first, or pass --allow-partial for a test table")
    # s = 1 was fitted once: its value stands for every replicate slot (see attribute)
    for key in arr:
        arr[key][:, :, -1, 1:] = arr[key][:, :, -1, :1]
    attrs = provenance(sm.load_splits(), sm.POOL_SIZE, sm.N_VAL, sm.N_TEST)
    attrs.update({
        "benchmark": "svm_mnist (fabolas.txt Sec. 4.1, Figure 1)",
        "complete": not missing,
        "missing_shards": np.array(missing, dtype=int),
        "n_shards": n_shards,
        "replicates_at_s1": "s = 1 is fitted once; replicate slots 1 and 2 repeat slot 0",
        "subset_seeds": np.array([[sm.table_subset_seed(i, r) for r in range(nr)] for i in range(nf)],
                                 dtype=np.uint64),
        "build_hosts": ", ".join(sorted(hosts)),
        "build_dates": f"{min(dates) if dates else '-'} .. {max(dates) if dates else '-'} (UTC, shard finish times)",
        "recipe": "snakemake -s tables/svm_mnist.smk --cores 2 svm_table",
    })
    return write_table(out, sm.GRID_LEVELS, sm.GRID_LEVELS, np.array(sm.FRACTIONS), arr, test,
                       np.array([sm.subset_size(s) for s in sm.FRACTIONS]),
                       np.array([nr if s < 1 else 1 for s in sm.FRACTIONS]), attrs)


def build_small(out: Path, data_dir: str | None, pool_size: int, n_val: int, n_test: int,
                levels: np.ndarray, fractions: tuple[float, ...], n_reps: int) -> Path:
    """A small table with the same schema and code on a reduced split/grid (for tests and demos)."""
    splits = sm.load_splits(data_dir, pool_size, n_val, n_test)
    ng, nf = len(levels), len(fractions)
    arr = {k: np.full((ng, ng, nf, n_reps), np.nan) for k in ("loss", "cost", "wall", "n_support")}
    test = np.full((ng, ng), np.nan)
    for ic, lc in enumerate(levels):
        for ig, lg in enumerate(levels):
            for si, s in enumerate(fractions):
                for r in range(n_reps if s < 1 else 1):
                    idx = None
                    if s < 1:
                        rng = np.random.default_rng(sm.table_subset_seed(si, r))
                        idx = sm.stratified_sample(splits.y_pool, sm.subset_size(s, pool_size), rng)
                    o = sm.fit_evaluate(splits, float(lc), float(lg), idx, with_test=(s == 1))
                    arr["loss"][ic, ig, si, r], arr["cost"][ic, ig, si, r] = o.val_error, o.cpu_s
                    arr["wall"][ic, ig, si, r], arr["n_support"][ic, ig, si, r] = o.wall_s, o.n_support
                    if s == 1:
                        test[ic, ig] = o.test_error
            for key in arr:
                if fractions[-1] == 1:
                    arr[key][ic, ig, -1, 1:] = arr[key][ic, ig, -1, :1]
    attrs = provenance(splits, pool_size, n_val, n_test)
    attrs.update({"benchmark": "svm_mnist (small table)", "complete": True, "n_shards": 0})
    return write_table(out, np.asarray(levels), np.asarray(levels), np.asarray(fractions), arr, test,
                       np.array([sm.subset_size(s, pool_size) for s in fractions]),
                       np.array([n_reps if s < 1 else 1 for s in fractions]), attrs)
