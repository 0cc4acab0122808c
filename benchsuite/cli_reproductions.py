"""``benchsuite reproductions``: committed runs, the scorecard, and reruns that check them.

    benchsuite reproductions                                  # scorecard.csv + SCORECARD.md from committed runs,
                                                              # and each protocol's race.csv.xz where out of date
    benchsuite reproductions collect PROTOCOL --results DIR   # add DIR's finished runs (and retrained values)
    benchsuite reproductions collect PROTOCOL --rewrite       # the committed frame again, in today's form
    benchsuite reproductions restore PROTOCOL --results DIR   # committed runs back as DIR's result files (resume)
    benchsuite reproductions --verify N [--protocol P]        # rerun N committed repetitions, compare them

``benchsuite/cli.py`` wires it in with :func:`add_parser` and :func:`main`. The data handling is in
:mod:`benchsuite.analysis.reproductions`, the verdicts in :mod:`benchsuite.analysis.scorecard`.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from .cli_types import integer, number
from .errors import BenchsuiteError, DataError

# a rerun takes some time
_seconds = number(lambda value: value > 0, "a positive, finite number of seconds", noun="a number of seconds")

COMMAND = "reproductions"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add the ``reproductions`` subcommand to the CLI's subparsers."""
    r = sub.add_parser(
        COMMAND, help="committed runs and the scorecard against the papers' numbers",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Without an action: build reproductions/scorecard.csv and reproductions/SCORECARD.md from the "
                    "committed runs alone, and rewrite each protocol's race.csv.xz (what `benchsuite race` reads of "
                    "its runs) where the runs changed. `collect` adds a results folder's finished runs of a protocol to "
                    "reproductions/<protocol>/ (runs.columns.xz, provenance.json); `restore` writes the committed "
                    "runs back as result files so that the workflow resumes without rerunning them.",
        epilog="Examples:\n"
               "  benchsuite reproductions\n"
               "  benchsuite reproductions collect combo_maxsat --results results\n"
               "  benchsuite reproductions restore combo_maxsat --results results && snakemake combo_maxsat\n"
               "  benchsuite reproductions --verify 3 --protocol combo_ordinal_categorical")
    r.add_argument("action", nargs="?", choices=("scorecard", "collect", "restore"), default="scorecard",
                   help="scorecard (default), collect or restore")
    r.add_argument("protocol_names", nargs="*", metavar="PROTOCOL",
                   help="protocol names or files (collect / restore); default: every protocol")
    r.add_argument("--results", metavar="DIR", help="the workflow's results folder (collect / restore)")
    r.add_argument("--dir", metavar="DIR", help="the reproductions folder (default: reproductions/ of the checkout)")
    r.add_argument("--protocols", metavar="DIR", help="folder of protocol files (default: the suite's protocols/)")
    r.add_argument("--figures", action="store_true",
                   help="scorecard: also draw each protocol's committed runs, linked from SCORECARD.md: "
                        "reproductions/<protocol>/figure_table.png (mean curves in the paper's units, the published "
                        "values as diamonds at the budget) and, where the paper's result is a figure, "
                        "figure_<axis>.png (about a minute)")
    r.add_argument("--readme", metavar="FILE",
                   help="scorecard: also rewrite the counts between the scorecard markers of FILE (README.md)")
    r.add_argument("--replace", action="store_true",
                   help="collect: replace committed runs by the results folder's runs of the same repetitions")
    r.add_argument("--rewrite", action="store_true",
                   help="collect: write each named protocol's committed frame again in the current committed form "
                        "(digit-string configurations) with no run added; every column must read back identical")
    r.add_argument("--verify", type=integer(1), metavar="N",
                   help="rerun N randomly chosen committed repetitions and check every non-timing column")
    r.add_argument("--protocol", action="append", dest="verify_protocols", metavar="NAME",
                   help="--verify: draw only from this protocol (repeatable)")
    r.add_argument("--optimizer", action="append", dest="verify_optimizers", metavar="LABEL",
                   help="--verify: draw only runs of this optimizer label (repeatable; CI picks the cheap ones)")
    r.add_argument("--seed", type=integer(0), default=0, help="--verify: seed of the random choice (default 0)")
    r.add_argument("--timeout", type=_seconds, default=600.0, metavar="S",
                   help="--verify: give up on one rerun after S seconds (default 600)")




