# SPDX-License-Identifier: BSD-3-Clause
"""Optional dependencies: imported lazily, or an error that says how to install them."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

from synthrisk._optional import import_optional, install_hint, is_available
from synthrisk.exceptions import MissingDependencyError, SynthriskError

MISSING = "synthrisk_test_no_such_module"


def test_import_optional_returns_the_module() -> None:
    assert import_optional("numpy", extra="fast") is np
    assert import_optional("numpy.linalg") is np.linalg


def test_import_optional_missing_names_the_extra() -> None:
    expected = (
        f"`{MISSING}` is required for this feature; "
        "install it with `pip install 'synthrisk[torch]'`."
    )
    with pytest.raises(
        MissingDependencyError, match=f"^{re.escape(expected)}$"
    ) as info:
        import_optional(MISSING, extra="torch")
    assert isinstance(info.value, ImportError)
    assert isinstance(info.value, SynthriskError)
    assert isinstance(info.value.__cause__, ModuleNotFoundError)


def test_import_optional_missing_names_the_package() -> None:
    with pytest.raises(
        MissingDependencyError,
        match=re.escape("install it with `pip install scikit-learn`."),
    ):
        import_optional(f"{MISSING}.neighbors", package="scikit-learn")


def test_import_optional_missing_without_hint_names_top_module() -> None:
    expected = (
        f"`{MISSING}.sub` is required for this feature; "
        f"install it with `pip install {MISSING}`."
    )
    with pytest.raises(MissingDependencyError, match=f"^{re.escape(expected)}$"):
        import_optional(f"{MISSING}.sub")


def test_import_optional_blocked_installed_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)  # as if numpy were not installed
    with pytest.raises(
        MissingDependencyError,
        match=re.escape(
            "`numpy` is required for this feature; install it with `pip install 'synthrisk[numba]'`."
        ),
    ):
        import_optional("numpy", extra="numba")


def test_install_hint_prefers_extra_then_package_then_module() -> None:
    assert (
        install_hint("dask.distributed", extra="dask")
        == "pip install 'synthrisk[dask]'"
    )
    assert (
        install_hint("sklearn", extra="ml", package="scikit-learn")
        == "pip install 'synthrisk[ml]'"
    )
    assert (
        install_hint("sklearn.neighbors", package="scikit-learn")
        == "pip install scikit-learn"
    )
    assert install_hint("dask.distributed") == "pip install dask"


def test_is_available_installed_and_missing() -> None:
    assert is_available("numpy") is True
    assert is_available("numpy.linalg") is True
    assert is_available(MISSING) is False
    assert is_available("numpy.no_such_submodule") is False


def test_is_available_blocked_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)
    assert is_available("numpy") is False
    monkeypatch.undo()
    assert is_available("numpy") is True


@pytest.mark.parametrize("name", ["", ".relative"])
def test_is_available_is_false_for_a_name_that_is_no_module(name: str) -> None:
    assert is_available(name) is False
