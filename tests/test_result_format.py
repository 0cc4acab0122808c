"""Result files any tool reads (issue 27, item 2): format 2 is a plain CSV with flat config_* columns and
its provenance in a JSON file beside it; format-1 files (a "# benchsuite-result 1" first line) still load."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import benchsuite
from benchsuite.convert import to_optuna_trials, to_syne_tune_results
from benchsuite.errors import DataError, OutputError
from benchsuite.registry import make_benchmark
from benchsuite.results import (COLUMNS, FORMAT_VERSION, MAGIC, format_result, load_result, provenance_path,
                                read_provenance, write_result)

FORMAT1 = Path(__file__).parent / "data" / "result_format1.csv"  # written by the format-1 writer


def _format1_frame() -> pd.DataFrame:
    """What the format-1 reader returned: the CSV after the first line, and the provenance of that line."""
    df = pd.read_csv(FORMAT1, skiprows=1, dtype={"config": str, "incumbent": str, "info": str})
    first = FORMAT1.read_text(encoding="utf-8").split("\n", 1)[0]
    df.attrs["provenance"] = json.loads(first.split(" ", 3)[3])["provenance"]
    return df


def _rows(df: pd.DataFrame) -> list[dict]:
    rows = df[list(COLUMNS)].to_dict("records")
    for r in rows:
        r["info"] = json.loads(r["info"])
    return rows


@pytest.fixture()
def fresh(tmp_path: Path) -> Path:
    out = tmp_path / "run.csv"
    benchsuite.run("branin_discrete", "simulated_annealing", seed=3, budget_evals=6, workers=2, out=out)
    return out


def test_pandas_reads_a_fresh_result_file_with_no_options(fresh: Path) -> None:
    space = make_benchmark("branin_discrete").space
    plain = pd.read_csv(fresh)
    flat = [f"config_{n}" for n in space.names]
    assert list(plain.columns) == [*COLUMNS, *flat] and plain.shape == (6, len(COLUMNS) + len(space))
    assert not fresh.read_text().startswith("#") and set(plain["status"]) <= {"ok", "failed"}
    for _, row in plain.iterrows():  # the flat columns are the configuration's values, as the space gives them
        config = json.loads(row["config"])
        assert [row[c] for c in flat] == [config[n] for n in space.names]
    # the provenance beside it, named after it, plain JSON
    side = fresh.with_name("run.provenance.json")
    assert provenance_path(fresh) == side
    record = json.loads(side.read_text())
    assert record["format"] == "benchsuite-result" and record["version"] == FORMAT_VERSION == 2
    assert record["provenance"]["seed"] == 3 and record["provenance"]["n_trials"] == 6
    assert load_result(fresh).attrs["provenance"] == record["provenance"] == read_provenance(fresh)


def test_one_reader_gives_the_same_frame_for_both_formats(tmp_path: Path) -> None:
    """A format-1 file loads exactly as the format-1 reader loaded it; written again as format 2, it loads the same."""
    old = _format1_frame()
    v1 = load_result(FORMAT1)
    pd.testing.assert_frame_equal(v1, old)
    assert v1.attrs["provenance"] == old.attrs["provenance"] and list(v1.columns) == list(COLUMNS)
    v2_path = tmp_path / "again.csv"
    write_result(v2_path, _rows(v1), v1.attrs["provenance"])
    v2 = load_result(v2_path)
    pd.testing.assert_frame_equal(v2, v1)
    assert v2.attrs["provenance"] == v1.attrs["provenance"]
    assert not v2_path.read_text().startswith(MAGIC) and "config_x1" in v2_path.read_text().split("\n", 1)[0]
    # the API reads both: one file's provenance is a dict, a folder's a list
    one = benchsuite.load_results(FORMAT1)
    assert one.attrs["provenance"]["seed"] == 3
    both = benchsuite.load_results([FORMAT1, v2_path])
    assert [p["seed"] for p in both.attrs["provenance"]] == [3, 3]


def test_a_run_and_one_loaded_file_have_their_provenance_as_a_dict(fresh: Path) -> None:
    df = benchsuite.load_results(fresh)
    assert df.attrs["provenance"]["seed"] == 3 and df.attrs["provenance"]["path"] == str(fresh)
    ran = benchsuite.run("branin", "random_search", seed=5, budget_evals=3)
    assert ran.attrs["provenance"]["seed"] == 5
    folder = benchsuite.load_results(fresh.parent)
    assert isinstance(folder.attrs["provenance"], list) and folder.attrs["provenance"][0]["seed"] == 3


def _error(path: Path) -> str:
    with pytest.raises(DataError) as info:
        load_result(path)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg
    return msg


def _unchanged(*paths: Path):
    before = {p: p.read_bytes() for p in paths if p.exists()}
    return lambda: all(p.read_bytes() == b for p, b in before.items()) and all(p.exists() for p in before)


def test_a_missing_provenance_file_is_one_clear_error_and_nothing_is_touched(fresh: Path) -> None:
    side = provenance_path(fresh)
    side.unlink()
    same = _unchanged(fresh)
    msg = _error(fresh)
    assert "run.provenance.json is missing" in msg and "copy both together" in msg
    with pytest.raises(DataError, match="is missing"):
        benchsuite.load_results(fresh)
    assert same() and not side.exists()


@pytest.mark.parametrize("damage, message", [
    (lambda t: t[: len(t) // 2], "unreadable provenance file"),
    (lambda t: "[1, 2]", "not a benchsuite provenance file"),
    (lambda t: t.replace('"version": 2', '"version": 7'), "result format 7"),
    (lambda t: t.replace('"data_sha256": "', '"data_sha256": "0'), "does not match its provenance file"),
    (lambda t: t.replace('"n_trials": 6', '"n_trials": 9'), "records 9 trials but it has 6 rows"),
    (lambda t: t.replace('"seed": 3', '"seed": -3'), "seed -3"),
])
def test_a_corrupt_provenance_file_is_one_clear_error(fresh: Path, damage, message) -> None:
    side = provenance_path(fresh)
    side.write_text(damage(side.read_text()))
    same = _unchanged(fresh, side)
    assert message in _error(fresh)
    assert same()


def test_a_changed_or_swapped_csv_does_not_match_its_provenance(fresh: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.csv"
    benchsuite.run("branin_discrete", "simulated_annealing", seed=4, budget_evals=6, workers=2, out=other)
    fresh.write_bytes(other.read_bytes())  # another run's CSV with this run's provenance (seed 3)
    assert "sha256" in _error(fresh)
    fresh.write_bytes(other.read_bytes()[:-5])
    assert "last row is incomplete" in _error(fresh)
    fresh.write_text("a,b\n1,2\n")
    assert "not a benchsuite result file" in _error(fresh)


def test_a_failed_write_leaves_the_earlier_result_whole(fresh: Path, monkeypatch) -> None:
    """The CSV is written and fsynced before the provenance file is touched: a full disk changes nothing."""
    import benchsuite.results as results

    side = provenance_path(fresh)
    same = _unchanged(fresh, side)

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(results.os, "fsync", full)
    with pytest.raises(OutputError, match="No space left"):
        write_result(fresh, [{"trial": 0, "config": '{"x1":0.0,"x2":0.0}'}], {"seed": 9})
    monkeypatch.undo()
    assert same() and sorted(p.name for p in fresh.parent.iterdir()) == ["run.csv", "run.provenance.json"]
    assert len(load_result(fresh)) == 6


def test_flat_columns_follow_the_configurations(tmp_path: Path) -> None:
    """One config_<name> per variable in the configurations' (the space's) order; lists as JSON; none for
    configurations that are not objects (architecture graphs written as lists)."""
    rows = [{"trial": 0, "config": '{"b":1,"a":[1,2],"c":"x,y"}'}, {"trial": 1, "config": '{"b":2.5,"a":[],"c":"z"}'}]
    text = format_result(rows, {})
    header, first = text.csv.split("\n")[:2]
    assert header.split(",")[len(COLUMNS):] == ["config_b", "config_a", "config_c"]
    assert first.endswith(',1,"[1,2]","x,y"')
    assert format_result([{"trial": 0, "config": "[[1,2],[3]]"}], {}).csv.split("\n")[0] == ",".join(COLUMNS)


def test_provenance_file_names() -> None:
    assert provenance_path("a/rep000.csv") == Path("a/rep000.provenance.json")
    assert provenance_path("a/rep000.csv.partial.csv") == Path("a/rep000.csv.partial.provenance.json")
    assert provenance_path("a/run") == Path("a/run.provenance.json")
    long = provenance_path("x" * 250 + ".csv")
    assert len(long.name) < 255 and long.name.endswith(".provenance.json")


# -- conversions: the columns Optuna's and Syne Tune's tools read (neither library needed) ----------
def test_to_optuna_trials_has_the_trials_dataframe_columns() -> None:
    df = load_result(FORMAT1)
    trials = to_optuna_trials(df)
    assert list(trials.columns) == ["number", "value", "datetime_start", "datetime_complete", "duration",
                                    "params_x1", "params_x2", "user_attrs_fidelity", "user_attrs_worker",
                                    "user_attrs_cost_s", "state"]
    assert list(trials["number"]) == sorted(df["trial"]) and set(trials["state"]) == {"COMPLETE"}
    by_trial = df.set_index("trial")
    for _, t in trials.iterrows():
        row = by_trial.loc[t["number"]]
        assert t["value"] == row["loss"] and t["params_x1"] == json.loads(row["config"])["x1"]
        assert t["duration"] == pd.Timedelta(seconds=row["told_time"]) - pd.Timedelta(seconds=row["ask_time"])
        assert t["datetime_start"] == pd.Timestamp("1970-01-01") + pd.Timedelta(seconds=row["ask_time"])
    # with the space: an ordinal variable as its level index, as to_optuna_distributions encodes it
    space = make_benchmark("branin_discrete").space
    coded = to_optuna_trials(df, space=space)
    assert list(coded["params_x1"]) == [space["x1"].to_code(v) for v in trials["params_x1"]]
    failed = df.assign(status="failed")
    assert set(to_optuna_trials(failed)["state"]) == {"FAIL"} and to_optuna_trials(failed)["value"].isna().all()


def test_to_syne_tune_results_has_the_results_columns() -> None:
    df = load_result(FORMAT1)
    res = to_syne_tune_results(df, metric="objective")
    assert list(res.columns) == ["trial_id", "objective", "st_worker_time", "st_worker_iter", "st_tuner_time",
                                 "st_status", "config_x1", "config_x2"]
    assert list(res["trial_id"]) == list(df["trial"])  # in the order the results arrived
    assert list(res["objective"]) == list(df["loss"]) and list(res["st_tuner_time"]) == list(df["told_time"])
    assert list(res["config_x2"]) == [json.loads(c)["x2"] for c in df["config"]]
    assert set(res["st_status"]) == {"Completed"}
    mf = benchsuite.run("branin_mf", "hyperband", seed=0, budget_evals=6)
    assert "fidelity" in to_syne_tune_results(mf).columns


def test_conversions_take_one_run_at_a_time(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for seed, out in ((0, a), (1, b)):
        benchsuite.run("branin", "random_search", seed=seed, budget_evals=3, out=out)
    both = benchsuite.load_results([a, b])
    with pytest.raises(DataError, match="holds 2 runs"):
        to_optuna_trials(both)
    assert len(to_syne_tune_results(benchsuite.load_results(a))) == 3
