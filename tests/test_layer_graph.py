"""NASBOT's layer-graph space: validity, canonical form, JSON, the nine modifiers, sampling."""
from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from benchsuite.architectures.layer_graph import (
    CNN_LABELS, DEFAULT_CONSTRAINTS, MLP_LABELS, Constraints, LayerGraph, dists_from_ip, image_sizes, layer_masses,
    validate_graph,
)
from benchsuite.architectures.layer_graph_modifiers import MODIFIER_MASSES, MODIFIERS, MUTATION_STEP_PROBS, apply_modifier, mutate
from benchsuite.architectures.layer_graph_pool import initial_pool
from benchsuite.architectures.layer_graph_space import LayerGraphSpace
from benchsuite.benchmark import Benchmark, Result
from benchsuite.errors import InvalidConfigError, InvalidSettingError, UnknownNameError
from benchsuite.runner import run
from benchsuite.optimizers.random_search import RandomSearch
from benchsuite.optimizers.regularized_evolution import RegularizedEvolution

KINDS = ("mlp", "cnn")


@pytest.fixture(scope="module")
def spaces() -> dict[str, LayerGraphSpace]:
    return {k: LayerGraphSpace(k) for k in KINDS}


@pytest.fixture(scope="module")
def samples(spaces) -> dict[str, list[LayerGraph]]:
    rng = np.random.default_rng(7)
    return {k: [spaces[k].sample(rng) for _ in range(12)] + initial_pool(k)[:4] for k in KINDS}


def _mlp(labels, units, edges) -> dict:
    return {"kind": "mlp", "labels": labels, "units": units, "edges": edges}


GOOD_MLP = _mlp(["ip", "relu", "tanh", "linear", "op"], [None, 16, 32, None, None],
                [[0, 1], [1, 2], [0, 2], [2, 3], [3, 4]])


def _is_topological(g: LayerGraph) -> bool:
    return all(p < c for p, c in g.edges) and g.labels[0] == "ip" and g.labels[-1] == "op"


# -- the data structure ------------------------------------------------------------------------
def test_labels_follow_authors_code():
    assert MLP_LABELS == ("relu", "crelu", "leaky-relu", "softplus", "elu", "logistic", "tanh")
    assert set(CNN_LABELS) == {"conv3", "conv5", "conv7", "res3", "res5", "res7", "max-pool", "avg-pool", "fc"}


def test_graph_is_frozen_and_hashable():
    g = validate_graph(GOOD_MLP)
    with pytest.raises(AttributeError):
        g.labels = ("ip",)  # type: ignore[misc]
    assert g.n_layers == 5 and g.parents(2) == (0, 1) and g.children(0) == (1, 2)
    assert {g: 1}[validate_graph(json.loads(g.to_json()))] == 1
    assert g.strides is None


def test_json_round_trip(samples, spaces):
    for kind in KINDS:
        for g in samples[kind]:
            assert LayerGraph.from_json(g.to_json()) == g
            assert LayerGraph.from_dict(g.to_dict()) == g
            text = spaces[kind].to_json(g)
            assert spaces[kind].from_json(text) == g
            assert spaces[kind].key(spaces[kind].from_json(text)) == spaces[kind].key(g)


def _renumber(g: LayerGraph, perm: np.ndarray) -> dict:
    """The same network with layer i called perm[i] (not a topological numbering in general)."""
    n = g.n_layers
    inv = np.argsort(perm)
    d = {"kind": g.kind, "labels": [g.labels[inv[j]] for j in range(n)],
         "units": [g.units[inv[j]] for j in range(n)],
         "edges": [[int(perm[p]), int(perm[c])] for p, c in reversed(g.edges)]}
    if g.strides is not None:
        d["strides"] = [g.strides[inv[j]] for j in range(n)]
    return d


def test_key_is_invariant_under_renumbering(samples, spaces):
    rng = np.random.default_rng(3)
    for kind in KINDS:
        sp = spaces[kind]
        for g in samples[kind]:
            for _ in range(3):
                other = _renumber(g, rng.permutation(g.n_layers))
                canon = validate_graph(other)
                assert _is_topological(canon)
                assert canon == g and sp.key(other) == sp.key(g)
                assert sp.key(json.dumps(other)) == sp.key(g)


