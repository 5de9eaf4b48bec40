"""rare_value_replay: hand-computed counts, exact p-values, copies fail, new people pass."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from synthrisk.metrics import RareValueReplay
from synthrisk.metrics.replay._common import singleton_chance
from synthrisk.schema.tables import prepare_tables
from synthrisk.stats.exact import excess_greater_p

MD = {"columns": {"code": {"kind": "categorical"}, "num": {"kind": "numerical"}}}


def population(n: int, seed: int) -> pd.DataFrame:
    """Diagnosis codes: 80 common codes (Zipf, s = 1) for 90 % of people, one of 50,000
    rare codes for the other 10 % (a long tail: the table shows about 270 codes)."""
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, 81)
    code = rng.choice(80, size=n, p=w / w.sum())
    rare = rng.random(n) < 0.1
    code[rare] = 80 + rng.integers(0, 50_000, size=int(rare.sum()))
    return pd.DataFrame(
        {
            "diagnosis": [f"D{c:05d}" for c in code],
            "sex": rng.choice(["F", "M"], size=n),
            "age": rng.integers(18, 90, size=n),
            "region": rng.choice([f"R{i}" for i in range(8)], size=n),
        }
    )


def split(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """3,000 people: training, holdout and a synthetic table of new people (1,000 each)."""
    pop = population(3000, seed)
    return (
        pop.iloc[:1000].reset_index(drop=True),
        pop.iloc[1000:2000].reset_index(drop=True),
        pop.iloc[2000:].reset_index(drop=True),
    )


def plant(
    train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame, k: int = 10
) -> pd.DataFrame:
    """``k`` synthetic rows changed to carry ``k`` codes that one training person holds."""
    counts = pd.concat([train, holdout])["diagnosis"].value_counts()
    present = set(synthetic["diagnosis"])
    single = [
        v
        for v in train["diagnosis"]
        if counts[v] == 1 and v not in present  # not already carried by chance
    ][:k]
    common = synthetic.index[synthetic["diagnosis"].map(counts).fillna(0) > 5][:k]
    assert len(single) == len(common) == k
    out = synthetic.copy()
    out.loc[common, "diagnosis"] = single
    return out


def _tiny() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    real = pd.DataFrame(
        {
            "code": ["a", "a", "b", "c", "d"],
            "num": [1.5, 2.5, 3.5, 4.5, 100.5],
        }
    )
    holdout = pd.DataFrame({"code": ["e", "b", "f"], "num": [0.5, 5.5, 6.5]})
    synthetic = pd.DataFrame(
        {"code": ["c", "e", "a", "z"], "num": [2.0, 3.0, 101.0, 4.0]}
    )
    return real, holdout, synthetic


def test_hand_counted_values_and_extremes() -> None:
    real, holdout, synthetic = _tiny()
    result = RareValueReplay().compute(real, synthetic, holdout, metadata=MD)
    b = result.breakdown
    # code: rare (one holder) c, d (training), e, f (holdout); c and e are carried
    code = b["columns"]["code"]
    assert (code["training_replayed"], code["training_holders"]) == (1, 2)
    assert (code["holdout_replayed"], code["holdout_holders"]) == (1, 2)
    assert code["rules"] == ["values"]
    # num: the pooled largest (100.5, training row 4) is reached by 101.0; the
    # smallest (0.5, holdout row 0) by nothing
    num = b["columns"]["num"]
    assert num["rules"] == ["extremes"]
    assert (num["training_replayed"], num["training_holders"]) == (1, 1)
    assert (num["holdout_replayed"], num["holdout_holders"]) == (0, 1)
    parts = {p["part"]: p for p in b["holdout_test"]["components"]}
    assert parts["code"]["p_value"] == excess_greater_p(1, 2, 1, 2)
    assert parts["num"]["p_value"] == excess_greater_p(1, 1, 0, 1)
    assert b["replayed_training"] == 2
    assert b["replayed_holdout"] == 1
    assert b["unique_replayed_training"] == 2
    assert b["unique_replayed_holdout"] == 1
    entries = {e["column"]: e for e in b["replayed"]}
    assert entries["code"] == {
        "rows": [3],
        "synthetic_rows": [0],
        "column": "code",
        "match": "rare value",
        "holders": 1,
    }
    assert entries["num"]["rows"] == [4]
    assert entries["num"]["synthetic_rows"] == [2]
    assert entries["num"]["match"] == "extreme value"
    assert result.records["replaying_rows"].index.tolist() == [0, 2]
    assert result.records["replaying_rows"].values.tolist() == [1.0, 1.0]
    assert result.score == pytest.approx(2 / 5)


def test_chance_model_by_hand_against_scipy() -> None:
    real, holdout, synthetic = _tiny()
    b = RareValueReplay().compute(real, synthetic, holdout, metadata=MD).breakdown
    cm = b["chance_model"]
    assert cm["column"] == "code"
    # keys a(2, T) b(2, T) c(1, T) d(1, T) e(1, H) f(1, H); carried: c, e, a
    # N = 8, N1 = 4, N2 = 2: Good–Turing 1 - exp(-4 * 2*2 / (8*4)) = 0.39;
    # 1 of 2 training singletons replayed
    assert cm["rate_model"] == pytest.approx(-np.expm1(-0.5))
    # the holdout's 1 of 2 enters as its lower 95 % bound, below the model's rate
    assert cm["rate_holdout"] == 0.5
    assert cm["rate_holdout_bound"] == pytest.approx(stats.beta.ppf(0.05, 1, 2))
    rate = -np.expm1(-0.5)
    assert cm["rate"] == pytest.approx(rate)
    assert cm["p_value"] == pytest.approx(stats.binom.sf(0, 2, rate))
    same = singleton_chance(
        np.array([2, 2, 1, 1, 1, 1]),
        np.array([True, True, True, True, False, False]),
        np.array([True, False, True, False, True, False]),
        4,
    )
    assert {k: v for k, v in cm.items() if k != "column"} == same


def test_max_people_two_counts_shared_values() -> None:
    real, holdout, synthetic = _tiny()
    b = (
        RareValueReplay(max_people=2, columns=["code"])
        .compute(real, synthetic, holdout, metadata=MD)
        .breakdown
    )
    code = b["columns"]["code"]
    # a (2 training people, carried), b (1 + 1), c, d, e, f: every person holds one
    assert (code["training_replayed"], code["training_holders"]) == (3, 5)
    assert (code["holdout_replayed"], code["holdout_holders"]) == (1, 3)
    assert code["unique_replayed_training"] == 1  # c; a is held by two
    a_entry = next(e for e in b["replayed"] if e["rows"] == [0])
    assert a_entry["holders"] == 2
    assert a_entry["synthetic_rows"] == [2]


def test_panel_person_counted_once() -> None:
    real = pd.DataFrame(
        {
            "pid": ["p1", "p1", "p2", "p2", "p3", "p3"],
            "code": ["x", "x", "y", "y", "w", "w"],
        }
    )
    holdout = pd.DataFrame(
        {"pid": ["h1", "h1", "h2", "h2"], "code": ["v", "v", "y", "y"]}
    )
    synthetic = pd.DataFrame({"pid": ["s1", "s2"], "code": ["x", "v"]})
    md = {"columns": {"pid": {"kind": "id"}, "code": {"kind": "categorical"}}}
    b = (
        RareValueReplay(person="pid")
        .compute(real, synthetic, holdout, metadata=md)
        .breakdown
    )
    code = b["columns"]["code"]
    # x: p1 only (two rows, one person) -> rare; y: p2 and h2 -> not rare
    assert (code["training_replayed"], code["training_holders"]) == (1, 2)
    assert (code["holdout_replayed"], code["holdout_holders"]) == (1, 1)
    assert b["training_people"] == 3
    assert b["replayed"][0]["rows"] == [0, 1]
    assert "pid" not in b["columns"]


def _json(result: object) -> str:
    data = result.to_dict(include_records=True)  # type: ignore[attr-defined]
    data.pop("seconds", None)
    return json.dumps(data, sort_keys=True, default=str)


def test_copy_of_training_fails_and_values_only_on_request() -> None:
    train, holdout, _ = split(0)
    result = RareValueReplay().compute(train, train.copy(), holdout)
    b = result.breakdown
    assert b["holdout_test"]["p_value"] < 1e-10
    assert b["chance_model"]["significant"]
    assert b["columns"]["diagnosis"]["holdout_replayed"] == 0
    assert "synthetic rows" in result.warnings[-1]
    rare = b["replayed"][0]
    code = train.loc[rare["rows"][0], "diagnosis"]
    assert code not in _json(result)
    shown = RareValueReplay(include_values=True).compute(train, train.copy(), holdout)
    assert code not in _json(shown)  # withheld from JSON by default
    assert code in json.dumps(shown.to_dict(include_values=True))


def test_planted_ten_rows_read_significant_and_new_people_pass() -> None:
    """Measured over these 20 seeds: new people read significant 0 times (smallest chance
    p-value 0.014; holdout test below 0.05 once, smallest 0.026); the 10 planted rows 20
    times (chance p-values 0 to 2.4e-4; holdout test p at most 0.0073)."""
    flagged, detected, holdout_flags = 0, 0, 0
    for seed in range(20):
        train, holdout, synthetic = split(100 + seed)
        new = RareValueReplay().compute(train, synthetic, holdout).breakdown
        flagged += bool(new["chance_model"]["significant"])
        holdout_flags += new["holdout_test"]["p_value"] < 0.05
        planted = RareValueReplay().compute(
            train, plant(train, holdout, synthetic), holdout
        )
        cm = planted.breakdown["chance_model"]
        assert cm["column"] == "diagnosis"
        assert cm["replayed"] >= 10
        detected += bool(cm["significant"])
    assert flagged <= 1
    assert holdout_flags <= 2
    assert detected >= 19


def test_errors_and_default_run() -> None:
    real, holdout, synthetic = _tiny()
    with pytest.raises(
        ValueError, match=r"`columns` names 'nope'.*leave `columns` unset"
    ):
        RareValueReplay(columns=["nope"]).compute(real, synthetic, holdout, metadata=MD)
    with pytest.raises(ValueError, match="max_people"):
        RareValueReplay(max_people=0)
    tables = prepare_tables(real, synthetic, holdout, metadata=MD)
    assert RareValueReplay.applies_by_default(tables)
    # without a holdout: not in a default run (rarity is read on the pooled people)
    assert not RareValueReplay.applies_by_default(
        prepare_tables(real, synthetic, None, metadata=MD)
    )
    common = pd.DataFrame({"code": ["a", "b"] * 4})
    plain = prepare_tables(
        common, common, common, metadata={"columns": {"code": {"kind": "categorical"}}}
    )
    assert not RareValueReplay.applies_by_default(plain)
    none = RareValueReplay().compute(
        common, common, common, metadata={"columns": {"code": {"kind": "categorical"}}}
    )
    assert none.score is None
    assert "max_people" in (none.reason or "")
