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
computed once for all its rows. Without weights the bound is the number of
mismatching columns: the groups are counted over narrow codes and listed lazily,
level by level, only as far as the query's k-th best distance so far
(:func:`_knn_levels_rows`). Inside a group, the rows are the leaves of a small
k-d tree whose nodes keep their numeric box (:mod:`synthrisk.neighbors._trees`): a
node, or a whole group, is skipped when its mismatches plus the terms of its box's
point nearest the query already exceed the k-th best. All of this is exact: the
result is identical, bit for bit and index for index, to the numpy backend (ties to
the lowest index).

No n × m matrix is ever built: memory is O(n_reference) per thread.

Two other exact searches share this entry point: where one numeric column bounds the
distance well, :mod:`synthrisk.neighbors._projection` walks groups sorted by it; on
references with many groups, :mod:`synthrisk.neighbors._nearby` first compares the
groups one or two mismatches away and leaves only the queries it cannot settle to
the scan above. All three are built from the compiled blocks of
:mod:`synthrisk.neighbors._kernels`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import MutableMapping
from typing import Any

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors import _kernels, _projection
from synthrisk.neighbors._kernels import query_order
from synthrisk.neighbors._nearby import first_pass
from synthrisk.neighbors._protocol import Search
from synthrisk.neighbors._trees import LEAF_ROWS

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
    group_codes, inverse, order = _projection.grouped_rows(r_cat)
    counts = np.bincount(inverse, minlength=group_codes.shape[0])
    group_start = np.zeros(group_codes.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=group_start[1:])
    return np.ascontiguousarray(group_codes, dtype=np.int64), group_start, order


