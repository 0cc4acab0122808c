"""perf/ab.py, the per-change speed check: both sides really run their own code, and it cleans up after itself."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _worktrees() -> set[str]:
    out = subprocess.run(["git", "-C", str(ROOT), "worktree", "list", "--porcelain"], capture_output=True, text=True)
    return {ln.split(" ", 1)[1] for ln in out.stdout.splitlines() if ln.startswith("worktree ")}


def test_ab_compares_two_trees_and_removes_its_worktrees() -> None:
    before = _worktrees()
    proc = subprocess.run([sys.executable, "perf/ab.py", "HEAD", "--quick", "--rounds", "1", "--only", "nb201_eval",
                           "version"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {ln.split(" ", 2)[1]: ln for ln in proc.stdout.splitlines() if ln.startswith("| ")}
    # the same lookups and the same version string on both sides (the worker checks it imported its own tree)
    assert rows["nb201_eval"].rstrip().endswith("| yes |"), proc.stdout
    assert rows["version"].rstrip().endswith("| yes |"), proc.stdout
    assert "HEAD / BASE CPU" in proc.stdout and "load average" in proc.stdout
    assert not {w for w in _worktrees() - before if "benchsuite-ab-" in w}  # its own, under its temporary folder


def test_ab_names_its_benchmarks() -> None:
    out = subprocess.run([sys.executable, "perf/ab.py", "--list"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    names = [ln.split()[0] for ln in out.splitlines()]
    assert {"nb201_eval", "nb201_batch", "svm_eval", "svm_batch", "surrogate_eval", "run_trial", "runloop", "result_write",
            "result_read", "da_smbo_100", "import_cli", "version", "cli_run"} <= set(names)
