# SPDX-License-Identifier: BSD-3-Clause
"""distribution_validation: the tests APT gets wrong, corrections, column selection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.metrics.membership.distribution import (
    DistributionValidation,
    adjust_p_values,
    two_sample_test,
)


def test_adjust_p_values_by_hand() -> None:
    p = np.array([0.01, 0.04, 0.03, np.nan, 0.2])
    np.testing.assert_allclose(
        adjust_p_values(p, "bonferroni"), [0.04, 0.16, 0.12, np.nan, 0.8]
    )
    # Holm: sorted 0.01*4, 0.03*3, 0.04*2, 0.2*1 with running maximum
    np.testing.assert_allclose(
        adjust_p_values(p, "holm"), [0.04, 0.09, 0.09, np.nan, 0.2]
    )
    # Benjamini-Hochberg: 0.01*4/1, 0.03*4/2 = 0.06, 0.04*4/3, 0.2*4/4, running minimum from the top
    np.testing.assert_allclose(
        adjust_p_values(p, "fdr_bh"), [0.04, 0.16 / 3, 0.16 / 3, np.nan, 0.2]
    )
    from scipy.stats import false_discovery_control

    np.testing.assert_allclose(
        adjust_p_values(p, "fdr_bh")[[0, 1, 2, 4]],
        false_discovery_control(p[[0, 1, 2, 4]]),
    )
    np.testing.assert_allclose(adjust_p_values(p, "none"), p)


def test_chi_square_compares_the_two_samples() -> None:
    x = np.array(["a"] * 90 + ["b"] * 10, dtype=object)
    y = np.array(["a"] * 50 + ["b"] * 50, dtype=object)
    statistic, p_value = two_sample_test("CHI", x, y)
    assert statistic > 30
    assert p_value < 1e-6
    assert two_sample_test("CHI", x, x) == pytest.approx((0.0, 1.0))
    assert two_sample_test("CHI", np.array(["a", "a"]), np.array(["a"])) == (0.0, 1.0)


def test_cramer_von_mises_compares_with_real() -> None:
    rng = np.random.default_rng(0)
    _, p_value = two_sample_test("CVM", rng.normal(size=200) + 3, rng.normal(size=200))
    assert p_value < 1e-6


@pytest.fixture
def tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(1)

    def draw(n: int, shift: float, p_a: float) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "x": rng.normal(shift, 1, n),
                "y": rng.normal(0, 1, n),
                "colour": rng.choice(["a", "b"], n, p=[p_a, 1 - p_a]),
                "code": rng.integers(0, 3, n),
            }
        )

    return draw(400, 0.0, 0.5), draw(400, 1.0, 0.9), draw(300, 0.0, 0.5)


def test_flags_shifted_numeric_and_categorical_columns(
    tables: tuple[pd.DataFrame, ...],
) -> None:
    real, synthetic, holdout = tables
    result = DistributionValidation().compute(real, synthetic, holdout)
    assert result.breakdown["member_column_distribution_diff"] == ["x", "colour"]
    assert result.breakdown["non_member_column_distribution_diff"] == ["x", "colour"]
    assert result.score == pytest.approx(0.5)
    assert result.breakdown["distributions_valid"] is False
    assert result.breakdown["distributions_validated"] is True
    assert result.breakdown["n_tests"] == 8
    columns = result.breakdown["columns"]
    assert columns["colour"]["test"] == "CHI"
    assert columns["code"]["test"] == "KS"
    assert columns["x"]["real"]["different"] is True
    assert columns["y"]["holdout"]["different"] is False
    assert any("differ from the real data" in w for w in result.warnings)


def test_without_holdout_and_with_all_tests(tables: tuple[pd.DataFrame, ...]) -> None:
    real, synthetic, _ = tables
    for numeric_test in ("KS", "CVM", "AD", "ES"):
        result = DistributionValidation(
            numeric_test=numeric_test, categorical_test="AD"
        ).compute(real, synthetic)
        assert "x" in result.breakdown["member_column_distribution_diff"]
        assert "y" not in result.breakdown["member_column_distribution_diff"]
        assert result.breakdown["non_member_column_distribution_diff"] is None


def test_categorical_features_by_name_and_position_agree(
    tables: tuple[pd.DataFrame, ...],
) -> None:
    real, synthetic, holdout = tables
    by_name = DistributionValidation(categorical_features=["code"]).compute(
        real, synthetic, holdout
    )
    by_pos = DistributionValidation(categorical_features=[3]).compute(
        real, synthetic, holdout
    )
    assert by_name.breakdown == by_pos.breakdown
    assert by_name.breakdown["columns"]["code"]["test"] == "CHI"
    with pytest.raises(ParameterError, match=r"not in the tables: \['size'\]"):
        DistributionValidation(categorical_features=["size"]).compute(real, synthetic)
    with pytest.raises(ParameterError, match="position 9 is out of range"):
        DistributionValidation(categorical_features=[9]).compute(real, synthetic)


def test_correction_none_flags_more_than_holm() -> None:
    rng = np.random.default_rng(13)
    n = 60
    real = pd.DataFrame(rng.normal(size=(n, 20)), columns=[f"c{i}" for i in range(20)])
    synthetic = pd.DataFrame(rng.normal(size=(n, 20)), columns=real.columns)
    plain = DistributionValidation(correction="none").compute(real, synthetic)
    holm = DistributionValidation().compute(real, synthetic)
    assert (
        len(plain.breakdown["member_column_distribution_diff"]) >= 1
    )  # false alarms at alpha = 0.05
    assert holm.breakdown["member_column_distribution_diff"] == []


def test_failed_test_is_reported() -> None:
    real = pd.DataFrame({"x": np.zeros(30)})
    synthetic = pd.DataFrame({"x": np.zeros(30)})
    result = DistributionValidation(numeric_test="ES").compute(real, synthetic)
    assert result.breakdown["distributions_validated"] is False
    assert "error" in result.breakdown["columns"]["x"]["real"]
    assert any("could not run" in w for w in result.warnings)


def test_bad_parameters() -> None:
    with pytest.raises(ParameterError, match="`numeric_test` must be one of"):
        DistributionValidation(numeric_test="CHI")
    with pytest.raises(ParameterError, match=r"`alpha` must be a number in \(0, 1\)"):
        DistributionValidation(alpha=1.0)
    with pytest.raises(ParameterError, match="`categorical_features` must be a list"):
        DistributionValidation(categorical_features="code")
