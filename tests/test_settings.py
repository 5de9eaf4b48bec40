# SPDX-License-Identifier: BSD-3-Clause
"""Global settings: defaults, temporary changes that always restore, refused values."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.settings import Config, check_compute, config_context, get_config

BACKENDS = ["auto", "numpy", "numba", "dask", "torch"]


def test_get_config_defaults() -> None:
    config = get_config()
    assert config == Config()
    assert config.working_memory == 256.0
    assert config.backend == "auto"


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_config().working_memory = 1.0  # type: ignore[misc]


def test_config_context_changes_and_restores() -> None:
    before = get_config()
    with config_context(working_memory=64, backend="numpy") as config:
        assert config is get_config()
        assert config.working_memory == 64
        assert config.backend == "numpy"
    assert get_config() is before
    assert get_config().working_memory == 256.0


def test_config_context_keeps_unchanged_settings() -> None:
    with config_context(backend="numba") as config:
        assert config.working_memory == 256.0


def test_config_context_restores_on_exception() -> None:
    before = get_config()
    seen: list[float] = []

    def fail_inside() -> None:
        with config_context(working_memory=8):
            seen.append(get_config().working_memory)
            msg = "inside"
            raise RuntimeError(msg)

    with pytest.raises(RuntimeError, match=r"^inside$"):
        fail_inside()
    assert seen == [8]
    assert get_config() is before


def test_config_context_nested() -> None:
    with config_context(working_memory=32):
        with config_context(backend="dask") as inner:
            assert (inner.working_memory, inner.backend) == (32, "dask")
            with config_context(working_memory=16):
                assert (get_config().working_memory, get_config().backend) == (
                    16,
                    "dask",
                )
            assert get_config().working_memory == 32
        assert (get_config().working_memory, get_config().backend) == (32, "auto")
    assert get_config() == Config()


@pytest.mark.parametrize("value", [0, -1.0, float("inf"), float("nan"), True, "64"])
def test_config_context_rejects_bad_working_memory(value: Any) -> None:
    message = f"`working_memory` must be a positive number of MiB; got {value!r}."
    before = get_config()
    with (
        pytest.raises(ParameterError, match=f"^{re.escape(message)}$"),
        config_context(working_memory=value),
    ):
        pytest.fail("the block must not run")  # pragma: no cover
    assert get_config() is before


@pytest.mark.parametrize("value", ["gpu", "NumPy", "", 1])
def test_config_context_rejects_bad_backend(value: Any) -> None:
    message = f"`backend` must be one of {BACKENDS}; got {value!r}."
    with (
        pytest.raises(ParameterError, match=f"^{re.escape(message)}$"),
        config_context(backend=value),
    ):
        pytest.fail("the block must not run")  # pragma: no cover
    assert get_config() == Config()


def test_config_rejects_bad_values_directly() -> None:
    with pytest.raises(ParameterError, match=re.escape("got -5.")):
        Config(working_memory=-5)
    with pytest.raises(ParameterError, match=re.escape("got 'cuda'.")):
        Config(backend="cuda")  # type: ignore[arg-type]


def test_check_compute_none_means_global() -> None:
    assert check_compute(None, None) == (None, None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_check_compute_accepts_known_backends(backend: str) -> None:
    assert check_compute(None, backend) == (None, backend)


def test_check_compute_normalises_working_memory_to_float() -> None:
    memory, backend = check_compute(64, "numpy")
    assert (memory, backend) == (64.0, "numpy")
    assert type(memory) is float
    assert check_compute(0.5, None) == (0.5, None)


@pytest.mark.parametrize(
    "value", [0, -0.1, float("inf"), float("-inf"), float("nan"), False, "1"]
)
def test_check_compute_rejects_bad_working_memory(value: Any) -> None:
    message = f"`working_memory` must be a positive number of MiB; got {value!r}."
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        check_compute(value, None)


def test_check_compute_rejects_unknown_backend() -> None:
    message = f"`backend` must be one of {BACKENDS}; got 'cuda'."
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        check_compute(None, "cuda")


@pytest.mark.parametrize("name", ["working_memory", "backend"])
def test_a_global_setting_cannot_be_none(name: str) -> None:
    with pytest.raises(ParameterError, match=f"global `{name}` must be set"):
        config_context(**{name: None}).__enter__()


def test_config_context_refuses_an_unknown_setting() -> None:
    with pytest.raises(ParameterError, match=r"unknown setting\(s\) \['colour'\]"):
        config_context(colour=1).__enter__()
    assert get_config() == Config()


def test_config_stores_working_memory_as_a_float() -> None:
    with config_context(working_memory=64) as config:
        assert isinstance(config.working_memory, float)
        assert config.working_memory == 64.0
