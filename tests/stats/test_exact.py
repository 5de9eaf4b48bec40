# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the exact two-proportion tests, Newcombe's interval and the detectable excess."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from synthrisk.exceptions import ParameterError
from synthrisk.stats.exact import (
    BOSCHLOO_CELLS,
    _fisher_tails,
    detectable_excess,
    excess_greater_p,
    fisher_greater_p,
    min_p_resampling,
    newcombe_interval,
)


def _fisher_scipy(a: int, n_a: int, b: int, n_b: int, alternative: str) -> float:
    table = [[a, n_a - a], [b, n_b - b]]
    return float(stats.fisher_exact(table, alternative=alternative).pvalue)


def _boschloo_scipy(a: int, n_a: int, b: int, n_b: int) -> float:
    table = [[a, n_a - a], [b, n_b - b]]
    return float(stats.boschloo_exact(table, alternative="greater", n=32).pvalue)


def _detection_rate(
    k: int, n_a: int, b: int, n_b: int, level: float, draws: np.ndarray
) -> float:
    """Share of the first arm's chance counts ``draws`` that ``k`` extra people make significant."""
    counts = np.minimum(draws + k, n_a)
    p_of = {
        int(c): _fisher_scipy(int(c), n_a, b, n_b, "greater") for c in np.unique(counts)
    }
    return float(np.mean([p_of[int(c)] < level for c in counts]))


# --- excess_greater_p ---------------------------------------------------------


def test_excess_greater_p_one_person_per_arm_by_hand() -> None:
    # Boschloo: only the observed table (1 of 1 against 0 of 1) is as extreme;
    # its probability pi * (1 - pi) is largest at pi = 1/2
    assert excess_greater_p(1, 1, 0, 1) == pytest.approx(0.25, abs=1e-9)


def test_excess_greater_p_two_people_per_arm_by_hand() -> None:
    # Fisher's p of 2/2 against 0/2 is C(2,2) C(2,0) / C(4,2) = 1/6; Boschloo's test
    # only counts that table again: sup pi^2 (1 - pi)^2 = 1/16
    assert excess_greater_p(2, 2, 0, 2) == pytest.approx(1 / 16, abs=1e-9)
    assert _fisher_scipy(2, 2, 0, 2, "greater") == pytest.approx(1 / 6)


def test_excess_greater_p_equal_proportions_use_fisher_by_hand() -> None:
    # 1/2 against 1/2: P(X >= 1) = 1 - C(2,0) C(2,2) / C(4,2) = 5/6
    assert excess_greater_p(1, 2, 1, 2) == pytest.approx(5 / 6)


def test_excess_greater_p_large_arms_are_the_hypergeometric_tail() -> None:
    # 3 of 300 against 0 of 300: all 3 people fall in the first arm
    expected = Fraction(math.comb(300, 3), math.comb(600, 3))
    assert BOSCHLOO_CELLS < 300 * 300
    assert excess_greater_p(3, 300, 0, 300) == pytest.approx(float(expected), rel=1e-9)


@pytest.mark.parametrize(
    ("a", "n_a", "b", "n_b"),
    [(4, 20, 0, 388), (3, 10, 0, 10), (7, 25, 2, 30), (12, 40, 5, 60), (1, 5, 0, 7)],
)
def test_excess_greater_p_small_arms_match_scipy_boschloo(
    a: int, n_a: int, b: int, n_b: int
) -> None:
    assert n_a * n_b <= BOSCHLOO_CELLS
    got = excess_greater_p(a, n_a, b, n_b)
    assert got == pytest.approx(_boschloo_scipy(a, n_a, b, n_b), rel=1e-9, abs=1e-15)
    # Boschloo's test is uniformly more powerful than Fisher's
    assert got <= _fisher_scipy(a, n_a, b, n_b, "greater") * (1 + 1e-9)


@pytest.mark.parametrize(
    ("a", "n_a", "b", "n_b"),
    [(30, 300, 10, 300), (5, 1000, 1, 800), (40, 500, 45, 500), (0, 400, 3, 400)],
)
def test_excess_greater_p_large_arms_match_scipy_fisher(
    a: int, n_a: int, b: int, n_b: int
) -> None:
    assert n_a * n_b > BOSCHLOO_CELLS
    assert excess_greater_p(a, n_a, b, n_b) == pytest.approx(
        _fisher_scipy(a, n_a, b, n_b, "greater"), rel=1e-9
    )


