"""The Python API: run one optimizer on one benchmark, load result files, draw the figure.

::

    import benchsuite

    df = benchsuite.run("branin", "random_search", seed=0, budget_evals=20)
    runs = benchsuite.load_results("results/synthetic")      # a folder, a file or a list of files
    fig = benchsuite.plot(runs, quantity="incumbent_test_loss", x="evaluations")

:func:`run` does what ``benchsuite run`` does with the same arguments (the same runner, the
same result file when ``out`` is given) and returns the run as :func:`load_results` would
load its file. Frames have one row per finished trial: the result file's columns (see
:mod:`benchsuite.results`) behind the run's labels (``benchmark``, ``optimizer``,
``seed``, ``repetition``, ``optimum``, ``evaluation``...; :func:`benchsuite.analysis.load_runs`);
``df.attrs["provenance"]`` holds the provenance record: a dict for one run (:func:`run`, or
:func:`load_results` of one file), a list of them for several. :func:`plot` draws the
workflow's median and quartile figure (:func:`benchsuite.analysis.plots.curves_figure`) from such a
frame. pandas and matplotlib are imported when a function needs them, not on import.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .benchmark import Benchmark
from .errors import BenchsuiteError, DataError, InvalidSettingError
from .optimizer import Optimizer

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["load_results", "plot", "run", "statistics"]

PathLike = str | os.PathLike
AXES = ("evaluations", "time")


def run(benchmark: str | type[Benchmark] | Benchmark, optimizer: str | type[Optimizer], *, seed: int = 0,
        budget_evals: int | None = None, budget_seconds: float | None = None, workers: int = 1,
        optimizer_settings: Mapping[str, Any] | None = None, benchmark_settings: Mapping[str, Any] | None = None,
        out: PathLike | None = None, include_overhead: bool = True,
        initial_design: str = "optimizer", backend: str = "simulated", scheduler: str | None = None,
        clock: str = "measured", overhead_clock: str = "wall", trial_timeout: float | None = None) -> pd.DataFrame:
    """Run one optimizer on one benchmark, as ``benchsuite run`` does, and return its trials as a DataFrame.

    ``benchmark`` is a registered name, a Benchmark subclass (constructed with
    ``benchmark_settings``) or an instance; ``optimizer`` a registered name or an Optimizer
    subclass. With ``out`` the result file is written there (checked before the run
    starts, written atomically after it) exactly as the command line writes it.
    ``include_overhead=False`` is ``--no-overhead``; ``initial_design="benchmark"`` is
    ``--initial-design benchmark`` (start from the benchmark's own initial points). ``backend`` is
    ``--backend``: ``"simulated"`` (the default), ``"local"`` (``workers`` processes on this machine) or
    ``"dask"`` (a LocalCluster, or the scheduler at ``scheduler``); see :mod:`benchsuite.backends`.
    ``clock="nominal"`` is ``--clock nominal`` (a live benchmark's deterministic cost model on the simulated
    clock); ``overhead_clock="cpu"`` is ``--overhead-clock cpu`` (the optimizer's overhead timed in CPU
    seconds, which other jobs on the machine do not stretch); ``trial_timeout`` is ``--trial-timeout`` (on the
    local and dask backends, a trial still running after that many seconds is a failed trial and its worker is
    replaced). Errors are the suite's one-line types (:mod:`benchsuite.errors`). What the settings could not do
    within the budget (Hyperband that never reaches full fidelity, a population as large as the budget) is
    printed on stderr in one line and kept in ``df.attrs["notes"]``.
    """
    from .analysis.load import labelled_run
    from .execute import execute_run
    from .results import load_result

    output, text = execute_run(benchmark, optimizer, seed=seed, budget_evals=budget_evals,
                               budget_seconds=budget_seconds, workers=workers, optimizer_settings=optimizer_settings,
                               benchmark_settings=benchmark_settings, include_overhead=include_overhead, out=out,
                               initial_design=initial_design, backend=backend, scheduler=scheduler, clock=clock,
                               overhead_clock=overhead_clock, trial_timeout=trial_timeout)
    # parsed from the very text the result file holds (no temporary file): the frame equals load_results(out)
    frame, prov = labelled_run(load_result(out or "<run>", text=text), None if out is None else str(out))
    frame.attrs["provenance"] = prov
    frame.attrs["notes"] = list(output.notes)
    return frame


def _result_files(source: PathLike | Iterable[PathLike]) -> list[Path]:
    """Result files named by ``source``: a file, a folder (its ``*.csv``, recursively) or a list of either."""
    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    files: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            # an interrupted run's <out>.partial.csv is not a run's result (the complete rerun is)
            found = sorted(f for f in p.rglob("*.csv") if f.is_file() and not f.name.endswith(".partial.csv"))
            if not found:
                raise DataError(f"{p}: no result files (*.csv) in this folder")
            files += found
        elif p.is_file():
            files.append(p)
        else:
            raise DataError(f"{p}: no such result file or folder")
    if not files:
        raise DataError("no result files to load: give a result file, a folder of them or a list")
    return files


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _load_checked(path: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One result file as :func:`benchsuite.analysis.load_runs` frames it (attrs moved out: pandas deep-copies them
    on every operation) and its provenance; a truncated or malformed file is a DataError naming it (the
    checks are :func:`benchsuite.results.load_result`'s, which every reader shares)."""
    import pandas as pd

    from benchsuite.analysis.load import load_runs

    try:
        df = load_runs([path])
    except BenchsuiteError as exc:
        msg = str(exc)
        raise DataError(msg if str(path) in msg else f"{path}: {msg}") from None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, pd.errors.ParserError) as exc:
        # load_runs reads the run's labels (seed, repetition, optimum) from the provenance
        raise DataError(f"{path}: not a readable benchsuite result file ({_one_line(exc)})") from None
    (prov,) = df.attrs["provenance"]
    df.attrs = {}
    return df, prov


