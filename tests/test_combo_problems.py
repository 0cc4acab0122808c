"""Tests of COMBO's problems: Ising sparsification, contamination control, pest control, MaxSAT."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchsuite.benchmarks.combo_problems import (ContaminationControl, IsingSparsification, PestControl,
                                                  all_spins, grid_edges)
from benchsuite.benchmarks.maxsat import WCNF, MaxSAT28, MaxSAT43, MaxSAT60, MaxSATEvaluator
from benchsuite.errors import DataError, InvalidConfigError, InvalidSettingError
from benchsuite.registry import get_benchmark


@pytest.fixture(scope="module")
def ising() -> IsingSparsification:
    return IsingSparsification()


def test_ising_grid_has_24_edges_and_couplings_in_range(ising: IsingSparsification) -> None:
    assert len(ising.space) == 24 and len(grid_edges(4, 4)) == 24
    mag = np.abs(ising.couplings)
    assert (mag >= 0.05).all() and (mag <= 5).all()
    assert len(set(np.sign(ising.couplings))) == 2  # both signs occur


def test_ising_kl_zero_when_all_edges_kept(ising: IsingSparsification) -> None:
    assert ising.test_loss({n: 1 for n in ising.space.names}) == pytest.approx(0.0, abs=1e-10)


def test_ising_kl_matches_direct_sum(ising: IsingSparsification) -> None:
    """The moment formula equals sum_z p(z) log(p(z)/q(z)) computed state by state."""
    spins = all_spins(16).astype(float)
    rng = np.random.default_rng(1)

    def log_pmf(j: np.ndarray) -> np.ndarray:
        e = np.zeros(len(spins))
        for (a, b), jab in zip(ising.edges, j):
            e += 2 * jab * spins[:, a] * spins[:, b]
        return e - np.log(np.exp(e - e.max()).sum()) - e.max()

    lp = log_pmf(ising.couplings)
    for _ in range(3):
        x = rng.integers(0, 2, 24)
        direct = float(np.sum(np.exp(lp) * (lp - log_pmf(ising.couplings * x))))
        assert ising.kl(x[None])[0] == pytest.approx(direct, rel=1e-9, abs=1e-12)
    # empty model: q uniform, so KL = 16 log 2 - H(p)
    assert ising.kl(np.zeros((1, 24)))[0] == pytest.approx(16 * np.log(2) + np.sum(np.exp(lp) * lp))


def test_ising_lambda_adds_l1_and_problem_seed_changes_instance() -> None:
    a = IsingSparsification(**{"lambda": 1e-2})
    b = IsingSparsification(**{"lambda": 0.0})
    x = {n: 1 for n in a.space.names}
    assert a.evaluate(x).loss == pytest.approx(b.evaluate(x).loss + 0.24)
    c = IsingSparsification(problem_seed=7)
    assert not np.allclose(c.couplings, b.couplings)
    np.testing.assert_array_equal(IsingSparsification(problem_seed=7).couplings, c.couplings)


def test_contamination_matches_naive_recursion() -> None:
    p = ContaminationControl(problem_seed=3, **{"lambda": 1e-4})
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 25)
    z = p.init_z.copy()
    loss = 0.0
    for i in range(25):
        z = p.lambdas[i] * (1 - x[i]) * (1 - z) + (1 - p.gammas[i] * x[i]) * z
        loss += x[i] - (np.mean(z < 0.1) - 0.95)
    loss += 1e-4 * x.sum()
    assert p.evaluate(p.space.from_codes(x)).loss == pytest.approx(loss)
    # batch evaluation agrees with one-by-one
    X = rng.integers(0, 2, (5, 25))
    np.testing.assert_allclose(p.evaluate_codes(X), [p.evaluate_codes(r[None])[0] for r in X])


def test_contamination_deterministic_and_seed_dependent() -> None:
    x = {f"x{i:02d}": i % 2 for i in range(25)}
    a = ContaminationControl(problem_seed=1)
    assert a.evaluate(x, seed=1).loss == a.evaluate(x, seed=2).loss == ContaminationControl(problem_seed=1).test_loss(x)
    assert a.evaluate(x).loss != ContaminationControl(problem_seed=2).evaluate(x).loss
    # preventing at every stage costs 25 and keeps almost every simulation below U
    assert a.test_loss({n: 1 for n in a.space.names}) == pytest.approx(25 - 25 * 0.05, abs=0.2)


def test_pest_control_matches_naive_loop() -> None:
    p = PestControl(problem_seed=5)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = rng.integers(0, 5, 25)
        beta = dict(zip(range(1, 5), [2 / 7, 3 / 7, 3 / 7, 5 / 7]))
        price = {1: 1.0, 2: 0.8, 3: 0.7, 4: 0.5}
        disc = {1: 0.2, 2: 0.3, 3: 0.3, 4: 0.0}
        tol = {1: 1 / 7, 2: 2.5 / 7, 3: 2 / 7, 4: 0.5 / 7}
        z = p.init_z.copy()
        total = 0.0
        for i in range(25):
            total += np.mean(z > 0.1)
            k = int(x[i])
            if k:
                r = 1 - (1 - p.control_u[i]) ** (1 / beta[k])
                z = (1 - r) * z
                beta[k] += tol[k] / 25
                total += price[k] * (1 - disc[k] / 25 * np.sum(x == k))
            else:
                z = p.spread[i] * (1 - z) + z
        assert p.evaluate(p.space.from_codes(x)).loss == pytest.approx(total)


def test_pest_control_space_and_validation() -> None:
    p = PestControl()
    assert len(p.space) == 25 and p.space.n_levels.tolist() == [5] * 25
    with pytest.raises(InvalidConfigError):
        p.evaluate({**{n: 0 for n in p.space.names}, "x00": 5})
    with pytest.raises(InvalidSettingError):
        PestControl(n_mc=0)
    # doing nothing lets the pests spread: worse than treating every station
    none = p.test_loss({n: 0 for n in p.space.names})
    treat = p.test_loss({n: 3 for n in p.space.names})
    assert none > 20 and treat < none


# ----------------------------------------------------------------------------- MaxSAT
def _naive_maxsat(cnf: WCNF, w: np.ndarray, x: np.ndarray) -> float:
    total = 0.0
    for wi, clause in zip(w, cnf.clauses):
        if any((x[abs(l) - 1] == 1) if l > 0 else (x[abs(l) - 1] == 0) for l in clause):
            total += wi
    return -total


@pytest.mark.parametrize("cls,n_vars,n_clauses", [(MaxSAT28, 28, 420), (MaxSAT43, 43, 1806), (MaxSAT60, 60, 698)])
def test_maxsat_vectorised_matches_naive(cls: type, n_vars: int, n_clauses: int) -> None:
    b = cls()
    assert len(b.space) == n_vars and len(b.cnf.clauses) == n_clauses
    assert b.weights.mean() == pytest.approx(0, abs=1e-9) and b.weights.std() == pytest.approx(1)
    X = np.random.default_rng(0).integers(0, 2, (4, n_vars))
    got = b.evaluate_codes(X)
    for row, g in zip(X, got):
        assert g == pytest.approx(_naive_maxsat(b.cnf, b.weights, row))
    assert b.evaluate(b.space.from_codes(X[0])).loss == pytest.approx(got[0])


def test_maxsat60_optimum_is_certified_and_matches_paper() -> None:
    b = MaxSAT60()
    # combo.txt Table 3: COMBO reaches -195.6527 +- 0 on wMaxSAT60
    assert b.optimum == pytest.approx(-195.6527, abs=1e-4)
    assert b.test_loss({n: 0 for n in b.space.names}) == pytest.approx(b.optimum)
    assert b.cnf.comments[0] == "optimum value = 38928"
    assert MaxSAT28().optimum is None


def test_maxcut_sets_score_an_assignment_and_its_complement_alike() -> None:
    """What reproductions/notes.yaml (maxsat60, bocs_sa3) rests on: on the two max-cut sets a pull toward
    assignments with many bits set costs nothing; on frb10-6-4 every bit set costs."""
    rng = np.random.default_rng(0)
    for cls in (MaxSAT28, MaxSAT43):
        b = cls()
        x = rng.integers(0, 2, size=(200, len(b.space.n_levels)))
        np.testing.assert_allclose(b.evaluate_codes(x), b.evaluate_codes(1 - x), rtol=0, atol=1e-9)
    b = MaxSAT60()
    x = rng.integers(0, 2, size=(200, 60))
    assert np.abs(b.evaluate_codes(x) - b.evaluate_codes(1 - x)).max() > 50
    dense = np.ones((1, 60), dtype=np.int64)
    # all bits set: as far above 0 as the optimum is below
    assert b.evaluate_codes(dense)[0] == pytest.approx(-b.optimum)


def test_wcnf_parser_and_errors(tmp_path) -> None:
    f = tmp_path / "t.wcnf"
    f.write_text("c test\np wcnf 3 3 100\n2 1 -2 0\n3 -1 0\n5 2 3 0\n")
    cnf = WCNF.read(f)
    ev = MaxSATEvaluator(cnf.n_vars, cnf.clauses, cnf.weights)
    for bits in itertools.product([0, 1], repeat=3):
        x = np.array(bits)
        assert ev(x[None])[0] == pytest.approx(-_naive_maxsat(cnf, cnf.weights, x))
    f.write_text("p wcnf 3 2\n1 1 0\n")
    with pytest.raises(DataError, match="2 clauses"):
        WCNF.read(f)
    f.write_text("p wcnf 3 1\n1 1 4 0\n")
    with pytest.raises(DataError, match="beyond"):
        WCNF.read(f)


def test_maxsat_missing_data_dir_raises_data_error(tmp_path) -> None:
    with pytest.raises(DataError, match="missing"):
        MaxSAT28(data_dir=str(tmp_path))


def test_problems_are_registered() -> None:
    for name in ("ising", "contamination", "pest_control", "maxsat28", "maxsat43", "maxsat60"):
        assert get_benchmark(name).name == name


# ------------------------------------------------- the COMBO authors' instances (issue 23)
from benchsuite.benchmarks.combo_problems import (combo_initial_design, combo_ising_couplings,  # noqa: E402
                                                  combo_seed_pairs, mt19937_torch_stream)


def test_authors_seed_pairs_are_their_25_runs() -> None:
    ising = combo_seed_pairs("ising")
    # issue 23 (read from their random_seed_config.py): instance seeds 8733, 8158, 6786, 1286, 8193
    assert sorted({c for c, _ in ising}) == [1286, 6786, 8158, 8193, 8733]
    assert len(ising) == 25 and len(set(ising)) == 25
    assert ising == sorted(ising)  # their main.py: sorted instances, then each one's sorted designs
    assert [c for c, _ in ising] == [c for c in sorted({c for c, _ in ising}) for _ in range(5)]
    cont = combo_seed_pairs("contamination")
    assert len({c for c, _ in cont}) == 5 and {c for c, _ in cont}.isdisjoint({c for c, _ in ising})
    pest = combo_seed_pairs("pest_control")
    assert len(pest) == 25 and all(c is None for c, _ in pest)
    assert 5355 in [s for _, s in pest]  # the seed their multiple_categorical.py's example uses
    with pytest.raises(InvalidSettingError, match="problem"):
        combo_seed_pairs("maxsat28")


@pytest.mark.parametrize("seed", [8733, 1182, 5355])
def test_torch_draws_are_the_mersenne_twister_stream_of_2019_torch(seed: int) -> None:
    """randint(0, k) = u % k and rand() = (u & (2^24 - 1)) / 2^24 on MT19937 outputs u: TH's algorithm."""
    import torch

    raw = mt19937_torch_stream(seed, 48)
    g = torch.Generator().manual_seed(seed)
    ints = torch.randint(0, 2, (12,), generator=g).numpy()
    unif = torch.rand(12, generator=g).numpy()
    np.testing.assert_array_equal(ints, raw[:12] % 2)
    np.testing.assert_array_equal(unif, ((raw[12:24] & 0xFFFFFF) * 2.0**-24).astype(np.float32))
    # the initial design's one-at-a-time randint(0, k, (1, 1)) calls take one output each
    np.testing.assert_array_equal(combo_initial_design([5] * 4, seed, n_points=6).ravel(), raw[:24] % 5)


