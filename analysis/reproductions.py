"""Committed runs: ``reproductions/<protocol>/runs.columns.xz`` and ``provenance.json``, built from a results folder.

    benchsuite reproductions collect PROTOCOL --results DIR    # add finished runs to the committed record
    benchsuite reproductions restore PROTOCOL --results DIR    # write the committed runs back as result files

``runs.columns.xz`` is the aggregated one-row-per-trial frame of :func:`benchsuite.analysis.load_runs`
(every per-run column, plus the run keys); ``provenance.json`` holds what the runs were made with
(commits, versions, machines), the compute spent, the repetitions done per cell, every run's own
provenance record (the fields all runs share written once in ``run_common``, those of one benchmark's runs
in ``benchmark_common``, those of one cell's runs, such as the optimizer's settings, in ``cell_common``;
:func:`run_provenances` merges them back) and the sha256 of ``runs.columns.xz``. Factoring by cell took the
nine protocols' provenance files from 3.08 to 1.85 MB; the per-run rest of each record is written, one line
per run, to ``provenance_runs.jsonl.xz`` beside it (named with its sha256 under ``run_records``; 1.8 MB ->
0.08 MB), which :func:`read_provenance` reads back in, so a ``provenance.json`` with its runs inline (as
written before) reads the same.
The frame is written column by column (:func:`_frame_text`: a JSON line with the column names and the length of
each column's block, then each column as a one-column CSV) and xz-compressed (preset 9, extreme). A column's
values side by side compress far better than rows that interleave configurations, losses and clocks: the eleven
protocols' frames took 31.26 MB as the row-by-row CSV committed until 2026-11-28 and 19.81 MB so (``benchsuite
reproductions collect --rewrite`` of each, 2026-11-28; one protocol's formats side by side:
``perf/bench_runs_format.py``). :func:`read_runs` parses each column as the whole CSV was parsed (the same
dtypes, exact floats) and reads the row-by-row files too (:data:`LEGACY_RUNS_FILE`, which the next collect
replaces). Without benchsuite::

    import io, json, lzma, pandas as pd
    text = lzma.open("reproductions/nb201/runs.columns.xz", "rt", newline="").read()
    head, body = text.split("\n", 1)
    cols, at = {}, 0
    for name, n in json.loads(head)["columns"].items():
        cols[name] = pd.read_csv(io.StringIO(body[at:at + n]), header=None, skip_blank_lines=False)[0]
        at += n
    df = pd.DataFrame(cols)

A configuration of small integers is written as a digit string ("~x01+28:0110...": first name, count, digits;
"~e00_0_1,e01_1_2,...:01...": names, digits; :func:`encode_config`), which :func:`read_runs` turns back into
its JSON text.

Collecting merges with what is committed: a committed run is kept unless ``replace`` is asked for,
runs that are not jobs of the protocol as it stands (unknown labels, another seed) are refused, and
nothing is written when the result would hold fewer runs than the committed file. Both files are
written atomically (``runs.columns.xz`` first; a ``provenance.json`` whose sha256 does not match says the
pair is out of step). A corrupt or truncated runs file is a one-line :class:`DataError` naming it.

A protocol with a ``retrain:`` step (:mod:`benchsuite.retrain`) has its retraining records committed beside the
runs, in ``retrained.json`` (:func:`collect_retrained`: a record is taken when its run is committed and it is
a job of the protocol as it stands; :func:`load_retrained` reads them; :func:`restore_retrained` writes them back).

Resuming a partly committed protocol: ``restore`` writes each committed run back to
``results/<protocol>/<benchmark>/<optimizer>/repNNN.csv`` (the timing columns and provenance as
they were), so the workflow sees those repetitions as done and runs only the rest.
"""
from __future__ import annotations

import gzip
import io
import json
import lzma
import math
import os
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from benchsuite.data import sha256_file
from benchsuite.errors import DataError
from benchsuite.results import atomic_write_text, atomic_write_with, sha256_bytes

RUN_KEYS = ("benchmark", "optimizer", "repetition")
# a protocol's committed runs, beside provenance.json: the frame column by column (:func:`_frame_text`), xz-compressed.
# Each column's values side by side compress far better than rows that interleave configurations, losses and
# clocks: the eleven frames took 31.26 MB as row-by-row CSV and 19.81 MB so (docs/workflow.md, "Size").
RUNS_FILE = "runs.columns.xz"
RUNS_FORMAT = "benchsuite runs by column"
_RUNS_HEAD = '{"format": "' + RUNS_FORMAT + '"'
# the row-by-row CSV (xz) committed until 2026-11-28, which pandas reads as it is: still read, and replaced by
# RUNS_FILE at the protocol's next collect (or `collect --rewrite`)
LEGACY_RUNS_FILE = "runs.csv.xz"
# every run's own provenance record, one JSON object per line, xz-compressed, beside provenance.json (which names
# it and its sha256 under "run_records"): the records were 1.8 of the 2.0 MB of the nine protocols' provenance
# files as indented JSON, 0.08 MB compressed, while the summary a reader opens stays plain JSON
RUN_RECORDS_FILE = "provenance_runs.jsonl.xz"
# 4-10 % smaller than preset 6 on these frames (combo_binary 3.10 -> 2.96 MB, for 2.1x the write time; nb201_authors
# 2.96 -> 2.66; perf/bench_runs_format.py); its 64 MB dictionary spans whole columns. `collect --rewrite` of the largest
# frame (combo_binary) took 55 CPU s and 1.2 GB of peak memory, reading and the read-back check included.
_XZ_PRESET = 9 | lzma.PRESET_EXTREME
# a committed file's compression, told from its first bytes (a ``.part`` file has no telling extension)
_XZ_MAGIC, _GZIP_MAGIC = b"\xfd7zXZ\x00", b"\x1f\x8b"
# columns that measure real time: they differ between two runs of the same seed. The clock columns
# (ask/start/end/told) measure it only when the optimizer's overhead is on the clock; without it they
# are sums of simulated costs, reproducible like any other column.
CLOCK_COLUMNS = ("ask_time", "start_time", "end_time", "told_time")
TIMING_COLUMNS = (*CLOCK_COLUMNS, "overhead_s")
# measured times are committed to 4 significant digits (0.1 ms of a second-long overhead, 1 s of a clock at
# 10^4 s): their further digits are noise no rerun reproduces, and they are most of the file's size
# (issue 25 asks for reproductions/ under 30 MB, see docs/workflow.md "Size").
TIMING_DIGITS = 4
# simulated clocks (sums of tabulated or nominal costs, overhead off the clock) are reproducible to the last
# bit, but their 17 digits were most of a tabulated protocol's file (nb201_authors: 4 of 5.6 MB). They are
# committed to 6 significant digits (1 s at 10^5 s of simulated training), and a rerun is compared after the
# same rounding, so --verify still checks them exactly.
CLOCK_DIGITS = 6
# the checkout's reproductions/ is kept under this many MB (issue 25; docs/workflow.md "Size"): `collect` says so
# when a protocol's new frame takes the folder above it
SIZE_LIMIT_MB = 30.0
# provenance fields that differ between two runs of the same job without changing a result
_VOLATILE_PROVENANCE = ("finished_utc", "path", "hostname", "platform", "processor", "machine")
# pandas >= 3 reads every float back as written; pandas 2 needs the round-trip parser for that
_EXACT = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
_DTYPES = {"config": str, "incumbent": str, "info": str, "benchmark": str, "optimizer": str, "protocol": str,
           "benchmark_name": str, "optimizer_name": str, "status": str}


