"""Search spaces: typed variables, their encodings, neighbourhoods and validation.

Two kinds of space share one small protocol (:class:`SearchSpace`):

* :class:`Space`, a fixed list of variables (float, integer, ordinal, categorical,
  binary). Configurations are plain ``dict``s ``{name: value}``. It encodes to the unit
  cube (for GPs, DNGO), to integer codes (for COMBO's graphs), and gives neighbours
  (one variable changed) for local search.
* architecture spaces (NASBOT layer graphs, DeepArchitect modules) subclass
  :class:`SearchSpace` directly: they sample, mutate, validate and give a hashable
  canonical key, but may have no vector encoding.

Unit-cube encoding of discrete variables maps level ``k`` of ``n`` to the centre of its
bin, ``(k + 0.5) / n``, and decodes by flooring, so a uniform point in the cube picks
every level with equal probability and ``decode(encode(v)) == v`` for every level.
"""
from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from .errors import InvalidConfigError

Config = dict[str, Any]

SPACE_KINDS = ("continuous", "discrete", "mixed", "architecture")


def _plain(value: Any) -> Any:
    """Turn numpy scalars into the Python scalars JSON and dict keys expect."""
    if isinstance(value, np.generic):
        return value.item()
    return value



def to_unit_scale(values: Any, lo: float, hi: float, log: bool) -> np.ndarray:
    """Values on a range to [0, 1], linearly or in log scale: the one scaling of numeric variables and
    fidelities (``lo``, ``hi``: the range's ends, already logged when ``log``)."""
    v = np.asarray(values, dtype=float)
    if log:
        v = np.log(v)
    return (v - lo) / (hi - lo)


def from_unit_scale(u: Any, lo: float, hi: float, log: bool) -> np.ndarray:
    """The inverse of :func:`to_unit_scale` for ``u`` clipped to [0, 1] (round-off may leave the range)."""
    z = lo + np.clip(np.asarray(u, dtype=float), 0.0, 1.0) * (hi - lo)
    return np.exp(z) if log else z

class Variable(ABC):
    """One named dimension of a :class:`Space`."""

    name: str
    is_discrete: bool = True

    @property
    def n_levels(self) -> int | None:
        """Number of distinct values, or ``None`` for a continuous variable."""
        return None

    @abstractmethod
    def validate(self, value: Any) -> Any:
        """Return the canonical form of ``value`` or raise :class:`InvalidConfigError`."""

    @abstractmethod
    def domain(self) -> str:
        """Describe the allowed values, for error messages and ``describe``."""

    @abstractmethod
    def to_unit(self, values: Sequence[Any]) -> np.ndarray:
        """Encode valid values to floats in [0, 1]."""

    @abstractmethod
    def from_unit(self, u: np.ndarray) -> list[Any]:
        """Decode floats (clipped to [0, 1]) to valid values."""

    def to_code(self, value: Any) -> int:
        """Integer code in ``range(n_levels)`` of a valid value."""
        raise InvalidConfigError(f"variable {self.name!r} is continuous and has no integer codes")

    def from_code(self, code: int) -> Any:
        """Value of an integer code."""
        raise InvalidConfigError(f"variable {self.name!r} is continuous and has no integer codes")

    def sample(self, rng: np.random.Generator, n: int) -> list[Any]:
        """Draw ``n`` values uniformly (in the encoded scale)."""
        return self.from_unit(rng.random(n))

    def neighbours(self, value: Any) -> list[Any]:
        """Values one step away: adjacent levels, or every other category; none for a continuous variable."""
        return []

    def _bad(self, value: Any, why: str = "") -> InvalidConfigError:
        extra = f" ({why})" if why else ""
        return InvalidConfigError(
            f"variable {self.name!r}: value {value!r} is not allowed{extra}; allowed: {self.domain()}"
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.domain()})"


