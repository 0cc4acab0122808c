"""Bridge to Optuna's TPE sampler through its ask/tell interface; an optional extra.

TPE is a baseline of combo.txt Sec. 4 and dngo.txt (the papers used hyperopt's TPE;
Optuna's TPESampler implements the same tree-structured Parzen estimator). Install with
``pip install 'benchsuite[tpe]'``.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from benchsuite.benchmark import Result
from benchsuite.convert import from_optuna, optuna_params, require, to_optuna_distributions
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import NONNEGATIVE_INT, POSITIVE_INT, Setting


def hyperopt_gamma(n: int) -> int:
    """How many of ``n`` trials form the "good" density l(x) in hyperopt's TPE.

    hyperopt ``tpe.py`` (``ap_split_trials``, defaults ``gamma=0.25``, ``linear_forgetting=25``):
    ``min(ceil(0.25 sqrt(n)), 25)``, against Optuna's ``min(ceil(0.1 n), 25)``: at 300 trials 5 good
    points against 25. The forgetting weights of the two are the same (``LF = 25`` ramp).
    """
    return min(int(math.ceil(0.25 * math.sqrt(n))), 25)


class TPE(Optimizer):
    """Optuna's TPESampler driven by ``study.ask`` / ``study.tell``.

    ``n_init`` random trials come first (``n_startup_trials``; combo.txt's experiments
    start from 20 random points, Optuna's default is 10); ``multivariate`` switches on the
    joint Parzen estimator (off by default, like hyperopt's independent TPE that the
    papers ran). Running trials are visible to the sampler (``constant_liar``), so
    asynchronous workers do not all get the same suggestion. Ordinal variables are given
    to Optuna as their level index (``ordinal_as``; see :mod:`benchsuite.convert`). The
    sampler's seed comes from the run's optimizer stream. Failed trials are told as FAIL.
    ``gamma="hyperopt"`` splits good from bad trials as hyperopt does (:func:`hyperopt_gamma`), a
    default in which the papers' TPE and Optuna's differ; it decides how greedy the search is (on
    COMBO's pest control it moves the final value by 0.75, ``reproductions/notes.yaml``).
    """

    needs = ("optuna",)  # the [tpe] extra
    name = "tpe"
    initial_points_setting = "n_init"  # a budget of at most this many is random search
    description = "Optuna TPE (tree-structured Parzen estimator) via ask/tell (optional extra: pip install 'benchsuite[tpe]')"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed"}, fidelity="ignores", parallel=True,
                            initial_design=True)
    test_settings = {"n_init": 4}  # small: quick conformance checks
    settings_spec = {
        "n_init": Setting(20, "random startup trials (combo.txt Sec. 4: 20; Optuna default 10)",
                          domain=NONNEGATIVE_INT),
        "n_ei_candidates": Setting(24, "candidates drawn from l(x) per suggestion (Optuna/hyperopt default 24)",
                                   domain=POSITIVE_INT),
        "multivariate": Setting(False, "joint (multivariate) TPE instead of independent per-variable TPE"),
        "ordinal_as": Setting("index", "ordinal variables as an ordered level index or as unordered categories",
                              choices=("index", "categorical")),
        "gamma": Setting("optuna", "how many trials count as good: optuna min(ceil(0.1 n), 25), or hyperopt's "
                         "min(ceil(0.25 sqrt(n)), 25) (the TPE of the papers' baselines)",
                         choices=("optuna", "hyperopt")),
    }

    def setup(self) -> None:
        optuna = require("optuna", "tpe")
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        import warnings

        seed = int(self.rng.integers(0, 2**31 - 1))
        with warnings.catch_warnings():  # multivariate / constant_liar are marked experimental
            warnings.simplefilter("ignore")
            sampler = optuna.samplers.TPESampler(
                seed=seed, n_startup_trials=max(int(self.settings["n_init"]), 0),
                n_ei_candidates=int(self.settings["n_ei_candidates"]),
                multivariate=bool(self.settings["multivariate"]), constant_liar=True,
                **({"gamma": hyperopt_gamma} if self.settings["gamma"] == "hyperopt" else {}))
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self.distributions = to_optuna_distributions(self.space, self.settings["ordinal_as"])
        self._asked: list[object] = []  # optuna trials not yet told
        # a given initial design (the benchmark's) is enqueued first; Optuna counts its trials among the
        # n_startup_trials, so random ones fill up to n_init
        for config in self.given_design:
            self.study.enqueue_trial(optuna_params(self.space, config))

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trial = self.study.ask(self.distributions)
        self._asked.append(trial)
        return Suggestion(from_optuna(self.space, trial.params), self.full_fidelity())

    def tell(self, trial: Trial, result: Result) -> None:
        super().tell(trial, result)
        import optuna

        key = self.space.key(trial.config)
        match = None
        for i, t in enumerate(self._asked):
            if self.space.key(from_optuna(self.space, t.params)) == key:
                match = self._asked.pop(i)
                break
        if match is None:
            return
        if result.failed or not math.isfinite(result.loss):
            self.study.tell(match, state=optuna.trial.TrialState.FAIL)
        else:
            self.study.tell(match, float(result.loss))
