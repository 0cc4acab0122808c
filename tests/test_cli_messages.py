"""What the command line says to a new user: help texts that match what the commands do, result names that
say the format written, a note when a run's settings cannot act within its budget, and a progress display
that names the trial, its configuration, its epoch and the test-loss retraining of new incumbents."""
from __future__ import annotations

import argparse
import io
import re
from pathlib import Path

import pandas as pd
import pytest

import benchsuite
from benchsuite import activity, registry
from benchsuite.benchmark import Benchmark, Result
from benchsuite.cli import _parser, main
from benchsuite.cli_progress import RunProgress, TrainingLines
from benchsuite.errors import OutputError
from benchsuite.registry import Entry
from benchsuite.results import PROVENANCE_SUFFIX, RESULT_FORMAT, RESULT_SUFFIX, load_result
from benchsuite.runner import run
from benchsuite.space import Float, Space


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("benchsuite",)):
    """Every (sub)command's parser with its path."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _texts(parser: argparse.ArgumentParser) -> list[str]:
    return [t for t in (parser.description, parser.epilog, *(a.help for a in parser._actions)) if t]


# -- help texts ---------------------------------------------------------------------------------------------

def test_every_flag_a_help_text_names_exists() -> None:
    """A help string that names `--flag` names one of ours (or, for `workflow`, which passes every other option
    on, one of Snakemake's)."""
    root = _parser()
    ours = {o for _, p in _parsers(root) for a in p._actions for o in a.option_strings}
    snakemake_cli = pytest.importorskip("snakemake.cli")
    theirs = {o for a in snakemake_cli.get_argument_parser()._actions for o in a.option_strings}
    unknown = []
    for path, parser in _parsers(root):
        allowed = ours | (theirs if "workflow" in path else set())
        for text in _texts(parser):
            unknown += [(" ".join(path), flag) for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)
                        if flag not in allowed]
    assert not unknown, unknown


FORMATS = ("CSV", "Parquet", "JSON lines", "Feather", "HDF5", "Excel")


