"""Seeds: one integer per run, split into independent streams with ``SeedSequence``.

Stream 0 drives the optimizer, stream 1 the benchmark. Each evaluation gets its own seed
from ``(run seed, benchmark stream, trial id)``, so trial k sees the same table replicate or
data subset however the asynchronous workers happen to interleave.
"""
from __future__ import annotations

import hashlib

import numpy as np

OPTIMIZER_STREAM = 0
BENCHMARK_STREAM = 1


def optimizer_rng(seed: int) -> np.random.Generator:
    """The optimizer's Generator for a run seed."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(OPTIMIZER_STREAM,)))


def evaluation_seed(seed: int, trial_id: int) -> int:
    """The integer seed passed to ``Benchmark.evaluate`` for one trial of a run."""
    ss = np.random.SeedSequence(seed, spawn_key=(BENCHMARK_STREAM, trial_id))
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def derive_seed(*parts: object) -> int:
    """A stable 31-bit seed from names and indices (protocol, optimizer, repetition).

    Adding an optimizer or a repetition never changes the seeds of the others, and the
    value does not depend on Python's randomised ``hash``.
    """
    text = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "little") & 0x7FFFFFFF
