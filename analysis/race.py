"""A race: one new optimizer on the paper protocols, compared with every committed run of their methods.

``benchsuite race OPTIMIZER`` (:mod:`benchsuite.cli_race`) plans the race here (:func:`plan`), runs only the new
optimizer's jobs, and writes the report here (:func:`write_report`). The baselines are never rerun: their runs
are data (``reproductions/<protocol>/``, read through :mod:`benchsuite.analysis.baselines`).

What the new optimizer's runs share with the protocol's committed ones (:func:`plan`): the protocol's
benchmarks and their settings (the problem instance of each repetition too), budgets, asynchronous workers,
clock, overhead rule and overhead clock; the initial design where the protocol's methods start from the
benchmark's (and the new optimizer can: ``Capabilities(initial_design=True)``; otherwise the report names the
difference). Its seeds are the protocol's seed rule with its own label, ``derive_seed(protocol, benchmark label,
new label, repetition)``: fixed, and different from every baseline's (as two methods' seeds differ in the
workflow), while repetition ``r`` of every method solves the same problem instance, so that (benchmark,
repetition) is a block of paired values.

The report (:func:`write_report`, one Markdown page with CSV beside it):

- per protocol, the table at the budget (each method's mean, standard error and runs, the published value where
  the protocol's ``published:`` block has one, converted to the suite's units) with a column for the new method,
  and the new method against each baseline under the scorecard's verdict rule
  (:func:`benchsuite.analysis.scorecard.compare`: the baseline's committed mean and standard error stand where
  a paper's number would, ``so far`` while the new method has fewer runs than the baseline);
- anytime curves: the committed methods' median and quartile band beside the new method's;
- over all protocols: Friedman, Holm-corrected pairwise Wilcoxon tests and a critical-difference diagram
  (:mod:`benchsuite.analysis.stats`, the code ``analyse`` uses) with blocks = (protocol/benchmark,
  repetition), over the new method and the baselines that have a value in every block the new method has;
- the power of the comparison at the race's number of repetitions (:func:`power`), measured by drawing races of
  that size from the committed runs;
- what the race cost beside what rerunning the baselines would (the record's compute-hours).
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchsuite.errors import InvalidSettingError

from . import baselines as B
from .race_suites import SUITES


REFERENCE = "random_search"  # the baseline the power statement measures against: every paper's
# the fewest blocks a power simulation is run for: below 14 pairs, SciPy's Wilcoxon test of tied values (which a
# resampled race has) is a permutation test over all 2^n sign patterns, about a second per pair of methods, so
# that 200 simulated races of a ten-method protocol would take hours; from 14 on it is the normal approximation
POWER_MIN_BLOCKS = 14


@dataclass(frozen=True)
class RaceOptions:
    """What a race runs and how it judges: checked once, here (:meth:`check`), before anything runs."""

    optimizer: str                       # a registered name, module:Class or path/to/file.py:Class
    label: str = ""                      # the new method's label (default: the optimizer's name)
    settings: Mapping[str, Any] = field(default_factory=dict)
    protocols: tuple[str, ...] = ()      # protocol names or files (with or instead of a suite)
    suite: str | None = None
    repetitions: int | None = None       # per protocol, at most its own (default: the suite's, else the protocol's)
    jobs: int = 1                        # runs at once (processes)
    backend: str = "simulated"           # where evaluations run, as `benchsuite run --backend`
    scheduler: str | None = None
    out: str = ""                        # the race's folder (default race-<label>)
    baselines: str = "auto"              # auto | runs | compact (benchsuite.analysis.baselines)
    alpha: float = 0.05
    fail_if_worse_than: tuple[str, ...] = ()
    fail_if_rank_below: int | None = None
    power_draws: int = 200
    protocols_dir: str | None = None     # where protocol names are looked up (default: the suite's protocols/)
    reproductions_dir: str | None = None  # the committed runs (default: reproductions/ of the clone or the wheel)

    def check(self) -> RaceOptions:
        """The options with defaults filled in; a mistake is one :class:`InvalidSettingError` line."""
        from benchsuite.backends import BACKENDS

        if not self.protocols and self.suite is None:
            raise InvalidSettingError("race: name a suite (--suite " + " | ".join(SUITES) + ") or protocols "
                                      "(--protocol NAME, repeatable)")
        if self.suite is not None and self.suite not in SUITES:
            import difflib

            close = difflib.get_close_matches(self.suite, list(SUITES), n=1)
            raise InvalidSettingError(f"race: unknown suite {self.suite!r}"
                                      + (f"; did you mean {close[0]!r}?" if close else "")
                                      + f" (suites: {', '.join(SUITES)})")
        if self.repetitions is not None and not 1 <= self.repetitions <= 100_000:
            raise InvalidSettingError(f"race: --reps must be in 1..100000, got {self.repetitions}")
        if not 1 <= self.jobs <= 1024:
            raise InvalidSettingError(f"race: --jobs must be in 1..1024, got {self.jobs}")
        if self.backend not in BACKENDS:
            raise InvalidSettingError(f"race: --backend {self.backend!r}: expected one of {', '.join(BACKENDS)}")
        if self.scheduler is not None and self.backend != "dask":
            raise InvalidSettingError("race: --scheduler is the address of a dask scheduler: give --backend dask")
        if self.baselines not in B.SOURCES:
            raise InvalidSettingError(f"race: --baselines {self.baselines!r}: expected one of "
                                      f"{', '.join(B.SOURCES)}")
        if not 0 < self.alpha < 1:
            raise InvalidSettingError(f"race: --alpha must be in (0, 1), got {self.alpha}")
        if self.fail_if_rank_below is not None and self.fail_if_rank_below < 1:
            raise InvalidSettingError(f"race: --fail-if-rank-below must be at least 1, got {self.fail_if_rank_below}")
        if not 0 <= self.power_draws <= 100_000:
            raise InvalidSettingError(f"race: --power-draws must be in 0..100000, got {self.power_draws}")
        return self


@dataclass
class Leg:
    """One protocol of a race: the protocol, the new optimizer's jobs on it, and what was left out and why."""

    protocol: Any                        # the protocol as committed (its methods are the baselines)
    race: Any                            # the same protocol with the new optimizer as its only method
    benchmarks: tuple[str, ...]          # the labels raced
    repetitions: int
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (benchmark label, why)
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.protocol.name

    def jobs(self) -> list[Any]:
        """The new optimizer's jobs: raced benchmarks x repetitions 0..repetitions-1, in protocol order."""
        return [j for j in self.race.jobs() if j.repetition < self.repetitions]


