"""DeepArchitect search spaces as benchmarks: trained live on CIFAR-10, or looked up in NAS-Bench-201.

``deeparchitect_cifar10`` (live) trains an architecture of one of the language's spaces
(:mod:`benchsuite.architectures.deeparchitect`: ``nasbench``, ``nasnet``, ``flat``,
``genetic``, ``nb201``; setting ``space``) on CIFAR-10 through the suite's one harness
(:func:`benchsuite.training.train`). The search-phase recipe is deeparchitect.txt Sec. 7.1-7.2:
"trained for 25 epochs with Adam with a learning rate of 0.001"; what the paper leaves open
is taken from the evaluator the authors' benchmarks use
(``deep_architect/contrib/misc/evaluators/tensorflow/classification.py``,
``SimpleClassifierEvaluator``): batch 256, no augmentation, cross entropy, and their CIFAR-10
loader (``deep_architect/contrib/misc/datasets/loaders.py``): ``data_batch_1``-``4`` train
(40,000 images), ``data_batch_5`` validates (10,000), the official test batch tests.

Differences from the authors' runs: the learning rate is constant for the 25 epochs (their
evaluator divides it by 10 after 7 epochs without a better validation accuracy and stops after
20, rules that rarely fire within 25 epochs; the harness has no plateau rule); the inputs are
normalised per channel by the harness, not whitened per pixel; with the JPEG copy of CIFAR-10
(whose files are ordered by class, not in the official batch order) the 10,000 validation
images are a class-stratified draw with a fixed seed instead of ``data_batch_5``. The paper's
final test accuracies (Tables 1-4) come from retraining the best architecture for 600 epochs
with SGD and a grid search over learning rate and weight decay (Appendix F); ``test_loss`` here
is the test error of the search-phase recipe (a fresh full-fidelity training from a fixed
seed), cached per architecture.

Fidelity: ``epochs``, 1..``epochs`` (default 25), rounded to whole epochs; each fidelity is one
complete training of that many epochs (the learning rate is constant, so it is also the
epoch-e point of a longer run up to the data order). The loss is the validation error after the
last epoch; the cost is the measured seconds; ``info`` has the per-epoch curve, the parameter
count and the device. A diverging run is a failed trial, never an exception, and so is a value
list the space's own rules reject (``space.why_invalid``), without training.

``da_nb201_cifar10``, ``da_nb201_cifar100`` and ``da_nb201_imagenet16`` (tabular) are the
NAS-Bench-201 cell written in the language (space ``nb201``), evaluated through the suite's
NAS-Bench-201 table (:mod:`benchsuite.benchmarks.nb201`): a value list is mapped once to its
architecture string (``space.nb201_arch``) and cell, then every evaluation is the table lookup
(one seed replicate of the 200-epoch validation error, the training seconds as cost), so the
DeepArchitect searchers run at lookup speed and on exactly the numbers the suite's other NAS
optimizers see on ``nb201_*``.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..architectures.deeparchitect.daspace import DASpace
from ..benchmark import Benchmark, Requirements, Result
from ..datasets import CIFAR_SETTINGS
from ..errors import InvalidSettingError
from ..live import CIFAR_TEST_SETTINGS, TEST_EVAL_ONE_RUN, LiveTrainingBenchmark
from ..settings import DEVICE_SETTINGS, POSITIVE, POSITIVE_INT, Setting
from .nb201 import NB201_TASKS, Nb201Cifar10, Nb201Cifar100, Nb201Imagenet16

if TYPE_CHECKING:  # torch-heavy modules are imported when the first network trains
    from ..datasets import ArraySplits
    from ..training import TrainSettings

SPACE_NAMES = ("nasbench", "nasnet", "flat", "genetic", "nb201")
EPOCHS = 25  # deeparchitect.txt Sec. 7.1 / 7.2
LR = 1e-3  # ibid., Adam
BATCH_SIZE = 256  # authors' SimpleClassifierEvaluator default
N_TRAIN, N_VAL = 40_000, 10_000  # authors' load_cifar10: data_batch_1-4 / data_batch_5
DA_SPLIT_SEED = 20181105  # fixed, arbitrary: the class-stratified validation draw for the JPEG copy

_SPLIT_LOCK = threading.Lock()
_SPLITS: dict[tuple[str, str], ArraySplits] = {}


def da_cifar10_splits(data_dir: str | None, source: str) -> ArraySplits:
    """The authors' CIFAR-10 split: 40,000 train / 10,000 validation (data_batch_5) / official test."""
    from ..datasets import ArraySplits, load_cifar10, stratified_choice

    d = load_cifar10(data_dir or None, source)
    key = (d.source, d.sha256)
    with _SPLIT_LOCK:
        if key in _SPLITS:
            return _SPLITS[key]
    n = d.y_train.size
    if d.source == "official":  # the batches in their official order: the last 10,000 are data_batch_5
        val = np.arange(n - N_VAL, n)
        how = "data_batch_5"
    else:  # the JPEG copy is ordered by class: draw a stratified validation set instead
        val = stratified_choice(d.y_train, N_VAL, np.random.default_rng(DA_SPLIT_SEED))
        how = f"class-stratified draw, seed {DA_SPLIT_SEED}"
    train = np.setdiff1d(np.arange(n), val)
    out = ArraySplits(d.x_train[train], d.y_train[train], d.x_train[val], d.y_train[val], d.x_test, d.y_test,
                      scheme="deeparchitect", source=d.source, sha256=d.sha256, meta={"validation": how})
    with _SPLIT_LOCK:
        _SPLITS[key] = out
    return out


