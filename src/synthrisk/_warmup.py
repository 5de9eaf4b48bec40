# SPDX-License-Identifier: BSD-3-Clause
"""Numba's one-time start-up, overlapped with the preparation of the tables.

The first compiled kernel a process calls, even one loaded from numba's cache, pays for
the CPU target's registries (about 0.2 s): on small tables that was most of a metric's
time (singling out on 5,000 Adult rows: 0.34 s on a cold first call, 0.13 s warm).
:func:`numba_warmup` does that work in a background thread while the tables are
validated, encoded and checked, and joins it before any metric runs (and before any
worker process is forked).
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["numba_warmup"]

_done = threading.Event()


def _start_numba() -> None:
    """Load numba's CPU target registries (what its first kernel call would do)."""
    try:
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()
    except Exception:  # pragma: no cover - a warm-up never fails a run
        return
    finally:
        _done.set()


@contextlib.contextmanager
def numba_warmup() -> Iterator[None]:
    """Start numba's CPU target in a background thread for the duration of the block.

    Once per process; the thread is joined when the block ends, so nothing runs
    beside the metrics.
    """
    if _done.is_set():
        yield
        return
    thread = threading.Thread(target=_start_numba, name="synthrisk-numba-warmup")
    thread.start()
    try:
        yield
    finally:
        thread.join()
