"""Tests of the combinatorial baselines: SA, regularized evolution, BOCS, the SMAC and TPE bridges."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from benchsuite.optimizers.acquisition.annealing import all_neighbours, anneal_batch, random_moves, unordered_mask
from benchsuite.optimizers.bocs import BOCS, InteractionFeatures
from benchsuite.optimizers.models.sparse_blr import HorseshoeRegression
from benchsuite.optimizers.random_search import RandomSearch
from benchsuite.optimizers.regularized_evolution import RegularizedEvolution
from benchsuite.optimizers.simulated_annealing import SimulatedAnnealing
from benchsuite.optimizers.simulated_annealing_bocs import SimulatedAnnealingBOCS

from benchsuite.convert import from_optuna, optuna_params, to_configspace
from benchsuite.convert import to_optuna_distributions as to_optuna
from benchsuite.errors import InvalidSettingError, UnsupportedError
from benchsuite.registry import make_benchmark
from benchsuite.runner import run
from benchsuite.space import Binary, Categorical, Float, Integer, Ordinal, Space
from benchsuite.testing import check_optimizer

HAS_SMAC = importlib.util.find_spec("smac") is not None
HAS_OPTUNA = importlib.util.find_spec("optuna") is not None

MIXED = Space([Binary("b"), Categorical("c", ["x", "y", "z"]), Ordinal("o", [0.1, 0.5, 2.0]),
               Integer("n", 1, 8, log=True), Float("lr", 1e-4, 1.0, log=True)])


def _best(bench_name: str, opt: type, budget: int, seed: int, settings: dict | None = None, **bset) -> float:
    out = run(make_benchmark(bench_name, bset), opt, seed=seed, budget_evals=budget, include_overhead=False,
              optimizer_settings=settings or {})
    return min(r["loss"] for r in out.rows)


# ------------------------------------------------------------------------ shared moves
def test_random_moves_change_exactly_one_variable_within_its_neighbourhood() -> None:
    space = Space([Binary("b"), Categorical("c", list("abcde")), Ordinal("o", list(range(6))), Integer("n", 0, 3)])
    nl, un = space.n_levels, unordered_mask(space)
    rng = np.random.default_rng(0)
    x = space.sample_codes(rng, 500)
    y = random_moves(x, nl, un, rng)
    diff = x != y
    assert (diff.sum(axis=1) == 1).all()
    j = diff.argmax(axis=1)
    steps = np.abs(x[np.arange(500), j] - y[np.arange(500), j])
    assert (steps[~un[j]] == 1).all()  # ordinal / integer: adjacent levels only
    assert set(j.tolist()) == {0, 1, 2, 3}
    # the code-level neighbourhood equals Space.neighbours
    c = x[0]
    got = {tuple(r) for r in all_neighbours(c, nl, un)}
    want = {tuple(space.to_codes(n)) for n in space.neighbours(space.from_codes(c))}
    assert got == want


def test_anneal_batch_finds_minimum_of_separable_function() -> None:
    nl = np.array([7] * 6)
    target = np.array([0, 6, 3, 2, 5, 1])
    f = lambda c: np.abs(c - target).sum(axis=1).astype(float)  # noqa: E731
    rng = np.random.default_rng(1)
    best, fbest = anneal_batch(f, rng.integers(0, 7, (4, 6)), nl, np.zeros(6, bool), rng, n_steps=400)
    assert fbest.min() == 0 and (best[fbest.argmin()] == target).all()


# ------------------------------------------------------------------- sparse regression
def test_horseshoe_regression_recovers_sparse_coefficients() -> None:
    rng = np.random.default_rng(0)
    feats = InteractionFeatures(np.array([2] * 8), 2)
    X = feats(rng.integers(0, 2, (40, 8)))
    beta = np.zeros(feats.n_features)
    beta[[1, 5, 20]] = [3.0, -2.0, 1.5]
    y = 0.7 + X @ beta + 0.05 * rng.standard_normal(40)
    model = HorseshoeRegression(np.random.default_rng(3))
    draws = [model.fit(X, y, 300 if i == 0 else 2) for i in range(100)]
    mean = np.mean(draws, axis=0)
    np.testing.assert_allclose(mean[[1, 5, 20]], beta[[1, 5, 20]], atol=0.3)
    assert np.abs(np.delete(mean, [1, 5, 20])).max() < 0.3
    assert model.intercept(mean) == pytest.approx(0.7, abs=0.3)


def test_horseshoe_beta_draw_uses_fast_sampler_when_p_exceeds_n() -> None:
    """The Bhattacharya et al. draw has the right mean: with tiny noise it interpolates."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 30))
    y = X[:, 0] * 2.0
    model = HorseshoeRegression(np.random.default_rng(1))
    draws = [model.fit(X, y, 200 if i == 0 else 1) for i in range(200)]
    pred = X @ np.mean(draws, axis=0)
    assert np.corrcoef(pred, y - y.mean())[0, 1] > 0.99


