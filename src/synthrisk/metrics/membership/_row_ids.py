# SPDX-License-Identifier: BSD-3-Clause
"""Exact row equality on partitioned tables: row hashes on the workers, ids on the driver.

:func:`row_ids` numbers the distinct rows of several partitioned tables (equal rows,
equal ids; missing equals missing, -0.0 equals 0.0, as in memory) from a 64-bit hash
per row computed on the workers. Every group of rows sharing a hash is confirmed row
by row against its first row, and groups where some row differs are split by their
distinct rows, so a hash collision cannot change a result.
:func:`distinct_lower_bound` counts distinct hashes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from synthrisk._typing import IntArray
from synthrisk.schema.partitioned import PartitionedTable

__all__ = ["distinct_lower_bound", "row_ids"]

#: row hashes are cut to these bits (tests lower it to force collisions)
_HASH_MASK = 0xFFFF_FFFF_FFFF_FFFF
#: representative rows gathered on the driver at a time while confirming hash groups
_CONFIRM_BYTES = 64 * 2**20
_GOLDEN = np.uint64(0x9E37_79B9_7F4A_7C15)
_MIX_1 = np.uint64(0xBF58_476D_1CE4_E5B9)
_MIX_2 = np.uint64(0x94D0_49BB_1331_11EB)


def _canonical(numeric: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Rows as uint64 words: one NaN bit pattern, -0.0 as 0.0 (the in-memory row equality)."""
    num = np.where(np.isnan(numeric), np.nan, numeric) + 0.0
    return np.hstack(
        [
            np.ascontiguousarray(num, dtype=np.float64).view(np.uint64),
            np.asarray(codes, dtype=np.int64).view(np.uint64),
        ]
    )


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on every element (uint64 arithmetic wraps)."""
    x = (x ^ (x >> np.uint64(30))) * _MIX_1
    x = (x ^ (x >> np.uint64(27))) * _MIX_2
    return np.asarray(x ^ (x >> np.uint64(31)))


def _hash_words(words: np.ndarray, mask: np.uint64) -> np.ndarray:
    h = np.zeros(words.shape[0], dtype=np.uint64)
    salts = (np.arange(words.shape[1], dtype=np.uint64) + np.uint64(1)) * _GOLDEN
    for j in range(words.shape[1]):
        h = _mix(h ^ _mix(words[:, j] + salts[j]))
    return np.asarray(h & mask)


def _row_hashes(numeric: np.ndarray, codes: np.ndarray, mask: np.uint64) -> np.ndarray:
    """Task: a 64-bit hash of every row of one partition (equal rows, equal hashes)."""
    return _hash_words(_canonical(numeric, codes), mask)


def _in_groups(
    numeric: np.ndarray, codes: np.ndarray, mask: np.uint64, hashes: np.ndarray
) -> tuple[IntArray, IntArray, np.ndarray]:
    """Rows whose hash is one of the sorted ``hashes``: positions, group, words."""
    words = _canonical(numeric, codes)
    h = _hash_words(words, mask)
    at = np.minimum(np.searchsorted(hashes, h), max(hashes.size - 1, 0))
    inside = np.flatnonzero(hashes[at] == h) if hashes.size else np.zeros(0, np.int64)
    return inside, at[inside], words[inside]


def _unlike_first(
    numeric: np.ndarray,
    codes: np.ndarray,
    mask: np.uint64,
    hashes: np.ndarray,
    firsts: np.ndarray,
) -> np.ndarray:
    """Task: the hashes whose group holds a row of this partition unlike the group's first row."""
    _, group, words = _in_groups(numeric, codes, mask, hashes)
    unlike = ~np.all(words == firsts[group], axis=1)
    return np.unique(hashes[group[unlike]])


def _distinct_in(
    numeric: np.ndarray, codes: np.ndarray, mask: np.uint64, hashes: np.ndarray
) -> np.ndarray:
    """Task: the distinct rows (as words) of this partition whose hash is in ``hashes``."""
    _, _, words = _in_groups(numeric, codes, mask, hashes)
    return np.unique(words, axis=0)


def _void(words: np.ndarray) -> np.ndarray:
    words = np.ascontiguousarray(words)
    return words.view(
        np.dtype((np.void, words.dtype.itemsize * words.shape[1]))
    ).ravel()


def _which_distinct(
    numeric: np.ndarray,
    codes: np.ndarray,
    mask: np.uint64,
    hashes: np.ndarray,
    distinct: np.ndarray,
) -> tuple[IntArray, IntArray]:
    """Task: rows of this partition whose hash is in ``hashes``, and which ``distinct`` row each is."""
    rows, _, words = _in_groups(numeric, codes, mask, hashes)
    _, inverse = np.unique(_void(np.vstack([distinct, words])), return_inverse=True)
    inverse = inverse.ravel()
    lookup = np.empty(int(inverse.max(initial=-1)) + 1, dtype=np.int64)
    lookup[inverse[: distinct.shape[0]]] = np.arange(distinct.shape[0])
    return rows, lookup[inverse[distinct.shape[0] :]]


def _gather_words(table: PartitionedTable, rows: IntArray) -> np.ndarray:
    """The rows at positions ``rows`` (a few), as words, on the driver."""
    got = table.take(rows)
    if isinstance(got, PartitionedTable):  # every row, in order
        parts = table.client.gather(table.partitions.parts)
        return np.vstack(
            [_canonical(np.asarray(p[0], np.float64), p[1]) for p in parts]
        )
    return _canonical(got.numeric, got.codes)


