# SPDX-License-Identifier: BSD-3-Clause
"""How numbers and short texts are written for people: the HTML report and ``print(report)``.

One home, so that a score reads the same in the summary table, the metric's section and
the terminal:

* :func:`format_number`: four decimals below 1, four significant digits from 1 up;
  values below 0.0001 or from 10⁹ up in powers of ten with superscripts
  (``3.08 × 10⁻⁶``), never ``3.080e-06``;
* :func:`format_excess`: an excess over the holdout and its interval, in counts of
  people (``+3804 [+3683.2, +3925.8]``) or in shares (``+0.151 [+0.120, +0.182]``);
* :func:`format_level`: a confidence level in per cent (``98.89 %``);
* :func:`format_p_value`: two significant digits; below 0.0001 ``< 0.0001`` (the
  numerical precision of a tail probability says nothing more);
* :func:`natural_key`: sorts ``"2. x"`` before ``"10. x"``;
* :func:`shorten`: shortens a sentence for one line without cutting a word.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = [
    "format_excess",
    "format_level",
    "format_number",
    "format_p_value",
    "format_signed",
    "natural_key",
    "shorten",
]

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
#: below this (in absolute value) a number is written as a power of ten
SMALL = 1e-4
#: from this up a number is written as a power of ten
LARGE = 1e9


def _power_of_ten(value: float, digits: int) -> str:
    mantissa, exponent = f"{value:.{max(digits - 1, 0)}e}".split("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def format_number(value: Any, digits: int = 4) -> str:
    """``value`` for people: ``—`` when missing, ``digits`` decimals below 1, ``digits`` significant digits above.

    Examples
    --------
    >>> [format_number(v) for v in (0.14183, 3.08e-06, 1234.5678, 12, 0.0, None, float("nan"))]
    ['0.1418', '3.08 × 10⁻⁶', '1235', '12', '0', '—', '—']
    >>> format_number(-2.5e10), format_number(True)
    ('-2.5 × 10¹⁰', 'true')
    """
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) < LARGE:
        return str(value)
    if not isinstance(value, float):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return str(value)
    if not math.isfinite(value):
        return "—"
    if value == 0:
        return "0"
    size = abs(value)
    if size < SMALL or size >= LARGE:
        return _power_of_ten(value, min(digits, 3))
    if size >= 1:
        decimals = max(0, digits - 1 - math.floor(math.log10(size)))
    else:
        decimals = digits
    text = f"{value:.{decimals}f}"
    if abs(float(text)) >= LARGE:  # rounded up to 10⁹
        return _power_of_ten(value, min(digits, 3))
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_signed(value: float | None, decimals: int = 3) -> str:
    """A difference with its sign (``+0.151``, ``-0.002``), ``—`` when missing.

    Examples
    --------
    >>> format_signed(0.15062), format_signed(-0.0004), format_signed(None)
    ('+0.151', '-0.000', '—')
    """
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:+.{decimals}f}"


def format_excess(
    effect: float | None, ci: tuple[float, float] | None, *, unit: str = ""
) -> tuple[str, str]:
    """An excess over the holdout and its interval, as ``(excess, interval)``.

    In counts of people (``unit="people"``) the excess is a whole number and the
    interval's bounds have one decimal at most; otherwise both have three decimals.
    ``—`` for a missing excess, ``""`` for a missing interval.

    Examples
    --------
    >>> format_excess(3804.0, (3683.248, 3925.823), unit="people")
    ('+3804', '[+3683.2, +3925.8]')
    >>> format_excess(2.0, (-1.0, 3.0), unit="people")
    ('+2', '[-1, +3]')
    >>> format_excess(0.15062, (0.12, 0.18))
    ('+0.151', '[+0.120, +0.180]')
    """
    if effect is None or not math.isfinite(effect):
        return "—", ""
    people = unit == "people"

    def bound(value: float) -> str:
        if not people:
            return format_signed(value)
        text = format_signed(value, 1)
        return text[:-2] if text.endswith(".0") else text

    excess = format_signed(effect, 0) if people else format_signed(effect)
    if excess in ("-0", "+0") and people:
        excess = "+0"
    if ci is None:
        return excess, ""
    return excess, f"[{bound(ci[0])}, {bound(ci[1])}]"


def format_level(level: float | None) -> str:
    """A two-sided confidence level in per cent, to four significant digits.

    Examples
    --------
    >>> format_level(0.95), format_level(1 - 0.1 / 9), format_level(None)
    ('95 %', '98.89 %', '—')
    """
    if level is None or not math.isfinite(level):
        return "—"
    return f"{format_number(level * 100, 4)} %"


def format_p_value(value: Any) -> str:
    """A p-value: two significant digits, ``< 0.0001`` below 0.0001, ``—`` when missing.

    Examples
    --------
    >>> [format_p_value(p) for p in (0.3, 0.0012, 1.2e-07, 0.0, 1.0, None)]
    ['0.3', '0.0012', '< 0.0001', '< 0.0001', '1', '—']
    """
    if value is None or isinstance(value, bool):
        return "—"
    value = float(value)
    if not math.isfinite(value):
        return "—"
    if value < SMALL:
        return f"< {SMALL:.4f}"
    text = f"{value:.2g}"
    return text if "e" not in text else format_number(value, 2)


def natural_key(text: Any) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the numbers inside a text by value (``2`` before ``10``).

    Examples
    --------
    >>> sorted(["10. b", "2. a", "1. c", "k11", "k2"], key=natural_key)
    ['1. c', '2. a', '10. b', 'k2', 'k11']
    """
    parts = re.split(r"(\d+)", str(text))
    return tuple(
        (0, int(part)) if part.isdecimal() else (1, part.casefold())
        for part in parts
        if part
    )


def shorten(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` characters, cut at a word with ``…``.

    Examples
    --------
    >>> shorten("the attack learns materially more about the training rows", 30)
    'the attack learns materially…'
    >>> shorten("short", 30)
    'short'
    """
    text = " ".join(str(text).split())
    if len(text) <= width:
        return text
    if width < 2:
        return "…"[:width]
    cut = text[: width - 1]
    space = cut.rfind(" ")
    # cut inside a word: drop the word (unless that would drop most of the line)
    if text[width - 1] != " " and space >= width // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:(-–—") + "…"
