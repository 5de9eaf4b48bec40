# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the holdout-controlled tests, Holm's adjustment and the matched intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from synthrisk.exceptions import ParameterError
from synthrisk.stats.holdout import (
    ALPHA,
    auc_test,
    holdout_test,
    holm,
    holm_levels,
    level_text,
    matched_interval,
    mean_difference_test,
    paired_difference_test,
    share_test,
)

Z95 = float(stats.norm.ppf(0.975))


def _normal_test(effect: float, se: float, level: float = 0.95) -> dict[str, object]:
    """What the module promises for a normal test: one-sided p, two-sided interval."""
    low, high = stats.norm.interval(level, loc=effect, scale=se)
    return {"p_value": float(stats.norm.sf(effect / se)), "ci": [low, high]}


# --- holm -----------------------------------------------------------------------


def test_holm_hand_computed_example() -> None:
    # sorted 0.01, 0.03, 0.04 times 3, 2, 1: 0.03, 0.06, 0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_holm_caps_at_one_and_keeps_the_input_order() -> None:
    # sorted 0.2, 0.5, 0.9 times 3, 2, 1: 0.6, 1.0, 0.9 -> 0.6, 1, 1
    assert holm([0.5, 0.9, 0.2]) == pytest.approx([1.0, 1.0, 0.6])
    assert holm([0.4, 0.001]) == pytest.approx([0.4, 0.002])


def test_holm_single_and_empty() -> None:
    assert holm([0.03]) == [0.03]
    assert holm([]) == []


def test_holm_ties_get_the_same_adjusted_value() -> None:
    # sorted 0.01, 0.01, 0.02, 0.5 times 4, 3, 2, 1: 0.04, 0.03, 0.04, 0.5
    assert holm([0.02, 0.01, 0.5, 0.01]) == pytest.approx([0.04, 0.04, 0.5, 0.04])


def test_holm_properties_on_random_p_values() -> None:
    rng = np.random.default_rng(7)
    for k in (1, 2, 5, 20):
        p = rng.random(k) ** 3
        adjusted = np.array(holm(list(p)))
        assert adjusted.shape == (k,)
        assert np.all(adjusted >= p)
        assert np.all(adjusted <= 1.0)
        assert np.all(adjusted <= np.minimum(1.0, p * k) + 1e-15)
        # the adjustment keeps the order of the p-values
        order = np.argsort(p, kind="stable")
        assert np.all(np.diff(adjusted[order]) >= 0.0)
        # the smallest p-value is multiplied by k (Bonferroni's step)
        assert adjusted[order[0]] == pytest.approx(min(1.0, p[order[0]] * k))


def test_holm_step_down_against_a_hand_written_procedure() -> None:
    rng = np.random.default_rng(11)
    for _ in range(20):
        p = rng.random(6) * 0.05
        rejected = np.zeros(6, dtype=bool)
        for step, index in enumerate(np.argsort(p, kind="stable")):
            if p[index] >= ALPHA / (6 - step):
                break
            rejected[index] = True
        assert list(np.array(holm(list(p))) < ALPHA) == list(rejected)


# --- holm_levels ----------------------------------------------------------------


def test_holm_levels_hand_computed_examples() -> None:
    # sorted 0.001 (x3 < 0.05), 0.03 (x2 = 0.06, stops at step 2): the rejected test
    # keeps 0.05/3, the others the level of the step that stopped, 0.05/2
    assert holm_levels([0.001, 0.04, 0.03], 0.05) == pytest.approx(
        [0.05 / 3, 0.025, 0.025]
    )
    assert holm_levels([0.01], 0.05) == pytest.approx([0.05])
    assert holm_levels([], 0.05) == []
    # all rejected: each its own step's level
    assert holm_levels([0.001, 0.002, 0.003], 0.05) == pytest.approx(
        [0.05 / 3, 0.05 / 2, 0.05]
    )
    # none rejected: everyone the first step's level
    assert holm_levels([0.5, 0.2, 0.9], 0.05) == pytest.approx([0.05 / 3] * 3)


def test_holm_levels_ties_take_the_most_lenient_level_of_the_tie() -> None:
    # sorted 0.01, 0.01 (both rejected: 0.03, 0.02 < 0.05), 0.5 (stops at step 3)
    assert holm_levels([0.01, 0.5, 0.01], 0.05) == pytest.approx([0.025, 0.05, 0.025])


def test_holm_levels_agree_with_holm_decisions() -> None:
    rng = np.random.default_rng(3)
    for k in (1, 3, 8, 15):
        for _ in range(25):
            p = np.round(rng.random(k) ** 4, 3)  # rounding makes ties
            for alpha in (0.01, 0.05, 0.1):
                levels = np.array(holm_levels(list(p), alpha))
                adjusted = np.array(holm(list(p)))
                assert list(p < levels) == list(adjusted < alpha)
                assert np.all(levels >= alpha / k - 1e-15)
                assert np.all(levels <= alpha + 1e-15)


