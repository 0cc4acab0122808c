"""Entropy search (Hennig and Schuler 2012) as Fabolas uses it (fabolas.txt Sec. 2.2, Eq. 3, 5, 7).

The belief about the minimiser, p_min, lives on ``Nb`` representer points ``z_i`` drawn from
an EI-based measure ``b`` (Hennig and Schuler Sec. 2.3; RoBO's ``InformationGain``). The
acquisition of a candidate x is the expected drop of the entropy of p_min (relative to the
uniform measure) after observing y at x, averaged over y ~ p(y | x, D):

    a(x) = H[p_min | D] - E_y H[p_min | D + (x, y)],
    H[p] = - sum_i p_i (log p_i + log b(z_i))     (density p_i Nb b(z_i) on the cube).

**How p_min is approximated: Monte Carlo, not EP.** For every hyperparameter sample,
``n_samples`` joint draws ``f^(m)`` of the posterior at the representer points are taken once
(common random numbers), and p_min is the histogram of their argmins. The effect of a
hypothetical observation is applied to the *same* draws by Matheron's rule: with a joint
draw ``y^(m)`` of the observation (drawn from its conditional given ``f^(m)``), the updated
draw is ``f^(m) + cov(f, y) / var(y) * (y - y^(m))`` - an exact sample of the updated
posterior. The expectation over y uses Gauss-Hermite quadrature with ``n_innovations`` nodes
(the "innovations"). Why Monte Carlo: it is exact in the limit, needs no derivatives of an
EP fixed point (Hennig and Schuler's first/second-order expansion of log p_min in the
innovation), is easy to test against brute force, and the common random numbers make
differences between candidates far less noisy than the estimates themselves (a candidate
that is uncorrelated with the representers gets exactly zero gain). The cost is a
piecewise-constant acquisition in x, so it is maximised by candidate and local random
search rather than by gradients.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..models.gp import GPPosterior
from ..models.linalg import cho_solve, cholesky_jitter
from .optimize import sobol_points


def sample_representers(score: Callable[[np.ndarray], np.ndarray], dim: int, rng: np.random.Generator,
                        n_representers: int = 50, n_pool: int = 2000,
                        snap: Callable[[np.ndarray], np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Representer points drawn from the measure ``b(z) ~ score(z)`` (EI) on the unit cube.

    Sampling-importance-resampling: a Sobol pool of ``n_pool`` points is scored and
    ``n_representers`` distinct points are drawn with probability proportional to the score
    (Gumbel top-k). Returns the points and ``log b`` at them, ``b`` being the density
    relative to the uniform one (``mean over the pool = 1``). RoBO draws the same measure
    with emcee walkers on log EI; resampling a pool gives distinct points at a fixed cost.
    Falls back to uniform points when the score vanishes everywhere.
    """
    pool = sobol_points(rng, n_pool, dim)
    if snap is not None:
        pool = snap(pool)
    w = np.asarray(score(pool), dtype=float)
    w = np.where(np.isfinite(w) & (w > 0), w, 0.0)
    k = min(int(n_representers), pool.shape[0])
    if w.sum() <= 0:
        idx = rng.choice(pool.shape[0], size=k, replace=False)
        return pool[idx], np.zeros(k)
    p = w / w.sum()
    with np.errstate(divide="ignore"):
        keys = np.log(p) + rng.gumbel(size=p.size)
    idx = np.argsort(-keys, kind="stable")[:k]
    b = p[idx] * pool.shape[0]
    return pool[idx], np.log(np.maximum(b, 1e-300))


def entropy_of_counts(counts: np.ndarray, log_b: np.ndarray | float = 0.0) -> np.ndarray:
    """``-sum p (log p + log b)`` of argmin histograms ``counts`` (last axis = representers)."""
    p = counts / np.maximum(counts.sum(-1, keepdims=True), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(p) + log_b), 0.0)
    return -terms.sum(-1)


def _argmin_counts(F: np.ndarray) -> np.ndarray:
    """How often each representer is the minimum: ``(..., nb, M) -> (..., nb)``.

    Draws run along the last (contiguous) axis, so the minimum over representers is an
    elementwise reduction across rows - several times faster than ``argmin`` over a short
    last axis. An exact tie counts for every tied representer (normalised away later).
    """
    mn = F.min(axis=-2, keepdims=True)
    return np.count_nonzero(F == mn, axis=-1)


