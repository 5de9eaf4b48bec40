# SPDX-License-Identifier: BSD-3-Clause
"""Vectorised counting of conjunctive queries (the engine behind singling out).

A query is a conjunction of predicates ``column <op> value``. Tables are held as one
float64 matrix (numeric and datetime columns as numbers, categorical and boolean
columns as their shared category codes, ``NaN`` for every missing value) plus, per
column, the row order that sorts it (missing values last). Every predicate then
selects at most two contiguous runs of that order, whose lengths are known from two
binary searches. To count a query the kernel walks only the rows of its most
selective predicate, tests the other predicates on those rows and stops as soon as
the count reaches ``cap`` (2 is enough to decide "singles out"). There is no scan of
the table per query, and the numba kernel runs over queries in parallel.

Null semantics: a missing value never satisfies ``==``, ``<``, ``<=``, ``>``, ``>=``;
``!=`` is satisfied by a missing value only when ``ne_matches_null`` is True (pandas'
rule, Anonymeter 1.0) and not otherwise (polars' and SQL's rule, Anonymeter 1.1).
"""

from __future__ import annotations

import dataclasses
import keyword
import math
import operator
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import pandas as pd

from synthrisk._typing import FloatArray, IntArray
from synthrisk.schema.encoding import EncodedTable

__all__ = [
    "COLUMN_BLOCK",
    "OPS",
    "OP_EQ",
    "OP_GE",
    "OP_GT",
    "OP_ISNULL",
    "OP_LE",
    "OP_LT",
    "OP_NE",
    "OP_NEVER",
    "OP_NOTNULL",
    "ColumnInfo",
    "QueryBatch",
    "QueryTable",
    "choose_columns",
    "count_matches",
    "distinct_rows",
    "match_lists",
    "polars_term",
    "render_query",
]

OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_ISNULL, OP_NOTNULL, OP_NEVER = range(9)
#: text of each operator code, as written in rendered queries
OPS = ("==", "!=", "<", "<=", ">", ">=", "IS NULL", "IS NOT NULL", "NEVER")


@dataclasses.dataclass(frozen=True)
class ColumnInfo:
    """What the query builder needs to know about the columns of the unified matrix.

    Attributes
    ----------
    names : tuple of str
        Column names, numeric block first, then categorical block (encoded order).
    kinds : tuple of str
        Schema kind of each column (``numerical``, ``datetime``, ``categorical``, ``boolean``).
    categories : tuple of (pandas Index or None)
        For categorical and boolean columns, the category of each code.
    time_origin : int
        Nanoseconds since the epoch that datetime value 0 stands for.
    integral : tuple of bool
        Whether a numerical column holds whole numbers only (rendered without ``.0``).
    """

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    categories: tuple[pd.Index | None, ...]
    time_origin: int
    integral: tuple[bool, ...]

    @property
    def n_columns(self) -> int:
        """Number of columns."""
        return len(self.names)

    def name_rank(self) -> IntArray:
        """Rank of each column's name in sorted order (queries list columns by name)."""
        order = sorted(range(len(self.names)), key=lambda i: self.names[i])
        rank = np.empty(len(self.names), dtype=np.int64)
        rank[order] = np.arange(len(self.names))
        return rank

    def code_of(self, column: int, value: object) -> float:
        """Code of ``value`` in a categorical column (NaN when it is not a category)."""
        categories = self.categories[column]
        if categories is None:
            msg = f"column {self.names[column]!r} is not categorical."
            raise ValueError(msg)
        found = categories.get_indexer(pd.Index([value], dtype=object))[0]
        return float("nan") if found < 0 else float(found)


def unified_values(table: EncodedTable) -> FloatArray:
    """The (n_rows, n_numeric + n_categorical) float64 matrix, NaN for missing values."""
    codes = table.codes.astype(np.float64)
    codes[table.codes < 0] = np.nan
    return np.ascontiguousarray(np.hstack([table.numeric, codes]))


