# SPDX-License-Identifier: BSD-3-Clause
"""Global defaults (working memory, neighbour backend) and a context manager to change them."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from synthrisk._typing import Backend

__all__ = ["Config", "config_context", "get_config"]


@dataclasses.dataclass(frozen=True)
class Config:
    """Global settings.

    Attributes
    ----------
    working_memory : float
        Budget in MiB for the temporary arrays of one block of a blocked computation.
    backend : str
        Default neighbour-search backend: ``"auto"``, ``"numpy"`` or ``"numba"``.
    """

    working_memory: float = 256.0
    backend: Backend = "auto"


_CONFIG = Config()


def get_config() -> Config:
    """Return the current global configuration."""
    return _CONFIG


@contextlib.contextmanager
def config_context(**changes: Any) -> Iterator[Config]:
    """Temporarily change global settings, e.g. ``config_context(working_memory=64)``."""
    global _CONFIG
    previous = _CONFIG
    _CONFIG = dataclasses.replace(previous, **changes)
    try:
        yield _CONFIG
    finally:
        _CONFIG = previous
