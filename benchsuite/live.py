"""The shared part of the live benchmarks: networks trained now through :func:`benchsuite.training.train`.

:class:`LiveTrainingBenchmark` owns what ``nb201_live``, ``combo_nas``,
``deeparchitect_cifar10`` and the ``nasbot_*`` benchmarks do alike: the data split loaded once
(``prepare`` / ``splits``, the subclass's ``load``), the fidelity axis read from one integer
setting (``epochs`` or ``iterations``) and its rounding to whole units, one training run of the
harness (``_train``, the subclass's ``builder``), the test loss of a full-fidelity training from
the fixed seed :data:`TEST_SEED`, cached per configuration (NaN when ``test_eval`` is off or the
run failed), and the provenance pieces built from ``train_settings`` and the loaded split.
Torch is imported only when a network trains.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from . import activity
from .benchmark import Benchmark, Fidelity
from .settings import NONNEGATIVE_INT, POSITIVE_INT, Setting

if TYPE_CHECKING:  # torch-heavy modules are imported when the first network trains
    from .datasets import ArraySplits
    from .training import TrainOutcome, TrainSettings

TEST_SEED = 0  # seed of the test-loss training (fixed: test_loss is a function of the configuration)
#: parameter-example updates per nominal second of :meth:`LiveTrainingBenchmark.nominal_cost` (the order of a
#: CPU core's rate for small networks; only ratios between trials matter for the completion order)
NOMINAL_RATE = 1e8

# the CIFAR-10 benchmarks' test-set size and subset seed, alike in all of them
CIFAR_TEST_SETTINGS = {
    "n_test": Setting(10_000, "test images scored by test_loss (official test set: 10,000)", type=int,
                      domain=POSITIVE_INT),
    "data_seed": Setting(0, "seed of the subset when n_train/n_val/n_test are below the full split", type=int,
                         domain=NONNEGATIVE_INT),
}
TEST_EVAL_ONE_RUN = Setting(True, "test_loss trains a full-fidelity run and scores the test set (false: NaN)",
                            type=bool)


PAPER_PRESET = "paper"


class LiveTrainingBenchmark(Benchmark):
    """Base of the benchmarks that train a network per evaluation (data, fidelity, cached test loss).

    Presets (issue 27): a ``preset`` setting names a set of settings shared by ``run``,
    ``evaluate`` and the protocols (``--benchmark-set preset=cpu_small``). ``paper`` is the
    defaults (the paper's sizes, what a GPU is for); ``cpu_small`` trains small networks on a
    few thousand images for a few epochs on one CPU thread, a try in seconds to minutes.
    Settings given explicitly win over the preset's; the resolved settings, preset included,
    are what provenance records. ``benchsuite describe`` lists each preset's values."""

    needs = ("torch",)  # the [nas] extra
    kind = "live"
    fidelity_setting: ClassVar[str] = "epochs"  # the integer setting that is the full fidelity
    fidelity_unit: ClassVar[str] = "training epochs"
    low_fidelity_frac: ClassVar[float] = 0.0  # lowest fidelity as a fraction of the full one (at least 1)
    #: presets besides ``paper`` (the defaults): name -> the settings it sets
    presets: ClassVar[dict[str, dict[str, Any]]] = {}
    #: one line on what a paper-sized trial costs where it was measured (``benchsuite run`` prints it)
    paper_cost: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("settings_spec")
        if cls.presets and spec is not None and "preset" not in spec:
            names = (PAPER_PRESET, *cls.presets)
            cls.settings_spec = {"preset": Setting(PAPER_PRESET, "named settings: " + "; ".join(
                f"{n} ({cls.preset_summary(n)})" for n in names) + "; settings given explicitly win", type=str,
                choices=names), **spec}

    @classmethod
    def preset_summary(cls, name: str) -> str:
        """The preset's settings in a few words, for ``describe``."""
        if name == PAPER_PRESET:
            return "the defaults: the paper's sizes"
        return ", ".join(f"{k}={v}" for k, v in cls.preset_settings(name, {}).items())

    @classmethod
    def preset_settings(cls, name: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """What preset ``name`` sets, given the explicit settings (a subclass may let them shape it)."""
        return dict(cls.presets.get(name, {}))

    def __init__(self, **settings: Any):
        self._splits: ArraySplits | None = None
        self._param_counts: dict[Any, int] = {}  # nominal_cost's parameter count per configuration
        name = settings.get("preset", PAPER_PRESET)
        if isinstance(name, str) and name in self.presets:  # an unknown name fails in resolve_settings
            settings = {**self.preset_settings(name, settings), **settings}
        super().__init__(**settings)

    def paper_sized_notice(self) -> str:
        """One line for a run with the paper's settings: what each trial trains and what that cost where measured."""
        st = self.settings
        full = self.full_fidelity()
        n = st.get("n_train")
        data = f" on {n:,} training examples" if isinstance(n, int) and n > 0 else ""
        cost = f" ({self.paper_cost})" if self.paper_cost else ""
        quick = " or ".join(f"--benchmark-set preset={p}" for p in self.presets)
        return (f"{self.name} at the paper's size: each trial trains a network for up to {full:,} "
                f"{self.fidelity_unit}{data}{cost}; for a quick try: {quick}")

    # -- to fill in ---------------------------------------------------------------------------------
    def load(self) -> ArraySplits:
        """The data split (called once, on first use)."""
        raise NotImplementedError

    def train_settings(self, n: int, eval_test: bool = False) -> TrainSettings:
        """The harness settings of one training run of ``n`` fidelity units."""
        raise NotImplementedError

    def builder(self, config: Any, data: ArraySplits) -> Callable[[], Any]:
        """A function that builds a fresh network of ``config`` for ``data``."""
        raise NotImplementedError

    # -- settings and fidelity -------------------------------------------------------------------
    def full_fidelity(self) -> int:
        """Epochs (or iterations) of a full-fidelity training."""
        return self.settings[self.fidelity_setting]

    def make_fidelity(self) -> Fidelity | None:
        """The fidelity axis low..full of the fidelity setting; None when it has nothing to vary."""
        full = self.full_fidelity()
        low = max(1, int(round(self.low_fidelity_frac * full)))
        # Fidelity needs low < high: a one-unit benchmark has no axis
        return Fidelity(self.fidelity_setting, low, full, full=full, unit=self.fidelity_unit) if low < full else None

    def _rounded(self, fidelity: float | None) -> int:
        """A fidelity as whole units (half up) within 1..full; None is the full fidelity."""
        full = self.full_fidelity()
        if fidelity is None:
            return full
        return max(1, min(full, int(math.floor(fidelity + 0.5))))

    # -- data and training --------------------------------------------------------------------------
    def prepare(self) -> None:
        """Load (and verify) the data before the first evaluation."""
        self.splits()

    def splits(self) -> ArraySplits:
        """The data split (``load``), loaded on first use."""
        if self._splits is None:
            self._splits = self.load()
        return self._splits

    def _train(self, config: Any, n: int, seed: int, eval_test: bool) -> TrainOutcome:
        from .training import train

        data = self.splits()
        outcome = train(self.builder(config, data), data, self.train_settings(n, eval_test), int(seed))
        activity.trained(n, self.fidelity_unit)  # a progress display counts trainings (for trials, for tests)
        return outcome

    # -- infeasible configurations ------------------------------------------------------------------
    def infeasible_cost_s(self) -> float:
        """Seconds charged for a configuration the space rejects (``space.is_valid`` false).

        Such a configuration is a legitimate proposal (COMBO's NAS cells without an input-output path are
        scored at 10 % accuracy, combo.txt Supp. 4.4.2), but it has no network to train: ``evaluate`` scores
        it without training, and the nominal clock charges it this, never a network's parameter count.
        """
        return 0.0

    # -- the nominal clock ----------------------------------------------------------------------------
    def nominal_cost(self, config: Any, fidelity: float | None) -> float:
        """Training units x training examples x trainable parameters / :data:`NOMINAL_RATE`: the cost model of
        ``clock="nominal"`` (deterministic: the network is built, never trained, for its parameter count).
        A configuration the space rejects costs :meth:`infeasible_cost_s` (nothing is built or trained).

        A model of the work, not of any machine: it orders completions by how much training each trial
        asked for (fidelity) and how big its network is, which is what measured seconds mostly reflect.
        """
        from .training import count_parameters

        if not self.space.is_valid(config):
            return float(self.infeasible_cost_s())
        data = self.splits()
        n = self._rounded(fidelity)
        key = self.test_key(config)
        if key not in self._param_counts:
            self._param_counts[key] = count_parameters(self.builder(config, data)())
        params = self._param_counts[key]
        return float(n) * float(len(data.y_train)) * float(max(params, 1)) / NOMINAL_RATE

    # -- test loss ------------------------------------------------------------------------------------
    def test_loss(self, config: Any) -> float:
        """Test score of a full-fidelity training from a fixed seed (cached per configuration)."""
        config, _ = self.check(config, None)
        return self.cached_test_loss(config)

    def test_key(self, config: Any) -> Any:
        """What the test-loss cache is keyed by (the space's key of the configuration)."""
        return self.space.key(config)

    def cached_test_loss(self, config: Any) -> float:
        """The cached test loss of a checked configuration (NaN when ``test_eval`` is off)."""
        if not self.settings["test_eval"]:
            return math.nan
        return self.memo_test_loss(self.test_key(config), lambda: self._fresh_test_loss(config))

    def _fresh_test_loss(self, config: Any) -> float:
        outcome = self._train(config, self.full_fidelity(), TEST_SEED, eval_test=True)
        bad = outcome.failed or outcome.test_loss is None
        return math.nan if bad else float(outcome.test_loss)

    # -- provenance ---------------------------------------------------------------------------------
    def pick_settings(self, keys: Iterable[str]) -> dict[str, Any]:
        """The named settings as a dict (in the given order)."""
        return {k: self.settings[k] for k in keys}

    def train_provenance(self, fields: Iterable[str], fixed: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``<fidelity>_full`` and the named fields of the full training's settings (``fixed`` overrides)."""
        full = self.full_fidelity()
        ts = self.train_settings(full)
        fixed = fixed or {}
        out: dict[str, Any] = {f"{self.fidelity_setting}_full": full}
        for f in fields:
            v = fixed[f] if f in fixed else getattr(ts, f)
            out[f] = list(v) if isinstance(v, tuple) else v
        return out

    def data_provenance(self, splits: ArraySplits, meta: bool = True,
                        hide_meta: tuple[str, ...] = ()) -> dict[str, Any]:
        """The split's hash, source and scheme (and its meta, less ``hide_meta``)."""
        prov: dict[str, Any] = {"data_sha256": splits.sha256, "data_source": splits.source, "split": splits.scheme}
        if meta:
            prov["split_meta"] = {k: v for k, v in splits.meta.items() if k not in hide_meta}
        return prov
