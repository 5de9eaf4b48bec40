# SPDX-License-Identifier: BSD-3-Clause
"""Progress reporting: silent by default in the API, a rich bar in the CLI."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Protocol

__all__ = ["NullProgress", "Progress", "RichProgress", "as_progress"]

Advance = Callable[[int], None]


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


class RichProgress:
    """A rich progress bar on standard error."""

    def __init__(self) -> None:
        from rich.console import Console

        self._console = Console(file=sys.stderr)

    @contextlib.contextmanager
    def task(self, description: str, total: int) -> Iterator[Advance]:
        """Show one bar while the block runs."""
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=self._console,
            transient=True,
            disable=not self._console.is_terminal,
        ) as bar:
            task_id = bar.add_task(description, total=max(total, 1))
            yield lambda n: bar.advance(task_id, n)


def as_progress(progress: bool | Progress | None) -> Progress:
    """Normalise the ``progress`` argument of the public API."""
    if progress is None or progress is False:
        return NullProgress()
    if progress is True:
        return RichProgress()
    return progress