def _reproductions_folder(args: argparse.Namespace) -> Path:
    """The reproductions folder: ``--dir`` or the checkout's. A ``--dir`` that is read (the scorecard, restore,
    --verify) must be an existing folder: a typo must not become a new, empty one with an all-"not-run"
    scorecard; ``collect`` writes, and may start a new one (it names what it wrote)."""
    from .analysis import reproductions as R

    if not args.dir:
        return R.default_root()
    root = Path(args.dir)
    if not root.exists():
        if args.action == "collect" and args.verify is None:
            return root
        raise DataError(f"--dir {args.dir}: no such folder (the reproductions folder, one subfolder per protocol); "
                        "check the path (`collect` starts a new one)")
    if not root.is_dir():
        raise DataError(f"--dir {args.dir}: not a folder (the reproductions folder holds one subfolder per protocol)")
    return root


def _protocols(args: argparse.Namespace) -> dict:
    from .paths import PROTOCOLS_DIR
    from .protocol import load_protocol, load_protocols

    if args.protocol_names and args.action != "scorecard":
        out = {}
        for name in args.protocol_names:
            folder = Path(args.protocols or PROTOCOLS_DIR)
            path = Path(name) if name.endswith((".yaml", ".yml")) else folder / f"{name}.yaml"
            if not path.exists():
                raise DataError(f"no protocol file {path}")
            p = load_protocol(path)
            out[p.name] = p
        return out
    return load_protocols(args.protocols or PROTOCOLS_DIR)


def main(args: argparse.Namespace) -> int:
    """Run ``benchsuite reproductions``; exit status 0, 1 (a --verify mismatch) or 2 (bad input)."""
    from .analysis import reproductions as R

    root = _reproductions_folder(args)
    if args.verify is not None:
        return _verify(args, root)
    protocols = _protocols(args)
    if args.action == "collect" and args.rewrite:
        if args.results or args.replace:
            raise DataError("`collect --rewrite` rewrites what is committed: give it no --results or --replace")
        if not args.protocol_names:
            raise DataError("`benchsuite reproductions collect --rewrite` needs the protocol name(s)")
        for name in protocols:
            rep = R.rewrite(root, name)
            print(f"{name}: {rep['runs']} committed run(s) rewritten, {rep['bytes_before'] / 1e6:.2f} -> "
                  f"{rep['bytes_after'] / 1e6:.2f} MB")
        return 0
    if args.action in ("collect", "restore"):
        if not args.results:
            raise DataError(f"`benchsuite reproductions {args.action}` needs --results DIR (the workflow's results)")
        if not args.protocol_names:
            raise DataError(f"`benchsuite reproductions {args.action}` needs the protocol name(s)")
        for name, p in protocols.items():
            if args.action == "collect":
                rep = R.collect(p, args.results, root, replace=args.replace)
                for line in rep["refused"]:
                    print(f"{name}: refused {line}", file=sys.stderr)
                out = root / name / R.RUNS_FILE
                state = (f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)" if rep["written"]
                         else "nothing new; nothing written")
                print(f"{name}: {len(rep['added'])} run(s) added, {len(rep['replaced'])} replaced, {rep['kept']} kept; "
                      f"{rep['runs']} committed of {len(p.jobs())}; {state}")
                if rep["stale"]:
                    b, o, r = rep["stale"][0]
                    print(f"{name}: warning: {len(rep['stale'])} committed run(s) are not runs of the protocol as it "
                          f"now stands (first: {b} {o} rep {r}; its budget, workers, clock or initial design "
                          "changed): rerun them and collect with --replace", file=sys.stderr)
                if p.retrain is not None:
                    got = R.collect_retrained(p, args.results, root, replace=args.replace)
                    for line in got["refused"]:
                        print(f"{name}: refused {line}", file=sys.stderr)
                    print(f"{name}: {len(got['added'])} retrained value(s) added, {len(got['replaced'])} replaced; "
                          f"{got['records']} committed of {len(p.retrain_jobs())}"
                          + (f"; wrote {root / name / R.RETRAINED_FILE}" if got["written"] else ""))
                size = R.folder_mb(root) if rep["written"] else 0.0
                if size > R.SIZE_LIMIT_MB:
                    print(f"{name}: warning: {root} now holds {size:.2f} MB, above its {R.SIZE_LIMIT_MB:g} MB limit "
                          "(docs/workflow.md, Size: the measured ways to make room)", file=sys.stderr)
            else:
                rep = R.restore(p, args.results, root)
                stale = f", {rep['stale']} of an earlier setup of the protocol left to rerun" if rep["stale"] else ""
                unknown = (f", {rep['unknown']} committed run(s) that are no job of the protocol not written"
                           if rep.get("unknown") else "")
                print(f"{name}: {rep['written']} result file(s) written, {rep['skipped']} already there "
                      f"(kept){stale}{unknown}")
                if p.retrain is not None:
                    got = R.restore_retrained(p, args.results, root)
                    print(f"{name}: {got['written']} retrained value(s) written, {got['skipped']} already there")
        return 0
    from .analysis import scorecard as S

    t0 = time.perf_counter()
    figures = S.write_figures(protocols, root) if args.figures else []
    card, files = S.write(protocols, root)
    files += figures
    from .analysis.baselines import update_compact

    files += update_compact(protocols, root)  # what `benchsuite race` reads (and the wheel ships) of the runs
    if args.readme:
        if not S.update_readme(args.readme, card):
            raise DataError(f"{args.readme}: no scorecard markers ({S.README_BEGIN} ... {S.README_END}) to fill in")
        files.append(args.readme)
    print(S.verdict_counts_text(card))
    print(f"wrote {', '.join(files)} ({len(card)} cells, {time.perf_counter() - t0:.1f} s)")
    return 0


