"""studies/bocs_thompson_density.py: the pieces its numbers rest on (assignments per k, the committed run, samples)."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def study(load_script):
    return load_script("studies/bocs_thompson_density.py")


def test_fixed_assignments_set_exactly_k_bits(study) -> None:
    grid = study.fixed_assignments(np.random.default_rng(0), 60, 4)
    assert grid.shape == (4 * len(study.KS), 60)
    assert grid.sum(axis=1).tolist() == [k for k in study.KS for _ in range(4)]
    assert len({tuple(r) for r in grid[4 * 6:4 * 7]}) == 4  # k = 30: distinct random assignments


def test_committed_run_is_read_in_trial_order(study) -> None:
    from benchsuite.benchmarks.maxsat import MaxSAT60

    codes, losses = study.committed_run(0, MaxSAT60().space)
    assert codes.shape == (270, 60) and set(np.unique(codes)) <= {0, 1}
    assert np.isfinite(losses).all() and losses.min() < -100  # the run's incumbent is far below random points


def test_samples_of_both_models_fit_the_data(study) -> None:
    rng = np.random.default_rng(1)
    X = (rng.random((15, 40)) < 0.5).astype(float)
    y = 1.0 + 2.0 * X[:, 0] - X[:, 3] + 0.05 * rng.standard_normal(15)
    for variant in ("ours", "code"):
        draws = list(study.samples(variant, X, y, 3, np.random.default_rng(2)))
        assert len(draws) == 3
        beta, b0, tau2, sigma2 = draws[-1]
        assert beta.shape == (40,) and tau2 > 0 and sigma2 > 0
        assert np.sqrt(np.mean((b0 + X @ beta - y) ** 2)) < 0.5  # p > n: the sample interpolates closely
        if variant == "code":
            assert b0 == pytest.approx(y.mean())  # the code's intercept is mean(y)
    with pytest.raises(SystemExit, match="ours or code"):
        next(study.samples("other", X, y, 1, rng))
