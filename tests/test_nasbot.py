"""NASBOT and its EA / RAND baselines (nasbot.txt Sec. 4-5): plugin contract, EA, kernel, GP pieces."""
from __future__ import annotations

import json
import math
from collections.abc import Hashable
from typing import Any

import numpy as np
import pytest
from benchsuite.optimizers.kernels.distance import (DistanceStore, DistanceSumKernel, exp_sample_hyperparameters,
                                                    project_psd)
from benchsuite.optimizers.models import gp
from benchsuite.optimizers.models.posterior import condition_on_pending
from benchsuite.optimizers.nasbot import (MUTATION_STEP_PROBS, NASBOT, NASBOTEA, NASBOTRand, acquisition_evaluations,
                                          distance_function, evolve, initial_design, levenshtein, multi_step_mutation,
                                          mutations_per_round, n_hp_samples, select_parents, selection_probabilities)

from benchsuite.benchmark import Benchmark, Result
from benchsuite.errors import InvalidConfigError, InvalidSettingError
from benchsuite.optimizer import Trial
from benchsuite.runner import run
from benchsuite.space import SearchSpace
from benchsuite.testing import ToyChainSpace, check_optimizer

FAST = {"hp_samples": 300}


# -- the plugin contract ------------------------------------------------------------------

def test_conformance_nasbot():
    check_optimizer(NASBOT, settings=FAST)


def test_conformance_nasbot_ea():
    check_optimizer(NASBOTEA)


def test_conformance_nasbot_rand():
    check_optimizer(NASBOTRand)


def test_bad_settings_raise_one_line_errors():
    for cls, bad in ((NASBOT, {"refit_every": 0}), (NASBOTEA, {"mutations_per_round": 0}), (NASBOTRand, {"n_init": 0})):
        with pytest.raises(InvalidSettingError) as e:
            cls(ToyChainSpace(), None, 0, **bad)
        assert "\n" not in str(e.value)


# -- the authors' counts ------------------------------------------------------------------

def test_authors_schedules():
    # opt/nasbot.py: clip(25 sqrt(t), 50, 500); opt/domains.py: clip(3 sqrt(evals), 5, 100)
    assert acquisition_evaluations(1) == 50 and acquisition_evaluations(100) == 250
    assert acquisition_evaluations(10_000) == 500
    assert mutations_per_round(250) == 47 and mutations_per_round(1) == 5 and mutations_per_round(5000) == 100
    # gp/gp_core.py rand_exp_sampling: min(1e5, max(500, 400 p)), p = 1 noise + 2 alphas + 8 betas
    assert n_hp_samples(11) == 4400 and n_hp_samples(1) == 500


# -- EA: fitness-proportional selection, rounds, mutation steps ----------------------------

def test_selection_is_exp_fitness_proportional():
    f = np.array([0.0, 1.0, 2.0, 4.0, 4.0])
    p = selection_probabilities(f)
    z = (f - f.mean()) / (2.0 * f.std())  # utils/general_utils.py get_exp_probs_from_fitness, scaling 2
    np.testing.assert_allclose(p, np.exp(z) / np.exp(z).sum())
    rng = np.random.default_rng(123)
    n = 40_000
    counts = np.bincount(select_parents(f, n, rng), minlength=len(f))
    # chi-square goodness of fit against the exp-probabilities (4 dof; 18.47 is the 0.999 quantile)
    chi2 = float((((counts - n * p) ** 2) / (n * p)).sum())
    assert chi2 < 18.47, (counts, n * p)
    assert counts[0] < counts[1] < counts[2] < min(counts[3], counts[4])


def test_selection_degenerate_cases():
    np.testing.assert_allclose(selection_probabilities([3.0, 3.0, 3.0]), [1 / 3] * 3)
    p = selection_probabilities([1.0, -np.inf, 2.0])
    assert p[1] == 0.0 and p[2] > p[0]


def test_evolve_runs_rounds_from_everything_scored():
    rng = np.random.default_rng(0)
    batches = []

    def score(children):
        batches.append(len(children))
        return np.array([float(c) for c in children])

    new, scores = evolve([0, 1, 2], [0.0, 1.0, 2.0], score, n_evals=23, n_per_round=10,
                         mutate=lambda c: c + 1, rng=rng)
    assert batches == [10, 10, 3] and len(new) == 23
    np.testing.assert_array_equal(scores, new)
    # later rounds can mutate children of earlier rounds: values beyond seed + 1 appear
    assert max(new) > 3


