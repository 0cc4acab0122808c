"""TreeBO (NASBOT's baseline; Jenatton et al. 2017): the tree of feed-forward networks, the tree model and
the plugin on NASBOT's spaces."""
from __future__ import annotations

import math

import numpy as np
import pytest

from benchsuite import registry
from benchsuite.architectures.chain_tree import Chain
from benchsuite.architectures.layer_graph import LayerGraph
from benchsuite.architectures.layer_graph_space import LayerGraphSpace
from benchsuite.benchmark import Result
from benchsuite.errors import InvalidConfigError, UnsupportedError
from benchsuite.optimizer import Trial

CPU = {"max_num_layers": 15, "max_num_units_per_layer": 64}  # protocols/nasbot_cpu.yaml's space


def _space(kind: str, **limits) -> LayerGraphSpace:
    return LayerGraphSpace(kind, **(CPU if not limits else limits))


# -- the tree -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_the_tree_has_the_layer_graph_spaces_limits(kind: str) -> None:
    tree = _space(kind).feed_forward()
    # ip + L layers + decision layer + op between the space's 5 and 15 layers
    assert tree.depths == tuple(range(2, 13))
    assert (tree.unit_values[0], tree.unit_values[-1]) == (8, 64)
    wide = LayerGraphSpace(kind).feed_forward()  # the authors' limits: 5-60 layers, 8-1024 units
    assert (wide.depths[0], wide.depths[-1], wide.unit_values[-1]) == (2, 57, 1024)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_chains_are_layer_graphs_and_back(kind: str) -> None:
    space = _space(kind)
    tree = space.feed_forward()
    rng = np.random.default_rng(0)
    for depth in tree.depths:
        chain = tree.sample(rng, depth)
        g = tree.to_config(chain)
        assert isinstance(g, LayerGraph) and g.n_layers == depth + 3 and space.is_valid(g)
        assert g.edges == tuple((i, i + 1) for i in range(g.n_layers - 1))
        assert tree.from_config(g) == chain
    # every network of the authors' initial pool is a chain, so TreeBO starts where NASBOT does
    assert all(tree.from_config(g) is not None for g in space.initial_pool())


def test_a_network_with_a_skip_is_not_a_chain() -> None:
    space = _space("mlp")
    g = LayerGraph("mlp", ("ip", "relu", "tanh", "linear", "op"), (None, 16, 16, None, None),
                   ((0, 1), (1, 2), (2, 3), (3, 4), (1, 3)))
    assert space.is_valid(g) and space.feed_forward().from_config(g) is None


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_the_trees_rules_agree_with_the_space(kind: str) -> None:
    """Validity by the tree's own rules (what the acquisition search relies on) is validity in the space, on
    chains with random decisions that break the rules about half of the time."""
    space = _space(kind)
    tree = space.feed_forward()
    rng = np.random.default_rng(1)
    agree = broken = 0
    for _ in range(400):
        chain = tree.sample(rng)
        types, units, strides = list(chain.types), list(chain.units), list(chain.strides)
        i = int(rng.integers(chain.depth))
        types[i] = tree.types[int(rng.integers(len(tree.types)))]
        units[i] = [None, 4, 8, 64, 65][int(rng.integers(5))]
        strides[i] = [None, 1, 2][int(rng.integers(3))]
        c = Chain(tuple(types), tuple(units), tuple(strides))
        try:
            tree.to_config(c)
            in_space = True
        except InvalidConfigError:
            in_space = False
        follows = tree.follows_rules(c)
        if follows:
            assert in_space, c
        elif in_space:  # the space fills in a pool's missing stride (pools always halve); the tree asks for 2
            assert any(t.endswith("pool") and s is None for t, s in zip(c.types, c.strides)), c
        agree += 1
        broken += not follows
    assert agree == 400 and 100 < broken < 380


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_neighbours_stay_in_the_leaf_and_in_the_space(kind: str) -> None:
    space = _space(kind)
    tree = space.feed_forward()
    rng = np.random.default_rng(2)
    for _ in range(10):
        chain = tree.sample(rng)
        nbrs = tree.neighbours(chain)
        assert nbrs and chain not in nbrs
        for n in nbrs:
            assert n.depth == chain.depth
            assert sum(a != b for a, b in zip(zip(n.types, n.units, n.strides),
                                              zip(chain.types, chain.units, chain.strides))) == 1
            assert space.is_valid(tree.to_config(n))


def test_shared_features_tie_a_layer_position_across_depths() -> None:
    tree = _space("mlp").feed_forward()
    short = Chain(("relu", "tanh"), (8, 64), (None, None))
    long = Chain(("relu", "tanh", "elu"), (8, 64, 16), (None, None, None))
    phi = tree.shared_features(tree.rows([short, long]))
    width = 1 + tree.layer_width
    assert phi.shape == (2, tree.max_depth * width)
    assert np.array_equal(phi[0, :2 * width], phi[1, :2 * width])  # layers 1 and 2: the same columns
    assert phi[0, 2 * width] == 0 and phi[1, 2 * width] == 1  # layer 3 exists only in the long one
    assert tree.leaf_inputs(tree.rows([long]), 3).shape == (1, 3 * tree.layer_width)


