"""Plugin conformance kit: ``check_optimizer(MyOptimizer)`` checks a plugin's contract.

Call it from a plugin's own tests::

    from benchsuite.testing import check_optimizer

    def test_conformance():
        check_optimizer(MyOptimizer, settings={"n_init": 3})

For every space kind the plugin claims (and the fidelity axis, if it uses one) it runs the
plugin on a small benchmark with 1 and 3 asynchronous workers and checks that

* every suggestion is a valid configuration (and a valid fidelity, or full fidelity for
  plugins that ignore the axis);
* the same seed gives the same sequence of suggestions (no hidden global random state);
* ``recommend`` returns a configuration that was evaluated or is at least valid (a
  multi-fidelity plugin may return None while nothing has finished at full fidelity);
* with 3 workers the plugin is shown the pending trials and still runs;
* failed trials (a benchmark that raises every fourth evaluation) do not break it.

``check_constrained(MyOptimizer)`` runs it on each of the suite's constrained spaces it supports
(COMBO's NAS cell, the NAS-Bench-201 cell, DeepArchitect spaces, NASBOT's layer graphs) behind a
cheap objective, past its initial design, and counts the infeasible configurations it proposes.

The small benchmarks used here are defined in this module and are not registered.

``check_benchmark(MyBenchmark)`` is the kit for benchmarks: it builds the benchmark with its
``test_settings`` and checks its space (sampling, validation, keys, JSON round trip), its
evaluations (at low and full fidelity), seeded determinism, ``test_loss``, the nominal cost model where it
has one, an infeasible configuration where its space has them (every method the run loop calls must take
it), ``describe`` and ``provenance``. A benchmark whose data files are absent is skipped, with the file named.
"""
from __future__ import annotations

import json
import math
import zlib
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import data as _data
from .architectures.chain_tree import Chain, ChainTree
from .benchmark import BENCHMARK_KINDS, Benchmark, Fidelity, Result
from .errors import InvalidConfigError, TrialFailure
from .optimizer import Optimizer, Suggestion, Trial
from .registry import make_benchmark
from .runner import run
from .space import Binary, Categorical, Float, Integer, Ordinal, SearchSpace, Space


class _Quadratic(Benchmark):
    """Sum of squared distances of unit-cube codes to a fixed target; cost varies."""

    kind = "synthetic"

    def __init__(self, space: Space, fidelity: Fidelity | None = None):
        self.space, self.fidelity = space, fidelity
        super().__init__()
        self.target = np.linspace(0.2, 0.8, len(space))

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        config, s = self.check(config, fidelity)
        x = self.space.to_unit(config)
        s = 1.0 if s is None else s
        return Result(loss=float(((x - self.target) ** 2).sum() + 0.1 * (1 - s)), cost_s=1.0 + 10 * s * x[0])


class ToyChainSpace(SearchSpace):
    """A tiny architecture space: a chain of 1-5 layers, each of width 8, 16, 32 or 64.

    An example for authors of architecture spaces: configurations are tuples, neighbours
    add, remove or re-size one layer, the key is the tuple itself.
    """

    kind = "architecture"
    # announced: DeepArchitect's searchers may walk it, TreeBO reads it as a tree of chains
    capabilities = frozenset({"walk", "features", "feed_forward"})
    widths = (8, 16, 32, 64)
    max_layers = 5

    def sample(self, rng: np.random.Generator) -> tuple[int, ...]:
        n = int(rng.integers(1, self.max_layers + 1))
        return tuple(int(self.widths[i]) for i in rng.integers(0, len(self.widths), size=n))

    def validate(self, config: Any) -> tuple[int, ...]:
        if not isinstance(config, (list, tuple)) or not 1 <= len(config) <= self.max_layers:
            raise InvalidConfigError(f"a chain is a list of 1-{self.max_layers} layer widths, got {config!r}")
        for w in config:
            if w not in self.widths:
                raise InvalidConfigError(f"layer width {w!r} is not one of {self.widths}")
        return tuple(int(w) for w in config)

    def neighbours(self, config: Any) -> list[tuple[int, ...]]:
        c = tuple(config)
        out = [c[:i] + (w,) + c[i + 1:] for i in range(len(c)) for w in self.widths if w != c[i]]
        if len(c) < self.max_layers:
            out += [c + (w,) for w in self.widths]
        if len(c) > 1:
            out += [c[:i] + c[i + 1:] for i in range(len(c))]
        return out

    def key(self, config: Any) -> Hashable:
        return tuple(config)

    def to_json(self, config: Any) -> str:
        return json.dumps(list(config))

    def walk(self, choose: Any) -> tuple[int, ...]:
        """A chain as a sequence of decisions (the DeepArchitect searchers' interface): the
        length, then each layer's width; ``choose(position, name, values)`` returns an index."""
        lengths = tuple(range(1, self.max_layers + 1))
        n = lengths[choose(0, "n_layers", lengths)]
        return tuple(self.widths[choose(1 + i, f"layer{i}/width", self.widths)] for i in range(n))

    def features(self, config: Any) -> list[str]:
        """Strings for a hashed-feature surrogate: the length, each width, each pair of neighbours."""
        c = self.validate(config)
        return ([f"n_layers={len(c)}"] + [f"layer{i}/width={w}" for i, w in enumerate(c)]
                + [f"{a}->{b}" for a, b in zip(c, c[1:])])

    def feed_forward(self) -> ToyChains:
        """Every configuration is a chain: the tree is the length, then each layer's width."""
        return ToyChains(self)


