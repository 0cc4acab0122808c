"""SVM on MNIST: live objective, the lookup table, the tabular and surrogate benchmarks."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchsuite.benchmarks import svm_mnist as sm
from benchsuite.errors import DataError, InvalidConfigError, InvalidSettingError
from benchsuite.surrogate import CubicRbf, GridInterp

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
pytestmark = pytest.mark.skipif(not (SHARED / "mnist" / "train-images-idx3-ubyte.gz").exists(),
                                reason=f"MNIST files not in {SHARED} (point BENCHSUITE_DATA at them)")
FULL_TABLE = sm.TABLE_PATH
needs_full_table = pytest.mark.skipif(
    not FULL_TABLE.exists(),
    reason="tables/svm_mnist/svm_mnist.h5 not built yet (snakemake -s tables/svm_mnist.smk svm_table)")

TINY = {"data_dir": str(SHARED), "pool_size": 300, "n_val": 200, "n_test": 200}
LEVELS = np.linspace(-10, 10, 3)
FRACS = (0.25, 0.5, 1.0)


@pytest.fixture(scope="session")
def small_table(tmp_path_factory, load_script) -> Path:
    """A 3 x 3 x 3 table built by the table code from a 300-image pool (about a second)."""
    merge = load_script("tables/svm_mnist/merge.py", "svm_table_merge")
    out = tmp_path_factory.mktemp("svm") / "small.h5"
    return merge.build_small(out, str(SHARED), 300, 200, 200, LEVELS, FRACS, 2)


# -- splits and subsets ----------------------------------------------------------------
def test_stratified_sample_keeps_class_shares():
    labels = np.repeat(np.arange(10), [100, 50, 50, 50, 50, 50, 50, 50, 50, 500])
    idx = sm.stratified_sample(labels, 100, np.random.default_rng(0))
    assert idx.size == np.unique(idx).size == 100
    counts = np.bincount(labels[idx], minlength=10)
    assert counts[9] == 50 and counts[0] == 10 and counts[1:9].tolist() == [5] * 8
    again = sm.stratified_sample(labels, 100, np.random.default_rng(0))
    other = sm.stratified_sample(labels, 100, np.random.default_rng(1))
    np.testing.assert_array_equal(idx, again)
    assert not np.array_equal(idx, other)


def test_splits_are_disjoint_and_fixed():
    sp = sm.load_splits(str(SHARED), 300, 200, 200)
    assert sp.x_pool.shape == (300, 784) and sp.x_val.shape == (200, 784) and sp.x_test.shape == (200, 784)
    assert 0.0 <= sp.x_pool.min() and sp.x_pool.max() <= 1.0
    pool = {r.tobytes() for r in sp.x_pool}
    assert not pool & {r.tobytes() for r in sp.x_val}  # validation comes from the rest of train
    from benchsuite.data import load_mnist

    share = np.bincount(load_mnist("train", str(SHARED))[1], minlength=10) / 60000
    assert np.abs(np.bincount(sp.y_pool, minlength=10) - 300 * share).max() < 1  # stratified
    assert set(sp.sha256) == set(sm.MNIST_FILES)


# -- live ------------------------------------------------------------------------------
def test_tiny_live_run():
    b = sm.SvmMnistLive(**TINY)
    good, bad = {"x0": 2.0, "x1": -4.0}, {"x0": -10.0, "x1": 10.0}
    r1 = b.evaluate(good, 0.5, seed=3)
    assert r1.loss < 0.35 and r1.cost_s > 0 and r1.info["n_train"] == 150
    assert b.evaluate(good, 0.5, seed=3).loss == r1.loss  # same seed, same subset
    losses = {b.evaluate(good, 0.5, seed=s).loss for s in range(4)}
    assert len(losses) > 1  # the seed picks the subset
    assert b.evaluate(bad, 0.5, seed=3).loss > 0.8  # chance level
    assert b.evaluate(good, None).info["n_train"] == 300
    assert b.test_loss(good) < 0.35


def test_live_rejects_bad_inputs():
    b = sm.SvmMnistLive(**TINY)
    with pytest.raises(InvalidConfigError, match="x0"):
        b.evaluate({"x0": 10.5, "x1": 0.0}, 0.5)
    with pytest.raises(InvalidConfigError, match="fidelity 's'"):
        b.evaluate({"x0": 0.0, "x1": 0.0}, 1 / 256)
    with pytest.raises(InvalidConfigError, match="fidelity 's'"):
        b.evaluate({"x0": 0.0, "x1": 0.0}, 1.5)


def test_live_missing_data_is_a_data_error(tmp_path):
    b = sm.SvmMnistLive(data_dir=str(tmp_path / "empty"), pool_size=300, n_val=200, n_test=200)
    with pytest.raises(DataError, match="train-images-idx3-ubyte.gz"):
        b.evaluate({"x0": 0.0, "x1": 0.0}, 0.5)


# -- the table build -------------------------------------------------------------------
def test_small_table_reproduces_live_code(small_table):
    b = sm.SvmMnistTabular(table=str(small_table))
    sp = sm.load_splits(str(SHARED), 300, 200, 200)
    for ic, ig, si, r in [(2, 0, 0, 1), (1, 1, 1, 0)]:
        rng = np.random.default_rng(sm.table_subset_seed(si, r))
        idx = sm.stratified_sample(sp.y_pool, sm.subset_size(FRACS[si], 300), rng)
        fresh = sm.fit_evaluate(sp, LEVELS[ic], LEVELS[ig], idx).val_error
        loss, cost = b.lookup(b.rows_of([np.array([ic]), np.array([ig])]), np.array([si]), np.array([r]))
        assert loss[0] == fresh and cost[0] > 0


def test_shard_resume_skips_existing(tmp_path, monkeypatch, load_script):
    build = load_script("tables/svm_mnist/build.py", "svm_table_build")
    monkeypatch.setattr(build, "SHARD_DIR", tmp_path)
    done = build.shard_path(3, 40)
    done.write_bytes(b"finished earlier")
    monkeypatch.setattr(build.sm, "load_splits", lambda *a, **k: pytest.fail("recomputed an existing shard"))
    assert build.run_shard(3, 40) == done
    assert build.shard_path(3, 40).name == "shard_003_of_040.npz"


def test_merge_refuses_missing_shards(tmp_path, load_script):
    merge = load_script("tables/svm_mnist/merge.py", "svm_table_merge")
    with pytest.raises(SystemExit, match="40 of 40 shards missing"):
        merge.merge(40, tmp_path / "t.h5", shard_dir=tmp_path)


# -- tabular ---------------------------------------------------------------------------
def test_tabular_snaps_and_picks_replicate_from_seed(small_table):
    b = sm.SvmMnistTabular(table=str(small_table))
    t = b.table
    assert b.snap({"x0": 4.9, "x1": -5.1}) == {"x0": 0.0, "x1": -10.0}
    r = b.evaluate({"x0": 5.1, "x1": -7.0}, 0.25, seed=7)
    assert r.loss == t.loss[2, 0, 0, 7 % 2] and r.cost_s == t.cost[2, 0, 0, 7 % 2]
    assert b.evaluate({"x0": 5.1, "x1": -7.0}, 0.25, seed=8).loss == t.loss[2, 0, 0, 0]
    full = {b.evaluate({"x0": 10.0, "x1": -10.0}, 1.0, seed=s).loss for s in range(5)}
    assert full == {t.loss[2, 0, 2, 0]}  # s = 1 has one fit
    assert b.evaluate({"x0": 10.0, "x1": -10.0}).loss == t.loss[2, 0, 2, 0]
    assert b.test_loss({"x0": 9.0, "x1": -9.0}) == t.test_loss[2, 0]
    assert b.optimum == np.nanmin(t.loss[:, :, -1, 0])


def test_tabular_vectorised_lookup_matches_scalar(small_table):
    b = sm.SvmMnistTabular(table=str(small_table))
    rng = np.random.default_rng(0)
    ic, ig, i_s = (rng.integers(0, 3, 50) for _ in range(3))
    rep = rng.integers(0, 10**9, 50)
    loss, cost = b.lookup(b.rows_of([ic, ig]), i_s, rep)
    for k in range(50):
        r = b.evaluate({"x0": float(LEVELS[ic[k]]), "x1": float(LEVELS[ig[k]])}, FRACS[i_s[k]], int(rep[k]))
        assert (r.loss, r.cost_s) == (loss[k], cost[k])


def test_cost_pool_charges_the_bigger_pools_costs_for_the_same_losses(small_table):
    """cost_pool: the losses stay the table's; each cost is the table's times one factor per s, the table's typical
    cost at s * pool images over its typical cost at s * its own pool. The small table has 75, 150, 300 images,
    so a 600-image pool lands on its next size up (s = 1/4, 1/2) or one doubling beyond it (s = 1)."""
    own = sm.SvmMnistTabular(table=str(small_table))
    assert own.cost_factors(own.table) is None  # the default (the table's own pool) charges the table's costs
    big = sm.SvmMnistTabular(table=str(small_table), cost_pool=600)
    t = own.table
    assert t.arrays["n_train"].tolist() == [75, 150, 300]
    med = np.nanmedian(np.nanmean(t.cost, axis=-1).reshape(-1, 3), axis=0)
    expected = [med[1] / med[0], med[2] / med[1], med[2] / med[1]]
    np.testing.assert_allclose(big.cost_factors(t), expected, rtol=1e-12)
    rng = np.random.default_rng(1)
    ic, ig, i_s = (rng.integers(0, 3, 40) for _ in range(3))
    rep = rng.integers(0, 10**9, 40)
    for k in range(40):
        c = {"x0": float(LEVELS[ic[k]]), "x1": float(LEVELS[ig[k]])}
        a, b = own.evaluate(c, FRACS[i_s[k]], int(rep[k])), big.evaluate(c, FRACS[i_s[k]], int(rep[k]))
        assert b.loss == a.loss and b.cost_s == pytest.approx(a.cost_s * expected[i_s[k]], rel=1e-12)
    loss, cost = big.lookup(big.rows_of([ic, ig]), i_s, rep)  # the vectorised path charges the same
    for k in range(40):
        r = big.evaluate({"x0": float(LEVELS[ic[k]]), "x1": float(LEVELS[ig[k]])}, FRACS[i_s[k]], int(rep[k]))
        assert (r.loss, r.cost_s) == (loss[k], cost[k])
    assert "costs charged for a 600-image pool" in big.describe()
    with pytest.raises(InvalidSettingError, match="at least the table's pool of 300"):
        sm.SvmMnistTabular(table=str(small_table), cost_pool=200)

    class Bad(sm.SvmMnistTabular):  # a plugin's cost_factors of the wrong shape: one line at setup
        def cost_factors(self, table):
            return np.array([1.0, 2.0])

    with pytest.raises(DataError, match="cost factors must be 3 positive finite numbers"):
        Bad(table=str(small_table))


@needs_full_table
def test_paper_pool_factors_on_the_committed_table():
    """The factors the variant protocol fabolas_svm_grid_pool50k charges on the committed table: above 1 (a fit's
    cost grows faster than linearly in n), 10.5 at s = 1/128 and 54 at s = 1."""
    b = sm.SvmMnistTabular(cost_pool=sm.PAPER_POOL_SIZE)
    f = b.cost_factors(b.table)
    assert f.shape == (8,) and (f > 1).all()
    assert f[0] == pytest.approx(10.48, abs=0.01) and f[-1] == pytest.approx(53.90, abs=0.01)


def test_tabular_errors(small_table, tmp_path):
    b = sm.SvmMnistTabular(table=str(small_table))
    with pytest.raises(InvalidConfigError, match="x1"):
        b.evaluate({"x0": 0.0, "x1": -10.01}, 0.5)
    with pytest.raises(InvalidConfigError, match="x1"):
        b.evaluate({"x0": 0.0, "x1": 11.0}, 0.5)
    with pytest.raises(InvalidConfigError, match="allowed values"):
        b.evaluate({"x0": 0.0, "x1": 0.0}, 0.3)
    with pytest.raises(InvalidConfigError, match="allowed values"):
        b.evaluate({"x0": 0.0, "x1": 0.0}, 0.3)
    with pytest.raises(DataError, match="missing"):
        sm.SvmMnistTabular(table=str(tmp_path / "none.h5"))


def test_tabular_refuses_partial_table(small_table, tmp_path):
    import h5py

    part = tmp_path / "partial.h5"
    part.write_bytes(small_table.read_bytes())
    with h5py.File(part, "a") as f:
        f.attrs["complete"] = False
    from benchsuite.data import sha256_file
    from benchsuite.tabular import sidecar

    sidecar(part).write_text(sha256_file(part) + "  partial.h5\n")  # verified, so that the completeness check speaks
    with pytest.raises(DataError, match="incomplete"):
        sm.SvmMnistTabular(table=str(part))
    assert sm.SvmMnistTabular(table=str(part), allow_partial=True).table.complete is False


def test_describe_prints_axes_and_size(small_table):
    text = sm.SvmMnistTabular(table=str(small_table)).describe()
    assert "log_C 3 levels" in text and "s 3 values ['1/4', '1/2', '1']" in text
    assert "(3, 3, 3, 2) = 54 entries" in text and "KiB" in text and "pool_size: 300" in text


# -- surrogate -------------------------------------------------------------------------
def test_rbf_leave_one_out_identity():
    rng = np.random.default_rng(0)
    x = rng.random((40, 3))
    y = np.sin(3 * x[:, 0]) + x[:, 1] * x[:, 2]
    full = CubicRbf(x, y, 1e-3)
    for i in (0, 17):
        keep = np.arange(40) != i
        direct = y[i] - CubicRbf(x[keep], y[keep], 1e-3)(x[i:i + 1])[0]
        assert full.loo_residuals()[i] == pytest.approx(direct, rel=1e-6, abs=1e-9)


def test_surrogate_tracks_table(small_table):
    b = sm.SvmMnistSurrogate(table=str(small_table))
    t = b.table
    mean, std, cost = b.predict(np.array([10.0, -10.0]), np.array([-10.0, 10.0]), np.array([0.5, 1.0]))
    assert abs(mean[0] - t.loss[2, 0, 1, :2].mean()) < 0.05 and abs(mean[1] - t.loss[0, 2, 2, 0]) < 0.05
    assert std[1] == 0.0 and np.all(cost > 0)
    r = b.evaluate({"x0": 3.3, "x1": -6.1}, 0.3, seed=4)
    assert 0.0 <= r.loss <= 1.0 and r.cost_s > 0
    assert b.evaluate({"x0": 3.3, "x1": -6.1}, 0.3, seed=4).loss == r.loss
    quiet = sm.SvmMnistSurrogate(table=str(small_table), noise=False)
    assert quiet.evaluate({"x0": 3.3, "x1": -6.1}, 0.3, seed=4).loss == pytest.approx(r.info["mean"])
    assert 0.0 <= b.test_loss({"x0": 10.0, "x1": -10.0}) <= 1.0
    with pytest.raises(InvalidConfigError):
        b.evaluate({"x0": 0.0, "x1": 0.0}, 0.1)  # below the table's smallest s (1/4 here)


# -- the committed full table -------------------------------------------------------------
@needs_full_table
def test_full_table_shape_and_provenance():
    t = sm.load_table()
    assert t.loss.shape == (20, 20, 8, 3) and t.test_loss.shape == (20, 20)
    np.testing.assert_allclose(t.axes[0], np.linspace(-10, 10, 20))
    np.testing.assert_allclose(t.fidelities, [2.0 ** -k for k in range(7, -1, -1)])
    assert t.attrs["pool_size"] == 5000 and t.attrs["n_val"] == 2000 and t.attrs["n_test"] == 2000
    assert t.attrs["sha256:mnist/train-images-idx3-ubyte.gz"] == sm.load_splits().sha256[sm.MNIST_FILES[0]]
    assert t.complete, "the committed table must be complete (finish it with snakemake -s tables/svm_mnist.smk)"
    assert np.isfinite(t.loss).all() and np.isfinite(t.test_loss).all() and (t.cost > 0).all()


@needs_full_table
def test_full_table_matches_fresh_live_evaluation():
    """A cheap grid point (s = 1/128, 39 images): the live code reproduces the stored replicate
    exactly, and a fresh random subset lands within the replicate spread."""
    t = sm.SvmMnistTabular().table
    ok = np.argwhere(t.loss[:, :, 0, :].mean(axis=2) < 0.5)
    assert ok.size > 0
    ic, ig = ok[len(ok) // 2]
    live = sm.SvmMnistLive()
    sp = live.splits
    idx = sm.stratified_sample(sp.y_pool, sm.subset_size(1 / 128), np.random.default_rng(sm.table_subset_seed(0, 1)))
    assert sm.fit_evaluate(sp, t.axes[0][ic], t.axes[1][ig], idx).val_error == t.loss[ic, ig, 0, 1]
    reps = t.loss[ic, ig, 0, :]
    fresh = [live.evaluate({"x0": float(t.axes[0][ic]), "x1": float(t.axes[1][ig])}, 1 / 128, seed=s).loss
             for s in (11, 12, 13)]
    spread = max(reps.max() - reps.min(), 0.02)
    assert reps.min() - 2 * spread <= np.mean(fresh) <= reps.max() + 2 * spread


def test_trilinear_matches_scipy():
    from scipy.interpolate import RegularGridInterpolator

    rng = np.random.default_rng(0)
    v = rng.random((4, 5, 6))
    axes = (np.linspace(0, 1, 4), np.linspace(0, 1, 5), np.linspace(0, sm.SURROGATE_S_WEIGHT, 6))
    u = rng.random((200, 3)) * [1, 1, sm.SURROGATE_S_WEIGHT]
    u[:3] = [[0, 0, 0], [1, 1, sm.SURROGATE_S_WEIGHT], [0.5, 1, 0]]  # corners and faces
    np.testing.assert_allclose(GridInterp(v, (1, 1, sm.SURROGATE_S_WEIGHT))(u), RegularGridInterpolator(axes, v)(u), atol=1e-12)


def test_surrogate_makes_no_new_extrema(small_table):
    """Between grid points the surrogate stays within the enclosing cell's table values."""
    b = sm.SvmMnistSurrogate(table=str(small_table), noise=False)
    t = b.table
    rng = np.random.default_rng(1)
    x0, x1 = rng.uniform(-10, 10, 500), rng.uniform(-10, 10, 500)
    s = np.exp2(rng.uniform(np.log2(t.fidelities[0]), 0, 500))
    mean, _, cost = b.predict(x0, x1, s)
    lo_t, hi_t = np.nanmin(t.loss[..., :2]), np.nanmax(t.loss[..., :2])
    assert mean.min() >= lo_t - 1e-12 and mean.max() <= hi_t + 1e-12
    tests = [b.test_loss({"x0": a, "x1": g}) for a, g in zip(x0[:100], x1[:100])]
    assert min(tests) >= t.test_loss.min() - 1e-12 and max(tests) <= t.test_loss.max() + 1e-12


@needs_full_table
def test_full_surrogate_does_not_beat_the_table():
    """Regression: the unlimited cubic RBF predicted test error 0 next to the cliff at log gamma -3."""
    b = sm.SvmMnistSurrogate(noise=False)
    g = np.linspace(-10, 10, 161)
    x0, x1 = (a.ravel() for a in np.meshgrid(g, g, indexing="ij"))
    mean, _, _ = b.predict(x0, x1, np.ones_like(x0))
    assert mean.min() >= b.table.loss[:, :, -1, 0].min() - 1e-12
    assert b.test_loss({"x0": 9.59, "x1": -3.05}) >= b.table.test_loss.min()
