# SPDX-License-Identifier: BSD-3-Clause
"""Singling-out query counting on a table partitioned on a Dask cluster.

:class:`ShardedQueryTable` stands for the in-memory
:class:`~synthrisk.metrics.attacks._queries.QueryTable` of a de-duplicated table whose
rows stay on the workers, one indexed *shard* per partition:

1. **de-duplication across partitions.** Each partition drops its own repeated rows;
   the rows left are routed by a hash of their values to buckets, one task per bucket
   finds the rows repeating an earlier row of another partition (pandas' rule: NaN
   equals NaN), and every shard keeps the first occurrence of each distinct row of
   the whole table — the rows, in the order, that the in-memory de-duplication keeps;
2. **counting.** A query's matches (up to ``cap``) are counted in every shard and the
   counts summed by a tree of merge tasks (the shards hold no common row); so are the
   matches in row subsets given as bit masks (the size correction and the equal-size
   comparison of singling out);
3. **column statistics.** Per-column distinct values and their counts are reduced to
   one task: the medians, extremes, rare values and distinct values query generation
   needs, without gathering the table.

Only per-query results, the rows drawn by query generation and the statistics above
reach the driver.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics.attacks._queries import (
    QueryBatch,
    QueryTable,
    count_matches,
    masked_counts,
)
from synthrisk.schema.partitioned import PartitionedTable

__all__ = ["ColumnSummary", "MaskPacker", "ShardedQueryTable", "unified_arrays"]

#: most hash buckets of the cross-partition de-duplication
_MAX_BUCKETS = 32
#: partial results merged by one reduction task
_FAN_IN = 4


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


def _split(
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


def _pick(split: tuple[IntArray, list[Any]], bucket: int) -> Any:
    return split[1][bucket]


def _bucket_repeats(*pieces: tuple[FloatArray, IntArray]) -> IntArray:
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
class _Shard:
    """One partition's share of the de-duplicated table, indexed for counting."""

    table: QueryTable
    #: position in the input table of each row
    positions: IntArray


def _build_shard(
    part: tuple[np.ndarray, np.ndarray],
    split: tuple[IntArray, Any] | None,
    repeats: IntArray,
    offset: int,
) -> _Shard:
    """Task: the partition's rows kept by the de-duplication, indexed."""
    from synthrisk.metrics.attacks._query_generation import dedup

    values = unified_arrays(part[0], part[1])
    keep = dedup(values) if split is None else split[0]
    if repeats.size:
        keep = keep[~np.isin(keep, repeats)]
    return _Shard(QueryTable.from_values(values[keep]), keep + offset)


def _shard_sizes(shard: _Shard) -> tuple[int, IntArray]:
    return shard.table.n_rows, shard.table.n_valid


@contextlib.contextmanager
def _one_numba_thread() -> Iterator[None]:
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


def _count_shard(
    shard: _Shard, batch: QueryBatch, cap: int, ne_matches_null: bool
) -> tuple[IntArray, IntArray]:
    """Task: matches per query (up to ``cap``) and the input position of a single match."""
    with _one_numba_thread():
        counts, first = count_matches(
            shard.table, batch, cap=cap, ne_matches_null=ne_matches_null
        )
    if shard.positions.size == 0:  # every row repeats one of an earlier partition
        return counts, first
    single = np.where(counts == 1, shard.positions[np.maximum(first, 0)], -1)
    return counts, single


