"""Result files: one CSV per run that any tool reads, and its provenance in a JSON file beside it.

Format 2 (written since 2026-11-26; see ``docs/result-format.md``)::

    run.csv                 a plain CSV with a header row: pandas.read_csv("run.csv") reads it, no options
    run.provenance.json     {"format": "benchsuite-result", "version": 2, "data_sha256": ..., "provenance": {...}}

    trial,worker,status,config,fidelity,...,info,config_x0,config_x1
    0,0,ok,"{""x0"":1.5,""x1"":2.0}",,...,{},1.5,2.0

The columns are :data:`COLUMNS` followed by one flat ``config_<variable>`` column per variable of
the space (in the space's order, the values as the space gives them; a value that is itself a
list or an object, as in architecture spaces, is its compact JSON). ``config``, ``incumbent``
and ``info`` stay JSON: they are what the suite reads back, losslessly. The provenance file
(:func:`provenance_path`: ``<name>.csv`` -> ``<name>.provenance.json``) holds the run's
provenance record and the sha256 of the CSV's bytes, so a CSV paired with another run's
provenance, or changed after it was written, is an error rather than a silent mix.

Writing is atomic: the CSV is written to a temporary file and fsynced, the provenance file is
written (atomically) next, then the CSV is renamed into place; a reader sees no CSV or a
complete one whose provenance is already there.

Format 1 (the first line ``# benchsuite-result 1 {"provenance": ...}``, then the CSV) is still
read: :func:`load_result` is the one reader of both, and returns the same frame for both (the
:data:`COLUMNS`; the flat ``config_*`` columns are for other tools, and are derived from ``config``).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .errors import DataError, OutputError

MAGIC = "# benchsuite-result"  # the first line of a format-1 file
FORMAT_VERSION = 2
FORMAT_NAME = "benchsuite-result"
PROVENANCE_SUFFIX = ".provenance.json"
FLAT_PREFIX = "config_"

COLUMNS = (
    "trial", "worker", "status", "config", "fidelity",
    "ask_time", "start_time", "end_time", "told_time",
    "loss", "cost_s", "overhead_s",
    "incumbent", "incumbent_loss", "incumbent_test_loss",
    "info",
)
# columns that depend on measured wall time; all others are reproducible from the seed
# (for live benchmarks cost_s is measured too)
TIMING_COLUMNS = ("ask_time", "start_time", "end_time", "told_time", "overhead_s")


#: where an interrupted run at ``<out>`` keeps its finished trials: ``<out>.partial.csv``, a result file with its own
#: provenance file. Beside a result ``<name>.csv`` a run also writes ``<name>.provenance.json`` and, after the
#: whole name, ``.lock``, ``.traceback.log`` and ``.failures.log`` (:func:`check_result_name` keeps them apart)
PARTIAL_SUFFIX = ".partial.csv"


def _tmp_prefix(p: Path) -> str:
    # the temporary name must fit NAME_MAX even when the final name nearly fills it
    return f".{p.name[:80]}."


#: the one format a run writes, and the name ending that says so; a name ending in another format's extension
#: is refused (a ``.parquet`` file holding CSV text would fail in every reader that trusts the name)
RESULT_FORMAT = "CSV"
RESULT_SUFFIX = ".csv"


def check_result_name(path: str | os.PathLike) -> None:
    """Refuse a result name that could share a file with another result, or that promises another format.

    A result's name ends in ``.csv``: ``r`` and ``r.csv`` would both have ``r.provenance.json``, so a name without
    it is refused, and so is a sidecar's name (``r.provenance.json``, ``r.csv.partial.csv``); every name that
    passes has files of its own, and a run never writes another run's. A name ending in another format's
    extension (``r.parquet``, ``r.json``) gets one line saying how to convert the CSV with pandas."""
    p = Path(path)
    name = p.name
    if name.endswith(PROVENANCE_SUFFIX):
        raise OutputError(f"{str(path)!r} is the name of a result's provenance file (written beside "
                          f"{name[:-len(PROVENANCE_SUFFIX)]}.csv); give the result's own name, ending in .csv")
    if name.endswith(PARTIAL_SUFFIX):
        raise OutputError(f"{str(path)!r} is the name an interrupted run at {name[:-len(PARTIAL_SUFFIX)]!r} keeps "
                          "its finished trials under; give a name ending in .csv but not in .partial.csv")
    writer = _PANDAS_WRITERS.get(p.suffix.lower())
    if writer is not None and p.stem:
        stem = str(p.with_suffix(RESULT_SUFFIX))
        raise OutputError(
            f"cannot write {str(p)!r}: a run writes {RESULT_FORMAT} (with {provenance_path(stem).name} beside it), "
            f"not {p.suffix}; give --out {stem} and convert its frame with pandas, e.g. "
            f"benchsuite.load_results({stem!r}).{writer}")
    if not name.endswith(RESULT_SUFFIX) or name == RESULT_SUFFIX:
        raise OutputError(f"a result file's name ends in .csv (its provenance file, <name>.provenance.json, is named "
                          f"after the rest), and {str(path)!r} does not; give {name + RESULT_SUFFIX!r}")


#: how pandas writes the formats a result file name might ask for (what :func:`check_result_name` suggests)
_PANDAS_WRITERS = {
    ".parquet": "to_parquet(...) (needs pyarrow)", ".pq": "to_parquet(...) (needs pyarrow)",
    ".json": "to_json(..., orient='records')", ".jsonl": "to_json(..., orient='records', lines=True)",
    ".ndjson": "to_json(..., orient='records', lines=True)", ".feather": "to_feather(...) (needs pyarrow)",
    ".xlsx": "to_excel(...)", ".tsv": "to_csv(..., sep='\\t')", ".h5": "to_hdf(...)", ".pkl": "to_pickle(...)",
}


def check_writable(path: str | os.PathLike, reserve_bytes: int = 64 * 1024, result: bool = True) -> Path:
    """Fail early (before a run starts) if ``path`` cannot be written as a result file (its name:
    :func:`check_result_name`; ``result=False`` for another record written atomically beside one, a
    retraining's ``repNNN.retrained.json``, whose name its command checks).

    Beyond the directory checks, the temporary file the result will be written through is
    created in the target directory and ``reserve_bytes`` written to it (then removed): an
    unwritable directory (read-only file system, root squash, ACLs), a name that is too long
    or a full disk is an :class:`OutputError` now, not after hours of running.
    """
    try:
        p = Path(path)
        parent = p.parent if str(p.parent) else Path(".")
        shown = str(p)
        if not p.name or str(path).endswith(os.sep) or p.name in (".", ".."):
            raise OutputError(f"output path {shown!r} names a directory; give a file name such as "
                              f"{str(p / 'run.csv')!r}")
        # lengths first: stat() of an over-long name fails with ENAMETOOLONG
        name_bytes, path_bytes = len(os.fsencode(p.name)), len(os.fsencode(os.path.abspath(p)))
        try:
            name_max = os.pathconf(parent, "PC_NAME_MAX")
            path_max = os.pathconf(parent, "PC_PATH_MAX")
        except (OSError, ValueError):
            name_max, path_max = 255, 4096
        if name_bytes > name_max:
            raise OutputError(f"cannot write {shown[:60]!r}...: its file name is {name_bytes} bytes long, this "
                              f"file system allows {name_max}; give a shorter name")
        if path_bytes >= path_max:
            raise OutputError(f"cannot write {shown[:60]!r}...: the path is {path_bytes} bytes long, this system "
                              f"allows {path_max - 1}; give a shorter path")
        if p.is_dir():
            raise OutputError(f"output path {shown!r} is a directory; give a file name such as {str(p / 'run.csv')!r}")
        if p.exists() and not p.is_file():
            raise OutputError(f"output path {shown!r} exists and is not a regular file; give another file name")
        if result:
            check_result_name(p)
        if not parent.exists():
            raise OutputError(f"cannot write {shown!r}: directory {str(parent)!r} does not exist")
        if not parent.is_dir():
            raise OutputError(f"cannot write {shown!r}: {str(parent)!r} is not a directory")
        if not os.access(parent, os.W_OK):
            raise OutputError(f"cannot write {shown!r}: directory {str(parent)!r} is not writable")
        _probe(p, parent, reserve_bytes)
    except ValueError as exc:  # a NUL byte in the path
        raise OutputError(f"cannot write {str(path)!r}: {exc}") from None
    except OSError as exc:  # a component that is a file, a loop of links, a permission on the way
        raise OutputError(f"cannot write {str(path)!r} ({exc.strerror or exc})") from None
    return p


def _probe(p: Path, parent: Path, reserve_bytes: int) -> None:
    """Create, fill and remove the temporary file a result is written through."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(p), suffix=".tmp", dir=parent)
    except OSError as exc:
        raise OutputError(f"cannot write {str(p)!r}: cannot create a file in {str(parent)!r} "
                          f"({exc.strerror or exc})") from None
    try:
        _reserve(fd, reserve_bytes)
    except OSError as exc:
        raise OutputError(f"cannot write {str(p)!r}: writing {reserve_bytes // 1024} KiB into {str(parent)!r} "
                          f"failed ({exc.strerror or exc}); free some space or choose another directory") from None
    finally:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _reserve(fd: int, nbytes: int) -> None:
    """Write ``nbytes`` to ``fd`` and sync them to disk (a full disk fails here)."""
    block = b"\0" * min(nbytes, 1 << 16)
    left = nbytes
    while left > 0:
        left -= os.write(fd, block[:left])
    os.fsync(fd)


def new_file_mode() -> int:
    """The permission bits an ordinary new file gets under the process umask (0o644 under 022).

    ``tempfile.mkstemp`` creates files readable by their owner only; files renamed into place
    from a temporary file get these bits instead, like any file the user writes.
    """
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_with(path: str | os.PathLike, writer: Callable[[IO[bytes]], Any],
                      before_rename: Callable[[], Any] | None = None) -> None:
    """Write ``path`` atomically: ``writer`` fills a temporary file in the same directory, which is
    fsynced and renamed into place (ordinary permission bits); on any error it is removed.
    ``before_rename`` runs between the fsync and the rename (a result's provenance file is written
    there: after the data are safely on disk, before the data file appears)."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(p), suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "wb") as fh:
            writer(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if before_rename is not None:
            before_rename()
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_with(path, lambda fh: fh.write(text.encode("utf-8")))


# non-finite floats in JSON cells and the provenance line: strings, which every JSON parser
# reads and float() turns back into the number (json.dumps would write NaN, not JSON)
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float (nested too) replaced by "NaN", "Infinity" or "-Infinity"."""
    if isinstance(value, float):
        return value if math.isfinite(value) else _NON_FINITE[repr(value)]
    if isinstance(value, Mapping):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    try:  # numpy scalars
        import numpy as np

        if isinstance(value, np.floating):
            return json_safe(float(value))
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.ndarray):
            return json_safe(value.tolist())
    except ImportError:  # pragma: no cover
        pass
    return value


