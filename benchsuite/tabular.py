"""One tabular benchmark for every lookup table: a data file plus a space plus a few lines.

Every table the project computes is an HDF5 file in one layout (Syne Tune's blackbox
repository is the model): per task (the file's root group, or one group per dataset) an
array over configurations x fidelities x seeds for each objective, with the cost as one of
the objectives, plus per-configuration arrays (the test loss).

Layout of a task group (format ``benchsuite-table 1``, in the group's attributes):

* ``axes``: the names of the configuration axes, in the order of the space's variables;
  each is a 1-D dataset of its levels (numbers, or strings for categorical axes).
* ``fidelity_axis``: a 1-D dataset of the tabulated fidelity values (length F >= 1;
  F = 1 means the table has one fidelity and the benchmark has no fidelity axis).
* ``seed_axis``: a 1-D dataset ``0 .. S-1`` indexing the seed replicates.
* ``objectives``: datasets of shape ``(*axis lengths, F, S)``; ``loss_objective`` and
  ``cost_objective`` name the loss and the cost (seconds) among them.
* ``n_seeds``: an integer dataset of shape ``(*axis lengths, F)``: how many replicates of
  each entry are filled (the rest is NaN). An evaluation with seed ``k`` returns replicate
  ``k % n_seeds``: the seed chooses ONE replicate, never the mean.
* ``test_loss``: the name of a per-configuration dataset (shape ``axis lengths``) that
  :meth:`TabularBenchmark.test_loss` returns.

Integrity: :func:`write_table` writes the file atomically and a sidecar ``<file>.sha256``;
:func:`open_table` checks the file against it, so a corrupt, truncated or half-copied table,
or one without its sidecar, is a one-line :class:`~benchsuite.errors.DataError` that says how
to rebuild it. The sha256
goes into every result's provenance.

Which table a benchmark needs is declared on the benchmark (:class:`TableSpec`); the
workflow asks the registry (:func:`benchsuite.registry.required_tables`) instead of keeping its own list.
"""
from __future__ import annotations

import itertools
import json
import operator
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .benchmark import Benchmark, Fidelity, Result
from .errors import DataError, InvalidConfigError
from .settings import Setting
from .space import Categorical, Float, Integer, Ordinal, Space

FORMAT = "benchsuite-table 1"
from .paths import TABLES_DIR  # noqa: E402  (re-exported: table builders import it from here)
# an all-categorical space up to this size gets a dict from value tuples to row numbers
_MAX_KEY_INDEX = 2_000_000


@dataclass(frozen=True)
class TableSpec:
    """Which table a benchmark reads: a file under ``tables/``, its task group, how to rebuild it."""

    file: str
    task: str = ""
    rebuild: str = ""

    @property
    def path(self) -> Path:
        """Absolute path of the committed table."""
        return TABLES_DIR / self.file


@dataclass
class TaskArrays:
    """What :func:`write_table` writes for one task: axes, fidelities, objectives, extras."""

    axes: dict[str, np.ndarray]
    fidelity_name: str
    fidelities: np.ndarray
    objectives: dict[str, np.ndarray]
    n_seeds: np.ndarray
    loss: str = "loss"
    cost: str = "cost"
    test_loss: str = ""
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)


def sidecar(path: Path) -> Path:
    """The checksum file written next to a table."""
    return path.with_name(path.name + ".sha256")


def write_table(path: str | os.PathLike, tasks: Mapping[str, TaskArrays], attrs: Mapping[str, Any]) -> Path:
    """Write tasks (``""`` = the root group) to ``path`` atomically, then its sha256 sidecar."""
    import h5py

    from .data import sha256_file
    from .results import new_file_mode

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with h5py.File(tmp, "w") as f:
            f.attrs["table_format"] = FORMAT
            for k, v in attrs.items():
                f.attrs[k] = v
            for name, t in tasks.items():
                _write_task(f.require_group(name) if name else f, t)
        os.chmod(tmp, new_file_mode())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    digest = sha256_file(path)
    side = sidecar(path)
    side_tmp = side.with_name(side.name + f".{os.getpid()}.tmp")
    side_tmp.write_text(f"{digest}  {path.name}\n")
    os.replace(side_tmp, side)
    return path