class ToyChains(ChainTree):
    """:class:`ToyChainSpace` as a tree of decisions: one layer type, the widths as unit counts."""

    types = ("layer",)

    def __init__(self, space: ToyChainSpace):
        self.space = space
        super().__init__(range(1, space.max_layers + 1), space.widths)

    def allowed_types(self, position: int, previous: str | None) -> tuple[str, ...]:
        return self.types

    def has_units(self, layer_type: str) -> bool:
        return True

    def to_config(self, chain: Chain) -> tuple[int, ...]:
        return self.space.validate(chain.units)

    def from_config(self, config: Any) -> Chain:
        c = self.space.validate(config)
        return Chain(("layer",) * len(c), c, (None,) * len(c))


class _ChainBenchmark(Benchmark):
    """Loss = distance of the chain from (32, 64, 32)."""

    kind = "synthetic"

    def setup(self) -> None:
        self.space = ToyChainSpace()

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        config, _ = self.check(config, fidelity)
        target = (32, 64, 32)
        loss = abs(len(config) - 3) + sum(abs(math.log2(a) - math.log2(b)) for a, b in zip(config, target))
        return Result(loss=float(loss), cost_s=float(len(config)))


class _FailingEvery(Benchmark):
    """Wraps a benchmark; every ``k``-th evaluation raises :class:`TrialFailure`."""

    kind = "synthetic"

    def __init__(self, inner: Benchmark, k: int = 4):
        self.inner, self.k, self.count = inner, k, 0
        self.space, self.fidelity = inner.space, inner.fidelity
        super().__init__()

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        self.count += 1
        if self.count % self.k == 0:
            raise TrialFailure("injected failure (conformance kit)")
        return self.inner.evaluate(config, fidelity, seed)

    def test_loss(self, config: Any) -> float:
        return self.inner.test_loss(config)


def conformance_benchmarks(optimizer_cls: type[Optimizer]) -> dict[str, Benchmark]:
    """The small benchmarks a plugin is checked on, chosen from what it claims to support."""
    caps = optimizer_cls.supports
    out: dict[str, Benchmark] = {}
    if caps.fidelity != "requires":
        if "continuous" in caps.spaces:
            out["continuous"] = make_benchmark("branin")
        if "discrete" in caps.spaces:
            out["discrete-ordinal"] = make_benchmark("branin_discrete")
            out["discrete-binary-categorical"] = _Quadratic(Space(
                [Binary(f"b{i}") for i in range(4)] + [Categorical("c", ["a", "b", "c", "d", "e"]),
                                                        Integer("n", 1, 6)]))
        if "mixed" in caps.spaces:
            out["mixed"] = _Quadratic(Space([Float("x", 0, 1), Float("lr", 1e-4, 1, log=True),
                                            Ordinal("o", [1, 2, 4, 8]), Categorical("c", ["u", "v", "w"])]))
        if "architecture" in caps.spaces:
            out["architecture"] = _ChainBenchmark()
    if caps.fidelity in ("uses", "requires"):
        if "continuous" in caps.spaces:
            out["fidelity-continuous"] = make_benchmark("branin_mf")
            out["fidelity-discrete-values"] = _Quadratic(
                Space([Float("x0", -10, 10), Float("x1", -10, 10)]),
                Fidelity("s", 1 / 128, 1.0, log=True, values=tuple(2.0**-k for k in range(8))))
        if "discrete" in caps.spaces:
            out["fidelity-discrete-space"] = _Quadratic(
                Space([Binary(f"b{i}") for i in range(5)]), Fidelity("epochs", 1, 27, log=True, values=(1, 3, 9, 27)))
    return out