def to_json(value: Any, **kw: Any) -> str:
    """Strict JSON text of ``value`` (non-finite floats as strings, unknown objects as str)."""
    return json.dumps(json_safe(value), allow_nan=False, default=str, **kw)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    if isinstance(value, (dict, list, tuple)):
        return to_json(value, separators=(",", ":"))
    return value


def provenance_path(path: str | os.PathLike) -> Path:
    """The provenance file beside the result file ``path``: ``run.csv`` -> ``run.provenance.json`` (a name that
    does not end in ``.csv`` gets ``.provenance.json`` appended); an over-long name is shortened as
    :func:`benchsuite.locks.sidecar_path` shortens it. Copy or move the two files together."""
    from .locks import sidecar_path

    p = Path(path)
    name = p.name[:-len(".csv")] if p.name.endswith(".csv") and p.name != ".csv" else p.name
    return sidecar_path(p.with_name(name), PROVENANCE_SUFFIX)


@dataclass(frozen=True)
class ResultText:
    """One result as its two files hold it (:func:`format_result`): the CSV's text and the provenance file's."""

    csv: str
    provenance: str


def _config_object(cell: Any) -> Mapping[str, Any] | None:
    """A row's configuration as a mapping of variable names (None for one that is not a JSON object)."""
    if isinstance(cell, Mapping):
        return cell
    if isinstance(cell, str) and cell.startswith("{"):
        try:
            value = json.loads(cell)
        except (ValueError, RecursionError):
            return None
        return value if isinstance(value, dict) else None
    return None