def _write_task(g: Any, t: TaskArrays) -> None:
    shape = tuple(len(v) for v in t.axes.values())
    nf = len(t.fidelities)
    seeds = None
    for name, arr in t.objectives.items():
        if arr.shape[:-1] != shape + (nf,):
            raise ValueError(f"objective {name!r} has shape {arr.shape}, expected {shape + (nf,)} + (seeds,)")
        seeds = arr.shape[-1]
    if t.n_seeds.shape != shape + (nf,):
        raise ValueError(f"n_seeds has shape {t.n_seeds.shape}, expected {shape + (nf,)}")
    names = list(t.axes) + [t.fidelity_name, "seed"]
    for name, values in [*t.axes.items(), (t.fidelity_name, np.asarray(t.fidelities, float)),
                         ("seed", np.arange(seeds))]:
        values = np.asarray(values)
        if values.dtype.kind in "UO":
            values = values.astype(object)
            d = g.create_dataset(name, data=values, dtype=_str_dtype())
        else:
            d = g.create_dataset(name, data=values)
        d.make_scale(name)
    for name, arr in t.objectives.items():
        d = g.create_dataset(name, data=arr, compression="gzip", compression_opts=9, shuffle=True)
        for i, axis in enumerate(names):
            d.dims[i].attach_scale(g[axis])
            d.dims[i].label = axis
    g.create_dataset("n_seeds", data=np.asarray(t.n_seeds, dtype=np.int8), compression="gzip", shuffle=True)
    for name, arr in t.extras.items():
        arr = np.asarray(arr)
        kw = {"compression": "gzip", "compression_opts": 9, "shuffle": True} if arr.size > 64 else {}
        g.create_dataset(name, data=arr, **kw)
    for name, text in t.descriptions.items():
        g[name].attrs["description"] = text
    g.attrs.update({"axes": json.dumps(list(t.axes)), "fidelity_axis": t.fidelity_name, "seed_axis": "seed",
                    "objectives": json.dumps(list(t.objectives)), "loss_objective": t.loss,
                    "cost_objective": t.cost, "test_loss": t.test_loss})
    for k, v in t.attrs.items():
        g.attrs[k] = v


def _str_dtype() -> Any:
    import h5py

    return h5py.string_dtype("utf-8")


def _plain_attr(v: Any) -> Any:
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


