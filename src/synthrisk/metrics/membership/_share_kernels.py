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


@numba.njit(parallel=True, nogil=True, cache=True)
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
    for s in numba.prange(n):  # rows are independent: any number of threads
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


@numba.njit(nogil=True, cache=True)
def _tie_sets(offsets, distances, indices):  # pragma: no cover - compiled
    n = offsets.size - 1
    tie_offsets = np.zeros(n + 1, dtype=np.int64)
    for s in range(n):
        count = 0
        for e in range(offsets[s], offsets[s + 1]):
            count += distances[e] == distances[offsets[s]]
        tie_offsets[s + 1] = tie_offsets[s] + count
    tie_indices = np.empty(tie_offsets[n], dtype=indices.dtype)
    for s in range(n):
        at = tie_offsets[s]
        for e in range(offsets[s], offsets[s + 1]):
            if distances[e] == distances[offsets[s]]:
                tie_indices[at] = indices[e]
                at += 1
    return tie_offsets, tie_indices


def tie_sets(
    offsets: IntArray, distances: FloatArray, indices: IntArray
) -> tuple[IntArray, IntArray]:
    """CSR of every row's pool entries at its smallest distance (the list must hold them all).

    The positions keep the lists' integer type (4 bytes when the pool allows).
    """
    indices = np.asarray(indices)
    if indices.dtype not in (np.int32, np.int64):
        indices = indices.astype(np.int64)
    return _tie_sets(
        np.asarray(offsets, dtype=np.int64),
        np.asarray(distances, dtype=np.float64),
        indices,
    )


#: the Mersenne Twister (MT19937): state words and the shift of its recurrence
_MT_N = 624
_MT_M = 397


