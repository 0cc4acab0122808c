"""GP kernels on spaces without coordinates, built from cached pairwise distances.

A configuration (a layer graph, a chain, any object with a hashable key) is given an
integer id by a :class:`DistanceStore`; the GP of :mod:`benchsuite.optimizers.models.gp` then sees a
one-column input ``X = [[id], ...]`` and :class:`DistanceSumKernel` looks the distances up.
The store keeps every distance between the configurations it was given ("persistent":
evaluated, running and seed networks) and grows by computing only the new rows; candidates
that are scored once (an acquisition optimiser's proposals) are "scratch" ids whose rows
against the persistent set are computed in one batch and dropped at the next batch.

The kernel is the NASBOT kernel in the form of the authors' code (nasbot.txt Sec. 4; authors'
``gp/kernel.py`` ``SumOfExpSumOfDistsKernel`` used by ``nn/nn_comparators.py``
``DistSumNNKernel``)::

    k(x, x') = sum_g alpha_g * exp(-sum_k beta_gk * D_gk(x, x') ** p_g)

over ``G`` groups of ``K`` distances each (NASBOT: group 0 the OTMANN distance ``d`` with
power 1, group 1 the normalised ``d-bar`` with power 2, and ``K`` = 4 structural weights).
Such a kernel need not be positive semi-definite (nasbot.txt Sec. 4); a Gram matrix whose
Cholesky factorisation fails is projected onto the PSD cone (negative eigenvalues set to 0),
as the authors' ``gp_core._get_cholesky_decomp`` does ("project_first"; we project only when
the plain factorisation fails, which gives the same matrix whenever it is already PSD).

:func:`exp_sample_hyperparameters` is the authors' hyperparameter procedure
(``gp_core.GPFitter``, option ``rand_exp_sampling``, the default of ``opt/gp_bandit.py``):
draw hyperparameters uniformly in a log-space box, weight each draw by its marginal
likelihood, ``p_i ~ exp(lml_i)``, and resample a few of them.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from ..models import gp
from ..models.linalg import tri_solve
from .continuous import Kernel

#: scratch ids start here (kept exactly representable in the float64 input column)
SCRATCH_OFFSET = 1 << 40
_LOG_2PI = math.log(2.0 * math.pi)

PairwiseFn = Callable[[Sequence[Any], Sequence[Any]], np.ndarray]


class DistanceStore:
    """Pairwise distances ``(G, K, n, n)`` between configurations, cached and grown row by row.

    ``pairwise(a, b)`` returns the distances between two lists of configurations as an
    array ``(G, K, len(a), len(b))``; ``key`` maps a configuration to a hashable canonical
    form, so the same configuration always gets the same id.
    """

    def __init__(self, pairwise: PairwiseFn, key: Callable[[Any], Hashable], n_groups: int, n_dists: int):
        self.pairwise, self.key = pairwise, key
        self.G, self.K = int(n_groups), int(n_dists)
        self._ids: dict[Hashable, int] = {}
        self.configs: list[Any] = []
        self._D = np.zeros((self.G, self.K, 0, 0))
        self._scratch: np.ndarray | None = None  # (G, K, m, n_persistent at the time)
        self.n_pair_evals = 0  # pairs computed so far (for tests and timing reports)

    def __len__(self) -> int:
        return len(self.configs)

    def _pair(self, a: Sequence[Any], b: Sequence[Any]) -> np.ndarray:
        # the same list object twice tells the distance function the block is symmetric
        out = np.asarray(self.pairwise(a, b), dtype=float)
        if out.shape != (self.G, self.K, len(a), len(b)):
            raise ValueError(f"distance function returned shape {out.shape}, "
                             f"expected {(self.G, self.K, len(a), len(b))}")
        self.n_pair_evals += len(a) * len(b)
        return out

    def add(self, configs: Sequence[Any]) -> np.ndarray:
        """Persistent ids of ``configs``; unseen ones are added (only their rows are computed)."""
        keys = [self.key(c) for c in configs]
        new: list[Any] = []
        for c, k in zip(configs, keys):
            if k not in self._ids:
                self._ids[k] = len(self.configs) + len(new)
                new.append(c)
        if new:
            n_old, n_new = len(self.configs), len(new)
            n = n_old + n_new
            if n > self._D.shape[-1]:  # grow by doubling so that adding rows stays amortised O(n)
                cap = max(n, 2 * self._D.shape[-1], 16)
                D = np.zeros((self.G, self.K, cap, cap))
                D[:, :, :n_old, :n_old] = self._D[:, :, :n_old, :n_old]
                self._D = D
            if n_old:
                cross = self._pair(new, self.configs)  # (G, K, n_new, n_old)
                self._D[:, :, n_old:n, :n_old] = cross
                self._D[:, :, :n_old, n_old:n] = np.swapaxes(cross, -1, -2)
            block = self._pair(new, new)
            # a pseudo-distance is symmetric with a zero diagonal; remove solver round-off
            block = 0.5 * (block + np.swapaxes(block, -1, -2))
            idx = np.arange(n_new)
            block[:, :, idx, idx] = 0.0
            self._D[:, :, n_old:n, n_old:n] = block
            self.configs.extend(new)
            self._scratch = None  # its rows were computed against the smaller persistent set
        return np.array([self._ids[k] for k in keys], dtype=np.int64)

    def id_of(self, config: Any, key: Hashable | None = None) -> int | None:
        """Persistent id of ``config`` (or of its already computed ``key``), or ``None``."""
        return self._ids.get(self.key(config) if key is None else key)

    def set_candidates(self, configs: Sequence[Any], against: np.ndarray | None = None) -> np.ndarray:
        """Scratch ids for ``configs``, with their distances to the persistent ids ``against`` (default: all).

        One batch of rows is computed; it replaces the previous batch. Restricting ``against``
        to a GP's inputs skips rows the posterior never reads; looking up a skipped distance
        later raises.
        """
        n = len(self.configs)
        cols = np.arange(n) if against is None else np.unique(np.asarray(against, dtype=np.int64))
        if len(cols) and (cols[0] < 0 or cols[-1] >= n):
            raise IndexError("distance store: unknown id in 'against'")
        self._scratch = np.full((self.G, self.K, len(configs), n), np.nan)
        if len(cols) and len(configs):
            self._scratch[:, :, :, cols] = self._pair(list(configs), [self.configs[i] for i in cols])
        return SCRATCH_OFFSET + np.arange(len(configs), dtype=np.int64)

    def block(self, ids1: np.ndarray, ids2: np.ndarray) -> np.ndarray:
        """Distances ``(G, K, n1, n2)`` between two id arrays (scratch x scratch only on the diagonal)."""
        ids1 = np.asarray(ids1, dtype=np.int64)
        ids2 = np.asarray(ids2, dtype=np.int64)
        s1, s2 = ids1 >= SCRATCH_OFFSET, ids2 >= SCRATCH_OFFSET
        n = len(self.configs)
        if (ids1[~s1] >= n).any() or (ids2[~s2] >= n).any() or (ids1 < 0).any() or (ids2 < 0).any():
            raise IndexError("distance store: unknown id")
        if not s1.any() and not s2.any():
            return self._D[:, :, ids1[:, None], ids2[None, :]]
        if (s1.any() or s2.any()) and self._scratch is None:
            raise IndexError("distance store: scratch ids are stale (the persistent set grew); score candidates again")
        out = np.zeros((self.G, self.K, len(ids1), len(ids2)))
        p1, p2 = np.flatnonzero(~s1), np.flatnonzero(~s2)
        q1, q2 = np.flatnonzero(s1), np.flatnonzero(s2)
        if len(p1) and len(p2):
            out[:, :, p1[:, None], p2[None, :]] = self._D[:, :, ids1[p1][:, None], ids2[p2][None, :]]
        if len(q1) and len(p2):
            out[:, :, q1[:, None], p2[None, :]] = self._scratch[:, :, (ids1[q1] - SCRATCH_OFFSET)[:, None],
                                                                ids2[p2][None, :]]
        if len(p1) and len(q2):
            rows = self._scratch[:, :, (ids2[q2] - SCRATCH_OFFSET)[:, None], ids1[p1][None, :]]
            out[:, :, p1[:, None], q2[None, :]] = np.swapaxes(rows, -1, -2)
        if np.isnan(out).any():
            raise IndexError("distance store: a candidate's distance to this id was not computed (see 'against')")
        if len(q1) and len(q2) and (ids1[q1][:, None] != ids2[q2][None, :]).any():
            # distances among candidates are never needed by predict(); refuse rather than guess
            raise IndexError("distance store: distances between two scratch candidates are not computed")
        return out


def project_psd(K: np.ndarray) -> np.ndarray:
    """The nearest symmetric PSD matrix in Frobenius norm (negative eigenvalues set to 0)."""
    S = 0.5 * (K + K.T)
    w, V = np.linalg.eigh(S)
    return (V * np.maximum(w, 0.0)) @ V.T


class DistanceSumKernel(Kernel):
    """``sum_g alpha_g exp(-sum_k beta_gk D_gk^p_g)`` on ids of a :class:`DistanceStore`.

    Parameters per row: ``[log alpha_g for g] + [log beta_gk for g, k]``. The prior is
    uniform on a box in log space (``alpha_bounds`` for every alpha, ``beta_bounds[g]`` for
    the betas of group ``g``), the box the authors sample from (``nn/nn_gp.py``).
    """

    def __init__(self, store: DistanceStore, powers: Sequence[float], alpha_bounds: tuple[float, float],
                 beta_bounds: Sequence[tuple[float, float]], project: bool = True):
        if len(powers) != store.G or len(beta_bounds) != store.G:
            raise ValueError(f"need one power and one beta box per distance group ({store.G})")
        self.store = store
        self.powers = tuple(float(p) for p in powers)
        self.project = bool(project)
        lo = [math.log(alpha_bounds[0])] * store.G
        hi = [math.log(alpha_bounds[1])] * store.G
        for g in range(store.G):
            lo += [math.log(beta_bounds[g][0])] * store.K
            hi += [math.log(beta_bounds[g][1])] * store.K
        self.lower, self.upper = np.array(lo), np.array(hi)

    @property
    def n_params(self) -> int:
        return self.store.G * (1 + self.store.K)

    def param_names(self) -> list[str]:
        G, K = self.store.G, self.store.K
        return [f"log_alpha{g}" for g in range(G)] + [f"log_beta{g}_{k}" for g in range(G) for k in range(K)]

    def log_prior(self, P: np.ndarray) -> np.ndarray:
        P = np.atleast_2d(P)
        inside = np.all((P >= self.lower) & (P <= self.upper), axis=-1)
        return np.where(inside, -float(np.log(self.upper - self.lower).sum()), -np.inf)

    def sample_prior(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.lower + rng.random((n, self.n_params)) * (self.upper - self.lower)

    def clip(self, P: np.ndarray) -> np.ndarray:
        return np.clip(np.atleast_2d(P), self.lower, self.upper)

    def from_distances(self, P: np.ndarray, D: np.ndarray) -> np.ndarray:
        """Kernel values ``(S, n1, n2)`` from a distance stack ``D`` ``(G, K, n1, n2)``."""
        P = np.atleast_2d(P)
        G, K = self.store.G, self.store.K
        n1, n2 = D.shape[-2:]
        alpha = np.exp(P[:, :G])
        beta = np.exp(P[:, G:]).reshape(-1, G, K)
        out = np.zeros((P.shape[0], n1, n2))
        for g in range(G):
            Dg = D[g] if self.powers[g] == 1.0 else D[g] ** self.powers[g]
            E = (beta[:, g, :] @ Dg.reshape(K, n1 * n2)).reshape(-1, n1, n2)
            np.negative(E, out=E)
            np.exp(E, out=E)
            E *= alpha[:, g, None, None]
            out += E
        return out

    def __call__(self, P: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        ids1 = np.asarray(X1, dtype=float)[:, 0].astype(np.int64)
        ids2 = np.asarray(X2, dtype=float)[:, 0].astype(np.int64)
        K = self.from_distances(P, self.store.block(ids1, ids2))
        if self.project and ids1.shape == ids2.shape and np.array_equal(ids1, ids2):
            for s in range(K.shape[0]):
                K[s] = psd_or_projected(K[s])
        return K

    def diag(self, P: np.ndarray, X: np.ndarray) -> np.ndarray:
        # D(x, x) = 0 for a pseudo-distance, so every group contributes its alpha
        alpha = np.exp(np.atleast_2d(P)[:, :self.store.G]).sum(axis=1)
        return np.broadcast_to(alpha[:, None], (alpha.shape[0], np.asarray(X).shape[0])).copy()


def psd_or_projected(K: np.ndarray) -> np.ndarray:
    """``K`` itself if a Cholesky factorisation (with 1e-10 relative jitter) succeeds, else its PSD projection."""
    n = K.shape[0]
    if n == 0:
        return K
    jitter = 1e-10 * max(float(np.mean(np.diag(K))), 1e-300)
    try:
        np.linalg.cholesky(K + jitter * np.eye(n))
        return K
    except np.linalg.LinAlgError:
        return project_psd(K)


def _lml_batch(K: np.ndarray, noise: np.ndarray, yc: np.ndarray) -> np.ndarray:
    """Log marginal likelihoods of ``(S, n, n)`` noise-free Gram matrices with noise ``(S,)``, centred ``yc``."""
    n = K.shape[-1]
    idx = np.arange(n)
    Kn = K.copy()
    Kn[:, idx, idx] += noise[:, None]
    try:
        L = np.linalg.cholesky(Kn)
    except np.linalg.LinAlgError:  # some slice is not PSD: factor one by one, projecting the failures
        L = np.empty_like(Kn)
        for s in range(Kn.shape[0]):
            try:
                L[s] = np.linalg.cholesky(Kn[s])
            except np.linalg.LinAlgError:
                Ks = project_psd(K[s])
                Ks[idx, idx] += noise[s]
                L[s] = np.linalg.cholesky(Ks)
    alpha = tri_solve(L, np.broadcast_to(yc[None, :, None], (K.shape[0], n, 1)))[..., 0]
    logdet = np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1)
    return -0.5 * (alpha**2).sum(-1) - logdet - 0.5 * n * _LOG_2PI


def exp_sample_hyperparameters(kernel: DistanceSumKernel, X: np.ndarray, y_std: np.ndarray, mean_std: float,
                               noise_bounds: tuple[float, float], rng: np.random.Generator,
                               n_samples: int, n_keep: int, chunk_entries: int = 2_000_000) -> np.ndarray:
    """Hyperparameter rows ``(n_keep, n_hyper)`` for :class:`~benchsuite.optimizers.models.gp.GPPosterior`.

    The authors' ``rand_exp_sampling`` (``gp/gp_core.py``): ``n_samples`` draws uniform in
    the kernel's log-space box and in ``log noise`` on ``noise_bounds`` (variances of the
    standardised targets ``y_std``), each weighted by ``exp(lml)``; ``n_keep`` of them are
    resampled with replacement by those weights. The constant mean is fixed at ``mean_std``
    (the authors use the median of the observations). Rows are ``[kernel params, mean, log noise]``.
    """
    X = np.asarray(X, dtype=float)
    y_std = np.asarray(y_std, dtype=float)
    n = X.shape[0]
    kp = kernel.n_params
    P = kernel.sample_prior(rng, int(n_samples))
    log_noise = rng.uniform(math.log(noise_bounds[0]), math.log(noise_bounds[1]), size=int(n_samples))
    ids = X[:, 0].astype(np.int64)
    D = kernel.store.block(ids, ids)  # looked up once, reused for every draw
    yc = y_std - float(mean_std)
    lml = np.empty(int(n_samples))
    step = max(1, int(chunk_entries // max(1, n * n)))
    for a in range(0, int(n_samples), step):
        b = min(a + step, int(n_samples))
        K = kernel.from_distances(P[a:b], D)
        lml[a:b] = _lml_batch(K, np.exp(log_noise[a:b]), yc)
    lml = np.where(np.isfinite(lml), lml, -np.inf)
    if not np.isfinite(lml).any():
        w = np.full(len(lml), 1.0 / len(lml))
    else:
        w = np.exp(lml - lml.max())
        w /= w.sum()
    pick = rng.choice(len(w), size=int(n_keep), replace=True, p=w)
    theta = np.empty((int(n_keep), gp.n_hyper(kernel)))
    theta[:, :kp] = P[pick]
    theta[:, kp] = float(mean_std)
    theta[:, kp + 1] = log_noise[pick]
    return theta
