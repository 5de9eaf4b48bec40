# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import json

import numpy as np
import pytest

from synthrisk.results import EvaluationReport, MetricResult, RecordScores, to_jsonable


def _report() -> EvaluationReport:
    rec = RecordScores("synthetic", np.array([0, 2]), np.array([0.5, np.nan]), "d")
    result = MetricResult(
        metric="m", score=0.25, breakdown={"score": 0.25, "x": {"y": np.float64(np.nan)}}, ci=(0.1, 0.4),
        params={"k": np.int64(3)}, warnings=("careful",), seconds=1.5, records={"r": rec},
    )  # fmt: skip
    return EvaluationReport(
        synthrisk_version="0.1.0", seed=7, inputs={"real": {"rows": 3, "columns": ["a"]}, "synthetic": None, "holdout": None},
        results=(result,),
    )  # fmt: skip


def test_json_contract_keys_and_nan_as_null() -> None:
    data = json.loads(_report().to_json())
    assert set(data) >= {
        "schema_version",
        "synthrisk_version",
        "seed",
        "inputs",
        "results",
    }
    assert data["schema_version"] == 1
    entry = data["results"][0]
    assert set(entry) == {
        "metric",
        "status",
        "reason",
        "score",
        "breakdown",
        "ci",
        "params",
        "warnings",
        "seconds",
        "attack",
        "higher_is_safer",
    }
    assert entry["breakdown"]["x"]["y"] is None
    assert entry["params"] == {"k": 3}
    assert entry["ci"] == [0.1, 0.4]
    assert entry["status"] == "ok"
    assert entry["reason"] is None


def test_records_only_when_asked_and_round_trip() -> None:
    report = _report()
    assert "records" not in json.loads(report.to_json())["results"][0]
    text = report.to_json(include_records=True)
    assert json.loads(text)["results"][0]["records"]["r"] == {
        "table": "synthetic",
        "description": "d",
        "index": [0, 2],
        "values": [0.5, None],
    }
    again = EvaluationReport.from_json(text)
    assert again.to_json(include_records=True) == text
    assert again["m"].score == 0.25


def test_getitem_unknown_metric_lists_results() -> None:
    with pytest.raises(KeyError, match=r"no result for metric 'zz'; results: \['m'\]"):
        _report()["zz"]


def test_to_jsonable_handles_numpy() -> None:
    assert to_jsonable({"a": np.array([1, 2]), "b": (np.bool_(True), np.float32(0.5)), "c": float("inf")}) == {
        "a": [1, 2], "b": [True, 0.5], "c": None,
    }  # fmt: skip


def test_repr_is_readable() -> None:
    assert (
        repr(_report()["m"])
        == "MetricResult(metric='m', score=0.2500, ci=(0.1000, 0.4000), warnings=1)"
    )


def test_newer_schema_version_is_rejected() -> None:
    from synthrisk.exceptions import InputError

    data = _report().to_dict()
    data["schema_version"] = 2
    with pytest.raises(
        InputError, match=r"schema_version 2, newer than the 1 this synthrisk reads"
    ):
        EvaluationReport.from_dict(data)


def test_value_keys_are_withheld_unless_asked() -> None:
    result = MetricResult(
        metric="singling_out", score=0.1, breakdown={"successful_queries": ["age == 41 AND zip == '1234'"], "n": 1},
        value_keys=("successful_queries",),
    )  # fmt: skip
    report = EvaluationReport("0.1.0", 0, {}, (result,))
    default = json.loads(report.to_json())["results"][0]
    assert default["breakdown"]["successful_queries"].startswith(
        "withheld: 1 entries built from real records' values"
    )
    assert "1234" not in report.to_json()
    shown = json.loads(report.to_json(include_values=True))["results"][0]
    assert shown["breakdown"]["successful_queries"] == ["age == 41 AND zip == '1234'"]
    assert EvaluationReport.from_json(report.to_json(include_values=True))[
        "singling_out"
    ].value_keys == ("successful_queries",)


def test_status_of_skipped_and_undefined_results_round_trips() -> None:
    skipped = MetricResult.skipped(
        "nndr", "it needs a holdout table; none was given.", params={"k": 1}
    )
    undefined = MetricResult("m", None, {}, warnings=("no real row is unique.",))
    explained = MetricResult("m2", float("nan"), {}, reason="too few rows.")
    assert skipped.status == "skipped"
    assert skipped.reason == "it needs a holdout table; none was given."
    # an undefined score takes its reason from the last warning unless given one
    assert (undefined.status, undefined.reason) == (
        "undefined",
        "no real row is unique.",
    )
    assert explained.status == "undefined"
    assert explained.reason == "too few rows."
    assert MetricResult("m3", 0.5, {}, reason="ignored").reason is None
    report = EvaluationReport("0.1.0", 0, {}, (skipped, undefined, explained))
    text = report.to_json()
    entries = json.loads(text)["results"]
    assert [(e["status"], e["reason"], e["score"]) for e in entries] == [
        ("skipped", "it needs a holdout table; none was given.", None),
        ("undefined", "no real row is unique.", None),
        ("undefined", "too few rows.", None),
    ]
    again = EvaluationReport.from_json(text)
    assert again.to_json() == text
    assert again["nndr"] == skipped
    assert "status='skipped'" in repr(skipped)


def test_unknown_status_is_rejected() -> None:
    with pytest.raises(ValueError, match="`status` must be one of"):
        MetricResult("m", 0.5, {}, status="maybe")  # type: ignore[arg-type]


def test_reports_without_status_read_as_before() -> None:
    data = json.loads(_report().to_json())
    for entry in data["results"]:
        del entry["status"], entry["reason"]
    again = EvaluationReport.from_dict(data)
    assert again["m"].status == "ok"
