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

Built once: fitting the interpolants solves dense systems of the size of the table
(seconds for the SVM table), so the fitted model (:class:`FittedSurrogate`) is cached on
disk under :func:`benchsuite.datasets.cache_dir` (``surrogates/``), written atomically
and checksummed, keyed by the table file's sha256, the surrogate's settings, the numpy
and scipy versions and :data:`CACHE_FORMAT`; a changed table gets a new key (so a new
fit), and a cache file that fails its checks is refitted and rewritten with a one-line
notice, never trusted. Per process the model is also kept in memory.

One evaluation goes through :class:`PointModel`: everything that does not depend on the
query point is precomputed (per grid cell: the corner values and their range), the
distances to centres on a full grid come from per-axis squared differences instead of
``cdist``, and the loss and cost interpolants share one kernel row. It performs the same
floating-point operations in the same order as the vectorised :meth:`predict` (numpy's
pairwise summation of the 2^d cell corners included), so both give bit-identical values.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .benchmark import Benchmark, Fidelity, Result
from .errors import DataError
from .settings import Setting
from .space import Space
from .tabular import Table, TableSpec, _rebuild_hint, open_table

log = logging.getLogger(__name__)

CACHE_FORMAT = 1  # bump when the fit, the input scaling or the cached layout changes
CACHE_SUBDIR = "surrogates"


class CubicRbf:
    """Cubic radial basis function interpolant phi(r) = r^3 with a linear polynomial tail.

    ``smoothing`` adds a ridge lambda * I to the kernel matrix (lambda = 0 interpolates).
    Leave-one-out residuals come in closed form from Rippa's identity
    e_i = c_i / (M^-1)_ii for the augmented system M [c; b] = [y; 0].

    Why not ``scipy.interpolate.RBFInterpolator(kernel="cubic", degree=1)`` (issue 27, item 8):
    ``perf/bench_rbf.py`` (2026-11-26, svm_mnist's 3,200 centres) finds the same interpolant (max
    difference 5.8e-11 at 10,000 points) and SciPy faster: at load ~1 it fits in 0.85 s vs 1.31 s and
    queries 1 / 100 / 10,000 points in 0.095 / 3.6 / 192 ms vs 0.139 / 9.2 / 770 ms (at load ~6 the
    100-point query came out the other way, 11.8 vs 9.7 ms). We keep this class for now because the cached fits store its solution
    (centres, coefficients, polynomial tail) and the tables' leave-one-out study needs Rippa's
    residuals from its system; switching would change every surrogate lookup in the 11th digit
    (new golden runs and a cache format bump), which is the next step, not done here.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, smoothing: float = 0.0):
        self.x = np.asarray(x, dtype=float)
        self.smoothing = float(smoothing)
        y = np.asarray(y, dtype=float)
        d = self.x.shape[1]
        self._m: np.ndarray | None = self._system(self.x, self.smoothing)
        sol = np.linalg.solve(self._m, np.concatenate([y, np.zeros(d + 1)]))
        self.coef, self.poly = sol[:self.x.shape[0]], sol[self.x.shape[0]:]

    @staticmethod
    def _system(x: np.ndarray, smoothing: float) -> np.ndarray:
        from scipy.spatial.distance import cdist

        n, d = x.shape
        m = np.zeros((n + d + 1, n + d + 1))
        m[:n, :n] = cdist(x, x) ** 3 + smoothing * np.eye(n)
        p = np.hstack([np.ones((n, 1)), x])
        m[:n, n:], m[n:, :n] = p, p.T
        return m

    @classmethod
    def from_solution(cls, x: np.ndarray, coef: np.ndarray, poly: np.ndarray, smoothing: float = 0.0) -> CubicRbf:
        """An interpolant from a stored solution (centres, kernel coefficients, polynomial tail)."""
        rbf = cls.__new__(cls)
        rbf.x = np.ascontiguousarray(x, dtype=float)
        rbf.coef, rbf.poly = np.asarray(coef, dtype=float), np.asarray(poly, dtype=float)
        rbf.smoothing, rbf._m = float(smoothing), None
        if rbf.x.ndim != 2 or rbf.coef.shape != (rbf.x.shape[0],) or rbf.poly.shape != (rbf.x.shape[1] + 1,):
            raise ValueError(f"inconsistent RBF solution: centres {rbf.x.shape}, coefficients {rbf.coef.shape}, "
                             f"polynomial {rbf.poly.shape}")
        return rbf

    def __call__(self, xq: np.ndarray) -> np.ndarray:
        """Values at query points ``xq`` of shape (q, d)."""
        from scipy.spatial.distance import cdist

        xq = np.atleast_2d(np.asarray(xq, dtype=float))
        return cdist(xq, self.x) ** 3 @ self.coef + self.poly[0] + xq @ self.poly[1:]

    def loo_residuals(self) -> np.ndarray:
        """y_i minus the prediction at x_i of the interpolant fitted without point i."""
        if self._m is None:  # loaded from a stored solution: rebuild the system
            self._m = self._system(self.x, self.smoothing)
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
        self.extent = tuple(float(e) for e in extent)
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

    def cell_corners(self) -> np.ndarray:
        """Corner values of every cell, shape ``(number of cells, 2^d)``, cells in C order."""
        n = self.v.shape
        out = [self.v[tuple(slice(b, b + n[k] - 1) for k, b in enumerate(bits))].reshape(-1)
               for bits in self._bits.tolist()]
        return np.stack(out, axis=1)

    def cell_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per cell the bounds :func:`limited` clips to: (min, max) of the corners, (-inf, inf) when all are NaN."""
        c = self.cell_corners()
        nan = np.isnan(c)
        lo, hi = np.where(nan, np.inf, c).min(axis=1), np.where(nan, -np.inf, c).max(axis=1)
        return np.minimum(lo, hi), np.maximum(lo, hi)


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