def test_help_names_the_result_format_that_is_written(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = _parser()
    for path, parser in _parsers(root):
        for text in _texts(parser):
            if "result file" in text:  # the retired format put its provenance on the first line
                assert "first line" not in text, (path, text)
                named = {f for f in FORMATS if f in text}
                assert named <= {RESULT_FORMAT}, (path, text)
    run_help = next(p for path, p in _parsers(root) if path == ("benchsuite", "run"))
    out_help = next(a.help for a in run_help._actions if "--out" in a.option_strings)
    assert RESULT_FORMAT in out_help and RESULT_SUFFIX in out_help and PROVENANCE_SUFFIX in out_help
    assert RESULT_FORMAT in run_help.description and PROVENANCE_SUFFIX in run_help.description
    # ... and that is what a run writes: a CSV any reader takes with no options, its provenance beside it
    out = tmp_path / f"r{RESULT_SUFFIX}"
    assert main(["run", "-b", "branin", "-o", "random_search", "--budget-evals", "4", "--out", str(out), "-q"]) == 0
    assert len(pd.read_csv(out)) == 4 and (tmp_path / f"r{PROVENANCE_SUFFIX}").is_file()


@pytest.mark.parametrize("name", ["r.parquet", "r.json", "r.jsonl", "r.tsv"])
def test_an_output_name_of_another_format_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                  name: str) -> None:
    out = tmp_path / name
    rc = main(["run", "-b", "branin", "-o", "random_search", "--budget-evals", "4", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("benchsuite: error: "), err
    assert f"a run writes {RESULT_FORMAT}" in err and "r.csv" in err and "load_results" in err
    assert list(tmp_path.iterdir()) == []  # nothing written, not even the provenance file
    with pytest.raises(OutputError, match="a run writes CSV"):  # the Python API refuses it alike
        benchsuite.run("branin", "random_search", budget_evals=4, out=out)


@pytest.mark.parametrize("name", ["r.csv", "results.v2.csv"])
def test_csv_names_are_written(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    assert main(["run", "-b", "branin", "-o", "random_search", "--budget-evals", "3", "--out", str(out), "-q"]) == 0
    assert len(load_result(out)) == 3


@pytest.mark.parametrize("name", ["r.CSV", "run_without_extension"])
def test_names_not_ending_in_csv_are_refused_with_the_name_that_would_do(tmp_path: Path, name: str,
                                                                         capsys: pytest.CaptureFixture) -> None:
    """Without the lower-case .csv a result would share its provenance file's name with another result's."""
    rc = main(["run", "-b", "branin", "-o", "random_search", "--budget-evals", "3", "--out", str(tmp_path / name)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and f"give '{name}.csv'" in err and list(tmp_path.iterdir()) == []


def test_quiet_means_no_progress_and_no_summary(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["run", "-b", "branin", "-o", "random_search", "--budget-evals", "5"]
    assert main([*args, "--out", str(tmp_path / "a.csv")]) == 0
    loud = capsys.readouterr().err
    assert "random_search on branin: 5/5 trials" in loud and loud.rstrip().splitlines()[-1].startswith("wrote ")
    assert main([*args, "--out", str(tmp_path / "b.csv"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


# -- settings that cannot act within the budget ----------------------------------------------------------------

def test_hyperband_below_its_first_full_fidelity_evaluation_says_so(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    """fabolas.txt's SVM axis (1/128..1, eta 3): 81 + 27 + 9 + 3 evaluations come before the first full one."""
    hb = registry.get_optimizer("hyperband")
    axis = registry.make_benchmark("svm_mnist").fidelity
    assert hb.first_full_evaluation({"eta": 3, "min_fidelity": None}, axis) == (121, [81, 27, 9, 3])
    args = ["run", "-b", "svm_mnist", "-o", "hyperband"]
    assert main([*args, "--budget-evals", "50", "--out", str(tmp_path / "a.csv")]) == 0
    err = capsys.readouterr().err.splitlines()
    notes = [e for e in err if e.startswith("benchsuite: note: ")]
    assert len(notes) == 2, err
    assert "first full-fidelity evaluation is number 121" in notes[0] and "--budget-evals 121" in notes[0]
    assert "ended with no incumbent" in notes[1] and err[-1].endswith("no incumbent)")
    assert load_result(tmp_path / "a.csv")["incumbent"].isna().all()  # what the notes say
    assert main([*args, "--budget-evals", "121", "--out", str(tmp_path / "b.csv")]) == 0
    err = capsys.readouterr().err
    assert "note:" not in err and "final incumbent test loss" in err
    assert load_result(tmp_path / "b.csv")["incumbent"].notna().iloc[-1]


def test_a_population_as_large_as_the_budget_is_called_random_search(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    args = ["run", "-b", "nb201_cifar10", "-o", "regularized_evolution", "--budget-evals", "20", "-q"]
    assert main([*args, "--out", str(tmp_path / "a.csv")]) == 0
    (note,) = capsys.readouterr().err.splitlines()
    assert note.startswith("benchsuite: note: optimizer 'regularized_evolution'") and "random search" in note
    assert "--budget-evals 51" in note
    assert main([*args, "--set", "population_size=10", "--set", "sample_size=3",
                 "--out", str(tmp_path / "b.csv")]) == 0
    assert capsys.readouterr().err == ""


def test_the_python_api_keeps_the_notes(capsys: pytest.CaptureFixture) -> None:
    df = benchsuite.run("svm_mnist", "hyperband", budget_evals=30)
    notes = df.attrs["notes"]
    assert len(notes) == 2 and "number 121" in notes[0] and "no incumbent" in notes[1]
    assert capsys.readouterr().err.count("benchsuite: note: ") == 2
    assert benchsuite.run("svm_mnist", "random_search", budget_evals=5).attrs["notes"] == []


def test_every_initial_points_setting_is_a_setting_of_its_plugin() -> None:
    for name, entry in registry.optimizers().items():
        cls = entry.obj or entry.cls
        key = getattr(cls, "initial_points_setting", None)
        if key is not None:
            assert key in cls.settings_spec, (name, key)


# -- --preset ----------------------------------------------------------------------------------------------

def test_preset_is_a_flag_and_is_refused_where_it_cannot_apply(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    from benchsuite.cli import _with_preset

    assert _with_preset("nb201_live", {}, "cpu_small") == {"preset": "cpu_small"}
    assert _with_preset("nb201_live", {"epochs": 2}, None) == {"epochs": 2}
    rc = main(["run", "-b", "branin", "-o", "random_search", "--budget-evals", "3", "--preset", "cpu_small",
               "--out", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "has no presets" in err and "nb201_live" in err
    rc = main(["evaluate", "-b", "nb201_live", "--preset", "cpu_small", "--benchmark-set", "preset=paper",
               "--config", "{}"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "disagree" in err


# -- the progress display ------------------------------------------------------------------------------------

class _Trains(Benchmark):
    """One variable; each evaluation and each test loss reports a two-epoch training, as a live benchmark does."""

    name = "trains"
    description = "reports trainings"

    def setup(self) -> None:
        self.space = Space([Float("x", 0.0, 1.0)])

    def evaluate(self, config, fidelity=None, seed=0):
        import logging

        logging.getLogger("benchsuite.training").info("epoch 1/2: train loss 1.0")
        activity.trained(2, "epochs")
        return Result(float(config["x"]), 1.0)

    def test_loss(self, config) -> float:
        activity.trained(2, "epochs")
        return float(config["x"])


def test_the_log_display_labels_trials_and_counts_test_retrainings() -> None:
    stream = io.StringIO()
    with RunProgress("rs on trains", 6, "simulated clock", stream=stream, tty=False) as shown, \
            TrainingLines(shown):
        output = run(_Trains(), registry.get_optimizer("random_search"), seed=0, budget_evals=6,
                     progress=shown.trial_done)
    incumbents = output.rows[-1]["incumbent"], len({r["incumbent"] for r in output.rows})
    text = stream.getvalue()
    assert "  training trial 0 x=" in text and ": epoch 1/2" in text  # the first one (then one every 10 s)
    assert "rs on trains: 1/6 trials" in text and "rs on trains: 6/6 trials" in text
    # a test-loss training for each new incumbent, said as such and counted apart from the trials'
    n_new = incumbents[1]
    assert shown.trainings == {"trial": 6, "test": n_new}
    assert text.count("test loss of the incumbent after trial") == n_new
    assert shown.trainings_text().startswith(f"6 networks trained for the trials and {n_new} more to score new "
                                             "incumbents on the test set")


def test_the_terminal_display_is_one_bar_naming_trial_configuration_and_epoch() -> None:
    stream = io.StringIO()
    shown = RunProgress("rs on trains", 3, "simulated clock", stream=stream, tty=True)
    with shown, TrainingLines(shown):
        shown.begin(activity.Activity("trial", 0, "x=0.5"))
        shown.training_line("epoch 1/2: train loss 1.0")
        assert "trial 0, epoch 1/2: x=0.5" in stream.getvalue()
        shown.end(activity.Activity("trial", 0, "x=0.5"))
        shown.trial_done(1, 3.0)
        shown.begin(activity.Activity("test", 0, "x=0.5"))
        assert "retraining trial 0's incumbent for its test loss: x=0.5" in stream.getvalue()
        shown.end(activity.Activity("test", 0, "x=0.5"))
    bar = stream.getvalue()
    assert "rs on trains" in bar and "1/3 [" in bar and ("trial/s" in bar or "s/trial" in bar), bar[-300:]


def test_nobody_listening_costs_no_label() -> None:
    called = []
    with activity.doing("trial", 0, lambda: called.append(1) or "x"):
        pass
    assert called == [] and activity.current() is None


def test_configurations_are_summarised_for_one_line() -> None:
    cell = ('{"edge_1_0":"avg_pool_3x3","edge_2_0":"none","edge_2_1":"nor_conv_1x1","edge_3_0":"none",'
            '"edge_3_1":"nor_conv_3x3","edge_3_2":"skip_connect"}')
    assert activity.summary(cell) == "avg_pool_3x3,none,nor_conv_1x1,none,nor_conv_3x3,skip_connect"
    assert activity.summary('{"x1": 3.5, "x2": 1}') == "x1=3.5, x2=1"
    long = activity.summary("[" + ",".join(["1"] * 100) + "]")
    assert len(long) <= 80 and "..." in long


@pytest.fixture()
def trains_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.benchmarks(), "trains", Entry("trains", _Trains, "test"))


def test_the_summary_line_counts_the_trainings(tmp_path: Path, capsys: pytest.CaptureFixture,
                                               trains_plugin: None) -> None:
    assert main(["run", "-b", "trains", "-o", "random_search", "--budget-evals", "4",
                 "--out", str(tmp_path / "r.csv")]) == 0
    last = capsys.readouterr().err.rstrip().splitlines()[-1]
    assert last.startswith(f"wrote {tmp_path / 'r.csv'} (4 trials; 4 networks trained for the trials and ")
    assert "final incumbent test loss" in last


# -- noise ---------------------------------------------------------------------------------------------------

def test_a_killed_dask_worker_is_said_in_one_sentence_naming_it() -> None:
    from benchsuite.backends import _dask_lost

    class KilledWorker(Exception):
        pass

    text = ("Attempted to run task 'benchsuite-trial-5-1-2' on 1 different workers, but all those workers died "
            "while running it. The last worker that attempt to run the task was tcp://127.0.0.1:44555. Inspecting "
            "worker logs is often a good next step to diagnose what went wrong. For more information see "
            "https://distributed.dask.org/en/stable/killed.html.")
    line = _dask_lost(KilledWorker(text))
    assert line.startswith("dask worker tcp://127.0.0.1:44555 died during the evaluation (") and line.endswith(")")
    assert len(line) < 200


def test_a_long_evaluation_error_is_cut_in_its_middle_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    class Long(_Trains):
        def evaluate(self, config, fidelity=None, seed=0):
            raise ValueError("start of the reason " + "x" * 600 + " end of the reason")

    monkeypatch.setitem(registry.benchmarks(), "long", Entry("long", Long, "test"))
    assert main(["run", "-b", "long", "-o", "random_search", "--budget-evals", "1", "-q",
                 "--out", str(tmp_path / "r.csv")]) == 0
    line = next(x for x in capsys.readouterr().err.splitlines() if "trial 0 failed" in x)
    assert "start of the reason" in line and "end of the reason" in line and "characters cut]" in line
