"""Data access: directory resolution, checksums, download-and-verify, IDX readers."""
from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pytest

from benchsuite import data
from benchsuite.errors import DataError

SHARED = data.repo_root().parent / "shared" / "data"
LABELS = "mnist/train-labels-idx1-ubyte.gz"
needs_shared = pytest.mark.skipif(not (SHARED / LABELS).exists(),
                                  reason=f"shared data folder {SHARED} not present on this machine")


def test_env_var_and_argument_order(tmp_path, monkeypatch):
    monkeypatch.setenv(data.ENV_VAR, str(tmp_path / "env"))
    assert data.data_dir() == tmp_path / "env"
    assert data.data_dir(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv(data.ENV_VAR)
    cands = data.candidate_dirs()
    assert cands[-2] == data.repo_root().parent / "shared" / "data"
    assert cands[-1] == Path.home() / ".cache" / "benchsuite" / "data"


def test_manifest_has_readme_checksums():
    readme = (SHARED / "README.md").read_text() if (SHARED / "README.md").exists() else None
    for entry in data.MANIFEST.values():
        # an unpinned entry (no published checksum: UCI slice) must at least say where it comes from
        assert len(entry.sha256) == 64 or (entry.sha256 == "" and entry.url), entry.name
        if readme is not None and (SHARED / entry.name).exists():
            assert entry.sha256 in readme, entry.name
        elif readme is not None:  # not shipped in the shared folder: a user must be able to download it
            assert entry.url and entry.url.startswith("https://"), entry.name


@needs_shared
def test_shared_file_verifies_once(monkeypatch):
    data._VERIFIED.clear()
    calls = []
    real = data.sha256_file
    monkeypatch.setattr(data, "sha256_file", lambda p: calls.append(p) or real(p))
    p1 = data.data_file(LABELS, SHARED)
    p2 = data.data_file(LABELS, SHARED)
    assert p1 == p2 == SHARED / LABELS
    assert len(calls) == 1  # hashed once per process


def test_missing_file_without_url_names_file(tmp_path):
    name = "maxsat2018/frb-frb10-6-4.wcnf"
    with pytest.raises(DataError) as err:
        data.data_file(name, tmp_path)
    msg = str(err.value)
    assert name in msg and data.MANIFEST[name].sha256 in msg and data.ENV_VAR in msg


def test_unknown_name():
    with pytest.raises(DataError, match="not in the manifest"):
        data.data_file("nope/file.bin")


def test_wrong_checksum_names_expected_and_found(tmp_path):
    bad = tmp_path / LABELS
    bad.parent.mkdir(parents=True)
    bad.write_bytes(gzip.compress(b"not mnist"))
    with pytest.raises(DataError) as err:
        data.data_file(LABELS, tmp_path, download=False)
    msg = str(err.value)
    assert str(bad) in msg and data.MANIFEST[LABELS].sha256 in msg and data.sha256_file(bad) in msg


def _fake_urlopen(payload: bytes | None):
    def urlopen(url, timeout=None):
        if payload is None:
            raise OSError("network unreachable")
        return io.BytesIO(payload)
    return urlopen


def test_download_failure_is_a_clear_error_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(data.urllib.request, "urlopen", _fake_urlopen(None))
    with pytest.raises(DataError, match="downloading it from https://") as err:
        data.data_file(LABELS, tmp_path)
    assert LABELS in str(err.value)
    assert list((tmp_path / "mnist").iterdir()) == []


def test_download_with_wrong_content_is_rejected(tmp_path, monkeypatch):
    monkeypatch.setattr(data.urllib.request, "urlopen", _fake_urlopen(b"garbage"))
    with pytest.raises(DataError, match="wrong checksum"):
        data.data_file(LABELS, tmp_path)
    assert list((tmp_path / "mnist").iterdir()) == []


@needs_shared
def test_download_of_original_gzip_is_accepted(tmp_path, monkeypatch):
    # the canonical server's .gz wrapper differs from ours; the decompressed bytes decide
    raw = gzip.decompress((SHARED / LABELS).read_bytes())
    rewrapped = gzip.compress(raw, compresslevel=1, mtime=12345)
    assert data.hashlib.sha256(rewrapped).hexdigest() != data.MANIFEST[LABELS].sha256
    monkeypatch.setattr(data.urllib.request, "urlopen", _fake_urlopen(rewrapped))
    path = data.data_file(LABELS, tmp_path)
    assert path.read_bytes() == rewrapped
    assert data.read_idx(path).shape == (60000,)


def _idx_bytes(arr: np.ndarray) -> bytes:
    code = {np.dtype(np.uint8): 0x08, np.dtype(">i4"): 0x0C}[arr.dtype]
    head = bytes([0, 0, code, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    return head + arr.tobytes()


def test_read_idx_roundtrip_and_errors(tmp_path):
    arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    (tmp_path / "a.idx").write_bytes(_idx_bytes(arr))
    np.testing.assert_array_equal(data.read_idx(tmp_path / "a.idx"), arr)
    arr32 = np.array([[1, -2], [3, 70000]], dtype=">i4")
    (tmp_path / "b.gz").write_bytes(gzip.compress(_idx_bytes(arr32)))
    np.testing.assert_array_equal(data.read_idx(tmp_path / "b.gz"), arr32.astype(np.int32))
    (tmp_path / "bad.idx").write_bytes(b"\x01\x02\x03\x04rest")
    with pytest.raises(DataError, match="not an IDX file"):
        data.read_idx(tmp_path / "bad.idx")
    (tmp_path / "short.idx").write_bytes(_idx_bytes(arr)[:-3])
    with pytest.raises(DataError, match="truncated"):
        data.read_idx(tmp_path / "short.idx")


@needs_shared
def test_load_mnist():
    x, y = data.load_mnist("test", SHARED)
    assert x.shape == (10000, 28, 28) and x.dtype == np.uint8 and y.shape == (10000,)
    assert set(np.unique(y)) == set(range(10))
    assert 30 < x.mean() < 40  # MNIST's mean pixel is about 33
    with pytest.raises(DataError, match="split"):
        data.load_mnist("validation", SHARED)
