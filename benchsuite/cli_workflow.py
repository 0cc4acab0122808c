"""Workflow subcommands of the ``benchsuite`` CLI: ``workflow``, ``validate-protocol`` and ``analyse``.

``benchsuite/cli.py`` wires them in with three calls::

    from .cli_workflow import add_workflow_parsers, run_workflow_command, split_workflow_argv
    add_workflow_parsers(sub)                      # in _parser(), after the other subcommands
    ours, snakemake_args = split_workflow_argv(argv[1:])   # in main(), for `benchsuite workflow ...`
    code = run_workflow_command(args)              # in main(), before print_help(); None if not ours

``benchsuite workflow PROTOCOL.yaml [more files or folders] --results DIR [snakemake options]``
runs the suite's Snakefile (found next to the installed package, never in the current
directory) on protocol files anywhere, with ``DIR`` as Snakemake's working directory: runs
go to ``DIR/results/``, reports to ``DIR/reports/``, Snakemake's records (resume, locks) to
``DIR/.snakemake/``. The protocols asked for, and only those, are validated first; every
mistake is printed as one line before any job starts (exit status 2). A Snakemake lock that
no live process holds (left by a killed run) is cleared with a one-line notice; a lock a
running Snakemake holds refuses the run. A run whose complete result file Snakemake, killed, had
not recorded as finished is kept (:func:`keep_completed_runs`), not redone; a run a killed
workflow left running refuses the start until it has finished (:func:`check_live_runs`).

Errors raise :class:`~benchsuite.errors.BenchsuiteError` subclasses, which ``main`` turns
into one line and exit status 2.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .errors import InvalidSettingError, OutputError
from .locks import _alive, _proc_stat
from .paths import SNAKEFILE

COMMANDS = ("workflow", "validate-protocol", "analyse")
# workflow targets and rule names a protocol may not take (its name becomes a target)
RESERVED = frozenset({"all", "papers", "tables", "run", "aggregate", "report", "index", "reproductions"})
SET_FILE = "default_set.yaml"  # lists `snakemake all`'s protocols; not a protocol itself
# Snakemake options `benchsuite workflow` sets itself (the working directory is --results)
_OWNED = {"-s": "the workflow is the suite's own", "--snakefile": "the workflow is the suite's own",
          "-d": "the working directory is --results", "--directory": "the working directory is --results"}
_OWNED_CONFIG = ("protocols", "protocol_dir", "results")
_RECORDS = "benchsuite"  # DIR/.snakemake/benchsuite/: which process runs Snakemake in DIR


def one_line(message: object) -> str:
    """``message`` with every run of whitespace (newlines of YAML errors too) as one space."""
    return " ".join(str(message).split())


# -- the workflow and its protocols -----------------------------------------------------
def workflow_file() -> Path:
    """The suite's Snakefile, inside the package (in a clone, a link to the repository's)."""
    if SNAKEFILE.is_file():
        return SNAKEFILE
    raise OutputError(f"the workflow is not installed at {SNAKEFILE}; reinstall benchsuite")


def protocol_files_of(items: Iterable[str | os.PathLike]) -> tuple[list[Path], list[str]]:
    """Protocol files named by ``items`` (files, or folders: their ``*.yaml`` but the set file).

    Returns the absolute files (each once, in the order given) and one message per item
    that names nothing."""
    files: list[Path] = []
    errors: list[str] = []
    seen: set[Path] = set()
    for item in items:
        path = Path(os.path.abspath(os.fspath(item)))
        if path.is_dir():
            found = sorted(f for f in path.glob("*.yaml") if f.name != SET_FILE)
            if not found:
                errors.append(f"{item}: folder holds no protocol files (*.yaml)")
        elif path.is_file():
            found = [path]
        else:
            errors.append(f"{item}: no such protocol file or folder")
            found = []
        for f in found:
            if f.resolve() not in seen:
                seen.add(f.resolve())
                files.append(f)
    return files, errors


def collect_protocols(files: Iterable[str | os.PathLike]) -> tuple[dict[str, Any], list[str]]:
    """Validate every protocol file; returns {name: Protocol} and one line per mistake (all of them).

    Besides each file's own mistakes: a reserved name, and two files of the same name."""
    from .errors import BenchsuiteError
    from .protocol import load_protocol

    protocols: dict[str, Any] = {}
    errors: list[str] = []
    for f in files:
        try:
            p = load_protocol(f)
        except BenchsuiteError as exc:
            errors.append(one_line(exc))
            continue
        if p.name in RESERVED:
            errors.append(f"{p.path}: name: {p.name!r} is reserved for a workflow target; rename the file")
        elif p.name in protocols:
            errors.append(f"{p.path}: name: protocol {p.name!r} is also {protocols[p.name].path}; rename one "
                          "(the name names targets and result folders)")
        else:
            protocols[p.name] = p
    return protocols, errors


