# SPDX-License-Identifier: BSD-3-Clause
"""Pooled-list comparisons and the permutation null of the DCR share, against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from synthrisk.metrics.membership._share_kernels import (
    CLOSER_HOLDOUT,
    CLOSER_REAL,
    TIE,
    UNRESOLVED,
    compare_sides,
    permutation_shares,
    tie_sets,
)


def _lists(dist: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    order = np.argsort(dist, axis=1, kind="stable")[:, :width]
    d = np.take_along_axis(dist, order, axis=1)
    offsets = np.arange(0, dist.shape[0] * width + 1, width, dtype=np.int64)
    return offsets, d.ravel(), order.ravel().astype(np.int64)


def test_compare_sides_matches_brute_force_on_tied_data() -> None:
    rng = np.random.default_rng(0)
    pool = rng.integers(0, 3, size=(60, 2)).astype(float)
    syn = rng.integers(0, 3, size=(40, 2)).astype(float)
    dist = np.abs(syn[:, None, :] - pool[None, :, :]).sum(-1)
    is_real = np.arange(60) < 35
    for trial in range(5):
        included = rng.random(60) < 0.6 if trial else np.ones(60, dtype=bool)
        a = np.where(included & is_real, dist, np.inf).min(1)
        b = np.where(included & ~is_real, dist, np.inf).min(1)
        want = np.where(a < b, CLOSER_REAL, np.where(a > b, CLOSER_HOLDOUT, TIE))
        full = compare_sides(*_lists(dist, 60), is_real, included, 60)
        np.testing.assert_array_equal(full, want)
        short = compare_sides(*_lists(dist, 4), is_real, included, 60)
        resolved = short != UNRESOLVED
        np.testing.assert_array_equal(short[resolved], want[resolved])


def test_tie_sets_and_permutation_null() -> None:
    dist = np.array([[0.0, 0.0, 1.0, 2.0], [1.0, 3.0, 3.0, 3.0], [2.0, 2.0, 2.0, 0.5]])
    offsets, d, idx = _lists(dist, 4)
    tie_offsets, tie_idx = tie_sets(offsets, d, idx)
    np.testing.assert_array_equal(tie_offsets, [0, 2, 3, 4])
    np.testing.assert_array_equal(tie_idx, [0, 1, 0, 3])
    half, weighted = permutation_shares(
        tie_offsets, tie_idx, n_real=2, n_pool=4, n_permutations=4000, seed=1
    )
    # row 0 ties pool rows {0, 1}: both real with prob 1/6, both holdout 1/6, mixed 4/6 (tie)
    # rows 1 and 2 each have one nearest row, real with prob 1/2
    assert half.mean() == pytest.approx((1 / 6 + 0.5 * 4 / 6 + 0.5 + 0.5) / 3, abs=0.01)
    assert weighted.mean() == pytest.approx(
        half.mean(), abs=1e-12
    )  # equal sizes: same tie weight
    again, _ = permutation_shares(
        tie_offsets, tie_idx, n_real=2, n_pool=4, n_permutations=4000, seed=1
    )
    np.testing.assert_array_equal(half, again)
