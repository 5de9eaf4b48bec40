# SPDX-License-Identifier: BSD-3-Clause
"""CAP kernels: correct attribution probabilities of every real row, linear-time.

Key and sensitive tuples are factorised into integer ids and counted with hash tables
(``O(n_real + n_synthetic)``); generalized CAP searches only the *distinct* unmatched
real keys against the *distinct* synthetic keys: level by level with hashed column
masks (exact: a key at Hamming distance ``d`` agrees with the real key on exactly one
projection that leaves ``d`` columns out) while that is cheap, then with a multi-core
numba scan (a blocked numpy version is the test oracle).
"""

from __future__ import annotations

import itertools
import math
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd

from synthrisk._typing import FloatArray, IntArray
from synthrisk._validation import check_option
from synthrisk.neighbors import rows_per_block
from synthrisk.schema.keys import tuple_ids
from synthrisk.settings import get_config
from synthrisk.stats.bootstrap import N_RESAMPLES

__all__ = [
    "CapMethod",
    "NearestSearch",
    "bootstrap_cap",
    "cap_probabilities",
    "cap_protection",
    "generalized_cap_counts",
]

CapMethod = Literal["cap", "zero_cap", "generalized_cap"]
NearestSearch = Literal["auto", "masks", "scan"]

# below this many Hamming comparisons the blocked numpy scan is fast enough that loading
# numba (about a second in a fresh process) would not pay off
_NUMBA_MIN_WORK = 10_000_000
# a hashed column-mask pass costs about this many key comparisons of the scan, per row
_MASK_COST = 10


class _KeyIndex(NamedTuple):
    """The distinct synthetic keys, their row counts and the sensitive ids under each.

    The fields are :func:`generalized_cap_counts`' arguments ``synthetic_keys`` to
    ``csr_count``, in that order.

    Attributes
    ----------
    keys : ndarray of shape (u, n_known)
        Distinct synthetic key tuples (codes).
    rows : ndarray of shape (u,)
        Synthetic rows per distinct key.
    ptr, sens, sens_rows : ndarray
        Sensitive ids (sorted) and their row counts under each key, in CSR form
        (``ptr`` of shape (u + 1,)).
    """

    keys: IntArray
    rows: IntArray
    ptr: IntArray
    sens: IntArray
    sens_rows: IntArray


def cap_probabilities(
    real_keys: IntArray,
    real_sensitive: IntArray,
    synthetic_keys: IntArray,
    synthetic_sensitive: IntArray,
    *,
    method: CapMethod = "cap",
    backend: str | None = None,
    working_memory: float | None = None,
    search: NearestSearch = "auto",
) -> FloatArray:
    """Probability the CAP attacker gives each real row's true sensitive values.

    Parameters
    ----------
    real_keys : ndarray of shape (n_real, n_known)
        Codes of the known columns (non-negative int64, shared with ``synthetic_keys``).
    real_sensitive : ndarray of shape (n_real, n_sensitive)
        Codes of the sensitive columns (shared with ``synthetic_sensitive``).
    synthetic_keys : ndarray of shape (n_synthetic, n_known)
    synthetic_sensitive : ndarray of shape (n_synthetic, n_sensitive)
    method : {"cap", "zero_cap", "generalized_cap"}, default="cap"
        What happens to a real row whose known values occur in no synthetic row:
        NaN (skipped), 0, or the pooled synthetic rows of the nearest keys in Hamming
        distance (every key at the minimum distance, weighted by row count).
    backend : {"auto", "numpy", "numba"}, default=None
        Hamming search of ``generalized_cap``; None takes the global default.
    working_memory : float, default=None
        MiB budget of the numpy search's blocks.
    search : {"auto", "masks", "scan"}, default="auto"
        How ``generalized_cap`` finds the nearest keys: ``"masks"`` hashes the keys with
        every set of ``d`` columns left out, for ``d = 1, 2, ...`` (a key at distance
        exactly ``d`` agrees with the real key on exactly one such projection, so the
        pooled counts are sums of hash lookups); ``"scan"`` compares every distinct
        unmatched real key with every distinct synthetic key; ``"auto"`` uses masks
        while they are cheaper than the scan of the keys still unresolved. All three
        give identical results.

    Returns
    -------
    ndarray of shape (n_real,)
        ``P(true sensitive tuple | known values)`` under the synthetic table; NaN for
        rows that ``cap`` skips.

    Examples
    --------
    >>> import numpy as np
    >>> real_keys = np.array([[0, 0]])                      # (a, b)
    >>> syn_keys = np.array([[0, 1], [2, 0], [2, 0], [2, 0]])  # (a, q), (z, b) x 3
    >>> real_sens, syn_sens = np.array([[0]]), np.array([[0], [1], [1], [1]])  # x; x, y, y, y
    >>> cap_probabilities(real_keys, real_sens, syn_keys, syn_sens, method="generalized_cap")
    array([0.25])
    """
    rk, sk, n_keys = tuple_ids(real_keys, synthetic_keys)
    rs, ss, n_sens = tuple_ids(real_sensitive, synthetic_sensitive)
    key_count = np.bincount(sk, minlength=n_keys)
    pair_count = _pair_counts(rk, rs, sk, ss, n_sens)
    real_key_count = key_count[rk]
    matched = real_key_count > 0
    p = np.full(rk.shape[0], np.nan)
    p[matched] = pair_count[matched] / real_key_count[matched]
    if method == "zero_cap":
        p[~matched] = 0.0
    elif method == "generalized_cap" and not matched.all():
        p[~matched] = _generalized_probabilities(
            real_keys[~matched],
            rk[~matched],
            rs[~matched],
            synthetic_keys,
            sk,
            ss,
            key_count,
            n_sens,
            backend=backend,
            working_memory=working_memory,
            search=search,
        )
    return p


