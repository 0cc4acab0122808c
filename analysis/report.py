"""A protocol's figures, tables and report page, and the index page over several protocols."""
from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchsuite.protocol import QUANTITY_LABELS, Protocol
from benchsuite.results import atomic_write_text

from . import plots, stats, tables
from .load import add_quantity, read_aggregate
from .outputs import report_outputs
from .steps import average_rank, default_grids, summarise, trajectories, value_at


def _budget(protocol: Protocol, axis: str) -> dict[str, float | None]:
    return {b.label: (b.budget.seconds if axis == "time" else b.budget.evaluations) for b in protocol.benchmarks}


def _x_label(protocol: Protocol, axis: str) -> str:
    if axis == "time" and not protocol.include_overhead:
        return plots.X_LABELS["time_no_overhead"]
    return plots.X_LABELS[axis]


def _table_axis(protocol: Protocol) -> dict[str, tuple[str, float]]:
    out = {}
    for b in protocol.benchmarks:
        axis = protocol.table_at
        if axis == "budget":
            axis = "evaluations" if b.budget.evaluations is not None else "time"
        out[b.label] = (axis, float(b.budget.evaluations if axis == "evaluations" else b.budget.seconds))
    return out


def _optima(df: pd.DataFrame, protocol: Protocol) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for b in protocol.benchmarks:
        if b.optimum is not None:
            out[b.label] = b.optimum
            continue
        vals = df.loc[df["benchmark"] == b.label, "optimum"].dropna()
        out[b.label] = float(vals.iloc[0]) if len(vals) else None
    return out


def analyse(protocol: Protocol, df: pd.DataFrame, outdir: str | os.PathLike) -> dict[str, Any]:
    """Write the protocol's figures (PNG + PDF) and tables (Markdown, CSV, LaTeX) to ``outdir``.

    ``df`` is the tidy frame of all its runs (:func:`benchsuite.analysis.load_runs`). Returns what the
    report page needs: the table in long form and the written files.
    """
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    benchmarks = [b.label for b in protocol.benchmarks]
    optimizers = [o.label for o in protocol.optimizers]
    df = df[df["optimizer"].isin(optimizers) & df["benchmark"].isin(benchmarks)]
    df = add_quantity(df, protocol.quantity, {b.label: b.optimum for b in protocol.benchmarks})
    reps = protocol.repetitions
    ylab = QUANTITY_LABELS[protocol.quantity]
    files: list[str] = []
    rank_parts = []
    for axis in protocol.plots.x:
        scale = protocol.plots.scale(axis)
        budgets = _budget(protocol, axis)
        grids = default_grids(df, axis, scale, budgets)
        summary = summarise(trajectories(df, axis, grids))
        # the budget line only where the axis reaches it (an evaluation cap may end runs first)
        shown = {b: v for b, v in (budgets or {}).items() if v is not None and b in grids and v <= grids[b][-1]}
        files += plots.plot_curves(
            summary, axis=axis, x_scale=scale, y_scale=protocol.plots.y_scale, y_label=ylab,
            title=f"{protocol.name}: {ylab} vs {'wall-clock time' if axis == 'time' else 'evaluations'}",
            benchmarks=benchmarks, optimizers=optimizers, reps=reps, stem=out / f"curves_{axis}",
            x_label=_x_label(protocol, axis), budgets=shown if axis == "time" else None)
        # ranks on a grid of fractions of each benchmark's horizon, so benchmarks can be averaged
        his = {b: float(g[-1]) for b, g in grids.items()}
        if len(benchmarks) > 1:
            frac = np.geomspace(1e-2, 1, 100) if scale == "log" else np.linspace(1e-2, 1, 100)
            rgrids = {b: frac * his[b] for b in benchmarks}
        else:
            rgrids = grids
        ranks = average_rank(trajectories(df, axis, rgrids))
        if len(benchmarks) > 1:
            ranks["x"] = ranks["x"] / ranks["benchmark"].map(his)
            ranks["x"] = ranks["x"].round(12)
            ranks = ranks.groupby(["optimizer", "x"], sort=False)["rank"].mean().reset_index()
        ranks["axis"] = axis
        rank_parts.append(ranks)
    rank_axes = []
    for axis in protocol.plots.x:
        label = _x_label(protocol, axis)
        if len(benchmarks) > 1:
            label = ("fraction of the time horizon" if axis == "time" else "fraction of the evaluation budget") + \
                " (each benchmark's own)"
        rank_axes.append((axis, protocol.plots.scale(axis), label))
    files += plots.plot_ranks(pd.concat(rank_parts, ignore_index=True), axes_spec=rank_axes, optimizers=optimizers,
                              reps=reps, n_benchmarks=len(benchmarks), title=protocol.name, stem=out / "rank")

    at = _table_axis(protocol)
    values = pd.concat([value_at(df[df["benchmark"] == b], at[b][0], {b: at[b][1]}) for b in benchmarks],
                       ignore_index=True)
    table = tables.budget_table(values, at, _optima(df, protocol), benchmarks, optimizers)
    marked = ("best mean in bold" if reps >= tables.MIN_REPS_FOR_BEST else
              f"no best marked: fewer than {tables.MIN_REPS_FOR_BEST} repetitions")
    caption = f"{protocol.name}: {ylab} at the budget, mean ± standard error over {reps} repetitions ({marked})."
    for name, text in (("table.md", tables.to_markdown(table, caption)), ("table.csv", tables.to_csv(table)),
                       ("table.tex", tables.to_latex(table, caption, label=f"tab:{protocol.name}"))):
        atomic_write_text(out / name, text)
        files.append(str(out / name))
    comparisons, stats_note = _statistics(df, at, optimizers)
    for c in comparisons:
        slug = "budget" if c.at == "the budget" else c.at.split(" ")[0]
        c.figure = stats.plot_cd(c, out / f"cd_{slug}", title=protocol.name)
        files += c.figure
    if comparisons:
        atomic_write_text(out / "stats.csv", pd.concat([c.to_frame() for c in comparisons],
                                                         ignore_index=True).to_csv(index=False))
        files.append(str(out / "stats.csv"))
    return {"table": table, "caption": caption, "files": files, "statistics": comparisons, "statistics_note": stats_note}


