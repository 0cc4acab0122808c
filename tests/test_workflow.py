"""The Snakemake workflow: dry run of `all`, the smoke target for real, reruns, invalid protocols."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from benchsuite.analysis.outputs import aggregate_outputs, report_outputs
from benchsuite.protocol import load_protocol, load_protocols, load_set
from benchsuite.results import load_result, provenance_path

ROOT = Path(__file__).resolve().parent.parent
SNAKEFILE = ROOT / "Snakefile"
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def snake(workdir: Path, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run snakemake on the repository's Snakefile with ``workdir`` as working directory."""
    cmd = [str(SNAKEMAKE), "-s", str(SNAKEFILE), "-d", str(workdir), "--cores", "2", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=workdir)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def planned(proc: subprocess.CompletedProcess) -> dict[str, list[str]]:
    """Rule name -> outputs of the jobs a dry run lists."""
    return planned_in(proc.stdout + proc.stderr)


def planned_in(text: str) -> dict[str, list[str]]:
    """Rule name -> outputs of the jobs listed in a dry run's printed ``text``."""
    out: dict[str, list[str]] = {}
    rule = None
    for line in text.splitlines():
        m = re.match(r"^(?:local)?rule (\S+):$", line.strip())
        if m:
            rule = m.group(1)
            out.setdefault(rule, [])
            continue
        m = re.match(r"^output: (.*)$", line.strip())
        if m and rule is not None:
            out[rule] += [s.strip() for s in m.group(1).split(",")]
            rule = None
    return out


def test_dry_run_of_all_plans_every_run_of_the_default_set(tmp_path: Path) -> None:
    protos = load_protocols(ROOT / "protocols")
    default = load_set(ROOT / "protocols", protos)
    proc = snake(tmp_path, "-n", "all")
    jobs = planned(proc)
    expected = sorted(path for name in default for path in protos[name].result_paths())
    assert sorted(jobs["run"]) == expected
    assert "reports/index.md" in jobs["index"]
    assert len(jobs["aggregate"]) == 2 * len(default)  # runs.csv.gz + provenance.json each
    assert not (tmp_path / "results").exists()  # a dry run writes nothing


