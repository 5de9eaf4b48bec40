# SPDX-License-Identifier: BSD-3-Clause
"""The DCR share's neighbour lists: each synthetic row's ranked pool neighbours and tie sets.

:class:`~synthrisk.metrics.membership.share.DCRShare` compares every synthetic row's
distance to the training rows with its distance to the holdout rows, on the full tables
and under random relabellings of the pooled real rows. Both need, per synthetic row, the
pool rows at the smallest distance (its tie set) and, where a relabelling could leave a
side without a listed row, the next ones. This module builds those lists within a memory
bound and resolves the comparisons they leave open by direct searches.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from synthrisk.metrics._base import Context
from synthrisk.metrics.membership._row_keys import distinct_rows
from synthrisk.metrics.membership._share_kernels import (
    CLOSER_HOLDOUT,
    CLOSER_REAL,
    TIE,
    UNRESOLVED,
    expand_lists,
)
from synthrisk.metrics.membership._space import (
    Data,
    Space,
    distinct_lower_bound,
    n_rows,
    take_rows,
)
from synthrisk.schema.partitioned import is_partitioned

__all__ = ["pool_lists", "resolve"]

#: at most this many (distance, index) entries of pooled neighbour lists, to bound memory
_MAX_LIST_ENTRIES = 20_000_000
#: a tie set is listed up to this many pool rows. Beyond it nothing changes that matters:
#: comparisons that the listed rows leave open are searched directly (exact), and a random
#: relabelling gives all listed rows one label with probability at most
#: max(w, 1 - w) ** 1024 (w the real share of the pool), below 1e-40 for w <= 0.9
_MAX_TIE_LIST = 1024


#: search distinct pool rows when the pool has at most this share of distinct rows
_DISTINCT_POOL_SHARE = 0.8


def pool_lists(
    space: Space, syn: Data, pool: Data, *, k: int, context: Context
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ranked pool neighbours of every synthetic row, long enough to hold its tie set.

    Returns CSR ``(offsets, distances, indices)`` and the rows whose tie set could not
    be listed (see :func:`_ranked_lists`). A pool with many repeated rows (few
    columns, coarse values) is searched once per distinct row and each neighbour then
    stands for all of its copies.
    """
    n_syn, n_pool = n_rows(syn), n_rows(pool)
    if (
        is_partitioned(pool)
        and distinct_lower_bound(pool) > _DISTINCT_POOL_SHARE * n_pool  # type: ignore[arg-type]
    ):
        return _ranked_lists(space, syn, pool, k=k, context=context)
    first, inverse = distinct_rows(pool)
    if first.size > _DISTINCT_POOL_SHARE * n_pool:
        return _ranked_lists(space, syn, pool, k=k, context=context)
    offsets, dist, idx, truncated = _ranked_lists(
        space, syn, take_rows(pool, first), k=min(k, first.size), context=context
    )
    cap = max(k, min(_MAX_TIE_LIST, _MAX_LIST_ENTRIES // max(n_syn, 1)))
    offsets, dist, idx = expand_lists(offsets, dist, idx, inverse, cap=cap)
    return offsets, dist, idx, truncated


def _ranked_lists(
    space: Space, syn: Data, pool: Data, *, k: int, context: Context
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ranked pool neighbours of every synthetic row, long enough to hold its tie set.

    Returns CSR ``(offsets, distances, indices)`` and the rows whose tie set could not
    be listed up to ``_MAX_TIE_LIST`` rows within the memory cap.
    """
    n_syn, n_pool = n_rows(syn), n_rows(pool)
    nn = space.search(
        syn, pool, k=k, context=context, description="kNN synthetic → real + holdout"
    )
    lengths = np.full(n_syn, k, dtype=np.int64)
    extended: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    longest = min(n_pool, max(k, _MAX_TIE_LIST))
    rows = (
        np.flatnonzero(nn.distances[:, -1] == nn.distances[:, 0])
        if k < longest
        else np.empty(0, np.int64)
    )
    width = k
    entries = n_syn * k
    while rows.size and width < longest:
        new_width = min(2 * width, longest)
        if entries + rows.size * (new_width - width) > _MAX_LIST_ENTRIES:
            break
        entries += rows.size * (new_width - width)
        width = new_width
        more = space.search(
            take_rows(syn, rows),
            pool,
            k=width,
            context=context,
            description="kNN tied rows",
        )
        for pos, tied_row in enumerate(rows):
            extended[int(tied_row)] = (more.distances[pos], more.indices[pos])
        lengths[rows] = width
        still = (more.distances[:, -1] == more.distances[:, 0]) & (width < longest)
        rows = rows[still]
    if not extended:  # every list has k entries: the search's arrays as they are
        return (
            np.arange(0, n_syn * k + 1, k, dtype=np.int64),
            np.ascontiguousarray(nn.distances).reshape(-1),
            np.ascontiguousarray(nn.indices, dtype=_index_dtype(n_pool)).reshape(-1),
            rows,
        )
    offsets = np.zeros(n_syn + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    del lengths
    distances = np.empty(offsets[-1])
    indices = np.empty(offsets[-1], dtype=_index_dtype(n_pool))
    # the rows between two extended rows have k entries each and lie end to end, in
    # the search's arrays as in the lists: copied a run at a time, without temporaries
    start = 0
    for row in [*sorted(extended), n_syn]:
        if start < row:
            lo, hi = offsets[start], offsets[row]
            distances[lo:hi] = nn.distances[start:row].reshape(-1)
            indices[lo:hi] = nn.indices[start:row].reshape(-1)
        if row < n_syn:
            d, i = extended[row]
            distances[offsets[row] : offsets[row + 1]] = d
            indices[offsets[row] : offsets[row + 1]] = i
        start = row + 1
    return offsets, distances, indices, rows


def _index_dtype(n_pool: int) -> type[np.signedinteger[Any]]:
    """Pool positions in 4 bytes when they fit (the lists of millions of rows are half the size)."""
    return np.int32 if n_pool <= np.iinfo(np.int32).max else np.int64


def resolve(
    space: Space,
    syn: Data,
    pool: Data,
    is_real: np.ndarray,
    included: np.ndarray,
    outcome: np.ndarray,
    context: Context,
) -> np.ndarray:
    """Fill the unresolved outcomes by searching those synthetic rows directly."""
    rows = np.flatnonzero(outcome == UNRESOLVED)
    if rows.size == 0:
        return outcome
    query = take_rows(syn, rows)
    ref_real = take_rows(pool, np.flatnonzero(included & is_real))
    ref_hold = take_rows(pool, np.flatnonzero(included & ~is_real))
    a = space.search(
        query, ref_real, k=1, context=context, description="DCR to real (rest)"
    ).distances[:, 0]
    b = space.search(
        query, ref_hold, k=1, context=context, description="DCR to holdout (rest)"
    ).distances[:, 0]
    outcome = outcome.copy()
    outcome[rows] = np.where(a < b, CLOSER_REAL, np.where(a > b, CLOSER_HOLDOUT, TIE))
    return outcome
