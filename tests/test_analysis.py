"""Analysis: step-function trajectories, summaries, ranks, tables and the report files."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from benchsuite import analysis
from benchsuite import registry
from benchsuite.errors import DataError
from benchsuite.protocol import load_protocol
from benchsuite.results import write_result
from benchsuite.runner import run


def test_step_values_hold_the_incumbent_known_at_t() -> None:
    xs = [1.0, 2.5, 2.5, 4.0]
    ys = [5.0, 3.0, 2.0, 1.0]
    grid = [0.0, 0.999, 1.0, 2.0, 2.49, 2.5, 3.9, 4.0, 100.0]
    got = analysis.step_values(xs, ys, grid)
    # NaN before the first tell; at a tie, the last row told at that time counts; no interpolation
    np.testing.assert_array_equal(got, [np.nan, np.nan, 5.0, 5.0, 5.0, 2.0, 2.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        analysis.step_values([2.0, 1.0], [1.0, 1.0], [1.0])


def _frame() -> pd.DataFrame:
    """Two optimizers x two repetitions on one benchmark, with hand-set told times and values."""
    rows = []
    spec = {("a", 0): ([1, 2, 3], [4.0, 2.0, 1.0]), ("a", 1): ([2, 4, 6], [3.0, 3.0, 0.5]),
            ("b", 0): ([1, 5, 9], [2.0, 1.5, 1.5]), ("b", 1): ([1, 2, 3], [9.0, 8.0, 0.1])}
    for (opt, rep), (ts, vs) in spec.items():
        for i, (t, v) in enumerate(zip(ts, vs)):
            rows.append({"benchmark": "f", "optimizer": opt, "repetition": rep, "told_time": float(t),
                         "evaluation": i + 1, "value": v})
    return pd.DataFrame(rows)


def test_trajectories_and_summary_on_a_common_grid() -> None:
    df = _frame()
    grid = {"f": np.array([1.0, 1.5, 2.0, 3.0, 4.5, 10.0])}
    traj = analysis.trajectories(df, "time", grid)
    a1 = traj[(traj.optimizer == "a") & (traj.repetition == 1)]["value"].to_numpy()
    np.testing.assert_array_equal(a1, [np.nan, np.nan, 3.0, 3.0, 3.0, 0.5])
    s = analysis.summarise(traj)
    sa = s[s.optimizer == "a"].set_index("x")
    # median only where every repetition has an incumbent
    assert math.isnan(sa.at[1.0, "median"]) and math.isnan(sa.at[1.5, "median"])
    assert sa.at[2.0, "median"] == pytest.approx(2.5)  # values 2 and 3
    assert sa.at[10.0, "q25"] == pytest.approx(np.percentile([1.0, 0.5], 25))
    assert sa.at[10.0, "q75"] == pytest.approx(np.percentile([1.0, 0.5], 75))
    assert set(s["n"]) == {2}
    # the mean and its standard error over the repetitions (values 1.0 and 0.5 at t = 10)
    assert sa.at[10.0, "mean"] == pytest.approx(0.75)
    assert sa.at[10.0, "se"] == pytest.approx(np.std([1.0, 0.5], ddof=1) / math.sqrt(2))
    assert math.isnan(sa.at[1.5, "se"])
    ev = analysis.trajectories(df, "evaluations", {"f": np.array([1.0, 2.0, 3.0])})
    b1 = ev[(ev.optimizer == "b") & (ev.repetition == 1)]["value"].to_numpy()
    np.testing.assert_array_equal(b1, [9.0, 8.0, 0.1])


def test_average_rank_pairs_repetitions() -> None:
    traj = analysis.trajectories(_frame(), "time", {"f": np.array([2.0, 10.0])})
    r = analysis.average_rank(traj).set_index(["optimizer", "x"])["rank"]
    # t=2: rep0 a=2.0 vs b=2.0 (tie, 1.5 each); rep1 a=3.0 vs b=8.0 -> a 1, b 2
    assert r[("a", 2.0)] == pytest.approx((1.5 + 1) / 2) and r[("b", 2.0)] == pytest.approx((1.5 + 2) / 2)
    # t=10: rep0 a=1.0 < b=1.5; rep1 a=0.5 > b=0.1
    assert r[("a", 10.0)] == pytest.approx(1.5) and r[("b", 10.0)] == pytest.approx(1.5)


def test_grids_start_at_first_incumbent_and_end_at_budget() -> None:
    df = _frame()
    last = float(df["told_time"].max())
    g = analysis.default_grids(df, "time", "log", {"f": last / 2})["f"]
    assert g[0] == pytest.approx(1.0) and g[-1] == pytest.approx(last / 2) and np.all(np.diff(g) > 0)
    # runs that all ended before the budget (an evaluation cap): the axis ends at the last result
    g = analysis.default_grids(df, "time", "log", {"f": 100 * last})["f"]
    assert g[-1] == pytest.approx(last)
    e = analysis.default_grids(df, "evaluations", "linear")["f"]
    np.testing.assert_array_equal(e, [1.0, 2.0, 3.0])


def test_budget_table_statistics_and_formats() -> None:
    values = pd.DataFrame({"benchmark": ["f"] * 4 + ["g"] * 4, "optimizer": ["a", "a", "b", "b"] * 2,
                           "repetition": [0, 1] * 4, "value": [1.0, 3.0, 0.5, 0.7, 10.0, 12.0, 20.0, 22.0]})
    t = analysis.budget_table(values, {"f": ("evaluations", 50), "g": ("time", 100.0)}, {"f": 0.25, "g": None})
    row = t[(t.benchmark == "f") & (t.optimizer == "a")].iloc[0]
    assert row["mean"] == 2.0 and row["sem"] == pytest.approx(np.std([1, 3], ddof=1) / math.sqrt(2)) and row["n"] == 2
    md = analysis.to_markdown(t, "caption here")
    lines = md.splitlines()
    assert lines[0] == "| Benchmark (optimum) | Budget | a | b |"
    # two repetitions: no method is marked best (noise presented as a ranking, issue 25)
    assert "| f (0.25) | 50 evals | 2.0 ± 1.0 | 0.60 ± 0.10 |" in lines
    assert "| g | 100 s | 11.0 ± 1.0 | 21.0 ± 1.0 |" in lines and lines[-1] == "caption here"
    csv = pd.read_csv(__import__("io").StringIO(analysis.to_csv(t)))
    assert list(csv.columns[:6]) == ["benchmark", "optimizer", "axis", "at", "n", "mean"] and len(csv) == 4
    assert r"\textbf" not in analysis.to_latex(t)
    # three repetitions: the best mean is bold
    values3 = pd.concat([values, pd.DataFrame({"benchmark": ["f", "f", "g", "g"], "optimizer": ["a", "b"] * 2,
                                               "repetition": [2] * 4, "value": [2.0, 0.6, 11.0, 21.0]})])
    t3 = analysis.budget_table(values3, {"f": ("evaluations", 50), "g": ("time", 100.0)}, {"f": 0.25, "g": None})
    lines = analysis.to_markdown(t3).splitlines()
    assert any(line.startswith("| f (0.25) | 50 evals |") and "| **0.60" in line for line in lines)
    assert any(line.startswith("| g | 100 s | **11.0") for line in lines)
    tex = analysis.to_latex(t3, "mean ± s.e. of 3_runs", label="tab:x")
    assert r"\begin{tabular}" in tex and r"\textbf{0.600 $\pm$" in tex and r"3\_runs" in tex
    assert r"\label{tab:x}" in tex and tex.count(r"\\") >= 3


def test_format_cell_decimals_follow_the_standard_error() -> None:
    assert analysis.format_cell(0.655, 0.27) == "0.66 ± 0.27"
    assert analysis.format_cell(1269.63, 2.9) == "1269.6 ± 2.9"
    assert analysis.format_cell(float("nan"), 1.0) == "n/a"


@pytest.fixture(scope="module")
def result_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """Real result files from the runner for a tiny protocol."""
    root = tmp_path_factory.mktemp("proj")
    proto_path = root / "tiny.yaml"
    proto_path.write_text(yaml.safe_dump({
        "benchmarks": ["branin", {"name": "branin_mf", "budget": {"seconds": 300}}],
        "optimizers": ["random_search", {"name": "random_search", "label": "rs2"}],
        "repetitions": 3, "budget": {"evaluations": 8}, "workers": 2, "quantity": "regret",
    }))
    proto = load_protocol(proto_path)
    paths = []
    for job in proto.jobs():
        bench = registry.make_benchmark(job.benchmark.name, job.benchmark.settings)
        out = run(bench, registry.get_optimizer(job.optimizer.name), seed=job.seed,
                  budget_evals=job.benchmark.budget.evaluations, budget_seconds=job.benchmark.budget.seconds,
                  workers=proto.workers, extra_provenance={"protocol": proto.name, "benchmark_label": job.benchmark.label,
                                                           "optimizer_label": job.optimizer.label,
                                                           "repetition": job.repetition})
        path = root / job.result_path
        path.parent.mkdir(parents=True, exist_ok=True)
        write_result(path, out.rows, out.provenance)
        paths.append(path)
    return proto_path, paths


def test_load_runs_tidy_frame(result_files) -> None:
    proto_path, paths = result_files
    proto = load_protocol(proto_path)
    df = analysis.load_protocol_results(proto, root=proto_path.parent)
    assert len(df.attrs["provenance"]) == len(paths) == 12
    assert set(df["optimizer"]) == {"random_search", "rs2"} and set(df["repetition"]) == {0, 1, 2}
    one = df[(df.benchmark == "branin") & (df.optimizer == "rs2") & (df.repetition == 1)]
    assert list(one["evaluation"]) == list(range(1, 9))
    assert one["seed"].iloc[0] == proto.job("branin", "rs2", 1).seed
    v = analysis.add_quantity(df, "regret")
    assert (v["value"].dropna() >= -1e-9).all()
    np.testing.assert_allclose(v["value"], df["incumbent_test_loss"] - df["optimum"])
    with pytest.raises(DataError, match="missing"):
        analysis.load_protocol_results(proto, root=proto_path.parent / "nowhere")


def test_regret_without_optimum_asks_for_one() -> None:
    df = pd.DataFrame({"benchmark": ["x"], "optimum": [np.nan], "incumbent_test_loss": [1.0]})
    with pytest.raises(DataError, match="add `optimum:`"):
        analysis.add_quantity(df, "regret")
    assert analysis.add_quantity(df, "regret", {"x": 0.25})["value"].iloc[0] == 0.75


@pytest.mark.slow  # ~8 s of plotting on a loaded 2-core machine; the smoke workflow test covers it too
def test_report_writes_every_declared_output(result_files, tmp_path: Path) -> None:
    proto_path, _ = result_files
    proto = load_protocol(proto_path)
    df = analysis.load_protocol_results(proto, root=proto_path.parent)
    runs, prov = tmp_path / "runs.csv.gz", tmp_path / "prov.json"
    analysis.write_aggregate(df, runs, prov)
    back = analysis.read_aggregate(runs, prov)
    assert len(back) == len(df) and len(back.attrs["provenance"]) == 12
    out = tmp_path / "reports" / proto.name
    written = analysis.write_protocol_report(proto, runs, prov, out)
    declared = [tmp_path / p for p in analysis.report_outputs(proto, str(tmp_path / "reports"))]
    # the declared outputs, and the statistics (their diagrams exist only where a test could run)
    extra = sorted(set(written) - set(map(str, declared)))
    assert set(map(str, declared)) <= set(written)
    names = {Path(p).name for p in extra}
    assert {"cd_budget.pdf", "cd_budget.png", "stats.csv"} <= names <= {"cd_25.pdf", "cd_25.png", "cd_budget.pdf",
                                                                        "cd_budget.png", "stats.csv"}
    for p in declared:
        assert Path(p).stat().st_size > 0, p
    assert Path(out / "curves_time.png").read_bytes()[:4] == b"\x89PNG"
    assert Path(out / "rank.pdf").read_bytes()[:4] == b"%PDF"
    page = (out / "index.md").read_text()
    assert "![" in page and "(curves_time.png)" in page and "## Provenance" in page and "rs2" in page
    # 2 benchmarks x 3 repetitions = 6 complete blocks: tested, with a diagram
    assert "## Statistics" in page and "### Tests at the budget" in page and "(cd_budget.png)" in page
    # the heading says where; the text under it does not say it again
    assert "\nAt the budget:" not in page and "\n6 complete blocks" in page
    table = pd.read_csv(out / "table.csv")
    assert set(table["axis"]) == {"evaluations", "time"} and set(table["n"]) == {3}
    analysis.write_index([proto], tmp_path / "reports", tmp_path / "reports" / "index.md")
    index = (tmp_path / "reports" / "index.md").read_text()
    # an index, one line per protocol with its link, headline and figures; not the pages concatenated
    line = next(x for x in index.splitlines() if x.startswith(f"| [`{proto.name}`]({proto.name}/index.md)"))
    assert f"[time]({proto.name}/curves_time.png)" in line and "best mean rank at the budget: `" in line
    assert "## Protocol" not in index and "## Provenance" not in index


@pytest.mark.slow  # plots, like the test above
def test_cli_analyse_writes_aggregate_and_report(result_files) -> None:
    from benchsuite.cli import main

    proto_path, _ = result_files
    root = proto_path.parent
    assert main(["analyse", str(proto_path), "--root", str(root)]) == 0
    proto = load_protocol(proto_path)
    for p in [*analysis.aggregate_outputs(proto), *analysis.report_outputs(proto)]:
        assert (root / p).stat().st_size > 0, p


def test_provenance_without_a_git_checkout_says_so_in_words() -> None:
    from benchsuite.analysis.report import _provenance_md

    lines = _provenance_md([{"git_commit": None, "finished_utc": "t", "benchsuite_version": "0.1"}])
    line = next(x for x in lines if x.startswith("- git commit:"))
    assert "None" not in line and "not a git checkout" in line