def default_root() -> Path:
    """``reproductions/`` of the checkout benchsuite runs from, else of the current directory."""
    from benchsuite.paths import checkout_root

    root = checkout_root()
    return (root if root is not None else Path.cwd()) / "reproductions"


def protocol_dir(root: str | os.PathLike, protocol: str) -> Path:
    """``root/<protocol>``: the folder of one protocol's committed runs."""
    return Path(root) / protocol


def results_of(results: str | os.PathLike, protocol: str) -> Path:
    """The folder holding ``<benchmark>/<optimizer>/repNNN.csv`` of ``protocol`` under a results folder.

    ``results`` may be the workflow's ``results/`` folder or the folder above it.
    """
    base = Path(results)
    for cand in (base / protocol, base / "results" / protocol):
        if cand.is_dir():
            return cand
    raise DataError(f"{results}: no folder {protocol}/ (nor results/{protocol}/) with result files; "
                    "give the workflow's results folder with --results")


def _frame_text(df: pd.DataFrame) -> str:
    """The committed text of a frame, column by column (:data:`RUNS_FILE`): a JSON line naming the format, the
    number of rows and each column's name with the length of its block, then the blocks, each the column's values
    as a header-less one-column CSV (one value per line, as ``to_csv`` writes them)."""
    blocks = {str(c): df[[c]].to_csv(header=False, index=False, lineterminator="\n") for c in df.columns}
    head = {"format": RUNS_FORMAT, "version": 1, "rows": len(df), "columns": {c: len(t) for c, t in blocks.items()}}
    return json.dumps(head) + "\n" + "".join(blocks.values())


def _read_column(name: str, block: str) -> pd.Series:
    """One column's block, parsed as the whole-frame CSV parsed it (the same dtypes, empty -> NaN, exact floats)."""
    return pd.read_csv(io.StringIO(block), header=None, names=[name], dtype=_DTYPES.get(name),
                       keep_default_na=False, na_values=[""], skip_blank_lines=False, **_EXACT)[name]


def _parse_columns(text: str) -> pd.DataFrame:
    head_line, _, body = text.partition("\n")
    head = json.loads(head_line)
    if head.get("format") != RUNS_FORMAT or head.get("version") != 1:
        raise ValueError(f"format {head.get('format')!r} version {head.get('version')!r}, not {RUNS_FORMAT!r} 1")
    rows, pos, data = int(head["rows"]), 0, {}
    for name, n in head["columns"].items():
        block = body[pos:pos + int(n)]
        pos += int(n)
        if len(block) != int(n):
            raise ValueError(f"column {name} ends after {len(block)} of its {n} characters")
        data[name] = _read_column(name, block) if rows else pd.Series([], dtype=object, name=name)
        if len(data[name]) != rows:
            raise ValueError(f"column {name} holds {len(data[name])} values, not {rows}")
    if pos != len(body):
        raise ValueError(f"{len(body) - pos} characters after the last column")
    return pd.DataFrame(data)


def read_runs(path: str | os.PathLike, decode: bool = True) -> pd.DataFrame:
    """Read a committed runs file exactly (floats round-trip); corrupt or truncated -> one-line DataError.

    Reads the column-by-column file (:data:`RUNS_FILE`) and the row-by-row CSV committed before it
    (:data:`LEGACY_RUNS_FILE`, xz or gzip). ``decode=False``: configurations as committed (digit strings)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
        data = lzma.decompress(raw) if raw[:6] == _XZ_MAGIC else gzip.decompress(raw) if raw[:2] == _GZIP_MAGIC else raw
        text = data.decode("utf-8")
        if text.startswith(_RUNS_HEAD):
            df = _parse_columns(text)
        else:
            df = pd.read_csv(io.StringIO(text), dtype=_DTYPES, keep_default_na=False, **_EXACT, na_values=[""])
    except FileNotFoundError:
        raise DataError(f"{p}: no such file") from None
    except (EOFError, gzip.BadGzipFile, zlib.error, lzma.LZMAError, OSError, UnicodeDecodeError, KeyError,
            TypeError, pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DataError(f"{p}: corrupt or truncated runs file ({' '.join(str(exc).split()) or type(exc).__name__}); "
                        f"restore it with `git checkout -- {p}`") from None
    missing = [c for c in (*RUN_KEYS, "seed", "trial", "config", "incumbent_loss") if c not in df.columns]
    if missing:
        raise DataError(f"{p}: not a runs file of benchsuite, column(s) {', '.join(missing)} missing")
    if not decode:
        return df
    try:
        return decode_configs(df)
    except ValueError as exc:
        raise DataError(f"{p}: corrupt runs file ({exc}); restore it with `git checkout -- {p}`") from None


# -- small-integer configurations as digit strings ---------------------------------------------------------
# A configuration whose values are all integers 0..9 (COMBO's Ising, contamination, MaxSAT and pest-control
# problems: {"x01":0,"x02":1,...}) is committed as a digit string. Names with one prefix and consecutive numbers
# are counted, "~x01+28:01..." (first name, count, the digits in order); any other names made of letters, digits
# and "_.-" are listed once, "~e00_0_1,e01_1_2,...:01..." (Ising's edges), which xz then stores as one long
# repeat instead of a dozen short ones between the digits. combo_maxsat's frame: 4.40 -> 3.65 MB (-17 %, counted);
# combo_binary 5.59 -> 5.10 MB (-9 %, both forms), combo_binary_independent, whose contamination half was
# counted already, 4.19 -> 4.04 MB (-4 %, xz had matched much of the repeated names). Only a text that
# decodes back to itself exactly is written so; every other configuration stays JSON, and read_runs decodes, so
# a frame reads back as it was collected (a configuration's JSON never starts with "~"). A committed frame takes
# the form at its next collect (or with `benchsuite reproductions collect P --rewrite`): rewriting all of them
# adds their whole size to the git history.
_COUNTED_NAME = re.compile(r"^([A-Za-z_]*?)(\d+)$")
_COUNTED_TEXT = re.compile(r"^~([A-Za-z_]*?)(\d+)\+(\d+):(\d+)$")
_LISTED_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_LISTED_TEXT = re.compile(r"^~([A-Za-z0-9_.,-]+):(\d+)$")  # "+" is not a listed name's character: no overlap
CONFIG_COLUMNS = ("config", "incumbent")


def _names(prefix: str, first: str, count: int) -> list[str]:
    start, width = int(first), len(first)
    return [f"{prefix}{str(i).zfill(width)}" for i in range(start, start + count)]


def decode_config(text: Any) -> Any:
    """A committed configuration's JSON text ("~x01+3:010" -> '{"x01":0,"x02":1,"x03":0}', "~a,b:12" ->
    '{"a":1,"b":2}'); others unchanged."""
    if not isinstance(text, str) or not text.startswith("~"):
        return text
    m = _COUNTED_TEXT.match(text)
    if m is not None and int(m.group(3)) == len(m.group(4)):
        names, digits = _names(m.group(1), m.group(2), int(m.group(3))), m.group(4)
    else:
        m = _LISTED_TEXT.match(text)
        names = m.group(1).split(",") if m is not None else []
        digits = m.group(2) if m is not None else ""
        if not names or len(names) != len(digits) or not all(names):
            raise ValueError(f"unreadable digit-string configuration {text[:60]!r}")
    return "{" + ",".join(f'"{n}":{b}' for n, b in zip(names, digits)) + "}"


def encode_config(text: Any) -> Any:
    """The committed form of a configuration's JSON text: a digit string where it decodes back exactly, else as is."""
    if not isinstance(text, str) or not text.startswith('{"'):
        return text
    try:
        d = json.loads(text)
    except ValueError:
        return text
    if not isinstance(d, dict) or not d or not all(type(v) is int and 0 <= v <= 9 for v in d.values()):
        return text
    digits = "".join(str(v) for v in d.values())
    m = _COUNTED_NAME.match(next(iter(d)))
    counted = f"~{m.group(1)}{m.group(2)}+{len(d)}:{digits}" if m is not None else None
    if counted is not None and decode_config(counted) == text:
        return counted
    if not all(_LISTED_NAME.match(n) for n in d):
        return text
    listed = "~" + ",".join(d) + ":" + digits
    return listed if decode_config(listed) == text else text


