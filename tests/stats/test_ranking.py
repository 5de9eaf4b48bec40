# SPDX-License-Identifier: BSD-3-Clause
"""ROC AUC, average precision and ROC curve in numpy equal scikit-learn's definitions."""

from __future__ import annotations

import numpy as np
import pytest

from synthrisk.stats.ranking import (
    auc_delong_interval,
    average_precision,
    ranking_scores,
    roc_auc,
    roc_curve,
    thin_curve,
)


def test_hand_computed_with_ties() -> None:
    labels = np.array([1, 0, 1, 0, 1])
    scores = np.array([0.9, 0.9, 0.5, 0.1, 0.1])
    # pairs (pos, neg): (0.9,0.9)=.5 (0.9,0.1)=1 (0.5,0.9)=0 (0.5,0.1)=1 (0.1,0.9)=0 (0.1,0.1)=.5 -> 3/6
    assert roc_auc(labels, scores) == pytest.approx(0.5)
    # thresholds 0.9: P=1/2 R=1/3; 0.5: P=2/3 R=2/3; 0.1: P=3/5 R=1
    assert average_precision(labels, scores) == pytest.approx(
        1 / 3 * 1 / 2 + 1 / 3 * 2 / 3 + 1 / 3 * 3 / 5
    )
    fpr, tpr, thresholds = roc_curve(labels, scores)
    np.testing.assert_allclose(fpr, [0, 0.5, 0.5, 1])
    np.testing.assert_allclose(tpr, [0, 1 / 3, 2 / 3, 1])
    np.testing.assert_allclose(thresholds, [np.inf, 0.9, 0.5, 0.1])


def test_matches_scikit_learn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    for trial in range(40):
        n = int(rng.integers(3, 80))
        labels = rng.integers(0, 2, n)
        labels[:2] = [0, 1]
        scores = rng.integers(0, 6, n).astype(float) if trial % 2 else rng.random(n)
        assert roc_auc(labels, scores) == pytest.approx(
            metrics.roc_auc_score(labels, scores), abs=1e-12
        )
        assert average_precision(labels, scores) == pytest.approx(
            metrics.average_precision_score(labels, scores), abs=1e-12
        )


def test_one_class_gives_nan_and_baseline() -> None:
    assert np.isnan(roc_auc(np.ones(3), np.arange(3.0)))
    assert np.isnan(average_precision(np.zeros(3), np.arange(3.0)))
    scores = ranking_scores(np.array([0.9, 0.8, 0.7]), np.array([0.1]))
    assert scores.roc_auc == 1.0
    assert scores.average_precision_baseline == 0.75


def test_thin_curve_keeps_shape_and_endpoints() -> None:
    fpr = np.linspace(0, 1, 1001)
    tpr = np.sqrt(fpr)
    x, y = thin_curve(fpr, tpr, max_points=51)
    assert len(x) == 51
    assert (x[0], y[0], x[-1], y[-1]) == (0.0, 0.0, 1.0, 1.0)
    x, y = thin_curve(
        np.linspace(0, 1, 11), np.linspace(0, 1, 11)
    )  # collinear: two points suffice
    assert (x, y) == ([0.0, 1.0], [0.0, 1.0])


def test_delong_interval_contains_auc_and_shrinks() -> None:
    rng = np.random.default_rng(0)
    small = auc_delong_interval(rng.normal(0.5, 1, 50), rng.normal(0, 1, 50))
    large = auc_delong_interval(rng.normal(0.5, 1, 5000), rng.normal(0, 1, 5000))
    assert small is not None
    assert large is not None
    assert large[1] - large[0] < (small[1] - small[0]) / 5
    # the true AUC of N(0.5, 1) vs N(0, 1) is Phi(0.5 / sqrt(2)) = 0.638
    assert large[0] < 0.638 < large[1]
    assert auc_delong_interval(np.array([1.0]), np.array([0.0, 1.0])) is None


def _score_pairs() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    pairs = []
    for m, n in [(2, 2), (7, 3), (300, 200)]:
        pairs += [
            (rng.random(m), rng.random(n)),
            (rng.integers(0, 4, m).astype(float), rng.integers(0, 4, n).astype(float)),
            (np.r_[rng.random(m - 1), np.inf], np.r_[-np.inf, rng.random(n - 1)]),
            (np.zeros(m), np.zeros(n)),
        ]
    return pairs


@pytest.mark.parametrize("pair", _score_pairs())
def test_one_sort_gives_the_separate_functions_bit_for_bit(
    pair: tuple[np.ndarray, np.ndarray],
) -> None:
    members, non_members = pair
    labels = np.r_[np.zeros(non_members.size), np.ones(members.size)]
    scores = np.r_[non_members, members]
    got = ranking_scores(members, non_members)
    fpr, tpr, thresholds = roc_curve(labels, scores)
    np.testing.assert_array_equal(got.fpr, fpr)
    np.testing.assert_array_equal(got.tpr, tpr)
    np.testing.assert_array_equal(got.thresholds, thresholds)
    assert got.roc_auc == roc_auc(labels, scores)
    assert got.average_precision == average_precision(labels, scores)


