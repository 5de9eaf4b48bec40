# SPDX-License-Identifier: BSD-3-Clause
"""How numbers and short texts are written for people."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from synthrisk._format import (
    format_number,
    format_p_value,
    format_signed,
    natural_key,
    shorten,
)

# format_number


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # below 1: four decimals, trailing zeros dropped
        (0.14183, "0.1418"),
        (0.14185001, "0.1419"),
        (0.5, "0.5"),
        (0.1000, "0.1"),
        (0.00012345, "0.0001"),
        (0.0001, "0.0001"),
        (0.99999, "1"),
        (-0.25, "-0.25"),
        # from 1 up: four significant digits
        (1.0, "1"),
        (3.14159, "3.142"),
        (12.3456, "12.35"),
        (100.0, "100"),
        (1234.5678, "1235"),
        (12345.6, "12346"),
        (-1234.5678, "-1235"),
        (999999.0, "999999"),
    ],
)
def test_format_number_decimals_and_significant_digits(
    value: float, expected: str
) -> None:
    assert format_number(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3.08e-06, "3.08 × 10⁻⁶"),
        (1e-05, "1 × 10⁻⁵"),
        (9.99e-05, "9.99 × 10⁻⁵"),
        (-4.2e-07, "-4.2 × 10⁻⁷"),
        (1.23456e-07, "1.23 × 10⁻⁷"),
        (2.5e-300, "2.5 × 10⁻³⁰⁰"),
        (1e9, "1 × 10⁹"),
        (1.23456e9, "1.23 × 10⁹"),
        (-2.5e10, "-2.5 × 10¹⁰"),
        (1.7976931348623157e308, "1.8 × 10³⁰⁸"),
    ],
)
def test_format_number_tiny_and_huge_in_powers_of_ten(
    value: float, expected: str
) -> None:
    assert format_number(value) == expected
    assert "e" not in format_number(value)


@pytest.mark.parametrize(
    "value", [None, float("nan"), float("inf"), float("-inf"), np.nan]
)
def test_format_number_missing_is_dash(value: Any) -> None:
    assert format_number(value) == "—"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "0"),
        (0.0, "0"),
        (-0.0, "0"),
        (12, "12"),
        (-7, "-7"),
        (10**12, "1 × 10¹²"),  # from 10⁹ up, ints too are powers of ten
        (999_999_999, "999999999"),
        (True, "true"),
        (False, "false"),
    ],
)
def test_format_number_zero_ints_and_bools(value: Any, expected: str) -> None:
    assert format_number(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.float64(0.14183), "0.1418"),
        (np.float32(0.5), "0.5"),
        (np.int64(12), "12"),
        (Decimal("2.5"), "2.5"),
        ("abc", "abc"),
        ([1, 2], "[1, 2]"),
    ],
)
def test_format_number_other_types(value: Any, expected: str) -> None:
    assert format_number(value) == expected


def test_format_number_digits() -> None:
    assert format_number(3.14159, 2) == "3.1"
    assert format_number(0.123456, 2) == "0.12"
    assert format_number(0.123456, 6) == "0.123456"
    assert format_number(1234.5678, 6) == "1234.57"
    # powers of ten keep at most three significant digits
    assert format_number(1.23456e-07, 6) == "1.23 × 10⁻⁷"
    assert format_number(1.26e-07, 2) == "1.3 × 10⁻⁷"


# format_signed


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.15062, "+0.151"),
        (-0.0004, "-0.000"),
        (0.0, "+0.000"),
        (-1.5, "-1.500"),
        (2, "+2.000"),
        (1234.56789, "+1234.568"),
    ],
)
def test_format_signed_values(value: float, expected: str) -> None:
    assert format_signed(value) == expected


def test_format_signed_decimals() -> None:
    assert format_signed(0.15062, 1) == "+0.2"
    assert format_signed(-0.15062, 0) == "-0"


@pytest.mark.parametrize("value", [None, float("nan"), float("inf"), float("-inf")])
def test_format_signed_missing_is_dash(value: float | None) -> None:
    assert format_signed(value) == "—"


# format_p_value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.3, "0.3"),
        (0.123, "0.12"),
        (0.0012, "0.0012"),
        (0.05, "0.05"),
        (np.float64(0.0456), "0.046"),
        (0.00056, "0.00056"),
        (0.0001, "0.0001"),
        (0.99999, "1"),
        (1.0, "1"),
        (1, "1"),
    ],
)
def test_format_p_value_two_significant_digits(value: Any, expected: str) -> None:
    assert format_p_value(value) == expected


@pytest.mark.parametrize("value", [9.9e-05, 1.2e-07, 5e-324, 0.0, 0])
def test_format_p_value_tiny_is_bounded(value: float) -> None:
    assert format_p_value(value) == "< 0.0001"


@pytest.mark.parametrize("value", [None, float("nan"), float("inf"), True, False])
def test_format_p_value_missing_is_dash(value: Any) -> None:
    assert format_p_value(value) == "—"


def test_format_p_value_never_scientific() -> None:
    # a value whose two-digit form would be scientific goes through format_number
    assert format_p_value(150.0) == "150"


# natural_key


def test_natural_key_numbers_by_value() -> None:
    texts = ["10. b", "2. a", "1. c", "k11", "k2"]
    assert sorted(texts, key=natural_key) == ["1. c", "2. a", "10. b", "k2", "k11"]


def test_natural_key_numbers_before_text_and_case_insensitive() -> None:
    texts = ["b", "a10", "A2", "a9", "10", "9"]
    assert sorted(texts, key=natural_key) == ["9", "10", "A2", "a9", "a10", "b"]
    assert natural_key("Column 3") == natural_key("column 3")


def test_natural_key_parts() -> None:
    assert natural_key("col12x3") == ((1, "col"), (0, 12), (1, "x"), (0, 3))
    assert natural_key("007") == ((0, 7),)
    assert natural_key("") == ()
    assert natural_key(42) == ((0, 42),)


# shorten


def test_shorten_cuts_at_a_word() -> None:
    text = "the attack learns materially more about the training rows"
    assert shorten(text, 30) == "the attack learns materially…"
    assert shorten(text, 12) == "the attack…"
    assert len(shorten(text, 30)) <= 30


def test_shorten_short_text_unchanged_but_on_one_line() -> None:
    assert shorten("short", 30) == "short"
    assert shorten("  two\n lines\tand  tabs ", 40) == "two lines and tabs"
    assert shorten("exactly ten", 11) == "exactly ten"


def test_shorten_long_word_is_cut() -> None:
    # no space in the second half of the line: the word itself is cut
    assert shorten("abcdefghijklmnop", 6) == "abcde…"
    assert shorten("ab cdefghijklmnop", 8) == "ab cdef…"


def test_shorten_drops_trailing_punctuation() -> None:
    assert shorten("risk, and more words", 8) == "risk…"
    assert shorten("abcdef(ghij", 8) == "abcdef…"
    assert shorten("first; second third", 12) == "first…"


@pytest.mark.parametrize(("width", "expected"), [(1, "…"), (0, "")])
def test_shorten_tiny_width(width: int, expected: str) -> None:
    assert shorten("a long sentence", width) == expected


def test_format_number_rounding_up_to_a_billion_is_a_power_of_ten() -> None:
    assert format_number(999_999_999.9) == "1 × 10⁹"
    assert format_number(-999_999_999.9) == "-1 × 10⁹"


def test_natural_key_reads_only_decimal_digits_as_numbers() -> None:
    # "²" is a digit to str.isdigit but not a decimal number
    assert sorted(["x10²", "x2²", "x1"], key=natural_key) == ["x1", "x2²", "x10²"]


def test_shorten_keeps_a_word_that_ends_at_the_cut() -> None:
    assert shorten("aaaaa bb cc", 9) == "aaaaa bb…"
    assert shorten("aaaaa bbb cc", 9) == "aaaaa…"
