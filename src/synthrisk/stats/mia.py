# SPDX-License-Identifier: BSD-3-Clause
"""Membership-attack summaries: TPR at low FPR and the empirical ε lower bound.

An AUC averages over every threshold; a privacy claim is about the worst one. Two
summaries look there:

* :func:`tpr_at_fpr` — the largest true-positive rate an attack reaches while
  calling at most a given share of non-members members (Carlini et al., 2022,
  "Membership inference attacks from first principles");
* :func:`empirical_epsilon` — a Clopper–Pearson lower bound of the differential-
  privacy ε that the attack's best threshold refutes, as TAPAS'
  ``EffectiveEpsilonReport`` computes it (Jagielski, Ullman & Oprea, 2020, "Auditing
  differentially private machine learning"): a threshold and direction are chosen on a
  seeded validation share of the records (TAPAS' ``"cp"`` heuristic: the highest lower
  bound at 90 % confidence), and ``max(0, log(TPR_low / FPR_high))`` is computed on
  the rest, with two-sided Clopper–Pearson intervals at ``1 - (1 - c) / 2`` for each
  rate. A generator that is ε-differentially private cannot have a true ε above the
  bound (at confidence ``c``), so a bound above the claimed ε refutes the claim.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from synthrisk._typing import FloatArray, JSONValue
from synthrisk.stats.ranking import delong_auc

__all__ = [
    "attack_summary",
    "auc_control",
    "clopper_pearson",
    "empirical_epsilon",
    "tpr_at_fpr",
]

_Z95 = 1.959963984540054

#: false-positive rates at which the true-positive rate is reported
LOW_FPRS = (0.001, 0.01)


def tpr_at_fpr(
    member_scores: FloatArray,
    non_member_scores: FloatArray,
    fprs: tuple[float, ...] = LOW_FPRS,
) -> dict[str, float | None]:
    """Largest TPR over thresholds ``t`` (score >= t is "member") with FPR <= each target."""
    m = np.sort(np.asarray(member_scores, dtype=np.float64))
    n = np.sort(np.asarray(non_member_scores, dtype=np.float64))
    out: dict[str, float | None] = {}
    if m.size == 0 or n.size == 0:
        return {str(f): None for f in fprs}
    if np.isnan(m).any() or np.isnan(n).any():
        thresholds = np.unique(np.r_[m, n, np.inf])
        fp = n.size - np.searchsorted(n, thresholds, side="left")
        tp = m.size - np.searchsorted(m, thresholds, side="left")
        fpr, tpr = fp / n.size, tp / m.size
        for target in fprs:
            ok = fpr <= target + 1e-15
            out[str(target)] = float(tpr[ok].max()) if ok.any() else 0.0
        return out
    for target in fprs:
        out[str(target)] = _tpr_within(m, n, target + 1e-15)
    return out


def _tpr_within(members: np.ndarray, non_members: np.ndarray, limit: float) -> float:
    """Best TPR over the thresholds (the distinct scores and inf) with FPR <= ``limit``.

    Both sides sorted, no NaN. With ``k`` the most false positives whose rate is within
    the limit, the thresholds allowed are those above the ``k+1``-th largest
    non-member score ``v``, and the best of them (the lowest) flags every member above
    ``v``: one binary search instead of the rates at every threshold.
    """
    n_neg = non_members.size
    k = min(math.floor(limit * n_neg), n_neg)
    while k < n_neg and (k + 1) / n_neg <= limit:
        k += 1
    while k > 0 and k / n_neg > limit:
        k -= 1
    if k >= n_neg:
        return 1.0
    above = members.size - np.searchsorted(
        members, non_members[n_neg - 1 - k], side="right"
    )
    return float(above / members.size)


def clopper_pearson(
    successes: np.ndarray, total: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper–Pearson interval at ``level`` (vectorised; as ``scipy.stats.binomtest(...).proportion_ci``)."""
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(total, dtype=np.float64)
    alpha = 1.0 - level
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0.0)
        high = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
    return low, high


