# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from synthrisk.neighbors import nearest_neighbors, reuse_searches
from synthrisk.neighbors._reuse import active_reuse
from synthrisk.schema.encoding import EncodedTable


def _table(rng: np.random.Generator, n: int, *, nan: bool) -> EncodedTable:
    """Coarse values: many exact ties between rows."""
    numeric = rng.integers(0, 4, size=(n, 3)).astype(np.float64)
    if nan:
        numeric[rng.random(numeric.shape) < 0.1] = np.nan
    codes = rng.integers(0, 3, size=(n, 2))
    return EncodedTable(numeric, codes, ("a", "b", "c"), ("d", "e"))


def _replace(
    table: EncodedTable, rows: np.ndarray, source: EncodedTable, at: np.ndarray
) -> EncodedTable:
    numeric, codes = table.numeric.copy(), table.codes.copy()
    numeric[rows], codes[rows] = source.numeric[at], source.codes[at]
    return EncodedTable(numeric, codes, table.numeric_names, table.categorical_names)


SEARCHES: list[dict[str, Any]] = [
    {"distance": "dcr", "scale": np.full(3, 3.0)},
    {"distance": "dcr"},  # the reference's own ranges
    {"distance": "gower", "missing": "anonymeter"},
    {"distance": "gower", "scale": np.full(3, 3.0)},
]


def _full(query: Any, reference: Any, **options: Any) -> Any:
    assert active_reuse() is None
    return nearest_neighbors(query, reference, **options)


@pytest.mark.parametrize("options", SEARCHES)
@pytest.mark.parametrize("k", [1, 3, 7])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_reused_searches_equal_full_searches(
    options: dict[str, Any], k: int, backend: str, rng: np.random.Generator
) -> None:
    query, reference = _table(rng, 60, nan=True), _table(rng, 90, nan=True)
    options = {**options, "k": k, "backend": backend}
    # copies of query rows replace reference rows, some of them nearest neighbours
    first_nn = _full(query, reference, **options).indices[:, 0]
    rows = np.unique(np.concatenate([first_nn[:3], [0, 89]]))
    planted = _replace(reference, rows, query, np.arange(rows.size))
    moved_query = _replace(query, np.array([5, 6]), reference, np.array([1, 2]))
    cases = [
        (query, reference),  # identical
        (query, planted),  # a few reference rows changed
        (moved_query, reference),  # a few query rows changed
        (moved_query, planted),  # both changed: from the search of one side changed
        (query, planted),  # identical to an earlier one
    ]
    with reuse_searches() as store:
        got = [
            nearest_neighbors(q, r, **options) for q, r in [(query, reference), *cases]
        ]
    for (q, r), result in zip(cases, got[1:], strict=True):
        want = _full(q, r, **options)
        np.testing.assert_array_equal(result.indices, want.indices)
        np.testing.assert_array_equal(result.distances, want.distances)
    assert store.stats.searches == 6
    assert store.stats.identical == 2
    if options.get("scale") is None and options["distance"] == "gower":
        # ranges over query and reference: a changed row may change them, then every
        # distance changes and nothing is reused
        assert store.stats.delta + store.stats.full == 4
    elif options.get("scale") is None:
        assert store.stats.delta >= 1  # the query side: the reference's ranges hold
    else:
        assert (store.stats.full, store.stats.delta) == (1, 3)
        # the first search in full, then a small part of each pair table
        assert store.stats.pairs_searched < 60 * 90 * 2


def test_euclidean_reuse_and_sklearn_rounding_only_when_identical(
    rng: np.random.Generator,
) -> None:
    query, reference = rng.random((40, 4)), rng.random((70, 4))
    planted = reference.copy()
    planted[[3, 9]] = query[[0, 1]]
    for arithmetic, deltas in (("exact", 1), ("sklearn", 0)):
        options = {
            "k": 2,
            "distance": "euclidean",
            "backend": "numba",
            "arithmetic": arithmetic,
        }
        with reuse_searches() as store:
            nearest_neighbors(query, reference, **options)
            got = nearest_neighbors(query, planted, **options)
            again = nearest_neighbors(query, planted, **options)
        want = _full(query, planted, **options)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.distances, want.distances)
        np.testing.assert_array_equal(again.distances, want.distances)
        assert (store.stats.delta, store.stats.identical) == (deltas, 1)


