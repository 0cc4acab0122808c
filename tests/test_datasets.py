"""CIFAR-10 readers (JPEG tar, official batches), the decode cache, splits and subsets."""
from __future__ import annotations

import io
import logging
import os
import pickle
import struct
import tarfile

import numpy as np
import pytest
from PIL import Image

from benchsuite import data, datasets
from benchsuite.errors import DataError, InvalidSettingError

SHARED = data.repo_root().parent / "shared" / "data"
needs_jpeg = pytest.mark.skipif(not (SHARED / datasets.JPEG_FILE).exists(),
                                reason=f"{datasets.JPEG_FILE} not in the shared data folder")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test gets its own empty disk cache and an empty in-process cache."""
    monkeypatch.setenv(datasets.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(datasets, "_MEMO", {})
    monkeypatch.setattr(datasets, "_SPLITS", {})
    return tmp_path / "cache"


def _jpeg_bytes(img: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=95)
    return buf.getvalue()


def _add(tar: tarfile.TarFile, name: str, payload: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    tar.addfile(info, io.BytesIO(payload))


def make_jpeg_tar(path, n_train_per_class=2, n_test_per_class=1, seed=0, prefix=""):
    """A small CIFAR-10-like JPEG archive; returns {(split, class, name): decoded pixels}."""
    rng = np.random.default_rng(seed)
    entries = []
    for split, k in (("train", n_train_per_class), ("test", n_test_per_class)):
        for cls in datasets.CIFAR10_CLASSES:
            for j in range(k):
                entries.append((split, cls, f"{j:04d}.jpg", rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)))
    expected = {}
    with tarfile.open(path, "w:gz") as tar:
        _add(tar, prefix + "README.md", b"not an image")
        for i in rng.permutation(len(entries)):  # archive order differs from the sorted order
            split, cls, name, img = entries[i]
            payload = _jpeg_bytes(img)
            _add(tar, f"{prefix}{split}/{cls}/{name}", payload)
            expected[(split, cls, name)] = np.asarray(Image.open(io.BytesIO(payload)).convert("RGB"))
    return expected


def _py2str(s: bytes) -> bytes:
    """A Python 2 ``str`` as the pickle opcodes Python 2 wrote (SHORT_BINSTRING / BINSTRING)."""
    return (b"U" + bytes([len(s)]) + s) if len(s) < 256 else (b"T" + struct.pack("<i", len(s)) + s)


def _int(v: int) -> bytes:
    return b"J" + struct.pack("<i", v)


def py2_batch_pickle(x: np.ndarray, labels) -> bytes:
    """A batch pickled the way the official files were (Python 2, protocol 2, numpy.core globals)."""
    n, d = x.shape
    array = (b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\n" + _int(0) + b"\x85" + _py2str(b"b")
             + b"\x87R(" + _int(1) + _int(n) + _int(d) + b"\x86cnumpy\ndtype\n" + _py2str(b"u1") + _int(0) + _int(1)
             + b"\x87R(" + _int(3) + _py2str(b"|") + b"NNN" + _int(-1) + _int(-1) + _int(0) + b"tb"
             + b"\x89" + _py2str(x.tobytes()) + b"tb")
    labs = b"](" + b"".join(_int(int(v)) for v in labels) + b"e"
    return (b"\x80\x02}(" + _py2str(b"data") + array + _py2str(b"labels") + labs
            + _py2str(b"batch_label") + _py2str(b"training batch") + b"u.")


def make_python_tar(path, n_per_batch=4, seed=0, extra_member=None):
    """A small archive in the official python-batch layout; returns (x_train, y_train, x_test, y_test) rows."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    with tarfile.open(path, "w:gz") as tar:
        for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
            x = rng.integers(0, 256, (n_per_batch, 3072), dtype=np.uint8)
            y = [int(v) for v in rng.integers(0, 10, n_per_batch)]
            batch = {"batch_label": name, "labels": y, "data": x, "filenames": [f"{name}_{i}.png" for i in range(4)]}
            if extra_member is not None and name == "test_batch":
                batch["evil"] = extra_member
            # training batches as Python 2 wrote them, the test batch as Python 3 would
            raw = pickle.dumps(batch, protocol=2) if name == "test_batch" else py2_batch_pickle(x, y)
            _add(tar, f"cifar-10-batches-py/{name}", raw)
            rows.append(x)
            labels.append(np.array(y))
        _add(tar, "cifar-10-batches-py/readme.html", b"<html/>")
    return np.concatenate(rows[:5]), np.concatenate(labels[:5]), rows[5], labels[5]


def test_manifest_has_the_official_batches():
    e = data.MANIFEST[datasets.OFFICIAL_FILE]
    assert e.url == "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    assert e.sha256 == "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"
    assert datasets.JPEG_FILE in data.MANIFEST


