"""Hyperband: bracket sizes of Li et al. (2017), successive halving, conformance."""
import math
from collections import Counter

import pytest

from benchsuite.benchmark import Fidelity
from benchsuite.registry import make_benchmark
from benchsuite.runner import run
from benchsuite.space import Float, Space
from benchsuite.testing import check_optimizer
from benchsuite.optimizers.hyperband import Hyperband


def test_conformance():
    check_optimizer(Hyperband, budget=15)


def test_first_bracket_follows_li_et_al():
    # R / r_min = 81, eta = 3: s_max = 4, bracket s=4 runs 81 configs at 1/81, 27 at 1/9... (Li et al. Table 1)
    space = Space([Float("x", 0, 1)])
    hb = Hyperband(space, Fidelity("s", 1 / 81, 1.0, log=True), 0)
    assert hb.s_max == 4
    sizes = [math.ceil(hb.budget / 81 * 3**s / (s + 1)) for s in range(4, -1, -1)]
    assert sizes == [81, 34, 15, 8, 5]


def test_successive_halving_on_branin_mf():
    bench = make_benchmark("branin_mf")  # r_min = 1/128: s_max = 4, first bracket 81 configs at 1/81
    rows = run(bench, Hyperband, seed=0, budget_evals=81 + 27 + 9 + 3 + 1, include_overhead=False).rows
    fids = Counter(round(r["fidelity"], 6) for r in rows)
    assert fids == {round(1 / 81, 6): 81, round(1 / 27, 6): 27, round(1 / 9, 6): 9, round(1 / 3, 6): 3, 1.0: 1}
    # the survivors of rung 0 are its 27 best configurations
    rung0 = sorted((r for r in rows if r["fidelity"] < 0.02), key=lambda r: r["loss"])
    rung1 = {r["config"] for r in rows if 0.02 < r["fidelity"] < 0.05}
    assert rung1 == {r["config"] for r in rung0[:27]}
    assert rows[-1]["fidelity"] == 1.0 and rows[-1]["incumbent"] == rows[-1]["config"]
    # fabolas.txt Sec. 4: the incumbent is the best on the full dataset, so none before the first full-size result
    assert all(r["incumbent_test_loss"] is None for r in rows[:-1])
    anyfid = run(bench, Hyperband, seed=0, budget_evals=5, include_overhead=False,
                 optimizer_settings={"incumbent": "any"}).rows
    assert all(r["incumbent_test_loss"] is not None for r in anyfid)


def test_discrete_fidelity_values_are_snapped():
    space = Space([Float("x", 0, 1)])
    fid = Fidelity("s", 1 / 128, 1.0, log=True, values=tuple(2.0**-k for k in range(8)))
    hb = Hyperband(space, fid, 0)
    assert [hb._resource(4, i) for i in range(5)] == [1 / 64, 1 / 32, 1 / 8, 1 / 4, 1.0]


@pytest.mark.parametrize("workers", [1, 4])
def test_runs_with_parallel_workers(workers):
    rows = run(make_benchmark("branin_mf"), Hyperband, seed=1, budget_evals=300, workers=workers,
               include_overhead=False).rows
    assert len(rows) == 300 and any(r["fidelity"] == 1.0 for r in rows)