def test_excess_greater_p_switches_test_at_the_cell_limit() -> None:
    assert BOSCHLOO_CELLS == 200 * 250
    at_limit = excess_greater_p(30, 200, 20, 250)
    assert at_limit == pytest.approx(_boschloo_scipy(30, 200, 20, 250), rel=1e-9)
    over_limit = excess_greater_p(30, 201, 20, 250)
    assert over_limit == pytest.approx(
        _fisher_scipy(30, 201, 20, 250, "greater"), rel=1e-9
    )


def test_excess_greater_p_is_one_sided() -> None:
    # the first arm ahead: small; the same table with the arms swapped: large
    assert excess_greater_p(8, 20, 1, 20) < 0.05
    assert excess_greater_p(1, 20, 8, 20) > 0.95
    # a first arm behind the second is tested by Fisher's exact test, whichever the size
    for a, n_a, b, n_b in [(1, 20, 8, 20), (2, 30, 9, 25), (10, 400, 30, 400)]:
        assert excess_greater_p(a, n_a, b, n_b) == pytest.approx(
            _fisher_scipy(a, n_a, b, n_b, "greater"), rel=1e-9
        )
    # on large arms, swapping them gives the other tail of the same Fisher test
    assert excess_greater_p(30, 400, 10, 400) == pytest.approx(
        _fisher_scipy(10, 400, 30, 400, "less"), rel=1e-9, abs=1e-15
    )


def test_excess_greater_p_falls_as_the_first_count_grows() -> None:
    small = [excess_greater_p(a, 20, 2, 30) for a in range(21)]
    large = [excess_greater_p(a, 300, 6, 300) for a in range(0, 301, 10)]
    for values in (small, large):
        assert all(x >= y for x, y in itertools.pairwise(values))
        assert all(0.0 <= x <= 1.0 for x in values)


def test_excess_greater_p_empty_arm_or_no_people_is_one() -> None:
    assert excess_greater_p(0, 100, 3, 100) == 1.0
    assert excess_greater_p(0, 100, 0, 100) == 1.0
    assert excess_greater_p(3, 0, 0, 100) == 1.0
    assert excess_greater_p(3, 10, 0, 0) == 1.0


def test_excess_greater_p_whole_arm_against_none() -> None:
    # n of n against 0 of n: the most extreme table of all
    got = excess_greater_p(10, 10, 0, 10)
    assert got == pytest.approx(_boschloo_scipy(10, 10, 0, 10), rel=1e-9)
    assert got <= _fisher_scipy(10, 10, 0, 10, "greater")
    assert _fisher_scipy(10, 10, 0, 10, "greater") == pytest.approx(
        1 / math.comb(20, 10)
    )
    # n of n against n of n: no evidence
    assert excess_greater_p(10, 10, 10, 10) == pytest.approx(1.0)


# --- newcombe_interval --------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "n_a", "b", "n_b", "low", "high"),
    [
        # Newcombe (1998), Table II, method 10
        (56, 70, 48, 80, 0.0524, 0.3339),
        (9, 10, 3, 10, 0.1705, 0.8090),
        (5, 56, 0, 29, -0.0381, 0.1926),
        (0, 10, 0, 20, -0.1611, 0.2775),
        (0, 10, 0, 10, -0.2775, 0.2775),
        (10, 10, 0, 20, 0.6791, 1.0),
        (10, 10, 0, 10, 0.6075, 1.0),
    ],
)
def test_newcombe_interval_matches_the_published_examples(
    a: int, n_a: int, b: int, n_b: int, low: float, high: float
) -> None:
    got = newcombe_interval(a, n_a, b, n_b)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_newcombe_interval_is_built_from_scipy_wilson_bounds() -> None:
    a, n_a, b, n_b = 13, 40, 6, 55
    l_a, u_a = stats.binomtest(a, n_a).proportion_ci(0.9, method="wilson")
    l_b, u_b = stats.binomtest(b, n_b).proportion_ci(0.9, method="wilson")
    p_a, p_b = a / n_a, b / n_b
    low = p_a - p_b - math.hypot(p_a - l_a, u_b - p_b)
    high = p_a - p_b + math.hypot(u_a - p_a, p_b - l_b)
    got = newcombe_interval(a, n_a, b, n_b, confidence_level=0.9)
    assert got == pytest.approx((low, high), rel=1e-9)


