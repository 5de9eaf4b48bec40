# SPDX-License-Identifier: BSD-3-Clause
"""The interface every neighbour-search backend implements (numpy, numba, dask)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._spec import DistanceSpec

__all__ = ["NeighborBackend"]


class NeighborBackend(Protocol):
    """A backend: exact k nearest reference rows of every query row.

    The numpy backend is the reference implementation; every backend returns the same
    distances, ascending, with ties going to the lowest reference position.
    """

    def kneighbors(
        self, q_num: FloatArray, q_cat: IntArray, r_num: FloatArray, r_cat: IntArray, spec: DistanceSpec,
        *, k: int, working_memory: float | None, progress: Callable[[int], None] | None = None,
    ) -> tuple[FloatArray, IntArray]:  # fmt: skip
        """Distances and indices, each of shape (n_query, k)."""
        ...