def test_authors_ising_instance_and_design() -> None:
    b = IsingSparsification(instance_mode="combo_authors", problem_seed=7)
    case, init = b.authors_pair
    assert (case, init) == combo_seed_pairs("ising")[7]
    # their variable order: edges (i, j), i < j, sorted (BOCS's upper triangle)
    assert b.edges.tolist() == sorted(grid_edges(4, 4).tolist())
    hor, ver = combo_ising_couplings(4, 4, case)
    for k, (i, j) in enumerate(b.edges.tolist()):
        r, c = divmod(i, 4)
        assert b.couplings[k] == (hor[r, c] if j == i + 1 else ver[r, c])
    assert np.array_equal(b.couplings.astype(np.float32).astype(np.float64), b.couplings)  # their float32 values
    assert ((np.abs(b.couplings) >= 0.05) & (np.abs(b.couplings) <= 5)).all()
    assert b.test_loss({n: 1 for n in b.space.names}) == pytest.approx(0.0, abs=1e-10)
    # same instance for the 5 pairs of an instance seed, another one for the next
    same = IsingSparsification(instance_mode="combo_authors", problem_seed=5)
    other = IsingSparsification(instance_mode="combo_authors", problem_seed=10)
    np.testing.assert_array_equal(same.couplings, b.couplings)
    assert not np.allclose(other.couplings, b.couplings)
    design = b.initial_design()
    codes = np.array([b.space.to_codes(c) for c in design])
    assert codes.shape == (20, 24) and set(np.unique(codes)) <= {0, 1}
    np.testing.assert_array_equal(codes.ravel(), mt19937_torch_stream(init, 480) % 2)
    assert not np.array_equal(codes, [same.space.to_codes(c) for c in same.initial_design()])
    assert IsingSparsification().initial_design() is None  # independent mode has no authors' design
    prov = b.provenance()
    assert (prov["authors_instance_seed"], prov["authors_init_seed"]) == (case, init)


