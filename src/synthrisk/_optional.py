# SPDX-License-Identifier: BSD-3-Clause
"""Lazy import of optional dependencies with an actionable error."""

from __future__ import annotations

import importlib
from types import ModuleType

from synthrisk.exceptions import MissingDependencyError

__all__ = ["import_optional", "is_available"]


def import_optional(module: str, *, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        msg = (
            f"`{module}` is required for this feature; "
            f"install it with `pip install 'synthrisk[{extra}]'`."
        )
        raise MissingDependencyError(msg) from exc


def is_available(module: str) -> bool:
    """Return True if ``module`` can be imported."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
