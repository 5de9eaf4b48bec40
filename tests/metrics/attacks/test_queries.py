# SPDX-License-Identifier: BSD-3-Clause
"""The vectorised query-counting engine behind singling out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk.metrics.attacks._queries import (
    OP_EQ,
    OP_GE,
    OP_GT,
    OP_ISNULL,
    OP_LE,
    OP_LT,
    OP_NE,
    OP_NEVER,
    OP_NOTNULL,
    ColumnInfo,
    QueryBatch,
    QueryTable,
    count_matches,
    distinct_rows,
    match_lists,
    render_query,
    unified_values,
)
from synthrisk.metrics.attacks.singling_out import column_info
from synthrisk.schema import prepare_tables

DATA = Path(__file__).parents[1] / "data"
GOLDENS = json.loads((DATA / "anonymeter_goldens.json").read_text())
OP_CODES = {
    "==": OP_EQ, "!=": OP_NE, "<": OP_LT, "<=": OP_LE, ">": OP_GT, ">=": OP_GE,
    "is_null": OP_ISNULL, "is_not_null": OP_NOTNULL,
}  # fmt: skip


def brute_masks(values: np.ndarray, batch: QueryBatch, *, ne_null: bool) -> np.ndarray:
    """Matching rows of every query, shape (n_queries, n_rows)."""
    masks = np.empty((len(batch), values.shape[0]), dtype=bool)
    for i in range(len(batch)):
        mask = np.ones(values.shape[0], dtype=bool)
        for t in range(int(batch.lengths[i])):
            x = values[:, batch.cols[i, t]]
            op, v = int(batch.ops[i, t]), batch.vals[i, t]
            nan = np.isnan(x)
            with np.errstate(invalid="ignore"):
                m = {
                    OP_EQ: x == v, OP_NE: (x != v) & ~nan | (nan & ne_null), OP_LT: x < v, OP_LE: x <= v,
                    OP_GT: x > v, OP_GE: x >= v, OP_ISNULL: nan, OP_NOTNULL: ~nan,
                    OP_NEVER: np.zeros_like(nan),
                }[op]  # fmt: skip
            mask &= m
        masks[i] = mask
    return masks


def random_batch(
    rng: np.random.Generator, values: np.ndarray, n: int, width: int
) -> QueryBatch:
    n_rows, m = values.shape
    cols = np.stack([rng.choice(m, size=width, replace=False) for _ in range(n)])
    ops = rng.integers(0, 9, size=(n, width)).astype(np.int8)
    vals = values[rng.integers(0, n_rows, size=(n, width)), cols]
    ops[np.isnan(vals) & (ops < OP_ISNULL)] = OP_ISNULL
    lengths = rng.integers(1, width + 1, size=n)
    return QueryBatch(cols.astype(np.int64), ops, vals, lengths.astype(np.int64))


@pytest.fixture
def table_values(rng: np.random.Generator) -> np.ndarray:
    n = 400
    values = np.column_stack(
        [
            np.round(rng.normal(0, 1, n), 1),  # many ties
            rng.integers(0, 5, n).astype(float),  # like category codes
            rng.integers(0, 3, n).astype(float),
            rng.normal(0, 1, n),  # all distinct
        ]
    )
    values[rng.random(values.shape) < 0.1] = np.nan
    return values


@pytest.mark.parametrize("ne_null", [False, True])
def test_counts_equal_brute_force(
    table_values: np.ndarray, rng: np.random.Generator, ne_null: bool
) -> None:
    batch = random_batch(rng, table_values, 600, 3)
    table = QueryTable.from_values(table_values)
    masks = brute_masks(table_values, batch, ne_null=ne_null)
    expected = masks.sum(axis=1)
    full, _ = count_matches(table, batch, cap=10**6, ne_matches_null=ne_null)
    np.testing.assert_array_equal(full, expected)
    capped, first = count_matches(table, batch, cap=2, ne_matches_null=ne_null)
    np.testing.assert_array_equal(capped, np.minimum(expected, 2))
    single = expected == 1
    np.testing.assert_array_equal(
        first[single], masks[single].argmax(axis=1)
    )  # the one match
    assert np.all(first[expected == 0] == -1)


def test_match_lists_equal_brute_force(
    table_values: np.ndarray, rng: np.random.Generator
) -> None:
    batch = random_batch(rng, table_values, 200, 2)
    table = QueryTable.from_values(table_values)
    offsets, rows = match_lists(table, batch)
    masks = brute_masks(table_values, batch, ne_null=False)
    for i in range(len(batch)):
        got = np.sort(rows[offsets[i] : offsets[i + 1]])
        np.testing.assert_array_equal(got, np.flatnonzero(masks[i]))


def test_empty_inputs() -> None:
    table = QueryTable.from_values(np.array([[1.0], [2.0]]))
    counts, first = count_matches(table, QueryBatch.empty(1))
    assert counts.size == 0
    assert first.size == 0
    empty_query = QueryBatch(
        np.zeros((1, 1), np.int64),
        np.zeros((1, 1), np.int8),
        np.zeros((1, 1)),
        np.zeros(1, np.int64),
    )
    assert count_matches(table, empty_query, cap=5)[0].tolist() == [2]
    _, rows = match_lists(table, empty_query)
    assert rows.tolist() == [0, 1]


def _golden_batch(info: ColumnInfo, queries: list[list[list]]) -> QueryBatch:
    index = {name: j for j, name in enumerate(info.names)}
    n, width = len(queries), max(len(q) for q in queries)
    cols = np.zeros((n, width), dtype=np.int64)
    ops = np.full((n, width), OP_NEVER, dtype=np.int8)
    vals = np.zeros((n, width))
    for i, query in enumerate(queries):
        for t, (name, op, value) in enumerate(query):
            j = index[name]
            cols[i, t], ops[i, t] = j, OP_CODES[op]
            if value is None:
                continue
            vals[i, t] = (
                info.code_of(j, value)
                if info.categories[j] is not None
                else float(value)
            )
    return QueryBatch(
        cols, ops, vals, np.array([len(q) for q in queries], dtype=np.int64)
    )


@pytest.mark.parametrize(
    ("semantics", "ne_null"), [("counts_polars", False), ("counts_pandas", True)]
)
def test_counts_equal_anonymeter_engines(semantics: str, ne_null: bool) -> None:
    golden = GOLDENS["queries"]
    frame = pd.read_csv(DATA / golden["table"])
    tables = prepare_tables(frame, frame)
    info = column_info(tables)
    batch = _golden_batch(info, golden["queries"])
    table = QueryTable.from_values(unified_values(tables.encoded("real")))
    counts, _ = count_matches(table, batch, cap=10**6, ne_matches_null=ne_null)
    np.testing.assert_array_equal(counts, golden[semantics])


def test_render_query_reads_like_a_filter() -> None:
    frame = pd.DataFrame(
        {
            "age": [30.0, 41.0, np.nan],
            "race": ["Other", "O'Neil", "White"],
            "marital-status": ["a", "b", "c"],
            "when": pd.to_datetime(["2020-01-02", "2020-03-04", "2021-01-01"]),
        }
    )
    tables = prepare_tables(frame, frame)
    info = column_info(tables)
    idx = {name: j for j, name in enumerate(info.names)}
    cols = np.array([idx["race"], idx["age"], idx["marital-status"], idx["when"]])
    vals = np.array([info.code_of(idx["race"], "O'Neil"), 63.0, 0.0, 86400.0])
    ops = np.array([OP_EQ, OP_GE, OP_ISNULL, OP_LE], dtype=np.int8)
    text = render_query(info, cols, ops, vals, 4)
    assert (
        text
        == "age >= 63 AND `marital-status` IS NULL AND race == \"O'Neil\" AND when <= '2020-01-03T00:00:00'"
    )


def test_distinct_rows_follow_pandas_duplicated() -> None:
    g = np.random.default_rng(0)
    for n_rows, n_cols, spread in (
        (0, 2, 3),
        (1, 1, 3),
        (300, 3, 3),
        (500, 7, 1 << 40),
    ):
        values = g.integers(0, spread, size=(n_rows, n_cols)).astype(np.float64)
        values[g.random(values.shape) < 0.2] = np.nan
        values[g.random(values.shape) < 0.1] = -0.0
        if n_rows:
            values = np.vstack([values, values[: n_rows // 3]])
        first, inverse = distinct_rows(list(values.T))
        expected = np.flatnonzero(~pd.DataFrame(values).duplicated().to_numpy())
        np.testing.assert_array_equal(first, expected)
        assert inverse.shape == (values.shape[0],)
        np.testing.assert_array_equal(inverse[first], np.arange(first.size))
        same = pd.DataFrame(values).fillna(-1.5).to_numpy() + 0.0
        np.testing.assert_array_equal(same, same[first][inverse])
