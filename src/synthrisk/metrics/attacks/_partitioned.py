# SPDX-License-Identifier: BSD-3-Clause
"""The attacks on tables partitioned on a Dask cluster: small helpers over both kinds of tables.

:class:`~synthrisk.schema.Tables` (pandas frames in memory) and
:class:`~synthrisk.schema.partitioned.PartitionedTables` (encoded partitions on the
workers) are read through these, so that the attacks run one code path on both:

* :func:`n_rows` and :func:`take_rows` (a few rows gathered as an in-memory
  :class:`~synthrisk.schema.EncodedTable`, never the whole partitioned table);
* :func:`encoder_of`: the category dictionaries and time origin of the encoding;
* :func:`numeric_bounds`: per-column smallest and largest values (from the reduced
  domain of a partitioned table);
* :func:`move_datetimes`: datetime columns turned into category codes on the workers
  (Anonymeter's typing of datetimes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, TypeGuard

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.exceptions import InputError
from synthrisk.schema.encoding import EncodedTable, Encoder
from synthrisk.schema.partitioned import (
    Domain,
    PartitionedTable,
    is_partitioned,
)

__all__ = [
    "datetime_codes",
    "encoder_of",
    "move_datetimes",
    "n_rows",
    "numeric_bounds",
    "on_cluster",
    "take_rows",
]


def on_cluster(table: object) -> TypeGuard[PartitionedTable]:
    """:func:`~synthrisk.schema.partitioned.is_partitioned`, for the type checker."""
    return is_partitioned(table)


def n_rows(tables: Any, name: str) -> int:
    """Rows of the table ``name`` (``real``, ``synthetic`` or ``holdout``)."""
    table = getattr(tables, name)
    return int(table.n_rows) if is_partitioned(table) else len(table)


def take_rows(
    table: Any, rows: IntArray, columns: Sequence[str] | None = None
) -> EncodedTable:
    """The rows at positions ``rows`` (any order, repeats allowed), in memory.

    ``columns`` keeps only those columns (as :meth:`EncodedTable.select`); a partitioned
    table then sends only them. Unlike
    :meth:`~synthrisk.schema.partitioned.PartitionedTable.take`, this always gathers,
    also when ``rows`` is every row in order.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if not is_partitioned(table):
        out = table.take(rows)
        return out if columns is None else out.select(list(columns))
    return _gather(table, rows, columns)


def _gather(
    table: PartitionedTable, rows: IntArray, columns: Sequence[str] | None
) -> EncodedTable:
    """:func:`take_rows` of a partitioned table.

    The row positions go to the workers as scattered data (an array carried by a task
    would stay in the scheduler's message log), each partition returns its rows of
    the wanted columns in their stored (compact) types, and the driver writes them
    straight into the result, in the requested order: no other copy of the rows.
    """
    if columns is None:
        num_names, cat_names = table.numeric_names, table.categorical_names
    else:
        # the columns of EncodedTable.select, in the order given
        num_names = tuple(c for c in columns if c in table.numeric_names)
        cat_names = tuple(c for c in columns if c in table.categorical_names)
    num = [table.numeric_names.index(c) for c in num_names]
    cat = [table.categorical_names.index(c) for c in cat_names]
    numeric = np.empty((rows.shape[0], len(num)), dtype=np.float64)
    codes = np.empty((rows.shape[0], len(cat)), dtype=np.int64)
    if rows.shape[0]:
        starts = np.asarray([*table.partitions.offsets, table.n_rows])
        owner = np.searchsorted(starts, rows, side="right") - 1
        by_owner = np.argsort(owner, kind="stable")
        bounds = np.searchsorted(owner[by_owner], np.arange(starts.shape[0]))
        del owner
        picks = [
            (p, by_owner[bounds[p] : bounds[p + 1]])
            for p in range(starts.shape[0] - 1)
            if bounds[p + 1] > bounds[p]
        ]
        client = table.client
        shipped = client.scatter(
            [rows[pick] - starts[p] for p, pick in picks], hash=False
        )
        futures = [
            client.submit(
                _rows_of_part, table.partitions.parts[p], local, num, cat, pure=False
            )
            for (p, _), local in zip(picks, shipped, strict=True)
        ]
        del shipped
        for (_, pick), future in zip(picks, futures, strict=True):
            part_numeric, part_codes = future.result()
            numeric[pick] = part_numeric
            codes[pick] = part_codes
            future.release()
    return EncodedTable(numeric, codes, num_names, cat_names)


