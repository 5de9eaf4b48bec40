# SPDX-License-Identifier: BSD-3-Clause
"""The tasks of :mod:`synthrisk.metrics.attacks._sharded`: what runs on the workers.

De-duplication across partitions (hash buckets), one indexed shard per partition,
query counts per shard (also in bit-masked row subsets) and their merges, and the
per-column distinct values and counts query generation needs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics.attacks._queries import (
    QueryBatch,
    QueryTable,
    _holds_others,
    _kernel_args,
    _most_selective,
    count_matches,
)

__all__ = [
    "Shard",
    "bucket_repeats",
    "build_shard",
    "column_counts",
    "column_summaries",
    "count_shard",
    "distinct_values_task",
    "masked_counts",
    "masked_shard",
    "median_of_counts",
    "merge_column_counts",
    "merge_counts",
    "merge_masked",
    "one_numba_thread",
    "pick_bucket",
    "rare_values_task",
    "shard_cells",
    "shard_sizes",
    "shard_values",
    "split_by_hash",
    "unified_arrays",
]


@numba.njit(nogil=True, cache=True)
def _offer_row(
    masks: Any, row: int, out: Any, qi: int, cap: int
) -> int:  # pragma: no cover - compiled
    """Count a matching ``row`` in every mask holding it; returns the masks it filled."""
    filled = 0
    for m in range(masks.shape[1]):
        if masks[row, m] and out[qi, m] < cap:
            out[qi, m] += 1
            if out[qi, m] == cap:
                filled += 1
    return filled


@numba.njit(nogil=True, cache=True)
def _wanted(
    masks: Any, row: int, out: Any, qi: int, cap: int
) -> bool:  # pragma: no cover - compiled
    """Whether some mask holds ``row`` and is still below ``cap``."""
    for m in range(masks.shape[1]):  # noqa: SIM110 - any() of a generator does not compile
        if masks[row, m] and out[qi, m] < cap:
            return True
    return False


@numba.njit(parallel=True, nogil=True, cache=True)
def _masked_count_kernel(
    table: Any, queries: Any, ne_null: bool, cap: int, masks: Any, out: Any
) -> None:  # pragma: no cover - compiled
    """``out[i, m]``: rows in mask ``m`` matching query ``i``, counted up to ``cap``.

    ``masks`` has shape (n_rows, n_masks); ``out`` starts at zero. Each query walks
    the rows of its most selective predicate once, for every mask, and stops when
    every mask has reached ``cap``.
    """
    n_rows = table[0].shape[0]
    n_masks = masks.shape[1]
    order = table[1]
    for q in numba.prange(out.shape[0]):
        # prange's index, as numba parallelises it: one signature of each helper
        qi = np.uint64(q)
        best_t, a1, b1, a2, b2 = _most_selective(table, queries, qi, ne_null)
        full = 0
        if best_t < 0:  # an empty conjunction matches every row
            for row in range(n_rows):
                full += _offer_row(masks, row, out, qi, cap)
                if full >= n_masks:
                    break
            continue
        column = queries[0][qi, best_t]
        for a, b in ((a1, b1), (a2, b2)):
            for pos in range(a, b):
                if full >= n_masks:
                    break
                row = order[column, pos]
                if _wanted(masks, row, out, qi, cap) and _holds_others(
                    table, queries, qi, best_t, row, ne_null
                ):
                    full += _offer_row(masks, row, out, qi, cap)


def masked_counts(
    table: QueryTable,
    batch: QueryBatch,
    masks: np.ndarray,
    *,
    cap: int = 2,
    ne_matches_null: bool = False,
) -> IntArray:
    """Rows of each of several row subsets of ``table`` matching each query, up to ``cap``.

    Parameters
    ----------
    table : QueryTable
        The indexed table.
    batch : QueryBatch
        The queries.
    masks : ndarray of shape (n_rows, n_masks) of bool
        Column ``m``: the rows of subset ``m``.
    cap : int, default=2
        Counting stops at this number.
    ne_matches_null : bool, default=False
        Whether ``!=`` is satisfied by a missing value.

    Returns
    -------
    ndarray of shape (n_queries, n_masks)
        ``min(number of matching rows of the subset, cap)``.
    """
    masks = np.ascontiguousarray(masks, dtype=np.bool_)
    out = np.zeros((len(batch), masks.shape[1]), dtype=np.int64)
    if len(batch) and table.n_rows and masks.shape[1]:
        kernel: Any = _masked_count_kernel
        kernel(
            *_kernel_args(table, batch),
            bool(ne_matches_null),
            int(max(cap, 1)),
            masks,
            out,
        )
    return out


def unified_arrays(numeric: np.ndarray, codes: np.ndarray) -> FloatArray:
    """:func:`~synthrisk.metrics.attacks._queries.unified_values` of raw block arrays."""
    numeric = np.asarray(numeric, dtype=np.float64)
    as_float = codes.astype(np.float64)
    as_float[codes < 0] = np.nan
    return np.ascontiguousarray(np.hstack([numeric, as_float]))


def _row_hash(values: FloatArray) -> np.ndarray:
    """A 64-bit hash of each row; rows equal under pandas' rule hash alike."""
    canonical = values + 0.0  # -0.0 becomes 0.0
    bits = canonical.view(np.uint64).copy()
    bits[np.isnan(canonical)] = np.uint64(0x7FF8000000000000)
    h = np.full(values.shape[0], np.uint64(0xCBF29CE484222325))
    with np.errstate(over="ignore"):
        for j in range(values.shape[1]):
            h = (h ^ bits[:, j]) * np.uint64(0x100000001B3)
            h ^= h >> np.uint64(29)
        h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    return h


