# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from synthrisk.exceptions import InputError, ParameterError
from synthrisk.neighbors import distance_matrix, nearest_neighbors
from synthrisk.schema import prepare_tables
from synthrisk.schema.encoding import EncodedTable

BACKENDS = ["numpy", "numba"]


def _table(rng: np.random.Generator, n: int, *, nan: float = 0.1) -> EncodedTable:
    num = np.round(rng.random((n, 3)), 1)  # coarse values: many ties
    num[:, 2] = 0.5  # a constant column (range 0 → equality indicator)
    num[rng.random(num.shape) < nan] = np.nan
    codes = rng.integers(-1, 3, (n, 2))
    return EncodedTable(num, codes, ("a", "b", "c"), ("x", "y"))


def _brute_force(
    query: EncodedTable, reference: EncodedTable, k: int, distance: str, missing: str
) -> tuple[np.ndarray, np.ndarray]:
    """Pair-by-pair Python loop: the definition of the distances, written out."""
    q, r = query, reference
    if distance == "dcr":
        scale = np.nanmax(r.numeric, axis=0) - np.nanmin(r.numeric, axis=0)
        qn, rn = q.numeric, r.numeric
    else:
        both = np.vstack([q.numeric, r.numeric])
        scale = np.nanmax(both, axis=0) - np.nanmin(both, axis=0)
        scale[scale == 0] = 1.0
        qn, rn = q.numeric / scale, r.numeric / scale
    sums = np.empty((q.n_rows, r.n_rows))
    for i in range(q.n_rows):
        for j in range(r.n_rows):
            acc = float(np.sum(q.codes[i] != r.codes[j]))
            for f in range(qn.shape[1]):
                x, y = qn[i, f], rn[j, f]
                if np.isnan(x) and np.isnan(y):
                    term = 0.0 if (distance == "dcr" or missing == "mismatch") else 1.0
                elif np.isnan(x) or np.isnan(y):
                    term = (
                        1.0 if (distance == "dcr" or missing == "mismatch") else np.nan
                    )
                elif distance == "dcr":
                    term = (
                        float(abs(x - y) > 0)
                        if scale[f] == 0
                        else min(abs(x - y) / scale[f], 1.0)
                    )
                else:
                    term = abs(x - y)
                acc += term
            sums[i, j] = acc
    key = np.where(np.isnan(sums), np.inf, sums)
    order = np.argsort(key, axis=1, kind="stable")[:, :k]
    d = np.take_along_axis(sums, order, axis=1)
    if distance == "dcr":
        d = d / (qn.shape[1] + q.codes.shape[1])
    return d, order


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("distance", "missing"),
    [("dcr", "mismatch"), ("gower", "mismatch"), ("gower", "anonymeter")],
)
@pytest.mark.parametrize("working_memory", [2**-12, 0.01, None])
def test_backends_equal_brute_force(
    backend: str,
    distance: str,
    missing: str,
    working_memory: float | None,
    rng: np.random.Generator,
) -> None:
    query, reference = _table(rng, 37), _table(rng, 53)
    k = 4
    got = nearest_neighbors(
        query,
        reference,
        k=k,
        distance=distance,
        missing=missing,
        backend=backend,
        working_memory=working_memory,
    )  # type: ignore[arg-type]
    want_d, want_i = _brute_force(query, reference, k, distance, missing)
    np.testing.assert_allclose(
        got.distances, want_d, rtol=0, atol=1e-12, equal_nan=True
    )
    np.testing.assert_array_equal(got.indices, want_i)


