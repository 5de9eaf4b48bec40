# SPDX-License-Identifier: BSD-3-Clause
"""The tasks of the partitioned CAP attack: what runs on the workers, one partition each.

Each known or sensitive column becomes integer codes (:class:`Column`); tuples of codes
are counted (:func:`count_part`) and looked up in sorted per-column stages
(:class:`TupleIndex`, :func:`lookup`) without ever forming a key wider than int64.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.schema.keys import tuple_ids

__all__ = [
    "CAPPED_DISTINCT",
    "Column",
    "Layout",
    "TupleIndex",
    "build_index",
    "column_codes",
    "count_part",
    "distinct_rows",
    "lookup",
    "prepare_part",
    "recover_ns",
    "score_part",
]

#: distinct values of a numeric column counted by the default column choice (it
#: caps them at this many: a numeric column is binned into 10 bins)
CAPPED_DISTINCT = 10
_INT64_MIN = np.iinfo(np.int64).min

# ------------------------------------------------------------------- column codes


@dataclasses.dataclass(frozen=True)
class Column:
    """How the workers turn one known or sensitive column into codes.

    Values get codes ``0 .. size - 1`` and a missing value (or a value outside the
    real bins) the code ``size``, so every column takes ``size + 1`` codes.

    Attributes
    ----------
    numeric : bool
        True for a column of the numeric block, False for a category code column.
    index : int
        Position of the column in its block.
    mode : {"category", "exact", "binned"}
        Category codes as they are; numbers matched exactly (their position among the
        sorted distinct values, ``arrays[slot]``); or numbers binned on the edges
        ``arrays[slot]`` (no slot: the real table has no value to bin).
    size : int
    slot : int
        Position of the column's sorted values or bin edges in the array arguments;
        -1 for none.
    dates : {"", "missing", "sdmetrics"}
        For a binned datetime column: what a missing date becomes (its own category,
        or the smallest int64 like SDMetrics); "" for other columns.
    """

    numeric: bool
    index: int
    mode: Literal["category", "exact", "binned"]
    size: int
    slot: int = -1
    dates: Literal["", "missing", "sdmetrics"] = ""


def recover_ns(seconds: FloatArray, origin: int) -> IntArray:
    """Nanosecond timestamps from the encoded seconds since ``origin`` (NaN read as 0).

    The encoding keeps ``float64(ns - origin) / 1e9``. The value kept is the coarsest
    candidate (whole seconds, then milliseconds, microseconds, nanoseconds) that
    encodes back to the same seconds, which is the timestamp itself for dates in
    whole seconds up to 146 years after the origin, in whole milliseconds at any
    distance, in whole microseconds up to 47 years after it, and for any timestamp up
    to 48 days after it.
    """
    s = np.where(np.isnan(seconds), 0.0, seconds)
    delta = np.zeros(s.shape[0], dtype=np.int64)
    todo = np.arange(s.shape[0])
    with np.errstate(invalid="ignore", over="ignore"):
        for per_second in (1, 10**3, 10**6):
            wanted = s[todo]
            candidate = np.round(wanted * per_second).astype(np.int64) * (
                10**9 // per_second
            )
            ok = candidate.astype(np.float64) / 1e9 == wanted
            delta[todo[ok]] = candidate[ok]
            todo = todo[~ok]
            if not todo.size:
                return delta + np.int64(origin)
        wanted = s[todo]
        base = np.round(wanted * 1e9).astype(np.int64)
        fixed, found = base.copy(), np.zeros(base.shape[0], dtype=bool)
        for offset in (0, -1, 1, -2, 2, -3, 3, -4, 4):
            candidate = base + offset
            ok = ~found & (candidate.astype(np.float64) / 1e9 == wanted)
            fixed[ok] = candidate[ok]
            found |= ok
        delta[todo] = fixed
    return delta + np.int64(origin)


def _cut(values: np.ndarray, edges: FloatArray) -> IntArray:
    """Bins of ``values`` on ``edges`` (right-closed), -1 outside: the in-memory rule."""
    ids = np.searchsorted(edges, values.astype(np.float64, copy=False), side="left")
    codes = ids.astype(np.int64) - 1
    codes[(ids == 0) | (ids == edges.shape[0])] = -1
    return codes


def _binned(
    column: Column,
    values: FloatArray,
    arrays: Sequence[np.ndarray],
    origin: int,
    *,
    synthetic: bool,
) -> IntArray:
    missing = np.isnan(values)
    raw: np.ndarray = values
    if column.dates:
        raw = recover_ns(values, origin)
        if column.dates == "sdmetrics":
            raw[missing] = _INT64_MIN  # NaT read as the smallest int64
            missing = np.zeros_like(missing)
    if column.slot < 0:  # no real value: synthetic values all in one bin
        codes = np.full(values.shape[0], -1, dtype=np.int64)
        if synthetic:
            codes[~missing] = 0
        return codes
    edges = arrays[column.slot]
    if synthetic:
        edges = edges.copy()
        edges[0], edges[-1] = -np.inf, np.inf
    codes = _cut(raw, edges)
    codes[missing] = -1
    return codes


def column_codes(
    numeric: FloatArray,
    codes: IntArray,
    columns: Sequence[Column],
    arrays: Sequence[np.ndarray],
    origin: int,
    *,
    synthetic: bool,
) -> IntArray:
    """Codes of ``columns`` for the rows of one partition, shape (n_rows, n_columns)."""
    out = np.empty((numeric.shape[0], len(columns)), dtype=np.int64)
    for j, column in enumerate(columns):
        if not column.numeric:
            values = codes[:, column.index]
            out[:, j] = np.where(values < 0, column.size, values)
            continue
        x = numeric[:, column.index]
        if column.mode == "exact":
            code = np.searchsorted(arrays[column.slot], x).astype(np.int64)
            code[np.isnan(x)] = column.size
        else:  # -1: missing, or outside the real bins
            code = _binned(column, x, arrays, origin, synthetic=synthetic)
            code[code < 0] = column.size
        out[:, j] = code
    return out


# --------------------------------------------------------------- tuples and lookups


def distinct_rows(rows: IntArray) -> tuple[IntArray, IntArray]:
    """Distinct rows of an integer matrix (in order of first appearance) and each row's id."""
    ids, _, n_ids = tuple_ids(rows, rows[:0])
    _, first = np.unique(ids, return_index=True)
    return rows[first[:n_ids]], ids


