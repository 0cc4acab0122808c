"""Declared, typed settings for plugins and benchmarks.

A plugin lists its settings once, with default, type and the source of the default (the
paper section or the original implementation); :func:`resolve_settings` rejects unknown
names and coerces strings given on the command line (``--set n_init=10``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


from .errors import InvalidSettingError


@dataclass(frozen=True)
class Setting:
    """One setting: its default, a short description and where the default comes from."""

    default: Any
    help: str = ""
    type: type | None = None  # inferred from the default when None
    choices: tuple | None = None

    def coerce(self, owner: str, name: str, value: Any) -> Any:
        """Convert ``value`` (maybe a string from the CLI) to this setting's type."""
        typ = self.type or (type(self.default) if self.default is not None else None)
        if isinstance(value, str) and typ is not str:
            from .errors import ProtocolError
            from .protocol import load_yaml  # the one strict YAML reader (no tags, no duplicate keys)

            try:
                value = load_yaml(value, f"{owner}: setting {name}")
            except ProtocolError as exc:
                why = str(exc).split(": not valid YAML ", 1)[-1].strip("()")
                raise InvalidSettingError(f"{owner}: setting {name}={value!r} is not a valid value ({why})") from None
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
                raise InvalidSettingError(f"{owner}: setting {name}={value!r}: {exc}") from None
        if self.choices is not None and value not in self.choices:
            raise InvalidSettingError(f"{owner}: setting {name}={value!r} must be one of {list(self.choices)}")
        return value


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
    "threads": Setting(None, "torch CPU threads (empty: leave as is)", type=int),
}