def test_numba_equals_numpy_bit_for_bit_on_larger_tables(
    rng: np.random.Generator,
) -> None:
    query, reference = _table(rng, 400, nan=0.05), _table(rng, 700, nan=0.05)
    a = nearest_neighbors(query, reference, k=5, backend="numpy", working_memory=0.05)
    b = nearest_neighbors(query, reference, k=5, backend="numba")
    np.testing.assert_array_equal(a.distances, b.distances)
    np.testing.assert_array_equal(a.indices, b.indices)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sdmetrics_issue_742_example(backend: str) -> None:
    # real A = [0, 10, 3, 4, 1], synthetic [5] → DCR 0.1 (SDMetrics #742)
    got = nearest_neighbors(
        np.array([[5.0]]),
        np.array([[0.0], [10], [3], [4], [1]]),
        distance="dcr",
        backend=backend,
    )  # type: ignore[arg-type]
    assert got.distances[0, 0] == pytest.approx(0.1, abs=1e-15)
    assert got.indices[0, 0] == 3  # |5-4| = 1 and |5-3| ... 4 is the closest; ties none


@pytest.mark.parametrize("backend", BACKENDS)
def test_sdmetrics_verified_mixed_example(backend: str) -> None:
    # sdmetrics.md §4: reference rows (n, c, b, d) and three queries → DCR 0.375, 0.0, 0.625
    reference = pd.DataFrame(
        {
            "n": [0.0, 10.0, np.nan],
            "c": ["a", "b", None],
            "b": [True, False, True],
            "d": pd.to_datetime(["2020-01-01", "2020-01-11", None]),
        }
    )
    query = pd.DataFrame(
        {
            "n": [25.0, np.nan, 5.0],
            "c": ["a", None, "zz"],
            "b": [True, True, False],
            "d": pd.to_datetime(["2020-01-06", None, "2020-01-01"]),
        }
    )
    tables = prepare_tables(reference, query)
    got = nearest_neighbors(
        tables.encoded("synthetic"),
        tables.encoded("real"),
        distance="dcr",
        backend=backend,
    )  # type: ignore[arg-type]
    np.testing.assert_allclose(
        got.distances[:, 0], [0.375, 0.0, 0.625], rtol=0, atol=1e-15
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_ties_go_to_the_lowest_reference_index(backend: str) -> None:
    reference = np.zeros((50, 2))
    got = nearest_neighbors(
        np.zeros((3, 2)), reference, k=10, distance="gower", backend=backend
    )  # type: ignore[arg-type]
    np.testing.assert_array_equal(got.indices, np.tile(np.arange(10), (3, 1)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_row_finds_itself(backend: str, rng: np.random.Generator) -> None:
    table = _table(rng, 60, nan=0.0)
    # make rows distinct so each row's only zero-distance neighbour is itself
    table = EncodedTable(
        np.column_stack([np.arange(60.0), table.numeric]),
        table.codes,
        ("id", "a", "b", "c"),
        table.categorical_names,
    )
    got = nearest_neighbors(table, table, k=1, distance="dcr", backend=backend)  # type: ignore[arg-type]
    np.testing.assert_array_equal(got.indices[:, 0], np.arange(60))
    np.testing.assert_array_equal(got.distances[:, 0], 0.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_euclidean_matches_scipy(backend: str, rng: np.random.Generator) -> None:
    query, reference = rng.normal(size=(40, 5)), rng.normal(size=(70, 5))
    got = nearest_neighbors(
        query, reference, k=3, distance="euclidean", backend=backend
    )  # type: ignore[arg-type]
    full = cdist(query, reference)
    np.testing.assert_allclose(got.distances, np.sort(full, axis=1)[:, :3], rtol=1e-12)
    np.testing.assert_array_equal(
        got.indices, np.argsort(full, axis=1, kind="stable")[:, :3]
    )


def test_anonymeter_missing_rule_never_picks_a_poisoned_pair_when_others_exist() -> (
    None
):
    reference = np.array([[np.nan, 0.0], [0.9, 0.9]])
    got = nearest_neighbors(
        np.array([[0.0, 0.0]]), reference, k=2, distance="gower", missing="anonymeter"
    )
    assert got.indices[0].tolist() == [1, 0]
    assert np.isnan(got.distances[0, 1])


def test_progress_is_called_with_every_query_row(rng: np.random.Generator) -> None:
    seen: list[int] = []
    nearest_neighbors(
        rng.random((100, 2)),
        rng.random((30, 2)),
        progress=seen.append,
        working_memory=2**-10,
    )
    assert sum(seen) == 100
    assert len(seen) > 1


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"k": 0}, ParameterError, r"`k` must be an integer >= 1; got 0"),
        (
            {"k": 4},
            ParameterError,
            r"`k` must be at most the number of reference rows \(3\); got 4",
        ),
        (
            {"distance": "cosine"},
            ParameterError,
            r"`distance` must be one of \['dcr', 'gower', 'euclidean'\]",
        ),
        ({"backend": "gpu"}, ParameterError, r"`backend` must be one of"),
    ],
)
def test_bad_parameters(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        nearest_neighbors(np.zeros((2, 1)), np.zeros((3, 1)), **kwargs)


def test_euclidean_rejects_missing_values() -> None:
    with pytest.raises(InputError, match="needs arrays without missing values"):
        nearest_neighbors(np.array([[np.nan]]), np.zeros((3, 1)), distance="euclidean")


def test_column_count_mismatch_is_rejected() -> None:
    with pytest.raises(ParameterError, match="must have the same columns"):
        nearest_neighbors(np.zeros((2, 2)), np.zeros((3, 1)))


@pytest.mark.dask
def test_dask_backend_equals_numpy(rng: np.random.Generator) -> None:
    pytest.importorskip("dask")
    query, reference = _table(rng, 3000, nan=0.05), _table(rng, 200, nan=0.05)
    a = nearest_neighbors(query, reference, k=3, backend="numpy")
    b = nearest_neighbors(query, reference, k=3, backend="dask", working_memory=2**-6)
    np.testing.assert_array_equal(a.distances, b.distances)
    np.testing.assert_array_equal(a.indices, b.indices)


def _weighted_brute_force(
    query: EncodedTable,
    reference: EncodedTable,
    k: int,
    distance: str,
    weights: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Pair-by-pair loop of the weighted distance: each column's term times its weight."""
    q, r = query, reference
    n_num = q.numeric.shape[1]
    if distance == "dcr":
        scale = np.nanmax(r.numeric, axis=0) - np.nanmin(r.numeric, axis=0)
    else:
        both = np.vstack([q.numeric, r.numeric])
        scale = np.nanmax(both, axis=0) - np.nanmin(both, axis=0)
        scale[scale == 0] = 1.0
    sums = np.empty((q.n_rows, r.n_rows))
    for i in range(q.n_rows):
        for j in range(r.n_rows):
            acc = 0.0
            for c in range(q.codes.shape[1]):
                acc += weights[n_num + c] * float(q.codes[i, c] != r.codes[j, c])
            for f in range(n_num):
                x, y = q.numeric[i, f], r.numeric[j, f]
                if np.isnan(x) and np.isnan(y):
                    term = 0.0
                elif np.isnan(x) or np.isnan(y):
                    term = 1.0
                elif distance == "dcr" and scale[f] == 0:
                    term = float(abs(x - y) > 0)
                elif distance == "dcr":
                    term = min(abs(x - y) / scale[f], 1.0)
                else:
                    term = abs(x / scale[f] - y / scale[f])
                acc += weights[f] * term
            sums[i, j] = acc
    order = np.argsort(sums, axis=1, kind="stable")[:, :k]
    d = np.take_along_axis(sums, order, axis=1)
    if distance == "dcr":
        d = d / (n_num + q.codes.shape[1])
    return d, order


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("distance", ["dcr", "gower"])
def test_weighted_distance_equals_brute_force(
    backend: str, distance: str, rng: np.random.Generator
) -> None:
    query, reference = _table(rng, 41), _table(rng, 67)
    weights = np.array([3.0, 0.25, 7.0, 0.5, 1e-3])  # numeric a, b, c; categorical x, y
    got = nearest_neighbors(
        query, reference, k=5, distance=distance, backend=backend, weights=weights
    )  # type: ignore[arg-type]
    want_d, want_i = _weighted_brute_force(query, reference, 5, distance, weights)
    np.testing.assert_allclose(got.distances, want_d, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got.indices, want_i)


def test_weighted_numba_equals_numpy_bit_for_bit(rng: np.random.Generator) -> None:
    # many categorical columns with unequal weights: the buckets of the weighted bound
    num = np.round(rng.random((900, 2)), 2)
    codes = rng.integers(-1, 4, (900, 6))
    table = EncodedTable(num, codes, ("a", "b"), tuple("uvwxyz"))
    query, reference = table.take(np.arange(300)), table.take(np.arange(300, 900))
    weights = np.r_[rng.gamma(1.0, 2.0, 2), rng.gamma(0.5, 1.0, 6)]
    for k in (1, 2, 7):
        a = nearest_neighbors(
            query, reference, k=k, distance="gower", backend="numpy", weights=weights
        )
        b = nearest_neighbors(
            query, reference, k=k, distance="gower", backend="numba", weights=weights
        )
        np.testing.assert_array_equal(a.distances, b.distances)
        np.testing.assert_array_equal(a.indices, b.indices)
    # unit weights are the unweighted distance, bit for bit
    ones = nearest_neighbors(query, reference, k=3, weights=np.ones(8))
    plain = nearest_neighbors(query, reference, k=3)
    np.testing.assert_array_equal(ones.distances, plain.distances)
    np.testing.assert_array_equal(ones.indices, plain.indices)


@pytest.mark.parametrize("widest", [4, 300, 70_000])
def test_many_groups_numba_equals_numpy_bit_for_bit(
    widest: int, rng: np.random.Generator
) -> None:
    # many categorical columns: the groups are listed by mismatch count, over codes
    # narrowed to bytes (widest < 255), to 16 bits (< 65,535) or kept as they are;
    # queries far from every group (random codes, codes no reference row has), with
    # and without a radius, and rows of the reference itself
    n_ref = 900 if widest < 70_000 else 70_001
    num = np.round(rng.random((n_ref, 2)), 2)
    num[rng.random(num.shape) < 0.05] = np.nan
    codes = rng.integers(-1, 4, (n_ref, 7))
    codes[:, 0] = np.arange(n_ref) % widest - 1
    reference = EncodedTable(num, codes, ("a", "b"), tuple("tuvwxyz"))
    q_codes = rng.integers(-1, 6, (160, 7))
    q_codes[:40] = codes[rng.integers(0, n_ref, 40)]
    q_codes[40:60, 0] = rng.choice([-7, widest + 3, 2**40], 20)
    query = EncodedTable(
        np.round(rng.random((160, 2)), 2), q_codes, ("a", "b"), tuple("tuvwxyz")
    )
    if widest == 70_000:
        query, reference = query.take(np.arange(40, 100)), reference
    for k in (1, 3):
        a = nearest_neighbors(query, reference, k=k, backend="numpy")
        b = nearest_neighbors(query, reference, k=k, backend="numba")
        np.testing.assert_array_equal(a.distances, b.distances)
        np.testing.assert_array_equal(a.indices, b.indices)
        radius = a.distances[:, -1].copy()
        radius[::5] = 0.2
        radius[::7] = 0.0
        got = nearest_neighbors(
            query, reference, k=k, backend="numba", max_distance=radius
        )
        want_d, want_i = a.distances.copy(), a.indices.copy()
        outside = ~(want_d <= radius[:, None])
        want_d[outside], want_i[outside] = np.inf, -1
        np.testing.assert_array_equal(got.distances, want_d)
        np.testing.assert_array_equal(got.indices, want_i)


@pytest.mark.parametrize(
    ("distance", "missing"),
    [("dcr", "mismatch"), ("gower", "mismatch"), ("gower", "anonymeter")],
)
@pytest.mark.parametrize("n_query", [100, 400])
def test_group_boxes_and_trees_prune_exactly(
    distance: str, missing: str, n_query: int, rng: np.random.Generator
) -> None:
    # groups of many rows (six binary categorical columns: 64 groups of about 23
    # rows; one group of 300): a group, or a node of its tree (400 query rows build
    # trees, 100 do not), is skipped when its numeric box alone puts it beyond the
    # k-th best. Skewed columns (mostly 0, as capital gains), repeated rows, missing
    # values inside groups and in the queries, queries inside, beside and far
    # outside the reference's ranges, ties, weights, radii
    n_ref = 1500
    num = np.zeros((n_ref, 3))
    num[:, 0] = np.where(rng.random(n_ref) < 0.9, 0.0, rng.integers(1, 100, n_ref))
    num[:, 1] = rng.integers(0, 20, n_ref)
    num[:, 2] = np.round(rng.random(n_ref), 1)
    num[rng.random(num.shape) < 0.04] = np.nan
    codes = rng.integers(0, 2, (n_ref, 6))
    codes[:300] = 0
    num[:40] = num[40]  # forty equal rows in the large group
    names = ("a", "b", "c"), tuple("uvwxyz")
    reference = EncodedTable(num, codes, *names)
    q_num = np.column_stack(
        [
            rng.integers(-300, 400, n_query),
            rng.integers(-5, 25, n_query),
            rng.random(n_query),
        ]
    ).astype(float)
    q_num[:20] = num[rng.integers(0, n_ref, 20)]
    q_num[rng.random(q_num.shape) < 0.05] = np.nan
    query = EncodedTable(q_num, rng.integers(-1, 3, (n_query, 6)), *names)
    weights = np.r_[rng.gamma(1.0, 2.0, 3), rng.gamma(0.5, 1.0, 6)]
    for k, w in ((1, None), (4, None), (3, weights)):
        options = {"k": k, "distance": distance, "missing": missing, "weights": w}
        a = nearest_neighbors(query, reference, backend="numpy", **options)  # type: ignore[arg-type]
        b = nearest_neighbors(query, reference, backend="numba", **options)  # type: ignore[arg-type]
        np.testing.assert_array_equal(a.distances, b.distances)
        np.testing.assert_array_equal(a.indices, b.indices)
        radius = a.distances[:, -1].copy()
        radius[::5] = 0.05
        got = nearest_neighbors(
            query, reference, backend="numba", max_distance=radius, **options
        )  # type: ignore[arg-type]
        want_d, want_i = a.distances.copy(), a.indices.copy()
        outside = ~(want_d <= radius[:, None])
        want_d[outside], want_i[outside] = np.inf, -1
        np.testing.assert_array_equal(got.distances, want_d)
        np.testing.assert_array_equal(got.indices, want_i)


def test_queries_sharing_categories_are_answered_in_their_own_order(
    rng: np.random.Generator,
) -> None:
    # the numba backend visits queries sorted by codes; results come back in input order
    reference = _table(rng, 200)
    query = reference.take(rng.permutation(200)[:120])
    a = nearest_neighbors(query, reference, k=3, backend="numpy")
    b = nearest_neighbors(query, reference, k=3, backend="numba", working_memory=2**-8)
    np.testing.assert_array_equal(a.distances, b.distances)
    np.testing.assert_array_equal(a.indices, b.indices)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weights": np.ones(2)}, r"one finite non-negative number per column \(3"),
        ({"weights": np.array([1.0, -1.0, 1.0])}, "non-negative"),
        ({"weights": np.array([1.0, np.nan, 1.0])}, "finite"),
        ({"weights": np.ones(3), "distance": "euclidean"}, "mixed-type distances"),
        ({"weights": np.ones(3), "backend": "torch"}, "numpy, numba or dask"),
    ],
)
def test_bad_weights(kwargs: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        nearest_neighbors(np.zeros((2, 3)), np.zeros((3, 3)), **kwargs)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("distance", ["dcr", "gower"])
def test_max_distance_equals_filtered_search(
    distance: str, weighted: bool, rng: np.random.Generator
) -> None:
    # rows at most max_distance away, nearest first; numba equals numpy bit for bit
    query, reference = _table(rng, 120, nan=0.05), _table(rng, 300, nan=0.05)
    weights = np.array([2.0, 0.5, 1.0, 0.3, 1.7]) if weighted else None
    full = nearest_neighbors(
        query, reference, k=300, distance=distance, backend="numpy", weights=weights
    )  # type: ignore[arg-type]
    radius = full.distances[:, 4].copy()  # ties at the radius are kept
    radius[::7] = 0.0
    radius[::11] = -1.0  # nothing
    for backend in BACKENDS:
        got = nearest_neighbors(
            query,
            reference,
            k=6,
            distance=distance,
            backend=backend,
            weights=weights,
            max_distance=radius,
        )  # type: ignore[arg-type]
        want_d = full.distances[:, :6].copy()
        want_i = full.indices[:, :6].copy()
        outside = ~(want_d <= radius[:, None])
        want_d[outside], want_i[outside] = np.inf, -1
        np.testing.assert_array_equal(got.distances, want_d)
        np.testing.assert_array_equal(got.indices, want_i)


def test_bad_max_distance() -> None:
    with pytest.raises(ParameterError, match="one distance per query row"):
        nearest_neighbors(np.zeros((2, 1)), np.zeros((3, 1)), max_distance=np.ones(3))


@pytest.mark.parametrize("distance", ["dcr", "gower", "euclidean"])
def test_distance_matrix_is_every_distance_in_the_reference_order(distance) -> None:
    table = _table(np.random.default_rng(4), 40)
    if distance == "euclidean":
        table = EncodedTable(
            np.nan_to_num(table.numeric),
            np.zeros((40, 0), dtype=np.int64),
            ("a", "b", "c"),
            (),
        )
    query, reference = table.take(np.arange(7)), table.take(np.arange(7, 40))
    matrix = distance_matrix(query, reference, distance=distance)
    assert matrix.shape == (7, 33)
    nn = nearest_neighbors(query, reference, k=33, distance=distance, backend="numpy")
    # the same numbers as the search, unsorted: row by row, in the reference's order
    np.testing.assert_array_equal(
        np.take_along_axis(matrix, nn.indices, axis=1), nn.distances
    )


def test_distance_matrix_by_hand() -> None:
    query = EncodedTable(np.array([[0.0]]), np.array([[1]]), ("a",), ("x",))
    reference = EncodedTable(
        np.array([[2.0], [4.0]]), np.array([[1], [2]]), ("a",), ("x",)
    )
    # dcr: |difference| / the given range, averaged with the categorical mismatch
    np.testing.assert_allclose(
        distance_matrix(query, reference, scale=np.array([4.0])), [[0.25, 1.0]]
    )
    with pytest.raises(ParameterError, match="same columns"):
        distance_matrix(np.zeros((1, 2)), np.zeros((3, 1)))


@pytest.mark.parametrize(
    ("low", "high", "n_cat"), [(-1, 3, 9), (-5, 300, 3), (0, 2**40, 3), (0, 2, 1)]
)
def test_query_order_is_lexsort_of_the_codes(low: int, high: int, n_cat: int) -> None:
    # (0, 2**40, 3): 120 bits of codes, beyond one integer key
    from synthrisk.neighbors._kernels import query_order

    rng = np.random.default_rng(high)
    codes = rng.integers(low, high, (3000, n_cat))
    codes[1000:2000] = codes[:1000]  # equal rows keep their order
    np.testing.assert_array_equal(query_order(codes), np.lexsort(codes.T[::-1]))
