# benchsuite workflow: protocols -> runs -> aggregates -> figures, tables and reports.
#
#   snakemake all --cores all             # the default protocol set (protocols/default_set.yaml)
#   snakemake smoke --cores 2             # tiny end-to-end check (CI)
#   snakemake <protocol> --cores all      # one protocol, e.g. a paper experiment (and its `retrain:` step)
#   snakemake papers --cores all          # every protocol outside the default set
#   snakemake tables --cores 1            # rebuild the lookup tables (if their recipes exist)
#   snakemake reproductions --cores 1     # reproductions/scorecard.csv + SCORECARD.md from the committed runs
#   snakemake studies --cores 1           # every study and timing behind docs/results/ (studies/studies.smk)
#   snakemake all --executor slurm --jobs 100 --default-resources slurm_account=ACC slurm_partition=PART
#   benchsuite workflow my/exp.yaml more/ --results DIR [snakemake options]   # protocols anywhere
#
# Every protocol file is validated when the workflow is parsed, before any job runs: a
# mistake stops the workflow with the file, the key and what is wrong.
# Options (--config KEY=VALUE; `benchsuite workflow` sets them):
#   protocols     protocol files or folders (a YAML list): only these are read and validated,
#                 and `all` is all of them; default: every file of protocol_dir, and `all`
#                 is the set listed in its default_set.yaml
#   protocol_dir  default: the suite's own protocols (benchsuite.paths.PROTOCOLS_DIR: protocols/
#                 in a clone, benchsuite/protocols/ in an installed wheel)
#   results       the folder that gets results/ and reports/ (absolute paths in every rule);
#                 default: Snakemake's working directory (-d, else where it was started)
#   backend       where each run evaluates: simulated | local | dask (default: each protocol's
#                 `backend:`, else simulated). `--config backend=local` runs a live protocol's
#                 workers as real processes, one GPU each when there are GPUs (README, "Backends");
#                 a run job then takes as many cores as the protocol has workers
#   scheduler     with backend=dask: a running dask scheduler's address (default: a LocalCluster per run)
# Tables are read and built where benchsuite keeps them (benchsuite.paths.TABLES_DIR), never
# relative to the working directory. Relative paths in --config are relative to the working directory.

import glob
import os
import sys

from snakemake.exceptions import WorkflowError

from benchsuite.cli_workflow import collect_protocols, protocol_files_of
from benchsuite.errors import BenchsuiteError
from benchsuite.paths import PROTOCOLS_DIR, TABLES_DIR
from benchsuite.protocol import load_set, protocol_files
from benchsuite.registry import required_tables
from benchsuite.analysis.outputs import aggregate_outputs, report_outputs


def _rel(path):
    """A path relative to the working directory when it lies below it (shorter messages, and
    the spelling a target typed in a clone has); the file it names does not depend on it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _as_list(value):
    return [value] if isinstance(value, str) else [str(v) for v in value]


PROTOCOL_DIR = _rel(str(config.get("protocol_dir", PROTOCOLS_DIR)))
PY = sys.executable  # the interpreter running Snakemake has benchsuite installed
# where results/ and reports/ go: absolute when configured, else Snakemake's working directory
ROOT = os.path.abspath(str(config["results"])) if config.get("results") is not None else None


def _at(path):
    """``path`` (results/..., reports/...) under the configured results folder."""
    return path if ROOT is None else os.path.join(ROOT, path)


def _out_pattern(path):
    """``_at(path)`` for an output with wildcards: braces of the folder's name are literal."""
    return path if ROOT is None else os.path.join(ROOT.replace("{", "{{").replace("}", "}}"), path)


RESULTS_DIR, REPORTS_DIR = _at("results"), _at("reports")

from benchsuite.backends import BACKENDS

BACKEND = None if config.get("backend") is None else str(config["backend"])
SCHEDULER = None if config.get("scheduler") is None else str(config["scheduler"])
if BACKEND is not None and BACKEND not in BACKENDS:
    raise WorkflowError(f"--config backend={BACKEND}: must be one of {', '.join(BACKENDS)}")
if SCHEDULER is not None and BACKEND != "dask":
    raise WorkflowError("--config scheduler=... is for backend=dask; add --config backend=dask")