def split_by_hash(
    part: tuple[np.ndarray, np.ndarray], offset: int, n_buckets: int
) -> tuple[IntArray, list[tuple[FloatArray, IntArray]]]:
    """Task: the partition's first occurrences, and those rows by hash bucket."""
    from synthrisk.metrics.attacks._query_generation import dedup

    values = unified_arrays(part[0], part[1])
    keep = dedup(values)
    kept = values[keep]
    positions = keep + offset
    bucket = (_row_hash(kept) % np.uint64(n_buckets)).astype(np.int64)
    pieces = [(kept[bucket == b], positions[bucket == b]) for b in range(n_buckets)]
    return keep, pieces


def pick_bucket(split: tuple[IntArray, list[Any]], bucket: int) -> Any:
    return split[1][bucket]


def bucket_repeats(*pieces: tuple[FloatArray, IntArray]) -> IntArray:
    """Task: positions of the rows of one bucket repeating an earlier row."""
    from synthrisk.metrics.attacks._query_generation import dedup

    values = np.vstack([p[0] for p in pieces])
    positions = np.concatenate([p[1] for p in pieces])
    order = np.argsort(positions, kind="stable")
    values, positions = values[order], positions[order]
    first = np.zeros(positions.shape[0], dtype=bool)
    first[dedup(values)] = True
    return positions[~first]


@dataclasses.dataclass(frozen=True)
class Shard:
    """One partition's share of the de-duplicated table, indexed for counting."""

    table: QueryTable
    #: position in the input table of each row
    positions: IntArray


def build_shard(
    part: tuple[np.ndarray, np.ndarray],
    split: tuple[IntArray, Any] | None,
    repeats: IntArray,
    offset: int,
) -> Shard:
    """Task: the partition's rows kept by the de-duplication, indexed."""
    from synthrisk.metrics.attacks._query_generation import dedup

    values = unified_arrays(part[0], part[1])
    keep = dedup(values) if split is None else split[0]
    if repeats.size:
        keep = keep[~np.isin(keep, repeats)]
    return Shard(QueryTable.from_values(values[keep]), keep + offset)


def shard_sizes(shard: Shard) -> tuple[int, IntArray]:
    return shard.table.n_rows, shard.table.n_valid


@contextlib.contextmanager
def one_numba_thread() -> Iterator[None]:
    """On a ``dask.distributed`` worker, run the (parallel) numba kernels on one thread:
    the worker's threads are the parallelism, as in the neighbour search's tasks."""
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        yield
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def count_shard(
    shard: Shard, batch: QueryBatch, cap: int, ne_matches_null: bool
) -> tuple[IntArray, IntArray]:
    """Task: matches per query (up to ``cap``) and the input position of a single match."""
    with one_numba_thread():
        counts, first = count_matches(
            shard.table, batch, cap=cap, ne_matches_null=ne_matches_null
        )
    if shard.positions.size == 0:  # every row repeats one of an earlier partition
        return counts, first
    single = np.where(counts == 1, shard.positions[np.maximum(first, 0)], -1)
    return counts, single


