"""Provenance: what a result file records about how it was made (issue 22: apart from the event loop).

Versions of the suite and of the libraries that decide results, the git commit of a checkout
(``-dirty`` when it differs from HEAD), the distributions providing the plugins, and the machine.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .paths import checkout_root
from .version import __version__


def git_commit(protocol: str | None = None) -> str | None:
    """HEAD of the suite's checkout, ``-dirty`` when tracked files changed or the run's protocol
    file (``protocols/<protocol>.yaml``) is not tracked; None for an installed wheel."""
    root = checkout_root()
    if root is None:
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        if out.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
        if not dirty and protocol:
            path = root / "protocols" / f"{protocol}.yaml"
            tracked = subprocess.run(["git", "-C", str(root), "ls-files", "--error-unmatch", str(path)],
                                     capture_output=True, text=True, timeout=5).returncode == 0
            dirty = "untracked protocol" if path.exists() and not tracked else ""
        return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


#: distributions whose versions decide results; recorded in every result's provenance
RESULT_LIBRARIES = ("numpy", "scipy", "torch", "scikit-learn", "POT", "emcee", "smac", "ConfigSpace", "optuna",
                    "h5py")


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str | None]:
    """Installed versions of :data:`RESULT_LIBRARIES` (None when not installed), read without importing them."""
    out: dict[str, str | None] = {}
    for dist in RESULT_LIBRARIES:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


@lru_cache(maxsize=1)
def _module_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def plugin_distribution(cls: type) -> dict[str, str | None]:
    """The distribution (name and version) that provides a plugin class; the suite's own plugins are
    ``benchsuite``'s, a class defined outside any installed distribution (a test file) has name None."""
    top = cls.__module__.split(".")[0]
    own = Path(__file__).resolve().parent.parent
    module = sys.modules.get(cls.__module__)
    file = getattr(module, "__file__", None)
    if top == "benchsuite" and file and own in Path(file).resolve().parents:
        return {"name": "benchsuite", "version": __version__}
    dists = _module_distributions().get(top) or []
    if not dists:
        return {"name": None, "version": None}
    try:
        return {"name": dists[0], "version": importlib.metadata.version(dists[0])}
    except importlib.metadata.PackageNotFoundError:
        return {"name": dists[0], "version": None}


@lru_cache(maxsize=1)
def blas_architecture() -> str | None:
    """The CPU kernel set OpenBLAS chose for this machine ("Haswell", "SkylakeX", ...; None for another BLAS).

    Its kernels sum in their own order, so one run repeated on two machines can differ in the last bits of a
    float that a BLAS call summed: measured on combo_maxsat, a MaxSAT loss of -17.980272913855163 from a run
    made with the Haswell kernels is -17.980272913855277 with SkylakeX's. ``OPENBLAS_CORETYPE`` set to the
    recorded name makes a rerun sum as the run did (``benchsuite reproductions --verify`` sets it).
    """
    try:
        from threadpoolctl import threadpool_info

        arch = [str(i.get("architecture")) for i in threadpool_info()
                if i.get("internal_api") == "openblas" and i.get("architecture")]
    except Exception:  # noqa: BLE001 - a fact for the record, never a reason to fail a run
        return None
    return arch[0] if arch else None


def machine_info() -> dict[str, Any]:
    """Python, numpy, OS and host facts for provenance records."""
    return {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "blas_architecture": blas_architecture(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "hostname": platform.node(),
    }


# a batch scheduler's job that ran a run: SLURM's variables (and PBS's job id), recorded where set
_BATCH_VARS = {"slurm": ("SLURM_JOB_ID", {"partition": "SLURM_JOB_PARTITION", "node": "SLURMD_NODENAME",
                                          "cluster": "SLURM_CLUSTER_NAME", "gpus": "SLURM_JOB_GPUS"}),
               "pbs": ("PBS_JOBID", {"queue": "PBS_QUEUE"})}


def batch_job() -> dict[str, str] | None:
    """The batch job this process runs in (scheduler, job id, partition, node, GPUs), or None outside one.

    A run's provenance names the job that made it, so a result file leads back to the scheduler's records
    (``sacct -j ID``) and, through ``benchsuite workflow``'s log, to the sbatch submission."""
    for scheduler, (id_var, extra) in _BATCH_VARS.items():
        job_id = os.environ.get(id_var)
        if job_id:
            record = {"scheduler": scheduler, "job_id": job_id}
            record.update({k: os.environ[v] for k, v in extra.items() if os.environ.get(v)})
            return record
    return None


def run_provenance(benchmark: Any, opt: Any, *, seed: int, workers: int, budget_evals: int | None,
                   budget_seconds: float | None, include_overhead: bool, n_trials: int,
                   extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The provenance record of a finished run of ``opt`` (an optimizer instance) on ``benchmark``."""
    provenance = {
        "benchsuite_version": __version__,
        "git_commit": git_commit((extra or {}).get("protocol")),
        "benchmark": benchmark.name,
        "benchmark_kind": benchmark.kind,
        "benchmark_settings": benchmark.settings,
        "benchmark_provenance": benchmark.provenance(),
        "optimum": benchmark.optimum,
        "optimizer": opt.name,
        "optimizer_settings": opt.settings,
        "seed": int(seed),
        "workers": int(workers),
        "budget_evals": budget_evals,
        "budget_seconds": budget_seconds,
        "include_overhead": bool(include_overhead),
        "n_trials": n_trials,
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "optimizer_distribution": plugin_distribution(type(opt)),
        "benchmark_distribution": plugin_distribution(type(benchmark)),
        "libraries": library_versions(),
        # string hashing decides some libraries' iteration order (SMAC): benchsuite run fixes it to 0
        "python_hash_seed": os.environ.get("PYTHONHASHSEED"),
        **machine_info(),
    }
    job = batch_job()
    if job is not None:
        provenance["batch_job"] = job
    if extra:
        provenance.update(extra)
    return provenance
