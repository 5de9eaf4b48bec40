# SPDX-License-Identifier: BSD-3-Clause
# mypy: disallow-untyped-defs=False
# (numba kernels: numba infers their types from the arrays they are called with)
"""First pass of the grouped numba search: the groups at most two categorical mismatches away.

The grouped scan of :mod:`synthrisk.neighbors.numba_backend` computes, for every
combination of query codes, the lower bound of *every* group of reference rows and
sorts the groups by it. On a reference with many groups (many categorical columns)
and more than one neighbour to find, that costs more than the rows it then compares.
Most neighbours are in the query's own group or in a group that differs from it in
one column, and those groups can be found directly: for each categorical column
``c``, the groups sorted by their codes in every *other* column are binary-searched
for the query's codes.

This pass compares the rows of those groups (the own group first, then by
increasing weight of the differing column), with the same summation and top-k
insertion as the grouped scan. Any other group differs in two columns or more, so
its rows are at least the two smallest categorical weights away (their sum, as the
kernels sum it). Where the query's k-th best distance, or its radius, is below that
(strictly: a row at exactly that distance could still win a tie), the result is
final; the other queries are searched again by the grouped scan, which starts from
the k-th best sum the pass found. Either way the result is identical, bit for bit
and index for index, to the numpy backend.

The pass pays on searches with many query rows per group, near their groups (a
synthetic row against the real rows). It is left out on searches with fewer than
two query rows per group (its index costs a few sorts of the groups) and, after a
sample of the query rows, where it settles fewer than half of them (random rows,
far from every group).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._kernels import (
    NO_ROW,
    GroupedReference,
    find_group,
    new_tops,
    query_order,
    run_blocks,
    same_codes,
    scan_group,
    stable_key_order,
    top_row,
    write_row,
)
from synthrisk.neighbors._protocol import Search

__all__ = ["first_pass"]

#: the pass runs on references with at least this many groups ...
_MIN_GROUPS = 256
#: ... in searches of at least this many (query, reference) pairs
_MIN_PAIRS = 10**7
#: ... with at least this many query rows per group (the index costs a few sorts of
#: the groups; the grouped scan lists a query's groups in a few passes over them)
_MIN_QUERIES_PER_GROUP = 2
#: a search of at least four times this many query rows passes a sample of them
#: first ...
_PILOT_QUERIES = 512
#: ... and leaves the rest to the grouped scan when the pass settles less than this
#: share of the sample (rows far from every group: a random baseline)
_MIN_SETTLED = 0.5
#: groups listed at most by the index of two mismatching columns (all pairs together)
_MAX_PAIR_ENTRIES = 2 * 10**6


@numba.njit(nogil=True, cache=True, inline="always")
def _wild_range(q_cat, i, w, wild_cols, keys, low, sizes):  # pragma: no cover
    """Positions in ``keys[w]`` of the groups with query ``i``'s codes outside set ``w``."""
    key = 0
    for d in range(q_cat.shape[1]):
        if d == wild_cols[w, 0] or d == wild_cols[w, 1]:
            continue
        code = q_cat[i, d] - low[d]
        if code < 0 or code >= sizes[d]:
            return 0, 0  # a code no reference row has: no such group
        key = key * sizes[d] + code
    row = keys[w]
    lo = 0
    hi = row.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if row[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    start = lo
    hi = row.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if row[mid] <= key:
            lo = mid + 1
        else:
            hi = mid
    return start, lo


@numba.njit(parallel=True, nogil=True, cache=True)
def _first_pass_kernel(
    q_num,
    q_cat,
    ref,
    group_codes,
    wild,
    terms,
    beyond,
    divisor,
    radius,
    out_d,
    out_i,
    final,
    limit,
):  # pragma: no cover - compiled
    """:func:`_first_pass_rows` over chunks of the query rows, on every core."""
    n_query = q_num.shape[0]
    n_chunks = min(n_query, 64)
    tops = new_tops(n_chunks, out_d.shape[1])
    for chunk in numba.prange(n_chunks):
        _first_pass_rows(
            np.int64(chunk * n_query // n_chunks),
            np.int64((chunk + 1) * n_query // n_chunks),
            top_row(tops, chunk),
            q_num,
            q_cat,
            ref,
            group_codes,
            wild,
            terms,
            beyond,
            divisor,
            radius,
            out_d,
            out_i,
            final,
            limit,
        )


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _first_pass_rows(
    lo_q,
    hi_q,
    top,
    q_num,
    q_cat,
    ref,
    group_codes,
    wild,
    terms,
    beyond,
    divisor,
    radius,
    out_d,
    out_i,
    final,
    limit,
):  # pragma: no cover - compiled
    """Top k of queries ``lo_q`` to ``hi_q`` over the groups at most two mismatches away.

    ``final[i]``: the query's result is exact. ``limit[i]``: the query's k-th best summed distance found (its radius while
    fewer than k rows are found), an upper bound of its final k-th best.

    ``wild = (wild_cols, wild_bound, level_start, keys, groups, low, sizes)``: the
    sets of one or two mismatching columns (second column -1 for one), ordered by
    level and then by their distance sum ``wild_bound``; per set, the groups' keys
    over the other columns (sorted) and the groups in that order; the codes'
    offsets and ranges. ``beyond[j]``: the least distance sum of a group with
    more than ``j`` mismatches.
    """
    wild_cols, wild_bound, level_start, keys, wild_groups, low, sizes = wild
    power = terms[5]
    n_cat = q_cat.shape[1]
    every_column = np.arange(n_cat)
    n_sets = wild_cols.shape[0]
    n_levels = level_start.shape[0] - 1
    starts = np.zeros(n_sets, dtype=np.int64)
    stops = np.zeros(n_sets, dtype=np.int64)
    ready = np.zeros(n_levels, dtype=np.bool_)
    own = -1
    for i in range(lo_q, hi_q):
        if not same_codes(q_cat, i, lo_q, every_column):
            # queries arrive sorted by codes: shared by all rows with these codes
            own = find_group(q_cat, i, every_column, group_codes)
            ready[:] = False
        state = (0, radius[i], NO_ROW)
        if own >= 0:
            state = scan_group(i, own, 0.0, q_num, ref, terms, top, state)
        final[i] = False
        for level in range(n_levels):
            if state[1] < beyond[level]:
                final[i] = True
                break
            if not ready[level]:
                for w in range(level_start[level], level_start[level + 1]):
                    starts[w], stops[w] = _wild_range(
                        q_cat, i, w, wild_cols, keys, low, sizes
                    )
                ready[level] = True
            for w in range(level_start[level], level_start[level + 1]):
                # exactly the set's columns mismatch: its sum of categorical terms
                if wild_bound[w] > state[1]:
                    break
                for t in range(starts[w], stops[w]):
                    g = wild_groups[w, t]
                    exact = True
                    for j in range(2):
                        c = wild_cols[w, j]
                        if c >= 0 and group_codes[g, c] == q_cat[i, c]:
                            exact = False  # fewer mismatches: seen already
                    if exact:
                        state = scan_group(
                            i, g, wild_bound[w], q_num, ref, terms, top, state
                        )
        if not final[i]:
            final[i] = state[1] < beyond[n_levels]
        limit[i] = state[1]
        write_row(i, state[0], top, power, divisor, out_d, out_i)


def _least_sum(weights: FloatArray, count: int) -> float:
    """A lower bound of the kernels' sum of any ``count`` of ``weights`` (in column order).

    Floating-point addition is monotone, so any ``count`` columns sum to at least
    the ``count`` smallest weights summed in one of their orders: the least of those.
    """
    if count > weights.shape[0]:
        return math.inf  # no group has that many mismatches
    smallest = np.sort(weights)[:count].tolist()
    least = math.inf
    for order in itertools.permutations(smallest):
        acc = 0.0
        for value in order:
            acc += value
        least = min(least, acc)
    return least


def _wild_index(
    group_codes: IntArray, cat_w: FloatArray
) -> tuple[tuple[np.ndarray, ...], FloatArray] | None:
    """The sets of one and two mismatching columns and their sorted keys (None: too wide)."""
    n_groups, n_cat = group_codes.shape
    low = group_codes.min(axis=0)
    sizes = group_codes.max(axis=0) - low + 1
    if float(np.sum(np.log2(sizes.astype(np.float64)))) >= 62:
        return None
    singles = [(c, -1) for c in range(n_cat)]
    pairs = list(itertools.combinations(range(n_cat), 2))
    levels = [singles]
    if len(pairs) * n_groups <= _MAX_PAIR_ENTRIES:
        levels.append(pairs)
    wild_cols, wild_bound, level_start = [], [], [0]
    for sets in levels:
        bounds = []
        for cols in sets:
            acc = 0.0
            for c in sorted(x for x in cols if x >= 0):  # column order, as the kernels
                acc += float(cat_w[c])
            bounds.append(acc)
        for at in np.argsort(bounds, kind="stable"):
            wild_cols.append(sets[at])
            wild_bound.append(bounds[at])
        level_start.append(len(wild_cols))
    keys = np.empty((len(wild_cols), n_groups), dtype=np.int64)
    groups = np.empty((len(wild_cols), n_groups), dtype=np.int64)
    for w, cols in enumerate(wild_cols):
        key = np.zeros(n_groups, dtype=np.int64)
        for d in range(n_cat):
            if d not in cols:
                key = key * sizes[d] + (group_codes[:, d] - low[d])
        groups[w], keys[w] = stable_key_order(key)
    n_levels = len(levels)
    # beyond[j]: the least sum of a group with more than j mismatches
    beyond = np.array([_least_sum(cat_w, j + 1) for j in range(n_levels + 1)])
    wild = (
        np.asarray(wild_cols, dtype=np.int64),
        np.asarray(wild_bound, dtype=np.float64),
        np.asarray(level_start, dtype=np.int64),
        keys,
        groups,
        low.astype(np.int64),
        sizes.astype(np.int64),
    )
    return wild, beyond


def first_pass(
    search: Search,
    reference: GroupedReference,
    *,
    n_pairs: int | None = None,
    n_query: int | None = None,
) -> tuple[FloatArray, IntArray, IntArray, FloatArray] | None:
    """Run the pass on ``search`` over the grouped ``reference``.

    Returns the distances and indices (before the radius is applied), the query
    rows whose result is not final and, for every query row, the radius that
    holds its final k nearest rows in the units the kernels rank by (the k-th
    best sum found, rows at exactly that sum included), or None where the pass
    does not pay.
    ``n_pairs`` and ``n_query``: the (query, reference) pairs and the query rows
    that decide whether it pays (default: those of ``search``; a pilot on a few
    query rows passes the whole search's).
    The index of the groups is kept in ``reference.memo`` for later passes.
    """
    group_codes, cat_w = reference.codes, reference.cat_w
    n_groups, n_cat = group_codes.shape
    if n_query is None:
        n_query = search.q_num.shape[0]
    if n_pairs is None:
        n_pairs = search.q_num.shape[0] * search.r_num.shape[0]
    if (
        n_cat < 2
        or n_groups < _MIN_GROUPS
        or n_pairs < _MIN_PAIRS
        or n_query < _MIN_QUERIES_PER_GROUP * n_groups
    ):
        return None
    if not _least_sum(cat_w, 2) > 0:
        return None  # free mismatches: no group is ever ruled out
    if "wild_index" not in reference.memo:
        reference.memo["wild_index"] = _wild_index(group_codes, cat_w)
    index = reference.memo["wild_index"]
    if index is None:
        return None
    wild, beyond = index
    shared = (
        reference.rows(search.r_num),
        np.ascontiguousarray(group_codes, dtype=np.int64),
        wild,
        reference.terms,
        beyond,
        float(search.spec.divisor),
    )

    def run(rows: Search) -> list[np.ndarray]:
        return run_blocks(
            _first_pass_kernel,
            rows,
            query_order(rows.q_cat),
            np.int64,
            shared,
            row_bytes=8 * (search.r_num.shape[0] + n_groups),
            extra=(np.bool_, np.float64),
        )

    n_rows = search.q_num.shape[0]
    if n_rows >= 4 * _PILOT_QUERIES:
        # a sample first: where the pass settles few rows it only adds work
        sample = np.linspace(0, n_rows - 1, _PILOT_QUERIES).astype(np.int64)
        radius = search.radius
        pilot = dataclasses.replace(
            search,
            q_num=search.q_num[sample],
            q_cat=search.q_cat[sample],
            radius=None if radius is None else np.asarray(radius)[sample],
            progress=None,
        )
        if run(pilot)[2].mean() < _MIN_SETTLED:
            return None
    distances, indices, final, limit = run(search)
    return distances, indices, np.flatnonzero(~final), limit