@pytest.mark.parametrize("order", ["C", "F"])
def test_horseshoe_beta_draw_reusing_work_arrays_equals_fresh_arrays(order) -> None:
    """The draw's work arrays are reused while X's shape and layout stay; the draws equal the formula with
    fresh arrays bit for bit, across a change of n and of layout (BOCS's features are Fortran-ordered)."""
    def fresh(model, X, y, rng):  # the draw as written before the arrays were kept
        n, p = X.shape
        d = np.clip(model.sigma2 * model.tau2 * model.lam2, 1e-300, 1e300)
        s = np.sqrt(model.sigma2)
        phi = X / s
        u = rng.standard_normal(p) * np.sqrt(d)
        v = phi @ u + rng.standard_normal(n)
        m = (phi * d) @ phi.T + np.eye(n)
        return u + d * (phi.T @ np.linalg.solve(m, y / s - v))

    rng = np.random.default_rng(0)
    model = HorseshoeRegression(np.random.default_rng(1))
    model._reset(700)
    model.lam2 = rng.random(700) + 0.1
    for n, layout in [(40, order), (40, order), (41, order), (41, "F" if order == "C" else "C")]:
        X = np.asarray(rng.integers(0, 2, (n, 700)), dtype=float, order=layout)
        y = rng.standard_normal(n)
        state = model.rng.bit_generator.state
        got = model._draw_beta(X, y)
        assert model._work[0].strides == X.strides
        model.rng.bit_generator.state = state
        np.testing.assert_array_equal(got, fresh(model, X, y, model.rng))


def test_interaction_features_binary_and_categorical() -> None:
    f = InteractionFeatures(np.array([2, 2, 2]), 2)
    assert f.n_features == 3 + 3
    np.testing.assert_array_equal(f(np.array([[1, 0, 1]])), [[1, 0, 1, 0, 1, 0]])
    g = InteractionFeatures(np.array([3, 2]), 2)  # 2 + 1 indicators, 2 cross products
    assert g.n_features == 5
    np.testing.assert_array_equal(g(np.array([[2, 1]])), [[0, 1, 1, 0, 1]])
    assert InteractionFeatures(np.array([2] * 5), 3).n_features == 5 + 10 + 10


# ----------------------------------------------------------------------- conformance
def test_simulated_annealing_conformance() -> None:
    check_optimizer(SimulatedAnnealing, settings={"n_init": 3})


def test_simulated_annealing_bocs_conformance() -> None:
    check_optimizer(SimulatedAnnealingBOCS)
    check_optimizer(SimulatedAnnealingBOCS, settings={"n_init": 3})


def test_regularized_evolution_conformance() -> None:
    check_optimizer(RegularizedEvolution, settings={"population_size": 4, "sample_size": 2})


def test_bocs_conformance() -> None:
    check_optimizer(BOCS, settings={"n_init": 4, "gibbs_burnin": 30, "gibbs_steps": 3, "sa_steps": 40})


@pytest.mark.skipif(not HAS_OPTUNA, reason="optuna not installed (pip install 'benchsuite[tpe]')")
def test_tpe_conformance() -> None:
    check_optimizer(TPE_cls(), settings={"n_init": 4})