def cap_protection(probabilities: FloatArray) -> float:
    """``1 - mean`` of the probabilities of the scored rows (NaN rows skipped).

    The sum runs left to right (as SDMetrics' loop does), so the result is bit-for-bit
    SDMetrics' number for the same rows in the same order. NaN when no row is scored.
    """
    scored = probabilities[~np.isnan(probabilities)]
    if scored.size == 0:
        return float("nan")
    total = float(np.cumsum(scored)[-1])
    return 1.0 - total / scored.size


def bootstrap_cap(
    p: FloatArray, rng: np.random.Generator, n_boot: int = N_RESAMPLES
) -> FloatArray:
    """``cap_protection`` of ``n_boot`` bootstrap resamples of the real rows.

    Resampling rows with replacement only changes how often each distinct probability
    value is drawn, so the resamples are drawn as multinomial counts over those values
    (the same distribution, in time independent of the number of rows).
    """
    n = p.shape[0]
    if n < 2:
        return np.full(0, np.nan)
    values, counts = np.unique(np.where(np.isnan(p), -1.0, p), return_counts=True)
    draws = rng.multinomial(n, counts / n, size=n_boot).astype(np.float64)
    scored = values >= 0
    n_scored = draws[:, scored].sum(axis=1)
    total = draws[:, scored] @ values[scored]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_scored > 0, 1.0 - total / n_scored, np.nan)


def _pair_counts(
    rk: IntArray, rs: IntArray, sk: IntArray, ss: IntArray, n_sens: int
) -> IntArray:
    """For every real row: synthetic rows with the same key *and* sensitive tuple."""
    stacked = np.concatenate([sk * n_sens + ss, rk * n_sens + rs])
    codes, uniques = pd.factorize(stacked)
    counts = np.bincount(codes[: sk.shape[0]], minlength=len(uniques))
    return counts[codes[sk.shape[0] :]]