def sha256_bytes(data: bytes) -> str:
    """sha256 hex digest of ``data`` (``benchsuite.data.sha256_file`` for a file)."""
    return hashlib.sha256(data).hexdigest()


def format_result(rows: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any]) -> ResultText:
    """The text of a result's two files: the CSV (:data:`COLUMNS`, then one ``config_<variable>`` column per
    variable of the configurations, in their order) and its provenance file (the record and the CSV's sha256)."""
    rows = list(rows)
    configs = [_config_object(row.get("config")) for row in rows]
    names = list(dict.fromkeys(name for config in configs if config for name in config))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*COLUMNS, *(FLAT_PREFIX + str(name) for name in names)])
    for row, config in zip(rows, configs):
        flat = [_cell(config.get(name)) for name in names] if config else [""] * len(names)
        writer.writerow([_cell(row.get(c)) for c in COLUMNS] + flat)
    data = buf.getvalue()
    record = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "data_sha256": sha256_bytes(data.encode("utf-8")),
              "provenance": json.loads(to_json(provenance, sort_keys=True))}  # its keys sorted, as format 1's
    return ResultText(data, to_json(record, indent=1) + "\n")


def write_result(path: str | os.PathLike, rows: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any]) -> None:
    """Write one run's rows and provenance atomically; a failed write leaves no file and is an OutputError."""
    write_result_text(path, format_result(rows, provenance))


