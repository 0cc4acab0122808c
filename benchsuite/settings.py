"""Declared, typed settings for plugins and benchmarks.

A plugin lists its settings once, with default, type, domain and the source of the default
(the paper section or the original implementation); :func:`resolve_settings` rejects unknown
names, coerces strings given on the command line (``--set n_init=10``) and checks each
value against the setting's domain. Domains are constraint objects in the manner of
scikit-learn's parameter validation: :class:`Interval`, :class:`Options`, ``None``
(:data:`NoneOK`) and unions (:class:`AnyOf`, or a list); each tests a value
(``is_satisfied_by``) and describes itself (``str``), so construction, protocol validation
and ``benchsuite describe`` all use the same objects.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from .errors import InvalidSettingError, ProtocolError


class Constraint:
    """A set of allowed values: tests a value and describes itself in words."""

    def is_satisfied_by(self, value: Any) -> bool:
        """Whether ``value`` is allowed."""
        raise NotImplementedError

    def __str__(self) -> str:  # pragma: no cover - every subclass overrides it
        return type(self).__name__


_CLOSED = {"both": ("[", "]"), "left": ("[", ")"), "right": ("(", "]"), "neither": ("(", ")")}


class Interval(Constraint):
    """Numbers of ``type`` (int or float) between ``low`` and ``high`` (None: unbounded).

    ``closed`` says which finite bounds belong to the interval. NaN is never allowed; an
    infinity only where its side is unbounded and ``allow_inf`` is true (an infinite
    cost or temperature would make a run stop at once or never)."""

    def __init__(self, type: type, low: float | None = None, high: float | None = None, *,  # noqa: A002
                 closed: str = "both", allow_inf: bool = False):
        if type not in (int, float):
            raise TypeError(f"Interval type must be int or float, got {type!r}")
        if closed not in _CLOSED:
            raise ValueError(f"closed must be one of {list(_CLOSED)}, got {closed!r}")
        if low is not None and high is not None and low > high:
            raise ValueError(f"empty interval: low {low} > high {high}")
        self.type, self.low, self.high, self.closed, self.allow_inf = type, low, high, closed, allow_inf

    def is_satisfied_by(self, value: Any) -> bool:
        """Whether ``value`` is a number of this type within the bounds."""
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        if self.type is int and not isinstance(value, numbers.Integral):
            return False
        v = float(value) if self.type is float else value
        if isinstance(v, float):
            if math.isnan(v):
                return False
            if math.isinf(v):
                unbounded = self.high is None if v > 0 else self.low is None
                return self.allow_inf and unbounded
        left, right = _CLOSED[self.closed]
        if self.low is not None and (v < self.low or (left == "(" and v == self.low)):
            return False
        if self.high is not None and (v > self.high or (right == ")" and v == self.high)):
            return False
        return True

    def __str__(self) -> str:
        left, right = _CLOSED[self.closed]
        lo = "-inf" if self.low is None else _num(self.low)
        hi = "inf" if self.high is None else _num(self.high)
        if self.low is None:
            left = "[" if self.allow_inf else "("
        if self.high is None:
            right = "]" if self.allow_inf else ")"
        return f"{'an int' if self.type is int else 'a float'} in {left}{lo}, {hi}{right}"

    def __repr__(self) -> str:
        return (f"Interval({self.type.__name__}, {self.low!r}, {self.high!r}, closed={self.closed!r}"
                + (", allow_inf=True)" if self.allow_inf else ")"))


def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


class Options(Constraint):
    """One of a fixed set of values (strings, numbers or booleans)."""

    def __init__(self, values):
        self.values = tuple(values)
        if not self.values:
            raise ValueError("Options needs at least one value")

    def is_satisfied_by(self, value: Any) -> bool:
        """Whether ``value`` equals one of the options (True is not 1 here)."""
        return any(value == v and isinstance(value, bool) == isinstance(v, bool) for v in self.values)

    def __str__(self) -> str:
        shown = ", ".join(repr(v) for v in self.values)
        return f"{shown}" if len(self.values) == 1 else f"one of {shown}"

    def __repr__(self) -> str:
        return f"Options({list(self.values)!r})"


class _NoneConstraint(Constraint):
    """Only ``None`` (an unset optional setting)."""

    def is_satisfied_by(self, value: Any) -> bool:
        """Whether ``value`` is None."""
        return value is None

    def __str__(self) -> str:
        return "None"

    def __repr__(self) -> str:
        return "NoneOK"


NoneOK = _NoneConstraint()


class AnyOf(Constraint):
    """A union: a value is allowed if any of the constraints allows it."""

    def __init__(self, *constraints: Any):
        self.constraints = tuple(make_constraint(c) for c in constraints)
        if not self.constraints:
            raise ValueError("AnyOf needs at least one constraint")

    def is_satisfied_by(self, value: Any) -> bool:
        """Whether any member constraint allows ``value``."""
        return any(c.is_satisfied_by(value) for c in self.constraints)

    def __str__(self) -> str:
        # None first reads best: "None or an int in [1, inf)"
        parts = sorted(self.constraints, key=lambda c: c is not NoneOK)
        words = [str(c) for c in parts]
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]

    def __repr__(self) -> str:
        return f"AnyOf({', '.join(map(repr, self.constraints))})"


def make_constraint(spec: Any) -> Constraint:
    """A constraint from a declaration: a Constraint, None (= NoneOK) or a list/tuple (= AnyOf)."""
    if isinstance(spec, Constraint):
        return spec
    if spec is None:
        return NoneOK
    if isinstance(spec, (list, tuple)):
        return spec[0] if len(spec) == 1 and isinstance(spec[0], Constraint) else AnyOf(*spec)
    raise TypeError(f"not a constraint: {spec!r} (use Interval, Options, NoneOK, AnyOf or a list of them)")


def _interval_type(c: Constraint | None) -> type | None:
    """The number type of the (first) interval in ``c``, to type a setting whose default is None."""
    if isinstance(c, Interval):
        return c.type
    if isinstance(c, AnyOf):
        for m in c.constraints:
            if isinstance(m, Interval):
                return m.type
    return None


# the domains most settings share (declare others with Interval/Options/AnyOf directly)
POSITIVE_INT = Interval(int, 1, None)  # counts that must be at least one: n_init, sizes, steps
NONNEGATIVE_INT = Interval(int, 0, None)  # counts that may be zero, seeds
POSITIVE = Interval(float, 0, None, closed="neither")  # scales, rates, temperatures
NONNEGATIVE = Interval(float, 0, None)  # costs, penalties
UNIT = Interval(float, 0, 1)  # probabilities

@dataclass(frozen=True)
class Setting:
    """One setting: its default, a short description, where the default comes from, and its domain.

    ``domain`` is a constraint (or a list of them, a union) every value must satisfy;
    ``choices`` is the older spelling of ``domain=Options(choices)``."""

    default: Any
    help: str = ""
    type: type | None = None  # inferred from the default (or an Interval domain) when None
    choices: tuple | None = None
    domain: Any = None

    @property
    def constraint(self) -> Constraint | None:
        """The domain as one constraint (``choices`` as Options), or None for any value of the type."""
        if self.domain is not None:
            return make_constraint(self.domain)
        if self.choices is not None:
            return Options(self.choices)
        return None

    def value_type(self) -> type | None:
        """The type values are converted to (declared, else the default's, else the domain's)."""
        if self.type is not None:
            return self.type
        if self.default is not None:
            return type(self.default)
        return _interval_type(self.constraint)

    def describe_domain(self) -> str:
        """The allowed values in words ("an int in [1, inf)"), or the type's name without a domain."""
        c = self.constraint
        if c is not None:
            return str(c)
        typ = self.value_type()
        return f"any {typ.__name__}" if typ is not None else "any value"

    def coerce(self, owner: str, name: str, value: Any) -> Any:
        """Convert ``value`` (maybe a string from the CLI) to this setting's type and check its domain."""
        typ = self.value_type()
        if isinstance(value, str) and typ is not str:
            text = value
            try:
                value = load_yaml(value, f"{owner}: setting {name}")
            except ProtocolError as exc:
                why = str(exc).split(": not valid YAML ", 1)[-1].strip("()")
                raise InvalidSettingError(f"{owner}: setting {name}={value!r} is not a valid value ({why})") from None
            if typ is float and isinstance(value, str):
                # YAML spells NaN and infinity .nan/.inf; a user writes nan, inf, -inf
                try:
                    value = float(text.strip())
                except ValueError:
                    pass
        c = self.constraint
        if typ is not None and value is not None:
            try:
                if typ is bool and not isinstance(value, bool):
                    raise ValueError("expected true or false")
                if typ is float and isinstance(value, (int, float)) and not isinstance(value, bool):
                    value = float(value)
                elif typ is int and isinstance(value, float) and value.is_integer():
                    value = int(value)
                elif typ in (tuple, list) and isinstance(value, (list, tuple)):
                    value = typ(value)
                elif not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
                    raise ValueError(f"expected {typ.__name__}, got {type(value).__name__}")
            except ValueError as exc:
                if c is not None:
                    raise InvalidSettingError(f"{owner}: setting {name}={_show(value)} must be {c}") from None
                raise InvalidSettingError(f"{owner}: setting {name}={value!r}: {exc}") from None
        if c is not None and not c.is_satisfied_by(value):
            raise InvalidSettingError(f"{owner}: setting {name}={_show(value)} must be {c}")
        return value


