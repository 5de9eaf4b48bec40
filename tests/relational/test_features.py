# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.datasets.relational import load_clinic
from synthrisk.relational import PersonFeatures, person_of_rows
from synthrisk.relational.metadata import expand_sequences, load_metadata

METADATA = {
    "tables": {
        "people": {
            "primary_key": "pid",
            "columns": {"pid": {"sdtype": "id"}, "age": {"sdtype": "numerical"}},
        },
        "events": {
            "primary_key": "eid",
            "sequence_index": "t",
            "columns": {
                "eid": {"sdtype": "id"},
                "pid": {"sdtype": "id"},
                "t": {"sdtype": "numerical"},
                "kind": {"sdtype": "categorical"},
                "cost": {"sdtype": "numerical"},
            },
        },
    },
    "relationships": [
        {
            "parent_table_name": "people",
            "parent_primary_key": "pid",
            "child_table_name": "events",
            "child_foreign_key": "pid",
        }
    ],
}


def _tables() -> dict[str, pd.DataFrame]:
    people = pd.DataFrame({"pid": ["a", "b", "c"], "age": [30, 40, 50]})
    events = pd.DataFrame(
        {
            "eid": [1, 2, 3, 4, 5],
            "pid": ["a", "b", "a", "a", "b"],
            "t": [3, 1, 1, 2, 2],
            "kind": ["x", "y", "y", "x", "x"],
            "cost": [30.0, 5.0, 10.0, 20.0, 6.0],
        }
    )
    return {"people": people, "events": events}


def test_person_features_hand_computed() -> None:
    tables = _tables()
    meta = load_metadata(METADATA)
    plan = PersonFeatures.fit({"real": tables}, meta, n_events=2)
    got = plan.transform(tables, person_of_rows(tables, meta))
    assert got.index.tolist() == ["a", "b", "c"]
    assert plan.root_columns == ["age"]
    a, b, c = (got.loc[p] for p in "abc")
    assert a["events.n_rows"] == 3
    assert b["events.n_rows"] == 2
    assert c["events.n_rows"] == 0
    assert a["events.cost.mean"] == 20.0
    assert (a["events.cost.min"], a["events.cost.max"]) == (10.0, 30.0)
    assert a["events.kind=x"] == pytest.approx(2 / 3)
    assert b["events.kind=y"] == 0.5
    # in the order of t: a's costs are 10, 20, 30; b's kinds y, x
    assert (a["events.event1.cost"], a["events.event2.cost"]) == (10.0, 20.0)
    assert a["events.cost.last"] == 30.0
    assert (b["events.event1.kind"], b["events.event2.kind"]) == ("y", "x")
    assert np.isnan(c["events.cost.mean"])
    assert pd.isna(c["events.event1.kind"])
    # the index is a feature of the summaries, not of the events
    assert "events.event1.t" not in got.columns
    assert got.columns.tolist() == list(plan.metadata["columns"])


def test_person_features_have_the_same_columns_on_every_side() -> None:
    tables = _tables()
    meta = load_metadata(METADATA)
    plan = PersonFeatures.fit({"real": tables}, meta, n_events=2)
    other = {
        "people": pd.DataFrame({"pid": ["z"], "age": [20]}),
        "events": pd.DataFrame(
            {"eid": [9], "pid": ["z"], "t": [1], "kind": ["w"], "cost": [1.0]}
        ),
    }
    got = plan.transform(other, person_of_rows(other, meta))
    assert got.columns.tolist() == list(plan.metadata["columns"])
    # a value the real people never had gets no column of its own
    assert got.loc["z", "events.kind=x"] == 0.0
    assert got.loc["z", "events.event1.kind"] == "w"


