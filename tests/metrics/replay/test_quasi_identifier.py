"""quasi_identifier_replay: the known-column rule, hand-computed counts, copies fail."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthrisk.metrics import QuasiIdentifierReplay
from synthrisk.metrics.replay._common import singleton_chance
from synthrisk.metrics.replay.quasi_identifier import _as_dates, known_label
from synthrisk.schema.tables import prepare_tables
from synthrisk.stats.exact import excess_greater_p


def test_known_columns_by_name() -> None:
    assert known_label("DateOfBirth") == "date of birth"
    assert known_label("date of birth") == "date of birth"
    assert known_label("DOB") == "date of birth"
    assert known_label("birth_year") == "year of birth"
    assert known_label("ZIP-Code") == "postcode"
    assert known_label("postal_code") == "postcode"
    assert known_label("Gender") == "sex"
    assert known_label("patient_sex") == "sex"
    assert known_label("AgeGroup") == "age"
    assert known_label("marital-status") == "marital status"
    assert known_label("Ethnicity") == "race or ethnicity"
    assert known_label("city_of_residence") == "place of residence"
    assert known_label("state") == "place of residence"
    for other in ("usage", "page", "disease_state", "income", "stage", "wage"):
        assert known_label(other) is None, other


def _tiny() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    real = pd.DataFrame(
        {
            "dob": ["1980-01-01", "1980-01-01", "1975-05-05", "1990-09-09"],
            "zip": ["10001", "10001", "10002", "10003"],
            "sex": ["F", "F", "M", "F"],
            "score": [1.0, 2.0, 3.0, 4.0],
        }
    )
    holdout = pd.DataFrame(
        {
            "dob": ["1975-05-05", "1985-02-02", "1990-09-09"],
            "zip": ["10002", "10004", "10003"],
            "sex": ["F", "M", "F"],
            "score": [5.0, 6.0, 7.0],
        }
    )
    synthetic = pd.DataFrame(
        {
            # s0 repeats training t2 (unique); s1 repeats h1's dob + zip, not their sex
            "dob": ["1975-05-05", "1985-02-02", "1980-01-01"],
            "zip": ["10002", "10004", "10001"],
            "sex": ["M", "F", "F"],
            "score": [9.0, 9.0, 9.0],
        }
    )
    return real, holdout, synthetic


MD = {"columns": {"zip": {"kind": "categorical"}, "sex": {"kind": "categorical"}}}


def test_hand_counted_full_set_and_pairs() -> None:
    real, holdout, synthetic = _tiny()
    result = QuasiIdentifierReplay().compute(real, synthetic, holdout, metadata=MD)
    b = result.breakdown
    assert b["known_columns"] == ["dob", "zip", "sex"]
    combos = b["combinations"]
    # full set: unique t2 (training), h0 and h1 (holdout); t0 = t1, t3 = h2 share theirs
    full = combos["dob+zip+sex"]
    assert (full["training_replayed"], full["training_holders"]) == (1, 1)
    assert (full["holdout_replayed"], full["holdout_holders"]) == (0, 2)
    # dob + zip: only h1 is unique, and s1 repeats the pair
    pair = combos["dob+zip"]
    assert (
        pair["training_holders"],
        pair["holdout_replayed"],
        pair["holdout_holders"],
    ) == (0, 1, 1)
    for name in ("dob+sex", "zip+sex"):
        assert (
            combos[name]["training_replayed"],
            combos[name]["training_holders"],
        ) == (1, 1)
        assert (combos[name]["holdout_replayed"], combos[name]["holdout_holders"]) == (
            0,
            2,
        )
    parts = {p["part"]: p for p in b["holdout_test"]["components"]}
    assert parts["dob+zip+sex"]["p_value"] == excess_greater_p(1, 1, 0, 2)
    assert parts["dob+zip+sex"]["p_value_adjusted"] == min(
        1.0, 4 * excess_greater_p(1, 1, 0, 2)
    )
    assert b["replayed_training"] == 1
    assert b["replayed_holdout"] == 1
    assert b["unique_replayed_training"] == 1
    assert b["unique_replayed_holdout"] == 1
    # listed once, through the full set
    assert b["replayed"] == [
        {
            "rows": [2],
            "synthetic_rows": [0],
            "columns": ["dob", "zip", "sex"],
            "match": "combination",
            "holders": 1,
        }
    ]
    assert result.records["replaying_rows"].index.tolist() == [0]
    assert result.score == pytest.approx(1 / 4)
    # the chance model of a part with the smallest holdout p-value (the three that read
    # 1 of 1 vs 0 of 2 have the same keys: holders 2, 1, 2, 1, 1), by hand
    cm = b["chance_model"]
    smallest = min(p["p_value"] for p in parts.values())
    assert parts["+".join(cm["columns"])]["p_value"] == smallest
    expected = singleton_chance(
        np.array([2, 1, 2, 1, 1]),
        np.array([True, True, True, False, False]),
        np.array([True, True, False, False, False]),
        3,
        tests=4,
    )
    assert {k: v for k, v in cm.items() if k != "columns"} == expected


def test_without_pairs_and_named_columns() -> None:
    real, holdout, synthetic = _tiny()
    b = (
        QuasiIdentifierReplay(columns=["dob", "zip"], pairs=False)
        .compute(real, synthetic, holdout, metadata=MD)
        .breakdown
    )
    assert list(b["combinations"]) == ["dob+zip"]
    assert b["columns_chosen_by"] == "`columns`"
    assert b["replayed_training"] == 0
    assert b["replayed_holdout"] == 1


def test_dates_as_dates() -> None:
    real, holdout, synthetic = _tiny()
    synthetic["dob"] = synthetic["dob"] + " 00:00:00"  # the same dates, written longer
    md = {"columns": {**MD["columns"], "dob": {"kind": "pii"}}}
    b = (
        QuasiIdentifierReplay(pairs=False)
        .compute(real, synthetic, holdout, metadata=md)
        .breakdown
    )
    assert b["combinations"]["dob+zip+sex"]["training_replayed"] == 1
    parsed = _as_dates(pd.Series(["25/12/1980", "01/02/1999", None]))
    assert parsed is not None
    assert parsed.iloc[0] == pd.Timestamp("1980-12-25")
    assert _as_dates(pd.Series(["soon", "later"])) is None


def test_panel_person_counted_once() -> None:
    real = pd.DataFrame(
        {
            "pid": ["p1", "p1", "p2", "p2"],
            "age": [40, 40, 50, 50],
            "sex": ["F", "F", "M", "M"],
        }
    )
    holdout = pd.DataFrame(
        {
            "pid": ["h1", "h1", "h2", "h2"],
            "age": [60, 60, 50, 50],
            "sex": ["F", "F", "M", "M"],
        }
    )
    synthetic = pd.DataFrame({"pid": ["s1", "s2"], "age": [40, 60], "sex": ["F", "F"]})
    md = {"columns": {"pid": {"kind": "id"}, "sex": {"kind": "categorical"}}}
    b = (
        QuasiIdentifierReplay(person="pid")
        .compute(real, synthetic, holdout, metadata=md)
        .breakdown
    )
    full = b["combinations"]["age+sex"]
    # (40, F): p1 alone (two rows); (50, M): p2 and h2; (60, F): h1 alone
    assert (full["training_replayed"], full["training_holders"]) == (1, 1)
    assert (full["holdout_replayed"], full["holdout_holders"]) == (1, 1)
    assert b["replayed"][0]["rows"] == [0, 1]


def population(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dob = pd.Timestamp("1940-01-01") + pd.to_timedelta(
        rng.integers(0, 365 * 60, n), unit="D"
    )
    return pd.DataFrame(
        {
            "date_of_birth": dob.strftime("%Y-%m-%d"),
            "zip": [f"{z:05d}" for z in rng.integers(10000, 10100, n)],
            "sex": rng.choice(["F", "M"], n),
            "income": rng.lognormal(10, 0.5, n).round(0),
        }
    )


def _json(result: object) -> str:
    data = result.to_dict(include_records=True)  # type: ignore[attr-defined]
    data.pop("seconds", None)
    return json.dumps(data, sort_keys=True, default=str)


def test_copy_fails_new_people_pass_values_withheld() -> None:
    for seed in range(5):
        pop = population(3000, seed)
        train, holdout, synthetic = (
            pop.iloc[:1000].reset_index(drop=True),
            pop.iloc[1000:2000].reset_index(drop=True),
            pop.iloc[2000:].reset_index(drop=True),
        )
        new = QuasiIdentifierReplay().compute(train, synthetic, holdout)
        assert new.breakdown["holdout_test"]["p_value"] > 0.05, seed
        assert not new.warnings
    copied = synthetic.copy()
    copied.iloc[:100] = train.iloc[:100].to_numpy()  # 10 % of the rows copied
    result = QuasiIdentifierReplay().compute(train, copied, holdout)
    b = result.breakdown
    assert b["combinations"]["date_of_birth+zip+sex"]["training_replayed"] >= 100
    assert b["holdout_test"]["p_value"] < 1e-10
    assert b["chance_model"]["significant"]
    assert "synthetic rows" in result.warnings[-1]
    dob = train.loc[b["replayed"][0]["rows"][0], "date_of_birth"]
    assert dob not in _json(result)
    shown = QuasiIdentifierReplay(include_values=True).compute(train, copied, holdout)
    assert dob not in _json(shown)
    assert dob in json.dumps(shown.to_dict(include_values=True))


def test_too_few_known_columns_and_errors() -> None:
    real, holdout, synthetic = _tiny()
    cols = ["sex", "score"]
    result = QuasiIdentifierReplay().compute(real[cols], synthetic[cols], holdout[cols])
    assert result.score is None
    assert "found only 'sex'" in (result.reason or "")
    assert "`columns=[...]`" in (result.reason or "")
    with pytest.raises(
        ValueError, match=r"`columns` names 'nope'.*leave `columns` unset"
    ):
        QuasiIdentifierReplay(columns=["nope"]).compute(real, synthetic, holdout)
    tables = prepare_tables(real, synthetic, holdout, metadata=MD)
    assert QuasiIdentifierReplay.applies_by_default(tables)
    assert not QuasiIdentifierReplay.applies_by_default(
        prepare_tables(real[cols], synthetic[cols], holdout[cols])
    )
    # without a holdout: not in a default run (rarity is read on the pooled people)
    assert not QuasiIdentifierReplay.applies_by_default(
        prepare_tables(real, synthetic, None, metadata=MD)
    )
