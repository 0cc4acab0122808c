"""File names a protocol's analysis writes (light: the Snakefile imports it at parse time)."""
from __future__ import annotations

from typing import Any


def report_outputs(protocol: Any, report_dir: str = "reports") -> list[str]:
    """Every file the analysis of ``protocol`` writes, ``index.md`` last."""
    base = f"{report_dir}/{protocol.name}"
    out = [f"{base}/curves_{axis}.{ext}" for axis in protocol.plots.x for ext in ("png", "pdf")]
    out += [f"{base}/rank.{ext}" for ext in ("png", "pdf")]
    out += [f"{base}/table.{ext}" for ext in ("md", "csv", "tex")]
    return out + [f"{base}/index.md"]


def aggregate_outputs(protocol: Any, results_dir: str = "results") -> list[str]:
    """The aggregated tidy frame and the runs' provenance of ``protocol``."""
    return [f"{results_dir}/{protocol.name}/runs.csv.gz", f"{results_dir}/{protocol.name}/provenance.json"]