class Table:
    """One task of a table file, loaded whole into memory (tables are small)."""

    def __init__(self, path: Path, task: str, sha256: str, rebuild: str = ""):
        import h5py

        self.path, self.task, self.sha256 = Path(path), task, sha256
        self.size_bytes = self.path.stat().st_size
        where = f"table {self.path}" + (f" (task {task!r})" if task else "")
        try:
            with h5py.File(self.path, "r") as f:
                if task and task not in f:
                    raise DataError(f"{where} has no task {task!r}; it has {sorted(k for k in f if isinstance(f[k], h5py.Group))}")
                g = f[task] if task else f
                self.attrs = {k: _plain_attr(v) for k, v in f.attrs.items()}
                self.attrs.update({k: _plain_attr(v) for k, v in g.attrs.items()})
                if self.attrs.get("table_format") != FORMAT:
                    raise DataError(f"{where} is not in the format {FORMAT!r} "
                                    f"(found {self.attrs.get('table_format')!r}); {_rebuild_hint(rebuild)}")
                self.axis_names: tuple[str, ...] = tuple(json.loads(g.attrs["axes"]))
                self.fidelity_name: str = _plain_attr(g.attrs["fidelity_axis"])
                self.objective_names: tuple[str, ...] = tuple(json.loads(g.attrs["objectives"]))
                self.loss_name = _plain_attr(g.attrs["loss_objective"])
                self.cost_name = _plain_attr(g.attrs["cost_objective"])
                self.test_name = _plain_attr(g.attrs.get("test_loss", ""))
                self.arrays: dict[str, np.ndarray] = {}
                for k, d in g.items():
                    if isinstance(d, h5py.Dataset):
                        a = d[()]
                        if a.dtype.kind == "O":
                            a = np.array([x.decode() if isinstance(x, bytes) else x for x in a], dtype=object)
                        self.arrays[k] = a
        except DataError:
            raise
        except (OSError, KeyError, ValueError, json.JSONDecodeError) as exc:
            raise DataError(f"{where} is unreadable or incomplete ({type(exc).__name__}: {exc}); "
                            f"{_rebuild_hint(rebuild)}") from None
        self._check(where, rebuild)
        self.axes: tuple[np.ndarray, ...] = tuple(self.arrays[n] for n in self.axis_names)
        self.fidelities = np.asarray(self.arrays[self.fidelity_name], dtype=float)
        self.n_seeds = self.arrays["n_seeds"].astype(np.int64)
        self.complete = bool(self.attrs.get("complete", True))

    def _check(self, where: str, rebuild: str) -> None:
        """The layout of the module docstring: every dataset there, of the right shape and kind, some loss filled."""
        hint = _rebuild_hint(rebuild)

        def bad(what: str) -> DataError:
            return DataError(f"{where}: {what}; {hint}")

        a = self.arrays
        names = [*self.axis_names, self.fidelity_name, "n_seeds", *self.objective_names]
        missing = [n for n in names if n not in a]
        if missing:
            raise bad(f"dataset(s) {', '.join(map(repr, missing))} missing")
        for role, n in (("loss_objective", self.loss_name), ("cost_objective", self.cost_name)):
            if n not in self.objective_names:
                raise bad(f"{role} {n!r} is not one of its objectives {list(self.objective_names)}")
        for n in self.axis_names:
            if a[n].ndim != 1 or not len(a[n]):
                raise bad(f"axis {n!r} has shape {a[n].shape}; an axis is a non-empty 1-D list of levels")
        fid = a[self.fidelity_name]
        if fid.ndim != 1 or not len(fid) or fid.dtype.kind not in "fiu" or not np.isfinite(fid).all():
            raise bad(f"fidelity axis {self.fidelity_name!r} must be a non-empty 1-D list of finite numbers")
        grid = tuple(len(a[n]) for n in self.axis_names) + (len(fid),)
        seeds = None
        for n in self.objective_names:
            arr = a[n]
            if arr.dtype.kind not in "fiu":
                raise bad(f"objective {n!r} holds {arr.dtype} values, not numbers")
            if arr.shape[:-1] != grid or arr.ndim != len(grid) + 1 or arr.shape[-1] < 1:
                raise bad(f"objective {n!r} has shape {arr.shape}, expected {grid} + (seeds,) from its axes")
            if seeds is not None and arr.shape[-1] != seeds:
                raise bad(f"objective {n!r} has {arr.shape[-1]} seed replicates, the others {seeds}")
            seeds = arr.shape[-1]
        ns = a["n_seeds"]
        if ns.shape != grid or ns.dtype.kind not in "iu":
            raise bad(f"n_seeds has shape {ns.shape} and type {ns.dtype}, expected integers of shape {grid}")
        if ns.size and (ns.min() < 0 or ns.max() > seeds):
            raise bad(f"n_seeds holds values outside 0..{seeds}")
        loss = a[self.loss_name]
        if not np.isfinite(loss).any():
            raise bad(f"its loss objective {self.loss_name!r} has no finite entry (all NaN or infinite)")
        # a filled entry's cost is what a lookup charges the clock: NaN or a negative cost would turn every
        # lookup of it into a failed trial (or stall a budget in seconds), so the table is refused as it opens
        cost = np.asarray(a[self.cost_name], dtype=float)[np.isfinite(loss)]
        with np.errstate(invalid="ignore"):
            wrong = ~(np.isfinite(cost) & (cost >= 0))
        if wrong.any():
            raise bad(f"its cost objective {self.cost_name!r} is not a finite number of seconds >= 0 in "
                      f"{int(wrong.sum())} of its {cost.size} filled entries (first: {cost[wrong][0]!r})")
        if self.test_name:
            test = a.get(self.test_name)
            if test is None:
                raise bad(f"test loss dataset {self.test_name!r} missing")
            if test.shape != grid[:-1] or test.dtype.kind not in "fiu":
                raise bad(f"test loss {self.test_name!r} has shape {test.shape} and type {test.dtype}, "
                          f"expected numbers of shape {grid[:-1]}")

    @property
    def shape(self) -> tuple[int, ...]:
        """Number of levels of each configuration axis."""
        return tuple(len(a) for a in self.axes)

    @property
    def loss(self) -> np.ndarray:
        """The loss objective, shape ``(*shape, F, S)``."""
        return self.arrays[self.loss_name]

    @property
    def cost(self) -> np.ndarray:
        """The cost objective in seconds, shape ``(*shape, F, S)``."""
        return self.arrays[self.cost_name]

    @property
    def test_loss(self) -> np.ndarray | None:
        """Per-configuration test loss, or ``None`` when the table has none."""
        return self.arrays.get(self.test_name) if self.test_name else None

    def seed_mean(self, objective: str | None = None) -> np.ndarray:
        """Mean over the filled replicates of an objective (the loss by default), shape ``(*shape, F)``."""
        a = self.arrays[objective or self.loss_name]
        s = np.arange(a.shape[-1])
        filled = s < self.n_seeds[..., None]
        with np.errstate(invalid="ignore"):
            return np.where(filled, a, 0.0).sum(axis=-1) / np.maximum(self.n_seeds, 1)


