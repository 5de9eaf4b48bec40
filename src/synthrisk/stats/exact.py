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
  the test finds with a given power, by the exact distribution of the counts;
* :func:`min_p_resampling`: several such tests on the same people (attacks that link
  largely the same people) combined by the smallest p-value, its null distribution
  found by relabelling the people (Westfall & Young 1993, *Resampling-Based Multiple
  Testing*, the single-step min-p adjustment), which keeps the dependence between the
  tests where Bonferroni assumes the worst.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special, stats

from synthrisk._typing import FloatArray, IntArray
from synthrisk._validation import check_int
from synthrisk.exceptions import ParameterError

__all__ = [
    "BOSCHLOO_CELLS",
    "detectable_excess",
    "excess_greater_p",
    "fewest_people",
    "fisher_greater_p",
    "min_p_resampling",
    "newcombe_interval",
]

#: arms of at most this many cells (``n_a * n_b``) use Boschloo's test, larger ones Fisher's
BOSCHLOO_CELLS = 50_000


def fisher_greater_p(a: int, n_a: int, b: int, n_b: int) -> float:
    """Fisher's one-sided exact p-value that ``a / n_a`` exceeds ``b / n_b``.

    The hypergeometric tail: valid given the margins (the people and how many of them
    are reached), the test that :func:`min_p_resampling` relabels; an empty arm or
    ``a = 0`` gives 1.

    Examples
    --------
    >>> round(fisher_greater_p(6, 10, 0, 10), 4)
    0.0054
    """
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
        return fisher_greater_p(a, n_a, b, n_b)
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


#: relative margin within which a relabelled smallest p-value counts as a tie with the
#: observed one (a last-digit difference of a library's log between CPUs changes nothing)
_TIE = 1e-7
#: groups of at least this many people are relabelled by one hypergeometric draw,
#: smaller ones person by person (cheaper below about 30 people)
_GROUP_DRAW = 32


def _fisher_tails(a: IntArray, n_a: IntArray, n: int, linked: int) -> FloatArray:
    """Fisher's one-sided p-value of each ``(a, n_a)`` with ``n`` people, ``linked`` linked.

    ``P(X >= a)`` for ``X ~ Hypergeometric(n, linked, n_a)``, where ``a / n_a`` exceeds
    the second arm's ``(linked - a) / (n - n_a)``; 1 where it does not, or an arm is
    empty. The pmf at ``a`` from log-gamma functions, the tail by the ratio of
    successive terms until they no longer count (a fixed rule: the same pair always
    gets the same value).
    """
    b, n_b = linked - a, n - n_a
    out = np.ones(a.shape)
    todo = (n_a > 0) & (n_b > 0) & (a > 0) & (a * n_b > b * n_a)
    if not todo.any():
        return out
    x = a[todo].astype(np.float64)
    m = n_a[todo].astype(np.float64)
    big_l, big_n = float(linked), float(n)
    g = special.gammaln
    log_first = (
        g(big_l + 1)
        - g(x + 1)
        - g(big_l - x + 1)
        + g(big_n - big_l + 1)
        - g(m - x + 1)
        - g(big_n - big_l - m + x + 1)
        - g(big_n + 1)
        + g(m + 1)
        + g(big_n - m + 1)
    )
    top = np.minimum(big_l, m)
    term = np.ones_like(x)
    total = np.ones_like(x)
    active = x < top
    while active.any():
        ratio = (big_l - x) * (m - x) / ((x + 1) * (big_n - big_l - m + x + 1))
        term = np.where(active, term * ratio, 0.0)
        total += term
        x = x + active
        active &= (x < top) & (term > 2.0**-60 * total)
    out[todo] = np.minimum(np.exp(log_first + np.log(total)), 1.0)
    return out


