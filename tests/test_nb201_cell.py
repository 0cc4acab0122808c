"""The NAS-Bench-201 cell: space, strings, canonical form, network and parameter counts."""
from __future__ import annotations

import collections
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchsuite.architectures import nb201
from benchsuite.training import count_parameters
from benchsuite.errors import DataError, InvalidConfigError

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
needs_source = pytest.mark.skipif(not (SHARED / "nas_bench_201" / "per_seed_valid_runtime.pkl").exists(),
                                  reason=f"NAS-Bench-201 source files not in {SHARED}")
BEST = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
UNIFORM = [{n: op for n in nb201.EDGE_NAMES} for op in nb201.OPS]  # every op on every edge
ZERO = UNIFORM[0]


def cell(*ops: str) -> dict:
    return dict(zip(nb201.EDGE_NAMES, ops))


@pytest.fixture
def one_thread():
    """Tiny forward passes on one torch thread: two threads on busy shared cores are 100x slower."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def source():
    from benchsuite.architectures.nb201_source import read_source

    return read_source(str(SHARED))


# -- space and strings ---------------------------------------------------------------------------
def test_space_has_15625_cells_with_ops_as_codes():
    sp = nb201.cell_space()
    assert sp.names == list(nb201.EDGE_NAMES)
    assert sp.n_levels.tolist() == [5] * 6 and int(np.prod(sp.n_levels)) == nb201.N_CELLS == 15625
    assert sp.kind == "discrete"
    assert sp.to_codes(cell(*nb201.OPS, "none")).tolist() == [0, 1, 2, 3, 4, 0]
    assert sp.from_codes(np.array([4, 3, 2, 1, 0, 4])) == cell("avg_pool_3x3", "nor_conv_3x3", "nor_conv_1x1",
                                                               "skip_connect", "none", "avg_pool_3x3")
    assert nb201.is_connected(sp.default())


def test_edge_order_is_the_official_strings():
    c = nb201.from_arch_string(
        "|nor_conv_1x1~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|none~1|nor_conv_3x3~2|")
    assert c == {"edge_1_0": "nor_conv_1x1", "edge_2_0": "nor_conv_3x3", "edge_2_1": "avg_pool_3x3",
                 "edge_3_0": "skip_connect", "edge_3_1": "none", "edge_3_2": "nor_conv_3x3"}
    assert list(c) == list(nb201.EDGE_NAMES)


def test_string_round_trip_for_every_cell():
    configs = nb201.all_configs()
    strings = [nb201.to_arch_string(c) for c in configs]
    assert len(set(strings)) == nb201.N_CELLS
    assert all(nb201.from_arch_string(s) == c for s, c in zip(strings, configs))
    assert all(nb201.index_config(nb201.config_index(c)) == c for c in configs[::97])
    assert [nb201.config_index(c) for c in configs[:50]] == list(range(50))
    sp = nb201.cell_space()
    assert sp.validate(BEST) == nb201.from_arch_string(BEST) == nb201.parse_config(BEST)
    assert sp.key(sp.validate(BEST)) == tuple(nb201.from_arch_string(BEST).values())
    assert nb201.parse_config(dict(nb201.from_arch_string(BEST))) == nb201.from_arch_string(BEST)


@pytest.mark.parametrize("bad", [
    "",
    "nonsense",
    "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|",                                   # 2 nodes
    BEST + "+|none~0|none~1|none~2|none~3|",                                             # 4 nodes
    BEST.replace("nor_conv_1x1", "conv_5x5"),                                             # unknown op
    BEST.replace("nor_conv_1x1~2", "nor_conv_1x1~1"),                                     # wrong input
    "|nor_conv_3x3~0|+|nor_conv_3x3~0|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|",  # too few inputs
    BEST.replace("|+|", "+", 1),                                                          # missing bars
    BEST.replace("~0|+", "|+", 1),                                                        # missing input index
    BEST.upper(),
    BEST.replace("~2", "~02"),                                                            # unofficial spelling
])
def test_bad_strings_raise_one_line_with_the_format(bad):
    with pytest.raises(InvalidConfigError) as err:
        nb201.from_arch_string(bad)
    msg = str(err.value)
    assert "\n" not in msg and "|op~0|+|op~0|op~1|+|op~0|op~1|op~2|" in msg
    with pytest.raises(InvalidConfigError):
        nb201.cell_space().validate(bad)


@pytest.mark.parametrize("bad", [None, 3, ["none"] * 6, {"edge_1_0": "none"},
                                 dict(nb201.from_arch_string(BEST), edge_3_2="max_pool_3x3")])
def test_bad_configs_raise(bad):
    with pytest.raises(InvalidConfigError):
        nb201.parse_config(bad)


# -- structure and canonical form -------------------------------------------------------------------
def test_connectivity():
    assert not nb201.is_connected(ZERO)
    assert nb201.is_connected(nb201.from_arch_string(BEST))
    # only path 0 -> 1 -> 3, through edge_3_1
    assert nb201.is_connected(cell("nor_conv_3x3", "none", "none", "none", "skip_connect", "none"))
    # 0 -> 2 exists but 2 -> 3 is none, and nothing else reaches 3
    assert not nb201.is_connected(cell("none", "nor_conv_3x3", "none", "none", "none", "none"))
    assert sum(not nb201.is_connected(c) for c in nb201.all_configs()) == 341
    assert nb201.live_edges(cell("nor_conv_3x3", "nor_conv_1x1", "none", "skip_connect", "none", "none")) == (
        "edge_3_0",)


def test_canonical_form_rules():
    canon = nb201.canonical_string
    assert canon(ZERO) == "0"
    assert canon(cell("none", "none", "none", "skip_connect", "none", "none")) == "x"
    # a skip chain 0 -> 1 -> 3 is the identity too
    assert canon(cell("skip_connect", "none", "none", "none", "skip_connect", "none")) == "x"
    # dead edges vanish: the conv into node 2 never reaches the output
    assert canon(cell("none", "nor_conv_3x3", "none", "skip_connect", "none", "none")) == "x"
    # commutative sums: swap the operations of two parallel paths into the output
    a = cell("nor_conv_3x3", "none", "none", "avg_pool_3x3", "skip_connect", "none")
    b = cell("skip_connect", "none", "none", "avg_pool_3x3", "nor_conv_3x3", "none")
    assert canon(a) == canon(b) == "c0=nor_conv_3x3(x); out=avg_pool_3x3(x)+c0"
    # one convolution reused through skips is not two convolutions (different weights, parameters)
    reused = cell("nor_conv_3x3", "none", "skip_connect", "none", "skip_connect", "skip_connect")
    twins = cell("nor_conv_3x3", "nor_conv_3x3", "none", "none", "skip_connect", "skip_connect")
    assert canon(reused) == "c0=nor_conv_3x3(x); out=c0+c0"
    assert canon(twins) == "c0=nor_conv_3x3(x); c1=nor_conv_3x3(x); out=c0+c1"
    # ... and the published UniqueString merges such cells: rows 327 and 10444 of NAS-Bench-201
    r327 = "|skip_connect~0|+|nor_conv_1x1~0|nor_conv_1x1~1|+|skip_connect~0|nor_conv_1x1~1|avg_pool_3x3~2|"
    r10444 = "|nor_conv_1x1~0|+|nor_conv_1x1~0|skip_connect~1|+|skip_connect~0|skip_connect~1|avg_pool_3x3~2|"
    assert canon(nb201.from_arch_string(r327)) != canon(nb201.from_arch_string(r10444))
    # pools have no weights: two pools of one sum are one term, twice
    assert canon(cell("skip_connect", "skip_connect", "skip_connect", "none", "none", "avg_pool_3x3")) == (
        "avg_pool_3x3(x+x)")
    assert canon(cell("avg_pool_3x3", "avg_pool_3x3", "none", "none", "skip_connect", "skip_connect")) == (
        "avg_pool_3x3(x)+avg_pool_3x3(x)")
    # names follow the data flow and do not depend on which edge holds which convolution
    best = nb201.from_arch_string(BEST)
    assert canon(best) == ("c0=nor_conv_3x3(x); c1=nor_conv_3x3(x); c2=nor_conv_3x3(c0); c3=nor_conv_3x3(c0); "
                           "c4=nor_conv_1x1(c1+c2); out=c3+c4+x")
    # every zero network maps to "0"
    assert {canon(c) for c in nb201.all_configs() if not nb201.is_connected(c)} == {"0"}


def test_equal_canonical_forms_compute_equal_outputs(one_thread):
    """Cells of one class give the same logits when equal-shaped weights are equal (eval mode).

    BatchNorm shifts are zero here: the canonical form treats a convolution fed only zeros
    as zero, which is exact without the shift (see the module docstring).
    """
    torch = one_thread
    classes = collections.defaultdict(list)
    for c in nb201.all_configs():
        classes[nb201.canonical_string(c)].append(c)
    rng = np.random.default_rng(0)
    multi = [m for m in classes.values() if len(m) > 1]
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(1))

    def logits(c: dict) -> torch.Tensor:
        net = nb201.build_network(c, num_classes=3, channels=2, cells_per_stage=1).eval()
        with torch.no_grad():
            for name, p in net.named_parameters():  # the same values for every weight of a shape
                if name.endswith("bias"):
                    p.zero_()
                else:
                    g = torch.Generator().manual_seed(sum(p.shape) * 1000 + p.dim())
                    p.copy_(0.5 * torch.randn(p.shape, generator=g))
            return net(x)

    for k in rng.choice(len(multi), size=25, replace=False):
        members = multi[int(k)]
        i, j = rng.choice(len(members), size=2, replace=False)
        assert torch.allclose(logits(members[int(i)]), logits(members[int(j)]), rtol=1e-4, atol=1e-5)


@needs_source
def test_canonical_form_against_the_published_unique_string(source):
    mine = [nb201.canonical_string(nb201.from_arch_string(s)) for s in source["arch_strings"]]
    published = list(source["unique_strings"])
    assert len(set(mine)) == 5260 and len(set(published)) == 6466
    members_m, members_p = collections.defaultdict(list), collections.defaultdict(list)
    for i, (m, p) in enumerate(zip(mine, published)):
        members_m[m].append(i)
        members_p[p].append(i)
    assert sum(members_m[m] == members_p[p] for m, p in zip(mine, published)) == 4883
    ours_of, theirs_of = collections.defaultdict(set), collections.defaultdict(set)
    for m, p in zip(mine, published):
        ours_of[p].add(m)
        theirs_of[m].add(p)
    assert sum(len(v) > 1 for v in ours_of.values()) == 430  # published classes we split (weight sharing)
    assert sum(len(v) > 1 for v in theirs_of.values()) == 688  # our classes joining several (zeros, spelling)


# -- parameter counts and the network ----------------------------------------------------------------
@needs_source
@pytest.mark.parametrize("task", ["cifar10", "cifar100", "imagenet16"])
def test_closed_form_and_built_network_match_the_table(source, task):
    pytest.importorskip("torch")
    d = source[task]
    index = {s: i for i, s in enumerate(source["arch_strings"])}
    mixed = [BEST, source["arch_strings"][0], source["arch_strings"][15624]]
    for c in UNIFORM + [nb201.from_arch_string(s) for s in mixed]:
        i = index[nb201.to_arch_string(c)]
        published = int(round(d["size_in_mb"][i] * 1e6))
        assert nb201.param_count(c, d["num_classes"]) == published == int(d["n_params_model"][i])
        net = nb201.build_network(c, num_classes=d["num_classes"])
        assert count_parameters(net) == published


def test_published_best_cell_has_its_published_size():
    # NAS-Bench-201's best CIFAR-10 cell: 1.073466 MB on CIFAR-10 (analytic; no data needed)
    assert nb201.param_count(nb201.from_arch_string(BEST), 10) == 1_073_466


def test_forward_shape_and_zero_network_is_input_independent(one_thread):
    torch = one_thread
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 3, 8, 8, generator=g)
    net = nb201.build_network(BEST, num_classes=7, channels=4, cells_per_stage=1)
    assert net(x).shape == (3, 7)
    assert count_parameters(net) == nb201.param_count(nb201.from_arch_string(BEST), 7, 4, 1)
    zero = nb201.build_network(ZERO, channels=4, cells_per_stage=1).eval()
    with torch.no_grad():
        out = zero(torch.cat([x, 10 * torch.randn(2, 3, 8, 8, generator=g)]))
    assert torch.allclose(out, out[:1].expand_as(out))  # a constant prediction: chance accuracy
    with pytest.raises(InvalidConfigError):
        nb201.build_network(BEST, channels=0)


def test_import_does_not_load_torch():
    code = ("import sys, benchsuite.architectures.nb201 as m, benchsuite.architectures.nb201_source; "
            "m.param_count(m.cell_space().default()); assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parent.parent)


# -- the source reader ---------------------------------------------------------------------------------
@needs_source
def test_source_reader_shapes_and_grouping(source):
    assert len(source["arch_strings"]) == nb201.N_CELLS
    for task in ("cifar10", "cifar100", "imagenet16"):
        d = source[task]
        assert d["val_loss"].shape == (nb201.N_CELLS, 3)
        assert np.bincount(d["n_seeds"]).tolist() == [0, 0, 7456, 8169]
        assert np.isnan(d["val_loss"][d["n_seeds"] == 2, 2]).all()
        assert not np.isnan(d["val_loss"][:, :2]).any()
        assert 0 < np.nanmin(d["val_loss"]) and np.nanmax(d["val_loss"]) < 1
        assert not d["val_loss"].flags.writeable
        differ = np.rint(d["size_in_mb"] * 1e6).astype(np.int64) != d["n_params_model"]
        assert int(differ.sum()) == 150  # reused isomorphic runs, see tables/nas_bench_201/PARAM_COUNTS.md
    zero = [i for i, s in enumerate(source["arch_strings"]) if not nb201.is_connected(nb201.from_arch_string(s))]
    # zero networks score chance: the table keeps their numbers (about 90 % CIFAR-10 validation error)
    assert np.allclose(np.nanmean(source["cifar10"]["val_loss"][zero], axis=1), 0.9, atol=0.02)


def test_grouping_refuses_ambiguous_runs():
    from benchsuite.architectures.nb201_source import group_entries

    rt = np.array([1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0])
    assert group_entries(rt, np.ones(7)).tolist() == [0, 2, 5]
    with pytest.raises(DataError, match="ambiguous"):
        group_entries(np.array([1.0] * 4 + [2.0] * 2), np.ones(6))  # two 2-seed architectures, same runtime
    with pytest.raises(DataError, match="ambiguous"):
        group_entries(np.array([1.0, 2.0, 2.0]), np.ones(3))  # a single-seed run


def test_restricted_unpickler(tmp_path):
    from benchsuite.architectures.nb201_source import load_pickle_arrays

    ok = tmp_path / "ok.pkl"
    ok.write_bytes(pickle.dumps({"a": {"loss": np.arange(3.0)}, "b": [np.zeros(2, np.int64)]}))
    got = load_pickle_arrays(ok)
    assert got["a"]["loss"].tolist() == [0.0, 1.0, 2.0] and got["b"][0].tolist() == [0, 0]
    evil = tmp_path / "evil.pkl"
    evil.write_bytes(pickle.dumps(collections.OrderedDict(a=1)))  # any other global is refused
    with pytest.raises(DataError, match="refusing"):
        load_pickle_arrays(evil)
    cut = tmp_path / "cut.pkl"
    cut.write_bytes(ok.read_bytes()[:20])
    with pytest.raises(DataError) as err:
        load_pickle_arrays(cut)
    assert "\n" not in str(err.value)


# -- the full check ---------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.timeout(1800)  # about 3 minutes on an idle machine, 10 on a shared busy one
@needs_source
def test_every_cell_built_matches_closed_form_and_table(source):
    """Every cell's network built and counted; the closed form for 10/100/120 classes against the table.

    The networks are built with one cell per stage (N = 1, about 2 minutes for all 15,625;
    N = 5 would take four times as long with the same cell-dependent modules, and the fast
    test checks N = 5 modules against the table directly).
    """
    pytest.importorskip("torch")
    arch = source["arch_strings"]
    for s in arch:
        c = nb201.from_arch_string(s)
        assert count_parameters(nb201.build_network(c, cells_per_stage=1)) == nb201.param_count(
            c, 10, 16, 1), s
    differ_sets = []
    for task in ("cifar10", "cifar100", "imagenet16"):
        d = source[task]
        closed = nb201.param_counts_table(list(arch), d["num_classes"])
        assert np.array_equal(closed, d["n_params_model"])
        differ_sets.append(set(np.flatnonzero(np.rint(d["size_in_mb"] * 1e6).astype(np.int64) != closed).tolist()))
    assert differ_sets[0] == differ_sets[1] == differ_sets[2] and len(differ_sets[0]) == 150
    # each differing row publishes the exact count of a sibling in its published isomorphism class
    classes = collections.defaultdict(list)
    for i, u in enumerate(source["unique_strings"]):
        classes[u].append(i)
    model = source["cifar10"]["n_params_model"]
    for b in differ_sets[0]:
        published = int(round(source["cifar10"]["size_in_mb"][b] * 1e6))
        assert any(model[j] == published for j in classes[source["unique_strings"][b]] if j != b), arch[b]