def test_multi_step_mutation_uses_the_authors_step_probabilities():
    class Counter(SearchSpace):
        def sample(self, rng):
            return 0

        def validate(self, config):
            return int(config)

        def neighbours(self, config):
            return [config + 1]

        def key(self, config):
            return config

    rng = np.random.default_rng(5)
    steps = np.array([multi_step_mutation(Counter(), 0, rng) for _ in range(20_000)])
    freq = np.bincount(steps, minlength=6)[1:6] / len(steps)
    np.testing.assert_allclose(freq, MUTATION_STEP_PROBS, atol=0.01)


class _TagSpace(SearchSpace):
    """Configurations are (parent, child counter) pairs so the EA's parent choices can be read back."""

    capabilities = frozenset({"mutate", "initial_pool"})

    def __init__(self):
        self.counter = 0

    def sample(self, rng):
        return (int(rng.integers(5)), -1)

    def validate(self, config):
        if not (isinstance(config, (tuple, list)) and len(config) == 2):
            raise InvalidConfigError(f"a tag is a pair, got {config!r}")
        return (int(config[0]), int(config[1]))

    def neighbours(self, config):
        return []

    def mutate(self, config, rng):
        self.counter += 1
        return (config[0], self.counter)

    def key(self, config) -> Hashable:
        return tuple(config)

    def initial_pool(self):
        return [(i, -1) for i in range(5)]


def test_nasbot_ea_selects_parents_fitness_proportionally():
    space = _TagSpace()
    opt = NASBOTEA(space, None, np.random.default_rng(7), mutations_per_round=20_000)
    losses = [0.0, 1.0, 2.0, 3.0, 10.0]
    for i in range(5):
        s = opt.ask()
        assert s.config == (i, -1)  # the space's own initial pool comes first
        opt.tell(Trial(i, s.config, None), Result(losses[i], 1.0))
    first = opt.ask()
    assert first.config[1] > 0  # a mutation, not a design point
    counts = np.bincount([c[0] for c in [first.config] + opt.queue], minlength=5).astype(float)
    p = selection_probabilities(-np.array(losses))  # fitness = negated loss
    n = counts.sum()
    chi2 = float((((counts - n * p) ** 2) / (n * p)).sum())
    assert chi2 < 18.47, (counts, n * p)  # 0.999 quantile of chi-square(4)
    assert counts[0] > counts[1] > counts[2] > counts[3] > counts[4]


# -- the same space, the same start ---------------------------------------------------------

def test_all_three_start_with_the_same_design_and_propose_unseen_networks():
    space = ToyChainSpace()
    firsts = []
    for cls, st in ((NASBOT, FAST), (NASBOTEA, {}), (NASBOTRand, {})):
        opt = cls(space, None, np.random.default_rng(11), **st)
        firsts.append([opt.ask().config for _ in range(len(opt.design))])
    assert firsts[0] == firsts[1] == firsts[2]
    assert initial_design(space, np.random.default_rng(11)) == firsts[0]


# -- distances, the store and the kernel -----------------------------------------------------

def test_levenshtein():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3 and levenshtein("abc", "abc") == 0


def test_generic_distances_and_space_distance_method():
    pair, k, _ = distance_function(ToyChainSpace())
    D = pair([(8, 16), (8,)], [(8, 16), (8, 32)])
    assert D.shape == (2, 1, 2, 2) and k == 1
    assert D[0, 0, 0, 0] == 0 and D[0, 0, 0, 1] > 0
    assert np.all((D[1] >= 0) & (D[1] <= 1))

    class WithDistance(ToyChainSpace):
        capabilities = ToyChainSpace.capabilities | {"distance"}

        def distance(self, a, b):
            return abs(len(a) - len(b)) + 0.5

    pair2, _, _ = distance_function(WithDistance())
    D2 = pair2([(8,)], [(8, 16, 32)])
    assert D2[0, 0, 0, 0] == 2.5 and math.isclose(D2[1, 0, 0, 0], 2.5 / 3.5)


def _abs_store():
    calls = []

    def pairwise(a, b):
        calls.append((len(a), len(b)))
        x, y = np.array(a, float)[:, None], np.array(b, float)[None, :]
        return np.stack([np.abs(x - y), np.abs(x - y) / (1 + np.abs(x - y))])[:, None]

    return DistanceStore(pairwise, lambda c: c, 2, 1), calls


