# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import inspect
import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import synthrisk
from synthrisk.compat import sdmetrics as compat
from synthrisk.exceptions import ParameterError, SchemaMismatchError, SynthriskWarning

DATA = Path(__file__).parents[1] / "metrics" / "data"
GOLDENS = json.loads((DATA / "disclosure_goldens.json").read_text())
DCR_GOLDENS = json.loads((DATA / "dcr_goldens.json").read_text())
METHODS = ("cap", "zero_cap", "generalized_cap")
pytestmark = pytest.mark.filterwarnings(
    "ignore:Computing CAP metrics directly is deprecated:DeprecationWarning"
)

LEGACY = {
    "cap": compat.CategoricalCAP,
    "zero_cap": compat.CategoricalZeroCAP,
    "generalized_cap": compat.CategoricalGeneralizedCAP,
}


@pytest.fixture(scope="module")
def golden_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    frames = []
    for name in ("real", "synthetic"):
        frame = pd.read_csv(DATA / GOLDENS["files"][name])
        for column in GOLDENS["datetime_columns"]:
            frame[column] = pd.to_datetime(frame[column], format="ISO8601")
        frames.append(frame)
    return frames[0], frames[1]


def _same(got: Any, expected: float | None) -> bool:
    if expected is None:
        return isinstance(got, float) and math.isnan(got)
    return abs(got - expected) <= 1e-12


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(GOLDENS["cases"]))
def test_compute_breakdown_is_a_drop_in(
    name: str, method: str, golden_tables: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    case = GOLDENS["cases"][name]
    expected = case["results"][method]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = compat.DisclosureProtection.compute_breakdown(
            *golden_tables, case["known"], case["sensitive"], method, case.get("continuous"), case.get("bins", 10),
            **case.get("synthrisk", {}),
        )  # fmt: skip
    assert set(out) == {"score", "cap_protection", "baseline_protection"}
    for key in out:
        assert _same(out[key], expected[key]), (key, out[key], expected[key])
    assert isinstance(out["score"], int) == expected["score_is_int"]
    # caveats are re-issued where the score is undefined, and for the identifier-like key
    assert bool(caught) == (expected["score"] is None or name == "no_overlap")
    assert all(issubclass(w.category, SynthriskWarning) for w in caught)


def test_compute_returns_the_score(
    golden_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    case = GOLDENS["cases"]["binned"]
    score = compat.DisclosureProtection.compute(
        *golden_tables,
        case["known"],
        case["sensitive"],
        "zero_cap",
        case["continuous"],
        case["bins"],
    )
    assert _same(score, case["results"]["zero_cap"]["score"])


def test_signatures_match_sdmetrics_positional_order() -> None:
    def positional(func: Any) -> list[str]:
        params = inspect.signature(func).parameters.values()
        return [
            p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        ]

    disclosure = ["real_data", "synthetic_data", "known_column_names", "sensitive_column_names",
                  "computation_method", "continuous_column_names", "num_discrete_bins"]  # fmt: skip
    assert positional(compat.DisclosureProtection.compute_breakdown) == disclosure
    assert positional(compat.DisclosureProtectionEstimate.compute) == [
        *disclosure,
        "num_rows_subsample",
        "num_iterations",
        "verbose",
    ]
    legacy = [
        "real_data",
        "synthetic_data",
        "metadata",
        "table_name",
        "key_fields",
        "sensitive_fields",
        "model_kwargs",
    ]
    assert positional(compat.CategoricalCAP.compute) == legacy
    dcr = [
        "real_data",
        "synthetic_data",
        "metadata",
        "table_name",
        "num_rows_subsample",
        "num_iterations",
    ]
    assert positional(compat.DCRBaselineProtection.compute_breakdown) == dcr
    assert positional(compat.DCROverfittingProtection.compute) == [
        "real_training_data", "synthetic_data", "real_validation_data", "metadata", "table_name",
        "num_rows_subsample", "num_iterations",
    ]  # fmt: skip


def test_estimate_honours_its_arguments_unless_asked_not_to(
    golden_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    args = (*golden_tables, ["cat_a", "flag"], ["sens1"])
    small = compat.DisclosureProtectionEstimate.compute(
        *args, "cap", None, 10, 40, 2, False, seed=3
    )
    breakdown = compat.DisclosureProtectionEstimate.compute_breakdown(
        *args, "cap", None, 10, 40, 2, False, seed=3
    )
    assert small == breakdown["score"]
    # SDMetrics' compute() runs 10 x 1000 rows whatever it is given; on 300 rows that is the whole table
    exact = GOLDENS["cases"]["basic"]["results"]["cap"]
    with pytest.warns(
        SynthriskWarning,
        match=r"num_rows_subsample \(300\) is larger than the synthetic table",
    ):
        bug = compat.DisclosureProtectionEstimate.compute(
            *args, "cap", None, 10, 40, 2, False, ignore_arguments=True
        )
    assert _same(bug, exact["score"])
    assert small != bug


def test_estimate_uses_whole_tables_below_the_subsample_size(
    golden_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    case = GOLDENS["cases"]["binned"]
    with pytest.warns(SynthriskWarning, match="larger than the synthetic table"):
        out = compat.DisclosureProtectionEstimate.compute_breakdown(
            *golden_tables, case["known"], case["sensitive"], "generalized_cap", case["continuous"], case["bins"],
            5000, 2, False,
        )  # fmt: skip
    exact = case["results"]["generalized_cap"]
    assert _same(out["cap_protection"], exact["cap_protection"])
    assert _same(out["score"], exact["score"])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(GOLDENS["legacy"]))
def test_legacy_cap_is_a_drop_in(
    name: str, method: str, golden_tables: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    case = GOLDENS["legacy"][name]
    if name == "legacy_object_nan" and method == "generalized_cap":
        pytest.skip(
            "SDMetrics matches object NaN in the key lookup but not in the Hamming distance (documented)"
        )
    real, syn = golden_tables
    columns = case["key"] + case["sensitive"]
    kwargs = {
        "key_fields": case["key"],
        "sensitive_fields": case["sensitive"],
        "missing": case["missing"],
    }
    score = LEGACY[method].compute(real[columns], syn[columns], **kwargs)
    assert _same(score, case["results"][method])
    assert LEGACY[method].compute_breakdown(real[columns], syn[columns], **kwargs) == {
        "score": score
    }


def test_legacy_fields_from_metadata_take_priority() -> None:
    real = pd.DataFrame({"k": ["a", "b"], "j": ["a", "a"], "s": ["x", "y"]})
    syn = pd.DataFrame({"k": ["a", "b"], "j": ["a", "a"], "s": ["x", "x"]})
    meta = {"tables": {"t": {"key_fields": ["k"], "sensitive_fields": ["s"]}}}
    assert (
        compat.CategoricalCAP.compute(
            real, syn, meta, "t", key_fields=["j"], sensitive_fields=["j"]
        )
        == 0.5
    )


def test_category_columns_work_unless_strict(
    golden_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    real, syn = (t[["cat_a", "sens1"]].astype("category") for t in golden_tables)
    out = compat.DisclosureProtection.compute_breakdown(real, syn, ["cat_a"], ["sens1"])
    plain = compat.DisclosureProtection.compute_breakdown(
        *(t[["cat_a", "sens1"]] for t in golden_tables), ["cat_a"], ["sens1"]
    )
    assert out == plain
    with pytest.raises(ParameterError, match="pandas 'category' dtype"):
        compat.DisclosureProtection.compute_breakdown(
            real, syn, ["cat_a"], ["sens1"], strict_types=True
        )


def test_unsigned_and_all_missing_columns() -> None:
    real = pd.DataFrame(
        {
            "u": np.array([1, 2, 1], dtype=np.uint8),
            "v": [np.nan] * 3,
            "s": ["x", "y", "x"],
        }
    )
    syn = pd.DataFrame(
        {
            "u": np.array([1, 2, 2], dtype=np.uint8),
            "v": [1.0, np.nan, 2.0],
            "s": ["x", "y", "y"],
        }
    )
    with pytest.warns(SynthriskWarning, match="has no value in the real table"):
        out = compat.DisclosureProtection.compute_breakdown(
            real, syn, ["u", "v"], ["s"], "zero_cap", ["v"]
        )
    assert out["baseline_protection"] == 0.5
    with pytest.raises(ParameterError, match="dtype uint8"):
        compat.DisclosureProtection.compute_breakdown(
            real, syn, ["u"], ["s"], strict_types=True
        )


def test_frames_must_have_the_same_columns() -> None:
    real = pd.DataFrame({"k": ["a"], "s": ["x"]})
    with pytest.raises(SchemaMismatchError, match=r"only in real_data: \['s'\]"):
        compat.DisclosureProtection.compute(real, real[["k"]], ["k"], ["s"])
    with pytest.raises(
        ParameterError,
        match=r"`known_column_names` names columns that are not in the tables: \['z'\]",
    ):
        compat.DisclosureProtection.compute(real, real, ["z"], ["s"])
    with pytest.raises(ParameterError, match=r"`computation_method` must be one of"):
        compat.DisclosureProtection.compute(real, real, ["k"], ["s"], "tcap")


# ------------------------------------------------------------------------------- DCR


def _dcr_case(name: str) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    case = DCR_GOLDENS["cases"][name]
    return {t: pd.read_csv(DATA / path) for t, path in case["files"].items()}, case


@pytest.mark.parametrize("name", sorted(DCR_GOLDENS["cases"]))
def test_dcr_wrappers_are_drop_ins(name: str) -> None:
    frames, case = _dcr_case(name)
    real, syn, hold = frames["real"], frames["synthetic"], frames["holdout"]
    multi = {"tables": {"table": case["metadata"], "other": {"columns": {}}}}
    base = compat.DCRBaselineProtection.compute_breakdown(real, syn, multi, "table")
    native = synthrisk.DCRBaselineProtection().compute(
        real, syn, metadata=case["metadata"]
    )
    assert base == native.breakdown
    assert set(base["median_DCR_to_real_data"]) == {
        "synthetic_data",
        "random_data_baseline",
    }
    assert base["median_DCR_to_real_data"]["synthetic_data"] == pytest.approx(
        case["median_dcr_synthetic_to_real"], abs=1e-9
    )
    assert (
        compat.DCRBaselineProtection.compute(real, syn, case["metadata"], None)
        == base["score"]
    )
    over = compat.DCROverfittingProtection.compute_breakdown(
        real, syn, hold, case["metadata"], None
    )
    assert over["score"] == pytest.approx(case["overfitting"]["score"], abs=1e-9)
    assert over["synthetic_data_percentages"] == pytest.approx(
        {
            k: case["overfitting"][k]
            for k in ("closer_to_training", "closer_to_holdout")
        },
        abs=1e-9,
    )
    assert (
        compat.DCROverfittingProtection.compute(real, syn, hold, case["metadata"], None)
        == over["score"]
    )


def test_dcr_ignores_columns_missing_from_the_metadata() -> None:
    frames, case = _dcr_case("mixed")
    real, syn = frames["real"], frames["synthetic"]
    with pytest.warns(UserWarning, match=r"The columns \('extra'\) are not present"):
        out = compat.DCRBaselineProtection.compute_breakdown(
            real.assign(extra=0), syn.assign(extra=1), case["metadata"], None
        )
    assert out == compat.DCRBaselineProtection.compute_breakdown(
        real, syn, case["metadata"], None
    )
    # columns the metadata does not describe may even differ between the tables
    with pytest.warns(UserWarning, match="not present in the metadata"):
        other = compat.DCRBaselineProtection.compute_breakdown(
            real.assign(only_real=0), syn.assign(only_syn=1), case["metadata"], None
        )
    assert other == out


def test_dcr_refuses_text_dates_without_a_format() -> None:
    real = pd.DataFrame({"d": ["Jan 1 2025", "Jan 6 2025"]})
    syn = pd.DataFrame({"d": ["Jan 2 2025"]})
    metadata = {"columns": {"d": {"sdtype": "datetime"}}}
    with pytest.raises(ValueError, match="does not have a specified 'datetime_format'"):
        compat.DCRBaselineProtection.compute_breakdown(real, syn, metadata)


def test_dcr_metadata_errors() -> None:
    frames, case = _dcr_case("categorical")
    real, syn = frames["real"], frames["synthetic"]
    two = {"tables": {"a": case["metadata"], "b": case["metadata"]}}
    with pytest.raises(ParameterError, match="more than one table"):
        compat.DCRBaselineProtection.compute(real, syn, two)
    with pytest.raises(
        ParameterError, match=r"`table_name` 'c' is not in the metadata"
    ):
        compat.DCRBaselineProtection.compute(real, syn, two, "c")
    with pytest.raises(ParameterError, match="`metadata` is required"):
        compat.DCRBaselineProtection.compute(real, syn, None)  # type: ignore[arg-type]


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("method", sorted(LEGACY))
def test_legacy_cap_warns_and_raises_sdmetrics_types(method: str) -> None:
    real = pd.DataFrame({"col1": range(5), "col2": ["A", "B", "C", "A", "B"]})
    syn = pd.DataFrame({"col1": range(5), "col2": ["C", "A", "A", "B", "C"]})
    with pytest.warns(
        DeprecationWarning, match="Computing CAP metrics directly is deprecated"
    ):
        LEGACY[method].compute(
            real, syn, key_fields=["col1"], sensitive_fields=["col2"]
        )
    with (
        pytest.warns(DeprecationWarning, match="deprecated"),
        pytest.raises(TypeError, match="key_fields"),
    ):
        LEGACY[method].compute(real, syn, sensitive_fields=["col2"])
    with (
        pytest.warns(DeprecationWarning, match="deprecated"),
        pytest.raises(ValueError, match="empty"),
    ):
        LEGACY[method].compute(real, syn, key_fields=[], sensitive_fields=["col2"])
    assert LEGACY[method].__name__ in compat.CategoricalPrivacyMetric.get_subclasses()


def test_dcr_scores_a_column_missing_in_every_synthetic_row() -> None:
    # continuous real values: the seeded random baseline row cannot hit one exactly
    real = pd.DataFrame({"A": [0.5, 10.25, 3.1, 4.2, 1.7, np.nan]})
    syn = pd.DataFrame({"A": [np.nan]})
    metadata = {"columns": {"A": {"sdtype": "numerical"}}}
    out = compat.DCRBaselineProtection.compute_breakdown(real, syn, metadata, "table")
    assert out["median_DCR_to_real_data"]["random_data_baseline"] > 0
    # the missing synthetic value matches the missing real value: distance 0
    assert out["median_DCR_to_real_data"]["synthetic_data"] == 0.0
    assert out["score"] == 0.0
