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

:func:`distance_spec` builds the spec of a named distance, with the column ranges of
:func:`column_ranges`.
"""

from __future__ import annotations

import dataclasses
from typing import Literal, get_args

import numpy as np

from synthrisk._typing import DistanceName, FloatArray
from synthrisk._validation import check_option
from synthrisk.exceptions import InputError, ParameterError

__all__ = ["DistanceSpec", "MissingRule", "column_ranges", "distance_spec"]

MissingRule = Literal["mismatch", "anonymeter"]


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

    def column_terms(self, diff: FloatArray, f: int) -> FloatArray:
        """Numeric column ``f``'s terms of the absolute differences ``diff``.

        Before the column's weight and the missing-value rule (``diff`` holds no
        missing value, or its terms are replaced afterwards).
        """
        if self.indicator[f]:
            term = (diff > 0).astype(np.float64)
        else:
            term = diff / self.scale[f]
            if self.clip:
                term = np.minimum(term, 1.0)
        if self.power == 2:
            term = term * term
        return term

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


def column_ranges(numeric: FloatArray) -> FloatArray:
    """Per-column ``max - min`` ignoring NaN (NaN for an all-missing column)."""
    if numeric.shape[0] == 0 or numeric.shape[1] == 0:
        return np.zeros(numeric.shape[1])
    out = np.full(numeric.shape[1], np.nan)
    for f in range(numeric.shape[1]):
        col = numeric[:, f]
        col = col[~np.isnan(col)]
        if col.size:
            out[f] = col.max() - col.min()
    return out


def distance_spec(
    distance: DistanceName,
    q_num: FloatArray,
    r_num: FloatArray,
    n_categorical: int,
    *,
    scale: FloatArray | None = None,
    missing: MissingRule = "mismatch",
) -> tuple[DistanceSpec, FloatArray, FloatArray]:
    """Build the :class:`DistanceSpec` of a named distance (and pre-scaled arrays).

    * ``"dcr"`` — SDMetrics' DCR distance: ``min(|x - y| / range, 1)`` with ranges of the
      reference (or ``scale``), an equality indicator for range-0 columns, one side
      missing = 1, both missing = 0, categorical mismatch = 1; mean over columns.
    * ``"gower"`` — Anonymeter's variant: numeric values divided by their range over
      query ∪ reference (range 0 → 1) before differencing, categorical mismatch = 1,
      summed. ``missing="anonymeter"`` copies Anonymeter's NaN rule (both missing = 1,
      one missing poisons the pair so it is never a neighbour); ``"mismatch"`` (default)
      scores one missing as 1 and both missing as 0, like categorical codes.
    * ``"euclidean"`` — plain L2 on numeric arrays (no missing values allowed).
    """
    check_option(distance, name="distance", allowed=get_args(DistanceName))
    check_option(missing, name="missing", allowed=get_args(MissingRule))
    n_num = q_num.shape[1]
    if distance == "dcr":
        ranges = (
            column_ranges(r_num)
            if scale is None
            else np.asarray(scale, dtype=np.float64)
        )
        indicator = ranges == 0
        spec = DistanceSpec(
            scale=np.where(indicator, 1.0, ranges),
            indicator=indicator,
            clip=True,
            nan_one=1.0,
            nan_both=0.0,
            power=1,
            divisor=float(max(n_num + n_categorical, 1)),
        )
        return spec, q_num, r_num
    if distance == "gower":
        if scale is None:
            both = np.vstack([q_num, r_num]) if n_num else q_num
            lo = np.nanmin(both, axis=0) if n_num else np.zeros(0)
            hi = np.nanmax(both, axis=0) if n_num else np.zeros(0)
            scale = hi - lo
        scale = np.where((scale == 0) | np.isnan(scale), 1.0, scale)
        nan_one, nan_both = (np.nan, 1.0) if missing == "anonymeter" else (1.0, 0.0)
        spec = DistanceSpec(
            scale=np.ones(n_num),
            indicator=np.zeros(n_num, dtype=bool),
            clip=False,
            nan_one=nan_one,
            nan_both=nan_both,
            power=1,
            divisor=1.0,
        )
        return (
            spec,
            np.ascontiguousarray(q_num / scale),
            np.ascontiguousarray(r_num / scale),
        )
    if n_categorical:
        msg = "`distance='euclidean'` works on numeric arrays only; encode categorical columns first."
        raise ParameterError(msg)
    if np.isnan(q_num).any() or np.isnan(r_num).any():
        msg = "`distance='euclidean'` needs arrays without missing values; impute or drop NaN first."
        raise InputError(msg)
    spec = DistanceSpec(
        scale=np.ones(n_num),
        indicator=np.zeros(n_num, dtype=bool),
        clip=False,
        nan_one=np.nan,
        nan_both=np.nan,
        power=2,
        divisor=1.0,
    )
    return spec, q_num, r_num
