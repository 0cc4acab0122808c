"""The covariance of Jenatton et al.'s tree-structured model (TreeBO; ICML 2017), as a GP kernel.

Jenatton, Archambeau, Gonzalez and Seeger, "Bayesian optimization with tree-structured dependencies"
(ICML 2017), abstract (the part of the paper we could read; its model section is a gap): the surrogate
"combines independent Gaussian Processes with a linear model that encodes a tree-based dependency
structure and can transfer information between overlapping decision sequences". Our reading, for a
configuration ``x`` under leaf ``l``::

    f(x) = c^T phi(x) + g_l(x_l),    c ~ N(0, sigma_c^2 I),    g_l ~ GP(0, k_l) independent per leaf

``phi(x)`` collects the shared variables along the root-to-leaf path (with an indicator per node, so
that leaves below a node share its offset); ``x_l`` the leaf's own variables. Integrating ``c`` out
gives one GP whose covariance this kernel is::

    k(x, x') = sigma_c^2 phi(x)^T phi(x') + [l(x) = l(x')] k_l(x_l, x'_l)

so the suite's GP posterior (``optimizers/models/gp.py``: predictions, pending trials, fantasies)
serves the model unchanged. The abstract's claim that "posterior inference scales more favorably with
the number of observations" than a GP points at the weight-space form of the same posterior
(Woodbury over ``c``, ``O(sum_l n_l^3 + D^3)`` instead of ``O(n^3)``), which pays off when the shared
features are fewer than the observations. NASBOT's chains have more shared features than a run has
observations (108 columns for 12-layer MLPs, at most 100 networks), so the ``n x n`` form is the
cheaper of the two exact ones here; tests/test_treebo.py checks that both give the same posterior.

``k_l`` is a Matern-5/2 kernel (the suite's GP kernel) with one length scale per group of leaf
inputs (a layer's type, units, stride) shared by all layers and all leaves, and one amplitude: a
run of 30 networks spread over 11 leaves cannot estimate hyperparameters per leaf or per layer
(our choice; the text we could read does not say how the paper parametrises ``k_l``).

The inputs are rows of a :class:`ChainTree`-like encoder (``benchsuite.architectures.chain_tree``):
column 0 the leaf, the rest read by the encoder's ``shared_features``, ``leaf_inputs`` and
``leaf_groups``.
"""
from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from .continuous import Kernel, _matern52_of_r, _uniform_logpdf

#: log box of the GP amplitude (standardised targets; our choice)
LOG_AMP_BOUNDS = (math.log(1e-3), math.log(10.0))
#: log box of the leaf length scales (a type change and the whole unit range are distance 1; our choice)
LOG_LS_BOUNDS = (math.log(0.05), math.log(20.0))
#: log box of the prior variance of the linear weights (standardised targets; our choice)
LOG_LIN_BOUNDS = (math.log(1e-4), math.log(1.0))


class TreeEncoder(Protocol):
    """What the kernel reads from a tree (``benchsuite.architectures.chain_tree.ChainTree`` is one)."""

    n_groups: int

    def shared_features(self, rows: np.ndarray) -> np.ndarray:
        """``phi`` of each row, ``(n, D)``."""

    def leaf_inputs(self, rows: np.ndarray, leaf: int) -> np.ndarray:
        """The leaf GP's inputs of rows under ``leaf``, ``(n, d_leaf)``."""

    def leaf_groups(self, leaf: int) -> np.ndarray:
        """Length-scale group of each leaf-input column."""


class TreeKernel(Kernel):
    """``sigma_c^2 phi^T phi' + [same leaf] amp Matern52(x_l, x'_l)``; parameters
    ``[log amp, log length scale per group..., log sigma_c^2]``, batched over rows of parameters."""

    def __init__(self, encoder: TreeEncoder | Any):
        self.encoder = encoder
        self.n_groups = int(encoder.n_groups)

    @property
    def n_params(self) -> int:
        return 2 + self.n_groups

    def param_names(self) -> list[str]:
        return ["log_amp"] + [f"log_ls{g}" for g in range(self.n_groups)] + ["log_lin_var"]

    def bounds(self) -> list[tuple[float, float]]:
        """The box of each parameter (the prior is uniform on it)."""
        return [LOG_AMP_BOUNDS] + [LOG_LS_BOUNDS] * self.n_groups + [LOG_LIN_BOUNDS]

    def log_prior(self, P: np.ndarray) -> np.ndarray:
        P = np.atleast_2d(P)
        return sum(_uniform_logpdf(P[:, [k]], lo, hi) for k, (lo, hi) in enumerate(self.bounds()))

    def sample_prior(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.column_stack([rng.uniform(lo, hi, size=n) for lo, hi in self.bounds()])

    def clip(self, P: np.ndarray) -> np.ndarray:
        P = np.array(np.atleast_2d(P), dtype=float, copy=True)
        for k, (lo, hi) in enumerate(self.bounds()):
            P[:, k] = np.clip(P[:, k], lo, hi)
        return P

    def _split(self, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        P = np.atleast_2d(P)
        return np.exp(P[:, 0]), np.exp(P[:, 1:1 + self.n_groups]), np.exp(P[:, 1 + self.n_groups])

    def __call__(self, P: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        amp, ls, lin = self._split(P)
        X1, X2 = np.atleast_2d(X1), np.atleast_2d(X2)
        enc = self.encoder
        K = lin[:, None, None] * (enc.shared_features(X1) @ enc.shared_features(X2).T)[None]
        leaf1, leaf2 = X1[:, 0].astype(int), X2[:, 0].astype(int)
        for leaf in np.intersect1d(leaf1, leaf2):
            i, j = np.flatnonzero(leaf1 == leaf), np.flatnonzero(leaf2 == leaf)
            A, B = enc.leaf_inputs(X1[i], int(leaf)), enc.leaf_inputs(X2[j], int(leaf))
            groups = enc.leaf_groups(int(leaf))
            r2 = np.zeros((len(amp), len(i), len(j)))
            for g in range(self.n_groups):
                cols = groups == g
                if not cols.any():
                    continue
                a, b = A[:, cols], B[:, cols]
                d2 = (a**2).sum(1)[:, None] + (b**2).sum(1)[None, :] - 2.0 * a @ b.T
                r2 += np.maximum(d2, 0.0)[None] / ls[:, g, None, None] ** 2
            block = _matern52_of_r(np.sqrt(r2)) * amp[:, None, None]
            K[np.ix_(np.arange(len(amp)), i, j)] += block
        return K

    def diag(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        amp, _, lin = self._split(P)
        phi = self.encoder.shared_features(np.atleast_2d(X))
        return lin[:, None] * (phi**2).sum(1)[None, :] + amp[:, None]
