"""Point the editable install's ``benchsuite`` packages at another checkout (for before/after timings).

    import _tree; _tree.use(path)   # before the first ``import benchsuite``

``path`` is the root of a source tree of this project (e.g. ``git archive main`` unpacked); the
editable finder's mapping (benchsuite, benchsuite.optimizers, ...) is rewritten to that root, so
the same perf script can time the library before and after a change in one run
(``perf/compare_otmann_speed.py``). Without ``use`` the installed tree is imported as usual.
"""
from __future__ import annotations

import os
import sys


def use(root: str) -> None:
    """Import ``benchsuite`` (and its mapped packages) from ``root`` instead of the installed tree."""
    if any(m == "benchsuite" or m.startswith("benchsuite.") for m in sys.modules):
        raise RuntimeError("_tree.use must run before benchsuite is imported")
    root = os.path.abspath(root)
    finders = [m for name, m in sys.modules.items() if name.startswith("__editable__") and hasattr(m, "MAPPING")]
    if not finders:
        raise RuntimeError("benchsuite is not an editable install; cannot redirect it")
    for f in finders:
        old = f.MAPPING.get("benchsuite")
        if old is None:
            continue
        base = os.path.dirname(old)
        f.MAPPING.update({k: root + v[len(base):] for k, v in f.MAPPING.items()})
        f.NAMESPACES.update({k: [root + p[len(base):] for p in v] for k, v in f.NAMESPACES.items()})