def load_results(folder_or_files: PathLike | Iterable[PathLike]) -> pd.DataFrame:
    """Load result files (a folder, searched recursively for ``*.csv``, a file, or a list) into one DataFrame.

    One row per trial: the run's labels from each file's provenance (``benchmark``,
    ``optimizer``, ``seed``, ``repetition``, ...) in front of the file's own columns
    (:data:`benchsuite.results.COLUMNS`). ``df.attrs["provenance"]`` is the file's provenance
    record (a dict, with its ``path``) when ``folder_or_files`` names one file, and the list of
    every file's record when it names a folder or a list. A file that is not a complete
    benchsuite result file (format 2: the CSV without its provenance file, or not the CSV that
    file records) raises :class:`DataError` naming it.
    """
    import pandas as pd

    loaded = [_load_checked(p) for p in _result_files(folder_or_files)]
    df = pd.concat([frame for frame, _ in loaded], ignore_index=True)
    provs = [prov for _, prov in loaded]
    one_file = isinstance(folder_or_files, (str, os.PathLike)) and not Path(folder_or_files).is_dir()
    df.attrs["provenance"] = provs[0] if one_file else provs
    return df


def _analysis_frame(df_or_folder: Any, quantity: str, who: str) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """A checked tidy frame (from a frame or result files) with the quantity in ``value``, and its provenance."""
    import pandas as pd

    from benchsuite.analysis.load import add_quantity

    from .protocol import QUANTITY_LABELS

    if quantity not in QUANTITY_LABELS:
        raise InvalidSettingError(f"{who}: quantity={quantity!r} must be one of {list(QUANTITY_LABELS)}")
    df = df_or_folder if isinstance(df_or_folder, pd.DataFrame) else load_results(df_or_folder)
    provenance = df.attrs.get("provenance", [])
    provenance = [provenance] if isinstance(provenance, Mapping) else list(provenance)
    # pandas deep-copies attrs on every operation: hundreds of provenance records made the
    # analysis steps ten times slower (81 s -> 8 s for the 467 runs of results/nb201)
    df = df.copy(deep=False)
    df.attrs = {}
    needed = ("benchmark", "optimizer", "repetition", "evaluation", "told_time", "incumbent_loss",
              "incumbent_test_loss", "optimum")
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise DataError(f"{who}: the frame lacks column(s) {', '.join(missing)}; give a frame from "
                        "benchsuite.run or benchsuite.load_results")
    if not len(df):
        raise DataError(f"{who}: the frame has no trials")
    keys = ["benchmark", "optimizer", "repetition", "evaluation"]
    dup = df.duplicated(keys)
    if dup.any():
        b, o, r, _ = df.loc[dup, keys].iloc[0]
        raise DataError(f"{who}: two runs of optimizer {o!r} on benchmark {b!r} share repetition {r}; "
                        "load each run once (runs are told apart by their seed or repetition)")
    return add_quantity(df, quantity), provenance


