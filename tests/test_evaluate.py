# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import json

import pandas as pd
import pytest

from synthrisk import DCRBaselineProtection, evaluate
from synthrisk.exceptions import InputError, ParameterError


def _strip_seconds(text: str) -> dict:
    data = json.loads(text)
    for entry in data["results"]:
        entry.pop("seconds")
    return data


def test_default_metrics_with_and_without_holdout(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, hold = mixed_tables
    with_holdout = evaluate(real, syn, hold)
    needs_holdout = [
        "dcr_overfitting_protection", "membership_knn_probabilities", "dcr_share", "membership_classification", "nndr",
        "singling_out", "singling_out_univariate",
    ]  # fmt: skip
    # the full assessment: every family
    assert [r.metric for r in with_holdout.results] == [
        "dcr_baseline_protection", "dcr_overfitting_protection", "disclosure_protection", "singling_out",
        "singling_out_univariate", "linkability", "inference", "membership_knn_probabilities", "dcr_share",
        "membership_classification", "distribution_validation", "nndr", "identical_match_share",
    ]  # fmt: skip
    assert with_holdout.verdict is not None
    without = evaluate(real, syn)
    assert [r.metric for r in without.results] == [
        "dcr_baseline_protection", "disclosure_protection", "linkability", "inference",
        "distribution_validation", "identical_match_share",
    ]  # fmt: skip
    assert without.verdict is not None
    assert without.verdict.overall == "review"
    for metric in needs_holdout:
        assert (
            f"metric {metric!r} was skipped: it needs a holdout table."
            in without.warnings
        )


def test_same_inputs_and_seed_give_identical_json(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    a = evaluate(*mixed_tables, seed=11).to_json(include_records=True)
    b = evaluate(*mixed_tables, seed=11).to_json(include_records=True)
    assert _strip_seconds(a) == _strip_seconds(b)


def test_metric_streams_do_not_depend_on_the_other_metrics(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    alone = evaluate(*mixed_tables, metrics=["dcr_baseline_protection"])
    together = evaluate(
        *mixed_tables, metrics=["dcr_overfitting_protection", "dcr_baseline_protection"]
    )
    assert (
        alone["dcr_baseline_protection"].breakdown
        == together["dcr_baseline_protection"].breakdown
    )


def test_metrics_as_mapping_and_instances(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    report = evaluate(
        *mixed_tables,
        metrics={"dcr_overfitting_protection": {"num_rows_subsample": 50}},
    )
    assert report["dcr_overfitting_protection"].params["num_rows_subsample"] == 50
    report = evaluate(
        *mixed_tables, metrics=[DCRBaselineProtection(num_rows_subsample=40)]
    )
    assert (
        report["dcr_baseline_protection"].records["synthetic_to_real"].index.size == 40
    )


def test_inputs_and_schema_are_reported(mixed_tables: tuple[pd.DataFrame, ...]) -> None:
    data = json.loads(evaluate(*mixed_tables).to_json())
    assert data["inputs"]["real"] == {
        "rows": 120,
        "columns": ["user_id", "num", "count", "cat", "flag", "when"],
    }
    assert data["inputs"]["holdout"]["rows"] == 100
    assert data["schema"]["excluded"] == ["user_id"]
    assert data["schema"]["columns"]["when"]["kind"] == "datetime"


@pytest.mark.parametrize(
    ("metrics", "error", "match"),
    [
        (["nope"], ParameterError, r"unknown metric 'nope'; available metrics: \["),
        (
            {"dcr_baseline_protection": {"k": 1}},
            ParameterError,
            r"metric 'dcr_baseline_protection' has no parameter\(s\) \['k'\]",
        ),
        (
            ["dcr_baseline_protection", "dcr_baseline_protection"],
            ParameterError,
            r"lists \['dcr_baseline_protection'\] more than once",
        ),
        ([3], ParameterError, r"entries must be metric ids or Metric instances"),
    ],
)
def test_bad_metric_selection(
    metrics: object, error: type, match: str, mixed_tables: tuple[pd.DataFrame, ...]
) -> None:
    with pytest.raises(error, match=match):
        evaluate(*mixed_tables, metrics=metrics)  # type: ignore[arg-type]


def test_requested_holdout_metric_without_holdout(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, _ = mixed_tables
    with pytest.raises(InputError, match="needs a `holdout` table"):
        evaluate(real, syn, metrics=["dcr_overfitting_protection"])


def test_negative_seed_is_rejected(mixed_tables: tuple[pd.DataFrame, ...]) -> None:
    with pytest.raises(ParameterError, match=r"`seed` must be an integer >= 0; got -1"):
        evaluate(*mixed_tables, seed=-1)