def distinct_lower_bound(table: PartitionedTable) -> int:
    """At least this many distinct rows: the number of distinct row hashes.

    Equal rows have equal hashes, so distinct hashes are distinct rows; only a hash
    collision can make the bound smaller than the true count. Only one hash per row
    comes to the driver.
    """
    mask = np.uint64(_HASH_MASK)
    parts = table.map_partitions(_row_hashes, mask)
    hashes = np.concatenate([np.zeros(0, np.uint64), *parts])
    del parts
    hashes.sort()
    return int(hashes.size and 1 + np.count_nonzero(hashes[1:] != hashes[:-1]))


def _hashes_of(tables: Sequence[PartitionedTable], mask: np.uint64) -> np.ndarray:
    """The row hashes of every table, one after the other, filled partition by partition."""
    starts = np.cumsum([0, *(t.n_rows for t in tables)])
    hashes = np.empty(int(starts[-1]), dtype=np.uint64)
    for start, table in zip(starts, tables, strict=False):
        for offset, part in zip(
            table.partitions.offsets,
            table.map_partitions(_row_hashes, mask),
            strict=True,
        ):
            hashes[start + offset : start + offset + part.size] = part
    return hashes


def _hash_ids(
    hashes: np.ndarray,
) -> tuple[np.ndarray, int, np.ndarray, IntArray]:
    """Ids of the distinct hashes, numbered in hash order (as ``np.unique``'s inverse).

    Returns the ids (int32 when they fit), the number of distinct hashes, and the
    hashes shared by several rows (sorted) with each one's first position. The
    hashes are taken a bucket of their top bits at a time, so that the sort's
    temporaries hold a sixteenth of the rows: on the driver, the ids cost 4 bytes a
    row beside the hashes' 8.
    """
    n = hashes.size
    ids = np.empty(n, dtype=np.int32 if 2 * n < 2**31 else np.int64)
    shift = np.uint64(max(int(hashes.max(initial=0)).bit_length() - 4, 0))
    bucket = np.empty(n, dtype=np.uint8)  # 16 buckets, in hash order
    for start in range(0, n, 1 << 22):  # a block at a time: no temporary of every hash
        bucket[start : start + (1 << 22)] = hashes[start : start + (1 << 22)] >> shift
    shared, firsts = [np.zeros(0, np.uint64)], [np.zeros(0, np.int64)]
    distinct = 0
    for b in range(16):
        rows = np.flatnonzero(bucket == b)
        if not rows.size:
            continue
        order = np.argsort(hashes[rows], kind="stable")  # equal hashes: first row first
        rows = rows[order]
        del order
        sub = hashes[rows]
        new = np.empty(sub.size, dtype=bool)
        new[0] = True
        np.not_equal(sub[1:], sub[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        ids[rows] = distinct + np.cumsum(new, dtype=np.int64) - 1
        many = np.diff(np.append(starts, sub.size)) > 1
        shared.append(sub[starts[many]])
        firsts.append(rows[starts[many]])
        distinct += starts.size
    return ids, distinct, np.concatenate(shared), np.concatenate(firsts)


def row_ids(tables: Sequence[PartitionedTable]) -> list[IntArray]:
    """Integer ids of the distinct rows over partitioned tables (equal rows, equal ids).

    The same equality as in memory (missing equals missing, -0.0 equals 0.0), from
    64-bit hashes computed on the workers: only one hash per row comes back to the
    driver, and the ids are built from them a bucket at a time (about 12 bytes a row
    on the driver, plus a sixteenth of the rows' sort). Hashes never decide alone:
    every group of rows sharing a hash is confirmed on the workers against its first
    row (gathered, a bounded number at a time), and the groups where some row differs
    are split by their distinct rows, so a hash collision cannot change the ids'
    equalities.
    """
    mask = np.uint64(_HASH_MASK)
    starts = np.cumsum([0, *(t.n_rows for t in tables)])
    hashes = _hashes_of(tables, mask)
    ids, n_distinct, uniq, first = _hash_ids(hashes)
    del hashes
    width = len(tables[0].numeric_names) + len(tables[0].categorical_names)
    step = max(1, _CONFIRM_BYTES // (8 * max(width, 1)))
    unlike = []
    for start in range(0, uniq.size, step):
        chunk = slice(start, start + step)
        positions = first[chunk]
        owner = np.searchsorted(starts, positions, side="right") - 1
        firsts = np.empty((positions.size, width), dtype=np.uint64)
        for t, table in enumerate(tables):
            here = owner == t
            if here.any():
                firsts[here] = _gather_words(table, positions[here] - starts[t])
        for table in tables:
            unlike.extend(
                table.map_partitions(_unlike_first, mask, uniq[chunk], firsts)
            )
    collided = np.unique(np.concatenate([np.zeros(0, np.uint64), *unlike]))
    if collided.size:
        pieces = [
            piece
            for table in tables
            for piece in table.map_partitions(_distinct_in, mask, collided)
        ]
        distinct = np.unique(np.vstack(pieces), axis=0)
        for t, table in enumerate(tables):
            found = table.map_partitions(_which_distinct, mask, collided, distinct)
            for offset, (rows, which) in zip(
                table.partitions.offsets, found, strict=True
            ):
                ids[starts[t] + offset + rows] = n_distinct + which
    return [ids[starts[t] : starts[t + 1]] for t in range(len(tables))]
