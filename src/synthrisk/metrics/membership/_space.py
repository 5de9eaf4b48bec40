# SPDX-License-Identifier: BSD-3-Clause
"""The distance space shared by the membership family: which arrays, which distance.

Two kinds of input are supported:

* **mixed-type tables** (the default): the foundation's :class:`EncodedTable`
  (numeric block + categorical codes) with the ``dcr`` distance — per column
  ``min(|x - y| / range, 1)`` for numbers, 0/1 mismatch for categories, a missing
  value against a present one counts 1, two missing values 0, averaged over columns —
  or Anonymeter's ``gower``. Ranges are those of the real and holdout tables together
  (the population the generator was trained on), so every search of one metric uses
  the same units whichever table is the reference.
* **pre-encoded numeric tables** (``distance="euclidean"``, and every metric's
  ``mode="apt"``): the columns taken as numbers as they are, plain Euclidean distance,
  exactly what ai-privacy-toolkit computes after the caller's own one-hot / scaling.
  With ``mode="apt"`` the distances are rounded as scikit-learn rounds them
  (``arithmetic="sklearn"`` of :func:`synthrisk.neighbors.nearest_neighbors`), so
  ties between equally distant rows fall as in ai-privacy-toolkit; otherwise they
  are exact sums of squared differences.
"""

from __future__ import annotations

import dataclasses
from typing import Literal, TypeAlias

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics._base import Context
from synthrisk.neighbors import (
    Arithmetic,
    Neighbors,
    column_ranges,
    nearest_neighbors,
)
from synthrisk.schema.encoding import EncodedTable
from synthrisk.schema.tables import Tables

__all__ = [
    "DISTANCES",
    "MODES",
    "Data",
    "Distance",
    "Mode",
    "Space",
    "concat_rows",
    "n_rows",
    "numeric_matrix",
    "resolve_distance",
    "sample_rows",
    "take_rows",
]

Mode = Literal["default", "apt"]
Distance = Literal["dcr", "gower", "euclidean"]
MODES: tuple[str, ...] = ("default", "apt")
DISTANCES: tuple[str, ...] = ("dcr", "gower", "euclidean")

Data: TypeAlias = EncodedTable | FloatArray


def resolve_distance(distance: str | None, mode: str) -> str:
    """The distance a metric runs with: ``dcr`` by default, ``euclidean`` in APT mode."""
    if mode not in MODES:
        msg = f"`mode` must be one of {list(MODES)}; got {mode!r}."
        raise ParameterError(msg)
    if distance is None:
        return "euclidean" if mode == "apt" else "dcr"
    if distance not in DISTANCES:
        msg = f"`distance` must be one of {list(DISTANCES)} or None; got {distance!r}."
        raise ParameterError(msg)
    if mode == "apt" and distance != "euclidean":
        msg = (
            f"`mode='apt'` uses Euclidean distance on pre-encoded numeric columns, as "
            f"ai-privacy-toolkit does; got distance={distance!r}. Leave `distance` unset or pass 'euclidean'."
        )
        raise ParameterError(msg)
    return distance


def numeric_matrix(tables: Tables, name: str) -> FloatArray:
    """The table's modelable columns as a float64 matrix of pre-encoded numbers.

    Numerical columns are taken as they are and boolean columns as 0/1; any other
    column, and any missing value, is an error: this is APT's contract (the caller
    encodes and scales, nothing is imputed).
    """
    frame = tables.table(name)
    columns = []
    for spec in tables.schema.modelable:
        values = frame[spec.name]
        col = None
        if spec.kind == "numerical":
            col = values.to_numpy(dtype=np.float64, na_value=np.nan)
        elif spec.kind == "boolean":
            try:
                col = np.array(
                    [np.nan if v != v else float(v) for v in values], dtype=np.float64
                )
            except (TypeError, ValueError):
                col = None
        if col is None:
            msg = (
                f"column {spec.name!r} is {spec.kind}, but Euclidean distance (`distance='euclidean'` or "
                "`mode='apt'`) needs pre-encoded numeric columns; one-hot encode it first, or use the default "
                "mixed-type distance (`distance='dcr'`)."
            )
            raise InputError(msg)
        if np.isnan(col).any():
            n_nan = int(np.isnan(col).sum())
            msg = (
                f"column {spec.name!r} of the `{name}` table has {n_nan} missing value(s); Euclidean distance on "
                "pre-encoded arrays needs complete numbers. Impute them, or use the default mixed-type distance "
                "(`distance='dcr'`), which handles missing values."
            )
            raise InputError(msg)
        columns.append(col)
    return (
        np.ascontiguousarray(np.column_stack(columns))
        if columns
        else np.empty((len(frame), 0))
    )


def n_rows(data: Data) -> int:
    """Number of rows of an encoded table or array."""
    return data.n_rows if isinstance(data, EncodedTable) else int(data.shape[0])


def take_rows(data: Data, rows: IntArray) -> Data:
    """Rows at positions ``rows``."""
    if isinstance(data, EncodedTable):
        return data.take(rows)
    return np.ascontiguousarray(data[rows])


def concat_rows(first: Data, second: Data) -> Data:
    """``first`` followed by ``second``."""
    if isinstance(first, EncodedTable):
        assert isinstance(second, EncodedTable)
        return dataclasses.replace(
            first,
            numeric=np.ascontiguousarray(np.vstack([first.numeric, second.numeric])),
            codes=np.ascontiguousarray(np.vstack([first.codes, second.codes])),
        )
    assert not isinstance(second, EncodedTable)
    return np.ascontiguousarray(np.vstack([first, second]))


@dataclasses.dataclass(frozen=True)
class Space:
    """Arrays and distance of one metric run."""

    distance: str
    scale: FloatArray | None
    arithmetic: Arithmetic = "exact"

    @classmethod
    def for_tables(cls, tables: Tables, distance: str, mode: str = "default") -> Space:
        """Build the space; ranges come from the real and holdout tables together."""
        if distance == "euclidean":
            return cls(distance, None, "sklearn" if mode == "apt" else "exact")
        parts = [tables.encoded("real").numeric]
        if tables.holdout is not None:
            parts.append(tables.encoded("holdout").numeric)
        stacked = np.vstack(parts)
        ranges = column_ranges(stacked)
        ranges = np.where(np.isnan(ranges), 0.0, ranges)
        return cls(distance, ranges)

    def data(self, tables: Tables, name: str) -> Data:
        """The arrays of one table in this space."""
        if self.distance == "euclidean":
            return numeric_matrix(tables, name)
        return tables.encoded(name)

    def search(
        self,
        query: Data,
        reference: Data,
        *,
        k: int,
        context: Context,
        description: str,
    ) -> Neighbors:
        """Exact k nearest ``reference`` rows of every ``query`` row."""
        # scikit-learn's rounding is implemented by the numba kernel only
        backend = "numba" if self.arithmetic == "sklearn" else context.backend
        with context.progress.task(description, n_rows(query)) as advance:
            return nearest_neighbors(
                query,
                reference,
                k=k,
                distance=self.distance,  # type: ignore[arg-type]
                backend=backend,
                working_memory=context.working_memory,
                scale=self.scale,
                arithmetic=self.arithmetic,
                progress=advance,
            )


def sample_rows(n: int, size: int, rng: np.random.Generator) -> IntArray:
    """``size`` sorted row positions of ``n`` drawn without replacement (all when fewer)."""
    if size >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=size, replace=False))