def _bounds_of_counts(
    tp: np.ndarray, n_pos: int, fp: np.ndarray, n_neg: int, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """TAPAS' bounds of ε from the true and false positives at each threshold.

    ``max(0, log(TPR_low / FPR_high))`` and ``log(TPR_high / FPR_low)``, with
    two-sided Clopper–Pearson intervals at ``1 - (1 - level) / 2`` for each rate.
    """
    half = 1 - (1 - level) / 2
    tpr_low, tpr_high = clopper_pearson(tp, np.full(tp.shape, n_pos), half)
    fpr_low, fpr_high = clopper_pearson(fp, np.full(fp.shape, n_neg), half)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(
            fpr_high > 0, np.maximum(0.0, np.log(tpr_low / fpr_high)), np.inf
        )
        high = np.where(fpr_low > 0, np.log(tpr_high / fpr_low), np.inf)
    return low, high


#: thresholds whose bounds are computed at a time
_THRESHOLD_BLOCK = 1 << 16


def _best_threshold(
    member: np.ndarray, non_member: np.ndarray, thresholds: np.ndarray, inverse: bool
) -> tuple[float, int]:
    """The highest lower bound at 90 % over ``thresholds`` (the first if tied) and its position.

    ``score >= t`` flags members, or with ``inverse`` ``score <= t`` flags
    non-members (scores and thresholds negated); a bound that is not a number counts
    as -1. The thresholds are taken a block at a time.
    """
    if inverse:
        member, non_member = -non_member, -member
        thresholds = -thresholds
    p, q = np.sort(member), np.sort(non_member)
    best = (-np.inf, 0)
    for start in range(0, thresholds.size, _THRESHOLD_BLOCK):
        block = thresholds[start : start + _THRESHOLD_BLOCK]
        tp = p.size - np.searchsorted(p, block, side="left")
        fp = q.size - np.searchsorted(q, block, side="left")
        low, _ = _bounds_of_counts(tp, p.size, fp, q.size, 0.9)
        low = np.where(np.isnan(low), -1.0, low)
        i = int(np.argmax(low))
        if low[i] > best[0]:
            best = (float(low[i]), start + i)
    return best


def _flagged(scores: np.ndarray, threshold: float, inverse: bool) -> int:
    """Scores at or above ``threshold`` (at or below when ``inverse``), counted as sorting does.

    As binary search in the sorted scores counts them: a missing score sorts last, so
    it is always flagged, and a missing threshold flags only those.
    """
    missing = int(np.count_nonzero(np.isnan(scores)))
    if math.isnan(threshold):
        return missing
    beyond = scores > threshold if inverse else scores < threshold
    return scores.size - int(np.count_nonzero(beyond))


def empirical_epsilon(
    member_scores: FloatArray,
    non_member_scores: FloatArray,
    *,
    confidence_level: float = 0.95,
    validation_split: float = 0.1,
    seed: int = 0,
) -> dict[str, JSONValue]:
    """Clopper–Pearson lower bound of ε from an attack's scores (TAPAS' procedure).

    Parameters
    ----------
    member_scores, non_member_scores : ndarray
        Attack scores, higher = "member".
    confidence_level : float, default=0.95
        Confidence of the bound.
    validation_split : float, default=0.1
        Share of the records (shuffled with ``seed``) used to choose the threshold.
    seed : int, default=0
        Seed of the shuffle.

    Returns
    -------
    dict
        ``epsilon_low``, ``epsilon_high``, ``threshold``, ``direction`` and the counts.
    """
    member = np.asarray(member_scores, dtype=np.float64)
    non_member = np.asarray(non_member_scores, dtype=np.float64)
    m, n = member.size, non_member.size
    out: dict[str, JSONValue] = {
        "epsilon_low": None,
        "epsilon_high": None,
        "threshold": None,
        "direction": None,
        "confidence_level": confidence_level,
        "validation_split": validation_split,
        "method": "TAPAS EffectiveEpsilonReport ('cp' heuristic): Clopper-Pearson bounds of TPR and FPR",
    }
    if m < 2 or n < 2:
        return out
    # The records pooled (members first) and shuffled; the first `split` of the
    # shuffle choose the threshold, the rest test it. Only the validation rows are
    # gathered: the test counts are the whole sides' counts less the validation's.
    split = int(validation_split * (m + n))
    chosen = np.random.default_rng(seed).permutation(m + n)[:split].copy()
    is_member = chosen < m
    val_member = member[chosen[is_member]]
    val_non_member = non_member[chosen[~is_member] - m]
    del chosen, is_member
    best: tuple[float, float | None, bool | None] = (-1.0, None, None)
    if val_member.size and val_non_member.size:
        thresholds = np.unique(np.r_[val_member, val_non_member])
        for inverse in (False, True):
            top, i = _best_threshold(val_member, val_non_member, thresholds, inverse)
            if top > best[0]:
                best = (top, float(thresholds[i]), inverse)
    if best[1] is None:
        return out
    threshold, inverse = best[1], bool(best[2])
    tp = _flagged(member, threshold, inverse) - _flagged(val_member, threshold, inverse)
    fp = _flagged(non_member, threshold, inverse) - _flagged(
        val_non_member, threshold, inverse
    )
    n_test_members, n_test_non_members = m - val_member.size, n - val_non_member.size
    if inverse:  # the non-members are the positives of "score <= t is non-member"
        tp, fp = fp, tp
        n_test_members, n_test_non_members = n_test_non_members, n_test_members
    low, high = _bounds_of_counts(
        np.array([tp]),
        n_test_members,
        np.array([fp]),
        n_test_non_members,
        confidence_level,
    )
    out.update(
        epsilon_low=float(low[0]) if math.isfinite(low[0]) else None,
        epsilon_high=float(high[0]) if math.isfinite(high[0]) else None,
        threshold=threshold,
        direction="score <= threshold is non-member"
        if inverse
        else "score >= threshold is member",
        n_test=int(m + n - split),
    )
    return out


def attack_summary(
    member_scores: FloatArray, non_member_scores: FloatArray, *, seed: int = 0
) -> dict[str, JSONValue]:
    """``tpr_at_fpr`` and ``empirical_epsilon`` in one breakdown block."""
    return {
        "tpr_at_fpr": tpr_at_fpr(member_scores, non_member_scores),
        "empirical_epsilon": empirical_epsilon(
            member_scores, non_member_scores, seed=seed
        ),
    }


def auc_control(member: FloatArray, non_member: FloatArray) -> dict[str, JSONValue]:
    """AUC − 0.5 with its DeLong interval and one-sided p-value (the ``control`` block)."""
    m, n = member.size, non_member.size
    out: dict[str, JSONValue] = {
        "statistic": "ROC AUC of the attack (members = real rows, non-members = holdout rows)",
        "real": None,
        "holdout": 0.5,
        "effect": None,
        "ci": None,
        "confidence_level": 0.95,
        "p_value": None,
        "test": "one-sided DeLong test of AUC > 0.5",
        "alternative": "greater",
        "n_real": int(m),
        "n_holdout": int(n),
    }
    if m < 2 or n < 2:
        return out
    auc, se = delong_auc(member, non_member)
    effect = auc - 0.5
    p_value = (
        float(stats.norm.sf(effect / se)) if se > 0 else (0.0 if effect > 0 else 1.0)
    )
    out.update(
        real=auc,
        effect=effect,
        ci=[effect - _Z95 * se, effect + _Z95 * se],
        p_value=p_value,
    )
    return out
