"""NAS-Bench-201 cells trained live on CIFAR-10 with the benchmark's own recipe.

The space is the one the tables use (:func:`benchsuite.architectures.nb201.cell_space`:
six edges, or an architecture string), the network is
:func:`benchsuite.architectures.nb201.build_network`, and training goes through the suite's
one harness (:func:`benchsuite.training.train`) on NAS-Bench-201's ``cifar10-valid`` split
(:func:`benchsuite.datasets.cifar10_splits` ``"nb201"``: 25,000 training and 25,000
validation images from the official training set; test = the official 10,000).

Recipe (Dong & Yang, ICLR 2020, Sec. 2.3 and Table 1; the authors' config
``configs/nas-benchmark/hyper-opts/200E.config`` and data code
``lib/datasets/get_dataset_with_transform.py`` in D-X-Y/AutoDL-Projects):

* SGD with Nesterov momentum 0.9, weight decay 5e-4, batch 256, cross entropy;
* learning rate 0.1 annealed by cosine to 0 (``eta_min`` 0) over the run, no warm-up;
* 200 epochs at full fidelity;
* augmentation: random 32x32 crop of the image padded by 4 pixels, random horizontal flip
  with probability 1/2 (the harness's ``augment=True``);
* normalisation with the authors' CIFAR-10 constants, mean (125.3, 123.0, 113.9) and std
  (63.0, 62.1, 66.7) in 0..255 units (not the statistics of our split);
* network C = 16 channels, N = 5 cells per stage (``channels``, ``cells_per_stage``).

Differences from the published runs, so that live and tabular errors compare in
distribution, not run for run: the 25k/25k split has the same sizes and class balance
as the authors' ``cifar-split.txt`` but other members (see ``benchsuite.datasets``); the
JPEG copy of CIFAR-10 in the shared data folder is a lossy re-encoding (a user with the
official batches gets those); the evaluation seed sets initialisation, shuffling and
augmentation through the harness, not the authors' seeds 777/888/999.

Fidelity: ``epochs``, 1..``epochs`` (default 200), rounded to a whole number. Each
fidelity is one complete training whose cosine schedule ends at that epoch, like
NAS-Bench-201's separate 12-epoch runs (``hp=12``); it is not the epoch-e point of a
200-epoch run (the harness's schedule horizon is the run's own length). The loss is the
validation error (fraction misclassified) after the last epoch; the cost is the measured
seconds of the whole training (build, data placement, epochs, evaluation); ``info``
carries the per-epoch curve, the parameter count, the device, the architecture string,
its canonical form and whether it is connected. A diverging run is a failed trial with its
reason, never an exception.

Zero networks: a cell whose output cannot be reached from the input through non-``none``
edges (:func:`~benchsuite.architectures.nb201.is_connected` is False, 341 cells) makes a
network whose prediction does not depend on the image. They are trained like every other
cell (NAS-Bench-201 trained and recorded them too, at chance accuracy: about 90 % error
on CIFAR-10), so the live benchmark and the table agree on them; ``info["connected"]`` is
False.

``test_loss`` trains a fresh run at full fidelity from a fixed seed and returns its error
on the test images (``n_test`` of them, class-stratified when fewer than 10,000); it is
cached per exact configuration, so it is a function of the configuration alone.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..architectures import nb201
from ..benchmark import Requirements, Result
from ..datasets import CIFAR_SETTINGS
from ..live import CIFAR_TEST_SETTINGS, TEST_EVAL_ONE_RUN, LiveTrainingBenchmark
from ..settings import DEVICE_SETTINGS, NONNEGATIVE, NONNEGATIVE_INT, POSITIVE_INT, Setting

if TYPE_CHECKING:  # torch-heavy modules are imported when the first network trains
    from ..datasets import ArraySplits
    from ..training import TrainSettings

# lib/datasets/get_dataset_with_transform.py (D-X-Y/AutoDL-Projects), 0..255 units
NB201_MEAN = (125.3, 123.0, 113.9)
NB201_STD = (63.0, 62.1, 66.7)
# configs/nas-benchmark/hyper-opts/200E.config
EPOCHS = 200
BATCH_SIZE = 256
LR = 0.1
MOMENTUM = 0.9
WEIGHT_DECAY = 5e-4
CHANNELS = 16  # paper Table 1: initial channel 16
CELLS_PER_STAGE = 5  # paper Table 1: N = 5


class Nb201Live(LiveTrainingBenchmark):
    space_class = nb201.NB201CellSpace
    """NAS-Bench-201 cells trained live on CIFAR-10 (cifar10-valid split, the benchmark's recipe)."""

    name = "nb201_live"
    description = ("NAS-Bench-201 cell (6 edges x 5 ops) trained live on CIFAR-10 with the benchmark's recipe "
                   "(SGD-Nesterov, cosine 0.1 -> 0, 200 epochs); validation error, measured seconds")
    requirements = Requirements(data=("cifar10/cifar-10-python.tar.gz",), gpu="optional")
    presets = {"cpu_small": {"channels": 8, "cells_per_stage": 1, "n_train": 2000, "n_val": 1000, "n_test": 1000,
                              "epochs": 4, "device": "cpu", "threads": 1}}
    paper_cost = "about 16 minutes per 200-epoch trial on one H200 at 4.7 s per epoch, perf/results/gpu_epochs_h200.json"
    # tiny data, few steps, no test-set training: check_benchmark in seconds (tests/test_every_plugin.py)
    test_settings = {"channels": 4, "cells_per_stage": 1, "n_train": 256, "n_val": 256, "n_test": 256,
                     "epochs": 2, "batch_size": 128, "test_eval": False, "device": "cpu", "threads": 1}
    settings_spec = {
        **CIFAR_SETTINGS,
        "channels": Setting(CHANNELS, "channels of the first stage (NAS-Bench-201: 16; then 2x, 4x)", type=int,
                            domain=POSITIVE_INT),
        "cells_per_stage": Setting(CELLS_PER_STAGE, "cells per stage N (NAS-Bench-201: 5)", type=int,
                                   domain=NONNEGATIVE_INT),
        "n_train": Setting(25_000, "training images (cifar10-valid: 25,000; fewer = fixed stratified subset)",
                           type=int, domain=POSITIVE_INT),
        "n_val": Setting(25_000, "validation images (cifar10-valid: 25,000)", type=int, domain=POSITIVE_INT),
        **CIFAR_TEST_SETTINGS,
        "epochs": Setting(EPOCHS, "epochs at full fidelity (NAS-Bench-201: 200); the fidelity is 1..epochs",
                          type=int, domain=POSITIVE_INT),
        "batch_size": Setting(BATCH_SIZE, "minibatch size (200E.config: 256)", type=int, domain=POSITIVE_INT),
        "lr": Setting(LR, "initial learning rate, cosine-annealed to 0 (200E.config: 0.1)", type=float,
                      domain=NONNEGATIVE),
        "weight_decay": Setting(WEIGHT_DECAY, "SGD weight decay (200E.config: 0.0005)", type=float,
                                domain=NONNEGATIVE),
        "augment": Setting(True, "random crop (pad 4) + horizontal flip, as NAS-Bench-201", type=bool),
        "test_eval": TEST_EVAL_ONE_RUN,
        **DEVICE_SETTINGS,
    }

    def setup(self) -> None:
        self.space = nb201.cell_space()
        self.fidelity = self.make_fidelity()

    # -- data and training ---------------------------------------------------------------------
    def load(self) -> ArraySplits:
        """The cifar10-valid split (subset per the settings, NAS-Bench-201's normalisation)."""
        from ..datasets import sized_cifar10_splits

        st = self.settings
        return sized_cifar10_splits("nb201", st["data_dir"] or None, st["source"], st["n_train"], st["n_val"],
                                    st["n_test"], st["data_seed"], NB201_MEAN, NB201_STD)

    def train_settings(self, epochs: int, eval_test: bool = False) -> TrainSettings:
        """The harness settings of one training run (NAS-Bench-201's recipe, see the module docstring)."""
        from ..training import TrainSettings

        st = self.settings
        return TrainSettings(epochs=int(epochs), batch_size=st["batch_size"], optimizer="sgd", lr=st["lr"],
                             momentum=MOMENTUM, nesterov=True, weight_decay=st["weight_decay"], schedule="cosine",
                             augment=st["augment"], task="classification", device=st["device"], amp=st["amp"],
                             threads=st["threads"], eval_test=eval_test)

    def builder(self, config: dict[str, Any], data: ArraySplits) -> Callable[[], Any]:
        """Builds the cell's network through the space's ``build`` (channels and cells per stage from the settings)."""
        st = self.settings
        n_classes = max(data.n_classes, 10)
        channels, cells = st["channels"], st["cells_per_stage"]

        shape = (data.x_train.shape[3], *data.x_train.shape[1:3])

        def build() -> Any:
            return self.space.build(config, in_shape=shape, n_out=n_classes, channels=channels, cells_per_stage=cells)

        return build

    def _info(self, config: dict[str, Any], epochs: int) -> dict[str, Any]:
        return {"arch": nb201.to_arch_string(config), "canonical": nb201.canonical_string(config),
                "connected": nb201.is_connected(config), "epochs": epochs}

    # -- the interface -----------------------------------------------------------------------------
    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        """Train the cell's network for ``fidelity`` epochs (rounded); loss = final validation error."""
        config, fid = self.check(config, fidelity)  # the space accepts dicts and architecture strings
        epochs = self._rounded(fid)
        outcome = self._train(config, epochs, seed, eval_test=False)
        return outcome.to_result(extra=self._info(config, epochs))

    def provenance(self) -> dict[str, Any]:
        st = self.settings
        return {
            "recipe": "NAS-Bench-201 (Dong & Yang, ICLR 2020) Table 1 / 200E.config",
            "train_settings": self.train_provenance(
                ("batch_size", "optimizer", "nesterov", "momentum", "lr", "schedule", "weight_decay", "augment",
                 "amp", "device"), fixed={"schedule": "cosine to 0 per iteration"}),
            "network": {"channels": st["channels"], "cells_per_stage": st["cells_per_stage"], "num_classes": 10},
            "normalisation": {"mean": list(NB201_MEAN), "std": list(NB201_STD)},
            "data": self.pick_settings(("n_train", "n_val", "n_test", "data_seed")),
            # loaded by the first evaluation anyway; here so the hash is always recorded
            **self.data_provenance(self.splits()),
        }