class _Recorder(Optimizer):
    """Wraps a plugin instance to record what it was asked and shown (not registered)."""

    def __init__(self, inner: Optimizer):  # noqa: D107 - bypasses Optimizer.__init__ on purpose
        self.inner = inner
        self.name, self.settings = inner.name, inner.settings
        self.space, self.fidelity = inner.space, inner.fidelity
        self.suggestions: list[Suggestion] = []
        self.max_pending = 0
        self.told: set[Hashable] = set()
        self.told_full = False  # a trial at full fidelity (or on a benchmark without one) finished

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        self.max_pending = max(self.max_pending, len(pending))
        s = self.inner.ask(pending)
        self.suggestions.append(s)
        return s

    def tell(self, trial: Trial, result: Result) -> None:
        self.told.add(self.space.key(trial.config))
        if self.fidelity is None or self.fidelity.is_full(trial.fidelity):
            self.told_full = True
        self.inner.tell(trial, result)

    def recommend(self) -> Any:
        return self.inner.recommend()


@dataclass
class ConformanceReport:
    """What :func:`check_optimizer` ran: benchmark labels and worker counts checked."""

    checked: list[tuple[str, int]] = field(default_factory=list)


def _run_recorded(optimizer_cls: type[Optimizer], bench: Benchmark, settings: Mapping[str, Any], seed: int,
                  budget: int, workers: int) -> tuple[_Recorder, list[dict]]:
    box: dict[str, _Recorder] = {}

    class Wrapped(optimizer_cls):  # type: ignore[misc, valid-type]
        def __new__(cls, *args: Any, **kwargs: Any):  # construct the real plugin, hand back a recorder
            inner = optimizer_cls(*args, **kwargs)
            box["rec"] = _Recorder(inner)
            return box["rec"]

    Wrapped.__name__ = optimizer_cls.__name__
    out = run(bench, Wrapped, seed=seed, budget_evals=budget, workers=workers,
              optimizer_settings=settings, include_overhead=False)
    return box["rec"], out.rows


def _check_initial_design(optimizer_cls: type[Optimizer], bench: Benchmark, settings: Mapping[str, Any], seed: int,
                          label: str) -> None:
    """A plugin declaring ``Capabilities(initial_design=True)`` asks for a given design first, in order."""
    import numpy as np

    from .optimizer import Trial

    design = [bench.space.sample(np.random.default_rng(seed + 1)) for _ in range(3)]
    opt = optimizer_cls(bench.space, bench.fidelity, np.random.default_rng(seed), initial_design=design, **settings)
    asked = []
    for i in range(len(design)):
        suggestion = opt.ask(())
        config, fid = bench.check(suggestion.config, suggestion.fidelity)
        asked.append(bench.space.key(config))
        opt.tell(Trial.from_suggestion(suggestion, i, config=config, fidelity=fid),
                 bench.evaluate(config, fid, seed=seed + i))
    expected = [bench.space.key(bench.space.validate(c)) for c in design]
    assert asked == expected, (f"{optimizer_cls.name} on {label}: it declares initial_design=True but did not ask "
                               "for the given initial design first (use self.sample_initial() for initial points)")