@pytest.mark.parametrize("prefix", ["", "cifar10/"])
def test_jpeg_reader_order_labels_and_pixels(tmp_path, prefix):
    expected = make_jpeg_tar(tmp_path / "c.tar.gz", prefix=prefix)
    d = datasets.load_cifar10_file(tmp_path / "c.tar.gz", "jpeg")
    assert d.x_train.shape == (20, 32, 32, 3) and d.x_test.shape == (10, 32, 32, 3)
    assert d.x_train.dtype == np.uint8 and d.y_train.dtype == np.int64
    assert d.y_train.tolist() == [c for c in range(10) for _ in range(2)]  # class order, then file name
    assert d.y_test.tolist() == list(range(10))
    for k, cls in enumerate(datasets.CIFAR10_CLASSES):
        np.testing.assert_array_equal(d.x_train[2 * k + 1], expected[("train", cls, "0001.jpg")])
        np.testing.assert_array_equal(d.x_test[k], expected[("test", cls, "0000.jpg")])
    assert d.source == "jpeg" and d.sha256 == data.sha256_file(tmp_path / "c.tar.gz")
    assert not d.x_train.flags.writeable  # shared through the cache


def test_decode_is_cached_on_disk_and_in_memory(tmp_path, private_cache, monkeypatch):
    make_jpeg_tar(tmp_path / "c.tar.gz")
    first = datasets.load_cifar10_file(tmp_path / "c.tar.gz", "jpeg")
    files = list(private_cache.iterdir())
    assert len(files) == 1 and files[0].suffix == ".npz" and first.sha256 in files[0].name
    assert datasets.load_cifar10_file(tmp_path / "c.tar.gz", "jpeg") is first  # in-process

    def boom(path):
        raise AssertionError("decoded again instead of reading the cache")

    monkeypatch.setattr(datasets, "read_cifar10_jpeg", boom)
    monkeypatch.setattr(datasets, "_MEMO", {})
    again = datasets.load_cifar10_file(tmp_path / "c.tar.gz", "jpeg")
    np.testing.assert_array_equal(again.x_train, first.x_train)
    np.testing.assert_array_equal(again.y_test, first.y_test)


def test_bad_cache_file_is_rebuilt(tmp_path, private_cache):
    make_jpeg_tar(tmp_path / "c.tar.gz")
    sha = data.sha256_file(tmp_path / "c.tar.gz")
    cpath = datasets._cache_path("jpeg", sha)
    cpath.parent.mkdir(parents=True)
    cpath.write_bytes(b"PK\x03\x04 truncated")
    d = datasets.load_cifar10_file(tmp_path / "c.tar.gz", "jpeg")
    assert d.x_train.shape == (20, 32, 32, 3)
    with np.load(cpath) as z:  # replaced by a good one
        assert z["x_train"].shape == (20, 32, 32, 3)
    # a cache holding fewer images than the archive must have is not trusted either
    datasets._MEMO.clear()
    d2 = datasets.load_cifar10_file(tmp_path / "c.tar.gz", "jpeg", expect=(20, 10))
    assert d2.x_test.shape[0] == 10


@pytest.mark.parametrize("edit", ["invert pixels", "shift labels", "no checksum"])
def test_an_edited_cache_is_not_trained_on(tmp_path, private_cache, caplog, edit):
    """Issue 26 item 3: a cache with inverted pixels and shifted labels passed the shape and dtype checks."""
    make_jpeg_tar(tmp_path / "c.tar.gz")
    good = datasets.load_cifar10_file(tmp_path / "c.tar.gz", "jpeg")
    (cpath,) = private_cache.iterdir()
    with np.load(cpath) as z:
        arrays = {k: z[k] for k in z.files}
    if edit == "invert pixels":
        arrays["x_train"] = 255 - arrays["x_train"]
    elif edit == "shift labels":
        arrays["y_train"] = (arrays["y_train"] + 1) % 10
    else:
        del arrays["__sha256__"]
    with open(cpath, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    datasets._MEMO.clear()
    with caplog.at_level(logging.WARNING, logger="benchsuite.datasets"):
        again = datasets.load_cifar10_file(tmp_path / "c.tar.gz", "jpeg")
    np.testing.assert_array_equal(again.x_train, good.x_train)
    np.testing.assert_array_equal(again.y_train, good.y_train)
    notices = [r.getMessage() for r in caplog.records if r.name == "benchsuite.datasets"]
    assert len(notices) == 1 and str(cpath) in notices[0] and "decoding again" in notices[0]
    assert ("checksum mismatch" in notices[0]) == (edit != "no checksum")


def _assert_one_line_data_error(err, path):
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg
    assert "delete" in msg.lower() and data.ENV_VAR in msg


def test_truncated_archive_is_one_data_error_and_leaves_no_cache(tmp_path, private_cache):
    make_jpeg_tar(tmp_path / "good.tar.gz", n_train_per_class=5)
    raw = (tmp_path / "good.tar.gz").read_bytes()
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DataError) as err:
        datasets.load_cifar10_file(bad, "jpeg")
    _assert_one_line_data_error(err, bad)
    assert not private_cache.exists() or not any(private_cache.iterdir())
    bad.write_bytes(b"")  # empty file: not a tar at all
    with pytest.raises(DataError):
        datasets.load_cifar10_file(bad, "jpeg")
    with pytest.raises(DataError):
        datasets.load_cifar10_file(bad, "official")
    assert not private_cache.exists() or not any(private_cache.iterdir())