def distinct_rows(columns: list[np.ndarray]) -> tuple[IntArray, IntArray]:
    """First occurrence of every distinct row, and each row's distinct row.

    Parameters
    ----------
    columns : list of ndarray of shape (n_rows,)
        The columns of the rows: integers, or floats (``NaN`` equals ``NaN`` and
        ``-0.0`` equals ``0.0``, as in :meth:`pandas.DataFrame.duplicated`).

    Returns
    -------
    first : ndarray of shape (n_distinct,)
        Position of the first occurrence of each distinct row, ascending.
    inverse : ndarray of shape (n_rows,)
        Number of each row's distinct row (numbered in order of first occurrence).

    Examples
    --------
    >>> import numpy as np
    >>> first, inverse = distinct_rows([np.array([1.0, np.nan, 1.0, np.nan]), np.array([0, 2, 0, 2])])
    >>> first.tolist(), inverse.tolist()
    ([0, 1], [0, 1, 0, 1])
    """
    n_rows = len(columns[0]) if columns else 0
    if n_rows == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # each column's distinct values numbered, then a row's numbers combined into one
    # integer (in several rounds when their product would overflow)
    key = np.zeros(n_rows, dtype=np.int64)
    room = 1
    for column in columns:
        if column.dtype.kind == "f":
            column = np.where(np.isnan(column), np.nan, column + 0.0).view(np.int64)
        _, codes = np.unique(column, return_inverse=True)
        codes = codes.reshape(-1).astype(np.int64)
        size = int(codes.max()) + 1
        if room * size >= 1 << 62:
            key = pd.factorize(key)[0].astype(np.int64)
            room = int(key.max()) + 1
        key = key * size + codes
        room *= size
    inverse = pd.factorize(key)[0].astype(np.int64)
    return np.unique(inverse, return_index=True)[1].astype(np.int64), inverse


@dataclasses.dataclass(frozen=True)
class QueryTable:
    """A table prepared for query counting.

    Attributes
    ----------
    values : ndarray of shape (n_rows, n_columns)
        Unified float64 values, NaN for missing.
    order : ndarray of shape (n_columns, n_rows)
        Per column, the row positions sorted by value (missing last, ties by position).
    sorted_values : ndarray of shape (n_columns, n_rows)
        Per column, the values in that order.
    n_valid : ndarray of shape (n_columns,)
        Per column, the number of non-missing values.
    """

    values: FloatArray
    order: IntArray
    sorted_values: FloatArray
    n_valid: IntArray

    @classmethod
    def from_values(cls, values: FloatArray) -> QueryTable:
        """Index a unified value matrix."""
        values = np.ascontiguousarray(values, dtype=np.float64)
        # each column sorted as one contiguous row (faster than along axis 0)
        columns = np.ascontiguousarray(values.T)
        order = np.argsort(columns, axis=1, kind="stable")
        sorted_values = np.take_along_axis(columns, order, axis=1)
        n_valid = (~np.isnan(values)).sum(axis=0).astype(np.int64)
        return cls(values, order.astype(np.int64), sorted_values, n_valid)

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.values.shape[0])

    @property
    def n_columns(self) -> int:
        """Number of columns."""
        return int(self.values.shape[1])

    def take(self, rows: IntArray) -> QueryTable:
        """A new index over the rows at positions ``rows``."""
        return QueryTable.from_values(self.values[rows])


