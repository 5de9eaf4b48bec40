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
from collections.abc import Iterator

import numpy as np
from scipy import stats

from synthrisk._typing import FloatArray
from synthrisk.stats.intervals import probit

__all__ = [
    "RankingScores",
    "RankingSummary",
    "auc_delong_interval",
    "average_precision",
    "delong_auc",
    "ranking_scores",
    "ranking_summary",
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


@dataclasses.dataclass(frozen=True)
class RankingSummary:
    """AUC, AP and its no-skill baseline, and the ROC curve thinned for plotting."""

    roc_auc: float
    average_precision: float
    average_precision_baseline: float
    fpr: list[float]
    tpr: list[float]


#: distinct scores counted at a time by :func:`ranking_summary`
_SUMMARY_BLOCK = 1 << 16


def ranking_summary(
    member_scores: FloatArray,
    non_member_scores: FloatArray,
    *,
    max_points: int = 201,
) -> RankingSummary:
    """:func:`ranking_scores` with the curve thinned by :func:`thin_curve`, in bounded memory.

    The same curve points and, up to the order of summation, the same AUC and
    average precision, without the full curve in memory: each side is sorted once,
    and the curve is counted a block of thresholds at a time (twice when it must be
    thinned to ``max_points``). Besides the scores, the memory is the two sorted
    sides. Scores that are not all finite, or a side without scores, take
    :func:`ranking_scores`.
    """
    member = np.asarray(member_scores, dtype=np.float64)
    non_member = np.asarray(non_member_scores, dtype=np.float64)
    n_pos, n_neg = member.size, non_member.size
    baseline = n_pos / max(n_neg + n_pos, 1)
    if not (
        n_pos and n_neg and np.isfinite(member).all() and np.isfinite(non_member).all()
    ):
        full = ranking_scores(member, non_member)
        points = thin_curve(full.fpr, full.tpr, max_points=max_points)
        return RankingSummary(
            full.roc_auc, full.average_precision, baseline, points[0], points[1]
        )
    pos, neg = np.sort(member), np.sort(non_member)
    sums = [0.0, 0.0]  # twice the area, and the average precision
    n_kept = 0
    kept_f: list[FloatArray] = []
    kept_t: list[FloatArray] = []
    for f, t in _thinned(_points(pos, neg, sums)):
        n_kept += f.size
        if n_kept <= max_points:
            kept_f.append(f)
            kept_t.append(t)
    if n_kept > max_points:  # a second pass picks the points to plot
        wanted = np.unique(
            np.round(np.linspace(0, n_kept - 1, max_points)).astype(np.int64)
        )
        kept_f, kept_t, offset = [], [], 0
        for f, t in _thinned(_points(pos, neg)):
            local = wanted[(wanted >= offset) & (wanted < offset + f.size)] - offset
            kept_f.append(f[local])
            kept_t.append(t[local])
            offset += f.size
    return RankingSummary(
        roc_auc=sums[0] / 2.0,
        average_precision=max(0.0, sums[1]),
        average_precision_baseline=baseline,
        fpr=[float(v) for v in np.concatenate(kept_f)],
        tpr=[float(v) for v in np.concatenate(kept_t)],
    )


def _curve_blocks(
    pos: FloatArray, neg: FloatArray
) -> Iterator[tuple[FloatArray, FloatArray, np.ndarray, np.ndarray]]:
    """The ROC curve's rates and counts at the distinct scores, highest first, in blocks.

    ``pos`` and ``neg`` are the two sides sorted, both non-empty and finite. A block
    holds the distinct scores of at most ``_SUMMARY_BLOCK`` scores of each side
    (more when a score is tied); the counts at a threshold are the scores of each
    side at or above it, as :func:`roc_curve` counts them.
    """
    block = _SUMMARY_BLOCK
    hi_p, hi_q = pos.size, neg.size
    while hi_p or hi_q:
        cut = max(
            float(side[max(hi - block, 0)])
            for side, hi in ((pos, hi_p), (neg, hi_q))
            if hi
        )
        lo_p = int(np.searchsorted(pos[:hi_p], cut, side="left"))
        lo_q = int(np.searchsorted(neg[:hi_q], cut, side="left"))
        thresholds = np.union1d(pos[lo_p:hi_p], neg[lo_q:hi_q])[::-1]
        tps = pos.size - np.searchsorted(pos, thresholds, side="left")
        fps = neg.size - np.searchsorted(neg, thresholds, side="left")
        yield fps / neg.size, tps / pos.size, fps, tps
        hi_p, hi_q = lo_p, lo_q


def _points(
    pos: FloatArray, neg: FloatArray, sums: list[float] | None = None
) -> Iterator[tuple[FloatArray, FloatArray]]:
    """The ROC curve's points in blocks: (0, 0), then :func:`_curve_blocks`' rates.

    With ``sums``, adds twice the curve's area (trapezoids, as :func:`_area`) and
    its average precision (as :func:`_precision_area`) to its two numbers.
    """
    yield np.zeros(1), np.zeros(1)
    last_f = last_t = 0.0  # the previous point (the recall is the TPR)
    for fpr, tpr, fps, tps in _curve_blocks(pos, neg):
        if sums is not None:
            width = np.diff(np.r_[last_f, fpr])
            width *= tpr + np.r_[last_t, tpr[:-1]]
            sums[0] += float(np.sum(width))
            precision = tps + fps
            precision = tps / precision
            step = tpr - np.r_[last_t, tpr[:-1]]
            step *= precision
            sums[1] += float(np.sum(step))
            last_f, last_t = float(fpr[-1]), float(tpr[-1])
        yield fpr, tpr


def _thinned(
    blocks: Iterator[tuple[FloatArray, FloatArray]],
) -> Iterator[tuple[FloatArray, FloatArray]]:
    """:func:`thin_curve`'s first step (drop collinear points) on a curve given in blocks.

    A point is kept when the second differences around it, of the FPR plus of the
    TPR, exceed 1e-12; the first and the last point are always kept. Each block is
    decided with the two points before it.
    """
    carry: tuple[FloatArray, FloatArray] | None = None
    for f, t in blocks:
        if carry is None:
            yield f[:1], t[:1]
            ext_f, ext_t = f, t
        else:
            ext_f, ext_t = np.r_[carry[0], f], np.r_[carry[1], t]
        if ext_f.size >= 3:
            second = np.abs(np.diff(ext_f, 2))
            second += np.abs(np.diff(ext_t, 2))
            keep = second > 1e-12
            yield ext_f[1:-1][keep], ext_t[1:-1][keep]
        carry = ext_f[-2:], ext_t[-2:]
    if carry is not None:
        yield carry[0][-1:], carry[1][-1:]


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
        auc, var10 = float(v10.mean()), v10.var(ddof=1)
        var01 = v01.var(ddof=1)
    else:  # one side's placements at a time, reduced before the other's
        v10 = _placements(positives, negatives)
        v10 /= n
        auc, var10 = float(v10.mean()), v10.var(ddof=1)
        del v10
        v01 = _placements(negatives, positives)
        v01 /= m
        np.subtract(1.0, v01, out=v01)
        var01 = v01.var(ddof=1)
    var = var10 / m + var01 / n
    return auc, math.sqrt(max(var, 0.0))


#: scores whose placements are counted at a time
_PLACEMENT_BLOCK = 1 << 16


def _placements(scores: FloatArray, other: FloatArray) -> FloatArray:
    """How many of ``other`` are below each score, ties counting one half (exact halves)."""
    other = np.sort(other)
    out = np.empty(scores.size, dtype=np.float64)
    for start in range(0, scores.size, _PLACEMENT_BLOCK):
        chunk = scores[start : start + _PLACEMENT_BLOCK]
        below = np.searchsorted(other, chunk, side="left")
        below += np.searchsorted(other, chunk, side="right")
        np.multiply(below, 0.5, out=out[start : start + chunk.size])
    return out