def _statistics(df: pd.DataFrame, at: dict[str, tuple[str, float]], optimizers: list[str]) -> tuple[list, str]:
    """The tests of :mod:`benchsuite.analysis.stats` at the default fractions of the budget, or why there are none."""
    from benchsuite.errors import MissingExtraError

    try:
        return stats.compare_at_fractions(df, at, optimizers), ""
    except MissingExtraError as exc:
        return [], f"No statistics: {exc}."


def _provenance_md(provs: list[dict[str, Any]]) -> list[str]:
    lines = ["## Provenance", ""]
    if not provs:
        return lines + ["(no provenance records)", ""]

    def values(key: str, missing: str = "not recorded") -> str:
        c = Counter(p.get(key) for p in provs)
        return ", ".join((f"`{k}`" if k is not None else missing) + (f" ({n} runs)" if len(c) > 1 else "")
                         for k, n in c.most_common())

    finished = sorted(str(p.get("finished_utc")) for p in provs)
    lines += [f"- runs: {len(provs)}, finished between {finished[0]} and {finished[-1]} (UTC)",
              f"- benchsuite version: {values('benchsuite_version')}",
              f"- git commit: {values('git_commit', 'none (run from an installed package, not a git checkout)')}",
              f"- python {values('python')}, numpy {values('numpy')}",
              f"- machine: {values('platform')} on {values('hostname')}"]
    seen = {}
    for p in provs:
        seen.setdefault(p.get("benchmark_label") or p.get("benchmark"),
                        (p.get("benchmark"), p.get("benchmark_settings"), p.get("benchmark_provenance")))
    for label, (name, settings, bprov) in seen.items():
        extra = f", provenance {json.dumps(bprov, sort_keys=True)}" if bprov else ""
        lines.append(f"- benchmark `{label}`: `{name}` with settings `{json.dumps(settings, sort_keys=True)}`{extra}")
    oseen = {}
    for p in provs:
        oseen.setdefault(p.get("optimizer_label") or p.get("optimizer"), (p.get("optimizer"), p.get("optimizer_settings")))
    for label, (name, settings) in oseen.items():
        lines.append(f"- optimizer `{label}`: `{name}` with settings `{json.dumps(settings, sort_keys=True)}`")
    lines += ["", "<details><summary>Every run (seed, trials, file)</summary>", "",
              "| benchmark | optimizer | repetition | seed | trials | finished (UTC) | file |",
              "|---|---|---:|---:|---:|---|---|"]
    for p in sorted(provs, key=lambda p: (str(p.get("benchmark_label")), str(p.get("optimizer_label")),
                                          int(p.get("repetition", 0) or 0))):
        lines.append(f"| {p.get('benchmark_label') or p.get('benchmark')} | {p.get('optimizer_label') or p.get('optimizer')}"
                     f" | {p.get('repetition', '')} | {p.get('seed')} | {p.get('n_trials')} | {p.get('finished_utc')}"
                     f" | `{p.get('path', '')}` |")
    lines += ["", "</details>", ""]
    return lines