def add_workflow_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``workflow``, ``validate-protocol`` and ``analyse`` subcommands to the CLI's subparsers."""
    w = sub.add_parser(
        "workflow", help="run the experiment workflow (Snakemake) on protocol files anywhere",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run the suite's Snakemake workflow on protocol files or folders anywhere: every run, then "
                    "each protocol's aggregate and report, and DIR/reports/index.md over them. Rerunning does "
                    "nothing; after an interruption only unfinished runs are redone. Protocols first, then "
                    "options; every option this command does not know goes to Snakemake as it is.",
        epilog="Examples:\n"
               "  benchsuite workflow my_protocols/ --results runs -n          # dry run: what would run\n"
               "  benchsuite workflow exp.yaml --results runs --cores 8\n"
               "  benchsuite workflow exp.yaml --results runs --executor slurm --jobs 100\n"
               "  benchsuite workflow exp.yaml --results runs --report report.html   # runs/report.html\n"
               "Layout: DIR/results/<protocol>/<benchmark>/<optimizer>/repNNN.csv, DIR/reports/<protocol>/, "
               "DIR/.snakemake/ (Snakemake's records and locks). Snakemake works in DIR (its -d): a relative "
               "path it writes, such as --report's, lands in DIR.")
    w.add_argument("protocols", nargs="+", metavar="PROTOCOL",
                   help="protocol YAML files, or folders of them (only these are validated)")
    w.add_argument("--results", required=True, metavar="DIR",
                   help="folder the experiment writes into (results/, reports/, .snakemake/); created if missing")
    w.set_defaults(snakemake_args=[])
    v = sub.add_parser("validate-protocol", help="check protocol files and show the runs they expand to",
                       description="Validate experiment protocols (protocols/*.yaml) as the workflow does before "
                                   "any job runs; print each protocol's runs, budget and seeds.")
    v.add_argument("files", nargs="+", metavar="FILE", help="protocol YAML files")
    v.add_argument("--jobs", action="store_true", help="also list every run with its seed and result file")
    a = sub.add_parser("analyse", aliases=["analyze"], help="aggregate a protocol's result files and write its figures, tables and report",
                       description="What the workflow's aggregate and report steps do, for result files that exist: "
                                   "results/<protocol>/runs.csv.gz and reports/<protocol>/ (PNG, PDF, MD, CSV, TeX).")
    a.add_argument("file", metavar="FILE", help="protocol YAML file")
    a.add_argument("--root", default=".", help="folder holding results/ and reports/ (default: .)")
    a.set_defaults(command="analyse")  # `analyze` (the US spelling) runs the same command


