# SPDX-License-Identifier: BSD-3-Clause
"""Shadow runs on a Dask cluster: the same result, bit for bit, as in this process."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from tests.audit._generators import Copier, population

from synthrisk.audit import audit
from synthrisk.exceptions import ParameterError

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    data = population(300, 11)
    return data.iloc[:60].reset_index(drop=True), data.iloc[60:].reset_index(drop=True)


def _comparable(result) -> dict:
    out = json.loads(result.to_json())
    out["settings"].pop("n_jobs")
    out["settings"].pop("dask")
    out["runs"] = {k: v for k, v in out["runs"].items() if not k.endswith("seconds")}
    return out


def test_runs_on_a_dask_cluster_give_the_same_result(tables) -> None:
    real, holdout = tables
    options = {"n_targets": 6, "n_runs": 24, "train_size": 40, "seed": 2}
    local = audit(Copier(0.5), real, holdout, **options)  # type: ignore[arg-type]
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        on_dask = audit(Copier(0.5), real, holdout, client=client, **options)  # type: ignore[arg-type]
        assert client.status == "running"  # the caller's client stays open
    assert on_dask.settings["dask"] is True
    assert on_dask.settings["n_jobs"] == 2  # the cluster's threads
    assert local.settings["dask"] is False
    assert on_dask.n_runs == 24
    assert _comparable(on_dask) == _comparable(local)


def test_client_and_scheduler_are_exclusive(tables) -> None:
    real, holdout = tables
    with pytest.raises(ParameterError, match="either `client` or `scheduler`"):
        audit(Copier(0.5), real, holdout, client=object(), scheduler="tcp://x:1")