# -- the model ------------------------------------------------------------------------------------------
def _data(tree, rng, n, depths, f):
    chains = [tree.sample(rng, int(depths[int(rng.integers(len(depths)))])) for _ in range(n)]
    return chains, np.array([f(c) for c in chains])


def _first_layer_units(c: Chain) -> float:
    return math.log2(c.units[0]) + 0.5 * (c.types[0] == "tanh")


def test_the_kernel_is_the_sum_of_a_linear_model_and_independent_leaf_gps() -> None:
    from benchsuite.optimizers.kernels.tree import TreeKernel

    tree = _space("mlp").feed_forward()
    kernel = TreeKernel(tree)
    rng = np.random.default_rng(3)
    chains, _ = _data(tree, rng, 12, [3, 4], _first_layer_units)
    X = tree.rows(chains)
    P = np.array([[math.log(2.0), 0.0, 0.5, math.log(0.1)]])
    K = kernel(P, X, X)[0]
    assert np.all(np.linalg.eigvalsh(K) > -1e-9)
    phi = tree.shared_features(X)
    same = X[:, 0][:, None] == X[:, 0][None, :]
    lin = 0.1 * phi @ phi.T
    assert np.allclose(K[~same], lin[~same])  # different leaves: only the shared linear part
    assert np.allclose(np.diag(K), np.diag(lin) + 2.0)  # amplitude on the diagonal
    assert np.allclose(kernel.diag(P, X)[0], np.diag(K))


def test_the_posterior_is_jenattons_weight_space_posterior() -> None:
    """The n x n GP form equals the paper's form: Bayesian linear weights with the leaf GPs as correlated
    noise (Woodbury), predictions = phi* mu_c + leaf-GP correction, variances with the weights' covariance."""
    from benchsuite.optimizers.kernels.continuous import _matern52_of_r
    from benchsuite.optimizers.kernels.tree import TreeKernel
    from benchsuite.optimizers.models import tree_gp

    tree = _space("mlp").feed_forward()
    kernel = TreeKernel(tree)
    rng = np.random.default_rng(4)
    chains, y = _data(tree, rng, 15, [2, 3, 4], _first_layer_units)
    X = tree.rows(chains)
    amp, ls, lin, noise = 1.5, np.array([0.7, 0.4]), 0.2, 0.05
    theta = np.array([math.log(amp), *np.log(ls), math.log(lin), 0.0, math.log(noise)])
    post = tree_gp.posterior(kernel, X, y, theta)
    shift, scale = post.y_shift, post.y_scale
    ys = (y - shift) / scale
    stars, _ = _data(tree, rng, 6, [2, 3, 4, 5], _first_layer_units)
    Xs = tree.rows(stars)

    def leaf_k(A, B, leaf):
        a, b = tree.leaf_inputs(A, leaf), tree.leaf_inputs(B, leaf)
        g = tree.leaf_groups(leaf)
        r2 = sum(((a[:, None, g == k] - b[None, :, g == k]) ** 2).sum(-1) / ls[k] ** 2 for k in range(2))
        return amp * _matern52_of_r(np.sqrt(r2))

    # weight space: A = blockdiag(K_leaf) + noise I, c | y ~ N(mu, Sigma)
    leaves = X[:, 0].astype(int)
    A = noise * np.eye(len(X))
    for leaf in np.unique(leaves):
        i = np.flatnonzero(leaves == leaf)
        A[np.ix_(i, i)] += leaf_k(X[i], X[i], leaf)
    Phi = tree.shared_features(X)
    Ainv = np.linalg.inv(A)
    Sigma = np.linalg.inv(np.eye(Phi.shape[1]) / lin + Phi.T @ Ainv @ Phi)
    mu = Sigma @ Phi.T @ Ainv @ ys
    resid = ys - Phi @ mu
    for j, leaf in enumerate(Xs[:, 0].astype(int)):
        phi = tree.shared_features(Xs[j:j + 1])[0]
        i = np.flatnonzero(leaves == leaf)
        k = np.zeros(len(X))
        if len(i):
            k[i] = leaf_k(X[i], Xs[j:j + 1], leaf)[:, 0]
        m = phi @ mu + k @ Ainv @ resid
        h = phi - Phi.T @ Ainv @ k
        v = amp - k @ Ainv @ k + h @ Sigma @ h
        p = post.predict(Xs[j:j + 1])
        assert p.mean[0, 0] == pytest.approx(m * scale + shift, rel=1e-6, abs=1e-8)
        assert p.variance[0, 0] == pytest.approx(v * scale**2, rel=1e-6, abs=1e-10)


