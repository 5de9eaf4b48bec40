# SPDX-License-Identifier: BSD-3-Clause
"""Global defaults (working memory, neighbour backend) and a context manager to change them."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import numbers
from collections.abc import Iterator
from typing import Any, Literal, get_args

from synthrisk._typing import Backend
from synthrisk.exceptions import ParameterError

__all__ = [
    "Config",
    "Workers",
    "check_compute",
    "check_workers",
    "config_context",
    "get_config",
]

#: worker processes of a run: ``"auto"`` or a number (1: one metric after another)
Workers = int | Literal["auto"]


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


def check_workers(value: Any, *, name: str = "workers") -> Workers:
    """Validate ``workers``: ``"auto"`` or a whole number of processes, at least 1."""
    if isinstance(value, str) and value == "auto":
        return "auto"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        msg = (
            f"`{name}` must be 'auto' or a whole number of worker processes (1 runs the "
            f"metrics one after another in this process); got {value!r}."
        )
        raise ParameterError(msg)
    return int(value)


@dataclasses.dataclass(frozen=True)
class Config:
    """Global settings.

    Attributes
    ----------
    working_memory : float
        Budget in MiB for the temporary arrays of one block of a blocked computation.
    backend : str
        Default neighbour-search backend: ``"auto"``, ``"numpy"``, ``"numba"``, ``"dask"`` or ``"torch"``.
    workers : int or "auto"
        Worker processes that run the metrics of one :func:`~synthrisk.evaluate` side
        by side (:mod:`synthrisk._workers`); 1 runs them one after another in this
        process. ``"auto"``: up to one per core (at most 4) on tables of 20,000 rows
        or more, where the system and numba's threading layer allow it.
    """

    working_memory: float = 256.0
    backend: Backend = "auto"
    workers: Workers = "auto"

    def __post_init__(self) -> None:
        if self.working_memory is None or self.backend is None:
            name = "working_memory" if self.working_memory is None else "backend"
            msg = f"the global `{name}` must be set; got None (None means 'the global setting' only in a call)."
            raise ParameterError(msg)
        working_memory, backend = check_compute(self.working_memory, self.backend)
        # frozen: store the checked values (a number of MiB as a float)
        object.__setattr__(self, "working_memory", float(working_memory or 0.0))
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "workers", check_workers(self.workers))


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
