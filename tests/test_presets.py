"""Live benchmarks: named presets, the paper-size notice and training progress lines (issue 27, item 4)."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from benchsuite import registry  # noqa: E402
from benchsuite.cli import _paper_sized_notice, main  # noqa: E402
from benchsuite.errors import InvalidSettingError  # noqa: E402
from benchsuite.live import LiveTrainingBenchmark  # noqa: E402

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
LIVE = sorted(n for n, e in registry.benchmarks().items()
              if isinstance(e.obj, type) and issubclass(e.obj, LiveTrainingBenchmark))


def test_every_live_benchmark_has_a_cpu_small_preset_that_runs_on_one_cpu_thread() -> None:
    assert {"nb201_live", "combo_nas", "deeparchitect_cifar10", "nasbot_mlp_naval", "nasbot_cnn_cifar10"} <= set(LIVE)
    for name in LIVE:
        b = registry.make_benchmark(name, {"preset": "cpu_small"})
        assert b.settings["preset"] == "cpu_small" and b.settings["device"] == "cpu" and b.settings["threads"] == 1
        paper = registry.make_benchmark(name, {})
        assert paper.settings["preset"] == "paper"
        assert b.full_fidelity() < paper.full_fidelity(), name  # a quick try trains less


def test_explicit_settings_win_over_the_preset_and_unknown_presets_are_refused() -> None:
    b = registry.make_benchmark("nb201_live", {"preset": "cpu_small", "epochs": 7})
    assert b.settings["epochs"] == 7 and b.settings["channels"] == 8
    with pytest.raises(InvalidSettingError, match="preset='tiny' must be one of 'paper', 'cpu_small'"):
        registry.make_benchmark("nb201_live", {"preset": "tiny"})


def test_deeparchitect_cpu_small_shrinks_the_chosen_space() -> None:
    flat = registry.make_benchmark("deeparchitect_cifar10", {"preset": "cpu_small", "space": "flat"})
    assert flat.settings["space_options"] == {"c0": 4}
    mine = registry.make_benchmark("deeparchitect_cifar10", {"preset": "cpu_small", "space_options": {"c0": 2},
                                                             "space": "flat"})
    assert mine.settings["space_options"] == {"c0": 2}


def test_describe_lists_the_presets(capsys: pytest.CaptureFixture) -> None:
    assert main(["describe", "combo_nas"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("preset ="))
    assert "cpu_small (channels=4" in line and "paper (the defaults" in line


def test_a_paper_sized_live_run_says_what_each_trial_trains() -> None:
    text = _paper_sized_notice("nb201_live")
    assert "up to 200 training epochs on 25,000 training examples" in text and "preset=cpu_small" in text
    assert "H200" in text
    assert _paper_sized_notice("branin") == "" and _paper_sized_notice("no_such_benchmark") == ""


@pytest.mark.skipif(not (SHARED / "cifar10_jpeg").exists(), reason=f"no CIFAR-10 in {SHARED}")
def test_a_live_run_prints_training_progress(tmp_path: Path, capsys: pytest.CaptureFixture,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHSUITE_DATA", str(SHARED))
    tiny = registry.get_benchmark("nb201_live").test_settings
    args = ["run", "-b", "nb201_live", "-o", "random_search", "--budget-evals", "1"]
    for k, v in tiny.items():
        args += ["--benchmark-set", f"{k}={v}"]
    assert main([*args, "--out", str(tmp_path / "r.csv")]) == 0
    err = capsys.readouterr().err
    # each training line names the trial and its configuration (the six operations of the cell)
    line = next(x for x in err.splitlines() if "epoch 1/" in x)
    assert line.startswith("  training trial 0 ") and line.count(",") >= 5, line
    assert "at the paper's size" not in err
    # the threads a CPU trial trained with are in its info (test settings: one)
    import json

    from benchsuite.results import load_result

    assert json.loads(load_result(tmp_path / "r.csv")["info"].iloc[0])["cpu_threads"] == 1
    assert main([*args, "--out", str(tmp_path / "q.csv"), "--quiet"]) == 0
    assert "training:" not in capsys.readouterr().err