def split_workflow_argv(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split the arguments after ``workflow`` into this command's and Snakemake's.

    Ours: the protocol files before the first other option, ``--results DIR`` anywhere, and
    ``-h``. Everything else goes to Snakemake in order, with the values of its options (and
    everything after ``--``)."""
    ours: list[str] = []
    rest: list[str] = []
    passing = False  # once a Snakemake option appeared, bare words are its values (or targets)
    i = 0
    while i < len(argv):
        t = argv[i]
        if t == "--":
            rest += argv[i + 1:]
            break
        if t in ("-h", "--help") or t.startswith("--results="):
            ours.append(t)
        elif t == "--results":
            ours += argv[i:i + 2]
            i += 1
        elif t.startswith("-") and t != "-":
            passing = True
            rest.append(t)
        else:
            (rest if passing else ours).append(t)
        i += 1
    return ours, rest


def _validate(files: list[str], jobs: bool) -> int:
    from .protocol import load_protocol

    for f in files:
        p = load_protocol(f)
        runs = p.jobs()
        print(f"{f}: protocol {p.name!r} is valid: {len(p.benchmarks)} benchmark(s) x {len(p.optimizers)} "
              f"optimizer(s) x {p.repetitions} repetition(s) = {len(runs)} runs, {p.workers} worker(s), "
              f"reports {p.quantity}")
        for label, why in p.skipped:
            print(f"  skipped optimizer {label}: {why}")
        if p.retrain is not None:
            hours = p.retrain_gpu_hours()
            print(f"  retrain: {len(p.retrain_jobs())} run(s)' final incumbents trained again with "
                  f"{p.retrain.settings}" + ("" if hours is None else f" (about {hours:.1f} GPU-hours)"))
        if jobs:
            for j in runs:
                inst = j.benchmark.instances
                extra = f"  {inst[0]}={j.benchmark.settings_for(j.repetition)[inst[0]]}" if inst else ""
                print(f"  {j.result_path}  seed {j.seed}{extra}")
            for path in p.retrained_paths():
                print(f"  {path}  (retrain)")
    return 0


def _analyse(file: str, root: str) -> int:
    from benchsuite.analysis.load import load_protocol_results, write_aggregate
    from benchsuite.analysis.outputs import aggregate_outputs
    from benchsuite.analysis.report import write_protocol_report

    from .protocol import load_protocol

    p = load_protocol(file)
    base = Path(root)
    df = load_protocol_results(p, root=base)
    runs, prov = (base / x for x in aggregate_outputs(p))
    runs.parent.mkdir(parents=True, exist_ok=True)
    write_aggregate(df, runs, prov)
    written = write_protocol_report(p, runs, prov, base / "reports" / p.name)
    print(f"wrote {len(written)} files to {base / 'reports' / p.name}", file=sys.stderr)
    return 0


# -- locks: Snakemake's .snakemake/locks, and who holds them ------------------------------
def _is_snakemake(argv: Sequence[str]) -> bool:
    names = [os.path.basename(a) for a in argv]
    return any(n == "snakemake" for n in names) or any(
        a == "-m" and b == "snakemake" for a, b in zip(argv, argv[1:]))


def _snakemake_processes_in(root: Path) -> list[int] | None:
    """Snakemake processes (other than this one) whose working directory is ``root``; None without /proc.

    ``snakemake -d DIR`` changes into DIR, so any Snakemake working in DIR shows up here,
    whoever started it."""
    proc = Path("/proc")
    if not (proc / "self" / "cwd").exists():
        return None
    target = os.path.realpath(root)
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if os.path.realpath(entry / "cwd") != target:
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile, or another user's
            continue
        if _is_snakemake([a.decode(errors="replace") for a in argv if a]) and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def _records(root: Path) -> list[tuple[Path, dict]]:
    """The processes ``benchsuite workflow`` recorded as running Snakemake in ``root``."""
    out = []
    for f in sorted((root / ".snakemake" / _RECORDS).glob("*.json")):
        try:
            rec = json.loads(f.read_text())
            int(rec["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        out.append((f, rec))
    return out


def _record_is_live(rec: dict) -> bool:
    if rec.get("host") != socket.gethostname():
        return True  # a process on another machine cannot be checked from here: assume it runs
    return _alive(int(rec["pid"]), rec.get("start"))


def lock_holders(root: str | os.PathLike) -> list[str] | None:
    """Live Snakemake processes working in ``root`` (one description each); None if that cannot be told.

    Two witnesses: the records ``benchsuite workflow`` keeps of the Snakemake it starts, and
    (on Linux) every process whose command is Snakemake and whose working directory is ``root``."""
    root = Path(root)
    records = _records(root)
    holders: dict[int, str] = {}
    for _f, rec in records:
        if _record_is_live(rec):
            where = "" if rec.get("host") == socket.gethostname() else f" on host {rec.get('host')}"
            holders[int(rec["pid"])] = f"pid {rec['pid']}{where}"
    scanned = _snakemake_processes_in(root)
    for pid in scanned or ():
        holders.setdefault(pid, f"pid {pid}")
    if scanned is None and not records:
        return None  # no /proc and no record: nothing to judge by
    return list(holders.values())


def check_lock(root: str | os.PathLike, dry_run: bool = False,
               before_clearing: Any = None) -> None:
    """Clear a stale Snakemake lock in ``root`` (one-line notice); refuse one a live Snakemake holds.

    A dry run is never refused (Snakemake itself only warns then). ``before_clearing``, if
    given, is called just before a stale lock is cleared (a check that may still refuse)."""
    root = Path(root)
    lockdir = root / ".snakemake" / "locks"
    locks = sorted(lockdir.glob("*.lock")) if lockdir.is_dir() else []
    holders = lock_holders(root) if locks else []
    for f, rec in _records(root):  # forget processes that ended without removing their record
        if rec.get("host") == socket.gethostname() and not _record_is_live(rec):
            f.unlink(missing_ok=True)
    if not locks:
        return
    if holders is None:
        raise OutputError(f"{root} has a Snakemake lock ({lockdir}) and this system cannot tell whether a Snakemake "
                          "still runs there; if none does, clear it by adding --unlock once")
    if holders:
        if dry_run:
            return
        raise OutputError(f"{root} is in use by a running Snakemake ({', '.join(holders)}): wait for it to finish, "
                          "stop it, or give another --results folder")
    if before_clearing is not None:
        before_clearing()
    shutil.rmtree(lockdir, ignore_errors=True)
    print(f"benchsuite: cleared a stale Snakemake lock in {lockdir} (left by a killed run; no Snakemake runs there)",
          file=sys.stderr)


def _record(root: Path, pid: int, argv: Sequence[str]) -> Path:
    """Note that ``pid`` runs Snakemake in ``root`` (its start time guards against a reused pid)."""
    d = root / ".snakemake" / _RECORDS
    d.mkdir(parents=True, exist_ok=True)
    stat = _proc_stat(pid)
    f = d / f"{socket.gethostname()}-{pid}.json"
    f.write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "start": stat[1] if stat else None,
                             "argv": list(argv)}))
    return f


# -- completed runs Snakemake still marks incomplete ----------------------------------------
def _incomplete_marks(root: Path) -> list[tuple[Path, str]]:
    """(marker file, output path) of every output Snakemake marks incomplete in ``root``.

    Snakemake's file persistence (its default) keeps one file per output it started and has
    not recorded as finished under ``.snakemake/incomplete/``, named by the urlsafe base64 of
    the output's path, split into folders of NAME_MAX - 1 characters, each folder but the
    last prefixed with ``@`` (snakemake/persistence/file.py, ``_record_path``)."""
    base = root / ".snakemake" / "incomplete"
    marks = []
    for dirpath, _dirs, names in os.walk(base):
        for name in names:
            marker = Path(dirpath) / name
            parts = marker.relative_to(base).parts
            if parts == ("migration_underway",):
                continue
            b64 = "".join(p[1:] if p.startswith("@") else p for p in parts[:-1]) + parts[-1]
            try:
                key = base64.urlsafe_b64decode(b64.encode()).decode()
            except (ValueError, UnicodeDecodeError):
                continue  # not a marker this code understands: Snakemake decides about it
            marks.append((marker, key))
    return marks


def _complete_run(path: Path, protocol: Any, job: Any) -> int | None:
    """The number of trials of ``path`` if it is the complete, valid result of ``job``; None otherwise."""
    from .errors import BenchsuiteError
    from .results import load_result

    try:
        df = load_result(path)
    except (BenchsuiteError, OSError):
        return None
    prov = df.attrs["provenance"]
    try:
        complete = int(prov["n_trials"]) == len(df) and len(df) > 0
    except (KeyError, TypeError, ValueError):
        return None  # no header count: cannot tell a complete file from a cut one
    same_run = (prov.get("protocol") == protocol.name and prov.get("seed") == job.seed
                and str(prov.get("repetition")) == str(job.repetition))
    return len(df) if complete and same_run else None


def keep_completed_runs(root: str | os.PathLike, protocols: dict[str, Any]) -> list[Path]:
    """Clear Snakemake's incomplete mark of every run whose result file is complete; returns those files.

    A run whose process outlived a killed Snakemake (or finished just before Snakemake was
    killed) leaves a complete result file that Snakemake marks incomplete, and the next
    Snakemake (``rerun-incomplete``) would delete and redo it. A file whose run belongs to
    ``protocols`` and that :func:`~benchsuite.results.load_result` reads in full (its provenance's
    ``n_trials`` equals its rows; protocol, seed and repetition those of the run) is kept: its
    mark is removed, as Snakemake's ``--cleanup-metadata`` would (its metadata record, when an
    earlier run left one, is kept so that Snakemake's parameter trigger still applies), with
    one line on stderr. Anything else, a partial or invalid file too, is left to Snakemake."""
    root = Path(root)
    runs = {os.path.normpath(root / job.result_path): (p, job) for p in protocols.values() for job in p.jobs()}
    kept = []
    base = root / ".snakemake" / "incomplete"
    for marker, key in _incomplete_marks(root):
        path = os.path.normpath(key if os.path.isabs(key) else root / key)
        if path not in runs or not os.path.isfile(path):
            continue
        n = _complete_run(Path(path), *runs[path])
        if n is None:
            continue
        try:
            marker.unlink()
        except FileNotFoundError:
            pass
        parent = marker.parent
        while parent != base and not any(parent.iterdir()):  # Snakemake removes emptied folders too
            parent.rmdir()
            parent = parent.parent
        kept.append(Path(path))
        print(f"benchsuite: kept {os.path.relpath(path, root)} ({n} trials, complete; Snakemake was stopped "
              "before it recorded the run as finished)", file=sys.stderr)
    return kept


def check_live_runs(root: str | os.PathLike, protocols: dict[str, Any]) -> None:
    """Refuse to start while a run of ``protocols`` is still writing its result file (a killed workflow's run).

    Snakemake would start the same run again, and that second ``benchsuite run`` would be
    refused by the first one's ``<out>.lock``; waiting lets the first finish and its file be kept.
    Locks whose run is gone (killed, perhaps just after it wrote its file) are removed."""
    from .locks import OutputLock

    root = Path(root)
    for p in protocols.values():
        for job in p.jobs():
            lock = OutputLock(root / job.result_path)
            try:
                lock.remove_if_stale()
            except OutputError:
                who = lock.holder() or "a run starting now"
                raise OutputError(f"{root / job.result_path} is still being written by a run a stopped workflow "
                                  f"left running ({who}): wait for it to finish (its file will be kept) "
                                  "or stop it") from None


# -- benchsuite workflow ----------------------------------------------------------------
_DRY_RUN = re.compile(r"^(--dry-?run|-[A-Za-z]*n[A-Za-z]*)$")


def _option_given(args: Sequence[str], *names: str) -> bool:
    return any(a in names or any(a.startswith(n + "=") for n in names if n.startswith("--")) for a in args)


def _take_config(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the user's ``--config KEY=VALUE`` items, the other arguments): Snakemake keeps only the last --config."""
    items: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--config", "-C"):
            i += 1
            while i < len(args) and not args[i].startswith("-"):
                items.append(args[i])
                i += 1
            continue
        if a.startswith("--config="):
            items.append(a.split("=", 1)[1])
        else:
            rest.append(a)
        i += 1
    return items, rest


def _workflow(protocols: Sequence[str], results: str, snakemake_args: Sequence[str]) -> int:
    snakefile = workflow_file()
    args = list(snakemake_args)
    for opt, why in _OWNED.items():
        if _option_given(args, opt):
            raise InvalidSettingError(f"benchsuite workflow sets {opt} itself ({why}); leave it out")
    config, args = _take_config(args)
    args = _with_profiles(args, snakefile.parent / "profiles")  # a mistake here is one line, before anything
    for item in config:
        if item.split("=", 1)[0] in _OWNED_CONFIG:
            raise InvalidSettingError(f"--config {item}: give protocols as arguments and the folder as --results, "
                                "not as Snakemake config")
    files, errors = protocol_files_of(protocols)
    found, invalid = collect_protocols(files)
    errors += invalid
    if errors:  # every mistake, one line each, before anything starts
        for e in errors:
            print(f"benchsuite: error: {e}", file=sys.stderr)
        return 2

    # (optimizers a protocol skips, for a missing optional dependency, the Snakefile names when it parses)
    root = Path(os.path.abspath(results))
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"--results {results}: cannot create the folder ({exc.strerror})") from None
    if not os.access(root, os.W_OK | os.X_OK):
        raise OutputError(f"--results {results}: the folder is not writable")
    dry_run = any(_DRY_RUN.match(a) for a in args)
    # runs left by a killed Snakemake: only once no Snakemake works in root (check_lock refuses
    # that), and before anything is changed there, so that a refusal is the only line printed
    repair = not dry_run and not _option_given(args, "--nolock", "--unlock", "--cleanup-metadata")
    checked: list[bool] = []

    def live_runs() -> None:
        check_live_runs(root, found)
        checked.append(True)

    # one benchsuite workflow per folder (issue 26 item 5): our own O_EXCL lock, taken before any check and held
    # until Snakemake exits, so that a second one started seconds later is refused whatever Snakemake has done yet
    folder_lock = None if dry_run or _option_given(args, "--nolock") else workflow_lock(root)
    try:
        if _option_given(args, "--unlock"):
            refuse_unlock_while_running(root)
        if not _option_given(args, "--nolock", "--unlock"):
            check_lock(root, dry_run=dry_run, before_clearing=live_runs if repair else None)
        if repair:
            if not checked:
                live_runs()
            keep_completed_runs(root, found)
        return _run_snakemake(snakefile, root, args, files, config)
    finally:
        if folder_lock is not None:
            folder_lock.release()


def workflow_lock(root: Path) -> Any:
    """Take ``root/.snakemake/benchsuite-workflow.lock`` (O_EXCL, pid and start time inside; a stale one is taken
    over); OutputError naming the holder when another live ``benchsuite workflow`` works in ``root``."""
    from .locks import OutputLock

    marker = root / ".snakemake" / "benchsuite-workflow"
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"--results {root}: cannot create {marker.parent} ({exc.strerror})") from None
    lock = OutputLock(marker)
    try:
        lock.acquire()
    except OutputError:
        who = lock.holder() or "a workflow starting now"
        raise OutputError(f"{root} is in use by another benchsuite workflow ({who}): wait for it to finish, stop it, "
                          "or give another --results folder") from None
    return lock


