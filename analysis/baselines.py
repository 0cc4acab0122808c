"""The committed runs as a race reads them: each run's anytime curve on a fixed grid, in full or compact form.

A race (``benchsuite race``, :mod:`benchsuite.analysis.race`) compares a new optimizer with every committed
run of a protocol's methods. What it needs of a run is its reported quantity (the protocol's ``quantity``,
its optimum overrides applied) at fixed fractions of the benchmark's budget on the table's axis
(:func:`benchsuite.analysis.scorecard.table_axis`: the evaluation budget, or the seconds for a protocol whose
table is taken in time), and the compute the run spent (:func:`benchsuite.analysis.reproductions.compute_hours`).
:func:`run_curves` computes exactly that from a tidy frame of runs, for the committed runs and for the new
method's runs alike, so both sides of a comparison are read by one function. The value at fraction 1 is the
value the scorecard compares (:func:`benchsuite.analysis.scorecard.run_values`), bit for bit.

Two sources give the same frame (``tests/test_race.py`` checks it):

- ``runs``: ``reproductions/<protocol>/runs.columns.xz`` of a clone, read with
  :func:`~benchsuite.analysis.reproductions.load_committed`, runs of an earlier setup of the protocol left
  out as the scorecard leaves them out (:func:`~benchsuite.analysis.reproductions.without_stale`);
- ``compact``: ``reproductions/<protocol>/race.csv.xz``, the same frame written once (:func:`write_compact`,
  by ``benchsuite reproductions``), which the wheel ships so that a race works from ``pip install``. Its first
  line is JSON naming the sha256 of the runs file and of the protocol file it was made from; a protocol file
  that changed since makes it a one-line :class:`DataError` (the record no longer matches the protocol).
  Floats are written in their shortest round-trip form, so the compact file reads back exactly.

The grid (:data:`FRACTIONS`) is 22 log-spaced fractions from 1e-3 to 1 (the time axes of the papers' figures
are logarithmic) and the 20 multiples of 0.05 (the evaluation axes are linear), so it holds 0.25 and 0.5, where
the reports also compare (:data:`benchsuite.analysis.stats.DEFAULT_FRACTIONS`).
"""
from __future__ import annotations

import hashlib
import io
import json
import lzma
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchsuite.errors import DataError

#: fractions of each benchmark's budget at which a run's curve is kept (log-spaced, then every 5 %)
FRACTIONS: tuple[float, ...] = tuple(sorted({round(float(f), 12) for f in
                                             [*np.geomspace(1e-3, 1.0, 22), *np.linspace(0.05, 1.0, 20)]}))
KEYS = ("benchmark", "optimizer", "repetition")
HOURS = "cpu_hours"
COMPACT_FILE = "race.csv.xz"
FORMAT = "benchsuite race baselines"
SOURCES = ("auto", "runs", "compact")
# pandas >= 3 reads every float back as written; pandas 2 needs the round-trip parser for that
_EXACT = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


def column(fraction: float) -> str:
    """The name of the curve column at ``fraction`` of the budget (``f0.25``)."""
    return f"f{fraction!r}"


CURVE_COLUMNS = tuple(column(f) for f in FRACTIONS)
FINAL = column(1.0)  # the value at the budget, the scorecard's


def protocol_sha256(protocol: Any) -> str:
    """The sha256 of a protocol file's text: what a compact record was made for."""
    return hashlib.sha256(protocol.text.encode("utf-8")).hexdigest()


def run_hours(df: pd.DataFrame, provenance: Iterable[Mapping[str, Any]]) -> pd.Series:
    """Compute per run in hours (:func:`~benchsuite.analysis.reproductions.compute_hours`), each run's benchmark
    kind taken from its provenance record (live training time counts, simulated costs do not)."""
    from .reproductions import _key, compute_hours

    kinds = {_key(p): str(p.get("benchmark_kind", "")) for p in provenance}
    kind = pd.Series([kinds.get((str(b), str(o), int(r)), "") for b, o, r in
                      zip(df["benchmark"], df["optimizer"], df["repetition"])], index=df.index)
    return compute_hours(df.assign(benchmark_kind=kind))


