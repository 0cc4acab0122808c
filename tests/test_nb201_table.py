"""The NAS-Bench-201 table and its three tabular benchmarks."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from benchsuite.architectures import nb201
from benchsuite.errors import DataError, InvalidConfigError
from benchsuite.registry import make_benchmark
from benchsuite.tabular import sidecar

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
BEST = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_3x3~2|"
NAMES = ("nb201_cifar10", "nb201_cifar100", "nb201_imagenet16")
TASKS = ("cifar10", "cifar100", "imagenet16")
needs_source = pytest.mark.skipif(not (SHARED / "nas_bench_201" / "per_seed_valid_runtime.pkl").exists(),
                                  reason=f"NAS-Bench-201 source files not in {SHARED}")


@pytest.fixture(scope="module")
def source():
    from benchsuite.architectures.nb201_source import read_source

    return read_source(str(SHARED))


@needs_source
@pytest.mark.parametrize("name,task", list(zip(NAMES, TASKS)))
def test_table_holds_the_source_rows(source, name, task):
    """Every architecture's seeds, runtime and test accuracy sit at that architecture's cell."""
    b = make_benchmark(name)
    rng = np.random.default_rng(0)
    src = source[task]
    for i in [0, 1, 15624, *rng.integers(0, nb201.N_CELLS, 200).tolist()]:
        s = source["arch_strings"][i]
        n = int(src["n_seeds"][i])
        got = [b.evaluate(s, seed=k) for k in range(n)]
        assert [r.loss for r in got] == src["val_loss"][i, :n].tolist()  # seed k -> replicate k % n
        assert b.evaluate(s, seed=n + 1).loss == src["val_loss"][i, (n + 1) % n]
        assert all(r.cost_s == src["runtime"][i] for r in got)
        assert b.test_loss(s) == pytest.approx(1 - src["test_accuracy"][i] / 100, abs=1e-12)
        assert int(b.table.arrays["arch_index"].reshape(-1)[b.row(s)]) == i


@pytest.mark.parametrize("name,best_acc", [("nb201_cifar10", 94.37), ("nb201_cifar100", 73.51),
                                           ("nb201_imagenet16", 47.31)])
def test_known_optimum_is_the_published_best_test_accuracy(name, best_acc):
    b = make_benchmark(name)
    assert 100 * (1 - b.optimum) == pytest.approx(best_acc, abs=0.005)
    if name == "nb201_cifar10":
        assert b.test_loss(BEST) == b.optimum
    assert b.fidelity is None and b.kind == "tabular"


def test_dict_and_string_are_the_same_cell():
    b = make_benchmark("nb201_cifar10")
    cfg = nb201.from_arch_string(BEST)
    assert b.evaluate(cfg, seed=4) == b.evaluate(BEST, seed=4)
    assert b.query(BEST, None, 4) == (b.evaluate(BEST, seed=4).loss, b.evaluate(BEST, seed=4).cost_s)
    rng = np.random.default_rng(1)
    configs = [b.space.sample(rng) for _ in range(100)]
    seeds = rng.integers(0, 10**6, 100)
    loss, cost = b.lookup(b.rows(configs), 0, seeds)
    assert loss.tolist() == [b.evaluate(c, seed=int(s)).loss for c, s in zip(configs, seeds)]


def test_bad_cells_are_one_line_errors():
    b = make_benchmark("nb201_cifar10")
    with pytest.raises(InvalidConfigError, match="unknown operation 'conv_5x5'"):
        b.evaluate(BEST.replace("nor_conv_1x1", "conv_5x5"))
    with pytest.raises(InvalidConfigError, match="edge_3_2"):
        b.evaluate({**nb201.from_arch_string(BEST), "edge_3_2": "max_pool"})
    with pytest.raises(InvalidConfigError, match="no fidelity"):
        b.evaluate(BEST, 12.0)
    # the fast paths stay strict: an extra key, or one bad cell in a batch
    with pytest.raises(InvalidConfigError, match="extra"):
        b.query({**nb201.from_arch_string(BEST), "extra": 1})
    good = nb201.from_arch_string(BEST)
    with pytest.raises(InvalidConfigError, match="edge_1_0"):
        b.rows([good, {**good, "edge_1_0": "conv"}])


def test_zero_networks_score_chance_level():
    """A cell whose output is cut off from the input: the table has its (chance-level) numbers."""
    cut = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|none~0|none~1|none~2|"
    assert not nb201.is_connected(nb201.from_arch_string(cut))
    for name, chance in zip(NAMES, (0.9, 0.99, 1 - 1 / 120)):
        r = make_benchmark(name).evaluate(cut, seed=0)
        assert r.loss == pytest.approx(chance, abs=0.02) and r.cost_s > 0


def test_provenance_and_describe():
    b = make_benchmark("nb201_cifar100")
    p = b.provenance()
    assert p["table_task"] == "cifar100" and len(p["table_sha256"]) == 64
    assert sidecar(b.table.path).read_text().split()[0] == p["table_sha256"]
    text = b.describe()
    assert "only final numbers (200 epochs)" in text and "sha256" in text and "46875 entries" in text
    assert "sha256:nas_bench_201/per_seed_valid_runtime.pkl" in b.table.attrs


def test_corrupt_table_says_how_to_rebuild(tmp_path):
    b = make_benchmark("nb201_cifar10")
    bad = tmp_path / "nb.h5"
    data = bytearray(b.table.path.read_bytes())
    data[-100] ^= 0x01
    bad.write_bytes(bytes(data))
    shutil.copy(sidecar(b.table.path), sidecar(bad))
    with pytest.raises(DataError, match="corrupt.*nb201_table"):
        make_benchmark("nb201_cifar10", {"table": str(bad)})


@needs_source
def test_build_is_reproducible(tmp_path, load_script):
    """Rebuilding from the shared files gives the committed arrays."""
    mod = load_script("tables/nas_bench_201/build.py", "nb201_build")
    out = mod.build(tmp_path / "t.h5", str(SHARED))
    for name in NAMES:
        a, c = make_benchmark(name).table, make_benchmark(name, {"table": str(out)}).table
        for key in ("val_error", "cost", "test_error", "n_seeds", "size_in_mb", "n_params", "arch_index"):
            np.testing.assert_array_equal(a.arrays[key], c.arrays[key])