def test_key_separates_different_networks():
    g = validate_graph(GOOD_MLP)
    other = dict(GOOD_MLP, units=[None, 16, 33, None, None])
    swapped = dict(GOOD_MLP, labels=["ip", "tanh", "relu", "linear", "op"])
    keys = {LayerGraphSpace("mlp", min_num_layers=None, min_num_units_per_layer=None).key(x)
            for x in (g, other, swapped)}
    assert len(keys) == 3


def test_symmetric_branches_get_one_canonical_form():
    # two parallel branches written in either order are the same network
    a = _mlp(["ip", "relu", "tanh", "linear", "op"], [None, 8, 16, None, None],
             [[0, 1], [0, 2], [1, 3], [2, 3], [3, 4]])
    b = _mlp(["ip", "tanh", "relu", "linear", "op"], [None, 16, 8, None, None],
             [[0, 1], [0, 2], [1, 3], [2, 3], [3, 4]])
    assert validate_graph(a) == validate_graph(b)


# -- bad input: one line naming the problem ----------------------------------------------------
BAD = {
    "cycle": (_mlp(["ip", "relu", "tanh", "linear", "op"], [None, 8, 8, None, None],
                   [[0, 1], [1, 2], [2, 1], [2, 3], [3, 4]]), "cycle"),
    "missing output": (_mlp(["ip", "relu", "linear"], [None, 8, None], [[0, 1], [1, 2]]), "missing output"),
    "unknown label": (_mlp(["ip", "swish", "linear", "op"], [None, 8, None, None],
                           [[0, 1], [1, 2], [2, 3]]), "unknown label 'swish'"),
    "zero units": (_mlp(["ip", "relu", "linear", "op"], [None, 0, None, None],
                        [[0, 1], [1, 2], [2, 3]]), "0 units"),
    "self edge": (_mlp(["ip", "relu", "linear", "op"], [None, 8, None, None],
                       [[0, 1], [1, 1], [1, 2], [2, 3]]), "to itself"),
    "unreachable": (_mlp(["ip", "relu", "tanh", "linear", "op"], [None, 8, 8, None, None],
                         [[0, 1], [2, 3], [1, 3], [3, 4]]), "not reachable from the input"),
    "dead end": (_mlp(["ip", "relu", "tanh", "linear", "op"], [None, 8, 8, None, None],
                      [[0, 1], [0, 2], [1, 3], [3, 4]]), "no path to the output"),
    "non-decision feeds op": (_mlp(["ip", "relu", "linear", "op"], [None, 8, None, None],
                                   [[0, 1], [1, 2], [1, 3], [2, 3]]), "only linear layers may feed"),
    "negative units": (_mlp(["ip", "relu", "linear", "op"], [None, -4, None, None],
                            [[0, 1], [1, 2], [2, 3]]), "-4 units"),
    "edge out of range": (_mlp(["ip", "relu", "linear", "op"], [None, 8, None, None],
                               [[0, 1], [1, 2], [2, 9]]), "outside"),
    "cnn label in mlp": (_mlp(["ip", "conv3", "linear", "op"], [None, 8, None, None],
                              [[0, 1], [1, 2], [2, 3]]), "unknown label 'conv3'"),
    "bad stride": ({"kind": "cnn", "labels": ["ip", "conv3", "fc", "softmax", "op"],
                    "units": [None, 8, 8, None, None], "strides": [None, 3, None, None, None],
                    "edges": [[0, 1], [1, 2], [2, 3], [3, 4]]}, "stride 3"),
    "image size mismatch": ({"kind": "cnn", "labels": ["ip", "conv3", "conv3", "conv3", "fc", "softmax", "op"],
                             "units": [None, 8, 8, 8, 8, None, None], "strides": [None, 1, 2, 1, None, None, None],
                             "edges": [[0, 1], [0, 2], [1, 3], [2, 3], [3, 4], [4, 5], [5, 6]]},
                            "different image sizes"),
    "conv after fc": ({"kind": "cnn", "labels": ["ip", "conv3", "fc", "conv3", "softmax", "op"],
                       "units": [None, 8, 8, 8, None, None],
                       "edges": [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]}, "flat"),
    "unknown key": (dict(GOOD_MLP, colour="red"), "unknown key"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_networks_give_one_line_errors(case):
    net, words = BAD[case]
    for given in (net, json.dumps(net)):
        with pytest.raises(InvalidConfigError) as info:
            validate_graph(given)
        msg = str(info.value)
        assert "\n" not in msg and words in msg and msg.startswith("layer graph:"), msg


def test_bad_json_text_and_constraint_violation(spaces):
    with pytest.raises(InvalidConfigError, match="not valid JSON"):
        spaces["mlp"].validate('{"kind": "mlp", "labels": [')
    big = _mlp(["ip", "relu", "linear", "op"], [None, 4096, None, None], [[0, 1], [1, 2], [2, 3]])
    validate_graph(big)  # well formed ...
    with pytest.raises(InvalidConfigError, match="min_num_layers=5"):
        spaces["mlp"].validate(big)  # ... but outside the authors' limits
    assert not spaces["mlp"].is_valid(big) and spaces["mlp"].is_valid(GOOD_MLP)
    with pytest.raises(InvalidConfigError, match=r"max_num_units_per_layer=1024 \(a layer has 4096"):
        validate_graph(big, {"min_num_layers": 3})
    with pytest.raises(InvalidConfigError, match="this space holds mlp"):
        spaces["mlp"].validate(initial_pool("cnn")[0])
    with pytest.raises(InvalidSettingError, match="unknown layer-graph constraint"):
        LayerGraphSpace("mlp", max_layers=3)


# -- masses, pools, analyses ----------------------------------------------------------------------
def test_layer_masses_reproduce_figure_1():
    # nasbot.txt Fig. 1a and 1b print the layer masses; the paper's figure weighs fc layers by 1
    fig_a = {"kind": "cnn", "labels": ["ip", "conv3", "conv3", "conv3", "conv5", "max-pool", "fc", "softmax", "op"],
             "units": [None, 16, 16, 32, 32, None, 16, None, None],
             "edges": [[i, i + 1] for i in range(8)]}
    m = layer_masses(validate_graph(fig_a), fc_coeff=1.0)
    assert [round(x) for x in m] == [235, 16, 256, 512, 1024, 32, 512, 235, 235]
    fig_b = {"kind": "cnn", "labels": ["ip", "conv3", "conv3", "conv3", "conv3", "conv5", "max-pool", "fc",
                                       "softmax", "op"],
             "units": [None, 16, 16, 16, 16, 32, None, 16, None, None],
             "edges": [[0, 1], [1, 2], [2, 3], [2, 4], [3, 5], [4, 5], [5, 6], [6, 7], [7, 8], [8, 9]]}
    m = layer_masses(validate_graph(fig_b), fc_coeff=1.0)
    assert sorted(round(x) for x in m) == sorted([235, 16, 256, 256, 256, 1024, 32, 512, 235, 235])
    # the authors' code weighs fc by 0.1
    assert layer_masses(validate_graph(fig_a))[6] == pytest.approx(51.2)


def test_initial_pool_is_the_authors():
    mlp, cnn = initial_pool("mlp"), initial_pool("cnn")
    # blocked MLPs with 6, 8, 10, 12, 12, 16, 18, 20, 24, 24 hidden layers (+ ip, linear, op)
    assert [g.n_layers - 3 for g in mlp] == [6, 8, 10, 12, 12, 16, 18, 20, 24, 24]
    # VGG with 1-4 convs per block (+ 4 convs, 5 pools, 3 fc), blocked CNNs with 3-16 convs
    assert [g.n_layers for g in cnn[:4]] == [3 * k + 15 for k in range(1, 5)]
    assert [sum(lab.startswith("conv") for lab in g.labels) - 1 for g in cnn[4:]] == [3, 6, 9, 12, 15, 16]
    for g in mlp + cnn:
        validate_graph(g, DEFAULT_CONSTRAINTS)
        assert _is_topological(g) and len(g.edges) == g.n_layers - 1
    assert [u for u in mlp[0].units if u] == [64, 64, 128, 128, 256, 256]
    _, post = image_sizes(cnn[3])
    assert max(s for s in post if s) == 32  # VGG halves the image 5 times
    with pytest.raises(InvalidConfigError):
        initial_pool("rnn")


def test_narrow_unit_limits_scale_the_pool():
    sp = LayerGraphSpace("mlp", max_num_units_per_layer=64, min_num_units_per_layer=4)
    assert len(sp.pool) == 10
    for g in sp.pool:
        assert max(u for u in g.units if u) == 64 and min(u for u in g.units if u) >= 4
    with pytest.raises(InvalidSettingError, match="relax"):
        LayerGraphSpace("mlp", max_num_layers=6)


# -- modifiers -----------------------------------------------------------------------------------
def test_modifier_probabilities_are_the_authors():
    assert set(MODIFIERS) == {"inc_single", "dec_single", "inc_en_masse", "dec_en_masse", "remove_layer",
                              "wedge_layer", "swap_label", "dup_path", "skip"}
    assert sum(MODIFIERS.values()) == pytest.approx(1.0)
    assert MODIFIER_MASSES["skip"] == 2 * MODIFIER_MASSES["wedge_layer"] == 0.2
    assert MUTATION_STEP_PROBS == (0.5, 0.25, 0.125, 0.075, 0.05)


def _internal_units(g):
    return sorted(u for u in g.units if u is not None)


def _check_modifier_effect(name: str, g: LayerGraph, h: LayerGraph) -> None:
    """What Table 2 says each modifier does (compared as multisets: layers are re-numbered)."""
    lab_gone, lab_new = Counter(g.labels) - Counter(h.labels), Counter(h.labels) - Counter(g.labels)
    if name in ("inc_single", "dec_single", "inc_en_masse", "dec_en_masse"):
        assert not lab_gone and not lab_new and len(h.edges) == len(g.edges)
        gu, hu = [u for u in g.units if u], [u for u in h.units if u]
        ratio = 1.125 if name.startswith("inc") else 0.875
        scaled = {int(np.floor(a * ratio + 0.5)) for a in gu}
        assert len(gu) == len(hu) and ((sum(hu) > sum(gu)) == name.startswith("inc"))
        assert all(b in scaled or b in gu for b in hu)  # every unit kept or scaled by 1 +- 1/8
        if name.endswith("single"):
            diff = sum(hu) - sum(gu)
            assert any(int(np.floor(a * ratio + 0.5)) - a == diff for a in gu)
    elif name == "remove_layer":
        assert h.n_layers == g.n_layers - 1 and sum(lab_gone.values()) == 1 and not lab_new
    elif name == "wedge_layer":
        assert h.n_layers == g.n_layers + 1 and len(h.edges) == len(g.edges) + 1 and not lab_gone
    elif name == "swap_label":
        assert h.n_layers == g.n_layers and len(h.edges) == len(g.edges)
        assert sum(lab_gone.values()) == sum(lab_new.values()) == 1
    elif name == "dup_path":
        assert h.n_layers > g.n_layers and not lab_gone
        assert len(h.edges) - len(g.edges) == h.n_layers - g.n_layers + 1
    elif name == "skip":  # one new edge, or a chain of avg-pools to match the image size
        assert len(h.edges) - len(g.edges) == h.n_layers - g.n_layers + 1
        assert not lab_gone and set(lab_new) <= {"avg-pool"}


@pytest.mark.parametrize("kind", KINDS)
def test_every_modifier_gives_valid_networks(kind, samples, spaces):
    rng = np.random.default_rng(11)
    sp = spaces[kind]
    for name in MODIFIERS:
        applied = 0
        for g in samples[kind]:
            h = apply_modifier(g, name, rng)
            if h is None:
                continue
            applied += 1
            assert h != g and sp.is_valid(h) and _is_topological(h)
            assert validate_graph(h.to_dict(), DEFAULT_CONSTRAINTS) == h
            _check_modifier_effect(name, g, h)
        assert applied >= len(samples[kind]) // 2, (kind, name, applied)


def test_modifiers_never_change_their_input(samples):
    rng = np.random.default_rng(5)
    g = samples["cnn"][0]
    before = (g.labels, g.units, g.edges, g.strides)
    for name in MODIFIERS:
        apply_modifier(g, name, rng)
    assert (g.labels, g.units, g.edges, g.strides) == before


def test_apply_modifier_none_and_unknown_name():
    tiny = validate_graph(_mlp(["ip", "relu", "linear", "op"], [None, 8, None, None], [[0, 1], [1, 2], [2, 3]]))
    rng = np.random.default_rng(0)
    assert apply_modifier(tiny, "inc_en_masse", rng, constraints=None) is None  # needs >= 4 internal layers
    assert apply_modifier(tiny, "dec_single", rng) is None  # 7 units < the authors' minimum of 8
    assert apply_modifier(tiny, "dec_single", rng, constraints=None).units[1] == 7
    with pytest.raises(UnknownNameError, match="unknown modifier"):
        apply_modifier(tiny, "grow", rng)


def test_skip_pools_to_match_image_sizes():
    rng = np.random.default_rng(2)
    g = initial_pool("cnn")[0]  # a VGG chain: every skip past a pool needs avg-pools
    pooled = 0
    for _ in range(30):
        h = apply_modifier(g, "skip", rng)
        assert h is not None
        pooled += h.n_layers > g.n_layers
    assert pooled > 0


def test_mutate_is_seeded_and_valid(samples, spaces):
    for kind in KINDS:
        g = samples[kind][0]
        a = mutate(g, np.random.default_rng(9), n_steps=3)
        b = mutate(g, np.random.default_rng(9), n_steps=3)
        assert a == b and spaces[kind].is_valid(a)
        outs = {spaces[kind].key(spaces[kind].mutate(g, np.random.default_rng(s))) for s in range(10)}
        assert len(outs) >= 5 and spaces[kind].key(g) not in outs


# -- the space -----------------------------------------------------------------------------------
def test_sample_is_seeded_and_varied(spaces):
    for kind in KINDS:
        sp = spaces[kind]
        a = [sp.sample(np.random.default_rng(4)) for _ in range(2)]
        assert a[0] == a[1]
        rng = np.random.default_rng(4)
        many = [sp.sample(rng) for _ in range(15)]
        assert len({sp.key(g) for g in many}) >= 12
        assert all(sp.is_valid(g) for g in many)
        # sampled networks are not all feed-forward chains (the modifiers add branches)
        assert any(len(g.edges) > g.n_layers - 1 for g in many)


def test_neighbours_distinct_bounded_deterministic(samples):
    sp = LayerGraphSpace("cnn", max_neighbours=30)
    g = samples["cnn"][1]
    nb = sp.neighbours(g)
    assert 10 <= len(nb) <= 30 and nb == sp.neighbours(g)
    keys = [sp.key(h) for h in nb]
    assert len(set(keys)) == len(keys) and sp.key(g) not in keys
    assert all(sp.is_valid(h) for h in nb)
    # several kinds of change are represented
    assert len({h.n_layers - g.n_layers for h in nb}) >= 3


def test_dists_and_describe():
    g = validate_graph(GOOD_MLP)
    assert dists_from_ip(g) == [0, 1, 1, 2, 3]
    assert "relu" in g.describe()
    d = LayerGraphSpace("cnn").describe()
    assert "cnn" in d and "60" in d and "dup_path" in d
    assert Constraints().max_in_degree == 5


# -- the suite's optimizers run on the space unchanged --------------------------------------------
class _LayerCount(Benchmark):
    """Loss = number of layers (a tiny synthetic objective on layer graphs)."""

    name = "layer_count_test"
    kind = "synthetic"

    def __init__(self, net_kind: str):
        self.net_kind = net_kind
        super().__init__()

    def setup(self) -> None:
        self.space = LayerGraphSpace(self.net_kind)

    def evaluate(self, config, fidelity=None, seed=0) -> Result:
        config, _ = self.check(config, fidelity)
        return Result(loss=float(config.n_layers), cost_s=1.0)


@pytest.mark.parametrize("kind", KINDS)
def test_random_search_and_regularized_evolution_run(kind):
    bench = _LayerCount(kind)
    out = run(bench, RandomSearch, seed=0, budget_evals=6, workers=2)
    assert len(out.rows) == 6 and all(r["status"] == "ok" for r in out.rows)
    for r in out.rows:
        assert bench.space.from_json(r["config"]).n_layers == r["loss"]
    out = run(bench, RegularizedEvolution, seed=1, budget_evals=12,
              optimizer_settings={"population_size": 4, "sample_size": 2})
    losses = [r["loss"] for r in out.rows]
    assert len(losses) == 12 and out.rows[-1]["incumbent_loss"] == min(losses)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_modifiers_many_random_graphs(kind):
    sp = LayerGraphSpace(kind)
    rng = np.random.default_rng(123)
    for _ in range(60):
        g = sp.sample(rng)
        for name in MODIFIERS:
            h = apply_modifier(g, name, rng)
            if h is not None:
                assert sp.is_valid(h)
                _check_modifier_effect(name, g, h)
                other = _renumber(h, rng.permutation(h.n_layers))
                assert sp.key(other) == sp.key(h)