def write_result_text(path: str | os.PathLike, result: ResultText) -> None:
    """Write a result's two files (:func:`format_result`) atomically; a failed write is an OutputError.

    The CSV goes to a temporary file and is fsynced, then the provenance file is written (atomically),
    then the CSV is renamed into place: the CSV's presence means the run is complete and its
    provenance is there. A write that fails before the rename (a full disk) leaves what was there."""
    try:
        atomic_write_with(path, lambda fh: fh.write(result.csv.encode("utf-8")),
                          before_rename=lambda: atomic_write_text(provenance_path(path), result.provenance))
    except OSError as exc:
        raise OutputError(f"cannot write {str(path)!r} ({exc.strerror or exc}); the run's results are lost, "
                          "free some space or choose another --out and run again") from None


def _read_bytes(path: str | os.PathLike, what: str = "the result file") -> bytes:
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, not a result file") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None


def _parse_provenance_line(path: str | os.PathLike, first: str) -> dict[str, Any]:
    """The provenance of a format-1 file's first line (with its newline); DataError naming ``path`` if malformed."""
    if not first.endswith("\n"):
        raise DataError(f"{path}: truncated result file, it ends inside its provenance line")
    try:
        _, _, version, payload = first.split(" ", 3)
        if int(version) > FORMAT_VERSION:
            raise DataError(f"{path}: result format {version}; this benchsuite reads up to {FORMAT_VERSION}, "
                            "upgrade benchsuite")
        if int(version) != 1:
            raise ValueError(f"format {version} has no {MAGIC!r} line")
        prov = json.loads(payload)["provenance"]
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise DataError(f"{path}: unreadable provenance line ({' '.join(str(exc).split())})") from None
    if not isinstance(prov, dict):
        raise DataError(f"{path}: unreadable provenance line (the provenance is a {type(prov).__name__}, "
                        "not a JSON object)")
    return prov


