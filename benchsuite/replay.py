"""``benchsuite replay RESULT``: re-drive a run's optimizer with its recorded results (issue 28, item 4).

A real backend's run depends on timing: which trial finishes first decides what the optimizer
has seen when it asks next. The result file records that order: its rows are in tell order, the
trial ids in ask order, and each row names the worker slot that ran it. The run loops (simulated
and real alike) ask in one pattern: the first trial of each slot at the start, then, right after
each tell, the next trial of the slot that tell freed. Replay rebuilds that sequence of asks and
tells from the rows, drives a fresh optimizer through it (the run's optimizer settings, its
generator from :func:`benchsuite.seeding.optimizer_rng` of the run's seed, the same initial
design), tells it the recorded results and checks that every ask proposes the recorded
configuration and fidelity. Nothing is evaluated.

A match says the optimizer, given what it was told when, made the run's decisions; a mismatch
names the first trial where it proposes something else (a doctored file, an optimizer that is
not deterministic given its seed, or a different library version).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any

from .benchmark import Result
from .errors import DataError, shorten
from .optimizer import Trial


@dataclass(frozen=True)
class ReplayOutcome:
    """Whether the replay matched, and the one line that says so (or names the first differing trial)."""

    ok: bool
    summary: str
    trials: int
    first_difference: int | None = None


def _float_or_none(value: Any) -> float | None:
    if value is None:
        return None
    v = float(value)
    return None if math.isnan(v) else v


def _same_fidelity(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and float(a) == float(b))


def event_order(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """The run loop's asks and tells, in order, from rows in tell order: ``("ask", id)`` / ``("tell", id)``.

    The first trial of each worker slot is asked at the start (in id order); after the tell of a trial,
    the next trial of its slot is asked. Raises :class:`DataError` when the rows cannot come from a run
    (trial ids not 0..n-1 once each)."""
    ids = [int(r["trial"]) for r in rows]
    if sorted(ids) != list(range(len(ids))):
        raise DataError("the trial ids are not 0..n-1, each once: not the rows of one complete run")
    by_worker: dict[int, list[int]] = {}
    for r in sorted(rows, key=lambda r: int(r["trial"])):
        by_worker.setdefault(int(r["worker"]), []).append(int(r["trial"]))
    following = {a: b for ts in by_worker.values() for a, b in zip(ts, ts[1:])}
    events = [("ask", ts[0]) for ts in sorted(by_worker.values(), key=lambda ts: ts[0])]
    for r in rows:
        t = int(r["trial"])
        events.append(("tell", t))
        if t in following:
            events.append(("ask", following[t]))
    return events


def replay(path: str | os.PathLike) -> ReplayOutcome:
    """Replay the run in result file ``path``; see the module docstring."""
    from . import registry
    from .results import load_result
    from .runner import _asked, benchmark_design
    from .seeding import optimizer_rng

    df = load_result(path)
    prov = df.attrs["provenance"]
    rows = df.to_dict("records")
    events = event_order(rows)
    by_id = {int(r["trial"]): r for r in rows}

    bench = registry.make_benchmark(prov["benchmark"], dict(prov.get("benchmark_settings") or {}))
    opt_cls = registry.get_optimizer(prov["optimizer"])
    seed = int(prov["seed"])
    design = benchmark_design(bench, opt_cls, prov.get("initial_design", "optimizer"))
    opt = opt_cls(bench.space, bench.fidelity, optimizer_rng(seed), initial_design=design,
                  **dict(prov.get("optimizer_settings") or {}))
    backend = (prov.get("backend") or {}).get("name", "simulated")
    what = (f"{prov['optimizer']} on {prov['benchmark']} (seed {seed}, {backend} backend, "
            f"{prov.get('workers', 1)} worker{'s' if prov.get('workers', 1) != 1 else ''})")

    pending: dict[int, Trial] = {}
    next_id = 0
    for kind, tid in events:
        row = by_id[tid]
        if kind == "ask":
            if tid != next_id:
                return ReplayOutcome(False, f"replay of {path}: trial {tid} differs: the rows' order has it asked "
                                            f"before trial {next_id}, which no run loop does", len(rows), tid)
            next_id += 1
            try:
                suggestion, config, fid, _ = _asked(opt, bench, pending, tid)
            except Exception as exc:  # noqa: BLE001 - the replay's verdict, not a crash
                return ReplayOutcome(False, f"replay of {path}: trial {tid} differs: the optimizer raised "
                                            f"{type(exc).__name__}: {shorten(exc, 200)} when asked", len(rows), tid)
            got, recorded = bench.space.to_json(config), str(row["config"])
            rec_fid = _float_or_none(row["fidelity"])
            if got != recorded or not _same_fidelity(fid, rec_fid):
                shown = (f"{shorten(got, 160)}" + (f" at fidelity {fid}" if fid is not None or rec_fid is not None
                                                    else ""),
                         f"{shorten(recorded, 160)}" + (f" at fidelity {rec_fid}" if fid is not None
                                                         or rec_fid is not None else ""))
                return ReplayOutcome(False, f"replay of {path}: trial {tid} differs: the optimizer proposes "
                                            f"{shown[0]}, the file records {shown[1]}", len(rows), tid)
            pending[tid] = Trial.from_suggestion(suggestion, tid, config=config, fidelity=fid,
                                                 worker=int(row["worker"]))
        else:
            trial = pending.pop(tid)
            info = json.loads(row["info"])
            own = {k: v for k, v in info.items() if k not in trial.info or trial.info[k] != v}
            loss = _float_or_none(row["loss"])
            result = Result(loss=math.nan if loss is None else loss, cost_s=float(row["cost_s"]), info=own,
                            failed=row["status"] == "failed")
            try:
                opt.tell(trial, result)
                opt.recommend()
            except Exception as exc:  # noqa: BLE001
                return ReplayOutcome(False, f"replay of {path}: trial {tid} differs: the optimizer raised "
                                            f"{type(exc).__name__}: {shorten(exc, 200)} when told its result",
                                     len(rows), tid)
    return ReplayOutcome(True, f"replay of {path}: OK, {len(rows)} trials of {what} proposed as recorded, "
                               f"in the recorded order", len(rows))
