"""The registry: built-ins by discovery, third-party plugins through entry points."""
import sys
import textwrap

import pytest

from benchsuite import registry
from benchsuite.errors import UnknownNameError


@pytest.fixture
def third_party(tmp_path, monkeypatch):
    """A fake installed distribution registering one optimizer and one benchmark by entry point."""
    (tmp_path / "acme_plugins.py").write_text(textwrap.dedent('''
        from benchsuite import Optimizer, Suggestion, Capabilities
        from benchsuite.benchmarks.synthetic import Branin

        class AcmeSearch(Optimizer):
            name = "acme_search"
            description = "ACME's own search"
            supports = Capabilities(spaces={"continuous"})
            def ask(self, pending=()):
                return Suggestion(self.space.sample(self.rng), self.full_fidelity())

        class AcmeBranin(Branin):
            name = "acme_branin"
            description = "Branin, the ACME way"
    '''))
    dist = tmp_path / "acme_plugins-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-plugins\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[benchsuite.optimizers]\nacme_search = acme_plugins:AcmeSearch\n\n"
        "[benchsuite.benchmarks]\nacme_branin = acme_plugins:AcmeBranin\nbroken = acme_plugins:DoesNotExist\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._all.cache_clear()
    yield
    registry._all.cache_clear()
    sys.modules.pop("acme_plugins", None)


def test_entry_point_plugins_are_found(third_party):
    assert registry.optimizers()["acme_search"].source == "acme-plugins"
    assert registry.get_optimizer("acme_search").description == "ACME's own search"
    assert registry.make_benchmark("acme_branin").optimum == pytest.approx(0.397887, abs=1e-6)
    broken = registry.benchmarks()["broken"]
    assert broken.obj is None and "failed to load" in broken.error
    with pytest.raises(UnknownNameError, match="unavailable"):
        registry.get_benchmark("broken")


def test_builtins_are_discovered():
    assert {"random_search", "hyperband"} <= set(registry.optimizers())
    assert {"branin", "hartmann6", "branin_discrete"} <= set(registry.benchmarks())
    for entry in list(registry.optimizers().values()) + list(registry.benchmarks().values()):
        assert entry.description, f"{entry.name} has no description"


def test_unknown_names_suggest_close_matches():
    with pytest.raises(UnknownNameError, match="did you mean 'hartmann6'"):
        registry.get_benchmark("hartman6")


def test_plugins_in_sub_packages_are_found(tmp_path, monkeypatch):
    """A benchmark in a sub-package (like benchsuite/architectures-backed ones) is registered too."""
    from benchsuite import Benchmark

    pkg = tmp_path / "fakeplugins"
    (pkg / "nested").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "nested" / "__init__.py").write_text("")
    (pkg / "nested" / "deep.py").write_text(textwrap.dedent('''
        from benchsuite.benchmarks.synthetic import Branin

        class DeepBranin(Branin):
            name = "deep_branin"
            description = "Branin in a sub-package"
    '''))
    (pkg / "models").mkdir()
    (pkg / "models" / "__init__.py").write_text("raise RuntimeError('model code is not scanned')")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = registry._scan_package("fakeplugins", Benchmark)
    assert "deep_branin" in found and found["deep_branin"].obj.__module__ == "fakeplugins.nested.deep"
    assert all(e.obj is not None for e in found.values())
    for mod in [m for m in sys.modules if m.startswith("fakeplugins")]:
        sys.modules.pop(mod)


def test_the_index_of_builtin_modules_is_what_the_scan_finds():
    """Looking a plugin up imports the module the index names; the index must name every built-in and only them."""
    for kind in ("optimizer", "benchmark"):
        package = registry._PACKAGES[kind][0]
        scanned = {name: e.obj.__module__.removeprefix(package + ".") for name, e in registry._all(kind).items()
                   if e.source == "builtin" and e.obj is not None}
        index = registry.BUILTIN_MODULES[kind]
        missing = {n: m for n, m in scanned.items() if index.get(n) != m}
        assert not missing, f"add to registry.BUILTIN_MODULES[{kind!r}]: {missing}"
        stale = sorted(set(index) - set(registry._all(kind)))
        assert not stale, f"registry.BUILTIN_MODULES[{kind!r}] names plugins that do not exist: {stale}"
        for name in scanned:
            assert registry.lookup(kind, name) == registry._all(kind)[name]


def test_looking_one_plugin_up_imports_its_module_only():
    import subprocess

    code = ("import sys\nfrom benchsuite import registry\n"
            "registry.get_optimizer('random_search'); registry.get_benchmark('nb201_cifar10')\n"
            "print(sorted(m for m in sys.modules if m.startswith(('benchsuite.optimizers.', 'benchsuite.benchmarks.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['benchsuite.benchmarks.nb201', 'benchsuite.optimizers.random_search']", out


def test_an_unindexed_or_unavailable_name_goes_through_the_scan(third_party, monkeypatch):
    # a third-party plugin is not in the index: found by the scan, as before
    assert registry.get_optimizer("acme_search").name == "acme_search"
    # an indexed plugin whose module fails to import: the scan decides (it lists the module as unavailable)
    monkeypatch.setitem(sys.modules, "benchsuite.optimizers.tpe_bridge", None)
    registry._all.cache_clear()
    assert registry.indexed_entry("optimizer", "tpe") is None
    assert "failed to import" in registry.optimizers()["tpe_bridge"].error
    with pytest.raises(UnknownNameError):
        registry.get_optimizer("tpe")
    with pytest.raises(UnknownNameError, match="did you mean 'hartmann6'"):
        registry.get_benchmark("hartman6")
