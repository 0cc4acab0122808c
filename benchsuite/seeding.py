"""Seeds: one integer per run, split into independent streams with ``SeedSequence``.

Stream 0 drives the optimizer, stream 1 the benchmark. Each evaluation gets its own seed
from ``(run seed, benchmark stream, trial id)``, so trial k sees the same table replicate or
data subset however the asynchronous workers happen to interleave.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

OPTIMIZER_STREAM = 0
BENCHMARK_STREAM = 1


def optimizer_rng(seed: int) -> np.random.Generator:
    """The optimizer's Generator for a run seed."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(OPTIMIZER_STREAM,)))


_MASK64 = (1 << 64) - 1


@lru_cache(maxsize=64)
def _benchmark_base(seed: int) -> int:
    return int(np.random.SeedSequence(seed, spawn_key=(BENCHMARK_STREAM,)).generate_state(1, dtype=np.uint64)[0])


def _splitmix64(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def evaluation_seed(seed: int, trial_id: int) -> int:
    """The integer seed (63 bits) passed to ``Benchmark.evaluate`` for one trial of a run.

    The benchmark stream's SeedSequence state mixed with the trial id by SplitMix64: as
    independent as ``SeedSequence.spawn`` for this purpose, and a microsecond instead of
    tens (the run loop's overhead budget is 50 us per trial).
    """
    return _splitmix64(_benchmark_base(seed) ^ _splitmix64(trial_id)) >> 1


def derive_seed(*parts: object) -> int:
    """A stable 31-bit seed from names and indices (protocol, optimizer, repetition).

    Adding an optimizer or a repetition never changes the seeds of the others, and the
    value does not depend on Python's randomised ``hash``.
    """
    text = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "little") & 0x7FFFFFFF