@numba.njit(parallel=True, nogil=True, cache=True)
def _knn_kernel(
    q_num, q_cat, ref, groups, terms, bounds, radius, out_d, out_i
):  # pragma: no cover - compiled
    """:func:`_knn_rows` over chunks of the query rows, on every core."""
    n_query = q_num.shape[0]
    n_chunks = min(n_query, 64)
    tops = _kernels.new_tops(n_chunks, out_d.shape[1])
    for chunk in numba.prange(n_chunks):
        _knn_rows(
            np.int64(chunk * n_query // n_chunks),
            np.int64((chunk + 1) * n_query // n_chunks),
            _kernels.top_row(tops, chunk),
            q_num,
            q_cat,
            ref,
            groups,
            terms,
            bounds,
            radius,
            out_d,
            out_i,
        )


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _knn_rows(
    lo, hi, top, q_num, q_cat, ref, groups, terms, bounds, radius, out_d, out_i
):  # pragma: no cover - compiled
    """Top k of query rows ``lo`` to ``hi`` (sorted by codes) into ``out_d``, ``out_i``.

    ``top``: the chunk's running top k (:func:`~synthrisk.neighbors._kernels.top_row`).
    ``groups = (group_codes, group_codes_t)`` and ``bounds = (cat_w, min_cat_w,
    inv_width, n_buckets, divisor)``: the categorical lower bound and its buckets.
    """
    group_codes, group_codes_t = groups
    cat_w, min_cat_w, inv_width, n_buckets, divisor = bounds
    power = terms[5]
    n_cat = q_cat.shape[1]
    every_column = np.arange(n_cat)
    n_groups = ref[2].shape[0] - 1
    bound = np.empty(n_groups)
    bucket_of = np.empty(n_groups, dtype=np.int64)
    bucket_start = np.empty(n_buckets + 1, dtype=np.int64)
    suffix_min = np.empty(n_buckets + 1)
    by_bucket = np.empty(n_groups, dtype=np.int64)
    own = -1
    ready = False
    for i in range(lo, hi):
        if not _kernels.same_codes(q_cat, i, lo, every_column):
            # queries arrive sorted by codes: the group of equal codes and the
            # buckets below are shared by all query rows with these codes
            own = _kernels.find_group(q_cat, i, every_column, group_codes)
            ready = False
        state = (0, radius[i], _kernels.NO_ROW)
        if own >= 0:
            # the group with the query's own codes first: every other group is
            # at least min_cat_w away, which often ends the search right here
            state = _kernels.scan_group(i, own, 0.0, q_num, ref, terms, top, state)
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
                    state = _kernels.scan_group(
                        i, g, bound[g], q_num, ref, terms, top, state
                    )
                begin = end
        _kernels.write_row(i, state[0], top, power, divisor, out_d, out_i)


@numba.njit(parallel=True, nogil=True, cache=True)
def _knn_levels_kernel(
    q_num, q_cat, ref, groups, terms, divisor, radius, out_d, out_i
):  # pragma: no cover - compiled
    """:func:`_knn_levels_rows` over chunks of the query rows, on every core."""
    n_query = q_num.shape[0]
    n_chunks = min(n_query, 64)
    tops = _kernels.new_tops(n_chunks, out_d.shape[1])
    for chunk in numba.prange(n_chunks):
        _knn_levels_rows(
            np.int64(chunk * n_query // n_chunks),
            np.int64((chunk + 1) * n_query // n_chunks),
            _kernels.top_row(tops, chunk),
            q_num,
            q_cat,
            ref,
            groups,
            terms,
            divisor,
            radius,
            out_d,
            out_i,
        )


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _knn_levels_rows(
    lo, hi, top, q_num, q_cat, ref, groups, terms, divisor, radius, out_d, out_i
):  # pragma: no cover - compiled
    """:func:`_knn_rows` without categorical weights: groups listed by mismatch count.

    Every categorical mismatch costs exactly 1, so a group's lower bound is its
    number of mismatching columns (its *level*). The levels are counted in bytes
    over narrow codes (a loop LLVM vectorises many lanes wide), and the groups of
    the levels a query still needs are listed lazily: a branch-free pass collects
    the groups of the next levels (up to the query's k-th best sum, which only
    shrinks) and a counting sort orders that short list. A row far from every
    group (a random row) lists a few hundred groups instead of sorting them all.
    ``groups = (group_codes, group_codes_t)`` hold the codes as small unsigned
    integers (a query code no group has is a value no group holds). As everywhere
    in the grouped scan, a group of several rows is skipped when its level plus
    the terms of its numeric box's point nearest the query already exceed the k-th
    best sum (:func:`synthrisk.neighbors._kernels.box_beyond`).
    """
    group_codes, group_codes_t = groups
    power = terms[5]
    k = out_d.shape[1]
    n_cat = q_cat.shape[1]
    every_column = np.arange(n_cat)
    n_groups = ref[2].shape[0] - 1
    level = np.zeros(n_groups, dtype=np.uint8)
    listed = np.empty(n_groups, dtype=np.int64)
    fresh = np.empty(n_groups, dtype=np.int64)
    # level_end[l]: end of level l's groups in ``listed`` (levels 1..covered)
    level_end = np.zeros(n_cat + 1, dtype=np.int64)
    own = -1
    ready = False
    covered = 0
    guess = 0
    for i in range(lo, hi):
        if not _kernels.same_codes(q_cat, i, lo, every_column):
            # queries arrive sorted by codes: the group of equal codes and the
            # levels below are shared by all query rows with these codes
            own = _kernels.find_group(q_cat, i, every_column, group_codes)
            ready = False
        state = (0, radius[i], _kernels.NO_ROW)
        if own >= 0:
            # the own group first: every other group is at least 1 away
            state = _kernels.scan_group(i, own, 0.0, q_num, ref, terms, top, state)
        if not (state[1] < 1.0) and n_groups > (1 if own >= 0 else 0):
            if not ready:
                level[:] = 0
                for c in range(n_cat):
                    code = q_cat[i, c]
                    column = group_codes_t[c]
                    for g in range(n_groups):
                        level[g] += np.uint8(column[g] != code)
                covered = 0
                ready = True
            for lv in range(1, n_cat + 1):
                bound = float(lv)
                if bound > state[1]:
                    break
                if lv > covered:
                    # list the levels up to the k-th best sum so far (two
                    # levels while fewer than k rows are found)
                    top_level = n_cat
                    if state[1] < n_cat:
                        top_level = max(lv, int(state[1]))
                    elif state[0] < k:
                        # fewer than k rows found yet: as far as the previous
                        # query of the chunk needed (at least two levels), so
                        # that far rows usually list their groups in one pass
                        top_level = min(n_cat, max(lv + 1, guess))
                    n_fresh = 0
                    for g in range(n_groups):
                        fresh[n_fresh] = g
                        n_fresh += (level[g] > covered) & (level[g] <= top_level)
                    start = level_end[covered] if covered > 0 else 0
                    for lvl in range(covered + 1, top_level + 1):
                        level_end[lvl] = 0
                    for t in range(n_fresh):
                        level_end[level[fresh[t]]] += 1
                    for lvl in range(covered + 1, top_level + 1):
                        size = level_end[lvl]
                        level_end[lvl] = start
                        start += size
                    for t in range(n_fresh):
                        g = fresh[t]
                        lvl = level[g]
                        listed[level_end[lvl]] = g
                        level_end[lvl] += 1
                    covered = top_level
                begin = level_end[lv - 1] if lv > 1 else 0
                state = _kernels.scan_groups(
                    i,
                    listed[begin : level_end[lv]],
                    bound,
                    q_num,
                    ref,
                    terms,
                    top,
                    state,
                )
        if state[0] == k and state[1] < n_cat:
            guess = int(state[1])
        _kernels.write_row(i, state[0], top, power, divisor, out_d, out_i)


def _narrow_codes(
    group_codes: IntArray, q_cat: IntArray
) -> tuple[IntArray, IntArray] | None:
    """Group and query codes as the smallest unsigned integers that keep every match.

    Column by column the group codes are shifted to start at 0; a query code no
    group holds in that column becomes the type's largest value, which no group
    holds. None when a column's codes span more than 65,535 values.
    """
    n_cat = group_codes.shape[1]
    if n_cat == 0 or group_codes.shape[0] == 0:
        return None
    low = group_codes.min(axis=0)
    width = group_codes.max(axis=0) - low + 1
    widest = int(width.max())
    if widest < 255:
        dtype: type[np.unsignedinteger[Any]] = np.uint8
    elif widest < 65535:
        dtype = np.uint16
    else:
        return None
    absent = np.iinfo(dtype).max
    shifted = q_cat - low
    shifted = np.where((shifted >= 0) & (shifted < width), shifted, absent)
    return (group_codes - low).astype(dtype), shifted.astype(dtype)


#: trees inside the groups are built when the query has at least 1/this of the
#: reference's rows (building them costs about a fifth of a microsecond per row)
_TREE_QUERY_SHARE = 8

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


def kneighbors(
    search: Search, *, pilots: MutableMapping[tuple[Any, ...], int] | None = None
) -> tuple[FloatArray, IntArray]:
    """:meth:`NeighborBackend.kneighbors` by the pruned scan of the module docstring.

    ``pilots``: the projection walk's pilot choices, shared by the searches of one
    reference (see :func:`synthrisk.neighbors._projection.plan`).
    """
    spec, r_cat = search.spec, search.r_cat
    group_codes, group_start, order = group_reference(r_cat)
    terms, cat_w = _kernels.kernel_terms(spec, search.q_num.shape[1], r_cat.shape[1])
    n_query = search.q_num.shape[0]
    reference = _kernels.GroupedReference(
        group_codes,
        group_start,
        order,
        terms,
        cat_w,
        # trees inside the groups pay for their building with many query rows
        leaf_rows=LEAF_ROWS if n_query * _TREE_QUERY_SHARE >= r_cat.shape[0] else None,
    )
    n_pairs = n_query * search.r_num.shape[0]
    # one numeric column that bounds the distance well: walk groups sorted by it,
    # unless the pilot finds the scan below faster on the same query rows
    walk = _projection.plan(
        search,
        n_groups=group_codes.shape[0],
        pilots=pilots,
        scan=lambda pilot: _scan(pilot, reference, n_pairs=n_pairs, n_query=n_query),
    )
    if walk is not None:
        return _projection.kneighbors(search, walk)
    distances, indices = _scan(search, reference, n_pairs=n_pairs, n_query=n_query)
    return spec.within(distances, indices, search.radius)


def _scan(
    search: Search,
    reference: _kernels.GroupedReference,
    *,
    n_pairs: int,
    n_query: int | None = None,
) -> tuple[FloatArray, IntArray]:
    """The first pass where it pays, then the grouped scan (before the radius).

    ``n_pairs`` and ``n_query``: the (query, reference) pairs and the query rows
    of the whole search, which decide whether the first pass runs (the same
    choice on the pilot's rows).
    """
    # many groups: first the groups one or two categorical mismatches away
    first = first_pass(search, reference, n_pairs=n_pairs, n_query=n_query)
    if first is None:
        return _grouped_scan(search, reference)
    distances, indices, rest, limit = first
    if rest.size:
        again = dataclasses.replace(
            search,
            q_num=search.q_num[rest],
            q_cat=search.q_cat[rest],
            radius=None,
            progress=None,
        )
        # the scan starts from the k-th best sum the pass found (its radius, or
        # the search's radius while fewer than k were found): rows at exactly it
        # are kept, so the same k rows come out, with less to compare
        distances[rest], indices[rest] = _grouped_scan(
            again, reference, sum_radius=limit[rest]
        )
    return distances, indices


def _grouped_scan(
    search: Search,
    reference: _kernels.GroupedReference,
    *,
    sum_radius: FloatArray | None = None,
) -> tuple[FloatArray, IntArray]:
    """The scan of the module docstring (distances before the radius is applied).

    ``sum_radius``: radii in the kernels' units instead of ``search.radius``.
    """
    spec, r_num = search.spec, search.r_num
    group_codes, cat_w = reference.codes, reference.cat_w
    ref = reference.rows(r_num)
    row_bytes = 8 * (r_num.shape[0] + group_codes.shape[0])
    narrow = None
    if spec.cat_weights is None and group_codes.shape[1] <= 255:
        narrow = _narrow_codes(group_codes, search.q_cat)
    if narrow is not None:
        codes, q_codes = narrow
        distances, indices = _kernels.run_blocks(
            _knn_levels_kernel,
            dataclasses.replace(search, q_cat=q_codes),
            query_order(search.q_cat),
            codes.dtype,
            (
                ref,
                (np.ascontiguousarray(codes), np.ascontiguousarray(codes.T)),
                reference.terms,
                float(spec.divisor),
            ),
            row_bytes=row_bytes,
            sum_radius=sum_radius,
        )
        return distances, indices
    inv_width, n_buckets = _bucketing(cat_w, spec.cat_weights is not None)
    bounds = (
        cat_w,
        float(cat_w.min(initial=np.inf)),
        inv_width,
        n_buckets,
        float(spec.divisor),
    )
    groups = (
        np.ascontiguousarray(group_codes, dtype=np.int32),
        np.ascontiguousarray(group_codes.T, dtype=np.int32),
    )
    distances, indices = _kernels.run_blocks(
        _knn_kernel,
        search,
        query_order(search.q_cat),
        np.int32,
        (ref, groups, reference.terms, bounds),
        row_bytes=row_bytes,
        sum_radius=sum_radius,
    )
    return distances, indices
