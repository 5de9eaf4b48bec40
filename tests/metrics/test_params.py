# SPDX-License-Identifier: BSD-3-Clause
"""Declared metric parameters: each constraint, the descriptor and the generated ``__init__``."""

from __future__ import annotations

import inspect
import math
import re
import typing
from typing import Any

import numpy as np
import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.metrics import NNDR, DCRShare, get_metric
from synthrisk.metrics._base import Context, Metric, Outcome
from synthrisk.metrics._params import (
    NOT_A_PARAM,
    Param,
    boolean,
    column_list,
    confidence,
    custom,
    integer,
    number,
    option,
    positive_float,
    probability,
)
from synthrisk.schema.tables import Tables


def _rejects(constraint: Any, value: Any, name: str, message: str) -> None:
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        constraint(value, name)


# ------------------------------------------------------------------------ constraints


def test_integer_accepts_and_normalises() -> None:
    check = integer(minimum=1)
    assert check(3, "n") == 3
    got = check(np.int64(7), "n")
    assert got == 7
    assert type(got) is int
    assert integer()(-5, "n") == -5
    assert integer(minimum=0, allow_none=True)(None, "n") is None


def test_integer_rejects_with_the_house_message() -> None:
    _rejects(integer(minimum=1), True, "n", "`n` must be an integer; got True.")
    _rejects(integer(minimum=1), 2.0, "n", "`n` must be an integer; got 2.0.")
    _rejects(integer(minimum=1), 0, "n", "`n` must be an integer >= 1; got 0.")
    _rejects(integer(minimum=1), None, "n", "`n` must be an integer; got None.")
    _rejects(
        integer(allow_none=True), "3", "n", "`n` must be an integer or None; got '3'."
    )


def test_number_accepts_and_normalises() -> None:
    got = number(gt=0, le=1)(1, "t")
    assert got == 1.0
    assert type(got) is float
    assert number(ge=0)(0, "t") == 0.0
    assert number(gt=0)(math.inf, "t") == math.inf  # finite only when asked
    assert number(ge=0, finite=True)(np.float32(0.5), "t") == 0.5


@pytest.mark.parametrize(
    ("kwargs", "value", "message"),
    [
        ({"gt": 0, "le": 1}, 0, "`t` must be a number in (0, 1]; got 0."),
        ({"gt": 0, "le": 1}, 1.5, "`t` must be a number in (0, 1]; got 1.5."),
        ({"gt": 0, "lt": 1}, 1, "`t` must be a number in (0, 1); got 1."),
        ({"gt": 0}, 0.0, "`t` must be a positive number; got 0.0."),
        ({"gt": 0}, True, "`t` must be a positive number; got True."),
        ({"gt": 0}, "1", "`t` must be a positive number; got '1'."),
        ({"ge": 0}, -1, "`t` must be a number >= 0; got -1."),
        ({"ge": 0}, math.nan, "`t` must be a number >= 0; got nan."),
        ({"ge": 1}, 0.5, "`t` must be a number >= 1; got 0.5."),
        (
            {"ge": 0, "finite": True},
            math.inf,
            "`t` must be a finite number >= 0; got inf.",
        ),
    ],
)
def test_number_rejects_with_a_message_from_its_bounds(
    kwargs: dict[str, Any], value: Any, message: str
) -> None:
    _rejects(number(**kwargs), value, "t", message)


def test_positive_float_confidence_and_probability() -> None:
    assert positive_float()(2, "x") == 2.0
    _rejects(positive_float(), -1, "x", "`x` must be a positive number; got -1.")
    _rejects(positive_float(), math.inf, "x", "`x` must be finite; got inf.")
    assert confidence()(0, "confidence_level") == 0.0  # collapses the interval
    assert confidence()(0.9, "confidence_level") == 0.9
    _rejects(
        confidence(),
        1,
        "confidence_level",
        "`confidence_level` must be a number in [0, 1), e.g. 0.95; got 1.",
    )
    assert probability()(0.95, "confidence_level") == 0.95
    _rejects(
        probability(),
        0,
        "confidence_level",
        "`confidence_level` must be a number in (0, 1); got 0.",
    )