def check_optimizer(optimizer_cls: type[Optimizer], settings: Mapping[str, Any] | None = None,
                    budget: int = 12, workers: Sequence[int] = (1, 3), seed: int = 0) -> ConformanceReport:
    """Check a plugin's contract on small benchmarks of every kind it claims; raises AssertionError.

    ``settings`` default to the plugin's ``test_settings`` (small settings for quick checks).
    """
    settings = dict(optimizer_cls.test_settings if settings is None else settings)
    assert optimizer_cls.name, f"{optimizer_cls.__name__} needs a non-empty `name`"
    assert optimizer_cls.description, f"{optimizer_cls.__name__} needs a one-line `description`"
    benches = conformance_benchmarks(optimizer_cls)
    assert benches, f"{optimizer_cls.name} claims no space kind the kit can check ({optimizer_cls.supports})"
    report = ConformanceReport()
    for label, bench in benches.items():
        for w in workers:
            if w > 1 and not optimizer_cls.supports.parallel:
                continue
            where = f"{optimizer_cls.name} on {label} with {w} worker(s)"
            rec, rows = _run_recorded(optimizer_cls, bench, settings, seed, budget, w)
            assert len(rows) == budget, f"{where}: expected {budget} finished trials, got {len(rows)}"
            for s in rec.suggestions:
                bench.space.validate(s.config)  # the runner checked it too; keep the message local
                if bench.fidelity is not None:
                    if optimizer_cls.supports.fidelity == "ignores":
                        assert s.fidelity is not None and math.isclose(s.fidelity, bench.fidelity.full), \
                            f"{where}: a plugin that ignores fidelity must ask for full fidelity, asked {s.fidelity}"
                    else:
                        bench.fidelity.validate(s.fidelity)
            inc = rec.recommend()
            # a multi-fidelity plugin may have no incumbent until something ran at full fidelity
            may_abstain = optimizer_cls.supports.fidelity in ("uses", "requires") and not rec.told_full
            assert inc is not None or may_abstain, f"{where}: recommend() returned None after {budget} trials"
            if inc is not None:
                inc = bench.space.validate(inc)
                if optimizer_cls.supports.fidelity != "uses" or bench.fidelity is None:
                    assert bench.space.key(inc) in rec.told, \
                        f"{where}: recommend() returned a configuration never evaluated"
            if w > 1:
                assert rec.max_pending >= 1, f"{where}: ask() was never shown pending trials"
            rec2, _ = _run_recorded(optimizer_cls, bench, settings, seed, budget, w)
            keys1 = [bench.space.key(bench.space.validate(s.config)) for s in rec.suggestions]
            keys2 = [bench.space.key(bench.space.validate(s.config)) for s in rec2.suggestions]
            assert keys1 == keys2, f"{where}: the same seed gave different suggestions (hidden random state?)"
            report.checked.append((label, w))
        if optimizer_cls.supports.initial_design:
            _check_initial_design(optimizer_cls, bench, settings, seed, label)
        failing = _FailingEvery(bench, k=4)
        _, rows = _run_recorded(optimizer_cls, failing, settings, seed, budget, 1)
        n_failed = sum(r["status"] == "failed" for r in rows)
        assert n_failed == budget // 4, f"{optimizer_cls.name} on {label}: failed trials were not recorded"
    return report


# -- the suite's constrained spaces --------------------------------------------------------------------
class _SpaceProbe(Benchmark):
    """One of the suite's real search spaces behind a cheap objective, so that what an optimizer proposes
    there is checked in seconds, without training a network.

    An infeasible configuration (``space.is_valid`` false) is scored 1.0, worse than any feasible one, as
    COMBO's NAS benchmark scores a cell without an input-output path; a feasible one scores a smooth
    function of its unit codes on a vector space, or a fixed pseudo-random value of its key otherwise.
    """

    kind = "synthetic"

    def __init__(self, space: SearchSpace, fidelity: Fidelity | None = None):
        self.space, self.fidelity = space, fidelity
        super().__init__()

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        config, s = self.check(config, fidelity)
        if not self.space.is_valid(config):
            return Result(loss=1.0, cost_s=1.0, info={"infeasible": True})
        jitter = zlib.crc32(self.space.to_json(config).encode()) / 2.0**32
        if isinstance(self.space, Space):
            x = self.space.to_unit(config)
            loss = float(np.mean((x - 0.3) ** 2)) + 0.1 * jitter
        else:
            loss = 0.9 * jitter
        s = 1.0 if s is None or self.fidelity is None else s / float(self.fidelity.full)
        return Result(loss=loss + 0.05 * (1.0 - s), cost_s=1.0 + s)


