"""`benchsuite workflow`: protocols anywhere, results in --results, started from any directory (issue 14)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from benchsuite.cli import main
from benchsuite.cli_workflow import (
    check_lock,
    collect_protocols,
    protocol_files_of,
    split_workflow_argv,
    workflow_file,
)
from benchsuite.errors import OutputError
from benchsuite.protocol import load_protocol
from benchsuite.results import load_result
from test_workflow import planned_in as planned  # the one parser of dry-run output (tests/test_workflow.py)

ROOT = Path(__file__).resolve().parent.parent
BENCHSUITE = Path(sys.executable).parent / "benchsuite"
GOOD = {"benchmark": "branin", "optimizers": ["random_search"], "repetitions": 2,
        "budget": {"evaluations": 5}, "plots": {"x": ["evaluations"]}}


def workflow(cwd: Path, *args: str, timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    """``benchsuite workflow ARGS`` as a user types it, from ``cwd``."""
    return subprocess.run([str(BENCHSUITE), "workflow", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, **kw)


def write_protocol(folder: Path, name: str, doc: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


# -- fast ---------------------------------------------------------------------------------
def test_arguments_split_between_benchsuite_and_snakemake() -> None:
    ours, rest = split_workflow_argv(["a.yaml", "dir/", "--results", "r", "-n", "--cores", "4", "--config", "x=1"])
    assert ours == ["a.yaml", "dir/", "--results", "r"]
    assert rest == ["-n", "--cores", "4", "--config", "x=1"]  # in order, with their values
    ours, rest = split_workflow_argv(["a.yaml", "-j", "2", "--results=r", "b", "--", "--results", "x"])
    assert ours == ["a.yaml", "--results=r"] and rest == ["-j", "2", "b", "--results", "x"]


def test_the_workflow_is_found_next_to_the_package_not_in_the_current_directory(tmp_path: Path,
                                                                                monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Snakefile").write_text("rule all:\n    output: 'decoy'\n")
    # a clone: the repository's own Snakefile (a wheel has it at benchsuite/workflow/Snakefile, scripts/check_wheel.sh)
    assert workflow_file() == ROOT / "Snakefile"


def test_every_mistake_of_the_asked_protocols_at_once_one_line_each(tmp_path: Path, capsys) -> None:
    asked = tmp_path / "asked"
    good = write_protocol(asked, "good", GOOD)
    write_protocol(asked, "misspelt", {**GOOD, "repetitons": 2})
    write_protocol(asked, "negative", {**GOOD, "budget": {"evaluations": -3}})
    (asked / "syntax.yaml").write_text("benchmark: branin\n  optimizers: [x\n")  # multi-line YAML error
    write_protocol(tmp_path / "other", "all", GOOD)  # a reserved name
    write_protocol(tmp_path / "twin", "good", GOOD)  # the same name as asked/good.yaml
    results = tmp_path / "res"
    code = main(["workflow", str(asked), str(tmp_path / "other" / "all.yaml"), str(tmp_path / "twin" / "good.yaml"),
                 str(tmp_path / "nope.yaml"), "--results", str(results), "-n"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 6 and all(ln.startswith("benchsuite: error: ") for ln in err), err
    text = "\n".join(err)
    assert "misspelt.yaml: repetitons: unknown key" in text and "did you mean 'repetitions'" in text
    assert "negative.yaml: budget.evaluations: must be >= 1" in text
    assert "syntax.yaml: not valid YAML" in text
    assert "all.yaml: name: 'all' is reserved" in text
    assert f"protocol 'good' is also {good}" in text
    assert "nope.yaml: no such protocol file or folder" in text
    assert "Traceback" not in text
    assert not results.exists()  # nothing started, not even the folder


def test_folders_expand_to_their_protocols_without_the_set_file(tmp_path: Path) -> None:
    write_protocol(tmp_path / "p", "b", GOOD)
    write_protocol(tmp_path / "p", "a", GOOD)
    (tmp_path / "p" / "default_set.yaml").write_text("protocols: [a]\n")
    (tmp_path / "empty").mkdir()
    files, errors = protocol_files_of([tmp_path / "p", tmp_path / "p" / "a.yaml", tmp_path / "empty"])
    assert [f.name for f in files] == ["a.yaml", "b.yaml"]  # each once
    assert len(errors) == 1 and "holds no protocol files" in errors[0]
    protocols, errors = collect_protocols(files)
    assert list(protocols) == ["a", "b"] and errors == []


def test_dry_run_from_another_directory_plans_runs_in_results_and_no_table_build(tmp_path: Path) -> None:
    """Started outside the clone: no table is 'missing', every output lies under --results, and a
    broken protocol in another folder (not asked for) does not matter."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    mine = write_protocol(tmp_path / "mine", "mine", GOOD)
    write_protocol(tmp_path / "broken", "broken", {**GOOD, "optimizers": ["random_serch"]})
    results = tmp_path / "res"
    asked = [ROOT / "protocols" / "smoke.yaml", ROOT / "protocols" / "default_svm_table.yaml", mine]
    proc = workflow(elsewhere, *map(str, asked), "--results", "../res", "-n")
    assert proc.returncode == 0, proc.stderr
    jobs = planned(proc.stdout + proc.stderr)
    assert set(jobs) == {"run", "aggregate", "report_smoke", "report_default_svm_table", "report_mine", "index",
                         "all"}, jobs  # no table rule: the committed tables are found
    expected = sorted(str(results / p) for f in asked for p in load_protocol(f).result_paths())
    assert sorted(jobs["run"]) == expected
    assert jobs["index"] == [str(results / "reports" / "index.md")]
    assert all(o.startswith(str(results) + os.sep) for outs in jobs.values() for o in outs)
    assert list(elsewhere.iterdir()) == []  # nothing written where it was started
    assert not (results / "results").exists()  # a dry run writes no result


