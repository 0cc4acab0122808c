"""The "best model retrained" step of a protocol: a run's final incumbent trained again under a longer schedule.

NASBOT's Table 3 (nasbot.txt Sec. 5) reports, for CIFAR-10, the test error of each method's best network
after the search and again "best model retrained (150K iters)": the incumbent the search found, trained
for 150,000 iterations instead of the search's 60,000. A protocol asks for this with ``retrain:``
(:class:`benchsuite.protocol.RetrainSpec`); the workflow runs it as a job of its own after each run
(``benchsuite retrain-job``), so a search is never repeated for it and an interrupted retraining is just
started again (its file is written atomically, whole or not at all).

One retraining: the run's result file gives the final incumbent (the last row's ``incumbent``); the
benchmark is built with the run's settings plus ``retrain.settings``; the incumbent is evaluated at that
benchmark's full fidelity from the test-loss seed (:data:`benchsuite.live.TEST_SEED`, the seed every
test loss of the suite is trained from), and the benchmark's ``test_loss`` of it is the run's retrained
value. A training that diverges is recorded as a failed retraining (``status: failed``, NaN), not lost.
The record, with its provenance, is ``repNNN.retrained.json`` beside the run's ``repNNN.csv``.
"""
from __future__ import annotations

import json
import math
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import DataError, ProtocolError

RECORD_FORMAT = "benchsuite retrained value"


def final_incumbent(df: Any) -> tuple[str, float]:
    """The JSON text of a run's final incumbent and its test loss during the search (the last row's)."""
    rows = df[df["incumbent"].notna() & (df["incumbent"].astype(str) != "")]
    if not len(rows):
        raise DataError("the run has no incumbent (no trial succeeded): nothing to retrain")
    last = rows.iloc[-1]
    return str(last["incumbent"]), float(last["incumbent_test_loss"])


def retrain_run(protocol: Any, job: Any, run_path: str | Path, out: str | Path) -> dict[str, Any]:
    """Retrain the final incumbent of ``job``'s run (its result file ``run_path``); write the record to ``out``.

    The run must be ``job``'s (protocol, labels, seed), or this is a one-line :class:`DataError`.
    """
    from . import registry
    from .live import TEST_SEED
    from .provenance import git_commit, library_versions, machine_info
    from .results import atomic_write_text, load_result, sha256_bytes

    spec = protocol.retrain
    if spec is None or job.optimizer.label not in spec.optimizers:
        raise ProtocolError(f"protocol {protocol.name!r} does not retrain {job.optimizer.label}'s runs on "
                            f"{job.benchmark.label} (its `retrain:` key)")
    run_path = Path(run_path)
    df = load_result(run_path)
    prov = df.attrs["provenance"]
    mine = {"protocol": protocol.name, "benchmark_label": job.benchmark.label,
            "optimizer_label": job.optimizer.label, "seed": job.seed}
    theirs = {k: prov.get(k) for k in mine}
    if {k: str(v) for k, v in theirs.items()} != {k: str(v) for k, v in mine.items()}:
        raise DataError(f"{run_path}: not the run of {job.key} (its provenance says {theirs})")
    text, search_test = final_incumbent(df)
    settings = {**job.benchmark.settings_for(job.repetition), **spec.settings}
    bench = registry.make_benchmark(job.benchmark.name, settings)
    config = bench.space.from_json(text)
    bench.prepare()
    full = bench.fidelity.full if bench.fidelity is not None else None
    t0 = time.perf_counter()
    result = bench.evaluate(config, full, seed=TEST_SEED)
    test = math.nan if result.failed else float(bench.test_loss(config))
    seconds = time.perf_counter() - t0
    record = {
        "format": RECORD_FORMAT,
        "protocol": protocol.name, "benchmark_label": job.benchmark.label, "optimizer_label": job.optimizer.label,
        "repetition": job.repetition, "run_seed": job.seed,
        "status": "failed" if result.failed or not math.isfinite(test) else "ok",
        "incumbent": text,
        "search_test_loss": search_test,
        "retrained_test_loss": test,
        "retrained_loss": float(result.loss),
        "retrain_settings": spec.settings,
        "training_seed": TEST_SEED,
        "cost_s": float(result.cost_s),
        "seconds": seconds,
        "info": result.info,
        "run_file_sha256": sha256_bytes(run_path.read_bytes()),
        "benchmark": bench.name,
        "benchmark_settings": bench.settings,
        "benchmark_provenance": bench.provenance(),
        "git_commit": git_commit(protocol.name),
        "libraries": library_versions(),
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **machine_info(),
    }
    atomic_write_text(out, json.dumps(record, indent=1, sort_keys=True, default=str, allow_nan=True) + "\n")
    return record


def read_record(path: str | Path) -> dict[str, Any]:
    """A retrained-value file, checked for its format; a one-line :class:`DataError` when it is not one."""
    p = Path(path)
    try:
        record = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{p}: not a readable retrained-value file ({str(exc).splitlines()[0]})") from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise DataError(f"{p}: not a retrained-value file (no \"format\": \"{RECORD_FORMAT}\")")
    return record
