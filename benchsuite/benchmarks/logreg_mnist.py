"""Logistic regression on MNIST, trained live: the HPOlib benchmark of dngo.txt Table 1.

The problem is Snoek, Larochelle and Adams (2012, Sec. 4.2), which HPOlib packaged and
dngo.txt Table 1 reuses: multinomial logistic regression trained by minibatch SGD, four
hyperparameters, loss = validation classification error. Ranges, from Snoek et al. (2012)
Sec. 4.2: "the learning rate for stochastic gradient descent, on a log scale from 0 to 1,
the l2 regularization parameter between 0 and 1, the minibatch size from 20 to 2000 and
the number of learning epochs from 5 to 2000". A log scale cannot start at 0: the learning
rate's lower end, 1e-6, is ours.

Data: the MNIST files the suite already reads; 50,000 training and 10,000 validation
images from the official training set (a fixed seeded split; the split is ours, the
papers do not give theirs), the 10,000 official test
images for the incumbent's test error. Training goes through the suite's one harness
(:mod:`benchsuite.training`: seeded, measured cost, divergence -> failed trial), plain SGD
(no momentum), constant learning rate, l2 as weight decay, no augmentation.

CPU cost: the full problem trains up to 2,000 epochs on 50,000 images, far beyond a CPU
budget. ``epochs_factor`` multiplies the epoch count (at least 1 epoch) and ``n_train``
shrinks the training set; the defaults are the paper's problem, protocols that must run
on CPU say what they changed (``protocols/dngo_table1.yaml``).
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..benchmark import Benchmark, Requirements, Result
from ..settings import POSITIVE, POSITIVE_INT, Setting
from ..space import Float, Integer, Space

MNIST_FILES = ("mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz",
               "mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz")
SPLIT_SEED = 20120  # fixed train/validation split of the official training set (ours)
_CACHE: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def logreg_space() -> Space:
    """Snoek et al. (2012) Sec. 4.2 ranges (lower learning-rate end ours)."""
    return Space([Float("learning_rate", 1e-6, 1.0, log=True), Float("l2", 0.0, 1.0),
                  Integer("batch_size", 20, 2000), Integer("epochs", 5, 2000)])


def mnist_splits(data_dir: str | None, n_train: int, n_val: int) -> Any:
    """The fixed seeded split as :class:`~benchsuite.datasets.ArraySplits` (cached per process)."""
    from .. import data
    from ..datasets import ArraySplits

    key = (str(data.data_dir(data_dir or None)), n_train, n_val)
    with _LOCK:
        if key not in _CACHE:
            x_tr, y_tr = data.load_mnist("train", data_dir or None)
            x_te, y_te = data.load_mnist("test", data_dir or None)
            perm = np.random.default_rng(SPLIT_SEED).permutation(len(y_tr))
            tr, va = perm[:n_train], perm[len(y_tr) - n_val:]
            sha = ",".join(data.sha256_of(n, data_dir or None)[:12] for n in MNIST_FILES)
            _CACHE[key] = ArraySplits(x_tr[tr], y_tr[tr].astype(np.int64), x_tr[va], y_tr[va].astype(np.int64),
                                      x_te, y_te.astype(np.int64), scheme=f"mnist {n_train}/{n_val}/10000",
                                      source="idx", sha256=sha)
        return _CACHE[key]


def _build() -> Any:
    import torch

    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(28 * 28, 10))


class LogregMnist(Benchmark):
    """Multinomial logistic regression on MNIST trained by SGD (Snoek et al. 2012; dngo.txt Table 1)."""

    needs = ("torch",)  # the [nas] extra
    name = "logreg_mnist"
    description = ("logistic regression on MNIST trained live by SGD: learning rate, l2, batch size, epochs "
                   "(Snoek et al. 2012 Sec. 4.2 / HPOlib; dngo.txt Table 1); loss = validation error")
    kind = "live"
    requirements = Requirements(data=MNIST_FILES, gpu="optional")
    # tiny data, few steps, no test-set training: check_benchmark in seconds (tests/test_every_plugin.py)
    test_settings = {"n_train": 500, "n_val": 200, "epochs_factor": 0.002, "device": "cpu", "threads": 1}
    settings_spec = {
        "data_dir": Setting("", "data directory; empty = $BENCHSUITE_DATA or ../shared/data", type=str),
        "n_train": Setting(50000, "training images drawn from the official training set (the usual "
                                  "50,000 / 10,000 split; ours)", domain=POSITIVE_INT),
        "n_val": Setting(10000, "validation images (the rest of the official training set)", domain=POSITIVE_INT),
        "epochs_factor": Setting(1.0, "multiplies the configuration's epochs (1 = the paper; less for CPU budgets)",
                                 domain=POSITIVE),
        "device": Setting("auto", "torch device: auto, cpu, cuda", type=str),
        "threads": Setting(1, "torch CPU threads per evaluation", domain=POSITIVE_INT),
    }

    def setup(self) -> None:
        self.space = logreg_space()
        self.fidelity = None
        self._test: dict[tuple, float] = {}

    def prepare(self) -> None:
        """Load (and verify) the MNIST split before the first evaluation."""
        self._data()

    def _data(self) -> Any:
        st = self.settings
        return mnist_splits(st["data_dir"] or None, int(st["n_train"]), int(st["n_val"]))

    def _settings(self, config: dict) -> Any:
        from ..training import TrainSettings

        st = self.settings
        epochs = max(1, int(round(config["epochs"] * float(st["epochs_factor"]))))
        return TrainSettings(epochs=epochs, batch_size=int(config["batch_size"]), optimizer="sgd",
                             lr=float(config["learning_rate"]), momentum=0.0, nesterov=False,
                             weight_decay=float(config["l2"]), schedule="constant", augment=False,
                             task="classification", device=st["device"], amp=False,
                             threads=int(st["threads"]), eval_test=True)

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        """Train once from ``seed``; loss = validation error, cost = measured seconds."""
        from ..training import train

        config, _ = self.check(config, fidelity)
        out = train(_build, self._data(), self._settings(config), seed)
        if not out.failed and out.test_loss is not None:
            self._test.setdefault(self.space.key(config), float(out.test_loss))
        return out.to_result({"epochs": self._settings(config).epochs})

    def test_loss(self, config: Any) -> float:
        """Test error of the configuration (from its evaluation when it ran here, else trained now, seed 0)."""
        config, _ = self.check(config, None)
        key = self.space.key(config)
        if key not in self._test:
            from ..training import train

            out = train(_build, self._data(), self._settings(config), 0)
            self._test[key] = float("nan") if out.failed or out.test_loss is None else float(out.test_loss)
        return self._test[key]

    def provenance(self) -> dict[str, Any]:
        st = self.settings
        return {"split_seed": SPLIT_SEED, "n_train": st["n_train"], "n_val": st["n_val"],
                "epochs_factor": st["epochs_factor"]}
