# SPDX-License-Identifier: BSD-3-Clause
"""The shared steps of the every-column runs: Holm across columns and the worst column."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from synthrisk.metrics._every_column import (
    holm_across,
    holm_levels_across,
    worst_column,
)
from synthrisk.stats.holdout import holm, holm_levels


def _holm_skipping_none(p_values: Sequence[float | None]) -> list[float | None]:
    """The ML attackers' former Holm adjustment, kept here as the reference."""
    present = [(p, i) for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present)):
        running = max(running, min(1.0, (len(present) - rank) * p))
        out[i] = running
    return out


@pytest.mark.parametrize("seed", range(40))
def test_holm_across_matches_the_former_adjustment(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 9))
    # ties and missing tests included
    pool = [None, 0.0, 1.0, 0.01, 0.01, *rng.uniform(0, 1, 4).tolist()]
    values: list[float | None] = [pool[int(i)] for i in rng.integers(0, len(pool), n)]
    names = [f"c{i}" for i in range(n)]
    got = holm_across(dict(zip(names, values, strict=True)))
    assert list(got) == names
    assert list(got.values()) == _holm_skipping_none(values)


def test_holm_across_without_missing_is_holm() -> None:
    raw = {"a": 0.03, "b": 0.001, "c": 0.04, "d": 0.03}
    assert list(holm_across(raw).values()) == holm(list(raw.values()))
    assert holm_across({}) == {}
    assert holm_across({"a": None}) == {"a": None}


def test_holm_levels_across_is_holm_levels_by_column() -> None:
    raw = {"a": 0.001, "b": 0.04, "c": 0.03}
    assert list(holm_levels_across(raw).values()) == holm_levels(
        list(raw.values()), 0.05
    )
    assert list(holm_levels_across(raw, 0.1).values()) == holm_levels(
        list(raw.values()), 0.1
    )


def test_worst_column_first_on_ties() -> None:
    scores = {"a": 0.5, "b": 0.9, "c": 0.9, "d": 0.1}
    assert worst_column(scores, scores.__getitem__) == "b"
    assert worst_column(scores, scores.__getitem__, highest=False) == "d"
    ties = {"x": 0.2, "y": 0.2}
    assert worst_column(ties, ties.__getitem__, highest=False) == "x"
