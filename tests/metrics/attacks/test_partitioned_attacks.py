# SPDX-License-Identifier: BSD-3-Clause
"""The Anonymeter-style attacks on every row of tables partitioned on a Dask cluster:
the report (records included) equals the in-memory one; and the sharded query
counting behind singling out against the in-memory engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk.metrics import get_metric
from synthrisk.metrics.attacks import _queries, _query_generation
from synthrisk.metrics.attacks._queries import (
    OP_EQ,
    OP_GE,
    OP_LE,
    OP_NE,
    QueryBatch,
    QueryTable,
    count_matches,
)
from synthrisk.metrics.attacks._query_generation import dedup
from synthrisk.metrics.attacks._shard_tasks import masked_counts, median_of_counts
from synthrisk.metrics.attacks._sharded import ShardedQueryTable

pytest.importorskip("distributed")

pytestmark = pytest.mark.dask

ATTACKS = ["linkability", "inference", "singling_out", "singling_out_univariate"]


def _metric(name: str, **params: Any) -> Any:
    return get_metric(name)(**params)


def _categorical_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """All-categorical tables full of repeated rows (a smaller holdout)."""
    g = np.random.default_rng(5)

    def make(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "a": g.choice(list("xyz"), n),
                "b": pd.Series(g.choice(["p", "q", "r"], n), dtype=object).where(
                    g.random(n) > 0.1
                ),
                "c": g.choice(["u", "v", "w", "t"], n),
                "d": g.random(n) < 0.3,
            }
        )

    return make(150), make(120), make(60)


def test_every_attack_on_mixed_tables(
    check_partitioned: Callable[..., Any], mixed_tables: tuple
) -> None:
    got = check_partitioned(mixed_tables, ATTACKS)
    link, inference, multi, uni = got.results
    assert link.breakdown["n_attacks"] == {"main": 100, "baseline": 100, "control": 100}
    assert link.breakdown["n_success"]["main"] == 2
    assert inference.breakdown["worst_column"] == "num"
    assert len(inference.records["inferred_real"].index) == 100
    # multivariate: every query singling out one of the 90 synthetic rows (enumerated)
    assert multi.breakdown["n_queries"] == 307
    assert multi.breakdown["control_size_correction"] == pytest.approx(1.0203538)
    assert uni.breakdown["n_queries"] == 140
    assert uni.records["singled_out_real"].index.size > 0


def test_attacks_with_parameters_on_repeated_categorical_rows(
    check_partitioned: Callable[..., Any],
) -> None:
    frames = _categorical_tables()
    # duplicates across partitions: the sharded de-duplication leaves some shards empty
    assert frames[1].duplicated().sum() > 50
    metrics = [
        _metric(
            "linkability",
            aux_cols=[["a", "d"], ["b", "c"]],
            n_attacks=40,
            n_neighbors=3,
        ),
        _metric("inference", secret="c", aux_cols=["a", "b"], n_attacks=50),
        _metric("singling_out", n_cols=2, n_attacks=30),
        _metric("singling_out_univariate", compat="anonymeter-1.0"),
    ]
    got = check_partitioned(frames, metrics, seed=11, npartitions=4)
    link, inference, multi, uni = got.results
    assert link.breakdown["n_neighbors"] == 3
    assert set(link.breakdown["by_n_neighbors"]) == {"1", "2", "3"}
    assert set(inference.breakdown["groups"]) == {"u", "v", "w", "t"}
    # 3 × 4 × 3 × 2 = 72 cells: few distinct rows, so few queries single out
    assert 0 < multi.breakdown["n_queries"] < 30
    assert uni.breakdown["n_queries"] == 0


def test_anonymeter_compat_and_query_batches(
    check_partitioned: Callable[..., Any],
    mixed_tables: tuple,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # small batches: the multivariate queries come from random draws counted on the
    # cluster batch after batch, and the univariate candidates in several chunks
    monkeypatch.setattr(_query_generation, "_BATCH_MIN", 16)
    metrics = [
        _metric("linkability", compat="anonymeter-1.1", n_neighbors=2),
        _metric("inference", secret="count", compat="anonymeter-1.1", n_attacks=60),
        _metric("singling_out", compat="anonymeter-1.1", max_attempts=1500, n_cols=4),
        _metric("singling_out_univariate", n_attacks=25),
    ]
    got = check_partitioned(mixed_tables, metrics)
    link, inference, multi, uni = got.results
    # datetimes compared as categories, ranges over the rows compared
    assert link.params["compat"] == "anonymeter-1.1"
    assert set(inference.breakdown["groups"]) == {str(v) for v in range(9)}
    assert multi.breakdown["n_attempts"] == 2000  # 1.1 tries whole batches of 1000
    assert uni.breakdown["n_queries"] == 25


def test_linkability_and_inference_without_holdout(
    check_partitioned: Callable[..., Any], mixed_tables: tuple
) -> None:
    real, synthetic, _ = mixed_tables
    metrics = [
        "linkability",
        _metric("inference", secret="when", aux_cols=["num", "cat"], n_attacks=70),
    ]
    got = check_partitioned((real, synthetic, None), metrics)
    link, inference = got.results
    assert link.breakdown["n_attacks"]["main"] == 120
    assert inference.breakdown["regression"] is True


def test_sharded_table_counts_like_the_in_memory_one(dask_client: Any) -> None:
    from synthrisk.neighbors.dask_backend import dask_settings  # noqa: F401
    from synthrisk.schema.partitioned import (
        PartitionedTable,
        Partitions,
        combine_domains,
        domain_of_part,
        split_rows,
    )

    g = np.random.default_rng(2)
    numeric = g.integers(0, 12, (90, 2)).astype(np.float64)
    numeric[g.random(numeric.shape) < 0.1] = np.nan
    codes = g.integers(-1, 3, (90, 1))
    numeric[60:], codes[60:] = (
        numeric[:30],
        codes[:30],
    )  # the last part repeats the first
    local = split_rows(numeric, codes, 30)
    table = PartitionedTable(
        partitions=Partitions(
            dask_client.scatter(local.parts, hash=False), local.rows, local.nbytes
        ),
        numeric_names=("x", "y"),
        categorical_names=("c",),
        domain=combine_domains([domain_of_part(p) for p in local.parts], 2, 1),
        client=dask_client,
    )
    values = np.hstack([numeric, np.where(codes < 0, np.nan, codes)])
    keep = dedup(values)
    expected = QueryTable.from_values(values[keep])
    sharded = ShardedQueryTable.build(table)
    assert sharded.n_rows == keep.size < 60
    assert sharded.rows[2] == 0  # every row of the last partition was seen before
    cols = np.array([[0, 2], [1, 2], [0, 1], [2, 2]])
    batch = QueryBatch(
        np.tile(cols, (6, 1)),
        np.tile(
            np.array(
                [[OP_EQ, OP_EQ], [OP_LE, OP_NE], [OP_GE, OP_LE], [OP_EQ, OP_NE]],
                np.int8,
            ),
            (6, 1),
        ),
        g.integers(0, 4, (24, 2)).astype(np.float64),
        np.full(24, 2),
    )
    counts, first = count_matches(expected, batch, cap=2)
    got_counts, got_rows = sharded.count(batch, cap=2)
    np.testing.assert_array_equal(got_counts, counts)
    single = counts == 1
    assert single.sum() >= 3
    np.testing.assert_array_equal(got_rows[single], keep[first[single]])
    np.testing.assert_array_equal(got_rows[~single], -1)
    # row subsets as bit masks
    subsets = [g.choice(keep.size, size=s, replace=False) for s in (5, 20, keep.size)]
    packer = sharded.packer(len(subsets))
    for subset in subsets:
        packer.add(subset)
    got = sharded.masked_counts(batch, packer.packed, cap=2)
    for m, subset in enumerate(subsets):
        np.testing.assert_array_equal(
            got[:, m], count_matches(expected.take(np.sort(subset)), batch, cap=2)[0]
        )
    # cells and column statistics
    rows = np.array([keep.size - 1, 0, 7, 7])
    np.testing.assert_array_equal(
        sharded.cells(rows, np.array([[0, 2]] * 4)), expected.values[rows][:, [0, 2]]
    )
    summary = sharded.summaries()[0]
    present = expected.values[:, 0][~np.isnan(expected.values[:, 0])]
    assert summary.median == np.median(present)
    assert summary.n_missing == int(np.isnan(expected.values[:, 0]).sum())
    assert (summary.low, summary.high) == (present.min(), present.max())


def test_masked_counts_equal_counts_on_each_subset() -> None:
    g = np.random.default_rng(4)
    values = g.integers(0, 5, (200, 3)).astype(np.float64)
    values[g.random(values.shape) < 0.05] = np.nan
    table = QueryTable.from_values(values)
    batch = QueryBatch(
        g.integers(0, 3, (50, 2)),
        g.choice(np.array([OP_EQ, OP_NE, OP_LE, OP_GE], np.int8), (50, 2)),
        g.integers(0, 5, (50, 2)).astype(np.float64),
        np.full(50, 2),
    )
    masks = g.random((200, 4)) < np.array([0.05, 0.3, 0.9, 1.0])
    got = masked_counts(table, batch, masks, cap=3)
    for m in range(4):
        expected, _ = count_matches(
            table.take(np.flatnonzero(masks[:, m])), batch, cap=3
        )
        np.testing.assert_array_equal(got[:, m], expected)
    assert {0, 1, 2, 3} <= set(got.ravel().tolist())


@pytest.mark.parametrize("n", [1, 2, 7, 10])
def test_median_from_counts_is_numpys(n: int) -> None:
    g = np.random.default_rng(n)
    values = np.round(g.normal(size=n), 1)
    distinct, counts = np.unique(values, return_counts=True)
    assert median_of_counts(distinct, counts) == np.median(values)


def test_every_attack_supports_partitioned_tables() -> None:
    for name in ATTACKS:
        assert get_metric(name)().supports_partitioned()


def test_encoder_and_rows_of_partitioned_tables(
    dask_client: Any, mixed_tables: tuple
) -> None:
    import dask.dataframe as dd

    from synthrisk.metrics.attacks._partitioned import encoder_of, take_rows
    from synthrisk.schema import prepare_tables
    from synthrisk.schema.partitioned import prepare_partitioned

    tables = prepare_tables(*mixed_tables)
    partitioned = prepare_partitioned(
        *[dd.from_pandas(f, npartitions=2) for f in mixed_tables], client=dask_client
    )
    encoder, expected = encoder_of(partitioned), tables.encoder
    assert encoder.time_origin == expected.time_origin
    assert encoder.categories.keys() == expected.categories.keys()
    for name, categories in expected.categories.items():
        assert encoder.categories[name].tolist() == categories.tolist()
    assert encoder_of(partitioned) is encoder  # refitted once
    # every row in order: gathered all the same
    real = partitioned.encoded("real")
    gathered = take_rows(real, np.arange(real.n_rows))
    np.testing.assert_array_equal(gathered.numeric, tables.encoded("real").numeric)
    np.testing.assert_array_equal(gathered.codes, tables.encoded("real").codes)
    rows = np.array([5, 0, 5, 119])
    np.testing.assert_array_equal(
        take_rows(real, rows).codes, tables.encoded("real").codes[rows]
    )
    # some columns only, in the order asked, rows from both partitions in any order
    names = [*real.categorical_names[:1], *real.numeric_names[::-1]]
    rows = np.array([119, 3, 61, 3, 0, 60])
    got = take_rows(real, rows, names)
    want = tables.encoded("real").take(rows).select(names)
    assert (got.numeric_names, got.categorical_names) == (
        want.numeric_names,
        want.categorical_names,
    )
    assert (got.numeric.dtype, got.codes.dtype) == (np.float64, np.int64)
    np.testing.assert_array_equal(got.numeric, want.numeric)
    np.testing.assert_array_equal(got.codes, want.codes)
    empty = take_rows(real, np.zeros(0, dtype=np.int64), names)
    assert empty.numeric.shape == (0, len(want.numeric_names))


def test_choose_columns_draws_in_blocks_as_in_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Large query batches draw their columns block by block: the same columns."""
    rank = np.array([3, 0, 4, 1, 2])
    whole = _queries.choose_columns(np.random.default_rng(1), 1000, 5, 3, rank)
    monkeypatch.setattr(_queries, "COLUMN_BLOCK", 64)
    blocks = _queries.choose_columns(np.random.default_rng(1), 1000, 5, 3, rank)
    np.testing.assert_array_equal(blocks, whole)
    assert whole.dtype == np.int64
    assert (np.diff(rank[whole], axis=1) > 0).all()  # ordered by column name
