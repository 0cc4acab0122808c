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


class LiveTrainingBenchmark(Benchmark):
    """Base of the benchmarks that train a network per evaluation (data, fidelity, cached test loss)."""

    needs = ("torch",)  # the [nas] extra
    kind = "live"
    fidelity_setting: ClassVar[str] = "epochs"  # the integer setting that is the full fidelity
    fidelity_unit: ClassVar[str] = "training epochs"
    low_fidelity_frac: ClassVar[float] = 0.0  # lowest fidelity as a fraction of the full one (at least 1)

    def __init__(self, **settings: Any):
        self._splits: ArraySplits | None = None
        self._param_counts: dict[Any, int] = {}  # nominal_cost's parameter count per configuration
        super().__init__(**settings)

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
        return train(self.builder(config, data), data, self.train_settings(n, eval_test), int(seed))

    # -- the nominal clock ----------------------------------------------------------------------------
    def nominal_cost(self, config: Any, fidelity: float | None) -> float:
        """Training units x training examples x trainable parameters / :data:`NOMINAL_RATE`: the cost model of
        ``clock="nominal"`` (deterministic: the network is built, never trained, for its parameter count).

        A model of the work, not of any machine: it orders completions by how much training each trial
        asked for (fidelity) and how big its network is, which is what measured seconds mostly reflect.
        """
        from .training import count_parameters

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
