# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk.datasets.relational import BANK_METADATA, load_bank
from synthrisk.exceptions import (
    ConfigError,
    InputError,
    KeyIntegrityError,
    RelationshipError,
    SchemaMismatchError,
    TableMismatchError,
)
from synthrisk.relational import evaluate_tables
from synthrisk.relational.metadata import (
    check_tables,
    expand_sequences,
    load_metadata,
    normalise_tables,
    row_order,
)

# SDMetrics' multi-table demo metadata (users -> sessions -> transactions)
SDV_DEMO: dict[str, Any] = {
    "tables": {
        "users": {
            "primary_key": "user_id",
            "columns": {
                "user_id": {"sdtype": "id", "regex_format": "\\d{1,30}"},
                "country": {"sdtype": "categorical"},
                "age": {"sdtype": "numerical", "computer_representation": "Int64"},
            },
        },
        "sessions": {
            "primary_key": "session_id",
            "columns": {
                "session_id": {"sdtype": "id"},
                "user_id": {"sdtype": "id"},
                "device": {"sdtype": "categorical"},
            },
        },
        "transactions": {
            "primary_key": "transaction_id",
            "columns": {
                "transaction_id": {"sdtype": "id"},
                "session_id": {"sdtype": "id"},
                "amount": {"sdtype": "numerical"},
            },
        },
    },
    "relationships": [
        {
            "parent_table_name": "users",
            "parent_primary_key": "user_id",
            "child_table_name": "sessions",
            "child_foreign_key": "user_id",
        },
        {
            "parent_table_name": "sessions",
            "parent_primary_key": "session_id",
            "child_table_name": "transactions",
            "child_foreign_key": "session_id",
        },
    ],
    "METADATA_SPEC_VERSION": "MULTI_TABLE_V1",
}


@pytest.fixture(scope="module")
def bank() -> Any:
    return load_bank(n_customers=40, seed=5)


def test_load_metadata_reads_sdv_multi_table() -> None:
    meta = load_metadata(SDV_DEMO)
    assert meta.root == "users"
    assert meta.descendants() == ["sessions", "transactions"]
    assert meta.links()["transactions"].parent == "sessions"
    assert meta.key_columns("sessions") == ["session_id", "user_id"]
    assert meta.sequence is None


def test_load_metadata_reads_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "metadata.json"
    path.write_text(json.dumps(SDV_DEMO), encoding="utf-8")
    assert load_metadata(path).root == "users"
    assert load_metadata(str(path), root="sessions").root == "sessions"


def test_load_metadata_reads_sequential_metadata_flat_and_wrapped() -> None:
    flat = {
        "columns": {"store_id": {"sdtype": "id"}, "date": {"sdtype": "datetime"}},
        "sequence_key": "store_id",
        "sequence_index": "date",
    }
    meta = load_metadata(flat)
    assert meta.sequence is not None
    assert (meta.sequence.key, meta.sequence.index) == ("store_id", "date")
    wrapped = load_metadata(
        {"tables": {"timeseries": flat}, "METADATA_SPEC_VERSION": "SINGLE_TABLE_V1"}
    )
    assert wrapped.sequence is not None
    assert wrapped.sequence.table == "timeseries"


def test_expand_sequences_makes_a_root_of_context_columns() -> None:
    events = pd.DataFrame(
        {
            "pid": ["a", "a", "b", "b", "b"],
            "t": [1, 2, 1, 2, 3],
            "sex": ["F", "F", "M", "M", "M"],
            "x": [1.0, 2.0, 3.0, 4.0, 5.0],
        }
    )
    meta = load_metadata(
        {
            "columns": {"pid": {"sdtype": "id"}, "t": {"sdtype": "numerical"}},
            "sequence_key": "pid",
            "sequence_index": "t",
        }
    )
    sides, expanded = expand_sequences({"real": {"ev": events}}, meta)
    real = sides["real"]
    assert real is not None
    assert expanded.root == "pid"
    assert list(real["pid"].columns) == [
        "pid",
        "sex",
    ]  # sex never changes within a person
    assert real["pid"]["pid"].tolist() == ["a", "b"]
    assert list(real["ev"].columns) == ["pid", "t", "x"]
    assert expanded.tables["ev"].sequence_index == "t"
    assert list(events.columns) == ["pid", "t", "sex", "x"]  # input untouched


