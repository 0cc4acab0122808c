"""Size and read/write time of a committed runs frame: row-by-row CSV as gzip and as xz, and column by column.

    OMP_NUM_THREADS=1 .venv/bin/python perf/bench_runs_format.py [--protocol combo_binary] [--repeats 3]

Issue 25: keep reproductions/ small. Reads the committed frame of ``reproductions/<protocol>/`` and writes the
same frame into a temporary folder as row-by-row CSV, gzip (pandas' default level, what was committed first),
xz (preset 6, extreme) with JSON configurations, xz with small-integer configurations as digit strings
(:func:`encode_config`; committed from 2026-11-27), and column by column with digit strings, xz preset 6 and 9e
(``runs.columns.xz``, what ``collect`` writes since 2026-11-28: :func:`_write_runs`, which also reads the file
back to check it). It reports each file's size, the CPU seconds of writing it once and the median CPU seconds of
reading it back with :func:`read_runs` (the scorecard's and --verify's reader). Ratios measured in one run are
the figures to compare; the load average is printed at the end.
Measured on combo_maxsat (2026-11-27, load 5.5-7): gzip 7.92 MB, xz 4.63 MB, xz with digit strings 3.85 MB;
writing 10.2 / 112.8 / 52.7 CPU s, reading 1.15 / 1.38 / 2.45 CPU s.
Measured on combo_maxsat (2026-11-28, load 5.1-5.3, one thread, --repeats 3): the four formats 9.77 / 5.68 / 4.71 /
2.84 MB; writing 13.3 / 174.5 / 76.0 / 43.7 CPU s (the last with its read-back check); reading 2.85 / 3.16 / 4.38
/ 3.52 CPU s. The column form is 40 % smaller than the row-by-row form it replaced, written in 0.57x its CPU time
and read in 0.80x.
Measured on combo_binary (2026-11-28, load 1.0, one thread, --repeats 3; 314 CPU s, 315 wall s): rows gzip JSON
8.45 MB, rows xz 6e JSON 5.59, rows xz 6e digit strings 5.10, columns xz 6 3.10, columns xz 9e 2.96 MB (committed);
writing 8.4 / 110.0 / 78.9 / 22.2 / 47.4 CPU s; reading 2.08 / 2.42 / 2.64 / 2.58 / 2.85 CPU s. Against the form it
replaced: 42 % smaller, written in 0.60x the CPU time, read in 1.08x; preset 9e is 4.5 % smaller than 6 for 2.1x
the write time.
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import lzma
import statistics
import tempfile
import time
from pathlib import Path

from benchsuite.analysis import reproductions as R

REPO = Path(__file__).resolve().parents[1]


def cpu(fn) -> float:  # noqa: ANN001 - any callable
    """Process CPU seconds of one call."""
    t = time.process_time()
    fn()
    return time.process_time() - t


def main() -> None:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--protocol", default="combo_binary")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    df = R.read_runs(R.runs_path(REPO / "reproductions" / args.protocol))
    print(f"{args.protocol}: {len(df):,} rows x {df.shape[1]} columns")
    print("| format | MB | write CPU s | read CPU s (median) |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        formats = (("rows, gzip (pandas default), JSON", {"method": "gzip", "mtime": 0}, False),
                   ("rows, xz preset 6e, JSON", {"method": "xz", "preset": 6 | lzma.PRESET_EXTREME}, False),
                   ("rows, xz preset 6e, digit strings", {"method": "xz", "preset": 6 | lzma.PRESET_EXTREME}, True),
                   ("columns, xz preset 6, digit strings", 6, True),
                   ("columns, xz preset 9e, digit strings (committed)", None, True))
        for i, (name, comp, digits) in enumerate(formats):
            if comp is None:
                path = Path(tmp) / R.RUNS_FILE
                w = cpu(lambda: R._write_runs(df, path))  # noqa: B023
            elif isinstance(comp, int):  # the committed form at another preset, without the read-back check
                path = Path(tmp) / f"runs{i}.columns.xz"
                w = cpu(lambda: path.write_bytes(lzma.compress(  # noqa: B023
                    R._frame_text(R.encode_configs(df)).encode("utf-8"), preset=comp)))  # noqa: B023
            else:
                path = Path(tmp) / f"runs{i}.{'csv.gz' if comp['method'] == 'gzip' else 'csv.xz'}"
                out = R.encode_configs(df) if digits else df
                w = cpu(lambda: out.to_csv(path, index=False, compression=comp))  # noqa: B023
            r = statistics.median(cpu(lambda: R.read_runs(path)) for _ in range(args.repeats))  # noqa: B023
            print(f"| {name} | {path.stat().st_size / 1e6:.2f} | {w:.1f} | {r:.2f} |")

if __name__ == "__main__":
    main()