def constrained_spaces() -> dict[str, SearchSpace]:
    """Every search space of the suite with rules beyond its variables' domains: COMBO's NAS cell (a cell
    needs an input-output path), the NAS-Bench-201 cell, DeepArchitect spaces (walks the space's rules
    reject), NASBOT's layer graphs (size and shape limits). Built without data or torch."""
    from .architectures import combo_cell
    from .architectures.deeparchitect import make_space as da_space
    from .architectures.layer_graph_space import LayerGraphSpace
    from .architectures.nb201 import NB201CellSpace

    return {
        "combo_nas cell": combo_cell.make_space(),
        "nb201 cell": NB201CellSpace(),
        "deeparchitect nasbench": da_space("nasbench"),
        "deeparchitect genetic": da_space("genetic"),
        "layer graphs mlp": LayerGraphSpace("mlp"),
        "layer graphs cnn": LayerGraphSpace("cnn"),
    }


@dataclass
class ConstrainedCase:
    """What one optimizer proposed on one constrained space: trials run, and how many were infeasible."""

    space: str
    trials: int
    infeasible: int


def check_constrained(optimizer_cls: type[Optimizer], settings: Mapping[str, Any] | None = None,
                      budget: int = 16, workers: int = 2, seed: int = 0) -> list[ConstrainedCase]:
    """Run a plugin on every constrained space it declares support for (``check_supports``) for ``budget``
    trials with ``workers`` asynchronous workers, past its initial design into its model-based phase (with
    ``test_settings`` its initial design is a few points); raises AssertionError on a breach.

    Every proposal must be a configuration the space holds (the run stops with a ``PluginError`` naming the
    optimizer, the trial and the configuration otherwise). Infeasible but well-formed proposals are counted:
    the paper methods may propose them (COMBO and BOCS in COMBO's NAS space, combo.txt Supp. 4.4.2), and the
    benchmark scores them; a plugin that declares ``Capabilities(feasible_only=True)`` must propose none.
    """
    from .errors import UnsupportedError

    settings = dict(optimizer_cls.test_settings if settings is None else settings)
    caps = optimizer_cls.supports
    fidelity = Fidelity("epochs", 1, 27, log=True, values=(1, 3, 9, 27)) if caps.fidelity == "requires" else None
    out = []
    for label, space in constrained_spaces().items():
        w = workers if caps.parallel else 1
        try:
            optimizer_cls.check_supports(space, fidelity, w)
        except UnsupportedError:
            continue
        bench = _SpaceProbe(space, fidelity)
        where = f"{optimizer_cls.name} on the {label} space"
        rec, rows = _run_recorded(optimizer_cls, bench, settings, seed, budget, w)
        assert len(rows) == budget, f"{where}: expected {budget} finished trials, got {len(rows)}"
        infeasible = sum(not space.is_valid(space.validate(s.config)) for s in rec.suggestions)
        assert not (caps.feasible_only and infeasible), \
            f"{where}: it declares feasible_only but proposed {infeasible} infeasible configuration(s)"
        out.append(ConstrainedCase(label, len(rows), infeasible))
    return out


# -- benchmarks ------------------------------------------------------------------------------------
# a required data file that another file can stand in for (CIFAR-10: source "auto" reads the
# JPEG archive when the official batches are absent; benchsuite/datasets.py load_cifar10)
_ALTERNATIVES = {"cifar10/cifar-10-python.tar.gz": ("cifar10_jpeg/cifar10_jpgs.tar.gz",)}
DETERMINISTIC_KINDS = ("synthetic", "tabular", "surrogate")  # same seed, same loss


@dataclass
class BenchmarkReport:
    """What :func:`check_benchmark` did: the checks run, or why it skipped (a missing data file)."""

    name: str
    checked: list[str] = field(default_factory=list)
    skipped: str = ""