def _rebuild_hint(rebuild: str) -> str:
    return f"rebuild it with `{rebuild}`" if rebuild else "rebuild it with its recipe under tables/"


_OPEN: dict[tuple[str, str, int, int], Table] = {}


def open_table(path: str | os.PathLike, task: str = "", rebuild: str = "") -> Table:
    """The table task at ``path``, checked against its sha256 sidecar; cached per file version."""
    from .data import sha256_file

    p = Path(path)
    if not p.exists():
        raise DataError(f"table {p} is missing; {_rebuild_hint(rebuild)}, or pass the setting table=PATH")
    if not p.is_file():
        raise DataError(f"table {p} is not a file; pass the setting table=PATH of an HDF5 table file")
    st = p.stat()
    key = (str(p.resolve()), task, st.st_size, st.st_mtime_ns)
    if key not in _OPEN:
        digest = sha256_file(p)
        side = sidecar(p)
        if not side.exists():  # issue 26 item 3: an unverified table is refused, never opened silently
            raise DataError(f"table {p} has no checksum file {side.name}, so it cannot be verified; "
                            f"{_rebuild_hint(rebuild)} (benchsuite.tabular.write_table writes both; "
                            "restore a shipped one with `git checkout -- <file>`)")
        try:
            recorded = side.read_text(encoding="utf-8", errors="replace").split()
        except OSError as exc:
            raise DataError(f"table {p}: cannot read its checksum file {side.name} ({exc.strerror or exc})") \
                from None
        expected = recorded[0] if recorded else ""
        if digest != expected:
            raise DataError(f"table {p} is corrupt: its sha256 {digest[:16]}... differs from the "
                            f"{expected[:16]}... recorded in {side.name}; {_rebuild_hint(rebuild)} "
                            "(or restore it with `git checkout -- <file>`)")
        _OPEN[key] = Table(p, task, digest, rebuild)
    return _OPEN[key]


class _Axis:
    """How one space variable maps to its table axis: a level index from a value."""

    def __init__(self, var: Any, levels: np.ndarray, where: str):
        self.var = var
        self.n = len(levels)
        if isinstance(var, (Categorical, Ordinal)):
            want, have = list(var.levels), levels.tolist()
            if want != have:
                raise DataError(f"{where}: axis for variable {var.name!r} has levels {have}, "
                                f"the space expects {want}; rebuild the table")
            self.index = {v: i for i, v in enumerate(var.levels)}
            self.uniform = None
        elif isinstance(var, (Float, Integer)):
            lv = np.asarray(levels, dtype=float)
            if self.n > 1 and np.allclose(np.diff(lv), (lv[-1] - lv[0]) / (self.n - 1), rtol=1e-9, atol=1e-12):
                self.uniform = (float(lv[0]), float((lv[-1] - lv[0]) / (self.n - 1)))
            else:
                self.uniform = None
            self.levels = lv
            self.index = None
        else:
            raise DataError(f"{where}: variable {var.name!r} of type {type(var).__name__} cannot index a table axis")

    def indices(self, values: Sequence[Any]) -> np.ndarray:
        """Level indices of valid values (nearest level for numeric axes), vectorised."""
        if self.index is not None:
            return np.array([self.index[v] for v in values], dtype=np.int64)
        v = np.asarray(values, dtype=float)
        if self.uniform is not None:
            lo, step = self.uniform
            return np.clip(np.rint((v - lo) / step), 0, self.n - 1).astype(np.int64)
        pos = np.clip(np.searchsorted(self.levels, v), 1, self.n - 1)
        left = self.levels[pos - 1]
        return np.where(v - left <= self.levels[pos] - v, pos - 1, pos).astype(np.int64)