@pytest.mark.skipif(not HAS_OPTUNA, reason="optuna not installed (pip install 'benchsuite[tpe]')")
def test_tpe_hyperopt_gamma_splits_as_hyperopt_and_reaches_the_sampler() -> None:
    from benchsuite.optimizers.tpe_bridge import hyperopt_gamma

    # hyperopt ap_split_trials: min(ceil(0.25 sqrt(n)), 25); Optuna's default would give 2, 10, 25, 25
    assert [hyperopt_gamma(n) for n in (20, 100, 300, 20_000)] == [2, 3, 5, 25]
    check_optimizer(TPE_cls(), settings={"n_init": 4, "gamma": "hyperopt"})
    opt = TPE_cls()(make_benchmark("branin_discrete").space, None, np.random.default_rng(0), gamma="hyperopt")
    assert opt.study.sampler._gamma is hyperopt_gamma


@pytest.mark.slow
@pytest.mark.skipif(not HAS_SMAC, reason="smac not installed (pip install 'benchsuite[smac]')")
def test_smac_conformance() -> None:
    from benchsuite.optimizers.smac_bridge import SMAC

    check_optimizer(SMAC, settings={"n_init": 4}, budget=8)


@pytest.mark.slow
@pytest.mark.skipif(not HAS_SMAC, reason="smac not installed (pip install 'benchsuite[smac]')")
def test_smac_short_run_on_binary_space() -> None:
    from benchsuite.optimizers.smac_bridge import SMAC

    out = run(make_benchmark("maxsat28"), SMAC, seed=0, budget_evals=6, include_overhead=False,
              optimizer_settings={"n_init": 4})
    assert len(out.rows) == 6 and len({r["config"] for r in out.rows}) == 6



@pytest.mark.skipif(not HAS_SMAC, reason="smac not installed (pip install 'benchsuite[smac]')")
def test_smac_random_probability_default_is_the_facades_and_one_means_random() -> None:
    """An empty random_probability leaves SMAC's facade as it was (0.2 for hpo): the committed SMAC runs
    stay reproducible; 0.2 given explicitly suggests the same; 1.0 hands every suggestion to the random design."""
    from benchsuite.optimizers.smac_bridge import SMAC

    def configs(**settings):
        out = run(make_benchmark("maxsat28"), SMAC, seed=3, budget_evals=12, include_overhead=False,
                  optimizer_settings={"n_init": 4, **settings})
        return [r["config"] for r in out.rows]

    default = configs()
    assert configs(random_probability=0.2) == default
    always = configs(random_probability=1.0)
    assert always[:4] == default[:4] and always[4:] != default[4:]  # the design is the same, the rest is not
    with pytest.raises(Exception, match="random_probability"):
        configs(random_probability=1.5)

def TPE_cls() -> type:
    from benchsuite.optimizers.tpe_bridge import TPE

    return TPE


# ---------------------------------------------------------------------- performance
def test_sa_and_re_beat_random_search_on_branin_discrete() -> None:
    seeds = range(5)
    rs = np.median([_best("branin_discrete", RandomSearch, 100, s) for s in seeds])
    sa = np.median([_best("branin_discrete", SimulatedAnnealing, 100, s) for s in seeds])
    re = np.median([_best("branin_discrete", RegularizedEvolution, 100, s,
                          {"population_size": 20, "sample_size": 5}) for s in seeds])
    assert sa < rs and re < rs
    assert sa < 0.5 and re < 0.5  # grid optimum 0.4038; combo.txt Table 2: SA 0.4659 after 100


def test_bocs_beats_random_search_on_small_maxsat() -> None:
    settings = {"n_init": 10, "gibbs_burnin": 200, "gibbs_steps": 5, "sa_steps": 150}
    bocs = _best("maxsat28", BOCS, 30, 0, settings)
    rs = np.mean([_best("maxsat28", RandomSearch, 30, s) for s in range(5)])
    assert bocs < rs


def test_sa_walk_accepts_only_improvements_at_zero_temperature() -> None:
    from benchsuite.benchmark import Result
    from benchsuite.optimizer import Trial

    space = Space([Binary(f"b{i}") for i in range(6)])
    opt = SimulatedAnnealing(space, None, 0, n_init=2, t_max=1e-12, t_min=1e-12)
    weights = np.arange(1, 7)
    current = []
    for i in range(20):
        s = opt.ask()
        loss = float(space.to_codes(s.config) @ weights)  # minimum at all zeros
        opt.tell(Trial(i, s.config, None), Result(loss, 1.0))
        current.append(opt.current_loss)
    assert all(b <= a for a, b in zip(current[1:], current[2:]))
    assert current[-1] < current[1]


