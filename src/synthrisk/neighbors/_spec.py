# SPDX-License-Identifier: BSD-3-Clause
"""Distance specifications: how one pair of encoded rows is compared.

Every supported distance is one instance of a single parametrised form, so every
backend implements exactly one kernel::

    term_f = nan_both                 if both values are missing
           = nan_one                  if exactly one is missing
           = [x_f != y_f]             if indicator_f (range-0 numeric column)
           = min(|x_f - y_f| / scale_f, 1)  if clip, else |x_f - y_f| / scale_f
    term_f = term_f ** 2              if power == 2          (numeric columns only)
    term_f = term_f * weight_f        (weights, 1 unless given)
    term_c = weight_c [code_x != code_y]  categorical columns (missing is its own code)
    d(x, y) = (sum_c term_c + sum_f term_f) / divisor,  sqrt'd if power == 2

Terms are summed categorical columns first, then numeric columns, each in column
order; every backend uses this order, so their distances agree bit for bit.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from synthrisk._typing import FloatArray
from synthrisk.exceptions import ParameterError

__all__ = ["DistanceSpec"]


@dataclasses.dataclass(frozen=True)
class DistanceSpec:
    """Parameters of the one distance form (see the module docstring)."""

    scale: FloatArray
    indicator: np.ndarray
    clip: bool
    nan_one: float
    nan_both: float
    power: int
    divisor: float
    weights: FloatArray | None = None
    cat_weights: FloatArray | None = None

    def __post_init__(self) -> None:
        if self.power not in (1, 2):  # pragma: no cover - internal
            msg = f"`power` must be 1 or 2; got {self.power!r}."
            raise ValueError(msg)

    def sum_radius(self, radius: FloatArray | None, n_query: int) -> FloatArray:
        """Per-query radii in the units the kernels rank by (before sqrt / divisor).

        Widened by a relative 1e-9, so rounding never drops a row whose final
        distance is within the radius; :meth:`within` then applies the exact limit.
        """
        if radius is None:
            return np.full(n_query, np.inf)
        r = np.asarray(radius, dtype=np.float64) * self.divisor
        if self.power == 2:
            r = r * r
        return np.where(np.isnan(r), -np.inf, r * (1 + 1e-9))

    @staticmethod
    def within(
        distances: FloatArray, indices: np.ndarray, radius: FloatArray | None
    ) -> tuple[FloatArray, np.ndarray]:
        """Drop the found rows farther than ``radius`` (they sort last)."""
        if radius is None:
            return distances, indices
        outside = ~(distances <= np.asarray(radius, dtype=np.float64)[:, None])
        distances[outside] = np.inf
        indices[outside] = -1
        return distances, indices

    def weighted(
        self, weights: FloatArray, distance: str, *, n_numeric: int, n_categorical: int
    ) -> DistanceSpec:
        """This distance with per-column ``weights`` (numeric columns, then categorical)."""
        n_columns = n_numeric + n_categorical
        if distance == "euclidean":
            msg = "`weights` apply to the mixed-type distances 'dcr' and 'gower'; got distance='euclidean'."
            raise ParameterError(msg)
        w = np.asarray(weights, dtype=np.float64)
        if (
            w.ndim != 1
            or w.shape[0] != n_columns
            or not np.isfinite(w).all()
            or (w < 0).any()
        ):
            msg = (
                f"`weights` must hold one finite non-negative number per column ({n_columns}: numeric "
                f"columns, then categorical ones); got {w.shape[0] if w.ndim == 1 else w.shape} values."
            )
            raise ParameterError(msg)
        return dataclasses.replace(
            self, weights=w[:n_numeric].copy(), cat_weights=w[n_numeric:].copy()
        )
