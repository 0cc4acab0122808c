"""DeepArchitect language, PyTorch compilation and search spaces (deeparchitect.txt Sec. 4-7.1)."""
from __future__ import annotations

import gc
import subprocess
import sys

import numpy as np
import pytest

from benchsuite.architectures import nb201
from benchsuite.architectures.deeparchitect import SPACES, DASpace, make_space
from benchsuite.architectures.deeparchitect import core as co
from benchsuite.architectures.deeparchitect.spaces import conv, dropout
from benchsuite.errors import InvalidConfigError, UnknownNameError

# small sizes so that every space compiles in well under a second on one CPU thread
SMALL = {
    "nasbench": dict(init_filters=4, cells_per_stack=1),
    "nasnet": dict(num_normal_cells=2, num_reduction_cells=1, init_filters=4),
    "flat": dict(c0=2),
    "genetic": dict(filters_per_stage=(4, 8, 8), fc_units=16),
    "nb201": dict(channels=4, cells_per_stage=1),
}
SHAPE = (3, 8, 8)


def n_params(net) -> int:
    return sum(p.numel() for p in net.parameters())


# -- the language --------------------------------------------------------------------------------
def figure4_space() -> co.IO:
    """deeparchitect.txt Figure 4: conv, optional dropout, two chains (length n and 2n), concat."""
    h_n = co.D([1, 2, 4], name="n")
    h_ndep = co.Dependent(lambda dh: 2 * dh["x"], {"x": h_n}, name="n_dep")
    c_in, c_out = conv(co.D([64, 128], name="c0"), 3)
    o_in, o_out = co.siso_optional(lambda: dropout(co.D([0.25, 0.5])), co.D([0, 1], name="opt"))

    def fn() -> co.IO:
        return conv(co.D([64, 128]), 3)

    r1_in, r1_out = co.siso_repeat(fn, h_n)
    r2_in, r2_out = co.siso_repeat(fn, h_ndep)
    cc_in, cc_out = co.BasicModule("concat", {}, ["in0", "in1"]).io()
    o_in["in"].connect(c_out["out"])
    r1_in["in"].connect(o_out["out"])
    r2_in["in"].connect(o_out["out"])
    cc_in["in0"].connect(r1_out["out"])
    cc_in["in1"].connect(r2_out["out"])
    return c_in, cc_out


def _fig4() -> DASpace:
    return DASpace("figure4", lambda n_classes: figure4_space())


def test_dependent_hyperparameter_and_lazy_substitution():
    g = co.Graph(figure4_space)
    # frame a: substitution modules unresolved, no dropout module exists yet
    assert sum(isinstance(m, co.SubstitutionModule) and not m.done for m in g.modules) == 3
    assert not any(getattr(m, "op", None) == "dropout" for m in g.modules)
    h_n = g.names["n"]
    dep = g.names["n_dep"]
    assert not dep.assigned
    g.assign(h_n, 2)  # frame a -> b: DH follows, both repeats are substituted
    assert dep.assigned and dep.value == 4
    convs = [m for m in g.ordered_modules() if getattr(m, "op", None) == "conv2d"]
    assert len(convs) == 1 + 2 + 4
    g.assign(g.names["opt"], 0)  # an unchosen branch never creates its hyperparameters
    assert not any(getattr(m, "op", None) == "dropout" for m in g.ordered_modules())


def test_value_list_is_the_architecture():
    sp = _fig4()
    rng = np.random.default_rng(3)
    lengths = set()
    for _ in range(30):
        v = sp.sample(rng)
        names = [name for name, _ in sp.hyperparameters(v)]
        assert "n_dep" not in names  # dependent hyperparameters are not part of the value list
        assert sp.validate(list(v)) == v
        lengths.add(len(v))
        g, _ = sp._replay(v)
        convs = [m for m in g.ordered_modules() if getattr(m, "op", None) == "conv2d"]
        n = g.names["n"].value
        assert len(convs) == 1 + 3 * n
        assert len(v) == 2 + 3 * n + (2 if g.names["opt"].value else 1)
    assert len(lengths) > 2


