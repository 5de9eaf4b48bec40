# SPDX-License-Identifier: BSD-3-Clause
"""The Anonymeter-style attacks on every row of tables partitioned on a Dask cluster:
the report (records included) equals the in-memory one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

pytestmark = pytest.mark.dask


def _categorical_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """All-categorical tables with many duplicated rows (and a smaller holdout)."""
    g = np.random.default_rng(5)

    def make(n: int) -> pd.DataFrame:
        frame = pd.DataFrame(
            {
                "a": g.choice(list("xyz"), n),
                "b": g.choice(["p", "q", None], n),
                "c": g.choice(["u", "v", "w", "t"], n),
            }
        )
        return frame

    return make(150), make(120), make(60)


def test_linkability_and_inference_on_mixed_tables(
    check_partitioned: Callable[..., Any], mixed_tables: tuple
) -> None:
    got = check_partitioned(mixed_tables, ["linkability", "inference"])
    link, inference = got.results
    assert link.breakdown["n_success"]["main"] > 0
    assert len(inference.breakdown["columns"]) == 5


def test_singling_out_on_mixed_tables(
    check_partitioned: Callable[..., Any], mixed_tables: tuple
) -> None:
    got = check_partitioned(mixed_tables, ["singling_out", "singling_out_univariate"])
    multi, uni = got.results
    assert multi.breakdown["n_queries"] == 307
    assert uni.breakdown["n_queries"] == 140
