# SPDX-License-Identifier: BSD-3-Clause
"""The whole assessment on a real Dask cluster equals the in-memory run."""

from __future__ import annotations

from typing import Any

import pytest

from synthrisk import evaluate
from synthrisk.datasets import load_demo

pytest.importorskip("distributed")

from synthrisk.neighbors.dask_backend import dask_settings

pytestmark = pytest.mark.dask


def _comparable(report: Any) -> dict[str, Any]:
    data = report.to_dict(include_records=True)
    for result in data["results"]:
        result.pop("seconds")
    return data


@pytest.mark.parametrize("reference_rows", [None, 40])
def test_mixed_tables_on_cluster_equal_in_memory(
    dask_client: Any, mixed_tables: tuple, reference_rows: int | None
) -> None:
    real, synthetic, holdout = mixed_tables
    expected = evaluate(real, synthetic, holdout, seed=3)
    with dask_settings(partition_rows=32, reference_rows=reference_rows):
        got = evaluate(real, synthetic, holdout, seed=3, client=dask_client)
    assert _comparable(got) == _comparable(expected)


def test_demo_via_scheduler_address_equals_in_memory(dask_client: Any) -> None:
    demo = load_demo(n_rows=700, seed=1)
    metrics = [
        "dcr_baseline_protection",
        "dcr_overfitting_protection",
        "nndr",
        "dcr_share",
    ]
    args = (demo.real, demo.synthetic["partial"], demo.holdout)
    expected = evaluate(*args, metrics=metrics, seed=5)
    address = dask_client.scheduler.address
    with dask_settings(partition_rows=100, reference_rows=64):
        got = evaluate(*args, metrics=metrics, seed=5, scheduler=address)
    assert _comparable(got) == _comparable(expected)


def test_disclosure_and_attacks_on_cluster_equal_in_memory(
    dask_client: Any, mixed_tables: tuple
) -> None:
    """CAP counts and the Gower searches of the attacks run with the dask backend."""
    real, synthetic, holdout = mixed_tables
    metrics = {
        "categorical_generalized_cap": {
            "key_fields": ["cat"],
            "sensitive_fields": ["flag"],
        },
        "inference": {"secret": "cat", "n_attacks": 40},
    }
    expected = evaluate(real, synthetic, holdout, metrics=metrics, seed=2)
    with dask_settings(partition_rows=16, reference_rows=30):
        got = evaluate(
            real, synthetic, holdout, metrics=metrics, seed=2, client=dask_client
        )
    assert _comparable(got) == _comparable(expected)
