"""`benchsuite check PLUGIN` (benchsuite/cli_check.py), called through its `main` as the CLI would."""
import argparse

import pytest

from benchsuite import cli_check
from benchsuite.errors import UnknownNameError
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion


class GreedyNeighbour(Optimizer):
    """A user's plugin: random start, then a random neighbour of the best configuration so far."""

    name = "greedy_neighbour"
    description = "local search from the incumbent (test plugin of tests/test_cli_check.py)"
    supports = Capabilities(spaces={"discrete"})

    def ask(self, pending=()):
        best = self.recommend()
        if best is None or len(self.history) < 3:
            return Suggestion(self.space.sample(self.rng), self.full_fidelity())
        nbs = self.space.neighbours(best)
        return Suggestion(nbs[int(self.rng.integers(len(nbs)))], self.full_fidelity())


class Broken(GreedyNeighbour):
    """A plugin with no description: the kit must say so."""

    name = "broken_plugin"
    description = ""


def _args(plugin, **kw):
    parser = argparse.ArgumentParser()
    cli_check.add_parser(parser.add_subparsers())
    argv = ["check", plugin]
    for k, v in kw.items():
        flag = "--" + k.replace("_", "-")
        argv += [flag] if v is True else [flag, str(v)]
    return parser.parse_args(argv)


def test_check_a_plugin_class_from_a_test_file(capsys):
    code = cli_check.main(_args(f"{__file__}:GreedyNeighbour", budget=12, seeds=2))
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "conformance kit passed" in out.out and "nb201_cifar10" in out.out
    assert "vs random search" in out.out and out.out.rstrip().endswith("check passed")


def test_failures_are_one_line_each_and_exit_1(capsys):
    code = cli_check.main(_args(f"{__file__}:Broken", no_race=True))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1
    assert err[0].startswith("FAIL broken_plugin: conformance kit:") and "description" in err[0]


def test_require_better_fails_a_plugin_no_better_than_random(capsys):
    # random search against itself ties: not better, so --require-better fails it
    code = cli_check.main(_args("random_search", budget=5, seeds=1, require_better=True))
    captured = capsys.readouterr()
    assert code == 1 and "not better than random search" in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_registered_benchmark_and_table_choice(capsys):
    assert cli_check.main(_args("branin")) == 0
    assert "benchmark checks passed" in capsys.readouterr().out
    from benchsuite.registry import get_optimizer

    assert cli_check.default_table(get_optimizer("gp_ei")) == "nb201_cifar10"
    assert cli_check.default_table(get_optimizer("hyperband")) == "svm_mnist"
    assert cli_check.default_table(get_optimizer("nasbot")) == "da_nb201_cifar10"


def test_bad_plugin_names_are_the_suite_error():
    with pytest.raises(UnknownNameError, match="did you mean 'random_search'"):
        cli_check.main(_args("random_serch"))
    with pytest.raises(UnknownNameError, match="no Optimizer or Benchmark class 'Nope'"):
        cli_check.main(_args(f"{__file__}:Nope"))
    with pytest.raises(UnknownNameError, match="importing no_such_module_xyz failed"):
        cli_check.main(_args("no_such_module_xyz:Cls"))
    with pytest.raises(SystemExit):
        _args("random_search", budget="abc")
