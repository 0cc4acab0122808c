"""Result files: one CSV per run, its first line a JSON provenance record.

Layout::

    # benchsuite-result 1 {"provenance": ...}
    trial,worker,status,config,fidelity,...
    0,0,ok,"{""x0"":1.5,""x1"":2.0}",,...

``pandas.read_csv(path, skiprows=1)`` loads the table in one call;
:func:`load_result` also parses the provenance into ``df.attrs["provenance"]``. Files are
written to a temporary name in the same directory, flushed and fsynced, then renamed:
a reader sees no file or a complete one, never half a run.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from .errors import DataError, OutputError

MAGIC = "# benchsuite-result"
FORMAT_VERSION = 1

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


def _tmp_prefix(p: Path) -> str:
    # the temporary name must fit NAME_MAX even when the final name nearly fills it
    return f".{p.name[:80]}."


def check_writable(path: str | os.PathLike, reserve_bytes: int = 64 * 1024) -> Path:
    """Fail early (before a run starts) if ``path`` cannot be written.

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


def atomic_write_with(path: str | os.PathLike, writer: Callable[[IO[bytes]], Any]) -> None:
    """Write ``path`` atomically: ``writer`` fills a temporary file in the same directory, which is
    fsynced and renamed into place (ordinary permission bits); on any error it is removed."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(p), suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "wb") as fh:
            writer(fh)
            fh.flush()
            os.fsync(fh.fileno())
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


def format_result(rows: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any]) -> str:
    """The text of a result file."""
    buf = io.StringIO()
    buf.write(f"{MAGIC} {FORMAT_VERSION} " + to_json({"provenance": provenance}, sort_keys=True) + "\n")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in COLUMNS])
    return buf.getvalue()


def write_result(path: str | os.PathLike, rows: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any]) -> None:
    """Write one run's rows and provenance atomically; a failed write leaves no file and is an OutputError."""
    text = format_result(rows, provenance)
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise OutputError(f"cannot write {str(path)!r} ({exc.strerror or exc}); the run's results are lost, "
                          "free some space or choose another --out and run again") from None


def read_provenance(path: str | os.PathLike) -> dict[str, Any]:
    """The provenance record of a result file; raises :class:`DataError` naming the file if it is not one."""
    try:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline()
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, not a result file") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read the result file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not a benchsuite result file (not UTF-8 text)") from None
    if not first.startswith(MAGIC):
        raise DataError(f"{path}: not a benchsuite result file (its first line does not start with {MAGIC!r})")
    if not first.endswith("\n"):
        raise DataError(f"{path}: truncated result file, it ends inside its provenance line")
    try:
        _, _, version, payload = first.split(" ", 3)
        if int(version) > FORMAT_VERSION:
            raise DataError(f"{path}: result format {version}; this benchsuite reads up to {FORMAT_VERSION}, "
                            "upgrade benchsuite")
        prov = json.loads(payload)["provenance"]
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise DataError(f"{path}: unreadable provenance line ({' '.join(str(exc).split())})") from None
    if not isinstance(prov, dict):
        raise DataError(f"{path}: unreadable provenance line (the provenance is a {type(prov).__name__}, "
                        "not a JSON object)")
    return prov


# columns every row of a complete result file has a value in (loss is empty for some failed trials)
NON_EMPTY = ("trial", "worker", "status", "config", "ask_time", "start_time", "end_time", "told_time", "cost_s",
             "info")


def _check_provenance(path: str | os.PathLike, prov: Mapping[str, Any]) -> None:
    """The provenance fields readers rely on (the run's names, seed, repetition, optimum) have their types."""
    for key in ("benchmark", "optimizer"):
        if not isinstance(prov.get(key), str) or not prov[key]:
            raise DataError(f"{path}: malformed provenance line, {key!r} is missing or not a name")
    for key, required in (("seed", True), ("repetition", False)):
        value = prov.get(key)
        if value in (None, "") and not required:
            continue
        try:
            ok = int(value) == float(value) and int(value) >= 0
        except (TypeError, ValueError, OverflowError):
            ok = False
        if not ok:
            raise DataError(f"{path}: malformed provenance line, {key} {value!r} is not a non-negative integer")
    optimum = prov.get("optimum")
    if optimum is not None:
        try:
            float(optimum)
        except (TypeError, ValueError):
            raise DataError(f"{path}: malformed provenance line, optimum {optimum!r} is not a number") from None


def load_result(path: str | os.PathLike):
    """Load a result file as a pandas DataFrame with ``attrs["provenance"]`` set.

    The one loader every reader uses (the API, the analysis, the workflow): a file that is
    truncated (cut mid-row, or fewer rows than its header's ``n_trials``) or malformed
    (columns missing, required cells empty, a status other than ok/failed, an ``info``
    that is not a JSON object) is a one-line :class:`DataError` naming the file.
    """
    import pandas as pd

    try:
        with open(path, "rb") as fh:  # every complete file ends with a newline; one cut mid-row does not
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(size - 1, 0))
            last = fh.read(1)
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, not a result file") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read the result file ({exc.strerror or exc})") from None
    if not size:
        raise DataError(f"{path}: empty file, not a benchsuite result file")
    prov = read_provenance(path)
    if last != b"\n":
        raise DataError(f"{path}: truncated result file, its last row is incomplete")
    try:
        df = pd.read_csv(path, skiprows=1, dtype={"config": str, "incumbent": str, "info": str})
    except pd.errors.EmptyDataError:
        raise DataError(f"{path}: truncated result file, it ends after its provenance line") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path}: malformed result file ({' '.join(str(exc).split())})") from None
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise DataError(f"{path}: malformed result file, column(s) {', '.join(missing)} missing")
    _check_provenance(path, prov)
    expected = prov.get("n_trials")
    if expected is not None:
        try:
            expected = int(expected)
        except (TypeError, ValueError):
            raise DataError(f"{path}: malformed result file, n_trials {expected!r} in its header is not a "
                            "number") from None
        if expected != len(df):
            raise DataError(f"{path}: truncated result file, its header records {expected} trials but it has "
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
    df.attrs["provenance"] = prov
    return df
