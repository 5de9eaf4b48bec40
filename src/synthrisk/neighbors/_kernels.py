# SPDX-License-Identifier: BSD-3-Clause
# mypy: disallow-untyped-defs=False
# (numba kernels: numba infers their types from the arrays they are called with)
"""The building blocks of the exact numba kernels of the mixed-type distances.

The grouped scan of :mod:`synthrisk.neighbors.numba_backend`, its first pass in
:mod:`synthrisk.neighbors._nearby` and the projection walk of
:mod:`synthrisk.neighbors._projection` are compositions of these: one numeric term
rule, one summation with early abandoning, one top-k insertion (ties to the lowest
reference position), one output row, one query loop over rows sorted by their codes
and one driver over blocks of query rows. Every kernel therefore sums the same terms
in the same order and breaks ties alike, so their results agree bit for bit.

The compiled functions take their inputs grouped in tuples, which numba passes by
value and, once inlined, unpacks without cost:

* ``terms = (scale, indicator, clip, nan_one, nan_both, power, num_w)``: the numeric
  terms of the distance (see :mod:`synthrisk.neighbors._spec`), from
  :func:`kernel_terms`;
* ``ref = (r_num_sorted, order, ...)``: reference rows in the kernel's order and
  their positions (each kernel adds what it needs after these two: the grouped
  kernels the group starts and boxes, :meth:`GroupedReference.rows`);
* ``top = (best, best_i, is_nan, stack)``: one query row's running top k: summed
  terms, positions, missing flags, and room for :func:`scan_tree`'s stack (from
  :func:`new_top`, or one row of :func:`new_tops`);
* ``state = (filled, worst, worst_i)``: entries of ``top`` in use and its worst
  entry (the radius until k are found; :data:`NO_ROW` loses every tie).

The grouped scan and the first pass are each two compiled functions: a parallel
kernel that only splits the query rows into chunks (``numba.prange``), and a serial
function that searches one chunk (compiled with ``error_model="numpy"``, as numba
compiles the body of a ``prange`` loop). Numba's parallel compiler analyses every
statement of a ``prange`` body: with these building blocks inlined there, the
grouped scan's kernel took 21-25 s to compile on a first call (2-core machine); as a
serial function the same code compiles in 10-16 s, into the same arithmetic. The
kernel allocates each chunk's ``top`` before the loop (:func:`new_tops`,
:func:`top_row`): arrays that enter a ``prange`` body from outside carry no reference
count, whereas arrays allocated inside the serial function are counted, atomically,
at every inlined call that passes them (the projection walk, split this way, spent
half its time there, which is why it keeps its parallel body).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numpy.typing import DTypeLike

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._blocks import rows_per_block
from synthrisk.neighbors._protocol import Search
from synthrisk.neighbors._spec import DistanceSpec
from synthrisk.neighbors._trees import LEAF_ROWS, MAX_DEPTH, Rows, grouped_trees

__all__ = [
    "NO_ROW",
    "GroupedReference",
    "box_beyond",
    "descend",
    "find_group",
    "kernel_terms",
    "mixed_radix_key",
    "new_top",
    "new_tops",
    "numeric_term",
    "offer",
    "present_term",
    "query_order",
    "run_blocks",
    "same_codes",
    "scan_group",
    "scan_groups",
    "scan_rows",
    "scan_tree",
    "stable_key_order",
    "top_row",
    "write_row",
]

#: index that loses every tie: rows at exactly the radius are kept
NO_ROW = 2**62

#: query rows of one kernel call: at most 1/40 of the query (progress), at least this
_MIN_BLOCK_ROWS = 512


@dataclasses.dataclass(frozen=True)
class GroupedReference:
    """Reference rows grouped by their categorical codes, and the distance's terms.

    Attributes
    ----------
    codes : ndarray of shape (n_groups, n_categorical)
        Each group's codes, sorted lexicographically.
    start : ndarray of shape (n_groups + 1,)
        Group g holds ``order[start[g]:start[g + 1]]``.
    order : ndarray of shape (n_reference,)
        Reference row positions sorted by group, ascending within a group.
    terms : tuple
        The ``terms`` tuple of the distance (:func:`kernel_terms`).
    cat_w : ndarray of shape (n_categorical,)
        Categorical weights.
    memo : dict
        Indexes built from these groups by the searches over them, by name (built
        once, reused by the pilot and the search of one reference).
    """

    codes: IntArray
    start: IntArray
    order: IntArray
    terms: tuple[object, ...]
    cat_w: FloatArray
    memo: dict[str, Any] = dataclasses.field(
        default_factory=dict, compare=False, repr=False
    )
    #: rows of a tree's leaves (:mod:`synthrisk.neighbors._trees`); None: every
    #: group is one leaf (its box only)
    leaf_rows: int | None = LEAF_ROWS

    def rows(self, r_num: FloatArray) -> Rows:
        """``ref`` of :func:`scan_group`: each group's rows in tree order (built once).

        ``r_num`` must be the numeric columns of the rows these groups were built from.
        """
        if "rows" not in self.memo:
            self.memo["rows"] = grouped_trees(
                r_num, self.order, self.start, self.terms, leaf_rows=self.leaf_rows
            )
        rows: Rows = self.memo["rows"]
        return rows


def kernel_terms(
    spec: DistanceSpec, n_numeric: int, n_categorical: int
) -> tuple[tuple[object, ...], FloatArray]:
    """The ``terms`` tuple of ``spec`` and its categorical weights (1 unless given)."""
    num_w = np.ones(n_numeric) if spec.weights is None else spec.weights
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
        np.ones(n_categorical) if spec.cat_weights is None else spec.cat_weights,
        dtype=np.float64,
    )
    return terms, cat_w


def query_order(q_cat: IntArray) -> IntArray:
    """Query row positions sorted by their categorical codes (stable).

    ``np.lexsort`` of the columns, first column first; computed on one integer key
    per row when the codes fit in 62 bits (the same order, a few times faster).
    """
    if q_cat.shape[1] == 0 or q_cat.shape[0] < 2:
        return np.arange(q_cat.shape[0], dtype=np.int64)
    keyed = mixed_radix_key(q_cat)
    if keyed is None:
        return np.lexsort(q_cat.T[::-1]).astype(np.int64)
    key = keyed[0]
    return stable_key_order(key)[0]


def mixed_radix_key(codes: IntArray) -> tuple[IntArray, IntArray, float] | None:
    """One integer key per row whose order is the rows' lexicographic order.

    Each column's codes are shifted to start at 0 and the first column is the most
    significant digit. Returns the keys, each column's number of values and the
    keys' bits, or None when they need 62 bits or more.
    """
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    low, high = _column_ranges(codes)
    sizes = high - low + 1
    bits = float(np.sum(np.log2(sizes.astype(np.float64))))
    if bits >= 62:
        return None
    key = np.empty(codes.shape[0], dtype=np.int64)
    _radix_key(codes, low, sizes, key)
    return key, sizes, bits


@numba.njit(nogil=True, cache=True)
def _column_ranges(codes):  # pragma: no cover - compiled
    """Each column's least and greatest code, in one pass over the rows."""
    n_rows, n_cols = codes.shape
    low = np.zeros(n_cols, dtype=np.int64)
    high = np.zeros(n_cols, dtype=np.int64)
    if n_rows:
        low[:] = codes[0]
        high[:] = codes[0]
    for i in range(1, n_rows):
        for c in range(n_cols):
            v = codes[i, c]
            if v < low[c]:
                low[c] = v
            elif v > high[c]:
                high[c] = v
    return low, high