# -- the fitted model and its disk cache ---------------------------------------------------
@dataclass(eq=False)  # arrays do not compare with ==
class FittedSurrogate:
    """Everything a surrogate predicts from: the three interpolants and the four grids."""

    loss: CubicRbf
    cost: CubicRbf
    test: CubicRbf | None
    std: GridInterp
    loss_grid: GridInterp
    cost_grid: GridInterp
    test_grid: GridInterp | None

    _RBFS: ClassVar[tuple[str, ...]] = ("loss", "cost", "test")
    _GRIDS: ClassVar[tuple[str, ...]] = ("std", "loss_grid", "cost_grid", "test_grid")

    def arrays(self) -> dict[str, np.ndarray]:
        """The model as named arrays (what the cache file stores)."""
        out: dict[str, np.ndarray] = {}
        for name in self._RBFS:
            rbf = getattr(self, name)
            if rbf is not None:
                out.update({f"{name}.x": rbf.x, f"{name}.coef": rbf.coef, f"{name}.poly": rbf.poly,
                            f"{name}.smoothing": np.array(rbf.smoothing)})
        for name in self._GRIDS:
            grid = getattr(self, name)
            if grid is not None:
                out.update({f"{name}.values": grid.v, f"{name}.extent": np.asarray(grid.extent, dtype=float)})
        return {k: np.array(v, dtype=float, order="C") for k, v in out.items()}

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray]) -> FittedSurrogate:
        """Inverse of :meth:`arrays`; raises KeyError or ValueError on an inconsistent set."""
        parts: dict[str, Any] = {"test": None, "test_grid": None}  # a table without a test loss has neither
        for name in cls._RBFS:
            if name not in parts or f"{name}.x" in a:
                parts[name] = CubicRbf.from_solution(a[f"{name}.x"], a[f"{name}.coef"], a[f"{name}.poly"],
                                                     float(a[f"{name}.smoothing"]))
        for name in cls._GRIDS:
            if name not in parts or f"{name}.values" in a:
                parts[name] = GridInterp(a[f"{name}.values"], a[f"{name}.extent"].tolist())
        return cls(**parts)


