"""The suite on real schedulers: a one-node SLURM cluster and a dask cluster of separate processes, both started here.

Marked ``cluster`` (not in the default run): ``scripts/test_cluster.sh`` runs them, and CI calls it.

- SLURM (``scripts/slurm_local.sh start``: Debian's slurm-wlm and munge on 127.0.0.1, installed when missing): two
  protocols go through ``benchsuite workflow ... --profile slurm`` (Snakemake with the shipped profile
  ``profiles/slurm``); every run is an sbatch job, CPU runs on the ``cpu`` partition and the run that asks for
  GPUs on the ``gpu`` partition with ``--gpus``, as the scheduler records. One running job is cancelled with
  ``scancel``; the rerun submits just that run again, and nothing partial is left. The dask-jobqueue recipe of
  the docs builds a ``SLURMCluster`` on the same cluster: its worker is an sbatch job that joins and runs trials.
- dask: ``dask scheduler`` and two ``dask worker --nthreads 1`` processes on 127.0.0.1; a run with ``--backend dask
  --scheduler tcp://...`` loses one worker process (killed) mid-trial: that trial is failed, the run finishes on
  the other worker, and ``benchsuite replay`` passes on the result.

The SLURM tests are skipped only where SLURM cannot be installed (not root, or no apt-get), and never in CI
(``CI`` set), where that is a failure.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchsuite.results import load_result

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "cluster"
SCRIPT = ROOT / "scripts" / "slurm_local.sh"
BIN = Path(sys.executable).parent
SLURM_DIR = Path(os.environ.get("BENCHSUITE_SLURM_DIR", "/tmp/benchsuite-slurm"))
# Snakemake's SLURM executor polls every 40 s by default: 2 s here, so the test takes seconds, not minutes
FAST_POLL = ["--slurm-init-seconds-before-status-checks", "2", "--seconds-between-status-checks", "2"]
SUBMITTED = re.compile(r"submitted with SLURM jobid (\d+) \(log: (\S+)\)")


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **extra}


@pytest.fixture(scope="module")
def slurm() -> Iterator[dict[str, str]]:
    """A running one-node SLURM cluster (started here, stopped after the module's tests unless it already ran)."""
    env = _env(SLURM_CONF=str(SLURM_DIR / "slurm.conf"))
    was_running = (SLURM_DIR / "run" / "slurmctld.pid").exists() and subprocess.run(
        ["bash", str(SCRIPT), "status"], env=env, capture_output=True, timeout=60).returncode == 0
    t0 = time.monotonic()
    start = subprocess.run(["bash", str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=600)
    if start.returncode == 3:
        why = start.stderr.strip().splitlines()[-1] if start.stderr.strip() else "slurm_local.sh exited 3"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the SLURM tests, but: {why}")
        pytest.skip(why)
    assert start.returncode == 0, start.stderr[-3000:]
    print(f"slurm: cluster ready in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    try:
        yield env
    finally:
        if not was_running:
            subprocess.run(["bash", str(SCRIPT), "stop"], env=env, capture_output=True, timeout=120)


def _slurm(env: dict[str, str], *argv: str) -> str:
    out = subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"{' '.join(argv)}: {out.stderr}"
    return out.stdout


def _job_fields(env: dict[str, str], job_id: str) -> dict[str, str]:
    """``scontrol show job``'s KEY=VALUE fields of a job (SLURM keeps finished jobs MinJobAge = 300 s)."""
    text = _slurm(env, "scontrol", "show", "job", job_id)
    return dict(item.split("=", 1) for item in text.split() if "=" in item)


class _Output:
    """A process's merged output, read as it comes (so the test can act on a line while the process runs)."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: list[str] = []
        self._thread = threading.Thread(target=lambda: self.lines.extend(iter(proc.stdout.readline, "")),
                                        daemon=True)
        self._thread.start()

    def text(self) -> str:
        return "".join(self.lines)

    def join(self) -> str:
        self._thread.join(timeout=30)
        return self.text()


def _wait_for(what: str, check, timeout: float, poll: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


# -- SLURM: the shipped profile, the GPU mapping, a cancelled job recovered -------------------------------------
RUNS = {  # result file under results/ -> trials its protocol's budget gives
    "cluster_cpu/sleep_branin/random_search/rep000.csv": 8,
    "cluster_cpu/sleep_branin/random_search/rep001.csv": 8,
    "cluster_gpu/sleep_branin/random_search/rep000.csv": 6,
}
CANCELLED = "cluster_cpu/sleep_branin/random_search/rep001.csv"


def test_the_slurm_profile_runs_protocols_as_sbatch_jobs_and_a_cancelled_job_is_rerun(
        slurm: dict[str, str], tmp_path: Path) -> None:
    exp = tmp_path / "exp"
    cmd = [str(BIN / "benchsuite"), "workflow", str(DATA / "cluster_cpu.yaml"), str(DATA / "cluster_gpu.yaml"),
           "--results", str(exp), "--profile", "slurm", *FAST_POLL]
    t0 = time.monotonic()
    first = subprocess.Popen(cmd, env=slurm, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
    out = _Output(first)
    try:
        def submitted() -> dict[str, str]:  # result file -> SLURM job id, from Snakemake's submission lines
            jobs = {}
            for job_id, log in SUBMITTED.findall(out.text()):
                run = re.search(r"rule_run/(cluster_\w+?)_sleep_branin_random_search_(\d{3})/", log)
                if run:
                    jobs[f"{run[1]}/sleep_branin/random_search/rep{run[2]}.csv"] = job_id
            return jobs

        jobs = _wait_for("three sbatch submissions", lambda: (lambda j: j if len(j) == 3 else None)(submitted()), 180)
        victim = jobs[CANCELLED]
        log = exp / "results" / CANCELLED.replace(".csv", ".log")
        # cancelled while its run is under way: a trial has finished (the run's progress line)
        _wait_for(f"a finished trial in {log.name}", lambda: log.exists() and "trials," in log.read_text(), 180, 0.2)
        assert _slurm(slurm, "squeue", "-h", "-j", victim, "-o", "%T").strip() == "RUNNING"
        _slurm(slurm, "scancel", victim)
        first.wait(timeout=300)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGTERM)
            first.wait(timeout=60)
    text = out.join()
    first_s = time.monotonic() - t0
    assert first.returncode != 0, text[-3000:]
    assert _slurm(slurm, "squeue", "-h", "-j", victim, "-t", "all", "-o", "%T").strip() == "CANCELLED"
    results = exp / "results"
    assert not (results / CANCELLED).exists()
    # the finished trials of the cancelled run were kept beside it (SIGTERM), and the summary names it
    assert (results / (CANCELLED + ".partial.csv")).exists()
    assert "cluster_cpu: random_search on sleep_branin, rep 001" in text, text[-3000:]
    rerun = [line for line in text.splitlines() if line.startswith("rerun just these")]
    assert len(rerun) == 1 and "--profile " + str(ROOT / "profiles" / "slurm") in rerun[0], rerun  # on SLURM again
    for run in RUNS:
        if run != CANCELLED:
            assert (results / run).exists(), run

    # every job went through sbatch to the partition its resources chose; the GPU run's request is recorded
    for run, job_id in jobs.items():
        fields = _job_fields(slurm, job_id)
        if run.startswith("cluster_gpu"):
            assert fields["Partition"] == "gpu" and fields.get("TresPerJob") == "gres:gpu:2", fields
        else:
            assert fields["Partition"] == "cpu" and "gpu" not in fields.get("TresPerJob", ""), fields
        assert fields["TimeLimit"] == "00:10:00", fields  # the protocol's runtime: 10 minutes

    kept = load_result(results / (CANCELLED + ".partial.csv"))
    assert 1 <= len(kept) < RUNS[CANCELLED] and (kept["status"] == "ok").all()

    # the rerun submits the cancelled run alone, and leaves every run complete with nothing partial
    t1 = time.monotonic()
    second = subprocess.run(cmd, env=slurm, capture_output=True, text=True, timeout=300)
    second_s = time.monotonic() - t1
    assert second.returncode == 0, (second.stdout + second.stderr)[-3000:]
    again = SUBMITTED.findall(second.stdout + second.stderr)
    assert len(again) == 1 and "cluster_cpu_sleep_branin_random_search_001" in again[0][1], again
    jobs[CANCELLED] = again[0][0]
    for run, n in RUNS.items():
        df = load_result(results / run)
        assert len(df) == n and (df["status"] == "ok").all(), run
        # each result file names the SLURM job that made it
        assert df.attrs["provenance"]["batch_job"]["job_id"] == jobs[run], run
        assert df.attrs["provenance"]["batch_job"]["scheduler"] == "slurm"
    # the cancelled run resumed from the trials it had finished (the same configurations and losses)
    resumed = load_result(results / CANCELLED).sort_values("trial").head(len(kept))
    assert list(resumed["config"]) == list(kept.sort_values("trial")["config"])
    assert list(resumed["loss"]) == list(kept.sort_values("trial")["loss"])
    leftovers = [p for p in exp.rglob("*") if p.name.endswith((".partial.csv", ".lock", ".tmp"))]
    assert leftovers == [], leftovers
    gpu_run = load_result(results / "cluster_gpu/sleep_branin/random_search/rep000.csv").attrs["provenance"]
    # SLURM gave the job two GPUs; the local backend gave each worker one of them
    assert sorted(w["device"] for w in gpu_run["backend"]["workers"]) == [
        "cuda (CUDA_VISIBLE_DEVICES=0)", "cuda (CUDA_VISIBLE_DEVICES=1)"]
    for name in ("cluster_cpu", "cluster_gpu"):
        assert (exp / "reports" / name / "index.md").exists()
        assert (results / name / "runs.csv.gz").exists()
    index = (exp / "reports" / "index.md").read_text()
    assert "incomplete" not in index and "cluster_cpu" in index and "cluster_gpu" in index
    print(f"slurm: {len(RUNS)} sbatch jobs, job {victim} cancelled; first workflow {first_s:.0f} s, "
          f"rerun {second_s:.0f} s (jobs {sorted(jobs.values(), key=int)})", file=sys.stderr)


def test_the_profile_works_from_a_clone_as_the_docs_give_it() -> None:
    """``snakemake ... --profile profiles/slurm`` in a clone: the profile and its partition file load (a dry run:
    nothing is submitted, so no cluster is needed)."""
    pytest.importorskip("snakemake_executor_plugin_slurm")
    dry = subprocess.run([str(BIN / "snakemake"), "smoke", "--profile", "profiles/slurm", "-n", "--forceall"],
                         cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0, (dry.stdout + dry.stderr)[-3000:]
    assert "Using profiles profiles/slurm" in dry.stdout + dry.stderr
    assert re.search(r"^run\s+\d+$", dry.stdout, re.M), dry.stdout[-2000:]


def test_the_profile_maps_a_gpu_request_to_the_gpu_partition_and_a_long_one_nowhere(slurm: dict[str, str],
                                                                                   tmp_path: Path) -> None:
    """The shipped partition file's limits decide a job's partition (the plugin's own choice function), and they
    are the limits of the cluster the SLURM tests run on."""
    pytest.importorskip("snakemake_executor_plugin_slurm")
    from snakemake_executor_plugin_slurm.partitions import get_best_partition, read_partition_file

    class Job:  # what the plugin reads of a job: its resources and threads
        def __init__(self, threads: int = 1, **resources: int):
            self.threads, self.resources, self.name = threads, _Resources(resources), "run"

    class _Resources(dict):
        def __getattr__(self, key: str):
            return self[key]

    class Log:
        def info(self, *_a) -> None: ...
        def debug(self, *_a) -> None: ...
        def warning(self, *_a) -> None: ...

    parts = read_partition_file(ROOT / "profiles" / "slurm" / "partitions.yaml")
    assert get_best_partition(parts, Job(runtime=30, mem_mb=1000, gpu=0), Log()) == "cpu"
    assert get_best_partition(parts, Job(runtime=30, mem_mb=1000, gpu=1), Log()) == "gpu"
    assert get_best_partition(parts, Job(runtime=600, gpu=1), Log()) is None  # longer than the gpu partition's
    # and the cluster the test starts has exactly these partitions and limits
    info = _slurm(slurm, "sinfo", "-h", "-o", "%P %l").split()
    assert info == ["cpu*", "1-00:00:00", "gpu", "6:00:00"], info
    # the plugin's generator (the docs' way to write a cluster's own file) reads the same names and time limits
    generated = tmp_path / "partitions.yaml"
    _slurm(slurm, str(BIN / "generate-slurm-partition-config"), "-o", str(generated))
    mine = {q.name: q.limits.max_runtime for q in read_partition_file(generated)}
    assert mine == {q.name: q.limits.max_runtime for q in parts} == {"cpu": 1440, "gpu": 360}, mine


def test_the_dask_jobqueue_recipe_starts_a_worker_as_a_slurm_job(slurm: dict[str, str], tmp_path: Path) -> None:
    """The docs' SLURMCluster, at this machine's size (1 core, one fake GPU): its job script is submitted, the
    worker in that job joins, sees the GPU SLURM gave it, and evaluates a run's trials."""
    dask_jobqueue = pytest.importorskip("dask_jobqueue")
    import distributed

    from benchsuite import api

    os.environ["SLURM_CONF"] = slurm["SLURM_CONF"]  # for sbatch, squeue and scancel started by dask-jobqueue
    cluster = dask_jobqueue.SLURMCluster(
        queue="gpu", cores=1, processes=1, memory="1GB", walltime="00:10:00",
        job_extra_directives=["--gres=gpu:1"], worker_extra_args=["--nthreads", "1"],
        python=sys.executable, log_directory=str(tmp_path / "logs"),
        scheduler_options={"host": "127.0.0.1", "dashboard": False})
    try:
        script = cluster.job_script()
        assert "#SBATCH -p gpu" in script and "#SBATCH --gres=gpu:1" in script and "--nthreads 1" in script
        cluster.scale(jobs=1)
        with distributed.Client(cluster) as client:
            client.wait_for_workers(1, timeout=120)
            jobs = _slurm(slurm, "squeue", "-h", "-o", "%i %P %b %T").splitlines()
            assert any(" gpu gres:gpu:1 RUNNING" in line for line in jobs), jobs
            seen = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
            assert list(seen.values()) == ["0"], seen
        df = api.run("sleep_branin", "random_search", seed=0, budget_evals=3, workers=1, backend="dask",
                     scheduler=cluster.scheduler_address, benchmark_settings={"sleep_s": 0.1})
        assert len(df) == 3 and (df["status"] == "ok").all()
        assert df.attrs["provenance"]["backend"]["scheduler"] == cluster.scheduler_address
    finally:
        cluster.close()


# -- dask: a scheduler and two workers as separate processes; one worker killed mid-trial ------------------------
def test_a_run_on_a_running_dask_cluster_loses_a_worker_and_finishes_on_the_other(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    from benchsuite.cli import main

    dask = str(BIN / "dask")
    env = _env()
    scheduler_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []

    def spawn(name: str, *argv: str) -> None:
        log = open(tmp_path / f"{name}.log", "w")
        procs.append(subprocess.Popen([dask, *argv], env=env, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True))

    out = tmp_path / "run.csv"
    try:
        # the scheduler as users start it: default settings (a task whose worker dies is run again, up to 3 times)
        spawn("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(scheduler_file))
        _wait_for("the scheduler's address", lambda: scheduler_file.exists() and scheduler_file.stat().st_size, 60)
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        for i in range(2):
            spawn(f"worker{i}", "worker", address, "--nthreads", "1", "--no-dashboard", "--name", f"w{i}")
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=120)
            run = subprocess.Popen([sys.executable, "-m", "benchsuite.cli", "run", "-b", "sleep_branin", "-o",
                                    "random_search", "--budget-evals", "6", "--workers", "2", "--backend", "dask",
                                    "--scheduler", address, "--benchmark-set", "sleep_s=1.5", "--seed", "3", "-q",
                                    "--out", str(out)], env=env, stderr=subprocess.PIPE, text=True)
            try:
                def busy_worker():  # a worker evaluating a trial, and that worker process's pid
                    for addr, keys in client.processing().items():
                        if any(str(k).startswith("benchsuite-trial-") for k in keys):
                            return addr, keys
                    return None

                addr, keys = _wait_for("a trial on a worker", busy_worker, 120, 0.1)
                time.sleep(0.5)  # well inside its 1.5 s evaluation
                pid = client.run(os.getpid, workers=[addr])[addr]
                os.kill(pid, signal.SIGKILL)
                _, err = run.communicate(timeout=180)
            finally:
                if run.poll() is None:
                    run.kill()
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
    assert run.returncode == 0, err
    df = load_result(out)
    assert sorted(df["trial"]) == list(range(6))
    failed = df[df["status"] == "failed"]
    assert len(failed) == 1, df[["trial", "worker", "status", "info"]]
    error = json.loads(failed["info"].iloc[0])["error"]
    assert f"dask worker {addr} (pid {pid}) was lost during the evaluation" in error, error
    assert (df[df["status"] == "ok"]["cost_s"] == 1.5).all()
    assert df.attrs["provenance"]["backend"]["scheduler"] == address
    # the recorded results, told in the recorded order, give the recorded configurations
    assert main(["replay", str(out)]) == 0
    print(f"dask: worker {addr} (pid {pid}) killed during trial {int(failed['trial'].iloc[0])}; "
          f"{len(df) - 1} trials ok, run {df['told_time'].max():.1f} s of wall clock", file=sys.stderr)
