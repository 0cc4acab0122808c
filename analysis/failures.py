"""Runs of a workflow that did not finish: which, why (the last line of each run's log), how to rerun them.

Light (no pandas): the Snakefile calls it when a workflow ends with failed jobs, so that the user sees
every failure in one summary instead of the first one buried in Snakemake's log, and ``reports/index.md``
marks a protocol with missing runs instead of leaving it out.
"""
from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: how many failed runs the summary lists one by one (the rest are counted)
LISTED = 20


@dataclass(frozen=True)
class MissingRun:
    """A run whose result file is absent: ``reason`` is the last line of its log, ``None`` if it never started."""

    protocol: str
    benchmark: str
    optimizer: str
    repetition: int
    result: Path
    log: Path
    reason: str | None

    @property
    def label(self) -> str:
        return f"{self.protocol}: {self.optimizer} on {self.benchmark}, rep {self.repetition:03d}"


def last_line(path: Path, limit: int = 300) -> str | None:
    """The last non-empty line of a text file (at most ``limit`` characters), or None when there is none."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 16384))
            tail = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    lines = [ln.strip() for ln in tail.replace("\r", "\n").splitlines() if ln.strip()]
    if not lines:
        return None
    line = lines[-1]
    return line if len(line) <= limit else line[: limit - 3] + "..."


def missing_runs(protocol: Any, root: str | os.PathLike) -> list[MissingRun]:
    """The runs of ``protocol`` whose result files are absent under ``root`` (the folder holding ``results/``)."""
    out = []
    for job in protocol.jobs():
        result = Path(root) / job.result_path
        if result.exists():
            continue
        log = result.with_suffix(".log")
        reason = last_line(log) if log.exists() else None
        out.append(MissingRun(job.protocol, job.benchmark.label, job.optimizer.label, job.repetition, result, log,
                              "(empty log)" if log.exists() and reason is None else reason))
    return out


def summary(protocols: Iterable[Any], root: str | os.PathLike, rerun: Sequence[str], relative: bool = True) -> str:
    """The end-of-workflow summary: every run that started and did not finish (its last log line), the
    number never started, and ``rerun`` followed by their result files: the command that reruns just them.
    Paths are relative to the current directory where ``relative`` and they lie below it, else absolute."""
    def short(path: Path) -> str:
        return _short_path(path) if relative else str(Path(path).resolve())

    failed: list[MissingRun] = []
    not_started = 0
    for p in protocols:
        for m in missing_runs(p, root):
            if m.reason is None:
                not_started += 1
            else:
                failed.append(m)
    if not failed and not not_started:
        return ""
    lines = [f"benchsuite: {len(failed)} run(s) failed" + (f", {not_started} not started" if not_started else "")
             + "; the finished ones are kept:"]
    for m in failed[:LISTED]:
        lines.append(f"  {m.label}\n      {m.reason}\n      log: {short(m.log)}")
    if len(failed) > LISTED:
        lines.append(f"  ... and {len(failed) - LISTED} more")
    if failed:
        files = " ".join(shlex.quote(short(m.result)) for m in failed)
        lines.append(f"rerun just these (after fixing the cause): {shlex.join(rerun)} {files}")
    return "\n".join(lines)


def _short_path(path: Path) -> str:
    rel = os.path.relpath(path)
    return str(path) if rel.startswith("..") else rel
