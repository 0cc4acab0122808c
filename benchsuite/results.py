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
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

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


def check_writable(path: str | os.PathLike) -> Path:
    """Fail early (before a run starts) if ``path`` cannot be written."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise OutputError(f"output path {str(p)!r} is a directory; give a file name such as {str(p / 'run.csv')!r}")
    if not parent.is_dir():
        raise OutputError(f"cannot write {str(p)!r}: directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise OutputError(f"cannot write {str(p)!r}: directory {str(parent)!r} is not writable")
    return p


def new_file_mode() -> int:
    """The permission bits an ordinary new file gets under the process umask (0o644 under 022).

    ``tempfile.mkstemp`` creates files readable by their owner only; files renamed into place
    from a temporary file get these bits instead, like any file the user writes.
    """
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same directory + rename)."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, separators=(",", ":"), default=str)
    return value


def format_result(rows: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any]) -> str:
    """The text of a result file."""
    buf = io.StringIO()
    buf.write(f"{MAGIC} {FORMAT_VERSION} " + json.dumps({"provenance": provenance}, default=str, sort_keys=True) + "\n")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in COLUMNS])
    return buf.getvalue()


def write_result(path: str | os.PathLike, rows: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any]) -> None:
    """Write one run's rows and provenance atomically."""
    atomic_write_text(path, format_result(rows, provenance))


def read_provenance(path: str | os.PathLike) -> dict[str, Any]:
    """The provenance record of a result file; raises :class:`DataError` if it is not one."""
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
    if not first.startswith(MAGIC):
        raise DataError(f"{path} is not a benchsuite result file (first line does not start with {MAGIC!r})")
    try:
        _, _, version, payload = first.split(" ", 3)
        if int(version) > FORMAT_VERSION:
            raise DataError(f"{path} has result format {version}; this benchsuite reads up to {FORMAT_VERSION}")
        return json.loads(payload)["provenance"]
    except (ValueError, KeyError) as exc:
        raise DataError(f"{path}: unreadable provenance line ({exc})") from None


def load_result(path: str | os.PathLike):
    """Load a result file as a pandas DataFrame with ``attrs["provenance"]`` set."""
    import pandas as pd

    prov = read_provenance(path)
    df = pd.read_csv(path, skiprows=1, dtype={"config": str, "incumbent": str, "info": str})
    df.attrs["provenance"] = prov
    return df
