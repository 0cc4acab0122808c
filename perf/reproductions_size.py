"""How much of the repository the committed runs take: in the checkout and in git's history.

    .venv/bin/python perf/reproductions_size.py [--repo .]

Issue 25 asks for ``reproductions/`` under 30 MB in the checkout (docs/workflow.md, "Size"). Every ``collect``
writes a protocol's whole runs file (``runs.columns.xz``) again, and git cannot store an xz file as a small
change to its last version, so each collect adds the protocol's whole frame to the history. This script prints,
per protocol folder, the bytes in the checkout, the number of versions of its files in the history and the
bytes git stores for all of them (``git cat-file``'s on-disk size of every blob ever committed under the folder:
frames, provenance, figures), and the totals. It reads git's object list once (0.2 s wall on this repository).

Measured 2026-11-27 (HEAD acf6e4c): checkout 29.35 MB, history 271.6 MB. combo_maxsat: 4.46 MB in the checkout,
73.5 MB in the history (its row-by-row runs.csv.xz collected 14 times).
Measured 2026-11-28 (HEAD f0b232d, after every frame was rewritten column by column): checkout 32.09 -> 20.64 MB,
history 288.7 -> 308.6 MB (the rewrite adds each frame once more).
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import subprocess
from collections import defaultdict
from pathlib import Path

from benchsuite.analysis.reproductions import folder_mb


def history_bytes(repo: Path, top: str = "reproductions") -> tuple[dict[str, int], dict[str, int]]:
    """Per folder under ``top``: git's on-disk bytes of every blob ever committed there, and how many blobs."""
    objects = subprocess.run(["git", "-C", str(repo), "rev-list", "--objects", "--all"], check=True,
                             capture_output=True, text=True).stdout
    wanted = "".join(line + "\n" for line in objects.splitlines() if f" {top}/" in line)
    sizes = subprocess.run(["git", "-C", str(repo), "cat-file",
                            "--batch-check=%(objecttype) %(objectsize:disk) %(rest)"],
                           input=wanted, check=True, capture_output=True, text=True).stdout
    total: dict[str, int] = defaultdict(int)
    count: dict[str, int] = defaultdict(int)
    for line in sizes.splitlines():
        kind, size, path = line.split(" ", 2)
        if kind != "blob" or not path.startswith(f"{top}/"):
            continue
        parts = path.split("/")
        key = parts[1] if len(parts) > 2 else "(top-level files)"
        total[key] += int(size)
        count[key] += 1
    return dict(total), dict(count)


def main() -> None:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    args = ap.parse_args()
    root = args.repo / "reproductions"
    hist, versions = history_bytes(args.repo)
    top_mb = sum(p.stat().st_size for p in root.iterdir() if p.is_file()) / 1e6
    rows = []
    for name in sorted(set(hist) | {p.name for p in root.iterdir() if p.is_dir()}):
        here = top_mb if name == "(top-level files)" else folder_mb(root / name) if (root / name).is_dir() else 0.0
        rows.append((name, here, versions.get(name, 0), hist.get(name, 0)))
    print("| folder | checkout MB | file versions in history | history MB |")
    print("|---|---:|---:|---:|")
    for name, here, n, h in sorted(rows, key=lambda r: -r[3]):
        print(f"| {name} | {here:.2f} | {n} | {h / 1e6:.1f} |")
    print(f"| **total** | **{folder_mb(root):.2f}** | {sum(versions.values())} | **{sum(hist.values()) / 1e6:.1f}** |")

if __name__ == "__main__":
    main()