def test_space_size_matches_figure4_count():
    # the paper: "This search space has 25008 distinct models" = 2 (first conv) x 3 (no dropout, or
    # dropout 0.25 / 0.5) x (2^3 + 2^6 + 2^12) (chains of n and 2n convs of 64 or 128 filters).
    # Count the leaves of the walk tree under n = 1 and n = 2 (n = 4 alone has 24576 leaves).
    sp = _fig4()
    first = sp.hyperparameters(sp.walk(lambda p, n, v: 0))[0][0]
    assert first == "n"  # the repeats' shared hyperparameter is met first, going backwards from the output

    def leaves(prefix: list) -> int:
        nxt: list[tuple] = []

        def choose(pos: int, name: str, vals: tuple) -> int:
            if pos < len(prefix):
                return vals.index(prefix[pos])
            nxt.append(vals)
            raise StopIteration

        try:
            sp.walk(choose)
            return 1
        except StopIteration:
            return sum(leaves(prefix + [v]) for v in nxt[0])

    assert leaves([1]) == 2 * 3 * 2 ** 3
    assert leaves([2]) == 2 * 3 * 2 ** 6
    assert 2 * 3 * (2 ** 3 + 2 ** 6 + 2 ** 12) == 25008


def test_traversal_is_deterministic_and_names_stable():
    for name in SPACES:
        sp = make_space(name, **SMALL[name])
        a = sp.sample(np.random.default_rng(7))
        b = sp.sample(np.random.default_rng(7))
        assert a == b
        names_a = [n for n, _ in sp.hyperparameters(a)]
        fresh = make_space(name, **SMALL[name])
        assert [n for n, _ in fresh.hyperparameters(a)] == names_a
        assert len(set(names_a)) == len(names_a)
        assert fresh.features(a) == sp.features(a)
        assert all("0x" not in f for f in sp.features(a))  # no object addresses


def test_walk_callback_sees_positions_names_domains():
    sp = make_space("nb201", **SMALL["nb201"])
    calls = []
    v = sp.walk(lambda pos, name, vals: (calls.append((pos, name, vals)), len(vals) - 1)[1])
    assert [c[0] for c in calls] == list(range(6))
    assert [c[1] for c in calls] == [f"cell/{e}" for e in nb201.EDGE_NAMES]
    assert all(c[2] == nb201.OPS for c in calls)
    assert v == (nb201.OPS[-1],) * 6


# -- spaces: JSON round trip, compilation ------------------------------------------------------------
@pytest.mark.parametrize("name", list(SMALL))
def test_json_round_trip_gives_the_same_network(name):
    sp = make_space(name, **SMALL[name])
    rng = np.random.default_rng(11)
    for _ in range(2):
        v = sp.sample(rng)
        assert sp.is_valid(v)
        text = sp.to_json(v)
        back = make_space(name, **SMALL[name]).from_json(text)
        assert back == v and sp.key(back) == sp.key(v)
        net_a, net_b = sp.build(v, SHAPE), make_space(name, **SMALL[name]).build(back, SHAPE)
        assert n_params(net_a) == n_params(net_b) > 0
        assert [tuple(p.shape) for p in net_a.parameters()] == [tuple(p.shape) for p in net_b.parameters()]
        import torch

        with torch.no_grad():
            out = net_a.eval()(torch.zeros(2, *SHAPE))
        assert out.shape == (2, 10)
    if name in ("nb201", "genetic"):  # neighbours re-walk the space once per alternative value
        nbrs = sp.neighbours(v)
        assert nbrs and all(n != v and sp.validate(n) == n for n in nbrs)


