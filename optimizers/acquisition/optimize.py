"""Maximising an acquisition function over the unit cube.

Two stages, BoTorch style (models, acquisitions and their optimisation kept apart):

1. a global stage: a scrambled Sobol set plus a "spray" of points around given anchors
   (the best observations, as Spearmint does), all scored in one batched call;
2. a local stage from the best few: L-BFGS-B with a batched forward-difference gradient
   (for smooth acquisitions such as EI) or a shrinking-radius random local search (for
   Monte Carlo acquisitions such as entropy search, whose estimate is piecewise constant
   in x so that gradients carry no information).

Discrete variables and finite fidelity sets are handled by ``snap``: a map from cube
points to the nearest valid encoded point, applied to every point before it is scored.
The paper's maximiser was DIRECT plus CMA-ES (fabolas.txt Sec. 3.4); RoBO's released
Fabolas uses random sampling. ``scipy.optimize.direct`` is not used here because the
batched candidate search covers the cube with far fewer Python-level calls.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from benchsuite.settings import NONNEGATIVE_INT, POSITIVE_INT, Setting

AcqFn = Callable[[np.ndarray], np.ndarray]
SnapFn = Callable[[np.ndarray], np.ndarray]
AcqGradFn = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def sobol_points(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """``n`` scrambled Sobol points in ``[0, 1]^dim`` (seeded from ``rng``)."""
    from scipy.stats import qmc

    m = max(0, math.ceil(math.log2(max(n, 1))))
    pts = qmc.Sobol(dim, scramble=True, seed=int(rng.integers(0, 2**31 - 1))).random_base2(m)
    return pts[:n]


def _score(fn: AcqFn, X: np.ndarray, chunk: int) -> np.ndarray:
    out = [np.asarray(fn(X[a:a + chunk]), dtype=float) for a in range(0, X.shape[0], chunk)]
    v = np.concatenate(out) if out else np.empty(0)
    return np.where(np.isfinite(v), v, -np.inf)


def _top_distinct(X: np.ndarray, v: np.ndarray, k: int) -> np.ndarray:
    order = np.argsort(-v, kind="stable")
    picked: list[int] = []
    for i in order:
        if all(np.max(np.abs(X[i] - X[j])) > 1e-9 for j in picked):
            picked.append(int(i))
        if len(picked) == k:
            break
    return np.array(picked, dtype=int)


def _fd_points(Xs: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    # each point followed by its forward-difference neighbours (backward where forward leaves the cube)
    k, dim = Xs.shape
    step = np.where(Xs + h <= 1.0, h, -h)
    pts = np.repeat(Xs[:, None, :], dim + 1, axis=1)
    pts[:, 1:, :] += step[:, :, None] * np.eye(dim)[None]
    return pts.reshape(-1, dim), step


def lbfgsb_batched(fn: AcqFn, starts: np.ndarray, maxiter: int, h: float = 1e-6,
                   fn_grad: AcqGradFn | None = None) -> np.ndarray:
    """Maximise ``fn`` from all ``starts`` at once: one L-BFGS-B run on the sum of their values.

    The starts do not interact (the gradient of the sum with respect to one start is that
    start's own gradient), so this is the starts' separate ascents sharing every call of
    ``fn``: ``k`` starts cost one batched call of ``k (dim + 1)`` points per iteration instead
    of ``k`` calls (BoTorch's ``gen_candidates_scipy`` treats restarts the same way). Gradients
    come from ``fn_grad`` (values ``(m,)`` and gradients ``(m, dim)``) where given, else from
    forward differences of step ``h``. Returns the end points ``(k, dim)``.
    """
    from scipy.optimize import minimize

    k, dim = starts.shape

    def fun_grad(z: np.ndarray) -> tuple[float, np.ndarray]:
        Xs = np.clip(z.reshape(k, dim), 0.0, 1.0)
        if fn_grad is not None:
            v, g = fn_grad(Xs)
            v, g = np.array(v, dtype=float), np.array(g, dtype=float)
            bad = ~(np.isfinite(v) & np.all(np.isfinite(g), axis=1))
            v[bad], g[bad] = 0.0, 0.0
            return -float(v.sum()), -g.ravel()
        pts, step = _fd_points(Xs, h)
        vals = np.asarray(fn(pts), dtype=float).reshape(k, dim + 1)
        bad = ~np.all(np.isfinite(vals), axis=1)
        vals[bad] = 0.0  # a start whose value is not finite stops moving
        grad = (vals[:, 1:] - vals[:, :1]) / step
        return -float(vals[:, 0].sum()), -grad.ravel()

    res = minimize(fun_grad, np.clip(starts, 0.0, 1.0).ravel(), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, 1.0)] * (k * dim), options={"maxiter": int(maxiter)})
    return np.clip(res.x.reshape(k, dim), 0.0, 1.0)


def maximize(fn: AcqFn, dim: int, rng: np.random.Generator, *, n_candidates: int = 1000,
             anchors: np.ndarray | None = None, n_spray: int = 100, spray_std: float = 0.02,
             n_starts: int = 5, local: str = "lbfgsb", maxiter: int = 50, n_local: int = 64,
             local_rounds: int = 4, snap: SnapFn | None = None, chunk: int = 2048,
             extra: np.ndarray | None = None, screen: AcqFn | None = None, screen_keep: float = 0.1,
             batch_starts: bool = False, fn_grad: AcqGradFn | None = None) -> tuple[np.ndarray, float]:
    """Approximate ``argmax fn`` over the unit cube; ``fn`` maps ``(m, dim)`` to ``(m,)``.

    ``anchors`` get ``n_spray`` Gaussian perturbations (std ``spray_std``) among the
    candidates; ``extra`` are added as they are. ``local`` is ``"lbfgsb"``, ``"random"`` or
    ``"none"``. ``screen``, a cheaper approximation of ``fn``, ranks the candidates first and
    only the best ``screen_keep`` fraction of them (at least ``20 n_starts``) is scored with
    ``fn``. ``batch_starts`` runs the L-BFGS-B starts as one batched ascent
    (:func:`lbfgsb_batched`, with the analytic gradient ``fn_grad`` where given) instead of one
    after the other. Returns the best point found (snapped) and its value.
    """
    snap = snap or (lambda X: X)
    parts = [sobol_points(rng, n_candidates, dim)]
    if anchors is not None and len(anchors) and n_spray > 0:
        anchors = np.atleast_2d(anchors)
        idx = rng.integers(0, anchors.shape[0], size=n_spray)
        parts.append(np.clip(anchors[idx] + spray_std * rng.standard_normal((n_spray, dim)), 0.0, 1.0))
    if extra is not None and len(extra):
        parts.append(np.atleast_2d(extra))
    X = snap(np.vstack(parts))
    if screen is not None and X.shape[0] > 20 * n_starts:
        keep = max(int(math.ceil(screen_keep * X.shape[0])), 20 * n_starts)
        vs = _score(screen, X, chunk)
        X = X[np.sort(np.argsort(-vs, kind="stable")[:keep])]
    v = _score(fn, X, chunk)
    best_i = int(np.argmax(v))
    best_x, best_v = X[best_i].copy(), float(v[best_i])
    starts = X[_top_distinct(X, v, n_starts)]

    if local == "lbfgsb" and maxiter > 0 and batch_starts and len(starts):
        E = snap(lbfgsb_batched(fn, starts, maxiter, fn_grad=fn_grad))
        ve = _score(fn, E, chunk)
        j = int(np.argmax(ve))
        if ve[j] > best_v:
            best_x, best_v = E[j].copy(), float(ve[j])
    elif local == "lbfgsb" and maxiter > 0:
        from scipy.optimize import minimize

        h = 1e-6

        def fun_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
            if fn_grad is not None:
                v, g = fn_grad(np.clip(x, 0.0, 1.0)[None])
                if not (np.isfinite(v[0]) and np.all(np.isfinite(g))):
                    return 0.0, np.zeros(dim)
                return -float(v[0]), -np.asarray(g[0], dtype=float)
            # forward differences, backward where a forward step would leave the cube; one batched call
            step = np.where(x + h <= 1.0, h, -h)
            pts = np.vstack([x, x + np.diag(step)])
            vals = np.asarray(fn(pts), dtype=float)
            if not np.all(np.isfinite(vals)):
                return 0.0, np.zeros(dim)
            return -float(vals[0]), -(vals[1:] - vals[0]) / step

        ends = []
        for x0 in starts:
            res = minimize(fun_grad, x0, jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * dim,
                           options={"maxiter": int(maxiter)})
            ends.append(np.clip(res.x, 0.0, 1.0))
        if ends:
            E = snap(np.vstack(ends))
            ve = _score(fn, E, chunk)
            j = int(np.argmax(ve))
            if ve[j] > best_v:
                best_x, best_v = E[j].copy(), float(ve[j])
    elif local == "random" and local_rounds > 0:
        centres = starts if len(starts) else best_x[None]
        cv = _score(fn, centres, chunk)
        radius = 0.1
        for _ in range(int(local_rounds)):
            idx = np.repeat(np.arange(centres.shape[0]), n_local)
            P = snap(np.clip(centres[idx] + radius * rng.standard_normal((idx.size, dim)), 0.0, 1.0))
            pv = _score(fn, P, chunk)
            for c in range(centres.shape[0]):
                sel = np.nonzero(idx == c)[0]
                k = sel[int(np.argmax(pv[sel]))]
                if pv[k] > cv[c]:
                    centres[c], cv[c] = P[k], pv[k]
            radius /= 2.0
        j = int(np.argmax(cv))
        if cv[j] > best_v:
            best_x, best_v = centres[j].copy(), float(cv[j])
    return best_x, best_v


#: The settings of the smooth-acquisition search (gp_ei's, which dngo shares): every plugin that
#: maximises EI with :func:`maximize_smooth` declares these.
SMOOTH_SEARCH_SETTINGS = {
    "n_candidates": Setting(2000, "Sobol candidates for the global stage of EI maximisation (our choice)",
                            domain=POSITIVE_INT),
    "n_spray": Setting(200, "candidates sprayed around the 5 best observations (Spearmint-style; our count)",
                       domain=NONNEGATIVE_INT),
    "n_starts": Setting(5, "L-BFGS-B starts from the best candidates (our choice)", domain=POSITIVE_INT),
    "maxiter": Setting(50, "L-BFGS-B iterations per start (our choice)", domain=POSITIVE_INT),
}


def maximize_smooth(fn: AcqFn, dim: int, rng: np.random.Generator, settings, X: np.ndarray, y: np.ndarray,
                    snap: SnapFn | None = None, screen: AcqFn | None = None,
                    batch_starts: bool = False, fn_grad: AcqGradFn | None = None) -> tuple[np.ndarray, float]:
    """:func:`maximize` with :data:`SMOOTH_SEARCH_SETTINGS` from a plugin's ``settings``, sprayed
    around the 5 best observations ``X[argsort(y)[:5]]`` and refined by L-BFGS-B (``screen`` and
    ``batch_starts``, ``fn_grad`` as in :func:`maximize`)."""
    return maximize(fn, dim, rng, n_candidates=int(settings["n_candidates"]), anchors=X[np.argsort(y)[:5]],
                    n_spray=int(settings["n_spray"]), n_starts=int(settings["n_starts"]), local="lbfgsb",
                    maxiter=int(settings["maxiter"]), snap=snap, screen=screen, batch_starts=batch_starts,
                    fn_grad=fn_grad)