def test_authors_ising_kl_matches_direct_sum() -> None:
    b = IsingSparsification(instance_mode="combo_authors", problem_seed=0, **{"lambda": 1e-4})
    spins = all_spins(16).astype(float)

    def log_pmf(j: np.ndarray) -> np.ndarray:
        e = np.zeros(len(spins))
        for (a, c), jac in zip(b.edges, j):
            e += 2 * jac * spins[:, a] * spins[:, c]
        return e - np.log(np.exp(e - e.max()).sum()) - e.max()

    lp = log_pmf(b.couplings)
    x = np.random.default_rng(3).integers(0, 2, 24)
    direct = float(np.sum(np.exp(lp) * (lp - log_pmf(b.couplings * x)))) + 1e-4 * x.sum()
    assert b.evaluate_codes(x[None])[0] == pytest.approx(direct, rel=1e-9, abs=1e-12)


def test_authors_contamination_instance() -> None:
    c = ContaminationControl(instance_mode="combo_authors", problem_seed=24)
    case, _ = c.authors_pair
    # three freshly seeded legacy streams, as their generate_contamination_dynamics
    np.testing.assert_array_equal(c.init_z, np.random.RandomState(case).beta(1.0, 30.0, 100))
    np.testing.assert_array_equal(c.gammas, np.random.RandomState(case).beta(1.0, 3.0 / 7.0, (25, 100)))
    x = np.random.default_rng(1).integers(0, 2, 25)
    z = c.init_z.copy()
    loss = 0.0
    for i in range(25):
        z = c.lambdas[i] * (1 - x[i]) * (1 - z) + (1 - c.gammas[i] * x[i]) * z
        loss += x[i] - (np.mean(z < 0.1) - 0.95)
    assert c.evaluate_codes(x[None])[0] == pytest.approx(loss, rel=1e-12)
    assert c.initial_design() is not None and len(c.initial_design()) == 20