def test_option_accepts_lowers_and_rejects() -> None:
    assert option(("a", "b"))("b", "m") == "b"
    assert option(("cap", "zero_cap"), lower=True)("ZERO_CAP", "m") == "zero_cap"
    assert option(("a", "b"), allow_none=True)(None, "m") is None
    _rejects(option(("a", "b")), "c", "m", "`m` must be one of ['a', 'b']; got 'c'.")
    _rejects(option(("a", "b")), None, "m", "`m` must be one of ['a', 'b']; got None.")
    _rejects(option(("a", "b")), "A", "m", "`m` must be one of ['a', 'b']; got 'A'.")
    _rejects(
        option(("a",), allow_none=True), 1, "m", "`m` must be one of ['a']; got 1."
    )


def test_boolean_accepts_numpy_booleans_and_rejects_numbers() -> None:
    got = boolean()(np.bool_(True), "flag")
    assert got is True
    assert boolean()(False, "flag") is False
    assert boolean(allow_none=True)(None, "flag") is None
    _rejects(boolean(), 1, "flag", "`flag` must be true or false; got 1.")
    _rejects(boolean(), "yes", "flag", "`flag` must be true or false; got 'yes'.")
    _rejects(
        boolean(allow_none=True),
        0,
        "flag",
        "`flag` must be True, False or None; got 0.",
    )


def test_column_list_accepts_and_normalises() -> None:
    assert column_list()("age", "keys") == ["age"]
    assert column_list()(("age", "sex"), "keys") == ["age", "sex"]
    assert column_list()([1, 2], "keys") == ["1", "2"]  # any names, as text
    assert column_list(allow_empty=True)(None, "keys") == []
    assert column_list(allow_empty=True)([], "keys") == []
    assert column_list(allow_none=True)(None, "keys") is None
    assert column_list(strict=True)(["a"], "keys") == ["a"]


def test_column_list_rejects_with_the_house_message() -> None:
    _rejects(
        column_list(), None, "keys", "`keys` must name at least one column; got None."
    )
    _rejects(
        column_list(),
        [],
        "keys",
        "`keys` must name at least one column; got an empty list.",
    )
    _rejects(column_list(), 5, "keys", "`keys` must be a list of column names; got 5.")
    _rejects(
        column_list(),
        {"a": 1},
        "keys",
        "`keys` must be a list of column names; got {'a': 1}.",
    )
    _rejects(
        column_list(strict=True),
        ["a", 1],
        "keys",
        "`keys` must be a list of column names; got ['a', 1].",
    )


def test_custom_calls_the_check_with_the_name() -> None:
    def upper(value: Any, name: str) -> str:
        if not isinstance(value, str):
            msg = f"`{name}` must be text; got {value!r}."
            raise ParameterError(msg)
        return value.upper()

    check = custom(upper, "text")
    assert check("ab", "word") == "AB"
    assert check.rule == "text"
    _rejects(check, 1, "word", "`word` must be text; got 1.")


# ------------------------------------------------------------- declarations on a metric


def _tiny_rule(value: Any, name: str) -> int:
    return int(integer(minimum=0)(value, name)) * 10


class _Toy(Metric):
    id = "toy"
    attack = "none"

    size: Param[int] = Param(integer(minimum=1), 3, "How many.")
    mode: Param[str] = Param(option(("fast", "slow")), "fast", "How.")
    alias: Param[str | None] = Param(
        option(("fast", "slow"), allow_none=True),
        None,
        "Alias of mode.",
        reported=False,
    )
    scaled: Param[int] = Param(
        custom(_tiny_rule, "an integer >= 0"), 0, "Scaled by ten."
    )

    def _check_params(self) -> None:
        if self.alias is not None:
            self._replace_param("mode", self.alias)
        if self.mode == "slow" and self.size > 5:
            msg = f"`size` must be at most 5 with mode='slow'; got {self.size}."
            raise ParameterError(msg)
        self.checked: list[str] = ["done"]

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        return Outcome(score=None, breakdown={})


class _ToyChild(_Toy):
    id = "toy_child"

    mode: Param[str] = Param(option(("fast", "slow")), "slow", "Slow by default.")
    scaled = NOT_A_PARAM
    extra: Param[bool] = Param(boolean(), False, "A new option.")


