# SPDX-License-Identifier: BSD-3-Clause
"""The CLI and run files on a Dask cluster: --scheduler, compute.scheduler, dataset inputs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from synthrisk.cli import main
from synthrisk.datasets import load_demo
from synthrisk.exceptions import ConfigError
from synthrisk.io.run_file import parse_config

pytestmark = pytest.mark.dask


def test_unreachable_scheduler_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("distributed")
    from synthrisk.neighbors import _compute

    monkeypatch.setattr(_compute, "CONNECT_TIMEOUT", 1.0)  # nothing listens on port 9
    demo = load_demo(n_rows=200, seed=1)
    demo.real.to_csv(tmp_path / "real.csv", index=False)
    demo.synthetic["fresh"].to_csv(tmp_path / "syn.csv", index=False)
    code = main([
        "evaluate", "--real", str(tmp_path / "real.csv"), "--synthetic", str(tmp_path / "syn.csv"),
        "--scheduler", "tcp://127.0.0.1:9", "--quiet", "--metrics", "dcr_baseline_protection",
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(
        "synthrisk: error: cannot reach the Dask scheduler at 'tcp://127.0.0.1:9' within 1 s"
    )
    assert "Traceback" not in err


def test_parquet_folders_on_a_scheduler(dask_client: Any, tmp_path: Path) -> None:
    demo = load_demo(n_rows=400, seed=2)
    frames = {
        "real": demo.real,
        "synthetic": demo.synthetic["leaky"],
        "holdout": demo.holdout,
    }
    for name, frame in frames.items():
        (tmp_path / name).mkdir()
        for i, rows in enumerate(np.array_split(np.arange(len(frame)), 2)):
            frame.iloc[rows].to_parquet(tmp_path / name / f"part-{i}.parquet")
    (tmp_path / "meta.json").write_text(json.dumps(demo.metadata))
    out = tmp_path / "report.json"
    code = main([
        "evaluate", "--real", str(tmp_path / "real"), "--synthetic", str(tmp_path / "synthetic"),
        "--holdout", str(tmp_path / "holdout"), "--metadata", str(tmp_path / "meta.json"),
        "--scheduler", dask_client.scheduler.address, "--json", str(out), "--quiet",
        "--metrics", "dcr_overfitting_protection,membership_classification",
        "--sample-rows", "150",
    ])  # fmt: skip
    assert code == 0
    data = json.loads(out.read_text())
    assert data["inputs"]["real"]["rows"] == len(demo.real)
    every_row, sampled = data["results"]
    assert every_row["score"] < 0.5  # the leaky generator copies real rows
    assert not any("sample" in w for w in every_row["warnings"])
    n_real = len(demo.real)
    assert f"seeded random sample (150 of {n_real} real rows" in sampled["warnings"][-1]
    assert "(`--sample-rows`" in sampled["warnings"][-1]


def test_run_file_reads_compute_scheduler(tmp_path: Path) -> None:
    raw = {
        "data": {"real": "r.csv", "synthetic": "s.csv"},
        "compute": {"backend": "dask", "scheduler": "tcp://10.0.0.1:8786"},
    }
    config = parse_config(raw, base=tmp_path)
    assert config.scheduler == "tcp://10.0.0.1:8786"
    assert config.backend == "dask"
    raw["compute"]["scheduler"] = 8786
    with pytest.raises(
        ConfigError, match=r"`compute.scheduler` must be a Dask scheduler address"
    ):
        parse_config(raw, base=tmp_path)


def test_local_cluster_is_sized_to_the_machine() -> None:
    from synthrisk.cluster import local_cluster_size

    cores = len(os.sched_getaffinity(0))
    assert local_cluster_size() == (cores, 1)
    assert local_cluster_size(1) == (1, cores)


@pytest.mark.slow
def test_backend_dask_starts_a_local_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("distributed")
    demo = load_demo(n_rows=300, seed=1)
    demo.real.to_csv(tmp_path / "real.csv", index=False)
    demo.synthetic["leaky"].to_csv(tmp_path / "syn.csv", index=False)
    out = tmp_path / "r.json"
    code = main([
        "evaluate", "--real", str(tmp_path / "real.csv"), "--synthetic", str(tmp_path / "syn.csv"),
        "--backend", "dask", "--quiet", "--metrics", "dcr_baseline_protection", "--json", str(out),
    ])  # fmt: skip
    assert code in (0, 1)
    assert json.loads(out.read_text())["results"][0]["score"] < 0.2


def test_run_file_reads_compute_sample_rows(tmp_path: Path) -> None:
    raw = {
        "data": {"real": "r/", "synthetic": "s/"},
        "compute": {"backend": "dask", "sample_rows": 50_000},
    }
    assert parse_config(raw, base=tmp_path).sample_rows == 50_000
    for bad in (0, -3, 2.5, True, "many"):
        raw["compute"]["sample_rows"] = bad
        with pytest.raises(
            ConfigError, match=r"`compute.sample_rows` must be a positive whole number"
        ):
            parse_config(raw, base=tmp_path)


@pytest.mark.parametrize("value", ["0", "-5"])
def test_sample_rows_must_be_positive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    demo = load_demo(n_rows=100, seed=1)
    demo.real.to_csv(tmp_path / "real.csv", index=False)
    code = main([
        "evaluate", "--real", str(tmp_path / "real.csv"), "--synthetic", str(tmp_path / "real.csv"),
        "--sample-rows", value, "--quiet",
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert (
        err
        == f"synthrisk: error: `sample_rows` must be an integer >= 1; got {value}.\n"
    )
