"""Small helpers shared by the GP-based plugins: unit-cube snapping and initial designs."""
from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np

from benchsuite.optimizer import Suggestion
from benchsuite.space import Space


def unit_snap(space: Space) -> Callable[[np.ndarray], np.ndarray]:
    """A map from cube points ``(m, d)`` to the encodings of the nearest valid configurations.

    Continuous variables pass through (clipped); discrete ones go to the centre of their
    level's bin, so the GP only ever sees points that can be evaluated (the "rounding in
    the unit cube" treatment of discrete and mixed spaces).
    """
    discrete = [(j, v) for j, v in enumerate(space.variables) if v.is_discrete]

    def snap(X: np.ndarray) -> np.ndarray:
        X = np.clip(np.array(X, dtype=float, copy=True), 0.0, 1.0)
        for j, v in discrete:
            X[:, j] = v.to_unit(v.from_unit(X[:, j]))
        return X

    return snap


def latin_hypercube(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """``n`` points of a random Latin hypercube in ``[0, 1]^dim``."""
    if n <= 0:
        return np.empty((0, dim))
    perms = np.column_stack([rng.permutation(n) for _ in range(dim)])
    return (perms + rng.random((n, dim))) / n


def check_vector_space(space: object, plugin: str) -> Space:
    """The space as a :class:`Space`, or raise for architecture spaces (no cube encoding)."""
    from benchsuite.errors import UnsupportedError

    if not isinstance(space, Space):
        raise UnsupportedError(f"optimizer {plugin!r} needs a space of typed variables with a unit-cube encoding")
    return space


_CONTROLLER = None


def single_threaded_blas() -> contextlib.AbstractContextManager:
    """Context that limits BLAS to one thread (a no-op without ``threadpoolctl``).

    GP asks multiply and factor matrices of a few hundred rows at most; on a shared
    machine, OpenBLAS worker threads for such sizes cost far more in contention than they
    gain (we measured ms-long triangular solves of 10 x 10 systems under load).
    """
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # optional: only a speed-up
        return contextlib.nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def setup_matern_gp(opt: Any, input_warping: bool = False, length_scale_prior: str = "log_uniform") -> None:
    """Shared set-up of the plugins that model a vector space with one Matern-5/2 GP.

    Sets ``space`` (checked), ``dim``, ``snap``, ``kernel``, ``sampler`` (emcee over the
    hyperparameters, settings ``n_walkers``/``burnin``/``chain_length``) and the initial
    Latin-hypercube ``design`` of ``n_init`` points on ``opt``. ``input_warping`` puts every
    input through a Beta CDF whose shapes are sampled with the other hyperparameters
    (:class:`~benchsuite.optimizers.kernels.continuous.BetaWarp`); ``length_scale_prior`` is one of
    :data:`~benchsuite.optimizers.kernels.continuous.LENGTH_SCALE_PRIORS`.
    """
    from ..inference.mcmc import HyperparameterSampler
    from ..kernels.continuous import BetaWarp, Matern52

    st = opt.settings
    opt.space = check_vector_space(opt.space, opt.name)
    opt.dim = len(opt.space)
    opt.snap = unit_snap(opt.space)
    opt.kernel = Matern52(range(opt.dim), length_scale_prior=length_scale_prior)
    if input_warping:
        opt.kernel = BetaWarp(opt.kernel, range(opt.dim))
    opt.sampler = HyperparameterSampler(opt.kernel, opt.rng, st["n_walkers"], st["burnin"], st["chain_length"])
    opt.design = opt.snap(latin_hypercube(opt.rng, int(st["n_init"]), opt.dim))


def design_step(opt: Any, n_observed: int) -> Suggestion | None:
    """Count an ask and return the next initial-design point (a random one while fewer than two
    results are in), or None once the model takes over. Shared by GP-EI, entropy search and DNGO."""
    i = opt.n_asked
    opt.n_asked += 1
    if i < len(opt.design) or n_observed < 2:
        x = opt.design[i] if i < len(opt.design) else opt.snap(opt.rng.random((1, opt.dim)))[0]
        return Suggestion(opt.space.from_unit(x), opt.full_fidelity(), {"phase": "init"})
    return None
