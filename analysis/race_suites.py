"""The named sets of protocols ``benchsuite race --suite`` races (kept apart from :mod:`benchsuite.analysis.race`
so that the command line names them without importing pandas)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Suite:
    """A named set of protocols (each with all its benchmarks, or the labels given) and, optionally, the number
    of repetitions raced on each (at most the protocol's)."""

    name: str
    description: str
    members: tuple[tuple[str, tuple[str, ...] | None], ...]
    repetitions: int | None = None


#: the papers' protocols that run on a CPU, every benchmark and repetition (the record's cpu part)
CPU_PAPERS = ("combo_binary", "combo_ordinal_categorical", "combo_maxsat", "dngo_table1", "fabolas_svm_grid",
              "nasbot_cpu", "nb201", "deeparchitect_nb201")
#: repetitions of a quick race: the power statement of a race (``power``) says what this many can detect
QUICK_REPETITIONS = 6
SUITES: dict[str, Suite] = {
    "cpu-papers": Suite("cpu-papers", "the papers' CPU protocols: COMBO's three tables, DNGO's Table 1, Fabolas' "
                                      "Figure 2, NASBOT's CPU table, NAS-Bench-201 and DeepArchitect's searchers",
                        tuple((p, None) for p in CPU_PAPERS)),
    # synthetic problems and lookup tables only (no training), on discrete spaces, each with what `pip install`
    # brings: no data file to fetch (MaxSAT's instances are one) and no torch (COMBO's authors' instances are
    # drawn with torch's generator, so combo_binary's stand here on our own instances); random search, RE, SA and
    # TPE ran on every one of these benchmarks, with at least 25 repetitions
    "quick": Suite("quick", "a CI-sized race on synthetic problems and a lookup table (no training, no data file, "
                            "no torch): COMBO's Ising and contamination (lambda 1e-2, our instances), discretized "
                            "Branin, NAS-Bench-201 CIFAR-10 and CIFAR-100",
                   (("combo_binary_independent", ("ising_lambda1e-2", "contamination_lambda1e-2")),
                    ("combo_ordinal_categorical", ("branin_discrete",)),
                    ("nb201", ("nb201_cifar10", "nb201_cifar100"))), QUICK_REPETITIONS),
    # for an optimizer of continuous spaces only: DNGO's synthetic functions
    "quick-continuous": Suite("quick-continuous", "a CI-sized race on continuous synthetic functions (DNGO's "
                                                  "Branin and Hartmann-6)",
                              (("dngo_table1", ("branin", "hartmann6")),), 10),
}
