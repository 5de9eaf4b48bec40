# SPDX-License-Identifier: BSD-3-Clause
"""Singling out on training and holdout rows at equal sizes, and the chance of the comparison."""

from __future__ import annotations

from typing import Any

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics.attacks._queries import QueryBatch, QueryTable
from synthrisk.metrics.attacks._shard_tasks import masked_counts

__all__ = ["EQUAL_SIZE_REPEATS", "RELABEL_REPEATS", "equal_size_successes"]

#: seeded subsamples of the larger table for the equal-size comparison
EQUAL_SIZE_REPEATS = 5
#: random relabellings of training ∪ holdout rows for the standard error of the comparison
RELABEL_REPEATS = 30


def equal_size_successes(
    real_values: Any,
    hold_values: Any,
    queries: QueryBatch,
    main_counts: IntArray,
    control_counts: IntArray,
    *,
    ne_matches_null: bool,
    rng: np.random.Generator,
) -> tuple[FloatArray, FloatArray, float]:
    """Per-query success on training and holdout rows at equal sizes, and the null spread.

    The larger side is subsampled to the smaller one's size ``EQUAL_SIZE_REPEATS``
    times and the successes averaged. Given the queries (built from the synthetic
    table), the only chance left is which real people fell into the training table
    and which into the holdout; the spread of the difference under
    ``RELABEL_REPEATS`` random relabellings of the pooled rows is its standard error.

    ``real_values`` and ``hold_values`` are the de-duplicated tables: indexed
    (:class:`QueryTable`), as value matrices, or sharded on a cluster. Every subsample
    is a row mask, and each query walks the rows of its most selective predicate
    once for all of them (no subsample is indexed again).
    """
    if not isinstance(real_values, (np.ndarray, QueryTable)):
        return _sharded(
            real_values,
            hold_values,
            queries,
            main_counts,
            control_counts,
            ne_matches_null=ne_matches_null,
            rng=rng,
        )
    real = (
        real_values
        if isinstance(real_values, QueryTable)
        else QueryTable.from_values(real_values)
    )
    hold = (
        hold_values
        if isinstance(hold_values, QueryTable)
        else QueryTable.from_values(hold_values)
    )
    n_r, n_h = real.n_rows, hold.n_rows
    m = min(n_r, n_h)
    main = (main_counts == 1).astype(np.float64)
    ctrl = (control_counts == 1).astype(np.float64)
    if len(queries) == 0 or m == 0:
        return main, ctrl, 0.0
    # the subsamples as masks: 2 per relabelling, then those of the larger table
    # (drawn in the same order as ever, so the same rows)
    n_big = EQUAL_SIZE_REPEATS if n_r != n_h else 0
    n_masks = 2 * RELABEL_REPEATS + n_big
    # one row per subsample over the pooled rows (real first), written contiguously
    pooled = np.zeros((n_masks, n_r + n_h), dtype=np.bool_)
    offset = 0 if n_r > n_h else n_r
    for r in range(n_big):
        rows = rng.choice(max(n_r, n_h), size=m, replace=False)
        pooled[2 * RELABEL_REPEATS + r, offset + rows] = True
    for b in range(RELABEL_REPEATS):
        order = rng.permutation(n_r + n_h)
        pooled[2 * b, order[:m]] = True
        pooled[2 * b + 1, order[m : 2 * m]] = True
    real_masks = np.ascontiguousarray(pooled[:, :n_r].T)
    hold_masks = np.ascontiguousarray(pooled[:, n_r:].T)
    del pooled
    in_real = masked_counts(
        real, queries, real_masks, cap=2, ne_matches_null=ne_matches_null
    )
    in_hold = masked_counts(
        hold, queries, hold_masks, cap=2, ne_matches_null=ne_matches_null
    )
    counts = np.minimum(np.add(in_real, in_hold), 2)
    success = counts == 1
    if n_big:
        total = success[:, 2 * RELABEL_REPEATS :].mean(axis=1)
        main, ctrl = (total, ctrl) if n_r > n_h else (main, total)
    rates = success[:, : 2 * RELABEL_REPEATS].mean(axis=0)
    diffs = rates[0::2] - rates[1::2]
    return main, ctrl, float(diffs.std(ddof=1))


def _sharded(
    real: Any,
    hold: Any,
    queries: QueryBatch,
    main_counts: IntArray,
    control_counts: IntArray,
    *,
    ne_matches_null: bool,
    rng: np.random.Generator,
) -> tuple[FloatArray, FloatArray, float]:
    """:func:`equal_size_successes` of sharded tables: the same draws, as bit masks."""
    n_r, n_h = real.n_rows, hold.n_rows
    m = min(n_r, n_h)
    main = (main_counts == 1).astype(np.float64)
    ctrl = (control_counts == 1).astype(np.float64)
    if len(queries) == 0 or m == 0:
        return main, ctrl, 0.0
    big_packer = None
    if n_r != n_h:
        big = real if n_r > n_h else hold
        big_packer = big.packer(EQUAL_SIZE_REPEATS)
        for _ in range(EQUAL_SIZE_REPEATS):
            big_packer.add(rng.choice(big.n_rows, size=m, replace=False))
    real_packer = real.packer(2 * RELABEL_REPEATS)
    hold_packer = hold.packer(2 * RELABEL_REPEATS)
    for _ in range(RELABEL_REPEATS):
        order = rng.permutation(n_r + n_h)
        for subset in (order[:m], order[m : 2 * m]):
            real_packer.add(subset[subset < n_r])
            hold_packer.add(subset[subset >= n_r] - n_r)
        # freed before the next draw (two permutations of every row would coexist)
        del order, subset
    # every subsample counted in one round on the cluster
    n_real_parts, n_hold_parts = len(real.rows), len(hold.rows)
    big_masks = [] if big_packer is None else big_packer.packed
    shipped = real.scatter(
        [queries, *real_packer.packed, *hold_packer.packed, *big_masks]
    )
    batch = shipped[0]
    real_masks = shipped[1 : 1 + n_real_parts]
    hold_masks = shipped[1 + n_real_parts : 1 + n_real_parts + n_hold_parts]
    options = {"cap": 2, "ne_matches_null": ne_matches_null}
    futures = [
        real.submit_masked_counts(batch, real_masks, **options),
        hold.submit_masked_counts(batch, hold_masks, **options),
    ]
    if big_packer is not None:
        big_masks = shipped[1 + n_real_parts + n_hold_parts :]
        futures.append(big.submit_masked_counts(batch, big_masks, **options))
    gathered = real.client.gather(futures)
    counts = gathered[0] + gathered[1]
    if big_packer is not None:
        total = np.zeros(len(queries))
        for r in range(EQUAL_SIZE_REPEATS):
            total += (gathered[2][:, r] == 1).astype(np.float64)
        total /= EQUAL_SIZE_REPEATS
        main, ctrl = (total, ctrl) if n_r > n_h else (main, total)
    diffs = np.empty(RELABEL_REPEATS)
    for b in range(RELABEL_REPEATS):
        first = (counts[:, 2 * b] == 1).astype(np.float64)
        second = (counts[:, 2 * b + 1] == 1).astype(np.float64)
        diffs[b] = float(first.mean() - second.mean())
    return main, ctrl, float(diffs.std(ddof=1))
