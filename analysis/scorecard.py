"""The scorecard: every published cell beside ours, from the committed runs alone, with a verdict and a note.

    benchsuite reproductions                 # reproductions/scorecard.csv and reproductions/SCORECARD.md

For each protocol with a ``published:`` block (:mod:`benchsuite.published`) and each of its cells,
ours is the mean and standard error over the committed runs (``reproductions/<protocol>/runs.columns.xz``)
of the protocol's reported quantity at its table point (the budget, as the protocol's own report
table), in the paper's units (``offset + scale * ours``).

One verdict rule (:func:`compare`), unit-tested on its boundaries (tests/test_scorecard_rule.py):

- ``match`` / ``better`` / ``worse``: ``|z| <= 2`` or beyond it in the paper's direction, where z rests on
  both sides' standard errors when the paper's error is one (a standard deviation over stated runs is
  converted), on our runs' spread alone when the paper's standard error is not known (a weaker match, counted
  apart), and no z is needed where both sides sit at the benchmark's known optimum at the paper's printed
  precision (the same-optimum rule, the one place rounding enters);
- ``so far ...``: fewer committed runs than the paper's, with the z as it stands;
- ``not-run (gpu)`` (with an estimate of GPU-hours on one current data-centre GPU), ``not-run
  (method missing)`` (the suite has no such method), ``not-run (no runs yet)``.

Claims (figure-only results): a ``factor`` is the baseline's time to the target over the optimizer's
(times: the median over runs of the simulated time at which a run's incumbent first comes within the
tolerance of the target; its standard error from a bootstrap over runs, on the log scale), judged against
the paper's "roughly X" read as X/2 .. 2X (:func:`factor_verdict`: ``inconclusive`` where our interval
straddles that band's edge). An ``equal`` claim (no method beats another by more than its spread) is
``match`` when the largest difference of two means is at most the pooled run-to-run standard deviation
(:func:`equal_claim`), the comparison the paper itself made.

Fidelity: each row carries its protocol's (or cell's) class, ``faithful``, ``adapted`` (with the named
differences) or ``variant`` (ours beside theirs). A published number compared in several protocols is counted
once, in the closest (:func:`mark_counted`); the headline (:func:`headline`) counts the counted numbers by
fidelity, with the not-run reasons apart, and says how many flagged differences chance alone would give at the
number of comparisons made (``p``, and Benjamini-Hochberg's ``q_bh``, in scorecard.csv).

Every better / worse / differs row carries a cause: the entry for it in ``reproductions/notes.yaml``
(a measured cause, written by whoever measured it), else ``unexplained``.
"""
from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchsuite.errors import DataError

COLUMNS = ("paper", "source", "protocol", "benchmark", "optimizer", "fidelity", "differences", "published",
           "published_error", "published_error_kind", "published_runs", "ours", "ours_se", "ours_runs", "verdict",
           "basis", "z", "p", "q_bh", "counted", "note")
VERDICTS = ("match", "better", "worse", "differs", "inconclusive", "so far", "not-run")
ROUGHLY = 2.0  # a stated "roughly X" factor: X / 2 .. 2 X
BOOTSTRAP = 400
_NOTE_KEYS = ("protocol", "benchmark", "optimizer", "claim", "note")


# -- ours -------------------------------------------------------------------------------
def table_axis(protocol: Any) -> dict[str, tuple[str, float]]:
    """Where each benchmark's table is taken: (axis, x), as the protocol's own report table."""
    from .report import _table_axis

    return _table_axis(protocol)


def run_values(protocol: Any, df: pd.DataFrame) -> pd.DataFrame:
    """Each committed run's reported quantity at the table point: benchmark, optimizer, repetition, value."""
    from .load import add_quantity
    from .steps import value_at

    labels = [b.label for b in protocol.benchmarks]
    df = df[df["benchmark"].isin(labels)]
    if not len(df):
        return pd.DataFrame(columns=["benchmark", "optimizer", "repetition", "value"])
    df = add_quantity(df, protocol.quantity, {b.label: b.optimum for b in protocol.benchmarks})
    at = table_axis(protocol)
    parts = [value_at(df[df["benchmark"] == b], at[b][0], {b: at[b][1]})
             for b in labels if (df["benchmark"] == b).any()]
    return pd.concat(parts, ignore_index=True)


def _stats(values: np.ndarray) -> tuple[float, float, int]:
    v = values[np.isfinite(values)]
    n = len(v)
    if not n:
        return math.nan, math.nan, 0
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan, n


# -- verdicts ---------------------------------------------------------------------------
def decimals(value: float) -> int:
    """Decimals the number was printed with (from its shortest repr: 0.398 -> 3, 21.28 -> 2)."""
    text = repr(float(value))
    if "e" in text:
        mant, exp = text.split("e")
        return max(0, (len(mant.split(".")[1]) if "." in mant else 0) - int(exp))
    return 0 if text.endswith(".0") else len(text.split(".")[1])


def published_se(error: float | None, kind: str, runs: int | None) -> float | None:
    """The published error bar as a standard error, or None where it cannot be one: no error printed, its kind
    not stated, or a standard deviation over a number of runs the paper does not state."""
    if error is None or kind == "not_stated":
        return None
    if kind == "standard_deviation":
        return error / math.sqrt(runs) if runs else None
    return error


@dataclass(frozen=True)
class Comparison:
    """One published number against ours: the verdict, what it rests on, and the signed z (ours minus theirs
    over the error it rests on; NaN for the same-optimum rule)."""

    verdict: str  # match | better | worse, "so far ..." with fewer runs than the paper's
    basis: str  # one of BASES
    z: float
    text: str


#: what a cell's verdict rests on, from the strongest to the weakest
BASES = ("same optimum", "standard errors", "our spread")
Z_MATCH = 2.0  # |z| at most this: no difference shown (two-sided 4.6 % under the null)


