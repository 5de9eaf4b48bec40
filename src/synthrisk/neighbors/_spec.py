# SPDX-License-Identifier: BSD-3-Clause
"""Distance specifications: how one pair of encoded rows is compared.

Every supported distance is one instance of a single parametrised form, so every
backend implements exactly one kernel::

    term_f = nan_both                 if both values are missing
           = nan_one                  if exactly one is missing
           = [x_f != y_f]             if indicator_f (range-0 numeric column)
           = min(|x_f - y_f| / scale_f, 1)  if clip, else |x_f - y_f| / scale_f
    term_f = term_f ** 2              if power == 2          (numeric columns only)
    term_c = [code_x != code_y]       categorical columns (missing is its own code)
    d(x, y) = (sum_c term_c + sum_f term_f) / divisor,  sqrt'd if power == 2

Terms are summed categorical columns first, then numeric columns, each in column
order; every backend uses this order, so their distances agree bit for bit.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from synthrisk._typing import FloatArray

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

    def __post_init__(self) -> None:
        if self.power not in (1, 2):  # pragma: no cover - internal
            msg = f"`power` must be 1 or 2; got {self.power!r}."
            raise ValueError(msg)
