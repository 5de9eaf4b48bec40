# SPDX-License-Identifier: BSD-3-Clause
"""Drop-in SDMetrics inference classes and NewRowSynthesis: signatures, errors, goldens."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from synthrisk.compat import sdmetrics as compat

DATA = Path(__file__).parents[1] / "metrics" / "data"
GOLDENS = json.loads((DATA / "ml_inference_goldens.json").read_text())


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    return (
        pd.read_csv(DATA / "ml_inference_real.csv"),
        pd.read_csv(DATA / "ml_inference_synthetic.csv"),
    )


@pytest.mark.parametrize(
    ("cls", "model"),
    [
        (compat.CategoricalKNN, "knn"),
        (compat.CategoricalNB, "nb"),
        (compat.CategoricalSVM, "svm"),
    ],
)
def test_categorical_classes_match_goldens(tables, cls, model) -> None:
    real, synthetic = tables
    spec = GOLDENS["categorical"]["basic"]
    got = cls.compute(
        real, synthetic, key_fields=spec["key"], sensitive_fields=spec["sensitive"]
    )
    assert got == pytest.approx(spec["scores"][model]["value"], abs=1e-9)


def test_ensemble_takes_attacker_classes(tables) -> None:
    real, synthetic = tables
    spec = GOLDENS["categorical"]["basic"]
    attackers = [
        compat.CategoricalNBAttacker,
        compat.CategoricalKNNAttacker,
        compat.CategoricalSVMAttacker,
    ]
    got = compat.CategoricalEnsemble.compute(
        real,
        synthetic,
        None,
        None,
        spec["key"],
        spec["sensitive"],
        {"attackers": attackers},
    )
    assert got == pytest.approx(spec["scores"]["ensemble"]["value"], abs=1e-9)
    with pytest.raises(ValueError, match="No attackers"):
        compat.CategoricalEnsemble.compute(
            real, synthetic, key_fields=["cat_a"], sensitive_fields=["sens"]
        )


def test_numerical_classes_accept_sdv_metadata(tables) -> None:
    real, synthetic = tables
    assert GOLDENS["failures"]["numerical_with_metadata"]["error"] == "TypeError"
    metadata = {
        "columns": {
            c: {"sdtype": "numerical", "computer_representation": "Float"}
            for c in ("x1", "y1")
        }
    }
    expected = GOLDENS["numerical"]["one_key"]["scores"]["lr"]["value"]
    got = compat.NumericalLR.compute(
        real[["x1", "y1"]],
        synthetic[["x1", "y1"]],
        metadata,
        key_fields=["x1"],
        sensitive_fields=["y1"],
    )
    assert got == pytest.approx(expected, abs=1e-9)


def test_radius_reference_mode_and_dict_input(tables) -> None:
    real, synthetic = tables
    expected = GOLDENS["numerical"]["two_keys"]["scores"]["radius_nearest_neighbor"][
        "value"
    ]
    got = compat.NumericalRadiusNearestNeighbor.compute(
        {"table": real},
        {"table": synthetic},
        key_fields=["x1", "age"],
        sensitive_fields=["y1"],
        mode="sdmetrics",
    )
    assert got == pytest.approx(expected, abs=1e-9)


def test_errors_have_sdmetrics_types(tables) -> None:
    real, synthetic = tables
    with pytest.raises(TypeError, match="key_fields"):
        compat.CategoricalKNN.compute(real, synthetic, sensitive_fields=["sens"])
    with pytest.raises(TypeError, match="sensitive_fields"):
        compat.NumericalLR.compute(real, synthetic, key_fields=["x1"])
    with pytest.raises(ValueError, match="empty"):
        compat.CategoricalNB.compute(
            real, synthetic, key_fields=[], sensitive_fields=["sens"]
        )
    with pytest.raises(TypeError, match="invalid data type"):
        compat.NumericalLR.compute(
            real, synthetic, key_fields=["cat_a"], sensitive_fields=["y1"]
        )
    metadata = {"columns": {}, "key_fields": ["cat_a"], "sensitive_fields": ["sens"]}
    # metadata entries win over the arguments (undescribed columns are ignored)
    with pytest.raises(TypeError, match="invalid data type None"):
        compat.CategoricalKNN.compute(
            real, synthetic, metadata, key_fields=["x"], sensitive_fields=["y"]
        )


def test_get_subclasses() -> None:
    names = set(compat.CategoricalPrivacyMetric.get_subclasses())
    assert {
        "CategoricalKNN",
        "CategoricalNB",
        "CategoricalRF",
        "CategoricalSVM",
        "CategoricalEnsemble",
    } <= names
    assert set(compat.NumericalPrivacyMetric.get_subclasses()) == {
        "NumericalLR",
        "NumericalMLP",
        "NumericalSVR",
        "NumericalRadiusNearestNeighbor",
    }


@pytest.mark.parametrize("tolerance", ["0.01", "0.0", "0.05"])
def test_new_row_synthesis_matches_goldens(tables, tolerance) -> None:
    real, synthetic = tables
    expected = GOLDENS["new_row_synthesis"][tolerance]
    got = compat.NewRowSynthesis.compute_breakdown(
        real,
        synthetic,
        GOLDENS["new_row_synthesis_metadata"],
        numerical_match_tolerance=float(tolerance),
    )
    assert got == pytest.approx(expected["metadata"], abs=1e-12)
    inferred = compat.NewRowSynthesis.compute_breakdown(
        real, synthetic, numerical_match_tolerance=float(tolerance)
    )
    assert inferred == pytest.approx(expected["inferred"], abs=1e-12)


def test_new_row_synthesis_sample_size_warning(tables) -> None:
    real, synthetic = tables
    with pytest.warns(
        UserWarning, match="larger than the number of synthetic data rows"
    ):
        got = compat.NewRowSynthesis.compute(
            real, synthetic, synthetic_sample_size=10_000
        )
    assert got == compat.NewRowSynthesis.compute(real, synthetic)
    assert np.isclose(compat.NewRowSynthesis.normalize(0.25), 0.25)