@dataclasses.dataclass(frozen=True)
class QueryBatch:
    """A batch of conjunctive queries as padded arrays.

    Attributes
    ----------
    cols : ndarray of shape (n_queries, width)
        Column of each predicate (index into the unified matrix).
    ops : ndarray of shape (n_queries, width)
        Operator code of each predicate (``OP_*``).
    vals : ndarray of shape (n_queries, width)
        Comparison value of each predicate (a category code for categorical columns).
    lengths : ndarray of shape (n_queries,)
        Number of predicates of each query; the rest of the row is padding.
    """

    cols: IntArray
    ops: np.ndarray
    vals: FloatArray
    lengths: IntArray

    def __len__(self) -> int:
        return int(self.lengths.shape[0])

    def take(self, rows: IntArray) -> QueryBatch:
        """The queries at positions ``rows``."""
        return QueryBatch(
            self.cols[rows], self.ops[rows], self.vals[rows], self.lengths[rows]
        )

    @classmethod
    def concat(cls, batches: list[QueryBatch], width: int) -> QueryBatch:
        """Stack batches (padded to ``width`` predicates)."""
        if not batches:
            return cls.empty(width)
        parts = []
        for b in batches:
            pad = width - b.cols.shape[1]
            parts.append(
                (
                    np.pad(b.cols, ((0, 0), (0, pad))),
                    np.pad(b.ops, ((0, 0), (0, pad)), constant_values=OP_NEVER),
                    np.pad(b.vals, ((0, 0), (0, pad))),
                    b.lengths,
                )
            )
        return cls(
            np.ascontiguousarray(np.vstack([p[0] for p in parts])),
            np.ascontiguousarray(np.vstack([p[1] for p in parts])),
            np.ascontiguousarray(np.vstack([p[2] for p in parts])),
            np.concatenate([p[3] for p in parts]),
        )

    @classmethod
    def empty(cls, width: int) -> QueryBatch:
        """A batch without queries."""
        return cls(
            np.zeros((0, width), dtype=np.int64),
            np.zeros((0, width), dtype=np.int8),
            np.zeros((0, width)),
            np.zeros(0, dtype=np.int64),
        )

    def keys(self) -> list[bytes]:
        """A hashable canonical key per query (predicates as stored, in order)."""
        out = []
        for i in range(len(self)):
            n = int(self.lengths[i])
            out.append(
                self.cols[i, :n].tobytes()
                + self.ops[i, :n].tobytes()
                + self.vals[i, :n].tobytes()
            )
        return out


@numba.njit(nogil=True, cache=True)
def _segments(
    sorted_col, n_valid, n_rows, op, v, ne_null
):  # pragma: no cover - compiled
    """Two runs ``[a1, b1)`` and ``[a2, b2)`` of the sorted order matching one predicate."""
    if op == 6:  # IS NULL
        return n_valid, n_rows, 0, 0
    if op == 7:  # IS NOT NULL
        return 0, n_valid, 0, 0
    if op == 8 or math.isnan(v):
        return 0, 0, 0, 0
    valid = sorted_col[:n_valid]
    lower = np.searchsorted(valid, v, side="left")  # first value >= v
    upper = np.searchsorted(valid, v, side="right")  # first value > v
    if op == 0:
        return lower, upper, 0, 0
    if op == 1:
        return 0, lower, upper, n_rows if ne_null else n_valid
    if op == 2:
        return 0, lower, 0, 0
    if op == 3:
        return 0, upper, 0, 0
    if op == 4:
        return upper, n_valid, 0, 0
    return lower, n_valid, 0, 0  # op == 5: >=


@numba.njit(nogil=True, cache=True)
def _holds(x, op, v, ne_null):  # pragma: no cover - compiled
    """Whether value ``x`` satisfies one predicate."""
    x_nan = math.isnan(x)
    if op == 6:
        return x_nan
    if op == 7:
        return not x_nan
    if op == 8 or math.isnan(v):
        return False
    if x_nan:
        return op == 1 and ne_null
    if op == 0:
        return x == v
    if op == 1:
        return x != v
    if op == 2:
        return x < v
    if op == 3:
        return x <= v
    if op == 4:
        return x > v
    return x >= v


@numba.njit(nogil=True, cache=True)
def _most_selective(table, queries, qi, ne_null):  # pragma: no cover - compiled
    """The term of query ``qi`` matching the fewest rows, with its sorted-value segments."""
    values, _, sorted_values, n_valid = table
    q_cols, q_ops, q_vals, q_len = queries
    n_rows = values.shape[0]
    best_t = -1
    best_size = n_rows + 1
    ba1 = 0
    bb1 = 0
    ba2 = 0
    bb2 = 0
    for t in range(q_len[qi]):
        c = q_cols[qi, t]
        a1, b1, a2, b2 = _segments(
            sorted_values[c], n_valid[c], n_rows, q_ops[qi, t], q_vals[qi, t], ne_null
        )
        size = (b1 - a1) + (b2 - a2)
        if size < best_size:
            best_size = size
            best_t = t
            ba1, bb1, ba2, bb2 = a1, b1, a2, b2
    return best_t, ba1, bb1, ba2, bb2


