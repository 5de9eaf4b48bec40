# SPDX-License-Identifier: BSD-3-Clause
"""A checked holdout: the training table refused; overlap, repeated people and another
population recorded and capping the verdict at review; disjoint splits left alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk import EvaluationReport, evaluate
from synthrisk.cli import main
from synthrisk.datasets.calibration import coarse_data, continuous_data, panel_data
from synthrisk.exceptions import InputError
from synthrisk.holdout_check import check_holdout
from synthrisk.schema.tables import prepare_tables
from synthrisk.verdict import judge

#: a cheap gating metric
METRICS = ["identical_match_share"]


def _thirds(frame: pd.DataFrame, seed: int) -> list[pd.DataFrame]:
    rows = np.array_split(np.random.default_rng(seed).permutation(len(frame)), 3)
    return [frame.iloc[r].reset_index(drop=True) for r in rows]


def _mixed(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Adult-like: coarse categorical columns beside correlated measurements."""
    return pd.concat([coarse_data(n, rng), continuous_data(n, rng)], axis=1)


def _check(real: pd.DataFrame, holdout: pd.DataFrame) -> dict[str, Any]:
    tables = prepare_tables(real, real.iloc[:50], holdout)
    block = check_holdout(tables, seed=0)
    assert block is not None
    json.dumps(block)  # JSON-safe
    return block


def _half_training(real: pd.DataFrame, holdout: pd.DataFrame) -> pd.DataFrame:
    half = len(holdout) // 2
    return pd.concat([holdout.iloc[:half], real.iloc[:half]], ignore_index=True)


MAKERS = {"coarse": coarse_data, "continuous": continuous_data, "mixed": _mixed}


