"""Hyperband (Li et al., ICLR 2017) with the fidelity axis as the resource.

As fabolas.txt Section 4 runs it: eta = 3 ("the recommended setting"), the resource is
the training-subset fraction, the smallest resource is the fidelity's lower bound
(``r_min``) and the largest its full value (``R``), and the incumbent after each
iteration is "the configuration with the best performance on the full dataset size"
(fabolas.txt Sec. 4): until the first full-size result there is none, so Hyperband's curve
starts at its first full-size evaluation, as in the paper's Figure 2. (Setting
``incumbent=any`` falls back to the best at any fidelity before that, the suite's default
for other plugins; it credits Hyperband with configurations it has only seen on subsets.)

Brackets (Li et al. Algorithm 1): with ``s_max = floor(log_eta(R / r_min))`` and
``B = (s_max + 1) R``, bracket ``s`` starts ``n = ceil(B / R * eta^s / (s + 1))`` random
configurations at resource ``R eta^-s`` and runs successive halving, keeping the best
``floor(n_i / eta)`` at each rung. Brackets cycle ``s = s_max, ..., 0`` and repeat.

Parallel workers (an extension, not in the paper): a bracket's rung is synchronous, so
while it waits for its last results, free workers start the next bracket; promotions
happen as soon as a rung is complete.

Fidelities with a finite set of allowed values (the SVM table's s = 1/128, ..., 1) get
each rung's resource snapped to the nearest allowed value on the log scale, e.g.
1/81, 1/27, 1/9, 1/3, 1 become 1/64, 1/32, 1/8, 1/4, 1; this differs from the geometric
eta = 3 ladder and is a consequence of the grid.
"""
from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchsuite.benchmark import Fidelity, Result
from benchsuite.errors import InvalidSettingError
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import POSITIVE, Interval, Setting


# the most configurations one bracket may start with: more would take hours and gigabytes before the
# first promotion (issue 26: min_fidelity=1e-9 on a 1/128..1 axis gave 3^18). Not from Li et al.: a
# guard of the suite; the paper's SVM axis (fabolas.txt Sec. 4, 1/128..1, eta 3) needs 81.
MAX_BRACKET_CONFIGS = 10_000


def _s_max(r_max: float, r_min: float, eta: int) -> int:
    """``floor(log_eta(R / r_min))``; the small epsilon keeps e.g. log_3(81) from rounding down to 3.999..."""
    return int(math.floor((math.log(r_max) - math.log(r_min)) / math.log(eta) + 1e-9))


@dataclass
class _Rung:
    fidelity: float
    configs: list[Any]
    dispatched: int = 0
    losses: dict[int, float] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return len(self.losses) == len(self.configs)


@dataclass
class _Bracket:
    s: int
    n_rungs: int
    rungs: list[_Rung]

    def next_job(self) -> tuple[int, int] | None:
        rung = self.rungs[-1]
        if rung.dispatched < len(rung.configs):
            rung.dispatched += 1
            return len(self.rungs) - 1, rung.dispatched - 1
        return None

    @property
    def finished(self) -> bool:
        return len(self.rungs) == self.n_rungs and self.rungs[-1].complete