def test_relationship_cycle_is_refused() -> None:
    meta = copy.deepcopy(SDV_DEMO)
    meta["tables"]["users"]["columns"]["last_session"] = {"sdtype": "id"}
    meta["relationships"].append(
        {
            "parent_table_name": "sessions",
            "parent_primary_key": "session_id",
            "child_table_name": "users",
            "child_foreign_key": "last_session",
        }
    )
    with pytest.raises(RelationshipError, match=r"cycle: sessions → users → sessions"):
        load_metadata(meta)


def test_self_reference_is_a_cycle() -> None:
    meta = copy.deepcopy(SDV_DEMO)
    meta["tables"]["users"]["columns"]["referrer"] = {"sdtype": "id"}
    meta["relationships"].append(
        {
            "parent_table_name": "users",
            "parent_primary_key": "user_id",
            "child_table_name": "users",
            "child_foreign_key": "referrer",
        }
    )
    with pytest.raises(RelationshipError, match="cycle"):
        load_metadata(meta, root="users")


def test_unknown_table_in_relationship_is_refused() -> None:
    meta = copy.deepcopy(SDV_DEMO)
    meta["relationships"][0]["child_table_name"] = "sesions"
    with pytest.raises(RelationshipError, match="table 'sesions'"):
        load_metadata(meta)
    assert issubclass(RelationshipError, ConfigError)


def test_two_roots_need_root() -> None:
    meta = copy.deepcopy(SDV_DEMO)
    meta["tables"]["shops"] = {
        "primary_key": "shop_id",
        "columns": {"shop_id": {"sdtype": "id"}, "city": {"sdtype": "categorical"}},
    }
    meta["tables"]["sessions"]["columns"]["shop_id"] = {"sdtype": "id"}
    meta["relationships"].append(
        {
            "parent_table_name": "shops",
            "parent_primary_key": "shop_id",
            "child_table_name": "sessions",
            "child_foreign_key": "shop_id",
        }
    )
    with pytest.raises(RelationshipError, match=r"name the one .* with `root=`"):
        load_metadata(meta)
    meta_root = load_metadata(meta, root="users")
    assert meta_root.detached() == ["shops"]


def test_single_table_without_sequence_key_is_refused() -> None:
    with pytest.raises(RelationshipError, match=r"synthrisk\.evaluate"):
        load_metadata({"columns": {"a": {"sdtype": "numerical"}}})


def test_check_tables_accepts_the_bank(bank: Any) -> None:
    check_tables(
        {
            "real": bank.real,
            "synthetic": bank.synthetic["null"],
            "holdout": bank.holdout,
        },
        load_metadata(BANK_METADATA),
    )


def test_orphan_foreign_key_is_refused(bank: Any) -> None:
    synthetic = dict(bank.synthetic["null"])
    tx = synthetic["transactions"].copy()
    tx.loc[tx.index[:3], "account_id"] = "nowhere"
    synthetic["transactions"] = tx
    with pytest.raises(
        KeyIntegrityError,
        match=r"3 row\(s\) of the synthetic table 'transactions' have a foreign key "
        r"'account_id' that names no row of 'accounts' \(orphans, for example 'nowhere'\)",
    ):
        evaluate_tables(
            bank.real, synthetic, bank.holdout, metadata=BANK_METADATA, table_metrics=[]
        )
    assert issubclass(KeyIntegrityError, InputError)


def test_primary_key_that_repeats_is_refused(bank: Any) -> None:
    real = dict(bank.real)
    accounts = real["accounts"].copy()
    accounts.loc[accounts.index[1], "account_id"] = accounts["account_id"].iloc[0]
    real["accounts"] = accounts
    with pytest.raises(
        KeyIntegrityError,
        match=r"primary key accounts.account_id is not unique on the real side: 1 value",
    ):
        check_tables({"real": real}, load_metadata(BANK_METADATA))


def test_missing_primary_key_value_is_refused(bank: Any) -> None:
    real = dict(bank.real)
    customers = real["customers"].copy()
    customers.loc[customers.index[0], "customer_id"] = None
    real["customers"] = customers
    with pytest.raises(
        KeyIntegrityError, match=r"customers.customer_id is missing in 1"
    ):
        check_tables({"real": real}, load_metadata(BANK_METADATA))


