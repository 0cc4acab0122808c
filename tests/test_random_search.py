"""Random search through the conformance kit (the kit's own first customer)."""
from benchsuite.testing import check_optimizer
from benchsuite.optimizers.random_search import RandomSearch


def test_random_search_conforms():
    report = check_optimizer(RandomSearch)
    labels = {label for label, _ in report.checked}
    assert {"continuous", "discrete-ordinal", "discrete-binary-categorical", "mixed", "architecture"} <= labels
    assert ("continuous", 3) in report.checked
