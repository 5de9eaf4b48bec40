# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import SchemaMismatchError
from synthrisk.schema import infer_schema, schema_from_metadata


def test_infer_schema_kinds_from_dtypes() -> None:
    n = 30
    frame = pd.DataFrame(
        {
            "f": np.linspace(0, 1, n),
            "i": np.arange(n) % 5,
            "u": (np.arange(n) % 7).astype("uint8"),
            "nullable_int": pd.array([1, None] * 15, dtype="Int64"),
            "b": np.arange(n) % 2 == 0,
            "nb": pd.array([True, None, False] * 10, dtype="boolean"),
            "cat": pd.Categorical(["x", "y", "z"] * 10),
            "s": ["a", "b", "c"] * 10,
            "dt": pd.date_range("2020-01-01", periods=n),
            "iso": [f"2020-01-{d:02d}" for d in range(1, n + 1)],
            "customer_id": np.arange(n),
            "code": [f"code-{i}" for i in range(n)],
        }
    )
    kinds = {c.name: c.kind for c in infer_schema(frame).columns}
    assert kinds == {
        "f": "numerical",
        "i": "numerical",
        "u": "numerical",
        "nullable_int": "numerical",
        "b": "boolean",
        "nb": "boolean",
        "cat": "categorical",
        "s": "categorical",
        "dt": "datetime",
        "iso": "datetime",
        "customer_id": "id",
        "code": "id",
    }


def test_a_person_key_is_an_identifier_and_a_repeating_code_is_not() -> None:
    # named like an id, a few rows per value: the key of people with several rows,
    # left out of distances like any identifier
    frame = pd.DataFrame({"user_id": [1, 1, 2, 3], "patient": ["a", "a", "b", "c"]})
    schema = infer_schema(frame)
    assert schema["user_id"].kind == "id"
    assert "several rows" in (schema["user_id"].note or "")
    assert schema["patient"].kind == "id"
    # named like an id, but 3 values over 300 rows: a code (an attribute), kept
    codes = pd.DataFrame({"region_id": [1, 2, 3] * 100})
    assert infer_schema(codes)["region_id"].kind == "numerical"
    # a value with more rows than any person has: not a person key
    many = pd.DataFrame({"user_id": [0] * 201 + list(range(1, 5000))})
    assert infer_schema(many)["user_id"].kind == "numerical"


def test_sdmetrics_metadata_with_extra_keys() -> None:
    frame = pd.DataFrame(
        {
            "a": [1, 2],
            "b": ["x", "y"],
            "c": ["2020-01-01", "2020-02-01"],
            "k": ["u", "v"],
            "e": ["p", "q"],
            "o": [1, 2],
        }
    )
    metadata = {
        "METADATA_SPEC_VERSION": "SINGLE_TABLE_V1",
        "columns": {
            "a": {"sdtype": "numerical", "computer_representation": "Int64"},
            "b": {"sdtype": "categorical"},
            "c": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
            "k": {"sdtype": "id", "regex_format": "[a-z]"},
            "e": {"sdtype": "email", "pii": True},
            "o": {"sdtype": "ordinal", "order": [1, 2]},
        },
        "primary_key": "k",
    }
    schema, notes = schema_from_metadata(metadata, frame)
    assert [(c.name, c.kind) for c in schema.columns] == [
        ("a", "numerical"), ("b", "categorical"), ("c", "datetime"), ("k", "id"), ("e", "pii"), ("o", "categorical"),
    ]  # fmt: skip
    assert schema["c"].datetime_format == "%Y-%m-%d"
    assert [c.name for c in schema.excluded] == ["k", "e"]
    assert notes == []


def test_own_metadata_format_round_trips() -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    schema, _ = schema_from_metadata(
        {"columns": {"a": {"kind": "numerical"}, "b": {"kind": "id"}}}, frame
    )
    again, _ = schema_from_metadata(schema.to_dict(), frame)
    assert [(c.name, c.kind) for c in again.columns] == [
        ("a", "numerical"),
        ("b", "id"),
    ]


def test_partial_metadata_infers_the_rest_with_a_note() -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    schema, notes = schema_from_metadata(
        {"columns": {"a": {"sdtype": "numerical"}}}, frame
    )
    assert schema["b"].kind == "categorical"
    assert notes == [
        "column 'b' is not in the metadata; its kind was inferred as categorical."
    ]


def test_multi_table_metadata_with_one_table_is_accepted() -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    schema, _ = schema_from_metadata(
        {"tables": {"t": {"columns": {"a": {"sdtype": "categorical"}}}}}, frame
    )
    assert schema["a"].kind == "categorical"


@pytest.mark.parametrize(
    ("metadata", "match"),
    [
        (
            {"columns": {"zz": {"sdtype": "numerical"}}},
            r"names columns that are not in the tables: \['zz'\]",
        ),
        (
            {"columns": {"a": {"sdtype": "numeric"}}},
            r"column 'a' has unknown sdtype 'numeric'",
        ),
        (
            {"columns": {"a": {"kind": "number"}}},
            r"column 'a' has unknown kind 'number'",
        ),
        ({"columns": {"a": {}}}, r"neither 'sdtype' nor 'kind'"),
        ({"columns": ["a"]}, r"must have a 'columns' entry"),
        ({"tables": {"t1": {}, "t2": {}}}, r"describes several tables \['t1', 't2'\]"),
        (
            {"columns": {"a": {"sdtype": "numerical"}}, "primary_key": "id"},
            r"primary_key 'id' is not a column",
        ),
    ],
)
def test_bad_metadata_is_rejected_with_a_clear_message(
    metadata: dict, match: str
) -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    with pytest.raises(SchemaMismatchError, match=match):
        schema_from_metadata(metadata, frame)