def test_mutate_changes_one_decision_and_is_seeded():
    sp = make_space("genetic", **SMALL["genetic"])
    v = sp.sample(np.random.default_rng(0))
    m1 = sp.mutate(v, np.random.default_rng(5))
    m2 = sp.mutate(v, np.random.default_rng(5))
    assert m1 == m2 and m1 != v
    assert sum(a != b for a, b in zip(m1, v)) == 1  # genetic: a fixed 19-bit list
    assert len(sp.neighbours(v)) == 19


def test_published_sizes_have_the_papers_scale():
    # Table 3 lists 9.4M (Genetic) for the best architecture found; the space's sizes are close
    sp = make_space("genetic")
    from benchsuite.training import count_parameters as count_params

    net = sp.build(sp.sample(np.random.default_rng(0)), (3, 32, 32))
    assert 8e6 < count_params(net) < 11e6


# -- NAS-Bench-201 cell in the language -------------------------------------------------------------
def test_nb201_values_map_bijectively_onto_arch_strings():
    sp = make_space("nb201")
    rng = np.random.default_rng(1)
    seen = {}
    for _ in range(40):
        v = sp.sample(rng)
        arch = sp.nb201_arch(v)
        assert nb201.from_arch_string(arch)  # a valid official string
        assert sp.from_nb201_arch(arch) == v
        seen.setdefault(arch, v)
        assert seen[arch] == v
    for idx in rng.integers(nb201.N_CELLS, size=20):
        arch = nb201.to_arch_string(nb201.index_config(int(idx)))
        assert sp.nb201_arch(sp.from_nb201_arch(arch)) == arch
    with pytest.raises(InvalidConfigError):
        make_space("genetic").nb201_arch((0,) * 19)


def test_nb201_network_equals_the_suite_builder():
    sp = make_space("nb201")
    rng = np.random.default_rng(2)
    archs = [sp.nb201_arch(sp.sample(rng)) for _ in range(2)]
    archs.append("|none~0|+|nor_conv_3x3~0|none~1|+|none~0|none~1|none~2|")  # dead convolution, zero output
    for arch in archs:
        net = sp.build(sp.from_nb201_arch(arch), SHAPE)
        ref = nb201.build_network(arch)
        assert n_params(net) == n_params(ref) == nb201.param_count(nb201.from_arch_string(arch))
        assert sorted(tuple(p.shape) for p in net.parameters()) == sorted(tuple(p.shape) for p in ref.parameters())


# -- Nasbench feasibility ------------------------------------------------------------------------------
def test_nasbench_infeasible_cells_are_flagged_not_sampled():
    sp = make_space("nasbench", **SMALL["nasbench"])
    v = sp.walk(lambda pos, name, vals: 0)  # no edges at all
    assert not sp.is_valid(v)
    assert "no path from input to output" in sp.why_invalid(v)
    with pytest.raises(InvalidConfigError) as exc:
        sp.build(v, SHAPE)
    assert "\n" not in str(exc.value)
    rng = np.random.default_rng(4)
    for _ in range(5):
        assert sp.is_valid(sp.sample(rng))


# -- bad input: one line naming the culprit -------------------------------------------------------------
def _one_line(exc_info) -> str:
    msg = str(exc_info.value)
    assert "\n" not in msg and msg
    return msg


def test_bad_value_lists_give_one_line():
    sp = make_space("nb201", **SMALL["nb201"])
    good = list(sp.sample(np.random.default_rng(0)))
    with pytest.raises(InvalidConfigError) as e:
        sp.validate(good[:4])
    assert "too short" in _one_line(e) and "cell/edge_3_1" in str(e.value)
    with pytest.raises(InvalidConfigError) as e:
        sp.validate(good + ["none"])
    assert "too long" in _one_line(e)
    with pytest.raises(InvalidConfigError) as e:
        sp.validate(good[:2] + ["conv_5x5"] + good[3:])
    assert "cell/edge_2_1" in _one_line(e) and "conv_5x5" in str(e.value)
    with pytest.raises(InvalidConfigError) as e:
        sp.validate("nor_conv_3x3")
    _one_line(e)
    with pytest.raises(InvalidConfigError) as e:
        sp.from_json("[1, 2")
    _one_line(e)
    g = make_space("genetic", **SMALL["genetic"])
    with pytest.raises(InvalidConfigError) as e:
        g.validate([True] * 19)  # booleans are not the 0/1 values
    _one_line(e)
    with pytest.raises(InvalidConfigError) as e:
        sp.walk(lambda pos, name, vals: 99)
    assert "cell/edge_1_0" in _one_line(e)


