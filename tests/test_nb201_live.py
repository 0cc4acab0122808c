"""The live NAS-Bench-201 benchmark: tiny trainings on real CIFAR-10 images through the harness."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchsuite.architectures import nb201
from benchsuite.errors import InvalidConfigError, InvalidSettingError
from benchsuite.registry import get_benchmark, make_benchmark

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
HAVE_CIFAR = any((SHARED / f).exists() for f in ("cifar10_jpeg/cifar10_jpgs.tar.gz", "cifar10/cifar-10-python.tar.gz"))
needs_cifar = pytest.mark.skipif(not HAVE_CIFAR, reason=f"no CIFAR-10 archive in {SHARED}")
BEST = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
ZERO = {n: "none" for n in nb201.EDGE_NAMES}
TINY = {"data_dir": str(SHARED), "channels": 4, "cells_per_stage": 1, "n_train": 256, "n_val": 256,
        "n_test": 256, "epochs": 2, "batch_size": 128, "device": "cpu", "threads": 1}


@pytest.fixture(scope="module")
def bench():
    pytest.importorskip("torch")
    return make_benchmark("nb201_live", TINY)


def test_registered_with_epochs_fidelity_and_the_shared_space():
    cls = get_benchmark("nb201_live")
    assert cls.kind == "live" and cls.requirements.gpu == "optional"
    b = make_benchmark("nb201_live")  # defaults: nothing is loaded or trained yet
    assert (b.fidelity.name, b.fidelity.low, b.fidelity.high, b.fidelity.full) == ("epochs", 1, 200, 200)
    assert b.space is nb201.cell_space()
    assert (b.settings["channels"], b.settings["cells_per_stage"], b.settings["batch_size"]) == (16, 5, 256)
    ts = b.train_settings(200)
    assert (ts.optimizer, ts.nesterov, ts.momentum, ts.lr, ts.weight_decay, ts.schedule, ts.augment) == (
        "sgd", True, 0.9, 0.1, 5e-4, "cosine", True)


def test_bad_inputs_raise_before_training():
    b = make_benchmark("nb201_live", {"epochs": 3})
    with pytest.raises(InvalidConfigError, match=r"\|op~0\|"):
        b.evaluate(BEST.replace("nor_conv_1x1", "conv_5x5"), 1)
    with pytest.raises(InvalidConfigError):
        b.evaluate(BEST, 4)  # above the full fidelity
    with pytest.raises(InvalidConfigError):
        b.evaluate({"edge_1_0": "none"}, 1)
    with pytest.raises(InvalidSettingError):
        make_benchmark("nb201_live", {"channels": 0})


@needs_cifar
def test_evaluate_trains_and_is_deterministic(bench):
    r1 = bench.evaluate(BEST, 1, seed=3)
    r2 = bench.evaluate(nb201.from_arch_string(BEST), 1.2, seed=3)  # a dict, and a fidelity that rounds to 1
    assert not r1.failed and 0.0 <= r1.loss <= 1.0 and r1.cost_s > 0
    assert r1.loss == r2.loss and r1.info["curve"][0]["train_loss"] == r2.info["curve"][0]["train_loss"]
    assert len(r1.info["curve"]) == 1 and r1.info["epochs"] == 1 and r1.info["device"] == "cpu"
    assert r1.info["arch"] == BEST and r1.info["connected"]
    assert r1.info["n_params"] == nb201.param_count(nb201.from_arch_string(BEST), 10, 4, 1)
    full = bench.evaluate(BEST, None, seed=3)  # None = full fidelity = the `epochs` setting
    assert full.info["epochs"] == 2 and len(full.info["curve"]) == 2 and full.info["curve"][-1]["lr"] == 0.0


@needs_cifar
def test_zero_network_trains_to_chance(bench):
    r = bench.evaluate(ZERO, 1, seed=0)
    assert not r.failed and r.info["connected"] is False and r.info["canonical"] == "0"
    # a constant prediction on a class-stratified validation set: one class right, 9 of 10 wrong
    assert 0.88 <= r.loss <= 0.92


@needs_cifar
def test_divergence_is_a_failed_trial_not_an_exception():
    pytest.importorskip("torch")
    b = make_benchmark("nb201_live", {**TINY, "lr": 1e6})
    r = b.evaluate(BEST, 1, seed=0)
    assert r.failed and math.isnan(r.loss) and "diverged" in r.info["error"] and r.cost_s > 0


@needs_cifar
def test_test_loss_is_cached_per_configuration(bench, monkeypatch):
    t1 = bench.test_loss(BEST)
    assert 0.0 <= t1 <= 1.0

    def boom(*args, **kwargs):
        raise AssertionError("test_loss trained again")

    monkeypatch.setattr(bench, "_train", boom)
    assert bench.test_loss(nb201.from_arch_string(BEST)) == t1
    prov = bench.provenance()
    assert len(prov["data_sha256"]) == 64 and prov["split"] == "nb201"
    assert prov["train_settings"]["lr"] == 0.1 and prov["network"]["channels"] == 4


@pytest.mark.gpu
@needs_cifar
def test_one_full_size_epoch_on_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    b = make_benchmark("nb201_live", {"data_dir": str(SHARED), "device": "cuda", "epochs": 200})
    r = b.evaluate(BEST, 1, seed=0)
    assert not r.failed and r.info["device"].startswith("cuda") and r.info["epochs_run"] == 1
    assert r.info["n_params"] == 1_073_466
    assert r.loss < 0.8  # one epoch on 25,000 images learns something
