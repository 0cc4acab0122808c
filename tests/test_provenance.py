"""Provenance: library and plugin distribution versions, and a dirty mark for untracked protocols."""
from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from benchsuite.optimizer import Optimizer, Suggestion
from benchsuite.registry import get_optimizer, make_benchmark
from benchsuite.provenance import RESULT_LIBRARIES, batch_job, plugin_distribution
from benchsuite.provenance import git_commit as _git_commit
from benchsuite.runner import run

ROOT = Path(__file__).resolve().parent.parent


class _LocalRandom(Optimizer):
    """A plugin defined in a test file: it belongs to no installed distribution."""

    name = "local_random_for_provenance"
    description = "random configurations (test plugin)"

    def ask(self, pending=()):  # noqa: ANN001, ANN201
        return Suggestion(self.space.sample(self.rng))


def test_result_provenance_names_libraries_and_plugin_distributions():
    out = run(make_benchmark("branin"), get_optimizer("random_search"), seed=0, budget_evals=3)
    prov = out.provenance
    assert set(prov["libraries"]) == set(RESULT_LIBRARIES)
    assert prov["libraries"]["numpy"] == importlib.metadata.version("numpy")
    assert prov["optimizer_distribution"]["name"] == "benchsuite"
    assert prov["benchmark_distribution"]["name"] == "benchsuite"


def test_a_plugin_from_a_test_file_has_no_distribution():
    out = run(make_benchmark("branin"), _LocalRandom, seed=0, budget_evals=2)
    assert out.provenance["optimizer_distribution"] == {"name": None, "version": None}


def test_third_party_class_is_attributed_to_its_distribution():
    import yaml  # pyyaml: a dependency that is surely installed as a distribution

    info = plugin_distribution(yaml.YAMLObject)
    assert info["name"] is not None and info["name"].lower() == "pyyaml"
    assert info["version"] == importlib.metadata.version("pyyaml")


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="needs the suite's git checkout")
def test_an_untracked_protocol_file_marks_the_commit_dirty():
    name = f"zz_untracked_{uuid.uuid4().hex[:8]}"
    path = ROOT / "protocols" / f"{name}.yaml"
    path.write_text("description: x\n")
    try:
        assert _git_commit(name).endswith("-dirty")
    finally:
        path.unlink()
    clean = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip() == ""
    if clean:  # a tracked protocol leaves a clean tree clean
        assert not _git_commit("smoke").endswith("-dirty")


def test_a_run_in_a_batch_job_names_the_job(monkeypatch):
    for var in ("SLURM_JOB_ID", "SLURM_JOB_PARTITION", "SLURMD_NODENAME", "SLURM_CLUSTER_NAME", "SLURM_JOB_GPUS",
                "PBS_JOBID", "PBS_QUEUE"):
        monkeypatch.delenv(var, raising=False)
    out = run(make_benchmark("branin"), get_optimizer("random_search"), seed=0, budget_evals=2)
    assert batch_job() is None and "batch_job" not in out.provenance  # outside a job nothing changes
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("SLURM_JOB_PARTITION", "gpu")
    monkeypatch.setenv("SLURM_JOB_GPUS", "0,1")
    out = run(make_benchmark("branin"), get_optimizer("random_search"), seed=0, budget_evals=2)
    assert out.provenance["batch_job"] == {"scheduler": "slurm", "job_id": "4242", "partition": "gpu", "gpus": "0,1"}
    monkeypatch.delenv("SLURM_JOB_ID")
    monkeypatch.setenv("PBS_JOBID", "17.head")
    assert batch_job() == {"scheduler": "pbs", "job_id": "17.head"}