def merge_counts(
    cap: int, *parts: tuple[IntArray, IntArray]
) -> tuple[IntArray, IntArray]:
    """Task: counts of disjoint shards summed (capped); the single match kept."""
    counts = np.zeros_like(parts[0][0])
    single = np.full_like(parts[0][1], -1)
    for c, s in parts:
        alone = (counts == 0) & (c == 1)
        single = np.where(alone, s, np.where(c == 0, single, -1))
        counts = np.minimum(counts + c, cap)
    return counts, single


def masked_shard(
    shard: Shard,
    batch: QueryBatch,
    packed: np.ndarray,
    cap: int,
    ne_matches_null: bool,
) -> IntArray:
    """Task: matches per query and row subset (bit-packed masks of shape (n_masks, bytes))."""
    n = shard.table.n_rows
    masks = np.unpackbits(packed, axis=1, count=n).astype(bool).T
    with one_numba_thread():
        return masked_counts(
            shard.table, batch, masks, cap=cap, ne_matches_null=ne_matches_null
        )


def merge_masked(cap: int, *parts: IntArray) -> IntArray:
    total = parts[0].copy()
    for p in parts[1:]:
        total = np.minimum(total + p, cap)
    return total


def shard_cells(shard: Shard, request: tuple[IntArray, IntArray]) -> FloatArray:
    """Task: ``values[rows[:, None], cols]`` of the shard's rows (``request = (rows, cols)``)."""
    rows, cols = request
    return np.ascontiguousarray(shard.table.values[rows[:, None], cols])


def shard_values(shard: Shard) -> FloatArray:
    return shard.table.values


def column_counts(shard: Shard) -> list[tuple[FloatArray, IntArray]]:
    """Task: per column, the distinct non-missing values of the shard and their counts."""
    table = shard.table
    out = []
    for j in range(table.n_columns):
        values = table.sorted_values[j, : table.n_valid[j]]
        if values.size == 0:
            out.append((values.copy(), np.zeros(0, dtype=np.int64)))
            continue
        starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
        counts = np.diff(np.r_[starts, values.size]).astype(np.int64)
        out.append((values[starts], counts))
    return out


def merge_column_counts(
    *parts: list[tuple[FloatArray, IntArray]],
) -> list[tuple[FloatArray, IntArray]]:
    out = []
    for j in range(len(parts[0])):
        values = np.concatenate([p[j][0] for p in parts])
        counts = np.concatenate([p[j][1] for p in parts])
        distinct, inverse = np.unique(values, return_inverse=True)
        total = np.bincount(
            inverse.reshape(-1), weights=counts, minlength=distinct.size
        )
        out.append((distinct, np.rint(total).astype(np.int64)))
    return out


def median_of_counts(distinct: FloatArray, counts: IntArray) -> float:
    """``np.median`` of the values ``distinct`` repeated ``counts`` times."""
    n = int(counts.sum())
    if n == 0:
        return math.nan
    ends = np.cumsum(counts)
    low = distinct[np.searchsorted(ends, (n - 1) // 2, side="right")]
    high = distinct[np.searchsorted(ends, n // 2, side="right")]
    # np.median of an even count is the mean of the two middle values
    return float(np.median(np.array([low, high]))) if n % 2 == 0 else float(low)


def column_summaries(
    stats: list[tuple[FloatArray, IntArray]],
) -> list[tuple[int, float, float, float, int]]:
    """Task: distinct count, extremes, median and number of rare values per column."""
    out = []
    for distinct, counts in stats:
        if distinct.size == 0:
            out.append((0, math.nan, math.nan, math.nan, 0))
            continue
        out.append(
            (
                int(distinct.size),
                float(distinct[0]),
                float(distinct[-1]),
                median_of_counts(distinct, counts),
                int(np.sum(counts == 1)),
            )
        )
    return out


def rare_values_task(
    stats: list[tuple[FloatArray, IntArray]],
    requests: Sequence[tuple[int, IntArray]],
) -> list[FloatArray]:
    """Task: the ``ranks``-th smallest values seen once in column ``j``."""
    out = []
    for j, ranks in requests:
        distinct, counts = stats[j]
        out.append(distinct[counts == 1][ranks])
    return out


def distinct_values_task(
    stats: list[tuple[FloatArray, IntArray]],
    requests: Sequence[tuple[int, IntArray]],
) -> list[FloatArray]:
    """Task: the ``idx``-th distinct values of column ``j`` (NaN past the last one)."""
    out = []
    for j, idx in requests:
        distinct = stats[j][0]
        inside = idx < distinct.size
        values = np.full(idx.shape[0], np.nan)
        values[inside] = distinct[idx[inside]]
        out.append(values)
    return out
