# SPDX-License-Identifier: BSD-3-Clause
"""The k-d trees inside the groups of the grouped numba search."""

from __future__ import annotations

import numpy as np
import pytest

from synthrisk.neighbors import _kernels
from synthrisk.neighbors._spec import distance_spec
from synthrisk.neighbors._trees import grouped_trees
from synthrisk.neighbors.numba_backend import group_reference


def _trees(num: np.ndarray, codes: np.ndarray, leaf_rows: int | None = 8) -> tuple:
    spec, _, r_num = distance_spec("dcr", num, num, codes.shape[1])
    _, start, order = group_reference(codes)
    terms, _ = _kernels.kernel_terms(spec, num.shape[1], codes.shape[1])
    return start, order, grouped_trees(r_num, order, start, terms, leaf_rows=leaf_rows)


@pytest.mark.parametrize("leaf_rows", [1, 3, 8, None])
def test_trees_hold_each_groups_rows_with_boxes_that_contain_them(
    leaf_rows: int | None, rng: np.random.Generator
) -> None:
    n = 700
    num = np.column_stack(
        [rng.integers(0, 5, n), rng.random(n), np.where(rng.random(n) < 0.8, 0.0, 7.0)]
    ).astype(float)
    num[rng.random(num.shape) < 0.05] = np.nan
    num[:50] = num[50]  # fifty equal rows
    codes = rng.integers(0, 3, (n, 2))
    codes[:200] = 0
    start, order, rows = _trees(num, codes, leaf_rows)
    r_sorted, new_order, root, box, nodes, split_val = rows
    lo, hi, right, split_col = nodes.T
    n_groups = start.shape[0] - 1
    assert root.shape == (n_groups + 1,)
    assert root[-1] == lo.shape[0]
    # the same rows in every group, in some order, and their values moved along
    for g in range(n_groups):
        a, b = start[g], start[g + 1]
        assert lo[root[g]] == a
        assert hi[root[g]] == b
        assert sorted(new_order[a:b]) == sorted(order[a:b])
    np.testing.assert_array_equal(r_sorted, num[new_order])
    for node in range(lo.shape[0]):
        part = r_sorted[lo[node] : hi[node]]
        for f in range(num.shape[1]):
            column = part[:, f]
            if np.isnan(column).any():
                assert box[node, 2 * f] == -np.inf
                assert box[node, 2 * f + 1] == np.inf
            else:
                assert box[node, 2 * f] == column.min()
                assert box[node, 2 * f + 1] == column.max()
        if right[node] < 0:
            # a leaf: small, or rows equal in every numeric column
            small = leaf_rows is None or hi[node] - lo[node] <= leaf_rows
            assert small or (part == part[0]).all() or np.isnan(part).any()
            continue
        left = node + 1
        assert lo[left] == lo[node]
        assert hi[left] == lo[right[node]]
        assert hi[right[node]] == hi[node]
        # the halves split at the median of the split column (missing last)
        keys = np.where(
            np.isnan(part[:, split_col[node]]), np.inf, part[:, split_col[node]]
        )
        middle = lo[right[node]] - lo[node]
        assert keys[:middle].max() <= split_val[node] <= keys[middle:].min()
    if leaf_rows is None:
        assert (right == -1).all()
        assert lo.shape[0] == n_groups


def test_trees_of_no_numeric_columns_and_of_single_rows() -> None:
    codes = np.array([[0], [1], [1], [2]])
    _, _, rows = _trees(np.empty((4, 0)), codes)
    assert rows[3].shape == (3, 0)
    assert (rows[4][:, 2] == -1).all()
    _start, _order, rows = _trees(
        np.arange(4.0)[:, None], np.array([[0], [1], [2], [3]])
    )
    np.testing.assert_array_equal(
        rows[3], np.repeat(np.arange(4.0)[:, None], 2, axis=1)
    )


def test_select_puts_the_kth_key_in_place_on_any_order(
    rng: np.random.Generator,
) -> None:
    from synthrisk.neighbors._trees import _select

    orders = [
        rng.random(301),
        np.arange(301.0),
        np.arange(301.0)[::-1],
        np.repeat([1.0, 2.0, np.inf], [100, 150, 51]),
        np.ones(301),
        # organ-pipe order (a median-of-three worst case for some pivots)
        np.r_[np.arange(0.0, 301.0, 2.0), np.arange(299.0, 0.0, -2.0)],
    ]
    for keys in orders:
        for kth in (0, 17, 150, 300):
            work, idx = keys.copy(), np.arange(keys.size)
            _select(work, idx, 0, keys.size, kth)
            np.testing.assert_array_equal(work, keys[idx])  # moved together
            assert work[kth] == np.sort(keys)[kth]
            assert (work[:kth] <= work[kth]).all()
            assert (work[kth + 1 :] >= work[kth]).all()
