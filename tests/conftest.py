# SPDX-License-Identifier: BSD-3-Clause
"""Shared fixtures: a seeded generator and small mixed-type tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20241122)


def make_mixed(n: int, seed: int, *, prefix: str = "r") -> pd.DataFrame:
    """A small mixed-type table with missing values in every kind of column."""
    g = np.random.default_rng(seed)
    num = np.round(g.normal(40, 12, n), 1)
    num[g.random(n) < 0.1] = np.nan
    cat = pd.Series(g.choice(["a", "b", "c"], n), dtype=object)
    cat[g.random(n) < 0.1] = None
    flag = pd.array(g.random(n) < 0.4, dtype="boolean")
    flag[g.random(n) < 0.05] = pd.NA
    when = pd.Series(
        pd.Timestamp("2021-01-01") + pd.to_timedelta(g.integers(0, 300, n), unit="D")
    )
    when[g.random(n) < 0.05] = pd.NaT
    return pd.DataFrame(
        {
            "user_id": [f"{prefix}{i}" for i in range(n)],
            "num": num,
            "count": pd.array(g.integers(0, 9, n), dtype="Int64"),
            "cat": cat,
            "flag": flag,
            "when": when,
        }
    )


@pytest.fixture
def mixed_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return (
        make_mixed(120, 1, prefix="r"),
        make_mixed(90, 2, prefix="s"),
        make_mixed(100, 3, prefix="h"),
    )


@pytest.fixture(scope="session")
def dask_client():
    """A real Dask cluster for the whole session: two single-threaded worker processes."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield client


def _comparable_report(report: Any) -> dict[str, Any]:
    data = report.to_dict(include_records=True)
    for result in data["results"]:
        result.pop("seconds")
    return data


@pytest.fixture
def check_partitioned(
    dask_client: Any, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Any]:
    """``check(frames, metrics, seed=3)``: the metrics run on every row of partitioned tables
    (a partitioned reference, a sample too small to be used) and their report equals the
    in-memory one, records included (every record array memory-mapped, as large ones
    are, linkability's targets gathered in blocks). Returns the partitioned report."""
    import synthrisk._spill
    import synthrisk.metrics.attacks.linkability

    monkeypatch.setattr(synthrisk._spill, "SPILL_BYTES", 1)
    # linkability's targets in blocks of 7 rows: each block must get the same tie order
    monkeypatch.setattr(synthrisk.metrics.attacks.linkability, "TARGET_BLOCK", 7)
    dd = pytest.importorskip("dask.dataframe")
    from synthrisk import evaluate
    from synthrisk.cluster import evaluate_dataset
    from synthrisk.neighbors.dask_backend import dask_settings

    def check(
        frames: tuple, metrics: Any, *, seed: int = 3, npartitions: int = 3
    ) -> Any:
        expected = evaluate(*frames, metrics=metrics, seed=seed)
        parts = [
            None if f is None else dd.from_pandas(f, npartitions=npartitions)
            for f in frames
        ]
        with dask_settings(reference_rows=40, partition_rows=30):
            got = evaluate_dataset(
                *parts, metrics=metrics, seed=seed, client=dask_client, sample_rows=5
            )
        for result in got.results:
            assert not any("seeded random sample" in w for w in result.warnings), (
                f"{result.metric} ran on a sample, not on every row"
            )
        assert _comparable_report(got) == _comparable_report(expected)
        return got

    return check
