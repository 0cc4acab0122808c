"""Univariate slice sampling with the doubling procedure and shrinkage (Neal, 2003).

Generic and model-free: give a log density (unnormalised, ``-inf`` outside its support), a
starting point of positive density and a numpy Generator. Multivariate targets are
sampled one coordinate at a time by the caller (COMBO's GP hyperparameters, combo.txt
Supp. 2.1 and 2.3; Spearmint-style samplers).

The three pieces follow Neal (2003): Fig. 4 (find an interval around ``x0`` by doubling,
at most ``max_doublings`` times), Fig. 5 (draw uniformly from it, shrinking it towards
``x0`` on rejection) and Fig. 6 (the acceptance test that keeps doubling reversible).
Density values are cached per point, since the acceptance test revisits interval ends.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

LogDensity = Callable[[float], float]


class _Cached:
    """A log density that remembers the points it has been evaluated at."""

    def __init__(self, logp: LogDensity):
        self.logp, self.memo, self.calls = logp, {}, 0

    def __call__(self, x: float) -> float:
        x = float(x)
        v = self.memo.get(x)
        if v is None:
            self.calls += 1
            v = float(self.logp(x))
            if math.isnan(v):
                v = -math.inf
            self.memo[x] = v
        return v


def _accept(f: _Cached, x0: float, x1: float, log_y: float, width: float, left: float, right: float) -> bool:
    """Neal (2003) Fig. 6: could the doubling from ``x1`` have produced the same interval?"""
    differ = False
    while right - left > 1.1 * width:
        mid = 0.5 * (left + right)
        if (x0 < mid) != (x1 < mid):
            differ = True
        if x1 < mid:
            right = mid
        else:
            left = mid
        if differ and log_y >= f(left) and log_y >= f(right):
            return False
    return True


def slice_sample_1d(logp: LogDensity, x0: float, rng: np.random.Generator, width: float = 1.0,
                    max_doublings: int = 10, logp_x0: float | None = None,
                    max_shrinks: int = 200) -> tuple[float, float]:
    """One slice-sampling update of a scalar: returns ``(x1, logp(x1))``.

    ``width`` is the initial interval width ``w`` and ``max_doublings`` the limit ``p`` of
    Neal (2003) Fig. 4; pass ``logp_x0`` when the caller already knows ``logp(x0)``. If the
    shrinkage loop has not found a point after ``max_shrinks`` draws (a density that is
    numerically a point mass) the chain stays at ``x0``.
    """
    if not width > 0:
        raise ValueError(f"slice width must be positive, got {width!r}")
    f = _Cached(logp)
    x0 = float(x0)
    if logp_x0 is not None:
        f.memo[x0] = float(logp_x0)
    lp0 = f(x0)
    if not math.isfinite(lp0):
        raise ValueError(f"slice sampling must start where the density is positive; logp({x0!r}) = {lp0}")
    log_y = lp0 - rng.standard_exponential()  # log of a uniform height under the density at x0

    # Fig. 4: doubling
    left = x0 - width * rng.random()
    right = left + width
    k = max_doublings
    while k > 0 and (log_y < f(left) or log_y < f(right)):
        if rng.random() < 0.5:
            left -= right - left
        else:
            right += right - left
        k -= 1

    # Fig. 5: shrinkage, with the Fig. 6 acceptance test
    lo, hi = left, right
    for _ in range(max_shrinks):
        x1 = lo + rng.random() * (hi - lo)
        lp1 = f(x1)
        if log_y < lp1 and _accept(f, x0, x1, log_y, width, left, right):
            return x1, lp1
        if x1 < x0:
            lo = x1
        else:
            hi = x1
        if hi - lo <= 1e-12 * max(1.0, abs(x0)):
            break
    return x0, lp0


def slice_sample_chain(logp: LogDensity, x0: float, rng: np.random.Generator, n_samples: int,
                       n_burn: int = 0, width: float = 1.0, max_doublings: int = 10) -> np.ndarray:
    """A chain of ``n_samples`` univariate slice samples after ``n_burn`` discarded ones."""
    x, lp = float(x0), None
    out = np.empty(int(n_samples))
    for i in range(int(n_burn) + int(n_samples)):
        x, lp = slice_sample_1d(logp, x, rng, width=width, max_doublings=max_doublings, logp_x0=lp)
        if i >= n_burn:
            out[i - n_burn] = x
    return out
