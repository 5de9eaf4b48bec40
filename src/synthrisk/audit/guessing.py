# SPDX-License-Identifier: BSD-3-Clause
"""Tighter effective-ε bounds from the same runs: guesses with abstention, and the trade-off curve.

Two families of bound, each computed from an attack's scores on the selection
observations (which choose the test) and the evaluation observations (which count it):

**Guesses** (:func:`choose_guess_rule`, :func:`guess_epsilon`). Every (run, target) pair
is a coin: the target is in that run's training set with probability 1/2. A *guess rule*
reads an observation's score and says "member" (score at or above ``high``),
"non-member" (below ``low``) or abstains (in between). For a pure ε-DP mechanism the
correct guesses among ``r`` guesses are stochastically dominated by
``Binomial(r, e^ε / (1 + e^ε))`` given which observations were guessed, however the
guesses about several targets depend on each other (Steinke, Nasr & Jagielski 2023,
"Privacy auditing with one (1) training run", NeurIPS, arXiv 2305.08846, Theorem 3.1).
So ε is at least the logit of the one-sided Clopper–Pearson lower bound ``q`` of the
share of correct guesses. Unlike the precision of the "member" calls alone, this counts
the right "non-member" calls too (twice the guesses when nothing is abstained on), and
abstaining on the middle scores keeps only the guesses an attack is sure of, the
top-``k`` guessing of Steinke et al. and Mahloujifar, Melis & Chaudhuri (2025,
"Auditing f-differential privacy in one run", ICML, PMLR 267). The rule (both
thresholds and the score's direction) is the one whose bound is largest on the
selection observations; it is then counted once on the evaluation observations, so
the search costs no confidence.

**Ranking the candidates.** A rule's bound on the selection observations, at the
confidence of the final count, is a poor guide to its bound on the evaluation ones: the
best of thousands of candidate rules is the luckiest, often one that guesses a few dozen
observations and happens to be right on nearly all of them, and it then fails on the
evaluation observations (the winner's curse). The candidates are therefore ranked by
their bound at the stricter :func:`ranking_level`, as if every candidate were bounded
at once (Bonferroni over the candidates): a rule that guesses few observations must be
right on far more of them to win, and the rule chosen is one that holds up. The
ranking uses the selection observations only, so the evaluation count stays valid at
the stated confidence, whatever the ranking.

For an (ε, δ) claim the guesses cannot abstain (a δ of probability can make a few
guesses certain) and ε is at least ``ln((q - δ) / (1 - q))``: the most accurate test of
an (ε, δ)-DP mechanism is right with probability ``(e^ε + δ) / (1 + e^ε)`` (Kairouz, Oh &
Viswanath 2015). Like the Clopper–Pearson bound, this reading of δ > 0 treats the
pooled guesses as independent.

**Trade-off curve** (:func:`trade_off_bound`). f-DP (Dong, Roth & Su 2022, "Gaussian
differential privacy", JRSS B) bounds every test's (FPR, TPR) by the mechanism's
trade-off curve: ``TPR <= e^ε FPR + δ`` and ``1 - FPR <= e^ε (1 - TPR) + δ`` for
(ε, δ)-DP, ``TPR <= Φ(Φ⁻¹(FPR) + μ)`` for μ-Gaussian DP. The empirical curve is read at
a few fixed thresholds (quantiles of the selection scores), each rate bounded one-sided
with Clopper–Pearson, Bonferroni over all the rates; every point then lies on or above
the true curve together, and the bound is the largest ε (and μ) whose curve some point
falls below. ``mu_lower`` refutes μ-GDP for smaller μ: the number to hold against a
generator whose privacy is stated in Gaussian DP.

**The ceiling.** For pure ε-DP no test beats the guesses': randomized response, read
perfectly, makes each guess right with probability exactly ``e^ε / (1 + e^ε)``, so its
correct guesses *are* that binomial and nothing but their count carries information. With
``n`` guesses the best any method can report is the logit of the Clopper–Pearson lower
bound of a binomial share near ``e^ε / (1 + e^ε)`` (:func:`guess_ceiling`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import stats

from synthrisk._typing import FloatArray

__all__ = [
    "TRADE_OFF_QUANTILES",
    "GuessRule",
    "choose_guess_rule",
    "count_guesses",
    "guess_ceiling",
    "guess_epsilon",
    "ranking_level",
    "trade_off_bound",
]

#: most candidate thresholds per side of a guess rule (quantiles of the selection scores)
MAX_THRESHOLDS = 48
#: quantiles of the selection scores at which the trade-off curve is read (each direction)
TRADE_OFF_QUANTILES = (0.5, 0.75, 0.9, 0.97)
#: candidate tests per attack that :func:`ranking_level` shares the error among: the
#: guess rules' threshold pairs in both directions, rounded up
CANDIDATES_PER_ATTACK = 2 * (MAX_THRESHOLDS + 2) ** 2


def ranking_level(confidence_level: float, n_attacks: int = 1) -> float:
    """The confidence at which candidate tests are ranked on the selection observations.

    ``1 - (1 - confidence_level) / (n_attacks * CANDIDATES_PER_ATTACK)``: Bonferroni
    over every candidate of the choice, so that the ranking discounts the candidates
    that look good by luck (see the module's notes). It only ranks; the chosen test is
    counted on the evaluation observations at ``confidence_level``.

    Examples
    --------
    >>> f"{1 - ranking_level(0.95, 6):.2e}"
    '1.67e-06'
    """
    return 1.0 - (1.0 - confidence_level) / (max(n_attacks, 1) * CANDIDATES_PER_ATTACK)


def _log_odds(
    correct: np.ndarray, guesses: np.ndarray, *, delta: float, level: float
) -> np.ndarray:
    """Unclipped ``ln((q - δ) / (1 - q))`` of the Clopper–Pearson lower bound ``q``.

    The ranking score of :func:`choose_guess_rule`: below 0 when nothing is refuted,
    so that candidates are still ordered when none refutes any ε (``-inf`` when no
    guess or no right guess).
    """
    k = np.asarray(correct, dtype=np.float64)
    n = np.asarray(guesses, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where((k > 0) & (n > 0), stats.beta.ppf(1.0 - level, k, n - k + 1), 0.0)
        q = np.nan_to_num(q, nan=0.0)
        return np.where(
            q - delta > 0,
            np.log(np.maximum(q - delta, 1e-300)) - np.log(np.maximum(1 - q, 1e-300)),
            -np.inf,
        )


@dataclasses.dataclass(frozen=True)
class GuessRule:
    """Guess "member" when the oriented score is >= ``high``, "non-member" when < ``low``.

    ``direction`` is ``"higher"`` (the score as it is) or ``"lower"`` (its negative);
    ``low <= high``, and scores in ``[low, high)`` are abstained on. ``-inf`` / ``inf``
    thresholds switch a side off.
    """

    direction: str
    low: float
    high: float


def guess_epsilon(
    correct: int | np.ndarray,
    guesses: int | np.ndarray,
    *,
    delta: float = 0.0,
    confidence_level: float,
) -> FloatArray:
    """The ε refuted by ``correct`` right guesses out of ``guesses`` (vectorised).

    ``ln((q - δ) / (1 - q))`` with ``q`` the one-sided Clopper–Pearson lower bound of
    the share of right guesses at ``confidence_level``; 0 when nothing is refuted.

    Examples
    --------
    >>> round(float(guess_epsilon(731, 1000, confidence_level=0.95)[0]), 3)
    0.881
    >>> float(guess_epsilon(5, 10, confidence_level=0.95)[0])
    0.0
    """
    k = np.atleast_1d(np.asarray(correct, dtype=np.float64))
    n = np.atleast_1d(np.asarray(guesses, dtype=np.float64))
    alpha = 1.0 - confidence_level
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where((k > 0) & (n > 0), stats.beta.ppf(alpha, k, n - k + 1), 0.0)
        q = np.nan_to_num(q, nan=0.0)
        eps = np.where(
            (q - delta > 0) & (q < 1),
            np.log(np.maximum(q - delta, 1e-300) / np.maximum(1 - q, 1e-300)),
            np.where(q >= 1, np.inf, 0.0),
        )
    return np.maximum(eps, 0.0)


def _candidates(scores: FloatArray) -> FloatArray:
    values = np.unique(scores)
    if values.size > MAX_THRESHOLDS:
        values = np.unique(np.quantile(scores, np.linspace(0, 1, MAX_THRESHOLDS)))
    return np.concatenate([[-np.inf], values, [np.inf]])


def _rule_counts(
    member: FloatArray, non_member: FloatArray, thresholds: FloatArray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For each threshold t: members / non-members at or above t, and below t."""
    p, q = np.sort(member), np.sort(non_member)
    p_above = p.size - np.searchsorted(p, thresholds, side="left")
    q_above = q.size - np.searchsorted(q, thresholds, side="left")
    return p_above, q_above, p.size - p_above, q.size - q_above


def choose_guess_rule(
    scores: FloatArray,
    labels: np.ndarray,
    *,
    delta: float = 0.0,
    confidence_level: float,
) -> tuple[GuessRule | None, float]:
    """The guess rule with the largest bound on these observations at ``confidence_level``.

    Every pair of thresholds from the observations' scores (at most
    ``MAX_THRESHOLDS`` quantiles), in both directions; without abstention
    (``low == high``) when ``delta > 0``. The rules are ranked by the unclipped
    ``ln((q - δ) / (1 - q))`` of the Clopper–Pearson lower bound ``q`` of their share
    of right guesses, so that they are ordered even when none refutes any ε. Pass a
    :func:`ranking_level` to rank as the audit does. Returns the rule and that score
    (below 0 when nothing is refuted here; None and 0.0 when a class is absent). Ties
    go to the rule found first.
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels, dtype=bool)
    if not (labels.any() and (~labels).any()):
        return None, 0.0
    best: tuple[GuessRule | None, float] = (None, -math.inf)
    for direction, sign in (("higher", 1.0), ("lower", -1.0)):
        s = sign * scores
        t = _candidates(s)
        m_above, n_above, m_below, n_below = _rule_counts(s[labels], s[~labels], t)
        # rule (low = t[i], high = t[j]), i <= j: members guessed = above t[j],
        # non-members guessed = below t[i]
        correct = m_above[None, :] + n_below[:, None]
        guesses = correct + n_above[None, :] + m_below[:, None]
        valid = np.triu(np.ones((t.size, t.size), dtype=bool))
        if delta > 0:
            valid = np.eye(t.size, dtype=bool)
        eps = np.where(
            valid,
            _log_odds(correct, guesses, delta=delta, level=confidence_level),
            -np.inf,
        )
        i, j = np.unravel_index(int(np.argmax(eps)), eps.shape)
        if best[0] is None or eps[i, j] > best[1]:
            best = (GuessRule(direction, float(t[i]), float(t[j])), float(eps[i, j]))
    return best


def count_guesses(
    scores: FloatArray, labels: np.ndarray, rule: GuessRule
) -> tuple[int, int]:
    """``(correct, guesses)`` of ``rule`` on these observations."""
    s = np.asarray(scores, dtype=np.float64)
    if rule.direction == "lower":
        s = -s
    labels = np.asarray(labels, dtype=bool)
    say_member = s >= rule.high
    say_non_member = s < rule.low
    correct = int((say_member & labels).sum() + (say_non_member & ~labels).sum())
    return correct, int(say_member.sum() + say_non_member.sum())


def guess_ceiling(n_guesses: int, epsilon: float, *, confidence_level: float) -> float:
    """The median bound of a perfect attack on ε-DP randomized response with ``n_guesses``.

    Each guess is right with probability ``e^ε / (1 + e^ε)``; the median count of right
    guesses, through :func:`guess_epsilon`. No valid method does better on that
    mechanism: its right guesses are exactly this binomial.

    Examples
    --------
    >>> round(guess_ceiling(1000, 1.0, confidence_level=0.95), 3)
    0.881
    """
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    k = int(stats.binom.median(n_guesses, p))
    return float(guess_epsilon(k, n_guesses, confidence_level=confidence_level)[0])


def trade_off_bound(
    sel_scores: FloatArray,
    ev_scores: FloatArray,
    ev_labels: np.ndarray,
    *,
    delta: float,
    confidence_level: float,
    quantiles: tuple[float, ...] = TRADE_OFF_QUANTILES,
) -> tuple[float, float]:
    """``(epsilon_lower, mu_lower)`` from the empirical trade-off curve.

    The thresholds are the ``quantiles`` of ``sel_scores`` (no labels: nothing is
    chosen by success), used in both directions; at each, the evaluation TPR is
    bounded below and the FPR above (one-sided Clopper–Pearson), with the error
    ``1 - confidence_level`` shared equally by all these rates (Bonferroni). ε refuted:
    the largest over thresholds of ``max(ln((TPR_lo - δ) / FPR_hi),
    ln((1 - FPR_hi - δ) / (1 - TPR_lo)))``; μ refuted (Gaussian DP):
    ``max(Φ⁻¹(TPR_lo) - Φ⁻¹(FPR_hi))``. Both 0 when nothing is refuted.
    """
    ev_labels = np.asarray(ev_labels, dtype=bool)
    ev_scores = np.asarray(ev_scores, dtype=np.float64)
    member, non_member = ev_scores[ev_labels], ev_scores[~ev_labels]
    sel_scores = np.asarray(sel_scores, dtype=np.float64)
    if not (member.size and non_member.size and sel_scores.size):
        return 0.0, 0.0
    cuts = np.quantile(sel_scores, quantiles)
    n_rates = 2 * 2 * len(quantiles)
    alpha = (1 - confidence_level) / n_rates
    # "higher": member when score >= cut; "lower": member when score < 1 - quantile cut
    low_cuts = np.quantile(sel_scores, [1 - q for q in quantiles])
    tp = np.concatenate(
        [(member[:, None] >= cuts).sum(0), (member[:, None] < low_cuts).sum(0)]
    ).astype(np.float64)
    fp = np.concatenate(
        [(non_member[:, None] >= cuts).sum(0), (non_member[:, None] < low_cuts).sum(0)]
    ).astype(np.float64)
    n_m, n_n = float(member.size), float(non_member.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr_lo = np.where(tp > 0, stats.beta.ppf(alpha, tp, n_m - tp + 1), 0.0)
        fpr_hi = np.where(fp < n_n, stats.beta.ppf(1 - alpha, fp + 1, n_n - fp), 1.0)
        first = np.where(
            (tpr_lo - delta > 0) & (fpr_hi > 0),
            np.log(np.maximum(tpr_lo - delta, 1e-300) / np.maximum(fpr_hi, 1e-300)),
            0.0,
        )
        second = np.where(
            (1 - fpr_hi - delta > 0) & (1 - tpr_lo > 0),
            np.log(
                np.maximum(1 - fpr_hi - delta, 1e-300) / np.maximum(1 - tpr_lo, 1e-300)
            ),
            0.0,
        )
        mu = np.where(
            (tpr_lo > 0) & (fpr_hi < 1),
            stats.norm.ppf(np.clip(tpr_lo, 1e-300, 1.0))
            - stats.norm.ppf(np.clip(fpr_hi, 0.0, 1 - 1e-16)),
            0.0,
        )
    eps = float(np.max(np.maximum(first, second), initial=0.0))
    return max(eps, 0.0), max(float(np.max(mu, initial=0.0)), 0.0)