def missing_data(benchmark_cls: type[Benchmark], settings: Mapping[str, Any] | None = None) -> str:
    """Why ``benchmark_cls`` cannot run here (its first absent data file, named), or ''.

    Looks in the directory the benchmark would read (its ``data_dir`` setting, else
    ``$BENCHSUITE_DATA``, else the default ones) without downloading anything.
    """
    settings = dict(settings or {})
    base = _data.data_dir(settings.get("data_dir") or None)
    source = settings.get("source", "auto")
    for name in benchmark_cls.requirements.data:
        options = (name,) + (_ALTERNATIVES.get(name, ()) if source != "official" else ())
        if not any((base / n).exists() for n in options):
            return (f"benchmark {benchmark_cls.name!r} needs data file {name!r}, absent from {base} "
                    f"(set {_data.ENV_VAR} to the folder holding it; see `benchsuite describe {benchmark_cls.name}`)")
    return ""


def _check_result(where: str, r: Any) -> None:
    assert isinstance(r, Result), f"{where}: evaluate returned {type(r).__name__}, not a Result"
    cost = float(r.cost_s)
    assert math.isfinite(cost) and cost >= 0, f"{where}: cost_s must be finite and >= 0, got {r.cost_s!r}"
    if r.failed:
        assert str(r.info.get("error", "")).strip(), f"{where}: a failed Result needs a reason in info['error']"
    else:
        assert isinstance(r.loss, (float, int, np.floating, np.integer)) and not isinstance(r.loss, bool), \
            f"{where}: loss must be a float, got {type(r.loss).__name__}"
        assert math.isfinite(float(r.loss)), f"{where}: loss {r.loss!r} is not finite (return Result.failure instead)"
    json.dumps(dict(r.info), default=str)  # info goes into result files


def infeasible_example(space: SearchSpace, rng: np.random.Generator, n_samples: int = 50) -> Any | None:
    """A well-formed configuration the space calls infeasible (``is_valid`` false), looked for among
    ``n_samples`` samples and their neighbours; ``None`` when none is found (most spaces have none)."""
    if type(space).is_valid is SearchSpace.is_valid:
        return None
    for _ in range(n_samples):
        c = space.validate(space.sample(rng))
        for cand in [c, *space.neighbours(c)]:
            if not space.is_valid(cand):
                return space.validate(cand)
    return None


def _check_nominal(where: str, bench: Benchmark, config: Any) -> None:
    fid_axis = bench.fidelity
    low = None if fid_axis is None else (fid_axis.values[0] if fid_axis.values else fid_axis.low)
    for fid in (None, *(() if low is None else (low,))):
        value = bench.nominal_cost(config, fid)
        assert value is not None and math.isfinite(value) and value >= 0, \
            f"{where}: nominal_cost at fidelity {fid} must be a finite number >= 0, got {value!r}"


