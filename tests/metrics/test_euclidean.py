# SPDX-License-Identifier: BSD-3-Clause
"""The BLAS-screened Euclidean search returns exactly what the reference neighbour search returns."""

from __future__ import annotations

import numpy as np
import pytest

from synthrisk.metrics._euclidean import euclidean_neighbors
from synthrisk.neighbors import nearest_neighbors


@pytest.mark.parametrize("scale", [1.0, 1e-4, 1e4])
@pytest.mark.parametrize("k", [1, 3])
def test_matches_numpy_oracle_with_ties_and_duplicates(scale: float, k: int) -> None:
    rng = np.random.default_rng(int(scale * 10) + k)
    reference = (
        rng.integers(0, 3, size=(97, 6)).astype(float) * scale + 1e3 * scale
    )  # far from the origin
    query = np.vstack(
        [reference[:15], rng.integers(0, 3, size=(40, 6)) * scale + 1e3 * scale]
    )
    got_d, got_i = euclidean_neighbors(
        query, reference, k=k, working_memory=2**-8
    )  # many tiny blocks
    want = nearest_neighbors(
        query, reference, k=k, distance="euclidean", backend="numpy"
    )
    np.testing.assert_array_equal(got_d, want.distances)
    np.testing.assert_array_equal(got_i, want.indices)


def test_continuous_data_all_neighbours() -> None:
    rng = np.random.default_rng(0)
    query, reference = rng.normal(size=(30, 20)), rng.normal(size=(25, 20))
    got_d, got_i = euclidean_neighbors(query, reference, k=25)
    full = np.sqrt(((query[:, None, :] - reference[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(got_d, np.sort(full, axis=1), rtol=1e-13)
    np.testing.assert_array_equal(got_i, np.argsort(full, axis=1, kind="stable"))


def test_progress_and_empty_query() -> None:
    seen: list[int] = []
    euclidean_neighbors(np.zeros((5, 2)), np.ones((3, 2)), k=1, progress=seen.append)
    assert sum(seen) == 5
    d, i = euclidean_neighbors(np.zeros((0, 2)), np.ones((3, 2)), k=2)
    assert d.shape == (0, 2)
    assert i.shape == (0, 2)
