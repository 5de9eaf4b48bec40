# SPDX-License-Identifier: BSD-3-Clause
"""The attacks' scores on hand-made tables, the Groundhog features and the classifier."""

from __future__ import annotations

import numpy as np
import pytest

from synthrisk.audit.attacks import (
    UNKNOWN_CODE,
    FeatureSpace,
    Reference,
    classifier_scores,
    kernel_density,
    no_box_scores,
)
from synthrisk.schema import EncodedTable
from synthrisk.stats.ranking import roc_auc


def _table(numeric: list[list[float]], codes: list[list[int]]) -> EncodedTable:
    return EncodedTable(
        numeric=np.array(numeric, dtype=np.float64),
        codes=np.array(codes, dtype=np.int64),
        numeric_names=("x", "y"),
        categorical_names=("c",),
    )


TARGETS = _table([[0.0, 0.0], [10.0, 10.0]], [[0], [1]])
SCALE = np.array([10.0, 10.0])
AUX = _table([[2.0, 0.0], [5.0, 5.0], [10.0, 0.0]], [[0], [1], [1]])


def _ref(density: list[float], dcr: list[float] | None = None) -> Reference:
    return Reference(
        table=AUX,
        density=np.array(density),
        dcr=np.zeros(len(density)) if dcr is None else np.array(dcr),
    )


def _distance(a: tuple[float, float, int], b: tuple[float, float, int]) -> float:
    """The DCR metrics' distance written out: range-scaled numbers, category mismatch, mean."""
    return (abs(a[0] - b[0]) / 10 + abs(a[1] - b[1]) / 10 + float(a[2] != b[2])) / 3


def test_no_box_scores_by_hand() -> None:
    synthetic = _table(
        [[0.0, 0.0], [1.0, 0.0], [5.0, 5.0], [9.0, 10.0]], [[0], [0], [1], [1]]
    )
    radius = np.array([0.05, 0.05])
    aux = np.array([0.5, 0.5])
    s = no_box_scores(
        TARGETS, synthetic, scale=SCALE, radius=radius, reference=_ref(list(aux))
    )
    # target 0 has an exact copy; target 1's nearest row differs by 1/10 in one of 3 columns
    np.testing.assert_allclose(s["dcr"], [0.0, -1 / 30])
    # within radius 0.05: the copy and the row 1/30 away for target 0; one row for target 1
    np.testing.assert_array_equal(s["knn"], [2.0, 1.0])
    d0 = np.array([0.0, 1 / 30, (0.5 + 0.5 + 1) / 3, (0.9 + 1.0 + 1) / 3])
    expected = np.log(np.exp(-d0 / 0.05).mean()) - np.log(0.5)
    assert s["density"][0] == pytest.approx(expected)


def test_dcr_diff_is_the_reference_distance_minus_the_synthetic_one() -> None:
    synthetic = _table([[1.0, 0.0], [9.0, 10.0]], [[0], [1]])
    radius = np.array([0.05, 0.05])
    s = no_box_scores(
        TARGETS,
        synthetic,
        scale=SCALE,
        radius=radius,
        reference=_ref([0.5, 0.5], dcr=[0.2, 0.4]),
        attacks=frozenset({"dcr", "dcr_diff"}),
    )
    np.testing.assert_allclose(s["dcr_diff"], [0.2 - 1 / 30, 0.4 - 1 / 30])
    np.testing.assert_allclose(s["dcr_diff"] - s["dcr"], [0.2, 0.4])
    assert set(s) == {"dcr", "dcr_diff"}  # only the attacks asked for


def test_gen_lra_by_hand() -> None:
    synth_rows = [(0.0, 0.0, 0), (1.0, 0.0, 0), (5.0, 5.0, 1), (9.0, 10.0, 1)]
    aux_rows = [(2.0, 0.0, 0), (5.0, 5.0, 1), (10.0, 0.0, 1)]
    targets = [(0.0, 0.0, 0), (10.0, 10.0, 1)]
    synthetic = _table([[r[0], r[1]] for r in synth_rows], [[r[2]] for r in synth_rows])
    radius = np.array([0.1, 0.3])
    s = no_box_scores(
        TARGETS,
        synthetic,
        scale=SCALE,
        radius=radius,
        reference=_ref([0.5, 0.5]),
        attacks=frozenset({"gen_lra"}),
    )
    for t, target in enumerate(targets):
        w = radius[t]
        expected = 0.0
        for row in synth_rows:  # all 4 rows: fewer than the 5 neighbours
            p0 = np.mean([np.exp(-_distance(row, y) / w) for y in aux_rows])
            p1 = (3 * p0 + np.exp(-_distance(row, target) / w)) / 4
            expected += np.log(p1) - np.log(p0)
        assert s["gen_lra"][t] == pytest.approx(expected, rel=1e-9)
    # the target with an exact synthetic copy where the auxiliary rows are thin scores high
    assert s["gen_lra"][0] > 0.5