def _show(value: Any) -> str:
    """A value for a one-line message: floats as nan/inf/1.5, strings quoted, long values cut."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def resolve_settings(owner: str, declared: Mapping[str, Setting], given: Mapping[str, Any] | None) -> dict[str, Any]:
    """Defaults overlaid with ``given``; unknown names raise :class:`InvalidSettingError`."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(declared))
    if unknown:
        allowed = ", ".join(sorted(declared)) or "none"
        raise InvalidSettingError(f"{owner} has no setting(s) {', '.join(unknown)}; its settings are: {allowed}")
    out = {name: s.default for name, s in declared.items()}
    for name, value in given.items():
        out[name] = declared[name].coerce(owner, name, value)
    return out


def require_at_most(owner: str, settings: Mapping[str, Any], small: str, large: str, why: str) -> None:
    """Raise :class:`InvalidSettingError` naming both settings unless ``settings[small] <= settings[large]``."""
    a, b = settings[small], settings[large]
    if not a <= b:
        raise InvalidSettingError(f"{owner}: setting {small}={_show(a)} must not exceed {large}={_show(b)} ({why}); "
                                  f"set both with --set {small}=... --set {large}=...")


def describe_settings(declared: Mapping[str, Setting], values: Mapping[str, Any] | None = None) -> list[str]:
    """The ``settings:`` block of ``benchsuite describe``: name = value, allowed values, help."""
    if not declared:
        return []
    lines = ["settings:"]
    for k, s in declared.items():
        value = (values or {}).get(k, s.default)
        lines.append(f"  {k} = {value!r}  ({s.describe_domain()})  {s.help}".rstrip())
    return lines


