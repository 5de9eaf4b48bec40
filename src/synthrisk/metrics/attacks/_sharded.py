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

import dataclasses
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics.attacks._partitioned import on_cluster
from synthrisk.metrics.attacks._queries import QueryBatch, QueryTable, count_matches
from synthrisk.metrics.attacks._shard_tasks import (
    bucket_repeats,
    build_shard,
    column_counts,
    column_summaries,
    count_shard,
    distinct_values_task,
    masked_shard,
    merge_column_counts,
    merge_counts,
    merge_masked,
    pick_bucket,
    rare_values_task,
    shard_cells,
    shard_sizes,
    shard_values,
    split_by_hash,
    unified_arrays,
)
from synthrisk.schema.partitioned import PartitionedTable

__all__ = [
    "ColumnSummary",
    "MaskPacker",
    "ShardedQueryTable",
    "count_all",
    "sharded_tables",
    "unified_arrays",
]

#: most hash buckets of the cross-partition de-duplication
_MAX_BUCKETS = 32
#: partial results merged by one reduction task
_FAN_IN = 4


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
                client.submit(split_by_hash, part, off, n_buckets, pure=False)
                for part, off in zip(parts, table.partitions.offsets, strict=True)
            ]
            splits.append(table_splits)
            buckets.append(
                [
                    client.submit(
                        bucket_repeats,
                        *[
                            client.submit(pick_bucket, s, b, pure=False)
                            for s in table_splits
                        ],
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
            # scattered, not embedded in the tasks: the scheduler's message log would
            # keep a copy of every array a task carries
            local = client.scatter(
                [
                    repeats[bounds[i] : bounds[i + 1]] - offsets[i]
                    for i in range(len(offsets))
                ],
                hash=False,
            )
            del repeats
            all_shards.append(
                [
                    client.submit(
                        build_shard, part, split, drop, offsets[i], pure=False
                    )
                    for i, (part, split, drop) in enumerate(
                        zip(table.partitions.parts, table_splits, local, strict=True)
                    )
                ]
            )
        sizes = client.gather(
            [
                [client.submit(shard_sizes, s, pure=False) for s in shards]
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
            client.submit(count_shard, s, batch, cap, ne_matches_null, pure=False)
            for s in self.shards
        ]
        return _tree(
            partial,
            lambda group: client.submit(merge_counts, cap, *group, pure=False),
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
            client.submit(masked_shard, s, batch, m, cap, ne_matches_null, pure=False)
            for s, m in zip(self.shards, masks, strict=True)
        ]
        return _tree(
            partial,
            lambda group: client.submit(merge_masked, cap, *group, pure=False),
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
        """``values[rows[:, None], cols]`` of the de-duplicated table.

        Each shard returns only the requested cells of its rows; the row positions and
        columns travel as scattered data, so the driver keeps no copy of them once
        the values are back.
        """
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        owner = np.searchsorted(self.starts, rows, side="right") - 1
        values = np.empty(cols.shape, dtype=np.float64)
        if rows.shape[0] == 0:
            return values
        by_owner = np.argsort(owner, kind="stable")
        bounds = np.searchsorted(owner[by_owner], np.arange(len(self.shards) + 1))
        del owner
        col_type = np.int16 if self.n_columns <= np.iinfo(np.int16).max else np.int32
        requests, picks = [], []
        for p in range(len(self.shards)):
            pick = by_owner[bounds[p] : bounds[p + 1]]
            if pick.size:
                local = rows[pick] - self.starts[p]
                requests.append((p, local, cols[pick].astype(col_type)))
                picks.append(pick)
        shipped = self.scatter([(local, c) for _, local, c in requests])
        futures = [
            self.client.submit(shard_cells, self.shards[p], job, pure=False)
            for (p, _, _), job in zip(requests, shipped, strict=True)
        ]
        del requests, shipped
        for pick, block in zip(picks, self.client.gather(futures), strict=True):
            values[pick] = block
        return values

    def gather(self) -> QueryTable:
        """The whole de-duplicated table in memory (for small tables)."""
        blocks = self.client.gather(
            [self.client.submit(shard_values, s, pure=False) for s in self.shards]
        )
        values = np.vstack([np.zeros((0, self.n_columns)), *blocks])
        return QueryTable.from_values(values)

    def _column_stats(self) -> Any:
        if self._stats is None:
            client = self.client
            partial = [client.submit(column_counts, s, pure=False) for s in self.shards]
            self._stats = _tree(
                partial,
                lambda group: client.submit(merge_column_counts, *group, pure=False),
            )
        return self._stats

    def summaries(self) -> list[ColumnSummary]:
        """A :class:`ColumnSummary` of every column (computed once)."""
        if self._summaries is None:
            stats = self._column_stats()
            gathered = self.client.submit(column_summaries, stats, pure=False).result()
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
            rare_values_task, self._column_stats(), list(requests), pure=False
        ).result()

    def distinct_at(self, requests: Sequence[tuple[int, IntArray]]) -> list[FloatArray]:
        """For each ``(column, idx)``: the ``idx``-th smallest distinct values of that
        column (NaN at ``idx`` = the number of distinct values)."""
        if not requests:
            return []
        return self.client.submit(
            distinct_values_task, self._column_stats(), list(requests), pure=False
        ).result()


def count_all(
    jobs: list[tuple[Any, QueryBatch]], *, ne_matches_null: bool
) -> list[tuple[IntArray, IntArray]]:
    """:func:`count_matches` (cap 2) of each ``(table, batch)`` (empty for a None table).

    Sharded tables count side by side on the cluster, each batch sent once; their
    second array is the input position of a single match.
    """
    ne = ne_matches_null
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if not any(isinstance(t, ShardedQueryTable) for t, _ in jobs):
        return [
            none if t is None else count_matches(t, b, cap=2, ne_matches_null=ne)
            for t, b in jobs
        ]
    first = next(t for t, _ in jobs if t is not None)
    batches = list({id(b): b for t, b in jobs if t is not None}.values())
    shipped = dict(zip([id(b) for b in batches], first.scatter(batches), strict=True))
    futures = [
        None if t is None else t.submit_count(shipped[id(b)], cap=2, ne_matches_null=ne)
        for t, b in jobs
    ]
    results = iter(first.client.gather([f for f in futures if f is not None]))
    return [none if f is None else next(results) for f in futures]


def _partitioned(tables: Any, name: str) -> PartitionedTable:
    table = tables.encoded(name)
    assert on_cluster(table)
    return table


#: sharded tables of the partitioned tables being evaluated (both singling-out
#: metrics use them; they go with the tables object)
_SHARDS: weakref.WeakKeyDictionary[Any, list[ShardedQueryTable]] = (
    weakref.WeakKeyDictionary()
)


def sharded_tables(tables: Any) -> list[ShardedQueryTable]:
    """The real, synthetic (and holdout) tables de-duplicated and indexed on the cluster."""
    if tables not in _SHARDS:
        names = ["real", "synthetic"]
        if tables.holdout is not None:
            names.append("holdout")
        _SHARDS[tables] = ShardedQueryTable.build_all(
            [_partitioned(tables, name) for name in names]
        )
    return _SHARDS[tables]
