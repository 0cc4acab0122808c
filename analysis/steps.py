"""Incumbent trajectories as step functions, their summaries on a common grid, and ranks.

A run's trajectory is right-continuous and piecewise constant: its value at time ``t`` is
the reported quantity of the incumbent known at ``t``, that is, after the last trial
whose ``told_time`` is ``<= t`` (the optimizer only knows a result, and can recommend
from it, once it has been told). Before the first incumbent the value is NaN. Values are
never interpolated between evaluations. On the evaluations axis, the value after ``n``
evaluations is the incumbent after the ``n``-th told trial.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from benchsuite.errors import DataError

AXIS_COLUMN = {"time": "told_time", "evaluations": "evaluation"}
RUN_KEYS = ["benchmark", "optimizer", "repetition"]


def step_values(xs: Sequence[float] | np.ndarray, ys: Sequence[float] | np.ndarray,
                grid: Sequence[float] | np.ndarray) -> np.ndarray:
    """Values at ``grid`` of the step function that jumps to ``ys[i]`` at ``xs[i]`` (NaN before ``xs[0]``)."""
    xs = np.asarray(xs, dtype=float)
    ys = np.asarray(ys, dtype=float)
    grid = np.asarray(grid, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError("xs and ys must be 1-D arrays of the same length")
    if np.any(np.diff(xs) < 0):
        raise ValueError("xs must be non-decreasing (rows in the order they were told)")
    idx = np.searchsorted(xs, grid, side="right") - 1
    out = np.full(grid.shape, np.nan)
    ok = idx >= 0
    out[ok] = ys[idx[ok]]
    return out


def make_grid(lo: float, hi: float, scale: str, n: int = 200, integer: bool = False) -> np.ndarray:
    """``n`` points from ``lo`` to ``hi`` (log- or linearly spaced); integers 1..hi when ``integer``."""
    if integer:
        return np.arange(1, int(hi) + 1, dtype=float)
    if scale == "log":
        lo = max(lo, hi * 1e-6, 1e-12)
        if hi <= lo:
            return np.array([hi], dtype=float)
        return np.unique(np.geomspace(lo, hi, n))
    return np.unique(np.linspace(lo, hi, n))


def horizons(df: pd.DataFrame, axis: str, budgets: Mapping[str, float | None] | None = None) -> dict[str, float]:
    """Right end of each benchmark's axis: the last told x of any run, capped at the budget.

    When every run stopped well before the budget (an evaluation cap bound first), the axis
    ends where the last run did instead of drawing flat lines out to the unused budget.
    """
    col = AXIS_COLUMN[axis]
    out: dict[str, float] = {}
    for bench, g in df.groupby("benchmark", sort=False):
        b = (budgets or {}).get(bench)
        last = float(g[col].max())
        out[bench] = min(float(b), last) if b is not None else last
    return out


def default_grids(df: pd.DataFrame, axis: str, scale: str, budgets: Mapping[str, float | None] | None = None,
                  n: int = 200) -> dict[str, np.ndarray]:
    """A common grid per benchmark: from the first defined value of any run to the horizon."""
    col = AXIS_COLUMN[axis]
    his = horizons(df, axis, budgets)
    grids: dict[str, np.ndarray] = {}
    for bench, g in df.groupby("benchmark", sort=False):
        if axis == "evaluations":
            grids[bench] = make_grid(1, his[bench], scale, integer=True)
            continue
        defined = g.loc[g["value"].notna(), col]
        lo = float(defined.min()) if len(defined) else float(g[col].min())
        grid = make_grid(lo if scale == "log" else 0.0, his[bench], scale, n)
        grids[bench] = grid
    return grids


def trajectories(df: pd.DataFrame, axis: str, grids: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Every run's step function evaluated on its benchmark's grid, as a tidy frame.

    ``df`` needs the run keys, the axis column and ``value`` (see :func:`benchsuite.analysis.add_quantity`);
    the result has columns benchmark, optimizer, repetition, x, value.
    """
    if "value" not in df:
        raise DataError("add the reported quantity first (analysis.add_quantity)")
    col = AXIS_COLUMN[axis]
    parts = []
    for (bench, opt, rep), g in df.groupby(RUN_KEYS, sort=False):
        grid = grids[bench]
        g = g.sort_values("evaluation", kind="stable")
        vals = step_values(g[col].to_numpy(float), g["value"].to_numpy(float), grid)
        parts.append(pd.DataFrame({"benchmark": bench, "optimizer": opt, "repetition": rep, "x": grid, "value": vals}))
    return pd.concat(parts, ignore_index=True)


def summarise(traj: pd.DataFrame) -> pd.DataFrame:
    """Median, 25th/75th percentiles, mean and its standard error per (benchmark, optimizer, x) across repetitions.

    A statistic is NaN at x unless every repetition has an incumbent there, so a curve
    never starts from the few lucky runs that finished their first evaluation early.
    """
    parts = []
    for (bench, opt), g in traj.groupby(["benchmark", "optimizer"], sort=False):
        wide = g.pivot(index="x", columns="repetition", values="value").sort_index()
        a = wide.to_numpy(float)  # grid points x repetitions
        complete = ~np.isnan(a).any(axis=1)
        stats = np.full((a.shape[0], 5), np.nan)
        if complete.any():
            q = np.percentile(a[complete], [25, 50, 75], axis=1)
            stats[complete, 0], stats[complete, 1], stats[complete, 2] = q[1], q[0], q[2]
            stats[complete, 3] = a[complete].mean(axis=1)
            if a.shape[1] > 1:
                stats[complete, 4] = a[complete].std(axis=1, ddof=1) / np.sqrt(a.shape[1])
        parts.append(pd.DataFrame({"benchmark": bench, "optimizer": opt, "x": wide.index.to_numpy(float),
                                   "median": stats[:, 0], "q25": stats[:, 1], "q75": stats[:, 2],
                                   "mean": stats[:, 3], "se": stats[:, 4], "n": a.shape[1]}))
    return pd.concat(parts, ignore_index=True)


def average_rank(traj: pd.DataFrame) -> pd.DataFrame:
    """Average rank (1 = best) of each optimizer per (benchmark, x), pairing runs by repetition index.

    At each x, the optimizers' values in repetition r are ranked (ties share the mean
    rank; an optimizer without an incumbent yet is left out of that comparison), and the
    ranks are averaged over repetitions.
    """
    wide = traj.pivot(index=["benchmark", "repetition", "x"], columns="optimizer", values="value")
    ranks = wide.rank(axis=1, method="average", na_option="keep")
    long = ranks.stack(future_stack=True).rename("rank").reset_index()
    return long.groupby(["benchmark", "optimizer", "x"], sort=False)["rank"].mean().reset_index()


def value_at(df: pd.DataFrame, axis: str, at: Mapping[str, float]) -> pd.DataFrame:
    """Each run's value at ``at[benchmark]`` on ``axis`` (the incumbent known then)."""
    col = AXIS_COLUMN[axis]
    rows = []
    for (bench, opt, rep), g in df.groupby(RUN_KEYS, sort=False):
        g = g.sort_values("evaluation", kind="stable")
        v = step_values(g[col].to_numpy(float), g["value"].to_numpy(float), [at[bench]])[0]
        rows.append({"benchmark": bench, "optimizer": opt, "repetition": rep, "value": v})
    return pd.DataFrame(rows)
