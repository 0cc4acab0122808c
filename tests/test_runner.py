"""The run loop: determinism, asynchronous workers on the simulated clock, budgets, failures."""
import math

import pandas as pd
import pytest

from benchsuite.benchmark import Benchmark, Result
from benchsuite.errors import BudgetError, InvalidSettingError, UnsupportedError
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion
from benchsuite.registry import get_optimizer, make_benchmark
from benchsuite.results import COLUMNS, TIMING_COLUMNS, format_result, load_result, write_result
from benchsuite.runner import run
from benchsuite.seeding import derive_seed, evaluation_seed

RS = get_optimizer("random_search")


def _frame(output, tmp_path, name):
    path = tmp_path / name
    write_result(path, output.rows, output.provenance)
    return load_result(path)


def test_same_seed_same_non_timing_columns(tmp_path):
    bench = make_benchmark("branin_mf")
    a = _frame(run(bench, RS, seed=7, budget_evals=30, workers=3), tmp_path, "a.csv")
    b = _frame(run(bench, RS, seed=7, budget_evals=30, workers=3), tmp_path, "b.csv")
    c = _frame(run(bench, RS, seed=8, budget_evals=30, workers=3), tmp_path, "c.csv")
    keep = [col for col in a.columns if col not in TIMING_COLUMNS]
    pd.testing.assert_frame_equal(a[keep], b[keep])
    assert not a["config"].equals(c["config"])


def test_fully_deterministic_without_overhead(tmp_path):
    bench = make_benchmark("branin_mf")
    outs = [run(bench, RS, seed=1, budget_evals=20, workers=4, include_overhead=False) for _ in range(2)]
    # every column but the measured overhead is identical, the simulated times included
    texts = [format_result([{**r, "overhead_s": None} for r in o.rows], {}) for o in outs]
    assert texts[0] == texts[1]


def test_async_workers_overlap_and_clock_is_event_time():
    bench = make_benchmark("branin_mf")
    rows = run(bench, RS, seed=0, budget_evals=40, workers=4, include_overhead=False).rows
    df = pd.DataFrame(rows).sort_values("start_time")
    assert set(df["worker"]) == {0, 1, 2, 3}
    # some trial starts before an earlier-started one ends: trials overlap in simulated time
    overlaps = sum((df["start_time"].values[i + 1] < df["end_time"].values[i]) for i in range(len(df) - 1))
    assert overlaps > 10
    makespan = df["end_time"].max()
    assert makespan < 0.5 * df["cost_s"].sum()  # four workers: far less than the sum of costs
    assert makespan >= df["cost_s"].sum() / 4 - 1e-9
    # each worker runs one trial at a time
    for _, g in df.groupby("worker"):
        g = g.sort_values("start_time")
        assert (g["start_time"].values[1:] >= g["end_time"].values[:-1] - 1e-9).all()
    # rows are in tell order: end times never decrease
    ends = [r["end_time"] for r in rows]
    assert ends == sorted(ends)


def test_overhead_is_on_the_clock_when_included():
    bench = make_benchmark("branin")
    rows = run(bench, RS, seed=0, budget_evals=10, include_overhead=True).rows
    last = rows[-1]
    total = sum(r["cost_s"] + r["overhead_s"] for r in rows)
    assert math.isclose(last["told_time"], total, rel_tol=1e-9)
    assert all(r["overhead_s"] > 0 for r in rows)
    rows0 = run(bench, RS, seed=0, budget_evals=10, include_overhead=False).rows
    assert rows0[-1]["told_time"] == pytest.approx(10.0)


def test_budget_in_seconds():
    bench = make_benchmark("branin_mf")
    rows = run(bench, RS, seed=0, budget_seconds=1000, workers=2, include_overhead=False).rows
    assert all(r["start_time"] < 1000 for r in rows)
    assert max(r["end_time"] for r in rows) >= 1000 or len(rows) > 0


@pytest.mark.parametrize("evals,seconds", [(0, None), (-3, None), (None, -1.0), (None, None), (None, 0)])
def test_bad_budgets(evals, seconds):
    with pytest.raises(BudgetError):
        run(make_benchmark("branin"), RS, seed=0, budget_evals=evals, budget_seconds=seconds)


def test_unknown_setting_rejected():
    with pytest.raises(InvalidSettingError, match="no setting.*n_init"):
        run(make_benchmark("branin"), RS, seed=0, budget_evals=3, optimizer_settings={"n_init": 3})


