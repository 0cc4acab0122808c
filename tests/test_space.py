"""Search spaces: round trips for every variable type, validation messages, neighbours."""
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchsuite.errors import InvalidConfigError
from benchsuite.space import Binary, Categorical, Float, Integer, Ordinal, Space

finite = st.floats(-1e6, 1e6, allow_nan=False)


@st.composite
def float_vars(draw):
    log = draw(st.booleans())
    low = draw(st.floats(1e-6, 1e3)) if log else draw(finite)
    width = draw(st.floats(1e-3, 1e6))
    return Float("x", low, low + width, log=log)


@st.composite
def int_vars(draw):
    log = draw(st.booleans())
    low = draw(st.integers(1, 1000)) if log else draw(st.integers(-1000, 1000))
    return Integer("n", low, low + draw(st.integers(0, 5000)), log=log)


@st.composite
def ordinal_vars(draw):
    levels = draw(st.lists(finite, min_size=1, max_size=30, unique=True))
    return Ordinal("o", sorted(levels))


@st.composite
def categorical_vars(draw):
    return Categorical("c", draw(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=12, unique=True)))


any_var = st.one_of(float_vars(), int_vars(), ordinal_vars(), categorical_vars(), st.just(Binary("b")))


@settings(max_examples=150, deadline=None)
@given(var=any_var, seed=st.integers(0, 2**32 - 1))
def test_unit_round_trip_every_type(var, seed):
    rng = np.random.default_rng(seed)
    values = var.sample(rng, 20)
    for v in values:
        assert var.validate(v) == v
    u = var.to_unit(values)
    assert np.all((u >= -1e-12) & (u <= 1 + 1e-12))
    back = var.from_unit(u)
    if var.is_discrete:
        assert back == values
    else:
        assert np.allclose(back, values, rtol=1e-9, atol=1e-9 * max(1.0, abs(var.high)))


@settings(max_examples=150, deadline=None)
@given(var=st.one_of(int_vars(), ordinal_vars(), categorical_vars(), st.just(Binary("b"))),
       seed=st.integers(0, 2**32 - 1))
def test_code_round_trip_discrete(var, seed):
    values = var.sample(np.random.default_rng(seed), 20)
    codes = [var.to_code(v) for v in values]
    assert all(0 <= c < var.n_levels for c in codes)
    assert [var.from_code(c) for c in codes] == values


@settings(max_examples=100, deadline=None)
@given(var=any_var, u=st.floats(0, 1))
def test_from_unit_always_valid(var, u):
    v = var.from_unit(np.array([u]))[0]
    assert var.validate(v) == v


def test_uniform_unit_points_hit_every_level_equally():
    var = Ordinal("o", [1, 2, 3, 4])
    counts = np.bincount([var.to_code(v) for v in var.from_unit(np.random.default_rng(0).random(40000))])
    assert counts.min() > 9000


@pytest.fixture
def mixed():
    return Space([Float("lr", 1e-4, 1.0, log=True), Integer("layers", 1, 4), Ordinal("width", [16, 32, 64]),
                  Categorical("act", ["relu", "tanh"]), Binary("bn")])


def test_space_round_trips(mixed):
    rng = np.random.default_rng(1)
    configs = mixed.sample(rng, 50)
    back = mixed.from_unit(mixed.to_unit(configs))
    for a, b in zip(configs, back):
        assert math.isclose(a["lr"], b["lr"], rel_tol=1e-9)
        assert {k: a[k] for k in a if k != "lr"} == {k: b[k] for k in b if k != "lr"}
        assert mixed.from_json(mixed.to_json(a)) == a
    assert mixed.kind == "mixed"


def test_codes_round_trip_and_sample_codes():
    space = Space([Binary("a"), Categorical("c", ["x", "y", "z"]), Ordinal("o", [0.1, 0.2])])
    codes = space.sample_codes(np.random.default_rng(0), 100)
    assert codes.shape == (100, 3) and codes[:, 1].max() == 2
    configs = space.from_codes(codes)
    assert np.array_equal(space.to_codes(configs), codes)
    with pytest.raises(InvalidConfigError, match="out of range"):
        space.from_codes(np.array([0, 3, 0]))


def test_codes_refused_for_continuous(mixed):
    with pytest.raises(InvalidConfigError, match="continuous variables: \\['lr'\\]"):
        mixed.to_codes(mixed.default())


def test_neighbours_change_one_variable(mixed):
    cfg = {"lr": 0.01, "layers": 1, "width": 32, "act": "relu", "bn": 0}
    nbrs = mixed.neighbours(cfg)
    for n in nbrs:
        assert sum(n[k] != cfg[k] for k in cfg) == 1
    assert {n["width"] for n in nbrs if n["width"] != 32} == {16, 64}  # adjacent levels only
    assert {n["layers"] for n in nbrs if n["layers"] != 1} == {2}  # edge of the range
    cat = Space([Categorical("c", list("abcd"))])
    assert sorted(n["c"] for n in cat.neighbours({"c": "b"})) == ["a", "c", "d"]


def test_validation_names_variable_value_and_range(mixed):
    cfg = mixed.default()
    cfg["layers"] = 9
    with pytest.raises(InvalidConfigError, match=r"'layers'.*9.*integer in \[1, 4\]"):
        mixed.validate(cfg)
    cfg = mixed.default()
    cfg["act"] = "gelu"
    with pytest.raises(InvalidConfigError, match=r"'act'.*'gelu'.*'relu'"):
        mixed.validate(cfg)
    with pytest.raises(InvalidConfigError, match="missing"):
        mixed.validate({"lr": 0.1})
    with pytest.raises(InvalidConfigError, match="unknown variable"):
        mixed.validate({**mixed.default(), "momentum": 0.9})
    with pytest.raises(InvalidConfigError, match="not a number"):
        mixed.validate({**mixed.default(), "lr": "fast"})
    with pytest.raises(InvalidConfigError):
        mixed.validate({**mixed.default(), "lr": float("nan")})


def test_key_is_hashable_and_canonical(mixed):
    cfg = mixed.sample(np.random.default_rng(3))
    again = mixed.validate(json.loads(mixed.to_json(cfg)))
    assert mixed.key(cfg) == mixed.key(again)
    assert len({mixed.key(cfg), mixed.key(again)}) == 1


def test_bad_variable_definitions():
    with pytest.raises(ValueError):
        Float("x", 1, 0)
    with pytest.raises(ValueError):
        Float("x", 0, 1, log=True)
    with pytest.raises(ValueError):
        Ordinal("o", [1, 1])
    with pytest.raises(ValueError):
        Space([Binary("a"), Binary("a")])
