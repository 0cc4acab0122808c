"""Experiment protocols: a small, validated YAML schema the workflow expands into runs.

A protocol file ``protocols/<name>.yaml`` says which optimizers run on which benchmarks,
how often, with what budget, and what the report shows::

    name: synthetic                  # optional; must equal the file name without .yaml
    description: Random search on the HPOlib synthetic functions
    paper: dngo.txt Table 1          # optional: the experiment this reproduces
    benchmarks:                      # or `benchmark:` with a single entry
      - branin                       # a name, or a mapping:
      - {name: branin_mf, label: branin_mf_cheap, settings: {cost_s: 10.0},
         budget: {evaluations: 30}, optimum: 0.397887}
      - {name: ising, settings: {lambda: 0.01},
         instances: {setting: problem_seed, count: 5}}   # repetition r uses problem_seed = r % 5
    optimizers:
      - random_search                # a name, or {name, settings, label}
      - {name: random_search, label: rs_x2, settings: {}}
      - {name: combo, initial_design: benchmark}  # start from the benchmark's initial design
    repetitions: 10
    budget: {evaluations: 50, seconds: 3600}    # at least one of the two
    workers: 1                       # asynchronous workers (default 1)
    backend: simulated               # where evaluations run: simulated (default) | local | dask
    clock: auto                      # simulated clock: auto (default: nominal for live benchmarks with a
                                     # cost model, else measured) | measured | nominal (Benchmark.nominal_cost)
    trial_timeout: 600               # seconds a trial may run on the local and dask backends before it is a
                                     # failed trial and its worker is replaced (default: no limit)
    include_overhead: true           # optimizer overhead on the clock (default true)
    overhead_clock: wall             # how that overhead is timed: wall (default) | cpu (CPU seconds: a shared,
                                     # loaded machine does not stretch them; runner.OVERHEAD_CLOCKS)
    quantity: incumbent_test_loss    # incumbent_loss | incumbent_test_loss | regret
    plots: {x: [time, evaluations], time_scale: log, evaluations_scale: linear, y_scale: linear}
    table: {at: budget}              # budget (default) | evaluations | time: where the table is taken
    resources: {mem_mb: 1000, runtime: 30, gpu: 0}   # per run job (SLURM); optional
    retrain:                         # live benchmarks: after each run, its final incumbent trained again
      settings: {iterations: 150000} # benchmark settings of the retraining, over the run's (a longer schedule)
      benchmarks: [nasbot_cnn_cifar10]  # optional: the benchmark labels whose runs are retrained (default: all)
      optimizers: [nasbot]           # optional: the optimizer labels whose runs are retrained (default: all)
      gpu_s: 2224                    # optional: GPU seconds of one retraining, and their basis
      basis: "150 x 14.83 s per 1,000 iterations on one H200"
    published: {paper: ..., source: ..., cells: [...]}  # the paper's numbers (benchsuite/published.py)

Every key is checked before any job starts; a mistake raises :class:`ProtocolError`
naming the file, the key (``optimizers[1].settings``) and what is wrong, with a
did-you-mean for misspelt keys and names. Optimizer and benchmark names are looked up in
:mod:`benchsuite.registry` and their settings resolved with their declared specs.

A registered optimizer whose module failed to import (a missing optional dependency) is
not an error: it is dropped from the protocol with the reason kept in
:attr:`Protocol.skipped`, so ``snakemake all`` still runs everything that is available.

Seeds: run ``(benchmark label, optimizer label, repetition)`` of protocol ``name`` gets
``derive_seed(name, benchmark label, optimizer label, repetition)``, so adding an
optimizer, a benchmark or a repetition never changes the seeds of the other runs.
"""
from __future__ import annotations

import difflib
import json
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import BenchsuiteError, ProtocolError, UnknownNameError
from .paths import PROTOCOLS_DIR
from .seeding import derive_seed
from .settings import load_yaml

QUANTITIES = ("incumbent_loss", "incumbent_test_loss", "regret")
QUANTITY_LABELS = {
    "incumbent_loss": "incumbent's validation loss",
    "incumbent_test_loss": "incumbent's test loss",
    "regret": "regret of the incumbent (test loss - optimum)",
}
AXES = ("time", "evaluations")
SCALES = ("log", "linear")
TABLE_AT = ("budget", "evaluations", "time")  # budget: each benchmark's evaluation budget, else its time budget
SET_FILE = "default_set.yaml"  # lists the protocols `snakemake all` runs; not a protocol itself
# matched whole (fullmatch): "$" would also match before a final newline, and a label names folders
_LABEL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

_TOP_KEYS = ("name", "description", "paper", "benchmark", "benchmarks", "optimizers", "repetitions", "budget",
             "workers", "backend", "clock", "include_overhead", "overhead_clock", "quantity", "plots", "table",
             "resources", "retrain", "published", "trial_timeout")
