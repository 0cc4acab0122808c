"""Every registered optimizer passes the conformance kit and every registered benchmark passes
``check_benchmark``, each with its own ``test_settings``: a new plugin is tested by construction."""
import pytest

from benchsuite import registry
from benchsuite.testing import check_benchmark, check_constrained, check_optimizer

# live benchmarks that check in under ~2 s with their test_settings (others, new ones included, are slow);
# measured: combo_nas 8.2 s, nasbot_cnn_cifar10 6.4 s, nb201_live 5.6 s, deeparchitect_cifar10 4.3 s,
# nasbot_mlp_blog 4.1 s, svm_mnist_live 2.7 s; indoor 1.7 s, logreg_mnist, naval, protein under 0.5 s
FAST_LIVE = {"logreg_mnist", "nasbot_mlp_naval", "nasbot_mlp_protein", "nasbot_mlp_indoor"}
# measured with --durations (2 shared cores): conformance takes smac 52 s, dngo 13 s, entropy_search 7 s,
# fabolas 7 s, combo 5 s, mtbo 5 s, gp_ei 3 s, botorch_qlogei 50-90 s (tests/test_botorch_plugin.py runs its kit
# at budget 8 unmarked); every other optimizer under 2.2 s
SLOW_OPTIMIZERS = {"botorch_qlogei", "combo", "dngo", "entropy_search", "fabolas", "gp_ei", "mtbo", "smac"}


def _params(entries, slow):
    out = []
    for name, entry in entries.items():
        marks = [pytest.mark.slow] if slow(name, entry) else []
        out.append(pytest.param(entry, id=name, marks=marks))
    return out


def _usable(entry):
    """The plugin's class, or a skip when an optional dependency is missing (any other import error fails)."""
    if entry.obj is None:
        if "No module named" in entry.error:
            pytest.skip(f"{entry.name}: optional dependency missing ({entry.error})")
        pytest.fail(f"{entry.name} is registered but unavailable: {entry.error}")
    return entry.obj


@pytest.mark.parametrize("entry", _params(registry.optimizers(), lambda n, e: n in SLOW_OPTIMIZERS))
def test_optimizer_conformance(entry):
    cls = _usable(entry)
    report = check_optimizer(cls, settings=cls.test_settings)
    assert report.checked, f"{entry.name}: nothing was checked"


# measured (2 shared cores, 16 trials, 2 workers, each space it supports): nasbot 11 s, da_smbo 11 s, treebo 11 s, smac 8 s,
# botorch_qlogei 5 s, da_mcts 5 s, nasbot_rand 4 s, every other optimizer under 2 s
@pytest.mark.parametrize("entry", _params(registry.optimizers(), lambda n, e: False))
def test_optimizer_on_every_constrained_space_it_supports(entry):
    """Every optimizer, on each of the suite's constrained spaces it declares support for (COMBO's NAS cell, the
    NAS-Bench-201 cell, DeepArchitect spaces, layer graphs), past its initial design: only configurations the
    space holds, and none infeasible from a plugin that declares feasible_only."""
    cls = _usable(entry)
    cases = check_constrained(cls)
    assert cases, f"{entry.name}: supports none of the suite's constrained spaces"
    assert all(c.trials == 16 for c in cases)


@pytest.mark.parametrize("entry", _params(registry.benchmarks(),
                                          lambda n, e: e.obj is not None and e.obj.kind == "live"
                                          and n not in FAST_LIVE))
def test_benchmark_contract(entry):
    cls = _usable(entry)
    report = check_benchmark(cls)
    if report.skipped:
        pytest.skip(report.skipped)
    assert {"space", "evaluate", "test_loss", "describe/provenance"} <= set(report.checked)
    if cls.kind in ("synthetic", "tabular", "surrogate"):
        assert "determinism" in report.checked


def test_every_registered_plugin_is_parametrised():
    """The parameter lists are built from the registry itself, so nothing registered is left out."""
    opt_ids = {p.id for p in _params(registry.optimizers(), lambda n, e: False)}
    bench_ids = {p.id for p in _params(registry.benchmarks(), lambda n, e: False)}
    assert opt_ids == set(registry.optimizers()) and "random_search" in opt_ids
    assert bench_ids == set(registry.benchmarks()) and "nb201_cifar10" in bench_ids


def test_test_settings_are_valid_settings():
    """Every declared test setting names a real setting of its plugin (resolve_settings checks them)."""
    from benchsuite.settings import resolve_settings

    for kind, entries in (("optimizer", registry.optimizers()), ("benchmark", registry.benchmarks())):
        for name, entry in entries.items():
            if entry.obj is not None:
                resolve_settings(f"{kind} {name!r}", entry.obj.settings_spec, entry.obj.test_settings)


def test_check_benchmark_skips_with_the_missing_file_named(tmp_path):
    report = check_benchmark(registry.get_benchmark("maxsat28"), settings={"data_dir": str(tmp_path)})
    assert "maxsat2018/maxcut-johnson8-2-4.clq.wcnf" in report.skipped and str(tmp_path) in report.skipped
    assert report.checked == []


def test_check_benchmark_catches_a_broken_benchmark():
    from benchsuite.benchmark import Benchmark, Result
    from benchsuite.space import Float, Space

    class NegativeCost(Benchmark):
        name = "negative_cost"
        description = "bad: negative cost"

        def setup(self):
            self.space = Space([Float("x", 0, 1)])

        def evaluate(self, config, fidelity=None, seed=0):
            config, _ = self.check(config, fidelity)
            return Result(loss=config["x"], cost_s=-1.0)

    with pytest.raises(AssertionError, match="cost_s"):
        check_benchmark(NegativeCost)

    class Noisy(NegativeCost):
        name = "noisy"
        description = "bad: a synthetic benchmark that ignores the seed it is given"
        calls = 0

        def evaluate(self, config, fidelity=None, seed=0):
            config, _ = self.check(config, fidelity)
            type(self).calls += 1
            return Result(loss=config["x"] + type(self).calls, cost_s=1.0)

    with pytest.raises(AssertionError, match="same configuration and seed"):
        check_benchmark(Noisy)
