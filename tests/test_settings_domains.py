"""Settings domains (issue 14 item 6): constraint objects, their use at construction, in
protocol validation and in ``describe``, and every plugin's defaults within its own domains."""
from __future__ import annotations

import math

import pytest

from benchsuite import registry
from benchsuite.cli import main
from benchsuite.errors import InvalidSettingError, ProtocolError
from benchsuite.protocol import load_protocol
from benchsuite.settings import (AnyOf, Interval, NoneOK, Options, Setting, make_constraint, resolve_settings)


# -- the constraint objects ----------------------------------------------------------------
def test_interval_int_bounds_and_type():
    c = Interval(int, 1, None)
    assert c.is_satisfied_by(1) and c.is_satisfied_by(10**12)
    assert not c.is_satisfied_by(0) and not c.is_satisfied_by(-3)
    assert not c.is_satisfied_by(1.5) and not c.is_satisfied_by(True) and not c.is_satisfied_by("3")
    assert str(c) == "an int in [1, inf)"


@pytest.mark.parametrize("closed, low_in, high_in, text", [
    ("both", True, True, "a float in [0, 1]"),
    ("left", True, False, "a float in [0, 1)"),
    ("right", False, True, "a float in (0, 1]"),
    ("neither", False, False, "a float in (0, 1)"),
])
def test_interval_closed(closed, low_in, high_in, text):
    c = Interval(float, 0, 1, closed=closed)
    assert c.is_satisfied_by(0.0) is low_in and c.is_satisfied_by(1) is high_in
    assert c.is_satisfied_by(0.5) and not c.is_satisfied_by(1.0001) and not c.is_satisfied_by(-0.1)
    assert str(c) == text


def test_interval_rejects_nan_and_inf_unless_allowed():
    c = Interval(float, 0, None)
    assert not c.is_satisfied_by(math.nan) and not c.is_satisfied_by(math.inf)
    assert not c.is_satisfied_by(-math.inf)
    assert str(c) == "a float in [0, inf)"
    open_top = Interval(float, 0, None, allow_inf=True)
    assert open_top.is_satisfied_by(math.inf) and not open_top.is_satisfied_by(-math.inf)
    assert not open_top.is_satisfied_by(math.nan)
    assert str(open_top) == "a float in [0, inf]"
    # a finite upper bound never admits +inf, whatever allow_inf says
    assert not Interval(float, 0, 5, allow_inf=True).is_satisfied_by(math.inf)
    assert str(Interval(float, None, None)) == "a float in (-inf, inf)"


def test_interval_rejects_bad_declarations():
    with pytest.raises(TypeError):
        Interval(str, 0, 1)
    with pytest.raises(ValueError):
        Interval(int, 2, 1)
    with pytest.raises(ValueError):
        Interval(int, 0, 1, closed="open")


def test_options_none_and_unions():
    o = Options(("ei", "pi"))
    assert o.is_satisfied_by("ei") and not o.is_satisfied_by("ucb")
    assert str(o) == "one of 'ei', 'pi'"
    # True == 1 in Python, but a boolean is not the option 1
    assert Options((0, 1)).is_satisfied_by(1) and not Options((0, 1)).is_satisfied_by(True)
    assert NoneOK.is_satisfied_by(None) and not NoneOK.is_satisfied_by(0)
    u = AnyOf(Interval(int, 1, None), None)
    assert u.is_satisfied_by(None) and u.is_satisfied_by(4) and not u.is_satisfied_by(0)
    assert str(u) == "None or an int in [1, inf)"
    assert str(make_constraint([None, Options(("auto",)), Interval(int, 1, None)])) == \
        "None, 'auto' or an int in [1, inf)"
    with pytest.raises(TypeError):
        make_constraint("positive")


