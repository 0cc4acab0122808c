"""Turning result files into trajectories, median/quartile plots, rank plots and paper-style tables.

Typical use (the workflow does this per protocol)::

    from benchsuite.protocol import load_protocol
    from benchsuite import analysis

    proto = load_protocol("protocols/synthetic.yaml")
    df = analysis.load_protocol_results(proto)           # one tidy frame, one row per trial
    df = analysis.add_quantity(df, proto.quantity)       # column `value`
    grids = analysis.default_grids(df, "time", "log")
    summary = analysis.summarise(analysis.trajectories(df, "time", grids))

Submodules are imported lazily so that importing :mod:`benchsuite.analysis.outputs` (the Snakefile
does, at parse time) stays cheap.
"""
from __future__ import annotations

if __name__ != "benchsuite.analysis":  # the repository folder imported as a top-level package
    raise ImportError("the folder 'analysis/' is the package benchsuite.analysis: import benchsuite.analysis "
                      "(importing it as 'analysis' would load every file as a second, different module)")

import importlib
from typing import Any

_EXPORTS = {
    "load_runs": "load", "load_protocol_results": "load", "add_quantity": "load", "write_aggregate": "load",
    "read_aggregate": "load",
    "step_values": "steps", "make_grid": "steps", "default_grids": "steps",
    "trajectories": "steps", "summarise": "steps", "average_rank": "steps",
    "value_at": "steps",
    "budget_table": "tables", "to_markdown": "tables", "to_csv": "tables", "to_latex": "tables",
    "format_cell": "tables",
    "plot_curves": "plots", "plot_ranks": "plots",
    "analyse": "report", "write_protocol_report": "report", "write_index": "report",
    "report_outputs": "outputs", "aggregate_outputs": "outputs",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = importlib.import_module(f".{_EXPORTS[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
