"""NASBOT's live objectives: UCI data, layer-graph compilation, harness iterations, benchmarks."""
import math
import urllib.request

import numpy as np
import pytest
import torch

from benchsuite import data
from benchsuite.architectures.layer_graph import LayerGraph
from benchsuite.architectures.layer_graph_space import LayerGraphSpace
from benchsuite.architectures.layer_graph_torch import build_network
from benchsuite.datasets import ArraySplits, split_indices
from benchsuite.errors import DataError, InvalidConfigError, InvalidSettingError
from benchsuite.registry import get_benchmark
from benchsuite.training import TrainSettings, count_parameters, step_lr, train
from benchsuite.uci import split_rows, uci_splits

SMALL = {"max_num_layers": 10, "max_num_units_per_layer": 32}
TINY_MLP = {"iterations": 30, "eval_every": 10, "n_train": 600, "n_val": 300, "lr": 1e-2, "threads": 1, **SMALL}


def _quiet(_msg: str) -> None:
    pass


# -- UCI data ----------------------------------------------------------------------------------
def test_naval_split_is_standardised_so_a_constant_scores_about_one():
    s = uci_splits("naval")
    n = len(s.y_train) + len(s.y_val) + len(s.y_test)
    assert n == 11934 and s.x_train.shape[1] == 16
    assert abs(len(s.y_train) / n - 0.6) < 1e-3 and abs(len(s.y_val) / n - 0.2) < 1e-3
    assert abs(float(s.y_train.mean())) < 1e-4 and abs(float(s.y_train.std()) - 1) < 1e-4
    varying = s.x_train.std(axis=0) > 1e-3  # naval has two constant inputs
    assert varying.sum() == 14 and np.all(np.abs(s.x_train[:, ~varying]) < 1e-6)
    assert np.allclose(s.x_train.mean(axis=0), 0, atol=1e-4)
    assert np.allclose(s.x_train.std(axis=0)[varying], 1, atol=1e-4)
    for y in (s.y_val, s.y_test):  # the best constant (the training mean, 0) scores about 1
        assert 0.9 < float(np.mean(y.astype(np.float64) ** 2)) < 1.1
    assert s.meta["target_std"] > 0 and s.sha256 == data.MANIFEST["uci/naval/data.txt"].sha256


def test_split_rows_is_a_fixed_partition():
    a = split_rows(1000)
    b = split_rows(1000)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert sorted(np.concatenate(a).tolist()) == list(range(1000))
    assert [len(x) for x in a] == [600, 200, 200]
    assert not np.array_equal(split_rows(1000, seed=1)[0], a[0])


def test_corrupt_uci_file_is_a_data_error(tmp_path):
    src = data.data_file("uci/naval/data.txt")
    dst = tmp_path / "uci" / "naval" / "data.txt"
    dst.parent.mkdir(parents=True)
    raw = bytearray(src.read_bytes())
    raw[10] = ord("7") if raw[10] != ord("7") else ord("8")
    dst.write_bytes(bytes(raw))
    with pytest.raises(DataError, match="wrong checksum"):
        uci_splits("naval", tmp_path)


@pytest.mark.parametrize("name", ["slice", "news"])
def test_missing_dataset_is_one_data_error_line(tmp_path, monkeypatch, name):
    def offline(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)  # never touch the network in tests
    with pytest.raises(DataError) as err:
        uci_splits(name, tmp_path)
    msg = str(err.value)
    assert "\n" not in msg and "archive.ics.uci.edu" in msg
    assert ("slice_localization_data.zip" if name == "slice" else "OnlineNewsPopularity.zip") in msg


def _slice_zip(path, n=40):
    import zipfile

    path.parent.mkdir(parents=True, exist_ok=True)
    rows = ["patientId," + ",".join(f"value{i}" for i in range(3)) + ",reference"]
    rows += [f"{k},{k * 0.1},{k * 0.2},{k * 0.3},{k}" for k in range(n)]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("slice_localization_data.csv", "\n".join(rows) + "\n")
    return path


def test_an_unpinned_file_is_refused_unless_the_user_allows_it(tmp_path, monkeypatch):
    """Issue 26 item 3: the slice archive (no published sha256) used to be read with a warning only."""
    from benchsuite import uci

    _slice_zip(tmp_path / uci.SLICE_FILE)
    monkeypatch.delenv(uci.ALLOW_UNPINNED_ENV, raising=False)
    with pytest.raises(DataError) as err:
        uci_splits("slice", tmp_path)
    msg = str(err.value)
    assert "\n" not in msg and "no pinned sha256" in msg and f"{uci.ALLOW_UNPINNED_ENV}=1" in msg
    monkeypatch.setenv(uci.ALLOW_UNPINNED_ENV, "1")
    splits = uci_splits("slice", tmp_path)
    assert sum(len(y) for y in (splits.y_train, splits.y_val, splits.y_test)) == 40