def min_p_resampling(
    linked: np.ndarray,
    eligible: np.ndarray,
    is_first: np.ndarray,
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> float:
    """Westfall–Young p-value of the smallest of several tests on the same people.

    Each test ``j`` compares the people it links (``linked[j]``) among those it can
    link (``eligible[j]``) in the first arm (``is_first``: training) with the second
    (holdout), by Fisher's one-sided tail (:func:`excess_greater_p`'s test on large
    arms). The statistic is the smallest of these p-values. Under the null the arms are
    exchangeable: given the people and their flags, every choice of which of them form
    the first arm is equally likely. The people are relabelled ``n_resamples`` times,
    the same relabelling for every test (so a person linked by several tests moves with
    all of them and the dependence between the tests is kept), each test's counts —
    linked and eligible people of each arm — recomputed, and the p-value is ``(1 + r) /
    (1 + n_resamples)`` with ``r`` the relabellings whose smallest p-value is at most
    the observed one: valid at every level (Phipson & Smyth 2010, *Statistical
    Applications in Genetics and Molecular Biology* 9), conditional on the people's
    flags only. Identical tests give about one test's p-value; Bonferroni would give
    their number times it.

    Only the pattern of flags matters: people with the same flags in every test are
    one group, and a relabelling is the number of first-arm people in each group (a
    multivariate hypergeometric draw: group after group, each given those before;
    small groups person by person with integer draws, the largest group taking what
    remains), so the cost grows with the people outside the largest groups, not with
    all people.

    Parameters
    ----------
    linked, eligible : ndarray of bool, shape (n_tests, n_people)
        Whom each test links, and whom it can link (a person linked but not eligible
        counts as not eligible).
    is_first : ndarray of bool, shape (n_people,)
        The first arm (training people); the rest are the second (holdout).
    n_resamples : int
        Relabellings drawn; the p-value is at least ``1 / (1 + n_resamples)``.
    rng : Generator
        Source of the relabellings.

    Returns
    -------
    float
        The p-value, in ``(0, 1]``; 1 when no test shows an excess.

    Examples
    --------
    Six of ten training people linked against none of ten holdout people (Fisher's
    p-value 0.0054), by one test and by five identical ones (Bonferroni: 0.027):

    >>> flags = np.array([True] * 6 + [False] * 14)
    >>> first = np.arange(20) < 10
    >>> one = min_p_resampling(flags[None], np.ones((1, 20), bool), first,
    ...                        n_resamples=9999, rng=np.random.default_rng(0))
    >>> five = min_p_resampling(np.tile(flags, (5, 1)), np.ones((5, 20), bool), first,
    ...                         n_resamples=9999, rng=np.random.default_rng(0))
    >>> one == five, 0.004 < five < 0.008
    (True, True)
    """
    n_resamples = check_int(n_resamples, name="n_resamples", minimum=1)
    eligible = np.asarray(eligible, dtype=bool)
    linked = np.asarray(linked, dtype=bool)
    is_first = np.asarray(is_first, dtype=bool)
    if (
        linked.ndim != 2
        or linked.shape != eligible.shape
        or is_first.shape != (linked.shape[1],)
    ):
        msg = (
            "`linked` and `eligible` must be (n_tests, n_people) and `is_first` "
            f"(n_people,); got {linked.shape}, {eligible.shape} and {is_first.shape}."
        )
        raise ParameterError(msg)
    linked &= eligible
    state = eligible.astype(np.int8) + linked.astype(np.int8)  # 0, 1 eligible, 2 linked
    # each person's group: the flags of every test, as one code (refined test by test,
    # kept small by renumbering), in the order of the flags
    code = np.zeros(state.shape[1], dtype=np.int64)
    for row in state:
        code = np.unique(code * 3 + row, return_inverse=True)[1].ravel()
    _, first_of, group = np.unique(code, return_index=True, return_inverse=True)
    group = group.ravel()
    patterns = state[:, first_of].T
    sizes = np.bincount(group, minlength=len(patterns)).astype(np.int64)
    is_linked = (patterns == 2).astype(np.int64)  # (groups, tests)
    is_eligible = (patterns >= 1).astype(np.int64)
    n_eligible = sizes @ is_eligible
    n_linked = sizes @ is_linked
    first = np.bincount(group[is_first], minlength=len(patterns)).astype(np.int64)
    observed = np.stack([first @ is_linked, first @ is_eligible])  # (2, tests)
    p_observed = np.array(
        [
            _fisher_tails(observed[0, j : j + 1], observed[1, j : j + 1], n, k)[0]
            for j, (n, k) in enumerate(
                zip(n_eligible.tolist(), n_linked.tolist(), strict=True)
            )
        ]
    )
    t_observed = float(p_observed.min()) if p_observed.size else 1.0
    if t_observed >= 1.0:
        return 1.0
    linked_first, ineligible_first = _relabel(
        sizes, patterns, int(first.sum()), n_resamples, rng
    )
    # row 0: the observed labels, then the relabellings (one function gives all p-values)
    drawn_linked = np.vstack([observed[0], linked_first])
    drawn_eligible = np.vstack([observed[1], int(first.sum()) - ineligible_first])
    smallest = np.ones(n_resamples + 1)
    for j, (n, k) in enumerate(
        zip(n_eligible.tolist(), n_linked.tolist(), strict=True)
    ):
        if k == 0:
            continue
        # each distinct pair of counts once: the same counts always get the same p-value
        pairs = drawn_linked[:, j] * (n + 1) + drawn_eligible[:, j]
        unique, where = np.unique(pairs, return_inverse=True)
        p = _fisher_tails(unique // (n + 1), unique % (n + 1), n, k)
        smallest = np.minimum(smallest, p[where.ravel()])
    hits = int((smallest[1:] <= smallest[0] * (1 + _TIE)).sum())
    return (1 + hits) / (1 + n_resamples)


def _relabel(
    sizes: IntArray,
    patterns: np.ndarray,
    n_first: int,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[IntArray, IntArray]:
    """First-arm people linked, and not eligible, per test, in each relabelling.

    ``sizes[k]`` people share the flags ``patterns[k]`` (0 not eligible, 1 eligible,
    2 linked, per test); ``n_first`` of all the people are drawn into the first arm,
    uniformly. Groups are drawn largest first, each given those before it: a group of
    ``_GROUP_DRAW`` people or more by one hypergeometric draw, a smaller one person by
    person (a person is drawn with probability first-arm places left over people
    left, by an integer draw); the largest group takes the places that remain.
    """
    n_tests = patterns.shape[1]
    linked = np.zeros((n_resamples, n_tests), dtype=np.int64)
    ineligible = np.zeros((n_resamples, n_tests), dtype=np.int64)

    def add(k: int, drawn: IntArray) -> None:
        for j in np.flatnonzero(patterns[k] == 2):
            linked[:, j] += drawn
        for j in np.flatnonzero(patterns[k] == 0):
            ineligible[:, j] += drawn

    order = np.argsort(-sizes, kind="stable").tolist()
    places = np.full(n_resamples, n_first, dtype=np.int64)  # first-arm places left
    left = int(sizes.sum())  # people left
    for k in order[1:]:
        size = int(sizes[k])
        if size >= _GROUP_DRAW:
            drawn = rng.hypergeometric(size, left - size, places).astype(np.int64)
        else:
            drawn = np.zeros(n_resamples, dtype=np.int64)
            for i in range(size):
                drawn += rng.integers(0, left - i, size=n_resamples) < places - drawn
        left -= size
        places -= drawn
        add(k, drawn)
    add(order[0], places)
    return linked, ineligible
