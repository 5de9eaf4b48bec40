# SPDX-License-Identifier: BSD-3-Clause
"""The membership metrics on every row of tables partitioned on a Dask cluster.

``dcr_share``, ``identical_match_share``, ``nndr`` and ``membership_knn_probabilities``
give the in-memory report (records included) on partitioned tables; options that need
pandas frames or another distance run on the seeded sample and say so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk.metrics._base import Context
from synthrisk.metrics.membership import _row_ids, _space
from synthrisk.metrics.membership._row_keys import row_keys
from synthrisk.metrics.membership.knn import MembershipKnnProbabilities
from synthrisk.metrics.membership.nndr import NNDR
from synthrisk.metrics.membership.share import DCRShare, IdenticalMatchShare
from synthrisk.schema import prepare_tables

pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

from synthrisk.cluster import evaluate_dataset  # noqa: E402
from synthrisk.schema.partitioned import prepare_partitioned  # noqa: E402

pytestmark = pytest.mark.dask

METRICS = ("dcr_share", "identical_match_share", "nndr", "membership_knn_probabilities")


def _coarse(n: int, seed: int, letters: str = "uvwx") -> pd.DataFrame:
    g = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "a": g.integers(0, 3, n),
            "b": g.choice(list(letters), n),
            "e": g.integers(0, 3, n).astype(float),
        }
    )
    frame.loc[g.random(n) < 0.1, "e"] = np.nan
    return frame


@pytest.fixture
def coarse_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Few distinct rows, many repeats; the synthetic table copies 30 real rows."""
    real, holdout = _coarse(130, 1), _coarse(70, 2)
    # the new synthetic rows have a category no real row has: ties at distance > 0
    synthetic = pd.concat([real.iloc[:30], _coarse(50, 3, "uvwxq")], ignore_index=True)
    return real, synthetic, holdout


def _partitioned(frames: tuple[pd.DataFrame, ...], client: Any) -> Any:
    parts = [dd.from_pandas(f, npartitions=3) for f in frames]
    return prepare_partitioned(*parts, client=client)


def test_every_metric_on_mixed_tables(
    check_partitioned: Callable[..., Any], mixed_tables: tuple[pd.DataFrame, ...]
) -> None:
    metrics = {
        "dcr_share": {"n_permutations": 49, "n_repeats": 3},
        "identical_match_share": {},
        "nndr": {"rank": 3},
        "membership_knn_probabilities": {},
    }
    report = check_partitioned(mixed_tables, metrics)
    by_id = {r.metric: r for r in report.results}
    assert set(by_id) == set(METRICS)
    # real holdout 120 / 100 rows: the size-corrected share compares 100 of each
    assert by_id["dcr_share"].breakdown["sample_size"] == 100
    assert by_id["dcr_share"].breakdown["n_repeats"] == 3
    assert by_id["nndr"].breakdown["sample_size"] == 100
    assert by_id["identical_match_share"].score == 0.0
    assert by_id["membership_knn_probabilities"].records["real"].values.shape == (120,)


def test_every_metric_on_coarse_tables_with_copies(
    check_partitioned: Callable[..., Any], coarse_tables: tuple[pd.DataFrame, ...]
) -> None:
    metrics = {
        "dcr_share": {"n_permutations": 99, "n_repeats": 4},
        "identical_match_share": {},
        "nndr": {"rank": 2},
        "membership_knn_probabilities": {"k": 3},
    }
    report = check_partitioned(coarse_tables, metrics)
    by_id = {r.metric: r for r in report.results}
    ims = by_id["identical_match_share"]
    # the 30 copies match, and so do the new rows that repeat a real one by chance
    assert ims.breakdown["n_matches"] >= 30
    np.testing.assert_array_equal(ims.records["matches_real"].values[:30], 1.0)
    assert (
        ims.records["matches_real"].values[30:].sum() == ims.breakdown["n_matches"] - 30
    )
    shares = by_id["dcr_share"].breakdown["synthetic_data_percentages"]
    assert 0 < shares["tied"] < 1


