"""The command line's argparse types: each parses one option's text or refuses it in one line that says what was
expected (the CLI's parser turns the refusal into its one-line usage error). Every subcommand takes its numbers
through these two, so that the same mistake gets the same answer whichever command it is made in."""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def integer(low: int, high: int | None = None, what: str = "") -> Callable[[str], int]:
    """An integer in ``low .. high`` (no upper end when ``high`` is None); the refusal names ``what`` when given
    ("a seed must be in 0..N, got -1"), and otherwise says what was expected."""
    # the range as the user would write it: a budget's lower end is "positive", not a 64-bit minimum
    if high is None:
        span = f"an integer >= {low}"
    else:
        span = f"a positive integer of at most {high}" if low == 1 else f"in {low}..{high}"

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{what} must be {span}, got {value}" if what
                                             else f"expected {span}, got {value}")
        return value
    return parse


def number(ok: Callable[[float], bool] = lambda value: True, expected: str = "a finite number",
           noun: str = "a number") -> Callable[[str], float]:
    """A finite number for which ``ok`` holds (nan and inf would make a run stop at once or never), refused as
    "expected EXPECTED, got ..." otherwise, and as "expected NOUN, got ..." where the text is no number."""
    def parse(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None
        if not (math.isfinite(value) and ok(value)):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text.strip()!r}")
        return value
    return parse