def _verify(args: argparse.Namespace, root: Path) -> int:
    from .analysis import reproductions as R
    from .protocol import load_protocols
    from .paths import PROTOCOLS_DIR

    if args.verify < 1:
        raise DataError("--verify N needs N >= 1")
    protocols = load_protocols(args.protocols or PROTOCOLS_DIR)
    names = args.verify_protocols or sorted(protocols)
    for n in names:
        if n not in protocols:
            raise DataError(f"--protocol {n}: no such protocol")
    committed, skipped, blas = {}, [], {}
    for n in names:
        why = R.deterministic(protocols[n])
        df, prov = R.load_committed(root, n)
        if df is None:
            continue
        if why:
            skipped.append(f"{n} ({why})")
            continue
        df, _ = R.without_stale(protocols[n], df, prov)  # its command would not repeat a run of an earlier setup
        if args.verify_optimizers:
            df = df[df["optimizer"].isin(args.verify_optimizers)]
        if len(df):
            committed[n] = df
            # the BLAS kernels each run was made with (recorded since 2026-11-27): its rerun uses the same
            blas.update({(n, *R._key(p)): p.get("blas_architecture") for p in R.run_provenances(prov)})
    for s in skipped:
        print(f"verify: not drawn from {s}", file=sys.stderr)
    picks = R.pick_runs(committed, args.verify, args.seed)
    if not picks:
        raise DataError(f"no committed runs to verify under {root}" + (f" for {', '.join(names)}" if names else ""))
    bad = 0
    with tempfile.TemporaryDirectory(prefix="benchsuite-verify-") as tmp:
        for name, b, o, r in picks:
            t0 = time.perf_counter()
            ok, msg = R.verify_run(protocols[name], committed[name], (b, o, r), tmp, args.timeout,
                                   blas=blas.get((name, b, o, r)))
            bad += not ok
            print(f"{'identical' if ok else 'DIFFERENT'}: {name} {b} {o} rep {r}: {msg} "
                  f"({time.perf_counter() - t0:.1f} s)")
    print(f"verify: {len(picks) - bad} of {len(picks)} reruns identical in every non-timing column")
    return 1 if bad else 0


__all__ = ["add_parser", "main", "BenchsuiteError"]
