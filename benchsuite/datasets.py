"""Image data sets for the live networks: CIFAR-10 from the official batches or from JPEGs.

Two sources of the same 60,000 images (see ``../shared/data/README.md``):

* ``"official"``: the official python batches ``cifar10/cifar-10-python.tar.gz`` (what a
  user with internet gets; :func:`benchsuite.data.data_file` downloads and verifies it).
  The pickles are read with a restricted unpickler that can build numpy arrays and nothing
  else, and are never extracted to disk.
* ``"jpeg"``: ``cifar10_jpeg/cifar10_jpgs.tar.gz``, the same images re-encoded as JPEG
  (lossy) in ``train/CLASS/NNNN.jpg`` and ``test/CLASS/NNNN.jpg``. The official order is
  lost; images are ordered by class (the official class order :data:`CIFAR10_CLASSES`)
  and then by file name, so the order is deterministic but not the official one.

``"auto"`` takes the official batches when that file is in the data directory, else the
JPEG archive when present, else downloads the official batches.

Decoding the JPEGs takes a while, so the decoded arrays are cached as a compressed
``.npz`` under :func:`cache_dir` (``$BENCHSUITE_CACHE``, else ``~/.cache/benchsuite/cache``),
keyed by the archive's sha256 and written atomically; the arrays are also kept in memory
per process. The cache stores the checksum of its own contents (:func:`write_checked_cache`);
a cache file that fails its checks (truncated, edited, wrong shapes or labels) is ignored and
rebuilt.

Splits of the 50,000 training images (:func:`split_indices`, indices into the training
order of the source):

* ``"nb201"``: NAS-Bench-201's ``cifar10-valid`` protocol (Dong & Yang, ICLR 2020, Sec. 2.2:
  the 50K training images are split into two groups of 25K covering the 10 classes; the first
  trains, the second validates). The authors' exact list is a file of 25,000 + 25,000 indices
  (``configs/nas-benchmark/cifar-split.txt`` in D-X-Y/AutoDL-Projects) that no seed
  reproduces, so we use a class-stratified half split (2,500 + 2,500 images of every class)
  drawn with the fixed seed :data:`NB201_SPLIT_SEED`. Same sizes and balance as the
  benchmark's, different membership: live NAS-Bench-201 errors are comparable with the
  table's in distribution, not image for image.
* ``"combo"``: COMBO's NAS experiment (combo.txt, Supp. 4.4.2): ``indices = arange(50000)``,
  ``numpy.random.RandomState(0).shuffle(indices)``, the first 30,000 train and the last
  10,000 validate (the 10,000 in between are unused). This matches COMBO's split only on the
  official batches, because the JPEG archive's order is not the official one.
* ``"nasbot"``: NASBOT's CIFAR-10 experiment (nasbot.txt Sec. 5: "40K for training and 10K
  each for validation and testing"): a permutation of the 50,000 training images drawn from
  the fixed seed :data:`NASBOT_SPLIT_SEED`, the first 40,000 train and the other 10,000
  validate (the paper gives no seed or list; for other ``n`` the same 80 % / 20 %).

The test split is always the official 10,000 test images. :class:`ArraySplits` holds the
arrays (uint8 NHWC images stay uint8; the training harness normalises them on its device).
"""
from __future__ import annotations

import hashlib
import io
import logging
import os
import pickle
import re
import tarfile
import threading
import zipfile
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from . import data
from .errors import DataError, InvalidSettingError
from .results import atomic_write_with
from .settings import Setting

log = logging.getLogger(__name__)

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
OFFICIAL_FILE = "cifar10/cifar-10-python.tar.gz"
JPEG_FILE = "cifar10_jpeg/cifar10_jpgs.tar.gz"
SOURCES = ("auto", "official", "jpeg")
N_TRAIN, N_TEST = 50_000, 10_000
IMAGE_SHAPE = (32, 32, 3)

