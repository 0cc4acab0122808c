"""Tests of COMBO's problems: Ising sparsification, contamination control, pest control, MaxSAT."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchsuite.benchmarks.combo_problems import (ContaminationControl, IsingSparsification, PestControl,
                                                  all_spins, grid_edges)
from benchsuite.benchmarks.maxsat import WCNF, MaxSAT28, MaxSAT43, MaxSAT60, MaxSATEvaluator
from benchsuite.errors import DataError, InvalidConfigError, InvalidSettingError
from benchsuite.registry import get_benchmark


@pytest.fixture(scope="module")
def ising() -> IsingSparsification:
    return IsingSparsification()


def test_ising_grid_has_24_edges_and_couplings_in_range(ising: IsingSparsification) -> None:
    assert len(ising.space) == 24 and len(grid_edges(4, 4)) == 24
    mag = np.abs(ising.couplings)
    assert (mag >= 0.05).all() and (mag <= 5).all()
    assert len(set(np.sign(ising.couplings))) == 2  # both signs occur


def test_ising_kl_zero_when_all_edges_kept(ising: IsingSparsification) -> None:
    assert ising.test_loss({n: 1 for n in ising.space.names}) == pytest.approx(0.0, abs=1e-10)


def test_ising_kl_matches_direct_sum(ising: IsingSparsification) -> None:
    """The moment formula equals sum_z p(z) log(p(z)/q(z)) computed state by state."""
    spins = all_spins(16).astype(float)
    rng = np.random.default_rng(1)

    def log_pmf(j: np.ndarray) -> np.ndarray:
        e = np.zeros(len(spins))
        for (a, b), jab in zip(ising.edges, j):
            e += 2 * jab * spins[:, a] * spins[:, b]
        return e - np.log(np.exp(e - e.max()).sum()) - e.max()

    lp = log_pmf(ising.couplings)
    for _ in range(3):
        x = rng.integers(0, 2, 24)
        direct = float(np.sum(np.exp(lp) * (lp - log_pmf(ising.couplings * x))))
        assert ising.kl(x[None])[0] == pytest.approx(direct, rel=1e-9, abs=1e-12)
    # empty model: q uniform, so KL = 16 log 2 - H(p)
    assert ising.kl(np.zeros((1, 24)))[0] == pytest.approx(16 * np.log(2) + np.sum(np.exp(lp) * lp))


def test_ising_lambda_adds_l1_and_problem_seed_changes_instance() -> None:
    a = IsingSparsification(**{"lambda": 1e-2})
    b = IsingSparsification(**{"lambda": 0.0})
    x = {n: 1 for n in a.space.names}
    assert a.evaluate(x).loss == pytest.approx(b.evaluate(x).loss + 0.24)
    c = IsingSparsification(problem_seed=7)
    assert not np.allclose(c.couplings, b.couplings)
    np.testing.assert_array_equal(IsingSparsification(problem_seed=7).couplings, c.couplings)


def test_contamination_matches_naive_recursion() -> None:
    p = ContaminationControl(problem_seed=3, **{"lambda": 1e-4})
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 25)
    z = p.init_z.copy()
    loss = 0.0
    for i in range(25):
        z = p.lambdas[i] * (1 - x[i]) * (1 - z) + (1 - p.gammas[i] * x[i]) * z
        loss += x[i] - (np.mean(z < 0.1) - 0.95)
    loss += 1e-4 * x.sum()
    assert p.evaluate(p.space.from_codes(x)).loss == pytest.approx(loss)
    # batch evaluation agrees with one-by-one
    X = rng.integers(0, 2, (5, 25))
    np.testing.assert_allclose(p.evaluate_codes(X), [p.evaluate_codes(r[None])[0] for r in X])


def test_contamination_deterministic_and_seed_dependent() -> None:
    x = {f"x{i:02d}": i % 2 for i in range(25)}
    a = ContaminationControl(problem_seed=1)
    assert a.evaluate(x, seed=1).loss == a.evaluate(x, seed=2).loss == ContaminationControl(problem_seed=1).test_loss(x)
    assert a.evaluate(x).loss != ContaminationControl(problem_seed=2).evaluate(x).loss
    # preventing at every stage costs 25 and keeps almost every simulation below U
    assert a.test_loss({n: 1 for n in a.space.names}) == pytest.approx(25 - 25 * 0.05, abs=0.2)


def test_pest_control_matches_naive_loop() -> None:
    p = PestControl(problem_seed=5)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = rng.integers(0, 5, 25)
        beta = dict(zip(range(1, 5), [2 / 7, 3 / 7, 3 / 7, 5 / 7]))
        price = {1: 1.0, 2: 0.8, 3: 0.7, 4: 0.5}
        disc = {1: 0.2, 2: 0.3, 3: 0.3, 4: 0.0}
        tol = {1: 1 / 7, 2: 2.5 / 7, 3: 2 / 7, 4: 0.5 / 7}
        z = p.init_z.copy()
        total = 0.0
        for i in range(25):
            total += np.mean(z > 0.1)
            k = int(x[i])
            if k:
                r = 1 - (1 - p.control_u[i]) ** (1 / beta[k])
                z = (1 - r) * z
                beta[k] += tol[k] / 25
                total += price[k] * (1 - disc[k] / 25 * np.sum(x == k))
            else:
                z = p.spread[i] * (1 - z) + z
        assert p.evaluate(p.space.from_codes(x)).loss == pytest.approx(total)


def test_pest_control_space_and_validation() -> None:
    p = PestControl()
    assert len(p.space) == 25 and p.space.n_levels.tolist() == [5] * 25
    with pytest.raises(InvalidConfigError):
        p.evaluate({**{n: 0 for n in p.space.names}, "x00": 5})
    with pytest.raises(InvalidSettingError):
        PestControl(n_mc=0)
    # doing nothing lets the pests spread: worse than treating every station
    none = p.test_loss({n: 0 for n in p.space.names})
    treat = p.test_loss({n: 3 for n in p.space.names})
    assert none > 20 and treat < none


# ----------------------------------------------------------------------------- MaxSAT
def _naive_maxsat(cnf: WCNF, w: np.ndarray, x: np.ndarray) -> float:
    total = 0.0
    for wi, clause in zip(w, cnf.clauses):
        if any((x[abs(l) - 1] == 1) if l > 0 else (x[abs(l) - 1] == 0) for l in clause):
            total += wi
    return -total


@pytest.mark.parametrize("cls,n_vars,n_clauses", [(MaxSAT28, 28, 420), (MaxSAT43, 43, 1806), (MaxSAT60, 60, 698)])
def test_maxsat_vectorised_matches_naive(cls: type, n_vars: int, n_clauses: int) -> None:
    b = cls()
    assert len(b.space) == n_vars and len(b.cnf.clauses) == n_clauses
    assert b.weights.mean() == pytest.approx(0, abs=1e-9) and b.weights.std() == pytest.approx(1)
    X = np.random.default_rng(0).integers(0, 2, (4, n_vars))
    got = b.evaluate_codes(X)
    for row, g in zip(X, got):
        assert g == pytest.approx(_naive_maxsat(b.cnf, b.weights, row))
    assert b.evaluate(b.space.from_codes(X[0])).loss == pytest.approx(got[0])


def test_maxsat60_optimum_is_certified_and_matches_paper() -> None:
    b = MaxSAT60()
    # combo.txt Table 3: COMBO reaches -195.6527 +- 0 on wMaxSAT60
    assert b.optimum == pytest.approx(-195.6527, abs=1e-4)
    assert b.test_loss({n: 0 for n in b.space.names}) == pytest.approx(b.optimum)
    assert b.cnf.comments[0] == "optimum value = 38928"
    assert MaxSAT28().optimum is None


def test_wcnf_parser_and_errors(tmp_path) -> None:
    f = tmp_path / "t.wcnf"
    f.write_text("c test\np wcnf 3 3 100\n2 1 -2 0\n3 -1 0\n5 2 3 0\n")
    cnf = WCNF.read(f)
    ev = MaxSATEvaluator(cnf.n_vars, cnf.clauses, cnf.weights)
    for bits in itertools.product([0, 1], repeat=3):
        x = np.array(bits)
        assert ev(x[None])[0] == pytest.approx(-_naive_maxsat(cnf, cnf.weights, x))
    f.write_text("p wcnf 3 2\n1 1 0\n")
    with pytest.raises(DataError, match="2 clauses"):
        WCNF.read(f)
    f.write_text("p wcnf 3 1\n1 1 4 0\n")
    with pytest.raises(DataError, match="beyond"):
        WCNF.read(f)


def test_maxsat_missing_data_dir_raises_data_error(tmp_path) -> None:
    with pytest.raises(DataError, match="missing"):
        MaxSAT28(data_dir=str(tmp_path))


def test_problems_are_registered() -> None:
    for name in ("ising", "contamination", "pest_control", "maxsat28", "maxsat43", "maxsat60"):
        assert get_benchmark(name).name == name