def test_invalid_protocols_stop_the_workflow_before_any_job(tmp_path: Path) -> None:
    pdir = tmp_path / "protocols"
    pdir.mkdir()
    (pdir / "default_set.yaml").write_text("protocols: [good]\n")
    good = {"benchmark": "branin", "optimizers": ["random_search"], "repetitions": 1, "budget": {"evaluations": 3}}
    (pdir / "good.yaml").write_text(yaml.safe_dump(good))
    broken = {
        "unknown_opt": ({**good, "optimizers": ["random_serch"]}, "optimizers[0].name", "did you mean 'random_search'"),
        "negative": ({**good, "budget": {"evaluations": -3}}, "budget.evaluations", "must be >= 1"),
        "misspelt": ({**good, "repetitons": 2}, "repetitons", "did you mean 'repetitions'"),
    }
    for name, (doc, _, _) in broken.items():
        (pdir / f"{name}.yaml").write_text(yaml.safe_dump(doc))
    proc = snake(tmp_path, "all", "--config", f"protocol_dir={pdir}", check=False)
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    for name, (_, key, words) in broken.items():  # every mistake is reported, each with file and key
        line = next((ln for ln in text.splitlines() if f"protocols/{name}.yaml: {key}: " in ln), "")
        assert words in line, text
    assert "no job was started" in text
    assert not (tmp_path / "results").exists()  # nothing ran, not even the valid protocol


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory where `snakemake smoke` has run to completion."""
    work = tmp_path_factory.mktemp("smoke")
    t0 = time.perf_counter()
    snake(work, "smoke", timeout=120)
    elapsed = time.perf_counter() - t0
    assert elapsed < 90, f"snakemake smoke took {elapsed:.0f} s"
    return work


def test_smoke_target_runs_end_to_end(smoke_dir: Path) -> None:
    proto = load_protocol(ROOT / "protocols" / "smoke.yaml")
    for path in proto.result_paths():
        df = load_result(smoke_dir / path)
        prov = df.attrs["provenance"]
        assert prov["protocol"] == "smoke" and len(df) > 0
        job = proto.job(prov["benchmark_label"], prov["optimizer_label"], int(prov["repetition"]))
        assert prov["seed"] == job.seed and job.result_path == path
    for path in report_outputs(proto):
        assert (smoke_dir / path).stat().st_size > 0, path
    page = (smoke_dir / "reports" / "smoke" / "index.md").read_text()
    assert "## Provenance" in page and "(curves_time.png)" in page


def test_rerun_does_nothing_and_plans_only_missing_runs(smoke_dir: Path, tmp_path: Path) -> None:
    proc = snake(smoke_dir, "-n", "smoke")
    assert planned(proc) == {} and "Nothing to be done" in proc.stdout + proc.stderr
    work = tmp_path / "copy"
    shutil.copytree(smoke_dir, work)  # keeps mtimes and Snakemake's metadata
    proto = load_protocol(ROOT / "protocols" / "smoke.yaml")
    victim = work / proto.result_paths()[1]
    # the state a kill mid-run leaves: some result files, none of the downstream outputs (they
    # need every run), and of the run that was writing only the runner's temp file
    victim.unlink()
    for p in [*aggregate_outputs(proto), *report_outputs(proto)]:
        (work / p).unlink()
    # (its provenance file is written before the CSV is renamed into place: it may be there, the CSV is not)
    assert provenance_path(victim).exists()
    victim.with_name(f".{victim.name}.abc123.tmp").write_text("trial,worker,status,config,fidelity,ask_ti")
    jobs = planned(snake(work, "-n", "smoke"))
    assert jobs["run"] == [str(victim.relative_to(work))]  # only the unfinished run, the others are kept
    assert set(jobs) == {"run", "aggregate", "report_smoke", "smoke"}
    # the real rerun after real kills (Ctrl-C and kill -9) is tested below, marked slow


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_killed_workflow_resumes_with_only_the_unfinished_runs(tmp_path: Path, sig: int) -> None:
    """Interrupt snakemake and its jobs mid-run (Ctrl-C, or SIGKILL); the rerun redoes only what is missing."""
    pdir = tmp_path / "protocols"
    pdir.mkdir()
    (pdir / "default_set.yaml").write_text("protocols: [slow]\n")
    (pdir / "slow.yaml").write_text(yaml.safe_dump({
        "benchmark": "branin", "optimizers": ["random_search"], "repetitions": 6,
        "budget": {"evaluations": 20000}, "plots": {"x": ["evaluations"]}}))
    proto = load_protocol(pdir / "slow.yaml")
    paths = [tmp_path / p for p in proto.result_paths()]
    cmd = [str(SNAKEMAKE), "-s", str(SNAKEFILE), "-d", str(tmp_path), "--cores", "1", "all",
           "--config", f"protocol_dir={pdir}"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and sum(p.exists() for p in paths) < 2:
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, sig)  # the whole process group, as a terminal's Ctrl-C does
        proc.wait(timeout=120)
    done = [p for p in paths if p.exists()]
    assert 2 <= len(done) < len(paths), "the kill came too late to test anything"
    for p in done:
        assert len(load_result(p)) == 20000  # every result file present is complete
    before = {p: p.stat().st_mtime_ns for p in done}
    if sig == signal.SIGKILL:  # a killed snakemake cannot release its lock; Snakemake's documented remedy
        snake(tmp_path, "--unlock", "--config", f"protocol_dir={pdir}")
    jobs = planned(snake(tmp_path, "-n", "all", "--config", f"protocol_dir={pdir}"))
    missing = {p for p in paths if p not in done}
    rerun = {tmp_path / p for p in jobs["run"]}
    assert rerun >= missing  # every missing run is redone
    # besides them at most the one job in flight (--cores 1): its file may have been renamed into
    # place just before Snakemake could record the job as finished, so Snakemake marks it
    # incomplete and redoes it (profiles/default: rerun-incomplete)
    assert len(rerun - missing) <= 1
    snake(tmp_path, "all", "--config", f"protocol_dir={pdir}", timeout=600)
    assert all(p.exists() for p in paths)
    assert all(p.stat().st_mtime_ns == m for p, m in before.items() if p not in rerun)


def test_every_declared_table_has_a_recipe() -> None:
    """The workflow learns table builds from the benchmarks: each table a benchmark declares is a rule's output."""
    from benchsuite import registry
    from benchsuite.registry import required_tables

    tables = sorted({p for name, e in registry.benchmarks().items() if e.obj is not None
                     for p in required_tables(name)})
    assert {p.parent.name for p in tables} >= {"svm_mnist", "nas_bench_201"}
    for path in tables:
        rel = str(path.relative_to(ROOT))
        jobs = planned(snake(ROOT, "-n", "-f", rel))  # dry run: forces the recipe, writes nothing
        assert any(rel in outs for outs in jobs.values()), f"no rule builds {rel}: {jobs}"
