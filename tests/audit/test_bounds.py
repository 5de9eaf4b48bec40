# SPDX-License-Identifier: BSD-3-Clause
"""Effective-ε bounds: Clopper–Pearson arithmetic, thresholds chosen apart, validity."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from synthrisk.audit.bounds import (
    attack_bound,
    epsilon_lower_bound,
    mid_ranks,
    one_run_epsilon,
    roc_curve,
)
from synthrisk.stats.ranking import roc_auc


def _cp(k: int, n: int, level: float) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return ci.low, ci.high


def test_epsilon_lower_bound_matches_the_formula() -> None:
    eps, tpr_lo, tpr_hi, fpr_lo, fpr_hi = epsilon_lower_bound(
        80, 100, 10, 120, delta=0.01, confidence_level=0.9
    )
    lo_t, hi_t = _cp(80, 100, 0.95)
    lo_f, hi_f = _cp(10, 120, 0.95)
    assert (tpr_lo[0], tpr_hi[0]) == pytest.approx((lo_t, hi_t), rel=1e-9)
    assert (fpr_lo[0], fpr_hi[0]) == pytest.approx((lo_f, hi_f), rel=1e-9)
    expected = max(
        math.log((lo_t - 0.01) / hi_f), math.log((1 - hi_f - 0.01) / (1 - lo_t)), 0.0
    )
    assert eps[0] == pytest.approx(expected, rel=1e-12)


def test_epsilon_lower_bound_second_ratio_counts_non_members() -> None:
    # few false positives but many missed members: the second ratio is the larger
    eps, tpr_lo, _, _, fpr_hi = epsilon_lower_bound(
        990, 1000, 500, 1000, delta=0.0, confidence_level=0.95
    )
    assert eps[0] == pytest.approx(math.log((1 - fpr_hi[0]) / (1 - tpr_lo[0])))
    assert eps[0] > math.log(tpr_lo[0] / fpr_hi[0])


def test_epsilon_lower_bound_falls_with_delta_and_confidence() -> None:
    base = epsilon_lower_bound(90, 100, 10, 100, delta=0.0, confidence_level=0.95)[0]
    more_delta = epsilon_lower_bound(
        90, 100, 10, 100, delta=0.1, confidence_level=0.95
    )[0]
    more_conf = epsilon_lower_bound(
        90, 100, 10, 100, delta=0.0, confidence_level=0.999
    )[0]
    assert base[0] > more_delta[0] > 0
    assert base[0] > more_conf[0] > 0
    none = epsilon_lower_bound(50, 100, 50, 100, delta=0.0, confidence_level=0.95)[0]
    assert none[0] == 0.0


def test_epsilon_lower_bound_is_valid_at_its_confidence() -> None:
    # a test of a mechanism with TPR / FPR = e^1 exactly: the bound exceeds 1 at most
    # 5 % of the time (Clopper–Pearson is conservative: usually far less)
    g = np.random.default_rng(0)
    p_in = math.e / (1 + math.e)
    tp = g.binomial(200, p_in, size=2000)
    fp = g.binomial(200, 1 - p_in, size=2000)
    eps = epsilon_lower_bound(tp, 200, fp, 200, delta=0.0, confidence_level=0.95)[0]
    assert np.mean(eps > 1.0) < 0.05
    assert np.mean(eps) > 0.4


def test_mid_ranks() -> None:
    ref = np.array([1.0, 2.0, 2.0, 3.0])
    np.testing.assert_allclose(
        mid_ranks(ref, np.array([0.0, 1.0, 2.0, 3.0, 9.0])), [0, 0.125, 0.5, 0.875, 1]
    )
    np.testing.assert_allclose(
        mid_ranks(np.array([]), np.array([1.0, 2.0])), [0.5, 0.5]
    )


def test_attack_bound_chooses_on_selection_and_counts_on_evaluation() -> None:
    g = np.random.default_rng(1)
    labels = g.random(400) < 0.5
    scores = np.where(labels, g.random(400) < 0.8, g.random(400) < 0.1).astype(float)
    sel, ev = slice(0, 200), slice(200, 400)
    bound = attack_bound(
        scores[sel],
        labels[sel],
        scores[ev],
        labels[ev],
        delta=0.0,
        confidence_level=0.95,
    )
    ev_l, ev_s = labels[ev], scores[ev]
    tp, fp = int(ev_s[ev_l].sum()), int(ev_s[~ev_l].sum())
    expected = epsilon_lower_bound(
        tp, int(ev_l.sum()), fp, int((~ev_l).sum()), delta=0.0, confidence_level=0.95
    )[0][0]
    assert bound.threshold == 1.0
    assert bound.direction == "higher"
    assert bound.epsilon_lower == pytest.approx(expected)
    assert bound.n_members + bound.n_non_members == 200
    assert bound.auc == pytest.approx(
        0.5 + 0.5 * (tp / ev_l.sum() - fp / (~ev_l).sum())
    )
    assert set(bound.tpr_at_fpr) == {"0.01", "0.1"}


def test_attack_bound_finds_members_with_lower_scores() -> None:
    labels = np.array([True, False] * 50)
    scores = np.where(labels, 0.0, 1.0)
    bound = attack_bound(
        scores, labels, scores, labels, delta=0.0, confidence_level=0.95
    )
    assert bound.direction == "lower"
    assert bound.epsilon_lower > 2
    assert bound.auc == 0.0


def test_attack_bound_with_one_class_only() -> None:
    labels = np.ones(10, dtype=bool)
    bound = attack_bound(
        np.arange(10.0),
        labels,
        np.arange(10.0),
        labels,
        delta=0.0,
        confidence_level=0.95,
    )
    assert bound.epsilon_lower == 0.0
    assert bound.auc is None
    assert bound.threshold is None


def test_random_scores_rarely_refute_anything() -> None:
    g = np.random.default_rng(2)
    hits = 0
    for _ in range(50):
        labels = g.random(200) < 0.5
        scores = g.random(200)
        b = attack_bound(
            scores[:100],
            labels[:100],
            scores[100:],
            labels[100:],
            delta=0.0,
            confidence_level=0.95,
        )
        hits += b.epsilon_lower > 0
    assert hits <= 5


def test_one_run_epsilon_is_the_logit_of_the_precision_bound() -> None:
    low = stats.beta.ppf(0.05, 731, 1000 - 731 + 1)
    assert one_run_epsilon(731, 1000, confidence_level=0.95) == pytest.approx(
        math.log(low / (1 - low))
    )
    assert one_run_epsilon(0, 10, confidence_level=0.95) == 0.0
    assert one_run_epsilon(3, 0, confidence_level=0.95) == 0.0
    # all 30 guesses right: the bound is finite and grows with the guesses
    assert (
        0
        < one_run_epsilon(30, 30, confidence_level=0.95)
        < one_run_epsilon(300, 300, confidence_level=0.95)
    )


def test_one_run_epsilon_is_valid_when_the_guesses_depend_on_each_other() -> None:
    # one run, 200 targets; the mechanism releases, per run, a common shift that makes
    # the attacker call everyone a member at once, plus each target's own ε = 1 coin:
    # guesses are strongly dependent, yet the precision bound stays below 1 at 95 %
    g = np.random.default_rng(5)
    p_in = math.e / (1 + math.e)
    over = 0
    for _ in range(400):
        member = g.random(200) < 0.5
        released = np.where(member, g.random(200) < p_in, g.random(200) < 1 - p_in)
        # half the runs' outputs make every guess "member"
        everyone = g.random() < 0.5
        guesses = np.ones(200, dtype=bool) if everyone else released
        correct = int((guesses & member).sum())
        over += one_run_epsilon(correct, int(guesses.sum()), confidence_level=0.95) > 1
    assert over / 400 < 0.05


def test_attack_bound_reports_the_one_run_bound_for_pure_dp_only() -> None:
    labels = np.array([True, False] * 100)
    scores = np.where(labels, 1.0, 0.0)
    pure = attack_bound(
        scores, labels, scores, labels, delta=0.0, confidence_level=0.95
    )
    approx = attack_bound(
        scores, labels, scores, labels, delta=1e-3, confidence_level=0.95
    )
    assert pure.epsilon_lower_one_run is not None
    assert pure.epsilon_lower_one_run > 2
    assert approx.epsilon_lower_one_run is None


def test_roc_curve_small_is_exact() -> None:
    scores = np.array([0.9, 0.8, 0.8, 0.3, 0.1])
    labels = np.array([True, True, False, True, False])
    roc = roc_curve(scores, labels)
    assert roc == {
        "fpr": [0.0, 0.0, 0.5, 0.5, 1.0],
        "tpr": [0.0, 0.333333, 0.666667, 1.0, 1.0],
    }
    assert roc_curve(scores, np.ones(5, dtype=bool)) is None


def test_roc_curve_large_is_bounded_deterministic_and_never_overstates() -> None:
    g = np.random.default_rng(0)
    labels = g.random(2000) < 0.5
    scores = g.normal(size=2000) + labels
    roc = roc_curve(scores, labels)
    assert roc is not None
    fpr, tpr = np.array(roc["fpr"]), np.array(roc["tpr"])
    assert fpr.size <= 101
    assert fpr[0] == 0.0
    assert fpr[-1] == 1.0
    assert tpr[-1] == 1.0
    assert np.all(np.diff(fpr) > 0)
    assert np.all(np.diff(tpr) >= 0)
    assert roc == roc_curve(scores.copy(), labels.copy())
    # each point is the best threshold whose false-positive rate is at most the grid rate
    thresholds = np.unique(scores)
    tpr_at = (scores[labels][None, :] >= thresholds[:, None]).mean(axis=1)
    fpr_at = (scores[~labels][None, :] >= thresholds[:, None]).mean(axis=1)
    for f, t in zip(fpr, tpr, strict=True):
        best = tpr_at[fpr_at <= f + 1e-12].max(initial=0.0)
        assert t == pytest.approx(best, abs=1e-6)
    # the curve's area matches the AUC to the grid's resolution
    assert np.trapezoid(tpr, fpr) == pytest.approx(
        roc_auc(labels.astype(int), scores), abs=0.02
    )


def test_a_stricter_count_level_counts_the_same_test_lower() -> None:
    # randomized response at ε = 2: the chosen test guesses every observation ("member"
    # when the record was released), so its count is the right guesses among all, and
    # counting it at 97.5 % instead of 95 % is the one-sided Clopper–Pearson bound at
    # the stricter level (the audit's headline over real targets and canaries)
    from synthrisk.audit.bounds import selected_bound
    from synthrisk.audit.guessing import guess_epsilon

    g = np.random.default_rng(3)
    member = g.random((200, 10)) < 0.5
    p = math.exp(2.0) / (1 + math.exp(2.0))
    released = np.where(member, g.random(member.shape) < p, g.random(member.shape) >= p)
    sel = np.arange(200) % 2 == 0
    pool = (
        released[sel].ravel().astype(float),
        member[sel].ravel(),
        released[~sel].ravel().astype(float),
        member[~sel].ravel(),
    )
    full = selected_bound({"rr": pool}, delta=0.0, confidence_level=0.95)
    same = selected_bound(
        {"rr": pool}, delta=0.0, confidence_level=0.95, count_level=0.95
    )
    strict = selected_bound(
        {"rr": pool}, delta=0.0, confidence_level=0.95, count_level=0.975
    )
    assert same == full
    assert (strict.attack, strict.method) == (full.attack, full.method)
    correct = int((pool[2].astype(bool) == pool[3]).sum())
    expected = guess_epsilon(correct, pool[3].size, delta=0.0, confidence_level=0.975)
    assert strict.epsilon_lower == pytest.approx(float(expected[0]), rel=1e-12)
    assert 0 < strict.epsilon_lower < full.epsilon_lower < 2.0
