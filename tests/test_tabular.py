"""The generic tabular layer: one file layout, one benchmark class, integrity checks."""
from __future__ import annotations

import numpy as np
import pytest

from benchsuite.errors import DataError, InvalidConfigError
from benchsuite.space import Categorical, Float, Space
from benchsuite.tabular import TableSpec, TabularBenchmark, TaskArrays, open_table, sidecar, write_table

OPS = ("a", "b", "c")


def _task(seed: int = 0) -> TaskArrays:
    rng = np.random.default_rng(seed)
    loss = rng.random((3, 3, 4, 1, 3))
    n_seeds = rng.integers(2, 4, size=(3, 3, 4, 1)).astype(np.int8)
    loss[..., 2][n_seeds == 2] = np.nan  # unfilled replicate slots
    return TaskArrays(axes={"op1": np.array(OPS, dtype=object), "op2": np.array(OPS, dtype=object),
                            "x": np.linspace(0.0, 1.0, 4)},
                      fidelity_name="epochs", fidelities=np.array([200.0]),
                      objectives={"val": loss, "time": rng.random((3, 3, 4, 1, 3)) + 1.0}, n_seeds=n_seeds,
                      loss="val", cost="time", test_loss="test", extras={"test": rng.random((3, 3, 4))})


@pytest.fixture
def table_file(tmp_path):
    return write_table(tmp_path / "toy.h5", {"one": _task(0), "two": _task(1)}, {"source": "test"})


def _bench(path, task="one"):
    class Toy(TabularBenchmark):
        name = ""
        description = "toy"
        table_spec = TableSpec(str(path), task=task, rebuild="make toy")
        optimum_from = "test"

        def make_space(self, table):
            return Space([Categorical("o1", OPS), Categorical("o2", OPS), Float("x", 0.0, 1.0)])

    return Toy()


def test_seed_picks_one_replicate_never_the_mean(table_file):
    b = _bench(table_file)
    t = b.table
    cfg = {"o1": "c", "o2": "a", "x": 0.34}  # x snaps to level 1 (1/3)
    row = np.ravel_multi_index((2, 0, 1), t.shape)
    n = int(t.n_seeds.reshape(-1, 1)[row, 0])
    seen = {b.evaluate(cfg, seed=s).loss for s in range(12)}
    assert seen == set(t.loss.reshape(-1, 1, 3)[row, 0, :n].tolist())
    assert b.evaluate(cfg, seed=5).loss == t.loss.reshape(-1, 1, 3)[row, 0, 5 % n]
    assert b.evaluate(cfg, seed=5).cost_s == t.cost.reshape(-1, 1, 3)[row, 0, 5 % n]
    assert b.fidelity is None  # one tabulated fidelity: no fidelity axis
    assert b.test_loss(cfg) == t.test_loss[2, 0, 1] and b.optimum == t.test_loss.min()
    assert b.snap(cfg) == {"o1": "c", "o2": "a", "x": pytest.approx(1 / 3)}


def test_vectorised_lookup_matches_evaluate(table_file):
    b = _bench(table_file, "two")
    rng = np.random.default_rng(3)
    configs = [{"o1": OPS[i], "o2": OPS[j], "x": float(x)}
               for i, j, x in zip(rng.integers(0, 3, 40), rng.integers(0, 3, 40), rng.random(40))]
    seeds = rng.integers(0, 1000, 40)
    loss, cost = b.lookup(b.rows(configs), 0, seeds)
    for c, s, lv, cv in zip(configs, seeds, loss, cost):
        r = b.evaluate(c, seed=int(s))
        assert (r.loss, r.cost_s) == (lv, cv)


def test_bad_configs_are_one_line_errors(table_file):
    b = _bench(table_file)
    with pytest.raises(InvalidConfigError, match="o1"):
        b.evaluate({"o1": "zz", "o2": "a", "x": 0.0})
    with pytest.raises(InvalidConfigError, match="x"):
        b.evaluate({"o1": "a", "o2": "a", "x": 1.5})
    with pytest.raises(InvalidConfigError, match="no fidelity"):
        b.evaluate({"o1": "a", "o2": "a", "x": 0.5}, 100.0)


def test_corrupt_truncated_and_missing_tables(table_file, tmp_path):
    assert sidecar(table_file).read_text().split()[0] == open_table(table_file, "one").sha256
    data = bytearray(table_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad = tmp_path / "bad.h5"
    bad.write_bytes(bytes(data))
    sidecar(bad).write_text(sidecar(table_file).read_text())
    with pytest.raises(DataError, match="corrupt.*make toy"):
        _bench(bad)
    short = tmp_path / "short.h5"
    short.write_bytes(table_file.read_bytes()[:2000])
    with pytest.raises(DataError, match="no checksum file short.h5.sha256.*make toy"):  # never opened unverified
        _bench(short)
    from benchsuite.data import sha256_file

    sidecar(short).write_text(sha256_file(short) + "  short.h5\n")  # verified, but not a table: caught when read
    with pytest.raises(DataError, match="unreadable.*make toy"):
        _bench(short)
    with pytest.raises(DataError, match="missing.*make toy"):
        _bench(tmp_path / "nothing.h5")
    with pytest.raises(DataError, match="no task 'three'"):
        _bench(table_file, "three")


def test_describe_and_provenance(table_file):
    b = _bench(table_file)
    text = b.describe()
    assert "op1 3 levels" in text and "x 4 levels [0 .. 1]" in text and "no other fidelity" in text
    assert "source: test" in text
    assert b.provenance()["table_sha256"] == open_table(table_file, "one").sha256