def run_curves(protocol: Any, df: pd.DataFrame, hours: pd.Series | None = None) -> pd.DataFrame:
    """One row per run of ``df`` (a tidy frame of :func:`benchsuite.analysis.load_runs`' form): its keys, its
    compute in hours (``hours``, indexed by the run keys; NaN without) and its reported quantity at each of
    :data:`FRACTIONS` of its benchmark's budget on the table's axis (NaN before its first incumbent)."""
    from .load import add_quantity
    from .scorecard import table_axis
    from .steps import AXIS_COLUMN, step_values

    at = table_axis(protocol)
    labels = [b.label for b in protocol.benchmarks]
    df = df[df["benchmark"].isin(labels)]
    rows: list[list[Any]] = []
    if len(df):
        df = add_quantity(df, protocol.quantity, {b.label: b.optimum for b in protocol.benchmarks})
        order = {b: i for i, b in enumerate(labels)}
        for (b, o, r), g in df.groupby(list(KEYS), sort=False):
            axis, budget = at[b]
            g = g.sort_values("evaluation", kind="stable")
            grid = np.array([f * budget for f in FRACTIONS])
            grid[-1] = budget  # exactly the budget: the scorecard's value
            values = step_values(g[AXIS_COLUMN[axis]].to_numpy(float), g["value"].to_numpy(float), grid)
            h = float(hours.get((b, o, r), np.nan)) if hours is not None else np.nan
            rows.append([str(b), str(o), int(r), h, *values.tolist(), order[b]])
    out = pd.DataFrame(rows, columns=[*KEYS, HOURS, *CURVE_COLUMNS, "_order"])
    out = out.sort_values(["_order", "optimizer", "repetition"], kind="stable").drop(columns="_order")
    out["repetition"] = out["repetition"].astype(int)
    return out.reset_index(drop=True)


def from_runs(protocol: Any, root: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The curves of ``protocol``'s committed runs under ``root`` (a clone's ``reproductions/``), runs of an
    earlier setup left out; and what they were made from (runs sha256, protocol sha256, runs left out)."""
    from .reproductions import _check_pair, load_committed, protocol_dir, run_provenances, without_stale

    df, prov = load_committed(root, protocol.name)
    _check_pair(protocol_dir(root, protocol.name), prov)
    head = {"protocol": protocol.name, "runs_sha256": prov.get("runs_sha256", ""),
            "protocol_sha256": protocol_sha256(protocol), "stale_left_out": 0}
    if df is None:
        return run_curves(protocol, pd.DataFrame(columns=[*KEYS, "evaluation"])), head
    df, stale = without_stale(protocol, df, prov)
    head["stale_left_out"] = stale
    return run_curves(protocol, df, run_hours(df, run_provenances(prov))), head


def compact_text(curves: pd.DataFrame, head: Mapping[str, Any]) -> str:
    """The compact file's text: a JSON line (format, grid, what it was made from), then the curves as CSV."""
    meta = {"format": FORMAT, "version": 1, "fractions": list(FRACTIONS), **head}
    return json.dumps(meta) + "\n" + curves.to_csv(index=False, lineterminator="\n")


def parse_compact(text: str, where: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The curves and head of a compact file's text; anything else is a one-line DataError naming ``where``."""
    line, _, body = text.partition("\n")
    try:
        head = json.loads(line)
        if not isinstance(head, dict) or head.get("format") != FORMAT or head.get("version") != 1:
            raise ValueError(f"not a {FORMAT!r} file of version 1")
        if tuple(head.get("fractions", ())) != FRACTIONS:
            raise ValueError("made on another grid of fractions")
        df = pd.read_csv(io.StringIO(body), dtype={"benchmark": str, "optimizer": str}, **_EXACT)
        missing = [c for c in (*KEYS, HOURS, *CURVE_COLUMNS) if c not in df.columns]
        if missing:
            raise ValueError(f"column(s) {', '.join(missing[:3])} missing")
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"{where}: unreadable race baselines ({' '.join(str(exc).split())})") from None
    df["repetition"] = df["repetition"].astype(int)
    return df, head