def test_corrupt_jpeg_inside_archive(tmp_path, private_cache):
    path = tmp_path / "c.tar"
    with tarfile.open(path, "w") as tar:
        _add(tar, "train/cat/0000.jpg", _jpeg_bytes(np.zeros((32, 32, 3), np.uint8))[:40])
    with pytest.raises(DataError) as err:
        datasets.load_cifar10_file(path, "jpeg")
    _assert_one_line_data_error(err, path)
    assert not private_cache.exists() or not any(private_cache.iterdir())


def test_missing_images_against_expected_counts(tmp_path, private_cache):
    make_jpeg_tar(tmp_path / "c.tar.gz")
    with pytest.raises(DataError, match="expected 50000"):
        datasets.load_cifar10_file(tmp_path / "c.tar.gz", "jpeg", expect=(50000, 10000))
    assert not private_cache.exists() or not any(private_cache.iterdir())


def test_official_batches_layout(tmp_path):
    x_rows, y_tr, x_te_rows, y_te = make_python_tar(tmp_path / "p.tar.gz")
    d = datasets.load_cifar10_file(tmp_path / "p.tar.gz", "official")
    assert d.x_train.shape == (20, 32, 32, 3) and d.x_test.shape == (4, 32, 32, 3)
    np.testing.assert_array_equal(d.y_train, y_tr)
    np.testing.assert_array_equal(d.y_test, y_te)
    # row layout: 1024 red, 1024 green, 1024 blue, each row-major 32 x 32
    i, r, c = 7, 5, 30
    for ch in range(3):
        assert d.x_train[i, r, c, ch] == x_rows[i, ch * 1024 + r * 32 + c]
    np.testing.assert_array_equal(d.x_test[2, :, :, 1], x_te_rows[2, 1024:2048].reshape(32, 32))


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def test_official_reader_refuses_code_in_pickles(tmp_path):
    marker = tmp_path / "pwned"
    make_python_tar(tmp_path / "p.tar.gz", extra_member=_Evil(marker))
    with pytest.raises(DataError, match="refusing"):
        datasets.load_cifar10_file(tmp_path / "p.tar.gz", "official")
    assert not marker.exists()


def test_official_reader_missing_batch(tmp_path):
    path = tmp_path / "p.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        _add(tar, "cifar-10-batches-py/data_batch_1", pickle.dumps({"data": np.zeros((1, 3072), np.uint8),
                                                                    "labels": [0]}))
    with pytest.raises(DataError, match="missing"):
        datasets.load_cifar10_file(path, "official")