def fit_surrogate(table: Table, s_weight: float, smoothing: float, fidelity_log: bool) -> FittedSurrogate:
    """Fit the loss, log-cost and test-loss interpolants of a table (the slow part: dense solves)."""
    d = surrogate_training_data(table, s_weight, fidelity_log)
    loss_rbf = CubicRbf(d["x"], d["mean"], smoothing)
    cost_rbf = CubicRbf(d["x"], d["log_cost"], smoothing)
    box = (1.0,) * len(table.shape) + (s_weight,)
    test = table.test_loss
    test_rbf = test_grid = None
    if test is not None:
        ok = np.isfinite(test)
        idx = np.argwhere(ok)
        xt = surrogate_inputs(table, [table.axes[k][idx[:, k]] for k in range(len(table.shape))],
                              table.fidelities[-1], s_weight, fidelity_log)
        test_rbf = CubicRbf(xt[:, :-1], test[ok], smoothing)
        test_grid = GridInterp(test, box[:-1])
    return FittedSurrogate(loss_rbf, cost_rbf, test_rbf, GridInterp(d["grid_std"], box),
                           GridInterp(d["grid_mean"], box), GridInterp(d["grid_log_cost"], box), test_grid)


def cache_key(table: Table, s_weight: float, smoothing: float, fidelity_log: bool) -> dict[str, Any]:
    """What a cached fit depends on: the table's bytes, the settings, the libraries and the format."""
    import scipy

    return {"format": CACHE_FORMAT, "table_sha256": table.sha256, "task": table.task,
            "s_weight": float(s_weight), "smoothing": float(smoothing), "fidelity_log": bool(fidelity_log),
            "numpy": np.__version__, "scipy": scipy.__version__}


def cache_path(key: dict[str, Any], stem: str = "surrogate") -> Path:
    """The cache file of a key under :func:`benchsuite.datasets.cache_dir`."""
    from .datasets import cache_dir

    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem)[:64] or "surrogate"
    return cache_dir() / CACHE_SUBDIR / f"{stem}-{digest[:32]}.npz"


def read_cached(path: Path, key: dict[str, Any]) -> FittedSurrogate | None:
    """The model stored at ``path`` for ``key``; None when missing or failing a check (with a notice)."""
    from .datasets import read_checked_cache

    arrays, why = read_checked_cache(path, json.dumps(key, sort_keys=True))
    if arrays is None:
        if why:
            log.warning("surrogate cache %s is corrupt or stale (%s); refitting it", path, why)
        return None
    try:
        return FittedSurrogate.from_arrays(arrays)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        log.warning("surrogate cache %s holds inconsistent arrays (%s); refitting it", path, type(exc).__name__)
        return None


def write_cached(path: Path, key: dict[str, Any], model: FittedSurrogate) -> None:
    """Store a fitted model atomically; a cache that cannot be written only costs a refit later."""
    from .datasets import write_checked_cache

    write_checked_cache(path, json.dumps(key, sort_keys=True), model.arrays(), compressed=False)


def load_or_fit(table: Table, s_weight: float, smoothing: float, fidelity_log: bool,
                cache: bool = True) -> tuple[FittedSurrogate, str]:
    """The fitted surrogate of a table and where it came from ("cache" or "fit"); fits and caches it when needed."""
    key = cache_key(table, s_weight, smoothing, fidelity_log)
    path = cache_path(key, Path(table.path).stem + (f"-{table.task}" if table.task else ""))
    model = read_cached(path, key) if cache else None
    if model is not None:
        return model, "cache"
    model = fit_surrogate(table, s_weight, smoothing, fidelity_log)
    if cache:
        write_cached(path, key, model)
    return model, "fit"


# -- one query without array set-up ------------------------------------------------------
def _numpy_sum(a: list[float]) -> float:
    """Sum in the order of numpy's pairwise ``add.reduce`` over a contiguous axis (same bits)."""
    n = len(a)
    if n < 8:
        s = -0.0
        for v in a:
            s += v
        return s
    if n <= 128:
        r = a[:8]
        for i in range(8, n - n % 8, 8):
            for j in range(8):
                r[j] += a[i + j]
        s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for i in range(n - n % 8, n):
            s += a[i]
        return s
    half = n // 2
    half -= half % 8
    return _numpy_sum(a[:half]) + _numpy_sum(a[half:])


