"""The figure checklist (DESIGN.md, "Figures"): labels in the reader's units, whole-number ticks for counts, plain
numbers on log axes, legends whose rows are equally full, the repetitions of each curve said, a
critical-difference axis over every possible rank."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")

import benchsuite  # noqa: E402
from benchsuite.analysis import plots  # noqa: E402
from benchsuite.analysis.scorecard import units_label  # noqa: E402


def test_labels_are_in_the_readers_units() -> None:
    assert units_label("incumbent's test loss", 100.0, -100.0) == "incumbent's test accuracy (%)"
    assert units_label("incumbent's validation error", 100.0, -100.0) == "incumbent's validation accuracy (%)"
    assert units_label("incumbent's test loss", 0.0, 1.0) == "incumbent's test loss"
    assert units_label("incumbent's test loss", 0.0, 100.0) == "incumbent's test loss (%)"
    assert "paper's units" in units_label("x", 3.0, 2.0)


def test_legend_rows_are_equally_full() -> None:
    assert [plots.legend_columns(n) for n in (1, 4, 5, 6, 7, 8, 11)] == [1, 4, 5, 3, 4, 4, 4]


def test_each_panel_says_which_curves_have_fewer_repetitions() -> None:
    assert plots.repetitions_text({"a": 30, "b": 30}) == "30 repetitions"
    assert plots.repetitions_text({"a": 30, "b": 2, "c": 30, "d": 2, "e": 5}) == "30 repetitions; 2 for b, d; 5 for e"
    df = pd.DataFrame({"benchmark": ["x"] * 5, "optimizer": ["a", "a", "a", "b", "b"], "repetition": [0, 1, 2, 0, 1]})
    assert plots.repetitions_of(df) == {"x": {"a": 3, "b": 2}}
    assert plots.repetitions_of(df[df["optimizer"] == "a"]) == 3


def test_log_axes_show_plain_numbers() -> None:
    plt = plots._pyplot()
    fig, ax = plt.subplots()
    ax.plot([0.01, 50, 2e6], [1, 2, 3])
    ax.set_xscale("log")
    plots.log_ticks(ax.xaxis)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    plt.close(fig)
    assert "1000" in labels and "0.1" in labels and "1M" in labels, labels
    assert not any("e+" in x or "times" in x for x in labels), labels
    assert [plots._plain(v) for v in (0.05, 50, 2000, 20000, 2e5, 1e6, 1e-4)] == [
        "0.05", "50", "2000", "20k", "200k", "1M", "$10^{-4}$"]


def _runs(tmp_path: Path) -> pd.DataFrame:
    for seed in (0, 1):
        benchsuite.run("nb201_cifar10", "random_search", seed=seed, budget_evals=10, out=tmp_path / f"rs_{seed}.csv")
    return benchsuite.load_results(tmp_path)


def test_an_evaluation_axis_has_whole_number_ticks(tmp_path: Path) -> None:
    fig = benchsuite.plot(_runs(tmp_path), quantity="incumbent_test_loss", x="evaluations")
    fig.canvas.draw()
    ticks = [t for t in fig.axes[0].get_xticks() if fig.axes[0].get_xlim()[0] <= t <= fig.axes[0].get_xlim()[1]]
    plots._pyplot().close(fig)
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    assert fig.get_size_inches().tolist() == [6.4, 4.2]  # a lone panel: a paper column's width


def test_the_critical_difference_axis_spans_every_possible_rank(tmp_path: Path) -> None:
    pytest.importorskip("scikit_posthocs")
    from benchsuite.analysis.stats import Comparison, plot_cd

    opts = ["a", "b", "c"]
    ranks = pd.Series([1.4, 1.6, 3.0], index=opts)
    p = pd.DataFrame(np.full((3, 3), 0.5), index=opts, columns=opts)
    cmp = Comparison(at="the budget", optimizers=opts, n_blocks=6, mean_ranks=ranks, pairwise_p=p)
    seen = {}
    real = plots.save

    def keep(fig, stem, **kw):
        seen["xlim"] = fig.axes[0].get_xlim()
        seen["ticks"] = list(fig.axes[0].get_xticks())
        return real(fig, stem, **kw)

    plots.save = keep
    try:
        plot_cd(cmp, tmp_path / "cd")
    finally:
        plots.save = real
    lo, hi = seen["xlim"]
    assert lo <= 1 and hi >= 3 and [float(t) for t in seen["ticks"]] == [1.0, 2.0, 3.0]
    assert not math.isnan(lo)
