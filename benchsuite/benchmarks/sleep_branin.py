"""``sleep_branin``: Branin that sleeps a set number of seconds per evaluation (tests and demos of the backends).

Each evaluation sleeps ``sleep_s`` seconds and reports that cost, so with the simulated backend
the clock advances as with the real ones and a run of 16 evaluations of 0.5 s on 4 local workers
takes about 2 s of wall-clock time instead of 8 (``benchsuite run -b sleep_branin --backend
local --workers 4``). The test loss is Branin's value without sleeping.

``die_once`` is a fault hook for the real backends' tests: the path of a token file; the first
evaluation that creates it ends its own worker process halfway through its sleep (``die_how``:
``kill`` sends itself SIGKILL, as the out-of-memory killer would; ``exit`` calls ``os._exit(3)``).
Outside a worker process (the simulated backend evaluates in the driver) it raises instead, so a
run is never killed by its own benchmark.
"""
from __future__ import annotations

import os
import signal
import time
from typing import Any

from ..benchmark import Result
from ..errors import TrialFailure
from ..settings import NONNEGATIVE, Setting
from .synthetic import Branin

WORKER_ENV = "BENCHSUITE_WORKER"  # = benchsuite.backends.WORKER_ENV (backends is a layer above the plugins)


class SleepBranin(Branin):
    """Branin whose evaluations take ``sleep_s`` seconds of wall-clock time."""

    name = "sleep_branin"
    description = "Branin that sleeps sleep_s seconds per evaluation (tests and demos of the local and dask backends)"
    settings_spec = {
        "sleep_s": Setting(0.5, "wall-clock seconds each evaluation sleeps (and its reported cost)", type=float,
                           domain=NONNEGATIVE),
        "die_once": Setting("", "fault hook: path of a token file; the first evaluation to create it ends its "
                                "worker process (empty: never)", type=str),
        "die_how": Setting("kill", "how that evaluation ends its worker: kill (SIGKILL) or exit (os._exit(3))",
                           choices=("kill", "exit")),
    }
    test_settings = {"sleep_s": 0.01}

    def evaluate(self, config: dict[str, Any], fidelity: float | None = None, seed: int = 0) -> Result:
        config, _ = self.check(config, fidelity)
        sleep_s = float(self.settings["sleep_s"])
        if self.settings["die_once"] and self._claim(self.settings["die_once"]):
            time.sleep(sleep_s / 2)
            if os.environ.get(WORKER_ENV) is None:
                raise TrialFailure("die_once: this evaluation would end its worker process, but it runs in the "
                                   "driver (simulated backend)")
            if self.settings["die_how"] == "exit":
                os._exit(3)
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(sleep_s)
        return Result(loss=float(self.f(config)), cost_s=sleep_s)

    @staticmethod
    def _claim(path: str) -> bool:
        """Whether this evaluation is the one that created the token file (atomic across processes)."""
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return False
        os.close(fd)
        return True