def _rows_of_part(
    part: tuple[np.ndarray, np.ndarray], rows: IntArray, num: list[int], cat: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Task: rows ``rows`` of the columns ``num`` and ``cat`` of one partition."""
    return part[0][rows][:, num], part[1][rows][:, cat]


def encoder_of(tables: Any) -> Encoder:
    """The encoder of ``tables``: category dictionaries and time origin.

    In-memory tables fit theirs on first use; partitioned tables keep the one that
    :func:`~synthrisk.schema.partitioned.prepare_partitioned` fitted.
    """
    encoder = tables.encoder
    if encoder is None:
        msg = "these partitioned tables carry no encoder; build them with prepare_partitioned."
        raise InputError(msg)
    return encoder


def numeric_bounds(table: Any, columns: Sequence[str]) -> tuple[FloatArray, FloatArray]:
    """Smallest and largest value of each numeric column among ``columns`` (NaN: none).

    A partitioned table's come from its reduced domain, equal to the in-memory ones.
    """
    at = {name: i for i, name in enumerate(table.numeric_names)}
    idx = [at[c] for c in columns if c in at]
    if is_partitioned(table):
        return table.domain.low[idx], table.domain.high[idx]
    numeric = table.numeric[:, idx]
    lo = np.full(len(idx), np.nan)
    hi = np.full(len(idx), np.nan)
    for f in range(len(idx)):
        col = numeric[:, f]
        col = col[~np.isnan(col)]
        if col.size:
            lo[f], hi[f] = col.min(), col.max()
    return lo, hi


def datetime_codes(values: FloatArray, uniques: FloatArray) -> IntArray:
    """Code of each datetime value: its position among ``uniques``; missing: ``len(uniques)``."""
    codes = np.searchsorted(uniques, values).astype(np.int64)
    codes[np.isnan(values)] = len(uniques)
    return codes


def _moved(
    numeric: FloatArray,
    codes: IntArray,
    keep: list[int],
    moved: list[int],
    uniques: list[FloatArray],
) -> tuple[FloatArray, IntArray]:
    extra = (
        np.column_stack(
            [
                datetime_codes(numeric[:, i], u)
                for i, u in zip(moved, uniques, strict=True)
            ]
        )
        if moved
        else np.empty((numeric.shape[0], 0), dtype=np.int64)
    )
    return (
        np.ascontiguousarray(numeric[:, keep]),
        np.ascontiguousarray(np.hstack([codes, extra.astype(np.int64)])),
    )


def _move_part(
    part: tuple[np.ndarray, np.ndarray],
    keep: list[int],
    moved: list[int],
    uniques: list[FloatArray],
) -> tuple[np.ndarray, np.ndarray]:
    """Task: one partition with its datetime columns moved to codes."""
    numeric = np.asarray(part[0], dtype=np.float64)
    codes = np.asarray(part[1], dtype=np.int64)
    num, cat = _moved(numeric, codes, keep, moved, uniques)
    return num.astype(part[0].dtype), cat


def _column_uniques(
    numeric: FloatArray, codes: IntArray, columns: list[int]
) -> list[FloatArray]:
    out = []
    for i in columns:
        col = numeric[:, i]
        out.append(np.unique(col[~np.isnan(col)]))
    return out


def move_datetimes(
    query: EncodedTable, reference: PartitionedTable, datetime_names: Sequence[str]
) -> tuple[EncodedTable, PartitionedTable]:
    """:func:`~synthrisk.metrics.attacks._common.datetimes_as_categories` of an in-memory
    query and a partitioned reference: the same codes, the reference's on its workers.

    The distinct datetime values of the reference are reduced per partition; the codes
    are positions among the distinct values of query ∪ reference, missing its own code.
    """
    names = set(datetime_names)
    moved = [i for i, name in enumerate(reference.numeric_names) if name in names]
    if not moved:
        return query, reference
    keep = [i for i in range(len(reference.numeric_names)) if i not in moved]
    per_part = reference.map_partitions(_column_uniques, moved)
    reference_uniques = [
        np.unique(np.concatenate([p[j] for p in per_part] or [np.zeros(0)]))
        for j in range(len(moved))
    ]
    uniques = []
    for j, i in enumerate(moved):
        col = query.numeric[:, i]
        uniques.append(
            np.unique(np.concatenate([reference_uniques[j], col[~np.isnan(col)]]))
        )
    num, cat = _moved(query.numeric, query.codes, keep, moved, uniques)
    new_query = EncodedTable(
        num,
        cat,
        tuple(query.numeric_names[i] for i in keep),
        query.categorical_names + tuple(query.numeric_names[i] for i in moved),
    )
    client = reference.client
    shipped = client.scatter(uniques, broadcast=True, hash=False)
    parts = [
        client.submit(_move_part, part, keep, moved, shipped, pure=False)
        for part in reference.partitions.parts
    ]
    domain = reference.domain
    moved_codes = []
    for j, i in enumerate(moved):
        present = np.searchsorted(uniques[j], reference_uniques[j]).astype(np.int64)
        if domain.numeric_missing[i]:
            present = np.append(present, len(uniques[j]))
        moved_codes.append(present)
    new_domain = Domain(
        low=domain.low[keep],
        high=domain.high[keep],
        integer=domain.integer[keep],
        numeric_missing=domain.numeric_missing[keep],
        codes=[*domain.codes, *moved_codes],
        codes_missing=np.concatenate(
            [domain.codes_missing, np.zeros(len(moved), dtype=np.int64)]
        ),
        n_rows=domain.n_rows,
    )
    new_reference = PartitionedTable(
        partitions=dataclasses.replace(reference.partitions, parts=parts),
        numeric_names=new_query.numeric_names,
        categorical_names=new_query.categorical_names,
        domain=new_domain,
        client=client,
    )
    return new_query, new_reference
