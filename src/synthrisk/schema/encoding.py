# SPDX-License-Identifier: BSD-3-Clause
"""Encoding of normalised tables into arrays for the numeric kernels.

Numerical and datetime columns go to a float64 block (datetimes as seconds from a
common origin, NaN for missing); categorical and boolean columns to an int64 block of
category codes shared by all tables (``-1`` for missing).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from synthrisk._typing import FloatArray, IntArray
from synthrisk.schema.schema import Schema

__all__ = ["MAX_ONE_HOT_LEVELS", "EncodedTable", "Encoder", "frequent_levels"]

#: the most one-hot columns any method gives one categorical column: the most frequent
#: levels, the rest share one "other" column (an identifier-like column of thousands of
#: levels would otherwise make dense designs and densities thousands of columns wide)
MAX_ONE_HOT_LEVELS = 100


def frequent_levels(counts: IntArray, limit: int) -> IntArray:
    """The positions of the ``limit`` largest positive ``counts``, most frequent first.

    Ties go to the lower position (a stable order), so the choice is deterministic.

    Parameters
    ----------
    counts : ndarray of shape (n_levels,)
        How many rows hold each level (a ``bincount`` of codes).
    limit : int
        How many levels to keep at most.

    Returns
    -------
    ndarray of int64
        At most ``limit`` positions into ``counts``, by decreasing count.
    """
    present = np.flatnonzero(counts > 0)
    order = np.argsort(-counts[present], kind="stable")
    return present[order][:limit].astype(np.int64)


@dataclasses.dataclass(frozen=True)
class EncodedTable:
    """Arrays of one table, ready for a kernel.

    Attributes
    ----------
    numeric : ndarray of shape (n_rows, n_numeric)
        Numerical and datetime columns (seconds), float64, NaN for missing values.
    codes : ndarray of shape (n_rows, n_categorical)
        Categorical and boolean columns as int64 codes, ``-1`` for missing values.
    numeric_names, categorical_names : tuple of str
        Column names of the two blocks, in schema order.
    """

    numeric: FloatArray
    codes: IntArray
    numeric_names: tuple[str, ...]
    categorical_names: tuple[str, ...]

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.numeric.shape[0])

    @property
    def n_columns(self) -> int:
        """Number of encoded columns (numeric + categorical)."""
        return int(self.numeric.shape[1] + self.codes.shape[1])

    def take(self, rows: IntArray) -> EncodedTable:
        """Return the rows at positions ``rows``."""
        if isinstance(rows, np.ndarray) and rows.dtype.kind in "iu":
            # np.take gathers rows several times faster than fancy indexing
            return dataclasses.replace(
                self,
                numeric=np.take(self.numeric, rows, axis=0),
                codes=np.take(self.codes, rows, axis=0),
            )
        return dataclasses.replace(
            self, numeric=self.numeric[rows], codes=self.codes[rows]
        )

    def select(self, columns: list[str]) -> EncodedTable:
        """Return only ``columns`` (which must be encoded columns)."""
        # positions by name: one dict per call, not a scan per column (wide tables)
        num_at = {name: i for i, name in enumerate(self.numeric_names)}
        cat_at = {name: i for i, name in enumerate(self.categorical_names)}
        num = [num_at[c] for c in columns if c in num_at]
        cat = [cat_at[c] for c in columns if c in cat_at]
        return EncodedTable(
            numeric=np.ascontiguousarray(self.numeric[:, num]),
            codes=np.ascontiguousarray(self.codes[:, cat]),
            numeric_names=tuple(self.numeric_names[i] for i in num),
            categorical_names=tuple(self.categorical_names[i] for i in cat),
        )


@dataclasses.dataclass(frozen=True)
class Encoder:
    """Shared encoding of several tables; build it with :meth:`fit`."""

    numeric_names: tuple[str, ...]
    categorical_names: tuple[str, ...]
    datetime_names: tuple[str, ...]
    categories: dict[str, pd.Index]
    time_origin: int

    @classmethod
    def fit(cls, schema: Schema, *frames: pd.DataFrame) -> Encoder:
        """Fit category codes and the time origin on the union of ``frames``."""
        numeric = tuple(
            c.name for c in schema.modelable if c.kind in ("numerical", "datetime")
        )
        categorical = tuple(
            c.name for c in schema.modelable if c.kind in ("categorical", "boolean")
        )
        datetimes = tuple(c.name for c in schema.modelable if c.kind == "datetime")
        categories = {}
        for name in categorical:
            stacked = pd.concat([f[name] for f in frames], ignore_index=True)
            _, uniques = pd.factorize(stacked, use_na_sentinel=True)
            categories[name] = pd.Index(uniques, dtype=object)
        origin = 0
        mins = [f[name].min() for f in frames for name in datetimes]
        mins = [m for m in mins if not pd.isna(m)]
        if mins:
            origin = int(min(mins).value)
        return cls(numeric, categorical, datetimes, categories, origin)

    def select(self, columns: Sequence[str]) -> Encoder:
        """The same encoding of ``columns`` only (codes and time origin unchanged)."""
        keep = set(columns)
        return Encoder(
            numeric_names=tuple(n for n in self.numeric_names if n in keep),
            categorical_names=tuple(n for n in self.categorical_names if n in keep),
            datetime_names=tuple(n for n in self.datetime_names if n in keep),
            categories={n: c for n, c in self.categories.items() if n in keep},
            time_origin=self.time_origin,
        )

    def transform(self, frame: pd.DataFrame) -> EncodedTable:
        """Encode a normalised frame (never modifies it)."""
        n = len(frame)
        numeric = np.empty((n, len(self.numeric_names)), dtype=np.float64)
        for j, name in enumerate(self.numeric_names):
            if name in self.datetime_names:
                col = frame[name]
                ns = col.to_numpy(dtype="datetime64[ns]").view(np.int64)
                values = (ns - self.time_origin).astype(np.float64) / 1e9
                values[col.isna().to_numpy()] = np.nan
                numeric[:, j] = values
            else:
                numeric[:, j] = frame[name].to_numpy(dtype=np.float64, na_value=np.nan)
        codes = np.empty((n, len(self.categorical_names)), dtype=np.int64)
        for j, name in enumerate(self.categorical_names):
            codes[:, j] = self.categories[name].get_indexer(
                pd.Index(frame[name], dtype=object)
            )
        return EncodedTable(
            numeric=np.ascontiguousarray(numeric),
            codes=np.ascontiguousarray(codes),
            numeric_names=self.numeric_names,
            categorical_names=self.categorical_names,
        )