def protocol_page(protocol: Protocol, result: dict[str, Any], provs: list[dict[str, Any]]) -> str:
    """The Markdown report page of one protocol (links relative to its own folder)."""
    b_text = ", ".join(f"`{b.label}`" + (f" ({b.name})" if b.name != b.label else "") for b in protocol.benchmarks)
    o_text = ", ".join(f"`{o.label}`" + (f" ({o.name})" if o.name != o.label else "") for o in protocol.optimizers)
    budgets = sorted({(b.budget.evaluations, b.budget.seconds) for b in protocol.benchmarks}, key=str)
    budget_text = "; ".join(" and ".join(x for x in (f"{e} evaluations" if e else "", f"{s:g} simulated seconds"
                                                          if s else "") if x) for e, s in budgets)
    lines = [f"# Protocol `{protocol.name}`", ""]
    if protocol.description:
        lines += [protocol.description, ""]
    if protocol.paper:
        lines += [f"Reproduces: {protocol.paper}", ""]
    lines += [f"- benchmarks: {b_text}", f"- optimizers: {o_text}",
              f"- repetitions: {protocol.repetitions}; budget: {budget_text}; workers: {protocol.workers}; "
              f"optimizer overhead on the clock: {'yes' if protocol.include_overhead else 'no'}",
              f"- reported quantity: {QUANTITY_LABELS[protocol.quantity]}; seeds: "
              f"`derive_seed(protocol, benchmark, optimizer, repetition)`"]
    for label, why in protocol.skipped:
        lines.append(f"- **skipped optimizer `{label}`**: unavailable here ({why})")
    lines.append("")
    lines += ["## Figures", ""]
    for axis in protocol.plots.x:
        what = "wall-clock time" if axis == "time" else "function evaluations"
        lines += [f"### {QUANTITY_LABELS[protocol.quantity].capitalize()} vs {what}", "",
                  f"![{protocol.name} curves vs {what}](curves_{axis}.png)", "",
                  f"Median (line) and 25th-75th percentiles (band) over {protocol.repetitions} repetitions; "
                  f"[PDF](curves_{axis}.pdf).", ""]
    lines += ["### Average rank", "", f"![{protocol.name} average rank](rank.png)", "",
              "[PDF](rank.pdf).", ""]
    lines += ["## Table at the budget", "", tables.to_markdown(result["table"], result["caption"]),
              "Also as [CSV](table.csv) (every statistic: mean, standard error, median, quartiles) and "
              "[LaTeX](table.tex).", ""]
    lines += ["## Statistics", ""]
    if result.get("statistics_note"):
        lines += [result["statistics_note"], ""]
    for c in result.get("statistics", []):
        lines += [f"### Tests at {c.at}", "", c.to_markdown(under_heading=True)]
        if c.figure:
            png = Path(c.figure[0]).name
            lines += [f"![{protocol.name} critical-difference diagram at {c.at}]({png})", "",
                      f"[PDF]({Path(c.figure[1]).name}).", ""]
    if result.get("statistics"):
        lines += ["Blocks are (benchmark, repetition) pairs; tests from SciPy (Friedman) and scikit-posthocs "
                  "(Wilcoxon, Holm, the diagram); every pair also in [CSV](stats.csv).", ""]
    lines += _provenance_md(provs)
    lines += ["<details><summary>Protocol file</summary>", "", f"`{protocol.path}`:", "", "```yaml",
              protocol.text.rstrip(), "```", "", "</details>", ""]
    return "\n".join(lines)


def write_protocol_report(protocol: Protocol, runs_path: str | os.PathLike, provenance_path: str | os.PathLike,
                          outdir: str | os.PathLike) -> list[str]:
    """Analyse one protocol's aggregated runs and write its figures, tables and ``index.md``."""
    df = read_aggregate(runs_path, provenance_path)
    result = analyse(protocol, df, outdir)
    page = protocol_page(protocol, result, df.attrs.get("provenance", []))
    atomic_write_text(Path(outdir) / "index.md", page)
    return result["files"] + [str(Path(outdir) / "index.md")]




