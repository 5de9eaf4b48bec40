# SPDX-License-Identifier: BSD-3-Clause
"""Global defaults (working memory, neighbour backend) and a context manager to change them."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import numbers
from collections.abc import Iterator
from typing import Any, get_args

from synthrisk._typing import Backend
from synthrisk.exceptions import ParameterError

__all__ = ["Config", "check_compute", "config_context", "get_config"]


def check_compute(
    working_memory: Any, backend: Any
) -> tuple[float | None, Backend | None]:
    """Validate the compute options: a positive finite MiB budget, a known backend.

    Either may be None (use the global setting).
    """
    if working_memory is not None:
        if (
            isinstance(working_memory, bool)
            or not isinstance(working_memory, numbers.Real)
            or not 0 < float(working_memory) < math.inf
        ):
            msg = f"`working_memory` must be a positive number of MiB; got {working_memory!r}."
            raise ParameterError(msg)
        working_memory = float(working_memory)
    if backend is not None and backend not in get_args(Backend):
        msg = f"`backend` must be one of {list(get_args(Backend))}; got {backend!r}."
        raise ParameterError(msg)
    return working_memory, backend


@dataclasses.dataclass(frozen=True)
class Config:
    """Global settings.

    Attributes
    ----------
    working_memory : float
        Budget in MiB for the temporary arrays of one block of a blocked computation.
    backend : str
        Default neighbour-search backend: ``"auto"``, ``"numpy"``, ``"numba"``, ``"dask"`` or ``"torch"``.
    """

    working_memory: float = 256.0
    backend: Backend = "auto"

    def __post_init__(self) -> None:
        if self.working_memory is None or self.backend is None:
            name = "working_memory" if self.working_memory is None else "backend"
            msg = f"the global `{name}` must be set; got None (None means 'the global setting' only in a call)."
            raise ParameterError(msg)
        working_memory, backend = check_compute(self.working_memory, self.backend)
        # frozen: store the checked values (a number of MiB as a float)
        object.__setattr__(self, "working_memory", float(working_memory or 0.0))
        object.__setattr__(self, "backend", backend)


_CONFIG = Config()


def get_config() -> Config:
    """Return the current global configuration."""
    return _CONFIG


@contextlib.contextmanager
def config_context(**changes: Any) -> Iterator[Config]:
    """Temporarily change global settings, e.g. ``config_context(working_memory=64)``."""
    global _CONFIG
    unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(Config)})
    if unknown:
        known = ", ".join(f.name for f in dataclasses.fields(Config))
        msg = f"unknown setting(s) {unknown}; the settings are: {known}."
        raise ParameterError(msg)
    previous = _CONFIG
    _CONFIG = dataclasses.replace(previous, **changes)
    try:
        yield _CONFIG
    finally:
        _CONFIG = previous
