# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import numpy as np
import pandas as pd

from synthrisk.relational import PersonFeatures, person_of_rows
from synthrisk.relational.metadata import load_metadata
from synthrisk.relational.rarity import RowRarity

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
            "eid": [1, 2, 3, 4],
            "pid": ["a", "b", "a", "a"],
            "t": [3, 1, 1, 2],
            "kind": ["x", "x", "x", "y"],
            "cost": [30.0, 5.0, 10.0, 20.0],
        }
    )
    return {"people": people, "events": events}


def test_row_rarity_hand_computed() -> None:
    tables = _tables()
    meta = load_metadata(METADATA)
    plan = PersonFeatures.fit({"real": tables}, meta)
    rarity = RowRarity.fit({"real": tables}, plan)
    assert rarity.metadata == {
        "events.n_rows.log": {"sdtype": "numerical"},
        "events.code_bits": {"sdtype": "numerical"},
    }
    got = rarity.transform(tables, person_of_rows(tables, meta), "people")
    assert got.index.tolist() == ["a", "b", "c"]
    np.testing.assert_allclose(got["events.n_rows.log"], np.log1p([3, 1, 0]))
    # x: 3 of 4 rows (0.415 bits), y: 1 of 4 (2 bits)
    x, y = np.log2(4 / 3), 2.0
    np.testing.assert_allclose(got["events.code_bits"], [2 * x + y, x, 0.0], atol=1e-6)


def test_row_rarity_of_a_copy_is_the_persons_and_unseen_codes_count_as_rare() -> None:
    tables = _tables()
    meta = load_metadata(METADATA)
    plan = PersonFeatures.fit({"real": tables}, meta)
    rarity = RowRarity.fit({"real": tables}, plan)
    real = rarity.transform(tables, person_of_rows(tables, meta), "people")
    synthetic = {
        "people": pd.DataFrame({"pid": ["s1", "s2"], "age": [30, 41]}),
        "events": pd.DataFrame(
            {
                "eid": [7, 8, 9, 10],
                "pid": ["s1", "s1", "s1", "s2"],
                "t": [1, 2, 3, 1],
                "kind": ["y", "x", "x", "z"],  # s1: a's rows reordered; z: unseen
                "cost": [20.0, 10.0, 30.0, 1.0],
            }
        ),
    }
    got = rarity.transform(synthetic, person_of_rows(synthetic, meta), "people")
    assert got.loc["s1"].tolist() == real.loc["a"].tolist()
    assert got.loc["s2", "events.code_bits"] == round(np.log2(5), 6)  # one in N + 1
