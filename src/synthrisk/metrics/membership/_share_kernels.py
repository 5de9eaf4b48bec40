# SPDX-License-Identifier: BSD-3-Clause
"""Kernels of the DCR share: which side is each synthetic row closer to, under any split.

All comparisons come from *one* neighbour search of the synthetic rows in the pool
``real + holdout`` (both tables stacked). Each synthetic row keeps its ranked list of pool neighbours, long
enough to hold every pool row tied at its smallest distance (its *tie set*). Then:

* for a subset of included pool rows (all rows, or a size-corrected subsample), the
  first included entries of the list decide whether the nearest included real row is
  strictly closer, strictly farther, or at exactly the same distance as the nearest
  included holdout row; a list that runs out before deciding marks the row as
  unresolved (the caller searches those few rows directly);
* for a random relabelling of the pool (the permutation null), only the labels of the
  tie set matter: all real → closer to real, all holdout → closer to holdout, both →
  a tie.
"""

from __future__ import annotations

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray

__all__ = [
    "CLOSER_HOLDOUT",
    "CLOSER_REAL",
    "TIE",
    "UNRESOLVED",
    "compare_sides",
    "expand_lists",
    "permutation_shares",
    "tie_sets",
]

CLOSER_REAL = 1
CLOSER_HOLDOUT = 0
TIE = 2
UNRESOLVED = -1


@numba.njit(nogil=True, cache=True)
def compare_sides(
    offsets, distances, indices, is_real, included, n_pool
):  # pragma: no cover - compiled
    """Outcome per synthetic row (``CLOSER_REAL``, ``CLOSER_HOLDOUT``, ``TIE`` or ``UNRESOLVED``).

    Parameters
    ----------
    offsets : ndarray of shape (n_synthetic + 1,)
        Row ``s``'s neighbours are ``distances/indices[offsets[s]:offsets[s + 1]]``, ascending.
    distances : ndarray of shape (n_entries,)
    indices : ndarray of shape (n_entries,)
        Pool positions.
    is_real : ndarray of shape (n_pool,)
        True for real rows, False for holdout rows.
    included : ndarray of shape (n_pool,)
        Pool rows taking part in this comparison.
    n_pool : int
        Size of the pool (a list that long is complete).
    """
    n = offsets.size - 1
    out = np.empty(n, dtype=np.int8)
    for s in range(n):
        start = offsets[s]
        stop = offsets[s + 1]
        first = np.inf
        found = False
        seen_real = False
        seen_holdout = False
        decided = False
        for e in range(start, stop):
            j = indices[e]
            if not included[j]:
                continue
            d = distances[e]
            if not found:
                found = True
                first = d
            elif d > first:
                decided = True
                break
            if is_real[j]:
                seen_real = True
            else:
                seen_holdout = True
        if found and not decided:
            decided = stop - start >= n_pool or distances[stop - 1] > first
        if not decided:
            out[s] = UNRESOLVED
        elif seen_real and seen_holdout:
            out[s] = TIE
        elif seen_real:
            out[s] = CLOSER_REAL
        else:
            out[s] = CLOSER_HOLDOUT
    return out


@numba.njit(nogil=True, cache=True)
def _expanded_lengths(
    offsets, indices, member_offsets, cap
):  # pragma: no cover - compiled
    n = offsets.size - 1
    lengths = np.zeros(n, dtype=np.int64)
    for s in range(n):
        total = 0
        for e in range(offsets[s], offsets[s + 1]):
            j = indices[e]
            total += member_offsets[j + 1] - member_offsets[j]
            if total >= cap:
                total = cap
                break
        lengths[s] = total
    return lengths


@numba.njit(nogil=True, cache=True)
def _expand(
    offsets, distances, indices, member_offsets, members, new_offsets
):  # pragma: no cover - compiled
    n = offsets.size - 1
    out_d = np.empty(new_offsets[n])
    out_i = np.empty(new_offsets[n], dtype=np.int64)
    for s in range(n):
        pos = new_offsets[s]
        stop = new_offsets[s + 1]
        for e in range(offsets[s], offsets[s + 1]):
            j = indices[e]
            for m in range(member_offsets[j], member_offsets[j + 1]):
                if pos == stop:
                    break
                out_d[pos] = distances[e]
                out_i[pos] = members[m]
                pos += 1
            if pos == stop:
                break
    return out_d, out_i