@numba.njit(nogil=True, cache=True)
def _holds_others(
    table, queries, qi, skip, row, ne_null
):  # pragma: no cover - compiled
    """Whether ``row`` satisfies every predicate of query ``qi`` but term ``skip``."""
    values = table[0]
    q_cols, q_ops, q_vals, q_len = queries
    for t in range(q_len[qi]):
        if t != skip and not _holds(
            values[row, q_cols[qi, t]], q_ops[qi, t], q_vals[qi, t], ne_null
        ):
            return False
    return True


@numba.njit(nogil=True, cache=True)
def _match_rows(
    table, queries, qi, ne_null, cap, out, at, n_keep
):  # pragma: no cover - compiled
    """Count the rows matching query ``qi``, up to ``cap``; keep the first ``n_keep``.

    The kept rows are written to ``out[at:at + n_keep]``; returns the count.
    """
    n_rows = table[0].shape[0]
    order = table[1]
    best_t, a1, b1, a2, b2 = _most_selective(table, queries, qi, ne_null)
    if best_t < 0:  # an empty conjunction matches every row
        count = min(n_rows, cap)
        for row in range(min(count, n_keep)):
            out[at + row] = row
        return count
    column = queries[0][qi, best_t]
    count = 0
    for a, b in ((a1, b1), (a2, b2)):
        for pos in range(a, b):
            row = order[column, pos]
            if _holds_others(table, queries, qi, best_t, row, ne_null):
                if count < n_keep:
                    out[at + count] = row
                count += 1
                if count >= cap:
                    return count
    return count


@numba.njit(parallel=True, nogil=True, cache=True)
def _count_kernel(
    table, queries, ne_null, cap, out_count, out_first
):  # pragma: no cover - compiled
    """``out_count``: matching rows of each query, up to ``cap``; ``out_first``: the first."""
    for q in numba.prange(out_count.shape[0]):
        # prange's index, as numba parallelises it (one signature of _match_rows)
        qi = np.uint64(q)
        out_count[qi] = _match_rows(table, queries, qi, ne_null, cap, out_first, qi, 1)


@numba.njit(parallel=True, nogil=True, cache=True)
def _fill_kernel(
    table, queries, ne_null, offsets, out_rows
):  # pragma: no cover - compiled
    """The rows matching query ``i`` into ``out_rows[offsets[i]:offsets[i + 1]]``."""
    for q in numba.prange(offsets.shape[0] - 1):
        qi = np.uint64(q)  # as in _count_kernel
        n_matches = offsets[qi + 1] - offsets[qi]
        if n_matches:
            _match_rows(
                table, queries, qi, ne_null, n_matches, out_rows, offsets[qi], n_matches
            )