class TabularBenchmark(Benchmark):
    """A benchmark served from a table: subclasses give ``table_spec``, ``make_space`` and text.

    Variable ``k`` of the space indexes axis ``k`` of the table: categorical and ordinal
    variables by level (the table's levels must equal the space's), numeric ones by the
    nearest tabulated level (the table's value at the nearest grid point is returned, so
    continuous optimizers can use it). Evaluation seed ``k`` returns replicate
    ``k % n_seeds``. ``optimum_from`` says whether the known optimum is the best mean
    loss at full fidelity ("loss") or the best test loss ("test"), matching what regret
    is measured against.
    """

    kind = "tabular"
    table_spec: ClassVar[TableSpec]
    fidelity_log: ClassVar[bool] = False
    fidelity_unit: ClassVar[str] = ""
    optimum_from: ClassVar[str] = "loss"

    @property
    def optimum_label(self) -> str:  # type: ignore[override]
        """What the known optimum is: the table's best test loss or its best mean full-fidelity loss."""
        return "best test loss in the table" if self.optimum_from == "test" else "best mean full-fidelity loss in the table"
    settings_spec = {
        "table": Setting("", "path of the HDF5 table; empty = the committed one under tables/", type=str),
        "allow_partial": Setting(False, "accept a table whose build is incomplete (testing only)"),
    }

    def make_space(self, table: Table) -> Space:
        """The search space; variable k indexes table axis k."""
        raise NotImplementedError

    def cost_factors(self, table: Table) -> np.ndarray | None:
        """Per tabulated fidelity, the factor every looked-up cost is charged at; ``None`` (the default): the
        table's own costs. A benchmark overrides it to charge another setup's costs for the same losses."""
        return None

    @classmethod
    def required_tables(cls) -> list[Path]:
        """Table files this benchmark reads (the workflow builds missing ones first)."""
        spec = getattr(cls, "table_spec", None)
        return [spec.path] if spec is not None else []

    def setup(self) -> None:
        spec = self.table_spec
        t = open_table(self.settings["table"] or spec.path, spec.task, spec.rebuild)
        if not t.complete and not self.settings["allow_partial"]:
            raise DataError(f"table {t.path} is incomplete ({t.attrs.get('missing', 'entries missing')}); "
                            f"{_rebuild_hint(spec.rebuild)}")
        self.table = t
        self.space = space = self.make_space(t)
        if len(space) != len(t.axes):
            raise DataError(f"table {t.path}: {len(t.axes)} axes {list(t.axis_names)} but the space has "
                            f"{len(space)} variables {space.names}; rebuild the table")
        where = f"table {t.path}"
        self._axes = [_Axis(v, a, where) for v, a in zip(space.variables, t.axes)]
        self._names = tuple(space.names)
        self._nvars = len(self._names)
        nf = t.fidelities.size
        fv = tuple(float(v) for v in t.fidelities)
        self.fidelity = None if nf == 1 else Fidelity(
            t.fidelity_name, fv[0], fv[-1], log=self.fidelity_log, full=fv[-1], values=fv, unit=self.fidelity_unit)
        self._fid_index = {v: i for i, v in enumerate(fv)}
        self._full = nf - 1
        self._nf, self._ns = nf, t.loss.shape[-1]
        # the costs a lookup charges: the table's, or times a per-fidelity factor (cost_factors)
        cost = t.cost
        factors = self.cost_factors(t)
        if factors is not None:
            factors = np.asarray(factors, dtype=float)
            if factors.shape != (nf,) or not (np.isfinite(factors).all() and (factors > 0).all()):
                raise DataError(f"{self.name}: cost factors must be {nf} positive finite numbers, one per "
                                f"fidelity; got {factors.tolist()}")
            cost = cost * factors[:, None]
        self._cost = cost
        # flat Python lists: a scalar lookup indexes a list (tens of ns) instead of a numpy array. Two lists of
        # floats, not one of (loss, cost) tuples: a tuple per entry is one more object to fetch from memory on
        # every evaluate (measured with perf/ab.py: evaluate 1.8 -> 2.1 us with the tuples, though query alone,
        # which hands the tuple back unopened, looked faster)
        self._loss_l = t.loss.reshape(-1).tolist()
        self._cost_l = cost.reshape(-1).tolist()
        self._nseed_l = t.n_seeds.reshape(-1).tolist()
        test = t.test_loss
        self._test_l = test.reshape(-1).tolist() if test is not None else None
        self._strides = [int(np.prod(t.shape[k + 1:])) for k in range(len(t.shape))]
        self._key_index: dict[tuple, int] | None = None
        if all(a.index is not None for a in self._axes) and int(np.prod(t.shape)) <= _MAX_KEY_INDEX:
            self._key_index = {key: i for i, key in enumerate(itertools.product(*(v.levels for v in space.variables)))}
        # the configuration's values as the key tuple, in one C call
        self._key_of = (operator.itemgetter(*self._names) if len(self._names) > 1
                        else (lambda c, _n=self._names[0]: (c[_n],)))
        self._bounds = [(v.low, v.high) if isinstance(v, (Float, Integer)) else None for v in space.variables]
        if self.optimum_from == "test" and test is not None:
            self.optimum = float(np.nanmin(test))
        else:
            full = t.seed_mean()[..., -1]
            self.optimum = float(np.nanmin(full)) if np.isfinite(full).any() else None

    # -- indexing --------------------------------------------------------------------------
    def row(self, config: Any) -> int:
        """Flat configuration index (row) of a configuration; validates on the slow path."""
        names = self._names
        if self._key_index is not None:
            if type(config) is dict and len(config) == len(names):
                try:
                    return self._key_index[self._key_of(config)]
                except (KeyError, TypeError):
                    pass
            return self._key_index[self._key_of(self.space.validate(config))]
        if type(config) is not dict or len(config) != len(names):
            config = self.space.validate(config)
        r = 0
        for k, name in enumerate(names):
            ax, v = self._axes[k], config.get(name)
            if ax.index is not None:
                i = ax.index.get(v) if isinstance(v, (str, int)) else None
                if i is None:
                    i = ax.index[self.space[name].validate(v)]
            else:
                lo, hi = self._bounds[k]
                if type(v) is not float or not lo <= v <= hi:
                    v = float(self.space[name].validate(v))
                u = ax.uniform
                if u is not None:
                    i = int((v - u[0]) / u[1] + 0.5)  # v >= levels[0], so truncation rounds half up
                    i = min(i, ax.n - 1)
                else:
                    i = int(ax.indices([v])[0])
            r += i * self._strides[k]
        return r

    def rows(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Rows of many configurations (vectorised per axis); an invalid one raises as in :meth:`row`."""
        if self._key_index is not None:
            ki, key_of = self._key_index, self._key_of
            try:
                return np.array([ki[key_of(c)] for c in configs], dtype=np.int64)
            except (KeyError, TypeError):
                return np.array([self.row(c) for c in configs], dtype=np.int64)
        idx = [ax.indices([c[n] for c in configs]) for ax, n in zip(self._axes, self._names)]
        return self.rows_of(idx)

    def rows_of(self, indices: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
        """Rows from per-axis level indices (a sequence of arrays, or an ``(n, d)`` array)."""
        idx = np.asarray(indices)
        if idx.ndim == 2 and idx.shape[1] == len(self._axes) and idx.shape[0] != len(self._axes):
            idx = idx.T
        return np.ravel_multi_index(tuple(idx), self.table.shape)

    def fidelity_index(self, fidelity: float | None) -> int:
        """Index of a tabulated fidelity (``None`` = full); raises with the allowed values."""
        if fidelity is None:
            return self._full
        i = self._fid_index.get(fidelity) if type(fidelity) is float else None
        if i is None:
            if self.fidelity is None:
                raise InvalidConfigError(f"benchmark {self.name!r} has no fidelity; got fidelity={fidelity!r}")
            i = self._fid_index[self.fidelity.validate(fidelity)]
        return i

    def lookup(self, rows: np.ndarray, fidelity_index: np.ndarray | int, seeds: np.ndarray | int
               ) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised (loss, cost) of rows at fidelity indices; seed ``k`` picks replicate ``k % n_seeds``."""
        rows = np.asarray(rows)
        fi = np.broadcast_to(np.asarray(fidelity_index), rows.shape)
        t = self.table
        ns = t.n_seeds.reshape(-1, self._nf)[rows, fi]
        rep = np.asarray(seeds) % ns
        loss = t.loss.reshape(-1, self._nf, self._ns)
        cost = self._cost.reshape(-1, self._nf, self._ns)
        return loss[rows, fi, rep], cost[rows, fi, rep]

    # -- the Benchmark interface -----------------------------------------------------------
    def query(self, config: Any, fidelity: float | None = None, seed: int = 0) -> tuple[float, float]:
        """Scalar (loss, cost) of ONE seed replicate (``seed % n_seeds``): the lookup fast path."""
        # the common case inlined (a call costs about as much as the lookup): a plain dict of a
        # categorical space; anything else goes through row(), which validates
        if self._key_index is not None and type(config) is dict and len(config) == self._nvars:
            try:
                r = self._key_index[self._key_of(config)]
            except (KeyError, TypeError):
                r = self.row(config)
        else:
            r = self.row(config)
        cell = r * self._nf + (self._full if fidelity is None else self.fidelity_index(fidelity))
        k = cell * self._ns + seed % self._nseed_l[cell]
        loss = self._loss_l[k]
        if loss != loss:  # NaN: a hole in a partial table
            raise DataError(f"{self.name}: no table entry for {config} (partial table {self.table.path})")
        return loss, self._cost_l[k]

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        """The tabulated loss and cost of ONE seed replicate (chosen by ``seed``), never the mean."""
        loss, cost = self.query(config, fidelity, seed)
        return Result(loss, cost)

    def test_loss(self, config: Any) -> float:
        """The table's per-configuration test loss (the mean over seeds where it has several)."""
        if self._test_l is None:
            return super().test_loss(config)
        return self._test_l[self.row(config)]

    def snap(self, config: Any) -> dict[str, Any]:
        """The tabulated configuration a configuration is evaluated at (nearest grid point)."""
        return self.config_of_row(self.row(config))

    def config_of_row(self, row: int) -> dict[str, Any]:
        """The configuration of a table row (numeric variables at their grid level)."""
        idx = np.unravel_index(int(row), self.table.shape)
        out = {}
        for k, (v, i) in enumerate(zip(self.space.variables, idx)):
            level = self.table.axes[k][int(i)]
            out[v.name] = float(level) if isinstance(v, Float) else v.validate(level)
        return out

    def provenance(self) -> dict[str, Any]:
        return {"table": str(self.table.path), "table_task": self.table.task, "table_sha256": self.table.sha256,
                "table_complete": self.table.complete}

    def describe(self) -> str:
        """The generic description plus the table's axes, arrays, size and provenance."""
        t = self.table
        lines = [super().describe(),
                 f"table: {t.path} ({t.size_bytes / 1024:.1f} KiB, sha256 {t.sha256[:16]}..., "
                 f"{'complete' if t.complete else 'INCOMPLETE'})" + (f", task {t.task!r}" if t.task else "")]
        axes = ", ".join(f"{n} {len(a)} levels" + (f" [{a[0]:g} .. {a[-1]:g}]" if a.dtype.kind in "fiu" else "")
                         for n, a in zip(t.axis_names, t.axes))
        fid = ("1 value " + f"{t.fidelities[0]:g} (the table has no other fidelity)" if t.fidelities.size == 1
               else f"{t.fidelities.size} values {self.fidelity_labels()}")
        lines.append(f"  axes: {axes}; {t.fidelity_name} {fid}; seed replicates up to {t.loss.shape[-1]} "
                     f"(filled per entry: {sorted(set(np.unique(t.n_seeds).tolist()))})")
        lines.append(f"  arrays: {t.loss_name}/{t.cost_name} {t.loss.shape} = {t.loss.size} entries "
                     f"({int(np.isfinite(t.loss).sum())} filled)"
                     + (f", {t.test_name} {t.test_loss.shape}" if t.test_loss is not None else ""))
        if t.test_loss is not None and np.isfinite(t.test_loss).any():
            r = int(np.nanargmin(t.test_loss))
            best = self.space.to_json(self.config_of_row(r))
            lines.append(f"  best {t.test_name}: {np.nanmin(t.test_loss):.4f} at {best}")
        for k in self.describe_attrs:
            if k in t.attrs:
                lines.append(f"  {k}: {t.attrs[k]}")
        return "\n".join(lines)

    describe_attrs: ClassVar[tuple[str, ...]] = ("source", "recipe", "versions", "build_machine", "build_dates")

    def fidelity_labels(self) -> list[str]:
        """The tabulated fidelity values as short labels for ``describe``."""
        return [f"{v:g}" for v in self.table.fidelities]