@dataclass
class Plan:
    """A checked race: the new optimizer, its resolved settings, its label and one :class:`Leg` per protocol."""

    options: RaceOptions
    optimizer_class: type
    settings: dict[str, Any]
    label: str
    legs: list[Leg]
    out: Path
    unloaded: list[tuple[str, str]] = field(default_factory=list)  # (protocol, why it cannot be loaded here)

    def jobs(self) -> list[Any]:
        return [j for leg in self.legs for j in leg.jobs()]


def _protocol(name: str, folder: Path) -> Any:
    from benchsuite.protocol import load_protocol

    path = Path(name) if name.endswith((".yaml", ".yml")) or os.sep in name else folder / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.yaml"))
        import difflib

        close = difflib.get_close_matches(name, known, n=1)
        raise InvalidSettingError(f"race: no protocol {name!r} (no file {path})"
                                  + (f"; did you mean {close[0]!r}?" if close else ""))
    return load_protocol(path)


def plan(options: RaceOptions, optimizer_class: type) -> Plan:
    """Check the options against the protocols and the optimizer, and lay out every job; nothing runs here.

    A benchmark the optimizer cannot run (its space kind, a fidelity it requires, the workers) or cannot build
    here (a missing data file) is left out of its leg with the reason, as the workflow leaves out an unavailable
    plugin; a label a protocol already uses, an unknown protocol or benchmark, or settings the optimizer rejects
    are one-line errors. ``--reps`` above a protocol's own repetitions races all of them (its committed runs end
    there)."""
    from benchsuite import registry
    from benchsuite.errors import BenchsuiteError, UnsupportedError
    from benchsuite.extras import missing_extra_error
    from benchsuite.paths import PROTOCOLS_DIR
    from benchsuite.protocol import OptimizerSpec
    from benchsuite.settings import resolve_settings

    options = options.check()
    label = options.label or str(getattr(optimizer_class, "name", "") or optimizer_class.__name__)
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$", label):
        raise InvalidSettingError(f"race: label {label!r}: use letters, digits and _ . + - (it names folders)")
    owner = f"optimizer {getattr(optimizer_class, 'name', '') or optimizer_class.__name__!r}"
    settings = resolve_settings(owner, optimizer_class.settings_spec, options.settings)
    optimizer_class.check_settings(settings, None)
    folder = Path(options.protocols_dir) if options.protocols_dir else PROTOCOLS_DIR
    members: list[tuple[str, tuple[str, ...] | None]] = []
    if options.suite is not None:
        members += list(SUITES[options.suite].members)
    members += [(p, None) for p in options.protocols]
    default_reps = options.repetitions or (SUITES[options.suite].repetitions if options.suite else None)
    legs: list[Leg] = []
    unloaded: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name, only in members:
        try:
            proto = _protocol(name, folder)
        except ModuleNotFoundError as exc:  # building its synthetic benchmarks needs an extra not installed here
            err = missing_extra_error(exc, f"protocol {name}")
            if err is None:
                raise
            unloaded.append((name, str(err)))
            continue
        if proto.name in seen:
            continue
        seen.add(proto.name)
        labels = [o.label for o in proto.optimizers] + [lab for lab, _ in proto.skipped]
        if label in labels:
            raise InvalidSettingError(f"race: label {label!r} is a method of protocol {proto.name!r} already (its "
                                      "committed runs); give the new method another --label")
        if only is not None:
            unknown = [b for b in only if b not in {x.label for x in proto.benchmarks}]
            if unknown:
                raise InvalidSettingError(f"race: protocol {proto.name!r} has no benchmark {unknown[0]!r}")
        reps = proto.repetitions if default_reps is None else min(default_reps, proto.repetitions)
        wants_design = any(o.initial_design == "benchmark" for o in proto.optimizers)
        can_design = bool(getattr(optimizer_class.supports, "initial_design", False))
        design = "benchmark" if wants_design and can_design else "optimizer"
        notes = []
        if wants_design and not can_design:
            notes.append("the protocol's methods start from the benchmark's initial design; the new optimizer cannot "
                         "(Capabilities(initial_design=False)) and starts from its own random points")
        spec = OptimizerSpec(str(getattr(optimizer_class, "name", "") or label), label, dict(settings), design)
        skipped: list[tuple[str, str]] = []
        raced = []
        for b in proto.benchmarks:
            if only is not None and b.label not in only:
                continue
            try:
                bench = registry.make_benchmark(b.name, b.settings_for(0))
                optimizer_class.check_supports(bench.space, bench.fidelity, proto.workers)
                optimizer_class.check_settings(settings, bench.fidelity)
                if design == "benchmark" and not bench.initial_design():
                    raise UnsupportedError("the benchmark has no initial design with these settings")
            except UnsupportedError as exc:
                skipped.append((b.label, f"not supported: {' '.join(str(exc).split())}"))
                continue
            except InvalidSettingError as exc:  # the user's settings, not the benchmark: theirs to fix
                raise InvalidSettingError(f"race: on {proto.name}/{b.label}: {exc}") from None
            except BenchsuiteError as exc:
                skipped.append((b.label, f"cannot be built here: {' '.join(str(exc).split())}"))
                continue
            except ModuleNotFoundError as exc:
                err = missing_extra_error(exc, f"benchmark {b.name!r}")
                if err is None:
                    raise
                skipped.append((b.label, f"cannot be built here: {err}"))
                continue
            raced.append(b)
        race = dataclasses.replace(proto, optimizers=(spec,), skipped=(), benchmarks=tuple(raced), published=None)
        legs.append(Leg(proto, race, tuple(b.label for b in raced), reps, skipped, notes))
    if not any(leg.benchmarks for leg in legs):
        why = "; ".join([f"{leg.name}/{b}: {w}" for leg in legs for b, w in leg.skipped[:2]]
                        + [f"{n}: {w}" for n, w in unloaded])
        raise InvalidSettingError(f"race: {label} can run on none of the race's benchmarks ({why})")
    out = Path(options.out or f"race-{label}")
    return Plan(options, optimizer_class, settings, label, legs, out, unloaded)