@dataclasses.dataclass(frozen=True)
class TupleIndex:
    """Sorted distinct tuples, looked up one column at a time.

    Stage ``j`` holds the sorted distinct values of ``prefix id * radix[j] + code``,
    whose positions are the ids of the tuples' first ``j + 1`` columns; the last
    stage's positions are the tuples' ids. Prefix ids are below the number of tuples,
    so the stage values stay far inside int64.
    """

    stages: tuple[IntArray, ...]
    radix: tuple[int, ...]

    @property
    def size(self) -> int:
        return int(self.stages[-1].shape[0])


def build_index(rows: IntArray, radix: Sequence[int]) -> tuple[TupleIndex, IntArray]:
    """The index of the distinct rows of ``rows`` and the id of each row."""
    ids = np.zeros(rows.shape[0], dtype=np.int64)
    stages = []
    for j, r in enumerate(radix):
        stage, ids = np.unique(ids * r + rows[:, j], return_inverse=True)
        stages.append(stage.astype(np.int64))
        ids = ids.ravel().astype(np.int64)
    return TupleIndex(tuple(stages), tuple(int(r) for r in radix)), ids


def lookup(
    rows: IntArray, stages: Sequence[IntArray], radix: Sequence[int]
) -> IntArray:
    """Id of each row in the index of ``stages``; -1 for rows not in it."""
    n = rows.shape[0]
    ids = np.zeros(n, dtype=np.int64)
    found = np.ones(n, dtype=bool)
    for j, (stage, r) in enumerate(zip(stages, radix, strict=True)):
        value = ids * r + rows[:, j]
        if stage.shape[0] == 0:
            return np.full(n, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(stage, value), stage.shape[0] - 1)
        found &= stage[pos] == value
        ids = np.where(found, pos, 0)
    return np.where(found, ids, -1)


