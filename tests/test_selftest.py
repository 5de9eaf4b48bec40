# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk import evaluate
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics import make_context
from synthrisk.metrics.membership.isolation import isolated_training_people
from synthrisk.results import EvaluationReport
from synthrisk.schema.tables import prepare_tables
from synthrisk.selftest import SHARES, PlantedLeak, plan_leak, plant, planted_rows


def _people(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Continuous columns: every record is unique, so every person can be identified."""
    return pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "y": rng.normal(10.0, 3.0, size=n),
            "count": rng.integers(0, 60, size=n),
            "group": rng.choice(["a", "b", "c"], size=n),
        }
    )


@pytest.fixture(scope="module")
def frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(7)
    return _people(600, rng), _people(600, rng), _people(600, rng)


@pytest.fixture(scope="module")
def tested(
    frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
) -> EvaluationReport:
    real, synthetic, holdout = frames
    return evaluate(
        real, synthetic, holdout, metrics=["identification"], seed=3, self_test=True
    )


def _without_seconds(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _without_seconds(v) for k, v in data.items() if k != "seconds"}
    if isinstance(data, list):
        return [_without_seconds(v) for v in data]
    return data


def test_planted_rows_is_the_share_and_at_least_one() -> None:
    assert [planted_rows(s, 39_040) for s in SHARES] == [39, 195, 390]
    assert [planted_rows(s, 600) for s in SHARES] == [1, 3, 6]
    assert [planted_rows(s, 50) for s in SHARES] == [1, 1, 1]
    assert planted_rows(0.01, 1) == 1


def test_self_test_catches_exact_copies_where_identification_has_power(
    tested: EvaluationReport,
) -> None:
    self_test = tested.self_test
    assert self_test is not None
    assert tested.verdict is not None
    assert tested.verdict.overall == "pass"
    assert [(s.kind, s.share, s.planted) for s in self_test.scenarios] == [
        ("exact", 0.001, 1),
        ("exact", 0.005, 3),
        ("exact", 0.01, 6),
        ("near", 0.001, 1),
        ("near", 0.005, 3),
        ("near", 0.01, 6),
    ]
    exact_1 = self_test.scenarios[2]
    # 6 copies of the 6 most isolated people: the whole most isolated 1 % stratum
    assert exact_1.caught
    assert exact_1.failed == ("identification",)
    assert self_test.metrics == ("identification",)
    assert self_test.synthetic_rows == 600
    assert self_test.training_people == self_test.candidates == 600
    assert self_test.headline.startswith(
        "The verdict would have caught exact copies of"
    )


def test_self_test_reruns_only_the_gating_metrics(
    frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
    caplog: pytest.LogCaptureFixture,
) -> None:
    real, synthetic, holdout = frames
    caplog.set_level(logging.INFO, logger="synthrisk.selftest")
    report = evaluate(
        real,
        synthetic,
        holdout,
        metrics=["dcr_baseline_protection", "identification"],
        seed=3,
        self_test=True,
    )
    assert report.self_test is not None
    assert report.self_test.metrics == ("identification",)
    # 6 planted tables x 2 searches (the isolation ranking is the run's own, kept with
    # its tables): the isolation search from memory, the synthetic one from a few rows
    (logged,) = [r.getMessage() for r in caplog.records if "searches" in r.getMessage()]
    assert logged.startswith(
        "self-test: 12 searches, 6 answered from memory, 6 from a few"
    )
    for scenario in report.self_test.scenarios:
        # the re-run gating metric, and the copied-people finding where it asks for more
        judged = set(scenario.failed + scenario.review + scenario.passed)
        assert judged - {"copied_people (finding)"} == {"identification"}


def test_self_test_modifies_neither_the_inputs_nor_the_run(
    frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
    tested: EvaluationReport,
) -> None:
    real, synthetic, holdout = frames
    before = [f.copy() for f in frames]
    plain = evaluate(real, synthetic, holdout, metrics=["identification"], seed=3)
    for frame, copy in zip(frames, before, strict=True):
        pd.testing.assert_frame_equal(frame, copy)
    data = _without_seconds(tested.to_dict())
    assert "self_test" in data
    del data["self_test"]
    assert data == _without_seconds(plain.to_dict())


def test_self_test_json_is_the_same_for_the_same_seed(
    frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
    tested: EvaluationReport,
) -> None:
    real, synthetic, holdout = frames
    again = evaluate(
        real, synthetic, holdout, metrics=["identification"], seed=3, self_test=True
    )
    assert json.dumps(_without_seconds(again.to_dict())) == json.dumps(
        _without_seconds(tested.to_dict())
    )
    assert again.self_test == tested.self_test


def test_self_test_round_trips_through_json(tested: EvaluationReport) -> None:
    text = tested.to_json()
    data = json.loads(text)["self_test"]
    assert data["headline"] == tested.self_test.headline  # type: ignore[union-attr]
    assert data["scenarios"][2]["caught"] is True
    again = EvaluationReport.from_json(text)
    assert again.self_test == tested.self_test
    assert again.to_json() == text


def test_self_test_shows_in_print_report(tested: EvaluationReport) -> None:
    text = str(tested)
    assert "self-test (copies of the most isolated training people planted)" in text
    assert "exact: 0.1 % " in text
    assert "self_test=" in repr(tested)


def test_self_test_without_holdout_is_an_input_error(
    frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
) -> None:
    real, synthetic, _ = frames
    with pytest.raises(InputError, match=r"self-test .* needs a `holdout` table"):
        evaluate(real, synthetic, metrics=["identification"], self_test=True)


def test_self_test_must_be_a_bool(
    frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
) -> None:
    real, synthetic, holdout = frames
    with pytest.raises(
        ParameterError, match=r"`self_test` must be true or false; got 'yes'\."
    ):
        evaluate(real, synthetic, holdout, self_test="yes")  # type: ignore[arg-type]


def test_plant_copies_exact_and_near_cells() -> None:
    rng = np.random.default_rng(0)
    real = _people(40, rng).assign(
        when=pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 999, 40), "D")
    )
    synthetic = _people(30, rng).assign(
        when=pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 9, 30), "D")
    )
    tables = prepare_tables(real, synthetic, real.iloc[:5])
    moves = {
        "x": np.array([0.5, -0.5, 1.0]),
        "count": np.array([0.25, 0.25, -0.25]),
        "when": np.array([1e9, -1e9, 2e9]),
    }
    leak = PlantedLeak(np.array([4, 9, 2]), np.array([7, 0, 20]), moves)
    exact = plant(tables, leak, 2, near=False)
    near = plant(tables, leak, 3, near=True)
    assert tables.synthetic.equals(prepare_tables(real, synthetic).synthetic)
    assert list(exact.dtypes) == list(tables.synthetic.dtypes)
    assert list(near.dtypes) == list(tables.synthetic.dtypes)
    untouched = np.setdiff1d(np.arange(30), [7, 0, 20])
    pd.testing.assert_frame_equal(
        near.iloc[untouched], tables.synthetic.iloc[untouched]
    )
    # exact copies: the real rows at the replaced positions; the third is not planted
    pd.testing.assert_frame_equal(
        exact.iloc[[7, 0]].reset_index(drop=True),
        tables.real.iloc[[4, 9]].reset_index(drop=True),
    )
    pd.testing.assert_series_equal(exact.iloc[20], tables.synthetic.iloc[20])
    # near copies: numbers and dates moved (not rounded), categories kept
    for position, source, j in ((7, 4, 0), (0, 9, 1), (20, 2, 2)):
        copied, original = near.iloc[position], tables.real.iloc[source]
        assert copied["x"] == pytest.approx(original["x"] + moves["x"][j])
        assert copied["count"] == pytest.approx(original["count"] + moves["count"][j])
        assert copied["y"] == original["y"]  # no move given for y
        assert copied["group"] == original["group"]
        assert copied["when"] - original["when"] == pd.Timedelta(moves["when"][j], "ns")


def test_near_copies_move_by_one_percent_of_the_real_sd(
    frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
) -> None:
    from synthrisk.selftest import _moved_columns

    real, synthetic, holdout = frames
    tables = prepare_tables(real, synthetic, holdout)
    moved = _moved_columns(tables, None)
    assert list(moved) == ["x", "y", "count"]
    assert moved["y"] == pytest.approx(real["y"].std())


def test_self_test_skips_near_copies_without_a_numeric_column() -> None:
    rng = np.random.default_rng(3)

    def draw(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {f"c{i}": rng.choice(list("abcdefghij"), size=n) for i in range(5)}
        )

    report = evaluate(
        draw(300),
        draw(300),
        draw(300),
        metrics=["identification"],
        seed=0,
        self_test=True,
    )
    assert report.self_test is not None
    near = [s for s in report.self_test.scenarios if s.kind == "near"]
    assert [s.overall for s in near] == ["skipped"] * 3
    assert all("near copy would be an exact copy" in s.reason for s in near)
    assert any("near copies skipped" in n for n in report.self_test.notes)
    assert all(s.overall != "skipped" for s in report.self_test.scenarios[:3])


def test_each_scenario_is_judged_as_evaluate_judges_the_planted_table(
    frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
) -> None:
    """Reused encodings and searches change nothing: a fresh evaluation agrees."""
    real, synthetic, holdout = frames
    metrics = ["identification", "dcr_share", "membership_knn_probabilities"]
    tested = evaluate(real, synthetic, holdout, metrics=metrics, seed=5, self_test=True)
    assert tested.self_test is not None
    tables = prepare_tables(real, synthetic, holdout)
    context = make_context(
        "self_test", seed=5, working_memory=None, backend=None, progress=False
    )
    isolated = isolated_training_people(tables, context=context)
    leak = plan_leak(tables, isolated, n=planted_rows(0.01, 600), seed=5)
    # 0.5 % exact, 0.1 % near, 1 % near
    for scenario in tested.self_test.scenarios[1::2]:
        planted = plant(tables, leak, scenario.planted, near=scenario.kind == "near")
        fresh = evaluate(tables.real, planted, tables.holdout, metrics=metrics, seed=5)
        assert fresh.verdict is not None
        assert fresh.verdict.overall == scenario.overall
        levels = {v.metric: v.level for v in fresh.verdict.metrics}
        assert scenario.failed == tuple(m for m in metrics if levels[m] == "fail")
        assert scenario.reason == fresh.verdict.reason
