# SPDX-License-Identifier: BSD-3-Clause
"""Exact row equality, in memory and on a cluster alike: ids of the distinct rows.

Equal rows get equal ids (missing equals missing, -0.0 equals 0.0). In memory the rows
are compared as bytes; on a cluster :func:`~synthrisk.metrics.membership._space.row_ids`
hashes them on the workers and confirms every hash group. Used by the identical match
share and by the DCR share's distinct-row searches.
"""

from __future__ import annotations

import numpy as np

from synthrisk.metrics.membership._space import Data, row_ids
from synthrisk.schema.encoding import EncodedTable
from synthrisk.schema.partitioned import is_partitioned

__all__ = ["distinct_rows", "row_keys"]


def row_keys(*blocks: Data) -> list[np.ndarray]:
    """Integer ids of the distinct rows over all blocks (equal rows → equal ids)."""
    if is_partitioned(blocks[0]):
        return row_ids(blocks)  # type: ignore[arg-type]
    mats = []
    for data in blocks:
        if isinstance(data, EncodedTable):
            mat = np.hstack([data.numeric, data.codes.astype(np.float64)])
        else:
            mat = np.asarray(data, dtype=np.float64)
        mat = (
            np.where(np.isnan(mat), np.nan, mat) + 0.0
        )  # one NaN bit pattern, -0.0 → 0.0
        mats.append(mat)
    stacked = np.ascontiguousarray(np.vstack(mats))
    _, inverse = np.unique(
        stacked.view(np.dtype((np.void, stacked.dtype.itemsize * stacked.shape[1]))),
        return_inverse=True,
    )
    inverse = inverse.ravel()
    out, start = [], 0
    for mat in mats:
        out.append(inverse[start : start + mat.shape[0]])
        start += mat.shape[0]
    return out


def distinct_rows(data: Data) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the first occurrence of each distinct row, and each row's distinct index.

    Distinct rows are numbered in order of first appearance (whatever the ids), so
    ties between equally close distinct rows go to the earliest, in memory and on a
    cluster alike. When every row is distinct, both are ``arange(n)``.
    """
    (ids,) = row_keys(data)
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    if first.size == ids.size:
        everyone = np.arange(ids.size)
        return everyone, everyone
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[inverse.ravel()]