def test_an_archive_member_is_read_with_a_size_limit(tmp_path, monkeypatch):
    from benchsuite import uci

    path = _slice_zip(tmp_path / "s.zip", n=5000)
    monkeypatch.setattr(uci, "MAX_MEMBER_BYTES", 1000)
    with pytest.raises(DataError, match="bytes uncompressed, more than the 1,000"):
        uci._zip_csvs(path, lambda base: True)
    # a header that understates the size (a zip bomb) is not trusted: zipfile stops at it and the CRC fails
    import zipfile

    with zipfile.ZipFile(path) as z:
        z.getinfo("slice_localization_data.csv").file_size = 10
        with pytest.raises(zipfile.BadZipFile):
            uci._read_member(z, "slice_localization_data.csv", path, 1000)


def test_unknown_dataset_is_a_setting_error():
    with pytest.raises(InvalidSettingError, match="unknown"):
        uci_splits("iris")


# -- compiling layer graphs ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_random_graphs_compile_and_round_trip(kind):
    space = LayerGraphSpace(kind, **SMALL)
    rng = np.random.default_rng(7)
    shape, n_out = (16, 1) if kind == "mlp" else ((3, 16, 16), 10)
    x = torch.randn(3, 16) if kind == "mlp" else torch.randn(3, 3, 16, 16)
    for _ in range(4):
        g = space.sample(rng)
        m = build_network(g, shape, n_out)
        m.eval()
        with torch.no_grad():
            y = m(x)
        assert y.shape == (3, n_out) and torch.isfinite(y).all()
        again = build_network(LayerGraph.from_json(g.to_json()), shape, n_out)
        assert count_parameters(again) == count_parameters(m) > 0
        assert [tuple(p.shape) for p in again.parameters()] == [tuple(p.shape) for p in m.parameters()]


def _mlp(labels, units, edges):
    return LayerGraph("mlp", tuple(labels), tuple(units), tuple(edges))


def test_mlp_concatenates_parents_and_crelu_doubles_the_width():
    g = _mlp(("ip", "relu", "crelu", "tanh", "linear", "linear", "op"), (None, 6, 5, 4, None, None, None),
             ((0, 1), (0, 2), (1, 3), (2, 3), (1, 4), (3, 5), (4, 6), (5, 6)))
    m = build_network(g, 3, 1)
    # tanh sees relu (6) + crelu (2 * 5) = 16 inputs; two 1-output decision layers, a final 1 -> 1 dense
    expected = (3 * 6 + 6) + (3 * 5 + 5) + (16 * 4 + 4) + (6 + 1) + (4 + 1) + (1 + 1)
    assert count_parameters(m) == expected
    assert m(torch.randn(2, 3)).shape == (2, 1)


def test_cnn_with_two_softmax_layers_returns_both_heads_when_training():
    g = LayerGraph("cnn", ("ip", "conv3", "res5", "max-pool", "res3", "fc", "softmax", "softmax", "op"),
                   (None, 8, 16, None, 8, 16, None, None, None),
                   ((0, 1), (1, 2), (1, 3), (2, 3), (3, 4), (4, 5), (5, 6), (4, 7), (6, 8), (7, 8)),
                   (None, 1, 1, 2, 2, None, None, None, None))
    m = build_network(g, (3, 16, 16), 10)
    out = m(torch.randn(4, 3, 16, 16))
    assert isinstance(out, tuple) and len(out) == 2 and all(o.shape == (4, 10) for o in out)
    m.eval()
    with torch.no_grad():
        p = m(torch.randn(4, 3, 16, 16)).exp().sum(dim=1)
    assert torch.allclose(p, torch.ones(4), atol=1e-5)  # log of the averaged softmax probabilities


def test_cnn_parents_of_different_image_sizes_are_rejected():
    g = LayerGraph("cnn", ("ip", "conv3", "conv3", "conv3", "softmax", "op"), (None, 8, 8, 8, None, None),
                   ((0, 1), (1, 2), (1, 3), (2, 3), (3, 4), (4, 5)), (None, 1, 2, 1, None, None))
    with pytest.raises(InvalidConfigError, match="different image sizes"):
        build_network(g, (3, 16, 16), 10)


