"""Multi-task Bayesian optimisation (Swersky et al. 2013) with one auxiliary task (fabolas.txt 2.3, 4.1).

Two tasks: the auxiliary task is training on a quarter of the data (s = 1/4, the variant
that worked best in fabolas.txt Sec. 4.1 / Figure 2 middle), the main task on all of it.
The GP kernel is ``k_T(t, t') * Matern52(x, x')`` (Eq. 4) with the task covariance given by
its Cholesky factor, sampled by MCMC with the other hyperparameters; a second GP of the
same form models the log cost. The acquisition is the information gain about the minimiser
on the main task per unit cost (Eq. 5, the Hennig-Schuler form fabolas.txt uses for
consistency), plus the optimizer's overhead as for Fabolas. The initial design evaluates
random configurations on the auxiliary task only, as RoBO's ``mtbo`` does.

The auxiliary and main fidelities are snapped to the benchmark's allowed values. As for
Fabolas, ``overhead_in_cost=false`` makes the choices independent of measured timings.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from benchsuite.optimizer import Capabilities
from benchsuite.settings import POSITIVE_INT, Interval, Setting

from .common.bo_common import latin_hypercube
from .common.es_bo import CostAwareES, log_fraction_value
from .kernels.continuous import Kernel, Matern52, ProductKernel, TaskKernel


class MTBO(CostAwareES):
    """Entropy search per unit cost over two tasks: a data subset and the full data."""

    name = "mtbo"
    description = "multi-task BO: auxiliary task s=1/4 + main task s=1, entropy search per unit cost"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed"}, fidelity="requires", parallel=True)
    # small settings for quick conformance checks (tests/test_every_plugin.py)
    test_settings = {"burnin": 5, "chain_length": 3, "n_representers": 10, "n_pmin_samples": 32,
                     "n_innovations": 3, "n_pool": 64, "n_candidates": 32, "n_spray": 8, "local_rounds": 1,
                     "n_local": 8, "n_init": 3, "overhead_in_cost": False}
    settings_spec = {
        "aux_fraction": Setting(0.25, "auxiliary task's subset fraction (fabolas.txt Sec. 4.1: 1/4 worked best)",
                                domain=Interval(float, 0, 1, closed="neither")),
        "n_init": Setting(10, "initial random configurations on the auxiliary task (our choice, Fabolas' k; "
                              "RoBO mtbo default is 2)", domain=POSITIVE_INT),
        **CostAwareES.common_settings,
        "n_walkers": Setting(20, "emcee walkers = hyperparameter samples (RoBO fmin/mtbo.py n_hypers=20); raised to "
                                 "emcee's minimum of 2 x the number of hyperparameters", domain=POSITIVE_INT),
        "chain_length": Setting(200, "MCMC steps per later fit (RoBO fmin/mtbo.py chain_length=200)",
                                domain=POSITIVE_INT),
    }

    target_coord = 1.0

    def setup(self) -> None:
        super().setup()
        self.aux = log_fraction_value(self.fidelity, float(self.settings["aux_fraction"]))
        self.main = float(self.fidelity.full)

    def make_kernels(self, d: int) -> tuple[Kernel, Kernel]:
        # the task covariance carries the scale, so the Matern factor has no amplitude of its own
        mat = range(d)
        return (ProductKernel(Matern52(mat, amplitude=False), TaskKernel(d, 2)),
                ProductKernel(Matern52(mat, amplitude=False), TaskKernel(d, 2)))

    def fid_coord(self, values: Sequence[float | None]) -> np.ndarray:
        main = float(self.fidelity.full)
        return np.array([1.0 if s is None or math.isclose(s, main, rel_tol=1e-9) else 0.0 for s in values])

    def fid_value(self, coord: float) -> float:
        return self.main if coord >= 0.5 else self.aux

    def snap_coord(self, coords: np.ndarray) -> np.ndarray:
        return (np.asarray(coords) >= 0.5).astype(float)

    def initial_design(self) -> list[tuple[np.ndarray, float]]:
        k = int(self.settings["n_init"])
        aux = log_fraction_value(self.fidelity, float(self.settings["aux_fraction"]))
        xs = self.x_snap(latin_hypercube(self.rng, k, self.d)) if k else np.empty((0, self.d))
        return [(xs[i], aux) for i in range(k)]
