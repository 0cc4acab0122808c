"""How good is the Monte Carlo p_min at the default settings? (issue 5: "state which and why")

Fits the GP of gp_ei/entropy_search to 30 random Branin points, draws 50 EI-based
representer points, and scores 300 random candidates with the entropy-search gain at a
reference setting (4,000 draws of f per hyperparameter sample, 9 Gauss-Hermite
innovations) and at cheaper settings, including the plugins' default (200 draws, 5
innovations). Reports the rank correlation with the reference and how much of the
reference's best gain the cheaper setting's choice achieves.

    .venv/bin/python studies/entropy_mc_accuracy.py
"""
from __future__ import annotations

import numpy as np
from benchsuite.optimizers.acquisition.entropy import EntropySearch, sample_representers
from benchsuite.optimizers.acquisition.functions import integrated_ei
from benchsuite.optimizers.inference.mcmc import HyperparameterSampler
from benchsuite.optimizers.kernels.continuous import Matern52
from benchsuite.optimizers.models import gp
from scipy.stats import spearmanr

from benchsuite.benchmarks.synthetic import branin


def main() -> None:
    """Print the comparison."""
    rng = np.random.default_rng(0)
    X = rng.random((30, 2))
    y = branin(-5 + 15 * X[:, 0], 15 * X[:, 1])
    k = Matern52(range(2))
    post = gp.GPPosterior(k, X, y, HyperparameterSampler(k, rng, burnin=100, chain_length=50).sample(X, y))

    def score(Z: np.ndarray) -> np.ndarray:
        return integrated_ei(post.predict(Z), y.min())

    Z, log_b = sample_representers(score, 2, rng, 50, 1000)
    C = rng.random((300, 2))
    ref = EntropySearch(post, Z, log_b, np.random.default_rng(1), n_samples=4000, n_innovations=9)(C)
    print(f"{post.n_samples} hyperparameter samples, 50 representers, 300 candidates; reference 4000 draws x 9 nodes")
    for M, K in [(200, 5), (500, 5), (1000, 9)]:
        g = EntropySearch(post, Z, log_b, np.random.default_rng(2), n_samples=M, n_innovations=K)(C)
        print(f"draws {M:5d}, innovations {K}: Spearman {spearmanr(g, ref)[0]:.3f}, reference gain of the chosen "
              f"candidate / best reference gain = {ref[np.argmax(g)] / ref.max():.3f}")


if __name__ == "__main__":
    main()