class DeepArchitectCifar10(LiveTrainingBenchmark):
    space_class = DASpace
    """A DeepArchitect space's architectures trained live on CIFAR-10 (Adam 1e-3, 25 epochs)."""

    name = "deeparchitect_cifar10"
    description = ("DeepArchitect search space (nasbench, nasnet, flat, genetic or nb201) trained live on "
                   "CIFAR-10 with the paper's search recipe (Adam 1e-3, 25 epochs); validation error, seconds")
    requirements = Requirements(data=("cifar10/cifar-10-python.tar.gz",), gpu="optional")
    presets = {"cpu_small": {"n_train": 500, "n_val": 250, "n_test": 250, "epochs": 1, "batch_size": 125,
                              "device": "cpu", "threads": 1}}  # protocols/deeparchitect_spaces_cpu.yaml's sizes
    #: cpu_small's network sizes per space (protocols/deeparchitect_spaces_cpu.yaml)
    SMALL_SPACE_OPTIONS: ClassVar[dict[str, dict[str, Any]]] = {
        "genetic": {"filters_per_stage": [8, 16, 32], "fc_units": 64}, "flat": {"c0": 4},
        "nasbench": {"init_filters": 8, "cells_per_stack": 1}, "nasnet": {"init_filters": 4, "num_normal_cells": 2}}
    paper_cost = ("on one H200, a 25-epoch trial took about 1 minute in the Genetic space, 3 in Nasbench, "
                  "16-18 in Flat and Nasnet, perf/results/gpu_epochs_h200.json")
    # tiny data, few steps, no test-set training: check_benchmark in seconds (tests/test_every_plugin.py)
    test_settings = {"space": "genetic", "space_options": {"filters_per_stage": [4, 8, 8], "fc_units": 16},
                     "n_train": 128, "n_val": 64, "n_test": 64, "epochs": 2, "batch_size": 64,
                     "test_eval": False, "device": "cpu", "threads": 1}
    settings_spec = {
        "space": Setting("genetic", "search space of deeparchitect.txt Sec. 7.1 (Genetic: the space of "
                                    "the searcher experiments, Sec. 7.2)", type=str, choices=SPACE_NAMES),
        "space_options": Setting({}, "keyword arguments of the space's constructor (sizes; empty: the paper's)",
                                 type=dict),
        **CIFAR_SETTINGS,
        "n_train": Setting(N_TRAIN, "training images (authors: data_batch_1-4, 40,000; fewer = fixed "
                                    "stratified subset)", type=int, domain=POSITIVE_INT),
        "n_val": Setting(N_VAL, "validation images (authors: data_batch_5, 10,000)", type=int, domain=POSITIVE_INT),
        **CIFAR_TEST_SETTINGS,
        "epochs": Setting(EPOCHS, "epochs at full fidelity (Sec. 7: 25); the fidelity is 1..epochs", type=int,
                          domain=POSITIVE_INT),
        "batch_size": Setting(BATCH_SIZE, "minibatch size (authors' evaluator: 256)", type=int, domain=POSITIVE_INT),
        "lr": Setting(LR, "Adam learning rate, constant (Sec. 7: 0.001)", type=float, domain=POSITIVE),
        "augment": Setting(False, "random crop + flip (the authors' search phase: none)", type=bool),
        "test_eval": TEST_EVAL_ONE_RUN,
        **DEVICE_SETTINGS,
    }

    @classmethod
    def preset_settings(cls, name: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """cpu_small also shrinks the chosen space's networks (its ``space_options``)."""
        out = super().preset_settings(name, given)
        small = cls.SMALL_SPACE_OPTIONS.get(str(given.get("space", cls.settings_spec["space"].default)))
        if name == "cpu_small" and small is not None:
            out["space_options"] = dict(small)
        return out

    def setup(self) -> None:
        from ..architectures.deeparchitect import make_space

        st = self.settings
        try:
            self.space = make_space(st["space"], **st["space_options"])
        except TypeError as exc:
            raise InvalidSettingError(f"{self.name}: space_options {st['space_options']!r} do not fit space "
                                      f"{st['space']!r} ({exc})") from None
        self.fidelity = self.make_fidelity()

    # -- data and training ---------------------------------------------------------------------
    def load(self) -> ArraySplits:
        """The authors' split cut to the settings' sizes."""
        st = self.settings
        full = da_cifar10_splits(st["data_dir"], st["source"])
        have = (len(full.y_train), len(full.y_val), len(full.y_test))
        if st["n_train"] < have[0] or st["n_val"] < have[1] or st["n_test"] < have[2]:
            full = full.subset(min(st["n_train"], have[0]), min(st["n_val"], have[1]), st["data_seed"],
                               n_test=None if st["n_test"] >= have[2] else st["n_test"])
        return full

    def train_settings(self, epochs: int, eval_test: bool = False) -> TrainSettings:
        """The harness settings of one training run (the paper's search recipe, module docstring)."""
        from ..training import TrainSettings

        st = self.settings
        return TrainSettings(epochs=int(epochs), batch_size=st["batch_size"], optimizer="adam", lr=st["lr"],
                             weight_decay=0.0, schedule="constant", augment=st["augment"], task="classification",
                             device=st["device"], amp=st["amp"], threads=st["threads"], eval_test=eval_test)

    def builder(self, values: Any, data: ArraySplits) -> Callable[[], Any]:
        """Builds the value list's network through the space (the data's image size, 10 classes at least)."""
        n_classes = max(data.n_classes, 10)
        shape = (3, *data.x_train.shape[1:3])

        def build() -> Any:
            return self.space.build(values, in_shape=shape, n_classes=n_classes)

        return build

    # -- the interface -----------------------------------------------------------------------------
    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        """Train the architecture for ``fidelity`` epochs (rounded); loss = final validation error."""
        values, fid = self.check(config, fidelity)
        epochs = self._rounded(fid)
        why = self.space.why_invalid(values) if hasattr(self.space, "why_invalid") else None
        if why:  # a walk the space's own rules reject (a Nasbench cell without a path): nothing to train
            return Result.failure(self.infeasible_cost_s(), f"architecture not in the space: {why}")
        outcome = self._train(values, epochs, seed, eval_test=False)
        return outcome.to_result(extra={"space": self.settings["space"], "epochs": epochs})

    def provenance(self) -> dict[str, Any]:
        st = self.settings
        return {
            "recipe": "DeepArchitect search phase (deeparchitect.txt Sec. 7.1-7.2): Adam, constant lr, "
                      "authors' SimpleClassifierEvaluator batch size",
            "space": st["space"], "space_options": dict(st["space_options"]),
            "train_settings": self.train_provenance(("batch_size", "optimizer", "lr", "schedule", "augment", "amp",
                                                     "device")),
            "data": self.pick_settings(("n_train", "n_val", "n_test", "data_seed")),
            **self.data_provenance(self.splits()),
        }


class _DaNb201Table(Benchmark):
    space_class = DASpace
    """The NAS-Bench-201 cell written in the DeepArchitect language, served by the NAS-Bench-201 table."""

    kind = "tabular"
    table_cls: ClassVar[type[Benchmark]]
    settings_spec = {
        "table": Setting("", "path of the HDF5 table; empty = the committed one under tables/", type=str),
        "allow_partial": Setting(False, "accept a table whose build is incomplete (testing only)"),
    }

    @classmethod
    def required_tables(cls) -> list[Path]:
        """The NAS-Bench-201 table file (the workflow builds it first when missing)."""
        return cls.table_cls.required_tables()  # type: ignore[attr-defined]

    def setup(self) -> None:
        from ..architectures import nb201
        from ..architectures.deeparchitect import make_space

        self.nb201 = self.table_cls(**self.settings)
        self.space = make_space("nb201")
        self.fidelity = None
        self.optimum = self.nb201.optimum
        self._from_arch = nb201.from_arch_string
        self._cells: dict[Any, dict[str, str]] = {}  # canonical value list -> the table's cell dict

    def cell(self, config: Any) -> dict[str, str]:
        """The table's configuration of a value list (validated once, then cached)."""
        try:
            return self._cells[config]
        except (KeyError, TypeError):  # unseen, or not hashable (a list from JSON)
            pass
        values = self.space.validate(config)
        cell = self._cells.get(values)
        if cell is None:
            cell = self._cells[values] = self._from_arch(self.space.nb201_arch(values))
        return cell

    def arch(self, config: Any) -> str:
        """The NAS-Bench-201 architecture string of a value list."""
        return self.space.nb201_arch(self.space.validate(config))

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        """The table's validation error of ONE seed replicate (chosen by ``seed``) and training seconds."""
        if fidelity is not None:
            self.check(config, fidelity)  # no fidelity axis: a one-line error
        loss, cost = self.nb201.query(self.cell(config), None, seed)
        return Result(loss, cost)

    def test_loss(self, config: Any) -> float:
        """The table's test error (mean over seeds) of the cell."""
        return self.nb201.test_loss(self.cell(config))

    def provenance(self) -> dict[str, Any]:
        return {**self.nb201.provenance(), "space": "deeparchitect nb201 (value list -> architecture string)",
                "table_benchmark": self.nb201.name}

    def describe(self) -> str:
        return super().describe() + f"\n  evaluated through {self.nb201.name}'s table: " + \
            self.nb201.describe().split("\n", 1)[0]


def _make(task: str, table_cls: type[Benchmark]) -> type[_DaNb201Table]:
    name, classes, what = NB201_TASKS[task]
    return type(f"DaNb201{task.capitalize()}", (_DaNb201Table,), {
        "__doc__": f"The DeepArchitect NAS-Bench-201 cell on {what} from the project's table ({classes} classes).",
        "__module__": __name__, "name": f"da_{name}", "table_cls": table_cls,
        "description": f"NAS-Bench-201 cell written in the DeepArchitect language on {what}, from {name}'s "
                       "table: validation error of one training seed, training seconds as cost"})


DaNb201Cifar10 = _make("cifar10", Nb201Cifar10)
DaNb201Cifar100 = _make("cifar100", Nb201Cifar100)
DaNb201Imagenet16 = _make("imagenet16", Nb201Imagenet16)
