# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the holdout control block: Wilson bounds, Fisher and Newcombe, and Welch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from synthrisk.stats.control import compare_means, compare_proportions, wilson_bounds
from synthrisk.stats.exact import newcombe_interval

Z95 = float(stats.norm.ppf(0.975))

CONTROL_KEYS = {
    "statistic",
    "real",
    "holdout",
    "effect",
    "ci",
    "confidence_level",
    "p_value",
    "test",
    "alternative",
    "n_real",
    "n_holdout",
}


# --- wilson_bounds ----------------------------------------------------------------


@pytest.mark.parametrize(("x", "n"), [(0, 10), (3, 10), (10, 10), (1, 1), (17, 250)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_wilson_bounds_match_scipy(x: int, n: int, level: float) -> None:
    z = float(stats.norm.ppf(0.5 + level / 2))
    expected = stats.binomtest(x, n).proportion_ci(level, method="wilson")
    got = wilson_bounds(x, n, z)
    assert got == pytest.approx((expected.low, expected.high), rel=1e-9, abs=1e-12)


def test_wilson_bounds_at_zero_and_n_by_hand() -> None:
    n = 20
    # at 0: [0, z^2 / (n + z^2)]; at n: [n / (n + z^2), 1]
    assert wilson_bounds(0, n, Z95) == pytest.approx((0.0, Z95**2 / (n + Z95**2)))
    assert wilson_bounds(n, n, Z95) == pytest.approx((n / (n + Z95**2), 1.0))


def test_wilson_bounds_half_by_hand() -> None:
    # 5 of 10 at z = 2: centre 1/2, half-width 2 sqrt(1/40 + 1/100) / 1.4
    low, high = wilson_bounds(5, 10, 2.0)
    half = 2 * math.sqrt(0.25 / 10 + 4 / 400) / 1.4
    assert (low, high) == pytest.approx((0.5 - half, 0.5 + half))


def test_wilson_bounds_take_fractional_successes() -> None:
    # an average over repeats lies between the integer counts' bounds
    low, high = wilson_bounds(2.5, 10, Z95)
    low2, high2 = wilson_bounds(2, 10, Z95)
    low3, high3 = wilson_bounds(3, 10, Z95)
    assert low2 < low < low3
    assert high2 < high < high3
    assert low < 0.25 < high


def test_wilson_bounds_empty_is_the_unit_interval() -> None:
    assert wilson_bounds(0, 0, Z95) == (0.0, 1.0)


# --- compare_proportions ------------------------------------------------------------


def test_compare_proportions_against_fisher_and_newcombe() -> None:
    got = compare_proportions(56, 70, 48, 80, statistic="match")
    assert set(got) == CONTROL_KEYS
    assert got["statistic"] == "match"
    assert got["real"] == pytest.approx(0.8)
    assert got["holdout"] == pytest.approx(0.6)
    assert got["effect"] == pytest.approx(0.2)
    # Newcombe (1998), Table II, method 10
    assert got["ci"] == pytest.approx([0.0524, 0.3339], abs=5e-5)
    assert got["ci"] == pytest.approx(list(newcombe_interval(56, 70, 48, 80)))
    fisher = stats.fisher_exact([[56, 14], [48, 32]], alternative="greater")
    assert got["p_value"] == pytest.approx(float(fisher.pvalue))
    assert got["alternative"] == "greater"
    assert got["confidence_level"] == 0.95
    assert got["n_real"] == 70
    assert got["n_holdout"] == 80
    assert "Fisher" in got["test"]
    assert "Newcombe" in got["test"]


def test_compare_proportions_tiny_table_by_hand() -> None:
    # 2 of 2 against 0 of 2: Fisher's one-sided p is C(2,2) C(2,0) / C(4,2) = 1/6
    got = compare_proportions(2, 2, 0, 2, statistic="s")
    assert got["effect"] == 1.0
    assert got["p_value"] == pytest.approx(1 / 6)
    low, high = got["ci"]
    assert high == 1.0
    assert 0.0 < low < 1.0
    # 1 of 2 against 1 of 2: no excess, P(X >= 1) = 5/6
    even = compare_proportions(1, 2, 1, 2, statistic="s")
    assert even["effect"] == 0.0
    assert even["p_value"] == pytest.approx(5 / 6)
    assert even["ci"][0] < 0.0 < even["ci"][1]


def test_compare_proportions_is_one_sided() -> None:
    ahead = compare_proportions(30, 100, 10, 100, statistic="s")
    behind = compare_proportions(10, 100, 30, 100, statistic="s")
    assert ahead["p_value"] < 0.001
    assert behind["p_value"] > 0.999
    assert ahead["ci"][0] > 0.0
    assert behind["ci"][1] < 0.0
    less = stats.fisher_exact([[30, 70], [10, 90]], alternative="less")
    assert behind["p_value"] == pytest.approx(float(less.pvalue))


def test_compare_proportions_rounds_average_successes_for_fisher_only() -> None:
    got = compare_proportions(2.6, 10, 1.0, 10, statistic="s")
    assert got["real"] == pytest.approx(0.26)
    assert got["effect"] == pytest.approx(0.16)
    fisher = stats.fisher_exact([[3, 7], [1, 9]], alternative="greater")
    assert got["p_value"] == pytest.approx(float(fisher.pvalue))
    # the interval uses the fractional count, between those of 2 and 3
    low2, high2 = compare_proportions(2, 10, 1, 10, statistic="s")["ci"]
    low3, high3 = compare_proportions(3, 10, 1, 10, statistic="s")["ci"]
    assert low2 < got["ci"][0] < low3
    assert high2 < got["ci"][1] < high3


def test_compare_proportions_rounds_half_counts_toward_no_excess() -> None:
    # 2.5 real and 2.5 holdout successes (averages of two repeats) are tested as 2
    # against 3: the real side's half down, the holdout side's up, the conservative
    # side of "real more at risk"; round() took 2 and 2 (halves to even)
    got = compare_proportions(2.5, 10, 2.5, 10, statistic="s")
    fisher = stats.fisher_exact([[2, 8], [3, 7]], alternative="greater")
    assert got["p_value"] == pytest.approx(float(fisher.pvalue))
    assert got["p_value"] == pytest.approx(0.8483, abs=1e-4)
    # 3.5 against 0.5: 3 against 1 (round() took 4 against 0: p 0.0433)
    got = compare_proportions(3.5, 10, 0.5, 10, statistic="s")
    assert got["p_value"] == pytest.approx(0.2910, abs=1e-4)
    before = stats.fisher_exact([[4, 6], [0, 10]], alternative="greater").pvalue
    assert before == pytest.approx(0.0433, abs=1e-4)
    # the proportions and the interval keep the unrounded counts
    assert got["effect"] == pytest.approx(0.3)
    # a half rounded up stays inside [0, n]: 9.5 of 10 holdout successes is 10
    assert compare_proportions(10.0, 10, 9.5, 10, statistic="s")["p_value"] == 1.0


def test_compare_proportions_interval_widens_with_the_level() -> None:
    narrow = compare_proportions(20, 90, 9, 110, statistic="s", confidence_level=0.8)
    wide = compare_proportions(20, 90, 9, 110, statistic="s", confidence_level=0.99)
    assert wide["ci"][0] < narrow["ci"][0] < narrow["effect"]
    assert narrow["effect"] < narrow["ci"][1] < wide["ci"][1]
    assert narrow["p_value"] == wide["p_value"]
    assert wide["confidence_level"] == 0.99
    assert wide["ci"] == pytest.approx(
        list(newcombe_interval(20, 90, 9, 110, confidence_level=0.99))
    )


def test_compare_proportions_stays_inside_minus_one_one() -> None:
    top = compare_proportions(10, 10, 0, 10, statistic="s", confidence_level=0.999)
    assert top["ci"][1] == 1.0
    bottom = compare_proportions(0, 10, 10, 10, statistic="s", confidence_level=0.999)
    assert bottom["ci"][0] == -1.0
    assert bottom["p_value"] == pytest.approx(1.0)


@pytest.mark.parametrize(("n_real", "n_holdout"), [(0, 10), (10, 0), (0, 0)])
def test_compare_proportions_empty_side_has_no_test(
    n_real: int, n_holdout: int
) -> None:
    got = compare_proportions(0, n_real, 0, n_holdout, statistic="s")
    assert set(got) == CONTROL_KEYS
    assert got["effect"] is None
    assert got["ci"] is None
    assert got["p_value"] is None
    assert got["n_real"] == n_real
    assert got["n_holdout"] == n_holdout
    assert (got["real"] is None) == (n_real == 0)
    assert (got["holdout"] is None) == (n_holdout == 0)


# --- compare_means --------------------------------------------------------------------


def test_compare_means_against_scipy_welch() -> None:
    rng = np.random.default_rng(20241122)
    real = rng.normal(0.4, 1.0, size=80)
    holdout = rng.normal(0.0, 2.5, size=35)
    got = compare_means(real, holdout, statistic="distance")
    assert set(got) == CONTROL_KEYS | {"n_dropped_real", "n_dropped_holdout"}
    one_sided = stats.ttest_ind(real, holdout, equal_var=False, alternative="greater")
    two_sided = stats.ttest_ind(real, holdout, equal_var=False)
    ci = two_sided.confidence_interval(0.95)
    assert got["effect"] == pytest.approx(float(real.mean() - holdout.mean()))
    assert got["p_value"] == pytest.approx(float(one_sided.pvalue))
    assert got["ci"] == pytest.approx([float(ci.low), float(ci.high)])
    assert got["real"] == pytest.approx(float(real.mean()))
    assert got["holdout"] == pytest.approx(float(holdout.mean()))
    assert got["n_real"] == 80
    assert got["n_holdout"] == 35
    assert got["alternative"] == "greater"
    assert "Welch" in got["test"]
    ci90 = two_sided.confidence_interval(0.9)
    at_90 = compare_means(real, holdout, statistic="distance", confidence_level=0.9)
    assert at_90["ci"] == pytest.approx([float(ci90.low), float(ci90.high)])


def test_compare_means_hand_computed() -> None:
    # means 2 and 0; variances 1 and 1 over 3 each: se sqrt(2/3); Welch dof 4
    got = compare_means(
        np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.0, 1.0]), statistic="s"
    )
    se = math.sqrt(2 / 3)
    t_crit = float(stats.t.ppf(0.975, 4))
    assert got["effect"] == pytest.approx(2.0)
    assert got["p_value"] == pytest.approx(float(stats.t.sf(2.0 / se, 4)))
    assert got["ci"] == pytest.approx([2.0 - t_crit * se, 2.0 + t_crit * se])


