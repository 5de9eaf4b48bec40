# SPDX-License-Identifier: BSD-3-Clause
"""Lazy import of optional dependencies with an actionable error."""

from __future__ import annotations

import importlib
from types import ModuleType

from synthrisk.exceptions import MissingDependencyError

__all__ = ["import_optional", "install_hint", "is_available"]


def install_hint(
    module: str, *, extra: str | None = None, package: str | None = None
) -> str:
    """How to install ``module``: the synthrisk extra that brings it, or its package."""
    if extra is not None:
        return f"pip install 'synthrisk[{extra}]'"
    return f"pip install {package or module.split('.')[0]}"


def import_optional(
    module: str, *, extra: str | None = None, package: str | None = None
) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` saying how to install it.

    ``extra`` names the synthrisk extra that installs it; ``package`` the distribution
    to install when it is a core dependency that went missing (``scikit-learn``).
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        hint = install_hint(module, extra=extra, package=package)
        msg = f"`{module}` is required for this feature; install it with `{hint}`."
        raise MissingDependencyError(msg) from exc


def is_available(module: str) -> bool:
    """Return True if ``module`` can be imported (False for an empty or relative name)."""
    if not module or module.startswith("."):
        return False
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
