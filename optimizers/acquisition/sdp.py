"""Minimising a binary quadratic by its semidefinite relaxation and randomized rounding (BOCS-SDP's acquisition).

BOCS (Baptista and Poloczek 2018) draws a second-order model of the objective from its posterior
(Thompson sampling) and, in its SDP variant, minimises that model over ``{0, 1}^n`` through the
semidefinite relaxation of the binary quadratic program followed by Goemans-Williamson rounding,
the variant the COMBO paper compares with (combo.txt Tables 1 and 3, "BOCS-SDP").

The model ``f(x) = b0 + b^T x + x^T A x`` (``A`` symmetric with a zero diagonal, ``A_ij = a_ij / 2``
for the coefficient ``a_ij`` of ``x_i x_j``) is rewritten in spins ``y = 2x - 1`` and homogenised
with one more spin ``t``: up to a constant, ``f = z^T M z`` for ``z = (y, t)`` with
``M = [[A / 4, c / 2], [c^T / 2, 0]]``, ``c = (A 1 + b) / 2``. The relaxation replaces the spins by unit
vectors: minimise ``tr(M Z)`` subject to ``diag(Z) = 1``, ``Z`` positive semidefinite. We solve it
in the factored form ``Z = V^T V`` (``V`` of ``k >= sqrt(2 (n + 1))`` rows, each column a unit
vector) by the mixing method (Wang, Chang and Kolter 2017, coordinate descent on the columns),
whose fixed points at that rank are the SDP's optima, where BOCS's code calls a general-purpose
SDP solver (cvx / cvxpy); both give the relaxation's optimum, to the solver's tolerance. Rounding: a
random hyperplane ``r`` gives spins ``sign(r^T v_i)``, and ``x_i = 1`` where a spin agrees with ``t``'s
(Goemans and Williamson's reading of a homogenised program; BOCS's code instead maps each spin to ``x``
directly and ignores ``t``'s, which gives the complement of our point when ``t``'s spin is -1, a point
it then scores like any other);
of ``n_round`` hyperplanes (100 in BOCS's code) every rounded point is returned with its model value,
best first, so that the caller can skip points already evaluated.
"""
from __future__ import annotations

import math

import numpy as np


def homogenised_matrix(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``M`` with ``x^T A x + b^T x = z^T M z + const`` for spins ``z = (2x - 1, 1)`` (see the module docstring)."""
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    n = b.size
    if A.shape != (n, n):
        raise ValueError(f"A must be ({n}, {n}) for {n} linear coefficients, got {A.shape}")
    if np.any(np.diag(A) != 0.0):
        raise ValueError("A must have a zero diagonal (x_i^2 = x_i belongs in the linear coefficients)")
    A = 0.5 * (A + A.T)
    c = 0.5 * (A.sum(1) + b)
    M = np.zeros((n + 1, n + 1))
    M[:n, :n] = 0.25 * A
    M[:n, n] = M[n, :n] = 0.5 * c
    return M


def solve_relaxation(M: np.ndarray, rng: np.random.Generator, rank: int | None = None, tol: float = 1e-9,
                     max_sweeps: int = 2000) -> tuple[np.ndarray, float]:
    """Unit columns ``V`` (``rank x m``) minimising ``tr(M V^T V)`` by the mixing method, and that value.

    Each step sets one column to the unit vector that minimises the objective with the others held,
    ``v_i = -g_i / |g_i|`` with ``g_i = sum_{j != i} M_ij v_j``; sweeps stop when the objective moves by
    less than ``tol`` (relative to its size, at least 1).
    """
    M = np.asarray(M, dtype=float)
    m = M.shape[0]
    k = int(rank) if rank else int(math.ceil(math.sqrt(2.0 * m))) + 1
    V = rng.standard_normal((k, m))
    V /= np.linalg.norm(V, axis=0)
    G = V @ M  # column i: sum_j M_ji v_j
    diag = np.diag(M).copy()
    value = float(np.sum(V * G))
    for _ in range(int(max_sweeps)):
        for i in range(m):
            g = G[:, i] - diag[i] * V[:, i]
            norm = float(np.linalg.norm(g))
            if norm == 0.0:
                continue
            new = -g / norm
            delta = new - V[:, i]
            V[:, i] = new
            G += np.outer(delta, M[i])
        new_value = float(np.sum(V * G))
        done = abs(value - new_value) <= tol * max(1.0, abs(new_value))
        value = new_value
        if done:
            break
    return V, value


def round_hyperplanes(V: np.ndarray, rng: np.random.Generator, n_round: int) -> np.ndarray:
    """``n_round`` 0/1 points ``(n_round, m - 1)`` from random hyperplanes; the last column of ``V`` is the spin ``t``."""
    R = rng.standard_normal((int(n_round), V.shape[0]))
    spins = np.where(R @ V >= 0.0, 1, -1)
    return (spins[:, :-1] == spins[:, -1:]).astype(np.int64)


def minimise_binary_quadratic(A: np.ndarray, b: np.ndarray, rng: np.random.Generator,
                              n_round: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rounded points of the relaxation, ``(p, n)`` 0/1, and ``x^T A x + b^T x`` at each, best first."""
    M = homogenised_matrix(A, b)
    V, _ = solve_relaxation(M, rng)
    X = np.unique(round_hyperplanes(V, rng, n_round), axis=0)
    values = np.einsum("pi,ij,pj->p", X, A, X) + X @ np.asarray(b, dtype=float)
    order = np.argsort(values, kind="stable")
    return X[order], values[order]