def headline(report_dir: Path, protocol: Protocol) -> str:
    """One line on a protocol's result, from the files its report wrote: the best mean rank at the budget
    (``stats.csv``), else the optimizer with the best mean on most benchmarks (``table.csv``)."""
    folder = report_dir / protocol.name
    try:
        st = pd.read_csv(folder / "stats.csv")
        st = st[(st["at"] == "the budget") & st["reason"].isna()]
        if len(st):
            ranks = pd.concat([st[["optimizer_a", "mean_rank_a"]].set_axis(["o", "r"], axis=1),
                               st[["optimizer_b", "mean_rank_b"]].set_axis(["o", "r"], axis=1)]).groupby("o")["r"].first()
            best = ranks.idxmin()
            rivals = st[((st["optimizer_a"] == best) | (st["optimizer_b"] == best))]
            beaten = int((rivals["p_holm"] < stats.ALPHA).sum())
            return (f"best mean rank at the budget: `{best}` ({ranks[best]:.2f} over {int(st['n_blocks'].iloc[0])} "
                    f"blocks; significantly better than {beaten} of the {len(rivals)} others)")
    except (OSError, KeyError, ValueError, pd.errors.ParserError):
        pass
    try:
        t = pd.read_csv(folder / "table.csv")
        t = t[t["axis"] == t["axis"].iloc[0]].dropna(subset=["mean"])
        wins = t.loc[t.groupby("benchmark")["mean"].idxmin(), "optimizer"].value_counts()
        return (f"lowest mean at the budget on the most benchmarks: `{wins.index[0]}` ({int(wins.iloc[0])} of "
                f"{t['benchmark'].nunique()})")
    except (OSError, KeyError, ValueError, IndexError, pd.errors.ParserError):
        return "no result yet"


def write_index(protocols: Sequence[Protocol], report_dir: str | os.PathLike, out: str | os.PathLike,
                title: str = "benchsuite results", results_root: str | os.PathLike | None = None) -> None:
    """The top-level report: an index with one line per protocol (what it runs, its headline, its links);
    each protocol's own page holds the figures, tables and statistics.

    With ``results_root`` (the folder holding ``results/``), a protocol with missing runs is marked as
    incomplete, with the count and the first failure's last log line, and gets no headline or figures: its
    report is drawn only from all of its runs.
    """
    from .failures import missing_runs

    report_dir = Path(report_dir)
    base = Path(out).parent
    incomplete = 0
    lines = [f"# {title}", "",
             f"Generated by `snakemake all` on {datetime.now(timezone.utc).isoformat(timespec='seconds')} (UTC) "
             f"from {len(protocols)} protocol(s). One line per protocol; its page has the figures, the table "
             "at the budget, the statistics and the provenance.", "",
             "| protocol | reproduces | runs | budget | headline | figures |",
             "|---|---|---|---|---|---|"]
    for p in protocols:
        rel = os.path.relpath(report_dir / p.name, base)
        budgets = sorted({(b.budget.evaluations, b.budget.seconds) for b in p.benchmarks}, key=str)
        budget = "; ".join(" and ".join(x for x in (f"{e} evals" if e else "", f"{s:g} s" if s else "") if x)
                           for e, s in budgets)
        runs = f"{len(p.benchmarks)} benchmark(s) x {len(p.optimizers)} optimizer(s) x {p.repetitions} reps"
        figs = " ".join(f"[{axis}]({rel}/curves_{axis}.png)" for axis in p.plots.x) + f" [rank]({rel}/rank.png)"
        desc = f" {p.description.splitlines()[0]}" if p.description else ""
        missing = [] if results_root is None else missing_runs(p, results_root)
        if missing:
            incomplete += 1
            failed = [m for m in missing if m.reason is not None]
            why = f"; first failure, {failed[0].optimizer} on {failed[0].benchmark}: {failed[0].reason}" if failed \
                else ""
            lines.append(f"| `{p.name}`{desc} | {p.paper or ''} | {runs} | {budget} | **incomplete: "
                         f"{len(missing)} of {len(p.jobs())} runs missing** ({len(failed)} failed{why}); no "
                         f"report until they finish | none |")
            continue
        lines.append(f"| [`{p.name}`]({rel}/index.md){desc} | {p.paper or ''} | {runs} | {budget} | "
                     f"{headline(report_dir, p)} | {figs} |")
    if incomplete:
        lines[2:2] = [f"**{incomplete} of {len(protocols)} protocol(s) have missing runs**: they are marked below "
                      "and have no report; rerunning the workflow redoes only the missing runs.", ""]
    lines.append("")
    atomic_write_text(out, "\n".join(lines))


__all__ = ["analyse", "protocol_page", "report_outputs", "write_index", "write_protocol_report"]
