"""The command line: results, one-line errors, no tracebacks, no partial files."""
import subprocess
import sys

import pandas as pd
import pytest

from benchsuite.results import TIMING_COLUMNS, load_result


def bs(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "benchsuite.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_run_writes_complete_result_and_is_reproducible(tmp_path):
    args = ["run", "--benchmark", "branin", "--optimizer", "random_search", "--seed", "0", "--budget-evals", "50"]
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert bs(*args, "--out", str(a)).returncode == 0
    assert bs(*args, "--out", str(b), "--quiet").returncode == 0
    da, db = load_result(a), load_result(b)
    assert len(da) == 50 and da["status"].eq("ok").all()
    keep = [c for c in da.columns if c not in TIMING_COLUMNS]
    pd.testing.assert_frame_equal(da[keep], db[keep])


def test_progress_goes_to_log_files_as_whole_lines(tmp_path):
    """stderr redirected to a file (the workflow's rep*.log) gets newline-terminated progress."""
    proc = bs("run", "-b", "branin", "-o", "random_search", "--budget-evals", "7", "--out", str(tmp_path / "r.csv"))
    assert proc.returncode == 0
    assert "random_search on branin: 7/7 trials" in proc.stderr and "\r" not in proc.stderr
    quiet = bs("run", "-b", "branin", "-o", "random_search", "--budget-evals", "7", "--out", str(tmp_path / "q.csv"),
               "--quiet")
    assert "trials" not in quiet.stderr


@pytest.mark.parametrize("args,message", [
    (["run", "-b", "nope", "-o", "random_search", "--budget-evals", "5"], "unknown benchmark 'nope'"),
    (["run", "-b", "branin", "-o", "randm_search", "--budget-evals", "5"], "did you mean 'random_search'"),
    (["run", "-b", "branin", "-o", "random_search", "--budget-evals", "5", "--set", "n_init=3"], "no setting(s) n_init"),
    (["run", "-b", "branin", "-o", "random_search", "--budget-evals", "0"], "positive integer"),
    (["run", "-b", "branin", "-o", "random_search", "--budget-evals", "-4"], "positive integer"),
    (["run", "-b", "branin", "-o", "random_search", "--budget-seconds", "-1"], "must be positive"),
    (["run", "-b", "branin", "-o", "random_search"], "give a budget"),
    (["run", "-b", "branin", "-o", "random_search", "--budget-evals", "5", "--benchmark-set", "cost=3"], "no setting(s) cost"),
    (["evaluate", "-b", "branin", "--config", '{"x1": 100, "x2": 1}'], "'x1': value 100 is not allowed"),
    (["evaluate", "-b", "branin_mf", "--config", '{"x1": 1, "x2": 1}', "--fidelity", "3"], "fidelity 's'"),
    (["describe", "nothing"], "no benchmark or optimizer named 'nothing'"),
])
def test_user_errors_are_one_line(tmp_path, args, message):
    out = tmp_path / "r.csv"
    proc = bs(*args, *(["--out", str(out)] if args[0] == "run" else []))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("benchsuite: error:"), proc.stderr
    assert message in lines[0]
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_unwritable_output_fails_before_running(tmp_path):
    proc = bs("run", "-b", "branin", "-o", "random_search", "--budget-evals", "5", "--out", str(tmp_path / "no" / "r.csv"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr
    proc = bs("run", "-b", "branin", "-o", "random_search", "--budget-evals", "5", "--out", str(tmp_path))
    assert proc.returncode == 2 and "is a directory" in proc.stderr


def test_list_and_describe():
    proc = bs("list")
    assert proc.returncode == 0 and "branin" in proc.stdout and "random_search" in proc.stdout
    desc = bs("describe", "hartmann6").stdout
    assert "6 variables" in desc and "-3.322" in desc
    assert "fidelity: s:" in bs("describe", "branin_mf").stdout
    assert "spaces" in bs("describe", "random_search").stdout


def test_evaluate_prints_json():
    import json

    proc = bs("evaluate", "-b", "branin", "--config", '{"x1": 3.141592653589793, "x2": 2.275}')
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["loss"] == pytest.approx(0.397887, abs=1e-6)


def _run_without_hash_seed(tmp_path, *args):
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    return subprocess.run([sys.executable, "-m", "benchsuite.cli", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=600)


def test_run_fixes_the_string_hash_seed(tmp_path) -> None:
    """`benchsuite run` re-executes itself with PYTHONHASHSEED=0 when it is unset, and records it."""
    out = tmp_path / "r.csv"
    proc = _run_without_hash_seed(tmp_path, "run", "-b", "branin", "-o", "random_search", "--budget-evals", "3",
                                  "-q", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert load_result(out).attrs["provenance"]["python_hash_seed"] == "0"


@pytest.mark.slow
def test_smac_runs_are_the_same_in_two_processes(tmp_path) -> None:
    """SMAC's suggestions used to depend on the process's string-hash seed (they differed from trial 21)."""
    frames = []
    for i in range(2):
        out = tmp_path / f"s{i}.csv"
        proc = _run_without_hash_seed(tmp_path, "run", "-b", "branin", "-o", "smac", "--seed", "7",
                                      "--budget-evals", "25", "--no-overhead", "-q", "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        frames.append(load_result(out).drop(columns=list(TIMING_COLUMNS)))
    assert frames[0].equals(frames[1])
