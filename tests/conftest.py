# SPDX-License-Identifier: BSD-3-Clause
"""Shared fixtures: a seeded generator and small mixed-type tables."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from tests._demo_run import DemoRun, run_demo


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20241122)


def partition_fingerprint() -> str:
    """Which of 171 equal values ``numpy.argpartition`` keeps among the 10 smallest.

    NumPy partitions with AVX-512, AVX2 or plain code as the CPU allows, and each keeps
    other rows among ties; so does scikit-learn's brute-force neighbour search, and
    with it SDMetrics' ``CategoricalKNN``. The same function files the goldens of
    ``scripts/record_goldens_sdmetrics_ties.py`` (``scripts/_reference.py``).
    """
    values = (np.arange(512) * 7919 % 3).astype(np.float64)
    kept = np.sort(np.argpartition(values, 9)[:10]).astype(np.int64)
    return hashlib.sha1(kept.tobytes()).hexdigest()[:12]


def _blas_fingerprint() -> str:
    """How this process's BLAS rounds what scikit-learn's Euclidean search asks of it.

    One-thread ``dgemm`` (``-2 X Y^T`` as scikit-learn issues it) and ``ddot`` norms of
    fixed random values; OpenBLAS's kernels (``OPENBLAS_CORETYPE``) round them
    differently. The same function files the goldens of
    ``scripts/record_goldens_apt_ties.py`` (``scripts/_reference.py``).
    """
    from scipy.linalg.blas import ddot, dgemm
    from threadpoolctl import threadpool_limits

    g = np.random.default_rng(0)
    digest = hashlib.sha1()
    with threadpool_limits(limits=1, user_api="blas"):
        shapes = ((256, 256, 24), (44, 44, 24), (256, 44, 20), (44, 256, 20), (7, 5, 3))
        for n_x, n_y, p in shapes:
            x, y = g.normal(size=(n_x, p)), g.normal(size=(n_y, p))
            digest.update(dgemm(-2.0, y.T, x.T, trans_a=1, trans_b=0).T.tobytes())
            digest.update(np.array([ddot(row, row) for row in x]).tobytes())
    return digest.hexdigest()[:12]


def _exp_fingerprint() -> str:
    """How NumPy's ``exp`` rounds here: its AVX-512 code and the others differ in the last bit."""
    values = np.exp(-np.linspace(0.0, 8.0, 10_007))
    return hashlib.sha1(values.tobytes()).hexdigest()[:12]


@pytest.fixture(scope="session")
def rounding_fingerprint() -> str:
    """How this process rounds scikit-learn's Euclidean search (BLAS) and NumPy's ``exp``,
    as ``scripts/record_goldens_apt_ties.py`` files its runs."""
    return f"{_blas_fingerprint()}/{_exp_fingerprint()}"


_TIE_GOLDENS = (
    Path(__file__).parent / "metrics" / "data" / "sdmetrics_ties" / "goldens.json"
)


@pytest.fixture(scope="session")
def numpy_partition() -> str:
    """:func:`partition_fingerprint` of this process."""
    return partition_fingerprint()


@pytest.fixture(scope="session")
def sdmetrics_on_this_partition() -> dict[str, dict[str, Any]] | None:
    """SDMetrics' recorded categorical attackers on the tied cases, for the way NumPy
    partitions ties on this machine; None where no recorded run partitioned this way."""
    goldens = json.loads(_TIE_GOLDENS.read_text(encoding="utf-8"))
    entry = goldens["by_partition"].get(partition_fingerprint())
    return None if entry is None else entry["cases"]


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


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """``synthrisk demo --rows 600``, run once per test process (three tests read it).

    Tests read its files and must not modify them.
    """
    return run_demo(tmp_path_factory.mktemp("demo-run") / "d")
