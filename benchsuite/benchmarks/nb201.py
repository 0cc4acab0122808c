"""NAS-Bench-201 from the project's table: the 15,625 cells on CIFAR-10, CIFAR-100, ImageNet16-120.

The space is the NAS-Bench-201 cell (:mod:`benchsuite.architectures.nb201`): six categorical
edges, so every optimizer of the suite for discrete spaces runs on it unchanged; a
configuration is a dict of the edges or the official architecture string
``|op~0|+|op~0|op~1|+|op~0|op~1|op~2|``. The table (``tables/nas_bench_201/nas_bench_201.h5``,
built from the shared data by ``tables/nas_bench_201/build.py``) holds per cell:

* ``val_error``: validation error (a fraction) of each training seed, 2 or 3 per cell
  (CIFAR-10: the cifar10-valid protocol, trained on 25k images and validated on the other
  25k; CIFAR-100 and ImageNet16-120: the published validation split). ``evaluate`` returns
  ONE seed's value, replicate ``seed % n_seeds``, never the mean;
* ``cost``: that cell's training time in seconds, as published (the same for every seed);
* ``test_error``: 1 - test accuracy after 200 epochs, mean over seeds (``test_loss``).

The data has only the final (200-epoch) numbers: these benchmarks have no fidelity axis
(``nb201_live`` trains the same network with epochs as the fidelity). The known optimum is
the best test error of the table (94.37 % / 73.51 % / 47.31 % accuracy), the value regret is
measured against.
"""
from __future__ import annotations

from typing import ClassVar

from ..architectures.nb201 import NB201CellSpace, cell_space
from ..space import Space
from ..tabular import Table, TableSpec, TabularBenchmark

NB201_FILE = "nas_bench_201/nas_bench_201.h5"
NB201_REBUILD = "snakemake --cores 1 nb201_table (or python tables/nas_bench_201/build.py)"
# task group in the table -> (benchmark name, number of classes, dataset description)
NB201_TASKS = {
    "cifar10": ("nb201_cifar10", 10, "CIFAR-10 (cifar10-valid: 25k train / 25k validation)"),
    "cifar100": ("nb201_cifar100", 100, "CIFAR-100"),
    "imagenet16": ("nb201_imagenet16", 120, "ImageNet16-120 (16x16 images, 120 classes)"),
}


class _Nb201Tabular(TabularBenchmark):
    space_class = NB201CellSpace
    """The NAS-Bench-201 cell looked up in the project's table (one subclass per dataset)."""

    task: ClassVar[str] = ""
    optimum_from = "test"
    optimum_label = "best test error in the table"
    describe_attrs = ("source", "recipe", "data_note", "built")

    def make_space(self, table: Table) -> Space:
        return cell_space()

    def describe(self) -> str:
        """The generic table description plus what the NAS-Bench-201 data does not have."""
        return super().describe() + ("\n  only final numbers (200 epochs) are tabulated: no fidelity axis here; "
                                     "nb201_live trains the same network with epochs as the fidelity")


def _make(task: str) -> type[_Nb201Tabular]:
    name, classes, what = NB201_TASKS[task]
    doc = f"NAS-Bench-201 cell on {what} from the project's table ({classes} classes)."
    return type(f"Nb201{task.capitalize()}", (_Nb201Tabular,), {
        "__doc__": doc, "__module__": __name__, "name": name, "task": task,
        "description": f"NAS-Bench-201 cell (15,625 architectures) on {what}, tabulated: "
                       "validation error of one training seed, training seconds as cost",
        "table_spec": TableSpec(NB201_FILE, task=task, rebuild=NB201_REBUILD)})


Nb201Cifar10 = _make("cifar10")
Nb201Cifar100 = _make("cifar100")
Nb201Imagenet16 = _make("imagenet16")