def test_missing_key_column_is_refused(bank: Any) -> None:
    holdout = dict(bank.holdout)
    holdout["accounts"] = holdout["accounts"].drop(columns="customer_id")
    with pytest.raises(
        KeyIntegrityError,
        match=r"the holdout table 'accounts' lacks the key column 'customer_id'",
    ):
        check_tables(
            {"real": bank.real, "holdout": holdout}, load_metadata(BANK_METADATA)
        )


def test_table_on_one_side_only_is_refused(bank: Any) -> None:
    synthetic = {k: v for k, v in bank.synthetic["null"].items() if k != "transactions"}
    with pytest.raises(
        TableMismatchError,
        match=r"table 'transactions' is missing from the synthetic side "
        r"\(present in \['real', 'holdout'\]\)",
    ):
        evaluate_tables(bank.real, synthetic, bank.holdout, metadata=BANK_METADATA)
    assert issubclass(TableMismatchError, SchemaMismatchError)


def test_table_unknown_to_the_metadata_is_refused(bank: Any) -> None:
    real = {**bank.real, "branches": pd.DataFrame({"b": [1]})}
    with pytest.raises(TableMismatchError, match="holds table 'branches'"):
        check_tables({"real": real}, load_metadata(BANK_METADATA))


def test_row_order_is_the_same_for_the_same_rows_in_any_order() -> None:
    frame = pd.DataFrame(
        {
            "who": ["b", "a", "b", "a", None],
            "x": [2.0, np.nan, -0.0, 1.5, 0.0],
            "when": pd.to_datetime(
                pd.Series(
                    ["2021-03-04", "2021-03-04", None, "2021-01-01", "2021-01-01"]
                )
            ),
        }
    )
    order = row_order(frame, ["who", "x"])
    # text by value (missing last), then numbers (-0.0 is 0.0, missing last)
    assert order.tolist() == [3, 1, 2, 0, 4]
    reversed_frame = frame.iloc[::-1].reset_index(drop=True)
    again = reversed_frame.iloc[row_order(reversed_frame, ["who", "x"])]
    pd.testing.assert_frame_equal(
        again.reset_index(drop=True), frame.iloc[order].reset_index(drop=True)
    )
    # a key that comes first (each row's person), then the dates, then the text
    first = (np.array([1, 1, 0, 0, 0]),)
    assert row_order(frame, ["when", "who"], first=first).tolist() == [3, 4, 2, 1, 0]


def test_normalise_tables_parses_dates_and_orders_rows() -> None:
    meta = load_metadata(
        {
            "tables": {
                "people": {
                    "primary_key": "pid",
                    "columns": {
                        "pid": {"sdtype": "id"},
                        "born": {"sdtype": "datetime"},
                    },
                },
                "events": {
                    "columns": {
                        "pid": {"sdtype": "id"},
                        "on": {"sdtype": "datetime", "datetime_format": "%d/%m/%Y"},
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
    )
    people = pd.DataFrame(
        {"pid": [2, 1], "born": ["1980-02-01", "1975-12-31 10:30:00"]}
    )
    events = pd.DataFrame(
        {"pid": [1, 2, 1], "on": ["04/03/2021", "13/01/2020", "01/02/2021"],
         "at": ["2021-03-04T10:00:00", "2020-01-13T09:00:00", "2021-02-01T23:59:00"]}
    )  # fmt: skip
    sides = {"real": {"people": people, "events": events}, "synthetic": None}
    out = normalise_tables(sides, meta)
    assert out["synthetic"] is None
    real = out["real"]
    assert real is not None
    assert real["people"]["pid"].tolist() == [1, 2]  # by primary key
    assert real["people"]["born"].tolist() == [
        pd.Timestamp("1975-12-31 10:30:00"),
        pd.Timestamp("1980-02-01"),
    ]
    # day first, by the metadata's format; "at" (no metadata) is ISO by content
    assert real["events"]["on"].tolist() == [
        pd.Timestamp("2021-02-01"),
        pd.Timestamp("2021-03-04"),
        pd.Timestamp("2020-01-13"),
    ]
    assert real["events"]["at"].dtype == "datetime64[ns]"
    assert people["born"].tolist()[0] == "1980-02-01"  # the inputs are not modified