@numba.njit(nogil=True, cache=True)
def _mt_seed(seed):  # pragma: no cover - compiled
    """MT19937 state for a 32-bit ``seed`` (``init_genrand``, as numba and numpy seed it)."""
    mt = np.empty(_MT_N, dtype=np.int64)
    mt[0] = seed & 0xFFFFFFFF
    for i in range(1, _MT_N):
        prev = mt[i - 1]
        mt[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
    return mt.astype(np.uint32)


@numba.njit(nogil=True, cache=True, inline="always")
def _mt_step(mt, first, shifted, n):  # pragma: no cover - compiled
    """Words ``first .. first + n`` of the next state, from word ``shifted`` on."""
    upper = np.uint32(0x80000000)
    lower = np.uint32(0x7FFFFFFF)
    matrix = np.uint32(0x9908B0DF)
    one = np.uint32(1)
    for j in range(n):
        y = (mt[first + j] & upper) | (mt[first + j + 1] & lower)
        odd = np.uint32(0) - (y & one)  # all ones where y is odd
        mt[first + j] = mt[shifted + j] ^ (y >> one) ^ (odd & matrix)


@numba.njit(nogil=True, cache=True)
def _mt_twist(mt):  # pragma: no cover - compiled
    """The next 624 state words, in place (the recurrence in three stretches without
    overlap between the words read and written, which vectorise)."""
    n, m = _MT_N, _MT_M
    _mt_step(mt, 0, m, n - m)  # reads words m.. (not yet rewritten)
    _mt_step(mt, n - m, 0, n - m)  # reads words 0..n-m (rewritten just above)
    _mt_step(mt, 2 * (n - m), n - m, m - (n - m) - 1)
    y = (mt[n - 1] & np.uint32(0x80000000)) | (mt[0] & np.uint32(0x7FFFFFFF))
    odd = np.uint32(0) - (y & np.uint32(1))
    mt[n - 1] = mt[m - 1] ^ (y >> np.uint32(1)) ^ (odd & np.uint32(0x9908B0DF))


@numba.njit(nogil=True, cache=True, inline="always")
def _mt_temper(y):  # pragma: no cover - compiled
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y


@numba.njit(nogil=True, cache=True, inline="always")
def _mt_refill(mt, doubles):  # pragma: no cover - compiled
    """The 312 doubles of the next twist of the state, 53 bits from two words each."""
    for h in range(_MT_N // 2):
        high = _mt_temper(mt[2 * h]) >> np.uint32(5)
        low = _mt_temper(mt[2 * h + 1]) >> np.uint32(6)
        # (high * 2**26 + low) / 2**53: multiplying by a power of two is exact
        doubles[h] = (np.float64(high) * 67108864.0 + np.float64(low)) * (
            1.0 / 9007199254740992.0
        )


@numba.njit(nogil=True, cache=True)
def _mt_fill(mt, doubles, at, out):  # pragma: no cover - compiled
    """The generator's next ``out.size`` doubles in [0, 1), 53 bits from two words each.

    ``doubles`` holds the 312 doubles of the last twist and ``at[0]`` the next
    unused one (312: twist first); the same stream as ``np.random.random()`` in
    numba and ``random_sample`` of numpy's ``RandomState``, seeded alike.
    """
    flat = out.reshape(-1)
    n = flat.size
    half = _MT_N // 2
    pos = 0
    i = at[0]
    while pos < n:
        if i == half:
            _mt_twist(mt)
            _mt_refill(mt, doubles)
            i = 0
        stop = min(n, pos + half - i)
        flat[pos:stop] = doubles[i : i + stop - pos]
        i += stop - pos
        pos = stop
    at[0] = i


@numba.njit(nogil=True, cache=True)
def _mt_labels(
    mt, doubles, at, n_real, n_pool, words, n_batch
):  # pragma: no cover - compiled
    """The labels of the next ``n_batch`` relabellings, drawn from the generator.

    Relabelling ``r`` draws one uniform number per pool row ``u`` that occurs in a tie
    set, in order (the generator's stream as :func:`_mt_fill` gives it), and labels
    the row real when ``draw * left < left_real``: drawn without replacement from an
    urn of ``n_real`` real and ``n_pool - n_real`` holdout labels. Bit ``r % 64`` of
    ``words[r // 64, u]`` is set where the row is real: each draw is kept as one bit.
    """
    n_unique = words.shape[1]
    half = _MT_N // 2
    i = at[0]
    for r in range(n_batch):
        shift = np.uint64(r % 64)
        labels = words[r // 64]
        if shift == 0:
            labels[:] = 0
        left_real = n_real
        left = n_pool
        u = 0
        while u < n_unique:
            if i == half:
                _mt_twist(mt)
                _mt_refill(mt, doubles)
                i = 0
            stop = min(n_unique, u + half - i)
            for v in range(u, stop):
                # draw * left < left_real  <=>  floor(draw * left) < left_real, for
                # an integer left_real: the product is off the chain of labels
                is_real = np.int64(doubles[i + v - u] * left) < left_real
                labels[v] |= np.uint64(is_real) << shift
                left_real -= is_real
                left -= 1
            i += stop - u
            u = stop
    at[0] = i


@numba.njit(parallel=True, nogil=True, cache=True)
def _relabel(
    words,
    n_batch,
    tie_offsets,
    tie_local,
    weights,
    real_weight,
    total,
    half,
    weighted,
):  # pragma: no cover - compiled
    """Shares under the relabellings drawn by :func:`_mt_labels` (any weights).

    The tie sets are summed one by one, in order.
    """
    n_sets = tie_offsets.size - 1
    for r in numba.prange(n_batch):
        labels = words[r // 64]
        shift = np.uint64(r % 64)
        closer = 0.0
        ties = 0.0
        for s in range(n_sets):
            any_real = False
            any_holdout = False
            for e in range(tie_offsets[s], tie_offsets[s + 1]):
                if (labels[tie_local[e]] >> shift) & np.uint64(1):
                    any_real = True
                else:
                    any_holdout = True
                if any_real and any_holdout:
                    break
            if any_real and any_holdout:
                ties += weights[s]
            elif any_real:
                closer += weights[s]
        half[r] = (closer + 0.5 * ties) / total
        weighted[r] = (closer + real_weight * ties) / total


@numba.njit(parallel=True, nogil=True, cache=True)
def _relabel_packed(
    words, n_batch, tie_offsets, tie_local, weights, sets, lone_rows, lone, out
):  # pragma: no cover - compiled
    """:func:`_relabel` for integer weights, 64 relabellings at a time.

    Bit ``b`` of ``words[block, u]`` is pool row ``u``'s label in relabelling ``b`` of
    the block; a tie set is all real where the AND of its rows' words has bit ``b``,
    all holdout where their OR lacks it. ``sets`` are the tie sets of several rows;
    the others, each the single pool row ``lone_rows[j]``, add their summed weight
    ``lone[j]`` with that row's label. ``out[:, 0]``, ``out[:, 1]``: the summed
    weights closer to real and tied, exact integers.
    """
    n_blocks = (n_batch + 63) // 64
    for block in numba.prange(n_blocks):
        first = block * 64
        width = min(64, n_batch - first)
        full = np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - width)
        labels = words[block]
        lone_real = np.zeros(64, dtype=np.int64)
        for j in range(lone_rows.size):
            word = labels[lone_rows[j]]
            weight = lone[j]
            for b in range(64):
                lone_real[b] += weight * np.int64((word >> np.uint64(b)) & np.uint64(1))
        closer = lone_real[:width].copy()
        held = np.zeros(width, dtype=np.int64)
        multi = 0
        for s in sets:
            every = full
            some = np.uint64(0)
            for e in range(tie_offsets[s], tie_offsets[s + 1]):
                word = labels[tie_local[e]]
                every &= word
                some |= word
                if every == 0 and some == full:
                    break  # mixed in every relabelling of the block: a tie
            weight = np.int64(weights[s])
            multi += weight
            if every != 0:
                for b in range(width):
                    if (every >> np.uint64(b)) & np.uint64(1):
                        closer[b] += weight
            none = full & ~some
            if none != 0:
                for b in range(width):
                    if (none >> np.uint64(b)) & np.uint64(1):
                        held[b] += weight
        for b in range(width):
            out[first + b, 0] = closer[b]
            out[first + b, 1] = multi - (closer[b] - lone_real[b]) - held[b]


@numba.njit(nogil=True, cache=True)
def _lone_weights(tie_offsets, tie_local, weights, lone):  # pragma: no cover - compiled
    """Add the (integer) weight of every tie set of a single pool row to that row."""
    for s in range(tie_offsets.size - 1):
        if tie_offsets[s + 1] - tie_offsets[s] == 1:
            lone[tie_local[tie_offsets[s]]] += np.int64(weights[s])


@numba.njit(nogil=True, cache=True)
def _sum_in_order(values):  # pragma: no cover - compiled
    """``values`` summed one after another, in order (not pairwise)."""
    total = 0.0
    for value in values:
        total += value
    return total


#: uniform draws of one batch of relabellings (each kept as one bit: 4 MiB)
_MAX_DRAWS = 2**25


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

    Each relabelling draws one uniform number per pool row that occurs in a tie set,
    in order, from the Mersenne Twister seeded with ``seed`` (numba's and numpy's
    legacy generator: these are the draws of the one-thread loop this replaced).
    The draws are made in batches by one thread, each kept as the one bit of the
    label it gives, then the relabellings of a batch are scored on every core, so
    the numbers do not depend on the number of threads. With integer weights
    (counts) the tie sets of a single pool row are added with that row's label:
    integer sums are exact in any order.

    Returns
    -------
    half : ndarray of shape (n_permutations,)
        Share with ties counted 1/2.
    weighted : ndarray of shape (n_permutations,)
        Share with ties weighted by ``n_real / n_pool`` (APT's rule).
    """
    # np.unique(tie_indices, return_inverse=True), by marking the pool positions
    present = np.zeros(n_pool, dtype=bool)
    present[tie_indices] = True
    n_unique = int(np.count_nonzero(present))
    rank = np.cumsum(present, dtype=np.int32 if n_pool < 2**31 else np.int64)
    del present
    rank -= 1
    local = rank[tie_indices]  # 4-byte positions among the rows drawn, when they fit
    del rank
    n_sets = tie_offsets.size - 1
    half = np.empty(n_permutations)
    weighted = np.empty(n_permutations)
    if weights is None:  # one each: integer weights, summed exactly
        w = np.ones(n_sets)
        total = float(n_sets)
        packed = n_sets < 2**52
    else:
        w = np.asarray(weights, dtype=np.float64)
        total = float(
            _sum_in_order(w)
        )  # summed in set order, as the shares always were
        packed = bool(np.all(w == np.round(w))) and float(np.abs(w).sum()) < 2.0**52
    if packed:
        lone = np.zeros(n_unique, dtype=np.int64)
        _lone_weights(tie_offsets, local, w, lone)
        lone_rows = np.flatnonzero(lone)
        lone = lone[lone_rows]
        sets = np.flatnonzero(np.diff(tie_offsets) != 1).astype(np.int64)
        sums = np.empty((n_permutations, 2), dtype=np.int64)
    batch = max(64, _MAX_DRAWS // max(n_unique, 1)) // 64 * 64
    batch = min(batch, n_permutations)
    words = np.empty((-(-batch // 64), n_unique), dtype=np.uint64)
    state = (_mt_seed(seed), np.empty(_MT_N // 2), np.array([_MT_N // 2]))
    for start in range(0, n_permutations, batch):
        stop = min(start + batch, n_permutations)
        _mt_labels(*state, int(n_real), int(n_pool), words, stop - start)
        if packed:
            _relabel_packed(
                words,
                stop - start,
                tie_offsets,
                local,
                w,
                sets,
                lone_rows,
                lone,
                sums[start:stop],
            )
        else:
            _relabel(
                words,
                stop - start,
                tie_offsets,
                local,
                w,
                n_real / n_pool,
                total,
                half[start:stop],
                weighted[start:stop],
            )
    if packed:
        # integers below 2**53: the same floating-point numbers as summing in order
        closer, ties = sums[:, 0].astype(np.float64), sums[:, 1].astype(np.float64)
        half[:] = (closer + 0.5 * ties) / total
        weighted[:] = (closer + (n_real / n_pool) * ties) / total
    return half, weighted
