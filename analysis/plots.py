"""Figures: median and quartile curves per optimizer (fabolas.txt Figure 2 style) and ranks.

One panel per benchmark, one colour per optimizer (the same in every panel and figure),
the median as a step line and the 25th-75th percentile band shaded (fabolas.txt Sec. 4:
"medians, along with 25th and 75th percentiles"). Each figure is saved as PNG and PDF.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

X_LABELS = {
    "time": "wall-clock time [s] (simulated: evaluation cost + optimizer overhead)",
    "time_no_overhead": "wall-clock time [s] (simulated: evaluation cost only)",
    "evaluations": "function evaluations",
}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def colours(optimizers: Sequence[str]) -> dict[str, tuple]:
    """A fixed colour per optimizer label, in protocol order."""
    plt = _pyplot()
    cmap = plt.get_cmap("tab10" if len(optimizers) <= 10 else "tab20")
    return {o: cmap(i % cmap.N) for i, o in enumerate(optimizers)}


def _plain(v: float) -> str:
    """A tick value as a reader writes it, short enough for a crowded log axis: 0.05, 50, 2000, 20k, 500k, 1M
    (never 1e+06 or 5 x 10^1), and below 0.001 as 10^k."""
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e4:
        return f"{v / 1e3:g}k"
    if 0 < v < 1e-3:
        k = math.log10(v)
        return f"$10^{{{round(k)}}}$" if abs(k - round(k)) < 1e-9 else f"{v:.0e}"
    return f"{v:g}"


def log_ticks(axis) -> None:
    """Plain numbers on a log axis (:func:`_plain`: never 5 x 10^1 or 1e+06); minor ticks at 2 and 5, labelled
    only when the axis spans less than 2.5 decades."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    def plain(v: float, _pos: int) -> str:
        return _plain(v)

    def minor(v: float, _pos: int) -> str:
        lo, hi = axis.get_view_interval()  # at draw time, after autoscaling
        return _plain(v) if lo > 0 and hi / lo < 300 else ""

    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(FuncFormatter(plain))
    axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
    axis.set_minor_formatter(FuncFormatter(minor))


def _layout(n: int) -> tuple[int, int]:
    ncols = min(n, 3)
    return math.ceil(n / ncols), ncols


def _panel_size(nrows: int, ncols: int) -> tuple[float, float]:
    """Figure inches: 4.6 x 3.6 per panel, and a lone panel as wide as a column of a paper's page allows
    (6.4 x 4.2: its tick labels, legend and two-line title fit without shrinking)."""
    if nrows * ncols == 1:
        return 6.4, 4.2
    return 4.6 * ncols, 3.6 * nrows