# -- the new optimizer's runs ------------------------------------------------------------
def result_file(plan: Plan, job: Any) -> Path:
    """Where a job's result file goes: ``<out>/results/<protocol>/<benchmark>/<label>/repNNN.csv``, the workflow's
    layout."""
    return plan.out / job.result_path


def done(plan: Plan, leg: Leg, job: Any) -> tuple[bool, str]:
    """(finished, why not reusable): a complete result file of exactly this job is finished; no file is to run;
    any other file there (made with other settings, another seed or another setup of the protocol, or not a
    readable result file: results are written atomically, so not one of the race's) is a conflict, with its
    reason, and is never overwritten."""
    from benchsuite.errors import BenchsuiteError
    from benchsuite.results import load_result

    from .reproductions import job_mismatch

    path = result_file(plan, job)
    if not path.exists():
        return False, ""
    try:
        df = load_result(path)
    except (BenchsuiteError, OSError, ValueError) as exc:
        return False, f"{path}: not a readable result file ({' '.join(str(exc).split())[:200]})"
    prov = df.attrs["provenance"]
    if int(prov.get("n_trials", -1)) != len(df):
        return False, f"{path}: holds {len(df)} trials, its provenance {prov.get('n_trials')}"
    if int(prov.get("seed", -1)) != job.seed or str(prov.get("protocol")) != leg.name:
        return False, f"{path}: made for another job (seed {prov.get('seed')})"
    want = json.dumps(plan.settings, sort_keys=True, default=str)
    got = json.dumps(prov.get("optimizer_settings"), sort_keys=True, default=str)
    if got != want:
        return False, f"{path}: made with other settings ({got}, now {want})"
    why = job_mismatch(prov, job, leg.race)
    if why is not None:
        return False, f"{path}: {why}"
    return True, ""


def new_curves(plan: Plan, leg: Leg) -> pd.DataFrame:
    """The curves of the new optimizer's finished runs on ``leg`` (an empty frame when none has finished)."""
    from .load import load_runs

    paths = [result_file(plan, j) for j in leg.jobs() if done(plan, leg, j)[0]]
    if not paths:
        return B.run_curves(leg.protocol, pd.DataFrame(columns=[*B.KEYS, "evaluation"]))
    df = load_runs(paths)
    return B.run_curves(leg.protocol, df, B.run_hours(df, df.attrs["provenance"]))


# -- the comparison ----------------------------------------------------------------------
FINAL = B.FINAL


@dataclass(frozen=True)
class _Reference:
    """A baseline's committed mean where :func:`benchsuite.analysis.scorecard.compare` expects a paper's cell."""

    value: float
    error: float | None
    runs: int
    error_kind: str = "standard_error"
    higher_is_better: bool = False
    optimum: float | None = None


def _summary(values: np.ndarray) -> tuple[float, float, float, int]:
    v = values[np.isfinite(values)]
    n = len(v)
    if not n:
        return math.nan, math.nan, math.nan, 0
    sd = float(v.std(ddof=1)) if n > 1 else math.nan
    return float(v.mean()), sd / math.sqrt(n) if n > 1 else math.nan, sd, n


def baseline_labels(protocol: Any, committed: pd.DataFrame | None = None) -> list[str]:
    """The protocol's methods: its optimizers' labels, then those of optimizers not installed here (their
    committed runs are data all the same); with ``committed``, only those with a committed run there."""
    labels = [o.label for o in protocol.optimizers] + [label for label, _ in protocol.skipped]
    if committed is not None:
        have = set(committed["optimizer"])
        labels = [m for m in labels if m in have]
    return labels


def published_values(protocol: Any) -> dict[tuple[str, str], tuple[float, float | None, str]]:
    """(benchmark, optimizer label) -> (value, error, source) of the protocol's published cells (not variants),
    converted to the suite's units (``(value - offset) / scale``); the first cell of a pair counts."""
    out: dict[tuple[str, str], tuple[float, float | None, str]] = {}
    pub = getattr(protocol, "published", None)
    for c in (pub.cells if pub is not None else ()):
        if c.optimizer is None or c.variant or (c.benchmark, c.optimizer) in out:
            continue
        from .scorecard import published_se

        se = published_se(c.error, c.error_kind, c.runs)
        out[(c.benchmark, c.optimizer)] = ((c.value - c.offset) / c.scale,
                                           None if se is None else se / abs(c.scale), f"{c.paper}, {c.source}")
    return out


def table_rows(leg: Leg, base: pd.DataFrame, new: pd.DataFrame, label: str) -> pd.DataFrame:
    """Per raced benchmark and method (baselines, then the new one): mean, standard error, SD, runs at the budget
    over the raced repetitions (0..repetitions-1: every method on the same problem instances, so that a column
    compares like with like; all committed runs when the whole protocol is raced), and the published value in the
    suite's units where there is one."""
    pub = published_values(leg.protocol)
    rows = []
    base = base[(base["repetition"] < leg.repetitions) & base["benchmark"].isin(leg.benchmarks)]
    methods = baseline_labels(leg.protocol, base)
    for b in leg.benchmarks:
        for m, frame in [*((m, base) for m in methods), (label, new)]:
            v = frame.loc[(frame["benchmark"] == b) & (frame["optimizer"] == m), FINAL].to_numpy(float)
            mean, se, sd, n = _summary(v)
            p = pub.get((b, m))
            rows.append({"protocol": leg.name, "benchmark": b, "method": m, "new": m == label, "mean": mean, "se": se,
                         "sd": sd, "n": n, "published": p[0] if p else math.nan,
                         "published_se": (p[1] if p and p[1] is not None else math.nan),
                         "published_source": p[2] if p else ""})
    return pd.DataFrame(rows, columns=["protocol", "benchmark", "method", "new", "mean", "se", "sd", "n", "published",
                                       "published_se", "published_source"])


