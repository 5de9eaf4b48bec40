# SPDX-License-Identifier: BSD-3-Clause
"""Bootstrap percentile intervals: the one resampling loop of every bootstrapped metric.

Rows are resampled with replacement from each sample independently (``n_resamples``
times, from the metric's seeded generator), the statistic is recomputed on every
resample, and the interval is the ``(1 - confidence_level) / 2`` and
``(1 + confidence_level) / 2`` percentiles of the finite replicates.

References
----------
B. Efron, R. J. Tibshirani (1993), *An Introduction to the Bootstrap*, Chapman & Hall,
chapter 13 (the percentile interval).

>>> import numpy as np
>>> from synthrisk.stats.bootstrap import bootstrap_interval
>>> low, high = bootstrap_interval(np.mean, np.arange(10.0), rng=np.random.default_rng(0))
>>> bool(low < 4.5 < high)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.stats.intervals import check_confidence_level

__all__ = [
    "N_RESAMPLES",
    "bootstrap_interval",
    "bootstrap_medians",
    "percentile_interval",
]

#: bootstrap resamples of every bootstrapped metric
N_RESAMPLES = 200


def _percentiles(confidence_level: float) -> tuple[float, float]:
    level = check_confidence_level(confidence_level)
    # rounded so that 0.95 gives exactly (2.5, 97.5)
    low = round(50.0 * (1.0 - level), 12)
    return low, 100.0 - low


def percentile_interval(
    replicates: FloatArray,
    *,
    confidence_level: float = 0.95,
    min_finite: int = N_RESAMPLES // 2,
) -> tuple[float, float] | None:
    """Percentile interval of bootstrap replicates.

    Parameters
    ----------
    replicates : ndarray of shape (n_resamples,)
        The statistic on each resample; NaN and infinite replicates are dropped.
    confidence_level : float, default=0.95
        Two-sided confidence level in [0, 1).
    min_finite : int, default=100
        Fewer finite replicates than this give None (the statistic is undefined on too
        many resamples for an interval to mean anything).

    Returns
    -------
    tuple of (float, float) or None
        Lower and upper percentile.
    """
    finite = replicates[np.isfinite(replicates)]
    if finite.size < min_finite or finite.size == 0:
        return None
    low, high = np.percentile(finite, _percentiles(confidence_level))
    return float(low), float(high)


def bootstrap_interval(
    statistic: Callable[..., Any],
    *samples: np.ndarray,
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
    confidence_level: float = 0.95,
) -> tuple[float, float] | None:
    """Bootstrap percentile interval of ``statistic(*samples)``.

    Parameters
    ----------
    statistic : callable
        Takes one resampled array per sample and returns a float (NaN where undefined).
    *samples : ndarray of shape (n_i,)
        Resampled independently, each with replacement at its own size.
    rng : numpy.random.Generator
        Source of the resamples.
    n_resamples : int, default=200
        Number of resamples.
    confidence_level : float, default=0.95
        Two-sided confidence level in [0, 1).

    Returns
    -------
    tuple of (float, float) or None
        None when a sample has fewer than 2 values or too few replicates are finite.
    """
    sizes = [sample.shape[0] for sample in samples]
    if min(sizes) < 2:
        return None
    replicates = np.empty(n_resamples)
    for b in range(n_resamples):
        replicates[b] = statistic(
            *(
                sample[rng.integers(0, n, n)]
                for sample, n in zip(samples, sizes, strict=True)
            )
        )
    return percentile_interval(replicates, confidence_level=confidence_level)


@numba.njit(nogil=True, cache=True)
def _resample_median(  # type: ignore[no-untyped-def]
    rank, ordered, draws, counts
):  # pragma: no cover - compiled
    """``np.median(values[draws])`` from the values sorted once (``ordered``) and the
    sorted position of every value (``rank``): count the draws per position, then walk
    to the middle one or two. The same number as ``np.median``: the middle value, or
    the sum of the two middle values divided by 2."""
    n = draws.shape[0]
    counts[:] = 0
    for t in range(n):
        counts[rank[draws[t]]] += 1
    low = (n - 1) // 2
    high = n // 2
    seen = 0
    first = math.nan
    for r in range(counts.shape[0]):
        before = seen
        seen += counts[r]
        if before <= low < seen:
            first = ordered[r]
        if seen > high:
            if low == high:
                return first
            return (first + ordered[r]) / 2.0
    return math.nan


def bootstrap_medians(
    *samples: np.ndarray,
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
) -> list[FloatArray] | None:
    """The median of every bootstrap resample of each sample.

    The resamples are those :func:`bootstrap_interval` draws from the same generator
    (for each resample, one draw per sample in turn), and each median equals
    ``np.median`` of the resampled values: ``bootstrap_interval(statistic, *samples)``
    of a statistic of the samples' medians is the percentile interval of that
    statistic of these. Each sample is sorted once and a resample's median found by
    counting its draws, instead of partitioning every resample.

    Returns
    -------
    list of ndarray of shape (n_resamples,), or None
        One array per sample; None when a sample has fewer than 2 values (as
        :func:`bootstrap_interval`).
    """
    sizes = [sample.shape[0] for sample in samples]
    if min(sizes) < 2:
        return None
    prepared: list[tuple[FloatArray, IntArray | None, IntArray | None]] = []
    for sample in samples:
        values = np.asarray(sample, dtype=np.float64)
        if np.isnan(values).any():
            prepared.append((values, None, None))  # np.median's NaN rule: resample
            continue
        order = np.argsort(values, kind="stable")
        ranks = np.empty(values.shape[0], dtype=np.int64)
        ranks[order] = np.arange(values.shape[0])
        prepared.append(
            (np.ascontiguousarray(values[order]), ranks, np.empty_like(ranks))
        )
    medians = [np.empty(n_resamples) for _ in samples]
    for b in range(n_resamples):
        for out, n, (values, rank, counts) in zip(
            medians, sizes, prepared, strict=True
        ):
            draws = rng.integers(0, n, n)
            if rank is None:
                out[b] = np.median(values[draws])
            else:
                out[b] = _resample_median(rank, values, draws, counts)
    return medians
