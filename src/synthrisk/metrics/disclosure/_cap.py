# SPDX-License-Identifier: BSD-3-Clause
"""Disclosure protection: SDMetrics' DisclosureProtection, its Estimate and the CAP family.

The attacker knows a few columns of a real person (the *known* or *key* columns, e.g.
age bracket and sex), looks them up in the synthetic table and lets the synthetic rows
that share those values vote for the person's *sensitive* values (e.g. income). The
correct attribution probability (CAP) of a real row is the share of votes for its true
sensitive values; ``cap_protection = 1 - mean CAP`` over the real rows. SDMetrics 0.32
semantics, exactly:

* ``cap``: a real row whose known values occur in no synthetic row is skipped;
* ``zero_cap``: such a row counts with probability 0;
* ``generalized_cap``: such a row pools the synthetic rows of *every* distinct synthetic
  key at the minimum Hamming distance (ties kept, weighted by row count).

:class:`DisclosureProtection` first bins the continuous columns (equal-width bins on
the real data only, right-closed, outer edges open), turns missing values into one
category per column and divides by the random-guess baseline
``1 - 1 / prod(n_unique_real(sensitive))``: ``score = min(cap / baseline, 1)``.

The kernels are linear-time: key and sensitive tuples are factorised into integer ids
and counted with hash tables (``O(n_real + n_synthetic)``); generalized CAP searches
only the *distinct* unmatched real keys against the *distinct* synthetic keys: level by
level with hashed column masks (exact: a key at Hamming distance ``d`` agrees with the
real key on exactly one projection that leaves ``d`` columns out) while that is cheap,
then with a multi-core numba scan (a blocked numpy version is the test oracle). Every
real row's probability is kept on the result, with a bootstrap confidence interval over
real rows.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal, cast, get_args

import numpy as np
import pandas as pd

from synthrisk._typing import FloatArray, IntArray
from synthrisk._validation import check_columns, check_int, check_option
from synthrisk.config import get_config
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.neighbors._blocks import rows_per_block
from synthrisk.results import MetricResult, RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.holdout import mean_difference_test

__all__ = [
    "CategoricalCAP",
    "CategoricalGeneralizedCAP",
    "CategoricalZeroCAP",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "bin_edges",
    "cap_probabilities",
    "cap_protection",
    "default_cap_columns",
    "discretize",
    "tuple_ids",
]

CapMethod = Literal["cap", "zero_cap", "generalized_cap"]
NatBinning = Literal["missing", "sdmetrics"]
MissingRule = Literal["category", "never_equal"]
NearestSearch = Literal["auto", "masks", "scan"]

_N_BOOTSTRAP = 200
_MANY_VALUES = 20
_RISK_LEVELS = (0.5, 0.9)
# below this many Hamming comparisons the blocked numpy scan is fast enough that loading
# numba (about a second in a fresh process) would not pay off
_NUMBA_MIN_WORK = 10_000_000
# a hashed column-mask pass costs about this many key comparisons of the scan, per row
_MASK_COST = 10


# --------------------------------------------------------------------------- kernels


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
            real_keys[~matched], rk[~matched], rs[~matched], synthetic_keys, sk, ss, key_count, n_sens,
            backend=backend, working_memory=working_memory, search=search,
        )  # fmt: skip
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
    numerator, denominator = _nearest_key_counts(
        ru, su, su_count, csr_ptr, csr_sens, pair_count.astype(np.int64), q_ptr, q_sens, n_sens,
        search=search, backend=backend, working_memory=working_memory,
    )  # fmt: skip
    return numerator[q_inv.ravel()] / denominator[inv_r.ravel()]


def _nearest_key_counts(
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
    search: NearestSearch,
    backend: str | None,
    working_memory: float | None,
) -> tuple[FloatArray, FloatArray]:
    """:func:`generalized_cap_counts` by column masks where cheap, by a scan for the rest."""
    m, k = real_keys.shape
    u = synthetic_keys.shape[0]
    numerator, denominator = np.zeros(q_sens.shape[0]), np.zeros(m)
    q_key = np.repeat(np.arange(m), np.diff(q_ptr))
    pair_key = np.repeat(np.arange(u), np.diff(csr_ptr))
    remaining = np.arange(m)
    for d in range(1, k + 1):
        if search == "scan" or remaining.size == 0:
            break
        work = math.comb(k, d) * (u + csr_sens.shape[0] + remaining.size) * _MASK_COST
        if search == "auto" and work >= remaining.size * u:
            break
        q_index, q_local = _queries_of(remaining, q_key, m)
        num_d, den_d = _mask_level(
            real_keys[remaining], synthetic_keys, synthetic_count, pair_key, csr_sens, csr_count,
            q_local, q_sens[q_index], n_sens, d,
        )  # fmt: skip
        hit = den_d > 0
        denominator[remaining[hit]] = den_d[hit]
        q_hit = hit[q_local]
        numerator[q_index[q_hit]] = num_d[q_hit]
        remaining = remaining[~hit]
    if remaining.size:
        q_index, q_local = _queries_of(remaining, q_key, m)
        num_r, den_r = generalized_cap_counts(
            np.ascontiguousarray(real_keys[remaining]), synthetic_keys, synthetic_count, csr_ptr,
            csr_sens, csr_count, _offsets(q_local, remaining.size), q_sens[q_index], n_sens,
            backend=backend, working_memory=working_memory,
        )  # fmt: skip
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
    synthetic_keys: IntArray,
    synthetic_count: IntArray,
    pair_key: IntArray,
    pair_sens: IntArray,
    pair_count: IntArray,
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
    """
    r, k = real_keys.shape
    u = synthetic_keys.shape[0]
    numerator, denominator = np.zeros(q_key.shape[0]), np.zeros(r)
    weights, pair_weights = (
        synthetic_count.astype(np.float64),
        pair_count.astype(np.float64),
    )
    for left_out in itertools.combinations(range(k), d):
        kept = [c for c in range(k) if c not in left_out]
        if kept:
            r_ids, s_ids, n_ids = tuple_ids(real_keys[:, kept], synthetic_keys[:, kept])
        else:  # every column left out: every synthetic key is at distance k
            r_ids, s_ids, n_ids = np.zeros(r, np.int64), np.zeros(u, np.int64), 1
        denominator += np.bincount(s_ids, weights=weights, minlength=n_ids)[r_ids]
        syn_pairs = s_ids[pair_key] * n_sens + pair_sens
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
    check_option(name, name="backend", allowed=("auto", "numpy", "numba"))
    m, k = real_keys.shape
    if name == "auto":
        name = (
            "numba"
            if m * synthetic_keys.shape[0] * max(k, 1) >= _NUMBA_MIN_WORK
            else "numpy"
        )
    if name == "numba":
        from synthrisk.metrics.disclosure._numba import generalized_cap_kernel

        numerator = np.zeros(q_sens.shape[0], dtype=np.int64)
        denominator = np.zeros(m, dtype=np.int64)
        generalized_cap_kernel(
            real_keys, synthetic_keys, synthetic_count, csr_ptr, csr_sens, csr_count, q_ptr, q_sens,
            numerator, denominator,
        )  # fmt: skip
        return numerator.astype(np.float64), denominator.astype(np.float64)
    return _generalized_counts_numpy(
        real_keys, synthetic_keys, synthetic_count, csr_ptr, csr_sens, csr_count, q_ptr, q_sens, n_sens,
        working_memory=working_memory,
    )  # fmt: skip