CACHE_ENV = "BENCHSUITE_CACHE"
CACHE_VERSION = 1  # bump when the decoded layout or the JPEG ordering changes

SPLIT_SCHEMES = ("nb201", "combo", "nasbot")
NB201_SPLIT_SEED = 20200120  # fixed, arbitrary (recorded here and in ArraySplits.scheme); see module docstring
COMBO_SPLIT_SEED = 0  # combo.txt Supp. 4.4.2: numpy.random.RandomState(0).shuffle(indices)
COMBO_N_TRAIN, COMBO_N_VAL = 30_000, 10_000
NASBOT_SPLIT_SEED = 20180502  # fixed, arbitrary (recorded in ArraySplits.meta); nasbot.txt gives no seed
NASBOT_N_TRAIN = 40_000  # nasbot.txt Sec. 5; the other 10,000 validate


@dataclass(frozen=True, eq=False)  # arrays do not compare with ==
class ImageData:
    """A decoded image data set: uint8 NHWC images, int64 labels, and where they came from."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    source: str
    sha256: str
    classes: tuple[str, ...] = CIFAR10_CLASSES


# -- the cache ---------------------------------------------------------------------------
_MEMO: dict[tuple[str, str, str], ImageData] = {}
_LOCK = threading.Lock()


def cache_dir() -> Path:
    """Directory of decoded-data caches: ``$BENCHSUITE_CACHE`` or ``~/.cache/benchsuite/cache``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "benchsuite" / "cache"


def _cache_path(source: str, sha256: str) -> Path:
    return cache_dir() / f"cifar10-{source}-{sha256}-v{CACHE_VERSION}.npz"


def _check_arrays(x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray, y_te: np.ndarray,
                  expect: tuple[int, int] | None) -> str | None:
    """Why these arrays are not a complete CIFAR-10 (None when they are)."""
    for name, x, y in (("train", x_tr, y_tr), ("test", x_te, y_te)):
        if x.dtype != np.uint8 or x.ndim != 4 or x.shape[1:] != IMAGE_SHAPE:
            return f"{name} images have shape {x.shape} and dtype {x.dtype}, expected (n, 32, 32, 3) uint8"
        if y.shape != (x.shape[0],):
            return f"{x.shape[0]} {name} images but labels of shape {y.shape}"
        if y.size and (y.min() < 0 or y.max() >= len(CIFAR10_CLASSES)):
            return f"{name} labels outside 0..9"
    if expect is not None and (x_tr.shape[0], x_te.shape[0]) != expect:
        return f"found {x_tr.shape[0]} training and {x_te.shape[0]} test images, expected {expect[0]} and {expect[1]}"
    return None


_CACHE_KEYS = ("x_train", "y_train", "x_test", "y_test")


def _read_cache(path: Path, meta: str, expect: tuple[int, int] | None) -> tuple[np.ndarray, ...] | None:
    arrays, why = read_checked_cache(path, meta)
    if arrays is None:
        if why:
            log.warning("ignoring cache file %s (%s); decoding again", path, why)
        return None
    try:
        out = tuple(arrays[k] for k in _CACHE_KEYS)
    except KeyError as exc:
        log.warning("ignoring cache file %s (array %s missing); decoding again", path, exc)
        return None
    problem = _check_arrays(*out, expect)
    if problem:
        log.warning("ignoring cache file %s (%s); decoding again", path, problem)
        return None
    return out


def arrays_checksum(meta: str, arrays: dict[str, np.ndarray]) -> str:
    """sha256 of ``meta`` and every array's name, dtype, shape and bytes (a derived cache's own checksum)."""
    h = hashlib.sha256(meta.encode())
    for name in sorted(arrays):
        a = arrays[name]
        h.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def write_checked_cache(path: Path, meta: str, arrays: dict[str, np.ndarray], compressed: bool = True) -> None:
    """Write a derived cache with what it was made from (``meta``) and the checksum of its own contents.

    Issue 26 item 3: a cache checked for shapes and dtypes only was trained on after its pixels were
    inverted; :func:`read_checked_cache` now recomputes the checksum before anything uses the arrays.
    """
    write_cache_file(path, {"__meta__": np.array(meta), "__sha256__": np.array(arrays_checksum(meta, arrays)),
                            **arrays}, compressed=compressed)


