# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import datetime as dt

import pytest

from synthrisk.context import CONTEXT_FIELDS, ReleaseContext, check_context
from synthrisk.exceptions import ParameterError


def test_defaults_are_named() -> None:
    ctx = ReleaseContext.from_value(None)
    assert ctx.defaults == CONTEXT_FIELDS
    assert ctx.release_model == "public"
    assert check_context(None) is None


def test_values_are_checked_and_normalised() -> None:
    ctx = ReleaseContext.from_value(
        {"purpose": "  teaching\n course ", "release_model": "Enclave",
         "attacker_knows": "age, sex,age", "population_share": "2%",
         "reassess_by": dt.date(2027, 6, 1)}
    )  # fmt: skip
    assert ctx.purpose == "teaching course"
    assert ctx.release_model == "enclave"
    assert ctx.attacker_knows == ("age", "sex")
    assert ctx.population_share == pytest.approx(0.02)
    assert ctx.reassess_by == "2027-06-01"
    assert "release_model" not in ctx.defaults
    assert "recipient" in ctx.defaults


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ({"release_model": "web"}, r"`context.release_model` must be one of"),
        ({"population_share": 0}, r"number in \(0, 1\]"),
        ({"population_share": 1.5}, r"number in \(0, 1\]"),
        ({"population_size": 0}, r"whole number of people"),
        ({"reassess_by": "June"}, r"YYYY-MM-DD"),
        (
            {"assessed_on": "2027-01-01", "reassess_by": "2026-01-01"},
            r"must come after",
        ),
        ({"purpose": 3}, r"`context.purpose` must be a text"),
        ({"attacker_knows": [1]}, r"must list column names"),
        ({"who": "me"}, r"unknown keys \['who'\]"),
        ("teaching", r"must be a mapping"),
    ],
)
def test_bad_values(value: object, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        ReleaseContext.from_value(value)  # type: ignore[arg-type]


def test_merged_dated_prior_and_reassessment() -> None:
    base = ReleaseContext.from_value({"purpose": "a", "population_size": 1000})
    ctx = base.merged({"recipient": "b"})
    assert (ctx.purpose, ctx.recipient) == ("a", "b")
    assert ctx.prior(10) == pytest.approx(0.01)
    dated = ctx.dated(dt.date(2024, 2, 29))
    assert dated.assessed_on == "2024-02-29"
    assert dated.reassessment() == "2025-02-28"
    assert ReleaseContext.from_value(None).prior(10) is None


def test_round_trip_keeps_defaults() -> None:
    ctx = ReleaseContext.from_value({"assessor": "x"}).dated(dt.date(2026, 1, 1))
    again = ReleaseContext.from_dict(ctx.to_dict())
    assert again == ctx