def parse_assignments(pairs: list[str] | None) -> dict[str, str]:
    """Parse ``["a=1", "b=x"]`` from the command line into a dict of strings."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise InvalidSettingError(f"--set expects key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        out[key.strip()] = value.strip()
    return out


# settings of every benchmark that trains through benchsuite.training (declared once)
DEVICE_SETTINGS = {
    "device": Setting("auto", "torch device: auto, cpu, cuda or cuda:N", type=str),
    "amp": Setting(True, "mixed precision on CUDA (CPU is always float32)", type=bool),
    "threads": Setting(None, "torch CPU threads (empty: leave as is)", type=int,
                       domain=[None, Interval(int, 1, None)]),
}


# -- the one strict YAML reader (no tags, no duplicate keys): protocols, --set values, notes --
class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader that refuses a mapping with the same key twice (PyYAML keeps the last)."""


def _no_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    # keys written in this mapping only: a merge (`<<: *base`) may be overridden, as YAML intends
    seen: dict[Any, Any] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=deep)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the base constructor reports it
            continue
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first on line {first.line + 1})", key_node.start_mark)
        seen[key] = key_node.start_mark
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def yaml_error_line(exc: yaml.YAMLError) -> str:
    """A YAML error as one line: where (line, column) and what, without PyYAML's multi-line excerpt."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    what = problem or str(exc)
    if problem and "'\\t'" in problem:
        what = "found a tab character; YAML indents with spaces, never tabs"
    elif problem and "could not determine a constructor" in problem:
        what = f"{problem} (only plain YAML is read: no !!python or other tags)"
    text = where + (f"{context}, {what}" if context and problem else what)
    return " ".join(text.split())


def load_yaml(text: str, where: str) -> Any:
    """Parse YAML text strictly (safe tags only, no duplicate keys); errors are one line naming ``where``."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ProtocolError(f"{where}: not valid YAML ({yaml_error_line(exc)})") from None
    except RecursionError:
        raise ProtocolError(f"{where}: nested too deeply to read") from None
