"""NASBOT (Kandasamy et al., NeurIPS 2018) and its two baselines, searching the same space.

Source: ``/work/shared/papers/nasbot.txt`` Sec. 4 (the method) and Sec. 5 (the baselines).
The appendices with the implementation details are not in our copy; the constants below
come from the authors' published code (github kirthevasank/nasbot; the same code lives on
in dragonfly/dragonfly), read, not copied. File names refer to that repository.

Three plugins share one evolutionary algorithm (EA; nasbot.txt Sec. 4, authors'
``opt/ga_optimiser.py``): parents are drawn from everything scored so far with probability
``p_i ~ exp((f_i - mean f) / (2 std f))`` (``utils/general_utils.py``
``get_exp_probs_from_fitness``, ``fitness_sampler_scaling_const = 2``), with replacement,
and each is mutated by 1-5 modifier steps with probabilities 0.5, 0.25, 0.125, 0.075, 0.05
(``opt/nasbot.py`` ``ga_mutation_op_distro = 'd0.5-0.25-0.125-0.075-0.05'``; one step is the
space's ``mutate``, for layer graphs one Table 2 modifier).

* ``nasbot``: a GP on the architectures with the authors' kernel (below), EI, and the EA
  maximising EI. Each ask runs ``clip(25 sqrt(t), 50, 500)`` acquisition evaluations,
  ``t`` the number of networks sent so far (``opt/nasbot.py`` ``_set_up_acq_opt_ga`` with
  ``NNDomain.get_dim() = 5``), in rounds of ``N_mut = clip(3 sqrt(evals), 5, 100)``
  mutations (``opt/domains.py`` ``NNDomain._get_ga_optimiser_args``), starting from the
  initial pool scored by EI (``ga_init_pool = get_initial_pool(...)``). The best-EI network
  that is not already evaluated or running is proposed.
* ``nasbot_ea``: the same EA on the objective itself (nasbot.txt Sec. 5 "EA"; authors'
  ``GAOptimiser``): rounds of 50 mutations (``num_mutations_per_epoch = 50``) of evaluated
  networks selected by their (negated) losses; the mutations are evaluated one by one and
  the next round is drawn when the previous one is used up.
* ``nasbot_rand``: NASBOT's procedure with the acquisition replaced by a Unif(0, 1) draw
  at every evaluation (nasbot.txt Sec. 5 "RAND"; authors' ``NNRandomBandit`` with
  ``asy_rand``), so it picks a random network from the same neighbourhood NASBOT explores.

All three start with the same initial design: the authors' initial pool of the space (10
hand-made MLPs or CNNs, ``opt/nn_opt_utils.py`` ``get_initial_pool``; all methods evaluate
it first, ``opt/nn_opt_experimenter.py`` ``_get_pre_eval_points_and_vals``). On a space
without an initial pool, ``n_init`` (10) random configurations take its place.

The GP (authors' ``nn/nn_gp.py``, defaults ``kernel_type = 'lpemd_sum'``,
``dist_type = 'lp-emd'``): the sum form of nasbot.txt Sec. 4 extended over the four
structural weights ``nu_str`` in (0.1, 0.2, 0.4, 0.8) (``struct_coeffs``, with
``mislabel_coeffs`` 1.0 each)::

    kappa(G, G') = alpha   exp(-sum_k beta_k    d_k(G, G'))
                 + alpha'  exp(-sum_k beta'_k   dbar_k(G, G')^2)

(``lp_power = 1``, ``emd_power = 2``); with a single ``nu_str`` this is exactly the paper's
``alpha e^{-beta d} + alpha' e^{-beta' dbar}`` up to the square. Hyperparameters as the
authors' ``rand_exp_sampling`` (``gp/gp_core.py``, the default ``gp_ml_hp_tune_opt`` of
``opt/gp_bandit.py``): ``min(1e5, max(500, 400 p))`` draws (p = 11 hyperparameters -> 4400)
uniform in the log-space box ``alpha in [0.01, 100] Var(y)``, ``beta in [1e-9, 1e-3]``,
``beta' in [0.1, 100]``, noise variance in ``[0.005, 0.2] Var(y)``, weighted by
``exp(log marginal likelihood)``; 7 of them are resampled (``build_new_model_every = 7``)
and the asks cycle through them, one per ask, re-drawing every 7 asks. The mean is the
median of the observed losses (``mean_func_type = 'median'``). EI uses the best observed
loss as incumbent; running evaluations are hallucinated as the authors' ``asy_hei`` does
(``opt/gpb_acquisitions.py``: the posterior mean is unchanged and the variance is that of
the GP with the running networks added as observations), i.e. ``condition_on_pending`` with
the posterior-mean strategy.

Distances: OTMANN (``benchsuite.architectures.otmann``) for layer graphs. On other
architecture spaces (the conformance kit's toy chains, say) a generic distance is used, so
the plugins run everywhere: the space's own ``distance(a, b)`` method if it has one
(``d``; ``dbar = d / (1 + d)``); on a space of variables (COMBO's and NAS-Bench-201's cells) the
number of discrete variables that differ plus the unit-scale differences of continuous ones
(``d``; ``dbar = d / variables``: the edit distance below on JSON text of a 31-binary cell took
0.08 s a pair); otherwise the Levenshtein edit distance between the
configurations' canonical JSON texts (``d``; ``dbar = d / max(len)``), with one structural
weight, the same kernel form and a beta box of ``[1e-3, 10]`` for ``d`` (the OTMANN box
would be meaningless for distances of a few characters).

Departures from the authors' code (all minor, all documented in the report): a network
already evaluated or running is never proposed again (the authors' EA could return an
initial-pool network); Gram matrices are projected onto the PSD cone only when their
Cholesky factorisation fails (theirs always project, which is the same matrix when it is
PSD); the final EA round is truncated to the evaluation budget.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import NONNEGATIVE_INT, POSITIVE_INT, Setting
from benchsuite.space import Space

# -- constants, with their sources ---------------------------------------------------------
#: structural weights nu_str of the OTMANN distances in the kernel (nn/nn_gp.py struct_coeffs)
NU_STRS: tuple[float, ...] = (0.1, 0.2, 0.4, 0.8)
#: powers of d and dbar in the kernel (nn/nn_gp.py lp_power = 1, emd_power = 2)
DIST_POWERS: tuple[float, float] = (1.0, 2.0)
#: box of alpha, alpha' as multiples of Var(y) (nn/nn_gp.py _child_set_up_ml_tune, scale_log_bounds)
ALPHA_BOUNDS: tuple[float, float] = (0.01, 100.0)
#: box of the betas of d and of dbar (nn/nn_gp.py lp_beta_log_bounds, emd_beta_log_bounds)
BETA_BOUNDS_OTMANN: tuple[tuple[float, float], tuple[float, float]] = ((1e-9, 1e-3), (1e-1, 1e2))
#: box of the betas for the generic fallback distances (ours: edit distances are O(1-100))
BETA_BOUNDS_GENERIC: tuple[tuple[float, float], tuple[float, float]] = ((1e-3, 10.0), (1e-1, 1e2))
#: noise variance box as multiples of Var(y) (gp/gp_instances.py / nn/nn_gp.py noise_var_log_bounds)
NOISE_BOUNDS: tuple[float, float] = (0.005, 0.2)
#: asks per hyperparameter re-draw, and draws kept (opt/blackbox_optimiser.py build_new_model_every)
REFIT_EVERY = 7
#: probabilities of 1..5 modifier steps per mutation (opt/nasbot.py ga_mutation_op_distro)
MUTATION_STEP_PROBS: tuple[float, ...] = (0.5, 0.25, 0.125, 0.075, 0.05)
#: fitness scaling of the exp-probability parent selection (opt/ga_optimiser.py fitness_sampler_scaling_const)
SELECTION_SCALING = 2.0
#: mutations per round of the EA baseline (opt/ga_optimiser.py num_mutations_per_epoch)
EA_MUTATIONS_PER_ROUND = 50
#: initial random configurations on a space without an initial pool (the size of the authors' MLP pool)
N_INIT_FALLBACK = 10


def n_hp_samples(n_hyper: int) -> int:
    """Hyperparameter draws of ``rand_exp_sampling``: ``min(1e5, max(500, 400 p))`` (gp/gp_core.py)."""
    return int(min(1e5, max(500, 400 * n_hyper)))


def acquisition_evaluations(t: int) -> int:
    """Acquisition evaluations per ask at step ``t``: ``clip(25 sqrt(t), 50, 500)`` (opt/nasbot.py)."""
    return int(np.clip(25.0 * math.sqrt(max(t, 0)), 50, 500))


def mutations_per_round(n_evals: int) -> int:
    """EA round size for ``n_evals`` evaluations: ``clip(3 sqrt(n), 5, 100)`` (opt/domains.py)."""
    return int(np.clip(3.0 * math.sqrt(max(n_evals, 0)), 5, 100))


def selection_probabilities(fitness: Sequence[float], scaling: float = SELECTION_SCALING) -> np.ndarray:
    """Parent probabilities ``exp((f - mean) / (scaling std))``, normalised (utils/general_utils.py).

    Non-finite fitness values get probability 0; with no spread (or nothing finite) the
    choice is uniform over the finite (or all) entries.
    """
    f = np.asarray(fitness, dtype=float)
    ok = np.isfinite(f)
    if not ok.any():
        return np.full(len(f), 1.0 / len(f))
    sd = float(np.std(f[ok]))
    if sd <= 0.0 or not math.isfinite(sd):
        p = ok.astype(float)
        return p / p.sum()
    z = np.where(ok, (f - np.mean(f[ok])) / (scaling * sd), -np.inf)
    p = np.exp(z - z[ok].max())
    return p / p.sum()


def select_parents(fitness: Sequence[float], n: int, rng: np.random.Generator,
                   scaling: float = SELECTION_SCALING) -> np.ndarray:
    """``n`` indices drawn with replacement by :func:`selection_probabilities`."""
    p = selection_probabilities(fitness, scaling)
    return rng.choice(len(p), size=int(n), replace=True, p=p)


def multi_step_mutation(space: Any, config: Any, rng: np.random.Generator,
                        step_probs: Sequence[float] = MUTATION_STEP_PROBS) -> Any:
    """``config`` after ``k`` successive ``space.mutate`` steps, ``k`` drawn from ``step_probs``."""
    p = np.asarray(step_probs, dtype=float)
    k = 1 + int(rng.choice(len(p), p=p / p.sum()))
    for _ in range(k):
        config = space.mutate(config, rng)
    return config


def evolve(seeds: Sequence[Any], seed_scores: Sequence[float], score: Callable[[list[Any]], np.ndarray],
           n_evals: int, n_per_round: int, mutate: Callable[[Any], Any], rng: np.random.Generator,
           scaling: float = SELECTION_SCALING) -> tuple[list[Any], np.ndarray]:
    """The EA of nasbot.txt Sec. 4: ``n_evals`` new networks scored in rounds; returns them and their scores.

    Each round draws ``n_per_round`` parents from everything scored so far (seeds included)
    by :func:`select_parents`, mutates each, and scores the children in one batch.
    """
    pool, fit = list(seeds), [float(s) for s in seed_scores]
    new: list[Any] = []
    new_scores: list[float] = []
    while len(new) < n_evals and pool:
        k = min(n_per_round, n_evals - len(new))
        parents = select_parents(fit, k, rng, scaling)
        children = [mutate(pool[i]) for i in parents]
        s = np.asarray(score(children), dtype=float).reshape(-1)
        pool += children
        fit += s.tolist()
        new += children
        new_scores += s.tolist()
    return new, np.asarray(new_scores, dtype=float)


# -- distances -----------------------------------------------------------------------------

def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions) between two strings."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _offers(space: Any, capability: str) -> bool:
    """Whether the space announces ``capability`` (``SearchSpace.capabilities``)."""
    return capability in getattr(space, "capabilities", ())


def distance_function(space: Any) -> tuple[Callable[[list, list], np.ndarray], int, tuple]:
    """``(pairwise, n_dists, beta_bounds)`` for a space: OTMANN on layer graphs, else the generic fallback.

    ``pairwise(a, b)`` returns ``(2, K, len(a), len(b))``: group 0 the distance ``d``,
    group 1 its normalised version ``dbar``.
    """
    if _offers(space, "otmann"):
        from benchsuite.architectures.otmann import otmann_matrix

        def otmann_pairs(a: list, b: list) -> np.ndarray:
            if not a or not b:
                return np.zeros((2, len(NU_STRS), len(a), len(b)))
            d, dbar = otmann_matrix(a, None if b is a else b, nu_strs=NU_STRS)
            return np.stack([np.asarray(d, dtype=float), np.asarray(dbar, dtype=float)])

        return otmann_pairs, len(NU_STRS), BETA_BOUNDS_OTMANN
    if _offers(space, "distance"):
        own = space.distance

        def space_pairs(a: list, b: list) -> np.ndarray:
            d = np.array([[float(own(x, y)) for y in b] for x in a]).reshape(len(a), len(b))
            return np.stack([d, d / (1.0 + d)])[:, None]

        return space_pairs, 1, BETA_BOUNDS_GENERIC

    if isinstance(space, Space):
        discrete = np.array([v.is_discrete for v in space.variables])

        def variable_pairs(a: list, b: list) -> np.ndarray:
            if not a or not b:
                return np.zeros((2, 1, len(a), len(b)))
            xa, xb = space.to_unit(a), space.to_unit(b)
            diff = np.abs(xa[:, None, :] - xb[None, :, :])
            diff[..., discrete] = diff[..., discrete] > 0
            d = diff.sum(axis=2)
            return np.stack([d, d / len(space)])[:, None]

        return variable_pairs, 1, BETA_BOUNDS_GENERIC

    def edit_pairs(a: list, b: list) -> np.ndarray:
        ta, tb = [space.to_json(x) for x in a], [space.to_json(y) for y in b]
        d = np.array([[float(levenshtein(x, y)) for y in tb] for x in ta]).reshape(len(a), len(b))
        norm = np.maximum(np.array([len(x) for x in ta])[:, None], np.array([len(y) for y in tb])[None, :])
        return np.stack([d, d / np.maximum(norm, 1)])[:, None]

    return edit_pairs, 1, BETA_BOUNDS_GENERIC


def initial_design(space: Any, rng: np.random.Generator, n_fallback: int = N_INIT_FALLBACK) -> list[Any]:
    """The space's initial pool (the authors' networks for layer graphs) or ``n_fallback`` random configurations."""
    if _offers(space, "otmann"):  # layer graphs: the authors' pool, fitted to the space's constraints
        return space.initial_pool()
    if _offers(space, "initial_pool"):
        return [space.validate(c) for c in space.initial_pool()]
    return [space.sample(rng) for _ in range(int(n_fallback))]


# -- the plugins -------------------------------------------------------------------------

_COMMON_SETTINGS = {
    "n_init": Setting(N_INIT_FALLBACK, "random initial configurations on a space without an initial pool "
                                       "(layer graphs use the authors' pool, opt/nn_opt_utils.py)",
                      domain=POSITIVE_INT),
}


class _EvolutionBase(Optimizer):
    """Shared set-up: the initial design, the multi-step mutation, bookkeeping of evaluated keys."""

    supports = Capabilities(spaces={"architecture"}, fidelity="ignores", parallel=True,
                            uses={"otmann", "distance", "initial_pool"})

    def setup(self) -> None:
        self.design = initial_design(self.space, self.rng, self.settings["n_init"])
        self.n_asked = 0
        self.last_timing: dict[str, float] = {}

    def _mutate(self, config: Any) -> Any:
        return multi_step_mutation(self.space, config, self.rng)

    def _observed(self) -> tuple[list[Any], np.ndarray]:
        configs, losses, _ = self.observations()
        ok = np.isfinite(losses)
        return [c for c, o in zip(configs, ok) if o], losses[ok]

    def _taken(self, pending: Sequence[Trial]) -> set:
        keys = {self.space.key(t.config) for t in self.history}
        keys |= {self.space.key(t.config) for t in pending}
        return keys

    def _design_step(self) -> Suggestion | None:
        if self.n_asked < len(self.design):
            c = self.design[self.n_asked]
            self.n_asked += 1
            return Suggestion(c, self.full_fidelity(), {"phase": "init"})
        self.n_asked += 1
        return None

    def _pick(self, cands: list[Any], scores: np.ndarray, taken: set, fallback: Any) -> Any:
        """The best-scored candidate not evaluated or running; else a fresh mutation of ``fallback``."""
        for i in np.argsort(-scores, kind="stable"):
            if self.space.key(cands[i]) not in taken:
                return cands[i]
        child = fallback
        for _ in range(20):
            child = self._mutate(child)
            if self.space.key(child) not in taken:
                break
        return child


class NASBOTEA(_EvolutionBase):
    """NASBOT's EA on the objective (nasbot.txt Sec. 5 "EA"; authors' ``opt/ga_optimiser.py``).

    After the initial design, rounds of ``mutations_per_round`` (50) children are drawn:
    parents from all successfully evaluated networks by exp-probabilities of their negated
    losses (scaling 2), each mutated by 1-5 modifier steps; children are proposed in order,
    and the next round is drawn from the results known when the round runs out.
    """

    name = "nasbot_ea"
    description = "NASBOT's evolutionary baseline: fitness-proportional selection + Table 2 mutations"
    settings_spec = dict(_COMMON_SETTINGS, mutations_per_round=Setting(
        EA_MUTATIONS_PER_ROUND, "children per EA round (authors' opt/ga_optimiser.py num_mutations_per_epoch)",
                                                                       domain=POSITIVE_INT))

    def setup(self) -> None:
        super().setup()
        self.queue: list[Any] = []

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        s = self._design_step()
        if s is not None:
            return s
        if not self.queue:
            configs, losses = self._observed()
            if not configs:  # nothing succeeded yet: mutate the design instead
                configs, losses = list(self.design), np.zeros(len(self.design))
            parents = select_parents(-losses, self.settings["mutations_per_round"], self.rng)
            self.queue = [self._mutate(configs[i]) for i in parents]
        return Suggestion(self.queue.pop(0), self.full_fidelity(), {"phase": "ea"})


class NASBOTRand(_EvolutionBase):
    """NASBOT with the acquisition replaced by Unif(0, 1) draws (nasbot.txt Sec. 5 "RAND").

    The same EA as ``nasbot`` (seeds: the initial pool; ``clip(25 sqrt(t), 50, 500)``
    evaluations in rounds of ``clip(3 sqrt(evals), 5, 100)``), fed a fresh random number at
    every evaluation; proposes the highest-scored new network.
    """

    name = "nasbot_rand"
    description = "NASBOT's RAND baseline: NASBOT's EA driven by Unif(0,1) scores (same space)"
    settings_spec = dict(_COMMON_SETTINGS)

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        s = self._design_step()
        if s is not None:
            return s
        t = self.n_asked - 1
        n_evals = acquisition_evaluations(t)
        seeds = list(self.design)
        cands, scores = evolve(seeds, self.rng.random(len(seeds)), lambda c: self.rng.random(len(c)),
                               n_evals, mutations_per_round(n_evals), self._mutate, self.rng)
        pick = self._pick(cands, scores, self._taken(pending), seeds[0])
        return Suggestion(pick, self.full_fidelity(), {"phase": "rand-ea", "ea_evals": n_evals})


class NASBOT(_EvolutionBase):
    """NASBOT: GP on architectures (OTMANN kernel), EI with hallucinated pending networks, EA-maximised.

    See the module docstring for the kernel, the hyperparameter sampling and the EA and
    for every constant's source.
    """

    name = "nasbot"
    description = "NASBOT: GP-EI over network architectures with the OTMANN kernel, EI maximised by an EA"
    test_settings = {"hp_samples": 300}  # small: quick conformance checks
    settings_spec = dict(
        _COMMON_SETTINGS,
        hp_samples=Setting(0, "hyperparameter draws weighted by exp(lml); 0 = min(1e5, max(500, 400 p)) "
                              "(authors' gp/gp_core.py rand_exp_sampling)", domain=NONNEGATIVE_INT),
        refit_every=Setting(REFIT_EVERY, "asks per hyperparameter re-draw; that many draws are kept and cycled "
                                         "(authors' build_new_model_every)", domain=POSITIVE_INT),
        acq_seeds=Setting("initial_pool", "EA start for EI: the initial pool (authors' ga_init_pool) or the "
                                          "initial pool plus every evaluated network",
                          choices=("initial_pool", "initial_pool+evaluated")),
    )

    def setup(self) -> None:
        super().setup()
        from .kernels.distance import DistanceStore, DistanceSumKernel
        pairwise, n_dists, beta_bounds = distance_function(self.space)
        self.store = DistanceStore(pairwise, self.space.key, 2, n_dists)
        self.kernel = DistanceSumKernel(self.store, DIST_POWERS, ALPHA_BOUNDS, beta_bounds)
        self._thetas: np.ndarray | None = None
        self._cursor = 0
        self._last_fit = -(10**9)
        self._units = (0.0, 1.0)

    def _fit(self, ids: np.ndarray, y: np.ndarray) -> None:
        from .kernels.distance import exp_sample_hyperparameters
        from .models import gp

        shift, scale = gp.standardise(y)
        y_std = (y - shift) / scale
        n_samples = self.settings["hp_samples"] or n_hp_samples(gp.n_hyper(self.kernel) - 1)  # mean is fixed
        self._thetas = exp_sample_hyperparameters(
            self.kernel, ids[:, None].astype(float), y_std, float(np.median(y_std)), NOISE_BOUNDS, self.rng,
            n_samples, self.settings["refit_every"])
        self._cursor = 0
        self._last_fit = self.n_asked
        # the draws are absolute (fit-time units), as the authors' fitted GPs keep their mean,
        # scale and noise while later data are added (opt/gp_bandit.py _set_next_gp)
        self._units = (shift, scale)

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        from .acquisition.functions import integrated_ei
        from .common.bo_common import single_threaded_blas
        from .models import gp
        from .models.posterior import condition_on_pending

        s = self._design_step()
        if s is not None:
            return s
        t_start = time.perf_counter()
        t = self.n_asked - 1
        configs, y = self._observed()
        taken = self._taken(pending)
        n_evals = acquisition_evaluations(t)
        if self.settings["acq_seeds"] == "initial_pool":
            seeds = list(self.design)
        else:
            design_keys = {self.space.key(c) for c in self.design}
            seeds = list(self.design) + [c for c in configs if self.space.key(c) not in design_keys]
        if len(configs) < 2:  # no model yet: behave as RAND until two results are in
            cands, scores = evolve(seeds, self.rng.random(len(seeds)), lambda c: self.rng.random(len(c)),
                                   n_evals, mutations_per_round(n_evals), self._mutate, self.rng)
            return Suggestion(self._pick(cands, scores, taken, seeds[0]), self.full_fidelity(),
                              {"phase": "rand-ea"})
        with single_threaded_blas():
            t0 = time.perf_counter()
            ids = self.store.add(configs)
            pend_ids = self.store.add([p.config for p in pending]) if pending else np.zeros(0, dtype=np.int64)
            self.store.add(seeds)
            t_dist = time.perf_counter() - t0
            t0 = time.perf_counter()
            refit = self._thetas is None or self.n_asked - self._last_fit >= self.settings["refit_every"]
            if refit:
                self._fit(ids, y)
            theta = self._thetas[self._cursor % len(self._thetas)]
            self._cursor += 1
            shift, scale = self._units
            post = gp.GPPosterior(self.kernel, ids[:, None].astype(float), y, theta[None], shift, scale)
            model = condition_on_pending(post, pend_ids[:, None].astype(float) if len(pend_ids) else None,
                                         self.rng, strategy="mean")
            t_fit = time.perf_counter() - t0
            gp_ids = np.concatenate([ids, pend_ids])
            best = float(np.min(y))  # EI's incumbent: the best observed loss (asy_hei's curr_max_val)

            def ei(cands: list[Any]) -> np.ndarray:
                # known networks (the seeds, re-found evaluated ones) use their cached rows; only
                # the distinct new ones get OTMANN rows, and only against the GP's inputs
                keys = [self.space.key(c) for c in cands]
                X = np.empty(len(cands))
                fresh: dict[Any, list[int]] = {}
                for i, (c, k) in enumerate(zip(cands, keys)):
                    pid = self.store.id_of(c, k)
                    if pid is not None:
                        X[i] = pid
                    else:
                        fresh.setdefault(k, []).append(i)
                if fresh:
                    first = [idx[0] for idx in fresh.values()]
                    sid = self.store.set_candidates([cands[i] for i in first], against=gp_ids)
                    for s_id, idx in zip(sid, fresh.values()):
                        X[idx] = s_id
                return integrated_ei(model.predict(X[:, None]), best)

            t0 = time.perf_counter()
            seed_ei = ei(seeds)
            cands, scores = evolve(seeds, seed_ei, ei, n_evals, mutations_per_round(n_evals),
                                   self._mutate, self.rng)
            t_acq = time.perf_counter() - t0
        pick = self._pick(cands, scores, taken, seeds[int(np.argmax(seed_ei))])
        self.last_timing = {"total_s": time.perf_counter() - t_start, "distances_s": t_dist,
                            "fit_s": t_fit, "acq_s": t_acq, "refit": float(refit), "ea_evals": n_evals}
        return Suggestion(pick, self.full_fidelity(), {"phase": "bo", "ei": float(np.max(scores)) if len(scores)
                                                       else 0.0})
