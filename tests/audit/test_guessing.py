# SPDX-License-Identifier: BSD-3-Clause
"""Guesses with abstention and the trade-off curve: arithmetic, validity over seeds, power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from synthrisk.audit.bounds import attack_bound, selected_bound
from synthrisk.audit.guessing import (
    GuessRule,
    choose_guess_rule,
    count_guesses,
    guess_ceiling,
    guess_epsilon,
    ranking_level,
    trade_off_bound,
)


def _randomized_response(
    epsilon: float, seed: int, *, n_runs: int = 200, n_targets: int = 10
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """An exactly ε-DP mechanism's attack scores: was the target's record released?"""
    g = np.random.default_rng(seed)
    member = g.random((n_runs, n_targets)) < 0.5
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    released = np.where(member, g.random(member.shape) < p, g.random(member.shape) >= p)
    scores = released.astype(np.float64)
    sel = np.arange(n_runs) % 2 == 0
    return (
        scores[sel].ravel(),
        member[sel].ravel(),
        scores[~sel].ravel(),
        member[~sel].ravel(),
    )


def _laplace(
    epsilon: float, seed: int, *, n_runs: int = 200, n_targets: int = 10
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The Laplace mechanism on membership (sensitivity 1): exactly ε-DP, graded scores."""
    g = np.random.default_rng(seed)
    member = g.random((n_runs, n_targets)) < 0.5
    scores = member + g.laplace(scale=1 / epsilon, size=member.shape)
    sel = np.arange(n_runs) % 2 == 0
    return (
        scores[sel].ravel(),
        member[sel].ravel(),
        scores[~sel].ravel(),
        member[~sel].ravel(),
    )


def test_guess_epsilon_is_the_logit_of_the_one_sided_bound() -> None:
    low = stats.beta.ppf(0.05, 731, 270)
    assert guess_epsilon(731, 1000, confidence_level=0.95)[0] == pytest.approx(
        math.log(low / (1 - low))
    )
    with_delta = guess_epsilon(731, 1000, delta=0.01, confidence_level=0.95)[0]
    assert with_delta == pytest.approx(math.log((low - 0.01) / (1 - low)))
    np.testing.assert_array_equal(
        guess_epsilon([0, 5, 3], [10, 10, 0], confidence_level=0.95), [0, 0, 0]
    )


def test_guess_ceiling_of_randomized_response() -> None:
    # the written argument of docs/audit.md: 1,000 guesses at ε = 1 reach 0.881
    assert guess_ceiling(1000, 1.0, confidence_level=0.95) == pytest.approx(
        0.881, abs=1e-3
    )
    assert guess_ceiling(2000, 1.0, confidence_level=0.95) > 0.9


def test_choose_guess_rule_abstains_on_the_middle() -> None:
    scores = np.array([0.0, 0.0, 0.0, 0.5, 0.5, 1.0, 1.0, 1.0] * 20)
    labels = np.array([False, False, False, True, False, True, True, True] * 20)
    rule, eps = choose_guess_rule(scores, labels, confidence_level=0.95)
    assert rule == GuessRule("higher", 0.5, 1.0)
    assert count_guesses(scores, labels, rule) == (120, 120)
    assert eps > 3


def test_choose_guess_rule_finds_members_with_lower_scores() -> None:
    labels = np.array([True, False] * 50)
    rule, _ = choose_guess_rule(
        np.where(labels, 0.0, 1.0), labels, confidence_level=0.95
    )
    assert rule is not None
    assert rule.direction == "lower"
    assert choose_guess_rule(
        np.ones(4), np.ones(4, dtype=bool), confidence_level=0.95
    ) == (
        None,
        0.0,
    )


def test_choose_guess_rule_never_abstains_with_delta() -> None:
    g = np.random.default_rng(3)
    labels = g.random(400) < 0.5
    scores = np.where(labels, g.normal(1, 1, 400), g.normal(0, 1, 400))
    rule, _ = choose_guess_rule(scores, labels, delta=0.01, confidence_level=0.95)
    assert rule is not None
    assert rule.low == rule.high


