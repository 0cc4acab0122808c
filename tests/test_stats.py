"""Friedman, pairwise Wilcoxon with Holm and the critical-difference diagram (issue 27, item 3)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("scikit_posthocs")  # the [stats] extra (installed by scripts/test.sh through [all])

from scipy import stats as sps  # noqa: E402

from benchsuite import api  # noqa: E402
from benchsuite.analysis import stats as S  # noqa: E402
from benchsuite.errors import InvalidSettingError  # noqa: E402


def _values(shifts: dict[str, float], reps: int = 10, benchmarks=("b1", "b2"), noise: float = 0.3,
            seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for b in benchmarks:
        for r in range(reps):
            base = rng.normal()
            for o, shift in shifts.items():
                rows.append({"benchmark": b, "repetition": r, "optimizer": o,
                             "value": base + shift + noise * rng.normal()})
    return pd.DataFrame(rows)


def test_clear_differences_are_found_and_equal_ones_are_not() -> None:
    c = S.compare(_values({"good": 0.0, "mid": 0.6, "bad": 1.2, "bad_twin": 1.2}), ["good", "mid", "bad", "bad_twin"])
    assert c.tested and c.n_blocks == 20 and c.friedman_p < 1e-4
    assert list(c.mean_ranks.sort_values().index[:2]) == ["good", "mid"]
    assert c.pairwise_p.loc["good", "mid"] < 0.05 and c.pairwise_p.loc["mid", "bad"] < 0.05
    assert c.pairwise_p.loc["bad", "bad_twin"] > 0.05  # same distribution
    assert np.allclose(c.pairwise_p.to_numpy(), c.pairwise_p.to_numpy().T)
    text = c.to_markdown()
    assert "Friedman test: chi2 =" in text and "**< 0.001**" in text and "| `good` | 1." in text
    same = S.compare(_values({"a": 0.0, "b": 0.0, "c": 0.0}, seed=3), ["a", "b", "c"])
    assert same.friedman_p > 0.05 and (same.pairwise_p.to_numpy() > 0.05).all()


def test_two_optimizers_match_scipys_wilcoxon_and_have_no_friedman() -> None:
    v = _values({"a": 0.0, "b": 0.2}, reps=8)
    c = S.compare(v, ["a", "b"])
    wide = v.pivot_table(index=["benchmark", "repetition"], columns="optimizer", values="value")
    expected = sps.wilcoxon(wide["a"], wide["b"], zero_method="zsplit").pvalue  # Holm over one pair: unchanged
    assert c.pairwise_p.loc["a", "b"] == pytest.approx(expected)
    assert np.isnan(c.friedman_p) and "not applicable to two optimizers" in c.to_markdown()


def test_too_few_blocks_are_said_not_tested_and_draw_nothing(tmp_path) -> None:
    c = S.compare(_values({"a": 0.0, "b": 1.0}, reps=2), ["a", "b"])
    assert not c.tested and "Too few complete blocks for a test (4, fewer than 6)" in c.to_markdown()
    assert S.plot_cd(c, tmp_path / "cd") == [] and not list(tmp_path.iterdir())
    assert S.compare(_values({"a": 0.0}), ["a"]).reason.startswith("One optimizer")


def test_incomplete_blocks_are_left_out_and_counted() -> None:
    v = _values({"a": 0.0, "b": 1.0, "c": 2.0})
    v = v[~((v["optimizer"] == "c") & (v["repetition"] < 3))]  # c lacks 3 repetitions on each benchmark
    c = S.compare(v, ["a", "b", "c"])
    assert c.n_blocks == 14 and c.blocks_dropped == 6 and "6 incomplete left out" in c.to_markdown()


def test_the_diagram_is_drawn(tmp_path) -> None:
    c = S.compare(_values({"a": 0.0, "b": 0.5, "c": 1.0}), ["a", "b", "c"])
    files = S.plot_cd(c, tmp_path / "cd", title="toy")
    assert [f.rsplit(".", 1)[1] for f in files] == ["png", "pdf"] and all((tmp_path / f"cd.{e}").stat().st_size > 1000
                                                                           for e in ("png", "pdf"))


def test_api_statistics_on_result_files(tmp_path) -> None:
    for opt in ("random_search", "regularized_evolution"):
        for seed in range(6):
            api.run("nb201_cifar10", opt, seed=seed, budget_evals=30, out=tmp_path / f"{opt}_{seed}.csv",
                    optimizer_settings={"population_size": 10, "sample_size": 3} if opt != "random_search" else None)
    half, full = api.statistics(tmp_path, quantity="incumbent_loss", fractions=(0.5, 1.0))
    assert (half.at, full.at) == ("50 % of the budget", "the budget")
    assert full.tested and full.n_blocks == 6 and set(full.mean_ranks.index) == {"random_search",
                                                                                 "regularized_evolution"}
    assert full.mean_ranks.sum() == pytest.approx(3.0)  # ranks 1 and 2 in each block
    with pytest.raises(InvalidSettingError, match="fractions of the budget must be in"):
        api.statistics(tmp_path, fractions=(1.5,))
    with pytest.raises(InvalidSettingError, match="quantity="):
        api.statistics(tmp_path, quantity="accuracy")