_asked = config.get("protocols")
if _asked is not None:  # protocols anywhere: only these are validated; `all` runs them all
    _files, _errors = protocol_files_of(_as_list(_asked))
    PROTOCOLS, _invalid = collect_protocols(_files)
    _errors += _invalid
    DEFAULT = list(PROTOCOLS)
else:  # every file of the protocol folder is checked, every mistake reported at once
    PROTOCOLS, _errors = collect_protocols(protocol_files(PROTOCOL_DIR))
    if not _errors:
        try:
            DEFAULT = load_set(PROTOCOL_DIR, PROTOCOLS)
        except BenchsuiteError as exc:
            _errors.append(str(exc))
if _errors:
    raise WorkflowError("invalid protocol(s); no job was started:\n" + "\n".join(_errors))
for _name, _p in PROTOCOLS.items():
    for _label, _why in _p.skipped:
        print(f"benchsuite: protocol {_name}: skipping optimizer {_label}: {_why}", file=sys.stderr)
PAPERS = [n for n in PROTOCOLS if n not in DEFAULT and n != "smoke"]
JOBS = {job.key: (p, job) for p in PROTOCOLS.values() for job in p.jobs()}


def _report_outputs(p):
    return report_outputs(p, REPORTS_DIR)


def _job(wc):
    key = (wc.protocol, wc.benchmark, wc.optimizer, int(wc.rep))
    if key not in JOBS:
        raise WorkflowError(f"no run {key} in the protocols {', '.join(PROTOCOLS)}")
    return JOBS[key]


def _resource(name):
    return lambda wc: _job(wc)[0].job_resources(_job(wc)[1].benchmark)[name]


def _backend(wc):
    """The run's backend: --config backend=..., else its protocol's."""
    return BACKEND or _job(wc)[0].backend


def _backend_args(wc):
    """run-job's backend options, quoted for the shell (none for the simulated default)."""
    import shlex

    args = [] if _backend(wc) == "simulated" else ["--backend", _backend(wc)]
    return shlex.join(args + (["--scheduler", SCHEDULER] if SCHEDULER else []))


def _threads(wc):
    """Cores a run job takes: one, or one per worker process with the local backend."""
    return _job(wc)[0].workers if _backend(wc) == "local" else 1


def _gpus(wc):
    """GPUs a run job takes: its protocol's (or 1 where the benchmark requires one); with the local backend a
    run that uses GPUs takes one per worker (each worker process gets its own)."""
    gpu = _resource("gpu")(wc)
    return max(gpu, _job(wc)[0].workers) if gpu and _backend(wc) == "local" else gpu


wildcard_constraints:
    protocol=r"[A-Za-z][A-Za-z0-9_]*",
    benchmark=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    optimizer=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    rep=r"\d{3}",


localrules: all, papers, tables, aggregate, index, reproductions


rule all:
    """The default protocol set and the report page over it. The protocols' pages are asked for too: after a
    failed run the onerror hook below writes reports/index.md with the protocol marked incomplete, and with
    that file alone as the target a rerun would find "nothing to be done" and never redo the failed run."""
    input:
        _at("reports/index.md"),
        [_at(r) for n in DEFAULT for r in PROTOCOLS[n].retrained_paths()],
        [_report_outputs(PROTOCOLS[n])[-1] for n in DEFAULT],


rule papers:
    """Every protocol outside the default set (the paper experiments)."""
    input:
        [_report_outputs(PROTOCOLS[n])[-1] for n in PAPERS],
        [_at(r) for n in PAPERS for r in PROTOCOLS[n].retrained_paths()],


# one target per protocol, named after it: `snakemake smoke`, `snakemake synthetic`, ...
for _name in PROTOCOLS:

    rule:
        name:
            _name
        localrule: True
        input:
            _report_outputs(PROTOCOLS[_name])[-1],
            [_at(r) for r in PROTOCOLS[_name].retrained_paths()],


