"""The scorecard's one verdict rule, on its boundaries: what each published number is compared with, and how
a published number compared in several protocols is counted once (benchsuite/analysis/scorecard.py)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from benchsuite.analysis import scorecard as S
from benchsuite.published import PublishedCell, PublishedClaim


def cell(value: float, error: float | None, kind: str = "standard_error", runs: int | None = 25,
         hib: bool = False, optimum: float | None = None, fidelity: str = "faithful") -> PublishedCell:
    return PublishedCell("P", "src", "b", "o", "M", value, error, kind, runs, higher_is_better=hib,
                         optimum=optimum, fidelity=fidelity)


def verdict(c: PublishedCell, mean: float, se: float, n: int = 25, sd: float | None = None) -> S.Comparison:
    return S.compare(c, mean, se, se * math.sqrt(n) if sd is None else sd, n)


# -- standard errors on both sides ------------------------------------------------------------------
def test_two_combined_standard_errors_is_the_boundary_in_the_papers_direction() -> None:
    c = cell(1.0, 0.3)  # combined SE sqrt(0.3^2 + 0.4^2) = 0.5
    assert verdict(c, 2.0, 0.4).verdict == "match"  # z = +2.0 exactly
    assert verdict(c, 2.001, 0.4).verdict == "worse"  # lower is better
    assert verdict(c, -0.001, 0.4).verdict == "better"
    assert verdict(cell(1.0, 0.3, hib=True), 2.001, 0.4).verdict == "better"
    got = verdict(c, 2.0, 0.4)
    assert got.basis == "standard errors" and got.z == pytest.approx(2.0) and "z = +2.0" in got.text


def test_a_standard_deviation_over_stated_runs_is_converted_to_a_standard_error() -> None:
    # 1.1 over 100 runs is a standard error of 0.11: 1.7 against 1.2 is z = 4.5, not a match
    got = verdict(cell(1.2, 1.1, "standard_deviation", runs=100), 1.7, 0.0, n=100)
    assert got.verdict == "worse" and got.basis == "standard errors" and got.z == pytest.approx(0.5 / 0.11)


@pytest.mark.parametrize("kind, runs, error", [("not_stated", 10, 0.27), ("standard_deviation", None, 0.27),
                                                ("standard_error", 10, None)])
def test_an_unknown_published_standard_error_is_compared_with_our_spread_never_assumed(kind, runs, error) -> None:
    """DNGO's Table 1 gives +- values of an unstated kind: its SMAC on Branin, 0.655 +- 0.27, against our runs
    that all end near 0.398 is a difference on our spread (the lenient reading, the 0.27 as a standard error,
    called it a match)."""
    c = cell(0.655, error, kind, runs=runs)
    got = verdict(c, 0.398, 0.013, n=10)  # sd 0.041
    assert got.basis == "our spread" and got.verdict == "better" and "standard error is not known" in got.text
    assert got.z == pytest.approx((0.398 - 0.655) / (0.013 * math.sqrt(10)))
    assert verdict(c, 0.60, 0.02, n=10).verdict == "match"  # within two of our runs' SDs (0.063)


# -- rounding: only the same-optimum rule ------------------------------------------------------------
def test_a_printed_zero_error_gets_no_rounding_slack() -> None:
    assert verdict(cell(0.398, 0.0), 0.3979, 0.0).verdict == "better"
    assert verdict(cell(0.398, 0.0), 0.3980, 0.0).verdict == "match"


def test_both_sides_at_the_known_optimum_is_a_match_by_its_own_rule() -> None:
    """MaxSAT60's certified optimum is -195.65275362; the paper prints COMBO's -195.6527 +- 0.0000 (truncated)
    and every one of our runs reaches it (a spread of 1e-14 from float summation order)."""
    opt = -195.65275362232956
    got = verdict(cell(-195.6527, 0.0, optimum=opt), opt, 1e-14)
    assert got.verdict == "match" and got.basis == "same optimum" and math.isnan(got.z)
    # without the optimum the same numbers are a difference of a billion standard errors: no slack
    assert verdict(cell(-195.6527, 0.0), opt, 1e-14).verdict == "better"
    # one side away from the optimum by more than one unit of the printed digit: the ordinary rule decides
    assert verdict(cell(-195.6527, 0.0, optimum=opt), opt + 0.002, 1e-4).basis == "standard errors"
    # Branin: 0.398 printed, optimum 0.397887; ours at 0.3979 is at the optimum, 0.3990 is not
    assert verdict(cell(0.398, 0.0, optimum=0.397887), 0.3979, 0.0).verdict == "match"
    assert verdict(cell(0.398, 0.0, optimum=0.397887), 0.3990, 0.0).verdict == "worse"


# -- fewer runs than the paper's ------------------------------------------------------------------------
def test_fewer_runs_say_so_far_and_keep_a_large_z_visible() -> None:
    got = verdict(cell(71.84, 0.99, "standard_deviation", runs=500, hib=True), 72.9, 0.04, n=30)
    assert got.verdict == "so far better" and abs(got.z) > 10 and "30 of 500 runs" in got.text
    assert verdict(cell(1.0, 0.1), 1.05, 0.05, n=5).verdict == "so far match"
    assert verdict(cell(1.0, 0.1, runs=None), 1.05, 0.05, n=5).verdict == "match"  # runs not stated: no "so far"


# -- claims -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("factor, se, claimed, expected", [
    (1.35, 0.43, 5, "inconclusive"),  # Fabolas' variant: GP-EI / RS at 1.35x against "5x", a wide interval
    (1.35, 0.05, 5, "worse"),  # the same factor measured tightly: outside the band, interval too
    (5.28, 0.39, 10, "match"),  # within 5..20
    (2.5, 0.01, 5, "match"),  # the band's edge is in it
    (30.0, 0.05, 10, "better"),
    (25.0, 0.5, 10, "inconclusive"),
    (3.0, math.nan, 10, "inconclusive"),  # no interval at all: never a verdict it cannot support
])
def test_a_roughly_claimed_factor_matches_only_inside_its_band(factor, se, claimed, expected) -> None:
    assert S.factor_verdict(factor, se, claimed)[0] == expected


def _values(stats: dict[str, tuple[float, float]], n: int = 3) -> pd.DataFrame:
    """``n`` runs per method with exactly the given mean and sample standard deviation."""
    k = np.linspace(-1.0, 1.0, n)
    k = (k - k.mean()) / k.std(ddof=1)
    rows = [{"benchmark": "b", "optimizer": o, "value": m + x * sd} for o, (m, sd) in stats.items() for x in k]
    return pd.DataFrame(rows)


def test_the_equal_claim_is_the_comparison_the_paper_made_and_its_own_numbers_pass() -> None:
    """DeepArchitect's Table 2 (3 runs each): means 91.61, 91.45, 91.93, 91.32 against SDs 0.67, 0.11, 1.03,
    0.50: the largest difference, 0.61, is within the pooled SD, 0.67."""
    claim = PublishedClaim("P", "src", "equal", "b", "no searcher beats another by more than its spread",
                           optimizers=("r", "m", "s", "e"), runs=3)
    paper = _values({"r": (91.61, 0.67), "m": (91.45, 0.11), "s": (91.93, 1.03), "e": (91.32, 0.50)})
    ratio, n, got, how = S.equal_claim(claim, paper)
    assert got == "match" and n == 3 and ratio == pytest.approx(0.61 / math.sqrt((0.67**2 + 0.11**2 + 1.03**2
                                                                                  + 0.5**2) / 4))
    apart = _values({"r": (91.61, 0.2), "m": (91.45, 0.2), "s": (92.5, 0.2), "e": (91.32, 0.2)})
    assert S.equal_claim(claim, apart)[2] == "differs"
    # with thirty runs the standard errors shrink, the spread does not: the verdict is the same
    many = _values({"r": (91.61, 0.67), "m": (91.45, 0.11), "s": (91.93, 1.03), "e": (91.32, 0.50)}, n=30)
    assert S.equal_claim(claim, many)[2] == "match"


# -- many comparisons ---------------------------------------------------------------------------------
def test_benjamini_hochberg_adjusts_as_the_textbook_example() -> None:
    q = S.benjamini_hochberg([0.01, 0.04, 0.03, 0.005, math.nan])
    assert q[:4] == pytest.approx([0.02, 0.04, 0.04, 0.02]) and math.isnan(q[4])
    assert S.p_two_sided(1.959963984540054) == pytest.approx(0.05)


# -- counting each published number once ------------------------------------------------------------------
def _row(protocol: str, fidelity: str, runs: int, diffs: str = "", number: str = "n1", verdict: str = "match",
         variant: bool = False) -> dict:
    return {"protocol": protocol, "fidelity": fidelity, "differences": diffs, "ours_runs": runs,
            "number": number, "verdict": verdict, "variant": variant, "basis": "standard errors", "note": "",
            "z": 0.0, "paper": "P"}


def test_a_number_is_counted_once_in_the_closest_protocol_that_runs_it() -> None:
    card = pd.DataFrame([
        _row("gpu_faithful", "faithful", 0, verdict="not-run (gpu)"),  # faithful, but not run
        _row("cpu_two", "adapted", 5, "a; b"),
        _row("cpu_one", "adapted", 5, "a"),  # fewer named differences: the closest that runs it
        _row("ours", "variant", 30, variant=True),  # a variant is never counted
        _row("alone", "faithful", 0, number="n2", verdict="not-run (gpu)"),  # not run anywhere: counted as not run
    ])
    counted = S.mark_counted(card).set_index("protocol")["counted"]
    assert counted.to_dict() == {"gpu_faithful": False, "cpu_two": False, "cpu_one": True, "ours": False,
                                 "alone": True}


def test_closer_than_overrules_the_count_of_differences_and_must_name_a_protocol_with_the_same_number() -> None:
    card = pd.DataFrame([
        _row("table_clock", "adapted", 30, "a; b"),
        {**_row("pool_clock", "adapted", 20, "a; b; c"), "closer_than": "table_clock"},
        _row("faithful_one", "faithful", 0, verdict="not-run (gpu)"),
    ])
    counted = S.mark_counted(card).set_index("protocol")["counted"]
    assert counted.to_dict() == {"table_clock": False, "pool_clock": True, "faithful_one": False}
    # without the judgement, fewer named differences win
    plain = S.mark_counted(card.assign(closer_than="")).set_index("protocol")["counted"]
    assert plain["table_clock"] and not plain["pool_clock"]
    # a faithful protocol with runs still comes first
    card.loc[2, "ours_runs"], card.loc[2, "verdict"] = 5, "match"
    assert S.mark_counted(card).set_index("protocol")["counted"]["faithful_one"]
    wrong = pd.DataFrame([_row("x", "adapted", 5, "a"), {**_row("y", "adapted", 5, "a"), "closer_than": "z"}])
    with pytest.raises(S.DataError, match="closer_than names 'z'"):
        S.mark_counted(wrong)


def test_the_headline_counts_by_fidelity_with_weak_matches_and_not_run_reasons_apart() -> None:
    card = pd.DataFrame([
        _row("a", "faithful", 25, number="1"),
        {**_row("b", "faithful", 10, number="2"), "basis": "our spread"},
        {**_row("c", "adapted", 5, "x", number="3", verdict="worse"), "note": "cause: unexplained"},
        {**_row("d", "adapted", 5, "x", number="4", verdict="better"), "note": "cause: measured mechanism"},
        _row("e", "adapted", 5, "x", number="5", verdict="so far better"),
        _row("f", "faithful", 0, number="6", verdict="not-run (gpu)"),
        _row("g", "faithful", 0, number="7", verdict="not-run (method missing)"),
    ])
    card = S.flag_multiple_comparisons(S.mark_counted(card))
    t = S.headline(card)
    assert t.loc["match", "faithful"] == 1 and t.loc["match, spread only", "faithful"] == 1
    assert t.loc["differs, cause unknown", "adapted"] == 1 and t.loc["differs, cause measured", "adapted"] == 1
    assert t.loc["so far differs", "adapted"] == 1
    assert t.loc["not run: GPU", "all"] == 1 and t.loc["not run: method missing", "all"] == 1
    assert int(t["all"].sum()) == 7
    text = S.headline_markdown(card)
    assert "chance alone would put about" in text and "| **all** | 4 | 3 | 7 |" in text


def test_every_counted_row_of_the_committed_scorecard_has_a_fidelity_and_adapted_rows_name_differences() -> None:
    card = pd.read_csv(S.Path(__file__).resolve().parent.parent / "reproductions" / "scorecard.csv",
                       keep_default_na=False)
    assert set(card["fidelity"]) <= {"faithful", "adapted", "variant"}
    adapted = card[card["fidelity"] == "adapted"]
    assert len(adapted) and (adapted["differences"].str.len() > 0).all()
    assert not (card[card["fidelity"] == "faithful"]["differences"].str.len() > 0).any()
    counted = card[card["counted"].astype(str) == "True"]
    assert counted.groupby(["paper", "source", "benchmark", "optimizer", "published"]).size().max() == 1
    assert not (counted["fidelity"] == "variant").any()
    assert not card["verdict"].str.startswith("partial").any()
    assert np.isfinite(pd.to_numeric(counted["z"], errors="coerce")).sum() > 10