def test_unsupported_pairing_refused():
    class ContinuousOnly(Optimizer):
        name = "continuous_only"
        description = "test"
        supports = Capabilities(spaces={"continuous"}, parallel=False)

        def ask(self, pending=()):
            return Suggestion(self.space.sample(self.rng))

    with pytest.raises(UnsupportedError, match="supports \\['continuous'\\].*discrete"):
        run(make_benchmark("branin_discrete"), ContinuousOnly, seed=0, budget_evals=3)
    with pytest.raises(UnsupportedError, match="only 1 worker"):
        run(make_benchmark("branin"), ContinuousOnly, seed=0, budget_evals=3, workers=2)


def test_incumbent_and_test_loss_columns():
    rows = run(make_benchmark("branin"), RS, seed=3, budget_evals=25).rows
    best = math.inf
    for r in rows:
        best = min(best, r["loss"])
        assert r["incumbent_loss"] == pytest.approx(best)
        assert r["incumbent_test_loss"] == pytest.approx(best)  # noiseless synthetic: test = observed


def test_failed_evaluations_are_recorded_not_fatal():
    from benchsuite.testing import _FailingEvery

    rows = run(_FailingEvery(make_benchmark("branin"), k=3), RS, seed=0, budget_evals=9).rows
    failed = [r for r in rows if r["status"] == "failed"]
    assert len(failed) == 3 and all(math.isnan(r["loss"]) for r in failed)
    assert "injected failure" in failed[0]["info"]["error"]


def test_seeds_are_stable_and_independent():
    assert derive_seed("proto", "gp_ei", 0) == derive_seed("proto", "gp_ei", 0)
    assert derive_seed("proto", "gp_ei", 0) != derive_seed("proto", "gp_ei", 1)
    assert 0 <= derive_seed("proto", "gp_ei", 0) < 2**31
    assert evaluation_seed(0, 5) == evaluation_seed(0, 5) != evaluation_seed(0, 6)


def test_result_file_round_trip_and_provenance(tmp_path):
    out = run(make_benchmark("branin"), RS, seed=0, budget_evals=5, extra_provenance={"protocol": "p"})
    df = _frame(out, tmp_path, "r.csv")
    prov = df.attrs["provenance"]
    assert prov["protocol"] == "p" and prov["seed"] == 0 and prov["optimizer"] == "random_search"
    for key in ("benchsuite_version", "git_commit", "python", "numpy", "hostname", "benchmark_settings"):
        assert key in prov
    assert list(df["loss"]) == [r["loss"] for r in out.rows]  # exact float round trip
    plain = pd.read_csv(tmp_path / "r.csv")  # one call, no options, no helper needed
    assert plain.shape == (5, len(COLUMNS) + 2) and list(plain.columns[-2:]) == ["config_x1", "config_x2"]


def test_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    import benchsuite.results as results

    target = tmp_path / "r.csv"

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(results.os, "fsync", boom)
    with pytest.raises(KeyboardInterrupt):
        results.write_result(target, [{"trial": 0}], {})
    assert list(tmp_path.iterdir()) == []