def compare(cell: Any, mean: float, se: float, sd: float, n: int) -> Comparison:
    """The one verdict rule for a published cell (value, error bar and its kind, runs, direction, optional known
    optimum) against our mean, standard error, run-to-run standard deviation and run count, all in the paper's
    units.

    1. Same optimum: where the cell gives the benchmark's known optimum and both the published value and our mean
       lie within one unit of the paper's last printed digit of it (a printing may round or truncate:
       -195.65275 is printed -195.6527), ``match`` (the only place rounding enters: a printed ``+- 0``
       and runs that all end at the optimum compare nothing else).
    2. Standard errors: where the paper's error is a standard error, or a standard deviation over a stated number
       of runs (converted: sd / sqrt(runs)), ``z = (ours - theirs) / sqrt(se_ours^2 + se_theirs^2)``.
    3. Our spread (weaker): where the paper's error is not stated as either, or it gives none, its standard error
       is unknown and never assumed: ``z = (ours - theirs) / sd_ours``, whether the published mean lies within
       the spread of our single runs. Such a match says less, and is counted apart.

    ``|z| <= 2`` is ``match``; otherwise ``better`` or ``worse`` in the paper's direction. With fewer runs than
    the paper's the verdict is ``so far ...`` and keeps its z.
    """
    diff = mean - cell.value
    places = max(decimals(cell.value), decimals(cell.error) if cell.error is not None else 0)
    d = places + 1
    so_far = bool(cell.runs and n < cell.runs)
    prefix = "so far " if so_far else ""
    runs = f"; {n} of {cell.runs} runs" if so_far else ""
    opt = getattr(cell, "optimum", None)
    unit = 10.0 ** -places  # one unit of the last printed digit: a printing may round or truncate
    if opt is not None and abs(cell.value - opt) <= unit and abs(mean - opt) <= unit:
        return Comparison(prefix + "match", "same optimum", math.nan,
                          f"{diff:+.{d}f}: both at the known optimum {opt:.{d}f} at the paper's printed precision"
                          + runs)
    pse = published_se(cell.error, cell.error_kind, cell.runs)
    if pse is not None:
        basis, scale = "standard errors", math.hypot(se if math.isfinite(se) else 0.0, pse)
        what = "combined SE"
    else:
        basis, scale = "our spread", sd if math.isfinite(sd) else 0.0
        what = "our runs' SD; the paper's standard error is not known"
    z = diff / scale if scale > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
    if abs(z) <= Z_MATCH:
        base = "match"
    else:
        good = diff > 0 if cell.higher_is_better else diff < 0
        base = "better" if good else "worse"
    return Comparison(prefix + base, basis, z, f"{diff:+.{d}f} (z = {z:+.1f}, {what}){runs}")


def cell_verdict(cell: Any, mean: float, se: float, n: int, sd: float | None = None) -> tuple[str, str]:
    """(verdict, how far) of :func:`compare` (``sd`` defaults to ``se * sqrt(n)``)."""
    if sd is None:
        sd = se * math.sqrt(n) if math.isfinite(se) and n > 0 else math.nan
    c = compare(cell, mean, se, sd, n)
    return c.verdict, c.text


def p_two_sided(z: float) -> float:
    """Two-sided normal p-value of a z (NaN stays NaN)."""
    return math.erfc(abs(z) / math.sqrt(2.0)) if not math.isnan(z) else math.nan