@pytest.mark.parametrize("alpha", [0.0, 0.5, -0.1, 1.0])
def test_holm_levels_rejects_alpha_outside_zero_half(alpha: float) -> None:
    with pytest.raises(ParameterError, match="alpha"):
        holm_levels([0.01], alpha)


# --- holdout_test -----------------------------------------------------------------


def test_holdout_test_normal_p_value_and_interval() -> None:
    got = holdout_test(
        statistic="share", effect=0.03, se=0.01, n=500, estimate=0.13, control=0.1
    )
    expected = _normal_test(0.03, 0.01)
    assert got["p_value"] == pytest.approx(expected["p_value"])
    assert got["ci"] == pytest.approx(expected["ci"])
    assert got["ci"] == pytest.approx([0.03 - Z95 * 0.01, 0.03 + Z95 * 0.01])
    assert got["statistic"] == "share"
    assert got["n"] == 500
    assert got["estimate"] == pytest.approx(0.13)
    assert got["control"] == pytest.approx(0.1)
    assert got["null"] == 0.0
    assert got["confidence_level"] == 0.95


def test_holdout_test_confidence_level_and_p_value_override() -> None:
    got = holdout_test(
        statistic="s",
        effect=-0.02,
        se=0.01,
        n=10,
        estimate=0.0,
        control=0.02,
        confidence_level=0.9,
        p_value=0.42,
    )
    assert got["p_value"] == 0.42
    assert got["ci"] == pytest.approx(_normal_test(-0.02, 0.01, 0.9)["ci"])


def test_holdout_test_zero_standard_error_is_degenerate() -> None:
    up = holdout_test(statistic="s", effect=0.1, se=0.0, n=5, estimate=1, control=0.9)
    assert up["ci"] == [0.1, 0.1]
    assert up["p_value"] == 0.0
    flat = holdout_test(statistic="s", effect=0.0, se=0.0, n=5, estimate=1, control=1)
    assert flat["ci"] == [0.0, 0.0]
    assert flat["p_value"] == 1.0


def test_holdout_test_non_finite_effect_is_undefined() -> None:
    got = holdout_test(
        statistic="s", effect=float("nan"), se=0.1, n=3, estimate=0, control=0
    )
    assert got["effect"] is None
    assert got["ci"] is None
    assert got["p_value"] is None
    assert got["n"] == 3


# --- paired_difference_test -----------------------------------------------------


def test_paired_difference_test_against_scipy_formulas() -> None:
    rng = np.random.default_rng(20241122)
    training = rng.binomial(1, 0.35, size=400).astype(float)
    holdout = rng.binomial(1, 0.25, size=400).astype(float)
    got = paired_difference_test(training, holdout, statistic="hit")
    d = training - holdout
    se = float(stats.sem(d))
    expected = _normal_test(float(d.mean()), se)
    assert got["effect"] == pytest.approx(float(np.mean(d)))
    assert got["p_value"] == pytest.approx(expected["p_value"])
    assert got["ci"] == pytest.approx(expected["ci"])
    assert got["estimate"] == pytest.approx(training.mean())
    assert got["control"] == pytest.approx(holdout.mean())
    assert got["n"] == 400
    # the z statistic is the paired t statistic, compared with the normal distribution
    t = stats.ttest_rel(training, holdout, alternative="greater")
    assert got["effect"] / se == pytest.approx(float(t.statistic))
    assert got["p_value"] == pytest.approx(float(t.pvalue), rel=0.05)


def test_paired_difference_test_hand_computed() -> None:
    # differences 1, 0, 1, 0: mean 0.5, sd sqrt(1/3), se sqrt(1/3) / 2
    got = paired_difference_test(
        np.array([1.0, 1.0, 1.0, 0.0]), np.array([0.0, 1.0, 0.0, 0.0]), statistic="s"
    )
    se = math.sqrt(1 / 3) / 2
    assert got["effect"] == pytest.approx(0.5)
    assert got["ci"] == pytest.approx([0.5 - Z95 * se, 0.5 + Z95 * se])
    assert got["p_value"] == pytest.approx(float(stats.norm.sf(0.5 / se)))
    assert got["estimate"] == pytest.approx(0.75)
    assert got["control"] == pytest.approx(0.25)


def test_paired_difference_test_empty_is_undefined() -> None:
    got = paired_difference_test(np.array([]), np.array([]), statistic="s")
    assert got["effect"] is None
    assert got["p_value"] is None
    assert got["n"] == 0