def test_result_files_get_ordinary_permissions(tmp_path):
    """Atomic writes go through mkstemp (owner-only); the renamed file follows the umask."""
    import os
    import stat

    import benchsuite.results as results

    old = os.umask(0o022)
    try:
        results.write_result(tmp_path / "r.csv", [{"trial": 0}], {})
        assert stat.S_IMODE((tmp_path / "r.csv").stat().st_mode) == 0o644
        assert stat.S_IMODE((tmp_path / "r.provenance.json").stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_missing_data_stops_the_run_before_any_trial(tmp_path):
    """A live benchmark's prepare() loads its data first: a missing file is one error, not N failed trials."""
    from benchsuite.cli import main
    from benchsuite.errors import DataError

    # source jpeg: that archive has no download address, so nothing touches the network
    bench = make_benchmark("combo_nas", {"data_dir": str(tmp_path / "empty"), "channels": 4, "source": "jpeg"})
    with pytest.raises(DataError, match="cifar"):
        run(bench, RS, seed=0, budget_evals=3)
    out = tmp_path / "r.csv"
    code = main(["run", "-b", "combo_nas", "-o", "random_search", "--budget-evals", "2",
                 "--benchmark-set", f"data_dir={tmp_path / 'empty'}", "--benchmark-set", "source=jpeg",
                 "--out", str(out)])
    assert code == 2 and not out.exists()


class _BadCost(Benchmark):
    """Branin whose every third evaluation reports a broken cost (NaN, -1, inf or a string, by setting)."""

    name = "bad_cost_test"
    kind = "synthetic"

    def __init__(self, bad: object = float("nan"), every: int = 3):
        from benchsuite.space import Float, Space

        self.space = Space([Float("x", 0.0, 1.0)])
        self.bad, self.every, self.n = bad, every, 0
        super().__init__()

    def evaluate(self, config, fidelity=None, seed=0):
        config, _ = self.check(config, fidelity)
        self.n += 1
        cost = self.bad if self.n % self.every == 0 else 2.0
        return Result(loss=float(config["x"]), cost_s=cost)  # type: ignore[arg-type]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("bad", [float("nan"), -1.0, float("inf"), "soon"])
@pytest.mark.parametrize("budget", [{"budget_seconds": 50.0}, {"budget_evals": 12}])
def test_an_invalid_cost_is_a_failed_trial_and_the_clock_still_runs(tmp_path, bad, budget) -> None:
    """issue 26: a NaN cost with a budget in seconds used to hang (the clock never advanced) and with a
    budget in evaluations wrote a file load_result rejected; now it is a failed trial charged the mean
    valid cost, the run ends and its file loads."""
    from benchsuite.optimizers.random_search import RandomSearch
    from benchsuite.results import load_result, write_result

    out = run(_BadCost(bad), RandomSearch, seed=0, **budget)
    failed = [r for r in out.rows if r["status"] == "failed"]
    assert failed and all(r["cost_s"] == 2.0 for r in failed)  # the mean valid cost (every valid one is 2)
    assert all("reported_cost" in r["info"] and "not a finite number" in r["info"]["error"] for r in failed)
    write_result(tmp_path / "r.csv", out.rows, out.provenance)
    assert len(load_result(tmp_path / "r.csv")) == len(out.rows)


@pytest.mark.timeout(60)
def test_a_first_invalid_cost_is_charged_the_fallback() -> None:
    from benchsuite.optimizers.random_search import RandomSearch
    from benchsuite.runner import INVALID_COST_FALLBACK_S

    out = run(_BadCost(float("nan"), every=1), RandomSearch, seed=0, budget_seconds=5.5)
    assert [r["cost_s"] for r in out.rows] == [INVALID_COST_FALLBACK_S] * 6


# -- what the run loop does with a configuration the space does not hold ---------------------------
class _OutOfSpace(Optimizer):
    """Proposes a valid point, then one outside branin's box (a plugin bug)."""

    name = "out_of_space"
    description = "test: its second suggestion is outside the space"

    def ask(self, pending=()):
        x = {"x1": 0.0, "x2": 1.0} if not self.history else {"x1": 99.0, "x2": 1.0}
        return Suggestion(x, self.full_fidelity())


def test_a_malformed_suggestion_stops_the_run_naming_the_optimizer_trial_and_configuration():
    """The documented choice (runner.run's docstring): a suggestion the space does not hold is the plugin's
    bug, one PluginError line naming the optimizer, the trial and the (shortened) configuration; a well-formed
    configuration the space calls infeasible is not this case: the benchmark evaluates it."""
    from benchsuite.errors import PluginError

    with pytest.raises(PluginError) as err:
        run(make_benchmark("branin"), _OutOfSpace, seed=0, budget_evals=3)
    msg = str(err.value)
    assert "'out_of_space'" in msg and "at trial 1" in msg and "99.0" in msg and "\n" not in msg


def test_a_nominal_cost_model_that_raises_names_the_benchmark_and_configuration():
    from benchsuite.errors import PluginError

    class Fragile(Benchmark):
        name = "fragile"
        kind = "live"
        description = "test: its cost model raises on x1 > 0"

        def setup(self):
            self.space = make_benchmark("branin").space

        def evaluate(self, config, fidelity=None, seed=0):
            return Result(float(config["x1"] ** 2), 1.0)

        def nominal_cost(self, config, fidelity=None):
            if config["x1"] > 0:
                raise ValueError("no network for this one")
            return 1.0

    with pytest.raises(PluginError, match=r"benchmark 'fragile': nominal_cost failed on .*x1.*ValueError: no network"):
        run(Fragile(), get_optimizer("random_search"), seed=1, budget_evals=20, clock="nominal")
