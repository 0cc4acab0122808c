"""The BoTorch baseline ``botorch_qlogei`` (issue 24, item 5): the conformance kit, better than random search on
Branin, pending trials reaching qLogEI, integer and categorical variables, and its listing without the extra.

Budgets are small (test_settings: 2 restarts, 16 raw and 16 MC samples); measured on 2 loaded cores the file
takes about a minute, most of it the conformance kit (about 4 BoTorch asks of 0.2-0.3 s per run, 20 runs).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys

import numpy as np
import pytest

from benchsuite import registry
from benchsuite.optimizer import Trial
from benchsuite.runner import run
from benchsuite.space import Binary, Categorical, Float, Integer, Ordinal, Space
from benchsuite.testing import _Quadratic, check_optimizer

HAS_BOTORCH = importlib.util.find_spec("botorch") is not None
needs_botorch = pytest.mark.skipif(not HAS_BOTORCH, reason="botorch not installed (pip install 'benchsuite[botorch]')")

MIXED = Space([Float("x", 0, 1), Float("lr", 1e-4, 1, log=True), Integer("n", 1, 6), Integer("width", 8, 512, log=True),
               Ordinal("o", [1, 2, 4, 8]), Categorical("act", ["relu", "tanh", "gelu", "silu"]), Binary("b"),
               Categorical("opt", ["sgd", "adam"])])


def _cls():
    from benchsuite.optimizers.botorch_qlogei import BoTorchQLogEI

    return BoTorchQLogEI


@needs_botorch
def test_conformance_kit() -> None:
    cls = _cls()
    assert registry.get_optimizer("botorch_qlogei") is cls
    # budget 8 of the kit's default 12 keeps the file short; tests/test_every_plugin.py runs the full kit (slow)
    report = check_optimizer(cls, settings=cls.test_settings, budget=8)
    assert {("continuous", 3), ("discrete-binary-categorical", 3), ("mixed", 1), ("mixed", 3)} <= set(report.checked)


@needs_botorch
def test_it_beats_random_search_on_branin_at_20_evaluations() -> None:
    settings = {"num_restarts": 4, "raw_samples": 64, "mc_samples": 64, "maxiter": 50}
    regret = {}
    for name, opt_settings in (("botorch_qlogei", settings), ("random_search", {})):
        finals = []
        for seed in range(3):
            bench = registry.make_benchmark("branin")
            out = run(bench, registry.get_optimizer(name), seed=seed, budget_evals=20, optimizer_settings=opt_settings)
            finals.append(out.rows[-1]["incumbent_loss"] - bench.optimum)
        regret[name] = float(np.mean(finals))
    assert regret["botorch_qlogei"] < regret["random_search"], regret


def _past_design(opt, bench, rng_seed: int = 5):
    """Ask and tell ``opt`` through its initial design (and one more random point)."""
    rng = np.random.default_rng(rng_seed)
    for i in range(opt.n_init):
        s = opt.ask()
        opt.tell(Trial.from_suggestion(s, i), bench.evaluate(s.config))
    c = bench.space.sample(rng)
    opt.tell(Trial(opt.n_init, c, None), bench.evaluate(c))


@needs_botorch
def test_pending_trials_reach_the_acquisition() -> None:
    cls = _cls()
    bench = registry.make_benchmark("branin")

    def fresh():
        opt = cls(bench.space, None, np.random.default_rng(3), **cls.test_settings)
        _past_design(opt, bench)
        return opt

    alone = fresh().ask()
    assert alone.info["phase"] == "bo"
    # the same state and seed, with the point it chose running: qLogEI's X_pending makes it choose another
    with_pending = fresh().ask([Trial(99, alone.config, None)])
    assert with_pending.info["phase"] == "bo"
    assert bench.space.key(with_pending.config) != bench.space.key(alone.config)
    # and in a run with 3 asynchronous workers, every ask is a new point
    out = run(bench, cls, seed=0, budget_evals=9, workers=3, optimizer_settings=cls.test_settings)
    keys = [r["config"] for r in out.rows]
    assert len(set(keys)) == len(keys)


@needs_botorch
def test_integer_and_categorical_variables_come_back_valid() -> None:
    cls = _cls()
    from benchsuite.optimizers.botorch_qlogei import _Encoding

    enc = _Encoding(MIXED)
    # one column each, but four for the 4-choice categorical; binary and 2-choice categoricals stay one column
    assert enc.dim == len(MIXED) - 1 + 4
    configs = MIXED.sample(np.random.default_rng(0), 30)
    X = enc.encode(configs)
    assert [MIXED.key(c) for c in enc.decode(X)] == [MIXED.key(c) for c in configs]
    relaxed = np.random.default_rng(1).random((50, enc.dim))
    snapped = enc.snap(relaxed)
    np.testing.assert_array_equal(enc.snap(snapped), snapped)  # the rounding is a projection
    onehot = snapped[:, 5:9]
    assert set(onehot.sum(axis=1)) == {1.0} and set(onehot.ravel()) <= {0.0, 1.0}
    for c in enc.decode(relaxed):
        MIXED.validate(c)

    out = run(_Quadratic(MIXED), cls, seed=1, budget_evals=8, workers=2, optimizer_settings=cls.test_settings)
    assert sum(r["info"].get("phase") == "bo" for r in out.rows) >= 3  # the model chose some of them
    for r in out.rows:
        c = MIXED.from_json(r["config"])
        assert MIXED.validate(c) == c
        assert isinstance(c["n"], int) and isinstance(c["width"], int) and c["act"] in ("relu", "tanh", "gelu", "silu")


def test_a_given_design_longer_than_n_init_comes_first_and_whole() -> None:
    cls = _cls()  # no BoTorch needed: the design is asked for before any model
    bench = registry.make_benchmark("branin")
    design = bench.space.sample(np.random.default_rng(4), 6)
    opt = cls(bench.space, None, np.random.default_rng(0), initial_design=design, n_init=3)
    asked = []
    for i in range(6):
        s = opt.ask()
        assert s.info["phase"] == "init"
        asked.append(s.config)
        opt.tell(Trial.from_suggestion(s, i), bench.evaluate(s.config))
    assert asked == design


def test_listed_as_unavailable_with_the_install_hint_when_botorch_is_missing(monkeypatch: pytest.MonkeyPatch,
                                                                              capsys: pytest.CaptureFixture) -> None:
    from benchsuite.cli import main

    # sys.modules[name] = None: importing fails and find_spec gives None, as where the extra is not installed
    for module in ("botorch", "gpytorch"):
        monkeypatch.setitem(sys.modules, module, None)
    registry._all.cache_clear()
    try:
        entry = registry.optimizers()["botorch_qlogei"]
        assert entry.obj is None and entry.error == "needs botorch, gpytorch: pip install 'benchsuite[botorch]'"
        assert main(["list"]) == 0
        line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.split()[:1] == ["botorch_qlogei"])
        assert "unavailable: needs botorch, gpytorch: pip install 'benchsuite[botorch]'" in line
    finally:
        registry._all.cache_clear()
    # importing the plugin's module needs neither torch nor BoTorch (the registry imports every module)
    module = importlib.import_module("benchsuite.optimizers.botorch_qlogei")
    assert module.BoTorchQLogEI.needs == ("botorch", "gpytorch")

