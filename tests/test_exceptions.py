# SPDX-License-Identifier: BSD-3-Clause
"""The error and warning family: each error is a SynthriskError and its builtin."""

from __future__ import annotations

import warnings

import pytest

import synthrisk
from synthrisk.exceptions import (
    ConfigError,
    InputError,
    MissingDependencyError,
    ParameterError,
    SchemaMismatchError,
    SynthriskDeprecationWarning,
    SynthriskError,
    SynthriskWarning,
    UnreliableEstimateWarning,
)

ERRORS: list[tuple[type[SynthriskError], type[Exception]]] = [
    (InputError, ValueError),
    (SchemaMismatchError, ValueError),
    (ParameterError, ValueError),
    (ConfigError, ValueError),
    (MissingDependencyError, ImportError),
]


@pytest.mark.parametrize(("error", "builtin"), ERRORS)
def test_error_is_synthrisk_error_and_builtin(
    error: type[SynthriskError], builtin: type[Exception]
) -> None:
    assert issubclass(error, SynthriskError)
    assert issubclass(error, builtin)
    msg = "bad value"
    with pytest.raises(builtin, match=r"^bad value$"):
        raise error(msg)
    with pytest.raises(SynthriskError, match=r"^bad value$"):
        raise error(msg)


def test_error_value_errors_are_not_import_errors() -> None:
    for error in (InputError, SchemaMismatchError, ParameterError, ConfigError):
        assert not issubclass(error, ImportError)
    assert not issubclass(MissingDependencyError, ValueError)


def test_error_families_are_distinct() -> None:
    classes = [error for error, _ in ERRORS]
    for error in classes:
        for other in classes:
            if other is not error:
                assert not issubclass(error, other)


def test_synthrisk_error_is_a_plain_exception() -> None:
    assert issubclass(SynthriskError, Exception)
    assert not issubclass(SynthriskError, ValueError)
    assert not issubclass(SynthriskError, Warning)


@pytest.mark.parametrize("error", [SynthriskError, *(e for e, _ in ERRORS)])
def test_error_attributes_default_to_none(error: type[SynthriskError]) -> None:
    exc = error("`k` must be an integer; got 'x'.")
    assert exc.metric is None
    assert exc.parameter is None
    assert exc.detail is None
    assert str(exc) == "`k` must be an integer; got 'x'."


def test_error_attributes_are_per_instance() -> None:
    named = ParameterError("metric 'dcr': `k` must be an integer; got 'x'.")
    named.metric, named.parameter = "dcr", "k"
    named.detail = "`k` must be an integer; got 'x'."
    assert (named.metric, named.parameter) == ("dcr", "k")
    assert named.detail == "`k` must be an integer; got 'x'."
    # the message is what was raised, not rebuilt from the attributes
    assert str(named) == "metric 'dcr': `k` must be an integer; got 'x'."
    other = ParameterError("other")
    assert (other.metric, other.parameter, other.detail) == (None, None, None)
    assert ParameterError.metric is None


def test_warning_hierarchy() -> None:
    assert issubclass(SynthriskWarning, UserWarning)
    assert not issubclass(SynthriskWarning, SynthriskError)
    assert issubclass(UnreliableEstimateWarning, SynthriskWarning)
    assert issubclass(SynthriskDeprecationWarning, SynthriskWarning)
    # a FutureWarning is shown by default; a DeprecationWarning would be hidden
    assert issubclass(SynthriskDeprecationWarning, FutureWarning)
    assert not issubclass(SynthriskDeprecationWarning, DeprecationWarning)


@pytest.mark.parametrize(
    "warning",
    [SynthriskWarning, UnreliableEstimateWarning, SynthriskDeprecationWarning],
)
def test_warning_caught_as_user_warning(warning: type[SynthriskWarning]) -> None:
    with pytest.warns(UserWarning, match=r"^few rows$") as record:
        warnings.warn("few rows", warning, stacklevel=1)
    assert [w.category for w in record] == [warning]


def test_exceptions_exported_from_package() -> None:
    for name in (
        "ConfigError",
        "InputError",
        "MissingDependencyError",
        "ParameterError",
        "SchemaMismatchError",
        "SynthriskDeprecationWarning",
        "SynthriskError",
        "SynthriskWarning",
        "UnreliableEstimateWarning",
    ):
        assert getattr(synthrisk, name) is getattr(synthrisk.exceptions, name)