@pytest.mark.parametrize("kind", sorted(MAKERS))
@pytest.mark.parametrize("seed", [0, 1])
def test_disjoint_splits_raise_nothing(kind: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    real, holdout, _ = _thirds(MAKERS[kind](6000, rng), seed)
    block = _check(real, holdout)
    assert block["caps_at"] is None, block["reasons"]
    overlap = block["overlap"]
    # shared records by chance only: at the rate the training table repeats itself
    assert abs(overlap["share"] - overlap["expected_share"]) < 0.02
    assert 0.4 < block["population"]["auc"] < 0.6


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_half_training_holdout_is_flagged(kind: str) -> None:
    rng = np.random.default_rng(3)
    real, holdout, _ = _thirds(MAKERS[kind](6000, rng), 3)
    block = _check(real, _half_training(real, holdout))
    overlap = block["overlap"]
    assert overlap["excess"]
    assert overlap["records_excess"]
    assert overlap["share"] >= 0.5
    assert overlap["expected_share"] < 0.1
    assert overlap["p_value"] < 1e-6
    assert block["caps_at"] == "review"
    assert "holdout overlaps the training table" in block["reasons"][0]


def test_shared_identifier_values_are_an_overlap() -> None:
    rng = np.random.default_rng(4)
    frame = continuous_data(3000, rng)
    frame.insert(0, "customer_id", rng.permutation(10**6)[:3000] + 10**6)
    real, holdout, _ = _thirds(frame, 4)
    assert _check(real, holdout)["caps_at"] is None
    # the same people under other measurements: ids shared, records not
    again = holdout.copy()
    again["customer_id"] = real["customer_id"].to_numpy()[: len(again)]
    block = _check(real, again)
    assert block["overlap"]["shared_ids"] == {"customer_id": len(again)}
    assert block["caps_at"] == "review"
    # per-file row numbers are not identifiers of people
    numbered_real = real.assign(customer_id=np.arange(len(real)))
    numbered_hold = holdout.assign(customer_id=np.arange(len(holdout)))
    assert _check(numbered_real, numbered_hold)["caps_at"] is None


def test_shifted_population_is_flagged() -> None:
    rng = np.random.default_rng(5)
    real, _, _ = _thirds(continuous_data(6000, rng), 5)
    shifted = continuous_data(2000, np.random.default_rng(50))
    shifted["weight"] += 8.0
    shifted["pressure"] += 8.0
    block = _check(real, shifted)
    population = block["population"]
    assert population["shifted"]
    assert population["ci"][0] > 0.6
    assert population["auc"] > 0.65
    assert block["caps_at"] == "review"
    assert any("does not look like new people" in r for r in block["reasons"])


def test_one_category_holdout_is_flagged() -> None:
    rng = np.random.default_rng(6)
    real, _, _ = _thirds(coarse_data(6000, rng), 6)
    other = coarse_data(8000, np.random.default_rng(60))
    block = _check(real, other[other["region"] == "A"].reset_index(drop=True))
    assert block["population"]["shifted"]
    assert block["population"]["auc"] > 0.75


def _panel(seed: int) -> tuple[pd.DataFrame, list[pd.DataFrame], list[pd.DataFrame]]:
    panel = panel_data(6000, np.random.default_rng(seed))
    by_rows = _thirds(panel, seed)
    people = np.array_split(
        np.random.default_rng(seed).permutation(panel["person_id"].unique()), 3
    )
    by_person = [
        panel[panel["person_id"].isin(p)].reset_index(drop=True) for p in people
    ]
    return panel, by_rows, by_person


@pytest.mark.parametrize("seed", [0, 1])
def test_panel_split_by_rows_without_a_person_key_is_flagged(seed: int) -> None:
    _, by_rows, _ = _panel(seed)
    real, holdout = (t.drop(columns="person_id") for t in by_rows[:2])
    block = _check(real, holdout)
    repeated = block["repeated_people"]
    assert repeated["likely"]
    assert repeated["share"] > 2 * repeated["model_share"]
    assert repeated["training_repeat_share"] > 0.4
    # said, not capped: new people split by rows still pass (the caveat says what the
    # verdict cannot promise without a person key)
    assert block["caps_at"] is None
    text = " ".join(block["reasons"])
    assert "person key" in text
    assert "split the data by person" in text
    # with the key kept, the shared people are named as an identifier overlap
    keyed = _check(by_rows[0], by_rows[1])
    assert keyed["overlap"]["shared_ids"].get("person_id", 0) > 0
    assert keyed["caps_at"] == "review"


@pytest.mark.parametrize("seed", [0, 1])
def test_panel_split_by_person_raises_nothing(seed: int) -> None:
    _, _, by_person = _panel(seed)
    real, holdout = (t.drop(columns="person_id") for t in by_person[:2])
    block = _check(real, holdout)
    assert block["caps_at"] is None, block["reasons"]
    assert not block["repeated_people"]["likely"]


def test_identical_holdout_is_refused() -> None:
    rng = np.random.default_rng(7)
    real, synthetic, _ = _thirds(coarse_data(1500, rng), 7)
    shuffled = real.sample(frac=1.0, random_state=1).reset_index(drop=True)
    for holdout in (real, shuffled):
        with pytest.raises(InputError, match="never saw") as err:
            evaluate(real, synthetic, holdout, metrics=METRICS)
        assert "holdout table" in str(err.value)
        assert "real (training) table" in str(err.value)


def test_identical_holdout_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(8)
    real, synthetic, _ = _thirds(coarse_data(900, rng), 8)
    real.to_csv(tmp_path / "real.csv", index=False)
    synthetic.to_csv(tmp_path / "synthetic.csv", index=False)
    code = main(
        ["evaluate", "--real", str(tmp_path / "real.csv"), "--synthetic", str(tmp_path / "synthetic.csv"),
         "--holdout", str(tmp_path / "real.csv"), "--metrics", *METRICS,
         "--json", str(tmp_path / "report.json"), "--quiet"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "never saw" in err
    assert not (tmp_path / "report.json").exists()


def test_overlap_caps_the_verdict_and_survives_json() -> None:
    rng = np.random.default_rng(9)
    real, synthetic, holdout = _thirds(continuous_data(3000, rng), 9)
    clean = evaluate(real, synthetic, holdout, metrics=METRICS)
    assert clean.verdict is not None
    assert clean.verdict.overall == "pass"
    assert clean.inputs["holdout_check"]["caps_at"] is None  # type: ignore[index]
    report = evaluate(real, synthetic, _half_training(real, holdout), metrics=METRICS)
    assert report.verdict is not None
    assert report.verdict.overall == "review"
    assert "At most review: the holdout overlaps the training table" in (
        report.verdict.reason
    )
    caveats = report.verdict_caveats(width=None)
    assert caveats[0].startswith("inputs: the holdout overlaps the training table")
    assert "50.0 % of the holdout rows" in caveats[0]
    again = EvaluationReport.from_dict(json.loads(report.to_json()))
    assert judge(again).overall == "review"
    assert judge(again).reason == report.verdict.reason


def test_a_table_of_one_record_is_not_refused() -> None:
    """Every person alike: a holdout of new people holds the same rows, and that is no error."""
    same = pd.DataFrame({"x": [1.0] * 60, "c": ["a"] * 60})
    block = _check(same, same.copy())
    assert block["caps_at"] is None, block["reasons"]
