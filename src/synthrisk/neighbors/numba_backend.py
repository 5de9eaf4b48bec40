# SPDX-License-Identifier: BSD-3-Clause
"""Multi-core numba neighbour search with exact pruning.

The reference rows are grouped by their categorical codes. For one query row, the
(weighted) number of categorical mismatches with every group is a lower bound of the
distance to all rows of that group (each mismatch costs exactly its column's weight,
1 unless weights are given, and every other term is non-negative). Groups are
visited in increasing order of that bound (buckets of it: exact counts without
weights), a row's running sum is abandoned as soon as it can no longer enter the top
k, and the scan stops once the smallest bound left is too large. Query rows are
visited sorted by their codes, so the bounds and buckets of one code combination are
computed once for all its rows. All of this is exact: the result is identical, bit
for bit and index for index, to the numpy backend (ties to the lowest index).

No n × m matrix is ever built: memory is O(n_reference) per thread.

Two other exact searches share this entry point: where one numeric column bounds the
distance well, :mod:`synthrisk.neighbors._projection` walks groups sorted by it; on
references with many groups, :mod:`synthrisk.neighbors._nearby` first compares the
groups one or two mismatches away and leaves only the queries it cannot settle to
the scan above.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import MutableMapping
from typing import Any

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors import _projection
from synthrisk.neighbors._blocks import rows_per_block
from synthrisk.neighbors._projection import find_group
from synthrisk.neighbors._protocol import Search

__all__ = ["group_reference", "kneighbors", "query_order"]


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
    group_codes, inverse = _projection.row_groups(r_cat)
    order = np.argsort(inverse, kind="stable").astype(np.int64)
    counts = np.bincount(inverse, minlength=group_codes.shape[0])
    group_start = np.zeros(group_codes.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=group_start[1:])
    return np.ascontiguousarray(group_codes, dtype=np.int64), group_start, order


# The kernels take their inputs grouped in tuples, which numba passes by value;
# _scan_group is inlined and unpacks them once per group, not once per row:
#   terms = (scale, indicator, clip, nan_one, nan_both, power, num_w)
#       the numeric terms of the distance (see synthrisk.neighbors._spec);
#   ref = (r_num_sorted, order, group_start)
#       reference rows sorted by group, their positions, and the group bounds;
#   top = (best, best_i, is_nan)
#       one query row's running top k: summed terms, positions, missing flags;
#   state = (filled, worst, worst_i)
#       entries of ``top`` in use and its worst entry (the radius until k are found).


@numba.njit(nogil=True, cache=True, inline="always")
def _scan_group(i, g, start_acc, q_num, ref, terms, top, state):  # pragma: no cover
    """Offer every row of group ``g`` to query ``i``'s ``top``; returns the new state."""
    r_num_sorted, order, group_start = ref
    scale, indicator, clip, nan_one, nan_both, power, num_w = terms
    best, best_i, is_nan = top
    filled, worst, worst_i = state
    k = best.shape[0]
    for t in range(group_start[g], group_start[g + 1]):
        j = order[t]
        acc = start_acc
        # until k rows are found, worst is the query's radius (inf without one)
        if acc > worst or (acc == worst and j > worst_i):
            continue
        for f in range(q_num.shape[1]):
            term = _projection.numeric_term(
                q_num[i, f],
                r_num_sorted[t, f],
                indicator[f],
                scale[f],
                clip,
                power,
                nan_one,
                nan_both,
            )
            acc += term * num_w[f]
            if acc > worst or (acc == worst and j > worst_i):
                break
        else:  # every term summed: row j enters the top k if it ranks
            nan_acc = math.isnan(acc)
            key = np.inf if nan_acc else acc
            if filled < k and key > worst:  # a missing distance, beyond a finite radius
                continue
            if filled < k:
                pos = filled
                filled += 1
            elif key < worst or (key == worst and j < worst_i):
                pos = k - 1
            else:
                continue
            while pos > 0 and (
                best[pos - 1] > key or (best[pos - 1] == key and best_i[pos - 1] > j)
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
    return filled, worst, worst_i


@numba.njit(parallel=True, nogil=True, cache=True)
def _knn_kernel(
    q_num, q_cat, ref, groups, terms, bounds, radius, out_d, out_i
):  # pragma: no cover - compiled
    """Top k of every query row (sorted by codes) into ``out_d``, ``out_i``.

    ``groups = (group_codes, group_codes_t)`` and ``bounds = (cat_w, min_cat_w,
    inv_width, n_buckets, divisor)``: the categorical lower bound and its buckets.
    """
    group_codes, group_codes_t = groups
    cat_w, min_cat_w, inv_width, n_buckets, divisor = bounds
    power = terms[5]
    k = out_d.shape[1]
    n_query = q_num.shape[0]
    n_cat = q_cat.shape[1]
    every_column = np.arange(n_cat)
    n_groups = ref[2].shape[0] - 1
    n_chunks = min(n_query, 64)
    for chunk in numba.prange(n_chunks):
        lo = chunk * n_query // n_chunks
        hi = (chunk + 1) * n_query // n_chunks
        bound = np.empty(n_groups)
        bucket_of = np.empty(n_groups, dtype=np.int64)
        bucket_start = np.empty(n_buckets + 1, dtype=np.int64)
        suffix_min = np.empty(n_buckets + 1)
        by_bucket = np.empty(n_groups, dtype=np.int64)
        best = np.empty(k)
        best_i = np.empty(k, dtype=np.int64)
        is_nan = np.empty(k, dtype=np.bool_)
        top = (best, best_i, is_nan)
        own = -1
        ready = False
        for i in range(lo, hi):
            same = i > lo
            if same:
                for c in range(n_cat):
                    if q_cat[i, c] != q_cat[i - 1, c]:
                        same = False
                        break
            if not same:
                # queries arrive sorted by codes: the group of equal codes and the
                # buckets below are shared by all query rows with these codes
                own = find_group(q_cat, i, every_column, group_codes)
                ready = False
            state = (0, radius[i], _NO_ROW)
            if own >= 0:
                # the group with the query's own codes first: every other group is
                # at least min_cat_w away, which often ends the search right here
                state = _scan_group(i, own, 0.0, q_num, ref, terms, top, state)
            if not (state[1] < min_cat_w) and n_groups > (1 if own >= 0 else 0):
                if not ready:
                    # lower bound of every group: its weighted categorical
                    # mismatches, column by column over contiguous codes (a loop
                    # LLVM vectorises), then a counting sort into buckets of it
                    bound[:] = 0.0
                    for c in range(n_cat):
                        code = q_cat[i, c]
                        column = group_codes_t[c]
                        weight = cat_w[c]
                        for g in range(n_groups):
                            if column[g] != code:
                                bound[g] += weight
                    bucket_start[:] = 0
                    suffix_min[:] = np.inf
                    for g in range(n_groups):
                        b = min(int(bound[g] * inv_width), n_buckets - 1)
                        bucket_of[g] = b
                        bucket_start[b + 1] += 1
                        if bound[g] < suffix_min[b]:
                            suffix_min[b] = bound[g]
                    for b in range(n_buckets):
                        bucket_start[b + 1] += bucket_start[b]
                    for b in range(n_buckets - 2, -1, -1):
                        if suffix_min[b + 1] < suffix_min[b]:
                            suffix_min[b] = suffix_min[b + 1]
                    for g in range(n_groups):
                        b = bucket_of[g]
                        by_bucket[bucket_start[b]] = g
                        bucket_start[b] += 1
                    # bucket_start[b] is now the end of bucket b
                    ready = True
                begin = 0
                for b in range(n_buckets):
                    end = bucket_start[b]
                    # every group from bucket b on is at least suffix_min[b] away
                    if suffix_min[b] > state[1]:
                        break
                    for gi in range(begin, end):
                        g = by_bucket[gi]
                        if g == own or bound[g] > state[1]:
                            continue
                        state = _scan_group(
                            i, g, bound[g], q_num, ref, terms, top, state
                        )
                    begin = end
            _projection.write_row(
                i, state[0], best, best_i, is_nan, power, divisor, out_d, out_i
            )


#: index that loses every tie: rows at exactly the radius are kept
_NO_ROW = 2**62

#: buckets of the weighted lower bound per categorical column (unweighted: exact counts)
_BUCKETS_PER_COLUMN = 8


def _bucketing(cat_w: FloatArray, weighted: bool) -> tuple[float, int]:
    """``(1 / bucket width, number of buckets)`` of the categorical lower bound."""
    n_cat = cat_w.shape[0]
    if not weighted:
        return 1.0, n_cat + 1
    n_buckets = _BUCKETS_PER_COLUMN * n_cat + 1
    total = float(cat_w.sum())
    return ((n_buckets - 1) / total if total > 0 else 0.0), n_buckets


def query_order(q_cat: IntArray) -> IntArray:
    """Query row positions sorted by their categorical codes (stable)."""
    if q_cat.shape[1] == 0 or q_cat.shape[0] < 2:
        return np.arange(q_cat.shape[0], dtype=np.int64)
    return np.lexsort(q_cat.T[::-1]).astype(np.int64)


def kneighbors(
    search: Search, *, pilots: MutableMapping[tuple[Any, ...], int] | None = None
) -> tuple[FloatArray, IntArray]:
    """:meth:`NeighborBackend.kneighbors` by the pruned scan of the module docstring.

    ``pilots``: the projection walk's pilot choices, shared by the searches of one
    reference (see :func:`synthrisk.neighbors._projection.plan`).
    """
    from synthrisk.neighbors import _nearby

    spec, r_cat = search.spec, search.r_cat
    group_codes, group_start, order = group_reference(r_cat)
    # one numeric column that bounds the distance well: walk groups sorted by it
    walk = _projection.plan(search, n_groups=group_codes.shape[0], pilots=pilots)
    if walk is not None:
        return _projection.kneighbors(search, walk)
    num_w = np.ones(search.q_num.shape[1]) if spec.weights is None else spec.weights
    terms = (
        np.ascontiguousarray(spec.scale, dtype=np.float64),
        np.ascontiguousarray(spec.indicator, dtype=np.bool_),
        spec.clip,
        float(spec.nan_one),
        float(spec.nan_both),
        spec.power,
        np.ascontiguousarray(num_w, dtype=np.float64),
    )
    cat_w = np.ascontiguousarray(
        np.ones(r_cat.shape[1]) if spec.cat_weights is None else spec.cat_weights,
        dtype=np.float64,
    )
    reference = (group_codes, group_start, order, terms, cat_w)
    # many groups: first the groups one or two categorical mismatches away
    first = _nearby.first_pass(search, *reference)
    if first is None:
        distances, indices = _grouped_scan(search, *reference)
    else:
        distances, indices, rest = first
        if rest.size:
            radius = None if search.radius is None else np.asarray(search.radius)
            again = dataclasses.replace(
                search,
                q_num=search.q_num[rest],
                q_cat=search.q_cat[rest],
                radius=None if radius is None else radius[rest],
                progress=None,
            )
            distances[rest], indices[rest] = _grouped_scan(again, *reference)
    return spec.within(distances, indices, search.radius)


def _grouped_scan(
    search: Search,
    group_codes: IntArray,
    group_start: IntArray,
    order: IntArray,
    terms: tuple[object, ...],
    cat_w: FloatArray,
) -> tuple[FloatArray, IntArray]:
    """The scan of the module docstring (distances before the radius is applied)."""
    spec, k, r_num = search.spec, search.k, search.r_num
    n_query = search.q_num.shape[0]
    distances = np.empty((n_query, k), dtype=np.float64)
    indices = np.empty((n_query, k), dtype=np.int64)
    perm = query_order(search.q_cat)
    sum_radius = np.ascontiguousarray(spec.sum_radius(search.radius, n_query)[perm])
    q_num = np.ascontiguousarray(search.q_num[perm])
    q_cat = np.ascontiguousarray(search.q_cat[perm], dtype=np.int32)
    # blocks bound the progress granularity and the per-block output buffers
    step = rows_per_block(
        8 * (r_num.shape[0] + group_codes.shape[0]),
        working_memory=search.working_memory,
        n_rows=n_query,
    )
    step = min(step, max(512, -(-n_query // 40)))
    inv_width, n_buckets = _bucketing(cat_w, spec.cat_weights is not None)
    bounds = (
        cat_w,
        float(cat_w.min(initial=np.inf)),
        inv_width,
        n_buckets,
        float(spec.divisor),
    )
    ref = (np.ascontiguousarray(r_num[order]), order, group_start)
    groups = (
        np.ascontiguousarray(group_codes, dtype=np.int32),
        np.ascontiguousarray(group_codes.T, dtype=np.int32),
    )
    out_d = np.empty((n_query, k), dtype=np.float64)
    out_i = np.empty((n_query, k), dtype=np.int64)
    for start in range(0, n_query, step):
        stop = min(start + step, n_query)
        _knn_kernel(
            q_num[start:stop],
            q_cat[start:stop],
            ref,
            groups,
            terms,
            bounds,
            sum_radius[start:stop],
            out_d[start:stop],
            out_i[start:stop],
        )
        if search.progress is not None:
            search.progress(stop - start)
    distances[perm] = out_d
    indices[perm] = out_i
    return distances, indices