def test_newcombe_interval_contains_the_difference_and_widens_with_the_level() -> None:
    a, n_a, b, n_b = 7, 30, 2, 25
    diff = a / n_a - b / n_b
    previous = (diff, diff)
    for level in (0.5, 0.8, 0.95, 0.99, 0.999):
        low, high = newcombe_interval(a, n_a, b, n_b, confidence_level=level)
        assert -1.0 <= low < diff < high <= 1.0
        assert low < previous[0]
        assert high > previous[1]
        previous = (low, high)


def test_newcombe_interval_is_antisymmetric_in_the_arms() -> None:
    low, high = newcombe_interval(7, 30, 2, 25)
    swapped = newcombe_interval(2, 25, 7, 30)
    assert swapped == pytest.approx((-high, -low), rel=1e-12)


def test_newcombe_interval_stays_inside_minus_one_one_at_the_extremes() -> None:
    low, high = newcombe_interval(5, 5, 0, 5, confidence_level=0.999)
    assert 0.0 < low < 1.0
    assert high == 1.0
    low, high = newcombe_interval(0, 5, 5, 5, confidence_level=0.999)
    assert low == -1.0
    assert -1.0 < high < 0.0


# --- detectable_excess --------------------------------------------------------


def test_detectable_excess_with_no_chance_count_by_hand() -> None:
    # holdout rate 0: the first arm's count is k. Fisher's p of 1 of 20 against 0
    # of 388 is 20/408 (not significant at 0.005); of 2 of 20 it is
    # C(20,2) / C(408,2) = 190 / 83028 (significant): 2 extra people are needed
    assert _fisher_scipy(1, 20, 0, 388, "greater") == pytest.approx(20 / 408)
    assert _fisher_scipy(2, 20, 0, 388, "greater") == pytest.approx(190 / 83028)
    assert detectable_excess(20, 0, 388, level=0.005) == 2
    assert detectable_excess(20, 0, 388, level=0.05) == 1


@pytest.mark.parametrize(
    ("n_a", "b", "n_b", "level"),
    [(50, 5, 100, 0.005), (100, 20, 400, 0.005), (30, 3, 60, 0.05)],
)
def test_detectable_excess_reaches_the_power_in_simulation(
    n_a: int, b: int, n_b: int, level: float
) -> None:
    k = detectable_excess(n_a, b, n_b, level=level, power=0.8)
    assert k is not None
    assert k >= 1
    draws = np.random.default_rng(20241122).binomial(n_a, b / n_b, size=4000)
    # with k extra people the test finds the excess at least 80 % of the time;
    # one fewer does not (the margins are many simulation standard errors wide)
    assert _detection_rate(k, n_a, b, n_b, level, draws) >= 0.8 - 0.02
    assert _detection_rate(k - 1, n_a, b, n_b, level, draws) < 0.8


def test_detectable_excess_grows_with_the_arm_size() -> None:
    # the same holdout rate: a larger first arm has more chance people to beat
    got = [detectable_excess(n, 20, 400, level=0.005) for n in (10, 20, 50, 100, 200)]
    assert all(k is not None for k in got)
    assert got == sorted(got)
    assert got[0] < got[-1]


def test_detectable_excess_shrinks_with_the_holdout_size() -> None:
    got = [detectable_excess(50, 0, n, level=0.005) for n in (10, 20, 50, 100, 400)]
    assert all(k is not None for k in got)
    assert got == sorted(got, reverse=True)
    assert got[0] > got[-1]


def test_detectable_excess_grows_with_power_and_a_stricter_level() -> None:
    by_power = [
        detectable_excess(50, 5, 100, level=0.005, power=p) for p in (0.5, 0.8, 0.99)
    ]
    by_level = [detectable_excess(50, 5, 100, level=x) for x in (0.05, 0.005, 0.001)]
    for got in (by_power, by_level):
        assert all(k is not None for k in got)
        assert got == sorted(got)
        assert got[0] < got[-1]


def test_detectable_excess_none_when_the_limit_is_not_enough() -> None:
    assert detectable_excess(20, 0, 388, level=0.005, limit=1) is None
    assert detectable_excess(20, 0, 388, level=0.005, limit=2) == 2
    # an arm too small for any excess to be significant
    assert detectable_excess(2, 0, 3, level=0.005) is None
    # an empty arm on either side
    assert detectable_excess(0, 0, 100, level=0.05) is None
    assert detectable_excess(20, 0, 0, level=0.05) is None