def test_unknown_categories_never_match() -> None:
    synthetic = _table([[0.0, 0.0]], [[UNKNOWN_CODE]])
    missing = _table([[0.0, 0.0]], [[-1]])
    targets = _table([[0.0, 0.0]], [[-1]])
    radius, aux = np.array([0.1]), np.array([1.0])
    unknown = no_box_scores(
        targets, synthetic, scale=SCALE, radius=radius, reference=_ref(list(aux))
    )
    both_missing = no_box_scores(
        targets, missing, scale=SCALE, radius=radius, reference=_ref(list(aux))
    )
    assert unknown["dcr"][0] == pytest.approx(-1 / 3)
    assert both_missing["dcr"][0] == 0.0


def test_kernel_density_is_the_mean_kernel() -> None:
    reference = _table([[0.0, 0.0], [10.0, 10.0]], [[0], [1]])
    dens = kernel_density(TARGETS, reference, scale=SCALE, radius=np.array([0.2, 0.0]))
    assert dens[0] == pytest.approx((1 + np.exp(-1 / 0.2)) / 2)
    # a radius of 0 is widened to the smallest width, 0.01
    assert dens[1] == pytest.approx((1 + np.exp(-1 / 0.01)) / 2)


def test_features_have_a_fixed_length_and_see_the_distribution() -> None:
    g = np.random.default_rng(0)
    population = _table(
        g.normal(size=(300, 2)).tolist(), g.integers(0, 3, (300, 1)).tolist()
    )
    space = FeatureSpace.fit(population)
    a = space.features(population)
    shifted = _table(
        (g.normal(size=(50, 2)) + 1).tolist(), g.integers(0, 3, (50, 1)).tolist()
    )
    b = space.features(shifted)
    # naive 2 x (mean, std, 5 quantiles, missing) + histogram 2 x 10 + 3 shares + 3 correlations
    assert a.shape == b.shape == (16 + 20 + 3 + 3,)
    assert np.all(np.isfinite(a))
    assert (
        b[0] > a[0] + 0.05
    )  # the mean of x, scaled to the population's range, moved up
    np.testing.assert_allclose(a[36:39].sum(), 1.0)  # category shares


def test_features_with_missing_values_and_constant_columns() -> None:
    table = _table([[np.nan, 1.0], [2.0, 1.0], [4.0, 1.0]], [[0], [0], [0]])
    space = FeatureSpace.fit(table)
    f = space.features(table)
    assert np.all(np.isfinite(f))


@pytest.mark.parametrize("classifier", ["ridge", "logistic", "boosting"])
def test_classifier_scores_learn_on_selection_runs_only(classifier: str) -> None:
    g = np.random.default_rng(3)
    n_runs = 120
    included = g.random((n_runs, 2)) < 0.5
    # feature 0 reveals target 0's membership; target 1's is noise
    features = np.column_stack(
        [included[:, 0] + 0.3 * g.normal(size=n_runs), g.normal(size=(n_runs, 4))]
    )
    selection = np.arange(n_runs) % 2 == 0
    scores = classifier_scores(
        features,
        included,
        selection,
        classifier=classifier,
        seed=0,  # type: ignore[arg-type]
    )
    ev = ~selection
    assert roc_auc(included[ev, 0].astype(np.int64), scores[ev, 0]) > 0.9
    assert roc_auc(included[selection, 0].astype(np.int64), scores[selection, 0]) > 0.9
    assert abs(roc_auc(included[ev, 1].astype(np.int64), scores[ev, 1]) - 0.5) < 0.2


def test_classifier_scores_ignore_evaluation_labels() -> None:
    g = np.random.default_rng(4)
    included = g.random((60, 3)) < 0.5
    features = g.normal(size=(60, 5))
    selection = np.arange(60) % 3 == 0
    flipped = included.copy()
    flipped[~selection] = ~flipped[~selection]
    a = classifier_scores(features, included, selection)
    b = classifier_scores(features, flipped, selection)
    np.testing.assert_array_equal(a, b)
