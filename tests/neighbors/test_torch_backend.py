# SPDX-License-Identifier: BSD-3-Clause
"""The torch backend (CPU tensors here) returns exactly what the numpy backend returns."""

from __future__ import annotations

import numpy as np
import pytest

from synthrisk.neighbors import nearest_neighbors, torch_backend
from synthrisk.schema.encoding import EncodedTable

pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run on CPU tensors, in reference blocks of 7 rows (many merges of the top k)."""
    monkeypatch.setenv("SYNTHRISK_TORCH_DEVICE", "cpu")
    monkeypatch.setattr(torch_backend, "_REFERENCE_BLOCK", 7)


def _same(query: object, reference: object, **kwargs: object) -> None:
    want = nearest_neighbors(query, reference, backend="numpy", **kwargs)  # type: ignore[arg-type]
    got = nearest_neighbors(
        query, reference, backend="torch", working_memory=2**-12, **kwargs
    )  # type: ignore[arg-type]
    np.testing.assert_array_equal(got.distances, want.distances)
    np.testing.assert_array_equal(got.indices, want.indices)


def _mixed(rng: np.random.Generator, n: int) -> EncodedTable:
    numeric = rng.integers(0, 4, size=(n, 3)).astype(float) / 3
    numeric[rng.random((n, 3)) < 0.1] = np.nan
    numeric[:, 2] = 5.0  # a constant column: the equality indicator
    codes = rng.integers(0, 3, size=(n, 2))
    return EncodedTable(numeric, codes, ("a", "b", "c"), ("x", "y"))


@pytest.mark.parametrize("k", [1, 4, 30])
def test_euclidean_on_tied_data(k: int) -> None:
    rng = np.random.default_rng(k)
    reference = rng.integers(0, 3, size=(30, 5)) / 3.0
    query = np.vstack([reference[:6], rng.integers(0, 3, size=(20, 5)) / 3.0])
    _same(query, reference, k=k, distance="euclidean")


@pytest.mark.parametrize("distance", ["dcr", "gower"])
@pytest.mark.parametrize("k", [1, 5])
def test_mixed_type_distances(distance: str, k: int) -> None:
    rng = np.random.default_rng(7 + k)
    _same(_mixed(rng, 25), _mixed(rng, 40), k=k, distance=distance)


def test_anonymeter_missing_rule() -> None:
    rng = np.random.default_rng(3)
    _same(_mixed(rng, 25), _mixed(rng, 40), k=3, distance="gower", missing="anonymeter")


def test_progress_and_device() -> None:
    seen: list[int] = []
    rng = np.random.default_rng(0)
    nearest_neighbors(
        rng.random((50, 2)), rng.random((9, 2)), backend="torch", distance="euclidean",
        working_memory=2**-14, progress=seen.append,
    )  # fmt: skip
    assert sum(seen) == 50
    assert len(seen) > 1
    assert str(torch_backend.device()) == "cpu"
