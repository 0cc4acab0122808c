"""``benchsuite check PLUGIN``: the conformance kit plus a short race against random search.

For a plugin author's CI (recipe: docs/plugin_ci.md). PLUGIN is a registered optimizer or
benchmark name, or ``module:Class`` / ``path/to/file.py:Class`` for a plugin not registered.
An optimizer gets :func:`benchsuite.testing.check_optimizer` with its ``test_settings`` and
:func:`benchsuite.testing.check_constrained` on the suite's constrained spaces it supports, then
runs ``--seeds`` seeds of ``--budget`` evaluations on a lookup table chosen from what it
supports (or ``--benchmark``) next to random search; a benchmark gets
:func:`benchsuite.testing.check_benchmark`. Exit 0 when every check passes, else 1 with one
line per failure; a bad PLUGIN name raises the suite's error (exit 2 in the CLI).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cli_types import integer
from .errors import BenchsuiteError, UnknownNameError

if TYPE_CHECKING:  # pragma: no cover
    from .optimizer import Optimizer

# numpy and the plugin interfaces are imported where they are used: every `benchsuite` command builds this
# subcommand's parser, and `benchsuite --version` or a run should not pay for them

BASELINE = "random_search"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``check`` subcommand to the ``benchsuite`` parser."""
    c = subparsers.add_parser(
        "check", help="check a plugin: conformance kit + a short race against random search (for CI)",
        description="Check an optimizer or benchmark plugin: the conformance kit with its test_settings, then "
                    "(optimizers) a short race against random search on a lookup table. Exit 0, or 1 with "
                    "one line per failure.")
    c.add_argument("plugin", help="registered name, module:Class or path/to/file.py:Class")
    c.add_argument("--benchmark", default=None,
                   help="table for the race (default: nb201_cifar10 for discrete spaces, da_nb201_cifar10 for "
                        "architecture spaces, svm_mnist for continuous ones and multi-fidelity plugins)")
    c.add_argument("--budget", type=integer(1), default=30, help="evaluations per race run (default 30)")
    c.add_argument("--seeds", type=integer(1), default=3, help="race runs per optimizer (default 3)")
    c.add_argument("--default-settings", action="store_true",
                   help="race with the plugin's default settings instead of its small test_settings")
    c.add_argument("--require-better", action="store_true",
                   help="fail when the plugin's median final loss is worse than random search's")
    c.add_argument("--no-race", action="store_true", help="only the conformance kit")
    c.set_defaults(command="check")
    return c


def load_plugin(spec: str) -> type:
    """The Optimizer or Benchmark class named by ``spec`` (registered name, module:Class, file.py:Class)."""
    from . import registry
    from .benchmark import Benchmark
    from .optimizer import Optimizer

    if ":" not in spec:
        for kind in ("optimizer", "benchmark"):
            if spec in (registry.optimizers() if kind == "optimizer" else registry.benchmarks()):
                entry = registry.lookup(kind, spec)
                if entry.obj is None:
                    raise UnknownNameError(f"{kind} {spec!r} is unavailable: {entry.error}")
                return entry.obj
        registry.lookup("optimizer", spec)  # raises with close matches
    mod_name, _, cls_name = spec.rpartition(":")
    if not mod_name or not cls_name:
        raise UnknownNameError(f"plugin {spec!r}: expected a registered name, module:Class or file.py:Class")
    try:
        if mod_name.endswith(".py") or "/" in mod_name:
            path = Path(mod_name)
            if not path.is_file():
                raise UnknownNameError(f"plugin {spec!r}: file {path} does not exist")
            loader = importlib.util.spec_from_file_location(f"benchsuite_check_{path.stem}", path)
            assert loader is not None and loader.loader is not None
            module = importlib.util.module_from_spec(loader)
            sys.modules[loader.name] = module
            loader.loader.exec_module(module)
        else:
            sys.path.insert(0, str(Path.cwd()))  # a user's module next to where they run the check
            try:
                module = importlib.import_module(mod_name)
            finally:
                sys.path.remove(str(Path.cwd()))
    except BenchsuiteError:
        raise
    except SystemExit as exc:  # sys.exit() at import must not end `check` with the plugin's status (issue 26)
        raise UnknownNameError(f"plugin {spec!r}: importing {mod_name} called sys.exit({_short(exc.code)}); "
                               "a plugin module must not exit when imported") from None
    except Exception as exc:  # noqa: BLE001 - any import failure of the user's code is one line
        raise UnknownNameError(f"plugin {spec!r}: importing {mod_name} failed "
                               f"({type(exc).__name__}: {_short(exc)})") from None
    cls = getattr(module, cls_name, None)
    if not (inspect.isclass(cls) and issubclass(cls, (Optimizer, Benchmark))):
        found = _plugin_classes(module)
        hint = f"it defines {', '.join(found)}" if found else "it defines no Optimizer or Benchmark subclass"
        raise UnknownNameError(f"plugin {spec!r}: {mod_name} has no Optimizer or Benchmark class {cls_name!r}; "
                               f"{hint}")
    if cls in (Optimizer, Benchmark) or inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ()))) or "everything"
        raise UnknownNameError(f"plugin {spec!r}: {cls_name} is an abstract base class (it does not implement "
                               f"{missing}); name a plugin class that subclasses it")
    return cls