# -- the harness's iteration mode ------------------------------------------------------------------
def _toy(n=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = (x @ rng.normal(size=d)).astype(np.float32)
    k = int(0.75 * n)
    return ArraySplits(x[:k], y[:k], x[k:], y[k:])


def _lin():
    return torch.nn.Linear(4, 1)


def test_iterations_mode_takes_exactly_that_many_steps_and_scores_every_k():
    st = TrainSettings(epochs=1, iterations=25, eval_every=10, batch_size=16, optimizer="sgd", lr=0.05, momentum=0.0,
                       nesterov=False, weight_decay=0.0, schedule="constant", task="regression",
                       regression_loss="l1", threads=1)
    out = train(_lin, _toy(), st, seed=3, progress=_quiet)
    assert not out.failed and out.iterations_run == 25
    assert [c["iteration"] for c in out.curve] == [10, 20, 25]  # 90 rows / 16 = 6 batches a pass, 25 steps
    assert out.best_val_loss == min(c["val_loss"] for c in out.curve)
    again = train(_lin, _toy(), st, seed=3, progress=_quiet)
    assert [c["val_loss"] for c in again.curve] == [c["val_loss"] for c in out.curve]


def test_step_schedule_and_bad_settings():
    assert [step_lr(1.0, s, (10, 20), (0.1, 0.01)) for s in (0, 9, 10, 19, 20, 99)] == [1.0, 1.0, 0.1, 0.1, 0.01,
                                                                                        0.01]
    st = TrainSettings(epochs=1, iterations=12, eval_every=4, batch_size=16, lr=1.0, schedule="step",
                       lr_milestones=(4, 8), lr_factors=(0.5, 0.25), task="regression", threads=1)
    out = train(_lin, _toy(), st, seed=0, progress=_quiet)
    assert [c["lr"] for c in out.curve] == [0.5, 0.25, 0.25]
    for bad in ({"schedule": "step"}, {"lr_milestones": (3,), "lr_factors": ()}, {"eval_every": 5},
                {"iterations": 0}, {"regression_loss": "huber"}):
        kw = {"epochs": 1, **bad}
        if "eval_every" in bad:
            kw["iterations"] = None
        with pytest.raises(InvalidSettingError):
            TrainSettings(**kw)


def test_several_outputs_train_on_the_sum_of_their_losses():
    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(4, 1), torch.nn.Linear(4, 1)

        def forward(self, x):
            return (self.a(x), self.b(x)) if self.training else (self.a(x) + self.b(x)) / 2

    st = TrainSettings(epochs=1, iterations=6, batch_size=90, lr=0.0, schedule="constant", task="regression",
                       threads=1)
    out = train(Two, _toy(), st, seed=1, progress=_quiet)
    assert not out.failed and out.curve[0]["train_loss"] > 0
    # with lr 0 the training loss is the sum of the two heads' MSEs on the full batch
    with torch.random.fork_rng(devices=[]):
        from benchsuite.training import _seeds
        torch.default_generator.manual_seed(_seeds(1)[0])
        m = Two()
    d = _toy()
    x, y = torch.from_numpy(d.x_train), torch.from_numpy(d.y_train)
    xs = (x - torch.as_tensor(d.mean, dtype=torch.float32)) / torch.as_tensor(d.std, dtype=torch.float32)
    with torch.no_grad():
        want = sum(float(torch.mean((h(xs).reshape(-1) - y) ** 2)) for h in (m.a, m.b))
    assert math.isclose(out.curve[0]["train_loss"], want, rel_tol=1e-4)


# -- the benchmarks ---------------------------------------------------------------------------------
def test_nasbot_cifar_split_is_40k_10k():
    tr, va = split_indices("nasbot")
    assert len(tr) == 40_000 and len(va) == 10_000 and not np.intersect1d(tr, va).size


def test_mlp_naval_tiny_training_is_seeded_and_caches_the_test_mse():
    b = get_benchmark("nasbot_mlp_naval")(**TINY_MLP)
    assert b.fidelity is not None and b.fidelity.low == 6 and b.fidelity.high == 30
    g = b.space.sample(np.random.default_rng(0))
    r = b.evaluate(g, None, seed=5)
    assert not r.failed and math.isfinite(r.loss) and r.cost_s > 0
    assert [c["iteration"] for c in r.info["curve"]] == [10, 20, 30]
    assert r.loss == min(c["val_loss"] for c in r.info["curve"])  # the authors' best-of-scorings
    assert b.test_loss(g) == r.info["test_loss"]
    assert b.evaluate(g, None, seed=5).loss == r.loss
    low = b.evaluate(g, 10, seed=5)
    assert low.info["iterations"] == 10 and "test_loss" not in low.info
    prov = b.provenance()
    assert prov["sizes"] == {"train": 600, "val": 300, "test": 2387} and prov["train_settings"]["lr"] == 1e-2


def test_diverging_training_is_a_failed_trial():
    b = get_benchmark("nasbot_mlp_naval")(**{**TINY_MLP, "lr": 1e8, "regression_loss": "mse"})
    g = b.space.sample(np.random.default_rng(1))
    r = b.evaluate(g, None, seed=0)
    assert r.failed and math.isnan(r.loss) and "diverged" in r.info["error"]


def test_missing_data_stops_prepare_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: (_ for _ in ()).throw(OSError("offline")))
    b = get_benchmark("nasbot_mlp_news")(data_dir=str(tmp_path), **SMALL)
    with pytest.raises(DataError) as err:
        b.prepare()
    assert "\n" not in str(err.value) and "OnlineNewsPopularity.zip" in str(err.value)
