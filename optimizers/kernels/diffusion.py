"""COMBO's ARD diffusion kernel on a graph Cartesian product (combo.txt Sec. 2.2-2.3).

combo.txt Sec. 2.2-2.3: every discrete variable ``i`` gets a small graph ``G_i`` (a path
for ordinal and integer variables, a complete graph for categorical ones); the search
space is the graph Cartesian product ``G = G_1 x ... x G_d``, whose Laplacian is the
Kronecker sum of the ``L_i``. The ARD diffusion kernel ``exp(-sum_i beta_i L_i)`` (eq. 5)
is then the Kronecker product of per-variable kernels

    K_i(v, v') = sum_k exp(-beta_i lambda_ik) u_ik(v) u_ik(v')

built from each small graph's eigensystem, computed once (closed forms exist for paths
and complete graphs). The full graph is never formed: ``K(x, x') = prod_i K_i(x_i, x'_i)``.
As in the reference implementation (combo.txt Supp. 2.1, remark after eq. 8) each factor
is divided by ``mean_k exp(-beta_i lambda_ik)`` for numerical stability, which makes the
mean of its diagonal 1 (exactly 1 everywhere for complete graphs).

Vectorised evaluation: the product is taken in log space, where it becomes a sum over
variables that a one-hot matrix product computes for all pairs at once (``n`` training
points x ``m`` candidates x ``S`` hyperparameter samples, one BLAS call per sample).

The GP around it (priors, slice sampling, predictions) is :mod:`benchsuite.optimizers.models.graph_gp`.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

GRAPH_KINDS = ("path", "complete")
# log(0) stand-in for kernel entries that underflow (far-apart levels of a long path at small beta)
_LOG_FLOOR = -700.0


# --------------------------------------------------------------------------------------------
# per-variable graphs
# --------------------------------------------------------------------------------------------
def path_laplacian(n: int) -> np.ndarray:
    """Laplacian ``D - A`` of the path graph on ``n`` vertices (levels in order)."""
    A = np.zeros((n, n))
    idx = np.arange(n - 1)
    A[idx, idx + 1] = A[idx + 1, idx] = 1.0
    return np.diag(A.sum(1)) - A


def complete_laplacian(n: int) -> np.ndarray:
    """Laplacian ``n I - 1 1^T`` of the complete graph on ``n`` vertices."""
    return n * np.eye(n) - np.ones((n, n))


@dataclass(frozen=True)
class GraphEigensystem:
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of one variable's Laplacian."""

    kind: str
    n: int
    eigvals: np.ndarray
    eigvecs: np.ndarray

    def laplacian(self) -> np.ndarray:
        """The Laplacian matrix this eigensystem diagonalises."""
        return path_laplacian(self.n) if self.kind == "path" else complete_laplacian(self.n)

    def adjacency_table(self) -> np.ndarray:
        """``(n, max_degree)`` table of each vertex's neighbours, padded with -1."""
        if self.kind == "path":
            tab = np.stack([np.arange(self.n) - 1, np.arange(self.n) + 1], axis=1)
            tab[tab >= self.n] = -1
            return tab
        if self.n == 1:
            return -np.ones((1, 0), dtype=int)
        full = np.tile(np.arange(self.n), (self.n, 1))
        return full[~np.eye(self.n, dtype=bool)].reshape(self.n, self.n - 1)


def path_eigensystem(n: int) -> GraphEigensystem:
    """Closed form for a path: ``lambda_k = 2 - 2 cos(pi k / n)``, ``u_k(j) ~ cos(pi k (j + 1/2) / n)``."""
    k = np.arange(n)
    vals = 2.0 - 2.0 * np.cos(np.pi * k / n)
    vecs = np.cos(np.pi * np.outer(np.arange(n) + 0.5, k) / n)
    vecs *= np.where(k == 0, math.sqrt(1.0 / n), math.sqrt(2.0 / n))
    vals[0] = 0.0
    return GraphEigensystem("path", n, vals, vecs)