class _Kernel:
    """Row ``|u - x_i|^3`` of one query point against fixed centres, as ``cdist(u, x) ** 3`` computes it."""

    def __init__(self, x: np.ndarray):
        self.x = np.ascontiguousarray(x, dtype=float)
        n, d = self.x.shape
        levels = [np.unique(self.x[:, k]) for k in range(d)]
        self.levels: list[np.ndarray] | None = None
        if int(np.prod([len(lv) for lv in levels])) == n:
            full = np.stack(np.meshgrid(*levels, indexing="ij"), axis=-1).reshape(n, d)
            if np.array_equal(full, self.x):
                # centres on a full grid: squared distances are sums of per-axis terms, added in
                # cdist's order (axis 0, then 1, ...), so the row is bit for bit cdist's
                self.levels = [lv.reshape([-1 if j == k else 1 for j in range(d)]) for k, lv in enumerate(levels)]

    def __call__(self, u: Sequence[float]) -> np.ndarray:
        if self.levels is None:
            from scipy.spatial.distance import cdist

            return cdist(np.array([u], dtype=float), self.x) ** 3
        acc = np.square(self.levels[0] - u[0])
        for k in range(1, len(self.levels)):
            acc = acc + np.square(self.levels[k] - u[k])
        np.sqrt(acc, out=acc)
        np.power(acc, 3, out=acc)
        return acc.reshape(1, -1)


class _Cells:
    """Per-cell data of grids sharing one shape and box: index, weights and precomputed corner facts."""

    def __init__(self, grid: GridInterp):
        self.d = grid.v.ndim
        self.scale = grid.scale.tolist()
        self.top = [float(m - 1) for m in grid.n.tolist()]  # np.clip's upper bound, n - 1
        self.last = [int(m - 2) for m in grid.n.tolist()]  # the last cell's lower index
        ncell = [int(m - 1) for m in grid.n.tolist()]
        self.strides = [int(np.prod(ncell[k + 1:])) for k in range(self.d)]
        self.bits = [tuple(b) for b in grid._bits.tolist()]

    def locate(self, u: Sequence[float]) -> tuple[int, list[float]]:
        """Flat cell index and fractional position of a point, as :meth:`GridInterp._corners` computes them."""
        cell, frac = 0, []
        for k in range(self.d):
            p = u[k] * self.scale[k]
            p = 0.0 if p < 0.0 else (self.top[k] if p > self.top[k] else p)
            i = int(p)
            if i > self.last[k]:
                i = self.last[k]
            cell += i * self.strides[k]
            frac.append(p - i)
        return cell, frac

    def weights(self, frac: list[float]) -> list[float]:
        """Corner weights in corner order, each a product over the axes in axis order."""
        t = [(1.0 - f, f) for f in frac]  # factor of axis k for bit 0 and bit 1
        if self.d == 3:  # the common case (two variables and the fidelity) unrolled
            t0, t1, t2 = t
            return [t0[b0] * t1[b1] * t2[b2] for b0, b1, b2 in self.bits]
        out = []
        for b in self.bits:
            w = t[0][b[0]]
            for k in range(1, self.d):
                w *= t[k][b[k]]
            out.append(w)
        return out


def _usable(grid: GridInterp) -> bool:
    return bool((grid.n >= 2).all()) and len(grid._bits) <= 128


