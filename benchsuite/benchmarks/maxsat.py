"""Weighted MaxSAT instances of the MaxSAT Evaluation 2018 (combo.txt Sec. 4.3, Supp. 4.3).

Three instances without hard clauses, as COMBO used them: ``maxsat28``
(maxcut-johnson8-2-4, 28 variables, 420 clauses), ``maxsat43`` (maxcut-hamming8-2,
43 variables, 1806 clauses) and ``maxsat60`` (frb10-6-4, 60 variables, 698 clauses).
The files are read from the data directory (:mod:`benchsuite.data`, checksums in its
manifest), never shipped with the package.

Objective (combo.txt Sec. 4.3): clause weights are standardised, ``w' = (w - mean) / std``
(population std, as numpy's default in the original code), and the loss is minus the total
standardised weight of the satisfied clauses. Standardisation changes the problem: clauses
with below-average weight get negative weight, so satisfying them is penalised. On
frb10-6-4 every unit clause has weight 1 (negative after standardisation) and every binary
clause weight 61 (positive), so the all-false assignment, which satisfies exactly the
binary clauses, attains the upper bound ``sum(max(w', 0))``: the standardised optimum is
known (-195.65, the value COMBO reached in combo.txt Table 3), while the header's
"optimum value = 38928" refers to the raw weights. For the two max-cut instances the
standardised optimum is not known; ``optimum`` is ``None`` there.

Evaluation is vectorised: literals are stored as two dense 0/1 clause-by-variable
matrices, and a batch of assignments is evaluated with two matrix products.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..benchmark import CodeBenchmark, Requirements
from ..data import data_file, sha256_of
from ..errors import DataError
from ..settings import NONNEGATIVE, Setting
from ..space import Binary, Space


class WCNF:
    """A parsed weighted CNF file: weights and literals of its clauses."""

    def __init__(self, n_vars: int, weights: np.ndarray, clauses: list[np.ndarray], top: float | None,
                 comments: list[str]):
        self.n_vars = n_vars
        self.weights = weights
        self.clauses = clauses  # each an int array of literals (+v / -v, 1-based)
        self.top = top
        self.comments = comments

    @classmethod
    def read(cls, path: str | Path) -> WCNF:
        """Parse a DIMACS ``.wcnf`` file (``p wcnf nvars nclauses [top]`` header)."""
        path = Path(path)
        n_vars = n_clauses = None
        top = None
        weights: list[float] = []
        clauses: list[np.ndarray] = []
        comments: list[str] = []
        with open(path) as fh:
            for lineno, line in enumerate(fh, 1):
                s = line.strip()
                if not s:
                    continue
                if s.startswith("c"):
                    comments.append(s[1:].strip())
                    continue
                if s.startswith("p"):
                    parts = s.split()
                    if len(parts) < 4 or parts[1] != "wcnf":
                        raise DataError(f"{path}:{lineno}: expected a 'p wcnf <vars> <clauses> [top]' header")
                    n_vars, n_clauses = int(parts[2]), int(parts[3])
                    top = float(parts[4]) if len(parts) > 4 else None
                    continue
                if n_vars is None:
                    raise DataError(f"{path}:{lineno}: clause before the 'p wcnf' header")
                tokens = s.split()
                try:
                    weight, lits = float(tokens[0]), [int(t) for t in tokens[1:]]
                except ValueError:
                    raise DataError(f"{path}:{lineno}: cannot parse clause {s!r}") from None
                if len(lits) < 2 or lits[-1] != 0 or 0 in lits[:-1]:
                    raise DataError(f"{path}:{lineno}: a clause is 'weight lit ... 0' on one line, got {s!r}")
                weights.append(weight)
                clauses.append(np.array(lits[:-1], dtype=np.int64))
        if n_vars is None:
            raise DataError(f"{path}: no 'p wcnf' header")
        if len(clauses) != n_clauses:
            raise DataError(f"{path}: header says {n_clauses} clauses, found {len(clauses)}")
        for c in clauses:
            if c.size == 0 or np.abs(c).max() > n_vars:
                raise DataError(f"{path}: clause {c.tolist()} is empty or names a variable beyond {n_vars}")
        return cls(n_vars, np.array(weights), clauses, top, comments)


class MaxSATEvaluator:
    """Vectorised weighted-MaxSAT objective: satisfied weight of a batch of 0/1 assignments."""

    def __init__(self, n_vars: int, clauses: list[np.ndarray], weights: np.ndarray):
        n_c = len(clauses)
        self.pos = np.zeros((n_vars, n_c), dtype=np.float32)
        self.neg = np.zeros((n_vars, n_c), dtype=np.float32)
        for j, c in enumerate(clauses):
            self.pos[c[c > 0] - 1, j] = 1.0
            self.neg[-c[c < 0] - 1, j] = 1.0
        self.n_neg = self.neg.sum(axis=0)
        self.weights = np.asarray(weights, dtype=np.float64)

    def satisfied(self, x: np.ndarray) -> np.ndarray:
        """Boolean ``(n, clauses)``: which clauses each assignment satisfies."""
        x = np.atleast_2d(np.asarray(x, dtype=np.float32))
        # true positive literals + false negative literals; n_neg - x @ neg counts the latter
        return (x @ self.pos + (self.n_neg - x @ self.neg)) > 0.5

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Total weight of the satisfied clauses of each row of ``x``."""
        return self.satisfied(x).astype(np.float64) @ self.weights


