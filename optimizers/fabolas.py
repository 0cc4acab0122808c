"""Fabolas: fast Bayesian optimisation on large datasets (Klein et al., fabolas.txt Sec. 3).

The dataset-size fraction s is an input of the GP, log-scaled into [0, 1] as the original
implementation does (RoBO ``transform``); the loss GP has the product kernel
``Matern52(x) * phi_f(s)^T Sigma phi_f(s')`` with ``phi_f(s) = (1, (1 - s)^2)`` and the
log-cost GP ``Matern52(x) * phi_c(s)^T Sigma phi_c(s')`` with ``phi_c(s) = (1, s)`` (Sec. 3.1).
Hyperparameters are marginalised with emcee (Sec. 3.4). The next (x, s) maximises the
information gain about the minimiser at s = 1 divided by the predicted cost plus the
optimizer's overhead (Eq. 7, Sec. 3.2); the initial design evaluates k = 10 random
configurations on the subsets 1/64, 1/32, 1/16, 1/8 in turn (Sec. 3.3); the incumbent is
the evaluated configuration with the lowest predicted loss at s = 1 (Sec. 3.2).

Works with a continuous fidelity and with a finite set of values (every proposal is
snapped with ``Fidelity.snap``). Deviations: p_min by Monte Carlo instead of EP (see
``optimizers/acquisition/entropy.py``); candidates + local random search instead of
DIRECT + CMA-ES (RoBO's released Fabolas also uses random sampling); ``Sigma`` is diagonal
with N(0, 1) priors on its log entries, as in RoBO.

Reproducibility: with ``overhead_in_cost`` (the paper's rule, the default) the acquisition
depends on the measured overhead of the previous ask, so two runs with the same seed can
choose different points. The overhead is measured on the run's clock (``Optimizer.timer``):
wall seconds, which grow with the machine's load, or with ``overhead_clock: cpu`` (the
Fabolas protocols) this process's CPU seconds, which vary by a few per cent between runs
but do not grow with other jobs. ``overhead_in_cost=false`` makes the choices a function
of the seed alone (used by the tests).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchsuite.benchmark import Fidelity
from benchsuite.errors import InvalidSettingError
from benchsuite.optimizer import Capabilities
from benchsuite.settings import POSITIVE_INT, Setting

from .common.bo_common import latin_hypercube
from .common.es_bo import CostAwareES, log_fraction_value
from .kernels.continuous import FiniteRankKernel, Kernel, Matern52, ProductKernel


class Fabolas(CostAwareES):
    """Entropy search per unit cost over configurations and training-subset size."""

    name = "fabolas"
    description = "Fabolas: GP over (x, subset size s), entropy search about the s=1 minimum per unit cost"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed"}, fidelity="requires", parallel=True)
    # small settings for quick conformance checks (tests/test_every_plugin.py)
    test_settings = {"burnin": 5, "chain_length": 3, "n_representers": 10, "n_pmin_samples": 32,
                     "n_innovations": 3, "n_pool": 64, "n_candidates": 32, "n_spray": 8, "local_rounds": 1,
                     "n_local": 8, "n_init": 3, "overhead_in_cost": False}
    settings_spec = {
        "n_init": Setting(10, "initial design size k (fabolas.txt Sec. 3.3: k = 10)", domain=POSITIVE_INT),
        "init_subsets": Setting((1 / 64, 1 / 32, 1 / 16, 1 / 8),
                                "subset fractions the initial design cycles through (fabolas.txt Sec. 3.3, SVM)",
                                type=tuple),
        **CostAwareES.common_settings,
    }

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any], fidelity: Fidelity | None) -> None:
        """Every init_subsets fraction the user sets lies on the fidelity axis: none is clamped silently.

        The default (fabolas.txt Sec. 3.3's SVM subsets 1/64..1/8) is still snapped to an axis that
        starts above 1/64 (e.g. epochs 1..27): it is the paper's value, not a user's request.
        """
        default = tuple(cls.settings_spec["init_subsets"].default)
        axis = fidelity is not None and tuple(settings["init_subsets"]) != default
        lo, hi = (fidelity.low / fidelity.full, fidelity.high / fidelity.full) if axis else (0.0, math.inf)
        for f in settings["init_subsets"]:
            ok = isinstance(f, (int, float)) and not isinstance(f, bool) and math.isfinite(f) and f > 0
            if not ok or not lo * (1 - 1e-9) <= f <= hi * (1 + 1e-9):
                where = "a positive number" if not axis else \
                    f"a fraction in [{lo:g}, {hi:g}] of the full value of benchmark fidelity {fidelity.name!r}"
                raise InvalidSettingError(f"optimizer {cls.name!r}: setting init_subsets has {repr(f)[:40]}; "
                                          f"each must be {where}")

    def make_kernels(self, d: int) -> tuple[Kernel, Kernel]:
        mat = range(d)
        return (ProductKernel(Matern52(mat), FiniteRankKernel(d, "loss")),
                ProductKernel(Matern52(mat), FiniteRankKernel(d, "cost")))

    def _to_coord(self, v: np.ndarray) -> np.ndarray:
        # always log-scaled into [0, 1], whatever scale the benchmark declares (RoBO's ``transform``);
        # an axis that starts at 0 cannot be, and keeps its own scale
        if self.fidelity.low <= 0:
            return np.asarray(self.fidelity.to_unit(np.asarray(v, dtype=float)), dtype=float)
        lo, hi = math.log(self.fidelity.low), math.log(self.fidelity.high)
        return (np.log(np.asarray(v, dtype=float)) - lo) / (hi - lo)

    def _from_coord(self, u: float) -> float:
        if self.fidelity.low <= 0:
            return float(self.fidelity.from_unit(u))
        lo, hi = math.log(self.fidelity.low), math.log(self.fidelity.high)
        return float(np.clip(math.exp(lo + float(np.clip(u, 0.0, 1.0)) * (hi - lo)), self.fidelity.low,
                             self.fidelity.high))

    @property
    def target_coord(self) -> float:  # type: ignore[override]
        return float(self._to_coord(self.fidelity.full))

    def fid_coord(self, values: Sequence[float | None]) -> np.ndarray:
        v = np.array([self.fidelity.full if s is None else s for s in values], dtype=float)
        return self._to_coord(v).reshape(-1)

    def fid_value(self, coord: float) -> float:
        return self.fidelity.snap(self._from_coord(coord))

    def snap_coord(self, coords: np.ndarray) -> np.ndarray:
        if self.fidelity.values is None:
            return np.clip(coords, 0.0, 1.0)
        allowed = self._to_coord(np.array(self.fidelity.values))
        return allowed[np.argmin(np.abs(np.asarray(coords)[:, None] - allowed[None, :]), axis=1)]

    def initial_design(self) -> list[tuple[np.ndarray, float]]:
        k = int(self.settings["n_init"])
        subsets = tuple(float(f) for f in self.settings["init_subsets"]) or (1.0,)
        xs = self.x_snap(latin_hypercube(self.rng, k, self.d)) if k else np.empty((0, self.d))
        return [(xs[i], log_fraction_value(self.fidelity, subsets[i % len(subsets)])) for i in range(k)]
