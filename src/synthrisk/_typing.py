# SPDX-License-Identifier: BSD-3-Clause
"""Type aliases shared across synthrisk (one definition drives typing and validation)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
elif TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**kwargs: Any) -> Any:
        """PEP 681's decorator (Python 3.11+), for type checkers only: a no-op here."""
        return lambda cls: cls


__all__ = [
    "ArrowTable",
    "Backend",
    "ColumnKind",
    "DistanceName",
    "FloatArray",
    "IntArray",
    "JSONValue",
    "SeedLike",
    "TableLike",
    "dataclass_transform",
]


FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
SeedLike: TypeAlias = int | np.random.Generator | None
#: a value of synthrisk's JSON (reports, breakdowns, parameters): what ``json.dumps``
#: writes (a tuple as a list) and, as lists and dicts, what ``json.loads`` reads back
JSONValue: TypeAlias = (
    str | int | float | bool | Sequence["JSONValue"] | Mapping[str, "JSONValue"] | None
)

Backend: TypeAlias = Literal["auto", "numpy", "numba", "dask", "torch"]
DistanceName: TypeAlias = Literal["dcr", "gower", "euclidean"]
ColumnKind: TypeAlias = Literal["numerical", "categorical", "boolean", "datetime", "id"]


class ArrowTable(Protocol):
    """A pyarrow ``Table``, as synthrisk reads it.

    pyarrow ships no type information, so its tables are described by what synthrisk
    uses of them; only real pyarrow tables are accepted when the code runs.
    """

    @property
    def num_rows(self) -> int: ...

    @property
    def column_names(self) -> list[str]: ...

    def to_pandas(self) -> pd.DataFrame: ...


#: a table synthrisk evaluates: a pandas DataFrame, a polars DataFrame or a pyarrow
#: Table (paths are read by :func:`synthrisk.io.read_table` and the file-level API)
TableLike: TypeAlias = "pd.DataFrame | pl.DataFrame | ArrowTable"
