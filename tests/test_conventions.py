"""Conventions a new user notices (issue 27, items 1 and 6): a slim core install whose missing extras
are named in one line, --version, `analyze`, one error prefix, names checked before budgets, a labelled
and rounded optimum, LICENSE and py.typed."""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import benchsuite
from benchsuite import extras, registry
from benchsuite.errors import MissingExtraError
from benchsuite.optimizer import Optimizer
from benchsuite.version import __version__

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: the optional packages a core install lacks (import names), and what else must not load on core commands
HEAVY = ("torch", "ot", "emcee", "sklearn", "snakemake", "matplotlib", "optuna", "smac", "ConfigSpace", "seaborn",
         "dask", "distributed", "botorch", "gpytorch")


def bs(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchsuite.cli", *args], capture_output=True, text=True, cwd=cwd)


def in_core_env(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter where every optional package is unimportable, as in a core install
    (``sys.modules[name] = None`` makes ``import name`` fail and ``find_spec(name)`` return None)."""
    prelude = f"import sys\nfor m in {HEAVY!r}:\n    sys.modules[m] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, cwd=cwd)


# -- item 1: the slim core ---------------------------------------------------------------------------------

def _names(reqs: list[str]) -> set[str]:
    return {re.split(r"[<>=!\[ ;]", r, maxsplit=1)[0].lower() for r in reqs}


def test_the_core_dependencies_are_only_what_tables_and_synthetic_benchmarks_need() -> None:
    core = _names(PYPROJECT["project"]["dependencies"])
    assert core <= {"numpy", "scipy", "pandas", "h5py", "pyyaml", "tqdm", "threadpoolctl"}, core
    extra = {k: _names(v) for k, v in PYPROJECT["project"]["optional-dependencies"].items()}
    assert {"torch", "pot"} <= extra["nas"] and "emcee" in extra["bo"] and "scikit-learn" in extra["svm"]
    assert "snakemake" in extra["workflow"] and "optuna" in extra["tpe"] and "smac" in extra["smac"]
    assert {"botorch", "gpytorch", "torch"} <= extra["botorch"]
    # [all] is every extra but the developers' tools (tests, the documentation site), through the package itself
    (all_req,) = PYPROJECT["project"]["optional-dependencies"]["all"]
    listed = set(re.search(r"\[(.*)\]", all_req).group(1).split(","))
    assert listed == set(extra) - {"test", "docs", "all"}
    # every optional module the registry can name is installed by the extra it names
    pip_name = {"ot": "pot", "sklearn": "scikit-learn", "scikit_posthocs": "scikit-posthocs"}
    for module, name in extras.MODULE_EXTRA.items():
        assert pip_name.get(module, module).lower() in extra[name], (module, name)


def test_seaborn_is_neither_required_nor_imported() -> None:
    assert "seaborn" not in str(PYPROJECT["project"])
    for folder in ("benchsuite", "optimizers", "analysis"):
        for f in (ROOT / folder).rglob("*.py"):
            assert not re.search(r"^\s*(import|from)\s+seaborn", f.read_text(encoding="utf-8"), re.M), f


def test_core_commands_import_no_optional_package(tmp_path: Path) -> None:
    """`benchsuite list` and a run on a lookup table keep torch, sklearn, emcee, POT, Snakemake lazy."""
    code = ("import sys\nfrom benchsuite.cli import main\n"
            "assert main(['list']) == 0\n"
            f"assert main(['run', '-b', 'nb201_cifar10', '-o', 'random_search', '--budget-evals', '20', "
            f"'--out', {str(tmp_path / 'r.csv')!r}, '-q']) == 0\n"
            f"print('LOADED', sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "LOADED []" in proc.stdout, proc.stdout[-500:]


def test_the_command_line_starts_without_numpy_and_runs_on_tables_without_heavy_libraries(tmp_path: Path) -> None:
    """What every `benchsuite` process pays before its work: importing the CLI (twice for a run, which re-executes
    itself to fix the hash seed) loads neither torch nor numpy; `--version` answers from there; a one-trial run
    on a table, a synthetic function or a DeepArchitect space on a table loads no torch, POT, scipy or pandas."""
    heavy = ("torch", "ot", "scipy", "pandas", "sklearn", "matplotlib")
    code = ("import sys\nimport benchsuite.cli\n"
            f"print('CLI', sorted(m for m in {(*heavy, 'numpy', 'yaml')!r} if m in sys.modules))\n"
            "from benchsuite.cli import main\n"
            "assert main(['--version']) == 0\n"
            f"print('VERSION', sorted(m for m in {(*heavy, 'numpy', 'yaml')!r} if m in sys.modules))\n"
            f"for bench, opt in (('nb201_cifar10', 'random_search'), ('branin', 'random_search'), "
            f"('da_nb201_cifar10', 'da_smbo')):\n"
            f"    assert main(['run', '-b', bench, '-o', opt, '--budget-evals', '1', '--out', "
            f"{str(tmp_path / 'r.csv')!r}, '-q']) == 0\n"
            f"print('RUN', sorted(m for m in {heavy!r} if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = dict(ln.split(" ", 1) for ln in proc.stdout.splitlines() if ln.split(" ", 1)[0] in ("CLI", "VERSION", "RUN"))
    assert lines == {"CLI": "[]", "VERSION": "[]", "RUN": "[]"}, proc.stdout


def test_a_core_install_lists_what_is_missing_and_still_races_on_a_table(tmp_path: Path) -> None:
    code = ("from benchsuite.cli import main\nimport sys\n"
            "assert main(['list']) == 0\n"
            f"sys.exit(main(['run', '-b', 'nb201_cifar10', '-o', 'regularized_evolution', '--budget-evals', '30', "
            f"'--out', {str(tmp_path / 'r.csv')!r}, '-q']))\n")
    proc = in_core_env(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = {ln.split()[0]: ln for ln in proc.stdout.splitlines() if ln.startswith("  ") and ln.split()}
    assert "unavailable: needs torch: pip install 'benchsuite[nas]'" in lines["nb201_live"]
    assert "unavailable: needs emcee: pip install 'benchsuite[bo]'" in lines["gp_ei"]
    assert "unavailable: needs sklearn: pip install 'benchsuite[svm]'" in lines["svm_mnist_live"]
    assert "unavailable: needs botorch, gpytorch: pip install 'benchsuite[botorch]'" in lines["botorch_qlogei"]
    assert "unavailable" not in lines["nb201_cifar10"] and "unavailable" not in lines["random_search"]
    assert (tmp_path / "r.csv").stat().st_size > 0


@pytest.mark.parametrize("args,extra", [
    (["run", "-b", "nb201_live", "-o", "random_search", "--budget-evals", "2"], "nas"),
    (["run", "-b", "branin", "-o", "gp_ei", "--budget-evals", "2"], "bo"),
])
def test_a_missing_extra_is_one_line_naming_it(tmp_path: Path, args: list[str], extra: str) -> None:
    code = (f"import sys\nfrom benchsuite.cli import main\n"
            f"sys.exit(main({[*args, *(['--out', str(tmp_path / 'r.csv')] if args[0] == 'run' else [])]!r}))\n")
    proc = in_core_env(code, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("benchsuite: error: ") and f"pip install 'benchsuite[{extra}]'" in proc.stderr
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.parametrize("name,extra,shown", [("nb201_live", "nas", "edge_3_2"), ("gp_ei", "bo", "n_init"),
                                              ("svm_mnist_live", "svm", "fidelity")])
def test_describe_shows_a_plugin_before_its_extra_is_installed(tmp_path: Path, name: str, extra: str,
                                                               shown: str) -> None:
    """A user sees what a benchmark or optimizer is, and what to install for it, before installing it."""
    code = f"import sys\nfrom benchsuite.cli import main\nsys.exit(main(['describe', {name!r}]))\n"
    proc = in_core_env(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("(not usable here: it needs ") and f"pip install 'benchsuite[{extra}]'" in first
    assert shown in proc.stdout and "settings:" in proc.stdout, proc.stdout


def test_a_lazy_import_of_a_missing_extra_is_one_line_naming_it(tmp_path: Path) -> None:
    """An optional package imported deep inside a command (here matplotlib by `analyse`) still gives one line."""
    code = ("import sys\nfrom benchsuite.cli import main\n"
            "import benchsuite.cli as c\n"
            "def boom(*a, **k):\n    import matplotlib.pyplot\n"
            "c._dispatch = boom\n"
            "sys.exit(main(['list']))\n")
    proc = in_core_env(code, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("benchsuite: error: `benchsuite list` needs the optional package 'matplotlib', "
                                   "which is not installed: pip install 'benchsuite[plot]'")


def test_the_registry_marks_a_plugin_whose_package_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    class NeedsEmcee(Optimizer):
        name = "needs_emcee"
        needs = ("emcee",)

        def ask(self, pending=()):  # pragma: no cover - never constructed
            raise AssertionError

    assert registry._entry("needs_emcee", NeedsEmcee, "builtin").obj is NeedsEmcee  # installed here
    monkeypatch.setitem(sys.modules, "emcee", None)
    entry = registry._entry("needs_emcee", NeedsEmcee, "builtin")
    assert entry.obj is None and entry.error == "needs emcee: pip install 'benchsuite[bo]'"
    assert "unavailable: needs emcee" in entry.description
    with pytest.raises(MissingExtraError, match=r"benchsuite\[bo\]"):
        extras.import_optional("emcee", "this optimizer")
    assert extras.unavailable_reason(["numpy"]) == ""  # installed, extra or not
    assert extras.unavailable_reason(["no_such_pkg_xyz"]) == (
        "needs no_such_pkg_xyz: install no_such_pkg_xyz (no benchsuite extra provides it)")


def test_every_needed_package_is_one_an_extra_provides() -> None:
    for table in (registry.benchmarks(), registry.optimizers()):
        for entry in table.values():
            for module in getattr(entry.obj, "needs", ()):
                assert module in extras.MODULE_EXTRA, (entry.name, module)


# -- item 6: small conventions -----------------------------------------------------------------------------

def test_version() -> None:
    proc = bs("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"benchsuite {__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", __version__)


def test_analyze_is_an_alias_of_analyse(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    a, b = bs("analyse", missing), bs("analyze", missing)
    assert a.returncode == b.returncode == 2
    assert a.stderr == b.stderr and "nope.yaml" in a.stderr
    assert "usage: benchsuite analyse" in bs("analyze", "--help").stdout


@pytest.mark.parametrize("args,start", [
    (["bogus"], "benchsuite: error: argument COMMAND: invalid choice: 'bogus'"),
    (["run", "--budget-evals", "3"], "benchsuite: error: run: the following arguments are required"),
    (["--bogus"], "benchsuite: error: unrecognized arguments: --bogus"),
])
def test_one_error_prefix(args: list[str], start: str) -> None:
    proc = bs(*args)
    assert proc.returncode == 2
    assert proc.stderr.startswith(start), proc.stderr
    assert proc.stderr.count("benchsuite:") == 1 and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("bench,opt,message", [
    ("nope", "random_search", "unknown benchmark 'nope'"),
    ("branin", "nope", "unknown optimizer 'nope'"),
    ("branin", "random_search", "give a budget"),  # with both names right, the budget is what is wrong
])
def test_names_are_checked_before_the_budget(tmp_path: Path, bench: str, opt: str, message: str) -> None:
    proc = bs("run", "-b", bench, "-o", opt, "--out", str(tmp_path / "r.csv"))
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "r.csv").exists()


def test_describe_labels_the_optimum_and_rounds_it() -> None:
    proc = bs("describe", "nb201_cifar10")
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("known optimum")]
    m = re.fullmatch(r"known optimum \(best test error in the table\): (\S+)", line)
    assert m, line
    value = m.group(1)
    assert len(value.replace("0.", "").lstrip("0")) <= 6, value  # 6 significant digits, no float noise
    optimum = registry.make_benchmark("nb201_cifar10").optimum
    assert float(value) == pytest.approx(optimum, rel=1e-5) and float(value) != optimum
    assert "known optimum (loss): 0.397887" in bs("describe", "branin").stdout


def test_license_and_py_typed_are_shipped() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("BSD 3-Clause License") and "Copyright (c) 2026, benchsuite developers" in text
    assert PYPROJECT["project"]["license"] == {"text": "BSD-3-Clause"}
    assert (Path(benchsuite.__file__).parent / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["benchsuite"]