class PointModel:
    """Scalar (mean loss, noise std, cost) and test loss of ONE point, bit for bit :meth:`SurrogateBenchmark.predict`."""

    def __init__(self, model: FittedSurrogate, table: Table, s_weight: float, fidelity_log: bool):
        self.lo = [float(a[0]) for a in table.axes]
        self.span = [float(a[-1]) - float(a[0]) for a in table.axes]
        f0, f1 = float(table.fidelities[0]), float(table.fidelities[-1])
        self.fidelity_log, self.s_weight = bool(fidelity_log), float(s_weight)
        self.f0, self.fden = (math.log2(f0), math.log2(f1) - math.log2(f0)) if fidelity_log else (f0, f1 - f0)
        m = model
        self.ok = all(g is not None and _usable(g) for g in (m.std, m.loss_grid, m.cost_grid)) and (
            m.std.v.shape == m.loss_grid.v.shape == m.cost_grid.v.shape
            and m.std.extent == m.loss_grid.extent == m.cost_grid.extent)
        if not self.ok:  # unusual grids (an axis with one level): the vectorised path serves them
            return
        self.kernel = _Kernel(m.loss.x)
        self.cost_kernel = self.kernel if np.array_equal(m.loss.x, m.cost.x) else _Kernel(m.cost.x)
        self.loss_rbf = (m.loss.coef, float(m.loss.poly[0]), m.loss.poly[1:])
        self.cost_rbf = (m.cost.coef, float(m.cost.poly[0]), m.cost.poly[1:])
        self.cells = _Cells(m.std)
        llo, lhi = m.loss_grid.cell_bounds()
        clo, chi = m.cost_grid.cell_bounds()
        # one tuple per cell: loss bounds, log-cost bounds, then the std grid's corner values
        self.cell_data = [(a, b, c, e, list(s)) for a, b, c, e, s in
                          zip(llo.tolist(), lhi.tolist(), clo.tolist(), chi.tolist(), m.std.cell_corners().tolist())]
        self.test_ok = m.test is not None and m.test_grid is not None and _usable(m.test_grid)
        if self.test_ok:
            self.test_kernel = _Kernel(m.test.x)
            self.test_rbf = (m.test.coef, float(m.test.poly[0]), m.test.poly[1:])
            self.test_cells = _Cells(m.test_grid)
            self.test_bounds = list(zip(*(b.tolist() for b in m.test_grid.cell_bounds())))

    def inputs(self, values: Sequence[float], fidelity: float) -> list[float]:
        """Surrogate coordinates of one point, as :func:`surrogate_inputs` computes them."""
        u = [(float(v) - lo) / span for v, lo, span in zip(values, self.lo, self.span)]
        if self.fidelity_log:
            ls = (float(np.log2(fidelity)) - self.f0) / self.fden  # numpy's log2, as the vectorised path
        else:
            ls = (float(fidelity) - self.f0) / self.fden
        u.append(self.s_weight * ls)
        return u

    @staticmethod
    def _rbf(k: np.ndarray, rbf: tuple, uq: np.ndarray) -> float:
        # (K @ coef + p0) + uq @ tail as CubicRbf.__call__ adds them; the same BLAS calls on
        # arrays of the same shapes, the scalar additions in Python (IEEE, the same bits)
        coef, p0, tail = rbf
        return (float((k @ coef)[0]) + p0) + float((uq @ tail)[0])

    def predict(self, values: Sequence[float], fidelity: float) -> tuple[float, float, float]:
        """(mean loss clipped to [0, 1], replicate std, cost seconds) at one point."""
        u = self.inputs(values, fidelity)
        uq = np.array([u])
        k = self.kernel(u)
        loss = self._rbf(k, self.loss_rbf, uq)
        lcost = self._rbf(k if self.cost_kernel is self.kernel else self.cost_kernel(u), self.cost_rbf, uq)
        cell, frac = self.cells.locate(u)
        llo, lhi, clo, chi, corners = self.cell_data[cell]
        loss = llo if loss < llo else (lhi if loss > lhi else loss)
        lcost = clo if lcost < clo else (chi if lcost > chi else lcost)
        std = _numpy_sum([w * c for w, c in zip(self.cells.weights(frac), corners)])
        # np.clip and np.maximum keep the argument on ties (a >= b ? a : b): the same here
        mean = 0.0 if loss < 0.0 else (1.0 if loss > 1.0 else loss)
        return mean, (std if std >= 0.0 else 0.0), float(np.exp(lcost))

    def test_loss(self, values: Sequence[float], fidelity: float) -> float:
        """Interpolated test loss clipped to [0, 1] (``fidelity`` = the full one, for the scaling)."""
        u = self.inputs(values, fidelity)[:-1]
        v = self._rbf(self.test_kernel(u), self.test_rbf, np.array([u]))
        lo, hi = self.test_bounds[self.test_cells.locate(u)[0]]
        v = lo if v < lo else (hi if v > hi else v)
        return 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)