def _short(value: object, limit: int = 200) -> str:
    """``value`` as one line of at most ``limit`` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _plugin_classes(module: Any) -> list[str]:
    """Names of the concrete Optimizer/Benchmark subclasses defined in ``module`` itself."""
    from .benchmark import Benchmark
    from .optimizer import Optimizer

    return sorted(name for name, obj in vars(module).items()
                  if inspect.isclass(obj) and issubclass(obj, (Optimizer, Benchmark))
                  and obj.__module__ == module.__name__ and not inspect.isabstract(obj))


def default_table(cls: type[Optimizer]) -> str:
    """The lookup table a plugin races on, chosen from the spaces and fidelity it supports."""
    caps = cls.supports
    if caps.fidelity == "requires" or ("discrete" not in caps.spaces and "architecture" not in caps.spaces):
        if "continuous" in caps.spaces:
            return "svm_mnist"  # continuous (C, gamma) with a training-subset fidelity axis
        raise UnknownNameError(f"optimizer {cls.name!r} supports {sorted(caps.spaces)} spaces (fidelity "
                               f"{caps.fidelity}); no default table fits, pass --benchmark")
    return "nb201_cifar10" if "discrete" in caps.spaces else "da_nb201_cifar10"


def _final_loss(rows: list[dict]) -> float:
    """Test loss of the final incumbent (its validation loss when no test value)."""
    for key in ("incumbent_test_loss", "incumbent_loss"):
        v = rows[-1].get(key) if rows else None
        if v is not None and math.isfinite(v):
            return float(v)
    return math.nan


def race(cls: type[Optimizer], table: str, budget: int, seeds: int, settings: dict[str, Any]) -> dict[str, float]:
    """Median final loss of ``cls`` and of random search over ``seeds`` runs of ``budget`` evaluations."""
    import numpy as np

    from .registry import get_optimizer, make_benchmark
    from .runner import run

    bench = make_benchmark(table)
    out: dict[str, float] = {}
    for label, opt, st in ((cls.name, cls, settings), (BASELINE, get_optimizer(BASELINE), {})):
        losses = [_final_loss(run(bench, opt, seed=s, budget_evals=budget, optimizer_settings=st,
                                  include_overhead=False).rows) for s in range(seeds)]
        out[label] = float(np.median(losses))
    return out


def _line(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"the plugin called sys.exit({_short(exc.code)})"
    text = _short(exc, 500) or type(exc).__name__
    return text if isinstance(exc, (AssertionError, BenchsuiteError)) else f"{type(exc).__name__}: {text}"


def main(args: argparse.Namespace) -> int:
    """Run ``benchsuite check``; returns the exit status (0 pass, 1 failures)."""
    from .benchmark import Benchmark
    from .testing import check_benchmark, check_constrained, check_optimizer

    cls = load_plugin(args.plugin)
    failures: list[str] = []
    if issubclass(cls, Benchmark):
        try:
            report = check_benchmark(cls)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - every breach is one reported line
            failures.append(f"{cls.name or cls.__name__}: check_benchmark: {_line(exc)}")
        else:
            if report.skipped:
                print(f"skipped: {report.skipped}")
            else:
                print(f"{cls.name}: benchmark checks passed ({', '.join(report.checked)})")
    else:
        name = cls.name or cls.__name__
        try:
            report = check_optimizer(cls, settings=cls.test_settings)
            print(f"{name}: conformance kit passed on {', '.join(f'{b} x{w}' for b, w in report.checked)}")
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a plugin's sys.exit is a failure, not our status
            failures.append(f"{name}: conformance kit: {_line(exc)}")
        if not failures:
            try:
                cases = check_constrained(cls, settings=cls.test_settings)
            except (Exception, SystemExit) as exc:  # noqa: BLE001
                failures.append(f"{name}: constrained spaces: {_line(exc)}")
            else:
                if cases:
                    print(f"{name}: constrained spaces passed: " + ", ".join(
                        f"{c.space} ({c.trials} trials, {c.infeasible} infeasible)" for c in cases))
        if not args.no_race and not failures:
            table = args.benchmark or default_table(cls)
            settings = {} if args.default_settings else dict(cls.test_settings)
            try:
                med = race(cls, table, args.budget, args.seeds, settings)
            except BenchsuiteError:
                raise  # a bad --benchmark or an unsupported pairing: the user's error (exit 2)
            except (Exception, SystemExit) as exc:  # noqa: BLE001
                failures.append(f"{name}: race on {table}: {_line(exc)}")
            else:
                mine, base = med[cls.name], med[BASELINE]
                verdict = "better than" if mine < base else ("tied with" if mine == base else "worse than")
                print(f"{name}: race on {table}, {args.seeds} seeds x {args.budget} evaluations: median final "
                      f"loss {mine:.6g} vs random search {base:.6g} ({verdict} random search)")
                if not math.isfinite(mine):
                    failures.append(f"{name}: race on {table}: no final incumbent (median final loss is NaN)")
                elif args.require_better and not mine < base:
                    failures.append(f"{name}: race on {table}: median final loss {mine:.6g} is not better than "
                                    f"random search's {base:.6g} (--require-better)")
    for line in failures:
        print(f"FAIL {line}", file=sys.stderr)
    if not failures:
        print("check passed")
    return 1 if failures else 0
