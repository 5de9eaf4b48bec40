# SPDX-License-Identifier: BSD-3-Clause
"""Declared metric parameters: a typed descriptor and small reusable constraints.

A metric declares each option once, as an annotated class attribute::

    class NNDR(Metric):
        rank: Param[int] = Param(
            integer(minimum=1), 10, "Which smallest ratio summarises each side."
        )

and :class:`~synthrisk.metrics._base.Metric` turns the declarations into one
keyword-only ``__init__`` (with a real signature), the house error messages, defaults,
the JSON ``params`` and typed attribute access (``self.rank`` is an ``int``). The
annotation is for type checkers: ``Metric`` is a ``dataclass_transform`` (PEP 681), so
mypy checks every construction (``NNDR(rank="ten")`` and ``NNDR(no_such_option=1)`` are
errors). ``Param[T]`` reads as ``T`` and accepts ``T``; ``Param[T, In]`` accepts ``In``
where the constraint normalises more than it returns (a column list accepts any iterable
of names, one name included). The constraints follow scikit-learn's
``_param_validation`` in spirit: each one checks a value, normalises it (``1`` becomes
``1.0`` for a float, a string a one-item list for a column list) and raises
:class:`~synthrisk.exceptions.ParameterError` naming the parameter, with the messages of
:mod:`synthrisk._validation`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, cast, overload

import numpy as np

from synthrisk._validation import check_int, check_option, check_positive_float
from synthrisk.exceptions import ParameterError
from synthrisk.stats.intervals import check_confidence_level

if TYPE_CHECKING:
    from typing_extensions import TypeVar
else:
    from typing import TypeVar

__all__ = [
    "NOT_A_PARAM",
    "Constraint",
    "Param",
    "boolean",
    "column_list",
    "confidence",
    "custom",
    "integer",
    "number",
    "option",
    "positive_float",
    "probability",
]

#: the checked, normalised value of a parameter
T = TypeVar("T")
S = TypeVar("S", bound=str)
if TYPE_CHECKING:
    #: what a parameter accepts; the checked type unless said otherwise (PEP 696)
    In = TypeVar("In", default=T)
else:
    In = TypeVar("In")


class _InDefaultsToT:
    """``X[T]`` means ``X[T, T]`` at runtime too (type checkers read the TypeVar default)."""

    def __class_getitem__(cls, params: Any) -> Any:
        if not isinstance(params, tuple):
            params = (params, params)
        return super().__class_getitem__(params)  # type: ignore[misc]


@dataclasses.dataclass(frozen=True)
class Constraint(_InDefaultsToT, Generic[T, In]):
    """A check that returns the normalised value or raises :class:`ParameterError`.

    ``Constraint[T, In]`` accepts values of type ``In`` (for type checkers; the check
    itself takes anything) and returns a ``T``; ``Constraint[T]`` accepts ``T``.

    Attributes
    ----------
    check : callable ``(value, name) -> T``
        Validates ``value`` of the parameter ``name``; the message names it.
    rule : str
        What is accepted, in words (for documentation and ``repr``).
    """

    check: Callable[[Any, str], T]
    rule: str

    def __call__(self, value: Any, name: str) -> T:
        return self.check(value, name)


class Param(_InDefaultsToT, Generic[T, In]):
    """One declared parameter of a metric: constraint, default and a one-line doc.

    Declare it with its type, ``name: Param[T] = Param(constraint, default, doc)``
    (``Param[T, In]`` when the constraint accepts more than it returns, as
    :func:`column_list` does). Reading the attribute on a metric gives the validated,
    normalised value (typed ``T``); the class attribute is the declaration itself.
    Values are fixed when the metric is built: build a new metric to change one.

    Parameters
    ----------
    constraint : Constraint
        Checks and normalises the value (the default is checked too).
    default : object, default=None
        Value used when the parameter is not given.
    doc : str, default=""
        One line saying what the parameter does.
    reported : bool, default=True
        False for an alias that is accepted but not part of the JSON ``params``
        (its value is folded into another parameter by ``_check_params``).
    """

    name: str

    def __init__(
        self,
        constraint: Constraint[T, In],
        default: Any = None,
        doc: str = "",
        *,
        reported: bool = True,
    ) -> None:
        self.constraint = constraint
        self.default = default
        self.doc = doc
        self.reported = reported
        self.name = ""
        self.__doc__ = f"{doc} ({constraint.rule}; default {default!r})"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Param({self.constraint.rule}, default={self.default!r})"

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Param[T, In]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(
        self, obj: object | None, owner: type | None = None
    ) -> Param[T, In] | T:
        if obj is None:
            return self
        try:
            value: T = obj.__dict__["_param_values"][self.name]
        except KeyError:
            msg = f"{type(obj).__name__!r} has no value for parameter {self.name!r}"
            raise AttributeError(msg) from None
        return value

    # type checkers read the value's type as what the generated ``__init__`` accepts
    def __set__(self, obj: object, value: In) -> None:
        msg = (
            f"parameter `{self.name}` is fixed when the metric is built; "
            f"build a new metric, e.g. {type(obj).__name__}(..., {self.name}={value!r})."
        )
        raise AttributeError(msg)

    def check(self, value: Any) -> T:
        """Validate and normalise ``value`` for this parameter."""
        return self.constraint(value, self.name)


class _NotAParam:
    def __repr__(self) -> str:
        return "NOT_A_PARAM"


#: assign to a parameter's name in a subclass to drop the parameter its parent declares
#: (type checkers still see the parent's parameter in the subclass's ``__init__``)
NOT_A_PARAM: Any = _NotAParam()


# ---------------------------------------------------------------------------- constraints


@overload
def integer(
    *, minimum: int | None = None, allow_none: Literal[False] = False
) -> Constraint[int]: ...


@overload
def integer(
    *, minimum: int | None = None, allow_none: Literal[True]
) -> Constraint[int | None]: ...


def integer(
    *, minimum: int | None = None, allow_none: bool = False
) -> Constraint[int] | Constraint[int | None]:
    """An integer (not a bool), at least ``minimum``; None too with ``allow_none``."""

    def check(value: Any, name: str) -> int | None:
        return check_int(value, name=name, minimum=minimum, allow_none=allow_none)

    rule = "an integer" + (f" >= {minimum}" if minimum is not None else "")
    return Constraint(check, rule + (" or None" if allow_none else ""))


def _bound(value: float) -> str:
    return f"{value:g}"


def number(
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
    finite: bool = False,
) -> Constraint[float]:
    """A real number (not a bool) within the given bounds, returned as a float.

    The message says ``a positive number``, ``a number >= 0``, ``a number in (0, 1]``
    and so on, from the bounds.
    """
    low = (f"({_bound(gt)}" if gt is not None else None) or (
        f"[{_bound(ge)}" if ge is not None else None
    )
    high = (f"{_bound(lt)})" if lt is not None else None) or (
        f"{_bound(le)}]" if le is not None else None
    )
    kind = "a finite number" if finite else "a number"
    if low and high:
        rule = f"{kind} in {low}, {high}"
    elif gt == 0 and not finite:
        rule = "a positive number"
    elif gt is not None:
        rule = f"{kind} > {_bound(gt)}"
    elif ge is not None:
        rule = f"{kind} >= {_bound(ge)}"
    elif lt is not None:
        rule = f"{kind} < {_bound(lt)}"
    elif le is not None:
        rule = f"{kind} <= {_bound(le)}"
    else:
        rule = kind

    def check(value: Any, name: str) -> float:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if ok:
            x = float(value)
            ok = not math.isnan(x) and not (finite and math.isinf(x))
            ok = ok and (gt is None or x > gt) and (ge is None or x >= ge)
            ok = ok and (lt is None or x < lt) and (le is None or x <= le)
        if not ok:
            msg = f"`{name}` must be {rule}; got {value!r}."
            raise ParameterError(msg)
        return float(value)

    return Constraint(check, rule)


def positive_float() -> Constraint[float]:
    """A finite number > 0 (:func:`~synthrisk._validation.check_positive_float`)."""
    return Constraint(
        lambda value, name: check_positive_float(value, name=name),
        "a positive finite number",
    )


def confidence() -> Constraint[float]:
    """A confidence level in [0, 1) (0 collapses an interval to its point)."""
    return Constraint(
        lambda value, name: check_confidence_level(value, name=name),
        "a number in [0, 1)",
    )


def probability() -> Constraint[float]:
    """A number strictly between 0 and 1 (a confidence level that must be proper)."""
    return number(gt=0, lt=1)


@overload
def option(
    allowed: Iterable[S], *, allow_none: Literal[False] = False, lower: bool = False
) -> Constraint[S]: ...


@overload
def option(
    allowed: Iterable[S], *, allow_none: Literal[True], lower: bool = False
) -> Constraint[S | None]: ...


def option(
    allowed: Iterable[S], *, allow_none: bool = False, lower: bool = False
) -> Constraint[S] | Constraint[S | None]:
    """One of the strings ``allowed``; None too with ``allow_none``.

    ``lower=True`` accepts any case and returns the lower-case option. A tuple of
    ``Literal`` strings gives a constraint typed with that ``Literal``.
    """
    choices = tuple(allowed)

    def check(value: Any, name: str) -> S | None:
        if value is None and allow_none:
            return None
        if lower and isinstance(value, str) and value.lower() in choices:
            value = value.lower()
        check_option(value, name=name, allowed=choices)
        return cast("S", value)

    rule = f"one of {list(choices)}" + (" or None" if allow_none else "")
    return Constraint(check, rule)


@overload
def boolean(*, allow_none: Literal[False] = False) -> Constraint[bool]: ...


@overload
def boolean(*, allow_none: Literal[True]) -> Constraint[bool | None]: ...


def boolean(*, allow_none: bool = False) -> Constraint[bool] | Constraint[bool | None]:
    """True or False (numpy booleans too); None too with ``allow_none``."""

    def check(value: Any, name: str) -> bool | None:
        if value is None and allow_none:
            return None
        if not isinstance(value, (bool, np.bool_)):
            rule = "True, False or None" if allow_none else "true or false"
            msg = f"`{name}` must be {rule}; got {value!r}."
            raise ParameterError(msg)
        return bool(value)

    return Constraint(check, "True, False or None" if allow_none else "a boolean")


@overload
def column_list(
    *,
    allow_none: Literal[False] = False,
    allow_empty: Literal[False] = False,
    strict: bool = False,
) -> Constraint[list[str], Iterable[str]]: ...


@overload
def column_list(
    *,
    allow_none: Literal[False] = False,
    allow_empty: Literal[True],
    strict: bool = False,
) -> Constraint[list[str], Iterable[str] | None]: ...


@overload
def column_list(
    *, allow_none: Literal[True], allow_empty: bool = False, strict: bool = False
) -> Constraint[list[str] | None, Iterable[str] | None]: ...


def column_list(
    *, allow_none: bool = False, allow_empty: bool = False, strict: bool = False
) -> (
    Constraint[list[str], Iterable[str]]
    | Constraint[list[str], Iterable[str] | None]
    | Constraint[list[str] | None, Iterable[str] | None]
):
    """A list of column names (one name is a one-item list), not yet checked against tables.

    Parameters
    ----------
    allow_none : bool, default=False
        None stays None (the metric then chooses the columns). Otherwise None is an
        empty list with ``allow_empty``, else an error.
    allow_empty : bool, default=False
        An empty list is allowed.
    strict : bool, default=False
        Only a sequence of strings; by default any iterable, each item turned into
        a string.
    """

    def check(value: Any, name: str) -> list[str] | None:
        if value is None:
            if allow_none:
                return None
            if allow_empty:
                return []
            msg = f"`{name}` must name at least one column; got None."
            raise ParameterError(msg)
        if isinstance(value, str):
            value = [value]
        if strict:
            ok = isinstance(value, Sequence) and all(isinstance(v, str) for v in value)
        else:
            ok = isinstance(value, Iterable) and not isinstance(value, (bytes, dict))
        if not ok:
            msg = f"`{name}` must be a list of column names; got {value!r}."
            raise ParameterError(msg)
        names = [str(v) for v in value]
        if not names and not allow_empty:
            msg = f"`{name}` must name at least one column; got an empty list."
            raise ParameterError(msg)
        return names

    rule = "a list of column names" + (" or None" if allow_none else "")
    constraint: Constraint[list[str] | None, Iterable[str] | None]
    constraint = Constraint(check, rule)
    return constraint


def custom(check: Callable[[Any, str], T], rule: str) -> Constraint[T, Any]:
    """A metric's own check ``(value, name) -> normalised value``, described by ``rule``.

    What it accepts is the declaration's to say: ``Param[T]`` accepts ``T``,
    ``Param[T, In]`` accepts ``In``.
    """
    return Constraint(check, rule)
