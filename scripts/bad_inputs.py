"""The bad-input suite's tally: how many adversarial cases there are, and how many pass their contract.

    python scripts/bad_inputs.py                 # every case of the bad-input test files (a few minutes)
    python scripts/bad_inputs.py -k "clock"      # extra arguments go to pytest (here: a selection)

The cases are the tests of the files in :data:`FILES` (each a bad input with its contract: exit
status, one line, no traceback, no file left behind or the earlier files intact, a bounded time).
The script runs them with pytest, reads pytest's JUnit XML report and prints one line per file and
the total: cases, clean (passed), failed, skipped, with the wall and CPU seconds and the load
average it ran under. Exit status 0 when every case that ran is clean, else 1.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the test files whose cases make up the bad-input suite
FILES = ("tests/test_bad_inputs.py", "tests/test_contradictions.py", "tests/test_bad_inputs_runs.py")


def tally(report: Path) -> dict[str, dict[str, int]]:
    """Per test file: cases, clean, failed, skipped, from a JUnit XML report."""
    out: dict[str, dict[str, int]] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = case.get("classname", "").split(".")[-1] + ".py"
        row = out.setdefault(name, {"cases": 0, "clean": 0, "failed": 0, "skipped": 0})
        row["cases"] += 1
        if case.find("skipped") is not None:
            row["skipped"] += 1
        elif case.find("failure") is not None or case.find("error") is not None:
            row["failed"] += 1
        else:
            row["clean"] += 1
    return out


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="benchsuite-bad-inputs-") as tmp:
        report = Path(tmp) / "report.xml"
        t0, c0 = time.perf_counter(), os.times()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                               *FILES, *argv], cwd=ROOT, capture_output=True, text=True)
        wall, c1 = time.perf_counter() - t0, os.times()
        if not report.exists():
            print(proc.stdout[-2000:] + proc.stderr[-2000:], file=sys.stderr)
            print("bad_inputs: pytest wrote no report", file=sys.stderr)
            return 2
        rows = tally(report)
    total = {k: sum(r[k] for r in rows.values()) for k in ("cases", "clean", "failed", "skipped")}
    for name, r in sorted(rows.items()):
        print(f"{name}: {r['cases']} cases, {r['clean']} clean, {r['failed']} failed, {r['skipped']} skipped")
    cpu = (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)
    print(f"bad-input suite: {total['cases']} cases, {total['clean']} clean, {total['failed']} failed, "
          f"{total['skipped']} skipped ({wall:.0f} s wall, {cpu:.0f} s CPU, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    return 0 if total["failed"] == 0 and total["cases"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
