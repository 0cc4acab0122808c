"""The table surrogate is fitted once: disk cache (keyed, checksummed, rebuilt) and the one-point fast path."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from benchsuite import surrogate as su
from benchsuite.space import Float, Space
from benchsuite.tabular import TableSpec, TaskArrays, open_table, write_table

SVM_TABLE = Path(__file__).resolve().parent.parent / "tables" / "svm_mnist" / "svm_mnist.h5"


def make_table(path: Path, shape: tuple[int, ...] = (6, 5), nf: int = 4, seed: int = 0,
               holes: int = 0, log_fid: bool = True) -> Path:
    """A small smooth table (numeric axes, nf fidelities, 3 replicates, a test loss); ``holes`` entries left empty."""
    rng = np.random.default_rng(seed)
    axes = {f"a{k}": np.linspace(-2.0 - k, 3.0 + k, n) for k, n in enumerate(shape)}
    fids = 2.0 ** -np.arange(nf - 1, -1, -1) if log_fid else np.linspace(1.0, 10.0, nf)
    grid = np.meshgrid(*axes.values(), indexing="ij")
    base = 0.5 + 0.4 * np.tanh(sum((k + 1) * 0.3 * np.sin(g) for k, g in enumerate(grid)))
    loss = np.clip(base[..., None, None] + 0.05 * rng.standard_normal(shape + (nf, 3)), 0.0, 1.0)
    cost = np.exp(rng.normal(0.0, 0.5, shape + (nf, 3))) * (np.arange(1, nf + 1)[:, None])
    n_seeds = np.full(shape + (nf,), 3)
    n_seeds[..., -1] = 1  # one replicate at the full fidelity, as in the SVM table
    loss[..., -1, 1:] = np.nan
    cost[..., -1, 1:] = np.nan
    flat = n_seeds.reshape(-1)
    for i in rng.choice(flat.size, holes, replace=False):
        flat[i] = 0
    empty = np.arange(3) >= n_seeds[..., None]
    loss[empty], cost[empty] = np.nan, np.nan
    test = np.clip(base + 0.02 * rng.standard_normal(shape), 0.0, 1.0)
    task = TaskArrays(axes=axes, fidelity_name="s", fidelities=fids, objectives={"loss": loss, "cost": cost},
                      n_seeds=n_seeds, test_loss="test", extras={"test": test})
    return write_table(path, {"": task}, {"complete": holes == 0})


class ToySurrogate(su.SurrogateBenchmark):
    """A surrogate of a table made by :func:`make_table` (floats over each axis's range)."""

    name = "toy_surrogate_cache"
    description = "test surrogate"
    table_spec = TableSpec("toy/none.h5")

    def make_space(self, table):
        return Space([Float(n, float(a[0]), float(a[-1])) for n, a in zip(table.axis_names, table.axes)])


class ToyLinear(ToySurrogate):
    fidelity_log = False
    s_weight = 0.7


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    """A private cache directory and an empty in-process memo for every test."""
    d = tmp_path / "cache"
    monkeypatch.setenv("BENCHSUITE_CACHE", str(d))
    monkeypatch.setattr(su, "_MODELS", {})
    return d / su.CACHE_SUBDIR


def fresh(cls, **settings) -> su.SurrogateBenchmark:
    """A benchmark built from neither the memo nor the cache."""
    su._MODELS.clear()
    return cls(**settings)


def random_points(b: su.SurrogateBenchmark, n: int, seed: int) -> tuple[list[dict], np.ndarray]:
    """Random configurations and fidelities, with grid points, corners and both fidelity ends mixed in."""
    rng = np.random.default_rng(seed)
    configs = [b.space.sample(rng) for _ in range(n)]
    t = b.table
    for i in range(0, n, 7):  # exact grid levels (distance 0 to a centre, cell boundaries)
        configs[i] = {v: float(a[rng.integers(a.size)]) for v, a in zip(b.space.names, t.axes)}
    configs[1] = {v: float(a[0]) for v, a in zip(b.space.names, t.axes)}
    configs[2] = {v: float(a[-1]) for v, a in zip(b.space.names, t.axes)}
    f = b.fidelity
    lo, hi = (np.log2(f.low), np.log2(f.high)) if f.log else (f.low, f.high)
    s = rng.uniform(lo, hi, n)
    s = np.exp2(s) if f.log else s
    s = np.clip(s, f.low, f.high)
    s[::5] = t.fidelities[rng.integers(t.fidelities.size, size=s[::5].size)]
    s[1], s[2] = f.low, f.high
    return configs, s


def assert_same_predictions(a: su.SurrogateBenchmark, b: su.SurrogateBenchmark, n: int, seed: int) -> None:
    """Bit-identical evaluate, predict and test_loss of two benchmarks on n random points."""
    configs, s = random_points(a, n, seed)
    for k, (c, f) in enumerate(zip(configs, s.tolist())):
        ra, rb = a.evaluate(c, f, seed=k), b.evaluate(c, f, seed=k)
        assert (ra.loss, ra.cost_s, ra.info) == (rb.loss, rb.cost_s, rb.info), (c, f)
        assert a.test_loss(c) == b.test_loss(c)
    cols = [np.array([c[n] for c in configs]) for n in a.space.names] + [s]
    for x, y in zip(a.predict(*cols), b.predict(*cols)):
        np.testing.assert_array_equal(x, y)


def assert_fast_equals_batch(b: su.SurrogateBenchmark, n: int, seed: int) -> None:
    """The one-point path gives exactly the vectorised path's values (which is the code before the cache)."""
    assert b._point.ok and b._point.test_ok
    configs, s = random_points(b, n, seed)
    for c, f in zip(configs, s.tolist()):
        vals = [c[name] for name in b.space.names]
        mean, std, cost = (float(v[0]) for v in b.predict(*(np.array([v]) for v in vals), np.array([f])))
        assert b.predict_one(c, f) == (mean, std, cost), (c, f)
        u = b.inputs(vals, b.fidelity.full)[:, :-1]
        old_test = float(np.clip(su.limited(b._test, b._grids[2], u)[0], 0.0, 1.0))
        assert b.test_loss(c) == old_test, c


# -- the cache ---------------------------------------------------------------------------
def test_cached_model_predicts_exactly_as_a_fresh_fit(tmp_path, cache):
    table = make_table(tmp_path / "t.h5")
    first = fresh(ToySurrogate, table=str(table))
    assert first.model_source == "fit" and len(list(cache.glob("*.npz"))) == 1
    cached = fresh(ToySurrogate, table=str(table))
    assert cached.model_source == "cache"
    assert ToySurrogate(table=str(table)).model_source == "memory"
    refit = su.fit_surrogate(open_table(table), ToySurrogate.s_weight, ToySurrogate.smoothing, True)
    for name, arr in refit.arrays().items():
        np.testing.assert_array_equal(cached.model.arrays()[name], arr, err_msg=name)
    assert_same_predictions(first, cached, 1000, seed=1)
    # the stored solution rebuilds its system on demand: same leave-one-out residuals
    np.testing.assert_array_equal(cached.model.loss.loo_residuals(), refit.loss.loo_residuals())


def test_changed_table_or_settings_refit(tmp_path, cache):
    table = make_table(tmp_path / "t.h5", seed=0)
    a = fresh(ToySurrogate, table=str(table))
    sha_a = a.table.sha256
    make_table(table, seed=1)  # same path, other values: another sha256, so another key
    b = fresh(ToySurrogate, table=str(table))
    assert b.table.sha256 != sha_a and b.model_source == "fit"
    assert len(list(cache.glob("*.npz"))) == 2
    assert not np.array_equal(a.model.loss.coef, b.model.loss.coef)
    c = {n: 0.3 for n in a.space.names}
    assert a.evaluate(c, 0.5, seed=0).loss != b.evaluate(c, 0.5, seed=0).loss
    assert fresh(ToyLinear, table=str(table)).model_source == "fit"  # other settings, other key
    assert len(list(cache.glob("*.npz"))) == 3
    key = su.cache_key(b.table, 0.5, 0.0, True)
    assert su.cache_path(key) != su.cache_path({**key, "format": su.CACHE_FORMAT + 1})


def _flip_byte(path: Path, where: float) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * where)] ^= 0xFF
    path.write_bytes(bytes(data))


