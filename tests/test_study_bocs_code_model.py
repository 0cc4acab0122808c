"""studies/bocs_code_model.py: its BOCS-code details do what its docstring says (the study's numbers rest on them)."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def study(load_script):
    return load_script("studies/bocs_code_model.py")


def _data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = (rng.random((12, 30)) < 0.5).astype(float)
    X[:, [3, 17]] = 0.0  # never active in the data
    y = 2.0 + X[:, 0] - 3.0 * X[:, 5] + 0.1 * rng.standard_normal(12)
    return X, y


def test_zero_columns_get_coefficient_zero_and_join_when_active(study) -> None:
    rng = np.random.default_rng(0)
    X, y = _data(rng)
    model = study.CodeRegression(np.random.default_rng(1), zero=True)
    beta = model.fit(X, y, 50)
    assert beta.shape == (30,) and beta[3] == 0.0 and beta[17] == 0.0
    assert np.count_nonzero(beta) == 28
    X[0, 3] = 1.0  # the column has data now: it is fitted (warm chain, the other columns' state kept)
    beta = model.fit(X, y, 5)
    assert beta[3] != 0.0 and beta[17] == 0.0
    ours = study.CodeRegression(np.random.default_rng(1)).fit(X, y, 50)  # without the detail: every column drawn
    assert np.count_nonzero(ours) == 30


def test_uncentred_model_keeps_the_intercept_at_the_mean(study) -> None:
    X, y = _data(np.random.default_rng(2))
    model = study.CodeRegression(np.random.default_rng(3), uncentred=True)
    beta = model.fit(X, y, 30)
    assert model.intercept(beta) == pytest.approx(y.mean())
    centred = study.CodeRegression(np.random.default_rng(3))
    b = centred.fit(X, y, 30)
    assert centred.intercept(b) == pytest.approx(y.mean() - X.mean(axis=0) @ b)


def test_fresh_chain_restarts_every_fit(study) -> None:
    X, y = _data(np.random.default_rng(4))
    a = study.CodeRegression(np.random.default_rng(5), fresh=40)
    first = a.fit(X, y, 1)
    b = study.CodeRegression(np.random.default_rng(5), fresh=40)
    assert np.array_equal(first, b.fit(X, y, 1))  # the same 40 sweeps from the same start
    assert not np.array_equal(a.fit(X, y, 1), first)  # a new chain, new draws


def test_code_annealing_returns_each_chains_best(study) -> None:
    rng = np.random.default_rng(6)
    w = rng.standard_normal(20)

    def f(codes):
        return np.atleast_2d(codes) @ w

    n_levels = np.full(20, 2)
    best, fbest = study.code_anneal(f, np.zeros((5, 20), dtype=int), n_levels, np.ones(20, bool), rng)
    assert best.shape == (5, 20) and np.allclose(f(best), fbest)
    # 270 steps of a greedy descent on a linear function of 20 bits end at its minimum
    assert np.allclose(fbest, np.minimum(w, 0).sum())