@pytest.mark.parametrize("pair", _score_pairs())
def test_delong_placements_equal_the_rank_formula(
    pair: tuple[np.ndarray, np.ndarray],
) -> None:
    from scipy import stats

    from synthrisk.stats.ranking import delong_auc

    x, y = pair
    m, n = x.size, y.size
    ranks = stats.rankdata(np.r_[x, y])
    v10 = (ranks[:m] - stats.rankdata(x)) / n
    v01 = 1.0 - (ranks[m:] - stats.rankdata(y)) / m
    se = np.sqrt(max(v10.var(ddof=1) / m + v01.var(ddof=1) / n, 0.0))
    assert delong_auc(x, y) == (float(v10.mean()), float(se))


def test_delong_with_missing_scores_is_undefined() -> None:
    from synthrisk.stats.ranking import delong_auc

    auc, se = delong_auc(np.array([1.0, np.nan, 2.0]), np.array([0.0, 1.0]))
    assert np.isnan(auc)
    assert np.isnan(se)


@pytest.mark.parametrize("block", [1, 2, 3, 1000])
def test_thin_curve_in_blocks_equals_one_pass(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    import synthrisk.stats.ranking as ranking

    rng = np.random.default_rng(3)
    steps = rng.integers(0, 3, (2, 5000)).astype(float)  # many collinear runs
    fpr, tpr = (np.r_[0.0, np.cumsum(s)] / s.sum() for s in steps)
    whole = thin_curve(fpr, tpr, max_points=10**6)
    assert 2 < len(whole[0]) < fpr.size - 100  # collinear points dropped
    monkeypatch.setattr(ranking, "_THIN_BLOCK", block)
    assert thin_curve(fpr, tpr, max_points=10**6) == whole
    assert thin_curve(fpr, tpr) == thin_curve(fpr, tpr)


@pytest.mark.parametrize("block", [1, 2, 3, 1 << 18])
@pytest.mark.parametrize("max_points", [3, 50, 201, 10**6])
@pytest.mark.parametrize("pair", _score_pairs())
def test_summary_in_blocks_equals_the_full_curve_thinned(
    monkeypatch: pytest.MonkeyPatch,
    pair: tuple[np.ndarray, np.ndarray],
    max_points: int,
    block: int,
) -> None:
    # the same plotted points bit for bit, the same AUC and AP up to summation order,
    # whatever the block of thresholds (ties, infinite scores, one tied value)
    import synthrisk.stats.ranking as ranking

    monkeypatch.setattr(ranking, "_SUMMARY_BLOCK", block)
    members, non_members = pair
    full = ranking_scores(members, non_members)
    got = ranking.ranking_summary(members, non_members, max_points=max_points)
    assert (got.fpr, got.tpr) == thin_curve(full.fpr, full.tpr, max_points=max_points)
    assert got.roc_auc == pytest.approx(full.roc_auc, abs=1e-13)
    assert got.average_precision == pytest.approx(full.average_precision, abs=1e-13)
    assert got.average_precision_baseline == full.average_precision_baseline


@pytest.mark.parametrize("seed", range(4))
def test_summary_of_a_long_curve_in_blocks(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    import synthrisk.stats.ranking as ranking

    rng = np.random.default_rng(seed)
    members = np.round(rng.normal(0.3, 1, 20_000), 2 + seed % 2)  # ties within blocks
    non_members = np.round(rng.normal(0, 1, 15_000), 2 + seed % 2)
    full = ranking_scores(members, non_members)
    monkeypatch.setattr(ranking, "_SUMMARY_BLOCK", 97)
    got = ranking.ranking_summary(members, non_members)
    assert (got.fpr, got.tpr) == thin_curve(full.fpr, full.tpr)
    assert len(got.fpr) == 201
    assert got.roc_auc == pytest.approx(full.roc_auc, abs=1e-13)
    assert got.average_precision == pytest.approx(full.average_precision, abs=1e-13)


def test_summary_with_one_side_empty_takes_the_full_curve() -> None:
    from synthrisk.stats.ranking import ranking_summary

    got = ranking_summary(np.array([0.9, 0.8, 0.7]), np.array([]))
    assert np.isnan(got.roc_auc)
    assert got.average_precision_baseline == 1.0


@pytest.mark.parametrize("block", [1, 2, 5])
@pytest.mark.parametrize("pair", _score_pairs())
def test_delong_placements_in_blocks(
    monkeypatch: pytest.MonkeyPatch, pair: tuple[np.ndarray, np.ndarray], block: int
) -> None:
    import synthrisk.stats.ranking as ranking

    x, y = pair
    whole = ranking.delong_auc(x, y)
    monkeypatch.setattr(ranking, "_PLACEMENT_BLOCK", block)
    assert ranking.delong_auc(x, y) == whole