def _generalized_probabilities(
    real_keys: IntArray,
    rk: IntArray,
    rs: IntArray,
    synthetic_keys: IntArray,
    sk: IntArray,
    ss: IntArray,
    key_count: IntArray,
    n_sens: int,
    *,
    backend: str | None,
    working_memory: float | None,
    search: NearestSearch,
) -> FloatArray:
    """Generalized CAP for real rows without an exact key match (pooled nearest keys)."""
    # distinct synthetic keys, and their (sensitive id, count) lists in CSR form
    uniq_sk, first = np.unique(sk, return_index=True)
    su = np.ascontiguousarray(synthetic_keys[first], dtype=np.int64)
    su_count = key_count[uniq_sk].astype(np.int64)
    local = np.empty(key_count.shape[0], dtype=np.int64)
    local[uniq_sk] = np.arange(uniq_sk.shape[0])
    pairs, pair_count = np.unique(local[sk] * n_sens + ss, return_counts=True)
    csr_sens = (pairs % n_sens).astype(np.int64)
    csr_ptr = _offsets(pairs // n_sens, uniq_sk.shape[0])
    # distinct unmatched real keys, and the sensitive ids asked for under each of them
    _, first_r, inv_r = np.unique(rk, return_index=True, return_inverse=True)
    ru = np.ascontiguousarray(real_keys[first_r], dtype=np.int64)
    queries, q_inv = np.unique(inv_r * n_sens + rs, return_inverse=True)
    q_sens = (queries % n_sens).astype(np.int64)
    q_ptr = _offsets(queries // n_sens, ru.shape[0])
    index = _KeyIndex(su, su_count, csr_ptr, csr_sens, pair_count.astype(np.int64))
    numerator, denominator = _nearest_key_counts(
        ru,
        index,
        q_ptr,
        q_sens,
        n_sens,
        search=search,
        backend=backend,
        working_memory=working_memory,
    )
    return numerator[q_inv.ravel()] / denominator[inv_r.ravel()]


def _nearest_key_counts(
    real_keys: IntArray,
    index: _KeyIndex,
    q_ptr: IntArray,
    q_sens: IntArray,
    n_sens: int,
    *,
    search: NearestSearch,
    backend: str | None,
    working_memory: float | None,
) -> tuple[FloatArray, FloatArray]:
    """:func:`generalized_cap_counts` by column masks where cheap, by a scan for the rest."""
    m, k = real_keys.shape
    u = index.keys.shape[0]
    numerator, denominator = np.zeros(q_sens.shape[0]), np.zeros(m)
    q_key = np.repeat(np.arange(m), np.diff(q_ptr))
    pair_key = np.repeat(np.arange(u), np.diff(index.ptr))
    remaining = np.arange(m)
    for d in range(1, k + 1):
        if search == "scan" or remaining.size == 0:
            break
        work = math.comb(k, d) * (u + index.sens.shape[0] + remaining.size) * _MASK_COST
        if search == "auto" and work >= remaining.size * u:
            break
        q_index, q_local = _queries_of(remaining, q_key, m)
        num_d, den_d = _mask_level(
            real_keys[remaining], index, pair_key, q_local, q_sens[q_index], n_sens, d
        )
        hit = den_d > 0
        denominator[remaining[hit]] = den_d[hit]
        q_hit = hit[q_local]
        numerator[q_index[q_hit]] = num_d[q_hit]
        remaining = remaining[~hit]
    if remaining.size:
        q_index, q_local = _queries_of(remaining, q_key, m)
        num_r, den_r = generalized_cap_counts(
            np.ascontiguousarray(real_keys[remaining]),
            *index,
            _offsets(q_local, remaining.size),
            q_sens[q_index],
            n_sens,
            backend=backend,
            working_memory=working_memory,
        )
        denominator[remaining] = den_r
        numerator[q_index] = num_r
    return numerator, denominator


def _queries_of(keys: IntArray, q_key: IntArray, m: int) -> tuple[IntArray, IntArray]:
    """Positions of the queries of ``keys`` (sorted), and their key's position in ``keys``."""
    local = np.full(m, -1, dtype=np.int64)
    local[keys] = np.arange(keys.shape[0])
    q_index = np.flatnonzero(local[q_key] >= 0)
    return q_index, local[q_key[q_index]]


def _mask_level(
    real_keys: IntArray,
    index: _KeyIndex,
    pair_key: IntArray,
    q_key: IntArray,
    q_sens: IntArray,
    n_sens: int,
    d: int,
) -> tuple[FloatArray, FloatArray]:
    """Pooled counts of the synthetic keys at Hamming distance exactly ``d``.

    For real keys with no synthetic key closer than ``d``: a synthetic key differing in
    exactly the columns ``D`` (``|D| = d``) agrees with the real key on the other
    columns, and on no projection that leaves out another set of ``d`` columns, so the
    sums over all ``C(k, d)`` projections count every key at distance ``d`` once.
    ``pair_key`` is the key of each entry of ``index.sens``.
    """
    r, k = real_keys.shape
    u = index.keys.shape[0]
    numerator, denominator = np.zeros(q_key.shape[0]), np.zeros(r)
    weights, pair_weights = (
        index.rows.astype(np.float64),
        index.sens_rows.astype(np.float64),
    )
    for left_out in itertools.combinations(range(k), d):
        kept = [c for c in range(k) if c not in left_out]
        if kept:
            r_ids, s_ids, n_ids = tuple_ids(real_keys[:, kept], index.keys[:, kept])
        else:  # every column left out: every synthetic key is at distance k
            r_ids, s_ids, n_ids = np.zeros(r, np.int64), np.zeros(u, np.int64), 1
        denominator += np.bincount(s_ids, weights=weights, minlength=n_ids)[r_ids]
        syn_pairs = s_ids[pair_key] * n_sens + index.sens
        codes, uniques = pd.factorize(
            np.concatenate([syn_pairs, r_ids[q_key] * n_sens + q_sens])
        )
        sums = np.bincount(
            codes[: syn_pairs.shape[0]], weights=pair_weights, minlength=len(uniques)
        )
        numerator += sums[codes[syn_pairs.shape[0] :]]
    return numerator, denominator


def _offsets(group: IntArray, n_groups: int) -> IntArray:
    out = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(group, minlength=n_groups), out=out[1:])
    return out


def generalized_cap_counts(
    real_keys: IntArray,
    synthetic_keys: IntArray,
    synthetic_count: IntArray,
    csr_ptr: IntArray,
    csr_sens: IntArray,
    csr_count: IntArray,
    q_ptr: IntArray,
    q_sens: IntArray,
    n_sens: int,
    *,
    backend: str | None = None,
    working_memory: float | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Pooled vote counts at the minimum Hamming distance, per distinct real key.

    Parameters
    ----------
    real_keys : ndarray of shape (m, n_known)
        Distinct real key tuples (codes).
    synthetic_keys : ndarray of shape (u, n_known)
        Distinct synthetic key tuples.
    synthetic_count : ndarray of shape (u,)
        Synthetic rows per distinct key.
    csr_ptr, csr_sens, csr_count : ndarray
        Sensitive ids (sorted) and their row counts under each synthetic key, in CSR form
        (``csr_ptr`` of shape (u + 1,)).
    q_ptr, q_sens : ndarray
        The sensitive ids asked for under each real key, in CSR form (``q_ptr`` of
        shape (m + 1,)).
    n_sens : int
        Number of distinct sensitive ids.
    backend : {"auto", "numpy", "numba"}, default=None
    working_memory : float, default=None

    Returns
    -------
    numerator : ndarray of shape (len(q_sens),)
        Pooled synthetic rows with each asked sensitive id.
    denominator : ndarray of shape (m,)
        Pooled synthetic rows of each real key (all keys at the minimum distance).
    """
    name = get_config().backend if backend is None else backend
    check_option(name, name="backend", allowed=("auto", "numpy", "numba", "dask"))
    if name == "dask":  # distinct keys only: small enough for this process
        name = "numba"
    m, k = real_keys.shape
    if name == "auto":
        name = (
            "numba"
            if m * synthetic_keys.shape[0] * max(k, 1) >= _NUMBA_MIN_WORK
            else "numpy"
        )
    index = _KeyIndex(synthetic_keys, synthetic_count, csr_ptr, csr_sens, csr_count)
    if name == "numba":
        from synthrisk.metrics.disclosure._numba import generalized_cap_kernel

        numerator = np.zeros(q_sens.shape[0], dtype=np.int64)
        denominator = np.zeros(m, dtype=np.int64)
        generalized_cap_kernel(real_keys, *index, q_ptr, q_sens, numerator, denominator)
        return numerator.astype(np.float64), denominator.astype(np.float64)
    return _generalized_counts_numpy(
        real_keys, index, q_ptr, q_sens, n_sens, working_memory=working_memory
    )


def _generalized_counts_numpy(
    real_keys: IntArray,
    index: _KeyIndex,
    q_ptr: IntArray,
    q_sens: IntArray,
    n_sens: int,
    *,
    working_memory: float | None,
) -> tuple[FloatArray, FloatArray]:
    """Blocked numpy version of :func:`generalized_cap_counts` (the test oracle)."""
    m, k = real_keys.shape
    synthetic_keys = index.keys
    u = synthetic_keys.shape[0]
    # (synthetic key, sensitive id, count) triples grouped by sensitive id
    pair_key = np.repeat(np.arange(u), np.diff(index.ptr))
    order = np.argsort(index.sens, kind="stable")
    sens_sorted = index.sens[order]
    key_sorted = pair_key[order]
    count_sorted = index.sens_rows[order].astype(np.float64)
    starts = np.flatnonzero(np.r_[True, sens_sorted[1:] != sens_sorted[:-1]])
    column_of = np.full(n_sens, -1, dtype=np.int64)
    column_of[sens_sorted[starts]] = np.arange(starts.shape[0])
    counts = index.rows.astype(np.float64)
    numerator = np.zeros(q_sens.shape[0])
    denominator = np.zeros(m)
    row_bytes = 13 * u + 16 * sens_sorted.shape[0]
    rows = rows_per_block(row_bytes, working_memory=working_memory, n_rows=m)
    for start in range(0, m, rows):
        stop = min(start + rows, m)
        dist = np.zeros((stop - start, u), dtype=np.int32)
        for c in range(k):
            dist += real_keys[start:stop, c, None] != synthetic_keys[None, :, c]
        pooled = (dist == dist.min(axis=1, keepdims=True)).astype(np.float64)
        denominator[start:stop] = pooled @ counts
        # pooled rows per sensitive id: (block, distinct sensitive ids present)
        votes = np.add.reduceat(pooled[:, key_sorted] * count_sorted, starts, axis=1)
        q0, q1 = q_ptr[start], q_ptr[stop]
        q_local = np.repeat(np.arange(stop - start), np.diff(q_ptr[start : stop + 1]))
        column = column_of[q_sens[q0:q1]]
        numerator[q0:q1] = np.where(
            column >= 0, votes[q_local, np.maximum(column, 0)], 0.0
        )
    return numerator, denominator
