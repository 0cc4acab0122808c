"""`benchsuite race` and `benchsuite stats`: a new optimizer against committed runs, and the tests on any runs.

A small protocol (two synthetic benchmarks, three methods, four repetitions of 15 evaluations) is run and
committed once per module into a temporary reproductions folder; the races below put plugins written here
against it.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("scikit_posthocs")  # the [stats] extra (installed by scripts/test.sh through [all])

from benchsuite.analysis import baselines as B  # noqa: E402
from benchsuite.analysis import race as R  # noqa: E402
from benchsuite.analysis import reproductions as REPRO  # noqa: E402
from benchsuite.analysis import scorecard as S  # noqa: E402
from benchsuite.cli import main  # noqa: E402
from benchsuite.protocol import load_protocol  # noqa: E402
from benchsuite.results import load_result  # noqa: E402
from benchsuite.seeding import derive_seed  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TINY = """\
description: a race test protocol (two synthetic benchmarks, three methods)
benchmarks:
  - {name: branin_discrete, label: branin_discrete}
  - {name: contamination, label: contamination, settings: {lambda: 0.0}, instances: {setting: problem_seed, count: 2}}
optimizers:
  - random_search
  - regularized_evolution
  - {name: simulated_annealing, settings: {n_init: 5}}
repetitions: 4
budget: {evaluations: 15}
workers: 1
include_overhead: false
quantity: incumbent_loss
published:
  paper: Example
  source: invented for tests
  error_kind: standard_error
  runs: 4
  cells:
    - {benchmark: branin_discrete, optimizer: random_search, method: RS, value: 3.0, error: 0.5}
"""
PLUGINS = '''\
"""Optimizers a user might race: random search under another name, one that never moves, one that breaks."""
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion
from benchsuite.settings import Setting


class Mine(Optimizer):
    name = "mine"
    supports = Capabilities(spaces={"discrete", "continuous", "mixed"}, fidelity="ignores", parallel=True,
                            initial_design=True)
    settings_spec = {"extra": Setting(0, "an unused knob")}

    def ask(self, pending=()):
        return Suggestion(self.sample_initial(), self.full_fidelity())


class Stuck(Optimizer):
    name = "stuck"
    supports = Capabilities(spaces={"discrete"}, fidelity="ignores", parallel=True)

    def setup(self):
        self.first = self.space.sample(self.rng)

    def ask(self, pending=()):
        return Suggestion(self.first, self.full_fidelity())


class Breaks(Optimizer):
    name = "breaks"
    supports = Capabilities(spaces={"discrete"}, fidelity="ignores", parallel=True)

    def ask(self, pending=()):
        if len(self.space) > 5:
            raise RuntimeError("too many variables for me")
        return Suggestion(self.space.sample(self.rng), self.full_fidelity())


class OnlyContinuous(Optimizer):
    name = "only_continuous"
    supports = Capabilities(spaces={"continuous"}, fidelity="ignores", parallel=True)

    def ask(self, pending=()):
        return Suggestion(self.space.sample(self.rng), self.full_fidelity())
'''


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny protocol, its committed runs (collected as the suite's are) and the plugin file."""
    base = tmp_path_factory.mktemp("race")
    protos = base / "protocols"
    protos.mkdir()
    (protos / "tiny.yaml").write_text(TINY, encoding="utf-8")
    proto = load_protocol(protos / "tiny.yaml")
    for job in proto.jobs():
        out = base / "wf" / job.result_path
        out.parent.mkdir(parents=True, exist_ok=True)
        assert main(["run-job", str(protos / "tiny.yaml"), job.benchmark.label, job.optimizer.label,
                     str(job.repetition), "--out", str(out), "-q"]) == 0
    repro = base / "reproductions"
    rep = REPRO.collect(proto, base / "wf" / "results", repro)
    assert rep["written"] and rep["runs"] == 24
    plugins = base / "plugins.py"
    plugins.write_text(PLUGINS, encoding="utf-8")
    return {"base": base, "protos": protos, "repro": repro, "plugins": plugins}


def _race(world: dict[str, Path], spec: str, out: Path, *extra: str) -> int:
    draws = [] if "--power-draws" in extra else ["--power-draws", "0"]  # the simulation is tested on its own
    return main(["race", spec, "--protocol", "tiny", "--protocols-dir", str(world["protos"]), "--reproductions",
                 str(world["repro"]), "--out", str(out), "-q", *draws, *extra])


