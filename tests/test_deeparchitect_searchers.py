"""DeepArchitect's searchers (random, MCTS, SMBO, regularized evolution) and its benchmarks."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchsuite.benchmark import Benchmark, Result
from benchsuite.errors import InvalidConfigError, UnsupportedError
from benchsuite.optimizer import Trial
from benchsuite.runner import run
from benchsuite.space import SearchSpace
from benchsuite.testing import ToyChainSpace, check_optimizer
from benchsuite.optimizers.deeparchitect import DAEvolution, DAMCTS, DARandom, DASMBO, feature_buckets, walk_recorded

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
HAVE_CIFAR = any((SHARED / f).exists() for f in ("cifar10_jpeg/cifar10_jpgs.tar.gz", "cifar10/cifar-10-python.tar.gz"))
SEARCHERS = (DARandom, DAMCTS, DASMBO, DAEvolution)


def _da_spaces() -> dict:
    from benchsuite.architectures.deeparchitect import SPACES

    return SPACES


class FakeDA(SearchSpace):
    """A small lazily expanded space: a depth, then per block an op and, for convolutions only, filters.

    Stands in for a space of the language: ``walk`` meets hyperparameters that depend on
    earlier choices (a substitution), and configurations are the value lists.
    """

    kind = "architecture"
    capabilities = frozenset({"walk", "features"})  # announced, as every space announces what it offers
    depths, ops, filters = (1, 2, 3), ("conv3", "conv5", "pool"), (16, 32)

    def walk(self, choose: Any) -> tuple:
        vals, pos = [], 0

        def pick(name: str, values: tuple) -> Any:
            nonlocal pos
            v = values[choose(pos, name, values)]
            pos += 1
            vals.append(v)
            return v

        for b in range(pick("depth", self.depths)):
            if pick(f"block{b}/op", self.ops) != "pool":
                pick(f"block{b}/filters", self.filters)
        return tuple(vals)

    def sample(self, rng: np.random.Generator) -> tuple:
        return self.walk(lambda _p, _n, v: int(rng.integers(len(v))))

    def validate(self, config: Any) -> tuple:
        vals = list(config) if isinstance(config, (list, tuple)) else None
        if vals is None:
            raise InvalidConfigError(f"a value list is a list, got {config!r}")

        def replay(_p: int, name: str, values: tuple) -> int:
            if not vals:
                raise InvalidConfigError(f"value list too short: {name} has no value")
            v = vals.pop(0)
            if v not in values:
                raise InvalidConfigError(f"{name}: {v!r} not in {values}")
            return values.index(v)

        out = self.walk(replay)
        if vals:
            raise InvalidConfigError(f"value list too long by {len(vals)}")
        return out

    def neighbours(self, config: Any) -> list:
        return []

    def key(self, config: Any) -> tuple:
        return tuple(config)

    def features(self, config: Any) -> list[str]:
        c = self.validate(config)
        ops = [v for v in c[1:] if isinstance(v, str)]
        return [f"depth={c[0]}"] + [f"op={o}" for o in ops] + [f"{a}>{b}" for a, b in zip(ops, ops[1:])] + \
            [f"filters={v}" for v in c[1:] if isinstance(v, int)]


class FakeBench(Benchmark):
    """Loss of a FakeDA architecture: additive in its features, so a linear surrogate can learn it."""

    kind = "synthetic"

    def __init__(self, space: SearchSpace | None = None):
        self.space = space or FakeDA()
        super().__init__()

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        config, _ = self.check(config, fidelity)
        feats = self.space.features(config)
        # a fixed pseudo-random weight per feature, from CRC-32 (the same in every process)
        loss = sum((zlib.crc32(f.encode()) % 1000) / 1000.0 for f in feats) / max(len(feats), 1)
        return Result(loss=float(loss), cost_s=1.0)


# -- conformance --------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,settings", [
    (DARandom, {}), (DAMCTS, {}), (DASMBO, {"n_samples": 64}),
    (DAEvolution, {"population_size": 5, "sample_size": 3}),
])
def test_conformance_kit(cls, settings):
    report = check_optimizer(cls, settings=settings)
    assert ("architecture", 1) in report.checked and ("architecture", 3) in report.checked


def test_refuse_spaces_without_the_language():
    class NoWalk(SearchSpace):
        kind = "architecture"

        def sample(self, rng): return (1,)  # noqa: E704
        def validate(self, c): return tuple(c)  # noqa: E704
        def neighbours(self, c): return []  # noqa: E704
        def key(self, c): return tuple(c)  # noqa: E704

    for cls in SEARCHERS:
        with pytest.raises(UnsupportedError, match="DeepArchitect language") as err:
            cls.check_supports(NoWalk(), None, 1)
        assert "\n" not in str(err.value)
    with pytest.raises(UnsupportedError, match="features"):
        DASMBO.check_supports(type("WalkOnly", (NoWalk,), {"walk": lambda self, c: (1,)})(), None, 1)
    DAMCTS.check_supports(ToyChainSpace(), None, 3)  # the kit's chain has the interface


def test_same_seed_same_run_and_valid_on_fake_space():
    bench = FakeBench()
    for cls in SEARCHERS:
        st = {"population_size": 8, "sample_size": 3} if cls is DAEvolution else {}
        a = run(bench, cls, seed=5, budget_evals=30, workers=2, optimizer_settings=st, include_overhead=False)
        b = run(bench, cls, seed=5, budget_evals=30, workers=2, optimizer_settings=st, include_overhead=False)
        assert [r["config"] for r in a.rows] == [r["config"] for r in b.rows], cls.name
        for r in a.rows:
            bench.space.validate(json.loads(r["config"]))


# -- MCTS -----------------------------------------------------------------------------------------
def test_mcts_tries_every_child_before_exploiting():
    space, bench = FakeDA(), FakeBench()
    opt = DAMCTS(space, None, np.random.default_rng(0))
    firsts = []
    for i in range(3):
        s = opt.ask()
        firsts.append(s.config[0])
        opt.tell(Trial(i, s.config, None), bench.evaluate(s.config))
    assert sorted(firsts) == [1, 2, 3]  # three root children, each tried once
    assert [k.n for k in opt.root.children] == [1, 1, 1] and opt.root.n == 3
    # UCT by hand: the next root choice maximises mean + 0.33 sqrt(2 ln N / n)
    kids = opt.root.children
    ucb = [k.total / k.n + 0.33 * math.sqrt(2 * math.log(3) / k.n) for k in kids]
    s = opt.ask()
    assert s.config[0] == space.depths[int(np.argmax(ucb))]


def test_mcts_concentrates_on_the_best_branch_and_spreads_pending_walks():
    class OneGood(FakeBench):
        def evaluate(self, config, fidelity=None, seed=0):
            return Result(loss=0.0 if config[0] == 2 else 1.0, cost_s=1.0)

    out = run(OneGood(), DAMCTS, seed=1, budget_evals=60, include_overhead=False)
    depths = [json.loads(r["config"])[0] for r in out.rows]
    assert depths[3:].count(2) > 0.8 * len(depths[3:])
    # three workers at once: the pending walks take the three different root children
    opt = DAMCTS(FakeDA(), None, np.random.default_rng(3))
    pending = []
    for i in range(3):
        s = opt.ask(tuple(pending))
        pending.append(Trial(i, s.config, None))
    assert sorted(t.config[0] for t in pending) == [1, 2, 3]


def test_mcts_failed_trial_backs_up_the_worst_score():
    space = FakeDA()
    opt = DAMCTS(space, None, np.random.default_rng(0))
    s1 = opt.ask()
    opt.tell(Trial(0, s1.config, None), Result(0.7, 1.0))
    s2 = opt.ask()
    opt.tell(Trial(1, s2.config, None), Result.failure(1.0, "diverged"))
    assert opt.root.n == 2 and opt.root.total == pytest.approx(-1.4)


# -- SMBO -----------------------------------------------------------------------------------------
def test_smbo_ridge_matches_sklearn_and_predicts_an_additive_loss():
    sk = pytest.importorskip("sklearn.linear_model")
    space, bench = FakeDA(), FakeBench()
    opt = DASMBO(space, None, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    configs = [space.sample(rng) for _ in range(40)]
    for i, c in enumerate(configs):
        opt.tell(Trial(i, c, None), bench.evaluate(c))
    x = opt._design()
    ref = sk.Ridge(alpha=1e-5).fit(x, -np.array([bench.evaluate(c).loss for c in configs]))
    test = [space.sample(rng) for _ in range(20)]
    xt = np.zeros((len(test), 2048))
    for r, c in enumerate(test):
        np.add.at(xt[r], opt.buckets(c), 1.0)
    assert np.allclose(opt.predict(test), ref.predict(xt), atol=1e-6)
    # the loss is linear in the counted features up to the per-architecture normalisation: rank agreement
    true = -np.array([bench.evaluate(c).loss for c in test])
    assert np.corrcoef(opt.predict(test), true)[0, 1] > 0.8


def test_smbo_explores_with_probability_one_tenth_and_skips_pending():
    space, bench = FakeDA(), FakeBench()
    opt = DASMBO(space, None, np.random.default_rng(0), n_samples=64)
    for i in range(10):
        s = opt.ask()
        opt.tell(Trial(i, s.config, None), bench.evaluate(s.config))
    kinds = [opt.ask().info["smbo"] for _ in range(300)]
    assert 0.05 < kinds.count("random") / 300 < 0.15
    best = opt.ask()
    while best.info["smbo"] != "surrogate":
        best = opt.ask()
    nxt = opt.ask((Trial(99, best.config, None),))
    while nxt.info["smbo"] != "surrogate":
        nxt = opt.ask((Trial(99, best.config, None),))
    assert nxt.config != best.config


_HASH_SCRIPT = """
import json, sys
import numpy as np
sys.path.insert(0, {root!r}); sys.path.insert(0, {tests!r})
from test_deeparchitect_searchers import FakeBench
from benchsuite.runner import run
from benchsuite.optimizers.deeparchitect import DASMBO, feature_buckets
out = run(FakeBench(), DASMBO, seed=7, budget_evals=25, optimizer_settings={{"n_samples": 32}}, include_overhead=False)
print(json.dumps({{"configs": [r["config"] for r in out.rows],
                  "buckets": feature_buckets(["depth=2", "op=conv3", "conv3>pool"], 2048).tolist()}}))
