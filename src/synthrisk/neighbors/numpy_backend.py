# SPDX-License-Identifier: BSD-3-Clause
"""Blocked brute-force neighbour search in plain numpy: the reference implementation.

It materialises one (block × n_reference) distance matrix at a time, so it is the
test oracle for the fast backends: same arithmetic, same order of summation, same
tie rule (lowest reference index first).
"""

from __future__ import annotations

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._blocks import rows_per_block
from synthrisk.neighbors._protocol import Search
from synthrisk.neighbors._spec import DistanceSpec

__all__ = ["block_sums", "finish", "kneighbors"]


def block_sums(
    q_num: FloatArray,
    q_cat: IntArray,
    r_num: FloatArray,
    r_cat: IntArray,
    spec: DistanceSpec,
) -> FloatArray:
    """Summed terms of shape (n_query, n_reference) for one block (before sqrt/divisor).

    Neighbours are ranked on these sums, so two pairs whose sums differ are never
    treated as tied even where the final division rounds them to the same distance.
    """
    acc = np.zeros((q_num.shape[0], r_num.shape[0]), dtype=np.float64)
    for c in range(q_cat.shape[1]):
        mismatch = (q_cat[:, c][:, None] != r_cat[:, c][None, :]).astype(np.float64)
        if spec.cat_weights is not None:
            mismatch *= spec.cat_weights[c]
        acc += mismatch
    for f in range(q_num.shape[1]):
        x = q_num[:, f][:, None]
        y = r_num[:, f][None, :]
        with np.errstate(invalid="ignore"):
            term = spec.column_terms(np.abs(x - y), f)
        x_nan = np.isnan(x)
        y_nan = np.isnan(y)
        term = np.where(
            x_nan & y_nan, spec.nan_both, np.where(x_nan | y_nan, spec.nan_one, term)
        )
        if spec.weights is not None:
            term = term * spec.weights[f]
        acc += term
    return acc


def finish(sums: FloatArray, spec: DistanceSpec) -> FloatArray:
    """Turn summed terms into distances."""
    if spec.power == 2:
        return np.sqrt(sums) / spec.divisor
    return sums / spec.divisor


def kneighbors(search: Search) -> tuple[FloatArray, IntArray]:
    """:meth:`NeighborBackend.kneighbors` over blocks of full distance matrices."""
    spec, k, radius = search.spec, search.k, search.radius
    n_query, n_ref = search.q_num.shape[0], search.r_num.shape[0]
    sum_radius = spec.sum_radius(radius, n_query)
    distances = np.empty((n_query, k), dtype=np.float64)
    indices = np.empty((n_query, k), dtype=np.int64)
    # about four float64 temporaries of one block row each
    step = rows_per_block(
        32 * n_ref, working_memory=search.working_memory, n_rows=n_query
    )
    for start in range(0, n_query, step):
        block = slice(start, min(start + step, n_query))
        sums = block_sums(
            search.q_num[block], search.q_cat[block], search.r_num, search.r_cat, spec
        )
        key = np.where(np.isnan(sums), np.inf, sums)
        order = np.argsort(key, axis=1, kind="stable")[:, :k]
        indices[block] = order
        distances[block] = finish(np.take_along_axis(sums, order, axis=1), spec)
        if radius is not None:
            found = np.take_along_axis(sums, order, axis=1)
            outside = ~(found <= sum_radius[block][:, None])
            distances[block][outside] = np.inf
            indices[block][outside] = -1
        if search.progress is not None:
            search.progress(block.stop - block.start)
    return spec.within(distances, indices, radius)