def test_store_adds_only_new_rows_and_matches_direct_distances():
    store, calls = _abs_store()
    ids = store.add([1.0, 3.0, 7.0])
    assert list(ids) == [0, 1, 2]
    n0 = store.n_pair_evals
    ids2 = store.add([3.0, 10.0])  # 3.0 is known
    assert list(ids2) == [1, 3]
    assert store.n_pair_evals - n0 == 1 * 3 + 1 * 1  # new x old + new x new
    D = store.block(np.arange(4), np.arange(4))
    x = np.array([1.0, 3.0, 7.0, 10.0])
    np.testing.assert_allclose(D[0, 0], np.abs(x[:, None] - x[None, :]))
    cid = store.set_candidates([4.0, 0.0], against=np.array([0, 3]))
    B = store.block(np.array([0, 3]), cid)
    np.testing.assert_allclose(B[0, 0], [[3.0, 1.0], [6.0, 10.0]])
    with pytest.raises(IndexError):
        store.block(np.array([1]), cid)  # not computed: 1 was not in 'against'
    with pytest.raises(IndexError):
        store.block(cid, cid)
    store.add([11.0])
    with pytest.raises(IndexError):  # stale once the persistent set grew
        store.block(np.array([0]), cid)


def test_nasbot_computes_only_new_rows_between_asks():
    space = ToyChainSpace()
    opt = NASBOT(space, None, np.random.default_rng(2), **FAST)
    rng = np.random.default_rng(9)
    for i in range(len(opt.design)):
        s = opt.ask()
        opt.tell(Trial(i, s.config, None), Result(float(len(s.config)), 1.0))
    s = opt.ask()
    n1 = len(opt.store)
    calls = []
    inner = opt.store.pairwise
    opt.store.pairwise = lambda a, b: calls.append((len(a), len(b))) or inner(a, b)
    new = s.config if space.key(s.config) not in {space.key(t.config) for t in opt.history} else space.sample(rng)
    opt.tell(Trial(100, new, None), Result(0.5, 1.0))
    opt.ask()
    n_gp = len({space.key(t.config) for t in opt.history})
    grew = len(opt.store) - n1
    assert grew <= 1
    rows = [c for c in calls if c[1] != n_gp]  # everything except candidate rows against the GP inputs
    assert sum(a * b for a, b in rows) <= grew * n1 + grew  # new x old + new x new, nothing recomputed
    assert any(a > 1 and b == n_gp for a, b in calls)  # candidate batches, against exactly the GP inputs


def test_kernel_is_the_authors_sum_of_exponentials():
    store, _ = _abs_store()
    store.add([0.0, 1.0, 2.5])
    ker = DistanceSumKernel(store, (1.0, 2.0), (0.01, 100.0), ((1e-3, 10.0), (0.1, 100.0)))
    P = np.log([[2.0, 0.5, 0.7, 3.0]])  # alpha, alpha', beta, beta'
    X = np.array([[0.0], [1.0], [2.0]])
    K = ker(P, X, X)[0]
    d = np.abs(np.array([0.0, 1.0, 2.5])[:, None] - np.array([0.0, 1.0, 2.5])[None, :])
    dbar = d / (1 + d)
    np.testing.assert_allclose(K, 2.0 * np.exp(-0.7 * d) + 0.5 * np.exp(-3.0 * dbar**2))
    np.testing.assert_allclose(ker.diag(P, X)[0], [2.5] * 3)
    assert ker.log_prior(P)[0] > -np.inf
    assert ker.log_prior(np.log([[2.0, 0.5, 100.0, 3.0]]))[0] == -np.inf


def test_non_psd_gram_matrices_are_projected():
    A = np.array([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]])  # indefinite
    assert np.linalg.eigvalsh(A).min() < 0
    B = project_psd(A)
    assert np.linalg.eigvalsh(B).min() > -1e-12
    np.testing.assert_allclose(B, B.T)


