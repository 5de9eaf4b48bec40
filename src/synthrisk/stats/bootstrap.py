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

from collections.abc import Callable
from typing import Any

import numpy as np

from synthrisk._typing import FloatArray
from synthrisk.stats.intervals import check_confidence_level

__all__ = [
    "N_RESAMPLES",
    "bootstrap_interval",
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
