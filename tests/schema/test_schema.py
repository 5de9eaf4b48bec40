# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import uuid

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import SchemaMismatchError
from synthrisk.schema import infer_schema, schema_from_metadata
from synthrisk.schema.schema import SEMANTIC_KINDS


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


# --- inference by content: identifiers, personal data and free text -------------------

_FIRST = ["Maria", "John", "Ana", "Li", "Omar", "Eva", "Paul", "Sara", "Ken", "Ida"]
_LAST = ["Lopez", "Smith", "Chen", "Khan", "Muller", "Rossi", "Silva", "Kim", "Novak"]


def _ibans(n: int, rng: np.random.Generator) -> list[str]:
    out = []
    for _ in range(n):
        bban = "".join(str(d) for d in rng.integers(0, 10, 18))
        digits = "".join(str(int(ch, 36)) for ch in bban + "DE00")
        check = 98 - int(digits) % 97
        out.append(f"DE{check:02d}{bban}")
    return out


def _realistic(n: int, rng: np.random.Generator) -> dict[str, list[str]]:
    words = [
        "pain",
        "fever",
        "cough",
        "mild",
        "severe",
        "since",
        "two",
        "days",
        "history",
        "of",
        "asthma",
    ]
    return {
        "email": [
            f"{rng.choice(_FIRST).lower()}.{rng.choice(_LAST).lower()}{i}@example.org"
            for i in range(n)
        ],
        "phone": [
            f"+1 555-{rng.integers(100, 1000)}-{rng.integers(0, 10000):04d}"
            if i % 2
            else f"(555) {rng.integers(100, 1000)} {rng.integers(0, 10000):04d}"
            for i in range(n)
        ],
        "iban": _ibans(n, rng),
        "ip": [f"10.{i // 250}.{i % 250}.{rng.integers(1, 255)}" for i in range(n)],
        "url": [f"https://example.org/users/{i}?ref=mail" for i in range(n)],
        "national_id": [
            f"{rng.integers(100, 900)}-{rng.integers(10, 100)}-{rng.integers(1000, 10000)}"
            for _ in range(n)
        ],
        "name": [
            f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
            + (f" {rng.choice(_LAST)}" if i % 3 == 0 else "")
            for i in range(n)
        ],
        "uuid": [str(uuid.UUID(int=int(rng.integers(0, 2**62)) + i)) for i in range(n)],
        "free_text": [
            " ".join(rng.choice(words, int(rng.integers(8, 20)))) for _ in range(n)
        ],
    }


@pytest.mark.parametrize(
    "semantic",
    ["email", "phone", "iban", "ip", "url", "national_id", "name", "uuid", "free_text"],
)
def test_content_inference_recognises_each_semantic_type(semantic: str) -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(_realistic(300, rng))
    spec = infer_schema(frame)[semantic]
    assert spec.semantic == semantic
    assert spec.kind == SEMANTIC_KINDS[semantic]
    assert spec.note is not None
    assert spec.note.endswith("by content")


def test_content_inference_tolerates_a_few_odd_values_and_missing_ones() -> None:
    rng = np.random.default_rng(1)
    emails: list[str | None] = list(_realistic(300, rng)["email"])
    emails[:10] = ["n/a"] * 10
    emails[10:40] = [None] * 30
    assert (
        infer_schema(pd.DataFrame({"contact": emails}))["contact"].semantic == "email"
    )


def test_ipv6_addresses_are_recognised() -> None:
    values = [f"2001:db8::{i:x}:1" for i in range(100)]
    assert infer_schema(pd.DataFrame({"host": values}))["host"].semantic == "ip"


def test_an_iban_with_a_wrong_checksum_is_not_an_iban() -> None:
    rng = np.random.default_rng(2)
    wrong = [f"DE{(int(v[2:4]) + 1) % 100:02d}{v[4:]}" for v in _ibans(100, rng)]
    spec = infer_schema(pd.DataFrame({"account": wrong}))["account"]
    assert spec.semantic is None


