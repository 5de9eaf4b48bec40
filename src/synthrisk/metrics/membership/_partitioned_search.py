# SPDX-License-Identifier: BSD-3-Clause
"""Neighbour searches of the membership family on tables partitioned on a cluster.

The driver never holds more neighbour arrays than it returns: a reduction of the
neighbours runs where they are found and only its results come back
(:func:`reduce_neighbors`), and whole neighbour lists are gathered into their result
one query partition at a time (:func:`gather_neighbors`). Only the ``dcr`` distance
is searched on partitioned tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics._base import Context
from synthrisk.neighbors import Neighbors, map_neighbors

__all__ = ["gather_neighbors", "reduce_neighbors"]


def _neighbors(
    neighbors: tuple[FloatArray, IntArray],
) -> tuple[FloatArray, IntArray]:
    """Task: the neighbours as they are (kept on the cluster until gathered)."""
    return neighbors


def reduce_neighbors(
    query: Any,
    reference: Any,
    finish: Callable[..., np.ndarray],
    *args: Any,
    k: int,
    scale: FloatArray | None,
    context: Context,
    description: str,
) -> np.ndarray:
    """``finish((distances, indices), *args)`` of every query partition, concatenated.

    ``finish`` runs on the cluster (a module-level function: it is pickled).
    """
    with context.progress.task(description, int(query.n_rows)) as advance:
        parts = map_neighbors(
            query,
            reference,
            finish,
            *args,
            k=k,
            scale=scale,
            working_memory=context.working_memory,
            progress=advance,
        )
    if parts:
        return np.concatenate(parts)
    empty = (np.empty((0, k)), np.empty((0, k), dtype=np.int64))
    return np.asarray(finish(empty, *args))


def gather_neighbors(
    query: Any,
    reference: Any,
    *,
    k: int,
    scale: FloatArray | None,
    context: Context,
    description: str,
) -> Neighbors:
    """The k nearest reference rows of every query row (``dcr`` distance).

    Each query partition's neighbours stay on the cluster until they are copied
    into the result, one partition at a time.
    """
    n = int(query.n_rows)
    with context.progress.task(description, n) as advance:
        parts = map_neighbors(
            query,
            reference,
            _neighbors,
            k=k,
            scale=scale,
            working_memory=context.working_memory,
            progress=advance,
            keep=True,
        )
    distances = np.empty((n, k))
    indices = np.empty((n, k), dtype=np.int64)
    at = 0
    for i, part in enumerate(parts):
        d, idx = part.result() if hasattr(part, "result") else part
        distances[at : at + d.shape[0]] = d
        indices[at : at + d.shape[0]] = idx
        at += d.shape[0]
        if hasattr(part, "release"):
            part.release()
        parts[i] = None
        del d, idx
    return Neighbors(distances=distances, indices=indices)
