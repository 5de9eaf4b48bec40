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