@pytest.mark.parametrize("cls,settings", [(IsingSparsification, {"problem_seed": 25}),
                                          (ContaminationControl, {"problem_seed": 99}),
                                          (ContaminationControl, {"problem_seed": 0, "n_stages": 21}),
                                          (PestControl, {"problem_seed": 0, "n_mc": 50}),
                                          (IsingSparsification, {"problem_seed": 0, "instance_mode": "authors"})])
def test_authors_mode_bad_settings_are_one_line_errors(cls: type, settings: dict) -> None:
    settings = {"instance_mode": "combo_authors", **settings}
    with pytest.raises(InvalidSettingError) as exc:
        cls(**settings)
    assert "\n" not in str(exc.value)


def test_authors_pest_control_is_noisy_around_its_expected_cost() -> None:
    p = PestControl(instance_mode="combo_authors", problem_seed=14)
    assert p.authors_pair == (None, 5355)
    x = {n: (i % 4) + 1 if i % 3 else 0 for i, n in enumerate(p.space.names)}
    a, b = p.evaluate(x, seed=11).loss, p.evaluate(x, seed=12).loss
    assert a == p.evaluate(x, seed=11).loss and a != b  # a fresh Monte Carlo draw per evaluation seed
    noisy = np.array([p.evaluate(x, seed=s).loss for s in range(300)])
    expected = p.test_loss(x)
    assert expected == p.test_loss(x)  # the expected cost is deterministic
    assert abs(noisy.mean() - expected) < 4 * noisy.std() / np.sqrt(len(noisy)) + 0.02
    # the independent mode is a fixed draw, unchanged by the evaluation seed
    q = PestControl(problem_seed=0)
    assert q.evaluate(x, seed=11).loss == q.evaluate(x, seed=12).loss
    design = p.initial_design()
    assert len(design) == 20 and all(0 <= v < 5 for c in design for v in p.space.to_codes(c))