def verdicts(leg: Leg, table: pd.DataFrame, label: str) -> pd.DataFrame:
    """The new method against each baseline on each raced benchmark, by the scorecard's rule
    (:func:`benchsuite.analysis.scorecard.compare`): the baseline's committed mean and standard error over the
    same repetitions (:func:`table_rows`) stand in the paper's place, lower is better, and the protocol's
    repetitions in the paper's runs: ``so far`` while the new method has fewer runs than the protocol has
    repetitions."""
    from .scorecard import compare, p_two_sided

    rows = []
    for b in leg.benchmarks:
        t = table[table["benchmark"] == b].set_index("method")
        mine = t.loc[label]
        for m in list(dict.fromkeys(table.loc[~table["new"], "method"])):
            ref = t.loc[m]
            row = {"protocol": leg.name, "benchmark": b, "baseline": m, "new_runs": int(mine["n"]),
                   "baseline_runs": int(ref["n"]), "verdict": "", "basis": "", "z": math.nan, "p": math.nan,
                   "how": ""}
            if int(mine["n"]) == 0 or int(ref["n"]) == 0:
                row["verdict"] = "not run" if int(mine["n"]) == 0 else "no committed runs"
                rows.append(row)
                continue
            cell = _Reference(float(ref["mean"]), None if math.isnan(ref["se"]) else float(ref["se"]),
                              int(leg.protocol.repetitions))
            c = compare(cell, float(mine["mean"]), float(mine["se"]), float(mine["sd"]), int(mine["n"]))
            row.update(verdict=c.verdict, basis=c.basis, z=c.z, p=p_two_sided(c.z), how=c.text)
            rows.append(row)
    return pd.DataFrame(rows, columns=["protocol", "benchmark", "baseline", "new_runs", "baseline_runs", "verdict",
                                       "basis", "z", "p", "how"])


def block_values(legs: Sequence[Leg], base: Mapping[str, pd.DataFrame], new: Mapping[str, pd.DataFrame],
                 fraction: float = 1.0) -> pd.DataFrame:
    """Every method's value at ``fraction`` of the budget in every raced block: benchmark (``protocol/label``, so
    that two protocols' benchmarks of one label stay apart), optimizer, repetition, value. Baselines only at the
    repetitions the new method raced."""
    col = B.column(fraction)
    parts = []
    for leg in legs:
        for frame in (base[leg.name], new[leg.name]):
            f = frame[frame["benchmark"].isin(leg.benchmarks) & (frame["repetition"] < leg.repetitions)]
            if len(f):
                parts.append(pd.DataFrame({"benchmark": leg.name + "/" + f["benchmark"], "optimizer": f["optimizer"],
                                           "repetition": f["repetition"], "value": f[col].to_numpy(float)}))
    if not parts:
        return pd.DataFrame(columns=["benchmark", "optimizer", "repetition", "value"])
    return pd.concat(parts, ignore_index=True)


def common_methods(values: pd.DataFrame, label: str) -> tuple[list[str], dict[str, str]]:
    """The methods of a comparison over complete blocks: the new one and the baselines chosen greedily to keep
    the most paired values (complete blocks x methods), and for every other baseline why it is left out.

    The protocols' methods differ (NASBOT's own three, COMBO's nine, ...), and a Friedman test needs each block
    complete. Starting from the new method's blocks, the baseline whose addition keeps the most values is added
    (the blocks it has no value in go), as long as the count grows; ties go to the baseline named first. Where
    every baseline covers every block (a single protocol, the quick suite) all of them are kept."""
    def blocks_of(m: str) -> set[tuple[str, int]]:
        g = values[(values["optimizer"] == m) & values["value"].notna()]
        return set(zip(g["benchmark"], g["repetition"]))

    blocks = blocks_of(label)
    have = {m: blocks_of(m) for m in dict.fromkeys(values["optimizer"]) if m != label}
    chosen, left = [label], {}
    while True:
        score = len(blocks) * len(chosen)
        best, best_score = None, score
        for m, b in have.items():
            if m not in chosen and len(blocks & b) * (len(chosen) + 1) > best_score:
                best, best_score = m, len(blocks & b) * (len(chosen) + 1)
        if best is None:
            break
        chosen.append(best)
        blocks &= have[best]
    for m, b in have.items():
        if m in chosen:
            continue
        kept = len(blocks & b)
        left[m] = f"a value in {kept} of the {len(blocks)} blocks compared" if kept else "no value in the blocks compared"
    return chosen, left


def fraction_label(fraction: float) -> str:
    """How a report names a point of the budget: ``the budget``, ``25 % of the budget``."""
    return "the budget" if fraction == 1 else f"{fraction:.0%} of the budget".replace("%", " %")


def overall(values_at: Mapping[float, pd.DataFrame], methods: Sequence[str], alpha: float) -> list[Any]:
    """:func:`benchsuite.analysis.stats.compare` of ``methods`` at each fraction (the same code ``analyse``
    runs)."""
    from . import stats

    return [stats.compare(v, methods, at=fraction_label(f), alpha=alpha) for f, v in values_at.items()]


