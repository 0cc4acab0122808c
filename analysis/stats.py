"""Statistics people can put in a paper: Friedman, pairwise Wilcoxon with Holm, critical-difference diagram.

The unit of comparison is a *block*: one (benchmark, repetition) pair, in which every optimizer of
a protocol has one final value (its quantity at the budget, or at a fraction of it). Blocks where
some optimizer has no run are left out (the test needs complete blocks), and the report says how
many were used. Lower values are better (every quantity of the suite is a loss or a regret).

- **Friedman test** over the blocks (``scipy.stats.friedmanchisquare``; three optimizers or more):
  do the optimizers' ranks differ at all?
- **Pairwise Wilcoxon signed-rank tests** on the paired values of each pair of optimizers, with
  Holm's correction over the pairs (``scikit_posthocs.posthoc_wilcoxon``, ``zero_method="zsplit"``
  so that tied pairs count half to each side instead of being dropped).
- **Mean ranks** within blocks (1 = best; ties share the mean rank) and a **critical-difference
  diagram** (``scikit_posthocs.critical_difference_diagram``): optimizers joined by a bar do not
  differ significantly at ``alpha`` under the Holm-corrected Wilcoxon tests (Benavoli et al. 2016
  recommend these pairwise tests over the Nemenyi test of Demsar 2006's original diagram).

Too few blocks for a test (fewer than :data:`MIN_BLOCKS`) gives a result whose ``reason`` says so, and
the report prints that sentence instead of a table or a diagram. The tests come from maintained
libraries (SciPy, scikit-posthocs: ``pip install 'benchsuite[stats]'``); nothing here re-implements them.
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: fewer complete blocks than this and no test is run: Wilcoxon's exact two-sided p-value cannot go
#: below 0.0625 with 4 pairs, so with Holm's correction nothing could ever be significant
MIN_BLOCKS = 6
ALPHA = 0.05
#: where the report compares, as fractions of each benchmark's budget (1.0 = at the budget)
DEFAULT_FRACTIONS = (0.25, 1.0)


@dataclass
class Comparison:
    """The tests at one point of the budget; ``reason`` is set (and the rest empty) when none could run."""

    at: str                       # "the budget", "25 % of the budget"
    optimizers: list[str]
    n_blocks: int
    blocks_dropped: int = 0
    reason: str = ""
    friedman_statistic: float = math.nan
    friedman_p: float = math.nan
    mean_ranks: pd.Series = field(default_factory=lambda: pd.Series(dtype=float))
    pairwise_p: pd.DataFrame = field(default_factory=pd.DataFrame)   # Holm-corrected, symmetric
    alpha: float = ALPHA
    figure: list[str] = field(default_factory=list)  # the diagram's PNG and PDF, once drawn
    missing: dict[str, int] = field(default_factory=dict)  # optimizer -> blocks it has no value in

    @property
    def tested(self) -> bool:
        return not self.reason

    def to_markdown(self, under_heading: bool = False) -> str:
        """The section of a report page: the test, the mean ranks, the corrected p-values. ``under_heading``:
        the page's heading already says where (``Tests at the budget``), so the text does not repeat it."""
        place = "" if under_heading else f"At {self.at}: "
        head = (f"{place}{self.n_blocks} complete blocks (benchmark x repetition)"
                + (f", {self.blocks_dropped} incomplete left out (no value from "
                   + ", ".join(f"`{o}` in {n}" for o, n in self.missing.items()) + ")" if self.blocks_dropped else "")
                + ".")
        if not self.tested:
            return f"{head} {self.reason}\n"
        lines = [head, ""]
        if math.isfinite(self.friedman_p):
            verdict = "the ranks differ" if self.friedman_p < self.alpha else "no difference detected"
            p_text = _p(self.friedman_p)
            lines += [f"Friedman test: chi2 = {self.friedman_statistic:.3f}, p {p_text if p_text[0] == '<' else '= ' + p_text} "
                      f"({verdict} at alpha = {self.alpha:g}).", ""]
        else:
            lines += ["Friedman test: not applicable to two optimizers (the Wilcoxon test below is the test).", ""]
        order = list(self.mean_ranks.sort_values(kind="stable").index)
        lines += ["| optimizer | mean rank | " + " | ".join(f"`{o}`" for o in order) + " |",
                  "|---|---:|" + "---:|" * len(order)]
        for o in order:
            cells = []
            for other in order:
                if other == o:
                    cells.append("")
                    continue
                p = float(self.pairwise_p.loc[o, other])
                cells.append(f"**{_p(p)}**" if p < self.alpha else _p(p))
            lines.append(f"| `{o}` | {self.mean_ranks[o]:.2f} | " + " | ".join(cells) + " |")
        lines += ["", f"Mean rank within blocks (1 = best). Cells: Holm-corrected p-values of paired Wilcoxon "
                      f"signed-rank tests, **bold** below alpha = {self.alpha:g}.", ""]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per pair of optimizers (long form, for CSV)."""
        rows = []
        for i, a in enumerate(self.optimizers):
            for b in self.optimizers[i + 1:]:
                rows.append({"at": self.at, "optimizer_a": a, "optimizer_b": b,
                             "mean_rank_a": self.mean_ranks.get(a, math.nan),
                             "mean_rank_b": self.mean_ranks.get(b, math.nan),
                             "p_holm": float(self.pairwise_p.loc[a, b]) if self.tested else math.nan,
                             "n_blocks": self.n_blocks, "friedman_p": self.friedman_p, "reason": self.reason})
        return pd.DataFrame(rows)


def _p(p: float) -> str:
    return "< 0.001" if p < 1e-3 else f"{p:.3f}"


def blocks(values: pd.DataFrame, optimizers: Sequence[str]) -> tuple[pd.DataFrame, pd.Series]:
    """Final values as a (benchmark, repetition) x optimizer table of complete blocks, and per optimizer the
    number of blocks left out because it has no value there (no run, or no incumbent yet).

    ``values`` has columns benchmark, optimizer, repetition, value (:func:`benchsuite.analysis.value_at`).
    """
    wide = values[values["optimizer"].isin(optimizers)].pivot_table(
        index=["benchmark", "repetition"], columns="optimizer", values="value", aggfunc="first", dropna=False)
    wide = wide.reindex(columns=list(optimizers))
    complete = wide.dropna(how="any")
    return complete, wide.isna().sum(axis=0)


def compare(values: pd.DataFrame, optimizers: Sequence[str], at: str = "the budget",
            alpha: float = ALPHA) -> Comparison:
    """Friedman, pairwise Wilcoxon (Holm) and mean ranks of ``optimizers`` over the complete blocks of ``values``."""
    optimizers = list(dict.fromkeys(optimizers))
    table, missing = blocks(values, optimizers)
    n_all = int(values.drop_duplicates(["benchmark", "repetition"]).shape[0]) if len(values) else 0
    result = Comparison(at=at, optimizers=optimizers, n_blocks=len(table), blocks_dropped=n_all - len(table),
                        alpha=alpha, missing={o: int(n) for o, n in missing.items() if n})
    if len(optimizers) < 2:
        result.reason = "One optimizer: nothing to compare."
        return result
    if len(table) < MIN_BLOCKS:
        result.reason = (f"Too few complete blocks for a test ({len(table)}, fewer than {MIN_BLOCKS}): "
                         "no test is reported and no diagram drawn.")
        return result
    from scipy import stats

    from benchsuite.extras import import_optional

    sp = import_optional("scikit_posthocs", "the statistics (Wilcoxon with Holm, critical-difference diagram)")
    ranks = table.rank(axis=1, method="average")
    result.mean_ranks = ranks.mean(axis=0)
    if len(optimizers) >= 3:
        stat, p = stats.friedmanchisquare(*(table[o].to_numpy(float) for o in optimizers))
        result.friedman_statistic, result.friedman_p = float(stat), float(p)
    long = table.reset_index(drop=True).melt(var_name="optimizer", value_name="value", ignore_index=False)
    long = long.rename_axis("block").reset_index().sort_values(["optimizer", "block"], kind="stable")
    with np.errstate(all="ignore"):
        pw = sp.posthoc_wilcoxon(long, val_col="value", group_col="optimizer", zero_method="zsplit",
                                 p_adjust="holm", sort=False)
    result.pairwise_p = pw.reindex(index=optimizers, columns=optimizers).fillna(1.0)
    return result


def compare_at_fractions(df: pd.DataFrame, at: dict[str, tuple[str, float]], optimizers: Sequence[str],
                         fractions: Sequence[float] = DEFAULT_FRACTIONS, alpha: float = ALPHA) -> list[Comparison]:
    """:func:`compare` at each fraction of each benchmark's budget ``at[benchmark] = (axis, budget)``.

    ``df`` is a tidy frame with the quantity in column ``value`` (:func:`benchsuite.analysis.add_quantity`).
    """
    from .steps import value_at

    out = []
    for frac in fractions:
        if not 0 < frac <= 1:
            raise ValueError(f"fractions of the budget must be in (0, 1], got {frac}")
        parts = [value_at(df[df["benchmark"] == b], axis, {b: frac * x}) for b, (axis, x) in at.items()
                 if (df["benchmark"] == b).any()]
        values = pd.concat(parts, ignore_index=True) if parts else \
            pd.DataFrame(columns=["benchmark", "optimizer", "repetition", "value"])
        where = "the budget" if frac == 1 else f"{frac:.0%} of the budget".replace("%", " %")
        out.append(compare(values, optimizers, at=where, alpha=alpha))
    return out


def plot_cd(comparison: Comparison, stem: str | os.PathLike, title: str = "") -> list[str]:
    """The critical-difference diagram of a tested comparison as PNG and PDF; [] when it was not tested."""
    if not comparison.tested:
        return []
    from benchsuite.extras import import_optional

    from .plots import _pyplot, save

    sp = import_optional("scikit_posthocs", "the critical-difference diagram")
    plt = _pyplot()
    n = len(comparison.optimizers)
    fig, ax = plt.subplots(figsize=(7.0, 1.2 + 0.28 * n))
    sp.critical_difference_diagram(comparison.mean_ranks, comparison.pairwise_p, alpha=comparison.alpha, ax=ax,
                                   label_fmt_left="{label} ({rank:.2f})", label_fmt_right="({rank:.2f}) {label}")
    # the whole range of possible mean ranks, 1 (best) to the number of optimizers, with whole-number ticks: a
    # reader sees how far apart two optimizers are on it, not on a stretched 1.33..1.67
    ax.set_xlim(1 - 0.05 * max(n - 1, 1), n + 0.05 * max(n - 1, 1))
    ax.set_xticks(range(1, n + 1))
    ax.set_title((title + ": " if title else "") + f"mean rank at {comparison.at} ({comparison.n_blocks} blocks)\n"
                 f"bars join optimizers with no significant difference (Holm-corrected Wilcoxon, "
                 f"alpha = {comparison.alpha:g})", fontsize=8)
    return save(fig, stem)