@numba.njit(nogil=True, cache=True)
def _radix_key(codes, low, sizes, key):  # pragma: no cover - compiled
    """``key[i]``: row ``i``'s codes as digits, the first column most significant."""
    for i in range(codes.shape[0]):
        acc = 0
        for c in range(codes.shape[1]):
            acc = acc * sizes[c] + (codes[i, c] - low[c])
        key[i] = acc


def stable_key_order(key: IntArray) -> tuple[IntArray, IntArray]:
    """``np.argsort(key, kind="stable")`` of non-negative integer keys, and the sorted keys.

    Where the largest key and a row position fit in 62 bits together, each key is
    shifted left and its row's position put in the low bits: the composite values
    are distinct, so numpy's (vectorised) unstable sort gives the stable order,
    several times faster than a stable sort of the keys.
    """
    n_rows = key.shape[0]
    shift = max(int(n_rows - 1).bit_length(), 1)
    top = int(key.max()) if n_rows else 0
    if top.bit_length() + shift > 62:
        by_key = np.argsort(key, kind="stable").astype(np.int64)
        return by_key, key[by_key]
    composite = np.sort((key << shift) | np.arange(n_rows, dtype=np.int64))
    return composite & ((1 << shift) - 1), composite >> shift


def run_blocks(
    kernel: Callable[..., None],
    search: Search,
    perm: IntArray,
    code_dtype: DTypeLike,
    shared: tuple[object, ...],
    *,
    row_bytes: int,
    extra: tuple[DTypeLike, ...] = (),
    sum_radius: FloatArray | None = None,
) -> list[np.ndarray]:
    """Run ``kernel`` over blocks of the query rows taken in the order ``perm``.

    Each call is ``kernel(q_num, q_cat, *shared, radius, out_d, out_i, *out_extra)``
    on one block of rows: their numeric values, their codes as ``code_dtype``, their
    radii in the units the kernels rank by, and the block's rows of the outputs
    (distances and indices of shape (n, k), then one array of each ``extra`` dtype
    of shape (n,)). ``row_bytes`` are the temporaries of one query row (see
    :func:`~synthrisk.neighbors._blocks.rows_per_block`); progress is reported after
    each block. ``sum_radius`` gives the radii in the kernels' units directly (rows
    at exactly the radius are kept) instead of taking them from ``search.radius``.

    Returns
    -------
    list of ndarray
        The outputs, back in the order of the query rows.
    """
    n_query, k = search.q_num.shape[0], search.k
    if sum_radius is None:
        sum_radius = search.spec.sum_radius(search.radius, n_query)
    # np.take gathers rows several times faster than fancy indexing
    sum_radius = np.take(sum_radius, perm)
    q_num = np.ascontiguousarray(np.take(search.q_num, perm, axis=0))
    q_cat = np.ascontiguousarray(np.take(search.q_cat, perm, axis=0), dtype=code_dtype)
    # blocks bound the progress granularity and the per-block output buffers
    step = rows_per_block(
        row_bytes, working_memory=search.working_memory, n_rows=n_query
    )
    step = min(step, max(_MIN_BLOCK_ROWS, -(-n_query // 40)))
    outputs = [
        np.empty((n_query, k), dtype=np.float64),
        np.empty((n_query, k), dtype=np.int64),
        *(np.empty(n_query, dtype=dtype) for dtype in extra),
    ]
    for start in range(0, n_query, step):
        stop = min(start + step, n_query)
        kernel(
            q_num[start:stop],
            q_cat[start:stop],
            *shared,
            sum_radius[start:stop],
            *(out[start:stop] for out in outputs),
        )
        if search.progress is not None:
            search.progress(stop - start)
    results = []
    for out in outputs:
        back = np.empty_like(out)
        back[perm] = out
        results.append(back)
    return results


@numba.njit(nogil=True, cache=True, inline="always")
def new_top(k):  # pragma: no cover - compiled
    """An empty ``top`` tuple for k neighbours (and the stack of :func:`scan_tree`)."""
    return (
        np.empty(k),
        np.empty(k, dtype=np.int64),
        np.empty(k, dtype=np.bool_),
        np.empty(2 * MAX_DEPTH + 2, dtype=np.int64),
    )


@numba.njit(nogil=True, cache=True, inline="always")
def new_tops(n, k):  # pragma: no cover - compiled
    """:func:`new_top` for ``n`` chunks at once: chunk ``c``'s is :func:`top_row`."""
    return (
        np.empty((n, k)),
        np.empty((n, k), dtype=np.int64),
        np.empty((n, k), dtype=np.bool_),
        np.empty((n, 2 * MAX_DEPTH + 2), dtype=np.int64),
    )


@numba.njit(nogil=True, cache=True, inline="always")
def top_row(tops, c):  # pragma: no cover - compiled
    """The ``top`` tuple of row ``c`` of :func:`new_tops`."""
    return (tops[0][c], tops[1][c], tops[2][c], tops[3][c])


@numba.njit(nogil=True, cache=True, inline="always")
def present_term(diff, indicator, scale, clip, power):  # pragma: no cover - compiled
    """One numeric column's term for the absolute difference ``diff`` of two values."""
    if indicator:
        term = 1.0 if diff > 0 else 0.0
    else:
        term = diff / scale
        if clip and term > 1.0:
            term = 1.0
    if power == 2:
        term = term * term
    return term


@numba.njit(nogil=True, cache=True, inline="always")
def numeric_term(
    x: float,
    y: float,
    indicator: bool,
    scale: float,
    clip: bool,
    power: int,
    nan_one: float,
    nan_both: float,
) -> float:
    """One numeric column's term of the distance, before its weight (every kernel's rule)."""
    x_nan = math.isnan(x)
    y_nan = math.isnan(y)
    if x_nan or y_nan:
        return nan_both if (x_nan and y_nan) else nan_one
    return present_term(abs(x - y), indicator, scale, clip, power)


@numba.njit(nogil=True, cache=True, inline="always")
def insert(j, acc, top, state):  # pragma: no cover - compiled
    """Enter row ``j`` with its summed terms ``acc`` into ``top`` if it ranks."""
    best, best_i, is_nan = top[0], top[1], top[2]
    filled, worst, worst_i = state
    k = best.shape[0]
    nan_acc = math.isnan(acc)
    key = np.inf if nan_acc else acc
    if filled < k and key > worst:  # a missing distance, beyond a finite radius
        return state
    if filled < k:
        pos = filled
        filled += 1
    elif key < worst or (key == worst and j < worst_i):
        pos = k - 1
    else:
        return state
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


@numba.njit(nogil=True, cache=True, inline="always")
def offer(
    i, t, acc, q_num, ref, terms, top, state, known=-1, known_term=0.0
):  # pragma: no cover - compiled
    """Compare reference row ``t`` (sorted position) with query ``i``; returns the new state.

    ``acc`` is the row's categorical sum; the numeric terms are added in column
    order and the row is abandoned as soon as it can no longer enter the top k.
    Column ``known``'s weighted term, ``known_term``, was computed already (the
    same arithmetic, so the same number).
    """
    r_num_sorted = ref[0]
    order = ref[1]
    scale, indicator, clip, nan_one, nan_both, power, num_w = terms
    worst, worst_i = state[1], state[2]
    j = order[t]
    # until k rows are found, worst is the query's radius (inf without one)
    if acc > worst or (acc == worst and j > worst_i):
        return state
    for f in range(q_num.shape[1]):
        if f == known:
            acc += known_term
            if acc > worst or (acc == worst and j > worst_i):
                return state
            continue
        term = numeric_term(
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
            return state
    return insert(j, acc, top, state)


@numba.njit(nogil=True, cache=True, inline="always")
def box_beyond(i, g, start_acc, q_num, box, terms, worst):  # pragma: no cover
    """Whether the numeric box ``box[g]`` puts all its rows beyond ``worst``.

    ``start_acc`` plus the terms of the box point nearest query ``i``, summed in
    column order: at most any row's sum, in floating point too (each difference
    is at most the row's and rounds no higher; the terms and the sum are monotone).
    A missing query value counts 0.
    """
    scale, indicator, clip, _, _, power, num_w = terms
    bound = start_acc
    for f in range(q_num.shape[1]):
        x = q_num[i, f]
        if not math.isnan(x):
            diff = max(box[g, 2 * f] - x, x - box[g, 2 * f + 1], 0.0)
            bound += present_term(diff, indicator[f], scale[f], clip, power) * num_w[f]
            if bound > worst:
                return True
    return False


@numba.njit(nogil=True, cache=True, inline="always")
def scan_rows(i, lo, hi, start_acc, q_num, ref, terms, top, state):  # pragma: no cover
    """Offer the rows ``lo`` to ``hi`` (sorted positions) to query ``i``'s ``top``.

    All are ``start_acc`` away in their categorical columns. The grouped scan's
    hot loop: :func:`offer` and :func:`insert` written out, with the top k's
    bounds in locals (the same arithmetic and ties; composed from them, as inlined
    calls returning tuples, the scan ran 10-15 % slower on Adult). The row
    position is read only where a tie needs it.
    """
    r_num_sorted = ref[0]
    order = ref[1]
    scale, indicator, clip, nan_one, nan_both, power, num_w = terms
    best, best_i, is_nan = top[0], top[1], top[2]
    filled, worst, worst_i = state
    k = best.shape[0]
    for t in range(lo, hi):
        acc = start_acc
        # until k rows are found, worst is the query's radius (inf without one)
        if acc > worst or (acc == worst and order[t] > worst_i):
            continue
        for f in range(q_num.shape[1]):
            term = numeric_term(
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
            if acc > worst or (acc == worst and order[t] > worst_i):
                break
        else:  # every term summed: row j enters the top k if it ranks
            j = order[t]
            nan_acc = math.isnan(acc)
            key = np.inf if nan_acc else acc
            # a missing distance, beyond a finite radius
            if filled < k and key > worst:
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


@numba.njit(nogil=True, cache=True, inline="always")
def scan_tree(i, root, start_acc, q_num, ref, terms, top, state):  # pragma: no cover
    """Descend the tree from node ``root`` (not a leaf), nearer child first.

    A node whose box is beyond the k-th best is skipped with all its rows.
    """
    box, nodes, split_val = ref[3], ref[4], ref[5]
    stack = top[3]
    stack[0] = root
    sp = 1
    while sp > 0:
        sp -= 1
        node = stack[sp]
        if box_beyond(i, node, start_acc, q_num, box, terms, state[1]):
            continue
        if nodes[node, 2] < 0:
            state = scan_rows(
                i,
                nodes[node, 0],
                nodes[node, 1],
                start_acc,
                q_num,
                ref,
                terms,
                top,
                state,
            )
        elif q_num[i, nodes[node, 3]] < split_val[node]:
            stack[sp] = nodes[node, 2]
            stack[sp + 1] = node + 1  # the left child, visited first
            sp += 2
        else:
            stack[sp] = node + 1
            stack[sp + 1] = nodes[node, 2]
            sp += 2
    return state


@numba.njit(nogil=True, cache=True)
def descend(i, root, start_acc, q_num, ref, terms, top, state):  # pragma: no cover
    """:func:`scan_tree` compiled once and called, not inlined.

    :func:`scan_group` calls it: inlined into every kernel that scans a group, the
    tree descent doubled their compile time, and a call costs little against a
    descent. :func:`scan_groups`, which visits hundreds of groups per query, inlines
    it (about 10 % faster on random rows).
    """
    return scan_tree(i, root, start_acc, q_num, ref, terms, top, state)


@numba.njit(nogil=True, cache=True, inline="always")
def scan_group(i, g, start_acc, q_num, ref, terms, top, state):  # pragma: no cover
    """Offer every row of group ``g`` to query ``i``'s ``top``; returns the new state.

    ``ref = (r_num_sorted, order, group_root, box, nodes, split_val)``
    (:func:`synthrisk.neighbors._trees.grouped_trees`): the
    group's tree, its rows all ``start_acc`` away in their categorical columns.
    Nodes of several rows whose numeric box is beyond the k-th best are skipped
    (:func:`box_beyond`).
    """
    root = ref[2][g]
    nodes = ref[4]
    if nodes[root, 2] >= 0:
        # one signature of descend whatever the caller's state (a fresh state's
        # integers are literals to numba: each would compile descend anew)
        filled, worst, worst_i = state
        state = (np.int64(filled), worst, np.int64(worst_i))
        return descend(i, root, start_acc, q_num, ref, terms, top, state)
    lo, hi = nodes[root, 0], nodes[root, 1]
    if hi - lo > 1 and box_beyond(i, root, start_acc, q_num, ref[3], terms, state[1]):
        return state
    return scan_rows(i, lo, hi, start_acc, q_num, ref, terms, top, state)


@numba.njit(nogil=True, cache=True, inline="always")
def scan_groups(
    i, listed, start_acc, q_num, ref, terms, top, state
):  # pragma: no cover
    """:func:`scan_group` over every group in ``listed``, all ``start_acc`` away.

    The same arithmetic, ties and top-k insertion, with the loop over the rows of
    small groups (a single leaf) inside: called once per group, the scan of a row
    far from every group (a few rows in each of hundreds of groups) ran about 2.5
    times slower. As there, a group of several rows is skipped by its box (on
    random rows of Adult this saved about a fifth of the search).
    """
    r_num_sorted, order, group_root, box, nodes = ref[0], ref[1], ref[2], ref[3], ref[4]
    scale, indicator, clip, nan_one, nan_both, power, num_w = terms
    best, best_i, is_nan = top[0], top[1], top[2]
    filled, worst, worst_i = state
    k = best.shape[0]
    for gi in range(listed.shape[0]):
        if start_acc > worst:
            break
        root = group_root[listed[gi]]
        if nodes[root, 2] >= 0:
            filled, worst, worst_i = scan_tree(
                i, root, start_acc, q_num, ref, terms, top, (filled, worst, worst_i)
            )
            continue
        if nodes[root, 1] - nodes[root, 0] > 1 and box_beyond(
            i, root, start_acc, q_num, box, terms, worst
        ):
            continue
        for t in range(nodes[root, 0], nodes[root, 1]):
            acc = start_acc
            if acc > worst or (acc == worst and order[t] > worst_i):
                continue
            for f in range(q_num.shape[1]):
                term = numeric_term(
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
                if acc > worst or (acc == worst and order[t] > worst_i):
                    break
            else:  # every term summed: row j enters the top k if it ranks
                j = order[t]
                nan_acc = math.isnan(acc)
                key = np.inf if nan_acc else acc
                # a missing distance, beyond a finite radius
                if filled < k and key > worst:
                    continue
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
    return filled, worst, worst_i


@numba.njit(nogil=True, cache=True, inline="always")
def same_codes(codes, i, first, columns):  # pragma: no cover - compiled
    """True when row ``i`` is not ``first`` and has row ``i - 1``'s codes in ``columns``."""
    if i <= first:
        return False
    for c in range(columns.shape[0]):
        if codes[i, columns[c]] != codes[i - 1, columns[c]]:
            return False
    return True


@numba.njit(nogil=True, cache=True, inline="always")
def find_group(codes, i, columns, group_codes):  # pragma: no cover - compiled
    """Position of row ``i``'s codes in ``columns`` among the sorted group codes, or -1.

    ``group_codes[g, c]`` is group ``g``'s code in ``columns[c]``; the groups are
    sorted lexicographically, as :func:`~synthrisk.neighbors._projection.row_groups`
    returns them.
    """
    lo = 0
    hi = group_codes.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        cmp = 0
        for c in range(columns.shape[0]):
            a = group_codes[mid, c]
            b = codes[i, columns[c]]
            if a != b:
                cmp = -1 if a < b else 1
                break
        if cmp == 0:
            return mid
        if cmp < 0:
            lo = mid + 1
        else:
            hi = mid
    return -1


@numba.njit(nogil=True, cache=True, inline="always")
def write_row(
    i: int,
    filled: int,
    top: tuple[FloatArray, IntArray, np.ndarray],
    power: int,
    divisor: float,
    out_d: FloatArray,
    out_i: IntArray,
) -> None:
    """Query ``i``'s k neighbours into the output: empty slots inf / -1, NaN kept, roots taken."""
    best, best_i, is_nan = top[0], top[1], top[2]
    for t in range(out_d.shape[1]):
        if t >= filled:
            out_d[i, t] = np.inf
            out_i[i, t] = -1
            continue
        if is_nan[t]:
            out_d[i, t] = np.nan
        elif power == 2:
            out_d[i, t] = math.sqrt(best[t]) / divisor
        else:
            out_d[i, t] = best[t] / divisor
        out_i[i, t] = best_i[t]