def test_paired_difference_test_null_p_values_are_uniform_across_seeds() -> None:
    p_values = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        both = rng.binomial(1, 0.3, size=(2, 300)).astype(float)
        p_values.append(
            paired_difference_test(both[0], both[1], statistic="s")["p_value"]
        )
    p = np.array(p_values)
    assert stats.kstest(p, "uniform").pvalue > 0.01
    assert 0.02 <= float(np.mean(p < 0.05)) <= 0.09


def test_paired_difference_test_shifted_gives_a_small_p_value() -> None:
    rng = np.random.default_rng(5)
    training = rng.binomial(1, 0.4, size=300).astype(float)
    holdout = rng.binomial(1, 0.2, size=300).astype(float)
    got = paired_difference_test(training, holdout, statistic="s")
    assert got["p_value"] < 1e-4
    assert got["ci"][0] > 0.0
    # the other direction: no excess
    assert paired_difference_test(holdout, training, statistic="s")["p_value"] > 0.99


# --- mean_difference_test (Welch) -----------------------------------------------


def test_mean_difference_test_against_scipy_welch() -> None:
    rng = np.random.default_rng(20241122)
    training = rng.normal(0.3, 1.0, size=250)
    holdout = rng.normal(0.0, 2.0, size=120)
    got = mean_difference_test(training, holdout, statistic="dist")
    effect = float(training.mean() - holdout.mean())
    se = math.hypot(stats.sem(training), stats.sem(holdout))
    expected = _normal_test(effect, se)
    assert got["effect"] == pytest.approx(effect)
    assert got["p_value"] == pytest.approx(expected["p_value"])
    assert got["ci"] == pytest.approx(expected["ci"])
    assert got["n"] == 120
    assert got["estimate"] == pytest.approx(training.mean())
    assert got["control"] == pytest.approx(holdout.mean())
    welch = stats.ttest_ind(training, holdout, equal_var=False, alternative="greater")
    assert effect / se == pytest.approx(float(welch.statistic))
    assert got["p_value"] == pytest.approx(float(welch.pvalue), rel=0.05)


def test_mean_difference_test_drops_nan_and_inf_and_needs_two_per_side() -> None:
    # one rule with compare_means: NaN and ±inf dropped, and counted
    training = np.array([1.0, np.nan, 2.0, np.inf, 4.0])
    holdout = np.array([0.0, 1.0, -np.inf, np.nan])
    got = mean_difference_test(training, holdout, statistic="s")
    expected = mean_difference_test(
        np.array([1.0, 2.0, 4.0]), np.array([0.0, 1.0]), statistic="s"
    )
    assert got["n_dropped_training"] == 2
    assert got["n_dropped_holdout"] == 2
    assert expected["n_dropped_training"] == expected["n_dropped_holdout"] == 0
    for key in ("n_dropped_training", "n_dropped_holdout"):
        got.pop(key), expected.pop(key)
    assert got == expected
    assert got["n"] == 2
    assert got["effect"] == pytest.approx(7 / 3 - 0.5)
    # Welch's standard error of the kept values: sqrt(7/3 / 3 + 1/2 / 2)
    half = got["ci"][1] - got["effect"]
    assert half == pytest.approx(1.959964 * math.sqrt(7 / 9 + 0.25), rel=1e-6)
    short = mean_difference_test(
        np.array([1.0, 2.0]), holdout[:1], statistic="s", confidence_level=0.9
    )
    assert short["effect"] is None
    assert short["p_value"] is None
    # an undefined test says at which level it would have been read
    assert short["confidence_level"] == 0.9


def test_mean_difference_test_null_p_values_are_uniform_across_seeds() -> None:
    p_values = []
    for seed in range(200):
        rng = np.random.default_rng(1000 + seed)
        training, holdout = rng.normal(size=200), rng.normal(size=150)
        p_values.append(
            mean_difference_test(training, holdout, statistic="s")["p_value"]
        )
    p = np.array(p_values)
    assert stats.kstest(p, "uniform").pvalue > 0.01
    assert 0.02 <= float(np.mean(p < 0.05)) <= 0.09


def test_mean_difference_test_shifted_gives_a_small_p_value() -> None:
    rng = np.random.default_rng(9)
    got = mean_difference_test(
        rng.normal(0.5, 1.0, size=200), rng.normal(0.0, 1.0, size=200), statistic="s"
    )
    assert got["p_value"] < 1e-4
    assert got["ci"][0] > 0.0


# --- share_test and auc_test --------------------------------------------------------


