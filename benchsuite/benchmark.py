"""The benchmark interface: one class for synthetic, tabular, surrogate and live objectives.

Lower loss is better everywhere. ``evaluate`` gets a per-evaluation integer seed that the
runner derives from the run seed's benchmark stream (which table replicate, which data
subset), so a benchmark never touches global random state.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .errors import InvalidConfigError
from .settings import Setting, resolve_settings
from .space import SearchSpace, from_unit_scale, to_unit_scale

BENCHMARK_KINDS = ("synthetic", "tabular", "surrogate", "live")


@dataclass(frozen=True)
class Fidelity:
    """An optional axis along which evaluations get cheaper and less faithful.

    ``values`` restricts the axis to a finite set (a table's subset fractions); otherwise
    any value in ``[low, high]`` is allowed. ``full`` is the value that counts as the real
    objective (s = 1 for a training-subset fraction).
    """

    name: str
    low: float
    high: float
    log: bool = False
    full: float | None = None
    values: tuple[float, ...] | None = None
    unit: str = ""

    def __post_init__(self) -> None:
        if not self.low < self.high or (self.log and self.low <= 0):
            raise ValueError(f"fidelity {self.name!r}: bad range [{self.low}, {self.high}] (log={self.log})")
        if self.full is None:
            object.__setattr__(self, "full", self.high)
        if self.values is not None:
            object.__setattr__(self, "values", tuple(sorted(float(v) for v in self.values)))

    def validate(self, value: Any) -> float:
        """Return ``value`` as a float, snapped to ``values`` if within 1e-9, or raise."""
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise InvalidConfigError(f"fidelity {self.name!r}: {value!r} is not a number") from None
        if self.values is not None:
            for w in self.values:
                if math.isclose(v, w, rel_tol=1e-9, abs_tol=1e-12):
                    return w
            raise InvalidConfigError(
                f"fidelity {self.name!r}: {value!r} is not one of the allowed values {list(self.values)}"
            )
        if not (self.low <= v <= self.high):
            raise InvalidConfigError(f"fidelity {self.name!r}: {value!r} is outside [{self.low:g}, {self.high:g}]")
        return v

    def _scale(self) -> tuple[float, float]:
        return (math.log(self.low), math.log(self.high)) if self.log else (self.low, self.high)

    def to_unit(self, value: float | np.ndarray) -> float | np.ndarray:
        """Map to [0, 1] (log-scaled when ``log``), as Fabolas scales s (the variables' scaling)."""
        u = to_unit_scale(value, *self._scale(), self.log)
        return u if u.ndim else float(u)

    def from_unit(self, u: float | np.ndarray) -> float | np.ndarray:
        """Inverse of :meth:`to_unit` (clipped to the range; not snapped to ``values``)."""
        v = np.clip(from_unit_scale(u, *self._scale(), self.log), self.low, self.high)
        return v if v.ndim else float(v)

    def is_full(self, value: float | None) -> bool:
        """Whether an evaluation at ``value`` (None: no fidelity was given) counts as the real objective."""
        return value is None or self.full is None or math.isclose(value, self.full)

    def snap(self, value: float) -> float:
        """Nearest allowed value (in the axis's own scale)."""
        if self.values is None:
            return float(np.clip(value, self.low, self.high))
        vals = np.array(self.values)
        dist = np.abs(np.log(vals) - math.log(value)) if self.log else np.abs(vals - value)
        return float(vals[int(np.argmin(dist))])

    def describe(self) -> str:
        """One line for ``benchsuite describe``."""
        rng = f"values {list(self.values)}" if self.values else f"range [{self.low:g}, {self.high:g}]"
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.name}: {rng}{' (log scale)' if self.log else ''}, full = {self.full:g}{unit}"


@dataclass(frozen=True)
class Result:
    """Outcome of one evaluation: loss (lower is better), cost in seconds and extra info."""

    loss: float
    cost_s: float
    info: Mapping[str, Any] = field(default_factory=dict)
    failed: bool = False

    @classmethod
    def failure(cls, cost_s: float, reason: str) -> Result:
        """A failed evaluation (diverged, crashed); the loss is NaN."""
        return cls(loss=math.nan, cost_s=cost_s, info={"error": reason}, failed=True)


@dataclass(frozen=True)
class Requirements:
    """What a benchmark needs to run: data files (manifest names) and whether a GPU helps."""

    data: tuple[str, ...] = ()
    gpu: str = "no"  # "no", "optional" (used when present) or "required"


class Benchmark(ABC):
    """Base class of every benchmark; subclasses set the class attributes and ``evaluate``.

    Subclasses declare ``settings`` (problem instance, lambda, data directory...) which are
    resolved by the constructor into ``self.settings`` before :meth:`setup` runs.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    kind: ClassVar[str] = "synthetic"
    #: optional packages (import names, see benchsuite.extras.EXTRA_MODULES) this plugin cannot work without;
    #: with one missing, the registry lists the plugin as unavailable and names the pip extra to install
    needs: ClassVar[tuple[str, ...]] = ()
    #: what ``optimum`` is, as ``describe`` labels it (a table's best test error is not a loss a run can reach)
    optimum_label: ClassVar[str] = "loss"
    settings_spec: ClassVar[dict[str, Setting]] = {}
    #: the class of ``space`` where it is known without building the benchmark (``benchsuite list`` shows
    #: what an architecture space offers); None otherwise
    space_class: ClassVar[type | None] = None
    test_settings: ClassVar[dict[str, Any]] = {}  # small, quick settings for check_benchmark
    requirements: ClassVar[Requirements] = Requirements()

    space: SearchSpace
    fidelity: Fidelity | None = None
    optimum: float | None = None  # best achievable loss (at full fidelity), when known

    def __init__(self, **settings: Any):
        self.settings = resolve_settings(f"benchmark {self.name!r}", self.settings_spec, settings)
        self.setup()

    def setup(self) -> None:
        """Build the space, load data; called once by the constructor after settings resolve."""

    def prepare(self) -> None:
        """Load what evaluations need (data files) before the first one; the runner calls it once.

        Live benchmarks that load lazily override it, so that a missing or corrupt data file
        stops the run with one error line before any trial instead of failing every trial.
        """

    @abstractmethod
    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        """Evaluate a (valid) configuration at a fidelity (``None`` means full)."""

    def test_loss(self, config: Any) -> float:
        """Offline loss of an incumbent (held-out test data, or the noiseless value)."""
        return self.evaluate(config, None, seed=0).loss

    def memo_test_loss(self, key: Any, compute: Callable[[], float]) -> float:
        """The one test-loss cache: ``compute()`` once per ``key`` (a configuration's key) per benchmark
        instance. The runner asks it for each incumbent; benchmarks whose test loss trains a model use it
        inside ``test_loss``, so a configuration is trained once however it is asked for."""
        cache = self.__dict__.setdefault("_test_loss_memo", {})
        if key not in cache:
            cache[key] = float(compute())
        return cache[key]

    def check(self, config: Any, fidelity: float | None) -> tuple[Any, float | None]:
        """Validate a configuration and a fidelity; returns their canonical forms."""
        config = self.space.validate(config)
        if fidelity is None:
            return config, None
        if self.fidelity is None:
            raise InvalidConfigError(f"benchmark {self.name!r} has no fidelity; got fidelity={fidelity!r}")
        return config, self.fidelity.validate(fidelity)

    def provenance(self) -> dict[str, Any]:
        """Facts to store with results (for example a table's sha256)."""
        return {}

    def nominal_cost(self, config: Any, fidelity: float | None) -> float | None:
        """A deterministic model of an evaluation's cost in seconds, or ``None`` when the benchmark has none.

        ``clock="nominal"`` runs (the protocols' default for live benchmarks with such a model) put this on
        the simulated clock instead of the measured ``cost_s``, so that which trial completes first, and so
        every later decision with several workers, does not depend on the machine's timing (issue 26 item 6).
        Benchmarks whose reported costs are already deterministic (tables, surrogates, synthetic functions)
        need none.
        """
        return None

    def initial_design(self) -> list[Any] | None:
        """The initial configurations this benchmark's paper starts every method from, or ``None``.

        Most benchmarks have none. COMBO's binary problems in ``combo_authors`` mode return the
        authors' 20 points of the run's (instance, initial design) pair; a run hands them to the
        optimizer with ``initial_design="benchmark"`` (``benchsuite run --initial-design benchmark``,
        or ``initial_design: benchmark`` on a protocol's optimizer entry).
        """
        return None

    def describe(self) -> str:
        """Human-readable description for ``benchsuite describe``."""
        lines = [f"{self.name} ({self.kind}): {self.description}", "space: " + self.space.describe()]
        lines.append("fidelity: " + (self.fidelity.describe() if self.fidelity else "none"))
        value = "unknown" if self.optimum is None else f"{self.optimum:.6g}"  # 6 digits: no float noise
        lines.append(f"known optimum ({self.optimum_label}): {value}")
        req = self.requirements
        lines.append(f"needs: data {list(req.data) or 'none'}, GPU {req.gpu}")
        if self.settings_spec:
            lines.append("settings:")
            for k, s in self.settings_spec.items():
                lines.append(f"  {k} = {self.settings[k]!r}  {s.help}")
        return "\n".join(lines)



class CodeBenchmark(Benchmark):
    """A deterministic objective of a discrete space, evaluated in batches of integer codes.

    Subclasses implement :meth:`evaluate_codes` (vectorised over rows) and declare a
    ``cost_s`` setting: every evaluation costs that many simulated seconds. Used by
    COMBO's problems and MaxSAT, where optimizers may also call ``evaluate_codes`` directly.
    """

    kind = "synthetic"

    @abstractmethod
    def evaluate_codes(self, codes: np.ndarray) -> np.ndarray:
        """Objective of each row of an ``(n, d)`` integer-code array."""

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        config, _ = self.check(config, fidelity)
        loss = float(self.evaluate_codes(self.space.to_codes(config)[None, :])[0])
        return Result(loss=loss, cost_s=self.settings["cost_s"])

    def test_loss(self, config: Any) -> float:
        return float(self.evaluate_codes(self.space.to_codes(self.space.validate(config))[None, :])[0])
