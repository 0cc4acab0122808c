"""What a run is doing right now, for a progress display: which trial is being evaluated, or which
incumbent's test loss is being computed, and how many networks were trained for each.

The run loop marks what it does (:func:`doing`: an evaluation of trial 3, the test loss of the
incumbent after trial 3); a live benchmark reports each network it trains (:func:`trained`); a
listener (the command line's progress display) hears both and can label the training harness's
per-epoch lines with the trial and its configuration, and count the trainings that only compute
test losses. With no listener (the Python API, the workflow's tests) nothing is built or called:
the labels are made lazily, so the run loop pays one list check per trial.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

#: what the run loop can be doing: evaluating a trial, or computing the test loss of a new incumbent
KINDS = ("trial", "test")


@dataclass(frozen=True)
class Activity:
    """One thing a run does: ``kind`` (:data:`KINDS`), the trial it belongs to and its configuration in
    short text (for ``test``: the incumbent after that trial)."""

    kind: str
    trial: int
    config: str


class Listener(Protocol):
    """What a progress display implements to follow a run."""

    def begin(self, activity: Activity) -> None: ...

    def end(self, activity: Activity) -> None: ...

    def trained(self, units: int, unit: str) -> None: ...

    def note(self, text: str) -> None: ...


_listeners: list[Listener] = []
_current: list[Activity] = []


def listen(listener: Listener) -> Callable[[], None]:
    """Register ``listener`` until the returned function is called."""
    _listeners.append(listener)

    def stop() -> None:
        if listener in _listeners:
            _listeners.remove(listener)
    return stop


@contextlib.contextmanager
def doing(kind: str, trial: int, config: Callable[[], str]) -> Iterator[None]:
    """Mark the block as ``kind`` of ``trial``; ``config()`` (the configuration's short text) is called only when
    someone listens."""
    if not _listeners:
        yield
        return
    act = Activity(kind, int(trial), config())
    _current.append(act)
    for listener in list(_listeners):
        listener.begin(act)
    try:
        yield
    finally:
        _current.pop()
        for listener in list(_listeners):
            listener.end(act)


def current() -> Activity | None:
    """The innermost activity being done, or None."""
    return _current[-1] if _current else None


def trained(units: int, unit: str) -> None:
    """A benchmark trained one network for ``units`` ``unit`` (epochs, iterations) within the current activity."""
    for listener in list(_listeners):
        listener.trained(int(units), unit)


def note(text: str) -> None:
    """A one-line note on the run (what its settings cannot do within its budget): shown by the progress display
    when one listens (a bar on a terminal stays whole), else printed on stderr."""
    if not _listeners:
        import sys

        print(text, file=sys.stderr, flush=True)
        return
    for listener in list(_listeners):
        listener.note(text)


def summary(config_text: str, limit: int = 80) -> str:
    """A configuration's JSON text made short enough for one progress line: an object as ``name=value`` pairs, or
    its values alone when the names make it too long (a NAS-Bench-201 cell's six operations), else the middle cut
    (both ends kept)."""
    import json

    text = config_text
    try:
        value = json.loads(config_text)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        def plain(v: object) -> str:
            return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))
        text = ", ".join(f"{k}={plain(v)}" for k, v in value.items())
        if len(text) > limit:
            text = ",".join(plain(v) for v in value.values())
    if len(text) <= limit:
        return text
    keep = (limit - 3) // 2
    return text[:keep] + "..." + text[-keep:]