def test_exp_sampling_prefers_the_likely_hyperparameters():
    # data from a GP with a long length scale: the weighted draws should favour small betas
    store, _ = _abs_store()
    x = np.linspace(0.0, 10.0, 25)
    store.add(list(x))
    ker = DistanceSumKernel(store, (1.0, 2.0), (0.01, 100.0), ((1e-3, 10.0), (0.1, 100.0)))
    y = np.sin(x / 3.0)
    y_std = (y - y.mean()) / y.std()
    rng = np.random.default_rng(0)
    th = exp_sample_hyperparameters(ker, x[:, None], y_std, float(np.median(y_std)), (0.005, 0.2), rng,
                                    n_samples=2000, n_keep=7)
    assert th.shape == (7, gp.n_hyper(ker))
    log_beta_d = th[:, 2]
    assert np.median(log_beta_d) < 0.5 * (math.log(1e-3) + math.log(10.0))  # below the box's middle
    assert np.all(th[:, -2] == float(np.median(y_std)))


def test_pending_networks_are_hallucinated_with_the_posterior_mean():
    store, _ = _abs_store()
    store.add([0.0, 2.0, 4.0, 6.0, 3.0])
    ker = DistanceSumKernel(store, (1.0, 2.0), (0.01, 100.0), ((1e-3, 10.0), (0.1, 100.0)))
    theta = np.array([[0.0, -3.0, math.log(0.5), 0.0, 0.0, math.log(0.01)]])
    post = gp.GPPosterior(ker, np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([1.0, 0.0, 2.0, 1.0]), theta)
    held = condition_on_pending(post, np.array([[4.0]]), np.random.default_rng(0), strategy="mean")
    a, b = post.predict(np.array([[4.0]])), held.predict(np.array([[4.0]]))
    np.testing.assert_allclose(a.mean, b.mean, atol=1e-8)  # asy_hei: mean unchanged
    assert b.variance[0, 0] < 0.2 * a.variance[0, 0]  # ... variance of the augmented GP


# -- on the real layer-graph space ------------------------------------------------------------

def _depth(g) -> int:
    depth = [0] * g.n_layers
    for i in range(g.n_layers):
        ps = g.parents(i)
        depth[i] = max(depth[p] for p in ps) + 1 if ps else 0
    return depth[-1]


def synthetic_mlp_loss(g) -> float:
    """Smooth in log total units and in depth (longest ip-op path); optimum 2000 units, depth 9."""
    units = sum(u for u in g.units if u)
    return float((math.log2(units) - math.log2(2000.0)) ** 2 / 4.0 + (_depth(g) - 9) ** 2 / 16.0)


class SyntheticMLP(Benchmark):
    """A cheap objective on NASBOT's MLP space (not registered)."""

    name = ""
    kind = "synthetic"

    def setup(self) -> None:
        from benchsuite.architectures.layer_graph_space import LayerGraphSpace
        self.space = LayerGraphSpace("mlp")

    def evaluate(self, config: Any, fidelity: float | None = None, seed: int = 0) -> Result:
        config, _ = self.check(config, fidelity)
        return Result(loss=synthetic_mlp_loss(config), cost_s=1.0)


def test_nasbot_on_layer_graphs_uses_the_pool_otmann_and_pending():
    from benchsuite.architectures.layer_graph import LayerGraph
    from benchsuite.architectures.layer_graph_space import LayerGraphSpace
    space = LayerGraphSpace("mlp")
    opt = NASBOT(space, None, np.random.default_rng(3), hp_samples=200)
    assert opt.design == list(space.pool) and opt.store.K == 4  # the four structural weights
    for i in range(len(opt.design)):
        s = opt.ask()
        opt.tell(Trial(i, s.config, None), Result(synthetic_mlp_loss(s.config), 1.0))
    running = Trial(99, space.sample(np.random.default_rng(1)), None)
    s = opt.ask([running])
    g = space.validate(s.config)
    assert isinstance(g, LayerGraph) and s.info["phase"] == "bo"
    taken = {space.key(t.config) for t in opt.history} | {space.key(running.config)}
    assert space.key(g) not in taken
    assert opt.store.id_of(running.config) is not None  # the running network entered the GP
    json.loads(space.to_json(g))


@pytest.mark.slow
def test_nasbot_beats_rand_on_a_synthetic_mlp_problem():
    bench = SyntheticMLP()
    finals = {"nasbot": [], "nasbot_rand": []}
    for seed in range(4):
        for cls, st in ((NASBOT, {"hp_samples": 500}), (NASBOTRand, {})):
            out = run(bench, cls, seed=seed, budget_evals=30, workers=1, optimizer_settings=st,
                      include_overhead=False)
            finals[cls.name].append(min(r["loss"] for r in out.rows if r["status"] == "ok"))
    assert np.mean(finals["nasbot"]) < np.mean(finals["nasbot_rand"]), finals