@pytest.mark.parametrize("level", [0.05, 1e-4])
@pytest.mark.parametrize(
    ("n_a", "b", "n_b"), [(5, 0, 10), (20, 3, 388), (388, 50, 9758)]
)
def test_detectable_excess_is_the_least_k_by_scalar_fisher_tests(
    n_a: int, b: int, n_b: int, level: float
) -> None:
    # the definition written out: every chance count's p-value one at a time, the
    # detecting counts' probabilities summed in order, every k from 1 up
    chance = stats.binom(n_a, b / n_b)
    counts = np.arange(0, int(chance.ppf(1 - 1e-4)) + 1 if b else 1)
    weights = chance.pmf(counts)

    def detected(k: int) -> float:
        return sum(
            w
            for c, w in zip(counts, weights, strict=True)
            if fisher_greater_p(int(min(c + k, n_a)), n_a, b, n_b) < level
        )

    want = next((k for k in range(1, n_a + 1) if detected(k) >= 0.8), None)
    assert detectable_excess(n_a, b, n_b, level=level) == want


# --- min_p_resampling ---------------------------------------------------------


def _resampled(
    linked: np.ndarray,
    eligible: np.ndarray,
    first: np.ndarray,
    n_resamples: int = 9_999,
    seed: int = 0,
) -> float:
    return min_p_resampling(
        linked,
        eligible,
        first,
        n_resamples=n_resamples,
        rng=np.random.default_rng(seed),
    )


def _within_resampling_error(got: float, want: float, n_resamples: int) -> bool:
    """``got`` within 4 standard errors (and one step) of the exact ``want``."""
    return abs(got - want) <= 4 * math.sqrt(want * (1 - want) / n_resamples) + 1 / (
        1 + n_resamples
    )


def test_fisher_tails_are_scipys_hypergeometric_tail_where_there_is_an_excess() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(2, 5000))
        linked = int(rng.integers(1, n))
        n_a = int(rng.integers(1, n))
        a = int(rng.integers(max(0, n_a - (n - linked)), min(linked, n_a) + 1))
        got = _fisher_tails(np.array([a]), np.array([n_a]), n, linked)[0]
        if a > 0 and a * (n - n_a) > (linked - a) * n_a:
            want = stats.hypergeom.sf(a - 1, n, linked, n_a)
            assert got == pytest.approx(want, rel=1e-9, abs=1e-300)
            assert got == pytest.approx(fisher_greater_p(a, n_a, linked - a, n - n_a))
        else:  # no excess: not evidence, the largest p-value
            assert got == 1.0


def test_min_p_resampling_identical_attacks_cost_one_test() -> None:
    # 18 of 150 training people linked, 0 of 50 holdout: Fisher's p is exact here (all
    # eligible: the relabelled count is hypergeometric), 0.0048; Bonferroni over five
    # identical attacks would be 0.024
    n, n_first, k = 200, 150, 18
    first = np.arange(n) < n_first
    flags = np.arange(n) < k
    fisher = fisher_greater_p(k, n_first, 0, n - n_first)
    assert fisher == pytest.approx(math.comb(n_first, k) / math.comb(n, k), rel=1e-12)
    eligible = np.ones((5, n), dtype=bool)
    five = _resampled(np.tile(flags, (5, 1)), eligible, first)
    one = _resampled(flags[None], eligible[:1], first)
    assert five == one  # the same groups of people, the same draws
    assert _within_resampling_error(five, fisher, 9_999)
    assert five < 2 * fisher < 5 * fisher <= 0.025


def test_min_p_resampling_independent_attacks_are_about_sidak() -> None:
    # five attacks, each linking its own 9 training people (and none of the holdout)
    # out of 1,000 and 1,000: nearly independent tests of p each, so the min-p
    # p-value is about Sidak's 1 - (1 - p)^5, just below Bonferroni's 5p
    n, n_first, k, m = 2000, 1000, 9, 5
    first = np.arange(n) < n_first
    linked = np.zeros((m, n), dtype=bool)
    for j in range(m):
        linked[j, j * k : (j + 1) * k] = True
    p = fisher_greater_p(k, n_first, 0, n - n_first)
    sidak = 1 - (1 - p) ** m
    got = _resampled(linked, np.ones((m, n), dtype=bool), first)
    assert 0.005 < sidak < m * p < 0.02
    assert _within_resampling_error(got, sidak, 9_999)
    assert got < m * p + 4 * math.sqrt(sidak / 9_999)


