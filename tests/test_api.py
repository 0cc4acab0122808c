"""The Python API (benchsuite.run / load_results / plot), ask/tell pairing and the public space converters."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import benchsuite
from benchsuite import api
from benchsuite.errors import (BudgetError, DataError, InvalidSettingError, OutputError, UnknownNameError,
                               UnsupportedError)
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.results import COLUMNS, load_result, provenance_path
from benchsuite.space import Binary, Categorical, Float, Integer, Ordinal, Space

ROOT = Path(__file__).resolve().parent.parent
RUN_LABELS = ("benchmark", "optimizer", "seed", "repetition", "evaluation")


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchsuite.cli", *args], capture_output=True, text=True, cwd=cwd)


# --------------------------------------------------------------------------------- import cost
def test_import_and_cli_parser_load_neither_pandas_nor_matplotlib() -> None:
    code = ("import sys, benchsuite; from benchsuite import cli; cli._parser(); "
            "print(sorted(m for m in ('pandas', 'matplotlib', 'benchsuite.api') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert benchsuite.run is api.run and benchsuite.load_results is api.load_results and benchsuite.plot is api.plot
    assert {"run", "load_results", "plot"} <= set(dir(benchsuite))
    with pytest.raises(AttributeError):
        benchsuite.no_such_thing  # noqa: B018


# ------------------------------------------------------------------------------------ run
def test_run_gives_the_cli_result(tmp_path: Path) -> None:
    """Same arguments, same rows: the API's frame equals the CLI's file, column for column."""
    cli_csv, api_csv = tmp_path / "cli.csv", tmp_path / "api.csv"
    proc = _cli("run", "-b", "branin_discrete", "-o", "regularized_evolution", "--seed", "3", "--budget-evals", "14",
                "--workers", "2", "--set", "population_size=5", "--set", "sample_size=2",
                "--benchmark-set", "cost_s=2.5", "--no-overhead", "--quiet", "--out", str(cli_csv))
    assert proc.returncode == 0, proc.stderr
    df = benchsuite.run("branin_discrete", "regularized_evolution", seed=3, budget_evals=14, workers=2,
                        optimizer_settings={"population_size": 5, "sample_size": 2},
                        benchmark_settings={"cost_s": 2.5}, include_overhead=False, out=api_csv)
    cli = load_result(cli_csv)
    assert len(df) == len(cli) == 14 and list(df.columns[-len(COLUMNS):]) == list(COLUMNS)
    # with --no-overhead only the measured overhead differs (ask/tell wall time)
    same = [c for c in COLUMNS if c != "overhead_s"]
    pd.testing.assert_frame_equal(df[same].reset_index(drop=True), cli[same])
    assert (df["told_time"].diff().dropna() >= 0).all() and df["start_time"].max() > 0
    assert df["benchmark"].eq("branin_discrete").all() and df["optimizer"].eq("regularized_evolution").all()
    assert df["seed"].eq(3).all() and df["evaluation"].tolist() == list(range(1, 15))
    # the file the API wrote is the CLI's, line for line, but for the timing fields of the header
    prov_api, prov_cli = df.attrs["provenance"], load_result(cli_csv).attrs["provenance"]
    # the command line runs with PYTHONHASHSEED=0 (recorded); an in-process API run has the caller's
    drop = {"finished_utc", "path", "python_hash_seed"}
    assert {k: v for k, v in prov_api.items() if k not in drop} == {k: v for k, v in prov_cli.items() if k not in drop}
    assert prov_api["optimizer_settings"] == {"population_size": 5, "sample_size": 2, "avoid_duplicates": True,
                                              "valid_only": True}
    api_file = load_result(api_csv)
    pd.testing.assert_frame_equal(api_file[same], cli[same])
    # without `out`, nothing is written and the frame is the same
    again = benchsuite.run("branin_discrete", "regularized_evolution", seed=3, budget_evals=14, workers=2,
                           optimizer_settings={"population_size": 5, "sample_size": 2},
                           benchmark_settings={"cost_s": 2.5}, include_overhead=False)
    pd.testing.assert_frame_equal(again[list(RUN_LABELS) + same], df[list(RUN_LABELS) + same])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["api.csv", "api.provenance.json", "cli.csv",
                                                          "cli.provenance.json"]


def test_run_accepts_classes_and_instances() -> None:
    from benchsuite.registry import get_benchmark, get_optimizer

    kw = {"seed": 5, "budget_evals": 6, "include_overhead": False}
    by_name = benchsuite.run("branin", "random_search", benchmark_settings={"cost_s": 3.0}, **kw)
    by_class = benchsuite.run(get_benchmark("branin"), get_optimizer("random_search"),
                              benchmark_settings={"cost_s": 3.0}, **kw)
    by_instance = benchsuite.run(get_benchmark("branin")(cost_s=3.0), get_optimizer("random_search"), **kw)
    keep = ["config", "loss", "cost_s", "incumbent_test_loss", "end_time"]
    pd.testing.assert_frame_equal(by_name[keep], by_class[keep])
    pd.testing.assert_frame_equal(by_name[keep], by_instance[keep])
    assert by_name["cost_s"].eq(3.0).all() and by_name["end_time"].tolist() == [3.0 * k for k in range(1, 7)]
    other_seed = benchsuite.run("branin", "random_search", seed=6, budget_evals=6)
    assert not other_seed["config"].equals(by_name["config"])


@pytest.mark.parametrize("kwargs, error, message", [
    ({"benchmark": "branin", "optimizer": "random_serch"}, UnknownNameError, "did you mean 'random_search'"),
    ({"benchmark": "brainin", "optimizer": "random_search"}, UnknownNameError, "unknown benchmark 'brainin'"),
    ({"benchmark": "branin", "optimizer": "random_search", "budget_evals": 0}, BudgetError, "positive"),
    ({"benchmark": "branin", "optimizer": "random_search", "budget_evals": None}, BudgetError, "give a budget"),
    ({"benchmark": "branin", "optimizer": "random_search", "optimizer_settings": {"n_init": 3}},
     InvalidSettingError, "no setting"),
    ({"benchmark": "branin", "optimizer": "random_search", "benchmark_settings": {"cost_s": "abc"}},
     InvalidSettingError, "cost_s"),
    ({"benchmark": "branin", "optimizer": "simulated_annealing"}, UnsupportedError, "supports"),
    ({"benchmark": 3, "optimizer": "random_search"}, InvalidSettingError, "benchmark must be"),
    ({"benchmark": "branin", "optimizer": 3.5}, InvalidSettingError, "optimizer must be"),
])
def test_run_errors_are_one_line_suite_errors(kwargs, error, message) -> None:
    kwargs = {"budget_evals": 5, **kwargs}
    with pytest.raises(error, match=message) as info:
        benchsuite.run(**kwargs)
    assert "\n" not in str(info.value)


def test_run_refuses_instances_it_cannot_seed_and_bad_outputs(tmp_path: Path) -> None:
    from benchsuite.registry import get_benchmark, get_optimizer

    bench = get_benchmark("branin")()
    with pytest.raises(InvalidSettingError, match="constructor"):
        benchsuite.run(bench, "random_search", budget_evals=3, benchmark_settings={"cost_s": 1.0})
    opt = get_optimizer("random_search")(bench.space, bench.fidelity, 0)
    with pytest.raises(InvalidSettingError, match="not an instance"):
        benchsuite.run(bench, opt, budget_evals=3)
    with pytest.raises(OutputError, match="does not exist"):
        benchsuite.run("branin", "random_search", budget_evals=3, out=tmp_path / "missing" / "r.csv")
    with pytest.raises(OutputError, match="directory"):
        benchsuite.run("branin", "random_search", budget_evals=3, out=tmp_path)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------- load_results
@pytest.fixture(scope="module")
def result_folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("results")
    (root / "branin" / "random_search").mkdir(parents=True)
    (root / "branin" / "sa").mkdir(parents=True)
    for seed in (0, 1, 2):
        benchsuite.run("branin", "random_search", seed=seed, budget_evals=8 + seed,
                       out=root / "branin" / "random_search" / f"rep{seed:03d}.csv")
    for seed in (0, 1):
        benchsuite.run("branin_discrete", "simulated_annealing", seed=seed, budget_evals=10,
                       out=root / "branin" / "sa" / f"rep{seed:03d}.csv")
    return root


def test_load_results_folder_files_and_lists(result_folder: Path) -> None:
    df = benchsuite.load_results(result_folder)
    assert len(df) == 8 + 9 + 10 + 10 + 10
    assert set(RUN_LABELS) | set(COLUMNS) <= set(df.columns)
    runs = df.groupby(["benchmark", "optimizer", "seed"]).size().to_dict()
    assert runs == {("branin", "random_search", 0): 8, ("branin", "random_search", 1): 9,
                    ("branin", "random_search", 2): 10, ("branin_discrete", "simulated_annealing", 0): 10,
                    ("branin_discrete", "simulated_annealing", 1): 10}
    provs = df.attrs["provenance"]
    assert len(provs) == 5 and all(Path(p["path"]).is_file() for p in provs)
    one = result_folder / "branin" / "random_search" / "rep001.csv"
    single = benchsuite.load_results(one)
    assert len(single) == 9 and single["seed"].eq(1).all() and single["evaluation"].tolist() == list(range(1, 10))
    # the file's own columns are what pandas reads from it
    pd.testing.assert_frame_equal(single[list(COLUMNS)], load_result(one)[list(COLUMNS)])
    pair = benchsuite.load_results([one, str(result_folder / "branin" / "sa")])
    assert len(pair) == 9 + 20 and pair["optimizer"].nunique() == 2


def _good_text(result_folder: Path) -> tuple[str, str]:
    """A good result's CSV text and its provenance file's text."""
    good = result_folder / "branin" / "random_search" / "rep002.csv"
    return good.read_text(encoding="utf-8"), provenance_path(good).read_text(encoding="utf-8")


def _drop_column(text: str, column: str) -> str:
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    i = rows[0].index(column)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([r[:i] + r[i + 1:] for r in rows])
    return buf.getvalue()


def _set_status(text: str, status: str) -> str:
    lines = text.split("\n")
    parts = lines[2].split(",")
    parts[2] = status
    lines[2] = ",".join(parts)
    return "\n".join(lines)


KEEP = object()  # the provenance file as it was
CORRUPTIONS = {  # (the CSV's text, the provenance file's text or None for none) -> the message
    "empty": (lambda t, p: ("", KEEP), "not a benchsuite result file"),
    "cut mid-row": (lambda t, p: (t[: t.rindex("\n", 0, len(t) - 1) + 40], KEEP), "truncated"),
    "cut after a row": (lambda t, p: (t[: t.rindex("\n", 0, len(t) - 1) + 1], KEEP), "truncated"),
    "header only": (lambda t, p: (t.split("\n", 1)[0] + "\n", KEEP), "not a readable|truncated"),
    "no header row": (lambda t, p: (t.split("\n", 1)[1], KEEP), "not a benchsuite result file"),
    "no provenance file": (lambda t, p: (t, None), "rep007.provenance.json is missing"),
    "bad provenance json": (lambda t, p: (t, p.replace('"provenance"', '"provenance', 1)), "unreadable provenance"),
    "future format": (lambda t, p: (t, p.replace('"version": 2', '"version": 9', 1)), "format 9"),
    "another run's provenance": (lambda t, p: (t, p.replace('"data_sha256": "', '"data_sha256": "1', 1)),
                                 "does not match its provenance file"),
    "missing column": (lambda t, p: (_drop_column(t, "told_time"), KEEP), "told_time"),
    "bad status": (lambda t, p: (_set_status(t, "maybe"), KEEP), "status 'maybe'"),
    "extra field": (lambda t, p: (t.replace("\n1,", "\n1,0,", 1), KEEP), "not a readable|malformed"),
    "not a csv": (lambda t, p: ("trial,loss\n1,2\n", KEEP), "not a benchsuite result file"),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_broken_result_files_are_one_line_data_errors_naming_the_file(result_folder: Path, tmp_path: Path,
                                                                      name: str) -> None:
    corrupt, message = CORRUPTIONS[name]
    text, prov = _good_text(result_folder)
    bad = tmp_path / "sub" / "rep007.csv"
    bad.parent.mkdir()
    bad_text, bad_prov = corrupt(text, prov)
    bad.write_text(bad_text, encoding="utf-8")
    if bad_prov is not None:
        provenance_path(bad).write_text(prov if bad_prov is KEEP else bad_prov, encoding="utf-8")
    assert (bad_text, bad_prov) != (text, KEEP)
    for source in (bad, tmp_path, [result_folder / "branin" / "random_search" / "rep000.csv", bad]):
        with pytest.raises(DataError, match=message) as info:
            benchsuite.load_results(source)
        assert str(bad) in str(info.value) and "\n" not in str(info.value)


def test_non_utf8_and_missing_paths(tmp_path: Path) -> None:
    bad = tmp_path / "rep000.csv"
    bad.write_bytes(b"\xff\xfe\x00garbage\n")
    with pytest.raises(DataError, match="rep000.csv") as info:
        benchsuite.load_results(bad)
    assert "\n" not in str(info.value)
    with pytest.raises(DataError, match="no such result file or folder"):
        benchsuite.load_results(tmp_path / "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no result files"):
        benchsuite.load_results(empty)


# ------------------------------------------------------------------------------------- plot
def test_plot_draws_the_median_and_quartiles_of_the_runs(result_folder: Path, tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    df = benchsuite.load_results(result_folder)
    fig = benchsuite.plot(df, quantity="incumbent_test_loss", x="evaluations", out=tmp_path / "fig.png")
    assert isinstance(fig, Figure)
    assert (tmp_path / "fig.png").stat().st_size > 0 and (tmp_path / "fig.pdf").stat().st_size > 0
    panels = [ax for ax in fig.axes if ax.get_visible()]
    # each panel its own count (3 runs of random search on branin, 2 of annealing on branin_discrete), not a
    # range over the figure that leaves the reader to guess which curve has 2
    assert [ax.get_title() for ax in panels] == ["branin (3 repetitions)", "branin_discrete (2 repetitions)"]
    (line,) = [ln for ln in panels[0].get_lines() if ln.get_label() == "random_search"]
    # the median of the three runs' incumbents after n evaluations (a finished run keeps its last incumbent)
    rs = df[df["benchmark"] == "branin"]
    wide = rs.pivot(index="evaluation", columns="seed", values="incumbent_test_loss").ffill()
    assert wide.shape == (10, 3)
    np.testing.assert_allclose(line.get_xdata(), wide.index.to_numpy(float))
    np.testing.assert_allclose(line.get_ydata(), np.median(wide.to_numpy(float), axis=1))
    band = panels[0].collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(np.percentile(wide.to_numpy(float), 25, axis=1).min())
    assert panels[0].get_xlabel() == "function evaluations"

    timed = benchsuite.plot(result_folder, quantity="incumbent_loss", x="time")
    ax = [a for a in timed.axes if a.get_visible()][0]
    assert ax.get_xscale() == "log" and "wall-clock" in ax.get_xlabel() and ax.get_ylabel() == "incumbent's validation loss"


def test_plot_errors(result_folder: Path) -> None:
    df = benchsuite.load_results(result_folder)
    with pytest.raises(InvalidSettingError, match="x='epochs'"):
        benchsuite.plot(df, x="epochs")
    with pytest.raises(InvalidSettingError, match="quantity='accuracy'"):
        benchsuite.plot(df, quantity="accuracy")
    with pytest.raises(DataError, match="share repetition"):
        benchsuite.plot(pd.concat([df, df]))
    with pytest.raises(DataError, match="lacks column"):
        benchsuite.plot(df[list(COLUMNS)])
    with pytest.raises(DataError, match="regret"):
        benchsuite.plot(df.assign(optimum=np.nan), quantity="regret")
    regret = benchsuite.plot(df, quantity="regret")  # both benchmarks record their optimum
    line = [ln for ln in regret.axes[0].get_lines() if ln.get_label() == "random_search"][0]
    assert np.all(line.get_ydata() >= -1e-9) and line.get_ydata()[-1] < line.get_ydata()[0]


# ------------------------------------------------------------------------- ask/tell pairing
class _Pairing(Optimizer):
    """Random search that records every suggestion and checks what tell and pending show it."""

    name = "pairing_probe"
    description = "records suggestions (test only)"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed"}, fidelity="ignores", parallel=True)
    made: list[Suggestion] = []
    told: list[Trial] = []
    pendings: list[tuple[Trial, ...]] = []

    def ask(self, pending=()):
        type(self).pendings.append(tuple(pending))
        n = len(type(self).made)
        s = Suggestion(self.space.sample(self.rng), self.full_fidelity(), info={"asked": n, "tag": f"s{n}"})
        type(self).made.append(s)
        return s

    def tell(self, trial, result):
        type(self).told.append(trial)
        super().tell(trial, result)


def test_every_suggestion_gets_its_trial_id_and_its_info_reaches_tell(tmp_path: Path) -> None:
    _Pairing.made, _Pairing.told, _Pairing.pendings = [], [], []
    df = benchsuite.run("branin", _Pairing, seed=1, budget_evals=9, workers=3, out=tmp_path / "p.csv")
    made, told = _Pairing.made, _Pairing.told
    assert [s.trial_id for s in made] == list(range(9))
    by_id = {s.trial_id: s for s in made}
    assert sorted(t.id for t in told) == list(range(9))
    for t in told:
        s = by_id[t.id]
        assert t.info is s.info and t.info["asked"] == t.id and t.config == s.config
    # pending trials carry their suggestion's info too
    seen = [p for ps in _Pairing.pendings for p in ps]
    assert seen and all(p.info is by_id[p.id].info for p in seen)
    # the result file's info column is unchanged: the suggestion's info (no trial id added)
    infos = [json.loads(x) for x in df["info"]]
    assert [i["tag"] for i in infos] == [f"s{t}" for t in df["trial"]] and all("trial_id" not in i for i in infos)


def test_trial_from_suggestion() -> None:
    s = Suggestion({"x": 1.0}, 2.0, info={"a": 1})
    t = Trial.from_suggestion(s, 7, worker=2)
    assert (t.id, t.config, t.fidelity, t.worker, s.trial_id) == (7, {"x": 1.0}, 2.0, 2, 7) and t.info is s.info
    again = Trial.from_suggestion(s, 8, config={"x": 1.5}, fidelity=None)
    assert s.trial_id == 7 and again.id == 8 and again.config == {"x": 1.5} and again.fidelity is None
    assert Suggestion({"x": 1.0}).trial_id is None and Trial(0, {}, None).info == {}
    assert Suggestion({"x": 1.0}, info={"a": 1}) == s.__class__({"x": 1.0}, None, {"a": 1})  # trial_id not compared
    with pytest.raises(AttributeError):
        s.trial_id = 3  # frozen for plugins


# ----------------------------------------------------------------------------- converters
MIXED = Space([Float("lr", 1e-4, 1.0, log=True), Integer("n", 1, 64, log=True), Ordinal("o", (0.1, 0.5, 2.0)),
               Categorical("c", ("x", "y", "z")), Binary("b")])


def test_public_converters_round_trip_and_bridges_use_them() -> None:
    pytest.importorskip("ConfigSpace")
    pytest.importorskip("optuna")
    from benchsuite import convert
    from benchsuite.optimizers import smac_bridge, tpe_bridge

    assert smac_bridge.to_configspace is convert.to_configspace
    assert tpe_bridge.to_optuna_distributions is convert.to_optuna_distributions
    cs = convert.to_configspace(MIXED, seed=0)
    assert sorted(cs.keys()) == sorted(MIXED.names) and cs["lr"].log and list(cs["o"].sequence) == [0.1, 0.5, 2.0]
    for c in cs.sample_configuration(10):
        assert MIXED.validate(convert.from_configspace(MIXED, c)) == convert.from_configspace(MIXED, c)
    a = [dict(c) for c in convert.to_configspace(MIXED, seed=4).sample_configuration(5)]
    assert a == [dict(c) for c in convert.to_configspace(MIXED, seed=4).sample_configuration(5)]
    d = convert.to_optuna_distributions(MIXED)
    assert d["o"].high == 2 and d["lr"].log and list(d["c"].choices) == ["x", "y", "z"]
    assert list(convert.to_optuna_distributions(MIXED, "categorical")["o"].choices) == [0, 1, 2]
    for cfg in MIXED.sample(np.random.default_rng(0), 10):
        assert convert.from_optuna(MIXED, convert.optuna_params(MIXED, cfg)) == MIXED.validate(cfg)


def test_converters_refuse_what_has_no_equivalent(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from benchsuite import convert
    from benchsuite.testing import ToyChainSpace

    with pytest.raises(UnsupportedError, match="ToyChainSpace"):
        convert.to_configspace(ToyChainSpace())
    with pytest.raises(UnsupportedError, match="ordinal_as"):
        convert.to_optuna_distributions(MIXED, "levels")
    real = importlib.import_module

    def fake(name: str, *a, **k):
        if name.split(".")[0] in ("optuna", "ConfigSpace"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", fake)
    for call, extra in ((lambda: convert.to_configspace(MIXED), "smac"),
                        (lambda: convert.to_optuna_distributions(MIXED), "tpe")):
        with pytest.raises(UnsupportedError, match=re.escape(f"pip install 'benchsuite[{extra}]'")) as info:
            call()
        assert "\n" not in str(info.value)


# ------------------------------------------------------------------------------ README example
def _readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README's Python section has no ```python block"
    return match.group(1)


def test_readme_python_api_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    code = _readme_example()
    assert "benchsuite.run(" in code and "benchsuite.load_results(" in code and "benchsuite.plot(" in code
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, "README.md (Python)", "exec"), namespace)
    runs, fig = namespace["runs"], namespace["fig"]
    assert len(list(tmp_path.glob("*.csv"))) == 4 and (tmp_path / "curves.png").is_file()
    assert len(runs) == 4 * 20 and runs.groupby(["optimizer", "seed"]).ngroups == 4
    assert all(math.isfinite(v) for v in runs["incumbent_test_loss"])
    assert [ax.get_title() for ax in fig.axes if ax.get_visible()] == ["nb201_cifar10 (2 repetitions)"]
    assert "incumbent_test_loss" in capsys.readouterr().out