def power(values: pd.DataFrame, methods: Sequence[str], repetitions: int | Mapping[str, int], draws: int,
          alpha: float, reference: str = REFERENCE, seed: int = 0) -> pd.DataFrame:
    """How often a race of ``repetitions`` per benchmark (one number, or one per benchmark) detects each
    committed method as better than
    ``reference``, measured by simulation: ``draws`` races drawn from the committed runs, each taking
    ``repetitions`` of every benchmark's repetitions with replacement (every method's values of one drawn
    repetition together, so blocks stay paired), tested as a race is (:func:`overall`); a method is detected
    when its mean rank is lower than the reference's and their Holm-corrected Wilcoxon p is below ``alpha``.

    ``effect`` is the method's mean-rank advantage over the reference over every committed block (the size of
    difference it stands for). Each committed method plays the new one in turn within the same comparison, so a
    simulated race compares one method fewer than a real race (whose Holm correction runs over a few more pairs):
    the rates are slightly optimistic for a real race, by the difference between Holm over n(n-1)/2 and
    (n+1)n/2 pairs."""
    from . import stats

    methods = list(methods)
    if reference not in methods:
        return pd.DataFrame(columns=["method", "effect", "detected", "draws", "repetitions", "blocks"])
    full, _ = stats.blocks(values, methods)
    if len(full) == 0:
        return pd.DataFrame(columns=["method", "effect", "detected", "draws", "repetitions", "blocks"])
    ranks = full.rank(axis=1, method="average").mean(axis=0)
    rng = np.random.default_rng(seed)
    reps_of = {b: g.index.get_level_values("repetition").to_numpy() for b, g in full.groupby(level="benchmark")}
    size = {b: int(repetitions.get(b, 0) if isinstance(repetitions, Mapping) else repetitions) for b in reps_of}
    size = {b: k for b, k in size.items() if k > 0}
    hits = {m: 0 for m in methods if m != reference}
    n_blocks = sum(size.values())
    for _ in range(draws):
        parts = []
        for b, k in size.items():
            pick = rng.choice(reps_of[b], size=k, replace=True)
            sub = full.loc[[(b, int(r)) for r in pick]].copy()
            sub.index = pd.MultiIndex.from_arrays([[b] * k, list(range(k))], names=["benchmark", "repetition"])
            parts.append(sub)
        drawn = pd.concat(parts).reset_index().melt(id_vars=["benchmark", "repetition"], var_name="optimizer",
                                                     value_name="value")
        c = stats.compare(drawn, methods, alpha=alpha)
        if not c.tested:
            continue
        for m in hits:
            if c.mean_ranks[m] < c.mean_ranks[reference] and float(c.pairwise_p.loc[m, reference]) < alpha:
                hits[m] += 1
    counts = sorted(set(size.values()))
    shown = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    rows = [{"method": m, "effect": float(ranks[reference] - ranks[m]), "detected": hits[m] / draws if draws else
             math.nan, "draws": draws, "repetitions": shown, "blocks": n_blocks} for m in hits]
    return pd.DataFrame(rows).sort_values("effect", ascending=False, kind="stable").reset_index(drop=True)


def power_sentence(table: pd.DataFrame, reference: str = REFERENCE, level: float = 0.95) -> str:
    """One sentence: the smallest committed effect detected in at least ``level`` of the simulated races, and the
    largest detected in fewer than half."""
    if not len(table):
        return f"No power statement: `{reference}` is not among the methods compared here."
    reps, draws, blocks = str(table["repetitions"].iloc[0]), int(table["draws"].iloc[0]), int(table["blocks"].iloc[0])
    head = (f"In {draws} races of {reps} repetitions per benchmark ({blocks} blocks) drawn from the committed runs, ")
    better = table[table["effect"] > 0]
    if not len(better):
        return head + f"no committed method is better than `{reference}` by a margin to measure power on."
    sure = better[better["detected"] >= level].sort_values("effect")
    weak = better[better["detected"] < 0.5].sort_values("effect", ascending=False)
    if len(sure):
        r = sure.iloc[0]
        text = (f"a method whose mean rank is {r['effect']:.2f} better than `{reference}`'s (as `{r['method']}`'s is) "
                f"was found significantly better in {_pct(r['detected'])} of them")
    else:
        r = better.sort_values("effect", ascending=False).iloc[0]
        text = (f"no committed method was found significantly better than `{reference}` in {_pct(level)} of them: "
                f"the largest mean-rank advantage, {r['effect']:.2f} (`{r['method']}`), in {_pct(r['detected'])}")
    if len(weak):
        r = weak.iloc[0]
        text += f"; one {r['effect']:.2f} better (`{r['method']}`) in only {_pct(r['detected'])}"
    return head + text + "."


def _pct(x: float) -> str:
    return f"{x:.0%}".replace("%", " %")


# -- the report --------------------------------------------------------------------------
@dataclass
class Report:
    """Everything the report page shows, computed once (:func:`compute`)."""

    plan: Plan
    tables: dict[str, pd.DataFrame]
    verdicts: pd.DataFrame
    comparisons: list[Any]
    per_protocol: dict[str, Any]
    methods: list[str]
    left_out: dict[str, str]
    power: pd.DataFrame
    heads: dict[str, dict[str, Any]]
    cost: dict[str, float]
    stats_note: str = ""
    checks: list[tuple[bool, str]] = field(default_factory=list)
    figures: dict[str, list[str]] = field(default_factory=dict)  # leg name -> its curves (PNG, PDF)
    failures: list[str] = field(default_factory=list)  # one line per run of the new method that failed
    figure_note: str = ""  # why there are no figures (an optional package missing), else ""
    power_note: str = ""  # why there is no power statement, else ""

    @property
    def failed(self) -> list[str]:
        return [text for ok, text in self.checks if not ok]