def test_declarations_give_defaults_json_and_typed_values() -> None:
    toy = _Toy()
    assert toy.params == {"size": 3, "mode": "fast", "scaled": 0}
    assert (toy.size, toy.mode, toy.scaled, toy.alias) == (3, "fast", 0, None)
    assert toy.checked == ["done"]
    built = _Toy(size=4, scaled=2)
    assert built.params == {"size": 4, "mode": "fast", "scaled": 20}
    assert repr(built) == "_Toy(size=4, mode='fast', scaled=20)"
    assert _Toy.from_params({"size": 4}).params == _Toy(size=4).params


def test_check_params_sees_checked_values_and_may_resolve_them() -> None:
    assert _Toy(alias="slow").params == {"size": 3, "mode": "slow", "scaled": 0}
    with pytest.raises(
        ParameterError, match=r"^`size` must be at most 5 with mode='slow'; got 6\.$"
    ):
        _Toy(mode="slow", size=6)
    with pytest.raises(
        ParameterError, match=r"^`size` must be an integer >= 1; got 0\.$"
    ):
        _Toy(size=0)


def test_unknown_names_get_the_house_message() -> None:
    message = (
        "metric 'toy' has no parameter(s) ['nope', 'other']; allowed parameters: "
        "['size', 'mode', 'alias', 'scaled']."
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        _Toy(other=1, nope=2)
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        _Toy.from_params({"other": 1, "nope": 2})


def test_subclass_redeclares_in_place_and_drops_with_not_a_param() -> None:
    assert _ToyChild.param_names() == ["size", "mode", "alias", "extra"]
    child = _ToyChild()
    assert child.params == {"size": 3, "mode": "slow", "extra": False}
    with pytest.raises(ParameterError, match="has no parameter"):
        _ToyChild(scaled=1)
    assert _Toy().mode == "fast"  # the parent keeps its default


def test_signature_lists_the_parameters_keyword_only_with_defaults() -> None:
    signature = inspect.signature(_ToyChild)
    assert list(signature.parameters) == ["size", "mode", "alias", "extra"]
    assert {p.kind for p in signature.parameters.values()} == {
        inspect.Parameter.KEYWORD_ONLY
    }
    assert signature.parameters["mode"].default == "slow"
    assert _ToyChild.__init__.__qualname__ == "_ToyChild.__init__"
    with pytest.raises(TypeError):
        _ToyChild(3)  # type: ignore[misc]


def test_values_are_fixed_once_built() -> None:
    toy = _Toy()
    assert isinstance(_Toy.size, Param)
    assert _Toy.size.name == "size"
    assert _Toy.size.default == 3
    assert _Toy.size.__doc__ == "How many. (an integer >= 1; default 3)"  # for help()
    with pytest.raises(
        AttributeError, match=r"parameter `size` is fixed when the metric is built"
    ):
        toy.size = 4  # type: ignore[misc]
    assert toy.params["size"] == 3


def test_a_metric_cannot_write_its_own_init() -> None:
    with pytest.raises(
        TypeError, match=r"defines __init__; a metric declares its options"
    ):

        class _HandWritten(Metric):
            id = "hand_written"

            def __init__(self, *, level: int = 1) -> None:
                self.level = level

            def _compute(self, tables: Tables, context: Context) -> Outcome:
                return Outcome(score=None, breakdown={})


def test_from_params_builds_the_class_it_is_called_on() -> None:
    child = _ToyChild.from_params({"extra": True})
    assert type(child) is _ToyChild
    assert child.params == {"size": 3, "mode": "slow", "extra": True}


def test_get_metric_checks_the_kind_asked_for() -> None:
    assert get_metric("nndr", NNDR) is NNDR
    assert get_metric("nndr", Metric) is NNDR
    with pytest.raises(
        ParameterError, match=r"^metric 'nndr' is NNDR, not a DCRShare \(or a subclass"
    ):
        get_metric("nndr", DCRShare)


def test_a_bare_param_subscript_means_the_same_accepted_type() -> None:
    # ``Param[T]`` is ``Param[T, T]`` at runtime too (the TypeVar default is for type checkers)
    assert Param[int] == Param[int, int]
    assert typing.get_type_hints(_Toy)["size"] == Param[int, int]
