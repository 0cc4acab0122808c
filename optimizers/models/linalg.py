"""Gaussian-process linear algebra shared by every GP-style model (GP-EI, Fabolas, COMBO).

Kernels differ between plugins (Matern-5/2, Fabolas' product kernel, COMBO's diffusion
kernel); the posterior and marginal-likelihood algebra is the same and lives here once.
All functions accept a leading batch axis (one slice per hyperparameter sample).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.lapack import dtrtrs

JITTERS = (0.0, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2)


class CholeskyError(np.linalg.LinAlgError):
    """The matrix stayed non positive definite after the largest jitter."""


def cholesky_jitter(K: np.ndarray) -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of ``K`` (batched ``(..., n, n)``), adding diagonal jitter if needed.

    Jitter escalates through :data:`JITTERS`, scaled by the mean diagonal; returns the
    factor and the relative jitter that succeeded.
    """
    try:  # the common case first: no jitter, nothing else computed (COMBO's sampler calls this ~4,000x per ask)
        return np.linalg.cholesky(K), 0.0
    except np.linalg.LinAlgError:
        pass
    scale = float(np.mean(np.diagonal(K, axis1=-2, axis2=-1))) if K.shape[-1] else 1.0
    eye = np.eye(K.shape[-1])
    for jitter in JITTERS[1:]:
        try:
            return np.linalg.cholesky(K + (jitter * scale) * eye), jitter
        except np.linalg.LinAlgError:
            continue
    raise CholeskyError(f"kernel matrix not positive definite even with jitter {JITTERS[-1]:g} x mean diagonal")


def cholesky_each(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower Cholesky factors of a batch ``(S, n, n)`` without jitter, and which succeeded ``(S,)``.

    Reads only the lower triangle of each matrix. One batched LAPACK call when every matrix is
    positive definite; otherwise matrix by matrix, with NaN factors where it failed (an MCMC
    walker there is rejected, the others are kept).
    """
    try:
        return np.linalg.cholesky(K), np.ones(K.shape[0], dtype=bool)
    except np.linalg.LinAlgError:
        L = np.full(K.shape, np.nan)
        ok = np.zeros(K.shape[0], dtype=bool)
        for i in range(K.shape[0]):
            try:
                L[i] = np.linalg.cholesky(K[i])
                ok[i] = True
            except np.linalg.LinAlgError:
                continue
        return L, ok


def extend_cholesky(L: np.ndarray, K12: np.ndarray, K22: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Factors of ``[[A, K12], [K12^T, K22]]`` from the factors ``L`` of ``A``, batched ``(S, ...)``.

    The data grew by ``k`` rows: ``B = L^-1 K12``, ``C = chol(K22 - B^T B)`` and the new factor is
    ``[[L, 0], [B^T, C]]``, ``O(n^2 k)`` instead of ``O(n^3)``. Only the lower triangle of ``K22``
    is read. Returns the factors and which succeeded (NaN factors where the Schur complement was
    not positive definite).
    """
    S, n, k = K12.shape
    B = tri_solve(L, K12)
    C, ok = cholesky_each(K22 - np.swapaxes(B, 1, 2) @ B)
    out = np.zeros((S, n + k, n + k))
    out[:, :n, :n] = L
    out[:, n:, :n] = np.swapaxes(B, 1, 2)
    out[:, n:, n:] = C
    out[~ok] = np.nan
    return out, ok


def tri_inv(L: np.ndarray) -> np.ndarray:
    """Inverses of lower-triangular factors ``(..., n, n)`` (LAPACK ``trtri``, one call per matrix)."""
    from scipy.linalg.lapack import dtrtri

    flat = L.reshape((-1,) + L.shape[-2:])
    out = np.empty_like(flat)
    for i in range(flat.shape[0]):
        inv, info = dtrtri(flat[i], lower=1)
        if info != 0:  # a zero on the diagonal: fall back to the general triangular solve
            inv = solve_triangular(flat[i], np.eye(L.shape[-1]), lower=True, check_finite=False)
        out[i] = np.tril(inv)
    return out.reshape(L.shape)


def tri_solve(L: np.ndarray, B: np.ndarray, trans: bool = False) -> np.ndarray:
    """Solve ``L X = B`` (or ``L^T X = B``) for lower-triangular ``L``, batched over leading axes.

    LAPACK wants column-major matrices: a C-ordered ``L`` is handed over as its transpose (an
    upper-triangular, column-major view, no copy) with the transposition flag flipped, so that
    repeated solves against the same factors (an acquisition search) do not copy them each time.
    """
    def one(Li: np.ndarray, Bi: np.ndarray) -> np.ndarray:
        if Li.flags.c_contiguous and not Li.flags.f_contiguous:
            if Li.dtype == np.float64 and Bi.dtype == np.float64:
                # LAPACK's trtrs itself, as solve_triangular calls it for this (Fortran-ordered) view, without
                # its argument checks: the same numbers, a tenth of the overhead on small systems
                x, info = dtrtrs(Li.T, Bi, lower=0, trans=0 if trans else 1)
                if info > 0:
                    raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {info - 1}")
                return x
            return solve_triangular(Li.T, Bi, lower=False, trans="N" if trans else "T", check_finite=False)
        return solve_triangular(Li, Bi, lower=True, trans="T" if trans else "N", check_finite=False)

    if L.ndim == 2:
        return one(L, B)
    out = np.empty(np.broadcast_shapes(L.shape[:-2], B.shape[:-2]) + B.shape[-2:])
    Lb = np.broadcast_to(L, out.shape[:-2] + L.shape[-2:])
    Bb = np.broadcast_to(B, out.shape)
    for idx in np.ndindex(out.shape[:-2]):
        out[idx] = one(Lb[idx], Bb[idx])
    return out


def cho_solve(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve ``(L L^T) X = B`` given the lower factor ``L``."""
    return tri_solve(L, tri_solve(L, B), trans=True)


def log_marginal_likelihood(L: np.ndarray, y_centred: np.ndarray) -> np.ndarray:
    """Gaussian log evidence ``log N(y | 0, K)`` from ``K``'s Cholesky factor; batched."""
    alpha = tri_solve(L, y_centred[..., None])[..., 0]
    n = y_centred.shape[-1]
    logdet = np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1)
    return -0.5 * (alpha**2).sum(-1) - logdet - 0.5 * n * math.log(2 * math.pi)


def posterior(L: np.ndarray, y_centred: np.ndarray, K_star: np.ndarray, k_star_diag: np.ndarray,
              full_cov: bool = False, K_star_star: np.ndarray | None = None,
              alpha: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean (centred) and variance (or covariance) at test points.

    ``L``: ``(..., n, n)`` factor of the training covariance (noise included);
    ``K_star``: ``(..., n, m)`` train-test cross covariance; ``k_star_diag``: ``(..., m)`` prior
    variances at the test points (noise-free); ``K_star_star`` ``(..., m, m)`` when ``full_cov``;
    ``alpha``: ``K^-1 y_centred`` (:func:`cho_solve`) when the caller keeps it between calls.
    """
    if alpha is None:
        alpha = cho_solve(L, y_centred[..., None])[..., 0]
    mean = np.einsum("...nm,...n->...m", K_star, alpha)
    V = tri_solve(L, K_star)
    if full_cov:
        if K_star_star is None:
            raise ValueError("full_cov needs K_star_star")
        return mean, K_star_star - np.swapaxes(V, -1, -2) @ V
    var = k_star_diag - (V**2).sum(-2)
    return mean, np.maximum(var, 1e-12 * np.maximum(k_star_diag, 1e-300))