def _kernel_args(
    table: QueryTable, batch: QueryBatch
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The table and the queries as the kernels take them (two tuples of arrays)."""
    return (
        (table.values, table.order, table.sorted_values, table.n_valid),
        (
            np.ascontiguousarray(batch.cols, dtype=np.int64),
            np.ascontiguousarray(batch.ops, dtype=np.int8),
            np.ascontiguousarray(batch.vals, dtype=np.float64),
            np.ascontiguousarray(batch.lengths, dtype=np.int64),
        ),
    )


def count_matches(
    table: QueryTable, batch: QueryBatch, *, cap: int = 2, ne_matches_null: bool = False
) -> tuple[IntArray, IntArray]:
    """Number of rows of ``table`` matching each query, counted up to ``cap``.

    Parameters
    ----------
    table : QueryTable
        The indexed table.
    batch : QueryBatch
        The queries.
    cap : int, default=2
        Counting stops at this number (2 decides "exactly one row matches").
    ne_matches_null : bool, default=False
        Whether ``!=`` is satisfied by a missing value (pandas) or not (polars, SQL).

    Returns
    -------
    counts : ndarray of shape (n_queries,)
        ``min(number of matching rows, cap)``.
    first : ndarray of shape (n_queries,)
        A matching row (the only one when the count is 1), -1 when none matches.
    """
    n_queries = len(batch)
    counts = np.zeros(n_queries, dtype=np.int64)
    first = np.full(n_queries, -1, dtype=np.int64)
    if n_queries and table.n_rows:
        kernel: Any = _count_kernel
        kernel(
            *_kernel_args(table, batch),
            bool(ne_matches_null),
            int(max(cap, 1)),
            counts,
            first,
        )
    return counts, first


def match_lists(
    table: QueryTable, batch: QueryBatch, *, ne_matches_null: bool = False
) -> tuple[IntArray, IntArray]:
    """All rows matching each query, as CSR arrays.

    Returns
    -------
    offsets : ndarray of shape (n_queries + 1,)
        Query ``i`` matches ``rows[offsets[i]:offsets[i + 1]]``.
    rows : ndarray of shape (offsets[-1],)
        Matching row positions.
    """
    counts, _ = count_matches(
        table, batch, cap=max(table.n_rows, 1), ne_matches_null=ne_matches_null
    )
    offsets = np.zeros(len(batch) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    rows = np.empty(int(offsets[-1]), dtype=np.int64)
    if rows.size:
        fill: Any = _fill_kernel
        fill(*_kernel_args(table, batch), bool(ne_matches_null), offsets, rows)
    return offsets, rows


def _quote_name(name: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def format_value(info: ColumnInfo, column: int, value: float) -> str:
    """Text of one comparison value (category, number or timestamp)."""
    kind = info.kinds[column]
    if kind in ("categorical", "boolean"):
        categories = info.categories[column]
        assert categories is not None
        item = categories[int(value)]
        if isinstance(item, str):
            return repr(item)
        return repr(item.item() if hasattr(item, "item") else item)
    if kind == "datetime":
        stamp = pd.Timestamp(info.time_origin + round(value * 1e9))
        return repr(stamp.isoformat())
    if info.integral[column] and float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def render_query(
    info: ColumnInfo, cols: IntArray, ops: np.ndarray, vals: FloatArray, length: int
) -> str:
    """A readable query, e.g. ``age >= 63 AND race == 'Other'`` (columns sorted by name)."""
    parts = []
    order = sorted(range(int(length)), key=lambda t: info.names[int(cols[t])])
    for t in order:
        column, op = int(cols[t]), int(ops[t])
        name = _quote_name(info.names[column])
        if op in (OP_ISNULL, OP_NOTNULL):
            parts.append(f"{name} {OPS[op]}")
        elif op == OP_NEVER:
            parts.append(f"{name} NEVER MATCHES")
        else:
            parts.append(
                f"{name} {OPS[op]} {format_value(info, column, float(vals[t]))}"
            )
    return " AND ".join(parts)


_POLARS_OPS: dict[int, Callable[[Any, Any], Any]] = {
    OP_EQ: operator.eq,
    OP_NE: operator.ne,
    OP_LT: operator.lt,
    OP_LE: operator.le,
    OP_GT: operator.gt,
    OP_GE: operator.ge,
    OP_ISNULL: lambda column, _: column.is_null(),
    OP_NOTNULL: lambda column, _: column.is_not_null(),
}


def polars_term(op: int, column: Any, value: Any) -> Any:
    """One query term as a polars expression (``column`` is a ``polars.col``)."""
    if op in _POLARS_OPS:
        return _POLARS_OPS[op](column, value)
    import polars as pl

    return pl.lit(False)


#: queries whose columns :func:`choose_columns` draws at a time
COLUMN_BLOCK = 16_384


def choose_columns(
    rng: np.random.Generator, n_queries: int, n_columns: int, width: int, rank: IntArray
) -> IntArray:
    """``width`` distinct columns per query (uniform), ordered by column name.

    Queries are drawn in blocks of :data:`COLUMN_BLOCK` (the same draws as one block:
    the generator's stream is consumed in the same order), so that the random keys of
    a large batch never exist all at once.
    """
    out = np.empty((n_queries, min(width, n_columns)), dtype=np.int64)
    for start in range(0, n_queries, COLUMN_BLOCK):
        stop = min(start + COLUMN_BLOCK, n_queries)
        if width >= n_columns:
            cols = np.tile(np.arange(n_columns), (stop - start, 1))
        else:
            keys = rng.random((stop - start, n_columns))
            cols = np.argpartition(keys, width - 1, axis=1)[:, :width]
        order = np.argsort(rank[cols], axis=1, kind="stable")
        out[start:stop] = np.take_along_axis(cols, order, axis=1)
    return out