def test_non_default_parameters(
    check_partitioned: Callable[..., Any],
    coarse_tables: tuple[pd.DataFrame, ...],
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    metrics = {
        "dcr_share": {"n_permutations": 0, "n_repeats": 2},
        "identical_match_share": {"tolerance": 0.2},
        "membership_knn_probabilities": {"k": 2, "bandwidth": 0.5},
    }
    report = check_partitioned(mixed_tables, metrics)
    # near matches against a real sample of the holdout's size, searched on the cluster
    (ims,) = (
        r.breakdown for r in report.results if r.metric == "identical_match_share"
    )
    assert ims["identical_match_share_real_at_holdout_size"] > 0
    assert ims["identical_match_share"] > 0
    # equal real and holdout sizes: no subsampling at all
    real, synthetic, holdout = coarse_tables
    check_partitioned(
        (real.iloc[:70], synthetic, holdout),
        {"dcr_share": {"n_permutations": 19}, "nndr": {"rank": 1}},
    )
    # a real table much smaller than the holdout: the real side is the small one
    report = check_partitioned(
        (real.iloc[:30], synthetic, holdout),
        {"dcr_share": {"n_repeats": 2, "n_permutations": 19}},
    )
    assert report.results[0].breakdown["sample_size"] == 30
    assert any("much smaller" in w for w in report.results[0].warnings)


def test_without_holdout(
    check_partitioned: Callable[..., Any], coarse_tables: tuple[pd.DataFrame, ...]
) -> None:
    real, synthetic, _ = coarse_tables
    report = check_partitioned((real, synthetic, None), ["identical_match_share"])
    assert report.results[0].score == pytest.approx(
        report.results[0].breakdown["n_matches"] / 80
    )


def test_hash_collisions_cannot_change_the_report(
    check_partitioned: Callable[..., Any],
    coarse_tables: tuple[pd.DataFrame, ...],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # two-bit hashes: almost every group of equal hashes mixes different rows, and
    # confirming the groups a few rows at a time must still give the exact matches
    monkeypatch.setattr(_row_ids, "_HASH_MASK", 3)
    monkeypatch.setattr(_row_ids, "_CONFIRM_BYTES", 16)
    check_partitioned(
        coarse_tables,
        {
            "identical_match_share": {},
            "dcr_share": {"n_permutations": 19, "n_repeats": 2},
        },
    )


@pytest.mark.parametrize("mask", [0, 3, 0xFFFF_FFFF_FFFF_FFFF])
def test_row_ids_have_the_in_memory_equalities(
    dask_client: Any,
    coarse_tables: tuple[pd.DataFrame, ...],
    monkeypatch: pytest.MonkeyPatch,
    mask: int,
) -> None:
    monkeypatch.setattr(_row_ids, "_HASH_MASK", mask)
    frames = coarse_tables
    frames[0].loc[3, "e"] = -0.0  # -0.0 equals 0.0, missing equals missing
    frames[1].loc[0, "e"] = 0.0
    tables = prepare_tables(*frames)
    expected = row_keys(*(tables.encoded(n) for n in ("real", "synthetic", "holdout")))
    partitioned = _partitioned(frames, dask_client)
    got = _space.row_ids([partitioned.real, partitioned.synthetic, partitioned.holdout])
    exp, ids = np.concatenate(expected), np.concatenate(got)
    assert ids.shape == (280,)
    # the same partition of rows into classes of equal rows
    pairs = np.unique(np.c_[exp, ids], axis=0)
    assert np.unique(pairs[:, 0]).size == np.unique(pairs[:, 1]).size == pairs.shape[0]
    assert np.unique(exp).size < 60  # many repeats


@pytest.mark.parametrize(
    "hashes",
    [
        np.zeros(0, np.uint64),
        np.zeros(50, np.uint64),
        np.random.default_rng(0).integers(0, 4, 300).astype(np.uint64),
        np.random.default_rng(1).integers(0, 2**63, 300, dtype=np.uint64) | 1 << 63,
        np.random.default_rng(2).choice(
            np.random.default_rng(3).integers(0, 2**64 - 1, 40, dtype=np.uint64), 500
        ),
    ],
)
def test_hash_ids_in_buckets_equal_one_sort(hashes: np.ndarray) -> None:
    ids, n_distinct, shared, firsts = _row_ids._hash_ids(hashes)
    uniq, first, inverse, counts = np.unique(
        hashes, return_index=True, return_inverse=True, return_counts=True
    )
    np.testing.assert_array_equal(ids, inverse.ravel())
    assert n_distinct == uniq.size
    np.testing.assert_array_equal(shared, uniq[counts > 1])
    np.testing.assert_array_equal(firsts, first[counts > 1])


def test_subsets_and_concatenations_stay_on_the_cluster(
    dask_client: Any, mixed_tables: tuple[pd.DataFrame, ...]
) -> None:
    partitioned = _partitioned(mixed_tables, dask_client)
    tables = prepare_tables(*mixed_tables)
    real, hold = partitioned.real, partitioned.holdout
    rows = np.array([0, 1, 5, 39, 40, 41, 119])
    sub = _space.take_rows(real, rows)
    assert sub.partitions.rows == (4, 2, 1)
    assert _space.take_rows(real, np.arange(120)) is real
    expected = tables.encoded("real").take(rows)
    got = sub.take(np.array([6, 0, 3]))
    np.testing.assert_array_equal(got.numeric, expected.numeric[[6, 0, 3]])
    np.testing.assert_array_equal(got.codes, expected.codes[[6, 0, 3]])
    np.testing.assert_array_equal(sub.domain.low, np.nanmin(expected.numeric, axis=0))
    pool = _space.concat_rows(real, hold)
    assert pool.n_rows == 220
    assert pool.domain.n_rows == 220
    np.testing.assert_array_equal(
        pool.domain.numeric_missing,
        np.isnan(tables.encoded("real").numeric).sum(0)
        + np.isnan(tables.encoded("holdout").numeric).sum(0),
    )
    space = _space.Space.for_tables(partitioned, "dcr")
    in_memory = _space.Space.for_tables(tables, "dcr")
    assert space.scale is not None
    assert in_memory.scale is not None
    np.testing.assert_array_equal(space.scale, in_memory.scale)


@pytest.mark.parametrize(
    ("metric", "supported"),
    [
        (DCRShare(), True),
        (DCRShare(mode="apt"), False),
        (DCRShare(distance="gower"), False),
        (DCRShare(column_subsets="worst"), False),
        (IdenticalMatchShare(), True),
        (IdenticalMatchShare(distance="gower"), True),  # exact matches ignore it
        (IdenticalMatchShare(tolerance=0.1), True),
        (IdenticalMatchShare(tolerance=0.1, distance="euclidean"), False),
        (NNDR(), True),
        (NNDR(distance="gower"), False),
        (MembershipKnnProbabilities(), True),
        (MembershipKnnProbabilities(mode="apt"), False),
        (MembershipKnnProbabilities(distance="gower"), False),
    ],
)
def test_supports_partitioned(metric: Any, supported: bool) -> None:
    assert metric.supports_partitioned() is supported


def test_unsupported_parameters_run_on_the_sample(
    dask_client: Any, mixed_tables: tuple[pd.DataFrame, ...]
) -> None:
    frames = [dd.from_pandas(f, npartitions=2) for f in mixed_tables]
    metrics = {
        "dcr_share": {"column_subsets": "worst", "n_permutations": 9},
        "nndr": {"distance": "gower"},
        "membership_knn_probabilities": {"distance": "gower"},
        "identical_match_share": {"tolerance": 0.1, "distance": "gower"},
    }
    report = evaluate_dataset(
        *frames, metrics=metrics, seed=2, client=dask_client, sample_rows=60
    )
    assert len(report.results) == 4
    for result in report.results:
        assert "seeded random sample (60 of 120 real rows" in result.warnings[-1]
    knn = next(r for r in report.results if r.metric == "membership_knn_probabilities")
    assert knn.breakdown["n_members"] == 60


def test_dcr_share_with_tie_sets_beyond_the_list_cap(
    check_partitioned: Callable[..., Any],
    coarse_tables: tuple[pd.DataFrame, ...],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # lists capped at 8 pool rows: which rows of a large tie set are listed (and so
    # the permutation null) depends on the order of the distinct pool rows, which is
    # their order of first appearance on both paths
    from synthrisk.metrics.membership import _share_lists as share_module

    monkeypatch.setattr(share_module, "_MAX_TIE_LIST", 8)
    report = check_partitioned(
        coarse_tables, {"dcr_share": {"n_permutations": 199, "n_repeats": 3}}
    )
    assert 0 < report.results[0].breakdown["p_value"] < 1


def _nearest_plus_second_index(
    neighbors: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """Task: a value of each row that depends on its distances and its positions."""
    return neighbors[0][:, 0] + neighbors[1][:, 1]


def test_neighbours_reduced_per_partition_equal_the_whole_search(
    dask_client: Any, mixed_tables: tuple[pd.DataFrame, ...]
) -> None:
    from synthrisk.neighbors import nearest_neighbors
    from synthrisk.neighbors.dask_backend import kneighbors_tables_map

    partitioned = _partitioned(mixed_tables, dask_client)
    tables = prepare_tables(*mixed_tables)
    syn, real = partitioned.synthetic, partitioned.real
    space = _space.Space.for_tables(partitioned, "dcr")
    whole = nearest_neighbors(
        tables.encoded("synthetic"),
        tables.encoded("real"),
        k=3,
        distance="dcr",
        scale=space.scale,
    )
    # one result per query partition, in row order
    parts = kneighbors_tables_map(
        syn,
        real,
        _nearest_plus_second_index,
        k=3,
        scale=space.scale,
        working_memory=None,
        progress=None,
    )
    assert len(parts) == len(syn.partitions.parts) > 1
    np.testing.assert_array_equal(
        np.concatenate(parts), whole.distances[:, 0] + whole.indices[:, 1]
    )
    # kept on the cluster: futures of the same results
    kept = kneighbors_tables_map(
        syn,
        real,
        _nearest_plus_second_index,
        k=3,
        scale=space.scale,
        working_memory=None,
        progress=None,
        keep=True,
    )
    np.testing.assert_array_equal(
        np.concatenate(dask_client.gather(kept)), np.concatenate(parts)
    )
    # the metrics' search gathers the partitions into one result
    context = Context()
    got = space.search(syn, real, k=3, context=context, description="test")
    np.testing.assert_array_equal(got.distances, whole.distances)
    np.testing.assert_array_equal(got.indices, whole.indices)


@pytest.mark.parametrize("mask", [0xFFFF_FFFF_FFFF_FFFF, 0x3])
def test_distinct_lower_bound(
    dask_client: Any,
    coarse_tables: tuple[pd.DataFrame, ...],
    monkeypatch: pytest.MonkeyPatch,
    mask: int,
) -> None:
    monkeypatch.setattr(_row_ids, "_HASH_MASK", mask)
    partitioned = _partitioned(coarse_tables, dask_client)
    tables = prepare_tables(*coarse_tables)
    for name in ("real", "synthetic", "holdout"):
        (ids,) = row_keys(tables.encoded(name))
        bound = _space.distinct_lower_bound(partitioned.encoded(name))
        distinct = np.unique(ids).size
        # exact without collisions, never above the count with them
        assert bound == distinct if mask > 0x3 else 1 <= bound <= distinct