def test_source_resolution(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(datasets, "load_cifar10_file", lambda path, source, sha, expect: seen.append(
        (path.name, source, expect)))
    monkeypatch.setattr(data, "data_file", lambda name, d=None, download=True: tmp_path / name)
    monkeypatch.setattr(data, "sha256_of", lambda name, d=None: "0" * 64)
    datasets.load_cifar10(tmp_path, "auto")  # nothing there: the official batches (downloaded)
    (tmp_path / datasets.JPEG_FILE).parent.mkdir(parents=True)
    (tmp_path / datasets.JPEG_FILE).write_bytes(b"x")
    datasets.load_cifar10(tmp_path, "auto")  # only the JPEGs: those
    (tmp_path / datasets.OFFICIAL_FILE).parent.mkdir(parents=True)
    (tmp_path / datasets.OFFICIAL_FILE).write_bytes(b"x")
    datasets.load_cifar10(tmp_path, "auto")  # both: the official batches
    datasets.load_cifar10(tmp_path, "jpeg")
    assert [s[1] for s in seen] == ["official", "jpeg", "official", "jpeg"]
    assert seen[0][0] == "cifar-10-python.tar.gz" and seen[0][2] == (50000, 10000)
    with pytest.raises(InvalidSettingError, match="source"):
        datasets.load_cifar10(tmp_path, "png")


def test_missing_jpeg_archive_says_where(tmp_path):
    with pytest.raises(DataError, match=data.ENV_VAR):
        datasets.load_cifar10(tmp_path, "jpeg")


def _labels(n_per_class=5000):
    return np.repeat(np.arange(10), n_per_class)[np.random.default_rng(3).permutation(10 * n_per_class)]


def test_combo_split_is_combos_recipe():
    tr, va = datasets.split_indices("combo")
    idx = np.arange(50000)
    np.random.RandomState(0).shuffle(idx)
    assert tr.size == 30000 and va.size == 10000
    np.testing.assert_array_equal(tr, np.sort(idx[:30000]))
    np.testing.assert_array_equal(va, np.sort(idx[-10000:]))
    assert np.intersect1d(tr, va).size == 0
    tr2, va2 = datasets.split_indices("combo")
    np.testing.assert_array_equal(tr, tr2)
    np.testing.assert_array_equal(va, va2)


def test_nb201_split_halves_every_class():
    y = _labels()
    tr, va = datasets.split_indices("nb201", labels=y)
    assert tr.size == va.size == 25000
    assert np.intersect1d(tr, va).size == 0 and np.union1d(tr, va).size == 50000
    assert np.bincount(y[tr]).tolist() == [2500] * 10 and np.bincount(y[va]).tolist() == [2500] * 10
    tr2, _ = datasets.split_indices("nb201", labels=y)
    np.testing.assert_array_equal(tr, tr2)
    with pytest.raises(InvalidSettingError, match="labels"):
        datasets.split_indices("nb201")
    with pytest.raises(InvalidSettingError, match="unknown"):
        datasets.split_indices("darts")


def _synthetic_splits(n_per_class=40, shape=(4, 4, 3)):
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(10), n_per_class)
    x = rng.integers(0, 256, (y.size, *shape), dtype=np.uint8)
    half = np.sort(np.concatenate([np.flatnonzero(y == c)[: n_per_class // 2] for c in range(10)]))
    return datasets.ArraySplits(x, y, x[half], y[half], x[::8], y[::8])


def test_array_splits_stats_and_stratified_subset():
    s = _synthetic_splits()
    x = s.x_train.astype(np.float64)
    np.testing.assert_allclose(s.mean, x.mean(axis=(0, 1, 2)))
    np.testing.assert_allclose(s.std, x.std(axis=(0, 1, 2)))
    sub = s.subset(100, 50, seed=1)
    assert np.bincount(sub.y_train).tolist() == [10] * 10 and np.bincount(sub.y_val).tolist() == [5] * 10
    assert sub.x_test is s.x_test and sub.meta["subset"]["seed"] == 1
    np.testing.assert_allclose(sub.mean, sub.x_train.astype(np.float64).mean(axis=(0, 1, 2)))
    again = s.subset(100, 50, seed=1)
    np.testing.assert_array_equal(sub.x_train, again.x_train)
    other = s.subset(100, 50, seed=2)
    assert not np.array_equal(sub.x_train, other.x_train)
    small = s.subset(30, 10, seed=0, n_test=20)
    assert small.y_test.size == 20 and np.bincount(small.y_train).tolist() == [3] * 10
    with pytest.raises(InvalidSettingError):
        s.subset(10_000, 10, seed=0)


def test_regression_splits_per_column_stats_and_subset():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, (200, 4))
    y = x @ np.arange(4.0)
    s = datasets.ArraySplits(x[:150], y[:150], x[150:], y[150:])
    np.testing.assert_allclose(s.mean, x[:150].mean(axis=0))
    sub = s.subset(50, 20, seed=0)
    assert sub.x_train.shape == (50, 4) and sub.y_val.shape == (20,)
    with pytest.raises(ValueError):
        datasets.ArraySplits(x[:10], y[:9], x[10:], y[10:])


@pytest.mark.slow
@needs_jpeg
def test_real_cifar10_jpeg_splits(private_cache):
    d = datasets.load_cifar10(SHARED, "jpeg")
    assert d.x_train.shape == (50000, 32, 32, 3) and d.x_test.shape == (10000, 32, 32, 3)
    assert np.bincount(d.y_train).tolist() == [5000] * 10 and np.bincount(d.y_test).tolist() == [1000] * 10
    s = datasets.cifar10_splits("nb201", SHARED, "jpeg")
    assert s.x_train.shape[0] == s.x_val.shape[0] == 25000 and s.x_test.shape[0] == 10000
    np.testing.assert_allclose(s.mean / 255, [0.49, 0.48, 0.45], atol=0.01)  # the familiar CIFAR-10 means
    c = datasets.cifar10_splits("combo", SHARED, "jpeg")
    assert c.x_train.shape[0] == 30000 and c.x_val.shape[0] == 10000
    datasets._MEMO.clear()
    again = datasets.load_cifar10(SHARED, "jpeg")  # from the disk cache
    np.testing.assert_array_equal(again.x_train[::997], d.x_train[::997])