_MODELS: dict[tuple, tuple[FittedSurrogate, PointModel]] = {}


class SurrogateBenchmark(Benchmark):
    """A continuous benchmark interpolating a table: subclasses give the spec, space and weights.

    Variable ``k`` of the space (a float) is table axis ``k`` in the table's own scale.
    ``s_weight`` is the length of the fidelity axis relative to the unit-length
    configuration axes and ``smoothing`` the RBF ridge (choose both by leave-one-out error).
    The fitted interpolants come from the disk cache when a valid one exists (see the
    module docstring); ``model_source`` says whether this instance got them from memory,
    the cache or a fit.
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
        self.model_source = "memory"
        if key not in _MODELS:
            model, self.model_source = load_or_fit(t, self.s_weight, self.smoothing, self.fidelity_log)
            _MODELS[key] = (model, PointModel(model, t, self.s_weight, self.fidelity_log))
        self.model, self._point = _MODELS[key]
        m = self.model
        self._loss, self._cost, self._test, self._std = m.loss, m.cost, m.test, m.std
        self._grids = (m.loss_grid, m.cost_grid, m.test_grid)
        self._names = tuple(self.space.names)
        self._noise = bool(self.settings["noise"])
        self.optimum = None  # the surrogate's minimum is not known in closed form

    def inputs(self, values: Sequence[np.ndarray], fidelity: np.ndarray | float) -> np.ndarray:
        """Surrogate coordinates of axis values and fidelities."""
        return surrogate_inputs(self.table, values, fidelity, self.s_weight, self.fidelity_log)

    def predict(self, *values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vectorised noise-free (mean loss, noise std, cost seconds) at arrays of axis values then fidelities."""
        u = self.inputs(values[:-1], values[-1])
        loss = limited(self._loss, self._grids[0], u)
        cost = np.exp(limited(self._cost, self._grids[1], u))
        return np.clip(loss, 0.0, 1.0), np.maximum(self._std(u), 0.0), cost

    def predict_one(self, config: Any, fidelity: float | None = None) -> tuple[float, float, float]:
        """Noise-free (mean loss, noise std, cost seconds) of one configuration; equal to :meth:`predict`'s."""
        config, s = self.check(config, fidelity)
        s = self.fidelity.full if s is None else s
        values = [config[n] for n in self._names]
        if self._point.ok:
            return self._point.predict(values, s)
        mean, std, cost = self.predict(*values, s)
        return float(mean[0]), float(std[0]), float(cost[0])

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        """Interpolated loss (plus replicate noise) and interpolated cost."""
        mean, std, cost = self.predict_one(config, fidelity)
        loss = mean
        if self._noise and std > 0:
            loss = mean + std * float(np.random.default_rng(seed).standard_normal())
        return Result(min(max(loss, 0.0), 1.0), cost, {"mean": mean, "std": std})

    def test_loss(self, config: Any) -> float:
        """Interpolated per-configuration test loss (the noise-free full-fidelity loss when the table has none)."""
        if self._test is None:
            return super().test_loss(config)
        config, _ = self.check(config, None)
        values = [config[n] for n in self._names]
        if self._point.ok and self._point.test_ok:
            return self._point.test_loss(values, self.fidelity.full)
        u = self.inputs(values, self.fidelity.full)[:, :-1]
        return float(np.clip(limited(self._test, self._grids[2], u)[0], 0.0, 1.0))

    def provenance(self) -> dict[str, Any]:
        return {"table": str(self.table.path), "table_task": self.table.task, "table_sha256": self.table.sha256,
                "smoothing": self.smoothing, "s_weight": self.s_weight}
