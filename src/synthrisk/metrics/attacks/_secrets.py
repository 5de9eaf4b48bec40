# SPDX-License-Identifier: BSD-3-Clause
"""Values of the inference attack's secret column, from in-memory or partitioned tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics.attacks._partitioned import on_cluster, take_rows
from synthrisk.metrics.attacks._queries import unified_values
from synthrisk.schema.tables import Tables

__all__ = ["SecretValues", "gather_values"]


class SecretValues:
    """Encoded values of the secret column (floats, NaN missing), read per table.

    An in-memory table's column is encoded once; a partitioned table's values are
    gathered only for the rows asked for, and its distinct values and counts come
    from per-partition reductions.
    """

    def __init__(self, tables: Tables, secret: str) -> None:
        self.tables = tables
        self.secret = secret
        self._columns: dict[str, FloatArray] = {}

    def column(self, name: str) -> FloatArray:
        """Every value of an in-memory table."""
        if name not in self._columns:
            table = self.tables.encoded(name).select([self.secret])
            self._columns[name] = unified_values(table)[:, 0]
        return self._columns[name]

    def at(self, name: str, rows: IntArray) -> FloatArray:
        """The values at rows ``rows`` of table ``name``."""
        table = self.tables.encoded(name)
        if on_cluster(table):
            return unified_values(take_rows(table, rows, [self.secret]))[:, 0]
        return self.column(name)[rows]

    def _where(self, table: Any) -> tuple[bool, int]:
        if self.secret in table.numeric_names:
            return True, table.numeric_names.index(self.secret)
        return False, table.categorical_names.index(self.secret)

    def distinct(self, name: str, limit: int | None) -> FloatArray | None:
        """Sorted distinct non-missing values; None when there are more than ``limit``."""
        table = self.tables.encoded(name)
        if not on_cluster(table):
            col = self.column(name)
            values = np.unique(col[~np.isnan(col)])
        else:
            numeric, at = self._where(table)
            if not numeric:
                values = table.domain.codes[at].astype(np.float64)
            elif limit is not None and limit < 1:
                # one non-missing value is already too many
                present = table.n_rows - int(table.domain.numeric_missing[at])
                return None if present else np.zeros(0)
            else:
                parts = table.map_partitions(_capped_uniques, at, limit)
                if any(p is None for p in parts):
                    return None
                values = np.unique(np.concatenate([np.zeros(0), *parts]))
        if limit is not None and values.size > limit:
            return None
        return values

    def counts(self, name: str, values: FloatArray) -> dict[float, int]:
        """Rows of table ``name`` holding each value of ``values``.

        In memory, every distinct value of the table is counted (``values`` is
        ignored); a partitioned table counts ``values`` only.
        """
        table = self.tables.encoded(name)
        if not on_cluster(table):
            col = self.column(name)
            distinct, counts = np.unique(col[~np.isnan(col)], return_counts=True)
        else:
            numeric, at = self._where(table)
            distinct = np.asarray(values, dtype=np.float64)
            per_part = table.map_partitions(_value_counts, numeric, at, distinct)
            counts = np.sum([np.zeros(distinct.size, np.int64), *per_part], axis=0)
        return {float(v): int(c) for v, c in zip(distinct, counts, strict=True)}


def gather_values(
    at: Callable[[str, IntArray], FloatArray],
    name: str,
    requests: Sequence[IntArray | None],
) -> list[Any]:
    """``at(name, rows)`` of every non-None request, fetched together."""
    given = [r for r in requests if r is not None]
    values = at(name, np.concatenate(given)) if given else np.zeros(0)
    ends = np.cumsum([r.size for r in given])
    pieces = iter(np.split(values, ends[:-1]))
    return [None if r is None else next(pieces) for r in requests]


def _secret_column(
    numeric: FloatArray, codes: IntArray, is_numeric: bool, at: int
) -> FloatArray:
    if is_numeric:
        return numeric[:, at]
    col = codes[:, at].astype(np.float64)
    col[codes[:, at] < 0] = np.nan
    return col


def _capped_uniques(
    numeric: FloatArray, codes: IntArray, at: int, limit: int | None
) -> FloatArray | None:
    """Task: distinct non-missing values of numeric column ``at``; None beyond ``limit``."""
    col = numeric[:, at]
    values = np.unique(col[~np.isnan(col)])
    return None if limit is not None and values.size > limit else values


def _value_counts(
    numeric: FloatArray,
    codes: IntArray,
    is_numeric: bool,
    at: int,
    values: FloatArray,
) -> IntArray:
    """Task: rows of one partition holding each of ``values``."""
    col = _secret_column(numeric, codes, is_numeric, at)
    return np.array([int(np.sum(col == v)) for v in values], dtype=np.int64)