def integer_ticks(axis) -> None:
    """Whole-number ticks on an axis of counts (evaluations, ranks): never 2.5 evaluations."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def legend_columns(n: int, most: int = 5) -> int:
    """Columns of a figure legend under the panels: rows as full as each other (6 entries: 3 + 3, not 5 + 1)."""
    if n <= most:
        return max(n, 1)
    rows = math.ceil(n / most)
    return math.ceil(n / rows)


def repetitions_of(df: pd.DataFrame) -> int | dict[str, dict[str, int]]:
    """The repetitions behind each curve of a runs frame: one number where every (benchmark, optimizer) has the
    same, else ``{benchmark: {optimizer: repetitions}}`` (each panel then says which curves have fewer)."""
    reps = df.groupby(["benchmark", "optimizer"])["repetition"].nunique()
    if len(reps) == 0 or reps.min() == reps.max():
        return int(reps.max()) if len(reps) else 0
    out: dict[str, dict[str, int]] = {}
    for (bench, opt), n in reps.items():
        out.setdefault(str(bench), {})[str(opt)] = int(n)
    return out


def repetitions_text(counts: Mapping[str, int]) -> str:
    """``{optimizer: runs}`` as a panel says it: ``30 repetitions`` where all agree, else the usual number and the
    exceptions by name (``30 repetitions; 2 for combo, smac``)."""
    if not counts:
        return "no repetitions"
    values = list(counts.values())
    usual = max(set(values), key=lambda v: (values.count(v), v))
    odd: dict[int, list[str]] = {}
    for opt, n in counts.items():
        if n != usual:
            odd.setdefault(n, []).append(opt)
    text = f"{usual} repetition{'s' if usual != 1 else ''}"
    return text + "".join(f"; {n} for {', '.join(opts)}" for n, opts in sorted(odd.items()))


def save(fig, stem: str | os.PathLike, formats: Sequence[str] = ("png", "pdf"), dpi: int = 150,
         palette: bool = False) -> list[str]:
    """Save ``fig`` atomically as ``stem.png`` (``dpi``) and ``stem.pdf`` (or ``formats``); returns the paths.

    ``palette``: write the PNG with a 256-colour palette (median cut, no dithering) instead of RGBA, about a
    third of the bytes; for figures committed to git, whose lines and text come out the same to the eye."""
    stem = Path(stem)
    out = []
    for ext in formats:
        kw = {"dpi": dpi} if ext == "png" else {}
        path = stem.with_suffix("." + ext)
        tmp = path.with_name(path.name + ".part")
        if ext == "png" and palette:
            _save_palette_png(fig, tmp, **kw)
        else:
            fig.savefig(tmp, format=ext, bbox_inches="tight", **kw)
        os.replace(tmp, path)
        out.append(str(path))
    _pyplot().close(fig)
    return out


def _save_palette_png(fig, path: Path, dpi: int) -> None:
    import io

    from PIL import Image  # matplotlib's own dependency

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=dpi)
    buf.seek(0)
    with Image.open(buf) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(path, format="PNG", optimize=True)


def plot_curves(summary: pd.DataFrame, *, axis: str, x_scale: str, y_scale: str, y_label: str, title: str,
                benchmarks: Sequence[str], optimizers: Sequence[str], reps: int, stem: str | os.PathLike,
                x_label: str | None = None, budgets: dict[str, float | None] | None = None) -> list[str]:
    """Median and 25/75 percentile curves per optimizer, one panel per benchmark; saves PNG + PDF."""
    return save(curves_figure(summary, axis=axis, x_scale=x_scale, y_scale=y_scale, y_label=y_label, title=title,
                              benchmarks=benchmarks, optimizers=optimizers, reps=reps, x_label=x_label,
                              budgets=budgets), stem)


def curves_figure(summary: pd.DataFrame, *, axis: str, x_scale: str, y_scale: str | Mapping[str, str], y_label: str,
                  title: str,
                  benchmarks: Sequence[str], optimizers: Sequence[str], reps: int | str, x_label: str | None = None,
                  budgets: dict[str, float | None] | None = None, stat: str = "median",
                  marks: Mapping[str, Sequence[tuple[str, float, float, float]]] | None = None):
    """The figure :func:`plot_curves` saves (a matplotlib Figure), for callers that show or save it themselves.

    ``reps`` is the number of repetitions, or ``{benchmark: {optimizer: repetitions}}`` when runs differ in it:
    each panel then names the optimizers whose count differs from the others' (:func:`repetitions_text`).
    ``y_scale`` is one scale for every panel or one per benchmark. ``stat="mean"`` draws the mean
    and a band of one standard error instead of the median and quartiles. ``marks[benchmark]`` holds published values to draw beside the curves, each
    ``(optimizer, x, value, error)``: a diamond in the optimizer's colour with an error bar (a
    paper's number at its budget), spread a little to the right of ``x`` so that they do not hide
    one another.
    """
    if stat not in ("median", "mean"):
        raise ValueError(f"stat must be 'median' or 'mean', got {stat!r}")
    plt = _pyplot()
    nrows, ncols = _layout(len(benchmarks))
    fig, axes = plt.subplots(nrows, ncols, figsize=_panel_size(nrows, ncols), squeeze=False)
    col = colours(optimizers)
    has_curve = set(summary.loc[summary[stat].notna(), "optimizer"])
    for ax, bench in zip(axes.flat, benchmarks):
        sb = summary[summary["benchmark"] == bench]
        ys = y_scale.get(bench, "linear") if isinstance(y_scale, Mapping) else y_scale
        for opt in optimizers:
            s = sb[sb["optimizer"] == opt].sort_values("x")
            ok = s[stat].notna().to_numpy().copy()
            if ys == "log":
                ok &= (s[stat] > 0).to_numpy()
            if not ok.any():
                continue
            x = s["x"].to_numpy(float)[ok]
            centre = s[stat].to_numpy(float)[ok]
            ax.step(x, centre, where="post", color=col[opt], lw=1.8, label=opt)
            if stat == "median":
                lo, hi = s["q25"].to_numpy(float)[ok], s["q75"].to_numpy(float)[ok]
            else:
                se = np.nan_to_num(s["se"].to_numpy(float)[ok])
                lo, hi = centre - se, centre + se
            if ys == "log":
                lo = np.where(lo > 0, lo, np.nan)
            ax.fill_between(x, lo, hi, step="post", color=col[opt], alpha=0.2, lw=0)
        ax.set_xscale(x_scale)
        ax.set_yscale(ys)
        if x_scale == "log":
            log_ticks(ax.xaxis)
        elif axis == "evaluations":
            integer_ticks(ax.xaxis)
        if ys == "log":
            log_ticks(ax.yaxis)
        for k, (opt, x0, value, err) in enumerate((marks or {}).get(bench, ())):
            x = x0 * 1.04 ** (k + 1) if x_scale == "log" else x0 * (1 + 0.012 * (k + 1))
            ax.errorbar([x], [value], yerr=[err] if err and math.isfinite(err) else None, fmt="D", ms=5,
                        color=col.get(opt, "k"), mec="k", mew=0.6, elinewidth=1.2, capsize=2, zorder=5,
                        label=None if opt in has_curve else f"{opt} (paper only)")
        if budgets and budgets.get(bench):
            ax.axvline(budgets[bench], color="0.5", ls=":", lw=1)
        counts = reps.get(bench, {}) if isinstance(reps, Mapping) else None
        ax.set_title(f"{bench} ({repetitions_text(counts) if counts is not None else f'{reps} repetitions'})",
                     fontsize=10)
        ax.set_xlabel(x_label or X_LABELS[axis], fontsize=8)
        ax.set_ylabel(y_label, fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
        ax.tick_params(which="both", labelsize=8)
    for ax in list(axes.flat)[len(benchmarks):]:
        ax.set_visible(False)
    legend: dict[str, object] = {}  # every panel's entries, first seen first (a panel may lack an optimizer)
    for ax in list(axes.flat)[:len(benchmarks)]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    if legend:
        fig.legend(list(legend.values()), list(legend), loc="upper center", ncol=legend_columns(len(legend)),
                   frameon=False, bbox_to_anchor=(0.5, 0.0), fontsize=9)
    spread = ("median and 25th-75th percentiles" if stat == "median" else "mean and one standard error")
    shown = f"{spread} over the repetitions" if isinstance(reps, Mapping) else f"{spread} over {reps} repetitions"
    if marks and any(marks.values()):
        shown += "; diamonds: the paper's value at its budget"
    fig.suptitle(title + f"\n{shown}", fontsize=11)
    fig.tight_layout()
    return fig


def plot_ranks(ranks: pd.DataFrame, *, axes_spec: Sequence[tuple[str, str, str]], optimizers: Sequence[str],
               reps: int, n_benchmarks: int, title: str, stem: str | os.PathLike) -> list[str]:
    """Average rank over time; one panel per x axis. ``axes_spec`` is (axis, x scale, x label)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(axes_spec), figsize=(5.2 * len(axes_spec), 3.8), squeeze=False)
    col = colours(optimizers)
    for ax, (axis, scale, label) in zip(axes.flat, axes_spec):
        r = ranks[ranks["axis"] == axis]
        for opt in optimizers:
            s = r[r["optimizer"] == opt].sort_values("x")
            s = s[s["rank"].notna()]
            if len(s):
                ax.step(s["x"], s["rank"], where="post", color=col[opt], lw=1.8, label=opt)
        ax.set_xscale(scale)
        if scale == "log" and len(r):
            log_ticks(ax.xaxis)
        elif axis == "evaluations" and "fraction" not in label:
            integer_ticks(ax.xaxis)
        integer_ticks(ax.yaxis)  # ranks 1..k
        ax.set_ylim(0.8, max(len(optimizers), 1) + 0.2)
        ax.invert_yaxis()
        ax.set_xlabel(label, fontsize=8)
        ax.set_ylabel("average rank (1 = best)", fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.tick_params(which="both", labelsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="upper center", ncol=legend_columns(len(labels)), frameon=False,
                   bbox_to_anchor=(0.5, 0.0), fontsize=9)
    over = f"{n_benchmarks} benchmark{'s' if n_benchmarks > 1 else ''} x {reps} repetitions"
    fig.suptitle(f"{title}\naverage rank over {over}", fontsize=11)
    fig.tight_layout()
    return save(fig, stem)