def test_shuffled_sequences_keep_the_summaries_and_change_the_order() -> None:
    clinic = load_clinic(n_patients=60, seed=1)
    meta = load_metadata(clinic.metadata)
    plan = PersonFeatures.fit({"real": clinic.real}, meta)
    real = plan.transform(clinic.real, person_of_rows(clinic.real, meta))
    shuffled = clinic.synthetic["shuffled_sequences"]
    syn = plan.transform(shuffled, person_of_rows(shuffled, meta))
    n_copy = len(clinic.copied["shuffled_sequences"])
    copies = syn.iloc[:n_copy].reset_index(drop=True)
    originals = real.loc[clinic.copied["shuffled_sequences"]].reset_index(drop=True)
    summary = [
        c
        for c in plan.child_columns
        if c.endswith((".mean", ".min", ".max", ".n_rows"))
    ]
    pd.testing.assert_frame_equal(copies[summary], originals[summary])
    ordered = [c for c in plan.child_columns if ".event" in c and "department" in c]
    differs = (copies[ordered].astype(str) != originals[ordered].astype(str)).any(
        axis=1
    )
    assert differs.sum() >= 1


def test_row_sets_ignore_order_and_keys_and_see_every_value() -> None:
    clinic = load_clinic(n_patients=60, seed=1)
    meta = load_metadata(clinic.metadata)
    plan = PersonFeatures.fit({"real": clinic.real}, meta)
    real = clinic.real
    codes = plan.row_sets(real, person_of_rows(real, meta))
    assert codes.dtype == np.uint64
    assert codes.shape == (len(real["patients"]),)
    assert (codes != 0).all()  # every patient has visits
    assert np.unique(codes).size == codes.size
    # the shuffled copies keep their rows (values shuffled among the dates): same codes
    shuffled = clinic.synthetic["shuffled_sequences"]
    n_copy = len(clinic.copied["shuffled_sequences"])
    syn_codes = plan.row_sets(shuffled, person_of_rows(shuffled, meta))
    where = {p: i for i, p in enumerate(real["patients"]["patient_id"])}
    originals = codes[[where[p] for p in clinic.copied["shuffled_sequences"]]]
    np.testing.assert_array_equal(syn_codes[:n_copy], originals)
    assert not np.isin(syn_codes[n_copy:], codes).any()
    # rows in another order, new keys: the same codes
    visits = real["visits"].sample(frac=1.0, random_state=0)
    visits = visits.assign(visit_id=[f"x{i}" for i in range(len(visits))])
    moved = {"patients": real["patients"], "visits": visits}
    np.testing.assert_array_equal(
        plan.row_sets(moved, person_of_rows(moved, meta)), codes
    )
    # one value changed, or one row repeated: that person's code changes, no other's
    first = real["visits"]["patient_id"].iloc[0]
    changed = real["visits"].copy()
    changed.loc[changed.index[0], "cost"] += 0.01
    twice = pd.concat([real["visits"], real["visits"].iloc[[0]]], ignore_index=True)
    twice.loc[twice.index[-1], "visit_id"] = "extra"
    for visits in (changed, twice):
        other = {"patients": real["patients"], "visits": visits}
        got = plan.row_sets(other, person_of_rows(other, meta))
        differ = np.flatnonzero(got != codes)
        assert differ.tolist() == [where[first]]
    # a person without rows below the root has code 0
    alone = {"patients": real["patients"], "visits": real["visits"].iloc[:0]}
    assert (plan.row_sets(alone, person_of_rows(alone, meta)) == 0).all()


def test_sequential_and_two_table_forms_give_the_same_features() -> None:
    two = load_clinic(n_patients=40, seed=7)
    seq = load_clinic(n_patients=40, seed=7, sequential=True)
    meta_two = load_metadata(two.metadata)
    sides, meta_seq = expand_sequences({"real": seq.real}, load_metadata(seq.metadata))
    real_seq = sides["real"]
    assert real_seq is not None
    plan_two = PersonFeatures.fit({"real": two.real}, meta_two)
    plan_seq = PersonFeatures.fit({"real": real_seq}, meta_seq)
    a = plan_two.transform(two.real, person_of_rows(two.real, meta_two))
    b = plan_seq.transform(real_seq, person_of_rows(real_seq, meta_seq))
    b.columns = [c.replace("visits.", "visits.", 1) for c in b.columns]
    assert a.columns.tolist() == b.columns.tolist()
    pd.testing.assert_frame_equal(a, b, check_dtype=False)


