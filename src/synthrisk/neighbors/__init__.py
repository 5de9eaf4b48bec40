# SPDX-License-Identifier: BSD-3-Clause
"""Exact k-nearest-neighbour search for mixed-type tables: one entry point, several backends.

>>> import numpy as np
>>> from synthrisk.neighbors import nearest_neighbors
>>> nn = nearest_neighbors(np.array([[5.0]]), np.array([[0.0], [10], [3], [4], [1]]), distance="dcr")
>>> float(nn.distances[0, 0])
0.1
"""

from __future__ import annotations

from synthrisk.neighbors._blocks import rows_per_block
from synthrisk.neighbors._compute import (
    CONNECT_TIMEOUT,
    active_client,
    compute_scope,
    dask_compute,
    dask_settings,
    local_cluster_size,
)
from synthrisk.neighbors._euclidean import Arithmetic
from synthrisk.neighbors._protocol import NeighborBackend, Search
from synthrisk.neighbors._reuse import SearchReuse, active_reuse, reuse_searches
from synthrisk.neighbors._search import (
    Neighbors,
    distance_matrix,
    get_backend,
    map_neighbors,
    nearest_neighbors,
)
from synthrisk.neighbors._spec import DistanceSpec, column_ranges, distance_spec

__all__ = [
    "CONNECT_TIMEOUT",
    "Arithmetic",
    "DistanceSpec",
    "NeighborBackend",
    "Neighbors",
    "Search",
    "SearchReuse",
    "active_client",
    "active_reuse",
    "column_ranges",
    "compute_scope",
    "dask_compute",
    "dask_settings",
    "distance_matrix",
    "distance_spec",
    "get_backend",
    "local_cluster_size",
    "map_neighbors",
    "nearest_neighbors",
    "reuse_searches",
    "rows_per_block",
]
