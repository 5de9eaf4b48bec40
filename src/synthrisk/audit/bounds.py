# SPDX-License-Identifier: BSD-3-Clause
"""Effective-ε lower bounds from membership guesses, with exact Clopper–Pearson bounds.

A mechanism that is (ε, δ)-differentially private limits every membership test: for any
threshold, ``TPR <= e^ε FPR + δ`` and ``1 - FPR <= e^ε (1 - TPR) + δ`` (Kairouz, Oh &
Viswanath 2015, "The composition theorem for differential privacy", ICML). An attack's
observed rates therefore refute every ε below

    max(ln((TPR_lo - δ) / FPR_hi), ln((1 - FPR_hi - δ) / (1 - TPR_lo)))

where ``[TPR_lo, TPR_hi]`` and ``[FPR_lo, FPR_hi]`` are two-sided Clopper–Pearson
intervals (Clopper & Pearson 1934, Biometrika 26), each at ``1 - α / 2`` so that both
hold together with confidence ``1 - α`` (Jagielski, Ullman & Oprea 2020, "Auditing
differentially private machine learning: how private is private SGD?", NeurIPS; Nasr
et al. 2021, "Adversary instantiation", IEEE S&P). The threshold and its direction are
chosen on selection runs and the rates counted on the evaluation runs only, so the
search over thresholds costs no confidence. A bound of 0 means no ε was refuted.

Each ratio takes the pessimistic end of each interval: a lower bound of its numerator
over an upper bound of its denominator. (Writing the second ratio with ``FPR_lo`` and
``TPR_hi`` instead would divide an optimistic numerator by an optimistic denominator
and overstate ε: on a mechanism of known ε = 1 it reports 7.7.)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np
from scipy import stats

from synthrisk._typing import FloatArray
from synthrisk.audit.guessing import (
    GuessRule,
    choose_guess_rule,
    count_guesses,
    guess_epsilon,
    ranking_level,
    trade_off_bound,
)
from synthrisk.stats.mia import clopper_pearson, tpr_at_fpr
from synthrisk.stats.ranking import roc_auc

__all__ = [
    "REPORTED_FPRS",
    "Bound",
    "SelectedBound",
    "attack_bound",
    "epsilon_lower_bound",
    "mid_ranks",
    "one_run_epsilon",
    "roc_curve",
    "selected_bound",
]

#: false-positive rates at which the true-positive rate is reported
REPORTED_FPRS = (0.01, 0.1)
#: most points of a stored ROC curve
ROC_POINTS = 101
#: the false-positive rates a longer ROC curve is read at: log-spaced below 0.1, then linear
_ROC_GRID = np.unique(
    np.round(
        np.concatenate([[0.0], np.logspace(-4, -1, 25), np.linspace(0.1, 1.0, 75)]),
        6,
    )
)


def roc_curve(
    scores: FloatArray, labels: np.ndarray, *, max_points: int = ROC_POINTS
) -> dict[str, list[float]] | None:
    """The ROC curve of ``scores`` (higher = member): false- and true-positive rates.

    The curve's vertices, one per distinct score from the highest down, from (0, 0) to
    (1, 1). When there are more than ``max_points``, the curve is read at fixed
    false-positive rates (log-spaced from 1e-4 to 0.1, then every 0.0122), each with the
    highest true-positive rate of a threshold whose false-positive rate does not exceed
    it: a bounded, deterministic curve that never overstates the attack. Rates are
    rounded to 6 decimals. None when the members or the non-members are absent.

    Examples
    --------
    >>> roc_curve(np.array([0.9, 0.8, 0.3, 0.1]), np.array([True, False, True, False]))
    {'fpr': [0.0, 0.0, 0.5, 0.5, 1.0], 'tpr': [0.0, 0.5, 0.5, 1.0, 1.0]}
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels, dtype=bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if not (n_pos and n_neg):
        return None
    order = np.argsort(-scores, kind="stable")
    s, lab = scores[order], labels[order]
    last = np.flatnonzero(np.r_[s[1:] != s[:-1], True])  # last of each tie group
    tp = np.cumsum(lab)[last]
    fp = np.cumsum(~lab)[last]
    fpr = np.r_[0.0, fp / n_neg]
    tpr = np.r_[0.0, tp / n_pos]
    if fpr.size > max_points:
        grid = (
            _ROC_GRID
            if _ROC_GRID.size <= max_points
            else np.linspace(0.0, 1.0, max_points)
        )
        # fpr is non-decreasing: the last vertex at or below each grid rate has the highest TPR
        at = np.searchsorted(fpr, grid + 1e-12, side="right") - 1
        fpr, tpr = grid, tpr[at]
    return {
        "fpr": [round(float(v), 6) for v in fpr],
        "tpr": [round(float(v), 6) for v in tpr],
    }


