# SPDX-License-Identifier: BSD-3-Clause
"""membership_classification: APT goldens (mode="apt"), the fixed ratio, encodings, bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import InputError, MissingDependencyError, ParameterError
from synthrisk.metrics.membership.classification import (
    MembershipClassification,
    memorisation_auc_ratio,
    normalized_auc_ratio,
    one_hot_design,
)
from synthrisk.schema.tables import prepare_tables

pytest.importorskip("sklearn")

APT_DATA = Path(__file__).parents[2] / "compat" / "data" / "apt"
GOLDENS = json.loads((APT_DATA / "goldens.json").read_text(encoding="utf-8"))


def _apt_tables(case: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    members, non_members, synthetic = (
        pd.read_csv(APT_DATA / f"{case}_{n}.csv")
        for n in ("members", "non_members", "synthetic")
    )
    return members, synthetic, non_members


def _mixed(rng: np.random.Generator, n: int, shift: float = 0.0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": rng.normal(40 + shift, 10, n),
            "city": rng.choice(["a", "b", "c"], n),
            "score": np.where(rng.random(n) < 0.1, np.nan, rng.random(n)),
        }
    )


def test_ratios_by_hand() -> None:
    assert normalized_auc_ratio(0.6, 0.5) == pytest.approx(0.2)
    assert normalized_auc_ratio(0.5, 0.6) == 0.0
    assert normalized_auc_ratio(0.6, 0.0) == 0.0
    assert memorisation_auc_ratio(0.5, 0.6) == pytest.approx(0.2)
    assert memorisation_auc_ratio(0.6, 0.5) == 0.0


@pytest.mark.parametrize("case", ["mixed", "gaussian"])
@pytest.mark.parametrize(
    ("classifier", "kind"),
    [
        ("logistic_regression", "LogisticRegression"),
        ("random_forest", "RandomForestClassifier"),
    ],
)
def test_apt_mode_matches_goldens(case: str, classifier: str, kind: str) -> None:
    golden = GOLDENS["cases"][case][f"classification_{kind}"]
    result = MembershipClassification(classifier=classifier, mode="apt").compute(
        *_apt_tables(case)
    )
    assert result.breakdown["member_roc_auc_score"] == pytest.approx(
        golden["member_roc_auc_score"], abs=1e-9
    )
    assert result.breakdown["non_member_roc_auc_score"] == pytest.approx(
        golden["non_member_roc_auc_score"], abs=1e-9
    )
    assert result.score == pytest.approx(golden["normalized_ratio"], abs=1e-9)
    assert (
        result.breakdown["synthetic_data_quality_warning"]
        is golden["synthetic_data_quality_warning"]
    )


def test_default_mode_on_mixed_tables_is_seeded() -> None:
    rng = np.random.default_rng(0)
    real, holdout, synthetic = _mixed(rng, 400), _mixed(rng, 150), _mixed(rng, 300)
    first = MembershipClassification(n_repeats=2).compute(
        real, synthetic, holdout, seed=4
    )
    second = MembershipClassification(n_repeats=2).compute(
        real, synthetic, holdout, seed=4
    )
    assert first.score == second.score
    assert first.breakdown["sample_size"] == 150
    assert abs(first.breakdown["member_roc_auc_score"] - 0.5) < 0.15
    assert first.score == memorisation_auc_ratio(
        first.breakdown["member_roc_auc_score"],
        first.breakdown["non_member_roc_auc_score"],
    )


def test_quality_warning_when_synthetic_is_easy_to_tell_apart() -> None:
    rng = np.random.default_rng(1)
    real, holdout, synthetic = (
        _mixed(rng, 200),
        _mixed(rng, 200),
        _mixed(rng, 200, shift=40),
    )
    result = MembershipClassification(classifier="random_forest").compute(
        real, synthetic, holdout
    )
    assert result.breakdown["synthetic_data_quality_warning"] is True
    assert any("synthetic_data_quality_warning" in w for w in result.warnings)


def test_one_hot_design_scales_and_encodes() -> None:
    real = pd.DataFrame({"x": [0.0, 10.0, np.nan], "c": ["a", "b", "a"]})
    synthetic = pd.DataFrame({"x": [5.0, 5.0, 5.0], "c": ["b", "b", None]})
    tables = prepare_tables(real, synthetic)
    r, s = one_hot_design(tables, ("real", "synthetic"))
    # x scaled to [0, 1], a missing indicator, then one-hot levels (most frequent first: b, a, missing)
    np.testing.assert_allclose(r, [[0, 0, 0, 1, 0], [1, 0, 1, 0, 0], [0, 1, 0, 1, 0]])
    np.testing.assert_allclose(s[:, :2], [[0.5, 0], [0.5, 0], [0.5, 0]])
    np.testing.assert_allclose(s[:, 2:], [[1, 0, 0], [1, 0, 0], [0, 0, 1]])


def test_bad_parameters_and_inputs() -> None:
    with pytest.raises(ParameterError, match="`classifier` must be one of"):
        MembershipClassification(classifier="svm")
    with pytest.raises(
        ParameterError, match=r"`threshold` must be a number in \(0, 1\]"
    ):
        MembershipClassification(threshold=1.5)
    with pytest.raises(ParameterError, match="`n_repeats` must be 1 with `mode='apt'`"):
        MembershipClassification(mode="apt", n_repeats=3)
    rng = np.random.default_rng(2)
    real, holdout, synthetic = _mixed(rng, 50), _mixed(rng, 50), _mixed(rng, 50)
    with pytest.raises(InputError, match="needs a `holdout` table"):
        MembershipClassification().compute(real, synthetic)
    with pytest.raises(InputError, match="column 'city' is categorical"):
        MembershipClassification(mode="apt").compute(real, synthetic, holdout)


def test_missing_scikit_learn_names_the_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(3)
    real, holdout, synthetic = _mixed(rng, 30), _mixed(rng, 30), _mixed(rng, 30)
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(MissingDependencyError, match="pip install scikit-learn"):
        MembershipClassification().compute(real, synthetic, holdout)


def test_newton_cholesky_and_lbfgs_fit_the_same_model() -> None:
    # the same L2-penalised loss, minimised by two solvers: the same AUCs up to tolerance
    rng = np.random.default_rng(5)
    real, holdout = _mixed(rng, 600), _mixed(rng, 400)
    synthetic = _mixed(rng, 500, shift=3)
    newton = MembershipClassification().compute(real, synthetic, holdout, seed=2)
    lbfgs = MembershipClassification(solver="lbfgs").compute(
        real, synthetic, holdout, seed=2
    )
    assert newton.params["solver"] == "newton-cholesky"
    for key in ("member_roc_auc_score", "non_member_roc_auc_score"):
        assert newton.breakdown[key] > 0.55  # the shift is seen
        assert newton.breakdown[key] == pytest.approx(lbfgs.breakdown[key], abs=2e-3)
    with pytest.raises(ParameterError, match="`solver` must be one of"):
        MembershipClassification(solver="sag")


def _one_hot_by_comparison(
    codes: np.ndarray, all_codes: np.ndarray, max_levels: int = 100
) -> np.ndarray:
    """One column's one-hot block, levels by decreasing count (ascending code on ties)."""
    values, counts = np.unique(all_codes, return_counts=True)
    levels = values[np.argsort(-counts, kind="stable")][:max_levels]
    block = (codes[:, None] == levels[None, :]).astype(float)
    if levels.size < values.size:
        block = np.hstack([block, (~np.isin(codes, levels))[:, None].astype(float)])
    return block


def test_one_hot_design_many_levels_and_missing_values() -> None:
    # more than 100 levels (the rarest share "other"), missing codes, a column with
    # levels in one table only: the same blocks as comparing codes with each level
    rng = np.random.default_rng(6)

    def table(n: int, top: int) -> pd.DataFrame:
        many = rng.integers(0, top, n).astype(str).astype(object)
        many[rng.random(n) < 0.1] = None
        return pd.DataFrame({"many": many, "few": rng.choice(["p", "q"], n)})

    real, synthetic = table(3000, 150), table(2000, 180)
    tables = prepare_tables(real, synthetic)
    designs = one_hot_design(tables, ("real", "synthetic"))
    encoded = [tables.encoded(n) for n in ("real", "synthetic")]
    all_codes = np.vstack([e.codes for e in encoded])
    for design, e in zip(designs, encoded, strict=True):
        expected = np.hstack(
            [
                _one_hot_by_comparison(e.codes[:, c], all_codes[:, c])
                for c in range(all_codes.shape[1])
            ]
        )
        assert design.shape == (e.n_rows, 101 + 2)
        np.testing.assert_array_equal(design, expected)