def test_trade_off_bound_refutes_a_strong_attack_and_not_noise() -> None:
    g = np.random.default_rng(4)
    labels = g.random(2000) < 0.5
    strong = np.where(labels, g.normal(3, 1, 2000), g.normal(0, 1, 2000))
    eps, mu = trade_off_bound(
        strong[:1000], strong[1000:], labels[1000:], delta=0.0, confidence_level=0.95
    )
    assert eps > 1.5
    assert 2.0 < mu < 3.5  # the scores are 3-GDP: μ refuted below 3, close to it
    noise = g.random(2000)
    assert trade_off_bound(
        noise[:1000], noise[1000:], labels[1000:], delta=0.0, confidence_level=0.95
    ) == (0.0, 0.0)


@pytest.mark.parametrize("mechanism", [_randomized_response, _laplace])
@pytest.mark.parametrize("epsilon", [0.25, 1.0, 2.0])
def test_bounds_are_valid_on_exactly_dp_mechanisms(mechanism, epsilon: float) -> None:
    # 200 seeds: every method exceeds the true ε in at most 5 % of them (plus the
    # binomial wobble of 200 seeds: 2 standard errors)
    over = np.zeros(5)
    for seed in range(200):
        obs = mechanism(epsilon, seed)
        b = attack_bound(*obs, delta=0.0, confidence_level=0.95)
        chosen = selected_bound({"a": obs}, delta=0.0, confidence_level=0.95)
        over += [
            b.epsilon_lower > epsilon,
            (b.epsilon_lower_one_run or 0.0) > epsilon,
            (b.epsilon_lower_guesses or 0.0) > epsilon,
            (b.epsilon_lower_trade_off or 0.0) > epsilon,
            chosen.epsilon_lower > epsilon,
        ]
    assert np.all(over / 200 <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 200)), over


def test_guesses_reach_the_issue_target_on_randomized_response() -> None:
    # ε = 1, 200 runs, 10 targets: the Clopper–Pearson bound was 0.72 (six attacks);
    # the guesses count member and non-member calls: median ≥ 0.85
    got = [
        selected_bound(
            {"rr": _randomized_response(1.0, seed)}, delta=0.0, confidence_level=0.95
        ).epsilon_lower
        for seed in range(40)
    ]
    assert np.median(got) >= 0.85


def test_selected_bound_picks_the_informative_attack() -> None:
    informative = _randomized_response(2.0, 0)
    g = np.random.default_rng(5)
    noise = (g.random(1000), informative[1], g.random(1000), informative[3])
    chosen = selected_bound(
        {"noise": noise, "rr": informative}, delta=0.0, confidence_level=0.95
    )
    assert chosen.attack == "rr"
    assert chosen.method == "guesses"
    assert chosen.epsilon_lower > 1.5
    none = selected_bound({"noise": noise}, delta=0.0, confidence_level=0.95)
    assert (none.attack, none.method) == (None, None)


def test_selection_is_not_fooled_by_a_lucky_few_guesses() -> None:
    # "lucky": pure noise, except that on the selection observations its 25 highest
    # scores all belong to members (the rule guessing the top ~21 is right on all: at
    # 95 % that refutes more than randomized response's 1,000 guesses at ε = 1 do)
    rr = _randomized_response(1.0, 0)
    g = np.random.default_rng(6)
    sel_lucky = g.random(1000)
    members = np.flatnonzero(rr[1])[:25]
    sel_lucky[members] = 2.0 + np.arange(25)
    lucky = (sel_lucky, rr[1], g.random(1000), rr[3])
    _, at_95 = choose_guess_rule(lucky[0], lucky[1], confidence_level=0.95)
    _, rr_at_95 = choose_guess_rule(rr[0], rr[1], confidence_level=0.95)
    assert at_95 > 1.5 > 1.0 > rr_at_95  # ranked at 95 %, the lucky few would win
    chosen = selected_bound(
        {"lucky": lucky, "rr": rr}, delta=0.0, confidence_level=0.95
    )
    assert chosen.attack == "rr"
    assert chosen.epsilon_lower > 0.75
    assert 1 - ranking_level(0.95, 2) == pytest.approx(0.05 / (2 * 5000))