def _epsilon(
    tpr_low: FloatArray,
    tpr_high: FloatArray,
    fpr_low: FloatArray,
    fpr_high: FloatArray,
    delta: float,
) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(
            (tpr_low - delta > 0) & (fpr_high > 0),
            np.log(np.maximum(tpr_low - delta, 1e-300) / np.maximum(fpr_high, 1e-300)),
            0.0,
        )
        second = np.where(
            (1 - fpr_high - delta > 0) & (1 - tpr_low > 0),
            np.log(
                np.maximum(1 - fpr_high - delta, 1e-300)
                / np.maximum(1 - tpr_low, 1e-300)
            ),
            0.0,
        )
    return np.maximum(0.0, np.maximum(first, second))


def epsilon_lower_bound(
    tp: int | np.ndarray,
    n_members: int,
    fp: int | np.ndarray,
    n_non_members: int,
    *,
    delta: float,
    confidence_level: float,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """The ε refuted by ``tp`` of ``n_members`` and ``fp`` of ``n_non_members`` flagged.

    Vectorised over ``tp`` and ``fp``. Returns ``(epsilon, tpr_low, tpr_high, fpr_low,
    fpr_high)``; the rates' intervals are two-sided Clopper–Pearson at
    ``1 - (1 - confidence_level) / 2`` each.

    Examples
    --------
    >>> eps, *_ = epsilon_lower_bound(90, 100, 10, 100, delta=0.0, confidence_level=0.95)
    >>> round(float(eps[0]), 3)
    1.465
    >>> float(epsilon_lower_bound(50, 100, 50, 100, delta=0.0, confidence_level=0.95)[0][0])
    0.0
    """
    tp_a = np.atleast_1d(np.asarray(tp, dtype=np.float64))
    fp_a = np.atleast_1d(np.asarray(fp, dtype=np.float64))
    level = 1 - (1 - confidence_level) / 2
    tpr_low, tpr_high = clopper_pearson(tp_a, np.full(tp_a.shape, n_members), level)
    fpr_low, fpr_high = clopper_pearson(fp_a, np.full(fp_a.shape, n_non_members), level)
    eps = _epsilon(tpr_low, tpr_high, fpr_low, fpr_high, delta)
    return eps, tpr_low, tpr_high, fpr_low, fpr_high


def mid_ranks(reference: FloatArray, scores: FloatArray) -> FloatArray:
    """Each score's mid-rank share among ``reference`` (ties count 1/2), in [0, 1].

    Scores of different targets are put on one scale by the ranks among each target's
    own selection-run scores, before the targets' guesses are pooled.
    """
    ref = np.sort(np.asarray(reference, dtype=np.float64))
    if ref.size == 0:
        return np.full(np.shape(scores), 0.5)
    below = np.searchsorted(ref, scores, side="left")
    upto = np.searchsorted(ref, scores, side="right")
    return (below + upto) / (2.0 * ref.size)


@dataclasses.dataclass(frozen=True)
class Bound:
    """One attack's result on the evaluation runs.

    Attributes
    ----------
    auc : float or None
        ROC AUC of the scores (None when a class is absent).
    tpr_at_fpr : dict
        TPR at FPR 1 % and 10 % (keys ``"0.01"``, ``"0.1"``).
    epsilon_lower : float
        The ε refuted (0 when none).
    threshold : float or None
        The threshold chosen on the selection runs.
    direction : str or None
        ``"higher"`` (score >= threshold is member) or ``"lower"``.
    tpr, fpr : tuple of float
        Clopper–Pearson intervals of the chosen test's rates.
    n_members, n_non_members : int
        Evaluation observations of each kind.
    epsilon_lower_one_run : float or None
        The pure-DP ε refuted by the same test read as guesses (:func:`one_run_epsilon`:
        the precision of its "member" calls), valid however the guesses about targets
        of one run depend on each other; None when δ > 0.
    roc : dict or None
        The ROC curve of the evaluation scores (:func:`roc_curve`: ``fpr`` and ``tpr``
        lists, at most 101 points); None when a class is absent.
    epsilon_lower_guesses : float or None
        The ε refuted by the guess rule chosen on the selection observations, counted
        on the evaluation ones ("member" and "non-member" guesses, abstaining in
        between; :mod:`synthrisk.audit.guessing`). None when a class is absent.
    guesses : dict or None
        That rule: ``direction``, ``low`` and ``high`` (None for a side switched off),
        ``correct`` and ``n_guesses`` on the evaluation observations.
    epsilon_lower_trade_off : float or None
        The ε refuted by the empirical trade-off curve read at fixed thresholds
        (:func:`synthrisk.audit.guessing.trade_off_bound`).
    mu_lower : float or None
        The Gaussian-DP μ refuted by the same curve.
    """

    auc: float | None
    tpr_at_fpr: dict[str, float | None]
    epsilon_lower: float
    threshold: float | None
    direction: str | None
    tpr: tuple[float, float]
    fpr: tuple[float, float]
    n_members: int
    n_non_members: int
    epsilon_lower_one_run: float | None = None
    roc: dict[str, list[float]] | None = None
    epsilon_lower_guesses: float | None = None
    guesses: dict[str, str | float | int | None] | None = None
    epsilon_lower_trade_off: float | None = None
    mu_lower: float | None = None


def one_run_epsilon(correct: int, guesses: int, *, confidence_level: float) -> float:
    """Pure-DP ε refuted by ``correct`` right "member" guesses out of ``guesses``.

    In a game where every target is included independently with probability 1/2, the
    correct guesses of any guessing rule on the output of an ε-DP mechanism are
    stochastically dominated by ``Binomial(guesses, e^ε / (1 + e^ε))``, even when the
    guesses about several targets look at the same output (Steinke, Nasr & Jagielski
    2023, arXiv 2305.08846, their analysis of pure DP). The bound is the logit of the one-sided
    Clopper–Pearson lower bound of the guesses' precision (0 when it is at most 1/2).

    Examples
    --------
    >>> round(one_run_epsilon(731, 1000, confidence_level=0.95), 3)
    0.881
    >>> one_run_epsilon(5, 10, confidence_level=0.95)
    0.0
    """
    if guesses <= 0 or correct <= 0:
        return 0.0
    alpha = 1 - confidence_level
    low = float(stats.beta.ppf(alpha, correct, guesses - correct + 1))
    if not low > 0.5:
        return 0.0
    return math.log(low / (1 - low)) if low < 1 else math.inf


def _counts(
    member: FloatArray, non_member: FloatArray, thresholds: FloatArray, higher: bool
) -> tuple[np.ndarray, np.ndarray]:
    if higher:
        p, q = np.sort(member), np.sort(non_member)
        return (
            p.size - np.searchsorted(p, thresholds, side="left"),
            q.size - np.searchsorted(q, thresholds, side="left"),
        )
    p, q = np.sort(member), np.sort(non_member)
    return np.searchsorted(p, thresholds, side="right"), np.searchsorted(
        q, thresholds, side="right"
    )


def _choose_threshold(
    scores: FloatArray, labels: np.ndarray, *, delta: float, confidence_level: float
) -> tuple[float, float, bool]:
    """``(epsilon, threshold, higher)`` of the single-threshold test best on these observations."""
    member, non_member = scores[labels], scores[~labels]
    thresholds = np.unique(scores)
    best: tuple[float, float, bool] = (-1.0, float(thresholds[0]), True)
    for higher in (True, False):
        tp, fp = _counts(member, non_member, thresholds, higher)
        eps, *_ = epsilon_lower_bound(
            tp,
            member.size,
            fp,
            non_member.size,
            delta=delta,
            confidence_level=confidence_level,
        )
        i = int(np.argmax(eps))
        if eps[i] > best[0]:
            best = (float(eps[i]), float(thresholds[i]), higher)
    return best


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _rule_dict(
    rule: GuessRule, correct: int, n_guesses: int
) -> dict[str, str | float | int | None]:
    return {
        "direction": rule.direction,
        "low": _finite(rule.low),
        "high": _finite(rule.high),
        "correct": correct,
        "n_guesses": n_guesses,
    }


def attack_bound(
    sel_scores: FloatArray,
    sel_labels: np.ndarray,
    ev_scores: FloatArray,
    ev_labels: np.ndarray,
    *,
    delta: float,
    confidence_level: float,
) -> Bound:
    """Choose the threshold on the selection observations, bound ε on the evaluation ones.

    The threshold and direction maximise the bound on the selection observations (at
    ``confidence_level``; the first such threshold when tied); the AUC, the TPR at low
    FPR and the bound are those of the evaluation observations.
    """
    sel_labels = np.asarray(sel_labels, dtype=bool)
    ev_labels = np.asarray(ev_labels, dtype=bool)
    ev_m, ev_n = ev_scores[ev_labels], ev_scores[~ev_labels]
    auc = (
        roc_auc(ev_labels.astype(np.int64), ev_scores)
        if ev_m.size and ev_n.size
        else float("nan")
    )
    rates = tpr_at_fpr(ev_m, ev_n, REPORTED_FPRS)
    empty = Bound(
        auc=None if math.isnan(auc) else float(auc),
        tpr_at_fpr=rates,
        epsilon_lower=0.0,
        threshold=None,
        direction=None,
        tpr=(0.0, 1.0),
        fpr=(0.0, 1.0),
        n_members=int(ev_m.size),
        n_non_members=int(ev_n.size),
        roc=roc_curve(ev_scores, ev_labels),
    )
    sel_m, sel_n = sel_scores[sel_labels], sel_scores[~sel_labels]
    if not (sel_m.size and sel_n.size and ev_m.size and ev_n.size):
        return empty
    _, threshold, higher = _choose_threshold(
        sel_scores, sel_labels, delta=delta, confidence_level=confidence_level
    )
    tp, fp = _counts(ev_m, ev_n, np.array([threshold]), higher)
    eps, tpr_low, tpr_high, fpr_low, fpr_high = epsilon_lower_bound(
        tp, ev_m.size, fp, ev_n.size, delta=delta, confidence_level=confidence_level
    )
    one_run = (
        one_run_epsilon(
            int(tp[0]), int(tp[0] + fp[0]), confidence_level=confidence_level
        )
        if delta == 0
        else None
    )
    rule, _ = choose_guess_rule(
        sel_scores,
        sel_labels,
        delta=delta,
        confidence_level=ranking_level(confidence_level),
    )
    assert rule is not None  # both classes are present
    correct, n_guesses = count_guesses(ev_scores, ev_labels, rule)
    eps_guesses = guess_epsilon(
        correct, n_guesses, delta=delta, confidence_level=confidence_level
    )[0]
    eps_curve, mu = trade_off_bound(
        sel_scores,
        ev_scores,
        ev_labels,
        delta=delta,
        confidence_level=confidence_level,
    )
    return dataclasses.replace(
        empty,
        epsilon_lower=float(eps[0]),
        epsilon_lower_one_run=one_run,
        epsilon_lower_guesses=float(eps_guesses),
        guesses=_rule_dict(rule, correct, n_guesses),
        epsilon_lower_trade_off=eps_curve,
        mu_lower=mu,
        threshold=threshold,
        direction="higher" if higher else "lower",
        tpr=(float(tpr_low[0]), float(tpr_high[0])),
        fpr=(float(fpr_low[0]), float(fpr_high[0])),
    )


@dataclasses.dataclass(frozen=True)
class SelectedBound:
    """The one test chosen on the selection observations, counted on the evaluation ones.

    Attributes
    ----------
    epsilon_lower : float
        The ε it refutes at the full confidence level (0 when none).
    attack : str or None
        The attack whose scores it reads.
    method : str or None
        ``"guesses"`` (a guess rule, :mod:`synthrisk.audit.guessing`) or
        ``"clopper_pearson"`` (one threshold's TPR and FPR intervals).
    """

    epsilon_lower: float
    attack: str | None
    method: str | None


def selected_bound(
    pools: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    *,
    delta: float,
    confidence_level: float,
    count_level: float | None = None,
) -> SelectedBound:
    """Choose the attack and the test on the selection observations; count it once.

    ``pools`` maps each attack to ``(sel_scores, sel_labels, ev_scores, ev_labels)``.
    Every attack's best guess rule and best single threshold are scored on the selection
    observations at the strict :func:`~synthrisk.audit.guessing.ranking_level` (the
    error shared among every candidate of every attack, so that a test that looks good
    by luck does not win); the one with the largest score there (the first when tied) is
    counted on the evaluation observations at ``confidence_level``. One test is counted,
    so the choice among attacks and methods costs no confidence: no Bonferroni.
    ``count_level`` (default ``confidence_level``) counts the same test at another level:
    the test chosen at ``confidence_level``, counted stricter when it is one of several
    tests whose maximum is reported (the audit's natural targets and canaries).
    """
    level = ranking_level(confidence_level, len(pools))
    best: tuple[float, str | None, str | None, object] = (
        -math.inf,
        None,
        None,
        None,
    )
    for attack, (sel_s, sel_l, _ev_s, ev_l) in pools.items():
        sel_l = np.asarray(sel_l, dtype=bool)
        ev_l = np.asarray(ev_l, dtype=bool)
        if not (sel_l.any() and (~sel_l).any() and ev_l.any() and (~ev_l).any()):
            continue
        rule, eps_rule = choose_guess_rule(
            sel_s, sel_l, delta=delta, confidence_level=level
        )
        if best[1] is None or eps_rule > best[0]:
            best = (eps_rule, attack, "guesses", rule)
        eps_cp, threshold, higher = _choose_threshold(
            np.asarray(sel_s, dtype=np.float64),
            sel_l,
            delta=delta,
            confidence_level=level,
        )
        # a threshold test competes only when it refutes some ε at the ranking level:
        # below that its score is 0 for every test, the trivial ones included
        if eps_cp > 0 and eps_cp > best[0]:
            best = (eps_cp, attack, "clopper_pearson", (threshold, higher))
    _, chosen, method, test = best
    if chosen is None:
        return SelectedBound(0.0, None, None)
    ev_s = np.asarray(pools[chosen][2], dtype=np.float64)
    ev_l = np.asarray(pools[chosen][3], dtype=bool)
    level = confidence_level if count_level is None else count_level
    if method == "guesses":
        assert isinstance(test, GuessRule)
        correct, n_guesses = count_guesses(ev_s, ev_l, test)
        eps = float(
            guess_epsilon(correct, n_guesses, delta=delta, confidence_level=level)[0]
        )
    else:
        threshold, higher = test  # type: ignore[misc]
        tp, fp = _counts(ev_s[ev_l], ev_s[~ev_l], np.array([threshold]), higher)
        eps = float(
            epsilon_lower_bound(
                tp,
                int(ev_l.sum()),
                fp,
                int((~ev_l).sum()),
                delta=delta,
                confidence_level=level,
            )[0][0]
        )
    if eps <= 0:
        return SelectedBound(0.0, None, None)
    return SelectedBound(eps, chosen, method)