def test_bocs_refuses_too_many_features() -> None:
    with pytest.raises(InvalidSettingError, match="max_features"):
        BOCS(Space([Binary(f"b{i}") for i in range(40)]), None, 0, order=3, max_features=1000)


# ----------------------------------------------------------------------- converters
@pytest.mark.skipif(not HAS_SMAC, reason="ConfigSpace not installed (pip install 'benchsuite[smac]')")
def test_configspace_conversion_round_trip() -> None:
    from benchsuite.convert import from_configspace

    cs = to_configspace(MIXED, seed=0)
    assert sorted(cs.keys()) == sorted(MIXED.names)
    assert cs["lr"].log and cs["n"].log and list(cs["o"].sequence) == [0.1, 0.5, 2.0]
    assert type(cs["b"]).__name__.startswith("Categorical")
    for c in cs.sample_configuration(20):
        ours = from_configspace(MIXED, c)
        assert MIXED.validate(ours) == ours
    default = from_configspace(MIXED, cs.get_default_configuration())
    assert default["lr"] == pytest.approx(MIXED.default()["lr"])
    assert {k: v for k, v in default.items() if k != "lr"} == {k: v for k, v in MIXED.default().items() if k != "lr"}


@pytest.mark.skipif(not HAS_OPTUNA, reason="optuna not installed (pip install 'benchsuite[tpe]')")
def test_optuna_conversion_round_trip() -> None:
    d = to_optuna(MIXED)
    assert type(d["o"]).__name__ == "IntDistribution" and d["o"].high == 2
    assert d["lr"].log and d["n"].log
    assert list(d["c"].choices) == ["x", "y", "z"]
    rng = np.random.default_rng(0)
    for cfg in MIXED.sample(rng, 20):
        assert from_optuna(MIXED, optuna_params(MIXED, cfg)) == MIXED.validate(cfg)


