"""The optimizer plugin interface.

A plugin is a subclass of :class:`Optimizer` with a ``name``, a one-line ``description``,
the :class:`Capabilities` it supports and its declared ``settings_spec``. The runner
constructs it with the space, the fidelity (or ``None``), a numpy Generator and the
settings, then loops ``ask`` / ``tell``; ``recommend`` gives the incumbent after each tell.

With several asynchronous workers, ``ask`` receives the trials still running so the
plugin can hallucinate them (fantasies, posterior-mean imputation) or avoid duplicates.

Pairing asks with tells: the runner stamps every :class:`Suggestion` that ``ask`` returned
with the id of the trial it runs as (``suggestion.trial_id``, set on the object the plugin
returned, right after ``ask``), and the :class:`Trial` built from it carries the
suggestion's ``info`` dict (the same object: ``trial.info is suggestion.info``). So the
``Trial`` that ``tell`` receives, and every trial in ``pending``, can be matched to its
suggestion by ``trial.id == suggestion.trial_id`` or by what the plugin put in ``info``;
no need to match configurations. ``info`` is also written to the result file's ``info``
column (JSON; later keys from the benchmark's result win), so put only JSON-friendly,
small values there; keep library objects in the plugin, keyed by ``trial_id``. A plugin
driven outside the runner (a unit test calling ``ask``/``tell`` itself) sees
``trial_id=None`` unless its driver builds trials with :meth:`Trial.from_suggestion`.
"""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .benchmark import Fidelity, Result
from .errors import UnsupportedError
from .settings import Setting, resolve_settings
from .space import SearchSpace


@dataclass(frozen=True)
class Capabilities:
    """What a plugin supports: space kinds, a fidelity axis, parallel workers."""

    spaces: frozenset[str] = frozenset({"continuous", "discrete", "mixed"})
    fidelity: str = "ignores"  # "ignores" (always full), "uses" (may ask lower), "requires"
    parallel: bool = True
    #: space capabilities the plugin cannot run without (names of ``space.SPACE_CAPABILITIES``)
    needs: frozenset[str] = frozenset()
    #: what such a space is, in words, for the refusal ("a space written in the DeepArchitect language")
    needs_hint: str = ""
    #: space capabilities the plugin uses when a space announces them (otherwise it falls back)
    uses: frozenset[str] = frozenset()
    #: the plugin can start from a given initial design (``Optimizer.given_design``) instead of its own
    #: random initial points
    initial_design: bool = False
    #: the plugin proposes only configurations the space calls feasible (``SearchSpace.is_valid``), its random
    #: initial points included; without it a plugin may propose infeasible ones, which the benchmark scores
    #: (COMBO's cells without an input-output path: 10 % accuracy), and the conformance kit counts them
    feasible_only: bool = False

    def __post_init__(self) -> None:
        from .space import SPACE_CAPABILITIES

        object.__setattr__(self, "spaces", frozenset(self.spaces))
        object.__setattr__(self, "needs", frozenset(self.needs))
        object.__setattr__(self, "uses", frozenset(self.uses))
        unknown = sorted((self.needs | self.uses) - set(SPACE_CAPABILITIES))
        if unknown:
            raise ValueError(f"unknown space capabilities {unknown}; known: {sorted(SPACE_CAPABILITIES)}")
        if self.fidelity not in ("ignores", "uses", "requires"):
            raise ValueError(f"fidelity support must be ignores/uses/requires, got {self.fidelity!r}")


_AS_SUGGESTED = object()  # "take it from the suggestion" (None is a valid fidelity)


@dataclass(frozen=True)
class Suggestion:
    """What ``ask`` returns: a configuration, the fidelity to evaluate it at, and free-form ``info``.

    ``trial_id`` is ``None`` when the plugin creates it; the runner sets it to the id of
    the trial the suggestion runs as (see the module docstring).
    """

    config: Any
    fidelity: float | None = None
    info: dict[str, Any] = field(default_factory=dict)
    trial_id: int | None = field(default=None, compare=False)