def test_min_p_resampling_is_the_exact_permutation_p_value() -> None:
    # 12 people, 6 training: all 924 labellings enumerated; three attacks with their own
    # eligible people, linked people overlapping
    first = np.arange(12) < 6
    linked = np.array(
        [
            [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0],
            [1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0],
            [0, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0],
        ],
        dtype=bool,
    )
    eligible = np.ones_like(linked)
    eligible[0, 8:10] = False
    eligible[1, 5] = eligible[1, 11] = False
    eligible[2, 0] = False
    linked &= eligible

    def smallest(labels: np.ndarray) -> float:
        out = 1.0
        for hit, can in zip(linked, eligible, strict=True):
            a, n_a = int((hit & labels).sum()), int((can & labels).sum())
            b, n_b = int((hit & ~labels).sum()), int((can & ~labels).sum())
            if a * n_b > b * n_a:  # an excess; otherwise not evidence (1)
                out = min(out, fisher_greater_p(a, n_a, b, n_b))
        return out

    observed = smallest(first)
    values = []
    for chosen in itertools.combinations(range(12), 6):
        labels = np.zeros(12, dtype=bool)
        labels[list(chosen)] = True
        values.append(smallest(labels))
    exact = float(np.mean(np.array(values) <= observed * (1 + 1e-9)))
    assert 0.01 < exact < 0.5
    got = _resampled(linked, eligible, first, n_resamples=19_999)
    assert _within_resampling_error(got, exact, 19_999)


def test_min_p_resampling_keeps_its_level_under_the_null() -> None:
    # correlated attacks (the same linkable people, each attack finding most of them),
    # their own ineligible people, labels drawn apart from the flags: exchangeable
    n_runs, n, n_first, m = 400, 300, 200, 5
    rejected = {0.01: 0, 0.1: 0}
    for seed in range(n_runs):
        rng = np.random.default_rng(seed)
        linkable = rng.random(n) < 0.08
        eligible = (rng.random(n) < 0.95) & (rng.random((m, n)) < 0.95)
        linked = (linkable & (rng.random((m, n)) < 0.8)) | (rng.random((m, n)) < 0.02)
        first = rng.permutation(n) < n_first
        p = _resampled(linked, eligible, first, n_resamples=199, seed=seed)
        for level in rejected:
            rejected[level] += p <= level
    # at most the level, beyond binomial noise (one-sided, 0.1 %) ...
    assert rejected[0.01] <= stats.binom.ppf(0.999, n_runs, 0.01)
    assert rejected[0.1] <= stats.binom.ppf(0.999, n_runs, 0.1)
    # ... and not far below it: the test is not merely conservative
    assert rejected[0.1] >= stats.binom.ppf(0.001, n_runs, 0.07)


def test_min_p_resampling_finds_a_planted_excess_and_is_seeded() -> None:
    rng = np.random.default_rng(7)
    n, n_first, m = 300, 200, 5
    first = np.arange(n) < n_first
    linked = rng.random((m, n)) < 0.02
    linked[:, :12] |= rng.random((m, 12)) < 0.9  # 12 training people, most attacks
    eligible = np.ones((m, n), dtype=bool)
    p = _resampled(linked, eligible, first, seed=3)
    assert p < 0.01
    assert p == _resampled(linked, eligible, first, seed=3)
    assert p != _resampled(linked, eligible, first, seed=4)
    # no excess anywhere: 1 without drawing
    assert _resampled(linked & ~first, eligible, first) == 1.0
    # the p-value is never below one step
    assert _resampled(
        np.tile(first, (m, 1)), eligible, first, n_resamples=99
    ) == pytest.approx(1 / 100)


def test_min_p_resampling_checks_its_shapes() -> None:
    flags = np.ones((2, 5), dtype=bool)
    with pytest.raises(ParameterError, match=r"\(n_tests, n_people\)"):
        _resampled(flags, flags[:1], np.ones(5, dtype=bool))
    with pytest.raises(ParameterError, match="is_first"):
        _resampled(flags, flags, np.ones(4, dtype=bool))
    with pytest.raises(ParameterError, match="n_resamples"):
        _resampled(flags, flags, np.ones(5, dtype=bool), n_resamples=0)
