# SPDX-License-Identifier: BSD-3-Clause
"""The interface every neighbour-search backend implements (numpy, numba, dask, torch)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._spec import DistanceSpec

__all__ = ["NeighborBackend", "Search"]


@dataclasses.dataclass(frozen=True)
class Search:
    """One exact k-nearest-neighbour search, as a backend receives it.

    Attributes
    ----------
    q_num : ndarray of shape (n_query, n_numeric)
        Numeric values of the query rows, scaled as ``spec`` expects (NaN: missing).
    q_cat : ndarray of shape (n_query, n_categorical)
        Categorical codes of the query rows (missing is its own code).
    r_num : ndarray of shape (n_reference, n_numeric)
        Numeric values of the reference rows.
    r_cat : ndarray of shape (n_reference, n_categorical)
        Categorical codes of the reference rows.
    spec : DistanceSpec
        The distance.
    k : int
        Number of neighbours, ``1 <= k <= n_reference``.
    working_memory : float, default=None
        MiB budget of one block's temporaries (None: the global setting).
    progress : callable, default=None
        Called with the number of query rows finished after each block.
    radius : ndarray of shape (n_query,), default=None
        Only reference rows at most this far from each query row: the slots left
        over hold distance inf and index -1 (numpy and numba backends).
    """

    q_num: FloatArray
    q_cat: IntArray
    r_num: FloatArray
    r_cat: IntArray
    spec: DistanceSpec
    k: int
    working_memory: float | None = None
    progress: Callable[[int], None] | None = None
    radius: FloatArray | None = None


class NeighborBackend(Protocol):
    """A backend: exact k nearest reference rows of every query row.

    The numpy backend is the reference implementation; every backend returns the same
    distances, ascending, with ties going to the lowest reference position.
    """

    def kneighbors(self, search: Search) -> tuple[FloatArray, IntArray]:
        """The k nearest reference rows of every query row.

        Parameters
        ----------
        search : Search
            The rows, the distance, ``k`` and the options of the search.

        Returns
        -------
        distances : ndarray of shape (n_query, k)
            Ascending; missing distances (NaN) sort last.
        indices : ndarray of shape (n_query, k)
            Reference positions; ties go to the lowest.
        """
        ...