def _map_column(values: Iterable[Any], f: Callable[[Any], Any]) -> list[Any]:
    memo: dict[Any, Any] = {}  # incumbents repeat for many trials: each distinct text is converted once
    out = []
    for v in values:
        if not isinstance(v, str):
            out.append(v)
            continue
        if v not in memo:
            memo[v] = f(v)
        out.append(memo[v])
    return out


def encode_configs(df: pd.DataFrame) -> pd.DataFrame:
    """The frame with its configurations in their committed form (:func:`encode_config`)."""
    out = df.copy()
    for c in CONFIG_COLUMNS:
        if c in out:
            out[c] = pd.Series(_map_column(out[c], encode_config), index=out.index, dtype=object)
    return out


def decode_configs(df: pd.DataFrame) -> pd.DataFrame:
    """A committed frame with its configurations as JSON text again (:func:`decode_config`); in place."""
    for c in CONFIG_COLUMNS:
        if c in df and df[c].astype(str).str.startswith("~").any():
            df[c] = pd.Series(_map_column(df[c], decode_config), index=df.index, dtype=df[c].dtype)
    return df


def read_provenance(path: str | os.PathLike) -> dict[str, Any]:
    """The committed ``provenance.json`` (empty when there is none), its per-run records read in as ``runs``
    from the file it names under ``run_records``; unreadable, or records not the ones named -> one-line
    DataError."""
    p = Path(path)
    if not p.exists():
        return {}
    try:
        out = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{p}: unreadable provenance ({' '.join(str(exc).split())}); restore it with "
                        f"`git checkout -- {p}`") from None
    if not isinstance(out, dict):
        raise DataError(f"{p}: unreadable provenance (not a JSON object)")
    side = out.get("run_records")
    if "runs" not in out and isinstance(side, dict):
        out["runs"] = _read_run_records(p.parent / str(side.get("file", RUN_RECORDS_FILE)), side, p)
    return out


def _read_run_records(path: Path, side: Mapping[str, Any], prov_path: Path) -> list[dict[str, Any]]:
    """The per-run records ``provenance.json`` names: one JSON object per line, xz-compressed."""
    fix = f"restore both with `git checkout -- {prov_path.parent}`"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: missing beside {prov_path}, which names it; {fix}") from None
    if side.get("sha256") and sha256_bytes(data) != side["sha256"]:
        raise DataError(f"{path}: does not match the sha256 in {prov_path} (the pair is out of step); {fix}")
    try:
        runs = [json.loads(line) for line in lzma.decompress(data).decode("utf-8").splitlines() if line]
    except (lzma.LZMAError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path}: corrupt or truncated run records ({' '.join(str(exc).split())}); {fix}") from None
    if not all(isinstance(r, dict) for r in runs) or ("count" in side and len(runs) != int(side["count"])):
        raise DataError(f"{path}: holds {len(runs)} run records, {prov_path} names {side.get('count')}; {fix}")
    return runs


def write_provenance(d: Path, summary: Mapping[str, Any]) -> None:
    """Write ``provenance.json`` and, beside it, its per-run records (``provenance_runs.jsonl.xz``), atomically:
    the records first, so a ``provenance.json`` never names records that are not there (a crash between the two
    leaves the pair out of step, which the sha256 it names tells)."""
    runs = list(summary.get("runs", []))
    data = lzma.compress("".join(json.dumps(r, sort_keys=False, default=str) + "\n" for r in runs).encode("utf-8"),
                         preset=9 | lzma.PRESET_EXTREME)
    atomic_write_with(d / RUN_RECORDS_FILE, lambda fh: fh.write(data))
    head = {k: v for k, v in summary.items() if k != "runs"}
    head["run_records"] = {"file": RUN_RECORDS_FILE, "count": len(runs), "sha256": sha256_bytes(data)}
    atomic_write_text(d / "provenance.json", provenance_text(head))


