"""Interrupted simulated runs keep their finished trials and resume from them (a live trial costs GPU-minutes)."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from benchsuite.execute import execute_run, partial_path
from benchsuite.registry import get_benchmark
from benchsuite.results import load_result, load_result_cells, provenance_path, write_result
from benchsuite.runner import RunInterrupted

COMPARED = ["trial", "worker", "status", "config", "fidelity", "ask_time", "start_time", "end_time", "told_time",
            "loss", "cost_s", "incumbent", "incumbent_loss", "incumbent_test_loss"]


def _counting(name: str, stop_at: int | None = None) -> type:
    """The registered benchmark ``name``, counting its evaluations; the ``stop_at``-th raises KeyboardInterrupt
    (Ctrl-C, or SIGTERM turned into it, in the middle of a trial)."""
    base = get_benchmark(name)

    class Counting(base):  # type: ignore[misc,valid-type]
        calls = 0

        def evaluate(self, config, fidelity=None, seed=0):  # noqa: ANN001, ANN201
            type(self).calls += 1
            if stop_at is not None and type(self).calls == stop_at:
                raise KeyboardInterrupt
            return super().evaluate(config, fidelity, seed)

    return Counting


def _run(bench, out: Path, **kw):  # noqa: ANN001, ANN202
    args = {"seed": 3, "budget_evals": 12, "include_overhead": False, "out": out, **kw}
    return execute_run(bench, kw.pop("optimizer", "random_search"), **{k: v for k, v in args.items()
                                                                      if k != "optimizer"})


@pytest.mark.parametrize(("name", "optimizer", "workers"), [("branin", "random_search", 1),
                                                             ("branin_discrete", "regularized_evolution", 1),
                                                             ("branin_mf", "random_search", 3)])
def test_a_resumed_run_equals_the_uninterrupted_one(tmp_path: Path, name: str, optimizer: str, workers: int) -> None:
    whole, _ = _run(_counting(name), tmp_path / "whole.csv", optimizer=optimizer, workers=workers)
    out = tmp_path / "r.csv"
    with pytest.raises(RunInterrupted):
        _run(_counting(name, stop_at=8), out, optimizer=optimizer, workers=workers)
    partial = partial_path(out)
    assert partial.exists() and provenance_path(partial).exists() and not out.exists()
    kept = load_result(partial)
    assert 1 <= len(kept) < 12 and "interrupted" in kept.attrs["provenance"]
    bench = _counting(name)
    resumed, _ = _run(bench, out, optimizer=optimizer, workers=workers)
    assert out.exists() and not partial.exists() and not provenance_path(partial).exists()
    assert provenance_path(out).exists()
    # only the trials not finished before the interrupt were evaluated again
    assert bench.calls == 12 - len(kept)
    a, b = load_result(tmp_path / "whole.csv"), load_result(out)
    assert a[COMPARED].equals(b[COMPARED])
    assert b.attrs["provenance"]["resumed"] == {"from": "r.csv.partial.csv", "trials_reused": len(kept)}
    assert "interrupted" not in b.attrs["provenance"]


def test_a_partial_file_of_another_run_is_not_resumed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "r.csv"
    with pytest.raises(RunInterrupted):
        _run(_counting("branin", stop_at=6), out)
    capsys.readouterr()
    bench = _counting("branin")
    _run(bench, out, seed=4)  # another seed: another run
    assert bench.calls == 12
    assert "not resuming from r.csv.partial.csv: its seed differs (3 there, 4 now)" in capsys.readouterr().err
    assert "resumed" not in load_result(out).attrs["provenance"] and not partial_path(out).exists()


def test_restart_ignores_the_partial_file(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    with pytest.raises(RunInterrupted):
        _run(_counting("branin", stop_at=6), out)
    bench = _counting("branin")
    _run(bench, out, resume=False)
    assert bench.calls == 12 and not partial_path(out).exists()


def test_reuse_stops_where_the_optimizer_asks_for_something_else(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    """A doctored (or stale) row is never taken for what the optimizer asks now: from there on all is evaluated."""
    out = tmp_path / "r.csv"
    with pytest.raises(RunInterrupted):
        _run(_counting("branin", stop_at=9), out)
    partial = partial_path(out)
    # move trial 3's x1, rewriting its config cell and the file through the suite's reader and writer
    kept, table = load_result_cells(partial)
    assert table[3]["trial"] == "3"
    cfg = json.loads(table[3]["config"])
    cfg["x1"] = 0.123
    table[3]["config"] = json.dumps(cfg)
    write_result(partial, table, kept.attrs["provenance"])
    capsys.readouterr()
    bench = _counting("branin")
    _run(bench, out)
    assert bench.calls == 12 - 3  # trials 0-2 reused, 3 onwards evaluated
    err = capsys.readouterr().err
    assert "3 of its 8 finished trial(s) reused; from trial 3 the optimizer asked for other configurations" in err


def test_a_partial_file_changed_behind_its_provenance_is_not_resumed(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    """A partial CSV edited by hand (its provenance file records other bytes) is not reused, and one line says why."""
    out = tmp_path / "r.csv"
    with pytest.raises(RunInterrupted):
        _run(_counting("branin", stop_at=6), out)
    partial = partial_path(out)
    table = list(csv.DictReader(io.StringIO(partial.read_text())))  # as a user's script would
    table[0]["loss"] = "-1000.0"
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(table[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(table)
    partial.write_text(buf.getvalue())
    capsys.readouterr()
    bench = _counting("branin")
    _run(bench, out)
    assert bench.calls == 12 and "does not match its provenance file" in capsys.readouterr().err
    assert not partial.exists() and not provenance_path(partial).exists()


def test_an_unreadable_partial_file_starts_the_run_over(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "r.csv"
    with pytest.raises(RunInterrupted):
        _run(_counting("branin", stop_at=6), out)
    partial = partial_path(out)
    partial.write_text(partial.read_text()[:-20])  # cut mid-row
    bench = _counting("branin")
    _run(bench, out)
    assert bench.calls == 12 and "truncated result file" in capsys.readouterr().err