def read_checked_cache(path: Path, meta: str) -> tuple[dict[str, np.ndarray] | None, str]:
    """The arrays of a cache :func:`write_checked_cache` wrote for ``meta``, and ``""``; or ``None`` and why
    not (``""`` when there is no file): unreadable, written for something else, or contents that fail their
    checksum. The caller says what it does about it (decode again, refit) in its own log."""
    if not path.is_file():
        return None, ""
    why = "not a readable .npz archive"
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        why = "no key or checksum stored"
        stored_meta, stored_sum = str(arrays.pop("__meta__")), str(arrays.pop("__sha256__"))
        why = "written for another table, source or settings"
        if stored_meta == meta:
            why = "checksum mismatch: its contents were changed"
            if arrays_checksum(stored_meta, arrays) == stored_sum:
                return arrays, ""
    except (OSError, ValueError, KeyError, IndexError, TypeError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        why += f": {type(exc).__name__}"
    return None, why


def write_cache_file(path: Path, arrays: dict[str, np.ndarray], compressed: bool = True) -> None:
    """Write arrays to an ``.npz`` cache file atomically; a cache that cannot be written only costs time later."""
    save = np.savez_compressed if compressed else np.savez
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_with(path, lambda fh: save(fh, **arrays))
    except OSError as exc:
        log.warning("could not write the cache file %s (%s); set %s to a writable directory", path, exc, CACHE_ENV)


# -- readers -------------------------------------------------------------------------------
def _corrupt(path: Path, exc: BaseException | str) -> DataError:
    what = str(exc).strip().replace("\n", " ") or type(exc).__name__
    return DataError(
        f"cannot read the CIFAR-10 archive {path}: {what}. The file is truncated or corrupt: delete it so that "
        f"it is downloaded again (or copy a good one there), or set {data.ENV_VAR} to a directory with a good copy."
    )


_JPEG_NAME = re.compile(r"^(?:\./)?(?:[^/]+/)*?(train|test)/([^/]+)/([^/]+\.jpe?g)$", re.IGNORECASE)


def read_cifar10_jpeg(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Decode a tar of ``train|test/CLASS/*.jpg`` into (x_train, y_train, x_test, y_test), sorted by class and name."""
    from PIL import Image

    path = Path(path)
    class_index = {c: i for i, c in enumerate(CIFAR10_CLASSES)}
    found: dict[str, list[tuple[int, str, np.ndarray]]] = {"train": [], "test": []}
    try:
        # read in archive order (a .tar.gz only streams well forwards), sort afterwards
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                m = _JPEG_NAME.match(member.name)
                if not member.isfile() or m is None:
                    continue
                split, cls, fname = m.group(1).lower(), m.group(2), m.group(3)
                if cls not in class_index:
                    raise DataError(f"CIFAR-10 archive {path}: unknown class folder {cls!r} in {member.name!r}; "
                                    f"expected one of {list(CIFAR10_CLASSES)}")
                fh = tar.extractfile(member)
                if fh is None:
                    continue
                with Image.open(io.BytesIO(fh.read())) as im:
                    img = np.asarray(im.convert("RGB"), dtype=np.uint8)
                if img.shape != IMAGE_SHAPE:
                    raise DataError(f"CIFAR-10 archive {path}: {member.name} is {img.shape[1]}x{img.shape[0]}, "
                                    "expected 32x32")
                found[split].append((class_index[cls], fname, img))
    except DataError:
        raise
    except (tarfile.TarError, OSError, EOFError, zlib.error, ValueError) as exc:
        raise _corrupt(path, exc) from None
    out = []
    for split in ("train", "test"):
        items = sorted(found[split], key=lambda t: (t[0], t[1]))
        x = np.stack([t[2] for t in items]) if items else np.zeros((0, *IMAGE_SHAPE), np.uint8)
        out += [x, np.array([t[0] for t in items], dtype=np.int64)]
    return out[0], out[1], out[2], out[3]


def _safe_reconstruct(cls, shape, dtype):  # noqa: ANN001, ANN202 - unpickler hook
    if cls is not np.ndarray:
        raise pickle.UnpicklingError(f"refusing to build {cls!r}")
    return np.ndarray.__new__(np.ndarray, shape, dtype)


def _safe_encode(obj, encoding="utf-8"):  # noqa: ANN001, ANN202 - protocol-2 pickles encode bytes this way
    if not isinstance(obj, str) or encoding.lower().replace("-", "") != "latin1":
        raise pickle.UnpicklingError("refusing _codecs.encode with other than latin1 text")
    return obj.encode("latin1")


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles dicts, lists and numpy arrays; refuses every other global (no code runs)."""

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"): _safe_reconstruct,
        ("numpy._core.multiarray", "_reconstruct"): _safe_reconstruct,
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("_codecs", "encode"): _safe_encode,
    }

    def find_class(self, module: str, name: str):  # noqa: ANN201
        try:
            return self._ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"refusing to load global {module}.{name}") from None


def _load_batch(raw: bytes) -> tuple[np.ndarray, np.ndarray]:
    # latin1 turns the Python 2 str keys and array bytes into what numpy expects
    batch = _ArrayUnpickler(io.BytesIO(raw), encoding="latin1").load()
    if not isinstance(batch, dict):
        raise ValueError("a batch is not a dict")
    batch = {(k.decode("latin1") if isinstance(k, bytes) else k): v for k, v in batch.items()}
    x = np.asarray(batch["data"], dtype=np.uint8)
    y = np.asarray(batch["labels"], dtype=np.int64)
    if x.ndim != 2 or x.shape[1] != 3 * 32 * 32:
        raise ValueError(f"batch data has shape {x.shape}, expected (n, 3072)")
    # rows are 1024 red, 1024 green, 1024 blue values, each a row-major 32x32 plane
    return np.ascontiguousarray(x.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)), y


def read_cifar10_python(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Read the official ``cifar-10-python.tar.gz`` into (x_train, y_train, x_test, y_test), official order."""
    path = Path(path)
    want = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    raw: dict[str, bytes] = {}
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                base = member.name.rsplit("/", 1)[-1]
                if member.isfile() and base in want and base not in raw:
                    fh = tar.extractfile(member)
                    if fh is not None:
                        raw[base] = fh.read()
        missing = [w for w in want if w not in raw]
        if missing:
            raise ValueError(f"batches {missing} are missing from the archive")
        parts = [_load_batch(raw[w]) for w in want]
    except (tarfile.TarError, OSError, EOFError, zlib.error, ValueError, KeyError, TypeError, AttributeError,
            IndexError, pickle.UnpicklingError) as exc:
        raise _corrupt(path, exc) from None
    x_tr = np.concatenate([p[0] for p in parts[:5]])
    y_tr = np.concatenate([p[1] for p in parts[:5]])
    return x_tr, y_tr, parts[5][0], parts[5][1]


def load_cifar10_file(path: str | os.PathLike, source: str, sha256: str | None = None,
                      expect: tuple[int, int] | None = None) -> ImageData:
    """Decode one CIFAR-10 archive of ``source`` "jpeg" or "official", through the memory and disk caches.

    ``sha256`` keys the caches (computed when not given); ``expect`` = (n_train, n_test) the
    counts the archive must hold. Raises :class:`DataError` for a truncated or corrupt archive.
    """
    if source not in ("jpeg", "official"):
        raise InvalidSettingError(f"CIFAR-10 archive source {source!r} unknown; use 'jpeg' or 'official'")
    path = Path(path)
    sha = sha256 or data.sha256_file(path)
    key = (str(path.resolve()), sha, source)
    with _LOCK:
        hit = _MEMO.get(key)
        if hit is not None:
            return hit
        cpath = _cache_path(source, sha)
        meta = cpath.name  # what the cache was made from: the source, the archive's sha256, the cache version
        arrays = _read_cache(cpath, meta, expect)
        if arrays is None:
            reader = read_cifar10_jpeg if source == "jpeg" else read_cifar10_python
            arrays = reader(path)
            problem = _check_arrays(*arrays, expect)
            if problem:
                raise _corrupt(path, problem)
            write_checked_cache(cpath, meta, dict(zip(_CACHE_KEYS, arrays)))
        for a in arrays:
            a.setflags(write=False)  # shared between callers through the in-process cache
        out = ImageData(*arrays, source=source, sha256=sha)
        _MEMO[key] = out
        return out


def load_cifar10(data_dir: str | os.PathLike | None = None, source: str = "auto") -> ImageData:
    """CIFAR-10 (50,000 train + 10,000 test, uint8 NHWC) from the data directory; see the module docstring."""
    if source not in SOURCES:
        raise InvalidSettingError(f"CIFAR-10 source {source!r} unknown; use one of {list(SOURCES)}")
    if source == "auto":
        base = data.data_dir(data_dir)
        if (base / OFFICIAL_FILE).exists() or not (base / JPEG_FILE).exists():
            source = "official"
        else:
            source = "jpeg"
    name = OFFICIAL_FILE if source == "official" else JPEG_FILE
    path = data.data_file(name, data_dir)
    return load_cifar10_file(path, source, data.sha256_of(name, data_dir), expect=(N_TRAIN, N_TEST))


# -- splits ---------------------------------------------------------------------------------
def stratified_choice(labels: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted indices of ``n`` items drawn without replacement with the labels' class proportions.

    Each class gets ``floor(n * share)``; the remaining items go to the classes with the
    largest remainders (ties broken by ``rng``), so every class with a non-zero quota appears.
    """
    labels = np.asarray(labels)
    if not 0 <= n <= labels.size:
        raise ValueError(f"cannot draw {n} of {labels.size} items")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    classes, counts = np.unique(labels, return_counts=True)
    quota = n * counts / labels.size
    take = np.floor(quota).astype(int)
    rest = n - int(take.sum())
    if rest:
        order = np.lexsort((rng.random(classes.size), -(quota - take)))
        take[order[:rest]] += 1
    picked = [rng.choice(np.flatnonzero(labels == c), size=k, replace=False) for c, k in zip(classes, take) if k]
    return np.sort(np.concatenate(picked)).astype(np.int64)


def split_indices(scheme: str, n: int = N_TRAIN, labels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (train, validation) indices into ``n`` training images for ``scheme`` "nb201", "combo" or "nasbot".

    "nb201" is class-stratified and needs the ``labels`` of the ``n`` images; "combo" uses
    only ``n`` (30,000 / 10,000 of 50,000; for other ``n`` the same 60 % / last 20 %).
    """
    if scheme == "combo":
        idx = np.arange(n)
        # COMBO's own recipe, so the legacy RandomState on purpose (a private instance, not global state)
        np.random.RandomState(COMBO_SPLIT_SEED).shuffle(idx)
        n_tr, n_va = (COMBO_N_TRAIN, COMBO_N_VAL) if n == N_TRAIN else (round(0.6 * n), round(0.2 * n))
        return np.sort(idx[:n_tr]).astype(np.int64), np.sort(idx[n - n_va:]).astype(np.int64)
    if scheme == "nasbot":
        perm = np.random.default_rng(NASBOT_SPLIT_SEED).permutation(n)
        n_tr = NASBOT_N_TRAIN if n == N_TRAIN else round(0.8 * n)
        return np.sort(perm[:n_tr]).astype(np.int64), np.sort(perm[n_tr:]).astype(np.int64)
    if scheme == "nb201":
        if labels is None:
            raise InvalidSettingError("split 'nb201' is class-stratified: pass the training labels "
                                      "(split_indices('nb201', n, labels=y_train)) or use cifar10_splits")
        labels = np.asarray(labels)
        if labels.shape != (n,):
            raise InvalidSettingError(f"split 'nb201': {labels.shape[0]} labels for n = {n} images")
        train = stratified_choice(labels, n // 2, np.random.default_rng(NB201_SPLIT_SEED))
        return train, np.setdiff1d(np.arange(n), train).astype(np.int64)
    raise InvalidSettingError(f"split scheme {scheme!r} unknown; use one of {list(SPLIT_SCHEMES)}")


def channel_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and std (float64) in ``x``'s own units.

    NHWC images (4-D): over N, H, W per channel; 3-D (N, H, W) grey images: one value;
    2-D features: per column. A zero std is returned as 1 so that normalising is safe.
    """
    x = np.asarray(x)
    if x.ndim == 4:
        axes: tuple[int, ...] = (0, 1, 2)
    elif x.ndim == 3:
        axes = (0, 1, 2)
    elif x.ndim == 2:
        axes = (0,)
    else:
        axes = tuple(range(x.ndim))
    if x.shape[0] == 0:
        n_ch = x.shape[-1] if x.ndim in (2, 4) else 1
        return np.zeros(n_ch), np.ones(n_ch)
    # chunked so that 50,000 uint8 images are not converted to float64 in one piece
    s = np.zeros(x.shape[-1] if x.ndim in (2, 4) else 1)
    ss = np.zeros_like(s)
    count = 0
    for start in range(0, x.shape[0], 2048):
        part = x[start:start + 2048].astype(np.float64)
        s += np.atleast_1d(part.sum(axis=axes))
        ss += np.atleast_1d((part * part).sum(axis=axes))
        count += part.size // s.size
    mean = s / count
    std = np.sqrt(np.maximum(ss / count - mean * mean, 0.0))
    std[std == 0] = 1.0
    return mean, std


@dataclass(frozen=True, eq=False)  # arrays do not compare with ==
class ArraySplits:
    """Train / validation (/ test) numpy arrays and per-channel normalisation of the train part.

    Images are uint8 NHWC (or (N, H, W) grey); tabular inputs are float (N, D); labels are
    int64 class indices, or floats for regression. ``mean``/``std`` are in the inputs' own
    units (0..255 for images) and are computed from ``x_train`` when not given.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    mean: np.ndarray | None = None
    std: np.ndarray | None = None
    scheme: str = ""   # provenance: which split
    source: str = ""   # provenance: which archive kind
    sha256: str = ""   # provenance: the archive's hash
    meta: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for a, b, name in ((self.x_train, self.y_train, "train"), (self.x_val, self.y_val, "val"),
                           (self.x_test, self.y_test, "test")):
            if (a is None) != (b is None) or (a is not None and len(a) != len(b)):
                raise ValueError(f"ArraySplits: {name} inputs and labels do not match")
        if self.mean is None or self.std is None:
            mean, std = channel_stats(self.x_train)
            object.__setattr__(self, "mean", mean)
            object.__setattr__(self, "std", std)

    @property
    def n_classes(self) -> int:
        """Number of classes (1 + the largest label) for integer labels, else 0."""
        ys = [y for y in (self.y_train, self.y_val, self.y_test) if y is not None and y.size]
        if not ys or not np.issubdtype(ys[0].dtype, np.integer):
            return 0
        return int(max(int(y.max()) for y in ys)) + 1

    def subset(self, n_train: int, n_val: int, seed: int, n_test: int | None = None) -> ArraySplits:
        """A smaller split: ``n_train``/``n_val`` (and ``n_test``) rows drawn class-stratified from ``seed``.

        Regression labels (floats) are drawn uniformly. The normalisation is recomputed on the
        new train part; the test part is kept whole unless ``n_test`` is given.
        """
        ss = np.random.SeedSequence(seed)
        rngs = [np.random.default_rng(s) for s in ss.spawn(3)]

        def draw(y: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
            if k > len(y):
                raise InvalidSettingError(f"subset of {k} rows asked from a split of {len(y)}")
            if np.issubdtype(y.dtype, np.integer):
                return stratified_choice(y, k, rng)
            return np.sort(rng.choice(len(y), size=k, replace=False))

        tr = draw(self.y_train, n_train, rngs[0])
        va = draw(self.y_val, n_val, rngs[1])
        x_te, y_te = self.x_test, self.y_test
        if n_test is not None and y_te is not None:
            te = draw(y_te, n_test, rngs[2])
            x_te, y_te = x_te[te], y_te[te]
        return replace(self, x_train=self.x_train[tr], y_train=self.y_train[tr], x_val=self.x_val[va],
                       y_val=self.y_val[va], x_test=x_te, y_test=y_te, mean=None, std=None,
                       meta={**self.meta, "subset": {"n_train": n_train, "n_val": n_val, "n_test": n_test,
                                                     "seed": seed}})


_SPLITS: dict[tuple[str, str, str], ArraySplits] = {}


def cifar10_splits(scheme: str, data_dir: str | os.PathLike | None = None, source: str = "auto") -> ArraySplits:
    """CIFAR-10 train/validation split ``scheme`` ("nb201", "combo" or "nasbot") plus the official test images."""
    if scheme not in SPLIT_SCHEMES:
        raise InvalidSettingError(f"split scheme {scheme!r} unknown; use one of {list(SPLIT_SCHEMES)}")
    d = load_cifar10(data_dir, source)
    key = (scheme, d.source, d.sha256)
    with _LOCK:
        if key in _SPLITS:
            return _SPLITS[key]
    tr, va = split_indices(scheme, d.y_train.size, labels=d.y_train)
    out = ArraySplits(d.x_train[tr], d.y_train[tr], d.x_train[va], d.y_train[va], d.x_test, d.y_test,
                      scheme=scheme, source=d.source, sha256=d.sha256,
                      meta={"split_seed": {"nb201": NB201_SPLIT_SEED, "combo": COMBO_SPLIT_SEED,
                                           "nasbot": NASBOT_SPLIT_SEED}[scheme]})
    with _LOCK:
        _SPLITS[key] = out
    return out


def sized_cifar10_splits(scheme: str, data_dir: str | os.PathLike | None, source: str, n_train: int, n_val: int,
                         n_test: int, seed: int, mean: tuple[float, ...] | None = None,
                         std: tuple[float, ...] | None = None) -> ArraySplits:
    """What a live benchmark trains on: a scheme's split, cut to the given sizes, with its normalisation.

    Parts smaller than the scheme's are class-stratified subsets drawn from ``seed``; larger
    requests keep the whole part. ``mean``/``std`` (per channel, 0..255 units) replace the
    split's own statistics when given (benchmarks that follow their authors' constants).
    """
    full = cifar10_splits(scheme, data_dir, source)
    have = (len(full.y_train), len(full.y_val), len(full.y_test) if full.y_test is not None else 0)
    if n_train < have[0] or n_val < have[1] or n_test < have[2]:
        full = full.subset(min(n_train, have[0]), min(n_val, have[1]), seed,
                           n_test=None if n_test >= have[2] else n_test)
    if mean is not None and std is not None:
        full = replace(full, mean=np.asarray(mean, dtype=float), std=np.asarray(std, dtype=float))
    return full


# where a CIFAR-10 benchmark reads its data from (declared once for every live CIFAR benchmark)
CIFAR_SETTINGS = {
    "data_dir": Setting("", "data directory; empty = $BENCHSUITE_DATA or ../shared/data or "
                            "~/.cache/benchsuite/data (downloaded)", type=str),
    "source": Setting("auto", "CIFAR-10 archive: auto, official (batches) or jpeg", type=str,
                      choices=("auto", "official", "jpeg")),
}