rule run:
    """One run: (protocol, benchmark, optimizer, repetition) -> one result file, written atomically."""
    input:
        # a run on a tabulated benchmark waits for its table when the table is missing
        lambda wc: _missing_tables(_job(wc)[1].benchmark.name),
    output:
        # the CSV only: its provenance file (repNNN.provenance.json) is written just before the CSV is renamed
        # into place, so the CSV's presence is the run's completion; a rerun replaces a provenance file left alone
        _out_pattern("results/{protocol}/{benchmark}/{optimizer}/rep{rep}.csv"),
    log:
        _out_pattern("results/{protocol}/{benchmark}/{optimizer}/rep{rep}.log"),
    params:
        # the job by name: settings, budget and seed come from the protocol object in the job's process
        protocol=lambda wc: _job(wc)[0].path,
        backend=_backend_args,
    threads: _threads
    resources:
        mem_mb=_resource("mem_mb"),
        runtime=_resource("runtime"),
        gpu=_gpus,
    shell:
        "{PY:q} -m benchsuite.cli run-job {params.protocol:q} {wildcards.benchmark:q} {wildcards.optimizer:q} "
        "{wildcards.rep} {params.backend} --out {output:q} 2> {log:q}"


rule retrain:
    """A protocol's `retrain:` step for one finished run: its final incumbent trained again under the longer
    schedule, the record written atomically (a job of its own: the search is never repeated for it)."""
    input:
        _out_pattern("results/{protocol}/{benchmark}/{optimizer}/rep{rep}.csv"),
    output:
        _out_pattern("results/{protocol}/{benchmark}/{optimizer}/rep{rep}.retrained.json"),
    log:
        _out_pattern("results/{protocol}/{benchmark}/{optimizer}/rep{rep}.retrain.log"),
    params:
        protocol=lambda wc: _job(wc)[0].path,
    resources:
        mem_mb=_resource("mem_mb"),
        runtime=_resource("runtime"),
        gpu=_resource("gpu"),
    shell:
        "{PY:q} -m benchsuite.cli retrain-job {params.protocol:q} {wildcards.benchmark:q} {wildcards.optimizer:q} "
        "{wildcards.rep} --run {input:q} --out {output:q} 2> {log:q}"


rule aggregate:
    """All result files of a protocol in one tidy table, with every run's provenance."""
    input:
        protocol=lambda wc: PROTOCOLS[wc.protocol].path,
        runs=lambda wc: [_at(r) for r in PROTOCOLS[wc.protocol].result_paths()],
    output:
        runs=_out_pattern("results/{protocol}/runs.csv.gz"),
        provenance=_out_pattern("results/{protocol}/provenance.json"),
    shell:
        "{PY:q} -m benchsuite.analysis aggregate {input.protocol:q} --results {RESULTS_DIR:q}"


for _name, _p in PROTOCOLS.items():

    rule:
        name:
            f"report_{_name}"
        localrule: True
        input:
            aggregate_outputs(_p, RESULTS_DIR),
            protocol=_p.path,
        output:
            _report_outputs(_p),
        shell:
            "{PY:q} -m benchsuite.analysis report {input.protocol:q} --results {RESULTS_DIR:q} --reports {REPORTS_DIR:q}"


rule index:
    """The top-level report over the default protocol set."""
    input:
        pages=[_report_outputs(PROTOCOLS[n])[-1] for n in DEFAULT],
        protocols=[PROTOCOLS[n].path for n in DEFAULT],
    output:
        _at("reports/index.md"),
    shell:
        "{PY:q} -m benchsuite.analysis index {input.protocols:q} --reports {REPORTS_DIR:q} --results {RESULTS_DIR:q} "
        "--out {output:q}"


