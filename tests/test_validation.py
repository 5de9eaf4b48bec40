# SPDX-License-Identifier: BSD-3-Clause
"""The check_* helpers: accepted values, normalisation and the house error message."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from synthrisk._validation import (
    check_columns,
    check_int,
    check_option,
    check_positive_float,
)
from synthrisk.exceptions import ParameterError


def _exact(message: str) -> str:
    return f"^{re.escape(message)}$"


# check_option


def test_check_option_accepts_allowed_value() -> None:
    assert check_option("max", name="mode", allowed=["mean", "max"]) == "max"
    assert (
        check_option("mean", name="mode", allowed=(m for m in ("mean", "max")))
        == "mean"
    )


@pytest.mark.parametrize("value", ["median", "MAX", " max", 1, None, ["max"]])
def test_check_option_rejects_other_values(value: Any) -> None:
    message = f"`mode` must be one of ['mean', 'max']; got {value!r}."
    with pytest.raises(ParameterError, match=_exact(message)):
        check_option(value, name="mode", allowed=["mean", "max"])


def test_check_option_non_string_equal_to_no_option() -> None:
    with pytest.raises(
        ParameterError, match=_exact("`k` must be one of ['1', '2']; got 1.")
    ):
        check_option(1, name="k", allowed=["1", "2"])


# check_int


@pytest.mark.parametrize("value", [0, 5, -3, np.int64(7), np.uint8(2)])
def test_check_int_accepts_integers_as_int(value: Any) -> None:
    result = check_int(value, name="n")
    assert result == int(value)
    assert type(result) is int


@pytest.mark.parametrize(
    "value", [True, False, np.bool_(True), 3.0, 2.5, "3", None, [1]]
)
def test_check_int_rejects_bools_and_non_integers(value: Any) -> None:
    with pytest.raises(
        ParameterError, match=_exact(f"`n` must be an integer; got {value!r}.")
    ):
        check_int(value, name="n")


def test_check_int_minimum() -> None:
    assert check_int(1, name="k", minimum=1) == 1
    with pytest.raises(
        ParameterError, match=_exact("`k` must be an integer >= 1; got 0.")
    ):
        check_int(0, name="k", minimum=1)
    with pytest.raises(
        ParameterError, match=_exact("`k` must be an integer >= -2; got -3.")
    ):
        check_int(-3, name="k", minimum=-2)


def test_check_int_allow_none() -> None:
    assert check_int(None, name="n_jobs", allow_none=True) is None
    assert check_int(4, name="n_jobs", minimum=1, allow_none=True) == 4
    with pytest.raises(
        ParameterError, match=_exact("`n_jobs` must be an integer or None; got True.")
    ):
        check_int(True, name="n_jobs", allow_none=True)
    with pytest.raises(
        ParameterError, match=_exact("`n_jobs` must be an integer >= 1; got 0.")
    ):
        check_int(0, name="n_jobs", minimum=1, allow_none=True)


# check_positive_float


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2, 2.0),
        (0.5, 0.5),
        (np.float32(0.25), 0.25),
        (Fraction(1, 4), 0.25),
        (1e-300, 1e-300),
    ],
)
def test_check_positive_float_accepts_positive_numbers(
    value: Any, expected: float
) -> None:
    result = check_positive_float(value, name="alpha")
    assert result == expected
    assert type(result) is float


@pytest.mark.parametrize(
    "value", [0, 0.0, -1.5, float("nan"), float("-inf"), True, "1.0", None, [1.0]]
)
def test_check_positive_float_rejects_non_positive(value: Any) -> None:
    message = f"`alpha` must be a positive number; got {value!r}."
    with pytest.raises(ParameterError, match=_exact(message)):
        check_positive_float(value, name="alpha")


def test_check_positive_float_rejects_infinity() -> None:
    with pytest.raises(
        ParameterError, match=_exact("`alpha` must be finite; got inf.")
    ):
        check_positive_float(float("inf"), name="alpha")
    with pytest.raises(
        ParameterError, match=_exact("`alpha` must be finite; got inf.")
    ):
        check_positive_float(np.inf, name="alpha")


# check_columns

AVAILABLE = ["age", "sex", "income"]


def test_check_columns_accepts_known_names_as_list() -> None:
    assert check_columns(["sex", "age"], name="secret", available=AVAILABLE) == [
        "sex",
        "age",
    ]
    assert check_columns(("income",), name="secret", available=AVAILABLE) == ["income"]
    assert check_columns(iter(["age"]), name="secret", available=AVAILABLE) == ["age"]


def test_check_columns_single_string_is_one_column() -> None:
    assert check_columns("sex", name="secret", available=AVAILABLE) == ["sex"]


def test_check_columns_rejects_non_iterable() -> None:
    message = "`secret` must be a list of column names; got 3."
    with pytest.raises(ParameterError, match=_exact(message)):
        check_columns(3, name="secret", available=AVAILABLE)


def test_check_columns_empty() -> None:
    message = "`secret` must name at least one column; got an empty list."
    with pytest.raises(ParameterError, match=_exact(message)):
        check_columns([], name="secret", available=AVAILABLE)
    assert check_columns([], name="secret", available=AVAILABLE, allow_empty=True) == []


def test_check_columns_unknown_names_listed_with_available() -> None:
    message = (
        "`secret` names columns that are not in the tables: ['Sex', 'zip']. "
        "Available columns: ['age', 'sex', 'income']."
    )
    with pytest.raises(ParameterError, match=_exact(message)):
        check_columns(["age", "Sex", "zip"], name="secret", available=AVAILABLE)
    with pytest.raises(ParameterError, match=re.escape("tables: ['salary']. ")):
        check_columns("salary", name="secret", available=AVAILABLE)


def test_check_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match=r"^`x` must be an integer; got 'a'\.$"):
        check_int("a", name="x")