def refuse_unlock_while_running(root: Path) -> None:
    """``--unlock`` removes Snakemake's lock: refused while a live Snakemake works in ``root`` (it would let a
    second one in beside it)."""
    holders = lock_holders(root)
    if holders:
        raise OutputError(f"--unlock refused: a Snakemake is still running in {root} ({', '.join(holders)}); "
                          "its lock is not stale. Wait for it to finish or stop it first")


# where Snakemake looks for a profile given by name, after the current directory ($XDG_CONFIG_HOME/snakemake
# first; see snakemake.cli.get_profile_dir)
def _user_profile_dirs() -> list[Path]:
    home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    dirs = [Path(home) / "snakemake"]
    dirs += [Path(d) / "snakemake" for d in os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":") if d]
    return dirs


def resolve_profile(value: str, shipped: Path) -> str:
    """The ``--profile`` value Snakemake gets: an existing path made absolute (Snakemake resolves a profile's
    relative file names, such as the SLURM profile's partitions.yaml, against the path as given, and works in
    ``--results``, not here); a name Snakemake finds in the user's configuration folders unchanged; else the
    suite's own profile of that name (``slurm``), so that it works from a pip install. A name found nowhere
    is an :class:`InvalidSettingError` listing the shipped ones."""
    if os.path.exists(value):
        return os.path.abspath(value)
    if os.sep not in value and any((d / value).exists() for d in _user_profile_dirs()):
        return value
    if os.sep not in value and (shipped / value).is_dir() and value != "default":
        return str(shipped / value)
    names = sorted(p.name for p in shipped.iterdir() if p.is_dir() and p.name != "default") if shipped.is_dir() \
        else []
    raise InvalidSettingError(f"--profile {value}: no such profile folder or file here, in "
                              f"{', '.join(str(d) for d in _user_profile_dirs())}, or among the suite's own "
                              f"({', '.join(names) or 'none'})")