class Float(Variable):
    """A real variable on ``[low, high]``, optionally searched on a log scale."""

    is_discrete = False

    def __init__(self, name: str, low: float, high: float, log: bool = False, default: float | None = None):
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"Float {name!r}: need finite low < high, got [{low}, {high}]")
        if log and low <= 0:
            raise ValueError(f"Float {name!r}: a log-scale variable needs low > 0, got {low}")
        self.name, self.low, self.high, self.log = name, float(low), float(high), bool(log)
        self._lo = math.log(low) if log else float(low)
        self._hi = math.log(high) if log else float(high)
        self.default = self.validate(default) if default is not None else self.from_unit(np.array([0.5]))[0]

    def domain(self) -> str:
        return f"float in [{self.low:g}, {self.high:g}]" + (" (log scale)" if self.log else "")

    def validate(self, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise self._bad(value, "not a number")
        v = float(value)
        if not (self.low <= v <= self.high):  # also rejects NaN
            raise self._bad(value)
        return v

    def to_unit(self, values: Sequence[Any]) -> np.ndarray:
        return to_unit_scale(values, self._lo, self._hi, self.log)

    def from_unit(self, u: np.ndarray) -> list[float]:
        v = from_unit_scale(u, self._lo, self._hi, self.log)
        # exp/log round-off can step just outside the bounds
        return np.clip(v, self.low, self.high).tolist()


class Integer(Variable):
    """An integer variable on ``[low, high]`` (inclusive), optionally on a log scale."""

    def __init__(self, name: str, low: int, high: int, log: bool = False, default: int | None = None):
        if int(low) != low or int(high) != high or low > high:
            raise ValueError(f"Integer {name!r}: need integer low <= high, got [{low}, {high}]")
        if log and low < 1:
            raise ValueError(f"Integer {name!r}: a log-scale integer needs low >= 1, got {low}")
        self.name, self.low, self.high, self.log = name, int(low), int(high), bool(log)
        # bin edges half a step beyond the ends so that every integer owns a bin
        lo, hi = self.low - 0.5, self.high + 0.5
        self._lo, self._hi = (math.log(lo), math.log(hi)) if log else (lo, hi)
        self.default = self.validate(default) if default is not None else self.from_unit(np.array([0.5]))[0]

    @property
    def n_levels(self) -> int:
        return self.high - self.low + 1

    def domain(self) -> str:
        return f"integer in [{self.low}, {self.high}]" + (" (log scale)" if self.log else "")

    def validate(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise self._bad(value, "not a number")
        if not math.isfinite(float(value)) or int(value) != value:
            raise self._bad(value, "not an integer")
        v = int(value)
        if not (self.low <= v <= self.high):
            raise self._bad(value)
        return v

    def to_unit(self, values: Sequence[Any]) -> np.ndarray:
        return to_unit_scale(values, self._lo, self._hi, self.log)

    def from_unit(self, u: np.ndarray) -> list[int]:
        v = np.rint(from_unit_scale(u, self._lo, self._hi, self.log))
        return np.clip(v, self.low, self.high).astype(int).tolist()

    def to_code(self, value: Any) -> int:
        return int(value) - self.low

    def from_code(self, code: int) -> int:
        return self.low + int(code)

    def sample(self, rng: np.random.Generator, n: int) -> list[int]:
        if not self.log:  # exact uniform over the integers
            return (self.low + rng.integers(0, self.n_levels, size=n)).tolist()
        return self.from_unit(rng.random(n))

    def neighbours(self, value: Any) -> list[int]:
        """``value - 1`` and ``value + 1`` where they are in range."""
        v = int(value)
        return [w for w in (v - 1, v + 1) if self.low <= w <= self.high]


class Ordinal(Variable):
    """An ordered set of levels; neighbours are the adjacent levels (a path graph)."""

    def __init__(self, name: str, levels: Sequence[Any], default: Any = None):
        levels = [_plain(v) for v in levels]
        if len(levels) < 1 or len(set(levels)) != len(levels):
            raise ValueError(f"Ordinal {name!r}: need distinct levels, got {levels!r}")
        self.name, self.levels = name, tuple(levels)
        self._index = {v: i for i, v in enumerate(self.levels)}
        self.default = self.validate(default) if default is not None else self.levels[len(self.levels) // 2]

    @property
    def n_levels(self) -> int:
        return len(self.levels)

    def domain(self) -> str:
        lv = self.levels
        shown = ", ".join(map(repr, lv)) if len(lv) <= 8 else f"{lv[0]!r}, {lv[1]!r}, ..., {lv[-1]!r}"
        return f"one of {len(lv)} ordered levels [{shown}]"

    def _lookup(self, value: Any) -> int:
        value = _plain(value)
        try:
            return self._index[value]
        except (KeyError, TypeError):
            pass
        # float levels that went through text (JSON, CSV) may differ in the last bit
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for i, lv in enumerate(self.levels):
                if isinstance(lv, (int, float)) and math.isclose(lv, value, rel_tol=1e-12, abs_tol=1e-12):
                    return i
        raise self._bad(value)

    def validate(self, value: Any) -> Any:
        return self.levels[self._lookup(value)]

    def to_code(self, value: Any) -> int:
        return self._lookup(value)

    def from_code(self, code: int) -> Any:
        return self.levels[int(code)]

    def to_unit(self, values: Sequence[Any]) -> np.ndarray:
        codes = np.array([self._lookup(v) for v in values], dtype=float)
        return (codes + 0.5) / self.n_levels

    def from_unit(self, u: np.ndarray) -> list[Any]:
        codes = np.minimum((np.clip(np.asarray(u, dtype=float), 0, 1) * self.n_levels).astype(int), self.n_levels - 1)
        return [self.levels[c] for c in codes]

    def sample(self, rng: np.random.Generator, n: int) -> list[Any]:
        return [self.levels[c] for c in rng.integers(0, self.n_levels, size=n)]

    def neighbours(self, value: Any) -> list[Any]:
        """The adjacent levels (one or two)."""
        i = self._lookup(value)
        return [self.levels[j] for j in (i - 1, i + 1) if 0 <= j < self.n_levels]


class Categorical(Ordinal):
    """Unordered choices; every other choice is a neighbour (a complete graph)."""

    def __init__(self, name: str, choices: Sequence[Any], default: Any = None):
        super().__init__(name, choices, default=default if default is not None else list(choices)[0])

    @property
    def choices(self) -> tuple[Any, ...]:
        return self.levels

    def domain(self) -> str:
        return "one of {" + ", ".join(map(repr, self.levels)) + "}"

    def neighbours(self, value: Any) -> list[Any]:
        """Every other choice."""
        i = self._lookup(value)
        return [v for j, v in enumerate(self.levels) if j != i]


class Binary(Categorical):
    """A 0/1 variable (COMBO's binary problems); ``True``/``False`` are accepted."""

    def __init__(self, name: str, default: int = 0):
        super().__init__(name, (0, 1), default=default)

    def domain(self) -> str:
        return "0 or 1"

    def validate(self, value: Any) -> int:
        value = _plain(value)
        if value in (0, 1) and not (isinstance(value, float) and not float(value).is_integer()):
            return int(value)
        raise self._bad(value)

    def _lookup(self, value: Any) -> int:
        return self.validate(value)


#: optional capabilities a space may announce (``SearchSpace.capabilities``), beyond what every space
#: offers (sample, validate, neighbours, key, JSON); an optimizer states those it needs
#: (``Capabilities.needs``) and a mismatch is refused before a run starts, naming what is missing
SPACE_CAPABILITIES: dict[str, str] = {
    "build": "builds the network of a configuration: build(config, in_shape, n_out, **options) -> torch module",
    "mutate": "a space-specific random mutation: mutate(config, rng)",
    "distance": "a distance between two configurations: distance(a, b)",
    "otmann": "configurations are NASBOT layer graphs, compared by the OTMANN distance",
    "initial_pool": "a hand-made initial pool of configurations: initial_pool()",
    "walk": "configurations are replayable walks of the DeepArchitect language: walk(choose)",
    "hyperparameters": "each position's name and domain along a walk: hyperparameters(values)",
    "features": "architecture features for a surrogate: features(values)",
    "canonical_key": "an isomorphism-aware canonical form: canonical(config)",
    "feed_forward": "its feed-forward (chain) networks as a tree of decisions: feed_forward() -> a ChainTree",
}


class SearchSpace(ABC):
    """What every search space offers: sampling, validation, neighbours, a hashable key.

    Architecture spaces subclass :class:`ArchitectureSpace`; vector spaces use :class:`Space`.
    A space announces its optional capabilities in ``capabilities`` (names of
    :data:`SPACE_CAPABILITIES`); optimizers rely on the announcement, never on probing methods.
    """

    kind: str = "architecture"
    capabilities: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    def sample(self, rng: np.random.Generator) -> Any:
        """Draw one configuration."""

    @abstractmethod
    def validate(self, config: Any) -> Any:
        """Return the canonical form of ``config`` or raise :class:`InvalidConfigError`."""

    @abstractmethod
    def neighbours(self, config: Any) -> list[Any]:
        """Configurations one elementary change away (for local search and mutation)."""

    @abstractmethod
    def key(self, config: Any) -> Hashable:
        """A hashable canonical form: equal for configurations that are the same point."""

    def is_valid(self, config: Any) -> bool:
        """Whether a well-formed configuration is a feasible point (an architecture whose output
        is reachable, say); spaces with infeasible points override it. Infeasible points can still
        be evaluated (the benchmark scores them); an optimizer may choose to avoid them."""
        return True

    def to_json(self, config: Any) -> str:
        """Canonical JSON text of a configuration (stored in result files)."""
        return json.dumps(config, separators=(",", ":"), default=_plain)

    def from_json(self, text: str) -> Any:
        """Inverse of :meth:`to_json`, validated."""
        return self.validate(json.loads(text))

    def mutate(self, config: Any, rng: np.random.Generator) -> Any:
        """One random neighbour (evolutionary methods); ``config`` itself if it has none."""
        nbrs = self.neighbours(config)
        return nbrs[int(rng.integers(len(nbrs)))] if nbrs else config

    def describe(self) -> str:
        """Human-readable summary for ``benchsuite describe``."""
        return f"{type(self).__name__} ({self.kind})"


class ArchitectureSpace(SearchSpace):
    """A space of network architectures: announces ``build`` and whichever other capabilities it has.

    ``build(config, in_shape, n_out, **options)`` returns the ``torch.nn.Module`` of a configuration
    for inputs of shape ``in_shape`` (without the batch axis) and ``n_out`` outputs; the torch code
    lives in a ``*_torch`` module (or is imported inside ``build``), so the space imports without torch.
    """

    kind = "architecture"
    capabilities: ClassVar[frozenset[str]] = frozenset({"build"})

    def build(self, config: Any, in_shape: Sequence[int], n_out: int, **options: Any) -> Any:
        """The network of ``config``."""
        raise NotImplementedError(f"{type(self).__name__} announces no network builder")


class Space(SearchSpace):
    """An ordered, fixed list of variables; configurations are ``dict``s by name."""

    def __init__(self, variables: Sequence[Variable]):
        names = [v.name for v in variables]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate variable names in {names}")
        if not names:
            raise ValueError("a Space needs at least one variable")
        self.variables: tuple[Variable, ...] = tuple(variables)
        self._names = tuple(names)
        self._by_name = {v.name: v for v in variables}
        n_cont = sum(not v.is_discrete for v in variables)
        self.kind = "continuous" if n_cont == len(names) else "discrete" if n_cont == 0 else "mixed"

    # -- basic container protocol -------------------------------------------------
    @property
    def names(self) -> list[str]:
        return list(self._names)

    def __len__(self) -> int:
        return len(self.variables)

    def __iter__(self) -> Iterator[Variable]:
        return iter(self.variables)

    def __getitem__(self, name: str) -> Variable:
        return self._by_name[name]

    @property
    def n_levels(self) -> np.ndarray:
        """Levels per variable (0 for continuous ones), for COMBO-style graph encodings."""
        return np.array([v.n_levels or 0 for v in self.variables], dtype=int)

    def default(self) -> Config:
        """The configuration made of every variable's default."""
        return {v.name: v.default for v in self.variables}

    # -- validation ----------------------------------------------------------------
    def validate(self, config: Any) -> Config:
        """``config`` with every value in its variable's canonical form (an integer as ``int``, a level as given);
        a missing or unknown variable, or a value outside its domain, raises :class:`InvalidConfigError`."""
        if not isinstance(config, Mapping):
            raise InvalidConfigError(f"a configuration must be a mapping of {self.names}, got {type(config).__name__}")
        if len(config) != len(self._names) or any(n not in config for n in self._names):
            unknown = [k for k in config if k not in self._by_name]
            if unknown:
                raise InvalidConfigError(f"unknown variable(s) {unknown}; this space has {self.names}")
            missing = [n for n in self._names if n not in config]
            raise InvalidConfigError(f"configuration is missing variable(s) {missing}")
        return {v.name: v.validate(config[v.name]) for v in self.variables}

    def key(self, config: Config) -> tuple:
        """The values in the variables' order, as a hashable tuple (a dict key for the configurations seen)."""
        return tuple(_plain(config[n]) for n in self._names)

    # -- sampling and neighbours -----------------------------------------------------
    def sample(self, rng: np.random.Generator, n: int | None = None) -> Config | list[Config]:
        """One configuration, or a list of ``n``."""
        m = 1 if n is None else int(n)
        cols = {v.name: v.sample(rng, m) for v in self.variables}
        configs = [{name: cols[name][i] for name in self.names} for i in range(m)]
        return configs[0] if n is None else configs

    def neighbours(self, config: Config) -> list[Config]:
        """Every configuration that differs from ``config`` in one discrete variable by one step: an adjacent
        level of an :class:`Integer` or :class:`Ordinal`, any other choice of a :class:`Categorical` (a
        :class:`Binary` flipped). Continuous variables contribute none (a local search on them perturbs
        ``to_unit`` coordinates instead). The order is the variables' order, then the variable's own;
        ``config`` itself is not included. Local search (simulated annealing) and mutation
        (:meth:`SearchSpace.mutate`, regularized evolution) draw from this list."""
        out = []
        for v in self.variables:
            for w in v.neighbours(config[v.name]):
                c = dict(config)
                c[v.name] = w
                out.append(c)
        return out

    # -- encodings -------------------------------------------------------------------
    def to_unit(self, configs: Config | Sequence[Config]) -> np.ndarray:
        """Unit-cube encoding: shape ``(d,)`` for one config, ``(n, d)`` for a list."""
        single = isinstance(configs, Mapping)
        rows = [configs] if single else list(configs)
        x = np.empty((len(rows), len(self)))
        for j, v in enumerate(self.variables):
            x[:, j] = v.to_unit([r[v.name] for r in rows])
        return x[0] if single else x

    def from_unit(self, x: np.ndarray) -> Config | list[Config]:
        """Decode unit-cube points (clipped) to configurations; inverse of :meth:`to_unit`."""
        x = np.asarray(x, dtype=float)
        single = x.ndim == 1
        x2 = np.atleast_2d(x)
        if x2.shape[1] != len(self):
            raise InvalidConfigError(f"expected points with {len(self)} coordinates, got shape {x.shape}")
        cols = [v.from_unit(x2[:, j]) for j, v in enumerate(self.variables)]
        configs = [{v.name: cols[j][i] for j, v in enumerate(self.variables)} for i in range(x2.shape[0])]
        return configs[0] if single else configs

    def to_codes(self, configs: Config | Sequence[Config]) -> np.ndarray:
        """Integer-code encoding of a discrete space: ``(d,)`` or ``(n, d)`` ints."""
        self._require_discrete()
        single = isinstance(configs, Mapping)
        rows = [configs] if single else list(configs)
        codes = np.array([[v.to_code(r[v.name]) for v in self.variables] for r in rows], dtype=int)
        return codes[0] if single else codes

    def from_codes(self, codes: np.ndarray) -> Config | list[Config]:
        """Decode integer codes; inverse of :meth:`to_codes`."""
        self._require_discrete()
        codes = np.asarray(codes)
        single = codes.ndim == 1
        c2 = np.atleast_2d(codes)
        if c2.shape[1] != len(self):
            raise InvalidConfigError(f"expected codes with {len(self)} entries, got shape {codes.shape}")
        nl = self.n_levels
        if (c2 < 0).any() or (c2 >= nl).any():
            raise InvalidConfigError(f"integer codes out of range; levels per variable are {nl.tolist()}")
        configs = [{v.name: v.from_code(c2[i, j]) for j, v in enumerate(self.variables)} for i in range(c2.shape[0])]
        return configs[0] if single else configs

    def sample_codes(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` uniform random vertices of a discrete space as an ``(n, d)`` code array (fast)."""
        self._require_discrete()
        return rng.integers(0, self.n_levels, size=(n, len(self)))

    def _require_discrete(self) -> None:
        if self.kind != "discrete":
            cont = [v.name for v in self.variables if not v.is_discrete]
            raise InvalidConfigError(f"integer codes need a discrete space; continuous variables: {cont}")

    def to_json(self, config: Config) -> str:
        return json.dumps({n: _plain(config[n]) for n in self._names}, separators=(",", ":"))

    def describe(self) -> str:
        lines = [f"{len(self)} variables ({self.kind}):"]
        lines += [f"  {v.name}: {v.domain()}" for v in self.variables]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Space({list(self.variables)!r})"
