"""One surrogate wrapper for every table with numeric axes: smooth interpolants of the grid.

A :class:`SurrogateBenchmark` turns a table (see :mod:`benchsuite.tabular`) into a
continuous benchmark. Inputs are the table's numeric axes scaled to [0, 1] (each axis's
stored values are its search scale, for example log C) and the fidelity scaled to
``[0, s_weight]`` (log2 scale when the fidelity is log-scaled). The mean loss over the
seed replicates, the log of the mean cost and the per-configuration test loss are cubic
RBF interpolants of the grid, each kept within the smallest and largest table value at
the corners of the grid cell around the query (no new extrema between grid points); the
replicate standard deviation, interpolated linearly on the grid, is the noise: a query
returns mean + std * z with z ~ N(0, 1) drawn from the evaluation seed, clipped to [0, 1].
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from .benchmark import Benchmark, Fidelity, Result
from .errors import DataError
from .settings import Setting
from .space import Space
from .tabular import Table, TableSpec, _rebuild_hint, open_table


class CubicRbf:
    """Cubic radial basis function interpolant phi(r) = r^3 with a linear polynomial tail.

    ``smoothing`` adds a ridge lambda * I to the kernel matrix (lambda = 0 interpolates).
    Leave-one-out residuals come in closed form from Rippa's identity
    e_i = c_i / (M^-1)_ii for the augmented system M [c; b] = [y; 0].
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, smoothing: float = 0.0):
        from scipy.spatial.distance import cdist

        self.x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        n, d = self.x.shape
        m = np.zeros((n + d + 1, n + d + 1))
        m[:n, :n] = cdist(self.x, self.x) ** 3 + smoothing * np.eye(n)
        p = np.hstack([np.ones((n, 1)), self.x])
        m[:n, n:], m[n:, :n] = p, p.T
        self._m = m
        sol = np.linalg.solve(m, np.concatenate([y, np.zeros(d + 1)]))
        self.coef, self.poly = sol[:n], sol[n:]

    def __call__(self, xq: np.ndarray) -> np.ndarray:
        """Values at query points ``xq`` of shape (q, d)."""
        from scipy.spatial.distance import cdist

        xq = np.atleast_2d(np.asarray(xq, dtype=float))
        return cdist(xq, self.x) ** 3 @ self.coef + self.poly[0] + xq @ self.poly[1:]

    def loo_residuals(self) -> np.ndarray:
        """y_i minus the prediction at x_i of the interpolant fitted without point i."""
        n = self.coef.size
        inv_diag = np.diag(np.linalg.inv(self._m))[:n]
        return self.coef / inv_diag