def compute(plan: Plan, base: Mapping[str, pd.DataFrame], heads: Mapping[str, dict[str, Any]],
            new: Mapping[str, pd.DataFrame], cpu_seconds: float = math.nan) -> Report:
    """The race's numbers: tables, verdicts, the statistics over all protocols (and per protocol), the power and
    the cost. ``cpu_seconds``: what running the new optimizer's jobs took (the command measures it)."""
    from benchsuite.errors import MissingExtraError

    from . import stats
    from .scorecard import benjamini_hochberg

    opts = plan.options
    tables = {leg.name: table_rows(leg, base[leg.name], new[leg.name], plan.label) for leg in plan.legs}
    ver = pd.concat([verdicts(leg, tables[leg.name], plan.label) for leg in plan.legs], ignore_index=True)
    ver["q_bh"] = benjamini_hochberg(ver["p"].to_numpy(float)) if len(ver) else []
    values_at = {f: block_values(plan.legs, base, new, f) for f in stats.DEFAULT_FRACTIONS}
    methods, left = common_methods(values_at[1.0], plan.label)
    note, comparisons, per_protocol, power_note = "", [], {}, ""
    pw = pd.DataFrame()
    try:
        comparisons = overall(values_at, methods, opts.alpha)
        for leg in plan.legs:
            v = block_values([leg], base, new, 1.0)
            m, _ = common_methods(v, plan.label)
            per_protocol[leg.name] = stats.compare(v, m, alpha=opts.alpha)
        if opts.power_draws:
            # the race's own size: each compared benchmark with its protocol's raced repetitions
            compared = set(values_at[1.0].loc[values_at[1.0]["optimizer"] == plan.label, "benchmark"])
            reps = {f"{leg.name}/{b}": leg.repetitions for leg in plan.legs for b in leg.benchmarks
                    if f"{leg.name}/{b}" in compared}
            committed = block_values_all(plan.legs, base)
            if sum(reps.values()) >= POWER_MIN_BLOCKS:
                pw = power(committed, [m for m in methods if m != plan.label], reps, opts.power_draws, opts.alpha)
            else:
                power_note = (f"No power statement: the race compares {sum(reps.values())} blocks, fewer than "
                              f"{POWER_MIN_BLOCKS}, where each simulated race's tests are exact permutation tests "
                              "(hours for the simulation); race more repetitions for one.")
    except MissingExtraError as exc:
        note = f"No statistics: {exc}."
    new_hours = sum(float(new[leg.name][B.HOURS].fillna(0).sum()) for leg in plan.legs)
    raced = block_values(plan.legs, base, {leg.name: new[leg.name].iloc[0:0] for leg in plan.legs})
    keys = set(zip(raced["benchmark"], raced["optimizer"], raced["repetition"]))
    base_hours = 0.0
    all_hours = 0.0
    for leg in plan.legs:
        f = base[leg.name]
        f = f[f["benchmark"].isin(leg.benchmarks)]
        all_hours += float(f[B.HOURS].fillna(0).sum())
        inside = [(leg.name + "/" + b, o, int(r)) in keys for b, o, r in zip(f["benchmark"], f["optimizer"],
                                                                             f["repetition"])]
        base_hours += float(f.loc[inside, B.HOURS].fillna(0).sum())
    cost = {"new_compute_hours": new_hours, "race_cpu_seconds": cpu_seconds, "baseline_compute_hours": base_hours,
            "committed_compute_hours": all_hours}
    report = Report(plan, tables, ver, comparisons, per_protocol, methods, left, pw, dict(heads), cost, note)
    report.power_note = power_note if opts.power_draws else "No power statement: --power-draws 0."
    report.checks = ci_checks(report)
    return report


