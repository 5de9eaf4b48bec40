# SPDX-License-Identifier: BSD-3-Clause
"""Multi-core numba neighbour search.

One pass over the reference per query row keeps a sorted top-k in registers-sized
arrays (no n × m matrix at all); the running sum of a pair is abandoned as soon as it
reaches the current k-th best, which is exact because every term is non-negative.
Query rows are processed in blocks (for progress and bounded output buffers) and in
parallel within a block with ``prange``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._blocks import rows_per_block
from synthrisk.neighbors._spec import DistanceSpec

__all__ = ["kneighbors"]


@numba.njit(parallel=True, nogil=True, cache=True)
def _knn_kernel(  # noqa: PLR0913 - a kernel's arguments are its data
    q_num, q_cat, r_num, r_cat, scale, indicator, clip, nan_one, nan_both, power, divisor, k, out_d, out_i
):  # pragma: no cover - compiled
    n_query = q_num.shape[0]
    n_ref = r_num.shape[0]
    n_num = q_num.shape[1]
    n_cat = q_cat.shape[1]
    for i in numba.prange(n_query):
        best = np.full(k, np.inf)
        best_i = np.full(k, -1, dtype=np.int64)
        is_nan = np.zeros(k, dtype=np.bool_)
        filled = 0
        worst = np.inf
        for j in range(n_ref):
            acc = 0.0
            pruned = False
            for f in range(n_num):
                x = q_num[i, f]
                y = r_num[j, f]
                x_nan = math.isnan(x)
                y_nan = math.isnan(y)
                if x_nan or y_nan:
                    term = nan_both if (x_nan and y_nan) else nan_one
                else:
                    diff = abs(x - y)
                    if indicator[f]:
                        term = 1.0 if diff > 0 else 0.0
                    else:
                        term = diff / scale[f]
                        if clip and term > 1.0:
                            term = 1.0
                    if power == 2:
                        term = term * term
                acc += term
                if acc >= worst:
                    pruned = True
                    break
            if pruned:
                continue
            for c in range(n_cat):
                if q_cat[i, c] != r_cat[j, c]:
                    acc += 1.0
                    if acc >= worst:
                        pruned = True
                        break
            if pruned:
                continue
            nan_acc = math.isnan(acc)
            key = np.inf if nan_acc else acc
            if filled < k:
                pos = filled
                filled += 1
            elif key < worst:
                pos = k - 1
            else:
                continue
            while pos > 0 and best[pos - 1] > key:
                best[pos] = best[pos - 1]
                best_i[pos] = best_i[pos - 1]
                is_nan[pos] = is_nan[pos - 1]
                pos -= 1
            best[pos] = key
            best_i[pos] = j
            is_nan[pos] = nan_acc
            if filled == k:
                worst = best[k - 1]
        for t in range(k):
            if is_nan[t]:
                out_d[i, t] = np.nan
            elif power == 2:
                out_d[i, t] = math.sqrt(best[t]) / divisor
            else:
                out_d[i, t] = best[t] / divisor
            out_i[i, t] = best_i[t]


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
    """k nearest reference rows of every query row, lowest index first among ties."""
    n_query = q_num.shape[0]
    distances = np.empty((n_query, k), dtype=np.float64)
    indices = np.empty((n_query, k), dtype=np.int64)
    # blocks bound the progress granularity; the kernel itself needs O(k) per row
    step = rows_per_block(8 * r_num.shape[0], working_memory=working_memory, n_rows=n_query)
    step = min(step, max(256, -(-n_query // 50)))
    scale = np.ascontiguousarray(spec.scale, dtype=np.float64)
    indicator = np.ascontiguousarray(spec.indicator, dtype=np.bool_)
    for start in range(0, n_query, step):
        stop = min(start + step, n_query)
        _knn_kernel(
            q_num[start:stop], q_cat[start:stop], r_num, r_cat, scale, indicator,
            spec.clip, float(spec.nan_one), float(spec.nan_both), spec.power,
            float(spec.divisor), k, distances[start:stop], indices[start:stop],
        )  # fmt: skip
        if progress is not None:
            progress(stop - start)
    return distances, indices