def _generalized_counts_numpy(
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
    working_memory: float | None,
) -> tuple[FloatArray, FloatArray]:
    """Blocked numpy version of :func:`generalized_cap_counts` (the test oracle)."""
    m, k = real_keys.shape
    u = synthetic_keys.shape[0]
    # (synthetic key, sensitive id, count) triples grouped by sensitive id
    pair_key = np.repeat(np.arange(u), np.diff(csr_ptr))
    order = np.argsort(csr_sens, kind="stable")
    sens_sorted = csr_sens[order]
    key_sorted, count_sorted = pair_key[order], csr_count[order].astype(np.float64)
    starts = np.flatnonzero(np.r_[True, sens_sorted[1:] != sens_sorted[:-1]])
    column_of = np.full(n_sens, -1, dtype=np.int64)
    column_of[sens_sorted[starts]] = np.arange(starts.shape[0])
    counts = synthetic_count.astype(np.float64)
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


# ------------------------------------------------------------------ column encoding


@dataclasses.dataclass(frozen=True)
class AttackCodes:
    """Integer codes of the known and sensitive columns of both tables.

    Attributes
    ----------
    real_keys, synthetic_keys : ndarray of shape (n, n_known)
    real_sensitive, synthetic_sensitive : ndarray of shape (n, n_sensitive)
        Non-negative int64 codes shared between the two tables, column by column;
        missing values already turned into codes.
    baseline : float
        ``1 - 1 / prod(n distinct real values)`` over the sensitive columns.
    """

    real_keys: IntArray
    synthetic_keys: IntArray
    real_sensitive: IntArray
    synthetic_sensitive: IntArray
    baseline: float

    def probabilities(
        self,
        method: CapMethod,
        context: Context,
        real_rows: IntArray | None = None,
        synthetic_rows: IntArray | None = None,
    ) -> FloatArray:
        """:func:`cap_probabilities` on all rows or on the given row positions."""
        rk, rs = self.real_keys, self.real_sensitive
        sk, ss = self.synthetic_keys, self.synthetic_sensitive
        if real_rows is not None:
            rk, rs = rk[real_rows], rs[real_rows]
        if synthetic_rows is not None:
            sk, ss = sk[synthetic_rows], ss[synthetic_rows]
        return cap_probabilities(
            rk,
            rs,
            sk,
            ss,
            method=method,
            backend=context.backend,
            working_memory=context.working_memory,
        )


def _column_list(value: Any, *, name: str, allow_empty: bool = False) -> list[str]:
    if value is None:
        if allow_empty:
            return []
        msg = f"`{name}` must name at least one column; got None."
        raise ParameterError(msg)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Iterable) or isinstance(value, (bytes, dict)):
        msg = f"`{name}` must be a list of column names; got {value!r}."
        raise ParameterError(msg)
    names = [str(v) for v in value]
    if not names and not allow_empty:
        msg = f"`{name}` must name at least one column; got an empty list."
        raise ParameterError(msg)
    return names