class Hyperband(Optimizer):
    """Hyperband: successive halving over brackets of random configurations."""

    name = "hyperband"
    description = "Hyperband (Li et al. 2017), eta = 3, the fidelity (training-subset fraction) as resource"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed", "architecture"}, fidelity="requires",
                            parallel=True)
    settings_spec = {
        "eta": Setting(3, "halving rate; 3 is Li et al.'s recommendation, used by fabolas.txt Sec. 4",
                       domain=Interval(int, 2, None)),
        "min_fidelity": Setting(None, "smallest resource; default: the fidelity's lower bound (issue 5)", type=float,
                                domain=[None, POSITIVE]),
        "incumbent": Setting("full", "full: best at full fidelity only, none before (fabolas.txt Sec. 4); "
                             "any: fall back to the best at any fidelity", choices=("full", "any")),
    }

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any], fidelity: Fidelity | None) -> None:
        """min_fidelity within the benchmark's fidelity range, and a first bracket of at most MAX_BRACKET_CONFIGS."""
        if fidelity is None:
            return  # not known at protocol validation for tabular/live benchmarks: checked when the run starts
        owner = f"optimizer {cls.name!r}"
        given = settings["min_fidelity"]
        r_min = float(fidelity.low if given is None else given)
        r_max = float(fidelity.full)
        axis = f"benchmark fidelity {fidelity.name!r} [{fidelity.low:g}, {fidelity.high:g}], full = {r_max:g}"
        if given is None and r_min <= 0:
            raise InvalidSettingError(f"{owner}: the {axis} starts at {r_min:g}; set min_fidelity to a positive "
                                      "smallest resource")
        if r_min > r_max:
            raise InvalidSettingError(f"{owner}: setting min_fidelity={r_min:g} is above the {axis}; "
                                      "every rung would run at full fidelity")
        eta = int(settings["eta"])
        s_max = _s_max(r_max, r_min, eta)
        n_first = eta**s_max  # ceil((s_max + 1) eta^s_max / (s_max + 1)): the largest bracket (Li et al. Alg. 1)
        if n_first > MAX_BRACKET_CONFIGS:
            shown = f"{n_first:,}" if n_first < 10**15 else f"{eta}^{s_max}"
            raise InvalidSettingError(
                f"{owner}: settings min_fidelity={r_min:g} and eta={eta} on the {axis} give a first bracket of "
                f"{shown} configurations (more than {MAX_BRACKET_CONFIGS:,}); raise min_fidelity or eta")
        if r_min < fidelity.low:
            raise InvalidSettingError(f"{owner}: setting min_fidelity={r_min:g} is below the {axis}; "
                                      "its rungs would be clamped to the lower bound")

    @classmethod
    def first_full_evaluation(cls, settings: Mapping[str, Any], fidelity: Fidelity) -> tuple[int, list[int]]:
        """With one worker: the evaluation (1-based) at which the first full-fidelity result arrives, and the
        rung sizes of the first bracket before it (Li et al. Algorithm 1: ``s_max`` halvings from
        ``eta^s_max`` configurations, ``floor(n_i / eta)`` kept at each rung)."""
        eta = int(settings["eta"])
        r_max = float(fidelity.full)
        r_min = float(settings["min_fidelity"] or fidelity.low)
        s_max = _s_max(r_max, r_min, eta)
        rungs = [eta**s_max]
        for _ in range(s_max):
            rungs.append(max(1, rungs[-1] // eta))
        return sum(rungs[:-1]) + 1, rungs[:-1]

    @classmethod
    def budget_notice(cls, settings: Mapping[str, Any], fidelity: Fidelity | None, budget_evals: int | None,
                      workers: int = 1) -> str:
        """Hyperband's first full-fidelity result comes after the first bracket's lower rungs (121 evaluations
        on the SVM grid: 81 + 27 + 9 + 3 below full); a smaller budget ends with no incumbent at full
        fidelity, which is said before the run starts."""
        if fidelity is None or budget_evals is None:
            return ""
        first, rungs = cls.first_full_evaluation(settings, fidelity)
        if budget_evals >= first:
            return ""
        later = "" if workers == 1 else f" with one worker, later with {workers}"
        if settings["incumbent"] == "full":
            ends = ("with no incumbent (incumbent=full counts full-fidelity results only); give --budget-evals "
                    f"{first} or more, or --set incumbent=any for the best at any fidelity")
        else:
            ends = f"with an incumbent seen at lower fidelities only; give --budget-evals {first} or more"
        return (f"optimizer {cls.name!r}: its first full-fidelity evaluation is number {first}{later} (the first "
                f"bracket runs {' + '.join(str(n) for n in rungs)} below full), so a budget of {budget_evals} "
                f"ends {ends}")

    def setup(self) -> None:
        fid = self.fidelity
        self.eta = int(self.settings["eta"])
        self.r_max = float(fid.full)
        self.r_min = float(self.settings["min_fidelity"] or fid.low)
        ratio = self.r_max / self.r_min
        self.s_max = _s_max(self.r_max, self.r_min, self.eta)
        self.budget = (self.s_max + 1) * ratio  # B in units of r_min
        self.brackets: list[_Bracket] = []
        self.next_s = self.s_max
        # (config key, fidelity) -> queue of (bracket, rung, job) waiting for a result
        self.jobs: dict[tuple[Any, float], deque[tuple[_Bracket, int, int]]] = {}

    def recommend(self) -> Any | None:
        """The best configuration evaluated at full fidelity (None before one finishes)."""
        if self.settings["incumbent"] == "full":
            return None if self._best_full is None else self._best_full.config
        return super().recommend()

    def _resource(self, s: int, i: int) -> float:
        """Fidelity of rung ``i`` of bracket ``s``: ``R * eta^(i - s)``, snapped to the axis."""
        value = self.r_max * float(self.eta) ** (i - s)
        return self.fidelity.snap(max(value, self.fidelity.low))

    def _new_bracket(self) -> _Bracket:
        s = self.next_s
        self.next_s = self.s_max if s == 0 else s - 1
        n = int(math.ceil(self.budget / (self.r_max / self.r_min) * self.eta**s / (s + 1)))
        configs = [self.space.sample(self.rng) for _ in range(n)]
        bracket = _Bracket(s=s, n_rungs=s + 1, rungs=[_Rung(self._resource(s, 0), configs)])
        self.brackets.append(bracket)
        return bracket

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        for bracket in self.brackets:
            job = bracket.next_job()
            if job is not None:
                break
        else:
            bracket = self._new_bracket()
            job = bracket.next_job()
        rung_idx, j = job
        rung = bracket.rungs[rung_idx]
        config = rung.configs[j]
        self.jobs.setdefault((self.space.key(config), rung.fidelity), deque()).append((bracket, rung_idx, j))
        return Suggestion(config, rung.fidelity, info={"bracket": bracket.s, "rung": rung_idx})

    def tell(self, trial: Trial, result: Result) -> None:
        super().tell(trial, result)
        queue = self.jobs.get((self.space.key(trial.config), self.fidelity.snap(trial.fidelity)))
        if not queue:
            return  # not one of ours (cannot happen through the runner)
        bracket, rung_idx, j = queue.popleft()
        rung = bracket.rungs[rung_idx]
        rung.losses[j] = math.inf if result.failed else float(result.loss)
        if rung.complete and rung_idx == len(bracket.rungs) - 1 and rung_idx + 1 < bracket.n_rungs:
            n_i = len(rung.configs)
            keep = max(1, n_i // self.eta)  # floor(n_i / eta), at least one survivor
            order = sorted(range(n_i), key=lambda k: rung.losses[k])[:keep]
            bracket.rungs.append(_Rung(self._resource(bracket.s, rung_idx + 1), [rung.configs[k] for k in order]))
        self.brackets = [b for b in self.brackets if not b.finished]
