# SPDX-License-Identifier: BSD-3-Clause
"""Ranking metrics of a binary scorer in plain numpy: ROC curve, ROC AUC, average precision.

The definitions are scikit-learn's (``roc_curve``, ``roc_auc_score``,
``average_precision_score``): thresholds at the distinct scores, ties between a
positive and a negative count half in the AUC, and average precision is the
un-interpolated step integral ``sum_n (R_n - R_{n-1}) P_n``. Kept here so that the
kNN membership metrics need no scikit-learn. :func:`auc_delong_interval` gives the
AUC's DeLong confidence interval.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import stats

from synthrisk._typing import FloatArray
from synthrisk.stats.intervals import probit

__all__ = [
    "RankingScores",
    "auc_delong_interval",
    "average_precision",
    "delong_auc",
    "ranking_scores",
    "roc_auc",
    "roc_curve",
    "thin_curve",
]


def _clf_counts(
    labels: np.ndarray, scores: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Cumulative false and true positives at each distinct score, highest score first."""
    order = np.argsort(scores, kind="mergesort")[::-1]
    return _counts_in_order(scores[order], labels[order])


def _counts_in_order(
    scores: FloatArray, labels: np.ndarray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`_clf_counts` of scores already sorted, highest first."""
    ends = np.flatnonzero(np.diff(scores))
    ends = np.append(ends, labels.size - 1)
    thresholds = scores[ends]
    tps = np.cumsum(labels, dtype=np.float64)[ends]
    fps = 1.0 + ends - tps
    return fps, tps, thresholds


def roc_curve(
    labels: np.ndarray, scores: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """ROC curve of ``scores`` for binary ``labels`` (1 = positive).

    Parameters
    ----------
    labels : ndarray of shape (n,)
        1 for positives (members), 0 for negatives.
    scores : ndarray of shape (n,)
        Higher means "more likely positive".

    Returns
    -------
    fpr, tpr : ndarray
        False and true positive rates, starting at (0, 0) and ending at (1, 1).
    thresholds : ndarray
        The distinct scores, decreasing, preceded by ``inf``.
    """
    fps, tps, thresholds = _clf_counts(
        np.asarray(labels), np.asarray(scores, dtype=np.float64)
    )
    fps = np.r_[0.0, fps]
    tps = np.r_[0.0, tps]
    n_neg, n_pos = fps[-1], tps[-1]
    fpr = fps / n_neg if n_neg else np.full(fps.shape, np.nan)
    tpr = tps / n_pos if n_pos else np.full(tps.shape, np.nan)
    return fpr, tpr, np.r_[np.inf, thresholds]


def roc_auc(labels: np.ndarray, scores: FloatArray) -> float:
    """Area under the ROC curve (NaN when one class is absent)."""
    fpr, tpr, _ = roc_curve(labels, scores)
    if np.isnan(fpr).any() or np.isnan(tpr).any():
        return float("nan")
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2.0)


def average_precision(labels: np.ndarray, scores: FloatArray) -> float:
    """Average precision (no interpolation), scikit-learn's definition."""
    fps, tps, _ = _clf_counts(np.asarray(labels), np.asarray(scores, dtype=np.float64))
    n_pos = tps[-1]
    if n_pos == 0:
        return float("nan")
    precision = tps / (tps + fps)
    recall = tps / n_pos
    return float(max(0.0, np.sum(np.diff(np.r_[0.0, recall]) * precision)))


#: points whose second differences :func:`thin_curve` takes at a time
_THIN_BLOCK = 1 << 20


def thin_curve(
    fpr: FloatArray, tpr: FloatArray, *, max_points: int = 201
) -> tuple[list[float], list[float]]:
    """At most ``max_points`` points of a ROC curve for plotting (collinear points dropped first)."""
    keep = np.ones(fpr.size, dtype=bool)
    block = _THIN_BLOCK  # curves of millions of points: a block at a time
    for start in range(0, max(fpr.size - 2, 0), block):
        stop = min(start + block, fpr.size - 2)
        second = np.abs(np.diff(fpr[start : stop + 2], 2))
        second += np.abs(np.diff(tpr[start : stop + 2], 2))
        keep[start + 1 : stop + 1] = second > 1e-12
    fpr, tpr = fpr[keep], tpr[keep]
    if fpr.size > max_points:
        idx = np.unique(
            np.round(np.linspace(0, fpr.size - 1, max_points)).astype(np.int64)
        )
        fpr, tpr = fpr[idx], tpr[idx]
    return [float(v) for v in fpr], [float(v) for v in tpr]


@dataclasses.dataclass(frozen=True)
class RankingScores:
    """AUC, AP and its no-skill baseline, and a thinned ROC curve."""

    roc_auc: float
    average_precision: float
    average_precision_baseline: float
    fpr: FloatArray
    tpr: FloatArray
    thresholds: FloatArray


def _rates(fps: FloatArray, tps: FloatArray) -> tuple[FloatArray, FloatArray]:
    """:func:`roc_curve`'s rates from the counts (a leading 0, then counts / total)."""
    out = []
    for counts in (fps, tps):
        total = counts[-1]
        rate = np.empty(counts.size + 1)
        rate[0] = 0.0
        if total:
            np.divide(counts, total, out=rate[1:])
        else:
            rate.fill(np.nan)
        out.append(rate)
    return out[0], out[1]


def _area(fpr: FloatArray, tpr: FloatArray) -> float:
    """:func:`roc_auc` of a curve, with one temporary at a time."""
    if np.isnan(fpr).any() or np.isnan(tpr).any():
        return float("nan")
    width = np.diff(fpr)
    height = tpr[1:] + tpr[:-1]
    width *= height
    del height
    return float(np.sum(width) / 2.0)


def _precision_area(fps: FloatArray, tps: FloatArray) -> float:
    """:func:`average_precision` from the counts, with two temporaries."""
    n_pos = tps[-1]
    if n_pos == 0:
        return float("nan")
    precision = tps + fps
    np.divide(tps, precision, out=precision)
    step = tps / n_pos
    step[1:] -= step[
        :-1
    ].copy()  # np.diff(np.r_[0.0, recall]); step[0] - 0.0 is step[0]
    step *= precision
    return float(max(0.0, np.sum(step)))


def ranking_scores(
    member_scores: FloatArray, non_member_scores: FloatArray
) -> RankingScores:
    """Score a membership attack: members are the positives (label 1), as in APT.

    The no-skill baseline of average precision is the member share
    ``n_members / (n_members + n_non_members)``; the ROC AUC's is 0.5. The scores
    are sorted once for the curve, the AUC and the average precision, with a few
    arrays of the scores' size alive at a time (a cluster's driver scores millions of
    rows).
    """
    member_scores = np.asarray(member_scores, dtype=np.float64)
    non_member_scores = np.asarray(non_member_scores, dtype=np.float64)
    n_neg, n_pos = non_member_scores.size, member_scores.size
    scores = np.r_[non_member_scores, member_scores]
    order = np.argsort(scores, kind="mergesort")[::-1]
    scores = scores[order]
    labels = order >= n_neg  # members come after the non-members
    del order
    fps, tps, thresholds = _counts_in_order(scores, labels)
    del scores, labels
    average = _precision_area(fps, tps)
    fpr, tpr = _rates(fps, tps)
    del fps, tps
    return RankingScores(
        roc_auc=_area(fpr, tpr),
        average_precision=average,
        average_precision_baseline=n_pos / max(n_neg + n_pos, 1),
        fpr=fpr,
        tpr=tpr,
        thresholds=np.r_[np.inf, thresholds],
    )


def auc_delong_interval(
    member_scores: FloatArray,
    non_member_scores: FloatArray,
    *,
    confidence_level: float = 0.95,
) -> tuple[float, float] | None:
    """DeLong interval of the ROC AUC (members positive), clipped to [0, 1].

    Parameters
    ----------
    member_scores : ndarray of shape (n_members,)
        Scores of the positives.
    non_member_scores : ndarray of shape (n_non_members,)
        Scores of the negatives.
    confidence_level : float, default=0.95
        Two-sided confidence level in [0, 1).

    Returns
    -------
    tuple of (float, float) or None
        None when either side has fewer than 2 scores.

    References
    ----------
    E. R. DeLong, D. M. DeLong, D. L. Clarke-Pearson (1988), "Comparing the areas under
    two or more correlated receiver operating characteristic curves: a nonparametric
    approach", Biometrics 44, 837-845.
    """
    if member_scores.size < 2 or non_member_scores.size < 2:
        return None
    auc, se = delong_auc(member_scores, non_member_scores)
    half = probit(confidence_level) * se
    return max(0.0, auc - half), min(1.0, auc + half)


def delong_auc(positives: FloatArray, negatives: FloatArray) -> tuple[float, float]:
    """ROC AUC of ``positives`` over ``negatives`` and its DeLong standard error.

    Ties count one half. Both sides need at least 2 scores (see
    :func:`auc_delong_interval` for the reference). Each score's placement value
    (the share of the other side below it, ties one half) is the difference of its
    average ranks in the pooled scores and in its own side; it is counted here by
    binary search in the other side, sorted, which gives the same numbers with a
    few arrays of one side's size instead of rank arrays of the pooled size.
    """
    positives = np.asarray(positives, dtype=np.float64)
    negatives = np.asarray(negatives, dtype=np.float64)
    m, n = positives.size, negatives.size
    if np.isnan(positives).any() or np.isnan(negatives).any():
        ranks = stats.rankdata(np.r_[positives, negatives])
        v10 = (ranks[:m] - stats.rankdata(positives)) / n
        v01 = 1.0 - (ranks[m:] - stats.rankdata(negatives)) / m
    else:
        v10 = _placements(positives, negatives) / n
        v01 = 1.0 - _placements(negatives, positives) / m
    var = v10.var(ddof=1) / m + v01.var(ddof=1) / n
    return float(v10.mean()), math.sqrt(max(var, 0.0))


def _placements(scores: FloatArray, other: FloatArray) -> FloatArray:
    """How many of ``other`` are below each score, ties counting one half (exact halves)."""
    other = np.sort(other)
    below = np.searchsorted(other, scores, side="left")
    below += np.searchsorted(other, scores, side="right")
    del other
    return np.asarray(below * 0.5, dtype=np.float64)
