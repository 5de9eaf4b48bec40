# SPDX-License-Identifier: BSD-3-Clause
# mypy: disallow-untyped-defs=False
# (numba kernels: numba infers their types from the arrays they are called with)
"""Small k-d trees of the reference rows inside each group of the grouped numba search.

The grouped scan compares a query with every row of a group it cannot rule out by
the group's categorical mismatches. With few categorical columns the groups are
large (thousands of rows), and most of their rows are far from the query in the
numeric columns. Each group's rows are therefore ordered as the leaves of a k-d
tree: a node of more than :data:`LEAF_ROWS` rows is split at the median of the
numeric column whose weighted spread is largest. Every node keeps the box (the
least and greatest value of each numeric column) of its rows, and the search
(:func:`synthrisk.neighbors._kernels.scan_group`) descends a group's tree nearer
child first, skipping every node whose box alone is beyond the query's k-th best
(:func:`synthrisk.neighbors._kernels.box_beyond`).

The result does not depend on the tree: each row's distance is its own sum, and
ties go to the lowest reference position whatever order the rows are met in. The
tree only decides how many rows are compared.
"""

from __future__ import annotations

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray

__all__ = ["LEAF_ROWS", "Rows", "grouped_trees"]

#: a node of more rows than this is split (a leaf holds half to all of this many)
LEAF_ROWS = 8

#: deepest path of a tree: a median split halves the rows, so 2**64 rows at most
MAX_DEPTH = 64

#: ``(r_num_sorted, order, group_root, box, nodes, split_val)``: see
#: :func:`grouped_trees`
Rows = tuple[FloatArray, IntArray, IntArray, FloatArray, IntArray, FloatArray]