def test_shared_layers_carry_information_to_an_unseen_depth() -> None:
    """The point of the tree model: data at depths 2-3 only predict networks of depth 6, whose first layer
    the loss depends on (the linear model on shared variables), though the leaf-6 GP has seen nothing."""
    from benchsuite.optimizers.kernels.tree import TreeKernel
    from benchsuite.optimizers.models import tree_gp

    tree = _space("mlp").feed_forward()
    kernel = TreeKernel(tree)
    rng = np.random.default_rng(5)
    chains, y = _data(tree, rng, 30, [2, 3], _first_layer_units)
    X = tree.rows(chains)
    theta = tree_gp.fit(kernel, X, y, rng, restarts=1)
    post = tree_gp.posterior(kernel, X, y, theta)
    test, truth = _data(tree, rng, 40, [6], _first_layer_units)
    pred = post.predict(tree.rows(test)).mean[0]
    assert np.corrcoef(pred, truth)[0, 1] > 0.9


# -- the plugin -----------------------------------------------------------------------------------------
def test_treebo_needs_a_space_of_feed_forward_networks() -> None:
    treebo = registry.get_optimizer("treebo")
    bench = registry.make_benchmark("nb201_cifar10")
    with pytest.raises(UnsupportedError) as err:
        treebo.check_supports(bench.space, bench.fidelity, 2)
    assert "\n" not in str(err.value) and "feed_forward" in str(err.value)
    treebo.check_supports(_space("cnn"), None, 4)


def _loss(g: LayerGraph) -> float:
    """A stand-in for a trained network with the structure TreeBO models: a term for the depth, one per
    layer; best with 4 tanh layers of 16 units, far from the initial pool's networks."""
    layers = [(lab, u) for lab, u in zip(g.labels, g.units) if u is not None]
    return ((len(layers) - 4) ** 2 / 8 + sum(0.3 * (lab != "tanh") + (math.log2(u) - 4) ** 2 / 16
                                               for lab, u in layers))


def _drive(opt, space, n: int, workers: int = 1) -> list[float]:
    """Ask/tell ``n`` trials, keeping ``workers - 1`` trials running (shown as pending) as the runner does."""
    losses, running, tid = [], [], 0
    while len(losses) < n:
        while len(running) < workers and tid < n:
            s = opt.ask(list(running))
            keys = {space.key(t.config) for t in running} | {space.key(t.config) for t in opt.history}
            assert space.key(s.config) not in keys, "proposed a network that is evaluated or running"
            running.append(Trial.from_suggestion(s, tid))
            tid += 1
        t = running.pop(0)
        loss = _loss(space.validate(t.config))
        opt.tell(t, Result(loss, 1.0))
        losses.append(loss)
    return losses


@pytest.mark.slow
def test_treebo_finds_better_networks_than_random_chains() -> None:
    """30 evaluations (the nasbot_cpu budget) with 2 workers, 4 seeds: TreeBO's best beats the best of the
    same initial pool plus random chains in each (measured: 0.44 / 0.20 / 0.67 / 0.30 against 0.73 / 0.80 /
    0.80 / 0.66; about 50 s on a shared core)."""
    from benchsuite.optimizers.treebo import TreeBO

    space = _space("mlp")
    tree = space.feed_forward()
    ours, rand = [], []
    for seed in range(4):
        opt = TreeBO(space, None, np.random.default_rng(seed), n_random=30, local_starts=1, local_steps=2,
                     restarts=0)
        ours.append(min(_drive(opt, space, 30, workers=2)))
        rng = np.random.default_rng(100 + seed)
        pool = [_loss(g) for g in space.initial_pool()]
        rand.append(min(pool + [_loss(tree.to_config(tree.sample(rng))) for _ in range(30 - len(pool))]))
    assert all(o < r for o, r in zip(ours, rand)), (ours, rand)


def test_treebo_starts_from_the_initial_pool_and_proposes_only_chains() -> None:
    from benchsuite.optimizers.treebo import TreeBO

    space = _space("cnn")
    tree = space.feed_forward()
    opt = TreeBO(space, None, np.random.default_rng(0), **TreeBO.test_settings)
    asked = []
    for i in range(len(space.initial_pool()) + 4):
        s = opt.ask()
        asked.append(s)
        opt.tell(Trial.from_suggestion(s, i), Result(_loss(space.validate(s.config)), 1.0))
    assert [space.key(s.config) for s in asked[:len(space.initial_pool())]] == \
        [space.key(g) for g in space.initial_pool()]
    assert all(tree.from_config(s.config) is not None for s in asked)
    bo = [s.info for s in asked if s.info["phase"] == "bo"]
    assert bo and all(info["leaf"] in tree.depths and info["ei"] >= 0 for info in bo)


def test_treebo_trains_live_networks(tmp_path) -> None:
    """Its chains are the suite's layer graphs: the live benchmark builds and trains them (tiny settings)."""
    from benchsuite import api

    bench = registry.get_benchmark("nasbot_mlp_naval")
    from benchsuite.testing import missing_data

    if missing_data(bench, bench.test_settings):
        pytest.skip(missing_data(bench, bench.test_settings))
    df = api.run("nasbot_mlp_naval", "treebo", seed=0, budget_evals=7, workers=2,
                 optimizer_settings=registry.get_optimizer("treebo").test_settings,
                 benchmark_settings=bench.test_settings)
    assert len(df) == 7 and (df["status"] == "ok").all()
    assert np.isfinite(df["loss"]).all()
