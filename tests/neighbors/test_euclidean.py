# SPDX-License-Identifier: BSD-3-Clause
"""The fused Euclidean kernel equals a brute-force float64 search; its scikit-learn
arithmetic equals scikit-learn's NearestNeighbors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthrisk.exceptions import ParameterError
from synthrisk.neighbors import _euclidean, nearest_neighbors
from synthrisk.neighbors._euclidean import (
    euclidean_kneighbors,
    sklearn_uses_brute_force,
)


def brute_force(
    query: np.ndarray, reference: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Oracle: squared differences summed in column order in float64, stable sort."""
    sums = np.zeros((query.shape[0], reference.shape[0]))
    for f in range(query.shape[1]):
        diff = query[:, f][:, None] - reference[:, f][None, :]
        sums = sums + diff * diff
    order = np.argsort(sums, axis=1, kind="stable")[:, :k]
    return np.sqrt(np.take_along_axis(sums, order, axis=1)), order


def assert_same(
    got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, np.ndarray]
) -> None:
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.fixture(params=["default", "one pack per block", "bits as numbers"])
def layout(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Cache blocks of one 16-row pack (many block boundaries), or 0/1 columns screened as floats."""
    if request.param == "one pack per block":
        monkeypatch.setattr(_euclidean, "_BLOCK_BYTES", 1)
    elif request.param == "bits as numbers":
        monkeypatch.setattr(_euclidean, "_MIN_BITS", 10**9)
    return str(request.param)


@pytest.mark.parametrize("k", [1, 4])
@pytest.mark.parametrize("p", [20, 60])
def test_random_data(layout: str, k: int, p: int) -> None:
    rng = np.random.default_rng(k + p)
    # 101 query rows: several tiles of 48 and a partial group of 6; 170 rows: a partial pack
    query, reference = rng.normal(size=(101, p)), rng.normal(size=(170, p)) * 3 + 1
    got = euclidean_kneighbors(query, reference, k=k)
    assert_same(got, brute_force(query, reference, k))


@pytest.mark.parametrize("scale", [1.0, 1e-4, 1e4])
@pytest.mark.parametrize("p", [6, 50])
def test_tied_data_far_from_the_origin(layout: str, scale: float, p: int) -> None:
    rng = np.random.default_rng(int(scale) + p)
    reference = rng.integers(0, 3, size=(97, p)) * scale + 1e3 * scale
    query = np.vstack(
        [reference[:15], rng.integers(0, 3, size=(40, p)) * scale + 1e3 * scale]
    )
    got = euclidean_kneighbors(query, reference, k=5)
    assert_same(got, brute_force(query, reference, 5))
    # ties really happened, and went to the lowest index
    assert (np.diff(got[0], axis=1) == 0).any()


def one_hot_with_duplicates(rng: np.random.Generator, n: int) -> np.ndarray:
    """Two scaled numbers and five one-hot categories; every row repeated many times."""
    distinct = np.hstack(
        [
            rng.integers(0, 3, size=(12, 2)) / 2.0,
            np.eye(4)[rng.integers(0, 4, size=(12, 5))].reshape(12, -1),
        ]
    )
    return distinct[rng.integers(0, 12, size=n)]


@pytest.mark.parametrize("k", [1, 5, 90])
def test_one_hot_duplicates_more_than_the_pending_candidates(
    layout: str, k: int
) -> None:
    """Hundreds of exact ties per query row: candidates pile up past the pending
    buffer, are compacted and checked early, and still go to the lowest index."""
    rng = np.random.default_rng(k)
    reference = one_hot_with_duplicates(rng, 2000)
    query = reference[rng.integers(0, 2000, size=60)]
    assert (
        np.unique(reference, axis=0, return_counts=True)[1].min()
        > _euclidean._PENDING * 2
    )
    got = euclidean_kneighbors(query, reference, k=k)
    assert_same(got, brute_force(query, reference, k))
    assert (got[0][:, 0] == 0).all()  # every query row has exact copies
    got_sklearn = euclidean_kneighbors(query, reference, k=k, arithmetic="sklearn")
    assert got_sklearn[0].shape == (60, k)


def test_bit_columns_are_screened_as_bits() -> None:
    """0/1 columns are packed as bits (and constant ones left out), the rest kept numeric."""
    rng = np.random.default_rng(2)
    reference = one_hot_with_duplicates(rng, 50)
    reference[:, 2] = 1.0  # constant over both tables
    plan = _euclidean._Plan(reference[:5], reference, None, None)
    assert plan.numeric.tolist() == [0, 1]
    assert plan.binary.size == reference.shape[1] - 3 - (reference.max(0) == 0).sum()
    assert plan.rbits.shape == (4, 1, 16)  # 50 rows in 4 packs, one word of bits


def test_far_outlier_does_not_break_the_bound(layout: str) -> None:
    """A row 1e8 away inflates one block's margin; results stay exact."""
    rng = np.random.default_rng(4)
    reference = rng.normal(size=(300, 9))
    reference[37] = 1e8
    query = np.vstack([rng.normal(size=(50, 9)), reference[[37]] + 1.0])
    got = euclidean_kneighbors(query, reference, k=3)
    assert_same(got, brute_force(query, reference, 3))
    assert got[1][-1, 0] == 37


@pytest.mark.parametrize("scale", [1e-160, 1e-30, 1e-22, 1e20, 1e30, 1e150])
def test_extreme_magnitudes(scale: float) -> None:
    """Values whose squares would underflow or overflow float32 (the screen is rescaled)."""
    rng = np.random.default_rng(int(np.log10(scale)) % 7)
    query = rng.normal(size=(60, 5)) * scale
    reference = np.vstack([rng.normal(size=(200, 5)) * scale, query[:3]])
    got = euclidean_kneighbors(query, reference, k=3)
    assert_same(got, brute_force(query, reference, 3))
    # with one-hot bits next to the tiny or huge numbers
    bits = np.eye(4)[rng.integers(0, 4, size=reference.shape[0])]
    reference = np.hstack([reference, bits, bits[::-1]])
    query = reference[rng.integers(0, reference.shape[0], size=40)] * 1.0
    query[:, 0] += scale
    got = euclidean_kneighbors(query, reference, k=3)
    assert_same(got, brute_force(query, reference, 3))


def test_k_equals_n_reference_one_column_one_row() -> None:
    rng = np.random.default_rng(3)
    reference = rng.integers(0, 4, size=(30, 1)).astype(float)
    query = rng.integers(0, 4, size=(11, 1)).astype(float)
    assert_same(
        euclidean_kneighbors(query, reference, k=30),
        brute_force(query, reference, 30),
    )
    one = rng.normal(size=(1, 3))
    assert_same(
        euclidean_kneighbors(one, one, k=1),
        (np.zeros((1, 1)), np.zeros((1, 1), dtype=np.int64)),
    )
    assert_same(
        euclidean_kneighbors(query[:1], reference, k=7),
        brute_force(query[:1], reference, 7),
    )
    # one reference row, k = n_reference = 1
    assert_same(
        euclidean_kneighbors(query, reference[:1], k=1),
        brute_force(query, reference[:1], 1),
    )


def test_no_columns_and_no_rows() -> None:
    d, i = euclidean_kneighbors(np.zeros((3, 0)), np.zeros((5, 0)), k=2)
    np.testing.assert_array_equal(d, 0.0)
    np.testing.assert_array_equal(i, [[0, 1]] * 3)
    d, i = euclidean_kneighbors(np.zeros((0, 2)), np.ones((3, 2)), k=2)
    assert d.shape == i.shape == (0, 2)


def test_progress_counts_every_query_row() -> None:
    seen: list[int] = []
    rng = np.random.default_rng(0)
    euclidean_kneighbors(
        rng.random((300, 2)), rng.random((9, 2)), k=1, progress=seen.append,
        working_memory=2**-12,
    )  # fmt: skip
    assert sum(seen) == 300
    assert len(seen) > 1


@settings(max_examples=60, deadline=None)
@given(
    n_query=st.integers(1, 60),
    n_ref=st.integers(1, 40),
    p=st.integers(1, 12),
    data=st.data(),
)
def test_fuzz_against_brute_force(
    n_query: int, n_ref: int, p: int, data: st.DataObject
) -> None:
    """Coarse values with many ties; some columns only 0/1 (screened as bits when 4 or more)."""
    k = data.draw(st.integers(1, n_ref))
    general = st.sampled_from([-2.5, -1.0, 0.0, 0.5, 1.0, 3.0, 1e3])
    columns = []
    for _ in range(p):
        values = st.sampled_from([0.0, 1.0]) if data.draw(st.booleans()) else general
        n = n_query + n_ref
        columns.append(data.draw(st.lists(values, min_size=n, max_size=n)))
    both = np.array(columns).T.reshape(n_query + n_ref, p)
    query, reference = both[:n_query], both[n_query:]
    got = euclidean_kneighbors(query, reference, k=k)
    assert_same(got, brute_force(query, reference, k))


@pytest.mark.parametrize("backend", ["auto", "numba", "numpy"])
def test_nearest_neighbors_dispatches_euclidean(backend: str) -> None:
    rng = np.random.default_rng(5)
    query = rng.integers(0, 3, size=(25, 4)).astype(float)
    reference = rng.integers(0, 3, size=(40, 4)).astype(float)
    got = nearest_neighbors(
        query, reference, k=6, distance="euclidean", backend=backend
    )  # type: ignore[arg-type]
    assert_same((got.distances, got.indices), brute_force(query, reference, 6))


def test_sklearn_arithmetic_needs_euclidean_and_numba() -> None:
    with pytest.raises(
        ParameterError, match="applies to `distance='euclidean'` with the numba"
    ):
        nearest_neighbors(
            np.zeros((2, 2)), np.zeros((3, 2)), distance="dcr", arithmetic="sklearn"
        )
    with pytest.raises(ParameterError, match="applies to"):
        nearest_neighbors(
            np.zeros((2, 2)), np.zeros((3, 2)), distance="euclidean", backend="numpy",
            arithmetic="sklearn",
        )  # fmt: skip
    with pytest.raises(ParameterError, match="`arithmetic` must be one of"):
        nearest_neighbors(
            np.zeros((2, 2)), np.zeros((3, 2)), distance="euclidean", arithmetic="fast"
        )  # type: ignore[arg-type]


def coarse_one_hot(rng: np.random.Generator, n: int, n_features: int) -> np.ndarray:
    """Scaled integer columns plus one-hot blocks: many exact duplicates and ties."""
    n_num = n_features // 4
    numeric = (rng.integers(0, 5, size=(n, n_num)) - 2.0) / 1.7
    one_hot = np.eye(3)[rng.integers(0, 3, size=(n, n_features - n_num))].reshape(n, -1)
    return np.hstack([numeric, one_hot[:, : n_features - n_num]])


@pytest.mark.parametrize(
    ("n_features", "k"), [(24, 1), (24, 5), (6, 1), (6, 3), (6, 20)]
)
def test_sklearn_arithmetic_equals_scikit_learn(n_features: int, k: int) -> None:
    neighbors_module = pytest.importorskip("sklearn.neighbors")
    rng = np.random.default_rng(n_features * 100 + k)
    reference = coarse_one_hot(rng, 39, n_features)
    query = np.vstack([reference[:10], coarse_one_hot(rng, 30, n_features)])
    want, _ = (
        neighbors_module.NearestNeighbors(n_neighbors=k)
        .fit(reference)
        .kneighbors(query)
    )
    got, _ = euclidean_kneighbors(query, reference, k=k, arithmetic="sklearn")
    np.testing.assert_array_equal(got, want)
    if sklearn_uses_brute_force(n_features, 39, k):
        # the expanded form really rounds differently from the exact differences
        exact, _ = euclidean_kneighbors(query, reference, k=k)
        assert not np.array_equal(exact, got)


@pytest.mark.parametrize("n_features", [20, 40, 108])
def test_sklearn_arithmetic_full_and_partial_chunks(n_features: int) -> None:
    """Full 256-row chunks go through the fused kernel, partial ones through BLAS."""
    neighbors_module = pytest.importorskip("sklearn.neighbors")
    rng = np.random.default_rng(n_features)
    reference = coarse_one_hot(rng, 600, n_features)
    query = np.vstack([reference[:100], coarse_one_hot(rng, 430, n_features)])
    want, _ = (
        neighbors_module.NearestNeighbors(n_neighbors=4)
        .fit(reference)
        .kneighbors(query)
    )
    got, _ = euclidean_kneighbors(query, reference, k=4, arithmetic="sklearn")
    np.testing.assert_array_equal(got, want)


def test_sklearn_arithmetic_continuous_data() -> None:
    neighbors_module = pytest.importorskip("sklearn.neighbors")
    rng = np.random.default_rng(11)
    reference = rng.normal(size=(600, 20)) * 5 + 2
    query = np.vstack([reference[:50], rng.normal(size=(300, 20)) * 5 + 2])
    want, _ = (
        neighbors_module.NearestNeighbors(n_neighbors=3)
        .fit(reference)
        .kneighbors(query)
    )
    got, _ = euclidean_kneighbors(query, reference, k=3, arithmetic="sklearn")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fma_chain", ["every shape", "full chunks only", "no shape"])
def test_sklearn_arithmetic_where_blas_rounds_otherwise(
    fma_chain: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunk shapes on which BLAS does not round as the fused kernel go through BLAS."""
    neighbors_module = pytest.importorskip("sklearn.neighbors")
    if fma_chain == "full chunks only":
        # only where BLAS really is the chain: a BLAS kernel without fused
        # multiply-adds (OPENBLAS_CORETYPE=SandyBridge) rounds every chunk otherwise
        blas_check = _euclidean._blas_is_fma_chain
        monkeypatch.setattr(
            _euclidean,
            "_blas_is_fma_chain",
            lambda a, b, p: a == b == 256 and blas_check(a, b, p),
        )
    elif fma_chain == "no shape":
        monkeypatch.setattr(_euclidean, "_blas_is_fma_chain", lambda a, b, p: False)
    rng = np.random.default_rng(9)
    reference = coarse_one_hot(rng, 600, 24)
    query = np.vstack([reference[:100], coarse_one_hot(rng, 430, 24)])
    want = (
        neighbors_module.NearestNeighbors(n_neighbors=4)
        .fit(reference)
        .kneighbors(query)
    )
    got, _ = euclidean_kneighbors(query, reference, k=4, arithmetic="sklearn")
    np.testing.assert_array_equal(got, want[0])


def test_blas_rounding_check_tells_orders_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The per-shape check accepts the fused multiply-add chain and rejects another order."""
    probe = _euclidean._blas_is_fma_chain
    chain = _euclidean._fma_chain_middle
    x = np.random.default_rng(0).normal(size=(7, 5))
    np.testing.assert_allclose(chain(x, x), -2 * x @ x.T, rtol=1e-12, atol=1e-12)
    probe.cache_clear()
    try:
        monkeypatch.setattr(_euclidean, "_sklearn_middle", chain)
        assert probe(256, 160, 20)
        probe.cache_clear()
        reversed_order = lambda x, y: chain(x[:, ::-1].copy(), y[:, ::-1].copy())  # noqa: E731
        monkeypatch.setattr(_euclidean, "_sklearn_middle", reversed_order)
        assert not probe(256, 160, 20)
    finally:
        probe.cache_clear()
