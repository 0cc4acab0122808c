"""Exception types a user can cause; the CLI turns each into a one-line message.

One class per kind of mistake, all deriving from :class:`BenchsuiteError`, so callers can
catch the whole family and tests can assert the precise kind.
"""
from __future__ import annotations


def one_line(message: object) -> str:
    """``message`` as one line: every run of whitespace (newlines of YAML or plugin errors) as one space."""
    return " ".join(str(message).split())


def shorten(text: object, limit: int = 120) -> str:
    """``text`` as one line of at most about ``limit`` characters: a long middle is cut and its length said."""
    line = one_line(text)
    if len(line) <= limit:
        return line
    head, tail = limit * 2 // 3, limit // 3
    return f"{line[:head]}...[{len(line) - head - tail} characters cut]...{line[-tail:]}"


#: the longest run of characters without a space that a one-line message shows whole: longer ones are values
#: (a pasted configuration, a 100 kB setting), not words, and keep only their two ends
LONG_WORD = 160


def shorten_words(text: object, limit: int = LONG_WORD) -> str:
    """``text`` as one line in which every run of non-space characters longer than ``limit`` is cut in its middle
    (as :func:`shorten` cuts), so that a message keeps its own words before and after a long value."""
    words = one_line(text).split(" ")
    return " ".join(shorten(w, limit) if len(w) > limit else w for w in words)


def show(value: object, limit: int = 80) -> str:
    """``repr(value)`` for a one-line message, shortened (a 100 kB input is not echoed whole)."""
    return shorten(repr(value), limit)


class BenchsuiteError(Exception):
    """Base of every error a user can cause (bad name, bad value, missing data)."""


class UnknownNameError(BenchsuiteError, KeyError):
    """A benchmark, optimizer, protocol or setting name that is not registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class InvalidConfigError(BenchsuiteError, ValueError):
    """A configuration or fidelity value outside its variable's domain."""


class InvalidSettingError(BenchsuiteError, ValueError):
    """A plugin or benchmark setting that is unknown or has a bad value."""


class BudgetError(BenchsuiteError, ValueError):
    """A budget that is missing, zero or negative."""


class UnsupportedError(BenchsuiteError):
    """An optimizer paired with a benchmark it does not support."""


class DataError(BenchsuiteError):
    """A data file that is missing, unreadable or has the wrong checksum."""


class ProtocolError(BenchsuiteError, ValueError):
    """An invalid experiment protocol file."""


class OutputError(BenchsuiteError):
    """A result path that cannot be written."""


class MissingExtraError(BenchsuiteError, ImportError):
    """An optional dependency that is not installed; the message names the pip extra that installs it."""


class BackendError(BenchsuiteError):
    """An execution backend that cannot start or lost every worker (a dask scheduler that does not answer,
    worker processes that die as they start)."""


class PluginError(BenchsuiteError):
    """A plugin that broke its contract (for example, asked for an invalid configuration)."""


class TrialFailure(Exception):
    """Raised by a benchmark when one evaluation fails (diverged training, out of memory).

    The runner records a failed trial and goes on; it is not a user error.
    """