def test_setting_checks_domain_after_type_conversion():
    s = Setting(3, "n", domain=Interval(int, 1, None))
    assert s.coerce("optimizer 'x'", "n", "7") == 7
    assert s.coerce("optimizer 'x'", "n", 2.0) == 2  # an integral float is the int
    with pytest.raises(InvalidSettingError, match=r"^optimizer 'x': setting n=-3 must be an int in \[1, inf\)$"):
        s.coerce("optimizer 'x'", "n", "-3")
    with pytest.raises(InvalidSettingError, match=r"setting n=1\.5 must be an int in \[1, inf\)"):
        s.coerce("optimizer 'x'", "n", 1.5)
    f = Setting(1.0, "t", domain=Interval(float, 0, None, closed="neither"))
    for text in ("nan", "inf", "-1", "0"):
        with pytest.raises(InvalidSettingError, match=r"must be a float in \(0, inf\)"):
            f.coerce("o", "t", text)
    # a None default takes its type from the domain's interval
    opt = Setting(None, "m", domain=[None, Interval(float, 0, None, closed="neither")])
    assert opt.coerce("o", "m", "0.5") == 0.5 and opt.coerce("o", "m", None) is None
    assert opt.describe_domain() == "None or a float in (0, inf)"
    # choices is still honoured, as Options
    c = Setting("a", "c", choices=("a", "b"))
    with pytest.raises(InvalidSettingError, match="must be one of 'a', 'b'"):
        c.coerce("o", "c", "z")


# -- the examples, on the command line ---------------------------------------------
CLI_CASES = [
    (["-b", "branin", "-o", "gp_ei", "--set", "n_init=-3"], "optimizer 'gp_ei': setting n_init=-3",
     "an int in [1, inf)"),
    (["-b", "branin", "-o", "gp_ei", "--set", "n_candidates=-5"], "setting n_candidates=-5", "an int in [1, inf)"),
    (["-b", "ising", "-o", "simulated_annealing", "--set", "t_max=nan"], "setting t_max=nan", "a float in (0, inf)"),
    (["-b", "branin", "-o", "random_search", "--benchmark-set", "cost_s=-1"], "benchmark 'branin': setting cost_s=-1",
     "a float in [0, inf)"),
    (["-b", "branin", "-o", "random_search", "--benchmark-set", "cost_s=inf"], "setting cost_s=inf",
     "a float in [0, inf)"),
    (["-b", "ising", "-o", "random_search", "--benchmark-set", "problem_seed=-1"], "setting problem_seed=-1",
     "an int in [0, inf)"),
    (["-b", "branin", "-o", "random_search", "--workers", "100000000"], "--workers",
     "a positive integer of at most 100000"),
]