def _merge_counts(
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


def _masked_shard(
    shard: _Shard,
    batch: QueryBatch,
    packed: np.ndarray,
    cap: int,
    ne_matches_null: bool,
) -> IntArray:
    """Task: matches per query and row subset (bit-packed masks of shape (n_masks, bytes))."""
    n = shard.table.n_rows
    masks = np.unpackbits(packed, axis=1, count=n).astype(bool).T
    with _one_numba_thread():
        return masked_counts(
            shard.table, batch, masks, cap=cap, ne_matches_null=ne_matches_null
        )


def _merge_masked(cap: int, *parts: IntArray) -> IntArray:
    total = parts[0].copy()
    for p in parts[1:]:
        total = np.minimum(total + p, cap)
    return total


def _shard_rows(shard: _Shard, rows: IntArray) -> FloatArray:
    return shard.table.values[rows]


def _shard_values(shard: _Shard) -> FloatArray:
    return shard.table.values


def _column_counts(shard: _Shard) -> list[tuple[FloatArray, IntArray]]:
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


def _merge_column_counts(
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


def _median(distinct: FloatArray, counts: IntArray) -> float:
    """``np.median`` of the values ``distinct`` repeated ``counts`` times."""
    n = int(counts.sum())
    if n == 0:
        return math.nan
    ends = np.cumsum(counts)
    low = distinct[np.searchsorted(ends, (n - 1) // 2, side="right")]
    high = distinct[np.searchsorted(ends, n // 2, side="right")]
    # np.median of an even count is the mean of the two middle values
    return float(np.median(np.array([low, high]))) if n % 2 == 0 else float(low)


@dataclasses.dataclass(frozen=True)
class ColumnSummary:
    """What query generation needs of one column of the de-duplicated table.

    Attributes
    ----------
    n_distinct : int
        Distinct non-missing values.
    n_missing : int
        Missing values.
    low, high, median : float
        Smallest, largest and median non-missing value (NaN when there is none).
    n_rare : int
        Values seen exactly once (:meth:`ShardedQueryTable.rare_at` gives them).
    """

    n_distinct: int
    n_missing: int
    low: float
    high: float
    median: float
    n_rare: int


def _summaries(
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
                _median(distinct, counts),
                int(np.sum(counts == 1)),
            )
        )
    return out


def _rare_at(
    stats: list[tuple[FloatArray, IntArray]],
    requests: Sequence[tuple[int, IntArray]],
) -> list[FloatArray]:
    """Task: the ``ranks``-th smallest values seen once in column ``j``."""
    out = []
    for j, ranks in requests:
        distinct, counts = stats[j]
        out.append(distinct[counts == 1][ranks])
    return out


def _distinct_at(
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


def _tree(partial: list[Any], merge: Callable[[list[Any]], Any]) -> Any:
    while len(partial) > 1:
        partial = [
            merge(partial[i : i + _FAN_IN]) for i in range(0, len(partial), _FAN_IN)
        ]
    return partial[0]


class MaskPacker:
    """Row subsets of a sharded table, bit-packed per shard as they are added."""

    def __init__(self, rows: Sequence[int], n_masks: int) -> None:
        self.rows = tuple(rows)
        self.starts = np.concatenate([[0], np.cumsum(self.rows)]).astype(np.int64)
        self.packed = [np.zeros((n_masks, (r + 7) // 8), dtype=np.uint8) for r in rows]
        self.n_added = 0

    def add(self, subset: IntArray) -> None:
        """Add the next subset (row positions of the de-duplicated table)."""
        mask = np.zeros(int(self.starts[-1]), dtype=bool)
        mask[subset] = True
        for p, rows in enumerate(self.rows):
            start = self.starts[p]
            self.packed[p][self.n_added] = np.packbits(mask[start : start + rows])
        self.n_added += 1


class ShardedQueryTable:
    """A de-duplicated table on a Dask cluster, counted like a :class:`QueryTable`.

    Build it with :meth:`build`. Row positions ``0 .. n_rows - 1`` are those of the
    de-duplicated table (the first occurrence of every distinct row, in input order),
    as in memory.
    """

    def __init__(
        self,
        client: Any,
        shards: list[Any],
        rows: Sequence[int],
        n_valid: IntArray,
        n_columns: int,
    ) -> None:
        self.client = client
        self.shards = shards
        self.rows = tuple(int(r) for r in rows)
        self.starts = np.concatenate([[0], np.cumsum(self.rows)]).astype(np.int64)
        self.n_valid = n_valid
        self._n_columns = n_columns
        self._stats: Any = None
        self._summaries: list[ColumnSummary] | None = None

    @property
    def n_rows(self) -> int:
        """Number of distinct rows."""
        return int(self.starts[-1])

    @property
    def n_columns(self) -> int:
        """Number of columns."""
        return self._n_columns

    @classmethod
    def build(cls, table: PartitionedTable) -> ShardedQueryTable:
        """De-duplicate ``table`` across its partitions and index every partition."""
        return cls.build_all([table])[0]

    @classmethod
    def build_all(cls, tables: Sequence[PartitionedTable]) -> list[ShardedQueryTable]:
        """:meth:`build` of several tables at once (their tasks run side by side)."""
        if not tables:
            return []
        client = tables[0].client
        splits: list[list[Any]] = []
        buckets: list[list[Any]] = []
        for table in tables:
            parts = table.partitions.parts
            n_buckets = min(len(parts), _MAX_BUCKETS)
            if n_buckets <= 1:
                splits.append([None] * len(parts))
                buckets.append([])
                continue
            table_splits = [
                client.submit(_split, part, off, n_buckets, pure=False)
                for part, off in zip(parts, table.partitions.offsets, strict=True)
            ]
            splits.append(table_splits)
            buckets.append(
                [
                    client.submit(
                        _bucket_repeats,
                        *[client.submit(_pick, s, b, pure=False) for s in table_splits],
                        pure=False,
                    )
                    for b in range(n_buckets)
                ]
            )
        found = client.gather(buckets)
        all_shards = []
        for table, table_splits, table_repeats in zip(
            tables, splits, found, strict=True
        ):
            repeats = np.sort(np.concatenate([np.zeros(0, np.int64), *table_repeats]))
            offsets = table.partitions.offsets
            bounds = np.searchsorted(repeats, [*offsets, table.n_rows])
            all_shards.append(
                [
                    client.submit(
                        _build_shard,
                        part,
                        split,
                        repeats[bounds[i] : bounds[i + 1]] - offsets[i],
                        offsets[i],
                        pure=False,
                    )
                    for i, (part, split) in enumerate(
                        zip(table.partitions.parts, table_splits, strict=True)
                    )
                ]
            )
        sizes = client.gather(
            [
                [client.submit(_shard_sizes, s, pure=False) for s in shards]
                for shards in all_shards
            ]
        )
        out = []
        for table, shards, table_sizes in zip(tables, all_shards, sizes, strict=True):
            n_valid = np.sum(
                [np.zeros(table.n_columns, np.int64), *[s[1] for s in table_sizes]],
                axis=0,
            )
            out.append(
                cls(
                    client,
                    shards,
                    [s[0] for s in table_sizes],
                    n_valid,
                    table.n_columns,
                )
            )
        return out

    @property
    def n_missing(self) -> IntArray:
        """Missing values per column."""
        return self.n_rows - self.n_valid

    def submit_count(
        self, batch: Any, *, cap: int = 2, ne_matches_null: bool = False
    ) -> Any:
        """A future of :meth:`count`'s result; ``batch`` may be a scattered future."""
        client = self.client
        partial = [
            client.submit(_count_shard, s, batch, cap, ne_matches_null, pure=False)
            for s in self.shards
        ]
        return _tree(
            partial,
            lambda group: client.submit(_merge_counts, cap, *group, pure=False),
        )

    def count(
        self, batch: QueryBatch, *, cap: int = 2, ne_matches_null: bool = False
    ) -> tuple[IntArray, IntArray]:
        """:func:`count_matches`; the second array holds the *input* position of the
        row a query matches when it matches exactly one (else -1)."""
        n = len(batch)
        if n == 0 or self.n_rows == 0:
            return np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
        [shipped] = self.scatter([batch])
        counts, single = self.submit_count(
            shipped, cap=cap, ne_matches_null=ne_matches_null
        ).result()
        return counts, single

    def submit_masked_counts(
        self,
        batch: Any,
        masks: Sequence[np.ndarray],
        *,
        cap: int = 2,
        ne_matches_null: bool = False,
    ) -> Any:
        """A future of :meth:`masked_counts`' result; ``batch`` and ``masks`` may be
        scattered futures (:meth:`scatter`)."""
        client = self.client
        partial = [
            client.submit(_masked_shard, s, batch, m, cap, ne_matches_null, pure=False)
            for s, m in zip(self.shards, masks, strict=True)
        ]
        return _tree(
            partial,
            lambda group: client.submit(_merge_masked, cap, *group, pure=False),
        )

    def masked_counts(
        self,
        batch: QueryBatch,
        masks: Sequence[np.ndarray],
        *,
        cap: int = 2,
        ne_matches_null: bool = False,
    ) -> IntArray:
        """:func:`masked_counts` with each shard's masks bit-packed.

        ``masks[p]`` has shape (n_masks, ceil(rows of shard p / 8)) (:meth:`packer`).
        """
        shipped, *packed = self.scatter([batch, *masks])
        return self.submit_masked_counts(
            shipped, packed, cap=cap, ne_matches_null=ne_matches_null
        ).result()

    def scatter(self, objects: Sequence[Any]) -> list[Any]:
        """``objects`` sent to the cluster in one round (futures, in order)."""
        return list(self.client.scatter(list(objects), hash=False))

    def packer(self, n_masks: int) -> MaskPacker:
        """An empty set of ``n_masks`` row subsets for :meth:`masked_counts`."""
        return MaskPacker(self.rows, n_masks)

    def cells(self, rows: IntArray, cols: IntArray) -> FloatArray:
        """``values[rows[:, None], cols]`` of the de-duplicated table."""
        rows = np.asarray(rows, dtype=np.int64)
        owner = np.searchsorted(self.starts, rows, side="right") - 1
        values = np.empty((rows.shape[0], self.n_columns))
        pieces = {}
        for p in np.unique(owner):
            pieces[int(p)] = self.client.submit(
                _shard_rows,
                self.shards[p],
                rows[owner == p] - self.starts[p],
                pure=False,
            )
        gathered = self.client.gather(pieces)
        for p, block in gathered.items():
            values[owner == p] = block
        return np.ascontiguousarray(values[np.arange(rows.shape[0])[:, None], cols])

    def gather(self) -> QueryTable:
        """The whole de-duplicated table in memory (for small tables)."""
        blocks = self.client.gather(
            [self.client.submit(_shard_values, s, pure=False) for s in self.shards]
        )
        values = np.vstack([np.zeros((0, self.n_columns)), *blocks])
        return QueryTable.from_values(values)

    def _column_stats(self) -> Any:
        if self._stats is None:
            client = self.client
            partial = [
                client.submit(_column_counts, s, pure=False) for s in self.shards
            ]
            self._stats = _tree(
                partial,
                lambda group: client.submit(_merge_column_counts, *group, pure=False),
            )
        return self._stats

    def summaries(self) -> list[ColumnSummary]:
        """A :class:`ColumnSummary` of every column (computed once)."""
        if self._summaries is None:
            stats = self._column_stats()
            gathered = self.client.submit(_summaries, stats, pure=False).result()
            self._summaries = [
                ColumnSummary(n, int(missing), low, high, median, n_rare)
                for (n, low, high, median, n_rare), missing in zip(
                    gathered, self.n_missing, strict=True
                )
            ]
        return self._summaries

    def rare_at(self, requests: Sequence[tuple[int, IntArray]]) -> list[FloatArray]:
        """For each ``(column, ranks)``: the ``ranks``-th smallest of the values seen
        exactly once in that column."""
        if not requests:
            return []
        return self.client.submit(
            _rare_at, self._column_stats(), list(requests), pure=False
        ).result()

    def distinct_at(self, requests: Sequence[tuple[int, IntArray]]) -> list[FloatArray]:
        """For each ``(column, idx)``: the ``idx``-th smallest distinct values of that
        column (NaN at ``idx`` = the number of distinct values)."""
        if not requests:
            return []
        return self.client.submit(
            _distinct_at, self._column_stats(), list(requests), pure=False
        ).result()