def expand_lists(
    offsets: IntArray,
    distances: FloatArray,
    indices: IntArray,
    inverse: IntArray,
    *,
    cap: int,
) -> tuple[IntArray, FloatArray, IntArray]:
    """Ranked lists over distinct pool rows → ranked lists over every pool row.

    ``indices`` are distinct pool rows; ``inverse[p]`` is pool row ``p``'s distinct row.
    Each entry becomes its pool rows (ascending, all at the entry's distance); a list
    stops after ``cap`` entries. The cut can fall inside a distance level: then the
    list ends at that level's distance, so :func:`compare_sides` never decides from it
    (the row reads as unresolved and is searched directly).
    """
    inverse = np.asarray(inverse, dtype=np.int64)
    members = np.argsort(inverse, kind="stable").astype(np.int64)
    counts = np.bincount(inverse, minlength=int(indices.max(initial=-1)) + 1)
    member_offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
    lengths = _expanded_lengths(offsets, indices, member_offsets, cap)
    new_offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    out_d, out_i = _expand(
        offsets, distances, indices, member_offsets, members, new_offsets
    )
    return new_offsets, out_d, out_i


def tie_sets(
    offsets: IntArray, distances: FloatArray, indices: IntArray
) -> tuple[IntArray, IntArray]:
    """CSR of every row's pool entries at its smallest distance (the list must hold them all)."""
    n = offsets.size - 1
    first = distances[offsets[:-1]]
    row_of_entry = np.repeat(np.arange(n), np.diff(offsets))
    at_min = distances == first[row_of_entry]
    counts = np.bincount(row_of_entry[at_min], minlength=n)
    tie_offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
    return tie_offsets, np.ascontiguousarray(indices[at_min], dtype=np.int64)


@numba.njit(nogil=True, cache=True)
def _seed(seed):  # pragma: no cover - compiled
    np.random.seed(seed)  # noqa: NPY002 - numba's generator, seeded per call


@numba.njit(nogil=True, cache=True)
def _permutation_shares(
    tie_offsets,
    tie_local,
    weights,
    n_unique,
    n_real,
    n_pool,
    n_permutations,
    real_weight,
):  # pragma: no cover - compiled
    n = tie_offsets.size - 1
    total = 0.0
    for s in range(n):
        total += weights[s]
    half = np.empty(n_permutations)
    weighted = np.empty(n_permutations)
    labels = np.empty(n_unique, dtype=np.bool_)
    for b in range(n_permutations):
        # labels of the pool rows that occur in some tie set, drawn without replacement
        # from an urn of n_real real and n_pool - n_real holdout labels
        left_real = n_real
        left = n_pool
        for u in range(n_unique):
            is_real = np.random.random() * left < left_real  # noqa: NPY002
            labels[u] = is_real
            if is_real:
                left_real -= 1
            left -= 1
        closer = 0.0
        ties = 0.0
        for s in range(n):
            any_real = False
            any_holdout = False
            for e in range(tie_offsets[s], tie_offsets[s + 1]):
                if labels[tie_local[e]]:
                    any_real = True
                else:
                    any_holdout = True
                if any_real and any_holdout:
                    break
            if any_real and any_holdout:
                ties += weights[s]
            elif any_real:
                closer += weights[s]
        half[b] = (closer + 0.5 * ties) / total
        weighted[b] = (closer + real_weight * ties) / total
    return half, weighted


def permutation_shares(
    tie_offsets: IntArray,
    tie_indices: IntArray,
    *,
    n_real: int,
    n_pool: int,
    n_permutations: int,
    seed: int,
    weights: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Shares under random relabellings of the pool (real and holdout sizes kept).

    ``weights`` (one per tie set, default 1) counts identical synthetic rows once each.

    Returns
    -------
    half : ndarray of shape (n_permutations,)
        Share with ties counted 1/2.
    weighted : ndarray of shape (n_permutations,)
        Share with ties weighted by ``n_real / n_pool`` (APT's rule).
    """
    unique, local = np.unique(tie_indices, return_inverse=True)
    n_sets = tie_offsets.size - 1
    w = np.ones(n_sets) if weights is None else np.asarray(weights, dtype=np.float64)
    _seed(seed)
    return _permutation_shares(
        tie_offsets,
        local.astype(np.int64),
        w,
        unique.size,
        n_real,
        n_pool,
        n_permutations,
        n_real / n_pool,
    )