def test_share_test_against_the_null() -> None:
    rng = np.random.default_rng(4)
    values = rng.random(150)
    got = share_test(values, statistic="share", null=0.4)
    mean, se = float(values.mean()), float(stats.sem(values))
    expected = _normal_test(mean - 0.4, se)
    assert got["effect"] == pytest.approx(mean - 0.4)
    assert got["estimate"] == pytest.approx(mean)
    assert got["control"] == 0.4
    assert got["null"] == 0.4
    assert got["p_value"] == pytest.approx(expected["p_value"])
    assert got["ci"] == pytest.approx(expected["ci"])
    # a permutation p-value replaces the normal one; the interval stays normal
    replaced = share_test(values, statistic="share", null=0.4, p_value=0.01)
    assert replaced["p_value"] == 0.01
    assert replaced["ci"] == pytest.approx(expected["ci"])
    assert share_test(values[:1], statistic="share")["p_value"] is None


def test_auc_test_against_mann_whitney_and_pairwise_delong() -> None:
    rng = np.random.default_rng(8)
    x = np.round(rng.normal(0.4, 1.0, size=60), 1)  # rounding makes ties
    y = np.round(rng.normal(0.0, 1.0, size=45), 1)
    got = auc_test(x, y, statistic="auc")
    auc = float(stats.mannwhitneyu(x, y).statistic) / (x.size * y.size)
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    se = math.sqrt(psi.mean(1).var(ddof=1) / x.size + psi.mean(0).var(ddof=1) / y.size)
    expected = _normal_test(auc - 0.5, se)
    assert got["effect"] == pytest.approx(auc - 0.5)
    assert got["estimate"] == pytest.approx(auc)
    assert got["control"] == 0.5
    assert got["null"] == 0.5
    assert got["n"] == 45
    assert got["p_value"] == pytest.approx(expected["p_value"])
    assert got["ci"] == pytest.approx(expected["ci"])
    assert auc_test(x, y[:1], statistic="auc")["p_value"] is None


# --- matched_interval and level_text ------------------------------------------------


def test_matched_interval_documented_examples() -> None:
    low, high = matched_interval(0.02, (0.0, 0.04), level=0.005, significant=False)
    assert (round(low, 4), round(high, 4)) == (-0.0063, 0.0463)
    low, high = matched_interval(
        0.2, (0.19, 0.21), level=0.005, p_value=0.01, significant=False
    )
    assert (round(low, 4), round(high, 4)) == (-0.0214, 0.2131)


def test_matched_interval_rescales_by_the_normal_quantiles() -> None:
    effect, se = 0.05, 0.01
    ci = (effect - Z95 * se, effect + Z95 * se)
    for level in (0.025, 0.01, 0.005, 0.05 / 7):
        low, high = matched_interval(effect, ci, level=level, significant=True)
        z = float(stats.norm.isf(level))
        assert (low, high) == pytest.approx((effect - z * se, effect + z * se))
    # at the interval's own one-sided level nothing changes
    assert matched_interval(effect, ci, level=0.025, significant=True) == (
        pytest.approx(ci)
    )


def test_matched_interval_lower_end_follows_the_decision() -> None:
    # a normal interval far from 0 that the adjusted test does not reject: 0
    low, high = matched_interval(0.2, (0.19, 0.21), level=0.005, significant=False)
    assert low == 0.0
    assert high > 0.21
    # an interval through 0 for a rejected test: the smallest positive number
    low, _ = matched_interval(0.01, (-0.01, 0.03), level=0.01, significant=True)
    assert low == math.ulp(0.0)
    # a permutation p-value that is significant: the bound it implies
    low, _ = matched_interval(
        0.02, (-0.001, 0.041), level=0.01, p_value=0.001, significant=True
    )
    implied = 0.02 * (1 - stats.norm.isf(0.01) / stats.norm.isf(0.001))
    assert low == pytest.approx(implied)
    assert low > 0.0


def test_level_text_documented_and_edge_values() -> None:
    assert level_text(0.9) == "90 %"
    assert level_text(0.95) == "95 %"
    assert level_text(1 - 2 * 0.05 / 8) == "98.75 %"
    assert level_text(1 - 0.1 / 120) == "99.9167 %"
    assert level_text(0.99) == "99 %"
    assert level_text(1.0) == "100 %"


def test_paired_difference_test_single_pair_is_undefined() -> None:
    got = paired_difference_test(np.array([1.0]), np.array([0.0]), statistic="s")
    assert got["p_value"] is None


def test_holdout_test_with_an_unbounded_standard_error_is_undefined() -> None:
    got = holdout_test(
        statistic="s", effect=0.3, se=float("inf"), n=5, estimate=0.5, control=0.2
    )
    assert got["p_value"] is None
    assert got["ci"] is None