def test_a_radius_search_is_reused_only_when_identical(
    rng: np.random.Generator,
) -> None:
    query, reference = _table(rng, 30, nan=False), _table(rng, 50, nan=False)
    planted = _replace(reference, np.array([4]), query, np.array([0]))
    options = {"k": 3, "distance": "dcr", "scale": np.full(3, 3.0)}
    radius = np.full(30, 0.3)
    with reuse_searches() as store:
        nearest_neighbors(query, reference, max_distance=radius, **options)
        got = nearest_neighbors(query, planted, max_distance=radius, **options)
        nearest_neighbors(query, planted, max_distance=radius * 2, **options)
    want = _full(query, planted, max_distance=radius, **options)
    np.testing.assert_array_equal(got.indices, want.indices)
    assert (store.stats.identical, store.stats.delta, store.stats.full) == (0, 0, 3)


def test_results_are_copies_and_modified_inputs_are_noticed(
    rng: np.random.Generator,
) -> None:
    query, reference = rng.random((30, 3)), rng.random((50, 3))
    options = {"k": 2, "distance": "dcr", "scale": np.ones(3)}
    with reuse_searches() as store:
        first = nearest_neighbors(query, reference, **options)
        first.indices[:] = -7  # the caller's copy
        again = nearest_neighbors(query, reference, **options)
        assert (again.indices >= 0).all()
        reference[4] = query[2]  # modified in place: the remembered rows are stale
        got = nearest_neighbors(query, reference, **options)
    want = _full(query, reference, **options)
    np.testing.assert_array_equal(got.indices, want.indices)
    assert (store.stats.identical, store.stats.delta, store.stats.full) == (1, 0, 2)


def test_sweep_forgets_what_was_not_used_and_scopes_nest(
    rng: np.random.Generator,
) -> None:
    a, b, c = rng.random((20, 3)), rng.random((25, 3)), rng.random((25, 3))
    options = {"k": 1, "distance": "dcr", "scale": np.ones(3)}
    with reuse_searches() as store:
        nearest_neighbors(a, b, **options)
        nearest_neighbors(a, c, **options)
        store.sweep()
        assert len(store) == 2
        nearest_neighbors(a, b, **options)  # reuses the first
        store.sweep()
        assert len(store) == 1
        with reuse_searches() as inner:
            assert active_reuse() is inner
            nearest_neighbors(a, b, **options)
        assert active_reuse() is store
        assert inner.stats.full == 1
    assert active_reuse() is None


def test_progress_is_reported_for_reused_searches(rng: np.random.Generator) -> None:
    query, reference = rng.random((30, 3)), rng.random((40, 3))
    seen: list[int] = []
    with reuse_searches():
        nearest_neighbors(query, reference, distance="dcr", progress=seen.append)
        nearest_neighbors(query, reference, distance="dcr", progress=seen.append)
    assert sum(seen) == 60


def test_the_oldest_searches_are_forgotten_beyond_the_memory_budget(
    rng: np.random.Generator,
) -> None:
    query = rng.random((40, 3))
    references = [rng.random((50, 3)) for _ in range(4)]
    options = {"k": 2, "distance": "dcr", "scale": np.ones(3)}
    # one search remembers 40 x 2 results and 90 rows of 3 numbers: about 3.5 kB
    with reuse_searches(max_mib=8e-3) as store:
        for reference in references:
            nearest_neighbors(query, reference, **options)
        assert 1 <= len(store) < 4
        assert store.nbytes <= 8e-3 * 2**20
        nearest_neighbors(query, references[-1], **options)  # the newest is kept
        assert store.stats.identical == 1