@pytest.mark.parametrize("args, names, allowed", CLI_CASES, ids=[c[1] for c in CLI_CASES])
def test_cli_examples_are_one_line_with_the_range(args, names, allowed, tmp_path, capsys):
    out = tmp_path / "r.csv"
    code = main(["run", *args, "--budget-evals", "3", "--seed", "0", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert names in err and allowed in err, err
    assert "Traceback" not in err and not out.exists()


# -- the same, in protocol files ---------------------------------------------------------
def _protocol(tmp_path, name: str, body: str):
    path = tmp_path / f"{name}.yaml"
    path.write_text(body, encoding="utf-8")
    return path


PROTOCOL_CASES = [
    ("benchmark: branin\noptimizers: [{name: gp_ei, settings: {n_init: -3}}]\nrepetitions: 2\n",
     "setting n_init=-3", "an int in [1, inf)"),
    ("benchmark: branin\noptimizers: [{name: gp_ei, settings: {n_candidates: -5}}]\nrepetitions: 2\n",
     "setting n_candidates=-5", "an int in [1, inf)"),
    ("benchmark: ising\noptimizers: [{name: simulated_annealing, settings: {t_max: nan}}]\nrepetitions: 2\n",
     "setting t_max=nan", "a float in (0, inf)"),
    ("benchmark: ising\noptimizers: [{name: simulated_annealing, settings: {t_max: .nan}}]\nrepetitions: 2\n",
     "setting t_max=nan", "a float in (0, inf)"),
    ("benchmark: {name: branin, settings: {cost_s: -1}}\noptimizers: [random_search]\nrepetitions: 2\n",
     "setting cost_s=-1", "a float in [0, inf)"),
    ("benchmark: {name: branin, settings: {cost_s: .inf}}\noptimizers: [random_search]\nrepetitions: 2\n",
     "setting cost_s=inf", "a float in [0, inf)"),
    ("benchmark: {name: ising, settings: {problem_seed: -1}}\noptimizers: [random_search]\nrepetitions: 2\n",
     "setting problem_seed=-1", "an int in [0, inf)"),
    ("benchmark: branin\noptimizers: [random_search]\nrepetitions: 2\nworkers: 100000000\n",
     "workers: must be", ">= 1 and <= 100000, got 100000000"),
    ("benchmark: branin\noptimizers: [random_search]\nrepetitions: 100000000\n",
     "repetitions: must be", ">= 1 and <= 100000, got 100000000"),
    ("benchmark: branin\noptimizers: [random_search]\nrepetitions: 0\n", "repetitions: must be", ">= 1 and <= 100000, got 0"),
    ("benchmark: {name: svm_mnist, settings: {table: /nonexistent/svm.h5}}\noptimizers: [random_search]\n"
     "repetitions: 2\n", "settings.table", "does not exist"),
]


@pytest.mark.parametrize("body, names, allowed", PROTOCOL_CASES, ids=[c[1] + " " + c[2] for c in PROTOCOL_CASES])
def test_protocol_examples_fail_validation(body, names, allowed, tmp_path, capsys):
    path = _protocol(tmp_path, "bad", body + "budget: {evaluations: 5}\n")
    with pytest.raises(ProtocolError) as info:
        load_protocol(path)
    msg = str(info.value)
    assert "\n" not in msg and names in msg and allowed in msg and str(path) in msg, msg
    # the CLI validator gives the same single line and exit 2
    code = main(["validate-protocol", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and names in err, err


def test_protocol_within_domains_is_accepted(tmp_path):
    path = _protocol(tmp_path, "fine", "benchmark: {name: branin, settings: {cost_s: 0}}\n"
                     "optimizers: [{name: gp_ei, settings: {n_init: 1}}]\nrepetitions: 100000\nworkers: 3\n"
                     "budget: {evaluations: 5}\n")
    p = load_protocol(path)
    assert p.repetitions == 100000 and p.workers == 3
    assert p.optimizers[0].settings == {"n_init": 1} and p.benchmarks[0].settings == {"cost_s": 0.0}


# -- construction (the Python API) uses the same domains ----------------------------------
def test_construction_checks_domains():
    with pytest.raises(InvalidSettingError, match=r"benchmark 'branin': setting cost_s=inf must be a float in \[0, inf\)"):
        registry.make_benchmark("branin", {"cost_s": math.inf})
    with pytest.raises(InvalidSettingError, match=r"setting n_stages=0 must be an int in \[1, inf\)"):
        registry.make_benchmark("contamination", {"n_stages": 0})
    opt = registry.get_optimizer("regularized_evolution")
    bench = registry.make_benchmark("ising")
    with pytest.raises(InvalidSettingError, match=r"setting population_size=0 must be an int in \[1, inf\)"):
        opt(bench.space, rng=0, population_size=0)


# -- describe ------------------------------------------------------------------------------
def test_describe_shows_domains(capsys):
    assert main(["describe", "hyperband"]) == 0
    out = capsys.readouterr().out
    assert "eta = 3  (an int in [2, inf))" in out
    assert "min_fidelity = None  (None or a float in (0, inf))" in out
    assert "incumbent = 'full'  (one of 'full', 'any')" in out
    assert main(["describe", "ising"]) == 0
    assert "problem_seed = 0  (an int in [0, inf))" in capsys.readouterr().out


def test_describe_suggests_on_a_typo(capsys):
    assert main(["describe", "gp_eii"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "did you mean 'gp_ei'" in err


# -- every registered plugin: defaults inside its own domains ------------------------------
def _all_specs():
    out = []
    for kind, table in (("optimizer", registry.optimizers()), ("benchmark", registry.benchmarks())):
        for name, entry in table.items():
            if entry.obj is not None:
                out.append((kind, name, getattr(entry.obj, "settings_spec", {}) or {}))
    return out


@pytest.mark.parametrize("kind, name, spec", _all_specs(), ids=[f"{k}:{n}" for k, n, _ in _all_specs()])
def test_defaults_satisfy_their_domains(kind, name, spec):
    for key, setting in spec.items():
        c = setting.constraint
        if c is not None and setting.default is not None:
            assert c.is_satisfied_by(setting.default), f"{kind} {name}: default {key}={setting.default!r} not {c}"
    # and resolving the defaults through coerce (as a protocol restating them would) passes
    resolve_settings(f"{kind} {name!r}", spec, {k: s.default for k, s in spec.items() if s.default is not None})


def test_counted_settings_declare_domains():
    """Settings that are counts or sizes (n_*, *_size, epochs, iterations) all declare a range."""
    missing = []
    for kind, name, spec in _all_specs():
        for key, s in spec.items():
            counted = key.startswith("n_") or key.endswith(("_size", "_seed")) or key in ("epochs", "iterations",
                                                                                          "cost_s", "lr")
            if counted and s.constraint is None:
                missing.append(f"{kind} {name}: {key}")
    assert not missing, missing