def _parse_provenance_file(path: str | os.PathLike, data: bytes, record_text: str | None
                           ) -> tuple[dict[str, Any], str | None]:
    """The provenance of a format-2 CSV (``data``, its bytes) from its provenance file (or ``record_text``), and
    the error message if the file records another CSV (None if it records this one); a one-line DataError
    naming ``path`` and saying what to do if the provenance file is missing or unreadable."""
    side = provenance_path(path)
    if record_text is None:
        if not side.exists():
            raise DataError(f"{path}: its provenance file {side.name} is missing (a result is the CSV and the "
                            f"provenance file beside it); copy both together, or run the run again")
        raw = _read_bytes(side, f"its provenance file {side.name}")
        try:
            record_text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{path}: its provenance file {side.name} is not UTF-8 text; restore it, or run the "
                            "run again") from None
    try:
        record = json.loads(record_text)
    except (ValueError, RecursionError) as exc:
        raise DataError(f"{path}: unreadable provenance file {side.name} ({' '.join(str(exc).split())}); restore "
                        "it, or run the run again") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT_NAME:
        raise DataError(f"{path}: {side.name} is not a benchsuite provenance file (no \"format\": "
                        f"\"{FORMAT_NAME}\"); restore it, or run the run again")
    version = record.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise DataError(f"{path}: unreadable provenance file {side.name} (version {version!r} is not a number)")
    if version > FORMAT_VERSION:
        raise DataError(f"{path}: result format {version}; this benchsuite reads up to {FORMAT_VERSION}, "
                        "upgrade benchsuite")
    prov = record.get("provenance")
    if not isinstance(prov, dict):
        raise DataError(f"{path}: unreadable provenance file {side.name} (its provenance is a "
                        f"{type(prov).__name__}, not a JSON object)")
    mismatch = None
    if record.get("data_sha256") != sha256_bytes(data):
        mismatch = (f"{path}: does not match its provenance file {side.name} (the CSV's sha256 is not the one "
                    "recorded: the CSV was changed or replaced after the run wrote it, or a later write was "
                    "interrupted); restore the two files together, or run the run again")
    return prov, mismatch


def _split(path: str | os.PathLike, data: bytes, record_text: str | None
           ) -> tuple[int, dict[str, Any], str, str | None]:
    """(format version, provenance, CSV text, why the provenance file records another CSV or None) of a result
    file of either format (``data``: its bytes)."""
    if not data:
        raise DataError(f"{path}: empty file, not a benchsuite result file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{path}: not a benchsuite result file (not UTF-8 text)") from None
    if text.startswith(MAGIC):
        first, newline, body = text.partition("\n")
        prov = _parse_provenance_line(path, first + newline)
        version, mismatch = 1, None
    elif text.startswith(",".join(COLUMNS[:4]) + ","):
        prov, body, version = None, text, FORMAT_VERSION
    else:
        raise DataError(f"{path}: not a benchsuite result file (it starts neither with {MAGIC!r} nor with the "
                        "columns of a result file)")
    if not text.endswith("\n"):  # every complete file ends with a newline; one cut mid-row does not
        raise DataError(f"{path}: truncated result file, its last row is incomplete")
    if prov is None:
        prov, mismatch = _parse_provenance_file(path, data, record_text)
    return version, prov, body, mismatch


def read_provenance(path: str | os.PathLike) -> dict[str, Any]:
    """The provenance record of a result file (either format; for format 2 from its provenance file, checked to
    belong to the CSV); raises :class:`DataError` naming the file if it is not one."""
    _, prov, _, mismatch = _split(path, _read_bytes(path), None)
    if mismatch:
        raise DataError(mismatch)
    return prov


# columns every row of a complete result file has a value in (loss is empty for some failed trials)
NON_EMPTY = ("trial", "worker", "status", "config", "ask_time", "start_time", "end_time", "told_time", "cost_s",
             "info")


