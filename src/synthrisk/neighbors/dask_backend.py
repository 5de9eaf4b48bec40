# SPDX-License-Identifier: BSD-3-Clause
"""Dask neighbour search: query blocks as dask tasks, each running the numba kernel.

The reference table must fit in the memory of every worker (it is shipped to each
task once); the query side is split into blocks of ``working_memory`` size, so the
work spreads over a dask cluster (``dask.distributed``) or the local threaded
scheduler. Results are identical to the numpy and numba backends.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from synthrisk._optional import import_optional
from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors import numba_backend
from synthrisk.neighbors._blocks import rows_per_block
from synthrisk.neighbors._spec import DistanceSpec

__all__ = ["kneighbors"]


def kneighbors(
    q_num: FloatArray,
    q_cat: IntArray,
    r_num: FloatArray,
    r_cat: IntArray,
    spec: DistanceSpec,
    *,
    k: int,
    working_memory: float | None,
    progress: Callable[[int], None] | None = None,
) -> tuple[FloatArray, IntArray]:
    """k nearest reference rows of every query row, computed as dask tasks."""
    dask = import_optional("dask", extra="dask")
    n_query = q_num.shape[0]
    step = rows_per_block(
        8 * (r_num.shape[0] + 64), working_memory=working_memory, n_rows=n_query
    )
    step = max(step, 1024)
    reference = dask.delayed((r_num, r_cat), pure=True)

    def block(
        start: int, stop: int, ref: tuple[FloatArray, IntArray]
    ) -> tuple[FloatArray, IntArray]:
        return numba_backend.kneighbors(
            q_num[start:stop],
            q_cat[start:stop],
            ref[0],
            ref[1],
            spec,
            k=k,
            working_memory=working_memory,
        )

    tasks = [
        dask.delayed(block)(s, min(s + step, n_query), reference)
        for s in range(0, n_query, step)
    ]
    parts = dask.compute(*tasks)
    if progress is not None:
        progress(n_query)
    if not parts:
        return np.empty((0, k)), np.empty((0, k), dtype=np.int64)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