def check_benchmark(benchmark: type[Benchmark] | Benchmark, settings: Mapping[str, Any] | None = None,
                    n_configs: int = 4, seed: int = 0) -> BenchmarkReport:
    """Check a benchmark's contract (built with its ``test_settings`` overlaid with ``settings``).

    Raises AssertionError (or the suite's error) on a breach; returns a report whose ``skipped``
    says which data file is missing when the benchmark cannot run here.
    """
    if isinstance(benchmark, Benchmark):
        assert settings is None, "pass settings with a class, not with a constructed benchmark"
        cls, bench = type(benchmark), benchmark
    else:
        cls, bench = benchmark, None
    assert cls.name, f"{cls.__name__} needs a non-empty `name`"
    report = BenchmarkReport(cls.name)
    assert cls.description, f"{cls.name}: needs a one-line `description`"
    assert cls.kind in BENCHMARK_KINDS, f"{cls.name}: kind {cls.kind!r} is not one of {BENCHMARK_KINDS}"
    full_settings = {**cls.test_settings, **dict(settings or {})}
    if bench is None:
        why = missing_data(cls, full_settings)
        if why:
            report.skipped = why
            return report
        bench = cls(**full_settings)
    elif (why := missing_data(cls, bench.settings)):
        report.skipped = why
        return report
    name = cls.name
    bench.prepare()
    space, fid = bench.space, bench.fidelity
    assert isinstance(space, SearchSpace), f"{name}: `space` must be a SearchSpace, got {type(space).__name__}"

    # the space: samples are valid, canonical, hashable, and survive the JSON round trip
    rng = np.random.default_rng(seed)
    configs = []
    for _ in range(n_configs):
        c = space.validate(space.sample(rng))
        k = space.key(c)
        assert isinstance(k, Hashable) and hash(k) is not None, f"{name}: key() must be hashable"
        assert space.key(space.validate(c)) == k, f"{name}: validate() is not idempotent (key changed)"
        text = space.to_json(c)
        assert isinstance(text, str), f"{name}: to_json must return a string"
        json.loads(text)
        back = space.validate(space.from_json(text))
        assert space.key(back) == k, f"{name}: from_json(to_json(c)) is not c ({text})"
        configs.append(c)
    again = np.random.default_rng(seed)
    assert [space.key(space.validate(space.sample(again))) for _ in configs] == [space.key(c) for c in configs], \
        f"{name}: space.sample is not reproducible from the Generator"
    for nb in space.neighbours(configs[0])[:3]:
        space.validate(nb)
    report.checked.append("space")

    # evaluations: at full fidelity, and at the low end of the axis when there is one
    c = configs[0]
    r_full = bench.evaluate(c, None, seed=0)
    _check_result(f"{name}: evaluate at full fidelity", r_full)
    report.checked.append("evaluate")
    if fid is not None:
        assert fid.full is not None and fid.validate(fid.full) == fid.full, f"{name}: full fidelity is not valid"
        low = fid.values[0] if fid.values else fid.low
        _check_result(f"{name}: evaluate at fidelity {low}", bench.evaluate(c, fid.validate(low), seed=0))
        if cls.kind != "live":  # an explicit full fidelity means the same as None (one training is enough)
            r = bench.evaluate(c, fid.full, seed=0)
            _check_result(f"{name}: evaluate at fidelity {fid.full}", r)
            if cls.kind in DETERMINISTIC_KINDS and not r.failed and not r_full.failed:
                assert math.isclose(r.loss, r_full.loss, rel_tol=1e-9, abs_tol=1e-12), \
                    f"{name}: fidelity {fid.full} (full) and None gave different losses"
        report.checked.append("fidelity")
    if cls.kind in DETERMINISTIC_KINDS:
        for cc in configs[:2]:
            a, b = bench.evaluate(cc, None, seed=3), bench.evaluate(cc, None, seed=3)
            assert a.failed == b.failed and (a.failed or a.loss == b.loss), \
                f"{name}: the same configuration and seed gave losses {a.loss} and {b.loss}"
        report.checked.append("determinism")

    t = bench.test_loss(c)
    assert isinstance(t, (float, int, np.floating, np.integer)) and not isinstance(t, bool), \
        f"{name}: test_loss must return a float, got {type(t).__name__}"
    report.checked.append("test_loss")
    if type(bench).nominal_cost is not Benchmark.nominal_cost:
        _check_nominal(name, bench, c)
        report.checked.append("nominal_cost")

    # an infeasible configuration (a COMBO cell without an input-output path) is a proposal an optimizer may
    # make: every method the run loop calls on a trial must take it (a scored or failed Result, never a raise)
    bad = infeasible_example(space, np.random.default_rng(seed))
    if bad is not None:
        _check_result(f"{name}: evaluate of an infeasible configuration", bench.evaluate(bad, None, seed=0))
        t = bench.test_loss(bad)
        assert isinstance(t, (float, int, np.floating, np.integer)) and not isinstance(t, bool), \
            f"{name}: test_loss of an infeasible configuration must return a float, got {type(t).__name__}"
        if type(bench).nominal_cost is not Benchmark.nominal_cost:
            _check_nominal(f"{name} (an infeasible configuration)", bench, bad)
        report.checked.append("infeasible")
    text = bench.describe()
    assert isinstance(text, str) and name in text, f"{name}: describe() must return text naming the benchmark"
    prov = bench.provenance()
    assert isinstance(prov, Mapping), f"{name}: provenance() must return a dict"
    json.dumps(dict(prov), default=str)
    report.checked.append("describe/provenance")
    return report