def _method(computation_method: Any, computation: Any) -> CapMethod:
    """Normalise ``computation_method`` (case-insensitive) and its alias ``computation``."""
    allowed = get_args(CapMethod)
    values = {}
    for name, value in (
        ("computation_method", computation_method),
        ("computation", computation),
    ):
        if value is None:
            continue
        if not isinstance(value, str) or value.lower() not in allowed:
            msg = f"`{name}` must be one of {list(allowed)}; got {value!r}."
            raise ParameterError(msg)
        values[name] = value.lower()
    if len(set(values.values())) > 1:
        msg = (
            f"`computation_method` ({computation_method!r}) and its alias `computation` "
            f"({computation!r}) disagree; give only one of them."
        )
        raise ParameterError(msg)
    return cast("CapMethod", next(iter(values.values()), "cap"))


def _check_binnable(tables: Tables, names: Sequence[str]) -> None:
    for column in names:
        kind = tables.schema[column].kind
        if kind in ("categorical", "boolean"):
            msg = (
                f"`continuous_column_names` lists {column!r}, a {kind} column; only numerical and "
                "datetime columns can be binned. Remove it from the list (it is then matched exactly)."
            )
            raise ParameterError(msg)


def _numeric_values(
    tables: Tables, column: str, nat_binning: NatBinning
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Values to bin: float64 (numbers) or int64 ns (datetimes), plus missing masks."""
    kind = tables.schema[column].kind
    real, syn = tables.real[column], tables.synthetic[column]
    if kind == "datetime":
        r_ns = real.to_numpy(dtype="datetime64[ns]").view(np.int64)
        s_ns = syn.to_numpy(dtype="datetime64[ns]").view(np.int64)
        if nat_binning == "sdmetrics":
            # NaT read as the smallest int64, as pandas.to_numeric does
            return r_ns, s_ns, None, None
        return r_ns, s_ns, real.isna().to_numpy(), syn.isna().to_numpy()
    if kind == "numerical":
        return (
            real.to_numpy(dtype=np.float64),
            syn.to_numpy(dtype=np.float64),
            None,
            None,
        )
    # an id / pii / text column the user asked to bin: its raw values must be numbers
    try:
        r = pd.to_numeric(pd.Series(real.to_numpy(dtype=object)), errors="raise")
        s = pd.to_numeric(pd.Series(syn.to_numpy(dtype=object)), errors="raise")
        return (
            r.to_numpy(dtype=np.float64, na_value=np.nan),
            s.to_numpy(dtype=np.float64, na_value=np.nan),
            None,
            None,
        )
    except (TypeError, ValueError):
        msg = (
            f"`continuous_column_names` lists {column!r}, whose values are not numbers or dates; "
            "only numerical and datetime columns can be binned."
        )
        raise ParameterError(msg) from None


def _exact_codes(tables: Tables, column: str) -> tuple[IntArray, IntArray]:
    """Codes for exact matching, shared by both tables; -1 for missing values."""
    kind = tables.schema[column].kind
    real, syn = tables.real[column], tables.synthetic[column]
    n_real = len(real)
    if kind == "numerical":
        stacked: np.ndarray = np.concatenate(
            [real.to_numpy(dtype=np.float64), syn.to_numpy(dtype=np.float64)]
        )
        codes = pd.factorize(stacked)[0]
    elif kind == "datetime":
        r_ns = real.to_numpy(dtype="datetime64[ns]").view(np.int64)
        s_ns = syn.to_numpy(dtype="datetime64[ns]").view(np.int64)
        codes = pd.factorize(np.concatenate([r_ns, s_ns]))[0]
        codes[np.concatenate([real.isna().to_numpy(), syn.isna().to_numpy()])] = -1
    else:
        stacked = np.concatenate(
            [real.to_numpy(dtype=object), syn.to_numpy(dtype=object)]
        )
        codes = pd.factorize(stacked)[0]
    codes = codes.astype(np.int64, copy=False)
    return codes[:n_real], codes[n_real:]


def _fill_missing(
    real: IntArray, synthetic: IntArray, rule: MissingRule
) -> tuple[IntArray, IntArray]:
    """Turn code -1 into one extra category, or into codes equal to nothing."""
    top = max(int(real.max(initial=-1)), int(synthetic.max(initial=-1))) + 1
    real, synthetic = real.copy(), synthetic.copy()
    r_missing, s_missing = real < 0, synthetic < 0
    if rule == "category":
        real[r_missing] = top
        synthetic[s_missing] = top
    else:
        n_r = int(r_missing.sum())
        real[r_missing] = top + np.arange(n_r)
        synthetic[s_missing] = top + n_r + np.arange(int(s_missing.sum()))
    return real, synthetic


def attack_codes(
    tables: Tables,
    known: Sequence[str],
    sensitive: Sequence[str],
    context: Context,
    *,
    continuous: Sequence[str] = (),
    n_bins: int = 10,
    nat_binning: NatBinning = "missing",
    missing: MissingRule = "category",
    strict_types: bool = False,
    numeric_hint: str = "list it in `continuous_column_names` to bin it",
) -> AttackCodes:
    """Encode the known and sensitive columns for the CAP kernels (SDMetrics' preprocessing).

    Continuous columns are binned with :func:`discretize`; every other column is matched
    on exact values. Missing values become one category per column
    (``missing="category"``) or never equal anything (``"never_equal"``). Caveats
    (datetimes matched exactly, numeric columns with many values matched exactly, binned
    columns with no real value) are recorded with ``context.warn``; with
    ``strict_types=True`` the cases where SDMetrics 0.32 raises raise a
    :class:`~synthrisk.exceptions.ParameterError` instead.
    """
    binned = set(continuous)
    encoded: dict[str, tuple[IntArray, IntArray]] = {}
    for column in dict.fromkeys([*known, *sensitive]):
        kind = tables.schema[column].kind
        if column in binned:
            r_vals, s_vals, r_miss, s_miss = _numeric_values(
                tables, column, nat_binning
            )
            present = r_vals if r_miss is None else r_vals[~r_miss]
            if (
                present.dtype.kind == "f" and np.isnan(present).all()
            ) or present.size == 0:
                if strict_types:
                    msg = (
                        f"continuous column {column!r} has no value in the real table, so it has no bins "
                        "(SDMetrics 0.32 fails here with 'Bin edges must be unique'); strict_types=True."
                    )
                    raise ParameterError(msg)
                context.warn(
                    f"continuous column {column!r} has no value in the real table: its real rows all fall "
                    "in the missing-value category and its synthetic values in a single bin."
                )
            r_codes, s_codes = discretize(
                r_vals, s_vals, n_bins, real_missing=r_miss, synthetic_missing=s_miss
            )
        else:
            if kind == "datetime":
                if strict_types:
                    msg = (
                        f"datetime column {column!r} is not in `continuous_column_names`; SDMetrics 0.32 "
                        "raises a TypeError here (strict_types=True). List it as continuous to bin it."
                    )
                    raise ParameterError(msg)
                context.warn(
                    f"datetime column {column!r} is matched on exact timestamps; listing it in "
                    "`continuous_column_names` (binned dates) is probably what you meant."
                )
            r_codes, s_codes = _exact_codes(tables, column)
            if kind not in ("numerical", "datetime") and column in known:
                n_distinct = len(pd.unique(r_codes[r_codes >= 0]))
                if n_distinct > max(_MANY_VALUES, 0.5 * r_codes.shape[0]):
                    context.warn(
                        f"known column {column!r} has {n_distinct} distinct values in {r_codes.shape[0]} real "
                        "rows and behaves like an identifier: real rows match synthetic rows only where "
                        "both tables share a value."
                    )
            if kind == "numerical" and column in known:
                n_distinct = len(pd.unique(r_codes[r_codes >= 0]))
                if n_distinct > max(_MANY_VALUES, n_bins):
                    context.warn(
                        f"known column {column!r} is numerical with {n_distinct} distinct real values and is "
                        f"matched exactly, which makes it close to an identifier; {numeric_hint}."
                    )
        encoded[column] = _fill_missing(r_codes, s_codes, missing)
    n_distinct_product = 1
    for column in sensitive:
        n_distinct_product *= len(pd.unique(encoded[column][0]))
    baseline = 1 - float(1 / n_distinct_product)

    def stack(names: Sequence[str], side: int) -> IntArray:
        return np.ascontiguousarray(
            np.column_stack([encoded[c][side] for c in names]), dtype=np.int64
        )

    return AttackCodes(
        real_keys=stack(known, 0),
        synthetic_keys=stack(known, 1),
        real_sensitive=stack(sensitive, 0),
        synthetic_sensitive=stack(sensitive, 1),
        baseline=baseline,
    )


# ------------------------------------------------------------- scores and intervals


def _ratio_score(cap: float, baseline: float) -> float:
    if baseline == 0:
        return float("nan")
    return min(cap / baseline, 1.0)


def _row_summary(p: FloatArray) -> dict[str, int]:
    out = {"total": int(p.shape[0]), "scored": int((~np.isnan(p)).sum())}
    for level in _RISK_LEVELS:
        out[f"guessed_p_ge_{level}"] = int((p >= level).sum())
    return out


def _percentile_ci(samples: FloatArray) -> tuple[float, float] | None:
    samples = samples[np.isfinite(samples)]
    if samples.size < _N_BOOTSTRAP // 2:
        return None
    low, high = np.percentile(samples, [2.5, 97.5])
    return float(low), float(high)


def bootstrap_cap(
    p: FloatArray, rng: np.random.Generator, n_boot: int = _N_BOOTSTRAP
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


#: known columns in the default choice
DEFAULT_KNOWN = 3


def default_cap_columns(tables: Tables) -> tuple[list[str], list[str], list[str]]:
    """synthrisk's default known / sensitive / binned columns of the CAP attack.

    * sensitive: the last categorical or boolean usable column in table order (tables
      usually end with the outcome: income, diagnosis), else the last usable column;
    * known: the ``DEFAULT_KNOWN`` other usable columns with the fewest distinct real
      values (numeric ones counted after binning into 10 bins) — the coarse,
      widely known attributes (sex, age band, region) an attacker is likely to hold;
    * binned: the numerical and datetime columns among them.

    Raises
    ------
    ParameterError
        If the tables have fewer than 2 usable columns.
    """
    usable = list(tables.schema.modelable)
    if len(usable) < 2:
        msg = (
            f"the CAP attack needs at least 2 usable columns (known and sensitive); the tables have "
            f"{len(usable)}."
        )
        raise ParameterError(msg)
    categorical = [c for c in usable if c.kind in ("categorical", "boolean")]
    sensitive = (categorical or usable)[-1]
    numeric_kinds = ("numerical", "datetime")

    def distinct(column: Any) -> int:
        n = int(tables.real[column.name].nunique(dropna=False))
        return min(n, 10) if column.kind in numeric_kinds else n

    others = [c for c in usable if c.name != sensitive.name]
    ranked = sorted(others, key=lambda c: (distinct(c), usable.index(c)))
    known = sorted(ranked[:DEFAULT_KNOWN], key=usable.index)
    continuous = [c.name for c in [*known, sensitive] if c.kind in numeric_kinds]
    return [c.name for c in known], [sensitive.name], continuous


def _sample(n: int, size: int, rng: np.random.Generator) -> IntArray:
    if size >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=size, replace=False))


# ------------------------------------------------------------------------- metrics

_ATTACK = (
    "An attacker who knows some columns of a real person looks them up in the synthetic table "
    "and guesses the person's sensitive columns from the matching synthetic rows."
)
_RECORD_DESCRIPTION = (
    "probability that the attacker guesses this real row's sensitive values "
    "(share of the matching synthetic rows' votes); NaN where {why}"
)


class _DisclosureBase(Metric):
    """Shared parameters and preprocessing of the disclosure metrics."""

    runs_by_default = False
    attack = _ATTACK

    known: list[str]
    sensitive: list[str]
    continuous: list[str]

    def check_tables(self, tables: Tables) -> None:
        """Check the column names against the tables and the binned columns' kinds."""
        names = tables.schema.names
        for param, value in self._column_params():
            check_columns(
                value,
                name=param,
                available=names,
                allow_empty=param.startswith("continuous"),
            )
        _check_binnable(tables, self.continuous)

    def _column_params(self) -> list[tuple[str, list[str]]]:
        return [
            ("known_column_names", self.known),
            ("sensitive_column_names", self.sensitive),
            ("continuous_column_names", self.continuous),
        ]

    def _codes(self, tables: Tables, context: Context) -> AttackCodes:
        codes = attack_codes(
            tables, self.known, self.sensitive, context,
            continuous=self.continuous, n_bins=self.params["num_discrete_bins"],
            nat_binning=self.params["nat_binning"], strict_types=self.params["strict_types"],
        )  # fmt: skip
        if codes.baseline == 0:
            context.warn(
                "every sensitive column is constant in the real data, so random guessing is always right "
                "(baseline protection 0) and the score is undefined."
            )
        return codes


def _no_match_warning(context: Context, p: FloatArray, method: str) -> None:
    n_scored = int((~np.isnan(p)).sum())
    if method != "cap":
        return
    if n_scored == 0:
        context.warn(
            "no real row's known values occur in the synthetic table, so plain CAP scores no row and is "
            "undefined; zero_cap or generalized_cap score every row."
        )
    elif n_scored < 0.5 * p.shape[0]:
        context.warn(
            f"plain CAP scored only {n_scored} of {p.shape[0]} real rows (the others have no synthetic row "
            "with the same known values and are skipped); zero_cap or generalized_cap score every row."
        )


@register
class DisclosureProtection(_DisclosureBase):
    """How well the synthetic table protects real people's sensitive values, against random data.

    ``score = min(cap_protection / baseline_protection, 1)``: 1 means the synthetic
    table helps the attacker no more than random data would, 0 that it gives the
    sensitive values away. SDMetrics 0.32 ``DisclosureProtection``, with every real row's
    guess probability kept (``records["guess_probability"]``) and a bootstrap
    confidence interval over real rows.

    With a holdout, the same attack on the holdout rows (people the generator never
    saw) is the control: ``breakdown["holdout_test"]`` compares the mean guess
    probability of training rows with that of holdout rows (both encoded with bins
    from real ∪ holdout); the score itself is SDMetrics'.

    Parameters
    ----------
    known_column_names : list of str or None, default=None
        Columns the attacker knows (e.g. age bracket, sex). None (with
        ``sensitive_column_names`` None too): synthrisk's default choice, see
        :func:`default_cap_columns`.
    sensitive_column_names : list of str or None, default=None
        Columns the attacker guesses; several are matched as one tuple.
    computation_method : {"cap", "zero_cap", "generalized_cap"}, default=None
        ``"cap"`` when neither it nor ``computation`` is given. Case-insensitive; what to do with a real row whose known values occur in no
        synthetic row: skip it, count it as protected, or use the nearest keys.
    computation : str, default=None
        Alias of ``computation_method`` (SDMetrics' documentation uses this name).
    continuous_column_names : list of str, default=None
        Numerical or datetime columns to bin before matching; any other column is
        matched on exact values.
    num_discrete_bins : int, default=10
        Number of equal-width bins of each continuous column (edges from the real data).
    nat_binning : {"missing", "sdmetrics"}, default="missing"
        Missing dates in a binned datetime column: their own missing-value category; or
        ``"sdmetrics"``: read as the smallest int64 like SDMetrics 0.32, which puts
        every real date into the top bin when the real column has a missing date.
    strict_types : bool, default=False
        Raise where SDMetrics 0.32 raises (datetime column not listed as continuous,
        continuous column with no real value) instead of handling the case.
    """

    id = "disclosure_protection"
    runs_by_default = True

    def __init__(
        self,
        *,
        known_column_names: Sequence[str] | None = None,
        sensitive_column_names: Sequence[str] | None = None,
        computation_method: CapMethod | str | None = None,
        computation: CapMethod | str | None = None,
        continuous_column_names: Sequence[str] | None = None,
        num_discrete_bins: int = 10,
        nat_binning: NatBinning = "missing",
        strict_types: bool = False,
    ) -> None:
        self.auto_columns = (
            known_column_names is None
            and sensitive_column_names is None
            and continuous_column_names is None
            and type(self) is DisclosureProtection
        )
        if self.auto_columns:
            self.known, self.sensitive, self.continuous = [], [], []
        else:
            self.known = _column_list(known_column_names, name="known_column_names")
            self.sensitive = _column_list(
                sensitive_column_names, name="sensitive_column_names"
            )
            self.continuous = _column_list(
                continuous_column_names,
                name="continuous_column_names",
                allow_empty=True,
            )
        method = _method(computation_method, computation)
        bins = check_int(num_discrete_bins, name="num_discrete_bins", minimum=1)
        check_option(nat_binning, name="nat_binning", allowed=get_args(NatBinning))
        auto = self.auto_columns
        self._set_params(
            known_column_names=None if auto else self.known, sensitive_column_names=None if auto else self.sensitive,
            computation_method=method, continuous_column_names=None if auto else self.continuous,
            num_discrete_bins=bins, nat_binning=nat_binning, strict_types=bool(strict_types),
        )  # fmt: skip

    def check_tables(self, tables: Tables) -> None:
        """Check the column names (or that a default choice exists)."""
        if self.auto_columns:
            default_cap_columns(tables)
            return
        super().check_tables(tables)

    def run(self, tables: Tables, context: Context) -> MetricResult:
        """Resolve the default columns for these tables, then compute."""
        if not self.auto_columns:
            return super().run(tables, context)
        known, sensitive, continuous = default_cap_columns(tables)
        resolved = DisclosureProtection(
            known_column_names=known, sensitive_column_names=sensitive, computation_method=self.params["computation_method"],
            continuous_column_names=continuous, num_discrete_bins=self.params["num_discrete_bins"],
            nat_binning=self.params["nat_binning"], strict_types=self.params["strict_types"],
        )  # fmt: skip
        result = resolved.run(tables, context)
        params = dict(result.params)
        params["columns_chosen_by"] = (
            "synthrisk's default: sensitive = the last categorical column, known = the 3 other columns "
            "with the fewest distinct values (numeric ones binned)"
        )
        return dataclasses.replace(result, params=params)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        codes = self._codes(tables, context)
        method = self.params["computation_method"]
        p = codes.probabilities(method, context)
        _no_match_warning(context, p, method)
        cap = cap_protection(p)
        score = _ratio_score(cap, codes.baseline)
        ci = None
        if codes.baseline != 0:
            boot = bootstrap_cap(p, context.rng)
            ci = _percentile_ci(np.minimum(boot / codes.baseline, 1.0))
        why = "no synthetic row has the row's known values (plain CAP skips it)"
        records = {
            "guess_probability": RecordScores(
                "real", np.arange(p.shape[0]), p, _RECORD_DESCRIPTION.format(why=why)
            )
        }
        breakdown: dict[str, Any] = {
            "score": score,
            "cap_protection": cap,
            "baseline_protection": codes.baseline,
            "real_rows": _row_summary(p),
        }
        if tables.holdout is not None:
            breakdown["holdout_test"] = self._holdout_test(tables, context)
        return Outcome(score=score, breakdown=breakdown, ci=ci, records=records)

    def _holdout_test(self, tables: Tables, context: Context) -> dict[str, Any]:
        """The CAP attack on training rows against the same attack on holdout rows."""
        assert tables.holdout is not None
        n_real = len(tables.real)
        pooled = Tables(
            real=pd.concat([tables.real, tables.holdout], ignore_index=True),
            synthetic=tables.synthetic, holdout=None, schema=tables.schema,
        )  # fmt: skip
        codes = attack_codes(
            pooled, self.known, self.sensitive, Context(), continuous=self.continuous,
            n_bins=self.params["num_discrete_bins"], nat_binning=self.params["nat_binning"],
            strict_types=self.params["strict_types"],
        )  # fmt: skip
        p = codes.probabilities(self.params["computation_method"], context)
        return mean_difference_test(
            p[:n_real], p[n_real:],
            statistic="mean probability of guessing a training person's sensitive values minus a holdout person's",
        )  # fmt: skip


@register
class DisclosureProtectionEstimate(DisclosureProtection):
    """:class:`DisclosureProtection` averaged over seeded subsamples (SDMetrics' Estimate).

    Binning, missing values and the baseline use the full tables; each iteration then
    draws ``num_rows_subsample`` real and synthetic rows (without replacement,
    independently) and runs the CAP attack on them. ``cap_protection`` is the mean over
    iterations and ``score = min(mean cap / baseline, 1)`` (mean first, then divide, as
    SDMetrics 0.32). With synthrisk's linear-time kernels the exact
    :class:`DisclosureProtection` is fast even on large tables; the Estimate exists for
    compatibility.

    Parameters
    ----------
    num_rows_subsample : int, default=1000
        Rows drawn from each table per iteration; a table with fewer rows is used
        whole. Larger than both tables is an error (nothing would be subsampled).
    num_iterations : int, default=10
        Number of subsamples.
    **kwargs
        The parameters of :class:`DisclosureProtection`.
    """

    id = "disclosure_protection_estimate"
    runs_by_default = False

    def __init__(
        self,
        *,
        known_column_names: Sequence[str] | None = None,
        sensitive_column_names: Sequence[str] | None = None,
        computation_method: CapMethod | str | None = None,
        computation: CapMethod | str | None = None,
        continuous_column_names: Sequence[str] | None = None,
        num_discrete_bins: int = 10,
        num_rows_subsample: int = 1000,
        num_iterations: int = 10,
        nat_binning: NatBinning = "missing",
        strict_types: bool = False,
    ) -> None:
        super().__init__(
            known_column_names=known_column_names, sensitive_column_names=sensitive_column_names,
            computation_method=computation_method, computation=computation,
            continuous_column_names=continuous_column_names, num_discrete_bins=num_discrete_bins,
            nat_binning=nat_binning, strict_types=strict_types,
        )  # fmt: skip
        n_sub = check_int(num_rows_subsample, name="num_rows_subsample", minimum=1)
        n_iter = check_int(num_iterations, name="num_iterations", minimum=1)
        params = dict(self.params)
        params.update(num_rows_subsample=n_sub, num_iterations=n_iter)
        self._set_params(**params)

    def check_tables(self, tables: Tables) -> None:
        """Also check ``num_rows_subsample`` against the table sizes."""
        super().check_tables(tables)
        n_sub = self.params["num_rows_subsample"]
        n_real, n_syn = len(tables.real), len(tables.synthetic)
        if n_sub > n_real and n_sub > n_syn:
            msg = (
                f"`num_rows_subsample` ({n_sub}) is larger than both the real ({n_real} rows) and the "
                f"synthetic ({n_syn} rows) table, so nothing would be subsampled; use at most "
                f"{max(n_real, n_syn)}, or the exact metric 'disclosure_protection'."
            )
            raise ParameterError(msg)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        n_sub = self.params["num_rows_subsample"]
        n_iter = self.params["num_iterations"]
        n_real, n_syn = len(tables.real), len(tables.synthetic)
        if n_sub > min(n_real, n_syn):
            smaller = "real" if n_real < n_syn else "synthetic"
            context.warn(
                f"num_rows_subsample ({n_sub}) is larger than the {smaller} table ({min(n_real, n_syn)} rows), "
                "which is used whole in every iteration."
            )
        codes = self._codes(tables, context)
        rng = context.rng
        samples = [
            (_sample(n_real, n_sub, rng), _sample(n_syn, n_sub, rng))
            for _ in range(n_iter)
        ]
        method = self.params["computation_method"]
        with context.progress.task(
            "Estimating disclosure protection", n_iter
        ) as advance:
            caps, p_iter = estimate_iterations(
                codes, samples, method, context, advance=advance
            )
        if any(math.isnan(c) for c in caps):
            context.warn(
                "plain CAP scored no row in at least one subsample (no real key found in the synthetic "
                "subsample), so the mean and the score are undefined; use zero_cap or generalized_cap, or "
                "larger subsamples."
            )
        mean_cap = estimate_mean(caps)
        score = _ratio_score(mean_cap, codes.baseline)
        # per real row: mean probability over the iterations that drew and scored it
        p_sum, p_n = np.zeros(n_real), np.zeros(n_real)
        for (real_rows, _), p in zip(samples, p_iter, strict=True):
            ok = ~np.isnan(p)
            np.add.at(p_sum, real_rows[ok], p[ok])
            np.add.at(p_n, real_rows[ok], 1)
        drawn = np.flatnonzero(p_n > 0)
        p_mean = p_sum[drawn] / p_n[drawn]
        records = {
            "guess_probability": RecordScores(
                "real", drawn, p_mean,
                "mean over the subsamples that drew (and scored) this real row of the probability "
                "that the attacker guesses its sensitive values",
            )
        }  # fmt: skip
        ci = None
        if codes.baseline != 0:
            if n_iter >= 2:
                idx = rng.integers(0, n_iter, size=(_N_BOOTSTRAP, n_iter))
                boot = np.asarray(caps)[idx].mean(axis=1)
            else:
                boot = bootstrap_cap(p_iter[0], rng)
            ci = _percentile_ci(np.minimum(boot / codes.baseline, 1.0))
        summary = _row_summary(p_mean)
        summary["total"] = n_real
        breakdown = {
            "score": score,
            "cap_protection": mean_cap,
            "baseline_protection": codes.baseline,
            "cap_protection_per_iteration": [float(c) for c in caps],
            "real_rows": summary,
        }
        return Outcome(score=score, breakdown=breakdown, ci=ci, records=records)


def estimate_iterations(
    codes: AttackCodes,
    samples: Sequence[tuple[IntArray, IntArray]],
    method: CapMethod,
    context: Context,
    *,
    advance: Any = None,
) -> tuple[list[float], list[FloatArray]]:
    """CAP protection and per-row probabilities of each (real rows, synthetic rows) sample."""
    caps, probabilities = [], []
    for real_rows, syn_rows in samples:
        p = codes.probabilities(method, context, real_rows, syn_rows)
        caps.append(cap_protection(p))
        probabilities.append(p)
        if advance is not None:
            advance(1)
    return caps, probabilities


def estimate_mean(caps: Sequence[float]) -> float:
    """Running sum divided by the count, as SDMetrics' Estimate accumulates it."""
    total = 0.0
    for cap in caps:
        total += cap
    return total / float(len(caps))


class _CategoricalCAPBase(_DisclosureBase):
    """SDMetrics' legacy CategoricalCAP family: CAP protection without baseline or binning."""

    method: CapMethod = "cap"

    def __init__(
        self,
        *,
        key_fields: Sequence[str] | None = None,
        sensitive_fields: Sequence[str] | None = None,
        missing: MissingRule = "category",
        strict_types: bool = False,
    ) -> None:
        self.known = _column_list(key_fields, name="key_fields")
        self.sensitive = _column_list(sensitive_fields, name="sensitive_fields")
        self.continuous = []
        check_option(missing, name="missing", allowed=get_args(MissingRule))
        self._set_params(
            key_fields=self.known,
            sensitive_fields=self.sensitive,
            missing=missing,
            strict_types=bool(strict_types),
        )

    def _column_params(self) -> list[tuple[str, list[str]]]:
        return [("key_fields", self.known), ("sensitive_fields", self.sensitive)]

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        codes = attack_codes(
            tables, self.known, self.sensitive, context,
            missing=self.params["missing"], strict_types=self.params["strict_types"],
            numeric_hint="bin it first, or use 'disclosure_protection' with `continuous_column_names`",
        )  # fmt: skip
        p = codes.probabilities(self.method, context)
        _no_match_warning(context, p, self.method)
        cap = cap_protection(p)
        why = "no synthetic row has the row's known values (CAP skips it)"
        records = {
            "guess_probability": RecordScores(
                "real", np.arange(p.shape[0]), p, _RECORD_DESCRIPTION.format(why=why)
            )
        }
        ci = _percentile_ci(bootstrap_cap(p, context.rng))
        breakdown = {"score": cap, "real_rows": _row_summary(p)}
        return Outcome(score=cap, breakdown=breakdown, ci=ci, records=records)


@register
class CategoricalCAP(_CategoricalCAPBase):
    """CAP protection ``1 - mean P(true sensitive | known)``; unmatched real rows are skipped.

    SDMetrics' legacy ``CategoricalCAP`` (no baseline, no binning: every column is
    matched on exact values). NaN when no real row's key occurs in the synthetic table.

    Parameters
    ----------
    key_fields : list of str
        Columns the attacker knows.
    sensitive_fields : list of str
        Columns the attacker guesses (matched as one tuple).
    missing : {"category", "never_equal"}, default="category"
        Missing values form one category per column; or ``"never_equal"``: a missing
        value equals nothing, not even another missing value (what SDMetrics does for
        float columns; for object columns it depends on object identity).
    strict_types : bool, default=False
        Raise where SDMetrics 0.32 raises (datetime columns) instead of matching exactly.
    """

    id = "categorical_cap"
    method = "cap"


@register
class CategoricalZeroCAP(_CategoricalCAPBase):
    """Like :class:`CategoricalCAP`, but a real row with no matching synthetic key counts as protected (p = 0).

    SDMetrics' legacy ``CategoricalZeroCAP``; parameters as :class:`CategoricalCAP`.
    """

    id = "categorical_zero_cap"
    method = "zero_cap"


@register
class CategoricalGeneralizedCAP(_CategoricalCAPBase):
    """Like :class:`CategoricalCAP`, but unmatched real rows pool the nearest synthetic keys.

    All distinct synthetic keys at the minimum Hamming distance are pooled, weighted by
    their row counts. SDMetrics' legacy ``CategoricalGeneralizedCAP``; parameters as
    :class:`CategoricalCAP`.
    """

    id = "categorical_generalized_cap"
    method = "generalized_cap"