def test_a_race_runs_only_the_new_methods_jobs_with_the_protocols_seed_rule_and_resumes(
        world: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    spec = f"{world['plugins']}:Mine"
    assert _race(world, spec, out, "--label", "mine") == 0
    proto = load_protocol(world["protos"] / "tiny.yaml")
    files = sorted((out / "results").rglob("rep*.csv"))
    assert len(files) == 8  # 2 benchmarks x 4 repetitions, of the new method only
    for f in files:
        df = load_result(f)
        prov = df.attrs["provenance"]
        b, r = f.parent.parent.name, int(f.stem[3:])
        assert f.parent.name == "mine" and prov["optimizer_label"] == "mine"
        assert prov["seed"] == derive_seed("tiny", b, "mine", r)  # the protocol's rule with the new label
        assert len(df) == 15 and prov["budget_evals"] == 15 and prov["include_overhead"] is False
        # the same problem instance as every committed method's repetition r
        assert prov["benchmark_settings"] == {**proto.job(b, "random_search", r).benchmark.settings_for(r),
                                              **{k: v for k, v in prov["benchmark_settings"].items()
                                                 if k not in proto.job(b, "random_search", r).benchmark.settings_for(r)}}
        if b == "contamination":
            assert prov["benchmark_settings"]["problem_seed"] == r % 2
    err = capsys.readouterr().err
    assert "8 run(s), 0 finished already, 8 to run" in err
    before = {f: f.read_bytes() for f in files}
    assert _race(world, spec, out, "--label", "mine") == 0
    assert "8 run(s), 8 finished already, 0 to run" in capsys.readouterr().err
    assert {f: f.read_bytes() for f in files} == before
    # another setting under the same label: refused before anything runs, nothing overwritten
    assert _race(world, spec, out, "--label", "mine", "--settings", "extra=3") == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "made with other settings" in line and "another --label" in line
    assert {f: f.read_bytes() for f in files} == before


def test_the_report_has_the_table_the_verdicts_by_the_scorecards_rule_and_the_statistics(
        world: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert _race(world, f"{world['plugins']}:Mine", out, "--label", "mine", "--power-draws", "10") == 0
    page = (out / "report" / "index.md").read_text(encoding="utf-8")
    for text in ("# Race: `mine`", "### Table at the budget", "**`mine` (new)**", "paper: 3",
                 "### `mine` against each baseline", "Friedman test", "critical-difference diagram",
                 "### Power of this comparison", "## Cost", "derive_seed(protocol, benchmark, \"mine\", repetition)"):
        assert text in page, text
    results = pd.read_csv(out / "report" / "results.csv")
    verdicts = pd.read_csv(out / "report" / "verdicts.csv", keep_default_na=False)
    assert set(results["method"]) == {"random_search", "regularized_evolution", "simulated_annealing", "mine"}
    assert len(verdicts) == 2 * 3
    # each verdict is scorecard.compare's, the baseline's committed mean and SE in the paper's place
    curves, _ = B.committed_curves(load_protocol(world["protos"] / "tiny.yaml"), world["repro"])
    mine = results[(results["method"] == "mine") & (results["benchmark"] == "branin_discrete")].iloc[0]
    ref = curves[(curves["optimizer"] == "simulated_annealing") & (curves["benchmark"] == "branin_discrete")][B.FINAL]
    cell = R._Reference(float(ref.mean()), float(ref.std(ddof=1) / np.sqrt(len(ref))), 4)
    want = S.compare(cell, mine["mean"], mine["se"], mine["sd"], int(mine["n"]))
    got = verdicts[(verdicts["baseline"] == "simulated_annealing") & (verdicts["benchmark"] == "branin_discrete")]
    assert got.iloc[0]["verdict"] == want.verdict and got.iloc[0]["how"] == want.text
    # the published value stands beside the committed one, in the suite's units
    pub = results[(results["method"] == "random_search") & (results["benchmark"] == "branin_discrete")].iloc[0]
    assert pub["published"] == 3.0 and pub["published_se"] == 0.5
    stats = pd.read_csv(out / "report" / "stats.csv")
    overall = stats[stats["scope"] == "all protocols"]
    assert set(overall["at"]) == {"the budget", "25 % of the budget"} and (overall["n_blocks"] == 8).all()
    assert (out / "report" / "cd_budget.png").is_file() and (out / "report" / "curves_tiny.png").is_file()


def test_the_same_numbers_from_the_runs_and_from_the_compact_form_a_wheel_ships(
        world: dict[str, Path], tmp_path: Path) -> None:
    proto = load_protocol(world["protos"] / "tiny.yaml")
    repro = tmp_path / "repro"
    shutil.copytree(world["repro"], repro)
    assert B.update_compact({"tiny": proto}, repro) == [str(repro / "tiny" / B.COMPACT_FILE)]
    assert B.update_compact({"tiny": proto}, repro) == []  # current: not rewritten
    runs, head_runs = B.committed_curves(proto, repro, "runs")
    compact, head_compact = B.committed_curves(proto, repro, "compact")
    pd.testing.assert_frame_equal(runs, compact, check_exact=True)
    assert head_runs["source"] == "runs" and head_compact["source"] == "compact"
    # a folder holding only the compact files, as the wheel does: auto reads them, and the race says the same
    wheel = tmp_path / "wheel"
    (wheel / "tiny").mkdir(parents=True)
    shutil.copy(repro / "tiny" / B.COMPACT_FILE, wheel / "tiny" / B.COMPACT_FILE)
    assert B.committed_curves(proto, wheel)[1]["source"] == "compact"
    reports = []
    for folder in (repro, wheel):
        out = tmp_path / f"race-{folder.name}"
        assert main(["race", f"{world['plugins']}:Mine", "--protocol", "tiny", "--protocols-dir",
                     str(world["protos"]), "--reproductions", str(folder), "--out", str(out), "--power-draws", "20",
                     "-q"]) == 0
        reports.append({n: (out / "report" / n).read_text() for n in ("results.csv", "verdicts.csv", "stats.csv",
                                                                       "power.csv")})
    assert reports[0] == reports[1]


def test_a_changed_protocol_makes_its_compact_record_a_one_line_error(world: dict[str, Path], tmp_path: Path) -> None:
    repro = tmp_path / "repro"
    shutil.copytree(world["repro"], repro)
    proto = load_protocol(world["protos"] / "tiny.yaml")
    B.write_compact(proto, repro)
    changed = tmp_path / "tiny.yaml"
    changed.write_text(TINY.replace("budget: {evaluations: 15}", "budget: {evaluations: 16}"), encoding="utf-8")
    with pytest.raises(Exception, match="made for another version of protocol file") as err:
        B.committed_curves(load_protocol(changed), repro, "compact")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["nasbot_cpu", "fabolas_svm_grid"])
def test_the_shipped_compact_curves_are_the_committed_runs_and_end_at_the_scorecards_values(name: str) -> None:
    """The wheel's record of a protocol reads back as the runs themselves give it, and its value at the budget is
    the scorecard's, bit for bit (two small protocols here; every protocol's is checked current below)."""
    proto = load_protocol(ROOT / "protocols" / f"{name}.yaml")
    root = ROOT / "reproductions"
    runs, _ = B.committed_curves(proto, root, "runs")
    compact, _ = B.committed_curves(proto, root, "compact")
    pd.testing.assert_frame_equal(runs, compact, check_exact=True)
    df, prov = REPRO.load_committed(root, name)
    df, _ = REPRO.without_stale(proto, df, prov)
    values = S.run_values(proto, df).sort_values(["benchmark", "optimizer", "repetition"]).reset_index(drop=True)
    mine = runs.sort_values(["benchmark", "optimizer", "repetition"]).reset_index(drop=True)
    assert (mine[B.FINAL].to_numpy() == values["value"].to_numpy(float)).all()


def test_every_committed_protocols_compact_record_is_current() -> None:
    from benchsuite.protocol import load_protocols

    protocols = load_protocols(ROOT / "protocols")
    root = ROOT / "reproductions"
    stale = [n for n in sorted(protocols) if (root / n / REPRO.RUNS_FILE).exists()
             and not B.compact_is_current(protocols[n], root)]
    assert not stale, f"race.csv.xz out of date for {stale}: run `benchsuite reproductions`"


def test_ci_checks_fail_a_method_that_is_worse_and_pass_one_that_is_not(world: dict[str, Path], tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "stuck"
    code = _race(world, f"{world['plugins']}:Stuck", out, "--fail-if-worse-than", "simulated_annealing",
                 "--fail-if-rank-below", "1", "--alpha", "0.5")
    err = capsys.readouterr().err
    assert code == 1
    assert "race: FAIL: `stuck` places 4 of 4 by mean rank" in err
    page = (out / "report" / "index.md").read_text(encoding="utf-8")
    assert "## CI checks" in page and "**FAIL**" in page
    # a method not compared is a failed check, never a silent pass
    assert _race(world, f"{world['plugins']}:Stuck", out, "--fail-if-worse-than", "tpe") == 1
    assert "`tpe` is not in the comparison" in capsys.readouterr().err
    # too few blocks to test: the check fails, saying why
    assert _race(world, f"{world['plugins']}:Mine", tmp_path / "few", "--reps", "2", "--label", "m2",
                 "--fail-if-worse-than", "random_search") == 1
    assert "could not test (Too few complete blocks" in capsys.readouterr().err
    assert _race(world, f"{world['plugins']}:Mine", tmp_path / "ok", "--fail-if-rank-below", "4") == 0


def test_a_plugin_that_raises_is_one_line_per_run_and_the_rest_is_kept(world: dict[str, Path], tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    assert _race(world, f"{world['plugins']}:Breaks", out) == 1
    err = capsys.readouterr().err
    failed = [line for line in err.splitlines() if "FAILED" in line]
    assert len(failed) == 4 and all("contamination" in line and "too many variables" in line for line in failed)
    assert all("traceback in" in line for line in failed)
    assert len(list((out / "results" / "tiny" / "branin_discrete" / "breaks").glob("rep*.csv"))) == 4
    assert not list((out / "results" / "tiny" / "contamination" / "breaks").glob("rep*.csv"))
    page = (out / "report" / "index.md").read_text(encoding="utf-8")
    assert "## Failed runs" in page and "4 run(s) of the new method failed" in page


@pytest.mark.parametrize("args, words", [
    (["--label", "random_search"], "is a method of protocol 'tiny' already"),
    (["--suite", "nope"], "invalid choice: 'nope'"),
    (["--settings", "nope=1"], "has no setting(s) nope"),
])
def test_bad_input_is_one_line(world: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               args: list[str], words: str) -> None:
    assert _race(world, f"{world['plugins']}:Mine", tmp_path / "r", *args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err
    assert not (tmp_path / "r").exists()


def test_an_optimizer_that_runs_on_no_benchmark_of_the_race_says_why(world: dict[str, Path], tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert _race(world, f"{world['plugins']}:OnlyContinuous", tmp_path / "r") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "can run on none of the race's benchmarks" in err and "not supported" in err


def test_runs_in_parallel_processes_give_the_same_result_files(world: dict[str, Path], tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert _race(world, f"{world['plugins']}:Mine", a, "--reps", "2") == 0
    assert _race(world, f"{world['plugins']}:Mine", b, "--reps", "2", "--jobs", "2") == 0
    files = sorted((a / "results").rglob("rep*.csv"))
    assert len(files) == 4
    for f in files:  # every column but the measured overhead (off the clock in this protocol)
        x, y = load_result(f), load_result(b / f.relative_to(a))
        pd.testing.assert_frame_equal(x.drop(columns="overhead_s"), y.drop(columns="overhead_s"), check_exact=True)


def test_power_counts_detections_by_simulation() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for bench in ("p/a", "p/b"):
        for r in range(20):
            base = rng.normal()
            for m, shift in (("random_search", 0.0), ("good", -2.0), ("same", 0.0)):
                rows.append({"benchmark": bench, "optimizer": m, "repetition": r, "value": base + shift
                             + 0.3 * rng.normal()})
    # 16 blocks: from 14 on, SciPy's Wilcoxon test of tied (resampled) pairs is the normal approximation, not a
    # permutation test over 2^n sign patterns (a second per test)
    table = R.power(pd.DataFrame(rows), ["random_search", "good", "same"], repetitions=8, draws=30, alpha=0.05)
    t = table.set_index("method")
    assert t.loc["good", "detected"] == 1.0 and t.loc["good", "effect"] > 0.9
    assert t.loc["same", "detected"] <= 0.2
    sentence = R.power_sentence(table)
    assert "a method whose mean rank is" in sentence and "`good`" in sentence and "16 blocks" in sentence
    assert "No power statement" in R.power_sentence(R.power(pd.DataFrame(rows), ["good", "same"], 6, 5, 0.05))


def test_the_suites_name_protocols_and_benchmarks_that_exist() -> None:
    from benchsuite.protocol import load_protocols

    protocols = load_protocols(ROOT / "protocols")
    for suite in R.SUITES.values():
        for name, only in suite.members:
            assert name in protocols, (suite.name, name)
            labels = {b.label for b in protocols[name].benchmarks}
            assert only is None or set(only) <= labels, (suite.name, name, only)
            assert (ROOT / "reproductions" / name / REPRO.RUNS_FILE).exists(), (suite.name, name)
    # the quick suite runs no training: synthetic problems and lookup tables only
    from benchsuite import registry

    for name, only in R.SUITES["quick"].members:
        for b in protocols[name].benchmarks:
            if only is None or b.label in only:
                assert registry.get_benchmark(b.name).kind in ("synthetic", "tabular"), b.name


def test_stats_prints_the_tests_of_any_result_files_and_writes_them(world: dict[str, Path], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from benchsuite import api

    folder = world["base"] / "wf" / "results"
    out = tmp_path / "st"
    assert main(["stats", str(folder), "--quantity", "incumbent_loss", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "## At 25 % of the budget" in text and "## At the budget" in text and "Friedman test" in text
    want = api.statistics(folder, quantity="incumbent_loss", fractions=(0.25, 1.0))
    got = pd.read_csv(out / "stats.csv")
    assert np.allclose(got["p_holm"].to_numpy(float), pd.concat([c.to_frame() for c in want])["p_holm"].to_numpy(float))
    assert (out / "stats.md").is_file() and (out / "cd_budget.png").is_file()
    assert main(["stats", str(tmp_path / "missing")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_the_compact_format_is_checked(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="unreadable race baselines"):
        B.parse_compact(json.dumps({"format": "something else", "version": 1}) + "\n", "x")
    text = B.compact_text(pd.DataFrame(columns=[*B.KEYS, B.HOURS, *B.CURVE_COLUMNS]), {"protocol": "p"})
    df, head = B.parse_compact(text, "x")
    assert len(df) == 0 and head["fractions"] == list(B.FRACTIONS)
    assert 0.25 in B.FRACTIONS and 0.5 in B.FRACTIONS and B.FRACTIONS[-1] == 1.0 and len(B.FRACTIONS) < 50


def test_the_docs_race_commands_parse_and_plan() -> None:
    """Every `benchsuite race` / `stats` command of the README and the docs parses, and each race plans (its suite
    or protocols resolve, its benchmarks build) with a plugin standing in for the user's optimizer; the quick
    suite itself runs in scripts/check_wheel.sh, from an installed wheel."""
    import re

    from benchsuite.cli import _parser
    from benchsuite.optimizer import Capabilities, Optimizer, Suggestion

    class Stand(Optimizer):
        name = "stand_in"
        supports = Capabilities(spaces={"continuous", "discrete", "mixed", "architecture"}, fidelity="ignores",
                                parallel=True, initial_design=True)

        def ask(self, pending=()):
            return Suggestion(self.sample_initial(), self.full_fidelity())

    seen = 0
    for doc in ("README.md", "docs/race.md", "docs/plugin_ci.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        commands = re.findall(r"^\s*benchsuite ((?:race|stats) [^#\n]*)", text, re.M)
        assert commands, doc
        for cmd in commands:
            args = _parser().parse_args(cmd.split())
            seen += 1
            if args.command != "race":
                continue
            options = R.RaceOptions(optimizer=args.optimizer, label="stand_in", protocols=tuple(args.protocols),
                                    suite=args.suite, repetitions=args.reps, jobs=args.jobs,
                                    fail_if_worse_than=tuple(args.fail_if_worse_than))
            plan = R.plan(options, Stand)
            assert plan.jobs(), cmd
    assert seen >= 6


def test_without_the_stats_and_plot_extras_a_race_writes_its_tables_and_names_them(
        world: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A core install (no scikit-posthocs, no matplotlib) still gets the tables and verdicts, and the page says
    which extra the tests and figures need."""
    import sys

    from benchsuite import extras
    from benchsuite.errors import MissingExtraError

    def missing(module: str, what: str):
        raise MissingExtraError(f"{what} needs the optional package {module!r}, which is not installed: "
                                f"{extras.install_hint('stats')}")

    monkeypatch.setattr(extras, "import_optional", missing)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "r"
    assert _race(world, f"{world['plugins']}:Mine", out) == 0
    page = (out / "report" / "index.md").read_text(encoding="utf-8")
    assert "No statistics:" in page and "benchsuite[stats]" in page and "No figures:" in page
    assert "### Table at the budget" in page and "against each baseline" in page
    assert not list((out / "report").glob("*.png"))
