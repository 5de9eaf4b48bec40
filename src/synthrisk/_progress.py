# SPDX-License-Identifier: BSD-3-Clause
"""Progress reporting: silent by default in the API, a rich bar in the CLI.

A :class:`Progress` shows counted tasks (``task``: a neighbour search, the generation
of queries). Three optional hooks give those bars their context; the module functions
:func:`metric_plan`, :func:`metric_step` and :func:`stage` call them when the object
has them and do nothing otherwise, so any object with ``task`` still works:

* ``plan(total)``: a run of ``total`` metrics begins (the outermost plan numbers them);
* ``metric(metric_id)``: one metric runs; it yields ``finish(score, status)``;
* ``stage(label)``: a step inside a metric (inference: the secret column in turn).

:class:`RichProgress` shows, on a terminal, one live display per metric
(``[3/13] inference · column 2/9 'sex'`` above the bars of its tasks); when standard
error is not a terminal (a log, CI) it prints one line per finished metric instead,
``[3/13] singling_out  0.135  (1.2 s)``.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.progress import Progress as _RichBars
    from rich.progress import TaskID

__all__ = [
    "NullProgress",
    "Progress",
    "RichProgress",
    "as_progress",
    "metric_plan",
    "metric_step",
    "stage",
]

Advance = Callable[[int], None]


class Finish(Protocol):
    """``finish(score, status, seconds=None)``: what a metric ended with.

    ``status`` as in the results; ``seconds``, the metric's own time where it ran
    elsewhere (a worker process), instead of the time the step was open here.
    """

    def __call__(
        self, score: float | None, status: str, seconds: float | None = None
    ) -> None: ...


class Progress(Protocol):
    """Something that can show the progress of a counted task."""

    def task(
        self, description: str, total: int
    ) -> contextlib.AbstractContextManager[Advance]:
        """Context manager yielding ``advance(n)`` for a task of ``total`` steps."""
        ...


class NullProgress:
    """Shows nothing."""

    @contextlib.contextmanager
    def task(self, description: str, total: int) -> Iterator[Advance]:
        """Yield a no-op ``advance``."""
        yield lambda n: None


def _ignore(score: float | None, status: str, seconds: float | None = None) -> None:
    return None


def metric_plan(progress: Any, total: int) -> contextlib.AbstractContextManager[None]:
    """Announce a run of ``total`` metrics (a no-op for progress objects without ``plan``)."""
    hook = getattr(progress, "plan", None)
    return contextlib.nullcontext() if hook is None else hook(total)


def metric_step(
    progress: Any, metric_id: str
) -> contextlib.AbstractContextManager[Finish]:
    """One metric of the run; yields ``finish(score, status)`` to call with its result."""
    hook = getattr(progress, "metric", None)
    return contextlib.nullcontext(_ignore) if hook is None else hook(metric_id)


def stage(progress: Any, label: str) -> contextlib.AbstractContextManager[None]:
    """Label what the tasks inside the block work on (a no-op without ``stage`` or label)."""
    hook = getattr(progress, "stage", None)
    return contextlib.nullcontext() if hook is None or not label else hook(label)


def _outcome(score: float | None, status: str) -> str:
    if status == "skipped":
        return "skipped"
    return "no score" if score is None else f"{score:.3f}"


class RichProgress:
    """Progress on standard error: live bars on a terminal, one line per metric elsewhere."""

    def __init__(self) -> None:
        from rich.console import Console

        self._console = Console(file=sys.stderr)
        self._labels: list[str] = []
        #: [metrics begun, total] of the outermost plan
        self._plan: list[int] | None = None
        self._bars: _RichBars | None = None
        #: the current metric: its row in the live display, label and outer labels
        self._row: TaskID | None = None
        self._metric = ""
        self._outer = 0

    @property
    def _live(self) -> bool:
        return self._console.is_terminal

    def _new_bars(self) -> _RichBars:
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        return Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=self._console,
            transient=True,
        )

    @contextlib.contextmanager
    def _bars_open(self) -> Iterator[_RichBars]:
        """The live display: the current one, or a new one for this block."""
        if self._bars is not None:
            yield self._bars
            return
        with self._new_bars() as bars:
            self._bars = bars
            try:
                yield bars
            finally:
                self._bars = None

    def _describe_metric(self) -> None:
        if self._bars is not None and self._row is not None:
            parts = [*self._labels[: self._outer], self._metric]
            parts += self._labels[self._outer :]
            self._bars.update(self._row, description=" · ".join(parts))

    @contextlib.contextmanager
    def plan(self, total: int) -> Iterator[None]:
        """Number the metrics of this block ``[i/total]`` (an outer plan keeps its own)."""
        if self._plan is not None:
            yield
            return
        self._plan = [0, total]
        try:
            yield
        finally:
            self._plan = None

    @contextlib.contextmanager
    def metric(self, metric_id: str) -> Iterator[Finish]:
        """One metric: a live row on a terminal, else a line when it finishes."""
        label = metric_id
        if self._plan is not None:
            self._plan[0] += 1
            label = f"[{self._plan[0]}/{self._plan[1]}] {metric_id}"
        ended: list[tuple[float | None, str, float | None]] = []
        start = time.perf_counter()

        def finish(
            score: float | None, status: str, seconds: float | None = None
        ) -> None:
            ended.append((score, status, seconds))

        if not self._live:
            yield finish
            if ended:
                prefix = "".join(f"{text} · " for text in self._labels)
                score, status, seconds = ended[-1]
                if seconds is None:
                    seconds = time.perf_counter() - start
                line = f"{prefix}{label}  {_outcome(score, status)}  ({seconds:.1f} s)"
                print(line, file=self._console.file, flush=True)
            return
        saved = (self._row, self._metric, self._outer)
        with self._bars_open() as bars:
            row = bars.add_task(label, total=None)
            self._row, self._metric, self._outer = row, label, len(self._labels)
            self._describe_metric()
            try:
                yield _ignore
            finally:
                bars.remove_task(row)
                self._row, self._metric, self._outer = saved

    @contextlib.contextmanager
    def stage(self, label: str) -> Iterator[None]:
        """Add ``label`` to the current metric's row (or to the bars of the block)."""
        self._labels.append(label)
        self._describe_metric()
        try:
            yield
        finally:
            self._labels.pop()
            self._describe_metric()

    @contextlib.contextmanager
    def task(self, description: str, total: int) -> Iterator[Advance]:
        """Show one bar while the block runs (under its metric's row when there is one)."""
        if not self._live:
            yield lambda n: None
            return
        if self._row is None and self._labels:
            description = " · ".join([*self._labels, description])
        elif self._row is not None:
            description = f"  {description}"
        with self._bars_open() as bars:
            task_id = bars.add_task(description, total=max(total, 1))
            try:
                yield lambda n: bars.advance(task_id, n)
            finally:
                bars.remove_task(task_id)


def as_progress(progress: bool | Progress | None) -> Progress:
    """Normalise the ``progress`` argument of the public API."""
    if progress is None or progress is False:
        return NullProgress()
    if progress is True:
        return RichProgress()
    return progress