def test_summaries_with_missing_values_ties_and_a_person_without_rows() -> None:
    meta = load_metadata(METADATA)
    tables = {
        "people": pd.DataFrame({"pid": [3, 1, 2], "age": [30, 10, 20]}),
        "events": pd.DataFrame(
            {
                "eid": [1, 2, 3, 4, 5],
                # person 1: t 5, missing, 5 (a tie kept in the given order); person 3: 2
                "pid": [1, 3, 1, 1, 1],
                "t": [5.0, 2.0, np.nan, 5.0, 1.0],
                "kind": ["a", None, "b", "a", "b"],
                "cost": [1.0, 4.0, np.nan, 3.0, 7.0],
            }
        ),
    }
    plan = PersonFeatures.fit({"real": tables}, meta)
    got = plan.transform(tables, person_of_rows(tables, meta))
    assert got.index.tolist() == ["3", "1", "2"]
    assert got["events.n_rows"].tolist() == [1.0, 4.0, 0.0]
    assert got.loc["1", "events.cost.mean"] == pytest.approx(11 / 3)
    assert got.loc["1", "events.cost.min"] == 1.0
    assert np.isnan(got.loc["2", "events.cost.max"])
    # shares of each level among the person's rows (a missing value is no level)
    assert got.loc["1", "events.kind=a"] == 0.5
    assert got.loc["3", "events.kind=b"] == 0.0
    assert np.isnan(got.loc["2", "events.kind=a"])
    # in the order of t (missing last, ties as given): 1.0, 5.0 (row 1), 5.0 (row 4), nan
    assert got.loc["1", "events.event1.cost"] == 7.0
    assert got.loc["1", "events.event2.cost"] == 1.0
    assert got.loc["1", "events.event3.cost"] == 3.0
    assert got.loc["1", "events.event1.kind"] == "b"
    assert got.loc["1", "events.kind.last"] == "b"  # the row with t missing
    assert pd.isna(got.loc["3", "events.event1.kind"])
    assert pd.isna(got.loc["3", "events.event2.cost"])
    assert pd.isna(got.loc["2", "events.event1.kind"])


def test_person_features_do_not_depend_on_the_order_of_the_rows() -> None:
    # sums that differ in the last digit when added in another order, and events on
    # the same day (t ties) that differ in their values
    people = pd.DataFrame({"pid": ["a", "b"], "age": [30, 40]})
    events = pd.DataFrame(
        {
            "eid": range(8),
            "pid": ["a", "a", "a", "a", "b", "b", "b", "b"],
            "t": [1, 1, 2, 2, 1, 1, 1, 2],
            "kind": ["x", "y", "x", "y", "y", "x", "x", "y"],
            "cost": [0.1, 0.2, 0.3, 1e16, 0.7, 0.1, -0.0, 0.0],
        }
    )
    tables = {"people": people, "events": events}
    meta = load_metadata(METADATA)
    plan = PersonFeatures.fit({"real": tables}, meta, n_events=4)
    reference = plan.transform(tables, person_of_rows(tables, meta))
    rng = np.random.default_rng(0)
    for _ in range(20):
        shuffled = {
            "people": people.iloc[::-1],
            "events": events.iloc[rng.permutation(len(events))],
        }
        got = plan.transform(shuffled, person_of_rows(shuffled, meta))
        # exactly the same numbers, bit for bit (the people in the root's order)
        pd.testing.assert_frame_equal(got.loc[["a", "b"]], reference, check_exact=True)
        np.testing.assert_array_equal(
            plan.row_sets(shuffled, person_of_rows(shuffled, meta))[::-1],
            plan.row_sets(tables, person_of_rows(tables, meta)),
        )
    # ties on t follow the rows' values: a's first events are (1, x, 0.1), (1, y, 0.2)
    a = reference.loc["a"]
    assert (a["events.event1.kind"], a["events.event2.kind"]) == ("x", "y")
    assert a["events.cost.last"] == 1e16  # t = 2: kind x (0.3) before kind y
    b = reference.loc["b"]
    assert [b[f"events.event{j}.cost"] for j in (1, 2, 3)] == [0.0, 0.1, 0.7]
    assert str(b["events.cost.min"]) == "0.0"  # -0.0 and 0.0 are one value
