"""The optimizer's overhead timed in CPU seconds (``overhead_clock: cpu``).

A protocol whose result is a time with the optimizer's overhead on the clock (Fabolas' Figure 2) would read
slower on a machine that other jobs share, if ask and tell were timed in wall seconds; with
``overhead_clock="cpu"`` they are timed with ``time.process_time``. Here that clock is replaced by a counter
that advances one fixed step per reading, so the test sees exactly which readings the runner takes.
"""
from __future__ import annotations

import time

import pytest
import yaml

from benchsuite import registry, runner
from benchsuite.errors import BudgetError, ProtocolError
from benchsuite.protocol import parse_protocol


class _Counter:
    """A clock that advances ``step`` seconds at every reading."""

    def __init__(self, step: float) -> None:
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def _run(**kw):
    return runner.run(registry.make_benchmark("branin"), registry.get_optimizer("random_search"), seed=3,
                      budget_evals=5, **kw)


def test_cpu_overhead_clock_times_ask_and_tell_with_the_cpu_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(runner.OVERHEAD_CLOCKS, "cpu", _Counter(0.25))
    out = _run(overhead_clock="cpu")
    assert out.provenance["overhead_clock"] == "cpu"
    for row in out.rows:
        # one step between the two readings around ask, one around tell: 0.25 + 0.25
        assert float(row["overhead_s"]) == pytest.approx(0.5)
        assert float(row["start_time"]) - float(row["ask_time"]) == pytest.approx(0.25)
        assert float(row["told_time"]) - float(row["end_time"]) == pytest.approx(0.25)
    # the same seed on the wall clock: the same trials, no overhead_clock in the provenance (files unchanged)
    wall = _run()
    assert "overhead_clock" not in wall.provenance
    assert [r["config"] for r in wall.rows] == [r["config"] for r in out.rows]
    assert all(float(r["overhead_s"]) < 0.25 for r in wall.rows)


def test_an_unknown_overhead_clock_or_a_cpu_clock_on_a_real_backend_is_one_line() -> None:
    with pytest.raises(BudgetError, match="overhead_clock must be one of wall, cpu"):
        _run(overhead_clock="gpu")
    with pytest.raises(BudgetError, match="for the simulated backend"):
        _run(overhead_clock="cpu", backend="local")


_PROTO = """
name: oc
benchmarks: [branin]
optimizers: [random_search]
repetitions: 1
budget: {evaluations: 5}
"""


def test_protocol_overhead_clock_reaches_the_command_and_is_checked() -> None:
    plain = parse_protocol(yaml.safe_load(_PROTO), "oc.yaml")
    assert plain.overhead_clock == "wall" and "--overhead-clock" not in plain.command(plain.jobs()[0])
    cpu = parse_protocol(yaml.safe_load(_PROTO + "overhead_clock: cpu\n"), "oc.yaml")
    argv = cpu.command(cpu.jobs()[0])
    assert argv[argv.index("--overhead-clock") + 1] == "cpu"
    with pytest.raises(ProtocolError, match="overhead_clock"):
        parse_protocol(yaml.safe_load(_PROTO + "overhead_clock: gpu\n"), "oc.yaml")
    with pytest.raises(ProtocolError, match="for the simulated backend"):
        parse_protocol(yaml.safe_load(_PROTO + "overhead_clock: cpu\nbackend: local\n"), "oc.yaml")


def test_fabolas_and_mtbo_decide_on_the_runs_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Their acquisition adds the previous ask's overhead to the predicted cost (fabolas.txt Sec. 3.2): under
    ``overhead_clock: cpu`` that overhead is read on the CPU timer too, not on the wall clock that the load
    stretches. The counter is shared, so the readings of theirs show in the run's overhead."""
    counter = _Counter(0.25)
    monkeypatch.setitem(runner.OVERHEAD_CLOCKS, "cpu", counter)
    small = {"burnin": 5, "chain_length": 3, "n_representers": 10, "n_pmin_samples": 32, "n_innovations": 3,
             "n_pool": 64, "n_candidates": 32, "n_spray": 8, "local_rounds": 1, "n_local": 8, "n_init": 3}
    for name in ("fabolas", "mtbo"):
        cls = registry.get_optimizer(name)
        made: list = []
        setup = cls.setup
        monkeypatch.setattr(cls, "setup", lambda self, setup=setup: (made.append(self), setup(self))[1])
        out = runner.run(registry.make_benchmark("branin_mf"), cls, seed=1, budget_evals=5,
                         optimizer_settings=small, overhead_clock="cpu")
        assert made[0].timer is counter
        # the runner's two readings around ask and two around tell; every ask of theirs reads at its start, a
        # model-based one also after the fit and at its end
        assert [float(r["overhead_s"]) for r in out.rows] == pytest.approx([0.75] * 3 + [1.25] * 2)
        assert made[0].last_overhead == pytest.approx(0.5)
    assert registry.get_optimizer("fabolas").timer is time.perf_counter  # the class default: wall seconds
