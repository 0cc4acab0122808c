"""Loading result files into one tidy frame, and the per-run quantity the report shows."""
from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchsuite.errors import DataError
from benchsuite.results import load_result

# columns added to every row of the tidy frame, in front of the result file's own
RUN_COLUMNS = ("protocol", "benchmark", "benchmark_name", "optimizer", "optimizer_name", "repetition", "seed",
               "optimum", "evaluation")


def load_runs(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    """Load result files into one tidy frame: one row per finished trial of every run.

    Each row carries its run's protocol, benchmark and optimizer labels (from the
    workflow's ``--meta`` provenance, else the registered names), repetition, seed and the
    benchmark's known optimum, plus ``evaluation``: how many trials had been told when this
    row was told (1-based). ``df.attrs["provenance"]`` lists every run's provenance.
    """
    frames: list[pd.DataFrame] = []
    provs: list[dict[str, Any]] = []
    for path in paths:
        frame, prov = labelled_run(load_result(path), str(path))
        frames.append(frame)
        provs.append(prov)
    if not frames:
        raise DataError("no result files to load")
    out = pd.concat(frames, ignore_index=True)
    out.attrs["provenance"] = provs
    return out


def labelled_run(df: pd.DataFrame, path: str | None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One run's frame (as :func:`benchsuite.results.load_result` returns it) with its labels in front, and its
    provenance with ``path`` (None for a run held in memory)."""
    prov = dict(df.attrs["provenance"])
    prov["path"] = path
    n = len(df)
    meta = {
        "protocol": prov.get("protocol", ""),
        "benchmark": prov.get("benchmark_label") or prov.get("benchmark", ""),
        "benchmark_name": prov.get("benchmark", ""),
        "optimizer": prov.get("optimizer_label") or prov.get("optimizer", ""),
        "optimizer_name": prov.get("optimizer", ""),
        "repetition": int(prov["repetition"]) if prov.get("repetition") not in (None, "") else int(prov["seed"]),
        "seed": int(prov["seed"]),
        "optimum": float(prov["optimum"]) if prov.get("optimum") is not None else math.nan,
    }
    head = pd.DataFrame({k: [v] * n for k, v in meta.items()})
    head["evaluation"] = np.arange(1, n + 1)
    df.attrs = {}
    return pd.concat([head, df.reset_index(drop=True)], axis=1), prov


def load_protocol_results(protocol: Any, root: str | os.PathLike = ".") -> pd.DataFrame:
    """All result files of a :class:`benchsuite.protocol.Protocol` (relative to ``root``) in one frame."""
    paths = [Path(root) / p for p in protocol.result_paths()]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise DataError(f"protocol {protocol.name!r}: {len(missing)} result file(s) missing, e.g. {missing[0]}; "
                        f"run `snakemake {protocol.name}` first")
    return load_runs(paths)


def write_aggregate(df: pd.DataFrame, runs_path: str | os.PathLike, provenance_path: str | os.PathLike) -> None:
    """Write the tidy frame (gzipped CSV) and the runs' provenance (JSON), each atomically."""
    from benchsuite.results import atomic_write_text

    atomic_write_text(provenance_path, json.dumps(df.attrs.get("provenance", []), indent=1, sort_keys=True,
                                                  default=str) + "\n")
    tmp = Path(str(runs_path) + ".part")
    df.to_csv(tmp, index=False, compression="gzip")
    os.replace(tmp, runs_path)


def read_aggregate(runs_path: str | os.PathLike, provenance_path: str | os.PathLike | None = None) -> pd.DataFrame:
    """Read what :func:`write_aggregate` wrote."""
    df = pd.read_csv(runs_path,
                     dtype={"config": str, "incumbent": str, "info": str, "benchmark": str, "optimizer": str,
                            "protocol": str})
    if provenance_path is not None:
        df.attrs["provenance"] = json.loads(Path(provenance_path).read_text(encoding="utf-8"))
    return df


def add_quantity(df: pd.DataFrame, quantity: str, optimum: Mapping[str, float | None] | None = None) -> pd.DataFrame:
    """Add the column ``value``: the reported quantity of the incumbent after each row.

    ``incumbent_loss`` (the validation loss the optimizer saw), ``incumbent_test_loss``
    (offline test loss) or ``regret`` (test loss minus the known optimum; ``optimum`` maps
    benchmark labels to overrides of the optimum recorded in the result files).
    """
    out = df.copy()
    if quantity in ("incumbent_loss", "incumbent_test_loss"):
        out["value"] = pd.to_numeric(out[quantity], errors="coerce")
        return out
    if quantity != "regret":
        raise DataError(f"unknown quantity {quantity!r}; use incumbent_loss, incumbent_test_loss or regret")
    opt = out["optimum"].astype(float).copy()
    for label, value in (optimum or {}).items():
        if value is not None:
            opt[out["benchmark"] == label] = float(value)
    bad = sorted(set(out.loc[opt.isna(), "benchmark"]))
    if bad:
        raise DataError(f"quantity 'regret' needs a known optimum, but benchmark(s) {', '.join(bad)} have none; "
                        "add `optimum:` to the benchmark's entry in the protocol or report another quantity")
    out["value"] = pd.to_numeric(out["incumbent_test_loss"], errors="coerce") - opt
    return out
