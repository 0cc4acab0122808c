"""The one progress display of ``benchsuite run`` and ``run-job``, and the training lines of ``evaluate``.

A terminal gets one tqdm bar over the trials (``n/budget``, elapsed and estimated time left), whose
right-hand side says what is happening now: the trial being evaluated and its configuration, the
training epoch it has reached, or that the run is retraining a new incumbent at full fidelity for its
test loss. A log file (the workflow's ``rep*.log``) gets the same facts as whole lines, at most one
every :data:`LOG_EVERY_S` seconds (\\r-updates without a newline would sit in the buffer). Both learn
what the run does from :mod:`benchsuite.activity` and the training harness's log records
(the ``benchsuite.training`` logger), and count the networks trained for trials and for test losses,
which the run's summary line reports.
"""
from __future__ import annotations

import logging
import math
import sys
import time
from typing import IO, Any

from . import activity

#: a log file gets a progress line at most this often (and the first and the last trial's)
LOG_EVERY_S = 30.0
#: a training line (one per epoch or scoring) at most this often in a log file, and in ``evaluate``
TRAINING_EVERY_S = 10.0


def _duration(seconds: float) -> str:
    """``95`` -> ``1 min 35 s``: short human time for the progress lines."""
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60)} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"


class RunProgress:
    """What a run is doing, shown on a terminal as one bar and in a log file as lines.

    ``trial_done(n, clock)`` is the run loop's progress callback; :meth:`begin`, :meth:`end` and
    :meth:`trained` are :class:`benchsuite.activity.Listener`'s; :meth:`training_line` takes the harness's
    per-epoch lines. ``trainings`` counts the networks trained per activity kind (``trial``, ``test``)."""

    def __init__(self, label: str, total: int | None, clock_name: str, *, stream: IO[str] | None = None,
                 tty: bool | None = None):
        self.label, self.total, self.clock_name = label, total, clock_name
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.started = time.monotonic()
        self.last_line = -math.inf
        self.last_training = -math.inf
        self.bar: Any = None
        self.now: activity.Activity | None = None
        self.epoch = ""
        self.done = 0
        self.trainings = {kind: 0 for kind in activity.KINDS}
        self._stop = None

    # -- lifetime ------------------------------------------------------------------------------------------
    def __enter__(self) -> RunProgress:
        self._stop = activity.listen(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._stop()
        if self.bar is not None:
            self.bar.close()

    def _ensure_bar(self) -> Any:
        if self.bar is None and self.tty:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, desc=self.label, unit="trial", file=self.stream, dynamic_ncols=True,
                            mininterval=0.5)
        return self.bar

    def write(self, line: str) -> None:
        """A whole line above the bar (or on its own in a log file)."""
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    # -- what is happening ---------------------------------------------------------------------------------
    def _doing(self) -> str:
        act = self.now
        if act is None:
            return ""
        what = f"trial {act.trial}" if act.kind == "trial" else \
            f"retraining trial {act.trial}'s incumbent for its test loss"
        return f"{what}{', ' + self.epoch if self.epoch else ''}: {act.config}"

    def _refresh(self) -> None:
        bar = self._ensure_bar()
        if bar is not None:
            bar.set_postfix_str(self._doing(), refresh=False)
            bar.refresh()

    def begin(self, act: activity.Activity) -> None:
        self.now, self.epoch = act, ""
        if self.tty:
            self._refresh()

    def end(self, act: activity.Activity) -> None:
        self.now, self.epoch = None, ""
        if self.bar is not None:
            self.bar.set_postfix_str("", refresh=False)

    def note(self, text: str) -> None:
        self.write(text)

    def trained(self, units: int, unit: str) -> None:
        kind = self.now.kind if self.now is not None else "trial"
        self.trainings[kind] = self.trainings.get(kind, 0) + 1
        if kind == "test" and self.now is not None:
            self.write(f"  test loss of the incumbent after trial {self.now.trial}: trained it for {units:,} {unit} "
                       f"(test_eval=true; --benchmark-set test_eval=false skips these trainings)")

    def training_line(self, text: str) -> None:
        """One line of the training harness (``epoch 3/12: train loss ...``)."""
        final = text.startswith(("early stop", "training failed"))
        if text.startswith(("epoch", "iteration")):
            self.epoch = text.split(":", 1)[0]
        if self.tty and self.now is not None:
            self._refresh()  # the bar shows the epoch; only an early stop or a failure gets a line of its own
            if not final:
                return
        now = time.monotonic()
        if now - self.last_training < TRAINING_EVERY_S and not final:
            return
        self.last_training = now
        act = self.now
        if act is None:
            label = "training"
        elif act.kind == "trial":
            label = f"training trial {act.trial} {act.config}"
        else:
            label = f"training the incumbent after trial {act.trial} for its test loss {act.config}"
        self.write(f"  {label}: {text}")

    def trial_done(self, n: int, clock: float) -> None:
        """The run loop's progress callback: ``n`` trials told, the run's clock at ``clock``."""
        self.done = n
        if self.tty:
            bar = self._ensure_bar()
            bar.update(n - bar.n)
            return
        now = time.monotonic()
        last = self.total is not None and n >= self.total
        if n != 1 and now - self.last_line < LOG_EVERY_S and not last:
            return
        self.last_line = now
        elapsed = now - self.started
        total = f"/{self.total}" if self.total else ""
        left = ""
        if self.total and 0 < n < self.total:
            left = f", about {_duration(elapsed / n * (self.total - n))} left"
        self.write(f"{self.label}: {n}{total} trials, {self.clock_name} {clock:,.0f} s, "
                   f"{_duration(elapsed)} elapsed{left}")

    # -- the summary -------------------------------------------------------------------------------------------
    def trainings_text(self) -> str:
        """What the summary line says about trained networks ('' when none was trained)."""
        trial, test = self.trainings.get("trial", 0), self.trainings.get("test", 0)
        if not trial and not test:
            return ""
        text = f"{trial} network{'s' if trial != 1 else ''} trained for the trials"
        if test:
            text += (f" and {test} more to score new incumbents on the test set (test_eval=true; "
                     f"--benchmark-set test_eval=false skips them)")
        return text


class TrainingLines(logging.Handler):
    """The training harness's per-epoch (or per-scoring) lines (logger ``benchsuite.training``), handed to a
    :class:`RunProgress`, or printed at most every :data:`TRAINING_EVERY_S` seconds (and every early stop)
    when there is none (``benchsuite evaluate``)."""

    def __init__(self, progress: RunProgress | None = None, every: float = TRAINING_EVERY_S):
        super().__init__(logging.INFO)
        self.progress, self.every, self.last = progress, every, -math.inf
        self.logger = logging.getLogger("benchsuite.training")
        self.saved = (self.logger.level, self.logger.propagate)

    def __enter__(self) -> TrainingLines:
        self.logger.addHandler(self)
        self.logger.setLevel(logging.INFO)
        self.logger.propagate = False
        return self

    def __exit__(self, *exc: object) -> None:
        self.logger.removeHandler(self)
        self.logger.setLevel(self.saved[0])
        self.logger.propagate = self.saved[1]

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if self.progress is not None:
            self.progress.training_line(text)
            return
        now = time.monotonic()
        if now - self.last < self.every and not text.startswith("early stop"):
            return
        self.last = now
        print(f"  training: {text}", file=sys.stderr, flush=True)