def run_provenances(prov: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every run's full provenance record from a ``provenance.json`` (shared fields merged back: those of all
    runs, of one benchmark's runs, of one cell's runs; a file written before ``cell_common`` reads the same)."""
    common, per_bench = prov.get("run_common", {}), prov.get("benchmark_common", {})
    per_cell = prov.get("cell_common", {})
    out = []
    for r in prov.get("runs", []):
        label = str(r.get("benchmark_label", common.get("benchmark_label", "")))
        bench = per_bench.get(label, {})
        opt = str(r.get("optimizer_label", bench.get("optimizer_label", common.get("optimizer_label", ""))))
        out.append({**common, **bench, **per_cell.get(label, {}).get(opt, {}), **r})
    return out


def runs_path(d: Path) -> Path:
    """The committed runs file of the protocol folder ``d``: :data:`RUNS_FILE`, or the row-by-row CSV committed
    before it (:data:`LEGACY_RUNS_FILE`) where only that one is there."""
    return d / LEGACY_RUNS_FILE if not (d / RUNS_FILE).exists() and (d / LEGACY_RUNS_FILE).exists() else d / RUNS_FILE


def _drop_legacy(d: Path) -> None:
    """After :data:`RUNS_FILE` and the provenance naming its sha256 are written, the row-by-row file goes."""
    if (d / RUNS_FILE).exists() and (d / LEGACY_RUNS_FILE).exists():
        (d / LEGACY_RUNS_FILE).unlink()


def load_committed(root: str | os.PathLike, protocol: str) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    """The committed frame (None when there is none) and provenance of ``protocol`` under ``root``."""
    d = protocol_dir(root, protocol)
    runs = runs_path(d)
    prov = read_provenance(d / "provenance.json")
    if not runs.exists():
        return None, prov
    df = read_runs(runs)
    return df, prov


def _key(prov: Mapping[str, Any]) -> tuple[str, str, int]:
    return (str(prov.get("benchmark_label") or prov.get("benchmark")),
            str(prov.get("optimizer_label") or prov.get("optimizer")), int(prov.get("repetition", prov.get("seed"))))


def compute_hours(df: pd.DataFrame) -> pd.Series:
    """Real compute per run, in hours: the optimizer's measured overhead plus measured evaluation costs.

    Tabulated and synthetic costs are simulated seconds and not counted; a live benchmark's
    ``cost_s`` is the measured training time and is. One thread per run, so these are CPU-hours
    (GPU-hours for a GPU benchmark).
    """
    live = df.get("benchmark_kind", pd.Series("", index=df.index)).astype(str).eq("live")
    seconds = df["overhead_s"].fillna(0.0) + df["cost_s"].where(live, 0.0).fillna(0.0)
    return seconds.groupby([df[k] for k in RUN_KEYS], sort=False).sum() / 3600.0


def _summary(df: pd.DataFrame, provs: Sequence[Mapping[str, Any]], protocol: Any) -> dict[str, Any]:
    """provenance.json's content for a frame and its runs' provenance records."""
    kinds = {(_key(p)): p.get("benchmark_kind", "") for p in provs}
    kind_col = pd.Series([kinds.get((b, o, int(r)), "") for b, o, r in zip(df["benchmark"], df["optimizer"],
                                                                            df["repetition"])], index=df.index)
    hours = compute_hours(df.assign(benchmark_kind=kind_col))
    per_cell: dict[str, dict[str, int]] = {}
    hours_cell: dict[str, dict[str, float]] = {}
    for (b, o, _r), h in hours.items():
        per_cell.setdefault(b, {}).setdefault(o, 0)
        per_cell[b][o] += 1
        hours_cell.setdefault(b, {}).setdefault(o, 0.0)
        hours_cell[b][o] = round(hours_cell[b][o] + float(h), 4)
    clean = [{k: v for k, v in p.items() if k != "path"} for p in provs]
    clean.sort(key=_key)
    shared = _shared(clean)
    # fields shared by the runs of one benchmark (its table's path and sha256, ...): written once per benchmark
    by_bench: dict[str, list[dict[str, Any]]] = {}
    for p in clean:
        by_bench.setdefault(str(p.get("benchmark_label", "")), []).append({k: v for k, v in p.items()
                                                                            if k not in shared})
    per_bench = {b: {k: v for k, v in _shared(ps).items() if k != "benchmark_label"}
                 for b, ps in by_bench.items() if len(ps) > 1}
    # and fields shared by the runs of one cell (its optimizer's settings, ...): written once per cell
    by_cell: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in clean:
        b, o = str(p.get("benchmark_label", "")), str(p.get("optimizer_label", ""))
        by_cell.setdefault((b, o), []).append({k: v for k, v in p.items()
                                               if k not in shared and k not in per_bench.get(b, {})})
    cell_common: dict[str, dict[str, dict[str, Any]]] = {}
    for (b, o), ps in by_cell.items():
        cell = {k: v for k, v in _shared(ps).items() if k not in ("benchmark_label", "optimizer_label")}
        if len(ps) > 1 and cell:
            cell_common.setdefault(b, {})[o] = cell

    def rest(p: Mapping[str, Any]) -> dict[str, Any]:
        b, o = str(p.get("benchmark_label", "")), str(p.get("optimizer_label", ""))
        drop = set(shared) | set(per_bench.get(b, {})) | set(cell_common.get(b, {}).get(o, {}))
        return {k: v for k, v in p.items() if k not in drop}

    def count(key: str) -> dict[str, int]:
        return dict(Counter(json.dumps(p.get(key), sort_keys=True) if isinstance(p.get(key), (dict, list))
                            else str(p.get(key)) for p in provs).most_common())

    return {
        "protocol": protocol.name,
        "protocol_file": Path(protocol.path).name,
        "repetitions_target": protocol.repetitions,
        "n_runs": len(clean),
        "repetitions_done": per_cell,
        "compute_hours_total": round(float(hours.sum()), 4),
        "compute_hours": hours_cell,
        "compute_hours_note": "measured optimizer overhead plus measured (live) evaluation time, one thread per "
                              "run; simulated costs of tables and synthetic functions are not counted",
        "git_commits": count("git_commit"),
        "benchsuite_versions": count("benchsuite_version"),
        "python": count("python"),
        "libraries": count("libraries"),
        "machines": dict(Counter(f"{p.get('platform')} ({p.get('hostname')})" for p in provs).most_common()),
        "finished_utc": [min(str(p.get("finished_utc")) for p in provs),
                         max(str(p.get("finished_utc")) for p in provs)] if provs else [],
        "run_common": shared,
        "benchmark_common": {b: c for b, c in per_bench.items() if c},
        "cell_common": cell_common,
        "runs": [rest(p) for p in clean],
    }


def provenance_text(summary: Mapping[str, Any]) -> str:
    """``provenance.json``'s text: indented, except per-run records given inline (``runs``), one compact line
    each (:func:`write_provenance` puts them in their own file)."""
    if "runs" not in summary:
        return json.dumps(dict(summary), indent=1, sort_keys=False, default=str) + "\n"
    runs = summary["runs"]
    text = json.dumps({**summary, "runs": []}, indent=1, sort_keys=False, default=str)
    lines = ",\n  ".join(json.dumps(r, sort_keys=False, default=str) for r in runs)
    return text.replace('\n "runs": []', f'\n "runs": [\n  {lines}\n ]' if runs else '\n "runs": []', 1) + "\n"


def _shared(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The fields every record has with the same value."""
    if not records:
        return {}
    return {k: v for k, v in records[0].items() if all(k in p and p[k] == v for p in records[1:])}


def _run_keys(df: pd.DataFrame) -> set[tuple[str, str, int]]:
    keys = df[list(RUN_KEYS)].drop_duplicates()
    return {(str(b), str(o), int(r)) for b, o, r in keys.itertuples(index=False)}


def _of_runs(df: pd.DataFrame, keys: set[tuple[str, str, int]]) -> pd.Series:
    """Which rows of ``df`` belong to the runs ``keys`` (benchmark, optimizer, repetition)."""
    return pd.Series([(b, o, int(r)) in keys for b, o, r in zip(df["benchmark"], df["optimizer"], df["repetition"])],
                     index=df.index, dtype=bool)