def test_look_alike_categoricals_stay_categorical() -> None:
    rng = np.random.default_rng(3)
    n = 2000
    cities = ["New York", "San Francisco", "Los Angeles", "Buenos Aires", "Hong Kong"]
    frame = pd.DataFrame(
        {
            "occupation": rng.choice(
                ["Tech Support", "Craft Repair", "Sales", "Exec Managerial"], n
            ),
            "country": rng.choice(["United States", "Mexico", "Puerto Rico"], n),
            "city": rng.choice(cities, n),
            "zip": rng.choice([f"{z:05d}" for z in rng.integers(0, 99999, 300)], n),
            "code": rng.choice([f"A{i:03d}-X" for i in range(400)], n),
            "person": rng.choice(
                [f"{f} {last}" for f in _FIRST for last in _LAST[:3]], n
            ),
            "helpdesk": rng.choice(["help@example.org", "sales@example.org"], n),
            "label": rng.choice(
                ["Bachelor's degree in natural science", "Some college, no degree"], n
            ),
            "phone_like": rng.choice(["555-0100", "555-0199", "555-0123"], n),
            "measured": [f"{v:.2f}" for v in rng.normal(1000, 200, n)],
        }
    )
    schema = infer_schema(frame)
    for spec in schema.columns:
        assert (spec.kind, spec.semantic) == ("categorical", None), spec


def test_dates_and_decimal_numbers_are_not_phone_numbers() -> None:
    days = pd.date_range("2001-01-01", periods=500, freq="D")
    frame = pd.DataFrame(
        {
            "day": days.strftime("%d-%m-%Y"),
            "amount": [f"{1_000_000 + 37.25 * i:.2f}" for i in range(500)],
        }
    )
    schema = infer_schema(frame)
    assert schema["day"].semantic is None
    assert schema["amount"].semantic is None


def test_digits_alone_are_a_phone_number_only_when_the_name_says_so() -> None:
    digits = [f"{5550000000 + 7919 * i}" for i in range(200)]
    assert infer_schema(pd.DataFrame({"mobile": digits}))["mobile"].semantic == "phone"
    account = infer_schema(pd.DataFrame({"account": digits}))["account"]
    assert (account.kind, account.semantic) == ("id", None)


def test_near_unique_short_codes_are_identifiers() -> None:
    codes = [f"A{i % 97:02d}-{i:03d}-X" for i in range(990)] + ["A00-000-X"] * 10
    spec = infer_schema(pd.DataFrame({"ref": codes}))["ref"]
    assert (spec.kind, spec.semantic) == ("id", None)
    assert spec.note is not None
    assert "distinct short codes" in spec.note


def test_few_values_are_left_to_the_other_rules() -> None:
    frame = pd.DataFrame({"email": [f"user{i}@example.org" for i in range(10)]})
    assert infer_schema(frame)["email"].kind == "categorical"


def test_metadata_takes_precedence_over_content() -> None:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(_realistic(100, rng))
    schema, _ = schema_from_metadata(
        {"columns": {"email": {"sdtype": "categorical"}}}, frame
    )
    assert (schema["email"].kind, schema["email"].semantic) == ("categorical", None)
    assert schema["email"].source == "metadata"
    assert schema["phone"].semantic == "phone"  # not in the metadata: inferred


@pytest.mark.parametrize(
    ("sdtype", "semantic"),
    [
        ("email", "email"),
        ("phone_number", "phone"),
        ("iban", "iban"),
        ("ipv4_address", "ip"),
        ("ipv6_address", "ip"),
        ("url", "url"),
        ("ssn", "national_id"),
        ("name", "name"),
        ("first_name", "name"),
        ("last_name", "name"),
        ("address", None),
    ],
)
def test_sdv_pii_sdtypes_name_their_semantic_type(
    sdtype: str, semantic: str | None
) -> None:
    frame = pd.DataFrame({"x": ["a", "b"]})
    schema, _ = schema_from_metadata({"columns": {"x": {"sdtype": sdtype}}}, frame)
    assert (schema["x"].kind, schema["x"].semantic) == ("pii", semantic)


def test_schema_dict_round_trips_the_semantic_type() -> None:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(_realistic(100, rng))
    schema = infer_schema(frame)
    written = schema.to_dict()
    columns = written["columns"]
    assert isinstance(columns, dict)
    assert columns["email"] == {
        "kind": "pii",
        "source": "inferred",
        "note": "e-mail addresses, by content",
        "semantic": "email",
    }
    back, _ = schema_from_metadata(written, frame)
    assert [(c.name, c.kind, c.semantic) for c in back.columns] == [
        (c.name, c.kind, c.semantic) for c in schema.columns
    ]


def test_unknown_semantic_type_is_refused() -> None:
    frame = pd.DataFrame({"x": ["a", "b"]})
    with pytest.raises(SchemaMismatchError, match="unknown semantic type 'mail'"):
        schema_from_metadata(
            {"columns": {"x": {"kind": "pii", "semantic": "mail"}}}, frame
        )
