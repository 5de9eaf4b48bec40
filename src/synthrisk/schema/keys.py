# SPDX-License-Identifier: BSD-3-Clause
"""Key encoding of categorical code matrices and SDMetrics' binning of continuous columns.

* :func:`tuple_ids` turns the rows of two integer code matrices into shared integer ids
  (equal ids exactly where whole rows are equal), in linear time;
* :func:`bin_edges` and :func:`discretize` bin a real and a synthetic column on
  equal-width bins of the real values, as SDMetrics 0.32's CAP metrics do.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthrisk._typing import FloatArray, IntArray

__all__ = ["bin_edges", "discretize", "tuple_ids"]


def tuple_ids(real: IntArray, synthetic: IntArray) -> tuple[IntArray, IntArray, int]:
    """Shared integer ids of the row tuples of two code matrices.

    Parameters
    ----------
    real : ndarray of shape (n_real, n_columns)
        Non-negative int64 codes, shared with ``synthetic`` column by column.
    synthetic : ndarray of shape (n_synthetic, n_columns)

    Returns
    -------
    real_ids : ndarray of shape (n_real,)
    synthetic_ids : ndarray of shape (n_synthetic,)
        Equal ids exactly where the whole tuples are equal; ids are ``0 .. n_ids - 1``.
    n_ids : int
        Number of distinct tuples in both tables together.
    """
    n_real = real.shape[0]
    stacked = np.concatenate([real, synthetic], axis=0).astype(np.int64, copy=False)
    if stacked.shape[0] == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy(), 0
    ids = stacked[:, 0].copy()
    radix = int(ids.max()) + 1
    for c in range(1, stacked.shape[1]):
        column = stacked[:, c]
        cardinality = int(column.max()) + 1
        if radix * cardinality >= 2**62:  # keep the mixed-radix number inside int64
            codes, uniques = pd.factorize(ids)
            ids, radix = codes.astype(np.int64), len(uniques)
        ids = ids * cardinality + column
        radix *= cardinality
    codes, uniques = pd.factorize(ids)
    codes = codes.astype(np.int64, copy=False)
    return codes[:n_real], codes[n_real:], len(uniques)


def bin_edges(values: np.ndarray, n_bins: int) -> FloatArray | None:
    """Equal-width bin edges of the present values, exactly as ``pandas.cut(values, n_bins)``.

    ``n_bins + 1`` edges from ``linspace(min, max)`` with the first edge lowered by 0.1 %
    of the range (bins are right-closed); a constant column is widened to
    ``v (1 ± 0.001)`` (``± 0.001`` when v = 0) first. Integer input (datetimes in ns)
    uses integer arithmetic for the range, wrapping on overflow as pandas does.

    Parameters
    ----------
    values : ndarray of shape (n,)
        float64 with NaN for missing values, or int64.
    n_bins : int

    Returns
    -------
    ndarray of shape (n_bins + 1,) or None
        None when no value is present.
    """
    present = values[~np.isnan(values)] if values.dtype.kind == "f" else values
    if present.size == 0:
        return None
    lo, hi = present.min(), present.max()
    with np.errstate(over="ignore", invalid="ignore"):
        if lo == hi:
            lo = lo - (0.001 * abs(lo) if lo != 0 else 0.001)
            hi = hi + (0.001 * abs(hi) if hi != 0 else 0.001)
            return np.linspace(lo, hi, n_bins + 1)
        edges = np.linspace(lo, hi, n_bins + 1)
        edges[0] -= (hi - lo) * 0.001
    return edges


def _cut(values: np.ndarray, edges: FloatArray) -> IntArray:
    ids = np.searchsorted(edges, values.astype(np.float64, copy=False), side="left")
    codes = ids.astype(np.int64) - 1
    codes[(ids == 0) | (ids == edges.shape[0])] = -1  # outside the edges, or NaN
    return codes


def discretize(
    real: np.ndarray,
    synthetic: np.ndarray,
    n_bins: int,
    *,
    real_missing: np.ndarray | None = None,
    synthetic_missing: np.ndarray | None = None,
) -> tuple[IntArray, IntArray]:
    """Bin a real and a synthetic column on bins of the real values (SDMetrics' rule).

    The real column is cut on :func:`bin_edges`; the synthetic column on the same edges
    with the outer two replaced by -inf and +inf, so synthetic values outside the real
    range land in the first or last bin. Bins are right-closed: a value on an interior
    edge goes to the lower bin.

    Parameters
    ----------
    real, synthetic : ndarray of shape (n,)
        float64 (NaN = missing) or int64 values.
    n_bins : int
    real_missing, synthetic_missing : ndarray of bool, default=None
        Extra missing-value masks (for int64 input); masked values are ignored for the
        edges and get code -1.

    Returns
    -------
    real_codes, synthetic_codes : ndarray of int64
        Bin numbers ``0 .. n_bins - 1``; -1 for missing values. When the real column
        has no value at all, every present synthetic value gets bin 0.

    Examples
    --------
    >>> import numpy as np
    >>> r, s = discretize(np.array([0.0, 2.5, 5.0, 10.0]), np.array([-3.0, 5.0, 99.0]), 4)
    >>> r.tolist(), s.tolist()
    ([0, 0, 1, 3], [0, 1, 3])
    """
    present = real if real_missing is None else real[~real_missing]
    edges = bin_edges(present, n_bins)
    if edges is None:
        real_codes = np.full(real.shape[0], -1, dtype=np.int64)
        syn_present = (
            ~_isnan(synthetic)
            if synthetic_missing is None
            else ~synthetic_missing & ~_isnan(synthetic)
        )
        syn_codes = np.where(syn_present, 0, -1).astype(np.int64)
        return real_codes, syn_codes
    real_codes = _cut(real, edges)
    open_edges = edges.copy()
    open_edges[0], open_edges[-1] = -np.inf, np.inf
    syn_codes = _cut(synthetic, open_edges)
    if real_missing is not None:
        real_codes[real_missing] = -1
    if synthetic_missing is not None:
        syn_codes[synthetic_missing] = -1
    return real_codes, syn_codes


def _isnan(values: np.ndarray) -> np.ndarray:
    return (
        np.isnan(values)
        if values.dtype.kind == "f"
        else np.zeros(values.shape[0], dtype=bool)
    )