def _rewrite_with(path: Path, change) -> None:
    """Rewrite a cache file with one array changed but its stored checksum kept (a valid zip)."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    change(arrays)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "checksum", "stale"])
def test_corrupt_cache_is_refitted_with_one_line(tmp_path, cache, caplog, damage):
    table = make_table(tmp_path / "t.h5")
    good = fresh(ToySurrogate, table=str(table))
    (path,) = cache.glob("*.npz")
    if damage == "flip":
        _flip_byte(path, 0.5)
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
    elif damage == "garbage":
        path.write_bytes(b"not a cache file\n")
    elif damage == "checksum":  # one coefficient changed, zip intact: only our checksum can tell
        _rewrite_with(path, lambda a: a["loss.coef"].__setitem__(0, a["loss.coef"][0] + 1e-9))
    else:  # a file at this path written for another key
        _rewrite_with(path, lambda a: a.__setitem__("__meta__", np.array(str(a["__meta__"]).replace('"task": ""', '"task": "x"'))))
    with caplog.at_level(logging.WARNING, logger="benchsuite.surrogate"):
        again = fresh(ToySurrogate, table=str(table))
    assert again.model_source == "fit"
    notices = [r.getMessage() for r in caplog.records if r.name == "benchsuite.surrogate"]
    assert len(notices) == 1 and "\n" not in notices[0] and str(path) in notices[0] and "refitting" in notices[0]
    why = {"truncate": "not a readable", "garbage": "not a readable", "checksum": "checksum mismatch",
           "stale": "another table"}.get(damage, "")
    assert why in notices[0] and ("not a readable" in notices[0] or "checksum" in notices[0] or damage != "flip")
    assert_same_predictions(good, again, 50, seed=2)
    assert fresh(ToySurrogate, table=str(table)).model_source == "cache"  # rewritten, valid again


def test_unwritable_cache_only_costs_a_refit(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("BENCHSUITE_CACHE", str(blocker))  # a file, so no directory can be made there
    table = make_table(tmp_path / "t.h5")
    with caplog.at_level(logging.WARNING, logger="benchsuite.surrogate"):
        b = fresh(ToySurrogate, table=str(table))
    assert b.model_source == "fit" and any("could not write" in r.getMessage() for r in caplog.records)
    assert 0.0 <= b.evaluate({n: 0.1 for n in b.space.names}, 0.5).loss <= 1.0


# -- the one-point path -----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(7,), (6, 5), (4, 3, 3)])  # 4, 8 and 16 cell corners
def test_fast_path_is_bit_identical_to_the_vectorised_path(tmp_path, shape):
    b = fresh(ToySurrogate, table=str(make_table(tmp_path / "t.h5", shape=shape)))
    assert b._point.kernel.levels is not None  # centres on a full grid: no cdist
    assert_fast_equals_batch(b, 600, seed=3)


def test_fast_path_on_a_partial_table_and_a_linear_fidelity(tmp_path):
    b = fresh(ToySurrogate, table=str(make_table(tmp_path / "p.h5", holes=9)), allow_partial=True)
    assert b._point.kernel.levels is None  # holes: centres are not a full grid, cdist serves them
    assert np.isnan(b.model.loss_grid.v).any()
    assert_fast_equals_batch(b, 600, seed=4)
    lin = fresh(ToyLinear, table=str(make_table(tmp_path / "l.h5", log_fid=False)))
    assert_fast_equals_batch(lin, 300, seed=5)


def test_numpy_sum_order():
    rng = np.random.default_rng(6)
    for n in (1, 3, 7, 8, 16, 24, 64, 128, 256):
        for _ in range(50):
            a = rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))
            assert su._numpy_sum(a.tolist()) == a[None, :].sum(axis=1)[0], n


@pytest.mark.slow
@pytest.mark.skipif(not SVM_TABLE.exists(), reason="the committed SVM table is not built")
def test_svm_surrogate_cached_equals_fresh_and_fast_equals_batch():
    from benchsuite.benchmarks.svm_mnist import SvmMnistSurrogate

    first = fresh(SvmMnistSurrogate)
    assert first.model_source == "fit"
    cached = fresh(SvmMnistSurrogate)
    assert cached.model_source == "cache"
    assert_same_predictions(first, cached, 1000, seed=7)
    assert_fast_equals_batch(cached, 1000, seed=8)