def benjamini_hochberg(p: Sequence[float]) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q), NaN where p is NaN; the false-discovery rate of the flags
    ``q <= 0.05`` is at most 5 % over the comparisons made."""
    p = np.asarray(p, dtype=float)
    q = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if not len(ok):
        return q
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    ranked = p[order] * m / np.arange(1, m + 1)
    q[order] = np.minimum(1.0, np.minimum.accumulate(ranked[::-1])[::-1])
    return q


# -- claims -----------------------------------------------------------------------------
def _first_times(df: pd.DataFrame, protocol: Any, benchmark: str, optimizer: str, target: float) -> np.ndarray:
    from .load import add_quantity

    g = df[(df["benchmark"] == benchmark) & (df["optimizer"] == optimizer)]
    if not len(g):
        return np.array([])
    g = add_quantity(g, protocol.quantity, {b.label: b.optimum for b in protocol.benchmarks})
    out = []
    for _, run in g.groupby("repetition", sort=True):
        run = run.sort_values("evaluation", kind="stable")
        hit = run["told_time"].to_numpy(float)[run["value"].to_numpy(float) <= target]
        out.append(hit[0] if len(hit) else math.inf)
    return np.array(out)


def _median(t: np.ndarray) -> float:
    return float(np.median(t)) if len(t) else math.nan


def factor_claim(claim: Any, protocol: Any, df: pd.DataFrame) -> tuple[float, float, int, str, str]:
    """(ours factor, its log-scale standard error, runs, verdict, how far) for a ``factor`` claim."""
    from .load import add_quantity

    sub = df[df["benchmark"] == claim.benchmark]
    if claim.target == "optimum":
        # the best value of the reported quantity any committed run reached (not the benchmark's known
        # optimum, which may be of another quantity: svm_mnist's is the best validation error)
        target = float(add_quantity(sub, protocol.quantity)["value"].min()) + claim.tolerance
    else:
        target = float(claim.target) + claim.tolerance
    ta = _first_times(df, protocol, claim.benchmark, claim.optimizer, target)
    tb = _first_times(df, protocol, claim.benchmark, claim.baseline, target)
    n = min(len(ta), len(tb))
    if not n:
        return math.nan, math.nan, 0, "not-run (no runs yet)", ""
    fa, fb = _median(ta), _median(tb)
    factor = fb / fa if math.isfinite(fa) and fa > 0 else (math.inf if math.isfinite(fb) else math.nan)
    rng = np.random.default_rng(0)
    logs = []
    for _ in range(BOOTSTRAP):
        a = _median(rng.choice(ta, len(ta)))
        b = _median(rng.choice(tb, len(tb)))
        if math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0:
            logs.append(math.log(b / a))
    se = float(np.std(logs, ddof=1)) if len(logs) > 1 else math.nan
    how = (f"target {target:.4g}; median time to it {fa:.4g} s ({claim.optimizer}) vs {fb:.4g} s ({claim.baseline})")
    if not math.isfinite(fa) and not math.isfinite(fb):
        return math.nan, se, n, "differs", how + "; neither's median run reaches the target within the budget"
    if not math.isfinite(fa):
        return 0.0, se, n, "worse", how + f"; {claim.optimizer}'s median run never reaches the target"
    if not math.isfinite(fb):
        return math.inf, se, n, "better", how + f"; {claim.baseline}'s median run never reaches the target"
    base, band = factor_verdict(factor, se, claim.value)
    how += f"; {band}"
    if claim.runs and n < claim.runs:
        return factor, se, n, "so far " + base, how + f"; {n} of {claim.runs} runs"
    return factor, se, n, base, how


def factor_verdict(factor: float, se_log: float, claimed: float) -> tuple[str, str]:
    """(verdict, how) of our speed-up ``factor`` (standard error ``se_log`` of its logarithm) against a paper's
    "roughly ``claimed``", read as the band ``claimed / 2 .. 2 claimed`` (:data:`ROUGHLY`).

    ``match``: our factor lies in the band. ``better`` / ``worse``: it lies outside and so does its whole
    interval ``factor * exp(+-2 se)``. ``inconclusive``: outside the band, but the interval reaches into it;
    our runs can neither confirm nor refute the claim (1.35x against a claimed 5x with a wide interval).
    """
    lo, hi = claimed / ROUGHLY, claimed * ROUGHLY
    spread = math.exp(2 * se_log) if math.isfinite(se_log) else math.inf
    ci = (factor / spread, factor * spread)
    band = f"claimed band {lo:.3g}-{hi:.3g}x, ours {factor:.3g}x (2-SE interval {ci[0]:.3g}-{ci[1]:.3g}x)"
    if lo <= factor <= hi:
        return "match", band
    if ci[1] < lo:
        return "worse", band
    if ci[0] > hi:
        return "better", band
    return "inconclusive", band


def equal_claim(claim: Any, values: pd.DataFrame) -> tuple[float, int, str, str]:
    """(largest difference of two means over the pooled run-to-run SD, runs, verdict, how) for an ``equal``
    claim: "no method beats another by more than the spread of its runs", which is what a paper states when its
    methods' means lie within their runs' standard deviations (DeepArchitect's Table 2: means 91.32-91.93, a
    range of 0.61, against SDs of 0.11-1.03 over 3 runs, pooled 0.67).

    ``match`` when the largest difference between two methods' means is at most the pooled standard deviation
    of single runs (root mean of the methods' variances), else ``differs``: the comparison the paper made,
    with our runs' spread in place of theirs, never our standard errors (which shrink with more runs and would
    turn any small difference into a "difference").
    """
    stats = {}
    for o in claim.optimizers:
        v = values.loc[(values["benchmark"] == claim.benchmark) & (values["optimizer"] == o), "value"].to_numpy(float)
        v = v[np.isfinite(v)]
        stats[o] = (float(v.mean()) if len(v) else math.nan, float(v.std(ddof=1)) if len(v) > 1 else math.nan,
                    len(v))
    ns = [s[2] for s in stats.values()]
    if min(ns) == 0:
        missing = [o for o, s in stats.items() if s[2] == 0]
        return math.nan, 0, "not-run (no runs yet)", f"no committed runs of {', '.join(missing)}"
    means = {o: s[0] for o, s in stats.items()}
    hi, lo = max(means, key=means.get), min(means, key=means.get)
    sds = [s[1] for s in stats.values() if math.isfinite(s[1])]
    pooled = math.sqrt(float(np.mean(np.square(sds)))) if sds else math.nan
    rng = means[hi] - means[lo]
    ratio = rng / pooled if pooled > 0 else (0.0 if rng == 0 else math.inf)
    scale = abs(claim.scale)
    how = (f"largest difference {hi} vs {lo}: {scale * rng:.3g}, {ratio:.2f}x the pooled SD of single runs "
           f"({scale * pooled:.3g})")
    n = min(ns)
    base = "match" if ratio <= 1.0 else "differs"
    if claim.runs and n < claim.runs:
        return ratio, n, "so far " + base, how + f"; {n} of {claim.runs} runs"
    return ratio, n, base, how


# -- GPU estimates ------------------------------------------------------------------------
def needs_gpu(protocol: Any) -> bool:
    """True when a run of the protocol needs a GPU (its resources or a benchmark say so)."""
    return protocol.resources.gpu > 0 or any(b.gpu == "required" for b in protocol.benchmarks)


def gpu_hours(protocol: Any, benchmark: str | None = None, optimizer: str | None = None) -> tuple[float, str]:
    """Estimated GPU-hours of the protocol's runs (of one cell when labels are given) and the basis.

    A run with a time budget trains for that long on each of its workers whatever the GPU
    (a faster one evaluates more networks in it); an evaluation budget needs the published
    block's ``gpu.evaluation_s``.
    """
    benches = [b for b in protocol.benchmarks if benchmark is None or b.label == benchmark]
    n_opt = 1 if optimizer is not None else len(protocol.optimizers) + len(protocol.skipped)
    hours, basis = 0.0, []
    for b in benches:
        per_eval = protocol.published.gpu_seconds(b.label)
        if b.budget.seconds is not None and (b.budget.evaluations is None or protocol.table_at == "time"):
            hours += protocol.repetitions * n_opt * b.budget.seconds * protocol.workers / 3600
            basis.append("time budget x workers")
        elif b.budget.evaluations is not None and per_eval:
            hours += protocol.repetitions * n_opt * b.budget.evaluations * per_eval / 3600
            basis.append(f"{per_eval:g} GPU-s per evaluation: {protocol.published.gpu_basis}")
        else:
            return math.nan, "no estimate (give gpu.evaluation_s in the published block)"
    return hours, "; ".join(dict.fromkeys(basis))


# -- notes --------------------------------------------------------------------------------
def load_notes(path: str | os.PathLike, protocols: Mapping[str, Any]) -> dict[tuple[str, str, str], str]:
    """Measured causes from ``notes.yaml``: a list of {protocol, benchmark, optimizer (or claim), note}.

    Every entry must name a published cell or claim (``claim``: its baseline or its statement's index);
    a mistake is a one-line :class:`DataError` naming the entry.
    """
    from benchsuite.protocol import load_yaml

    p = Path(path)
    if not p.exists():
        return {}
    raw = load_yaml(p.read_text(encoding="utf-8"), str(p)) or []
    if not isinstance(raw, list):
        raise DataError(f"{p}: expected a list of {{protocol, benchmark, optimizer, note}} entries")
    out: dict[tuple[str, str, str], str] = {}
    for i, e in enumerate(raw):
        if not isinstance(e, dict) or set(e) - set(_NOTE_KEYS) or not {"protocol", "benchmark", "note"} <= set(e):
            raise DataError(f"{p}: entry {i}: expected keys protocol, benchmark, optimizer, note (got {e!r})")
        proto = protocols.get(e["protocol"])
        pub = getattr(proto, "published", None)
        keys = set()
        if pub is not None:
            keys = {(c.benchmark, c.optimizer) for c in pub.cells}
            keys |= {(c.benchmark, _claim_label(c)) for c in pub.claims}
        key = (str(e["benchmark"]), str(e.get("optimizer", e.get("claim", ""))))
        if key not in keys:
            raise DataError(f"{p}: entry {i}: no published cell ({e['protocol']}, {key[0]}, {key[1]}) to note")
        if not isinstance(e["note"], str) or not e["note"].strip():
            raise DataError(f"{p}: entry {i}: the note is empty")
        out[(e["protocol"], *key)] = " ".join(e["note"].split())
    return out


def _claim_label(claim: Any) -> str:
    """The optimizer column of a claim's row: ``fabolas/mtbo`` or ``da_random=da_mcts=...``."""
    return f"{claim.optimizer}/{claim.baseline}" if claim.kind == "factor" else "=".join(claim.optimizers)


# -- the scorecard ----------------------------------------------------------------------
def _fmt(x: float, d: int) -> str:
    return "" if x is None or not math.isfinite(x) else f"{x:.{max(d, 0)}f}"


def number_id(item: Any) -> str:
    """What identifies one published number across protocols that compare with it (the same table value run
    in two setups): paper, method, value and error for a cell; paper, statement and benchmark for a claim."""
    if hasattr(item, "statement"):
        return f"{item.paper}|claim|{item.statement}|{item.benchmark}"
    return f"{item.paper}|{item.method}|{item.value!r}|{item.error!r}"


def protocol_rows(protocol: Any, df: pd.DataFrame | None, notes: Mapping[tuple[str, str, str], str],
                  retrained: pd.DataFrame | None = None) -> list[dict]:
    """The scorecard rows of one protocol (its committed frame ``df``, or None when nothing is committed; its
    committed retrained values, for cells that compare with them)."""
    pub = protocol.published
    rows: list[dict] = []
    values = run_values(protocol, df) if df is not None else pd.DataFrame(columns=["benchmark", "optimizer", "value"])
    again = pd.DataFrame(columns=["benchmark", "optimizer", "value"])
    if retrained is not None and len(retrained):
        ok = retrained[retrained["status"] == "ok"]
        again = ok.rename(columns={"retrained_test_loss": "value"})[["benchmark", "optimizer", "value"]]
    gpu = needs_gpu(protocol)

    def base_row(item: Any) -> dict:
        return {"paper": item.paper, "source": item.source, "protocol": protocol.name, "benchmark": item.benchmark,
                "fidelity": item.fidelity, "differences": "; ".join(item.differences), "ours": "", "ours_se": "",
                "ours_runs": 0, "verdict": "", "basis": "", "z": math.nan, "note": "", "variant": item.variant,
                "number": number_id(item), "closer_than": ", ".join(p for p, _ in item.closer_than)}

    for cell in pub.cells:
        d = max(decimals(cell.value), decimals(cell.error) if cell.error is not None else 0) + 1
        row = base_row(cell)
        row.update({"optimizer": cell.optimizer or f"({cell.method})", "published": _fmt(cell.value, d - 1),
                    "published_error": "" if cell.error is None else _fmt(cell.error, decimals(cell.error)),
                    "published_error_kind": cell.error_kind, "published_runs": cell.runs or "",
                    "method": cell.method})
        setup = [f"setup: {cell.note}"] if cell.note else []
        if cell.optimizer is None:
            row.update(verdict="not-run (method missing)", note="; ".join([cell.not_run, *setup]))
            rows.append(row)
            continue
        src = again if cell.retrained else values
        v = src.loc[(src["benchmark"] == cell.benchmark) & (src["optimizer"] == cell.optimizer), "value"]
        mean, se, n = _stats(cell.offset + cell.scale * v.to_numpy(float))
        se = abs(se) if math.isfinite(se) else se
        if n == 0:
            if gpu:
                h, basis = gpu_hours(protocol, cell.benchmark, cell.optimizer)
                row.update(verdict="not-run (gpu)", note="; ".join([f"about {h:,.0f} GPU-hours on one current "
                                                                      f"data-centre GPU ({basis})", *setup]))
            else:
                row.update(verdict="not-run (no runs yet)", note="; ".join(setup))
            rows.append(row)
            continue
        sd = se * math.sqrt(n) if math.isfinite(se) else math.nan
        c = compare(cell, mean, se, sd, n)
        row.update(ours=_fmt(mean, d), ours_se=_fmt(se, d), ours_runs=n, verdict=c.verdict, basis=c.basis, z=c.z)
        row["note"] = _note(c.verdict, c.text, notes.get((protocol.name, cell.benchmark, cell.optimizer)),
                            [cell.note] if cell.note else [])
        rows.append(row)
    for claim in pub.claims:
        label = _claim_label(claim)
        row = base_row(claim)
        row.update({"optimizer": label, "published_error": "", "published_error_kind": "not_stated",
                    "published_runs": claim.runs or "", "method": claim.statement,
                    "published": f"{claim.value:g}x faster" if claim.kind == "factor" else "equal within spread"})
        setup = [claim.note] if claim.note else []
        if df is None:
            if gpu:
                h, basis = gpu_hours(protocol, claim.benchmark)
                row.update(verdict="not-run (gpu)", note=f"about {h:,.0f} GPU-hours ({basis})")
            else:
                row.update(verdict="not-run (no runs yet)", note="; ".join([f"claim: {claim.statement}", *setup]))
            rows.append(row)
            continue
        if claim.kind == "factor":
            factor, se, n, verdict, far = factor_claim(claim, protocol, df)
            shown = _fmt(factor, 2) + "x" if math.isfinite(factor) else ("infinite" if factor == math.inf else "")
            row.update(ours=shown, ours_se=_fmt(se, 2) + " (log)" if math.isfinite(se) else "", ours_runs=n,
                       verdict=verdict, basis="claimed band" if not verdict.startswith("not-run") else "")
        else:
            ratio, n, verdict, far = equal_claim(claim, run_values(protocol, df))
            row.update(ours=_fmt(ratio, 2) + "x pooled SD" if math.isfinite(ratio) else "", ours_runs=n,
                       verdict=verdict, basis="our spread" if not verdict.startswith("not-run") else "")
        row["note"] = _note(verdict, far, notes.get((protocol.name, claim.benchmark, label)),
                            [f"claim: {claim.statement}", *setup])
        rows.append(row)
    return rows


DIFFERS = ("better", "worse", "differs")


def differs(verdict: str) -> bool:
    """A verdict that says ours and the paper's differ (so far or final)."""
    return verdict.removeprefix("so far ") in DIFFERS


def _note(verdict: str, far: str, measured: str | None, setup: Sequence[str]) -> str:
    parts = [far] if far else []
    if differs(verdict):
        parts.append(f"cause: {measured}" if measured else "cause: unexplained")
    elif measured:
        parts.append(measured)
    parts += [f"setup: {s}" for s in setup]
    return "; ".join(parts)


_FIDELITY_RANK = {"faithful": 0, "adapted": 1, "variant": 2}


def _closer_than(text: Any) -> list[str]:
    """The protocol names of a row's ``closer_than`` column (comma-separated)."""
    if not isinstance(text, str):  # absent (NaN where some rows of a frame lack the column)
        return []
    return [name.strip() for name in text.split(",") if name.strip()]


def mark_counted(card: pd.DataFrame) -> pd.DataFrame:
    """Add ``counted``: each published number is counted once, in the row of the protocol that compares with it
    most closely. Variants are never counted. Among the other rows of one number: one with runs before one
    without, then faithful before adapted, then a protocol that its ``closer_than`` says is closer to the paper
    before the protocols it names (a judgement the count of differences cannot make: one difference may weigh
    more than two), then fewer named differences, then more runs, then the protocol name (so the choice is
    reproducible). A ``closer_than`` naming a protocol that does not compare with the same number is an error."""
    card = card.copy()
    card["counted"] = False
    if "closer_than" not in card:
        card["closer_than"] = ""
    live = card[~card["variant"].astype(bool)]
    for _, g in live.groupby("number", sort=False):
        beaten: set[str] = set()
        for _, r in g.iterrows():
            for name in _closer_than(r["closer_than"]):
                if name not in set(g["protocol"]):
                    raise DataError(f"protocol {r['protocol']}: closer_than names {name!r}, which does not compare "
                                    f"with the same published number ({r['number']}); name a protocol that does, "
                                    "or remove it")
                beaten.add(name)
        key = g.assign(
            _run=(g["ours_runs"].astype(int) == 0).astype(int), _fid=g["fidelity"].map(_FIDELITY_RANK),
            _far=g["protocol"].isin(beaten).astype(int),
            _diffs=g["differences"].map(lambda t: len([x for x in str(t).split("; ") if x])),
            _runs=-g["ours_runs"].astype(int))
        best = key.sort_values(["_run", "_fid", "_far", "_diffs", "_runs", "protocol"], kind="stable").index[0]
        card.loc[best, "counted"] = True
    return card


def flag_multiple_comparisons(card: pd.DataFrame) -> pd.DataFrame:
    """Add ``p`` (two-sided, from z) and ``q_bh`` (Benjamini-Hochberg over the counted rows with a z) so that a
    reader sees which flagged differences survive the number of comparisons made."""
    card = card.copy()
    card["p"] = [p_two_sided(z) if isinstance(z, float) else math.nan for z in card["z"].astype(float)]
    counted = card["counted"].astype(bool) & np.isfinite(card["p"])
    card["q_bh"] = math.nan
    if counted.any():
        card.loc[counted, "q_bh"] = benjamini_hochberg(card.loc[counted, "p"].to_numpy(float))
    return card


def build(protocols: Mapping[str, Any], root: str | os.PathLike) -> pd.DataFrame:
    """The scorecard frame over every protocol with a published block (committed runs under ``root``)."""
    from .reproductions import load_committed, without_stale

    notes = load_notes(Path(root) / "notes.yaml", protocols)
    rows: list[dict] = []
    for name in sorted(protocols):
        p = protocols[name]
        if p.published is None or not (p.published.cells or p.published.claims):
            continue
        df, prov = load_committed(root, name)
        stale = 0
        if df is not None:  # runs of an earlier setup of the protocol (its budget changed, say) count for nothing
            df, stale = without_stale(p, df, prov)
        from .reproductions import load_retrained

        new = protocol_rows(p, df, notes, load_retrained(root, name) if getattr(p, "retrain", None) else None)
        for row in new if stale else ():
            row["note"] = "; ".join(x for x in (row["note"], f"{stale} committed run(s) of an earlier setup of "
                                                "the protocol left out (rerun them)") if x)
        rows += new
    card = pd.DataFrame(rows, columns=[*COLUMNS, "method", "variant", "number", "closer_than"])
    return flag_multiple_comparisons(mark_counted(card))


#: the headline's rows, in order: what a counted published number's comparison says
HEADLINE = (
    ("match", "match (both sides' standard errors, or both at the known optimum)"),
    ("match, spread only", "match on our runs' spread only (the paper's standard error is not known)"),
    ("so far match", "so far match (fewer runs than the paper's)"),
    ("differs, cause measured", "differs, cause measured"),
    ("differs, cause unknown", "differs, cause unknown"),
    ("so far differs", "so far differs (fewer runs than the paper's)"),
    ("inconclusive", "inconclusive (our factor's interval reaches into the claimed band)"),
    ("not run: GPU", "not run: GPU"),
    ("not run: method missing", "not run: method missing"),
    ("not run: no runs yet", "not run: no runs yet"),
)


def headline_category(row: Mapping[str, Any]) -> str:
    """Which headline row a scorecard row falls in (see :data:`HEADLINE`)."""
    v = str(row["verdict"])
    if v.startswith("not-run"):
        return {"not-run (gpu)": "not run: GPU", "not-run (method missing)": "not run: method missing"}.get(
            v, "not run: no runs yet")
    if v == "inconclusive" or v == "so far inconclusive":
        return "inconclusive"
    if v.startswith("so far "):
        return "so far match" if v == "so far match" else "so far differs"
    if v == "match":
        return "match, spread only" if row.get("basis") == "our spread" else "match"
    measured = "cause: unexplained" not in str(row.get("note", ""))
    return "differs, cause measured" if measured else "differs, cause unknown"


def headline(card: pd.DataFrame) -> pd.DataFrame:
    """Counted published numbers by headline row (:data:`HEADLINE`) and fidelity (faithful, adapted), with a
    total: each number once, in its most faithful protocol (:func:`mark_counted`); variants left out."""
    c = card[card["counted"].astype(bool)]
    cats = c.apply(headline_category, axis=1) if len(c) else pd.Series(dtype=str)
    table = pd.crosstab(cats, c["fidelity"]) if len(c) else pd.DataFrame()
    table = table.reindex(index=[k for k, _ in HEADLINE], columns=["faithful", "adapted"], fill_value=0)
    table["all"] = table.sum(axis=1)
    return table


def headline_markdown(card: pd.DataFrame) -> str:
    """The headline as Markdown (README, SCORECARD.md and the docs site show this same table), with what chance
    alone would flag at the number of comparisons made."""
    t = headline(card)
    labels = dict(HEADLINE)
    lines = ["| published numbers | faithful | adapted | all |", "|---|---:|---:|---:|"]
    for key, r in t.iterrows():
        lines.append(f"| {labels[key]} | {int(r['faithful'])} | {int(r['adapted'])} | {int(r['all'])} |")
    total = t.sum()
    lines.append(f"| **all** | {int(total['faithful'])} | {int(total['adapted'])} | {int(total['all'])} |")
    counted = card[card["counted"].astype(bool)]
    tested = counted[np.isfinite(counted["p"].astype(float))]
    flagged = int((tested["p"].astype(float) < 0.0455).sum())
    survive = int((tested["q_bh"].astype(float) <= 0.05).sum())
    n_rows, n_var = len(card), int(card["variant"].astype(bool).sum())
    dup = n_rows - n_var - len(counted)
    lines += ["", f"Each published number is counted once, in the protocol that compares with it most closely "
                  f"({len(counted)} numbers; {dup} rows that compare with a number counted elsewhere and {n_var} "
                  f"rows of our variants are in the tables below, not counted). Of the {len(tested)} counted "
                  f"comparisons with a z, {flagged} lie beyond |z| = 2, where chance alone would put about "
                  f"{0.0455 * len(tested):.1f}; {survive} remain significant after Benjamini-Hochberg at a 5 % "
                  "false-discovery rate (column q_bh of scorecard.csv)."]
    return "\n".join(lines)


def counts(card: pd.DataFrame) -> pd.DataFrame:
    """Counted published numbers per paper and verdict (``not-run (...)`` counted as ``not-run``)."""
    if "counted" in card:
        card = card[card["counted"].astype(bool)]
    elif "variant" in card:
        card = card[~card["variant"].astype(bool)]
    short = card["verdict"].map(lambda v: "so far" if v.startswith("so far") else v.split(" ")[0])
    table = pd.crosstab(card["paper"], short)
    return table.reindex(columns=list(VERDICTS), fill_value=0)


def to_markdown(card: pd.DataFrame, protocols: Mapping[str, Any], root: str | os.PathLike) -> str:
    """``SCORECARD.md``: counts by verdict, then one table per paper and protocol, ours beside the paper's."""
    lines = ["# What is reproduced: the scorecard", "",
             "Every number the five papers (and NAS-Bench-201) publish for a protocol of this suite, beside ours "
             "from the committed runs (`reproductions/<protocol>/runs.columns.xz`). Regenerate with "
             "`benchsuite reproductions` (or `snakemake reproductions`); the rules for each verdict are in "
             "`analysis/scorecard.py`, measured causes of differences in `reproductions/notes.yaml`. "
             "The same rows as CSV: [scorecard.csv](scorecard.csv).", "", "## Headline", "",
             headline_markdown(card), "", FIDELITY_TEXT, "", "## Counted numbers by paper and verdict", ""]
    c = counts(card)
    lines.append("| paper | " + " | ".join(c.columns) + " | numbers |")
    lines.append("|---|" + "---:|" * (len(c.columns) + 1))
    for paper, r in c.iterrows():
        lines.append(f"| {paper} | " + " | ".join(str(int(x)) for x in r) + f" | {int(r.sum())} |")
    total = c.sum()
    lines.append("| **all** | " + " | ".join(str(int(x)) for x in total) + f" | {int(total.sum())} |")
    lines.append("")
    shown: set[tuple[str, str]] = set()
    for paper, g in card.groupby("paper", sort=False):
        lines += [f"## {paper}", ""]
        for proto, h in g.groupby("protocol", sort=False):
            p = protocols[proto]
            prov_path = Path(root) / proto / "provenance.json"
            where = f" ([provenance]({proto}/provenance.json))" if prov_path.exists() else ""
            committed = "Committed runs: none yet."
            if prov_path.exists():
                from .reproductions import read_provenance

                prov = read_provenance(prov_path)
                committed = (f"Committed runs: {prov.get('n_runs', 0)} of {len(p.jobs())} "
                             f"({p.repetitions} repetitions per cell), "
                             f"{prov.get('compute_hours_total', 0):.2f} compute-hours, "
                             f"finished {' to '.join(prov.get('finished_utc', []))}.")
            figs = sorted((Path(root) / proto).glob("figure_*.png"))
            lines += [f"### `{proto}`{where}", "", f"{p.description}" if p.description else "", "",
                      f"Sources: {'; '.join(dict.fromkeys(h['source']))}. Ours: "
                      f"{_quantity(p)}, at the protocol's budget. {committed}", "",
                      "| benchmark | method (paper) | our label | fidelity | published | ours | runs (ours / paper) "
                      "| verdict | note |",
                      "|---|---|---|---|---:|---:|---:|---|---|"]
            for _, r in h.iterrows():
                pub = r["published"] + (f" ± {r['published_error']}" if r["published_error"] != "" else "")
                ours = r["ours"] + (f" ± {r['ours_se']}" if r["ours_se"] != "" else "")
                note = str(r["note"]).replace("|", "\\|")
                if r["differences"]:
                    note = f"differences: {r['differences']}; {note}".rstrip("; ")
                fid = r["fidelity"] + ("" if r["counted"] or r["variant"] else " (counted elsewhere)")
                lines.append(f"| {r['benchmark']} | {r['method']} | `{r['optimizer']}` | {fid} | {pub} | {ours} | "
                             f"{r['ours_runs']} / {r['published_runs'] or '?'} | {r['verdict']} | {note} |")
            for f in figs:
                if (proto, f.name) not in shown:
                    shown.add((proto, f.name))
                    lines += ["", f"![{proto}: committed runs]({proto}/{f.name})"]
            lines += ["", f"Error bars: published as printed ({', '.join(sorted(set(h['published_error_kind'])))}); "
                          "ours: standard error of the mean.", ""]
            lines += per_instance_markdown(p, root)
    return "\n".join(lines).rstrip() + "\n"


#: the run provenance keys that name a run's problem instance, the first one present counts: COMBO's binary
#: problems in combo_authors mode, then our own instances (instance_mode independent, combo_binary_independent)
INSTANCE_KEYS = ("authors_instance_seed", "problem_seed")


def per_instance(protocol: Any, root: str | os.PathLike) -> pd.DataFrame:
    """Our values split by problem instance (issue 23: pooled and per instance): benchmark, optimizer, instance,
    mean, se, n. Empty unless the committed runs record an instance (``benchmark_provenance``, one of
    :data:`INSTANCE_KEYS`); ``attrs["key"]`` names the key read."""
    from .reproductions import load_committed, run_provenances

    df, prov = load_committed(root, protocol.name)
    if df is None:
        return pd.DataFrame()
    inst: dict[tuple[str, str, int], int] = {}
    key = ""
    for r in run_provenances(prov):
        bp = r.get("benchmark_provenance") or {}
        found = next((k for k in INSTANCE_KEYS if bp.get(k) is not None), None)
        if found is None:
            continue
        key = key or found
        if found == key:
            inst[(str(r.get("benchmark_label")), str(r.get("optimizer_label")), int(r.get("repetition")))] = int(bp[key])
    if not inst:
        return pd.DataFrame()
    values = run_values(protocol, df)
    values["instance"] = [inst.get((b, o, int(r))) for b, o, r in
                          zip(values["benchmark"], values["optimizer"], values["repetition"])]
    rows = []
    for (b, o, i), g in values.dropna(subset=["instance"]).groupby(["benchmark", "optimizer", "instance"], sort=False):
        mean, se, n = _stats(g["value"].to_numpy(float))
        rows.append({"benchmark": b, "optimizer": o, "instance": int(i), "mean": mean, "se": se, "n": n})
    out = pd.DataFrame(rows)
    out.attrs["key"] = key
    return out


def per_instance_markdown(protocol: Any, root: str | os.PathLike) -> list[str]:
    """The per-instance tables of a protocol whose runs record their instance ([] otherwise): one table per
    set of instances (Ising and contamination have their own), benchmarks and our labels as rows."""
    t = per_instance(protocol, root)
    if len(t):
        # a benchmark whose instances hold one run each (pest control's 25 design seeds) has no per-instance mean
        t = t[t.groupby("benchmark")["n"].transform("max") > 1]
    if not len(t) or t.groupby("benchmark")["instance"].nunique().max() < 2:
        return []
    lines = [f"Per instance (the paper publishes only the pooled value): ours by the instance each run solved "
             f"({t.attrs.get('key', INSTANCE_KEYS[0])} in the runs' provenance), mean ± standard error (runs).", ""]
    labels = [b.label for b in protocol.benchmarks]
    groups: dict[tuple[int, ...], list[str]] = {}
    for b in labels:
        seeds = tuple(sorted(t.loc[t["benchmark"] == b, "instance"].unique()))
        if len(seeds) > 1:  # one instance is the pooled value again
            groups.setdefault(seeds, []).append(b)
    for seeds, benches in groups.items():
        lines += ["| benchmark | our label | " + " | ".join(f"instance {x}" for x in seeds) + " |",
                  "|---|---|" + "---:|" * len(seeds)]
        for b in benches:
            for o in [x.label for x in protocol.optimizers]:
                sub = t[(t["benchmark"] == b) & (t["optimizer"] == o)].set_index("instance")
                if not len(sub):
                    continue
                cells = []
                for x in seeds:
                    if x not in sub.index:
                        cells.append("")
                        continue
                    r = sub.loc[x]
                    d = 4 if abs(r["mean"]) < 10 else 2
                    err = f" ± {r['se']:.{d}f}" if math.isfinite(r["se"]) else ""
                    cells.append(f"{r['mean']:.{d}f}{err} ({int(r['n'])})")
                lines.append(f"| {b} | `{o}` | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def _quantity(protocol: Any) -> str:
    from benchsuite.protocol import QUANTITY_LABELS

    return QUANTITY_LABELS[protocol.quantity]


def write(protocols: Mapping[str, Any], root: str | os.PathLike) -> tuple[pd.DataFrame, list[str]]:
    """Build the scorecard and write ``root/scorecard.csv`` and ``root/SCORECARD.md`` (atomically)."""
    from benchsuite.results import atomic_write_text

    card = build(protocols, root)
    Path(root).mkdir(parents=True, exist_ok=True)
    csv_path, md_path = Path(root) / "scorecard.csv", Path(root) / "SCORECARD.md"
    out = card[list(COLUMNS)].copy()
    out["z"] = [f"{z:.3f}" if np.isfinite(z) else ("" if np.isnan(z) else str(z)) for z in out["z"].astype(float)]
    for col in ("p", "q_bh"):
        out[col] = [f"{v:.4g}" if np.isfinite(v) else "" for v in out[col].astype(float)]
    atomic_write_text(csv_path, out.to_csv(index=False))
    atomic_write_text(md_path, to_markdown(card, protocols, root))
    return card, [str(csv_path), str(md_path)]


def verdict_counts_text(card: pd.DataFrame) -> str:
    """One line per paper over its counted numbers: ``COMBO: 3 match, 1 worse, ...`` (the command's output)."""
    out = []
    card = card[card["counted"].astype(bool)] if "counted" in card else card[~card["variant"].astype(bool)]
    for paper, g in card.groupby("paper", sort=False):
        c = Counter("so far" if v.startswith("so far") else v.split(" ")[0] for v in g["verdict"])
        out.append(f"{paper}: " + ", ".join(f"{c[v]} {v}" for v in VERDICTS if c[v]))
    return "\n".join(out)


FIDELITY_TEXT = (
    "Fidelity: `faithful` is the paper's setup as far as its text and the authors' released code say; "
    "`adapted` names each way the setup differs (ours, then theirs) in the row's note; `variant` is a method or "
    "setup of ours beside the paper's, shown and never counted. Verdicts: |z| <= 2 is a match, where z rests on "
    "both sides' standard errors, or, where the paper's standard error is not known, on our runs' spread alone "
    "(a weaker match, counted apart); both sides at a benchmark's known optimum is a match by that rule; with "
    "fewer runs than the paper's a verdict is `so far`. A factor claim (\"roughly X times faster\") matches "
    "within X/2..2X and is `inconclusive` where our interval straddles that band's edge. The rule, its tests and "
    "its boundary cases: `benchsuite/analysis/scorecard.py`, tests/test_scorecard_rule.py.")


README_BEGIN = "<!-- scorecard counts: regenerated by `benchsuite reproductions --readme README.md` -->"
README_END = "<!-- end of scorecard counts -->"


def counts_markdown(card: pd.DataFrame) -> str:
    """The README's block: the headline, the same table SCORECARD.md and the docs site show."""
    return headline_markdown(card)


def update_readme(path: str | os.PathLike, card: pd.DataFrame) -> bool:
    """Replace the counts between the README's markers; False (nothing written) when it has no markers."""
    from benchsuite.results import atomic_write_text

    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if README_BEGIN not in text or README_END not in text:
        return False
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    new = f"{head}{README_BEGIN}\n{counts_markdown(card)}\n{README_END}{tail}"
    if new != text:
        atomic_write_text(p, new)
    return True


def write_figures(protocols: Mapping[str, Any], root: str | os.PathLike) -> list[str]:
    """Figures of the committed runs, linked from SCORECARD.md; returns the files written.

    - ``root/<protocol>/figure_<axis>.png`` for protocols whose paper result is a figure (claims): the
      median and quartiles over the committed runs of the reported quantity against the axis the
      protocol plots first, one panel per benchmark of a claim (as the paper's figure);
    - ``root/<protocol>/figure_table.png`` for protocols with published cells (a table): the mean and
      one standard error of the reported quantity against the table's axis, in the paper's units, one
      panel per benchmark with committed runs, and each published value as a diamond at the budget,
      so the curves show how each method got to the number the table compares (the COMBO paper's
      supplementary figures plot the same curves beside its tables).
    """
    from .reproductions import load_committed

    written = []
    for name in sorted(protocols):
        p = protocols[name]
        if p.published is None:
            continue
        df, _ = load_committed(root, name)
        if df is None:
            continue
        if p.published.claims:
            written.append(_claims_figure(p, df, root))
        if any(c.optimizer for c in p.published.cells):
            out = _table_figure(p, df, root)
            if out:
                written.append(out)
    return written


def _save_figure(fig: Any, stem: Path) -> str:
    """``stem.png`` only, at 100 dpi (a lone panel 640 px wide) and with a 256-colour palette: the scorecard's
    figures are committed, so they are kept small (about a third of the RGBA file's bytes)."""
    from .plots import save

    return save(fig, stem, formats=("png",), dpi=100, palette=True)[0]


def _claims_figure(p: Any, df: pd.DataFrame, root: str | os.PathLike) -> str:
    from .load import add_quantity
    from .plots import curves_figure, repetitions_of
    from .steps import default_grids, summarise, trajectories

    benches = list(dict.fromkeys(c.benchmark for c in p.published.claims))
    df = add_quantity(df[df["benchmark"].isin(benches)], p.quantity, {b.label: b.optimum for b in p.benchmarks})
    axis = "time" if "time" in p.plots.x else p.plots.x[0]
    scale = p.plots.scale(axis)
    summary = summarise(trajectories(df, axis, default_grids(df, axis, scale)))
    opts = [o.label for o in p.optimizers if (df["optimizer"] == o.label).any()]
    fig = curves_figure(summary, axis=axis, x_scale=scale, y_scale=p.plots.y_scale, y_label=_quantity(p),
                        title=f"{p.name}: committed runs", benchmarks=benches, optimizers=opts,
                        reps=repetitions_of(df))
    return _save_figure(fig, Path(root) / p.name / f"figure_{axis}")


def units_label(quantity: str, offset: float, scale: float) -> str:
    """The y label of a figure in the paper's units, in words a reader knows: an error in [0, 1] as 100 - 100 x
    error is an accuracy in percent (NAS-Bench-201, DeepArchitect), x 100 a percentage; any other transform is
    written out."""
    if (offset, scale) == (0.0, 1.0):
        return quantity
    if (offset, scale) == (100.0, -100.0):
        for word in ("loss", "error"):
            if word in quantity:
                return quantity.replace(word, "accuracy") + " (%)"
    if (offset, scale) == (0.0, 100.0):
        return quantity + " (%)"
    return f"{offset:g} + {scale:g} x {quantity} (the paper's units)"


def _table_figure(p: Any, df: pd.DataFrame, root: str | os.PathLike) -> str | None:
    """``figure_table.png`` (see :func:`write_figures`), or None when no benchmark of a cell has runs."""
    from .load import add_quantity
    from .plots import curves_figure, repetitions_of
    from .steps import default_grids, summarise, trajectories

    cells = [c for c in p.published.cells if c.optimizer]
    benches = [b.label for b in p.benchmarks
               if any(c.benchmark == b.label for c in cells) and (df["benchmark"] == b.label).any()]
    if not benches:
        return None
    at = table_axis(p)
    axes = {at[b][0] for b in benches}
    axis = at[benches[0]][0] if len(axes) == 1 else "evaluations"
    df = add_quantity(df[df["benchmark"].isin(benches)], p.quantity, {b.label: b.optimum for b in p.benchmarks})
    # the paper's units, as the scorecard's cells (offset + scale * ours): a panel takes those of its first
    # cell, and shows the published values given in them (two papers on one benchmark may use two units)
    units = {b: next((c.offset, c.scale) for c in cells if c.benchmark == b) for b in benches}
    df = df[df["benchmark"].isin(benches)].copy()
    offset = df["benchmark"].map({b: units[b][0] for b in benches}).astype(float)
    scale = df["benchmark"].map({b: units[b][1] for b in benches}).astype(float)
    df["value"] = offset + scale * df["value"].astype(float)
    x_scale = p.plots.scale(axis)
    budgets = {b: at[b][1] if at[b][0] == axis else None for b in benches}
    summary = summarise(trajectories(df, axis, default_grids(df, axis, x_scale, budgets)))
    marks: dict[str, list[tuple[str, float, float, float]]] = {}
    # a variant's cell repeats the number of the paper's method it sits beside: drawn once, unless the
    # protocol's cells are all variants (the paper's table in another setup)
    paper_values = {(c.benchmark, c.value) for c in cells if not c.variant}
    for c in cells:
        if (c.benchmark in benches and budgets.get(c.benchmark) and (c.offset, c.scale) == units[c.benchmark]
                and not (c.variant and (c.benchmark, c.value) in paper_values)):
            pse = published_se(c.error, c.error_kind, c.runs)
            err = math.nan if pse is None else pse
            marks.setdefault(c.benchmark, []).append((c.optimizer, budgets[c.benchmark], c.value, err))
    opts = [o.label for o in p.optimizers]
    # a log axis where a panel's values span decades (Branin from 100 down to 0.398), else linear
    y_scale = {}
    for b in benches:
        v = df.loc[df["benchmark"] == b, "value"].to_numpy(float)
        v = v[np.isfinite(v)]
        pos = v[v > 0]
        # (a run that reaches 0, as Ising's KL can, leaves its mean positive until every run is there)
        y_scale[b] = "log" if len(pos) and (v >= 0).all() and pos.max() > 20 * pos.min() else "linear"
    transforms = {units[b] for b in benches}
    y_label = _quantity(p)
    if len(transforms) > 1:
        y_label += ", in each paper's units"
    else:
        (off, sc), = transforms
        y_label = units_label(y_label, off, sc)
    fig = curves_figure(summary, axis=axis, x_scale=x_scale, y_scale=y_scale, y_label=y_label,
                        title=f"{p.name}: committed runs beside the paper's table", benchmarks=benches,
                        optimizers=opts, reps=repetitions_of(df), stat="mean", marks=marks)
    return _save_figure(fig, Path(root) / p.name / "figure_table")