def _updated_argmin_counts(F: np.ndarray, c: np.ndarray, delta: np.ndarray,
                           slab: int = 1 << 19) -> np.ndarray:
    """Argmin counts of the updated draws ``F + c * delta`` (Matheron's rule), ``(S, K, m, nb)``.

    ``F`` is ``(S, nb, M)``, ``c`` ``(S, m, nb)`` and ``delta`` ``(S, K, m, M)``, all float32.
    The same float32 products and sums as forming the whole ``(S, K, m, nb, M)`` array at once
    (so bit-identical counts), but one slab of at most ``slab`` elements at a time, which stays
    in cache: the elementwise passes over memory were most of the entropy computation's time
    (perf/decision_times.py). The counts are laid out in memory as the whole array's were (its
    axis order, which numpy picks from the layouts of ``c`` and ``delta``; asked of an iterator
    that allocates the array without computing it), because the entropy's sum over
    representers rounds differently on another layout.
    """
    S, K, m, M = delta.shape
    nb = F.shape[1]
    whole = np.nditer([c[:, None, :, :, None], delta[:, :, :, None, :], None], flags=["zerosize_ok"],
                      op_flags=[["readonly"], ["readonly"], ["writeonly", "allocate"]], order="K").operands[2]
    order = sorted(range(4), key=lambda ax: -whole.strides[ax])  # outermost first
    del whole
    shape = (S, K, m, nb)
    out = np.empty([shape[ax] for ax in order], dtype=np.intp).transpose(np.argsort(order))
    step = max(1, slab // (nb * M))
    buf = np.empty((min(step, m), nb, M), dtype=np.float32)
    for s in range(S):
        for a in range(0, m, step):
            b = buf[:min(step, m - a)]
            cs = c[s, a:a + step, :, None]
            for k in range(K):
                np.multiply(cs, delta[s, k, a:a + step, None, :], out=b)
                b += F[s]
                out[s, k, a:a + step] = _argmin_counts(b)
    return out


class EntropySearch:
    """Expected information gain about the minimiser at fixed representer points, batched.

    ``post`` is the GP (any number of hyperparameter samples ``S``), ``Z`` the representer
    inputs (in the GP's input space, e.g. with s = 1 appended for Fabolas) and ``log_b`` the
    log representer density. Calling it on candidates ``(m, D)`` returns the gain averaged
    over the hyperparameter samples, ``(m,)``, in nats.
    """

    def __init__(self, post: GPPosterior, Z: np.ndarray, log_b: np.ndarray, rng: np.random.Generator,
                 n_samples: int = 500, n_innovations: int = 9, max_block: int = 20_000_000):
        self.post, self.Z = post, np.atleast_2d(Z)
        self.log_b = np.asarray(log_b, dtype=float)
        self.nb, self.M = self.Z.shape[0], int(n_samples)
        self.max_block = int(max_block)
        self.cache = post.cache(self.Z)
        mu_b, var_b, cov_bb = post.predict_cross(self.Z, self.cache)
        del var_b
        cov_bb = 0.5 * (cov_bb + np.swapaxes(cov_bb, 1, 2))
        self.L_bb, _ = cholesky_jitter(cov_bb)
        eye = np.broadcast_to(np.eye(self.nb), cov_bb.shape)
        self.cov_inv = cho_solve(self.L_bb, eye)
        eps = rng.standard_normal((self.M, self.nb))
        self.D = np.einsum("sij,mj->smi", self.L_bb, eps)  # (S, M, nb) draws minus the mean
        # draws stored representer-major, (S, nb, M), for the fast minimum count
        self.F = np.ascontiguousarray(np.swapaxes(mu_b[:, None, :] + self.D, 1, 2)).astype(np.float32)
        self.eps_y = rng.standard_normal(self.M)
        nodes, weights = np.polynomial.hermite_e.hermegauss(int(n_innovations))
        self.nodes, self.weights = nodes, weights / weights.sum()
        self.counts0 = _argmin_counts(self.F)  # (S, nb)
        self.H0 = entropy_of_counts(self.counts0, self.log_b)  # (S,)

    def pmin(self) -> np.ndarray:
        """Current p_min at the representer points, ``(S, nb)``."""
        return self.counts0 / self.counts0.sum(-1, keepdims=True)

    def __call__(self, Xc: np.ndarray) -> np.ndarray:
        Xc = np.atleast_2d(np.asarray(Xc, dtype=float))
        S, K = self.post.n_samples, self.nodes.size
        per_cand = S * K * self.M * self.nb
        step = max(1, self.max_block // per_cand)
        out = [self._gain(Xc[a:a + step]) for a in range(0, Xc.shape[0], step)]
        return np.concatenate(out) if out else np.empty(0)

    def _gain(self, Xc: np.ndarray) -> np.ndarray:
        mu_x, var_x, cov_bx = self.post.predict_cross(Xc, self.cache)  # (S,m), (S,m), (S,nb,m)
        sy2 = var_x + self.post.noise_var[:, None]
        a = self.cov_inv @ cov_bx  # (S, nb, m)
        condvar = np.maximum(sy2 - (cov_bx * a).sum(1), 1e-12 * sy2)
        # joint draw of the observation given each representer draw
        y_samp = mu_x[:, None, :] + self.D @ a + np.sqrt(condvar)[:, None, :] * self.eps_y[None, :, None]  # (S,M,m)
        y_k = mu_x[:, None, :] + np.sqrt(sy2)[:, None, :] * self.nodes[None, :, None]  # (S,K,m)
        delta = (y_k[:, :, :, None] - np.swapaxes(y_samp, 1, 2)[:, None, :, :]).astype(np.float32)  # (S,K,m,M)
        c = np.swapaxes(cov_bx / sy2[:, None, :], 1, 2).astype(np.float32)  # (S,m,nb)
        counts = _updated_argmin_counts(self.F, c, delta)  # (S,K,m,nb) of the updated draws F + c * delta
        H = entropy_of_counts(counts, self.log_b)  # (S,K,m)
        EH = np.einsum("k,skm->sm", self.weights, H)
        return (self.H0[:, None] - EH).mean(0)
