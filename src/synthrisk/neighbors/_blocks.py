# SPDX-License-Identifier: BSD-3-Clause
"""Block sizes under a working-memory budget (the scikit-learn idea)."""

from __future__ import annotations

from synthrisk.settings import get_config

__all__ = ["rows_per_block"]


def rows_per_block(
    row_bytes: int, *, working_memory: float | None = None, n_rows: int | None = None
) -> int:
    """Number of query rows whose temporaries fit in ``working_memory`` MiB (at least 1)."""
    budget = get_config().working_memory if working_memory is None else working_memory
    rows = int(budget * 2**20 // max(row_bytes, 1))
    rows = max(rows, 1)
    if n_rows is not None:
        rows = min(rows, max(n_rows, 1))
    return rows