class GridInterp:
    """Multilinear interpolation of values on a regular grid spanning a box of the inputs.

    The grid's axes are equally spaced in the surrogate coordinates, so an index is just a
    rescaled coordinate: axis ``k`` spans ``[0, extent[k]]``. :meth:`cell_range` gives the
    smallest and largest value at the corners of the grid cell around each query (NaN
    corners ignored), the bounds the surrogate keeps its interpolants in.
    """

    def __init__(self, values: np.ndarray, extent: Sequence[float]):
        self.v = np.asarray(values, dtype=float)
        d = self.v.ndim
        self.n = np.array(self.v.shape)
        self.scale = (self.n - 1) / np.asarray(extent, dtype=float)
        self._bits = np.array([[(c >> k) & 1 for k in range(d)] for c in range(2 ** d)], dtype=np.int64)

    def _corners(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos = np.clip(np.atleast_2d(u) * self.scale, 0.0, self.n - 1)
        i0 = np.minimum(pos.astype(np.int64), self.n - 2)
        f = (pos - i0)[:, None, :]
        w = np.where(self._bits, f, 1.0 - f).prod(axis=2)
        idx = i0[:, None, :] + self._bits
        return w, self.v[tuple(idx[..., k] for k in range(self.v.ndim))]

    def __call__(self, u: np.ndarray) -> np.ndarray:
        w, c = self._corners(u)
        return (w * c).sum(axis=1)

    def cell_range(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(min, max) over the corners of the enclosing cell; (-inf, inf) where all are NaN."""
        _, c = self._corners(u)
        nan = np.isnan(c)
        return np.where(nan, np.inf, c).min(axis=1), np.where(nan, -np.inf, c).max(axis=1)


def limited(rbf: CubicRbf, grid: GridInterp, u: np.ndarray) -> np.ndarray:
    """The RBF interpolant kept within the range of the enclosing grid cell's corner values."""
    lo, hi = grid.cell_range(u)
    # a cell with no finite corner (partial tables only) gives (inf, -inf): leave it unbounded
    return np.clip(rbf(u), np.minimum(lo, hi), np.maximum(lo, hi))


def surrogate_inputs(table: Table, values: Sequence[np.ndarray], fidelity: np.ndarray | float,
                     s_weight: float, fidelity_log: bool) -> np.ndarray:
    """Scaled surrogate coordinates: each numeric axis to [0, 1], the fidelity to [0, s_weight]."""
    cols = []
    for levels, v in zip(table.axes, values):
        lo, hi = float(levels[0]), float(levels[-1])
        cols.append((np.asarray(v, float) - lo) / (hi - lo))
    f0, f1 = float(table.fidelities[0]), float(table.fidelities[-1])
    if fidelity_log:
        ls = (np.log2(np.asarray(fidelity, dtype=float)) - math.log2(f0)) / (math.log2(f1) - math.log2(f0))
    else:
        ls = (np.asarray(fidelity, dtype=float) - f0) / (f1 - f0)
    n = max(np.size(c) for c in cols)
    return np.column_stack([np.broadcast_to(c, (n,)) for c in cols] + [s_weight * np.broadcast_to(ls, (n,))])


def surrogate_training_data(table: Table, s_weight: float, fidelity_log: bool) -> dict[str, np.ndarray]:
    """Per grid point: inputs, mean loss over replicates, replicate std, log mean cost (finite only)."""
    grids = np.meshgrid(*(np.arange(n) for n in table.shape), np.arange(table.fidelities.size), indexing="ij")
    ns = table.n_seeds
    filled = np.arange(table.loss.shape[-1]) < ns[..., None]
    loss = np.where(filled, table.loss, np.nan)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells of partial tables, single replicates
        mean = np.nanmean(loss, axis=-1) if loss.size else loss
        std = np.where(ns > 1, np.nanstd(loss, axis=-1, ddof=1) if loss.shape[-1] > 1 else 0.0, 0.0)
        lcost = np.nanmean(np.log(np.maximum(np.where(filled, table.cost, np.nan), 1e-6)), axis=-1)
    ok = np.isfinite(mean) & np.isfinite(lcost)
    x = surrogate_inputs(table, [table.axes[k][grids[k][ok]] for k in range(len(table.shape))],
                         table.fidelities[grids[-1][ok]], s_weight, fidelity_log)
    return {"x": x, "mean": mean[ok], "std": np.nan_to_num(std)[ok], "log_cost": lcost[ok],
            "grid_std": np.nan_to_num(std), "grid_mean": mean, "grid_log_cost": lcost,
            "index": np.column_stack([g[ok] for g in grids])}


_MODELS: dict[tuple, tuple] = {}


class SurrogateBenchmark(Benchmark):
    """A continuous benchmark interpolating a table: subclasses give the spec, space and weights.

    Variable ``k`` of the space (a float) is table axis ``k`` in the table's own scale.
    ``s_weight`` is the length of the fidelity axis relative to the unit-length
    configuration axes and ``smoothing`` the RBF ridge (choose both by leave-one-out error).
    """

    kind = "surrogate"
    table_spec: ClassVar[TableSpec]
    fidelity_log: ClassVar[bool] = True
    fidelity_unit: ClassVar[str] = ""
    s_weight: ClassVar[float] = 0.5
    smoothing: ClassVar[float] = 0.0
    settings_spec = {
        "table": Setting("", "path of the HDF5 table; empty = the committed one under tables/", type=str),
        "allow_partial": Setting(False, "accept a table whose build is incomplete (testing only)"),
        "noise": Setting(True, "add the interpolated replicate spread as noise"),
    }

    def make_space(self, table: Table) -> Space:
        """The continuous search space; variable k is table axis k."""
        raise NotImplementedError

    @classmethod
    def required_tables(cls) -> list:
        """Table files this benchmark reads (the workflow builds missing ones first)."""
        return [cls.table_spec.path]

    def setup(self) -> None:
        spec = self.table_spec
        t = open_table(self.settings["table"] or spec.path, spec.task, spec.rebuild)
        if not t.complete and not self.settings["allow_partial"]:
            raise DataError(f"table {t.path} is incomplete; finish the build first ({_rebuild_hint(spec.rebuild)})")
        self.table = t
        self.space = self.make_space(t)
        f = t.fidelities
        self.fidelity = Fidelity(t.fidelity_name, float(f[0]), float(f[-1]), log=self.fidelity_log,
                                 full=float(f[-1]), unit=self.fidelity_unit)
        key = (t.sha256, t.task, self.s_weight, self.smoothing, self.fidelity_log)
        if key not in _MODELS:
            _MODELS[key] = self._fit(t)
        self._loss, self._cost, self._test, self._std, self._grids = _MODELS[key]
        self.optimum = None  # the surrogate's minimum is not known in closed form

    def _fit(self, t: Table) -> tuple:
        d = surrogate_training_data(t, self.s_weight, self.fidelity_log)
        loss_rbf = CubicRbf(d["x"], d["mean"], self.smoothing)
        cost_rbf = CubicRbf(d["x"], d["log_cost"], self.smoothing)
        box = (1.0,) * len(t.shape) + (self.s_weight,)
        test = t.test_loss
        ok = np.isfinite(test)
        idx = np.argwhere(ok)
        xt = self.inputs([t.axes[k][idx[:, k]] for k in range(len(t.shape))], t.fidelities[-1])
        test_rbf = CubicRbf(xt[:, :-1], test[ok], self.smoothing)
        grids = (GridInterp(d["grid_mean"], box), GridInterp(d["grid_log_cost"], box), GridInterp(test, box[:-1]))
        return loss_rbf, cost_rbf, test_rbf, GridInterp(d["grid_std"], box), grids

    def inputs(self, values: Sequence[np.ndarray], fidelity: np.ndarray | float) -> np.ndarray:
        """Surrogate coordinates of axis values and fidelities."""
        return surrogate_inputs(self.table, values, fidelity, self.s_weight, self.fidelity_log)

    def predict(self, *values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vectorised noise-free (mean loss, noise std, cost seconds) at arrays of axis values then fidelities."""
        u = self.inputs(values[:-1], values[-1])
        loss = limited(self._loss, self._grids[0], u)
        cost = np.exp(limited(self._cost, self._grids[1], u))
        return np.clip(loss, 0.0, 1.0), np.maximum(self._std(u), 0.0), cost

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        """Interpolated loss (plus replicate noise) and interpolated cost."""
        config, s = self.check(config, fidelity)
        s = self.fidelity.full if s is None else s
        mean, std, cost = (float(v[0]) for v in self.predict(*(config[n] for n in self.space.names), s))
        loss = mean
        if self.settings["noise"] and std > 0:
            loss = mean + std * float(np.random.default_rng(seed).standard_normal())
        return Result(min(max(loss, 0.0), 1.0), cost, {"mean": mean, "std": std})

    def test_loss(self, config: Any) -> float:
        """Interpolated per-configuration test loss."""
        config, _ = self.check(config, None)
        u = self.inputs([config[n] for n in self.space.names], self.fidelity.full)[:, :-1]
        return float(np.clip(limited(self._test, self._grids[2], u)[0], 0.0, 1.0))

    def provenance(self) -> dict[str, Any]:
        return {"table": str(self.table.path), "table_task": self.table.task, "table_sha256": self.table.sha256,
                "smoothing": self.smoothing, "s_weight": self.s_weight}
