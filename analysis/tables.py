"""Tables at the budget: mean +- standard error per benchmark and optimizer.

The layout follows dngo.txt Table 1 (one row per benchmark with its known optimum in
brackets and the budget, one column per method, the best mean in bold) and combo.txt
Tables 1-3 (mean +- standard error over the repetitions). Written as Markdown (for the
report), CSV (long format, every statistic, for further processing) and LaTeX (booktabs).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

# a best mean is marked only where every method of the row has at least this many repetitions:
# with fewer, a "best" is noise presented as a ranking (issue 25)
MIN_REPS_FOR_BEST = 3


def budget_table(values: pd.DataFrame, at: Mapping[str, tuple[str, float]],
                 optimum: Mapping[str, float | None] | None = None,
                 benchmarks: Sequence[str] | None = None, optimizers: Sequence[str] | None = None) -> pd.DataFrame:
    """Long-format statistics of each run's value at the budget.

    ``values`` has one row per run (benchmark, optimizer, repetition, value), as
    :func:`benchsuite.analysis.steps.value_at` returns; ``at[benchmark]`` is ``(axis, x)``.
    The result has benchmark, optimizer, axis, at, n, mean, sem (standard error of the
    mean, ddof=1), std, median, q25, q75, optimum.
    """
    benchmarks = list(benchmarks or dict.fromkeys(values["benchmark"]))
    optimizers = list(optimizers or dict.fromkeys(values["optimizer"]))
    rows = []
    for b in benchmarks:
        for o in optimizers:
            v = values.loc[(values["benchmark"] == b) & (values["optimizer"] == o), "value"].to_numpy(float)
            v = v[~np.isnan(v)]
            n = len(v)
            q25, med, q75 = np.percentile(v, [25, 50, 75]) if n else (math.nan,) * 3
            std = float(v.std(ddof=1)) if n > 1 else math.nan
            rows.append({
                "benchmark": b, "optimizer": o, "axis": at[b][0], "at": at[b][1], "n": n,
                "mean": float(v.mean()) if n else math.nan, "sem": std / math.sqrt(n) if n > 1 else math.nan,
                "std": std, "median": med, "q25": q25, "q75": q75,
                "optimum": (optimum or {}).get(b),
            })
    return pd.DataFrame(rows)


def _decimals(mean: float, sem: float) -> int:
    """Decimals that show the standard error to two significant digits (0-6)."""
    ref = sem if sem and math.isfinite(sem) and sem > 0 else abs(mean) / 1000 if mean else 1e-3
    return int(min(6, max(0, 1 - math.floor(math.log10(ref)))))


def format_cell(mean: float, sem: float) -> str:
    """``mean ± sem`` with matching decimals; ``n/a`` when there is no value."""
    if not math.isfinite(mean):
        return "n/a"
    d = _decimals(mean, sem)
    if not math.isfinite(sem):
        return f"{mean:.{d}f}"
    return f"{mean:.{d}f} ± {sem:.{d}f}"


def _budget_text(axis: str, x: float) -> str:
    return f"{int(x)} evals" if axis == "evaluations" else f"{x:g} s"


def _wide(table: pd.DataFrame) -> tuple[list[str], list[list[str]], list[int | None]]:
    """Header, rows of cell texts, and the column index of each row's best mean."""
    optimizers = list(dict.fromkeys(table["optimizer"]))
    header = ["Benchmark (optimum)", "Budget", *optimizers]
    rows, best = [], []
    for b, g in table.groupby("benchmark", sort=False):
        g = g.set_index("optimizer")
        opt = g["optimum"].iloc[0]
        name = f"{b} ({opt:.4g})" if opt is not None and not pd.isna(opt) else str(b)
        cells = [name, _budget_text(g["axis"].iloc[0], g["at"].iloc[0])]
        cells += [format_cell(g.at[o, "mean"], g.at[o, "sem"]) if o in g.index else "n/a" for o in optimizers]
        means = [g.at[o, "mean"] if o in g.index else math.nan for o in optimizers]
        finite = [m for m in means if math.isfinite(m)]
        enough = all(g.at[o, "n"] >= MIN_REPS_FOR_BEST for o in optimizers
                     if o in g.index and math.isfinite(g.at[o, "mean"])) if "n" in g else True
        best.append(2 + means.index(min(finite)) if finite and len(optimizers) > 1 and enough else None)
        rows.append(cells)
    return header, rows, best


def to_markdown(table: pd.DataFrame, caption: str = "") -> str:
    """The table as GitHub Markdown, best mean per row in bold (3 repetitions or more), caption below."""
    header, rows, best = _wide(table)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join([":---", "---:"] + [":---:"] * (len(header) - 2)) + "|"]
    for cells, b in zip(rows, best):
        cells = [f"**{c}**" if i == b else c for i, c in enumerate(cells)]
        out.append("| " + " | ".join(cells) + " |")
    if caption:
        out += ["", caption]
    return "\n".join(out) + "\n"


def to_csv(table: pd.DataFrame) -> str:
    """The long-format table as CSV text."""
    return table.to_csv(index=False, float_format="%.10g")


def _tex(text: str) -> str:
    repl = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(repl.get(ch, ch) for ch in str(text))


def to_latex(table: pd.DataFrame, caption: str = "", label: str = "") -> str:
    """The table as a LaTeX ``table`` with a booktabs ``tabular``, best mean per row in bold."""
    header, rows, best = _wide(table)
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{l r " + "c " * (len(header) - 2) + "}",
             r"\toprule", " & ".join(_tex(h) for h in header) + r" \\", r"\midrule"]
    for cells, b in zip(rows, best):
        tex = [_tex(c).replace("±", r"$\pm$") for c in cells]
        tex = [rf"\textbf{{{c}}}" if i == b else c for i, c in enumerate(tex)]
        lines.append(" & ".join(tex) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{_tex(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
