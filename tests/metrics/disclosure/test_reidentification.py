# SPDX-License-Identifier: BSD-3-Clause
"""``reidentification_risk``: ARX's prosecutor / journalist / marketer risk, by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.metrics import ReidentificationRisk
from synthrisk.metrics._known import KNOWN_RULE
from synthrisk.metrics.disclosure._reidentification import (
    journalist_risk,
    prosecutor_risk,
    real_anchored_risk,
)


def _frame(rows: list[tuple[str, int]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sex": [r[0] for r in rows],
            "age": [r[1] for r in rows],
            "income": np.arange(len(rows), dtype=float),
        }
    )


# training: A=(f,30) x3, B=(m,40) x2, C=(m,50) x1
REAL = _frame([("f", 30), ("f", 30), ("f", 30), ("m", 40), ("m", 40), ("m", 50)])
# holdout: A x1, B x1, and two classes the synthetic table does not hold
HOLDOUT = _frame([("f", 30), ("m", 40), ("m", 60), ("f", 20)])
# synthetic: A x2, B x1, C x2, D=(m,70) x1 (no real person)
SYNTHETIC = _frame([("f", 30), ("f", 30), ("m", 40), ("m", 50), ("m", 50), ("m", 70)])


def test_reidentification_risk_by_hand() -> None:
    result = ReidentificationRisk(columns=["sex", "age"], threshold=0.5).compute(
        REAL, SYNTHETIC, HOLDOUT
    )
    b = result.breakdown
    # prosecutor: synthetic class sizes f = A 2, B 1, C 2, D 1 (n = 6, 4 classes);
    # risks 1/2, 1/2, 1, 1/2, 1/2, 1: highest 1, success rate 4 / 6, risk > 0.5: B and D
    assert b["prosecutor"] == pytest.approx(
        {"highest": 1.0, "average": 4 / 6, "records_at_risk": 2 / 6}
    )
    # journalist: population = training ∪ holdout: F = A 4, B 3, C 1, D 0 (nobody);
    # highest 1 / min F = 1; rC1 = 3 classes / (4 + 3 + 1) = 0.375,
    # rC2 = (2/4 + 1/3 + 2/1) / 6 = 0.4722: average = max = 0.4722;
    # 1 / F > 0.5 only for C: 2 records of 6
    assert b["journalist"] == pytest.approx(
        {
            "highest": 1.0,
            "average": (2 / 4 + 1 / 3 + 2) / 6,
            "records_at_risk": 2 / 6,
        }
    )
    # marketer: journalist-marketer rC2, and prosecutor-marketer 4 / 6
    assert b["marketer"]["average"] == pytest.approx((2 / 4 + 1 / 3 + 2) / 6)
    assert b["marketer"]["prosecutor_marketer"] == pytest.approx(4 / 6)
    assert b["marketer"]["highest"] is None
    assert b["marketer"]["records_at_risk"] is None
    # real-anchored: every training class is repeated by the synthetic table;
    # risks 1/3 x3 (A), 1/2 x2 (B), 1 (C): highest 1, mean 3 / 6, > 0.5: C only (1 of 6);
    # synthetic records pointing at a class of fewer than 2 real people: C's 2 of 6
    anchored = b["real_anchored"]
    assert anchored["highest"] == 1.0
    assert anchored["average"] == pytest.approx(0.5)
    assert anchored["records_at_risk"] == pytest.approx(1 / 6)
    assert anchored["n_real_at_risk"] == 1
    assert anchored["real_in_repeated_classes"] == 1.0
    assert anchored["classes_repeated"] == 3
    assert anchored["synthetic_records_at_risk"] == pytest.approx(2 / 6)
    assert result.score == pytest.approx(1 / 6)
    assert b["population"] == "training ∪ holdout rows"
    np.testing.assert_allclose(
        result.records["prosecutor_risk"].values, [0.5, 0.5, 1, 0.5, 0.5, 1]
    )
    np.testing.assert_allclose(
        result.records["real_anchored_risk"].values, [1 / 3] * 3 + [0.5, 0.5, 1]
    )
    assert result.params["columns_chosen_by"] == "`columns`"


def test_reidentification_risk_without_holdout_uses_training_as_population() -> None:
    result = ReidentificationRisk(columns=["sex", "age"], threshold=0.5).compute(
        REAL, SYNTHETIC
    )
    j = result.breakdown["journalist"]
    # F = A 3, B 2, C 1, D 0: rC1 = 3 / 6 = 0.5, rC2 = (2/3 + 1/2 + 2) / 6 = 0.5278
    assert j["average"] == pytest.approx((2 / 3 + 1 / 2 + 2) / 6)
    assert j["highest"] == 1.0
    assert result.breakdown["population"] == "training rows"


def test_reidentification_risk_default_threshold_is_emas() -> None:
    result = ReidentificationRisk(columns=["sex", "age"]).compute(REAL, SYNTHETIC)
    assert result.params["threshold"] == 0.09
    # every risk is at least 1/3 > 0.09: every synthetic record is at risk
    assert result.breakdown["prosecutor"]["records_at_risk"] == 1.0


def test_prosecutor_risk_kernel() -> None:
    # classes of 1, 4 and 5 records (n = 10): highest 1, success rate 3 / 10;
    # 1/1 > 0.2, 1/4 > 0.2, 1/5 is not (strictly above, as ARX): 5 records of 10
    got = prosecutor_risk(np.array([1, 4, 5, 0]), threshold=0.2)
    assert got == pytest.approx(
        {"highest": 1.0, "average": 0.3, "records_at_risk": 0.5}
    )
    assert prosecutor_risk(np.array([0]), threshold=0.2)["highest"] is None


def test_journalist_risk_equals_prosecutor_when_population_is_the_sample() -> None:
    sizes = np.array([1, 4, 5])
    j = journalist_risk(sizes, sizes, threshold=0.2)
    p = prosecutor_risk(sizes, threshold=0.2)
    # ARX: population == sample gives rC1 = rC2 = n_classes / n
    assert j["highest"] == p["highest"]
    assert j["average"] == pytest.approx(p["average"])
    assert j["records_at_risk"] == p["records_at_risk"]
    assert j["marketer"] == pytest.approx(0.3)


def test_journalist_risk_with_nobody_behind_the_classes() -> None:
    got = journalist_risk(np.array([2, 1]), np.array([0, 0]), threshold=0.1)
    assert got == {
        "highest": 0.0,
        "average": 0.0,
        "records_at_risk": 0.0,
        "marketer": 0.0,
    }


def test_real_anchored_risk_ignores_classes_the_release_does_not_repeat() -> None:
    # real classes 0 (2 people, repeated), 1 (1 person, not repeated)
    summary, risk = real_anchored_risk(
        np.array([0, 0, 1]), np.array([2, 1]), np.array([3, 0]), threshold=0.4
    )
    np.testing.assert_allclose(risk, [0.5, 0.5, 0.0])
    assert summary["records_at_risk"] == pytest.approx(2 / 3)
    assert summary["synthetic_records_at_risk"] == 1.0


def test_reidentification_risk_default_columns_by_name() -> None:
    result = ReidentificationRisk().compute(REAL, SYNTHETIC)
    assert result.params["columns"] == ["sex", "age"]
    assert result.params["columns_chosen_by"] == KNOWN_RULE


def test_reidentification_risk_default_columns_without_known_names() -> None:
    real = pd.DataFrame(
        {
            "a": list("xxyyzz"),
            "b": list("pqpqpq"),
            "c": [1, 1, 1, 2, 2, 2],
            "d": list("uvuvuv"),
        }
    )
    result = ReidentificationRisk().compute(real, real)
    assert result.params["columns_chosen_by"].startswith(
        "no column is named like an attacker-known attribute"
    )
    # the last categorical column (d) is left out; the 3 others are the coarsest
    assert result.params["columns"] == ["a", "b", "c"]


def test_reidentification_risk_rejects_bad_parameters() -> None:
    with pytest.raises(ParameterError, match="threshold"):
        ReidentificationRisk(threshold=0)
    with pytest.raises(ParameterError, match="nope"):
        ReidentificationRisk(columns=["nope"]).compute(REAL, SYNTHETIC)
