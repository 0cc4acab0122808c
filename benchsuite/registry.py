"""The plugin registry: built-in plugins by discovery, third-party ones by entry points.

Built-in optimizers are the modules of the top-level ``optimizers`` package (benchopt
style: drop a file in, it is found); built-in benchmarks are the modules of
``benchsuite.benchmarks``; sub-packages of either are scanned too. Every :class:`Optimizer` / :class:`Benchmark` subclass with a
non-empty ``name`` defined in such a module is registered. Third-party packages add
their own through the entry-point groups ``benchsuite.optimizers`` and
``benchsuite.benchmarks``; an entry point may name a class or a module to scan.

A module that fails to import does not break the registry: it is listed as unavailable with
the reason. A plugin whose declared ``needs`` (optional packages, benchsuite.extras) are not installed is
listed as unavailable too, with the pip extra to install.

Looking one built-in plugin up by name (:func:`get_optimizer`, :func:`get_benchmark`, :func:`lookup`) imports
only the module :data:`BUILTIN_MODULES` names for it, not every plugin module: a one-trial run on a table
would otherwise import COMBO's, BoTorch's and the live benchmarks' modules (scipy.special alone costs about
0.1 s) to use random search. The listing, a name the index lacks and a module that fails to import go through
the full scan, so a plugin file dropped in is found all the same; ``tests/test_registry.py`` checks the
index against the scan.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

from .benchmark import Benchmark
from .errors import MissingExtraError, UnknownNameError
from .extras import missing_extra_error, unavailable_reason
from .optimizer import Optimizer

OPTIMIZER_GROUP = "benchsuite.optimizers"
BENCHMARK_GROUP = "benchsuite.benchmarks"


@dataclass(frozen=True)
class Entry:
    """A registered plugin: its class, where it came from, or why it is unavailable."""

    name: str
    obj: type | None
    source: str  # "builtin" or the distribution that provides the entry point
    error: str = ""
    #: the class of a plugin that is unavailable only because a package it ``needs`` is missing: not for
    #: running, but ``benchsuite describe`` shows its space and settings before the extra is installed
    cls: type | None = None

    @property
    def description(self) -> str:
        if self.obj is None:
            return f"(unavailable: {self.error})"
        return getattr(self.obj, "description", "") or (inspect.getdoc(self.obj) or "").split("\n")[0]


def _classes_in(module: ModuleType, base: type) -> list[type]:
    return [obj for obj in vars(module).values()
            if inspect.isclass(obj) and issubclass(obj, base) and obj is not base
            and getattr(obj, "name", "") and obj.__module__ == module.__name__ and not inspect.isabstract(obj)]


#: sub-packages of optimizers/ that hold code the plugins share, not plugins (issue 22, item 7)
SHARED_PACKAGES = ("models", "kernels", "inference", "acquisition", "common")


def _modules(package: str) -> list[str]:
    """Dotted names of the modules in ``package`` and its sub-packages, skipping the shared model code
    (:data:`SHARED_PACKAGES`) and ``_private`` ones before they are imported (pkgutil.walk_packages would
    import them)."""
    names = []
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_") or info.name in SHARED_PACKAGES:  # shared model code, not plugins
            continue
        name = f"{package}.{info.name}"
        names.append(name)
        if info.ispkg:
            try:
                names += _modules(name)
            except Exception:  # noqa: BLE001 - the package itself is reported by _scan_package
                pass
    return names


def _scan_package(package: str, base: type) -> dict[str, Entry]:
    """Plugins in every module of ``package`` and of its sub-packages."""
    out: dict[str, Entry] = {}
    for modname in _modules(package):
        short = modname.rsplit(".", 1)[-1]
        try:
            module = importlib.import_module(modname)
        except Exception as exc:  # noqa: BLE001 - report, don't crash the listing
            extra = missing_extra_error(exc, modname) if isinstance(exc, ModuleNotFoundError) else None
            reason = str(extra).replace(f"{modname} needs", "needs", 1) if extra else f"{modname} failed to import: {exc}"
            out[short] = Entry(short, None, "builtin", reason)
            continue
        for cls in _classes_in(module, base):
            out[cls.name] = _entry(cls.name, cls, "builtin")
    return out


def _entry(name: str, cls: type, source: str) -> Entry:
    """The entry of a plugin class: unavailable, naming the pip extra, when a package it ``needs`` is missing."""
    reason = unavailable_reason(tuple(getattr(cls, "needs", ()) or ()))
    return Entry(name, None, source, reason, cls=cls) if reason else Entry(name, cls, source)


def _scan_entry_points(group: str, base: type) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for ep in importlib.metadata.entry_points(group=group):
        dist = ep.dist.name if ep.dist else "?"
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001
            out[ep.name] = Entry(ep.name, None, dist, f"entry point {ep.value} failed to load: {exc}")
            continue
        classes = _classes_in(obj, base) if inspect.ismodule(obj) else [obj]
        for cls in classes:
            if not (inspect.isclass(cls) and issubclass(cls, base)):
                out[ep.name] = Entry(ep.name, None, dist, f"{ep.value} is not a {base.__name__} subclass")
                continue
            name = getattr(cls, "name", "") or ep.name
            out[name] = _entry(name, cls, dist)
    return out


@lru_cache(maxsize=None)
def _all(kind: str) -> dict[str, Entry]:
    if kind == "optimizer":
        found = _scan_package("benchsuite.optimizers", Optimizer)
        found.update({k: v for k, v in _scan_entry_points(OPTIMIZER_GROUP, Optimizer).items() if k not in found})
    else:
        found = _scan_package("benchsuite.benchmarks", Benchmark)
        found.update({k: v for k, v in _scan_entry_points(BENCHMARK_GROUP, Benchmark).items() if k not in found})
    return dict(sorted(found.items()))


#: the module (under benchsuite.optimizers / benchsuite.benchmarks) that defines each built-in plugin, so that
#: looking one up imports that module only (see the module docstring); the full scan is the authority
BUILTIN_MODULES: dict[str, dict[str, str]] = {
    "optimizer": {
        "bocs": "bocs", "botorch_qlogei": "botorch_qlogei", "combo": "combo", "da_evolution": "deeparchitect",
        "da_mcts": "deeparchitect", "da_random": "deeparchitect", "da_smbo": "deeparchitect", "dngo": "dngo",
        "entropy_search": "entropy_search", "fabolas": "fabolas", "gp_ei": "gp_ei", "hyperband": "hyperband",
        "mtbo": "mtbo", "nasbot": "nasbot", "nasbot_ea": "nasbot", "nasbot_rand": "nasbot",
        "random_search": "random_search", "regularized_evolution": "regularized_evolution",
        "simulated_annealing": "simulated_annealing", "simulated_annealing_bocs": "simulated_annealing_bocs",
        "smac": "smac_bridge", "tpe": "tpe_bridge", "treebo": "treebo",
    },
    "benchmark": {
        "branin": "synthetic", "branin_discrete": "synthetic", "branin_mf": "synthetic", "camelback": "synthetic",
        "hartmann3": "synthetic", "hartmann6": "synthetic", "combo_nas": "combo_nas", "contamination": "combo_problems",
        "ising": "combo_problems", "pest_control": "combo_problems", "da_nb201_cifar10": "deeparchitect",
        "da_nb201_cifar100": "deeparchitect", "da_nb201_imagenet16": "deeparchitect",
        "deeparchitect_cifar10": "deeparchitect", "logreg_mnist": "logreg_mnist", "maxsat28": "maxsat",
        "maxsat43": "maxsat", "maxsat60": "maxsat", "nasbot_cnn_cifar10": "nasbot_live",
        "nasbot_mlp_blog": "nasbot_live", "nasbot_mlp_indoor": "nasbot_live", "nasbot_mlp_naval": "nasbot_live",
        "nasbot_mlp_news": "nasbot_live", "nasbot_mlp_protein": "nasbot_live", "nasbot_mlp_slice": "nasbot_live",
        "nb201_cifar10": "nb201", "nb201_cifar100": "nb201", "nb201_imagenet16": "nb201", "nb201_live": "nb201_live",
        "sleep_branin": "sleep_branin", "svm_mnist": "svm_mnist", "svm_mnist_live": "svm_mnist",
        "svm_mnist_surrogate": "svm_mnist",
    },
}
_PACKAGES = {"optimizer": ("benchsuite.optimizers", Optimizer), "benchmark": ("benchsuite.benchmarks", Benchmark)}


def indexed_entry(kind: str, name: str) -> Entry | None:
    """The entry of built-in plugin ``name`` from the one module :data:`BUILTIN_MODULES` names for it; None when
    the index does not name it or its module does not import or define it (the full scan then decides)."""
    modname = BUILTIN_MODULES.get(kind, {}).get(name)
    if modname is None:
        return None
    package, base = _PACKAGES[kind]
    try:
        module = importlib.import_module(f"{package}.{modname}")
    except Exception:  # noqa: BLE001 - the scan reports it, as for a listing
        return None
    for cls in _classes_in(module, base):
        if cls.name == name:
            return _entry(name, cls, "builtin")
    return None


_SCAN = _all


def optimizers() -> dict[str, Entry]:
    """All known optimizer plugins by name (built-in first, then entry points)."""
    return _all("optimizer")


def benchmarks() -> dict[str, Entry]:
    """All known benchmarks by name."""
    return _all("benchmark")


def lookup(kind: str, name: str) -> Entry:
    """The registry entry of optimizer or benchmark ``name`` (``kind`` is "optimizer" or
    "benchmark"); unknown names raise :class:`UnknownNameError` with close matches. The
    entry of an unavailable plugin (missing extra) is returned; its ``obj`` is None."""
    # the index only shortcuts the scan: where the table itself was replaced (tests substitute _all), it answers
    entry = indexed_entry(kind, name) if _all is _SCAN else None
    if entry is not None:
        return entry
    table = optimizers() if kind == "optimizer" else benchmarks()
    entry = table.get(name)
    if entry is None:
        import difflib

        close = difflib.get_close_matches(name, list(table), n=3)
        hint = f"; did you mean {', '.join(repr(x) for x in close)}?" if close else ""
        raise UnknownNameError(f"unknown {kind} {name!r}{hint} (see `benchsuite list`)")
    return entry


def _get(kind: str, name: str) -> type:
    entry = lookup(kind, name)
    if entry.obj is None:
        if entry.error.startswith("needs "):  # a missing extra (extras.unavailable_reason)
            raise MissingExtraError(f"{kind} {name!r} {entry.error}")
        raise UnknownNameError(f"{kind} {name!r} is unavailable: {entry.error}")
    return entry.obj


def get_optimizer(name: str) -> type[Optimizer]:
    """The optimizer class registered under ``name``."""
    return _get("optimizer", name)


def get_benchmark(name: str) -> type[Benchmark]:
    """The benchmark class registered under ``name``."""
    return _get("benchmark", name)


def make_benchmark(name: str, settings: dict[str, Any] | None = None) -> Benchmark:
    """Construct a registered benchmark with its settings."""
    return get_benchmark(name)(**(settings or {}))


def required_tables(benchmark_name: str) -> list:
    """The table files (paths) a registered benchmark reads (empty for non-tabular ones)."""
    cls = get_benchmark(benchmark_name)
    fn = getattr(cls, "required_tables", None)
    return list(fn()) if fn is not None else []