def test_stale_lock_is_cleared_with_one_line(tmp_path: Path, capsys) -> None:
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.output.lock").write_text(f"{tmp_path}/results/x.csv\n")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    records = tmp_path / ".snakemake" / "benchsuite"
    records.mkdir()
    (records / f"{socket.gethostname()}-{dead.pid}.json").write_text(
        f'{{"pid": {dead.pid}, "host": "{socket.gethostname()}", "start": null}}')
    check_lock(tmp_path)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cleared a stale Snakemake lock" in err[0]
    assert not locks.exists() and list(records.iterdir()) == []  # the dead process's record is gone too
    check_lock(tmp_path)  # nothing left to clear: silent
    assert capsys.readouterr().err == ""


def _locked_by_a_live_snakemake(folder: Path) -> tuple[Path, subprocess.Popen]:
    """Snakemake's lock in ``folder`` and a process whose command is Snakemake's working there, as
    `snakemake -d DIR` does (the caller kills it)."""
    locks = folder / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.output.lock").write_text(f"{folder}/results/x.csv\n")
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "snakemake"], cwd=folder)
    return locks, holder


def test_live_lock_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    locks, holder = _locked_by_a_live_snakemake(tmp_path)
    try:
        with pytest.raises(OutputError, match=rf"in use by a running Snakemake \(pid {holder.pid}\)"):
            check_lock(tmp_path)
        check_lock(tmp_path, dry_run=True)  # a dry run only looks
        code = main(["workflow", str(ROOT / "protocols" / "smoke.yaml"), "--results", str(tmp_path)])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and "in use by a running Snakemake" in err[0], err
        assert locks.exists()
    finally:
        holder.kill()
        holder.wait()
    check_lock(tmp_path)  # the holder is gone: now the lock is stale
    assert not locks.exists()


def test_a_second_workflow_is_refused_before_snakemake_made_any_lock(tmp_path: Path, capsys) -> None:
    """Issue 26 item 5: two workflows started within seconds; the first has not yet made Snakemake's lock."""
    from benchsuite.cli_workflow import workflow_lock

    first = workflow_lock(tmp_path)  # what the first `benchsuite workflow` holds from its start to its end
    try:
        assert not (tmp_path / ".snakemake" / "locks").exists()
        code = main(["workflow", str(ROOT / "protocols" / "smoke.yaml"), "--results", str(tmp_path)])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and "in use by another benchsuite workflow (pid " in err[0], err
        # a dry run only looks, so it is not refused
        assert main(["workflow", str(ROOT / "protocols" / "smoke.yaml"), "--results", str(tmp_path), "-n",
                     "--quiet"]) == 0
        capsys.readouterr()
    finally:
        first.release()
    again = workflow_lock(tmp_path)  # released: free again
    again.release()


def test_unlock_is_refused_while_a_snakemake_runs_there(tmp_path: Path, capsys) -> None:
    locks, holder = _locked_by_a_live_snakemake(tmp_path)
    try:
        code = main(["workflow", str(ROOT / "protocols" / "smoke.yaml"), "--results", str(tmp_path), "--unlock"])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and "--unlock refused: a Snakemake is still running" in err[0], err
        assert f"pid {holder.pid}" in err[0] and locks.exists()
    finally:
        holder.kill()
        holder.wait()