_BENCH_KEYS = ("name", "label", "settings", "budget", "optimum", "instances")
_INSTANCE_KEYS = ("setting", "count")
_OPT_KEYS = ("name", "label", "settings", "initial_design")
_BUDGET_KEYS = ("evaluations", "seconds")
_PLOT_KEYS = ("x", "time_scale", "evaluations_scale", "y_scale")
_TABLE_KEYS = ("at",)
_RESOURCE_KEYS = ("mem_mb", "runtime", "gpu")
_RETRAIN_KEYS = ("settings", "benchmarks", "optimizers", "gpu_s", "basis")
RETRAINED_SUFFIX = ".retrained.json"  # beside a run's result file: its final incumbent retrained
# beyond a hundred thousand a typo, not an experiment: every repetition is a job, every worker a slot
MAX_REPETITIONS = 100_000
MAX_WORKERS = 100_000


@dataclass(frozen=True)
class Budget:
    """A run's budget: evaluations and/or simulated seconds (at least one)."""

    evaluations: int | None = None
    seconds: float | None = None

    def cli_args(self) -> list[str]:
        """The ``benchsuite run`` arguments for this budget."""
        out: list[str] = []
        if self.evaluations is not None:
            out += ["--budget-evals", str(self.evaluations)]
        if self.seconds is not None:
            out += ["--budget-seconds", repr(float(self.seconds))]
        return out


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark of a protocol: registered name, unique label, settings, budget."""

    name: str
    label: str
    settings: dict[str, Any]
    budget: Budget
    optimum: float | None = None  # overrides the benchmark's own known optimum for regret
    gpu: str = "no"  # the benchmark's declared GPU need: no / optional / required
    # (setting, count): repetition r runs the problem instance setting = r % count, as
    # COMBO's experiments pair repetitions with instances (combo.txt Sec. 4: 5 x 5)
    instances: tuple[str, int] | None = None

    def settings_for(self, repetition: int) -> dict[str, Any]:
        """The benchmark settings of one repetition (its problem instance filled in)."""
        if self.instances is None:
            return dict(self.settings)
        setting, count = self.instances
        return {**self.settings, setting: int(repetition) % count}


@dataclass(frozen=True)
class OptimizerSpec:
    """One optimizer of a protocol: registered name, unique label, its settings, where its first points come from."""

    name: str
    label: str
    settings: dict[str, Any]
    initial_design: str = "optimizer"  # or "benchmark" (Benchmark.initial_design; benchsuite.runner.run)


@dataclass(frozen=True)
class PlotSpec:
    """Which x axes to draw and on which scales."""

    x: tuple[str, ...] = AXES
    time_scale: str = "log"
    evaluations_scale: str = "linear"
    y_scale: str = "linear"

    def scale(self, axis: str) -> str:
        """The scale of x axis ``axis`` ("time" or "evaluations")."""
        return self.time_scale if axis == "time" else self.evaluations_scale


@dataclass(frozen=True)
class Resources:
    """Per-job resources for cluster executors (Snakemake's ``resources:``)."""

    mem_mb: int = 2000
    runtime: int = 60  # minutes
    gpu: int = 0


@dataclass(frozen=True)
class RetrainSpec:
    """``retrain:``: the "best model retrained" step of NASBOT's Table 3 (nasbot.txt Sec. 5: the best CIFAR-10
    models "retrained (150K iters)"). After a run's search, its final incumbent is trained once more with the
    benchmark's settings plus ``settings`` (a longer schedule), from the benchmark's test-loss seed, and that
    training's test loss is the run's retrained value (:mod:`benchsuite.retrain`)."""

    settings: dict[str, Any]
    benchmarks: tuple[str, ...]  # the benchmark labels whose runs are retrained
    optimizers: tuple[str, ...]  # the optimizer labels whose runs are retrained
    gpu_s: float | None = None  # GPU seconds of one retraining, for the estimate (None: not estimated)
    basis: str = ""  # where gpu_s comes from


@dataclass(frozen=True)
class Job:
    """One run of a protocol: (benchmark, optimizer, repetition) with its seed and result path."""

    protocol: str
    benchmark: BenchmarkSpec
    optimizer: OptimizerSpec
    repetition: int
    seed: int

    @property
    def key(self) -> tuple[str, str, str, int]:
        """(protocol, benchmark label, optimizer label, repetition)."""
        return (self.protocol, self.benchmark.label, self.optimizer.label, self.repetition)

    @property
    def result_path(self) -> str:
        """The result file, relative to the workflow directory."""
        return result_path(self.protocol, self.benchmark.label, self.optimizer.label, self.repetition)


@dataclass(frozen=True)
class Protocol:
    """A validated protocol (see the module docstring for the YAML schema)."""

    name: str
    path: str
    benchmarks: tuple[BenchmarkSpec, ...]
    optimizers: tuple[OptimizerSpec, ...]
    repetitions: int
    workers: int = 1
    include_overhead: bool = True
    quantity: str = "incumbent_test_loss"
    plots: PlotSpec = PlotSpec()
    table_at: str = "budget"
    resources: Resources = Resources()
    description: str = ""
    paper: str = ""
    skipped: tuple[tuple[str, str], ...] = field(default=())  # (optimizer label, why it is unavailable)
    text: str = ""  # the file's text, for the report's provenance
    published: Any = None  # the paper's numbers (benchsuite.published.Published), from `published:`
    #: where the runs evaluate (benchsuite.backends): `snakemake --config backend=local` overrides it
    backend: str = "simulated"
    #: what the simulated clock runs on: auto | measured | nominal (see :meth:`clock_for`)
    clock: str = "auto"
    #: how the optimizer's overhead is timed: wall | cpu (:data:`benchsuite.runner.OVERHEAD_CLOCKS`)
    overhead_clock: str = "wall"
    #: the "best model retrained" step, or None (:class:`RetrainSpec`)
    retrain: RetrainSpec | None = None
    #: seconds a trial may run on a real backend (None: no limit); the simulated backend cannot stop one
    trial_timeout: float | None = None

    def trial_timeout_for(self, backend: str | None = None) -> float | None:
        """The per-trial time limit of a run on ``backend`` (default: the protocol's): the protocol's on the local
        and dask backends, None on the simulated one (which evaluates in the driver and cannot stop a trial)."""
        return self.trial_timeout if (backend or self.backend) != "simulated" else None

    def clock_for(self, job: Job, backend: str | None = None) -> str:
        """The clock of ``job``'s run: ``measured`` on a real backend; with ``clock: auto`` ``nominal`` for a live
        benchmark that has a cost model (:meth:`Benchmark.nominal_cost`, issue 26 item 6: seeded live runs with
        several workers then decide alike on any machine), else ``measured``; otherwise the protocol's choice."""
        if (backend or self.backend) != "simulated":
            return "measured"
        if self.clock != "auto":
            return self.clock
        from . import registry
        from .benchmark import Benchmark

        cls = registry.get_benchmark(job.benchmark.name)
        live = getattr(cls, "kind", "") == "live" and getattr(cls, "nominal_cost", None) is not Benchmark.nominal_cost
        return "nominal" if live else "measured"

    def jobs(self) -> list[Job]:
        """Every run of the protocol, benchmark-major, in a stable order."""
        return [Job(self.name, b, o, r, derive_seed(self.name, b.label, o.label, r))
                for b in self.benchmarks for o in self.optimizers for r in range(self.repetitions)]

    def job(self, benchmark: str, optimizer: str, repetition: int) -> Job:
        """The job with these labels; raises :class:`ProtocolError` if there is none."""
        b = {x.label: x for x in self.benchmarks}.get(benchmark)
        o = {x.label: x for x in self.optimizers}.get(optimizer)
        if b is None or o is None or not 0 <= int(repetition) < self.repetitions:
            raise ProtocolError(f"{self.path}: protocol {self.name!r} has no run ({benchmark}, {optimizer}, "
                                f"repetition {repetition})")
        r = int(repetition)
        return Job(self.name, b, o, r, derive_seed(self.name, b.label, o.label, r))

    def result_paths(self) -> list[str]:
        """Result files of every run."""
        return [j.result_path for j in self.jobs()]

    def retrain_jobs(self) -> list[Job]:
        """The runs whose final incumbent the ``retrain:`` step trains again (none without the key)."""
        if self.retrain is None:
            return []
        return [j for j in self.jobs()
                if j.benchmark.label in self.retrain.benchmarks and j.optimizer.label in self.retrain.optimizers]

    def retrained_paths(self) -> list[str]:
        """The retrained-value files of :meth:`retrain_jobs` (:func:`retrained_path` of each result file)."""
        return [retrained_path(j.result_path) for j in self.retrain_jobs()]

    def retrain_gpu_hours(self) -> float | None:
        """GPU-hours of every retraining (``retrain.gpu_s`` x the retrained runs), None when not estimated."""
        if self.retrain is None or self.retrain.gpu_s is None:
            return None
        return len(self.retrain_jobs()) * self.retrain.gpu_s / 3600.0

    def command(self, job: Job, out: str | None = None, exe: Sequence[str] = ("benchsuite",),
                backend: str | None = None, scheduler: str | None = None) -> list[str]:
        """The ``benchsuite run`` argv for ``job`` (``--out`` appended when ``out`` is given; ``backend`` and
        ``scheduler`` override the protocol's backend, as ``--config backend=...`` does).

        Not ``--quiet``: the workflow sends stderr to the run's log, which then gets a progress
        line every 30 s (``tail -f results/<protocol>/<benchmark>/<optimizer>/repNNN.log``)."""
        argv = [*exe, "run", "--benchmark", job.benchmark.name, "--optimizer", job.optimizer.name,
                "--seed", str(job.seed), *job.benchmark.budget.cli_args(), "--workers", str(self.workers)]
        for k, v in job.optimizer.settings.items():
            argv += ["--set", f"{k}={_cli_value(v)}"]
        for k, v in job.benchmark.settings_for(job.repetition).items():
            argv += ["--benchmark-set", f"{k}={_cli_value(v)}"]
        if job.optimizer.initial_design != "optimizer":
            argv += ["--initial-design", job.optimizer.initial_design]
        if not self.include_overhead:
            argv.append("--no-overhead")
        if self.overhead_clock != "wall":  # the default adds nothing: earlier command lines are unchanged
            argv += ["--overhead-clock", self.overhead_clock]
        backend = backend or self.backend
        if backend != "simulated":  # the simulated default adds nothing: earlier command lines are unchanged
            argv += ["--backend", backend]
        if scheduler:
            argv += ["--scheduler", scheduler]
        timeout = self.trial_timeout_for(backend)
        if timeout is not None:
            argv += ["--trial-timeout", repr(float(timeout))]
        clock = self.clock_for(job, backend)
        if clock != "measured":
            argv += ["--clock", clock]
        for k, v in (("protocol", self.name), ("benchmark_label", job.benchmark.label),
                     ("optimizer_label", job.optimizer.label), ("repetition", job.repetition)):
            argv += ["--meta", f"{k}={v}"]
        if out is not None:
            argv += ["--out", out]
        return argv

    def shell_args(self, job: Job) -> str:
        """The arguments after ``benchsuite`` of :meth:`command`, quoted for a shell, without ``--out``."""
        return shlex.join(self.command(job, exe=()))

    def job_resources(self, benchmark: BenchmarkSpec) -> dict[str, int]:
        """Snakemake resources of a run on ``benchmark`` (a GPU where the benchmark requires one)."""
        gpu = self.resources.gpu or (1 if benchmark.gpu == "required" else 0)
        return {"mem_mb": self.resources.mem_mb, "runtime": self.resources.runtime, "gpu": gpu}


def result_path(protocol: str, benchmark: str, optimizer: str, repetition: int) -> str:
    """``results/<protocol>/<benchmark>/<optimizer>/rep<NNN>.csv``."""
    return f"results/{protocol}/{benchmark}/{optimizer}/rep{int(repetition):03d}.csv"


def retrained_path(result: str) -> str:
    """The retrained-value file of a run's result file: ``repNNN.csv`` -> ``repNNN.retrained.json``."""
    return (result[:-len(".csv")] if result.endswith(".csv") else result) + RETRAINED_SUFFIX


def _cli_value(value: Any) -> str:
    # strings pass through verbatim (str settings are not re-parsed); anything else as
    # JSON, which the CLI's YAML parser reads back to the same value
    return value if isinstance(value, str) else json.dumps(value)


# -- validation -------------------------------------------------------------------------
class _Checker:
    """Collects the file name for messages and checks one value at a time."""

    def __init__(self, path: str):
        self.path = path

    def fail(self, key: str, what: str) -> ProtocolError:
        where = f"{self.path}: {key}: " if key else f"{self.path}: "
        return ProtocolError(where + what)

    def keys(self, key: str, value: Any, allowed: Sequence[str], required: Sequence[str] = ()) -> dict:
        if not isinstance(value, Mapping):
            raise self.fail(key, f"expected a mapping with keys {', '.join(allowed)}, got {_show(value)}")
        for k in value:
            if k not in allowed:
                close = difflib.get_close_matches(str(k), list(allowed), n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]!r}?" if close else f"; allowed keys: {', '.join(allowed)}"
                raise self.fail(_join(key, str(k)), f"unknown key {str(k)!r}{hint}")
        for k in required:
            if k not in value:
                raise self.fail(_join(key, k), "required key is missing")
        return dict(value)

    def integer(self, key: str, value: Any, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise self.fail(key, f"expected an integer >= {minimum}, got {_show(value)}")
        if value < minimum:
            raise self.fail(key, f"must be >= {minimum}, got {value}")
        return int(value)

    def within(self, key: str, value: Any, domain: Any) -> Any:
        """``value`` if the :class:`benchsuite.settings.Interval` ``domain`` allows it (an integral float as an int)."""
        if domain.type is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if domain.is_satisfied_by(value):
            return value
        wanted = "an integer" if domain.type is int else "a number"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (domain.type is int
                                                                             and not isinstance(value, int)):
            raise self.fail(key, f"expected {wanted} ({domain}), got {_show(value)}")
        bounds = " and ".join(b for b in ((f">= {domain.low}" if domain.low is not None else ""),
                                          (f"<= {domain.high}" if domain.high is not None else "")) if b)
        raise self.fail(key, f"must be {bounds or str(domain)}, got {value}")

    def positive(self, key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected a positive number, got {_show(value)}")
        if not (value > 0 and math.isfinite(value)):
            raise self.fail(key, f"must be positive and finite, got {value}")
        return float(value)

    def choice(self, key: str, value: Any, choices: Sequence[str]) -> str:
        if value not in choices:
            close = difflib.get_close_matches(str(value), list(choices), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise self.fail(key, f"{_show(value)} is not one of {', '.join(choices)}{hint}")
        return str(value)

    def string(self, key: str, value: Any) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {_show(value)}")
        return value

    def label(self, key: str, value: Any) -> str:
        value = self.string(key, value)
        if not _LABEL_RE.fullmatch(value):
            raise self.fail(key, f"label {value!r} must start with a letter or digit and use only letters, "
                                 "digits and _ . + - (it names result folders)")
        return value


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _show(value: Any) -> str:
    return f"{type(value).__name__} {value!r}" if not isinstance(value, (Mapping, list)) else type(value).__name__


def _budget(c: _Checker, key: str, raw: Any) -> Budget:
    raw = c.keys(key, raw, _BUDGET_KEYS)
    if not raw:
        raise c.fail(key, "give evaluations and/or seconds")
    ev = c.integer(_join(key, "evaluations"), raw["evaluations"], 1) if raw.get("evaluations") is not None else None
    sec = c.positive(_join(key, "seconds"), raw["seconds"]) if raw.get("seconds") is not None else None
    if ev is None and sec is None:
        raise c.fail(key, "give evaluations and/or seconds")
    return Budget(ev, sec)


def _settings(c: _Checker, key: str, owner_cls: type, owner: str, raw: Any) -> dict[str, Any]:
    from .settings import resolve_settings

    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise c.fail(key, f"expected a mapping of setting names to values, got {_show(raw)}")
    declared = getattr(owner_cls, "settings_spec", {}) or {}
    for k in raw:
        if k not in declared:
            close = difflib.get_close_matches(str(k), list(declared), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"its settings are: {', '.join(declared) or 'none'}"
            raise c.fail(_join(key, str(k)), f"{owner} has no setting {str(k)!r}; {hint}")
    try:
        resolved = resolve_settings(owner, declared, raw)
    except BenchsuiteError as exc:
        raise c.fail(key, str(exc)) from None
    return {k: resolved[k] for k in raw}  # only what the protocol sets, coerced


# data-dependent settings checked before any job starts: (setting, what it names, test)
_PATH_SETTINGS = (("table", "table file", Path.is_file), ("data_dir", "data directory", Path.is_dir))


def _check_paths(c: _Checker, key: str, settings: Mapping[str, Any]) -> None:
    """An absolute ``table`` or ``data_dir`` setting must exist (a relative one is the run's business:
    it is resolved where the job runs, which validation cannot know)."""
    for name, what, exists in _PATH_SETTINGS:
        value = settings.get(name)
        if not isinstance(value, str) or not value:
            continue
        p = Path(value).expanduser()
        if p.is_absolute() and not exists(p):
            raise c.fail(_join(key, name), f"{what} {value!r} does not exist; fix the path or leave {name} empty "
                                           "for the default")


def _lookup(kind: str, name: str) -> tuple[type | None, str]:
    """(class, "") for a usable plugin, (None, reason) for an unavailable one; raises if unknown."""
    from . import registry

    entry = registry.lookup(kind, name)
    return (entry.obj, "") if entry.obj is not None else (None, entry.error)


def _entries(c: _Checker, key: str, raw: Any) -> list[tuple[str, dict]]:
    """Normalise a list of names-or-mappings to (key path, mapping) pairs."""
    if isinstance(raw, (str, Mapping)):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise c.fail(key, f"expected a non-empty list, got {_show(raw)}")
    out = []
    for i, item in enumerate(raw):
        k = f"{key}[{i}]"
        if isinstance(item, str):
            item = {"name": item}
        out.append((k, item))
    return out


def _benchmarks(c: _Checker, raw: Mapping, default_budget: Budget | None) -> tuple[BenchmarkSpec, ...]:
    if ("benchmark" in raw) == ("benchmarks" in raw):
        raise c.fail("benchmarks", "give exactly one of `benchmark:` (one) or `benchmarks:` (a list)")
    top = "benchmark" if "benchmark" in raw else "benchmarks"
    specs: list[BenchmarkSpec] = []
    for k, item in _entries(c, top, raw[top]):
        item = c.keys(k, item, _BENCH_KEYS, required=("name",))
        name = c.string(_join(k, "name"), item["name"])
        try:
            cls, why = _lookup("benchmark", name)
        except UnknownNameError as exc:
            raise c.fail(_join(k, "name"), str(exc)) from None
        if cls is None:
            raise c.fail(_join(k, "name"), f"benchmark {name!r} is unavailable here: {why}")
        settings = _settings(c, _join(k, "settings"), cls, f"benchmark {name!r}", item.get("settings"))
        _check_paths(c, _join(k, "settings"), settings)
        budget = _budget(c, _join(k, "budget"), item["budget"]) if item.get("budget") is not None else default_budget
        if budget is None:
            raise c.fail("budget", f"required (or give {_join(k, 'budget')})")
        optimum = item.get("optimum")
        if optimum is not None and (isinstance(optimum, bool) or not isinstance(optimum, (int, float))):
            raise c.fail(_join(k, "optimum"), f"expected a number, got {_show(optimum)}")
        if optimum is not None and not math.isfinite(optimum):
            raise c.fail(_join(k, "optimum"), f"expected a finite number (regret is loss - optimum), got {optimum}")
        label = c.label(_join(k, "label"), item.get("label", name))
        gpu = getattr(getattr(cls, "requirements", None), "gpu", "no")
        instances = _instances(c, _join(k, "instances"), cls, name, item.get("instances"))
        specs.append(BenchmarkSpec(name, label, settings, budget, None if optimum is None else float(optimum), gpu,
                                   instances))
    _unique(c, top, [s.label for s in specs])
    return tuple(specs)


def _instances(c: _Checker, key: str, cls: type, name: str, raw: Any) -> tuple[str, int] | None:
    """``instances: {setting: problem_seed, count: 5}``: an integer setting varied per repetition."""
    if raw is None:
        return None
    raw = c.keys(key, raw, _INSTANCE_KEYS, required=_INSTANCE_KEYS)
    setting = c.string(_join(key, "setting"), raw["setting"])
    declared = getattr(cls, "settings_spec", {}) or {}
    if setting not in declared:
        raise c.fail(_join(key, "setting"), f"benchmark {name!r} has no setting {setting!r}; "
                     f"its settings are: {', '.join(declared) or 'none'}")
    if not isinstance(declared[setting].default, int) or isinstance(declared[setting].default, bool):
        raise c.fail(_join(key, "setting"), f"{setting!r} is not an integer setting (instances are numbered 0..count-1)")
    count = raw["count"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise c.fail(_join(key, "count"), f"expected a positive integer, got {_show(count)}")
    return setting, count


def _optimizers(c: _Checker, raw: Any) -> tuple[tuple[OptimizerSpec, ...], tuple[tuple[str, str], ...]]:
    specs: list[OptimizerSpec] = []
    skipped: list[tuple[str, str]] = []
    labels: list[str] = []
    for k, item in _entries(c, "optimizers", raw):
        item = c.keys(k, item, _OPT_KEYS, required=("name",))
        name = c.string(_join(k, "name"), item["name"])
        label = c.label(_join(k, "label"), item.get("label", name))
        labels.append(label)
        try:
            cls, why = _lookup("optimizer", name)
        except UnknownNameError as exc:
            raise c.fail(_join(k, "name"), str(exc)) from None
        if cls is None:
            skipped.append((label, why))
            continue
        settings = _settings(c, _join(k, "settings"), cls, f"optimizer {name!r}", item.get("settings"))
        _check_settings(c, _join(k, "settings"), cls, settings, None)
        design = c.choice(_join(k, "initial_design"), item.get("initial_design", "optimizer"),
                          ("optimizer", "benchmark"))
        if design != "optimizer" and not cls.supports.initial_design:
            raise c.fail(_join(k, "initial_design"), f"optimizer {name!r} cannot start from the benchmark's initial "
                         "design (its Capabilities say initial_design=False); drop the key for it")
        specs.append(OptimizerSpec(name, label, settings, design))
    _unique(c, "optimizers", labels)
    if not specs:
        raise c.fail("optimizers", "no optimizer of this protocol is available here: "
                     + "; ".join(f"{lab}: {why}" for lab, why in skipped))
    return tuple(specs), tuple(skipped)


def _unique(c: _Checker, key: str, labels: list[str]) -> None:
    seen: set[str] = set()
    for lab in labels:
        if lab in seen:
            raise c.fail(key, f"label {lab!r} is used twice; give the entries distinct `label:`s")
        seen.add(lab)


def _check_pairs(c: _Checker, benchmarks: Sequence[BenchmarkSpec], optimizers: Sequence[OptimizerSpec],
                 workers: int) -> None:
    """Reject optimizer/benchmark pairings the optimizer cannot run (synthetic benchmarks only).

    Only synthetic benchmarks are built at validation time: tabular and live ones may load
    large files, and their pairings are checked when the run starts.
    """
    from . import registry
    from .errors import UnsupportedError

    for b in benchmarks:
        cls = registry.get_benchmark(b.name)
        if getattr(cls, "kind", "") != "synthetic":
            continue
        try:
            bench = cls(**b.settings)
        except BenchsuiteError:
            continue
        for o in optimizers:
            ocls = registry.get_optimizer(o.name)
            try:
                ocls.check_supports(bench.space, bench.fidelity, workers)
            except UnsupportedError as exc:
                raise c.fail("optimizers", f"{o.label} cannot run on {b.label}: {exc}") from None
            _check_settings(c, "optimizers", ocls, o.settings, bench.fidelity, f"{o.label} on {b.label}: ")
            if o.initial_design == "benchmark" and not bench.initial_design():
                raise c.fail("optimizers", f"{o.label} starts from the benchmark's initial design, but {b.label} has "
                             "none with these settings; drop initial_design: benchmark (or set the benchmark's "
                             "settings that give it one)")


def _check_settings(c: _Checker, key: str, cls: type, given: Mapping[str, Any], fidelity: Any,
                    prefix: str = "") -> None:
    """Settings that contradict each other or the benchmark's fidelity axis (``Optimizer.check_settings``)."""
    from .settings import resolve_settings

    check = getattr(cls, "check_settings", None)
    if check is None:
        return
    try:
        check(resolve_settings(f"optimizer {cls.name!r}", cls.settings_spec, given), fidelity)
    except BenchsuiteError as exc:
        raise c.fail(key, prefix + str(exc)) from None


def parse_protocol(raw: Any, path: str, name: str | None = None, text: str = "") -> Protocol:
    """Validate a loaded YAML document; ``name`` defaults to the file's stem."""
    c = _Checker(path)
    if raw is None:
        raise c.fail("", "the file is empty")
    raw = c.keys("", raw, _TOP_KEYS, required=("optimizers", "repetitions"))
    stem = name or Path(path).stem
    pname = c.string("name", raw.get("name", stem))
    if pname != stem:
        raise c.fail("name", f"{pname!r} must equal the file name {stem!r} (it names targets and result folders)")
    if not _NAME_RE.fullmatch(pname):
        raise c.fail("name", f"{pname!r} must start with a letter and use only letters, digits and _ "
                             "(it becomes a Snakemake target)")
    budget = _budget(c, "budget", raw["budget"]) if raw.get("budget") is not None else None
    benchmarks = _benchmarks(c, raw, budget)
    optimizers, skipped = _optimizers(c, raw["optimizers"])
    from .settings import Interval

    reps = c.within("repetitions", raw["repetitions"], Interval(int, 1, MAX_REPETITIONS))
    workers = c.within("workers", raw.get("workers", 1), Interval(int, 1, MAX_WORKERS))
    from .backends import BACKENDS, MAX_LOCAL_WORKERS

    backend = c.choice("backend", raw.get("backend", "simulated"), BACKENDS)
    # what `benchsuite run` refuses, refused here too (dask's limit depends on whether the workflow is given a
    # scheduler, --config scheduler=..., so its runs check it as they start)
    if backend == "local" and workers > MAX_LOCAL_WORKERS:
        raise c.fail("workers", f"the local backend starts one process per worker on this machine, at most "
                                f"{MAX_LOCAL_WORKERS}; got {workers}")
    trial_timeout = None if raw.get("trial_timeout") is None else c.positive("trial_timeout", raw["trial_timeout"])
    clock = c.choice("clock", raw.get("clock", "auto"), ("auto", "measured", "nominal"))
    if clock == "nominal":
        from . import registry as _registry
        from .benchmark import Benchmark as _Benchmark

        for b in benchmarks:
            if getattr(_registry.get_benchmark(b.name), "nominal_cost", None) is _Benchmark.nominal_cost:
                raise c.fail("clock", f"nominal needs a cost model, and benchmark {b.label} has none (its reported "
                                      "costs are used as they are); use auto")
    overhead = raw.get("include_overhead", True)
    if not isinstance(overhead, bool):
        raise c.fail("include_overhead", f"expected true or false, got {_show(overhead)}")
    overhead_clock = c.choice("overhead_clock", raw.get("overhead_clock", "wall"), ("wall", "cpu"))
    if overhead_clock != "wall" and backend != "simulated":
        raise c.fail("overhead_clock", f"{overhead_clock} is for the simulated backend; the {backend} backend's "
                                       "times are wall-clock seconds")
    quantity = c.choice("quantity", raw.get("quantity", "incumbent_test_loss"), QUANTITIES)

    p = c.keys("plots", raw.get("plots") or {}, _PLOT_KEYS)
    xs = p.get("x", list(AXES))
    if isinstance(xs, str):
        xs = [xs]
    if not isinstance(xs, list) or not xs:
        raise c.fail("plots.x", f"expected a non-empty list of {', '.join(AXES)}")
    xs = tuple(c.choice(f"plots.x[{i}]", x, AXES) for i, x in enumerate(xs))
    plots = PlotSpec(xs, *(c.choice(f"plots.{k}", p.get(k, d), SCALES)
                           for k, d in (("time_scale", "log"), ("evaluations_scale", "linear"), ("y_scale", "linear"))))

    t = c.keys("table", raw.get("table") or {}, _TABLE_KEYS)
    table_at = c.choice("table.at", t.get("at", "budget"), TABLE_AT)
    if table_at == "time" and any(b.budget.seconds is None for b in benchmarks):
        raise c.fail("table.at", "'time' needs a budget in seconds for every benchmark (or use 'budget')")
    if table_at == "evaluations" and any(b.budget.evaluations is None for b in benchmarks):
        raise c.fail("table.at", "'evaluations' needs a budget in evaluations for every benchmark (or use 'budget')")

    r = c.keys("resources", raw.get("resources") or {}, _RESOURCE_KEYS)
    resources = Resources(
        mem_mb=c.integer("resources.mem_mb", r.get("mem_mb", Resources.mem_mb), 1),
        runtime=c.integer("resources.runtime", r.get("runtime", Resources.runtime), 1),
        gpu=c.integer("resources.gpu", r.get("gpu", Resources.gpu), 0),
    )
    description = c.string("description", raw.get("description", "") or "")
    paper = c.string("paper", raw.get("paper", "") or "")
    _check_pairs(c, benchmarks, optimizers, workers)
    retrain = _retrain(c, raw.get("retrain"), benchmarks, optimizers)
    from .published import parse_published

    # an unavailable optimizer's label counts: its published cells become `not-run` rows
    published = parse_published(c, raw.get("published"), [b.label for b in benchmarks],
                                [o.label for o in optimizers] + [lab for lab, _ in skipped])
    return Protocol(pname, path, benchmarks, optimizers, reps, workers, overhead, quantity, plots, table_at,
                    resources, description.strip(), paper, skipped, text, published, backend, clock, overhead_clock,
                    retrain, trial_timeout)


def _retrain(c: _Checker, raw: Any, benchmarks: Sequence[BenchmarkSpec],
             optimizers: Sequence[OptimizerSpec]) -> RetrainSpec | None:
    """``retrain:`` checked against the labels and every retrained benchmark (live ones only: a retraining trains
    a network, and its settings must be that benchmark's)."""
    if raw is None:
        return None
    from . import registry
    from .settings import resolve_settings

    raw = c.keys("retrain", raw, _RETRAIN_KEYS, required=("settings",))
    chosen = _retrain_labels(c, "retrain.benchmarks", raw.get("benchmarks"), [b.label for b in benchmarks],
                             "benchmark")
    settings: dict[str, Any] = {}
    for b in benchmarks:
        if b.label not in chosen:
            continue
        cls = registry.get_benchmark(b.name)
        if getattr(cls, "kind", "") != "live":
            raise c.fail("retrain", f"benchmark {b.label} is {getattr(cls, 'kind', '?')}, not live: only a trained "
                                    "network can be retrained; leave it out of retrain.benchmarks")
        settings = _settings(c, "retrain.settings", cls, f"benchmark {b.name!r}", raw["settings"])
        _check_paths(c, "retrain.settings", settings)
        try:
            merged = resolve_settings(f"benchmark {b.name!r}", cls.settings_spec, {**b.settings, **settings})
        except BenchsuiteError as exc:
            raise c.fail("retrain.settings", f"with {b.label}'s settings: {exc}") from None
        if merged.get("test_eval") is False:
            raise c.fail("retrain.settings", f"{b.label} would not score its test set (test_eval is false); the "
                                             "retrained value is a test loss")
    opts = _retrain_labels(c, "retrain.optimizers", raw.get("optimizers"), [o.label for o in optimizers],
                           "optimizer")
    gpu_s = c.positive("retrain.gpu_s", raw["gpu_s"]) if raw.get("gpu_s") is not None else None
    basis = c.string("retrain.basis", raw.get("basis", "") or "").strip()
    if gpu_s is not None and not basis:
        raise c.fail("retrain.basis", "say where gpu_s comes from (a measurement, a scaling of one)")
    return RetrainSpec(dict(settings), chosen, opts, gpu_s, basis)


def _retrain_labels(c: _Checker, key: str, raw: Any, labels: list[str], what: str) -> tuple[str, ...]:
    """A ``retrain:`` list of labels (default: all of them), each one of the protocol's."""
    asked = labels if raw is None else [raw] if isinstance(raw, str) else raw
    if not isinstance(asked, list) or not asked:
        raise c.fail(key, f"expected a non-empty list of {what} labels, got {_show(asked)}")
    for i, lab in enumerate(asked):
        if lab not in labels:
            close = difflib.get_close_matches(str(lab), labels, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; the protocol's are {', '.join(labels)}"
            raise c.fail(f"{key}[{i}]", f"{_show(lab)} is not a {what} label of this protocol{hint}")
    return tuple(dict.fromkeys(asked))


def _read_text(p: Path, what: str) -> str:
    try:
        data = p.read_bytes()
    except IsADirectoryError:
        raise ProtocolError(f"{p}: is a directory, not {what}") from None
    except OSError as exc:
        raise ProtocolError(f"{p}: cannot read {what} ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ProtocolError(f"{p}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
                            "save the file as UTF-8") from None


def load_protocol(path: str | Path) -> Protocol:
    """Read and validate one protocol file."""
    p = Path(path)
    text = _read_text(p, "the protocol")
    raw = load_yaml(text, str(p))
    try:
        return parse_protocol(raw, str(p), text=text)
    except RecursionError:
        raise ProtocolError(f"{p}: nested too deeply to read") from None


def protocol_files(directory: str | Path = PROTOCOLS_DIR) -> list[Path]:
    """The protocol files of a directory (every ``*.yaml`` except the set file)."""
    return sorted(f for f in Path(directory).glob("*.yaml") if f.name != SET_FILE)


def load_protocols(directory: str | Path = PROTOCOLS_DIR) -> dict[str, Protocol]:
    """Every protocol of a directory by name; the first invalid one raises :class:`ProtocolError`."""
    return {p.name: p for p in map(load_protocol, protocol_files(directory))}


def load_set(directory: str | Path = PROTOCOLS_DIR, known: Mapping[str, Protocol] | None = None) -> list[str]:
    """The protocol names listed in ``default_set.yaml`` (key ``protocols``), checked against ``known``."""
    path = Path(directory) / SET_FILE
    c = _Checker(str(path))
    raw = load_yaml(_read_text(path, "the default protocol set"), str(path))
    raw = c.keys("", raw, ("protocols",), required=("protocols",))
    names = raw["protocols"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise c.fail("protocols", "expected a list of protocol names")
    if known is not None:
        for i, n in enumerate(names):
            if n not in known:
                close = difflib.get_close_matches(n, list(known), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; known protocols: {', '.join(known)}"
                raise c.fail(f"protocols[{i}]", f"no protocol file {n}.yaml in {directory}{hint}")
    return list(names)