def block_values_all(legs: Sequence[Leg], base: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every committed value at the budget on the raced benchmarks, every repetition (the power simulation's
    pool)."""
    parts = []
    for leg in legs:
        f = base[leg.name]
        f = f[f["benchmark"].isin(leg.benchmarks)]
        if len(f):
            parts.append(pd.DataFrame({"benchmark": leg.name + "/" + f["benchmark"], "optimizer": f["optimizer"],
                                       "repetition": f["repetition"], "value": f[FINAL].to_numpy(float)}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["benchmark", "optimizer", "repetition", "value"])


def ci_checks(report: Report) -> list[tuple[bool, str]]:
    """The exit conditions asked for (``--fail-if-worse-than``, ``--fail-if-rank-below``), judged on the
    comparison over all protocols at the budget: (passed, what was found). A comparison that could not be
    tested fails a check: a CI gate that tests nothing must not pass silently."""
    opts, label = report.plan.options, report.plan.label
    out: list[tuple[bool, str]] = []
    if not (opts.fail_if_worse_than or opts.fail_if_rank_below):
        return out
    c = report.comparisons[-1] if report.comparisons else None  # the last fraction is the budget
    if c is None or not c.tested:
        why = report.stats_note or (c.reason if c is not None else "no comparison")
        return [(False, f"could not test ({why})")]
    for other in opts.fail_if_worse_than:
        if other not in c.optimizers:
            out.append((False, f"`{other}` is not in the comparison over all protocols "
                               f"({report.left_out.get(other, 'no committed runs on the raced benchmarks')})"))
            continue
        p = float(c.pairwise_p.loc[label, other])
        worse = c.mean_ranks[label] > c.mean_ranks[other] and p < c.alpha
        out.append((not worse, f"`{label}` {'is' if worse else 'is not'} significantly worse than `{other}` at the "
                               f"budget (mean rank {c.mean_ranks[label]:.2f} vs {c.mean_ranks[other]:.2f}, "
                               f"Holm-corrected Wilcoxon p = {p:.3g}, alpha = {c.alpha:g})"))
    if opts.fail_if_rank_below is not None:
        k = int(opts.fail_if_rank_below)
        place = 1 + int((c.mean_ranks < c.mean_ranks[label]).sum())
        out.append((place <= k, f"`{label}` places {place} of {len(c.optimizers)} by mean rank at the budget "
                                f"({c.mean_ranks[label]:.2f}; required: {k} or better)"))
    return out


def _fmt(mean: float, se: float, n: int) -> str:
    if n == 0 or not math.isfinite(mean):
        return ""
    d = 4 if abs(mean) < 10 else 2
    return f"{mean:.{d}f} ± {se:.{d}f} ({n})" if math.isfinite(se) else f"{mean:.{d}f} ({n})"


_SHORT = {"better": "**better**", "worse": "**worse**", "match": "match"}


def _verdict_cell(row: Mapping[str, Any]) -> str:
    v = str(row["verdict"])
    if not row["basis"]:
        return v
    base = v.removeprefix("so far ")
    shown = _SHORT.get(base, base)
    return ("so far " if v.startswith("so far ") else "") + f"{shown} (z {row['z']:+.1f})"


def markdown(report: Report) -> str:
    """The report page: a summary, the comparison over all protocols, the cost, then one section per protocol."""
    from benchsuite.protocol import QUANTITY_LABELS
    from benchsuite.version import __version__

    plan, label = report.plan, report.plan.label
    opts = plan.options
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    lines = [f"# Race: `{label}` against the committed runs of the paper protocols", "",
             f"`{label}` (`{opts.optimizer}`, settings `{json.dumps(plan.settings, sort_keys=True, default=str)}`) ran "
             f"on {sum(len(leg.benchmarks) for leg in plan.legs)} benchmark(s) of {len(plan.legs)} protocol(s)"
             + (f" (suite `{opts.suite}`: {SUITES[opts.suite].description})" if opts.suite else "") + "; "
             f"every other method's runs are the suite's committed runs, not rerun. Generated {when} (UTC) by "
             f"benchsuite {__version__} with `benchsuite race`.", "",
             "Each run of the new method is the protocol's job with its label: the protocol's benchmarks, settings, "
             "problem instance per repetition, budget, workers, clock and overhead rule, and the seed "
             f"`derive_seed(protocol, benchmark, \"{label}\", repetition)` (fixed, and not any baseline's). Repetition "
             "r of every method solves the same problem instance, so (benchmark, repetition) pairs the methods' "
             "values into blocks.", ""]
    if plan.unloaded:
        lines += ["Not raced here: " + "; ".join(f"protocol `{n}` ({why})" for n, why in plan.unloaded) + ".", ""]
    if report.failures:
        lines += ["## Failed runs", "", f"{len(report.failures)} run(s) of the new method failed; the numbers below "
                  "leave them out (rerun the same command to retry them):", ""]
        lines += [f"- {f}" for f in report.failures] + [""]
    if report.checks:
        lines += ["## CI checks", ""]
        lines += [f"- {'pass' if ok else '**FAIL**'}: {text}" for ok, text in report.checks] + [""]
    if report.figure_note:
        lines += [report.figure_note, ""]
    lines += ["## Over all protocols", ""]
    if report.stats_note:
        lines += [report.stats_note, ""]
    else:
        lines += [f"Blocks: benchmark x repetition, a benchmark named protocol/label; a method is a label, as each "
                  f"protocol runs it. The protocols' methods differ, and each block must be complete: the methods "
                  f"are `{label}` and the baselines that keep the most paired values (each added while the count of "
                  "complete blocks x methods grows; `benchsuite.analysis.race.common_methods`)."]
        if report.left_out:
            lines += ["Not in this comparison: " + "; ".join(f"`{m}` ({why})" for m, why in report.left_out.items())
                      + ". Each protocol's own section compares all of its methods."]
        lines.append("")
        for c in report.comparisons:
            lines += [f"### At {c.at}", "", c.to_markdown()]
            if c.figure:
                lines += [f"![critical-difference diagram at {c.at}]({Path(c.figure[0]).name})", ""]
        lines += ["### Power of this comparison", "", report.power_note or power_sentence(report.power), ""]
        if len(report.power):
            lines += ["| method (playing the new one) | mean-rank advantage over `random_search` | detected |",
                      "|---|---:|---:|"]
            lines += [f"| `{r['method']}` | {r['effect']:+.2f} | {r['detected']:.0%} |"
                      for _, r in report.power.iterrows()]
            lines += ["", "Detected: significantly better than `random_search` (Holm-corrected Wilcoxon, alpha = "
                          f"{opts.alpha:g}) in that share of the simulated races ([power.csv](power.csv)).", ""]
    cost = report.cost
    cpu = cost["race_cpu_seconds"]
    lines += ["## Cost", "",
              f"The new method's runs: {cost['new_compute_hours']:.3f} compute-hours "
              f"({cost['new_compute_hours'] * 3600:,.0f} s) as the record counts them (optimizer overhead plus "
              "measured training time)"
              + (f"; the race's processes took {cpu:,.0f} CPU seconds in all (runs, table lookups, this report)"
                 if math.isfinite(cpu) else "") + ". "
              f"Rerunning the baselines for the same blocks would cost {cost['baseline_compute_hours']:.2f} "
              f"compute-hours; their committed runs on these benchmarks hold {cost['committed_compute_hours']:.2f}.",
              ""]
    for leg in plan.legs:
        lines += _leg_markdown(report, leg)
    sources = sorted({h.get("source", "") for h in report.heads.values()})
    lines += ["## Files", "",
              f"[results.csv](results.csv) (every mean, standard error and runs, with the published values), "
              f"[verdicts.csv](verdicts.csv) (with p and Benjamini-Hochberg q over the race's {len(report.verdicts)} "
              f"comparisons), [stats.csv](stats.csv), [power.csv](power.csv). Committed runs read from: "
              f"{', '.join(sources)} (`benchsuite.analysis.baselines`). Quantities: "
              + "; ".join(f"{leg.name}: {QUANTITY_LABELS[leg.protocol.quantity]}" for leg in plan.legs) + ".", ""]
    return "\n".join(lines)


def _leg_markdown(report: Report, leg: Leg) -> list[str]:
    label = report.plan.label
    p = leg.protocol
    table = report.tables[leg.name]
    head = report.heads.get(leg.name, {})
    budget = "; ".join(dict.fromkeys(f"{b.label}: " + " and ".join(
        x for x in (f"{b.budget.evaluations} evaluations" if b.budget.evaluations else "",
                    f"{b.budget.seconds:g} s" if b.budget.seconds else "") if x)
        for b in p.benchmarks if b.label in leg.benchmarks))
    lines = [f"## `{p.name}`", ""]
    if p.description:
        lines += [" ".join(p.description.split()), ""]
    lines += [f"Raced: {', '.join(f'`{b}`' for b in leg.benchmarks) or 'nothing'}; repetitions 0-{leg.repetitions - 1} "
              f"of the protocol's {p.repetitions}; budget {budget or '-'}; {p.workers} worker(s); overhead on the "
              f"clock: {'yes' if p.include_overhead else 'no'} ({p.overhead_clock} clock); initial design: "
              f"{leg.race.optimizers[0].initial_design}'s."]
    idle = [m for m in baseline_labels(p) if m not in set(table["method"])]
    if idle and leg.benchmarks:
        lines.append(f"No committed runs on these benchmarks: {', '.join(f'`{m}`' for m in idle)}.")
    if head.get("stale_left_out"):
        lines.append(f"{head['stale_left_out']} committed run(s) of an earlier setup of the protocol are left out, as "
                     "the scorecard leaves them out.")
    for b, why in leg.skipped:
        lines.append(f"Not raced: `{b}`, {why}.")
    lines += [f"Note: {n}." for n in leg.notes]
    lines.append("")
    if not leg.benchmarks:
        return lines
    methods = list(dict.fromkeys(table["method"]))
    lines += ["### Table at the budget", "",
              "| method | " + " | ".join(f"`{b}`" for b in leg.benchmarks) + " |",
              "|---|" + "---:|" * len(leg.benchmarks)]
    for m in methods:
        cells = []
        for b in leg.benchmarks:
            r = table[(table["benchmark"] == b) & (table["method"] == m)].iloc[0]
            text = _fmt(r["mean"], r["se"], int(r["n"]))
            if m == label and text:
                text = f"**{text}**"
            if math.isfinite(r["published"]):
                pe = f" ± {r['published_se']:.4g}" if math.isfinite(r["published_se"]) else ""
                text += f"<br>paper: {r['published']:.4g}{pe}"
            cells.append(text)
        name = f"**`{m}` (new)**" if m == label else f"`{m}`"
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", f"Mean ± standard error (runs) at the budget over repetitions 0-{leg.repetitions - 1}, the same "
                  "problem instances for every method (the committed runs of the baselines, the new method's own); "
                  "\"paper\": the published value (and standard error where the paper's error is one) converted to "
                  "the suite's units.", ""]
    v = report.verdicts[report.verdicts["protocol"] == leg.name]
    lines += [f"### `{label}` against each baseline", "",
              "| baseline | " + " | ".join(f"`{b}`" for b in leg.benchmarks) + " |",
              "|---|" + "---|" * len(leg.benchmarks)]
    for m in list(dict.fromkeys(table.loc[~table["new"], "method"])):
        cells = []
        for b in leg.benchmarks:
            r = v[(v["benchmark"] == b) & (v["baseline"] == m)]
            cells.append(_verdict_cell(r.iloc[0]) if len(r) else "")
        lines.append(f"| `{m}` | " + " | ".join(cells) + " |")
    lines += ["", "The scorecard's rule (`benchsuite.analysis.scorecard.compare`), the baseline's committed mean and "
                  "standard error in the paper's place: |z| <= 2 is a match, beyond it better or worse (lower is "
                  "better); `so far` while the new method has fewer runs than the protocol has repetitions.", ""]
    if report.figures.get(leg.name):
        lines += [f"![{leg.name}: anytime curves](curves_{leg.name}.png)", "",
                  f"Median and 25th-75th percentiles; the new method in black ([PDF](curves_{leg.name}.pdf)).", ""]
    c = report.per_protocol.get(leg.name)
    if c is not None:
        lines += [f"### Statistics within `{leg.name}`", "", c.to_markdown()]
    return lines


def curves_figure(report: Report, leg: Leg, stem: Path, base: pd.DataFrame, new: pd.DataFrame) -> list[str]:
    """The leg's anytime curves (median and quartiles of every committed method, the new one in black) on the
    table's axis, saved as PNG and PDF; [] when nothing ran."""
    from .plots import curves_figure as draw
    from .plots import save
    from .scorecard import table_axis
    from .steps import summarise

    label = report.plan.label
    at = table_axis(leg.protocol)
    frames = [f[f["benchmark"].isin(leg.benchmarks) & (f["repetition"] < leg.repetitions)] for f in (base, new)]
    both = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else None
    if both is None or not (both["optimizer"] == label).any():
        return []
    long = both.melt(id_vars=list(B.KEYS), value_vars=list(B.CURVE_COLUMNS), var_name="column", value_name="value")
    frac = dict(zip(B.CURVE_COLUMNS, B.FRACTIONS))
    long["x"] = [frac[c] * at[b][1] for c, b in zip(long["column"], long["benchmark"])]
    summary = summarise(long[["benchmark", "optimizer", "repetition", "x", "value"]])
    axes = {at[b][0] for b in leg.benchmarks}
    axis = axes.pop() if len(axes) == 1 else "evaluations"
    methods = [*baseline_labels(leg.protocol, frames[0]), label]
    reps = both.groupby(["benchmark", "optimizer"])["repetition"].nunique()
    fig = draw(summary, axis=axis, x_scale=leg.protocol.plots.scale(axis), y_scale=leg.protocol.plots.y_scale,
               y_label=leg.protocol.quantity.replace("_", " "),
               title=f"{leg.name}: {label} (black) against the committed runs", benchmarks=list(leg.benchmarks),
               optimizers=methods, reps=f"{reps.min()}-{reps.max()}" if reps.min() != reps.max() else int(reps.min()))
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_label() == label:
                line.set_color("black")
                line.set_linewidth(2.6)
                line.set_zorder(10)
    for legend in fig.legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            if text.get_text() == label:
                handle.set_color("black")
    return save(fig, stem)


def write_report(report: Report, base: Mapping[str, pd.DataFrame], new: Mapping[str, pd.DataFrame]) -> list[str]:
    """Write ``<out>/report/``: ``index.md``, the CSV files, the curves and the critical-difference diagrams
    (figures only where matplotlib is installed; the page says what is missing); returns the files written."""
    from benchsuite.errors import MissingExtraError
    from benchsuite.results import atomic_write_text

    from . import stats

    folder = report.plan.out / "report"
    folder.mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    try:
        for leg in report.plan.legs:
            report.figures[leg.name] = curves_figure(report, leg, folder / f"curves_{leg.name}", base[leg.name],
                                                     new[leg.name])
            files += report.figures[leg.name]
        for c in report.comparisons:
            slug = "budget" if c.at == "the budget" else c.at.split(" ")[0]
            c.figure = stats.plot_cd(c, folder / f"cd_{slug}", title=f"race of {report.plan.label}")
            files += c.figure
    except (MissingExtraError, ModuleNotFoundError) as exc:  # matplotlib or scikit-posthocs not installed
        from benchsuite.extras import missing_extra_error

        err = missing_extra_error(exc, "the race's figures") if isinstance(exc, ModuleNotFoundError) else exc
        if err is None:
            raise
        report.figure_note = f"No figures: {err}."
    results = pd.concat(report.tables.values(), ignore_index=True) if report.tables else pd.DataFrame()
    for name, frame in (("results.csv", results), ("verdicts.csv", report.verdicts), ("power.csv", report.power)):
        atomic_write_text(folder / name, frame.to_csv(index=False))
        files.append(str(folder / name))
    pairs = [c.to_frame().assign(scope="all protocols") for c in report.comparisons]
    pairs += [c.to_frame().assign(scope=name) for name, c in report.per_protocol.items()]
    atomic_write_text(folder / "stats.csv", (pd.concat(pairs, ignore_index=True) if pairs else
                                             pd.DataFrame()).to_csv(index=False))
    files.append(str(folder / "stats.csv"))
    atomic_write_text(folder / "index.md", markdown(report))
    files.append(str(folder / "index.md"))
    return files