def complete_eigensystem(n: int) -> GraphEigensystem:
    """Closed form for a complete graph: eigenvalue 0 (constant vector) and ``n`` (Helmert basis)."""
    vecs = np.zeros((n, n))
    vecs[:, 0] = 1.0 / math.sqrt(n)
    for k in range(1, n):
        vecs[:k, k] = 1.0
        vecs[k, k] = -float(k)
        vecs[:, k] /= math.sqrt(k * (k + 1))
    vals = np.full(n, float(n))
    vals[0] = 0.0
    return GraphEigensystem("complete", n, vals, vecs)


def graph_eigensystem(kind: str, n: int) -> GraphEigensystem:
    """Eigensystem of the ``kind`` graph (``"path"`` or ``"complete"``) on ``n`` vertices."""
    if n < 1:
        raise ValueError(f"a variable graph needs at least one vertex, got {n}")
    if kind == "path":
        return path_eigensystem(n)
    if kind == "complete":
        return complete_eigensystem(n)
    raise ValueError(f"unknown graph kind {kind!r}; choose one of {GRAPH_KINDS}")


# --------------------------------------------------------------------------------------------
# the ARD diffusion kernel
# --------------------------------------------------------------------------------------------
class DiffusionKernel:
    """ARD diffusion kernel on the Cartesian product of per-variable graphs (combo.txt eq. 5).

    Inputs are integer codes, shape ``(n, d)``; ``beta`` has one entry per variable. The
    kernel has unit amplitude; the GP multiplies it by the signal variance.
    """

    def __init__(self, graphs: Sequence[GraphEigensystem]):
        if not graphs:
            raise ValueError("a diffusion kernel needs at least one variable graph")
        self.graphs = list(graphs)
        self.d = len(self.graphs)
        self.n_levels = np.array([g.n for g in self.graphs], dtype=int)
        # one-hot columns for levels 1..n_i-1 of each variable (level 0 is the baseline)
        self.offsets = np.concatenate([[0], np.cumsum(self.n_levels - 1)])
        self.width = int(self.offsets[-1])
        self.adjacency = [g.adjacency_table() for g in self.graphs]
        self.pair_dtype = np.uint8 if int(self.n_levels.max()) ** 2 <= 256 else np.int32

    # -- per-variable factors ----------------------------------------------------------------
    def factor(self, i: int, beta: float | np.ndarray) -> np.ndarray:
        """Normalised factor ``U exp(-beta Lambda) U^T / mean(exp(-beta Lambda))``; batched over ``beta``."""
        g = self.graphs[i]
        b = np.asarray(beta, dtype=float)
        e = np.exp(-b[..., None] * g.eigvals)  # (..., n_i)
        e = e / e.mean(-1, keepdims=True)
        return np.einsum("ak,...k,bk->...ab", g.eigvecs, e, g.eigvecs)

    def log_factor(self, i: int, beta: float | np.ndarray) -> np.ndarray:
        """Log of :meth:`factor`, with underflowed entries set to a large negative floor."""
        F = self.factor(i, beta)
        with np.errstate(divide="ignore"):
            return np.maximum(np.log(np.maximum(F, 0.0)), _LOG_FLOOR)

    def log_spectrum_bounds(self, beta: np.ndarray | float = 1.0) -> tuple[float, float]:
        """Log of the smallest and largest eigenvalue of the normalised kernel on the full graph."""
        b = np.broadcast_to(np.asarray(beta, dtype=float), (self.d,))
        lo = hi = 0.0
        for g, bi in zip(self.graphs, b):
            e = np.exp(-bi * g.eigvals)
            log_mean = math.log(e.mean())
            hi += -log_mean  # exp(-beta * 0) / mean
            lo += -bi * float(g.eigvals.max()) - log_mean
        return lo, hi

    # -- Gram matrices -------------------------------------------------------------------------
    def onehot(self, X: np.ndarray) -> np.ndarray:
        """``(n, width)`` indicator of levels ``>= 1`` (level 0 is each variable's baseline)."""
        X = np.asarray(X)
        out = np.zeros((X.shape[0], self.width))
        r, i = np.nonzero(X > 0)  # all variables at once: one scatter
        out[r, self.offsets[i] + X[r, i] - 1] = 1.0
        return out

    def _row_terms(self, log_factors: list[np.ndarray], X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-row baseline ``sum_i F_i[x_i, 0]`` ``(S, n)`` and level offsets ``(S, n, width)``."""
        S = log_factors[0].shape[0]
        base = np.zeros((S, X.shape[0]))
        A = np.empty((S, X.shape[0], self.width))
        for i, F in enumerate(log_factors):
            rows = F[:, X[:, i], :]  # (S, n, n_i)
            base += rows[:, :, 0]
            A[:, :, self.offsets[i]:self.offsets[i + 1]] = rows[:, :, 1:] - rows[:, :, :1]
        return base, A

    def log_factors(self, betas: np.ndarray) -> list[np.ndarray]:
        """Per-variable log factors for ``betas`` ``(S, d)``: a list of ``(S, n_i, n_i)``."""
        betas = np.atleast_2d(np.asarray(betas, dtype=float))
        return [self.log_factor(i, betas[:, i]) for i in range(self.d)]

    def log_gram(self, betas: np.ndarray, X1: np.ndarray, X2: np.ndarray | None = None,
                 log_factors: list[np.ndarray] | None = None) -> np.ndarray:
        """``log K(X1, X2)`` for each of ``S`` beta vectors: ``(S, n1, n2)``.

        ``sum_i F_i[x1_i, x2_i] = sum_i F_i[x1_i, 0] + (offsets of x1) @ onehot(x2)^T``: one
        matrix product per sample instead of ``d`` gathers of ``n1 x n2`` entries.
        """
        X1 = np.asarray(X1)
        X2 = X1 if X2 is None else np.asarray(X2)
        lf = self.log_factors(betas) if log_factors is None else log_factors
        base, A = self._row_terms(lf, X1)
        return base[:, :, None] + A @ self.onehot(X2).T

    def log_diag(self, betas: np.ndarray, X: np.ndarray, log_factors: list[np.ndarray] | None = None) -> np.ndarray:
        """``log K(x, x)`` for each row of ``X`` and each sample: ``(S, n)``."""
        X = np.asarray(X)
        lf = self.log_factors(betas) if log_factors is None else log_factors
        out = np.zeros((lf[0].shape[0], X.shape[0]))
        for i, F in enumerate(lf):
            out += F[:, X[:, i], X[:, i]]
        return out

    def gram(self, beta: np.ndarray, X1: np.ndarray, X2: np.ndarray | None = None) -> np.ndarray:
        """Kernel matrix ``K(X1, X2)`` for one beta vector ``(d,)``."""
        return np.exp(self.log_gram(np.asarray(beta, dtype=float)[None, :], X1, X2))[0]

    def pair_index(self, X: np.ndarray) -> np.ndarray:
        """``(d, n, n)`` flat indices ``x_ai * n_i + x_bi`` into each factor, for fast Gram updates."""
        X = np.asarray(X)
        out = np.empty((self.d, X.shape[0], X.shape[0]), dtype=self.pair_dtype)
        for i in range(self.d):
            out[i] = X[:, i][:, None] * self.n_levels[i] + X[:, i][None, :]
        return out

    # -- graph structure -----------------------------------------------------------------------
    def neighbours(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All vertices adjacent to the rows of ``X`` in the product graph.

        Returns ``(nbrs, owner)``: neighbour codes ``(k, d)`` and the row of ``X`` each came from.
        """
        X = np.asarray(X)
        blocks, owners = [], []
        rows = np.arange(X.shape[0])
        for i, tab in enumerate(self.adjacency):
            if tab.shape[1] == 0:
                continue
            nb = tab[X[:, i]]  # (n, deg)
            r, c = np.nonzero(nb >= 0)
            Y = X[r].copy()
            Y[:, i] = nb[r, c]
            blocks.append(Y)
            owners.append(rows[r])
        if not blocks:
            return np.empty((0, self.d), dtype=X.dtype), np.empty(0, dtype=int)
        return np.concatenate(blocks), np.concatenate(owners)
