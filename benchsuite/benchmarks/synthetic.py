"""Synthetic benchmarks with known optima.

The HPOlib continuous set used in dngo.txt Table 1 (Branin, Hartmann3, Hartmann6,
six-hump camelback), COMBO's discretized Branin (combo.txt Supp. 4.2.1: each dimension of
Branin's domain cut into 51 equally spaced points, so the centre is on the grid) and a
multi-fidelity Branin with a cost that varies, as a cheap testbed for fidelity-aware
optimizers and asynchronous workers.

Synthetic evaluations cost a constant ``cost_s`` simulated seconds (setting, default 1)
so that clocks and budgets in seconds behave as for real benchmarks.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..benchmark import Benchmark, Fidelity, Result
from ..settings import NONNEGATIVE, Setting
from ..space import Float, Ordinal, Space

_COST = {"cost_s": Setting(1.0, "simulated seconds each evaluation costs", domain=NONNEGATIVE)}


def branin(x1: np.ndarray | float, x2: np.ndarray | float, b: float = 5.1 / (4 * math.pi**2),
           c: float = 5 / math.pi, t: float = 1 / (8 * math.pi)) -> np.ndarray | float:
    """Branin-Hoo function; minimum 0.397887 at (-pi, 12.275), (pi, 2.275), (9.42478, 2.475)."""
    return (x2 - b * x1**2 + c * x1 - 6.0) ** 2 + 10.0 * (1 - t) * np.cos(x1) + 10.0


BRANIN_MIN = 0.39788735772973816

# Hartmann constants (Dixon and Szegő 1978, as in HPOlib)
_H3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_H3_P = 1e-4 * np.array([[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]])
_H6_A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
                  [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
_H6_P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                         [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
_H_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann(x: np.ndarray, A: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Hartmann function for points ``x`` of shape (..., d)."""
    x = np.asarray(x, dtype=float)
    inner = ((x[..., None, :] - P) ** 2 * A).sum(-1)
    return -(_H_ALPHA * np.exp(-inner)).sum(-1)


class _Synthetic(Benchmark):
    kind = "synthetic"
    settings_spec = _COST

    def evaluate(self, config: dict[str, Any], fidelity: float | None = None, seed: int = 0) -> Result:
        config, _ = self.check(config, fidelity)
        return Result(loss=float(self.f(config)), cost_s=self.settings["cost_s"])

    def test_loss(self, config: dict[str, Any]) -> float:
        return float(self.f(config))

    def f(self, config: dict[str, Any]) -> float:  # pragma: no cover - overridden
        raise NotImplementedError


class Branin(_Synthetic):
    """Branin on [-5, 10] x [0, 15]."""

    name = "branin"
    description = "Branin-Hoo, 2 continuous variables, minimum 0.397887 (HPOlib, dngo.txt Table 1)"
    optimum = BRANIN_MIN

    def setup(self) -> None:
        self.space = Space([Float("x1", -5, 10), Float("x2", 0, 15)])

    def f(self, config: dict[str, Any]) -> float:
        return branin(config["x1"], config["x2"])


class Hartmann3(_Synthetic):
    """Hartmann 3-D on [0, 1]^3."""

    name = "hartmann3"
    description = "Hartmann 3-D, minimum -3.86278 (HPOlib, dngo.txt Table 1)"
    optimum = -3.8627797869493365

    def setup(self) -> None:
        self.space = Space([Float(f"x{i}", 0, 1) for i in range(3)])

    def f(self, config: dict[str, Any]) -> float:
        return hartmann(np.array([config[f"x{i}"] for i in range(3)]), _H3_A, _H3_P)


class Hartmann6(_Synthetic):
    """Hartmann 6-D on [0, 1]^6."""

    name = "hartmann6"
    description = "Hartmann 6-D, minimum -3.32237 (HPOlib, dngo.txt Table 1)"
    optimum = -3.3223680114155147

    def setup(self) -> None:
        self.space = Space([Float(f"x{i}", 0, 1) for i in range(6)])

    def f(self, config: dict[str, Any]) -> float:
        return hartmann(np.array([config[f"x{i}"] for i in range(6)]), _H6_A, _H6_P)


class Camelback(_Synthetic):
    """Six-hump camelback on [-3, 3] x [-2, 2]."""

    name = "camelback"
    description = "six-hump camelback, minimum -1.031628 (HPOlib, dngo.txt Table 1)"
    optimum = -1.0316284534898774

    def setup(self) -> None:
        self.space = Space([Float("x1", -3, 3), Float("x2", -2, 2)])

    def f(self, config: dict[str, Any]) -> float:
        x, y = config["x1"], config["x2"]
        return (4 - 2.1 * x**2 + x**4 / 3) * x**2 + x * y + (-4 + 4 * y**2) * y**2


class DiscretizedBranin(_Synthetic):
    """Branin on a 51 x 51 grid of ordinal levels (combo.txt Supp. 4.2.1)."""

    name = "branin_discrete"
    description = "Branin on a 51x51 grid, 2 ordinal variables (combo.txt Sec. 4.2, Supp. 4.2.1)"

    def setup(self) -> None:
        # 51 points including both ends: steps of 0.3, and the domain centre (2.5, 7.5) is a level
        self.space = Space([Ordinal("x1", np.linspace(-5, 10, 51).round(12).tolist()),
                            Ordinal("x2", np.linspace(0, 15, 51).round(12).tolist())])
        g1, g2 = np.meshgrid(self.space["x1"].levels, self.space["x2"].levels, indexing="ij")
        self.optimum = float(branin(g1, g2).min())

    def f(self, config: dict[str, Any]) -> float:
        return branin(config["x1"], config["x2"])


class MultiFidelityBranin(Benchmark):
    """Branin with a fidelity s in [1/128, 1] whose shape and cost change with s.

    The low-fidelity distortion follows the multi-fidelity Branin of Kandasamy et al.
    (BOCA, 2017): b, c and t move linearly in (1 - s). The cost grows linearly with s
    and with x1, ``cost = cost_s * (0.05 + 0.95 s) * (1 + (x1 + 5) / 15)``, so that
    asynchronous workers finish out of order. A testbed, not a paper benchmark.
    """

    name = "branin_mf"
    kind = "synthetic"
    description = "multi-fidelity Branin: fidelity s in [1/128, 1], cost varies with s and x1"
    settings_spec = {"cost_s": Setting(100.0, "simulated seconds of a full-fidelity evaluation at x1 = -5",
                                       domain=NONNEGATIVE)}
    optimum = BRANIN_MIN

    def setup(self) -> None:
        self.space = Space([Float("x1", -5, 10), Float("x2", 0, 15)])
        self.fidelity = Fidelity("s", 1 / 128, 1.0, log=True, full=1.0, unit="fraction of the data")

    def evaluate(self, config: dict[str, Any], fidelity: float | None = None, seed: int = 0) -> Result:
        config, s = self.check(config, fidelity)
        s = 1.0 if s is None else s
        d = 1.0 - s
        loss = branin(config["x1"], config["x2"], b=5.1 / (4 * math.pi**2) - 0.01 * d,
                      c=5 / math.pi - 0.1 * d, t=1 / (8 * math.pi) + 0.05 * d)
        cost = self.settings["cost_s"] * (0.05 + 0.95 * s) * (1 + (config["x1"] + 5) / 15)
        return Result(loss=float(loss), cost_s=float(cost), info={})

    def test_loss(self, config: dict[str, Any]) -> float:
        return float(branin(config["x1"], config["x2"]))
