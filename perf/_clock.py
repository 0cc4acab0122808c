"""What every ``perf/`` script prints when it ends: CPU seconds, wall seconds and the load average.

Imported first by each script (``import _clock``; ``perf/`` is on ``sys.path`` when a script runs).
Other engineers share these machines: compare ratios measured in one run, and read the load
average beside every figure. CPU time counts this process and the children it waited for.
"""
from __future__ import annotations

import atexit
import os
import resource
import sys
import time

_WALL0 = time.perf_counter()


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and its waited-for children so far."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def repeat_seconds(fn, repeats: int) -> list[float]:  # noqa: ANN001 - any callable
    """Wall seconds of each of ``repeats`` calls of ``fn`` (scripts take the min or the median)."""
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def footer() -> str:
    """One line: the script's CPU seconds, wall seconds and the 1/5/15-minute load average now."""
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"[perf] {os.path.basename(sys.argv[0])}: {cpu_seconds():.2f} CPU s, "
            f"{time.perf_counter() - _WALL0:.2f} wall s, load average {load} on {os.cpu_count()} cores")


atexit.register(lambda: print(footer(), file=sys.stderr, flush=True))
