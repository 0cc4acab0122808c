"""gp_ei ask before and after issue 24 in one run: CPU and wall seconds at n = 100 and 500 on Hartmann6.

A thin front end of ``perf/decision_times.py`` (same workers, same procedure: burn-in at 20
observations, then steady-state asks at n, each after one more observation): the "before" is
an archive of the revision before the change (``--before``, default ``26bcf31``), the "after"
this checkout. Targets (issue 24): at most 0.4 s CPU at n = 100 and 2 s CPU at n = 500.

    nice -n 5 .venv/bin/python perf/gp_ask.py --json perf/results/gp_ask.json
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default="26bcf31", help="git revision measured as the 'before'")
    ap.add_argument("--after", default=None, help="git revision measured as the 'after' (default: this checkout)")
    ap.add_argument("--n", nargs="+", default=["100", "500"])
    ap.add_argument("--repeats", default="3")
    ap.add_argument("--plugins", nargs="+", default=["gp_ei"])
    ap.add_argument("--json")
    args = ap.parse_args()
    here = Path(__file__).resolve().parent
    cmd = [sys.executable, str(here / "decision_times.py"), "--plugins", *args.plugins, "--n", *args.n,
           "--repeats", args.repeats, "--code", f"before=git:{args.before}",
           "--code", f"after=git:{args.after}" if args.after else f"after={here.parent}"]
    if args.json:
        cmd += ["--json", args.json]
    sys.exit(subprocess.call(cmd))


if __name__ == "__main__":
    main()
