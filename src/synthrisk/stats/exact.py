# SPDX-License-Identifier: BSD-3-Clause
"""Exact tests of two proportions, their interval, and the excess they detect.

The per-person tests compare counts of people (identified, or reached by an attack) in
the training arm with the holdout arm. Counts of a few people are common there —
copies of a handful of isolated people — so the tests are exact:

* Boschloo's unconditional test (Boschloo 1970, *Statistica Neerlandica* 24), uniformly
  more powerful than Fisher's, where SciPy computes it quickly (small arms); Fisher's
  exact test (conditional on the margins, also valid) on large arms, where the two agree;
* Newcombe's hybrid score interval of the difference of the two proportions (Newcombe
  1998, *Statistics in Medicine* 17, method 10), which stays inside [-1, 1] and behaves
  at 0 and n;
* :func:`detectable_excess`: the smallest number of extra people in the first arm that
  the test finds with a given power, by the exact distribution of the counts.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats

__all__ = [
    "BOSCHLOO_CELLS",
    "detectable_excess",
    "excess_greater_p",
    "fewest_people",
    "newcombe_interval",
]

#: arms of at most this many cells (``n_a * n_b``) use Boschloo's test, larger ones Fisher's
BOSCHLOO_CELLS = 50_000


def _fisher_greater(a: int, n_a: int, b: int, n_b: int) -> float:
    """Fisher's one-sided exact p-value (the hypergeometric tail)."""
    if n_a <= 0 or n_b <= 0 or a <= 0:
        return 1.0
    return float(stats.hypergeom.sf(a - 1, n_a + n_b, a + b, n_a))


@functools.lru_cache(maxsize=4096)
def excess_greater_p(a: int, n_a: int, b: int, n_b: int) -> float:
    """One-sided p-value that the first proportion ``a / n_a`` exceeds ``b / n_b``.

    Exact: Boschloo's test where ``n_a * n_b <= BOSCHLOO_CELLS``, else Fisher's. An
    empty arm gives 1.

    Examples
    --------
    >>> round(excess_greater_p(4, 20, 0, 388), 7)
    1.5e-06
    >>> excess_greater_p(0, 100, 3, 100)
    1.0
    """
    if n_a <= 0 or n_b <= 0 or a <= 0:
        return 1.0
    if a * n_b <= b * n_a or n_a * n_b > BOSCHLOO_CELLS:
        return _fisher_greater(a, n_a, b, n_b)
    table = [[a, n_a - a], [b, n_b - b]]
    p = stats.boschloo_exact(table, alternative="greater", n=32).pvalue
    return float(min(max(p, 0.0), 1.0))


@functools.lru_cache(maxsize=64)
def fewest_people(level: float) -> int:
    """Fewest people on each side for the exact test to reach ``level`` at all.

    The most extreme outcome with ``n`` people on each side is every training person
    reached and no holdout person (``n`` of ``n`` against 0 of ``n``); below the
    returned ``n`` even that outcome has a one-sided p-value of at least ``level``, so no
    test of people can detect a leak.

    Examples
    --------
    >>> fewest_people(0.05), fewest_people(0.05 / 9), fewest_people(0.05 / 20)
    (3, 4, 5)
    """
    n = 1
    while excess_greater_p(n, n, 0, n) >= level:
        n += 1
    return n


def _wilson(x: int, n: int, z: float) -> tuple[float, float]:
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_interval(
    a: int, n_a: int, b: int, n_b: int, *, confidence_level: float = 0.95
) -> tuple[float, float]:
    """Newcombe's hybrid score interval of ``a / n_a - b / n_b``.

    Examples
    --------
    >>> lo, hi = newcombe_interval(56, 70, 48, 80)
    >>> round(lo, 4), round(hi, 4)
    (0.0524, 0.3339)
    """
    z = float(stats.norm.ppf(0.5 + confidence_level / 2))
    p_a, p_b = a / n_a, b / n_b
    l_a, u_a = _wilson(a, n_a, z)
    l_b, u_b = _wilson(b, n_b, z)
    diff = p_a - p_b
    low = diff - math.sqrt((p_a - l_a) ** 2 + (u_b - p_b) ** 2)
    high = diff + math.sqrt((u_a - p_a) ** 2 + (p_b - l_b) ** 2)
    return max(-1.0, low), min(1.0, high)


def detectable_excess(
    n_a: int,
    b: int,
    n_b: int,
    *,
    level: float,
    power: float = 0.8,
    limit: int | None = None,
) -> int | None:
    """Fewest extra people in the first arm that the exact test detects with ``power``.

    The first arm's own count is drawn at the second arm's rate (``b / n_b``, what new
    people give by chance); ``k`` extra people are added to it, and the smallest ``k``
    whose one-sided p-value falls below ``level`` with probability at least ``power``
    is returned; None when even ``limit`` (default ``n_a``) extra people are not enough.
    The p-values are Fisher's (fast; Boschloo's test only detects more), so the count is
    what the test detects at least.

    Examples
    --------
    >>> detectable_excess(20, 0, 388, level=0.005)
    2
    """
    limit = n_a if limit is None else min(limit, n_a)
    rate = b / n_b if n_b else 0.0
    chance = stats.binom(n_a, rate)
    # the chance counts that carry almost all the probability
    top = int(chance.ppf(1 - 1e-4)) if rate > 0 else 0
    counts = np.arange(0, top + 1)
    weights = chance.pmf(counts)

    def detected(k: int) -> float:
        # Fisher's p-value of every chance count plus k at once (the same tail, one
        # call), the detecting counts' probabilities summed in order
        if n_a <= 0 or n_b <= 0:
            return 0.0 if level <= 1.0 else float(sum(weights.tolist()))
        tops = np.minimum(counts + k, n_a)
        p = stats.hypergeom.sf(tops - 1, n_a + n_b, tops + b, n_a)
        p = np.where(tops <= 0, 1.0, p)
        return float(sum(weights[p < level].tolist()))

    low, high = 1, limit
    if high < 1 or detected(high) < power:
        return None
    while low < high:  # the detection probability grows with k
        middle = (low + high) // 2
        if detected(middle) >= power:
            high = middle
        else:
            low = middle + 1
    return low
