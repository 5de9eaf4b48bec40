# SPDX-License-Identifier: BSD-3-Clause
"""The only place random generators are created."""

from __future__ import annotations

import numpy as np

from synthrisk._typing import SeedLike
from synthrisk.exceptions import ParameterError

__all__ = ["as_generator", "metric_generator"]


def as_generator(seed: SeedLike) -> np.random.Generator:
    """Return ``seed`` if it is a Generator, else a new Generator seeded with it."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def metric_generator(seed: int, metric_id: str) -> np.random.Generator:
    """Generator for one metric, independent of the order metrics run in.

    The stream is derived from the evaluation seed and the metric id, so adding or
    removing a metric from an evaluation never changes another metric's numbers.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        msg = f"`seed` must be an integer >= 0; got {seed!r}."
        raise ParameterError(msg)
    salt = [ord(ch) for ch in metric_id]
    # seeds of 2**32 and more keep all their bits (SeedSequence splits them into words)
    return np.random.default_rng(np.random.SeedSequence([int(seed), *salt]))