def test_compare_means_drops_non_finite_values() -> None:
    real = np.array([1.0, np.nan, 2.0, np.inf, 4.0])
    holdout = np.array([0.0, -np.inf, 1.0, 0.5])
    got = compare_means(real, holdout, statistic="s")
    clean = compare_means(
        np.array([1.0, 2.0, 4.0]), np.array([0.0, 1.0, 0.5]), statistic="s"
    )
    # NaN and ±inf dropped alike, and counted
    assert got["n_dropped_real"] == 2
    assert got["n_dropped_holdout"] == 1
    assert clean["n_dropped_real"] == clean["n_dropped_holdout"] == 0
    for key in ("n_dropped_real", "n_dropped_holdout"):
        got.pop(key), clean.pop(key)
    assert got == clean
    assert got["n_real"] == 3
    assert got["n_holdout"] == 3
    assert got["effect"] == pytest.approx(7 / 3 - 0.5)


def test_compare_means_needs_two_values_per_side() -> None:
    got = compare_means(np.array([1.0]), np.array([0.0, 1.0]), statistic="s")
    assert got["real"] == 1.0
    assert got["holdout"] == 0.5
    assert got["effect"] is None
    assert got["ci"] is None
    assert got["p_value"] is None
    empty = compare_means(np.array([]), np.array([np.nan]), statistic="s")
    assert empty["real"] is None
    assert empty["holdout"] is None
    assert empty["n_holdout"] == 0


def test_compare_means_constant_sides_are_exact() -> None:
    up = compare_means(np.ones(3), np.zeros(4), statistic="s")
    assert up["effect"] == 1.0
    assert up["ci"] == [1.0, 1.0]
    assert up["p_value"] == 0.0
    same = compare_means(np.ones(3), np.ones(4), statistic="s")
    assert same["effect"] == 0.0
    assert same["p_value"] == 1.0


def test_compare_means_null_and_shifted() -> None:
    p_values = []
    for seed in range(150):
        rng = np.random.default_rng(500 + seed)
        p_values.append(
            compare_means(rng.normal(size=60), rng.normal(size=40), statistic="s")[
                "p_value"
            ]
        )
    assert stats.kstest(np.array(p_values), "uniform").pvalue > 0.01
    rng = np.random.default_rng(2)
    shifted = compare_means(
        rng.normal(1.0, 1.0, size=60), rng.normal(size=40), statistic="s"
    )
    assert shifted["p_value"] < 1e-4
    assert shifted["ci"][0] > 0.0