def test_bridges_fail_with_install_hint_when_library_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def fake(name: str, *a, **k):
        if name.split(".")[0] in ("smac", "optuna", "ConfigSpace"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", fake)
    from benchsuite.optimizers.smac_bridge import SMAC
    from benchsuite.optimizers.tpe_bridge import TPE

    with pytest.raises(UnsupportedError, match=r"benchsuite\[smac\]"):
        SMAC(MIXED, None, 0)
    with pytest.raises(UnsupportedError, match=r"benchsuite\[tpe\]"):
        TPE(MIXED, None, 0)


# ------------------------------------------------------- BOCS's SA (combo.txt Table 1's SA row)
def _sa_bocs_run(budget: int, seed: int = 0, **settings) -> tuple[list[dict], SimulatedAnnealingBOCS]:
    out = run(make_benchmark("ising", {"instance_mode": "combo_authors", "problem_seed": 3}),
              SimulatedAnnealingBOCS, seed=seed, budget_evals=budget, include_overhead=False,
              optimizer_settings=settings)
    return out.rows, out.optimizer


def test_simulated_annealing_bocs_schedule_and_move() -> None:
    """BOCS simulated_annealing.m: T = 1 * 0.8^k at proposal k, one bit flipped from the current state."""
    import json

    rows, opt = _sa_bocs_run(60)
    assert len(rows) == 60  # one random start + 59 proposals, each evaluated
    temps = [r["info"]["temperature"] for r in rows[1:]]
    np.testing.assert_allclose(temps, 0.8 ** np.arange(1, 60), rtol=1e-12)
    codes = np.array([list(json.loads(r["config"]).values()) for r in rows])
    losses = np.array([r["loss"] for r in rows])
    # replay the walk: the state a proposal came from is the one of {previous state, previous
    # proposal} one bit away (the two differ in one bit, so exactly one is); improvements are
    # always taken and a worse proposal far beyond T (exp(-50)) never is
    state = 0  # row index of the walk's state
    for k in range(1, 60):
        cands = {state, k - 1} if k > 1 else {0}
        froms = [c for c in cands if np.sum(codes[k] != codes[c]) == 1]
        assert len(froms) == 1
        if k > 1 and froms[0] == k - 1:  # the previous proposal was accepted
            assert losses[k - 1] < losses[state] + 50 * rows[k - 1]["info"]["temperature"]
        elif k > 1:
            assert not losses[k - 1] < losses[state]
        state = froms[0]
    assert opt.temperature == pytest.approx(0.8 ** 59)


def test_simulated_annealing_bocs_acceptance_extremes() -> None:
    # cold: only improvements are accepted, so the walk's state is the incumbent
    rows, opt = _sa_bocs_run(80, t_init=1e-12)
    assert opt.current_loss == min(r["loss"] for r in rows)
    # hot and not cooling: (almost) every proposal is accepted, the state is the last proposal
    rows, opt = _sa_bocs_run(40, t_init=1e12, cooling=0.999999)
    assert opt.accepted == 39 and opt.current_loss == rows[-1]["loss"]
    # the temperature underflows to 0 after thousands of steps: no division by zero
    sa = SimulatedAnnealingBOCS(Space([Binary("a"), Binary("b")]), rng=0, t_init=1e-300, cooling=1e-10)
    from benchsuite.benchmark import Result
    from benchsuite.optimizer import Trial
    for k in range(6):
        sug = sa.ask()
        sa.tell(Trial.from_suggestion(sug, k), Result(loss=float(k % 2), cost_s=1.0))
    assert sa.temperature == 0.0


def test_simulated_annealing_bocs_revisits_cost_evaluations_and_bad_settings() -> None:
    rows, _ = _sa_bocs_run(120, t_init=1e-12)
    configs = [r["config"] for r in rows]
    assert len(set(configs)) < len(configs)  # BOCS keeps no memory: a rejected flip can be proposed again
    for bad in ({"cooling": 1.0}, {"cooling": 0.0}, {"t_init": 0.0}, {"n_init": 0}):
        with pytest.raises(InvalidSettingError):
            SimulatedAnnealingBOCS(Space([Binary("a")]), rng=0, **bad)
    with pytest.raises(UnsupportedError):
        run(make_benchmark("ising"), SimulatedAnnealingBOCS, seed=0, budget_evals=4, workers=2)


def test_a_smac_run_leaves_the_root_logger_as_it_was() -> None:
    """SMAC's logging set-up used to lower the root logger to ERROR: every later warning of the suite (an
    unwritable cache, a stale lock taken over) vanished for the rest of the process."""
    import logging

    pytest.importorskip("smac")
    from benchsuite import registry
    from benchsuite.runner import run

    root = logging.getLogger()
    before = (root.level, list(root.handlers))
    run(registry.make_benchmark("branin", {}), registry.get_optimizer("smac"), seed=0, budget_evals=5,
        optimizer_settings={"n_init": 4})
    assert (root.level, list(root.handlers)) == before
    assert logging.getLogger("benchsuite.datasets").getEffectiveLevel() <= logging.WARNING


@pytest.mark.parametrize("levels, order", [([2] * 9, 2), ([2] * 9, 3), ([2, 5, 3, 2, 4], 3), ([5] * 4, 2)])
def test_interaction_features_are_the_products_of_the_indicators(levels: list[int], order: int) -> None:
    """The boolean build gives, byte for byte, the product of the float indicators (the model's X and the
    annealer's surrogate are unchanged by it)."""
    feats = InteractionFeatures(np.array(levels), order)
    codes = np.random.default_rng(0).integers(0, np.array(levels), (37, len(levels)))
    z = feats.indicators(codes)
    ref = np.concatenate([z[:, t].prod(axis=2) for t in feats.terms], axis=1)
    got = feats(codes)
    assert got.dtype == np.float64 and got.shape == (37, feats.n_features) and got.tobytes() == ref.tobytes()
    assert got.flags.f_contiguous and ref.flags.f_contiguous  # the layout BLAS sums X @ beta by
    assert feats(codes[3]).tobytes() == ref[3:4].tobytes()  # one configuration, as the annealer's neighbours
