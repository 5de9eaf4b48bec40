# SPDX-License-Identifier: BSD-3-Clause
"""Per-record arrays of cluster runs move to memory-mapped scratch files."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import synthrisk._spill
from synthrisk._spill import spill
from synthrisk.cluster import spill_records
from synthrisk.results import MetricResult, RecordScores

pytestmark = pytest.mark.skipif(os.name == "nt", reason="arrays stay in memory")


def test_large_arrays_are_mapped_and_their_files_deleted(tmp_path: Path) -> None:
    values = np.random.default_rng(0).normal(size=200_000)
    mapped = spill(values, str(tmp_path))
    assert isinstance(mapped, np.memmap)
    np.testing.assert_array_equal(mapped, values)
    assert mapped.dtype == values.dtype
    assert not mapped.flags.writeable
    assert list(tmp_path.iterdir()) == []  # deleted, still readable
    with pytest.raises(ValueError, match="read-only"):
        mapped[0] = 1.0


def test_small_and_empty_arrays_stay(tmp_path: Path) -> None:
    small = np.arange(10)
    assert spill(small, str(tmp_path)) is small
    empty = np.zeros((0,))
    assert spill(empty, str(tmp_path)) is empty


def test_an_unwritable_folder_keeps_the_array(tmp_path: Path) -> None:
    values = np.ones(300_000)
    assert spill(values, str(tmp_path / "missing")) is values


def test_results_keep_their_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(synthrisk._spill, "SPILL_BYTES", 1)
    result = MetricResult(
        "nndr",
        0.5,
        {"x": 1},
        records={
            "a": RecordScores("synthetic", np.arange(5), np.linspace(0, 1, 5), "d"),
            "b": RecordScores("real", np.arange(0), np.zeros(0), "empty"),
        },
    )
    moved = spill_records(result)
    assert isinstance(moved.records["a"].values, np.memmap)
    assert isinstance(moved.records["a"].index, np.memmap)
    assert moved.to_dict(include_records=True) == result.to_dict(include_records=True)
    assert moved.records["a"].to_frame().equals(result.records["a"].to_frame())
    assert spill_records(MetricResult("nndr", 0.5, {})).records == {}