def test_snakemake_options_the_command_sets_itself_are_refused(tmp_path: Path, capsys) -> None:
    proto = str(ROOT / "protocols" / "smoke.yaml")
    for extra in (["-d", "x"], ["--snakefile", "S"], ["--config", "results=x"]):
        assert main(["workflow", proto, "--results", str(tmp_path), *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("benchsuite: error: "), err


# -- slow: real runs ------------------------------------------------------------------------
@pytest.mark.slow
def test_table_recipes_are_anchored_at_the_clone_from_any_directory(tmp_path: Path) -> None:
    """Forcing a table's recipe from elsewhere plans it at the committed table's place (dry run)."""
    from benchsuite.registry import required_tables

    table = required_tables("svm_mnist")[0]
    cmd = [str(Path(sys.executable).parent / "snakemake"), "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path),
           "--cores", "1", "-n", "-f", str(table)]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    jobs = planned(proc.stdout + proc.stderr)
    assert str(table) in jobs.get("svm_table_merge", []), jobs


@pytest.mark.slow
def test_real_run_from_elsewhere_refuses_a_live_lock_clears_a_stale_one_and_resumes(tmp_path: Path) -> None:
    """Run a protocol from another directory, kill -9 everything mid-run, rerun: the stale lock is
    cleared, finished runs are kept, the rest completes; a third invocation runs nothing."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proto_path = write_protocol(tmp_path / "mine", "slowish", {**GOOD, "repetitions": 4,
                                                               "budget": {"evaluations": 20000}})
    results = tmp_path / "res"
    paths = [results / p for p in load_protocol(proto_path).result_paths()]
    first = subprocess.Popen([str(BENCHSUITE), "workflow", str(proto_path), "--results", str(results), "--cores", "1"],
                             cwd=elsewhere, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and not any(p.exists() for p in paths):
            time.sleep(0.2)
        assert any(p.exists() for p in paths) and first.poll() is None, "the run ended before the kill"
        assert any((results / ".snakemake" / "locks").glob("*.lock"))
        busy = workflow(elsewhere, str(proto_path), "--results", str(results), "--cores", "1")
        lines = busy.stderr.strip().splitlines()
        assert busy.returncode == 2 and len(lines) == 1 and "in use by a running Snakemake" in lines[0], busy.stderr
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # benchsuite, Snakemake and the runs: nothing cleans up
        first.wait(timeout=60)
    done = {p: p.stat().st_mtime_ns for p in paths if p.exists()}
    assert 1 <= len(done) < len(paths)
    assert any((results / ".snakemake" / "locks").glob("*.lock"))  # left behind by the kill

    again = workflow(elsewhere, str(proto_path), "--results", str(results), "--cores", "1", timeout=600)
    assert again.returncode == 0, again.stderr
    notices = [ln for ln in again.stderr.splitlines() if "cleared a stale Snakemake lock" in ln]
    assert len(notices) == 1
    assert all(p.exists() for p in paths)
    assert all(p.stat().st_mtime_ns == m for p, m in done.items())  # finished runs were not redone
    assert all(len(load_result(p)) == 20000 for p in paths)
    assert (results / "reports" / "slowish" / "index.md").stat().st_size > 0
    assert (results / "reports" / "index.md").exists()

    third = workflow(elsewhere, str(proto_path), "--results", str(results), "--cores", "1")
    assert third.returncode == 0 and "Nothing to be done" in third.stdout + third.stderr, third.stderr
    assert list(elsewhere.iterdir()) == []


def test_failed_runs_do_not_stop_the_others_are_summarised_and_marked_in_the_index(tmp_path: Path) -> None:
    """keep-going (the default profile): the runs that can finish do; the end of the output lists every failed
    run with the last line of its log and the command that reruns just them; reports/index.md marks the
    protocol as incomplete; the rerun command, once the cause is fixed, finishes the protocol."""
    failing = {**GOOD, "benchmark": "ising", "repetitions": 2, "budget": {"evaluations": 4},
               "optimizers": ["random_search", {"name": "bocs", "label": "bocs_small",
                                                "settings": {"n_init": 2, "max_features": 10}}]}
    proto_path = write_protocol(tmp_path / "mine", "failing", failing)
    ok_path = write_protocol(tmp_path / "mine", "fine", GOOD)
    results = tmp_path / "res"
    first = workflow(tmp_path, str(tmp_path / "mine"), "--results", str(results), "--cores", "2")
    assert first.returncode != 0
    err = first.stderr
    assert "benchsuite: 2 run(s) failed; the finished ones are kept:" in err
    assert err.count("more than max_features=10") == 2  # each run's own last log line
    rerun = [ln for ln in err.splitlines() if ln.startswith("rerun just these")]
    assert len(rerun) == 1 and rerun[0].count("bocs_small/rep00") == 2
    assert all((results / p).exists() for p in load_protocol(ok_path).result_paths())  # the other protocol ran
    assert (results / "reports" / "fine" / "index.md").exists()
    index = (results / "reports" / "index.md").read_text()
    assert "**1 of 2 protocol(s) have missing runs**" in index
    assert "**incomplete: 2 of 4 runs missing** (2 failed" in index and "[`fine`](fine/index.md)" in index
    # that index does not make the failed runs look done: a plain rerun (nothing changed) still plans them
    dry = workflow(tmp_path, str(tmp_path / "mine"), "--results", str(results), "--cores", "2", "-n")
    assert "Nothing to be done" not in dry.stdout + dry.stderr
    assert (dry.stdout + dry.stderr).count("bocs_small/rep00") >= 2, dry.stdout[-2000:]

    proto_path.write_text(proto_path.read_text().replace("max_features: 10", "max_features: 200000"))
    command = rerun[0].split(": ", 1)[1].split()
    assert command[:2] == ["benchsuite", "workflow"]
    again = subprocess.run([str(BENCHSUITE), *command[1:], "--cores", "2"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert all((results / p).exists() for p in load_protocol(proto_path).result_paths())
    final = workflow(tmp_path, str(tmp_path / "mine"), "--results", str(results), "--cores", "2")
    assert final.returncode == 0, final.stderr
    index = (results / "reports" / "index.md").read_text()
    assert "incomplete" not in index and "[`failing`](failing/index.md)" in index
