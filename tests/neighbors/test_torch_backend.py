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


def _continuous(rng: np.random.Generator, n: int) -> EncodedTable:
    """Ranges that are not powers of two (13.7, 0.3), a count column, missing values."""
    numeric = np.column_stack(
        [
            rng.random(n) * 13.7,
            np.round(rng.random(n) * 0.3, 2),
            rng.integers(0, 5, n).astype(float),
        ]
    )
    numeric[rng.random(n) < 0.05, 0] = np.nan
    codes = rng.integers(0, 2, size=(n, 1))
    return EncodedTable(numeric, codes, ("a", "b", "c"), ("x",))


@pytest.mark.parametrize("k", [1, 3])
def test_dcr_with_ranges_that_are_not_powers_of_two(k: int) -> None:
    rng = np.random.default_rng(11 + k)
    reference = _continuous(rng, 60)
    query = _continuous(rng, 30)
    _same(query, reference, k=k, distance="dcr")


def test_scales_are_divided_by_as_tensors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never a division by a Python number: CUDA kernels turn it into a multiplication
    by the reciprocal, one bit off (PyTorch's div_true_kernel_cuda)."""
    torch = pytest.importorskip("torch")
    divisors: list[object] = []
    original = torch.Tensor.div_

    def div_(self: object, other: object, *args: object, **kwargs: object) -> object:
        divisors.append(other)
        return original(self, other, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(torch.Tensor, "div_", div_)
    rng = np.random.default_rng(5)
    _same(_continuous(rng, 12), _continuous(rng, 20), k=2, distance="dcr")
    assert divisors
    assert all(isinstance(d, torch.Tensor) for d in divisors)


@pytest.mark.skipif(
    not __import__("torch").cuda.is_available(), reason="needs a CUDA device"
)
def test_identical_on_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTHRISK_TORCH_DEVICE", "cuda")
    rng = np.random.default_rng(21)
    _same(_continuous(rng, 300), _continuous(rng, 2000), k=3, distance="dcr")
    _same(_mixed(rng, 100), _mixed(rng, 500), k=5, distance="gower")