def test_unconnected_input_gives_one_line_naming_the_module():
    def broken(n_classes: int = 10) -> co.IO:
        a_in, a_out = conv(co.D([4, 8], name="f"), 3)
        s_in, s_out = co.add(2)
        a_out["out"].connect(s_in["in0"])  # in1 left dangling
        return a_in, s_out

    sp = DASpace("broken", broken)
    with pytest.raises(InvalidConfigError) as e:
        sp.sample(np.random.default_rng(0))
    msg = _one_line(e)
    assert "add-1" in msg and "'in1'" in msg


def test_unknown_space_name_suggests():
    with pytest.raises(UnknownNameError) as e:
        make_space("nasbenc")
    assert "did you mean 'nasbench'" in _one_line(e)


def test_package_import_does_not_import_torch():
    code = ("import sys; import benchsuite.architectures.deeparchitect as d; "
            "d.make_space('genetic').sample(__import__('numpy').random.default_rng(0)); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- fast paths (records, closed modules, lean walks) agree with full walks ------------------------------
def _full_walk(sp: DASpace, choose) -> tuple:
    """A plain walk of a fresh graph (no record, no shortcut): the reference semantics."""
    g = sp.graph()
    hs = co.walk(g, lambda p, h: h.values[choose(p, h.name, h.values)])
    return tuple(h.value for h in hs)


def _ref_rewalk(sp: DASpace, values: tuple, pos: int, new, fallback) -> tuple:
    g = sp.graph()
    names = [h.name for h in co.walk(g, lambda p, h: h.values[h.index_of(values[p])])]
    old = dict(zip(names, values))

    def choose(p: int, name: str, vals: tuple) -> int:
        target = values[p] if p < pos else new if p == pos else old.get(name, object())
        for k, v in enumerate(vals):
            if v == target and isinstance(v, bool) == isinstance(target, bool):
                return k
        return fallback(vals)

    return _full_walk(sp, choose)


def _ref_neighbours(sp: DASpace, values: tuple, positions=None) -> list:
    out: dict = {}
    for pos, (_, dom) in enumerate(make_space_like(sp).hyperparameters(values)):
        if positions is not None and pos not in positions:
            continue
        for v in dom:
            if v == values[pos] and isinstance(v, bool) == isinstance(values[pos], bool):
                continue
            nb = _ref_rewalk(sp, values, pos, v, lambda vals: 0)
            if nb != values:
                out.setdefault(nb, None)
    return list(out)


def make_space_like(sp: DASpace) -> DASpace:
    return DASpace(sp.name, sp.space_fn)  # a fresh object: nothing remembered


def _ref_mutate(sp: DASpace, values: tuple, rng: np.random.Generator) -> tuple:
    doms = [d for _, d in make_space_like(sp).hyperparameters(values)]
    pairs = [(p, v) for p, d in enumerate(doms) for v in d
             if not (v == values[p] and isinstance(v, bool) == isinstance(values[p], bool))]
    if not pairs:
        return values
    pos, v = pairs[int(rng.integers(len(pairs)))]
    return _ref_rewalk(sp, values, pos, v, lambda vals: int(rng.integers(len(vals))))


@pytest.mark.parametrize("name,full", [("genetic", True), ("nb201", True), ("nasbench", True), ("figure4", True),
                                       ("flat", False), ("nasnet", False),
                                       pytest.param("nasnet", True, marks=pytest.mark.slow)])
def test_fast_paths_agree_with_full_walks(name, full):
    sp = _fig4() if name == "figure4" else make_space(name, **SMALL[name])
    rng = np.random.default_rng(21)
    for k in range(2 if full else 1):
        v = sp.sample(rng)
        fresh = make_space_like(sp)
        # records: what validate / hyperparameters / is_valid / features answer without a replay
        assert fresh.validate(list(v)) == sp.validate(list(v)) == v
        assert fresh.hyperparameters(v) == sp.hyperparameters(v)
        assert fresh.is_valid(v) == sp.is_valid(v) and fresh.why_invalid(v) == sp.why_invalid(v)
        assert fresh.features(v) == sp.features(v) == sp.features(v)
        # neighbours: closed-module shortcuts and lean walks against full re-walks
        # not full: a few positions (flat's 320 or Nasnet's 190 full re-walks take seconds), the first of
        # each round among them
        positions = None if full else {0, 17, 21, 39, 54}
        fast = sp.neighbours(v)
        ref = _ref_neighbours(sp, v, positions)
        if positions is None:
            assert fast == ref
        else:
            assert set(ref) <= set(fast)
        # mutate: the same child and the same random numbers drawn
        for seed in range(3):
            r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
            assert sp.mutate(v, r1) == _ref_mutate(sp, v, r2)
            assert r1.integers(1 << 30) == r2.integers(1 << 30)
    # the shortcut is taken where the space allows it (and only there)
    static = sp._static(sp._record(v))
    if name in ("genetic", "nb201", "flat"):
        assert all(static)
    if name == "figure4":  # n and opt feed substitutions that are not closed; later conv filters do not
        assert not static[0] and any(static)


def test_lean_walk_falls_back_where_closed_modules_precede_a_round():
    # a closed choice expanded in the first round, then an optional whose dropout rate is met in a
    # second round: a lean walk cannot know where that rate comes in the order, so it walks in full
    def space(n_classes: int = 10) -> co.IO:
        a = co.siso_or([lambda: conv(8, 1), lambda: conv(8, 3)], co.D([0, 1], name="op"), closed=True)
        b = co.siso_optional(lambda: dropout(co.D([0.1, 0.5], name="rate")), co.D([0, 1], name="opt"))
        return co.siso_sequential([a, b])

    sp = DASpace("two_rounds", space)
    v = sp.walk(lambda p, n, vals: len(vals) - 1)
    assert sp.hyperparameters(v)[-1][0] == "rate"
    assert sp.neighbours(v) == _ref_neighbours(sp, v)
    with pytest.raises(co.LeanWalkUnsure):
        g = co.Graph(lambda: space(), lean=True)
        co.walk(g, lambda p, h: h.values[-1])


def test_wrong_closed_declaration_is_caught_by_a_real_walk():
    def space(n_classes: int = 10) -> co.IO:
        return co.siso_or([lambda: conv(8, 1), lambda: conv(co.D([4, 8], name="f"), 3)], co.D([0, 1], name="op"),
                          closed=True)

    sp = DASpace("liar", space)
    assert sp.validate([0]) == (0,)
    with pytest.raises(ValueError, match="SISOOr-1 is declared closed"):
        sp.validate([1, 4])


def test_known_value_lists_keep_booleans_apart():
    sp = make_space("genetic", **SMALL["genetic"])
    ones = sp.walk(lambda p, n, vals: 1)
    assert sp.validate(ones) == ones
    with pytest.raises(InvalidConfigError):
        sp.validate([True] * 19)
    assert sp.validate([1.0] * 19) == ones and all(type(x) is int for x in sp.validate([1.0] * 19))


@pytest.mark.parametrize("name", ["genetic", "flat", "nb201"])
def test_product_spaces_draw_without_walking_exactly_as_a_walk_draws(name):
    sp = make_space(name, **SMALL[name])
    assert sp.space_fn.product

    def walked(space_fn):  # the same function without the declaration: every draw is a walk
        fn = lambda n_classes=10: space_fn(n_classes)  # noqa: E731
        return DASpace(name, fn)

    slow = walked(sp.space_fn)
    r_fast, r_slow = np.random.default_rng(5), np.random.default_rng(5)
    fast_draws = [sp.sample(r_fast) for _ in range(40)]
    assert fast_draws == [slow.sample(r_slow) for _ in range(40)]
    assert sp._product is not None and not slow._product  # the fast path was taken, and only there
    assert r_fast.integers(1 << 30) == r_slow.integers(1 << 30)  # the generators moved alike
    v = fast_draws[-1]  # a value list drawn without a walk answers like a walked one
    assert sp.hyperparameters(v) == slow.hyperparameters(v) and sp.is_valid(v) and sp.features(v) == slow.features(v)
    assert all(type(a) is type(b) for a, b in zip(v, slow.validate(list(v))))
    # features of lists no walk made come from a graph assigned by name and disposed: the same as a walked graph's
    assert [make_space(name, **SMALL[name]).features(d) for d in fast_draws[:3]] == \
        [slow.features(d) for d in fast_draws[:3]]
    assert [sp.features(d) for d in fast_draws] == [slow.features(d) for d in fast_draws]


def test_features_of_product_lists_leave_nothing_for_the_cyclic_collector():
    sp = make_space("nb201")
    lists = [sp.sample(np.random.default_rng(3)) for _ in range(4)]
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        for v in lists:
            sp.features(v)
        found = gc.collect()
    finally:
        if was:
            gc.enable()
    assert found == 0  # an NB201 network's graph is about 10,000 objects in cycles; restored, none waits


def _described(g: co.Graph) -> list:
    """What a graph's users read: modules in traversal order (names, properties, hyperparameters, links), names."""
    return [(m.name, m.type_name, getattr(m, "static", None), [(k, h.name, h.value) for k, h in m.hyperps.items()],
             [(i.name, i.src.module.name if i.src else None) for i in m.in_order]) for m in g.ordered_modules()] + \
        [sorted(g.names), dict(g.counters), len(g.modules), len(g.hyperparameters), g.round_starts]


@pytest.mark.parametrize("space", ["figure4", "nb201"])
def test_a_restored_graph_specifies_as_a_fresh_copy(space):
    # Figure 4's substitutions create hyperparameters and name them; NB201's closed cells expand at the last value:
    # walked again after restore(), the graph is what a fresh copy walked the same way is, names included
    make = (lambda: co.Graph(figure4_space)) if space == "figure4" else make_space("nb201", **SMALL["nb201"]).graph
    g = make()
    snap = g.snapshot()
    for seed in range(6):
        draws = np.random.default_rng(seed).integers(0, 1 << 30, size=64)
        choose = lambda pos, h: h.values[int(draws[pos]) % len(h.values)]  # noqa: E731
        fresh = make()
        assert [h.value for h in co.walk(g, choose)] == [h.value for h in co.walk(fresh, choose)]
        assert _described(g) == _described(fresh)
        fresh.dispose()
        gc.collect()
        was = gc.isenabled()
        gc.disable()
        try:
            g.restore(snap)
            found = gc.collect()
        finally:
            if was:
                gc.enable()
        assert found == 0  # what the walk made is freed by restore() at once, as by dispose()


def test_a_wrong_product_declaration_is_refused():
    sp = make_space("nasbench", **SMALL["nasbench"])
    fn = lambda n_classes=10: sp.space_fn(n_classes)  # noqa: E731
    fn.product = True
    with pytest.raises(RuntimeError, match="declares product = True"):
        DASpace("nasbench", fn).sample(np.random.default_rng(0))
