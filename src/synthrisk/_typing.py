# SPDX-License-Identifier: BSD-3-Clause
"""Type aliases shared across synthrisk (one definition drives typing and validation)."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = [
    "Backend",
    "ColumnKind",
    "DistanceName",
    "FloatArray",
    "IntArray",
    "JSONValue",
    "SeedLike",
]

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
SeedLike: TypeAlias = int | np.random.Generator | None
JSONValue: TypeAlias = Any

Backend: TypeAlias = Literal["auto", "numpy", "numba", "dask", "torch"]
DistanceName: TypeAlias = Literal["dcr", "gower", "euclidean"]
ColumnKind: TypeAlias = Literal["numerical", "categorical", "boolean", "datetime", "id"]
