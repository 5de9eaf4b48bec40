# SPDX-License-Identifier: BSD-3-Clause
"""``check_*`` helpers that produce the one house error-message format."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any, Literal, overload

from synthrisk.exceptions import ParameterError

__all__ = ["check_columns", "check_int", "check_option", "check_positive_float"]


def check_option(value: Any, *, name: str, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise :class:`ParameterError`."""
    allowed = tuple(allowed)
    if not isinstance(value, str) or value not in allowed:
        msg = f"`{name}` must be one of {list(allowed)}; got {value!r}."
        raise ParameterError(msg)
    return value


@overload
def check_int(
    value: Any,
    *,
    name: str,
    minimum: int | None = None,
    allow_none: Literal[False] = False,
) -> int: ...


@overload
def check_int(
    value: Any, *, name: str, minimum: int | None = None, allow_none: bool
) -> int | None: ...


def check_int(
    value: Any, *, name: str, minimum: int | None = None, allow_none: bool = False
) -> int | None:
    """Return ``value`` as an int if it is an integer ``>= minimum``.

    None is returned as it is with ``allow_none=True`` (and only then: the return
    type says which).
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        rule = "an integer" + (" or None" if allow_none else "")
        msg = f"`{name}` must be {rule}; got {value!r}."
        raise ParameterError(msg)
    if minimum is not None and int(value) < minimum:
        msg = f"`{name}` must be an integer >= {minimum}; got {value!r}."
        raise ParameterError(msg)
    return int(value)


def check_positive_float(value: Any, *, name: str) -> float:
    """Return ``value`` as a float if it is a finite number > 0."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not float(value) > 0
    ):
        msg = f"`{name}` must be a positive number; got {value!r}."
        raise ParameterError(msg)
    if value == float("inf"):
        msg = f"`{name}` must be finite; got {value!r}."
        raise ParameterError(msg)
    return float(value)


def check_columns(
    names: Any, *, name: str, available: Sequence[str], allow_empty: bool = False
) -> list[str]:
    """Return ``names`` as a list of known column names, else raise."""
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, Iterable):
        msg = f"`{name}` must be a list of column names; got {names!r}."
        raise ParameterError(msg)
    names = list(names)
    if not names and not allow_empty:
        msg = f"`{name}` must name at least one column; got an empty list."
        raise ParameterError(msg)
    unknown = [c for c in names if c not in available]
    if unknown:
        msg = (
            f"`{name}` names columns that are not in the tables: {unknown}. "
            f"Available columns: {list(available)}."
        )
        raise ParameterError(msg)
    return names