"""


def test_smbo_hash_and_run_stable_across_processes():
    script = _HASH_SCRIPT.format(root=str(ROOT), tests=str(ROOT / "tests"))
    outs = []
    for seed in ("1", "2"):  # Python's str hash() differs between these two processes
        env = {**os.environ, "PYTHONHASHSEED": seed, "OMP_NUM_THREADS": "1"}
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                           timeout=120)
        assert p.returncode == 0, p.stderr[-2000:]
        outs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    assert outs[0] == outs[1]
    assert outs[0]["buckets"] == [zlib.crc32(s.encode()) % 2048 for s in ("depth=2", "op=conv3", "conv3>pool")]
    here = run(FakeBench(), DASMBO, seed=7, budget_evals=25, optimizer_settings={"n_samples": 32},
               include_overhead=False)
    assert [r["config"] for r in here.rows] == outs[0]["configs"]
    assert feature_buckets(["x"], 16).tolist() == [zlib.crc32(b"x") % 16]


# -- evolution -------------------------------------------------------------------------------------
def test_evolution_mutation_changes_one_value_and_rewalks_the_rest():
    space = FakeDA()
    opt = DAEvolution(space, None, np.random.default_rng(0))
    parent, trace = walk_recorded(space, lambda p, n, v: 2 if n == "depth" else 0)
    assert parent == (3, "conv3", 16, "conv3", 16, "conv3", 16)
    same_shape = 0
    for _ in range(200):
        child, ctrace = opt.mutate(trace)
        space.validate(child)
        assert child != parent
        if child[0] == 3 and "pool" not in child:  # no structural change: exactly one value differs
            same_shape += 1
            assert sum(a != b for a, b in zip(child, parent)) == 1
        if child[0] < 3:  # fewer blocks: the kept blocks keep their values
            assert child == (child[0],) + parent[1:1 + 2 * child[0]]
    assert same_shape > 50


def test_evolution_ages_the_population_and_skips_failures():
    space, bench = FakeDA(), FakeBench()
    opt = DAEvolution(space, None, np.random.default_rng(0), population_size=4, sample_size=2)
    told = []
    for i in range(10):
        s = opt.ask()
        res = Result.failure(1.0, "x") if i == 5 else bench.evaluate(s.config)
        opt.tell(Trial(i, s.config, None), res)
        if not res.failed:
            told.append(tuple(s.config))
    assert [m[0] for m in opt.population] == told[-4:]


# -- the real spaces (the language package) ---------------------------------------------------------
@pytest.mark.parametrize("space_name", [
    "genetic", "nb201",
    # their walks take 5-150 ms each and Nasbench rejects most walks as infeasible: slow
    pytest.param("nasbench", marks=pytest.mark.slow), pytest.param("nasnet", marks=pytest.mark.slow),
    pytest.param("flat", marks=pytest.mark.slow),
])
def test_searchers_give_valid_architectures_of_the_real_spaces(space_name):
    space = _da_spaces()[space_name]()
    bench = FakeBench(space)
    for cls in SEARCHERS:
        st = {"n_samples": 4} if cls is DASMBO else {"population_size": 3, "sample_size": 2} \
            if cls is DAEvolution else {}
        out = run(bench, cls, seed=0, budget_evals=5, workers=2, optimizer_settings=st, include_overhead=False)
        assert len(out.rows) == 5
        for r in out.rows:
            values = space.from_json(r["config"])
            assert space.to_json(space.validate(values)) == r["config"]
            # MCTS's rollouts are uniform walks after a fixed tree prefix: on Nasbench (0.5 % of walks
            # feasible) 1,000 redraws can all fail, and the benchmark then fails that trial
            assert space.is_valid(values) or (cls is DAMCTS and space_name == "nasbench")


# -- benchmarks ----------------------------------------------------------------------------------------
def test_table_benchmark_agrees_with_nb201_cifar10():
    from benchsuite.architectures import nb201
    from benchsuite.registry import make_benchmark

    da, ref = make_benchmark("da_nb201_cifar10"), make_benchmark("nb201_cifar10")
    rng = np.random.default_rng(0)
    for _ in range(20):
        values = da.space.sample(rng)
        arch = da.space.nb201_arch(values)
        cell = nb201.from_arch_string(arch)
        for seed in (0, 1, 2):
            assert da.evaluate(values, seed=seed) == ref.evaluate(cell, seed=seed)
        assert da.test_loss(values) == ref.test_loss(cell)
        assert da.test_loss(list(values)) == ref.test_loss(arch)  # a JSON list works too
    assert da.optimum == ref.optimum and da.fidelity is None and da.kind == "tabular"
    with pytest.raises(InvalidConfigError):
        da.evaluate(("not", "a", "cell"))


def test_searchers_run_on_the_table_at_lookup_speed():
    import time

    from benchsuite.registry import make_benchmark

    da = make_benchmark("da_nb201_cifar10")
    values = da.space.sample(np.random.default_rng(1))
    da.evaluate(values)
    t0 = time.perf_counter()
    for s in range(2000):
        da.evaluate(values, seed=s)
    assert (time.perf_counter() - t0) / 2000 < 50e-6  # microseconds per lookup once the cell is known
    for cls in SEARCHERS:
        st = {"n_samples": 4} if cls is DASMBO else {"population_size": 4, "sample_size": 2} \
            if cls is DAEvolution else {}
        out = run(da, cls, seed=0, budget_evals=10, workers=4, optimizer_settings=st, include_overhead=False)
        assert len(out.rows) == 10 and all(r["status"] == "ok" for r in out.rows)


def test_live_benchmark_settings_and_bad_input():
    from benchsuite.errors import InvalidSettingError
    from benchsuite.registry import get_benchmark

    cls = get_benchmark("deeparchitect_cifar10")
    assert cls.kind == "live" and cls.requirements.gpu == "optional"
    with pytest.raises(InvalidSettingError, match="space"):
        cls(space="resnet")
    b = cls()
    assert (b.fidelity.name, b.fidelity.high, b.fidelity.full) == ("epochs", 25, 25)
    ts = b.train_settings(25)
    assert (ts.optimizer, ts.lr, ts.schedule, ts.batch_size, ts.augment, ts.weight_decay) == (
        "adam", 0.001, "constant", 256, False, 0.0)
    with pytest.raises(InvalidConfigError):
        b.evaluate(("x",), 1)
    with pytest.raises(InvalidConfigError):
        b.evaluate(b.space.sample(np.random.default_rng(0)), 26)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_CIFAR, reason=f"no CIFAR-10 archive in {SHARED}")
def test_tiny_live_evaluation_on_cifar10():
    pytest.importorskip("torch")
    from benchsuite.registry import make_benchmark

    b = make_benchmark("deeparchitect_cifar10", {"space": "genetic", "data_dir": str(SHARED), "n_train": 128,
                                                 "n_val": 64, "n_test": 64, "epochs": 2, "batch_size": 64,
                                                 "device": "cpu", "threads": 1})
    b.prepare()
    split = b.splits()
    assert (len(split.y_train), len(split.y_val), len(split.y_test)) == (128, 64, 64)
    values = b.space.sample(np.random.default_rng(0))
    r1, r2 = b.evaluate(values, 1, seed=3), b.evaluate(list(values), 1, seed=3)
    assert not r1.failed and 0.0 <= r1.loss <= 1.0 and r1.cost_s > 0
    assert r1.loss == r2.loss and len(r1.info["curve"]) == 1 and r1.info["n_params"] > 0
    t = b.test_loss(values)
    assert 0.0 <= t <= 1.0 and b.test_loss(values) == t
    prov = b.provenance()
    assert prov["split"] == "deeparchitect" and prov["space"] == "genetic"
