"""CPU and wall seconds to build the scorecard from committed runs, with the load average.

    OMP_NUM_THREADS=1 .venv/bin/python perf/scorecard_time.py [--dir reproductions] [--repeats 3]

Times ``analysis.scorecard.build`` over every protocol of the suite (the committed runs under
``--dir``), after one untimed build that pays for the imports; prints one line per repeat.
"""
from __future__ import annotations

import argparse
import os
import time


def main() -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=None, help="reproductions folder (default: the checkout's)")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    from benchsuite.analysis import reproductions as R
    from benchsuite.analysis import scorecard as S
    from benchsuite.protocol import load_protocols

    root = args.dir or R.default_root()
    t0, c0 = time.perf_counter(), time.process_time()
    protocols = load_protocols()
    print(f"load protocols: wall {time.perf_counter() - t0:.2f} s, CPU {time.process_time() - c0:.2f} s")
    card = S.build(protocols, root)  # warm-up
    runs = sum(int(x) for x in card["ours_runs"])
    for i in range(args.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        S.build(protocols, root)
        print(f"build {i}: {len(card)} cells, {runs} run-cells, wall {time.perf_counter() - t0:.2f} s, "
              f"CPU {time.process_time() - c0:.2f} s, load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