# ------------------------------------------------------------------ partition tasks


def prepare_part(
    numeric: FloatArray,
    codes: IntArray,
    exact: Sequence[int],
    dates: Sequence[tuple[int, str]],
    capped: Sequence[int],
    origin: int,
) -> dict[str, Any]:
    """Task: distinct values of the exact columns, range of the binned dates."""
    uniques = []
    for j in exact:
        x = numeric[:, j]
        uniques.append(np.unique(x[~np.isnan(x)]))
    ranges: list[tuple[int, int] | None] = []
    for j, rule in dates:
        x = numeric[:, j]
        ns = recover_ns(x, origin)
        missing = np.isnan(x)
        if rule == "sdmetrics":
            ns[missing] = _INT64_MIN
            missing = np.zeros_like(missing)
        present = ns[~missing]
        ranges.append(
            None if present.size == 0 else (int(present.min()), int(present.max()))
        )
    few = []
    for j in capped:  # distinct values, or None past the cap
        x = numeric[:, j]
        u = np.unique(x[~np.isnan(x)])
        few.append(u if u.shape[0] <= CAPPED_DISTINCT else None)
    return {"uniques": uniques, "ranges": ranges, "capped": few}


def count_part(
    numeric: FloatArray,
    codes: IntArray,
    columns: Sequence[Column],
    origin: int,
    *arrays: np.ndarray,
) -> tuple[IntArray, IntArray]:
    """Task: the distinct code tuples of a synthetic partition and their row counts."""
    tuples = column_codes(numeric, codes, columns, arrays, origin, synthetic=True)
    distinct, ids = distinct_rows(tuples)
    return distinct, np.bincount(ids, minlength=distinct.shape[0]).astype(np.int64)


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where the scoring task finds its inputs among the array arguments."""

    n_key: int
    n_sens: int
    n_column_arrays: int
    key_radix: tuple[int, ...]
    sens_radix: tuple[int, ...]
    binned_sensitive: tuple[int, ...]


def score_part(
    numeric: FloatArray,
    codes: IntArray,
    columns: Sequence[Column],
    origin: int,
    layout: Layout,
    *arrays: np.ndarray,
) -> dict[str, Any]:
    """Task: each real row's CAP probability where its key is in the synthetic table.

    Also returns the distinct (key, sensitive id) tuples of the other rows with each
    such row's tuple, and the codes present in the binned sensitive columns.
    """
    k = layout.n_key
    n_col = layout.n_column_arrays
    n_ks, n_ss = len(layout.key_radix), len(layout.sens_radix)
    key_stages = arrays[n_col : n_col + n_ks]
    sens_stages = arrays[n_col + n_ks : n_col + n_ks + n_ss]
    pair_ids, pair_rows, key_rows = arrays[n_col + n_ks + n_ss :]
    tuples = column_codes(numeric, codes, columns, arrays, origin, synthetic=False)
    key = lookup(tuples[:, :k], key_stages, layout.key_radix)
    sens = lookup(tuples[:, k:], sens_stages, layout.sens_radix)
    sens[sens < 0] = layout.n_sens - 1  # a sensitive tuple no synthetic row has
    matched = key >= 0
    pair = key * layout.n_sens + sens
    p = np.full(numeric.shape[0], np.nan)
    if pair_ids.shape[0]:
        pos = np.minimum(np.searchsorted(pair_ids, pair), pair_ids.shape[0] - 1)
        count = np.where(matched & (pair_ids[pos] == pair), pair_rows[pos], 0)
        p[matched] = count[matched] / key_rows[key[matched]]
    unmatched = np.column_stack([tuples[~matched, :k], sens[~matched]])
    distinct, ids = distinct_rows(unmatched)
    present = [np.unique(tuples[:, k + j]) for j in layout.binned_sensitive]
    return {
        "p": p,
        "unmatched": distinct,
        "unmatched_ids": ids.astype(np.int32),
        "present": present,
    }