class _MaxSAT(CodeBenchmark):
    """One MaxSAT Evaluation 2018 instance; subclasses name the file."""

    file: ClassVar[str] = ""
    settings_spec = {
        "data_dir": Setting("", "data directory (default: $BENCHSUITE_DATA or ../shared/data)", type=str),
        "cost_s": Setting(1.0, "simulated seconds each evaluation costs", domain=NONNEGATIVE),
    }

    def setup(self) -> None:
        self._path = data_file(self.file, self.settings["data_dir"] or None, download=False)
        cnf = WCNF.read(self._path)
        if cnf.top is not None and (cnf.weights >= cnf.top).any():
            raise DataError(f"{self._path}: has hard clauses (weight >= top); COMBO's instances have none")
        self.cnf = cnf
        w = cnf.weights
        self.weights = (w - w.mean()) / w.std()  # combo.txt Sec. 4.3: mean 0, std 1
        self.evaluator = MaxSATEvaluator(cnf.n_vars, cnf.clauses, self.weights)
        self.space = Space([Binary(f"x{i + 1:02d}") for i in range(cnf.n_vars)])
        # sum of the positive standardised weights bounds the satisfied weight; where an
        # all-equal assignment attains it, the optimum is certified
        bound = float(np.clip(self.weights, 0, None).sum())
        best = max(float(self.evaluator(np.full((1, cnf.n_vars), v))[0]) for v in (0, 1))
        self.optimum = -bound if np.isclose(best, bound, rtol=0, atol=1e-9) else None

    def evaluate_codes(self, codes: np.ndarray) -> np.ndarray:
        """Loss (minus satisfied standardised weight) of each row of an ``(n, d)`` 0/1 array."""
        return -self.evaluator(codes)

    def provenance(self) -> dict[str, Any]:
        return {"data_file": self.file, "sha256": sha256_of(self.file, self.settings["data_dir"] or None)}


class MaxSAT28(_MaxSAT):
    """maxcut-johnson8-2-4: 28 variables, 420 soft clauses."""

    name = "maxsat28"
    description = "weighted MaxSAT 2018 maxcut-johnson8-2-4, 28 binary variables (combo.txt Sec. 4.3)"
    file = "maxsat2018/maxcut-johnson8-2-4.clq.wcnf"
    requirements = Requirements(data=(file,))


class MaxSAT43(_MaxSAT):
    """maxcut-hamming8-2: 43 variables, 1806 soft clauses."""

    name = "maxsat43"
    description = "weighted MaxSAT 2018 maxcut-hamming8-2, 43 binary variables (combo.txt Sec. 4.3)"
    file = "maxsat2018/maxcut-hamming8-2.clq.wcnf"
    requirements = Requirements(data=(file,))


class MaxSAT60(_MaxSAT):
    """frb10-6-4: 60 variables, 698 soft clauses."""

    name = "maxsat60"
    description = "weighted MaxSAT 2018 frb10-6-4, 60 binary variables (combo.txt Sec. 4.3)"
    file = "maxsat2018/frb-frb10-6-4.wcnf"
    requirements = Requirements(data=(file,))
