"""The installed package is the product: everything lives inside the ``benchsuite`` namespace and
every file a run needs is package data (issue 14, item 1).

The full check (build the wheel, install it into a fresh environment outside the checkout, run
from there) is ``scripts/check_wheel.sh``, which CI runs after the tests; these fast tests
catch the mistakes that would break it: a stray top-level import, a table the wheel would not
ship, a path that depends on the current directory.
"""
from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from benchsuite import paths, registry
from benchsuite.registry import required_tables

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
TOP_LEVEL_IMPORT = re.compile(r"^\s*(from|import)\s+(optimizers|analysis)\b", re.M)


def _tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", *patterns], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [ROOT / f for f in out.stdout.split()]


def test_no_code_imports_the_top_level_folders_as_packages() -> None:
    files = _tracked("*.py", "Snakefile", "*.smk", "*.md")
    offenders = [f"{f.relative_to(ROOT)}: {m.group(0).strip()}" for f in files if f.is_file()
                 for m in TOP_LEVEL_IMPORT.finditer(f.read_text(encoding="utf-8"))]
    assert not offenders, "import benchsuite.optimizers / benchsuite.analysis instead:\n" + "\n".join(offenders)


def test_no_symlink_is_tracked_and_the_paths_are_the_top_level_folders() -> None:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-s"], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    links = [line.split("\t", 1)[1] for line in out.stdout.splitlines() if line.startswith("120000")]
    assert not links, f"symbolic links in the repository: {links}"
    assert paths.SNAKEFILE == ROOT / "Snakefile"
    assert (paths.SNAKEFILE.parent / "profiles" / "default" / "config.yaml").is_file()
    assert paths.TABLES_DIR == ROOT / "tables" and paths.PROTOCOLS_DIR == ROOT / "protocols"
    assert paths.checkout_root() == ROOT


@pytest.mark.parametrize("pkg", ["optimizers", "analysis"])
def test_a_top_level_folder_imported_as_a_package_fails_with_one_line(pkg: str) -> None:
    """From the repository root (pytest, a notebook) ``import optimizers`` would load every file a
    second time as a different module: the package's guard refuses it and names the right import."""
    out = subprocess.run([sys.executable, "-c", f"import {pkg}"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode != 0
    assert f"import benchsuite.{pkg}" in out.stderr.strip().splitlines()[-1]


def test_the_build_maps_the_top_level_folders_into_the_namespace() -> None:
    tool = PYPROJECT["tool"]["setuptools"]
    assert tool["package-dir"] == {"benchsuite.optimizers": "optimizers", "benchsuite.analysis": "analysis",
                                   "benchsuite.tables": "tables", "benchsuite.protocols": "protocols",
                                   "benchsuite.reproductions": "reproductions"}
    assert all(p == "benchsuite" or p.startswith("benchsuite.") for p in tool["packages"])
    found = set()
    for top, name in (("benchsuite", "benchsuite"), ("optimizers", "benchsuite.optimizers"),
                      ("analysis", "benchsuite.analysis")):
        for init in (ROOT / top).rglob("__init__.py"):
            found.add(".".join([name, *init.parent.relative_to(ROOT / top).parts]))
    missing = found - set(tool["packages"])
    assert not missing, f"packages the wheel would miss (add them to [tool.setuptools] packages): {missing}"


def _shipped(relative: str) -> bool:
    """Whether ``tables/...`` or ``protocols/...`` is package data of its mapped package."""
    top, rest = relative.split("/", 1)
    key = f"benchsuite.{top}"
    globs = PYPROJECT["tool"]["setuptools"]["package-data"].get(key, [])
    excluded = PYPROJECT["tool"]["setuptools"].get("exclude-package-data", {}).get(key, [])
    return (any(fnmatch.fnmatch(rest, g) for g in globs)
            and not any(fnmatch.fnmatch(rest, g) for g in excluded))


def test_every_table_a_benchmark_reads_is_package_data_with_its_checksum() -> None:
    tables = {p for name in registry.benchmarks() for p in required_tables(name)}
    assert len(tables) >= 2  # the SVM and NAS-Bench-201 tables at least
    for table in tables:
        rel = "tables/" + str(table.relative_to(paths.TABLES_DIR))
        assert _shipped(rel), f"{rel} would not be in the wheel: add it to [tool.setuptools.package-data]"
        assert _shipped(rel + ".sha256") and table.with_name(table.name + ".sha256").is_file(), rel


def test_every_protocol_and_the_workflow_are_shipped() -> None:
    for f in sorted(paths.PROTOCOLS_DIR.glob("*.yaml")):
        assert _shipped(f"protocols/{f.name}"), f.name
    setup_py = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert '"Snakefile"' in setup_py and '"profiles"' in setup_py
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    assert "include Snakefile" in manifest and "recursive-include profiles" in manifest


def test_of_the_committed_runs_the_wheel_ships_only_what_a_race_reads() -> None:
    """A race from ``pip install`` reads each protocol's compact curves (benchsuite.analysis.baselines); the
    record itself (runs, provenance, figures, the scorecard) stays in the repository."""
    committed = sorted(p.parent.name for p in paths.REPRODUCTIONS_DIR.glob("*/runs.columns.xz"))
    assert committed, "no committed runs found"
    for name in committed:
        assert (paths.REPRODUCTIONS_DIR / name / "race.csv.xz").is_file(), f"{name}: run `benchsuite reproductions`"
        assert _shipped(f"reproductions/{name}/race.csv.xz"), name
        for other in ("runs.columns.xz", "provenance.json", "provenance_runs.jsonl.xz", "figure_table.png"):
            assert not _shipped(f"reproductions/{name}/{other}"), other
    for top in ("SCORECARD.md", "scorecard.csv", "notes.yaml"):
        assert not _shipped(f"reproductions/{top}"), top


def test_the_suite_imports_without_the_top_level_folders_from_anywhere(tmp_path: Path) -> None:
    """Run from an unrelated directory (nothing of the checkout on sys.path but the install):
    every plugin, the API, the analysis and the workflow's helpers import through the
    namespace, and no module named ``optimizers`` or ``analysis`` is loaded or even findable."""
    code = """
import importlib.util, sys
from benchsuite import api, registry, paths
from benchsuite.analysis import report, plots
from benchsuite.cli_workflow import workflow_file
opts, benches = registry.optimizers(), registry.benchmarks()
broken = [n for n, e in {**opts, **benches}.items() if e.obj is None and 'failed to import' in e.error]
assert not broken, broken
stray = sorted(m for m in sys.modules if m.split('.')[0] in ('optimizers', 'analysis'))
assert not stray, stray
assert importlib.util.find_spec('optimizers') is None and importlib.util.find_spec('analysis') is None
assert workflow_file() == paths.SNAKEFILE
print(len(opts), len(benches))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    n_opt, n_bench = map(int, out.stdout.split())
    assert n_opt >= 20 and n_bench >= 30