def read_compact(protocol: Any, root: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The compact curves of ``protocol`` under ``root``; a missing file or one made for another version of the
    protocol file is a one-line DataError."""
    path = Path(root) / protocol.name / COMPACT_FILE
    try:
        text = lzma.decompress(path.read_bytes()).decode("utf-8")
    except FileNotFoundError:
        raise DataError(f"{path}: no race baselines for protocol {protocol.name!r} (its committed runs are "
                        "summarised there by `benchsuite reproductions`)") from None
    except (lzma.LZMAError, UnicodeDecodeError, OSError) as exc:
        raise DataError(f"{path}: corrupt race baselines ({' '.join(str(exc).split())})") from None
    df, head = parse_compact(text, str(path))
    if head.get("protocol_sha256") != protocol_sha256(protocol):
        raise DataError(f"{path}: made for another version of protocol file {protocol.path} (its runs may not be "
                        "this protocol's any more); regenerate with `benchsuite reproductions` in a clone")
    return df, head


def write_compact(protocol: Any, root: str | os.PathLike) -> Path | None:
    """Write ``root/<protocol>/race.csv.xz`` from the committed runs (atomically); None when none are committed."""
    from .reproductions import protocol_dir, runs_path
    from benchsuite.results import atomic_write_with

    d = protocol_dir(root, protocol.name)
    if not runs_path(d).exists():
        return None
    curves, head = from_runs(protocol, root)
    data = lzma.compress(compact_text(curves, head).encode("utf-8"), preset=9 | lzma.PRESET_EXTREME)
    atomic_write_with(d / COMPACT_FILE, lambda fh: fh.write(data))
    return d / COMPACT_FILE


def compact_is_current(protocol: Any, root: str | os.PathLike) -> bool:
    """Whether ``root/<protocol>/race.csv.xz`` was made from the committed runs and protocol file as they are."""
    from .reproductions import protocol_dir, read_provenance

    path = protocol_dir(root, protocol.name) / COMPACT_FILE
    if not path.exists():
        return False
    try:
        with lzma.open(path, "rt", encoding="utf-8") as fh:
            head = json.loads(fh.readline())
    except (lzma.LZMAError, OSError, ValueError, EOFError):
        return False
    prov = read_provenance(protocol_dir(root, protocol.name) / "provenance.json")
    return (head.get("runs_sha256") == prov.get("runs_sha256") and head.get("protocol_sha256") ==
            protocol_sha256(protocol) and tuple(head.get("fractions", ())) == FRACTIONS)


def update_compact(protocols: Mapping[str, Any], root: str | os.PathLike) -> list[str]:
    """Rewrite the compact file of every protocol with committed runs whose file is missing or out of date."""
    from .reproductions import protocol_dir, runs_path

    written = []
    for name in sorted(protocols):
        p = protocols[name]
        if runs_path(protocol_dir(root, name)).exists() and not compact_is_current(p, root):
            out = write_compact(p, root)
            if out is not None:
                written.append(str(out))
    return written


def default_root() -> Path:
    """Where the committed runs are: ``reproductions/`` of the checkout, or the one the wheel ships."""
    from benchsuite.paths import REPRODUCTIONS_DIR

    return REPRODUCTIONS_DIR


def committed_curves(protocol: Any, root: str | os.PathLike, source: str = "auto") -> tuple[pd.DataFrame,
                                                                                           dict[str, Any]]:
    """The committed runs' curves of ``protocol``: from the runs themselves (``runs``), from the compact file
    (``compact``), or ``auto``: the runs where the folder holds them (a clone), else the compact file (a wheel),
    else none (a protocol nobody committed runs of: an empty frame). The head says which source was read
    (``source``: runs, compact or none)."""
    from .reproductions import protocol_dir, runs_path

    if source not in SOURCES:
        raise DataError(f"baselines source {source!r}: expected one of {', '.join(SOURCES)}")
    has_runs = runs_path(protocol_dir(root, protocol.name)).exists()
    if source == "auto" and not has_runs and not (protocol_dir(root, protocol.name) / COMPACT_FILE).exists():
        empty = run_curves(protocol, pd.DataFrame(columns=[*KEYS, "evaluation"]))
        return empty, {"protocol": protocol.name, "source": "none", "stale_left_out": 0}
    if source == "runs" or (source == "auto" and has_runs):
        if not has_runs:
            raise DataError(f"{protocol_dir(root, protocol.name)}: no committed runs of protocol {protocol.name!r} "
                            "(an installed wheel ships only their compact form: use the compact source)")
        curves, head = from_runs(protocol, root)
        return curves, {**head, "source": "runs"}
    curves, head = read_compact(protocol, root)
    return curves, {**head, "source": "compact"}