onerror:
    # With keep-going (the default profile) every job that can run has run: say which runs failed and why
    # (the last line of each one's log), how to rerun just them, and, when the target was `all`, write
    # reports/index.md with the protocols that have missing runs marked instead of no index at all.
    from benchsuite.analysis.failures import summary as _failure_summary

    _targets = {str(t) for t in workflow.dag.targetjobs}
    _wanted = [p for n, p in PROTOCOLS.items() if n in _targets or f"report_{n}" in _targets]
    if "all" in _targets or "index" in _targets or not _wanted:
        _wanted = [PROTOCOLS[n] for n in DEFAULT]
    if "papers" in _targets:
        _wanted += [PROTOCOLS[n] for n in PAPERS]
    _root = os.path.dirname(os.path.abspath(RESULTS_DIR))
    # the options that chose where the jobs ran (a cluster profile, an executor): the rerun goes there too
    _where = []
    for _i, _a in enumerate(sys.argv):
        if _a in ("--profile", "--executor", "-e") and _i + 1 < len(sys.argv):
            _where += [_a, sys.argv[_i + 1]]
        elif _a.startswith(("--profile=", "--executor=")):
            _where.append(_a)
    if _asked is None:
        _rerun = [os.path.join(os.path.dirname(PY), "snakemake"), "--cores", "all", *_where]
    else:  # then Snakemake's targets, after --
        _rerun = ["benchsuite", "workflow", *_as_list(_asked), "--results", _root, *_where, "--"]
    # a clone's paths relative to it; `benchsuite workflow` runs Snakemake in the results folder, not where
    # the user is, so its paths are absolute
    _text = _failure_summary(_wanted, _root, _rerun, relative=_asked is None)
    if _text:
        print(_text, file=sys.stderr)
    if "all" in _targets:
        from benchsuite.analysis.report import write_index as _write_index

        try:
            os.makedirs(REPORTS_DIR, exist_ok=True)
            _write_index([PROTOCOLS[n] for n in DEFAULT], REPORTS_DIR, _at("reports/index.md"), results_root=_root)
            _index = _at("reports/index.md")
            # dated before its protocol files (inputs of `index`): a plain rerun must see it as out of date and
            # redo the missing runs; as new, with no change since, Snakemake would find nothing to do
            _before = min((os.path.getmtime(PROTOCOLS[n].path) for n in DEFAULT), default=None)
            if _before is not None:
                os.utime(_index, (_before - 1, _before - 1))
            print(f"benchsuite: wrote {_rel(_index) if _asked is None else os.path.abspath(_index)} with the "
                  "incomplete protocols marked",
                  file=sys.stderr)
        except Exception as exc:  # the summary above is what matters; the index is a convenience
            print(f"benchsuite: could not write the index: {exc}", file=sys.stderr)


# The scorecard: every published cell beside ours, from the committed runs alone (reproductions/, issue 25).
# A protocol's runs are committed with `benchsuite reproductions collect PROTOCOL --results results`.
from benchsuite.analysis.reproductions import RUNS_FILE as _RUNS_FILE, default_root as _reproductions_root

REPRODUCTIONS = str(_reproductions_root())


rule reproductions:
    """reproductions/scorecard.csv and SCORECARD.md from the committed runs and the protocols' published: blocks."""
    input:
        [p.path for p in PROTOCOLS.values() if p.published is not None and (p.published.cells or p.published.claims)],
        sorted(glob.glob(os.path.join(REPRODUCTIONS, "*", _RUNS_FILE))),
        sorted(glob.glob(os.path.join(REPRODUCTIONS, "notes.yaml"))),
    output:
        os.path.join(REPRODUCTIONS, "scorecard.csv"),
        os.path.join(REPRODUCTIONS, "SCORECARD.md"),
    shell:
        "{PY:q} -m benchsuite.cli reproductions --dir {REPRODUCTIONS:q} --protocols {PROTOCOL_DIR:q}"


# Lookup tables the project computes itself: each recipe (tables/*.smk) lives next to its table.
_rules_before = {r.name for r in workflow.rules}
# (a clone has them; a wheel ships the tables but not their recipes)
for _smk in sorted(glob.glob(os.path.join(TABLES_DIR, "*.smk"))):

    include: _smk


def _missing_tables(benchmark):
    """Tables a benchmark declares (TableSpec) that are missing: the run waits for their build.

    An existing table is used as it is (whatever Snakemake's records say about its recipe).
    """
    return [_rel(str(p)) for p in required_tables(benchmark) if not p.exists()]


_TABLE_TARGETS = [
    f
    for r in workflow.rules
    if r.name not in _rules_before and not r.has_wildcards()
    for f in r.output
]

if "tables" not in {r.name for r in workflow.rules}:

    rule tables:
        """Rebuild the lookup tables (the outputs of the rules in tables/*.smk)."""
        input:
            _TABLE_TARGETS,


# Studies and timings behind docs/results/ (`snakemake studies`): a clone has them, a wheel does not.
from benchsuite.paths import checkout_root as _checkout

if _checkout() is not None and (_checkout() / "studies" / "studies.smk").is_file():

    include: str(_checkout() / "studies" / "studies.smk")
