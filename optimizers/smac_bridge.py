"""Bridge to SMAC3 (random-forest SMBO) through its ask/tell interface; an optional extra.

SMAC is the SMAC baseline of combo.txt Sec. 4 and the "SMAC-style random forest" of
dngo.txt. Install with ``pip install 'benchsuite[smac]'`` (SMAC3 needs ``pyrfr``, which
builds with SWIG; ``pip install swig`` first if the build fails).
"""
from __future__ import annotations

import logging
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchsuite.benchmark import Result
from benchsuite.convert import from_configspace, require, to_configspace, to_configspace_config
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import POSITIVE_INT, UNIT, Setting


def _fail_target(config: Any, seed: int = 0) -> float:  # pragma: no cover - never called in ask/tell
    raise RuntimeError("the SMAC bridge uses ask/tell; SMAC must not call the target function")


class SMAC(Optimizer):
    """SMAC3's hyperparameter-optimisation facade (random forest + log EI + local search).

    Construction converts our space to a ConfigSpace (:func:`benchsuite.convert.to_configspace`)
    and builds SMAC with ``n_init`` random initial configurations (combo.txt's experiments
    start every method from 20 random points; SMAC's own default is a Sobol design),
    deterministic objectives (each configuration evaluated once) and SMAC's default model,
    acquisition function and interleaved random configurations (``random_probability`` changes their
    share: the COMBO authors' baselines ran SMAC3 0.x, whose SMAC facade drew every second
    configuration at random, ``rand_prob`` 0.5; today's facade draws 0.2). ``ask`` and ``tell`` map
    to ``SMAC.ask``/``SMAC.tell``; a failed trial is told as crashed with the worst loss
    seen so far as its cost (SMAC's infinite crash cost breaks its log-cost model). SMAC's seed is drawn
    from the run's optimizer stream, so a run seed fixes SMAC's suggestions.
    """

    needs = ("smac", "ConfigSpace")  # the [smac] extra
    name = "smac"
    initial_points_setting = "n_init"  # a budget of at most this many is random search
    description = "SMAC3 random-forest SMBO via ask/tell (optional extra: pip install 'benchsuite[smac]')"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed"}, fidelity="ignores", parallel=True,
                            initial_design=True)
    test_settings = {"n_init": 4}  # small: quick conformance checks
    settings_spec = {
        "n_init": Setting(20, "random initial configurations (combo.txt Sec. 4: 20)", domain=POSITIVE_INT),
        "facade": Setting("hpo", "SMAC facade: hpo (random forest) or bb (Gaussian process)", choices=("hpo", "bb")),
        "random_probability": Setting(None, "share of SMAC's suggestions drawn at random instead of from the "
                                      "acquisition; empty: the facade's default (hpo 0.2, bb 0.084); SMAC3 0.x, "
                                      "the version of the COMBO authors' baselines, interleaved 0.5 (its rand_prob)",
                                      type=float, domain=[None, UNIT]),
    }

    def setup(self) -> None:
        smac = require("smac", "smac")
        from smac.initial_design import RandomInitialDesign

        facade = smac.HyperparameterOptimizationFacade if self.settings["facade"] == "hpo" \
            else smac.BlackBoxFacade
        seed = int(self.rng.integers(0, 2**31 - 1))
        self.cs = to_configspace(self.space, seed=seed)
        self._tmp = tempfile.TemporaryDirectory(prefix="benchsuite-smac-")
        scenario = smac.Scenario(self.cs, output_directory=Path(self._tmp.name), deterministic=True,
                                 n_trials=10**6, seed=seed)
        # a given initial design (the benchmark's) comes first, as SMAC's additional configurations; random
        # ones fill up to n_init
        given = [to_configspace_config(self.cs, self.space, c) for c in self.given_design]
        init = RandomInitialDesign(scenario, n_configs=max(int(self.settings["n_init"]) - len(given), 0 if given else 1),
                                   max_ratio=1.0, additional_configs=given)
        # SMAC's own logging set-up (logging_level=N) reconfigures the *root* logger, which silenced every other
        # library's warnings, the suite's included, for the rest of the process; quiet SMAC's logger alone instead
        logging.getLogger("smac").setLevel(logging.ERROR)
        p_random = self.settings["random_probability"]
        random_design = None if p_random is None else facade.get_random_design(scenario, probability=float(p_random))
        self.smac = facade(scenario, _fail_target, initial_design=init,
                           intensifier=facade.get_intensifier(scenario, max_config_calls=1),
                           random_design=random_design, logging_level=False, overwrite=True)
        self._infos: dict[int, Any] = {}  # our trial id -> SMAC TrialInfo
        self._asked: list[Any] = []  # TrialInfos asked, not yet matched to a trial id

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        info = self.smac.ask()
        self._asked.append(info)
        return Suggestion(from_configspace(self.space, info.config), self.full_fidelity())

    def tell(self, trial: Trial, result: Result) -> None:
        super().tell(trial, result)
        from smac.runhistory.dataclasses import TrialValue
        from smac.runhistory.enumerations import StatusType

        key = self.space.key(trial.config)
        info = None
        for i, cand in enumerate(self._asked):
            if self.space.key(from_configspace(self.space, cand.config)) == key:
                info = self._asked.pop(i)
                break
        if info is None:  # not one of SMAC's suggestions: nothing to tell it
            return
        if result.failed or not math.isfinite(result.loss):
            # SMAC's default crash cost (inf) turns into NaN in its log-cost model; tell the
            # worst loss seen so far instead (nothing, if there is none yet)
            _, losses, _ = self.observations()
            if not len(losses):
                return
            value = TrialValue(cost=float(losses.max()), status=StatusType.CRASHED)
        else:
            value = TrialValue(cost=float(result.loss), time=float(result.cost_s))
        self.smac.tell(info, value, save=False)
