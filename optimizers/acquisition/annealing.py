"""Discrete moves on integer codes and simulated annealing, shared by SA, BOCS and RE.

Configurations of a discrete :class:`~benchsuite.space.Space` are handled as integer
code vectors (``Space.to_codes``). A move changes one variable: an ordinal or integer
variable steps to an adjacent level (a path graph), a categorical or binary one jumps to
any other level (a complete graph), the same neighbourhoods ``Space.neighbours`` uses.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from benchsuite.space import Categorical, Space


def unordered_mask(space: Space) -> np.ndarray:
    """Boolean per variable: True for categorical/binary (any level is a neighbour)."""
    return np.array([isinstance(v, Categorical) for v in space.variables], dtype=bool)


def random_moves(codes: np.ndarray, n_levels: np.ndarray, unordered: np.ndarray,
                 rng: np.random.Generator) -> np.ndarray:
    """One random neighbour of each row of ``codes`` (a uniformly chosen variable is changed)."""
    codes = np.atleast_2d(codes)
    out = codes.copy()
    n, d = codes.shape
    movable = np.flatnonzero(n_levels > 1)
    if movable.size == 0:
        return out
    var = movable[rng.integers(0, movable.size, size=n)]
    rows = np.arange(n)
    cur = codes[rows, var]
    nl = n_levels[var]
    # categorical: uniform over the other levels
    other = (cur + 1 + rng.integers(0, np.maximum(nl - 1, 1))) % nl
    # ordinal: one step up or down, reflected at the ends
    step = np.where(rng.random(n) < 0.5, -1, 1)
    up = cur + step
    up = np.where((up < 0) | (up >= nl), cur - step, up)
    out[rows, var] = np.where(unordered[var], other, up)
    return out


def all_neighbours(code: np.ndarray, n_levels: np.ndarray, unordered: np.ndarray) -> np.ndarray:
    """Every neighbour of one code vector, as an ``(m, d)`` array."""
    rows = []
    for j, nl in enumerate(n_levels):
        c = int(code[j])
        levels = [k for k in range(nl) if k != c] if unordered[j] else [k for k in (c - 1, c + 1) if 0 <= k < nl]
        for k in levels:
            r = code.copy()
            r[j] = k
            rows.append(r)
    return np.array(rows, dtype=code.dtype).reshape(-1, len(code))


def anneal_batch(f: Callable[[np.ndarray], np.ndarray], x0: np.ndarray, n_levels: np.ndarray,
                 unordered: np.ndarray, rng: np.random.Generator, n_steps: int = 500,
                 t_start: float = 1.0, t_end: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Minimise a cheap vectorised ``f`` by parallel annealing chains started at the rows of ``x0``.

    The temperature falls geometrically from ``t_start`` to ``t_end`` (multiples of the
    spread of ``f`` over the starting points). Returns the best state of each chain and
    its value.
    """
    x = np.array(x0, copy=True)
    fx = f(x)
    best, fbest = x.copy(), fx.copy()
    scale = float(np.std(fx)) or float(np.abs(fx).mean()) or 1.0
    ratio = (t_end / t_start) ** (1.0 / max(n_steps - 1, 1))
    t = t_start * scale
    for _ in range(n_steps):
        y = random_moves(x, n_levels, unordered, rng)
        fy = f(y)
        accept = (fy <= fx) | (rng.random(len(x)) < np.exp(-np.maximum(fy - fx, 0) / t))
        x[accept], fx[accept] = y[accept], fy[accept]
        better = fx < fbest
        best[better], fbest[better] = x[better], fx[better]
        t *= ratio
    return best, fbest
