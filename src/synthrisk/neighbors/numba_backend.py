# SPDX-License-Identifier: BSD-3-Clause
"""Multi-core numba neighbour search with exact pruning.

The reference rows are grouped by their categorical codes. For one query row, the
number of categorical mismatches with every group is a lower bound of the distance
to all rows of that group (each mismatch costs exactly 1 and every other term is
non-negative). Groups are visited in increasing order of that bound, a row's running
sum is abandoned as soon as it can no longer enter the top k, and the scan stops
once the bound itself is too large. All of this is exact: the result is identical,
bit for bit and index for index, to the numpy backend (ties to the lowest index).

No n × m matrix is ever built: memory is O(n_reference) per thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._blocks import rows_per_block
from synthrisk.neighbors._spec import DistanceSpec

__all__ = ["group_reference", "kneighbors"]


def group_reference(r_cat: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Group reference rows by categorical codes.

    Returns
    -------
    group_codes : ndarray of shape (n_groups, n_categorical)
    group_start : ndarray of shape (n_groups + 1,)
        Group g holds ``order[group_start[g]:group_start[g + 1]]``.
    order : ndarray of shape (n_reference,)
        Reference row positions sorted by group, ascending within a group.
    """
    n_ref = r_cat.shape[0]
    if r_cat.shape[1] == 0:
        return (
            np.zeros((1, 0), dtype=np.int64),
            np.array([0, n_ref], dtype=np.int64),
            np.arange(n_ref, dtype=np.int64),
        )
    group_codes, inverse = np.unique(r_cat, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable").astype(np.int64)
    counts = np.bincount(inverse, minlength=group_codes.shape[0])
    group_start = np.zeros(group_codes.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=group_start[1:])
    return np.ascontiguousarray(group_codes, dtype=np.int64), group_start, order


@numba.njit(parallel=True, nogil=True, cache=True)
def _knn_kernel(
    q_num,
    q_cat,
    r_num_sorted,
    order,
    group_codes_t,
    group_start,
    scale,
    indicator,
    clip,
    nan_one,
    nan_both,
    power,
    divisor,
    k,
    out_d,
    out_i,
):  # pragma: no cover - compiled
    n_query = q_num.shape[0]
    n_num = q_num.shape[1]
    n_cat = q_cat.shape[1]
    n_groups = group_start.shape[0] - 1
    n_chunks = min(n_query, 64)
    for chunk in numba.prange(n_chunks):
        lo = chunk * n_query // n_chunks
        hi = (chunk + 1) * n_query // n_chunks
        mismatches = np.empty(n_groups, dtype=np.int32)
        bucket_start = np.empty(n_cat + 2, dtype=np.int64)
        by_bucket = np.empty(n_groups, dtype=np.int64)
        best = np.empty(k)
        best_i = np.empty(k, dtype=np.int64)
        is_nan = np.empty(k, dtype=np.bool_)
        for i in range(lo, hi):
            # lower bound of every group: its number of categorical mismatches
            # column by column over contiguous codes: a loop LLVM vectorises
            mismatches[:] = 0
            for c in range(n_cat):
                code = q_cat[i, c]
                column = group_codes_t[c]
                for g in range(n_groups):
                    mismatches[g] += column[g] != code
            bucket_start[:] = 0
            for g in range(n_groups):
                bucket_start[mismatches[g] + 1] += 1
            for b in range(n_cat + 1):
                bucket_start[b + 1] += bucket_start[b]
            for g in range(n_groups):
                m = mismatches[g]
                by_bucket[bucket_start[m]] = g
                bucket_start[m] += 1
            # bucket_start[b] is now the end of bucket b
            filled = 0
            worst = np.inf
            worst_i = -1
            begin = 0
            for b in range(n_cat + 1):
                end = bucket_start[b]
                if filled == k and b > worst:
                    break
                for gi in range(begin, end):
                    g = by_bucket[gi]
                    for t in range(group_start[g], group_start[g + 1]):
                        j = order[t]
                        acc = float(b)
                        if filled == k and (
                            acc > worst or (acc == worst and j > worst_i)
                        ):
                            continue
                        pruned = False
                        for f in range(n_num):
                            x = q_num[i, f]
                            y = r_num_sorted[t, f]
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
                            if filled == k and (
                                acc > worst or (acc == worst and j > worst_i)
                            ):
                                pruned = True
                                break
                        if pruned:
                            continue
                        nan_acc = math.isnan(acc)
                        key = np.inf if nan_acc else acc
                        if filled < k:
                            pos = filled
                            filled += 1
                        elif key < worst or (key == worst and j < worst_i):
                            pos = k - 1
                        else:
                            continue
                        while pos > 0 and (
                            best[pos - 1] > key
                            or (best[pos - 1] == key and best_i[pos - 1] > j)
                        ):
                            best[pos] = best[pos - 1]
                            best_i[pos] = best_i[pos - 1]
                            is_nan[pos] = is_nan[pos - 1]
                            pos -= 1
                        best[pos] = key
                        best_i[pos] = j
                        is_nan[pos] = nan_acc
                        if filled == k:
                            worst = best[k - 1]
                            worst_i = best_i[k - 1]
                begin = end
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
    group_codes, group_start, order = group_reference(r_cat)
    group_codes_t = np.ascontiguousarray(group_codes.T, dtype=np.int32)
    q_cat = q_cat.astype(np.int32)
    r_num_sorted = np.ascontiguousarray(r_num[order])
    # blocks bound the progress granularity and the per-block output buffers
    step = rows_per_block(
        8 * (r_num.shape[0] + group_codes.shape[0]),
        working_memory=working_memory,
        n_rows=n_query,
    )
    step = min(step, max(512, -(-n_query // 40)))
    scale = np.ascontiguousarray(spec.scale, dtype=np.float64)
    indicator = np.ascontiguousarray(spec.indicator, dtype=np.bool_)
    for start in range(0, n_query, step):
        stop = min(start + step, n_query)
        _knn_kernel(
            q_num[start:stop],
            q_cat[start:stop],
            r_num_sorted,
            order,
            group_codes_t,
            group_start,
            scale,
            indicator,
            spec.clip,
            float(spec.nan_one),
            float(spec.nan_both),
            spec.power,
            float(spec.divisor),
            k,
            distances[start:stop],
            indices[start:stop],
        )
        if progress is not None:
            progress(stop - start)
    return distances, indices