def _write_runs(df: pd.DataFrame, path: Path, whole: bool = False) -> str:
    """Write the frame column by column (:func:`_frame_text`), xz-compressed and atomically (byte-stable: xz has no
    timestamp), small-integer configurations as digit strings (:func:`encode_config`); its sha256. ``whole``:
    every column must read back identical (a frame read from a committed file), not only the configurations."""
    tmp = path.with_name(path.name + ".part")
    try:
        tmp.write_bytes(lzma.compress(_frame_text(encode_configs(df)).encode("utf-8"), preset=_XZ_PRESET))
        back = read_runs(tmp)  # what was written reads back whole, or nothing is replaced
        if len(back) != len(df):
            raise DataError(f"{tmp}: wrote {len(df)} rows but {len(back)} read back; nothing replaced")
        if whole:
            try:
                pd.testing.assert_frame_equal(back, df.reset_index(drop=True), check_exact=True)
            except AssertionError as exc:
                raise DataError(f"{tmp}: does not read back as the committed frame ({str(exc).splitlines()[0]}); "
                                "nothing replaced") from None
        for c in CONFIG_COLUMNS:
            text = df[c].fillna("").astype(str).reset_index(drop=True) if c in df else None
            if text is not None and not back[c].fillna("").astype(str).equals(text):
                raise DataError(f"{tmp}: column {c} does not read back as written; nothing replaced")
        digest = sha256_file(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return digest


def _check_pair(d: Path, prov: Mapping[str, Any]) -> None:
    """A committed runs file and its provenance must belong together (sha256 recorded at collection)."""
    runs = runs_path(d)
    want = prov.get("runs_sha256")
    if runs.exists() and not prov:
        raise DataError(f"{d / 'provenance.json'}: missing beside {runs}; restore both with `git checkout -- {d}`")
    if runs.exists() and want and sha256_file(runs) != want:
        raise DataError(f"{runs}: does not match the sha256 in {d / 'provenance.json'} (the pair is out of step); "
                        f"restore both with `git checkout -- {d}`")


def job_mismatch(prov: Mapping[str, Any], job: Any, protocol: Any) -> str | None:
    """Why the run with provenance ``prov`` is not a run of ``job`` as ``protocol`` now stands, or None.

    Compared: where its first points came from, the clock its overhead was timed on, its budget (evaluations,
    simulated seconds), its workers and whether the overhead went on the clock (not under the nominal clock,
    where the runner keeps it off whatever the protocol says). A protocol whose budget changed leaves its
    earlier runs behind: ``collect`` refuses them, and says which committed ones no longer match."""
    if str(prov.get("initial_design", "optimizer")) != job.optimizer.initial_design:
        return (f"started from the {prov.get('initial_design', 'optimizer')}'s initial design, the protocol's job "
                f"from the {job.optimizer.initial_design}'s")
    clock = getattr(protocol, "overhead_clock", "wall")
    if str(prov.get("overhead_clock", "wall")) != clock:
        return f"overhead timed on the {prov.get('overhead_clock', 'wall')} clock, the protocol's on the {clock} clock"
    budget = job.benchmark.budget
    seconds = prov.get("budget_seconds")
    for what, got, want in (
            ("budget in evaluations", prov.get("budget_evals"), budget.evaluations),
            ("budget in seconds", None if seconds is None else float(seconds),
             None if budget.seconds is None else float(budget.seconds)),
            ("workers", prov.get("workers"), protocol.workers)):
        if got != want:
            return f"{what} {got}, the protocol's {want}"
    if str(prov.get("clock", "measured")) != "nominal" and prov.get("include_overhead") != protocol.include_overhead:
        return f"overhead on the clock {prov.get('include_overhead')}, the protocol's {protocol.include_overhead}"
    return None


def stale_runs(protocol: Any, prov: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """The committed runs (provenance ``prov``) that are not runs of ``protocol`` as it now stands
    (:func:`job_mismatch`; a run with no job any more counts too)."""
    jobs = {(j.benchmark.label, j.optimizer.label, j.repetition): j for j in protocol.jobs()}
    out = []
    for p in run_provenances(prov):
        job = jobs.get(_key(p))
        if job is None or job_mismatch(p, job, protocol) is not None:
            out.append(_key(p))
    return out


def without_stale(protocol: Any, df: pd.DataFrame, prov: Mapping[str, Any]) -> tuple[pd.DataFrame, int]:
    """``df`` (committed runs, provenance ``prov``) without the runs of an earlier setup of ``protocol``
    (:func:`stale_runs`), and how many runs were left out. What the scorecard and ``--verify`` read."""
    stale = set(stale_runs(protocol, prov))
    if not stale:
        return df, 0
    return df[~_of_runs(df, stale)], len(stale)


def collect(protocol: Any, results: str | os.PathLike, root: str | os.PathLike,
            replace: bool = False) -> dict[str, Any]:
    """Add the finished runs under ``results`` to ``root/<protocol>/`` (see the module docstring).

    Returns what happened: runs added, replaced, kept, refused (with reasons), ``stale`` (committed runs kept that
    are not runs of the protocol as it now stands, :func:`stale_runs`) and the totals.
    """
    from .load import load_runs

    d = protocol_dir(root, protocol.name)
    old, prov = load_committed(root, protocol.name)
    _check_pair(d, prov)
    old_keys = _run_keys(old) if old is not None else set()
    src = results_of(results, protocol.name)
    jobs = {(j.benchmark.label, j.optimizer.label, j.repetition): j for j in protocol.jobs()}
    paths, refused = [], []
    for key, job in jobs.items():
        path = src / Path(job.result_path).relative_to(Path("results") / protocol.name)
        if not path.exists() or (key in old_keys and not replace):
            continue
        paths.append(path)
    stray = sorted(str(p.relative_to(src)) for p in src.glob("*/*/rep*.csv")
                   if not p.name.endswith(".partial.csv")  # an interrupted run's finished trials, not a run
                   and (p.parent.parent.name, p.parent.name, _rep(p)) not in jobs)
    refused += [f"{s}: not a run of protocol {protocol.name} as it stands" for s in stray]
    new = None
    if paths:
        new = load_runs(paths)
        bad = []
        for p in new.attrs["provenance"]:
            key = _key(p)
            job = jobs.get(key)
            if job is None or str(p.get("protocol")) != protocol.name or int(p["seed"]) != job.seed:
                bad.append(key)
                refused.append(f"{p['path']}: made for protocol {p.get('protocol')!r}, run {key}, seed "
                               f"{p.get('seed')}: not this protocol's job (seed "
                               f"{job.seed if job else 'none'})")
            elif (why := job_mismatch(p, job, protocol)) is not None:
                bad.append(key)
                refused.append(f"{p['path']}: {why}: rerun it")
        if bad:
            provs = [p for p in new.attrs["provenance"] if _key(p) not in set(bad)]
            new = new[~_of_runs(new, set(bad))]
            new.attrs["provenance"] = provs
    new_keys = _run_keys(new) if new is not None and len(new) else set()
    if new_keys:
        provs = new.attrs["provenance"]
        live_keys = {_key(p) for p in provs if p.get("benchmark_kind") == "live"}
        is_live = pd.Series([(b, o, int(r)) in live_keys for b, o, r in
                             zip(new["benchmark"], new["optimizer"], new["repetition"])], index=new.index)
        rounded = round_for_commit(new, protocol, live=False)
        if is_live.any():
            cols = [c for c in (*TIMING_COLUMNS, "cost_s") if c in new]
            rounded.loc[is_live, cols] = round_for_commit(new.loc[is_live], protocol, live=True)[cols]
        new = rounded
        new.attrs["provenance"] = provs
    report = {"protocol": protocol.name, "added": sorted(new_keys - old_keys), "replaced": sorted(new_keys & old_keys),
              "kept": len(old_keys - new_keys), "refused": refused, "written": False,
              "stale": [k for k in stale_runs(protocol, prov) if k not in new_keys]}
    if not new_keys:
        report["runs"] = len(old_keys)
        return report
    old_provs = run_provenances(prov)
    if old is not None:
        old = old[~_of_runs(old, new_keys)]
        old_provs = [p for p in old_provs if _key(p) not in new_keys]
    new_provs = new.attrs["provenance"]
    frames = [f for f in (old, new) if f is not None and len(f)]
    merged = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].copy()
    order = {k: i for i, k in enumerate(jobs)}
    merged["_order"] = [order.get((b, o, int(r)), len(order)) for b, o, r in
                        zip(merged["benchmark"], merged["optimizer"], merged["repetition"])]
    merged = merged.sort_values(["_order", "benchmark", "optimizer", "repetition", "evaluation"],
                                kind="stable").drop(columns="_order").reset_index(drop=True)
    merged_keys = _run_keys(merged)
    if len(merged_keys) < len(old_keys) or not old_keys <= merged_keys:
        raise DataError(f"{runs_path(d)}: the merge would hold {len(merged_keys)} runs, fewer than the "
                        f"{len(old_keys)} committed; nothing written")
    d.mkdir(parents=True, exist_ok=True)
    summary = _summary(merged, [*old_provs, *new_provs], protocol)
    summary["runs_sha256"] = _write_runs(merged, d / RUNS_FILE)
    summary["updated_utc"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    write_provenance(d, summary)
    _drop_legacy(d)
    report.update(written=True, runs=len(merged_keys))
    return report


def rewrite(root: str | os.PathLike, name: str) -> dict[str, Any]:
    """Write a protocol's committed frame again in the current committed form (:data:`RUNS_FILE`, column by column,
    digit-string configurations; a row-by-row :data:`LEGACY_RUNS_FILE` is replaced by it),
    its provenance's sha256 with it. Every column must read back identical, or nothing is replaced; no run is
    added or dropped. A frame takes the form anyway at its next collect: this is for a complete protocol."""
    d = protocol_dir(root, name)
    old, prov = load_committed(root, name)
    _check_pair(d, prov)
    if old is None:
        raise DataError(f"{d / RUNS_FILE}: no committed runs to rewrite")
    before = runs_path(d).stat().st_size
    digest = _write_runs(old, d / RUNS_FILE, whole=True)
    if digest != prov.get("runs_sha256"):
        write_provenance(d, {**prov, "runs_sha256": digest})
    _drop_legacy(d)
    return {"protocol": name, "runs": len(_run_keys(old)), "bytes_before": before,
            "bytes_after": (d / RUNS_FILE).stat().st_size}


def folder_mb(root: str | os.PathLike) -> float:
    """MB (10^6 bytes) of every file under ``root``, as checked out."""
    return sum(p.stat().st_size for p in Path(root).rglob("*") if p.is_file()) / 1e6


def _rep(path: Path) -> int:
    try:
        return int(path.stem[3:])
    except ValueError:
        return -1


def restore(protocol: Any, results: str | os.PathLike, root: str | os.PathLike) -> dict[str, int]:
    """Write every committed run of ``protocol`` back as ``results/<protocol>/<b>/<o>/repNNN.csv``.

    An existing result file is never overwritten. A run of an earlier setup of the protocol (:func:`stale_runs`)
    is not written back, so the workflow runs it again. The paths come from the protocol's own jobs, never
    from labels stored in the committed frame: a run there that is no job of the protocol (a label or
    repetition it does not have, one crafted to name a path outside ``results``) is not written, only counted.
    Returns counts of files written, skipped (already there), stale and unknown.
    """
    from benchsuite.results import COLUMNS, write_result

    df, prov = load_committed(root, protocol.name)
    _check_pair(protocol_dir(root, protocol.name), prov)
    if df is None:
        return {"written": 0, "skipped": 0, "stale": 0, "unknown": 0}
    stale = set(stale_runs(protocol, prov))
    provs = {_key(p): p for p in run_provenances(prov)}
    jobs = {(j.benchmark.label, j.optimizer.label, j.repetition): j for j in protocol.jobs()}
    base = Path(results)
    base = base if base.name == "results" else base / "results"
    inside = base.resolve()
    written = skipped = unknown = 0
    for (b, o, r), g in df.groupby(list(RUN_KEYS), sort=False):
        try:
            key = (str(b), str(o), int(r))
        except (TypeError, ValueError, OverflowError):
            key = None
        if key in stale:
            continue
        job = jobs.get(key)
        out = None if job is None else base.parent / job.result_path
        if out is None or inside not in out.resolve().parents:  # the protocol checked its labels; a last check
            unknown += 1
            continue
        if out.exists() or key not in provs:
            skipped += 1
            continue
        g = g.sort_values("evaluation", kind="stable")
        rows = g[list(COLUMNS)].to_dict("records")
        for row in rows:
            for c in ("trial", "worker"):
                row[c] = int(row[c])
        out.parent.mkdir(parents=True, exist_ok=True)
        write_result(out, rows, provs[key])
        written += 1
    return {"written": written, "skipped": skipped, "stale": len(stale), "unknown": unknown}


def timing_columns(protocol: Any, live: bool = False) -> tuple[str, ...]:
    """The columns of ``protocol``'s runs that measure real time (a live benchmark's cost among them)."""
    if live:  # measured training time: on the clock whatever the overhead setting
        return (*CLOCK_COLUMNS, "overhead_s", "cost_s")
    return (*CLOCK_COLUMNS, "overhead_s") if protocol.include_overhead else ("overhead_s",)


def round_timing(df: pd.DataFrame, columns: Iterable[str], digits: int = TIMING_DIGITS) -> pd.DataFrame:
    """``df`` with the measured-time ``columns`` rounded to ``digits`` significant digits."""
    out = df.copy()
    for c in columns:
        if c in out:
            out[c] = [_significant(x, digits) for x in out[c]]
    return out


def _significant(x: Any, digits: int) -> Any:
    """``x`` rounded to ``digits`` significant digits (non-finite values as they are)."""
    return float(f"{x:.{digits}g}") if isfinite(x) else x


def round_info_timing(df: pd.DataFrame, digits: int = TIMING_DIGITS) -> pd.DataFrame:
    """``df`` with the measured times inside each row's JSON ``info`` (:data:`INFO_TIMING_KEYS`, at any depth:
    a live trial's training curve) rounded to ``digits`` significant digits, like the timing columns.

    Only the numbers under those keys change: a row is rewritten only where its text re-serialises exactly
    (compact JSON, as the runner writes it), so everything else in it stays byte for byte. ``--verify``
    compares ``info`` without these keys (:func:`untimed_info`), so it is unaffected."""
    def one(text: Any) -> Any:
        if not isinstance(text, str) or INFO_TIMING_KEYS[0] not in text:
            return text
        try:
            obj = json.loads(text)
        except ValueError:
            return text
        if json.dumps(obj, separators=(",", ":")) != text:  # not the runner's form: leave it as it is
            return text
        # the text re-serialises exactly, so only the rounded numbers can change it
        return json.dumps(_map_info_timing(obj, lambda v: _significant(v, digits) if isinstance(v, float) else v),
                          separators=(",", ":"))

    out = df.copy()
    if "info" in out:
        out["info"] = [one(t) for t in out["info"]]
    return out


def round_for_commit(df: pd.DataFrame, protocol: Any, live: bool) -> pd.DataFrame:
    """``df`` as committed: measured times to :data:`TIMING_DIGITS`, simulated clocks to :data:`CLOCK_DIGITS`
    significant digits (a rerun is rounded the same way before it is compared), and the measured times in
    ``info`` to :data:`TIMING_DIGITS` (:func:`round_info_timing`)."""
    timing = timing_columns(protocol, live)
    out = round_info_timing(round_timing(df, timing))
    return round_timing(out, [c for c in CLOCK_COLUMNS if c not in timing], CLOCK_DIGITS)


def compared_columns(df: pd.DataFrame, protocol: Any, live: bool) -> list[str]:
    """The columns a rerun must reproduce exactly: all but the timing ones."""
    skip = set(timing_columns(protocol, live)) | {"evaluation_s"}
    return [c for c in df.columns if c not in skip]


def frame_text(df: pd.DataFrame, columns: Iterable[str]) -> list[str]:
    """Rows of ``df[columns]`` as the CSV lines they are stored as (the form two runs are compared in)."""
    buf = io.StringIO()
    df[list(columns)].to_csv(buf, index=False)
    return buf.getvalue().splitlines()


def roundtrip(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as it reads back from a committed runs file (the same text, parser and dtypes)."""
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    buf.seek(0)
    return pd.read_csv(buf, dtype=_DTYPES, keep_default_na=False, **_EXACT, na_values=[""])


def deterministic(protocol: Any) -> str:
    """Why reruns of ``protocol`` cannot be compared row by row ("" when they can).

    With several workers the order in which trials complete must not depend on timing: a benchmark
    whose runs go on the nominal clock (:meth:`benchsuite.protocol.Protocol.clock_for`: the cost model
    drives the clock and the optimizer's overhead stays off it) repeats itself; one on the measured
    clock does only without overhead on the clock and with simulated (not measured) costs. With one worker,
    a budget in seconds with the overhead on the clock makes where a run stops depend on timing (the
    Fabolas protocols: the trials before the stop repeat themselves, the count does not).
    """
    if protocol.workers <= 1:
        if protocol.include_overhead and any(b.budget.seconds is not None for b in protocol.benchmarks):
            return ("the optimizer's measured overhead on the clock with a budget in seconds: where a run stops "
                    "depends on timing")
        return ""
    clocks = {j.benchmark.label: protocol.clock_for(j) for j in protocol.jobs()}
    timed = [b for b in protocol.benchmarks if clocks.get(b.label) != "nominal"]
    if not timed:
        return ""
    if protocol.include_overhead:
        return (f"{protocol.workers} workers with the optimizer's measured overhead on the clock: the order of "
                "trials depends on timing")
    from benchsuite import registry

    live = [b.label for b in timed if getattr(registry.get_benchmark(b.name), "kind", "") == "live"]
    if live:
        return f"{protocol.workers} workers on measured training times ({', '.join(live)}): the order of " \
               "trials depends on timing"
    return ""


INFO_TIMING_KEYS = ("seconds",)  # measured times inside a live trial's ``info`` (each curve point's clock)


_DROP = object()  # returned by a _map_info_timing function: take the key out


def _map_info_timing(x: Any, f: Callable[[Any], Any]) -> Any:
    """``x`` (parsed JSON) with ``f`` applied to the value of every :data:`INFO_TIMING_KEYS` key at any depth
    (a key whose new value is ``_DROP`` is removed); the one walk behind :func:`untimed_info` and
    :func:`round_info_timing`."""
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            v = f(v) if k in INFO_TIMING_KEYS else _map_info_timing(v, f)
            if v is not _DROP:
                out[k] = v
        return out
    return [_map_info_timing(v, f) for v in x] if isinstance(x, list) else x


def untimed_info(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the measured times (:data:`INFO_TIMING_KEYS`) taken out of each row's JSON ``info``, at any depth."""
    def clean(text: Any) -> Any:
        try:
            return json.dumps(_map_info_timing(json.loads(text), lambda v: _DROP), sort_keys=True)
        except (TypeError, ValueError):
            return text

    out = df.copy()
    out["info"] = [clean(t) for t in out["info"]]
    return out


# floats that differ by at most this relative amount, with every other column identical, differ in the order
# a BLAS kernel summed them (see benchsuite.provenance.blas_architecture), not in what the run decided
LAST_BITS = 1e-12


def verify_run(protocol: Any, committed: pd.DataFrame, key: tuple[str, str, int], workdir: str | os.PathLike,
               timeout_s: float | None = None, blas: str | None = None) -> tuple[bool, str]:
    """Rerun one committed repetition with its seed and compare every non-timing column; (identical, message).

    ``blas``: the OpenBLAS kernel set the run was made with (its provenance's ``blas_architecture``); the
    rerun uses it (``OPENBLAS_CORETYPE``), so that BLAS sums come out in the same order on another CPU. A rerun
    that differs only in the last bits of floats says so, with what to do."""
    import subprocess
    import sys

    from benchsuite.provenance import blas_architecture

    from .load import load_runs

    b, o, r = key
    job = protocol.job(b, o, r)
    rows = committed[(committed["benchmark"] == b) & (committed["optimizer"] == o) & (committed["repetition"] == r)]
    rows = rows.sort_values("evaluation", kind="stable").reset_index(drop=True)
    if int(rows["seed"].iloc[0]) != job.seed:
        return False, f"committed seed {int(rows['seed'].iloc[0])} is not the protocol's seed {job.seed} any more"
    out = Path(workdir) / f"{protocol.name}-{b}-{o}-{r:03d}.csv"
    argv = [sys.executable, "-m", "benchsuite.cli", *protocol.command(job, out=str(out), exe=())]
    env = {**os.environ, "OPENBLAS_CORETYPE": blas} if blas else None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return False, f"the rerun took longer than {timeout_s:g} s"
    if proc.returncode != 0:
        return False, f"the rerun failed: {' '.join(proc.stderr.split())[-300:]}"
    fresh = load_runs([out])
    live = fresh.attrs["provenance"][0].get("benchmark_kind") == "live"
    fresh = roundtrip(round_for_commit(fresh, protocol, live))
    cols = [c for c in compared_columns(rows, protocol, live) if c in fresh.columns]
    if len(fresh) != len(rows):
        return False, f"{len(fresh)} trials in the rerun, {len(rows)} committed"
    if live and "info" in cols:  # a live trial's info holds measured seconds (its training curve's clock)
        rows, fresh = untimed_info(rows), untimed_info(fresh)
    a, c = frame_text(rows, cols), frame_text(fresh, cols)
    bits = _last_bits_only(rows, fresh, cols) if a != c else None
    if bits:
        if blas:
            why = (f"the rerun used the run's recorded BLAS kernels ({blas}), so the cause is elsewhere (a "
                   f"library's version, another CPU's instructions)")
        else:
            why = (f"BLAS kernels sum in their own order, this machine's are {blas_architecture()}, the run's were "
                   f"not recorded (runs before 2026-11-27): rerun with OPENBLAS_CORETYPE set to those of the "
                   f"machine that made it (Haswell, SkylakeX, Zen, ...) to compare bit for bit")
        return False, (f"differs only in the last bits of floats (largest relative difference {bits[1]:.1e}, in "
                       f"{', '.join(bits[0])}), every other column identical: {why}")
    for i, (x, y) in enumerate(zip(a, c)):
        if x != y:
            old_row, new_row = (pd.read_csv(io.StringIO(f"{a[0]}\n{line}"), dtype=str).iloc[0] for line in (x, y))
            diff = [col for col in cols if str(old_row[col]) != str(new_row[col])]
            shown = ", ".join(f"{col} {old_row[col]} -> {new_row[col]}" for col in diff[:3])
            return False, f"trial row {i - 1} differs in {', '.join(diff)} (committed -> rerun: {shown})"
    skipped = ", ".join(timing_columns(protocol, live)) + (", the seconds inside info" if live else "")
    return True, f"{len(rows)} trials identical in {len(cols)} columns (timing columns skipped: {skipped})"


def _last_bits_only(old: pd.DataFrame, new: pd.DataFrame, cols: Sequence[str]) -> tuple[list[str], float] | None:
    """(columns, largest relative difference) when the frames differ only in float columns, each by at most
    :data:`LAST_BITS` relative; None otherwise."""
    import numpy as np

    differ, worst = [], 0.0
    for col in cols:
        x, y = old[col].reset_index(drop=True), new[col].reset_index(drop=True)
        if frame_text(x.to_frame(), [col]) == frame_text(y.to_frame(), [col]):
            continue
        if not (pd.api.types.is_float_dtype(x) and pd.api.types.is_float_dtype(y)):
            return None
        xv, yv = x.to_numpy(float), y.to_numpy(float)
        if not np.array_equal(np.isnan(xv), np.isnan(yv)):
            return None
        ok = ~np.isnan(xv)
        rel = np.abs(xv[ok] - yv[ok]) / np.maximum(np.abs(xv[ok]), np.finfo(float).tiny)
        if rel.size and float(rel.max()) > LAST_BITS:
            return None
        differ.append(col)
        worst = max(worst, float(rel.max()) if rel.size else 0.0)
    return (differ, worst) if differ else None


def pick_runs(committed: Mapping[str, pd.DataFrame], n: int, seed: int) -> list[tuple[str, str, str, int]]:
    """``n`` committed runs (protocol, benchmark, optimizer, repetition) drawn without replacement."""
    import numpy as np

    pool = sorted((name, *k) for name, df in committed.items() for k in _run_keys(df))
    if not pool:
        return []
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(pool), size=min(n, len(pool)), replace=False)
    return [pool[i] for i in sorted(idx)]


def isfinite(x: Any) -> bool:
    """True for a finite number."""
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


# -- a protocol's `retrain:` step: the retrained values beside the runs -------------------------------------
RETRAINED_FILE = "retrained.json"  # reproductions/<protocol>/retrained.json: every committed retraining record
RETRAINED_FORMAT = "benchsuite retrained values"


def load_retrained_records(root: str | os.PathLike, protocol: str) -> list[dict[str, Any]]:
    """The committed retraining records of ``protocol`` (:mod:`benchsuite.retrain`), in job order; [] without any."""
    p = protocol_dir(root, protocol) / RETRAINED_FILE
    if not p.exists():
        return []
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{p}: unreadable ({' '.join(str(exc).split())}); restore it with `git checkout -- {p}`") \
            from None
    if not isinstance(doc, dict) or doc.get("format") != RETRAINED_FORMAT or not isinstance(doc.get("records"), list):
        raise DataError(f"{p}: not a file of retrained values (no \"format\": \"{RETRAINED_FORMAT}\" and records)")
    return doc["records"]


def load_retrained(root: str | os.PathLike, protocol: str) -> pd.DataFrame:
    """The committed retrained values of ``protocol``, one row per run: the run keys, status, the retrained
    test loss and the test loss of the same incumbent after the search's training (what a scorecard reads)."""
    cols = [*RUN_KEYS, "status", "retrained_test_loss", "search_test_loss"]
    rows = [{"benchmark": r["benchmark_label"], "optimizer": r["optimizer_label"], "repetition": int(r["repetition"]),
             "status": r["status"], "retrained_test_loss": float(r["retrained_test_loss"]),
             "search_test_loss": float(r["search_test_loss"])} for r in load_retrained_records(root, protocol)]
    return pd.DataFrame(rows, columns=cols)


def _retrained_key(record: Mapping[str, Any]) -> tuple[str, str, int]:
    return str(record["benchmark_label"]), str(record["optimizer_label"]), int(record["repetition"])


def collect_retrained(protocol: Any, results: str | os.PathLike, root: str | os.PathLike,
                      replace: bool = False) -> dict[str, Any]:
    """Add the results folder's retraining records of ``protocol`` to ``root/<protocol>/retrained.json``.

    A record is taken when it is a retraining job of the protocol as it stands (labels, repetition, the run's
    seed) and its run is committed; a committed record is kept unless ``replace``. Written atomically, in job
    order. Returns the keys added, replaced, the refusals, and whether the file was written.
    """
    from benchsuite.protocol import retrained_path
    from benchsuite.retrain import read_record

    jobs = {(j.benchmark.label, j.optimizer.label, j.repetition): j for j in protocol.retrain_jobs()}
    old = {_retrained_key(r): r for r in load_retrained_records(root, protocol.name)}
    committed, _ = load_committed(root, protocol.name)
    runs = _run_keys(committed) if committed is not None else set()
    base = Path(results)
    base = base.parent if base.name == "results" else base
    new, refused = {}, []
    for key, job in jobs.items():
        path = base / retrained_path(job.result_path)
        if not path.exists() or (key in old and not replace):
            continue
        record = read_record(path)
        if (record.get("protocol"), _retrained_key(record), record.get("run_seed")) != (protocol.name, key, job.seed):
            refused.append(f"{path}: made for {record.get('protocol')!r} {_retrained_key(record)} (run seed "
                           f"{record.get('run_seed')}), not this protocol's job (seed {job.seed})")
        elif key not in runs:
            refused.append(f"{path}: its run {key} is not committed; collect the run first")
        else:
            new[key] = record
    report = {"added": sorted(set(new) - set(old)), "replaced": sorted(set(new) & set(old)), "refused": refused,
              "written": False}
    if new:
        merged = {**old, **new}
        order = {k: i for i, k in enumerate(jobs)}
        records = [merged[k] for k in sorted(merged, key=lambda k: (order.get(k, len(order)), k))]
        d = protocol_dir(root, protocol.name)
        d.mkdir(parents=True, exist_ok=True)
        atomic_write_text(d / RETRAINED_FILE, json.dumps({"format": RETRAINED_FORMAT, "records": records},
                                                         indent=1, sort_keys=True, default=str) + "\n")
        report["written"] = True
    report["records"] = len(old) + len(report["added"])
    return report


def restore_retrained(protocol: Any, results: str | os.PathLike, root: str | os.PathLike) -> dict[str, int]:
    """Write the committed retraining records back as ``repNNN.retrained.json`` (never over an existing file),
    so that the workflow does not retrain those runs again."""
    from benchsuite.protocol import retrained_path

    jobs = {(j.benchmark.label, j.optimizer.label, j.repetition): j for j in protocol.retrain_jobs()}
    base = Path(results)
    base = base.parent if base.name == "results" else base
    written = skipped = 0
    for record in load_retrained_records(root, protocol.name):
        job = jobs.get(_retrained_key(record))
        if job is None or record.get("run_seed") != job.seed:
            continue  # a retraining of an earlier setup of the protocol: the workflow does it again
        out = base / retrained_path(job.result_path)
        if out.exists():
            skipped += 1
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out, json.dumps(record, indent=1, sort_keys=True, default=str) + "\n")
        written += 1
    return {"written": written, "skipped": skipped}
