"""Horseshoe prior (Carvalho, Polson and Scott, 2010), through its closed-form density bound.

The horseshoe density has no closed form. Carvalho et al. (2010, Theorem 1) bound it,
for scale ``tau``, by

    K/2 log(1 + 4 tau^2 / x^2) < tau p(x) < K log(1 + 2 tau^2 / x^2),  K = (2 pi^3)^(-1/2),

and the upper bound is the usual proxy for the density (combo.txt Supp. 2.2.3, eq. 11).
COMBO puts it on the ARD diffusion weights ``beta`` (tau = 5) and on the noise variance.
Spearmint (and RoBO, whose priors fabolas.txt 3.4 adopts) uses ``log(1 + 3 tau^2 / x^2)``,
between the two bounds: ``factor=3``.
"""
from __future__ import annotations

import math

import numpy as np

_LOG_K = -0.5 * math.log(2.0 * math.pi**3)


def horseshoe_log_prior(x: float | np.ndarray, scale: float, factor: float = 2.0) -> float | np.ndarray:
    """Log of the horseshoe density's bound at ``x`` (any sign) for global scale ``scale``.

    ``log(K / scale) + log(log(1 + factor scale^2 / x^2))``; ``factor=2`` is Carvalho et
    al.'s upper bound (COMBO), ``factor=3`` Spearmint's proxy. ``+inf`` at ``x = 0`` (the
    density's pole). Vectorised over ``x``; returns a float for a scalar ``x``.
    """
    if not scale > 0:
        raise ValueError(f"horseshoe scale must be positive, got {scale!r}")
    xa = np.abs(np.asarray(x, dtype=float))
    with np.errstate(divide="ignore"):
        ratio = factor * scale**2 / xa**2
        out = _LOG_K - math.log(scale) + np.log(np.log1p(ratio))
    return float(out) if out.ndim == 0 else out
