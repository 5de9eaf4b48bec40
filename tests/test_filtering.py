# SPDX-License-Identifier: BSD-3-Clause
"""``filter_copies``: the copying synthetic rows removed, the table assessed again."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import synthrisk
from synthrisk.datasets.calibration import continuous_data
from synthrisk.filtering import (
    ONION_WARNING,
    FilterResult,
    copying_rows,
    drop_rows,
    with_identification,
)

METRICS = ["identification", "dcr_share"]


def planted_tables(
    seed: int = 7,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[int]]:
    """6,000 rows in thirds; 8 verbatim and 4 near copies of training rows planted.

    Returns real, synthetic, holdout and the synthetic rows that carry the copies. The
    copied training rows have no missing value, so no other real person shares their
    record (the columns are continuous).
    """
    rng = np.random.default_rng(seed)
    data = continuous_data(6000, rng)
    real = data.iloc[:2000].reset_index(drop=True)
    holdout = data.iloc[2000:4000].reset_index(drop=True)
    synthetic = data.iloc[4000:].reset_index(drop=True)
    complete = np.flatnonzero(real.notna().all(axis=1).to_numpy())
    sources = rng.choice(complete, 12, replace=False)
    targets = rng.choice(len(synthetic), 12, replace=False)
    numeric = real.select_dtypes("number").columns
    spread = real[numeric].std().to_numpy()
    for k, (s, t) in enumerate(zip(sources, targets, strict=True)):
        row = real.iloc[s].copy()
        if k >= 8:  # a near copy: every number moved by 0.1 % of its spread
            row[numeric] = row[numeric].to_numpy(dtype=float) + 0.001 * spread
        synthetic.iloc[t] = row
    return real, synthetic, holdout, sorted(int(t) for t in targets)


@pytest.fixture(scope="module")
def planted() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[int]]:
    return planted_tables()


@pytest.fixture(scope="module")
def result(
    planted: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[int]],
) -> FilterResult:
    real, synthetic, holdout, _ = planted
    return synthrisk.filter_copies(real, synthetic, holdout, metrics=METRICS)


def _strip_seconds(data: dict) -> dict:
    for report in (data["before"], data["after"]):
        for entry in report["results"]:
            entry.pop("seconds")
    return data


def test_removes_the_planted_copies_and_only_copying_rows(
    planted: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[int]],
    result: FilterResult,
) -> None:
    _, _, _, targets = planted
    assert set(targets) <= set(result.removed)
    listed = result.before["identification"].records["copying_rows"].index
    assert set(result.removed) == {int(i) for i in listed}
    assert list(result.removed) == sorted(result.removed)


def test_the_filtered_table_keeps_every_other_row_in_order(
    planted: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[int]],
    result: FilterResult,
) -> None:
    _, synthetic, _, _ = planted
    keep = [i for i in range(len(synthetic)) if i not in set(result.removed)]
    assert len(result.filtered) == len(synthetic) - len(result.removed)
    pd.testing.assert_frame_equal(result.filtered, synthetic.iloc[keep])
    assert result.rows == len(synthetic)
    assert result.after.inputs["synthetic"]["rows"] == len(keep)  # type: ignore[index]


def test_the_inputs_are_not_modified(
    planted: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[int]],
    result: FilterResult,
) -> None:
    _, synthetic, _, _ = planted
    _, again, _, _ = planted_tables()
    pd.testing.assert_frame_equal(synthetic, again)


def test_the_copied_people_finding_goes_from_review_to_pass(
    result: FilterResult,
) -> None:
    def levels(report: synthrisk.EvaluationReport) -> list[str]:
        assert report.verdict is not None
        return [f.level for f in report.verdict.findings if f.kind == "copied_people"]

    assert "review" in levels(result.before) or "fail" in levels(result.before)
    assert not {"review", "fail"} & set(levels(result.after))
    comparison = result.comparison()
    assert comparison["copied_people"] == {
        "before": levels(result.before)[0],
        "after": levels(result.after)[0],
    }
    people = comparison["identification"]
    assert people["before"]["identified_training"] >= 12  # type: ignore[index,call-overload]
    assert people["after"]["identified_training"] < 12  # type: ignore[index,call-overload]
    assert people["before"]["chance_model"]["expected_identified"] is not None  # type: ignore[index,call-overload]
    overall = comparison["overall"]
    assert overall["before"] == result.before.verdict.overall  # type: ignore[union-attr,index,call-overload]
    assert overall["after"] == result.after.verdict.overall  # type: ignore[union-attr,index,call-overload]


def test_the_text_says_what_changed_and_warns(result: FilterResult) -> None:
    text = str(result)
    assert f"Removed {len(result.removed)} of 2000 synthetic rows" in text
    assert "Verdict before → after:" in text
    assert "privacy onion" in text
    assert result.warning == ONION_WARNING
    assert text == "\n".join(result.summary_lines())


def test_json_round_trip_without_record_values(result: FilterResult) -> None:
    data = result.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text) == data
    assert data["removed_rows"] == list(result.removed)
    assert data["warning"] == ONION_WARNING
    assert data["reassessed"] is True
    after = synthrisk.EvaluationReport.from_dict(data["after"])  # type: ignore[arg-type]
    assert after.verdict is not None
    assert after.verdict.overall == result.after.verdict.overall  # type: ignore[union-attr]
    # no per-record scores and no cell values: row numbers only
    for report in (data["before"], data["after"]):
        for entry in report["results"]:  # type: ignore[index,union-attr]
            assert "records" not in entry


def test_same_seed_same_json(
    planted: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[int]],
    result: FilterResult,
) -> None:
    real, synthetic, holdout, _ = planted
    again = synthrisk.filter_copies(real, synthetic, holdout, metrics=METRICS, seed=0)
    assert _strip_seconds(again.to_dict()) == _strip_seconds(result.to_dict())


def test_nothing_to_remove_keeps_the_table_without_a_second_evaluation(
    planted: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[int]],
    result: FilterResult,
) -> None:
    real, _, holdout, _ = planted
    if copying_rows(result.after):
        pytest.skip("chance left a near copy in the filtered table")
    again = synthrisk.filter_copies(
        real, result.filtered, holdout, metrics=METRICS, report=result.after
    )
    assert again.removed == ()
    assert again.filtered is result.filtered
    assert again.after is again.before
    assert not again.reassessed
    assert "nothing removed, the table is unchanged" in str(again)
    assert "privacy onion" in str(again)


def test_identification_is_added_to_the_metrics() -> None:
    assert with_identification(None) is None
    assert with_identification(["dcr_share"]) == ["dcr_share", "identification"]
    assert with_identification("dcr_share") == ["dcr_share", "identification"]
    assert with_identification(["identification"]) == ["identification"]
    assert with_identification({"dcr_share": None}) == {
        "dcr_share": None,
        "identification": None,
    }
    params = {"identification": {"near_quantile": 0.01}}
    assert with_identification(params) == params


def test_params_change_the_full_assessment_before_and_after() -> None:
    """``params`` with ``metrics=None``: the full assessment, that metric's parameter changed."""
    rng = np.random.default_rng(7)
    data = continuous_data(1800, rng)
    real, holdout, synthetic = data[:600], data[600:1200], data[1200:].copy()
    synthetic.iloc[:4] = real.iloc[:4].to_numpy()
    result = synthrisk.filter_copies(
        real, synthetic, holdout, params={"identification": {"near_quantile": 0.002}}
    )
    assert set(range(4)) <= set(result.removed)
    for report in (result.before, result.after):
        assert report["identification"].params["near_quantile"] == 0.002
    assert len(result.before.results) == len(result.after.results) > 10


def test_without_a_holdout_it_says_what_is_missing() -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    with pytest.raises(synthrisk.InputError, match="needs a `holdout` table"):
        synthrisk.filter_copies(frame, frame, None, metrics=METRICS)  # type: ignore[arg-type]


def test_a_report_without_identification_is_refused() -> None:
    report = synthrisk.EvaluationReport("0", 0, {}, ())
    with pytest.raises(synthrisk.InputError, match="no `identification` result"):
        copying_rows(report)


def test_drop_rows_keeps_the_table_kind() -> None:
    frame = pd.DataFrame({"a": [1, 2, 3, 4]}, index=[10, 11, 12, 13])
    out = drop_rows(frame, [1, 3])
    assert list(out.index) == [10, 12]
    assert list(frame.index) == [10, 11, 12, 13]
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"a": [1, 2, 3, 4]})
    assert drop_rows(table, [0]).column("a").to_pylist() == [2, 3, 4]