def _with_profiles(args: list[str], shipped: Path) -> list[str]:
    """``args`` with each ``--profile`` value resolved by :func:`resolve_profile`."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--profile" and i + 1 < len(args):
            out += [a, resolve_profile(args[i + 1], shipped)]
            i += 2
            continue
        if a.startswith("--profile="):
            a = "--profile=" + resolve_profile(a.split("=", 1)[1], shipped)
        out.append(a)
        i += 1
    return out


def _run_snakemake(snakefile: Path, root: Path, args: list[str], files: Sequence[Path], config: list[str]) -> int:
    """Start Snakemake in ``root`` and wait for it, forwarding SIGTERM; its record lives while it runs."""
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(snakefile), "--directory", str(root)]
    profiles = snakefile.parent / "profiles"
    if (profiles / "default").is_dir() and not _option_given(args, "--workflow-profile"):
        cmd += ["--workflow-profile", str(profiles / "default")]  # explicit: not looked up in the current directory
    cmd += args
    # JSON-quoted: Snakemake reads each value as YAML, so a path stays a string
    cmd += ["--config", f"protocols={json.dumps([str(f) for f in files])}", f"results={json.dumps(str(root))}",
            *config]
    # a cluster job runs `python -m snakemake` by name from PATH (SLURM's job script, with the submitting
    # environment): this interpreter's folder first, so a job finds benchsuite's environment without an
    # activated virtualenv
    env = dict(os.environ)
    bindir = os.path.dirname(sys.executable)
    if env.get("PATH", "").split(os.pathsep)[:1] != [bindir]:
        env["PATH"] = os.pathsep.join([bindir, *[p for p in env.get("PATH", "").split(os.pathsep) if p]])
    proc = subprocess.Popen(cmd, env=env)
    record = _record(root, proc.pid, cmd)

    def forward(signum: int, _frame: Any) -> None:  # a scheduler's SIGTERM reaches Snakemake too
        proc.send_signal(signum)

    try:
        previous: Any = signal.signal(signal.SIGTERM, forward)
        installed = True
    except ValueError:  # not the main thread (called from a library): no handler to install
        installed = False
    try:
        while True:
            try:
                return proc.wait()
            except KeyboardInterrupt:  # Snakemake got the same Ctrl-C: let it stop its jobs and exit
                continue
    finally:
        if installed:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        record.unlink(missing_ok=True)


def run_workflow_command(args: argparse.Namespace) -> int | None:
    """Run ``args.command`` if it is one of :data:`COMMANDS`; ``None`` otherwise."""
    if args.command == "workflow":
        return _workflow(args.protocols, args.results, args.snakemake_args)
    if args.command == "validate-protocol":
        return _validate(args.files, args.jobs)
    if args.command == "analyse":
        return _analyse(args.file, args.root)
    return None