def statistics(df_or_folder: pd.DataFrame | PathLike | Iterable[PathLike], quantity: str = "incumbent_test_loss",
               x: str = "evaluations", budget: float | Mapping[str, float] | None = None,
               fractions: Sequence[float] = (1.0,), alpha: float = 0.05) -> list[Any]:
    """Friedman, pairwise Wilcoxon (Holm) and mean ranks of the optimizers, as the reports print them.

    ``df_or_folder`` as for :func:`plot`. Blocks are (benchmark, repetition) pairs; each run's value is
    its ``quantity`` at ``fraction x budget`` on axis ``x`` (``budget``: one number, a number per
    benchmark, or by default each benchmark's largest x that every run reached). Returns one
    :class:`benchsuite.analysis.stats.Comparison` per fraction (``.to_markdown()``, ``.to_frame()``,
    ``.mean_ranks``, ``.pairwise_p``; :func:`benchsuite.analysis.stats.plot_cd` draws its diagram); with
    too few repetitions its ``reason`` says so and nothing is tested. Needs ``pip install 'benchsuite[stats]'``.
    """
    from benchsuite.analysis import stats
    from benchsuite.analysis.steps import AXIS_COLUMN

    if x not in AXES:
        raise InvalidSettingError(f"statistics: x={x!r} must be one of {list(AXES)}")
    df, _ = _analysis_frame(df_or_folder, quantity, "statistics")
    col = AXIS_COLUMN[x]
    reached = df.groupby(["benchmark", "optimizer", "repetition"], sort=False)[col].max().groupby(level=0).min()
    at = {}
    for bench, common in reached.items():
        b = budget.get(bench, common) if isinstance(budget, Mapping) else (common if budget is None else budget)
        at[bench] = (x, float(b))
    try:
        return stats.compare_at_fractions(df, at, list(dict.fromkeys(df["optimizer"])), fractions, alpha)
    except ValueError as exc:
        raise InvalidSettingError(f"statistics: {exc}") from None


def plot(df_or_folder: pd.DataFrame | PathLike | Iterable[PathLike], quantity: str = "incumbent_test_loss",
         x: str = "evaluations", out: PathLike | None = None, *, x_scale: str | None = None,
         y_scale: str | None = None, title: str | None = None) -> Figure:
    """The suite's median and 25th-75th percentile figure (one panel per benchmark) as a matplotlib Figure.

    ``df_or_folder`` is a frame from :func:`run` or :func:`load_results`, or what
    :func:`load_results` accepts. ``quantity``: ``incumbent_test_loss``,
    ``incumbent_loss`` or ``regret``; ``x``: ``evaluations`` or ``time`` (the simulated
    clock). Scales default to the protocols' (time log, evaluations linear, y linear).
    With ``out`` the figure is also saved as PNG and PDF (``out`` with those suffixes), as
    the workflow saves its figures. Runs are grouped by (benchmark, optimizer) and their
    repetitions (the seed when no protocol numbered them).
    """

    from benchsuite.analysis import plots
    from benchsuite.analysis.steps import default_grids, summarise, trajectories

    from .protocol import QUANTITY_LABELS, SCALES, PlotSpec

    if x not in AXES:
        raise InvalidSettingError(f"plot: x={x!r} must be one of {list(AXES)}")
    spec = PlotSpec()
    x_scale = x_scale or spec.scale(x)
    y_scale = y_scale or spec.y_scale
    for name, value in (("x_scale", x_scale), ("y_scale", y_scale)):
        if value not in SCALES:
            raise InvalidSettingError(f"plot: {name}={value!r} must be one of {list(SCALES)}")

    df, provenance = _analysis_frame(df_or_folder, quantity, "plot")
    benchmarks = list(dict.fromkeys(df["benchmark"]))
    optimizers = list(dict.fromkeys(df["optimizer"]))
    reps = plots.repetitions_of(df)
    summary = summarise(trajectories(df, x, default_grids(df, x, x_scale)))
    label = QUANTITY_LABELS[quantity]
    if x == "time" and not all(p.get("include_overhead", True) for p in provenance):
        x_label = plots.X_LABELS["time_no_overhead"]
    else:
        x_label = plots.X_LABELS[x]
    fig = plots.curves_figure(
        summary, axis=x, x_scale=x_scale, y_scale=y_scale, y_label=label,
        title=title or f"{label} vs {'wall-clock time' if x == 'time' else 'evaluations'}",
        benchmarks=benchmarks, optimizers=optimizers, reps=reps, x_label=x_label)
    if out is not None:
        plots.save(fig, out)
    return fig