def _check_provenance(path: str | os.PathLike, prov: Mapping[str, Any]) -> None:
    """The provenance fields readers rely on (the run's names, seed, repetition, optimum) have their types."""
    for key in ("benchmark", "optimizer"):
        if not isinstance(prov.get(key), str) or not prov[key]:
            raise DataError(f"{path}: malformed provenance, {key!r} is missing or not a name")
    for key, required in (("seed", True), ("repetition", False)):
        value = prov.get(key)
        if value in (None, "") and not required:
            continue
        try:
            ok = int(value) == float(value) and int(value) >= 0
        except (TypeError, ValueError, OverflowError):
            ok = False
        if not ok:
            raise DataError(f"{path}: malformed provenance, {key} {value!r} is not a non-negative integer")
    optimum = prov.get("optimum")
    if optimum is not None:
        try:
            float(optimum)
        except (TypeError, ValueError):
            raise DataError(f"{path}: malformed provenance, optimum {optimum!r} is not a number") from None


def _check_cells(path: str | os.PathLike, df: Any) -> None:
    """The values the run loop writes, cell by cell: every time and cost a finite number (a cost >= 0), an ok
    trial's loss finite, the fidelity a number or empty, the configuration and incumbent JSON (the incumbent
    may be empty). A file that breaks one of them was not written by a run (or was edited): a reader, and a
    resumed run that would tell its rows to an optimizer, must not take it for one."""
    import numpy as np
    import pandas as pd

    def first_bad(mask: Any) -> int:
        return int(np.asarray(mask).argmax())

    def where(i: int) -> str:
        return f"trial {df['trial'].iloc[i]}"

    for col in ("ask_time", "start_time", "end_time", "told_time", "overhead_s", "cost_s"):
        values = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(values) | ((values < 0) if col == "cost_s" else False)
        if col == "overhead_s":  # the one of them that may be empty (not measured)
            bad &= df[col].notna().to_numpy()
        if bad.any():
            i = first_bad(bad)
            what = "a finite number of seconds >= 0" if col == "cost_s" else "a finite number"
            raise DataError(f"{path}: malformed result file, {col} of {where(i)} is {df[col].iloc[i]!r}, not {what}")
    if not (pd.api.types.is_numeric_dtype(df["fidelity"]) or df["fidelity"].isna().all()):
        raise DataError(f"{path}: malformed result file, column 'fidelity' holds non-numbers")
    loss = pd.to_numeric(df["loss"], errors="coerce").to_numpy(dtype=float)
    bad = (df["status"] == "ok").to_numpy() & ~np.isfinite(loss)
    if bad.any():
        i = first_bad(bad)
        raise DataError(f"{path}: malformed result file, {where(i)} is ok but its loss {df['loss'].iloc[i]!r} is not "
                        "a finite number")
    for col in ("config", "incumbent"):  # (config is never empty: NON_EMPTY; an incumbent may be)
        for text in pd.unique(df[col].dropna()):  # each distinct text once: an incumbent repeats over many rows
            try:
                json.loads(text)
            except (TypeError, ValueError, RecursionError):
                from .errors import show

                i = first_bad((df[col] == text).to_numpy())
                raise DataError(f"{path}: malformed result file, the {col} of {where(i)} is not JSON: "
                                f"{show(text)}") from None


def load_result(path: str | os.PathLike, *, text: ResultText | str | None = None):
    """Load a result file (either format) as a pandas DataFrame with ``attrs["provenance"]`` (a dict) set.

    The one reader every reader uses (the API, the analysis, the workflow, resuming, replay): a
    file that is truncated (cut mid-row, or fewer rows than its provenance's ``n_trials``),
    malformed (columns missing, required cells empty, a status other than ok/failed, an
    ``info`` that is not a JSON object) or, in format 2, without its provenance file or not
    the CSV that file records, is a one-line :class:`DataError` naming the file. The frame
    has the :data:`COLUMNS` whatever the format (format 2's flat ``config_*`` columns repeat
    ``config`` for other tools and are not read). With ``text`` (what :func:`format_result`
    returned, or a format-1 file's text) the same checks run on it in memory and ``path``
    only names it in messages: a run's frame without writing a file.
    """
    return _load(path, text)[0]