def test_combo_binary_protocol_runs_the_authors_25_pairs() -> None:
    from benchsuite.paths import PROTOCOLS_DIR
    from benchsuite.protocol import load_protocol

    proto = load_protocol(PROTOCOLS_DIR / "combo_binary.yaml")
    lambdas = {(b.name, b.settings["lambda"]) for b in proto.benchmarks}
    assert lambdas == {(p, lam) for p in ("ising", "contamination") for lam in (0.0, 1e-4, 1e-2)}
    assert "simulated_annealing_bocs" in [o.name for o in proto.optimizers] and proto.repetitions == 25
    for spec in proto.benchmarks:
        pairs = []
        for r in range(proto.repetitions):
            settings = spec.settings_for(r)
            assert settings["instance_mode"] == "combo_authors"
            pair = combo_seed_pairs(spec.name)[settings["problem_seed"]]
            assert pair == combo_seed_pairs(spec.name)[r]  # repetition r is the authors' run r + 1
            pairs.append(pair)
        assert sorted(pairs) == combo_seed_pairs(spec.name)
    pest = [b for b in load_protocol(PROTOCOLS_DIR / "combo_ordinal_categorical.yaml").benchmarks
            if b.name == "pest_control"][0]
    assert pest.settings_for(7) == {"instance_mode": "combo_authors", "problem_seed": 7}