@numba.njit(nogil=True, cache=True)
def _select(keys, idx, lo, hi, kth):  # pragma: no cover - compiled
    """Rearrange ``keys[lo:hi]`` (and ``idx`` alike) so that ``keys[kth]`` is in its
    sorted place, with no greater key before it and no smaller one after it.

    Quickselect with a median-of-three pivot; after more rounds than a balanced run
    needs (an adversarial order), the rest of the range is sorted instead.
    """
    rounds = 0
    limit = 2 * int(np.log2(hi - lo + 1)) + 8
    while hi - lo > 1:
        rounds += 1
        if rounds > limit:
            perm = np.argsort(keys[lo:hi], kind="mergesort")
            keys[lo:hi] = keys[lo:hi][perm]
            idx[lo:hi] = idx[lo:hi][perm]
            return
        # median of three as the pivot (deterministic)
        a, b, c = keys[lo], keys[(lo + hi) // 2], keys[hi - 1]
        pivot = max(min(a, b), min(max(a, b), c))
        i = lo
        j = hi - 1
        while i <= j:
            while keys[i] < pivot:
                i += 1
            while keys[j] > pivot:
                j -= 1
            if i <= j:
                keys[i], keys[j] = keys[j], keys[i]
                idx[i], idx[j] = idx[j], idx[i]
                i += 1
                j -= 1
        # keys[lo:j + 1] <= pivot <= keys[i:hi], and keys[j + 1:i] == pivot
        if kth <= j:
            hi = j + 1
        elif kth >= i:
            lo = i
        else:
            return


@numba.njit(nogil=True, cache=True)
def _build(
    rows, group_start, terms, leaf_rows, idx, nodes, box, split_val, roots
):  # pragma: no cover - compiled
    """Build every group's tree in preorder; returns the number of nodes.

    ``rows``: the numeric columns in group order; ``idx``: a permutation of them,
    rearranged in place into leaf order. ``nodes[n] = (start, stop, right, split
    column)`` (``right = -1``: a leaf; the left child of node ``n`` is ``n + 1``);
    ``roots[g]``: the root of group ``g``.

    ``terms``: the distance's terms (:func:`synthrisk.neighbors._kernels.kernel_terms`).
    A node is split on the column of largest weighted spread of its *cell* (the
    group's box, narrowed at each split above it), at the median row; the exact
    boxes are computed at the end, leaves from their rows and every other node
    from its two children.
    """
    scale, indicator, num_w = terms[0], terms[1], terms[6]
    n_num = rows.shape[1]
    n_groups = group_start.shape[0] - 1
    depth = 2 * MAX_DEPTH + 2
    seg_lo = np.empty(depth, dtype=np.int64)
    seg_hi = np.empty(depth, dtype=np.int64)
    seg_parent = np.empty(depth, dtype=np.int64)
    cells = np.empty((depth, 2 * n_num))
    keys = np.empty(rows.shape[0])
    n_nodes = 0
    for g in range(n_groups):
        roots[g] = n_nodes
        seg_lo[0] = group_start[g]
        seg_hi[0] = group_start[g + 1]
        seg_parent[0] = -1
        for f in range(n_num if group_start[g + 1] - group_start[g] > leaf_rows else 0):
            low = np.inf
            high = -np.inf
            for t in range(group_start[g], group_start[g + 1]):
                v = rows[t, f]  # idx is the identity until the group is split
                if not np.isnan(v):
                    low = min(low, v)
                    high = max(high, v)
            cells[0, 2 * f] = low
            cells[0, 2 * f + 1] = high
        sp = 1
        while sp > 0:
            sp -= 1
            lo = seg_lo[sp]
            hi = seg_hi[sp]
            parent = seg_parent[sp]
            node = n_nodes
            n_nodes += 1
            if parent >= 0:
                nodes[parent, 2] = node
            nodes[node, 0] = lo
            nodes[node, 1] = hi
            nodes[node, 2] = -1
            nodes[node, 3] = -1
            split_val[node] = np.nan
            if hi - lo <= leaf_rows:
                continue
            best_f = -1
            best_spread = 0.0
            for f in range(n_num):
                # the column's term over the cell's width
                spread = cells[sp, 2 * f + 1] - cells[sp, 2 * f]
                if not spread > 0:
                    continue
                if indicator[f]:
                    spread = 1.0
                elif scale[f] > 0:
                    spread = spread / scale[f]
                spread *= num_w[f]
                if spread > best_spread:
                    best_spread = spread
                    best_f = f
            if best_f < 0:
                continue  # rows equal in every numeric column: one leaf
            # the rows of the lower half before those of the upper half, by the
            # column (missing values last): a selection, not a sort
            for t in range(lo, hi):
                v = rows[idx[t], best_f]
                keys[t] = np.inf if np.isnan(v) else v
            mid = (lo + hi) // 2
            _select(keys, idx, lo, hi, mid)
            value = keys[mid]
            nodes[node, 3] = best_f
            split_val[node] = value
            # the right half waits below the left, which is built next (node + 1)
            cells[sp + 1, :] = cells[sp, :]
            if value < cells[sp, 2 * best_f + 1]:
                cells[sp + 1, 2 * best_f + 1] = value  # the left cell
            if value > cells[sp, 2 * best_f]:
                cells[sp, 2 * best_f] = value  # the right cell
            seg_lo[sp] = mid
            seg_hi[sp] = hi
            seg_parent[sp] = node
            seg_lo[sp + 1] = lo
            seg_hi[sp + 1] = mid
            seg_parent[sp + 1] = -1
            sp += 2
    # exact boxes: the leaves from their rows, then each node from its children
    # (children come after their parent in preorder)
    for node in range(n_nodes - 1, -1, -1):
        right = nodes[node, 2]
        if right < 0:
            for f in range(n_num):
                low = np.inf
                high = -np.inf
                missing = False
                for t in range(nodes[node, 0], nodes[node, 1]):
                    v = rows[idx[t], f]
                    if np.isnan(v):
                        missing = True
                    else:
                        low = min(low, v)
                        high = max(high, v)
                # a column missing in some row spans everything (its term is then
                # not bounded by the present values)
                box[node, 2 * f] = -np.inf if missing else low
                box[node, 2 * f + 1] = np.inf if missing else high
        else:
            for f in range(2 * n_num):
                if f % 2 == 0:
                    box[node, f] = min(box[node + 1, f], box[right, f])
                else:
                    box[node, f] = max(box[node + 1, f], box[right, f])
    return n_nodes


def grouped_trees(
    r_num: FloatArray,
    order: IntArray,
    group_start: IntArray,
    terms: tuple[object, ...],
    leaf_rows: int | None = LEAF_ROWS,
) -> Rows:
    """The reference rows of each group in the leaf order of the group's tree.

    Parameters
    ----------
    r_num : ndarray of shape (n_reference, n_numeric)
        Numeric columns of the reference rows.
    order, group_start : ndarray
        The rows sorted by group (:func:`synthrisk.neighbors.numba_backend.group_reference`).
    terms : tuple
        The distance's ``terms`` (:func:`synthrisk.neighbors._kernels.kernel_terms`):
        a column's spread is weighted by its weight over its scale (a 0/1 column by
        its weight) to choose where to split.
    leaf_rows : int or None, default=LEAF_ROWS
        Nodes of more rows are split; None makes every group one leaf.

    Returns
    -------
    Rows
        ``r_num_sorted`` (the rows in leaf order) and ``order`` (their positions);
        ``group_root`` (n_groups + 1,): the root node of each group, the last entry
        the number of nodes; ``box`` (n_nodes, 2 n_numeric): each node's least and
        greatest value per column, ``(-inf, inf)`` where a row misses it;
        ``nodes`` (n_nodes, 4): the node's rows (start and stop), its right
        child (-1 for a leaf; the left child is the next node) and the column it
        splits on (one record per node, read together); ``split_val``: the value
        of the right half's first row.
    """
    r_sorted = np.ascontiguousarray(np.take(r_num, order, axis=0))
    n_rows = r_sorted.shape[0]
    n_groups = group_start.shape[0] - 1
    if leaf_rows is None:
        leaf_rows = max(n_rows, 1)  # every group one leaf: its box only
    half = max(1, (leaf_rows + 1) // 2)
    # a leaf holds at least ``half`` rows unless its group is smaller
    capacity = n_groups + 2 * (n_rows // half) + 1
    idx = np.arange(n_rows, dtype=np.int64)
    nodes = np.empty((capacity, 4), dtype=np.int64)
    group_root = np.empty(n_groups + 1, dtype=np.int64)
    box = np.empty((capacity, 2 * r_sorted.shape[1]))
    split_val = np.empty(capacity)
    n_nodes = int(
        _build(
            r_sorted,
            np.ascontiguousarray(group_start, dtype=np.int64),
            terms,
            int(leaf_rows),
            idx,
            nodes,
            box,
            split_val,
            group_root,
        )
    )
    group_root[n_groups] = n_nodes
    if n_nodes > n_groups:  # some group was split: its rows moved
        r_sorted = np.ascontiguousarray(np.take(r_sorted, idx, axis=0))
        order = np.take(order, idx)
    return (
        r_sorted,
        np.ascontiguousarray(order, dtype=np.int64),
        group_root,
        np.ascontiguousarray(box[:n_nodes]),
        np.ascontiguousarray(nodes[:n_nodes]),
        np.ascontiguousarray(split_val[:n_nodes]),
    )
