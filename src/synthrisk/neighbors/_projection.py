# SPDX-License-Identifier: BSD-3-Clause
# mypy: disallow-untyped-defs=False
# (numba kernels: numba infers their types from the arrays they are called with)
"""Exact mixed-type neighbour search that walks groups sorted by one numeric column.

The reference rows are grouped by the codes of some categorical columns, the *key*
columns, and within a group sorted by one numeric column, the *projection* column.
For one query row the groups are visited in increasing order of their lower bound,
the weighted mismatches of the query's codes in the key columns. Within a group the
walk starts at the query's value of the projection column and moves up, then down;
the group's bound plus that column's weighted term is a lower bound of a row's
distance, and it only grows away from the query, so each side stops at the first
row whose bound exceeds the current k-th best distance (floating-point addition
and the term are monotone, whatever the column's place in the sum). Rows missing
the projection column are kept apart and always compared; a query missing it
compares the whole group. A compared row's categorical sum, over every column in
column order, is read from a table of sums of weight subsets (summed in the same
order), and its numeric terms are added in column order with early abandoning.

Pruning is strict (a row at exactly the k-th best distance is still compared, for
the tie rule), and every compared row goes through the same summation and top-k
insertion as the kernel of :mod:`synthrisk.neighbors.numba_backend` (both are
:mod:`synthrisk.neighbors._kernels`'s): the result is
identical, bit for bit and index for index, to the numpy backend (ties to the lowest
reference position). Only the speed depends on the key and projection columns.

This pays where one numeric column bounds the distance well: SynthEval's entropy
weights (a numeric column carries most of the weight), or a few categorical columns
that split the reference into few large groups. :func:`plan` decides, and
:mod:`synthrisk.neighbors.numba_backend` asks it before its own search. Memory is
O(n_reference) in all.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, MutableMapping
from typing import Any

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._kernels import (
    NO_ROW,
    find_group,
    kernel_terms,
    mixed_radix_key,
    new_top,
    offer,
    present_term,
    run_blocks,
    same_codes,
    stable_key_order,
    write_row,
)
from synthrisk.neighbors._protocol import Search
from synthrisk.neighbors._spec import DistanceSpec

__all__ = ["SCAN", "Plan", "kneighbors", "plan", "prefer_scan", "row_groups"]

#: groups up to this size are compared row by row, without a binary search
_LINEAR_GROUP = 8

#: mismatches of up to this many categorical columns are summed by a table lookup
_MASK_COLUMNS = 10

#: pairs of reference rows sampled to rank the projection columns
_SAMPLE_PAIRS = 4096

#: the key columns split the reference into at most one group per this many rows
_ROWS_PER_GROUP = 256

#: smaller searches keep the grouped scan (the plan would cost more than it saves)
_MIN_PAIRS = 10**6

#: projection columns tried on a sample of query rows when the search is this large
_PILOT_PAIRS = 2 * 10**7
#: query rows of that sample, and projection columns tried at most
_PILOT_ROWS = 256
_PILOT_COLUMNS = 3
#: ... among those whose median term is at least the best one's over this ratio
_PILOT_RATIO = 4.0
#: the pilot's choice of the grouped scan instead of the walk (a ``pilots`` entry)
SCAN = -2


def row_groups(codes: IntArray) -> tuple[IntArray, IntArray]:
    """Distinct rows of ``codes`` in lexicographic order, and each row's group.

    The same as ``np.unique(codes, axis=0, return_inverse=True)``, computed on one
    integer key per row when the codes fit in 62 bits (much faster on many rows).
    """
    n_rows, n_cat = codes.shape
    if n_cat == 0:
        return np.zeros((1, 0), dtype=np.int64), np.zeros(n_rows, dtype=np.int64)
    if n_rows == 0:
        return np.zeros((0, n_cat), dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    keyed = mixed_radix_key(codes)
    if keyed is not None:
        # sorting the keys sorts the rows lexicographically, as np.unique(axis=0)
        key, sizes, bits = keyed
        if not _many_keys(bits, n_rows):
            # few possible keys: mark them instead of sorting
            present = np.zeros(int(np.prod(sizes)), dtype=bool)
            present[key] = True
            inverse = (np.cumsum(present) - 1)[key].astype(np.int64)
            first = np.empty(int(inverse.max()) + 1, dtype=np.int64)
            first[inverse[::-1]] = np.arange(n_rows - 1, -1, -1)
            return np.ascontiguousarray(codes[first]), inverse
        group_codes, inverse, _ = _sorted_groups(codes, key)
        return group_codes, inverse
    group_codes, inverse = np.unique(codes, axis=0, return_inverse=True)
    return (
        np.ascontiguousarray(group_codes, dtype=np.int64),
        inverse.reshape(-1).astype(np.int64),
    )


def _many_keys(bits: float, n_rows: int) -> bool:
    """Whether keys of ``bits`` bits are better sorted than marked in a table of them."""
    return 2.0**bits > max(4 * n_rows, 2**16)


def _sorted_groups(
    codes: IntArray, key: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Groups of equal ``key`` (ascending), each row's group, and the rows by group.

    One stable sort of the keys: ``np.unique(key, return_index=True,
    return_inverse=True)`` and ``np.argsort(inverse, kind="stable")`` together.
    """
    by_key, ordered = stable_key_order(key)
    starts = np.empty(ordered.shape[0], dtype=bool)
    starts[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    inverse = np.empty(ordered.shape[0], dtype=np.int64)
    inverse[by_key] = np.cumsum(starts) - 1
    return np.ascontiguousarray(codes[by_key[starts]]), inverse, by_key


def grouped_rows(codes: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """:func:`row_groups` and the row positions sorted by group (stable).

    The third array is ``np.argsort(inverse, kind="stable")``; on codes that fit
    one integer key per row and take many distinct values, the groups and that
    order come from the same sort.
    """
    n_rows, n_cat = codes.shape
    if n_cat and n_rows:
        keyed = mixed_radix_key(codes)
        if keyed is not None and _many_keys(keyed[2], n_rows):
            return _sorted_groups(np.asarray(codes, dtype=np.int64), keyed[0])
    group_codes, inverse = row_groups(codes)
    return group_codes, inverse, np.argsort(inverse, kind="stable").astype(np.int64)


@numba.njit(nogil=True, cache=True, inline="always")
def _categorical_sum(i, t, q_cat, ref, cat_w, mask_sums):  # pragma: no cover
    """Weighted mismatches of query ``i`` and row ``t``, summed in column order.

    The first columns' mismatches form a bit mask whose sum is read from
    ``mask_sums`` (summed in the same order, so the same floating-point number),
    which avoids a chain of dependent additions; any further columns are added.
    """
    r_cat_sorted = ref[2]
    n_table = min(q_cat.shape[1], _MASK_COLUMNS)
    mask = 0
    for c in range(n_table):
        mask |= (q_cat[i, c] != r_cat_sorted[t, c]) << c
    acc = mask_sums[mask]
    for c in range(n_table, q_cat.shape[1]):
        if q_cat[i, c] != r_cat_sorted[t, c]:
            acc += cat_w[c]
    return acc


@numba.njit(nogil=True, cache=True, inline="always")
def _offer_row(
    i, t, q_num, q_cat, ref, terms, cat_w, mask_sums, top, state
):  # pragma: no cover - compiled
    """:func:`~synthrisk.neighbors._kernels.offer` of row ``t`` with its categorical sum."""
    acc = _categorical_sum(i, t, q_cat, ref, cat_w, mask_sums)
    return offer(i, t, acc, q_num, ref, terms, top, state)


@numba.njit(nogil=True, cache=True, inline="always")
def _walk_group(
    i, g, low, q_num, q_cat, ref, groups, terms, cat_w, mask_sums, top, state, work
):  # pragma: no cover - compiled
    """Offer group ``g``'s rows to query ``i``, outward from its projection value.

    ``low`` is the group's lower bound (its key columns' weighted mismatches);
    ``work[0]`` counts the rows looked at.
    """
    projected = ref[3]
    p = ref[4]
    group_start = groups[1]
    nan_start = groups[2]
    scale, indicator, clip, _, _, power, num_w = terms
    a = group_start[g]
    b = nan_start[g]
    e = group_start[g + 1]
    x = q_num[i, p] if p >= 0 else np.nan
    if p < 0 or math.isnan(x) or e - a <= _LINEAR_GROUP:
        work[0] += e - a
        for t in range(a, e):
            state = _offer_row(
                i, t, q_num, q_cat, ref, terms, cat_w, mask_sums, top, state
            )
        return state
    lo = a
    hi = b
    while lo < hi:  # first row with a value >= x
        mid = (lo + hi) >> 1
        if projected[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    wp = num_w[p]
    sp = scale[p]
    for direction in range(2):
        # up from the query's value, then down: each side stops at its first row
        # whose bound exceeds the k-th best, as every row beyond it is farther
        t = lo if direction == 0 else lo - 1
        while a <= t < b:
            term = present_term(abs(x - projected[t]), indicator[p], sp, clip, power)
            term *= wp
            if low + term > state[1]:
                break
            work[0] += 1
            acc = _categorical_sum(i, t, q_cat, ref, cat_w, mask_sums)
            # the row's categorical sum plus its projection term bounds it too
            if not (acc + term > state[1]):
                state = offer(i, t, acc, q_num, ref, terms, top, state, p, term)
            t = t + 1 if direction == 0 else t - 1
    work[0] += e - b
    for t in range(b, e):  # rows missing the projection column
        state = _offer_row(i, t, q_num, q_cat, ref, terms, cat_w, mask_sums, top, state)
    return state


@numba.njit(parallel=True, nogil=True, cache=True)
def _walk_kernel(
    q_num,
    q_cat,
    ref,
    groups,
    terms,
    cat_w,
    mask_sums,
    divisor,
    radius,
    out_d,
    out_i,
    out_work,
):  # pragma: no cover - compiled
    """Top k of every query row into ``out_d``, ``out_i``.

    ``groups = (group_codes, group_start, nan_start, key_columns)``: the groups'
    codes in their key columns, their rows, and where their missing values start.
    ``out_work`` receives the number of rows each query looked at.
    """
    group_codes, group_start, _, key_columns = groups
    power = terms[5]
    k = out_d.shape[1]
    n_query = q_num.shape[0]
    n_groups = group_start.shape[0] - 1
    n_keys = key_columns.shape[0]
    # a query's own group is found by binary search when every key weighs something
    # (then it is the only group of bound 0); the other groups are ordered lazily
    lightest = np.inf
    for c in range(n_keys):
        lightest = min(lightest, cat_w[key_columns[c]])
    lazy = n_keys > 0 and lightest > 0.0
    n_chunks = min(n_query, 64)
    for chunk in numba.prange(n_chunks):
        lo_q = chunk * n_query // n_chunks
        hi_q = (chunk + 1) * n_query // n_chunks
        top = new_top(k)
        bound = np.zeros(n_groups)
        by_bound = np.arange(n_groups)
        work = np.zeros(1, dtype=np.int64)
        # with no key columns there is one group, and the order above is its order
        have_order = n_keys == 0
        own = -1
        for i in range(lo_q, hi_q):
            if n_keys and not same_codes(q_cat, i, lo_q, key_columns):
                # queries arrive sorted by their key codes: the groups' bounds and
                # their order are shared by all query rows with these codes, and
                # computed only when a row needs a group other than its own
                have_order = False
                own = find_group(q_cat, i, key_columns, group_codes) if lazy else -1
            state = (0, radius[i], NO_ROW)
            work[0] = 0
            # step -1 is the query's own group: it has bound 0 and is first in the
            # order, and every other group's bound is at least the lightest key weight
            gi = -1 if own >= 0 else 0
            while gi < n_groups:
                if gi < 0:
                    g = own
                    low = 0.0
                    gi = 1
                else:
                    if not have_order:
                        if own >= 0 and lightest > state[1]:
                            break
                        bound[:] = 0.0
                        for c in range(n_keys):
                            code = q_cat[i, key_columns[c]]
                            weight = cat_w[key_columns[c]]
                            for h in range(n_groups):
                                if group_codes[h, c] != code:
                                    bound[h] += weight
                        by_bound = np.argsort(bound, kind="mergesort")
                        have_order = True
                    g = by_bound[gi]
                    low = bound[g]
                    gi += 1
                if low > state[1]:
                    break
                state = _walk_group(
                    i,
                    g,
                    low,
                    q_num,
                    q_cat,
                    ref,
                    groups,
                    terms,
                    cat_w,
                    mask_sums,
                    top,
                    state,
                    work,
                )
            out_work[i] = work[0]
            write_row(i, state[0], top, power, divisor, out_d, out_i)


@dataclasses.dataclass(frozen=True)
class Plan:
    """How :func:`kneighbors` walks one reference: key and projection columns."""

    #: categorical columns that group the reference, ascending
    keys: IntArray
    #: numeric column the groups are sorted by (-1: none, groups compared row by row)
    column: int


def _column_terms(values: FloatArray, f: int, spec: DistanceSpec) -> FloatArray:
    """Weighted terms of numeric column ``f`` for the differences ``values`` (not NaN)."""
    weight = 1.0 if spec.weights is None else float(spec.weights[f])
    return spec.column_terms(values, f) * weight


def _ranked_columns(r_num: FloatArray, spec: DistanceSpec) -> list[tuple[int, float]]:
    """Numeric columns by decreasing median weighted term between sampled row pairs.

    Returns ``(column, median term)`` for every column that separates some pair.
    """
    n_ref, n_num = r_num.shape
    if n_num == 0 or n_ref < 2:
        return []
    # a fixed, well-spread sample of row pairs (Weyl sequences; no random state)
    steps = np.arange(1, _SAMPLE_PAIRS + 1, dtype=np.float64)
    first = (np.mod(steps * 0.6180339887498949, 1.0) * n_ref).astype(np.int64)
    second = (np.mod(steps * 0.4142135623730950, 1.0) * n_ref).astype(np.int64)
    scored = []
    for f in range(n_num):
        x, y = r_num[first, f], r_num[second, f]
        seen = ~(np.isnan(x) | np.isnan(y))
        if not seen.any():
            continue
        terms = _column_terms(np.abs(x[seen] - y[seen]), f, spec)
        # rows missing the column are always compared: they count as not pruned
        share = float(seen.mean())
        score = (float(np.median(terms)) * share, float(terms.mean()) * share)
        if score[1] > 0:
            scored.append((score, f))
    scored.sort(key=lambda item: (-item[0][0], -item[0][1], item[1]))
    return [(f, score[0]) for score, f in scored]


def _key_columns(r_cat: IntArray, spec: DistanceSpec, max_groups: int) -> IntArray:
    """The heaviest categorical columns (column order on ties), while few groups."""
    n_cat = r_cat.shape[1]
    weights = np.ones(n_cat) if spec.cat_weights is None else spec.cat_weights
    chosen: list[int] = []
    for c in np.argsort(-weights, kind="stable"):
        if weights[c] <= 0:
            break
        trial = sorted([*chosen, int(c)])
        if row_groups(r_cat[:, trial])[0].shape[0] > max_groups:
            break
        chosen = trial
    return np.asarray(chosen, dtype=np.int64)


def plan(
    search: Search,
    *,
    n_groups: int | None = None,
    pilots: MutableMapping[tuple[Any, ...], int] | None = None,
    scan: Callable[[Search], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Plan | None:
    """Key and projection columns for ``search``, or None where the walk does not pay.

    It pays where one numeric column bounds the distance well, and either every
    categorical column fits in the keys (few, large groups) or that column's typical
    term outweighs a typical categorical mismatch (then only the heaviest
    categorical columns are keys, the others are summed row by row). On large
    searches the best few projection columns are tried on a fixed sample of query
    rows, and the one that looks at the fewest rows is kept; when ``scan`` (the
    grouped scan of the same reference) is given, it is timed on the same rows
    against the walk with that column, and None is returned where the scan is
    faster. ``n_groups``: the number of distinct code combinations of the
    reference, when known; ``clock``: the timer of the pilot.
    """
    spec, r_num, r_cat = search.spec, search.r_num, search.r_cat
    n_ref, n_cat = r_cat.shape
    if search.q_num.shape[0] * n_ref < _MIN_PAIRS:
        return None
    ranked = _ranked_columns(r_num, spec)
    if not ranked or n_ref < 2 * _LINEAR_GROUP:
        return None
    max_groups = max(1, n_ref // _ROWS_PER_GROUP)
    every = np.arange(n_cat, dtype=np.int64)
    if n_groups is None:
        n_groups = row_groups(r_cat)[0].shape[0] if n_cat else 1
    if n_groups <= max_groups:
        keys = every
    else:
        weights = np.ones(n_cat) if spec.cat_weights is None else spec.cat_weights
        typical = float(np.median(weights[weights > 0])) if (weights > 0).any() else 0
        if ranked[0][1] < typical:
            return None
        keys = _key_columns(r_cat, spec, max_groups)
    # columns whose typical term is far below the best one's are never better
    candidates = [
        f for f, term in ranked[:_PILOT_COLUMNS] if term * _PILOT_RATIO >= ranked[0][1]
    ]
    n_query = search.q_num.shape[0]
    if n_query * n_ref < _PILOT_PAIRS or (len(candidates) == 1 and scan is None):
        return Plan(keys, candidates[0])
    tried = (tuple(keys.tolist()), tuple(candidates), scan is not None)
    if pilots is not None and tried in pilots:
        column = pilots[tried]
        return None if column == SCAN else Plan(keys, column)
    rows = np.unique(
        np.linspace(0, n_query - 1, min(_PILOT_ROWS, n_query)).astype(np.int64)
    )
    pilot = _rows_of(search, rows)
    one = _rows_of(search, rows[:1])
    walk_one = 0.0
    if scan is not None:
        # the first call of a compiled kernel loads it: an untimed call on one row,
        # then a timed one (the search's fixed cost, before any query row)
        _search(one, Plan(keys, candidates[0]))
        start = clock()
        _search(one, Plan(keys, candidates[0]))
        walk_one = clock() - start
    work, seconds = [], []
    for f in candidates:
        start = clock()
        work.append(int(_search(pilot, Plan(keys, f))[2].sum()))
        seconds.append(clock() - start)
    best = int(np.argmin(work))
    column = candidates[best]
    if scan is not None:
        scan(one)
        start = clock()
        scan(one)
        scan_one = clock() - start
        start = clock()
        scan(pilot)
        scan_pilot = clock() - start
        scale = (n_query - 1) / max(rows.size - 1, 1)
        if prefer_scan(
            walk_one + max(seconds[best] - walk_one, 0.0) * scale,
            scan_one + max(scan_pilot - scan_one, 0.0) * scale,
        ):
            column = SCAN
    if pilots is not None:
        pilots[tried] = column
    return None if column == SCAN else Plan(keys, column)


def prefer_scan(walk_seconds: float, scan_seconds: float) -> bool:
    """Whether the grouped scan is chosen, given both searches' estimated seconds."""
    return scan_seconds < walk_seconds


def _rows_of(search: Search, rows: IntArray) -> Search:
    """``search`` restricted to the query rows ``rows`` (no progress reported)."""
    return dataclasses.replace(
        search,
        q_num=search.q_num[rows],
        q_cat=search.q_cat[rows],
        radius=None if search.radius is None else np.asarray(search.radius)[rows],
        progress=None,
    )


def _mask_sums(cat_w: FloatArray) -> FloatArray:
    """Sum of the weights of every subset of the first columns, in column order."""
    n_table = min(cat_w.shape[0], _MASK_COLUMNS)
    masks = np.arange(2**n_table)
    sums = np.zeros(2**n_table)
    for c in range(n_table):
        # adding 0.0 leaves a sum unchanged: the same sum as adding mismatches only
        sums += np.where((masks >> c) & 1 == 1, cat_w[c], 0.0)
    return sums


def _code_dtype(*codes: IntArray) -> np.dtype[np.signedinteger[Any]]:
    """The narrowest signed integer type holding every code (less memory to stream)."""
    low = min((int(c.min()) for c in codes if c.size), default=0)
    high = max((int(c.max()) for c in codes if c.size), default=0)
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def _search(search: Search, how: Plan) -> tuple[FloatArray, IntArray, IntArray]:
    """The walk with ``how``'s columns; also returns the rows each query looked at."""
    spec, r_num, r_cat = search.spec, search.r_num, search.r_cat
    n_query, n_num = search.q_num.shape
    n_ref, n_cat = r_cat.shape
    keys, column = how.keys, how.column
    group_codes, group_of_row = row_groups(r_cat[:, keys])
    n_groups = group_codes.shape[0]
    # column -1 (no numeric column): every group is compared row by row
    values = r_num[:, column] if column >= 0 else np.zeros(n_ref)
    missing = np.isnan(values)
    # by group, then present values ascending (missing last), then position
    order = np.lexsort(
        (np.arange(n_ref), np.where(missing, 0.0, values), missing, group_of_row)
    ).astype(np.int64)
    group_start = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(group_of_row, minlength=n_groups), out=group_start[1:])
    nan_start = group_start[:-1] + np.bincount(
        group_of_row[~missing], minlength=n_groups
    )
    r_num_sorted = np.ascontiguousarray(r_num[order])
    code_dtype = _code_dtype(r_cat, search.q_cat)
    ref = (
        r_num_sorted,
        order,
        np.ascontiguousarray(r_cat[order], dtype=code_dtype),
        values[order],
        int(column),
    )
    groups = (np.ascontiguousarray(group_codes), group_start, nan_start, keys)
    terms, cat_w = kernel_terms(spec, n_num, n_cat)
    mask_sums = _mask_sums(cat_w)
    # queries sorted by key codes (the groups' order is shared), then by value
    perm = np.lexsort(
        (
            np.arange(n_query),
            search.q_num[:, column] if column >= 0 else np.zeros(n_query),
            *(search.q_cat[:, c] for c in keys[::-1]),
        )
    ).astype(np.int64)
    distances, indices, work = run_blocks(
        _walk_kernel,
        search,
        perm,
        code_dtype,
        (ref, groups, terms, cat_w, mask_sums, float(spec.divisor)),
        row_bytes=8 * n_ref,
        extra=(np.int64,),
    )
    distances, indices = spec.within(distances, indices, search.radius)
    return distances, indices, work


def kneighbors(search: Search, how: Plan | None = None) -> tuple[FloatArray, IntArray]:
    """:meth:`NeighborBackend.kneighbors` by the walk of the module docstring.

    ``how`` defaults to :func:`plan`'s; where the plan declines, every categorical
    column is a key and the first ranked numeric column, if any, the projection.
    """
    if how is None:
        how = plan(search)
    if how is None:
        ranked = _ranked_columns(search.r_num, search.spec)
        column = ranked[0][0] if ranked else -1
        how = Plan(np.arange(search.r_cat.shape[1], dtype=np.int64), column)
    distances, indices, _ = _search(search, how)
    return distances, indices