@dataclass
class Trial:
    """One evaluation in flight or finished; ``result`` is ``None`` while it runs.

    ``info`` is the ``info`` of the :class:`Suggestion` it was made from (empty for trials
    built by hand).
    """

    id: int
    config: Any
    fidelity: float | None
    worker: int = 0
    result: Result | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_suggestion(cls, suggestion: Suggestion, id: int, *, config: Any = _AS_SUGGESTED,  # noqa: A002
                        fidelity: float | None | object = _AS_SUGGESTED, worker: int = 0) -> Trial:
        """The trial ``suggestion`` runs as, stamping ``suggestion.trial_id = id``.

        ``config`` and ``fidelity`` default to the suggestion's (the runner passes the
        benchmark's canonical forms). A suggestion object that already ran as another trial
        (a plugin returned the same object twice) keeps its first id.
        """
        if suggestion.trial_id is None:
            # frozen for plugins; the runner is the one writer of this field
            object.__setattr__(suggestion, "trial_id", int(id))
        return cls(id=int(id), config=suggestion.config if config is _AS_SUGGESTED else config,
                   fidelity=suggestion.fidelity if fidelity is _AS_SUGGESTED else fidelity, worker=worker,
                   info=suggestion.info)


class Optimizer(ABC):
    """Base class of every optimizer plugin: subclass it, set the class attributes, write :meth:`ask`.

    The runner constructs the plugin once per run (``Optimizer(space, fidelity, rng, **settings)``), then
    calls ``ask`` when a worker is free and ``tell`` when a trial has finished, and ``recommend`` after
    each tell for the incumbent it records. What a plugin reads and calls on ``self``:

    :ivar space: the benchmark's search space (:class:`benchsuite.space.Space` for vectors, or an
        architecture space): ``sample(rng)``, ``neighbours(config)``, ``mutate(config, rng)``,
        ``key(config)``, ``to_unit``/``from_unit`` (vectors), ``to_json``.
    :ivar fidelity: the benchmark's fidelity axis (:class:`benchsuite.benchmark.Fidelity`: ``low``,
        ``high``, ``full``, ``is_full(value)``, ``snap(value)``), or ``None`` when it has none.
    :ivar rng: the run's optimizer stream (a ``numpy.random.Generator`` from the run seed): draw every
        random choice from it and a seeded run is reproducible.
    :ivar settings: the resolved settings, a dict: :attr:`settings_spec`'s defaults overlaid with the ones
        given (``--set key=value``, ``optimizer_settings=``), each checked against its domain.
    :ivar history: every told :class:`Trial` in tell order, each with its ``result``
        (:class:`benchsuite.benchmark.Result`: ``loss``, ``cost_s``, ``failed``, ``info``); the base
        :meth:`tell` appends to it, so an override calls ``super().tell(trial, result)``.
    :ivar given_design: configurations to evaluate first (the benchmark's initial design, when the plugin
        declares ``Capabilities(initial_design=True)``); :meth:`sample_initial` hands them out.
    :ivar timer: the clock the run times ask and tell on (wall or CPU seconds), for plugins that decide on
        their own overhead.

    Helpers: :meth:`recommend` (the incumbent: the best configuration at full fidelity so far),
    :meth:`full_fidelity`, :meth:`sample_initial`, :meth:`observations` (successful trials as
    configurations, losses, fidelities). Class attributes: ``name``, ``description``, ``supports``
    (:class:`Capabilities`), ``settings_spec`` (name -> :class:`benchsuite.settings.Setting`),
    ``test_settings`` (small settings for the conformance kit), ``needs`` (optional packages),
    ``initial_points_setting`` (the setting counting random initial points, for :meth:`budget_notice`).
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    supports: ClassVar[Capabilities] = Capabilities()
    #: optional packages (import names, see benchsuite.extras.EXTRA_MODULES) this plugin cannot work without;
    #: with one missing, the registry lists the plugin as unavailable and names the pip extra to install
    needs: ClassVar[tuple[str, ...]] = ()
    settings_spec: ClassVar[dict[str, Setting]] = {}
    test_settings: ClassVar[dict[str, Any]] = {}  # small settings the conformance kit checks with
    #: the clock the runner times ask and tell on (``runner.OVERHEAD_CLOCKS``: wall seconds, or this process's
    #: CPU seconds under ``overhead_clock: cpu``); the runner sets it on each instance. A plugin whose choices
    #: use its own measured overhead (fabolas and mtbo: cost plus overhead, fabolas.txt Sec. 3.2) reads this
    #: one, so that what it decides on and what the run's clock records are the same seconds
    timer: Callable[[], float] = staticmethod(time.perf_counter)
    #: the setting that counts the evaluations the plugin spends on random (or given) initial points before its
    #: method acts (``n_init``, ``population_size``): a budget no larger than it makes the run random search,
    #: which :meth:`budget_notice` says before the run starts
    initial_points_setting: ClassVar[str | None] = None

    def __init__(self, space: SearchSpace, fidelity: Fidelity | None = None,
                 rng: np.random.Generator | int | None = None, *, initial_design: Sequence[Any] = (),
                 **settings: Any):
        self.space = space
        self.fidelity = fidelity
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.settings = resolve_settings(f"optimizer {self.name!r}", self.settings_spec, settings)
        self.check_settings(self.settings, fidelity)
        if initial_design and not self.supports.initial_design:
            raise UnsupportedError(f"optimizer {self.name!r} cannot start from a given initial design; "
                                   "run it with its own initial points (initial_design: optimizer)")
        #: configurations to evaluate first, in this order, in place of the plugin's own random initial
        #: points (the runner passes the benchmark's with ``initial_design="benchmark"``); see ``next_initial``
        self.given_design: list[Any] = list(initial_design)
        self._design_given = 0
        self.history: list[Trial] = []
        self._best_full: Trial | None = None  # incumbents kept incrementally: recommend() is O(1)
        self._best_any: Trial | None = None
        self.setup()

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any], fidelity: Fidelity | None) -> None:
        """Raise :class:`InvalidSettingError` when resolved settings contradict each other or the fidelity axis.

        Called at construction (before ``setup``) and by protocol validation, which passes
        ``fidelity=None`` when the benchmark is not built then: checks that need the axis
        skip themselves in that case. The message names both settings (issue 26, item 2).
        """

    @classmethod
    def budget_notice(cls, settings: Mapping[str, Any], fidelity: Fidelity | None, budget_evals: int | None,
                      workers: int = 1) -> str:
        """One line when these resolved settings cannot act within ``budget_evals`` evaluations, naming the
        budget that would do; ``""`` when they can (or the budget is in seconds only).

        The default reads :attr:`initial_points_setting`: a budget of at most that many evaluations spends
        them all on the initial points. A plugin whose method needs more (Hyperband's first full-fidelity
        rung) overrides this. ``benchsuite run`` prints the line before the run starts."""
        key = cls.initial_points_setting
        n = settings.get(key) if key else None
        if budget_evals is None or not isinstance(n, int) or n < budget_evals:
            return ""
        return (f"optimizer {cls.name!r}: its first {key}={n} evaluations are random initial points and the budget "
                f"is {budget_evals}, so this run is random search; give --budget-evals {n + 1} or more "
                f"(or --set {key}=N with N below {budget_evals})")

    def setup(self) -> None:
        """Plugin-specific initialisation, after settings are resolved."""

    @abstractmethod
    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        """Propose the next configuration (and fidelity); ``pending`` are running trials."""

    def tell(self, trial: Trial, result: Result) -> None:
        """Record a finished trial. Subclasses that override it should call ``super().tell``."""
        trial.result = result
        self.history.append(trial)
        if result.failed:
            return
        if self._best_any is None or result.loss < self._best_any.result.loss:
            self._best_any = trial
        at_full = self.fidelity is None or self.fidelity.is_full(trial.fidelity)
        if at_full and (self._best_full is None or result.loss < self._best_full.result.loss):
            self._best_full = trial

    def recommend(self) -> Any | None:
        """The incumbent: the evaluated configuration with the lowest loss at full fidelity.

        Falls back to the best at any fidelity when nothing has run at full fidelity yet;
        ``None`` before the first successful trial. Fabolas overrides this with a model.
        """
        best = self._best_full or self._best_any
        return None if best is None else best.config

    # -- helpers for subclasses -----------------------------------------------------------
    def next_initial(self) -> Any | None:
        """The next configuration of ``given_design`` not yet handed out, or ``None`` when all were.

        A plugin that declares ``Capabilities(initial_design=True)`` calls this where it would
        draw a random initial point, and draws as before once it returns ``None`` (so, with no
        design given, its random stream and its results are exactly those without this hook).
        """
        if self._design_given >= len(self.given_design):
            return None
        self._design_given += 1
        return self.given_design[self._design_given - 1]

    def sample_initial(self) -> Any:
        """An initial point: the next of ``given_design``, else a uniform sample from the space."""
        config = self.next_initial()
        return self.space.sample(self.rng) if config is None else config

    def full_fidelity(self) -> float | None:
        """The fidelity to ask for when a plugin does not use the axis."""
        return self.fidelity.full if self.fidelity is not None else None

    def observations(self) -> tuple[list[Any], np.ndarray, list[float | None]]:
        """Successful trials as (configs, losses, fidelities)."""
        done = [t for t in self.history if t.result is not None and not t.result.failed]
        return [t.config for t in done], np.array([t.result.loss for t in done]), [t.fidelity for t in done]

    @classmethod
    def check_supports(cls, space: SearchSpace, fidelity: Fidelity | None, workers: int) -> None:
        """Raise :class:`UnsupportedError` when this plugin cannot run on the pairing."""
        caps = cls.supports
        offered = frozenset(getattr(space, "capabilities", ()))
        # a vector space that builds networks (the NAS-Bench-201 cell, COMBO's cell) is an architecture space too
        as_architecture = "architecture" in caps.spaces and "build" in offered
        if space.kind not in caps.spaces and not as_architecture:
            raise UnsupportedError(
                f"optimizer {cls.name!r} supports {sorted(caps.spaces)} spaces, but this benchmark's space is "
                f"{space.kind}; pick another optimizer or benchmark (see `benchsuite list`)"
            )
        missing = sorted(caps.needs - offered)
        if missing:
            what = f"{caps.needs_hint} (capabilit{'y' if len(missing) == 1 else 'ies'} " if caps.needs_hint else \
                "a space with the capabilit" + ("y " if len(missing) == 1 else "ies ")
            raise UnsupportedError(
                f"optimizer {cls.name!r} needs {what}{' and '.join(missing)}{')' if caps.needs_hint else ''}; "
                f"{type(space).__name__} offers {', '.join(sorted(offered)) or 'none'}: pick a benchmark whose space offers it "
                "(`benchsuite list` shows what each space offers and each optimizer needs)")
        if caps.fidelity == "requires" and fidelity is None:
            raise UnsupportedError(
                f"optimizer {cls.name!r} needs a benchmark with a fidelity axis; this benchmark has none"
            )
        if workers > 1 and not caps.parallel:
            raise UnsupportedError(f"optimizer {cls.name!r} supports only 1 worker, {workers} were asked for")

    @classmethod
    def describe(cls) -> str:
        """Human-readable description for ``benchsuite describe``."""
        caps = cls.supports
        lines = [f"{cls.name}: {cls.description}",
                 f"spaces: {sorted(caps.spaces)}; fidelity: {caps.fidelity}; parallel workers: {caps.parallel}"
                 + (f"; needs space capabilities: {sorted(caps.needs)}" if caps.needs else "")
                 + (f"; uses when offered: {sorted(caps.uses)}" if caps.uses else "")]
        if cls.settings_spec:
            lines.append("settings:")
            lines += [f"  {k} = {s.default!r}  {s.help}" for k, s in cls.settings_spec.items()]
        return "\n".join(lines)
