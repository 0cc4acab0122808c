"""BOCS-SDP's acquisition: the SDP relaxation of a binary quadratic and its randomized rounding."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from benchsuite.optimizers.acquisition.sdp import (homogenised_matrix, minimise_binary_quadratic,
                                                   round_hyperplanes, solve_relaxation)
from benchsuite.optimizers.bocs import BOCS
from benchsuite.optimizers.random_search import RandomSearch

from benchsuite.errors import InvalidSettingError
from benchsuite.registry import make_benchmark
from benchsuite.runner import run
from benchsuite.space import Binary, Ordinal, Space


def _problem(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    A = np.triu(rng.standard_normal((n, n)), 1)
    A = 0.5 * (A + A.T)
    b = rng.standard_normal(n)
    X = np.array(list(itertools.product([0, 1], repeat=n)))
    return A, b, X, np.einsum("pi,ij,pj->p", X, A, X) + X @ b


def test_the_homogenised_form_is_the_quadratic_up_to_a_constant() -> None:
    A, b, X, f = _problem(7, 0)
    M = homogenised_matrix(A, b)
    z = np.hstack([2 * X - 1, np.ones((len(X), 1))])
    const = f - np.einsum("pi,ij,pj->p", z, M, z)
    assert np.ptp(const) < 1e-12
    with pytest.raises(ValueError, match="zero diagonal"):
        homogenised_matrix(A + np.eye(7), b)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_relaxation_is_solved_to_optimality_and_bounds_the_minimum(seed: int) -> None:
    A, b, X, f = _problem(11, seed)
    M = homogenised_matrix(A, b)
    V, value = solve_relaxation(M, np.random.default_rng(seed))
    assert np.allclose(np.linalg.norm(V, axis=0), 1.0)
    # dual certificate: lambda_i = M_ii - |g_i| makes M - diag(lambda) PSD with no duality gap
    g = V @ M - np.diag(M) * V
    lam = np.diag(M) - np.linalg.norm(g, axis=0)
    assert np.linalg.eigvalsh(M - np.diag(lam)).min() > -1e-5
    assert abs(lam.sum() - value) < 1e-6 * max(1.0, abs(value))
    z = np.hstack([2 * X[0] - 1, 1.0])
    const = f[0] - z @ M @ z
    assert value + const <= f.min() + 1e-9  # a relaxation: never above the binary minimum


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rounding_finds_the_minimum_of_small_problems(seed: int) -> None:
    A, b, X, f = _problem(11, seed)
    pts, values = minimise_binary_quadratic(A, b, np.random.default_rng(seed))
    assert np.all(np.diff(values) >= 0) and len(np.unique(pts, axis=0)) == len(pts)
    np.testing.assert_allclose(values, np.einsum("pi,ij,pj->p", pts, A, pts) + pts @ b)
    assert values[0] == pytest.approx(f.min())  # the brute-force minimum over all 2^11 points


def test_rounding_reads_each_spin_against_the_homogenising_one() -> None:
    V = np.array([[1.0, -1.0, 1.0]])  # x_0 agrees with t (the last column), x_1 does not
    pts = round_hyperplanes(V, np.random.default_rng(0), 10)
    assert (pts == [1, 0]).all()


def test_bocs_sdp_runs_on_binary_spaces_only_and_beats_random_search() -> None:
    with pytest.raises(InvalidSettingError, match="acquisition=sdp"):
        BOCS(Space([Binary("a"), Ordinal("o", [1, 2, 3])]), None, 0, acquisition="sdp")
    with pytest.raises(InvalidSettingError, match="order=2"):
        BOCS(Space([Binary(f"b{i}") for i in range(4)]), None, 0, acquisition="sdp", order=3)
    settings = {"n_init": 10, "gibbs_burnin": 200, "gibbs_steps": 5, "acquisition": "sdp"}
    out = run(make_benchmark("maxsat28"), BOCS, seed=0, budget_evals=30, include_overhead=False,
              optimizer_settings=settings)
    assert len({r["config"] for r in out.rows}) == 30  # never proposes a point twice
    rs = np.mean([min(r["loss"] for r in run(make_benchmark("maxsat28"), RandomSearch, seed=s, budget_evals=30,
                                                 include_overhead=False).rows) for s in range(5)])
    assert min(r["loss"] for r in out.rows) < rs
