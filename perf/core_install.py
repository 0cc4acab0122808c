"""Time a plain ``pip install`` of the core wheel (no extras) into a fresh venv (issue 27, item 1).

    python perf/core_install.py [--wheel dist/benchsuite-*.whl] [--repeat 2]

Builds the wheel (``uv build``) unless one is given, then for each repetition creates a fresh
``python -m venv`` and runs ``pip install WHEEL`` in it. The first repetition may fill pip's cache;
later ones are the warm-cache time the issue targets (under 60 s). Prints wall and CPU seconds (of
the child processes), the load average, the installed size of the environment and of the wheel.
"""
from __future__ import annotations

import argparse
import glob
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _du_mb(path: Path) -> float:
    """Size in MB of the files under ``path``."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 2**20


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    """Build (or take) the wheel and time fresh-venv pip installs of it."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheel", default="", help="an existing wheel; default: build one with uv")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--python", default=sys.executable, help="the interpreter for the fresh venvs")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="benchsuite-core-install-"))
    try:
        wheel = args.wheel
        if not wheel:
            uv = shutil.which("uv") or os.path.expanduser("~/.local/bin/uv")
            subprocess.run([uv, "build", "--quiet", "--wheel", "--out-dir", str(work / "dist"), str(REPO)], check=True)
            wheel = glob.glob(str(work / "dist" / "benchsuite-*.whl"))[0]
        print(f"wheel {Path(wheel).name}: {Path(wheel).stat().st_size / 2**20:.1f} MB")
        for i in range(args.repeat):
            venv = work / f"venv{i}"
            subprocess.run([args.python, "-m", "venv", str(venv)], check=True)
            c0, w0 = _child_cpu(), time.perf_counter()
            subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                            "--disable-pip-version-check", wheel], check=True)
            wall, cpu = time.perf_counter() - w0, _child_cpu() - c0
            site = next((venv / "lib").glob("python3*/site-packages"))
            print(f"pip install #{i + 1} ({'cold or warm' if i == 0 else 'warm'} cache): wall {wall:.1f} s, "
                  f"CPU {cpu:.1f} s, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
                  f"site-packages {_du_mb(site):.0f} MB (benchsuite itself {_du_mb(site / 'benchsuite'):.0f} MB)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