def load_result_cells(path: str | os.PathLike) -> tuple[Any, list[dict[str, str]]]:
    """:func:`load_result`'s frame and the rows' cells exactly as written (text, :data:`COLUMNS` only), read once:
    what resuming reuses, so that floats and JSON come back bit for bit."""
    df, body = _load(path, None)
    rows = [{c: row.get(c, "") for c in COLUMNS} for row in csv.DictReader(io.StringIO(body))]
    return df, rows


def _load(path: str | os.PathLike, text: ResultText | str | None) -> tuple[Any, str]:
    """The checked frame of a result file (or of ``text``) and its CSV text."""
    import pandas as pd

    if text is None:
        data, record = _read_bytes(path), None
    elif isinstance(text, ResultText):
        data, record = text.csv.encode("utf-8"), text.provenance
    else:
        data, record = text.encode("utf-8"), None
    version, prov, body, mismatch = _split(path, data, record)
    dtype = {"config": str, "incumbent": str, "info": str}
    # format 2's flat config_* columns are read as text and dropped: they repeat config (for other tools)
    flat = [] if version == 1 else [c for c in next(csv.reader(io.StringIO(body)), []) if c.startswith(FLAT_PREFIX)]
    try:
        df = pd.read_csv(io.StringIO(body), dtype={**dtype, **dict.fromkeys(flat, str)})
    except pd.errors.EmptyDataError:
        raise DataError(f"{path}: truncated result file, it ends after its provenance line") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path}: malformed result file ({' '.join(str(exc).split())})") from None
    if flat:
        df = df.drop(columns=flat)
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise DataError(f"{path}: malformed result file, column(s) {', '.join(missing)} missing")
    _check_provenance(path, prov)
    expected = prov.get("n_trials")
    if expected is not None:
        try:
            expected = int(expected)
        except (TypeError, ValueError):
            raise DataError(f"{path}: malformed result file, n_trials {expected!r} in its provenance is not a "
                            "number") from None
        if expected != len(df):
            raise DataError(f"{path}: truncated result file, its provenance records {expected} trials but it has "
                            f"{len(df)} rows")
    for col in NON_EMPTY:
        bad = df[col].isna().to_numpy()
        if bad.any():
            raise DataError(f"{path}: malformed result file, column {col!r} is empty in row {int(bad.argmax()) + 1}")
    for col in ("trial", "worker"):
        if not pd.api.types.is_integer_dtype(df[col]):
            raise DataError(f"{path}: malformed result file, column {col!r} holds non-integers")
    for col in ("ask_time", "start_time", "end_time", "told_time", "cost_s", "loss", "incumbent_loss",
                "incumbent_test_loss"):
        if not (pd.api.types.is_numeric_dtype(df[col]) or df[col].isna().all()):
            raise DataError(f"{path}: malformed result file, column {col!r} holds non-numbers")
    bad_status = ~df["status"].isin(("ok", "failed"))
    if bad_status.any():
        raise DataError(f"{path}: malformed result file, status {df['status'][bad_status].iloc[0]!r} "
                        "is neither 'ok' nor 'failed'")
    for trial, info in zip(df["trial"], df["info"]):
        try:
            ok = isinstance(json.loads(info), dict)
        except (TypeError, ValueError, RecursionError):
            ok = False
        if not ok:
            raise DataError(f"{path}: malformed result file, the info of trial {trial} is not a JSON object")
    _check_cells(path, df)
    if mismatch:  # checked last: a cut or malformed CSV is named as such first
        raise DataError(mismatch)
    df.attrs["provenance"] = prov
    return df, body
