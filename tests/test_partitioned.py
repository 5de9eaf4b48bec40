# SPDX-License-Identifier: BSD-3-Clause
"""Partitioned inputs (Parquet datasets, CSV globs, dask DataFrames) on a real cluster:
the encoded partitions and the report equal the in-memory path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk import evaluate
from synthrisk.exceptions import InputError
from synthrisk.schema import prepare_tables

pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

from synthrisk.cluster import evaluate_dataset  # noqa: E402
from synthrisk.io.dataset import read_dataset  # noqa: E402
from synthrisk.neighbors.dask_backend import dask_settings  # noqa: E402
from synthrisk.schema.partitioned import prepare_partitioned  # noqa: E402

pytestmark = pytest.mark.dask

NAMES = ("real", "synthetic", "holdout")


def _write(tmp_path: Path, frames: tuple, fmt: str) -> list[str]:
    """Each table as three files in its own folder; returns the glob of each."""
    globs = []
    for name, frame in zip(NAMES, frames, strict=True):
        folder = tmp_path / fmt / name
        folder.mkdir(parents=True)
        for i, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
            part = frame.iloc[rows]
            if fmt == "parquet":
                part.to_parquet(folder / f"part-{i}.parquet")
            else:
                part.to_csv(folder / f"part-{i}.csv", index=False)
        globs.append(str(folder / f"*.{fmt}"))
    return globs


def _comparable(report: Any) -> dict[str, Any]:
    data = report.to_dict(include_records=True)
    for result in data["results"]:
        result.pop("seconds")
    return data


def test_encoded_partitions_equal_in_memory_encoding(
    dask_client: Any, mixed_tables: tuple, tmp_path: Path
) -> None:
    globs = _write(tmp_path, mixed_tables, "parquet")
    frames = [read_dataset(g) for g in globs]
    partitioned = prepare_partitioned(*frames, client=dask_client)
    tables = prepare_tables(*mixed_tables)
    assert partitioned.schema == tables.schema
    for name in NAMES:
        table = partitioned.encoded(name)
        parts = dask_client.gather(table.partitions.parts)
        assert table.partitions.rows == tuple(len(p[0]) for p in parts)
        assert all(p[1].dtype == np.int32 for p in parts)
        expected = tables.encoded(name)
        numeric = np.concatenate([p[0] for p in parts]).astype(np.float64)
        np.testing.assert_array_equal(numeric, expected.numeric)
        np.testing.assert_array_equal(
            np.concatenate([p[1] for p in parts]), expected.codes
        )
        assert table.domain.n_rows == expected.n_rows
        np.testing.assert_array_equal(
            table.domain.numeric_missing, np.isnan(expected.numeric).sum(0)
        )


def test_float32_exact_columns_are_stored_compactly(dask_client: Any) -> None:
    frame = pd.DataFrame({"x": np.arange(40) * 0.5, "c": list("ab") * 20})
    real = dd.from_pandas(frame, npartitions=2)
    partitioned = prepare_partitioned(real, real, client=dask_client)
    parts = dask_client.gather(partitioned.real.partitions.parts)
    assert [p[0].dtype for p in parts] == [np.float32, np.float32]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_dataset_report_equals_in_memory(
    dask_client: Any, mixed_tables: tuple, tmp_path: Path, fmt: str
) -> None:
    globs = _write(tmp_path, mixed_tables, fmt)
    frames = mixed_tables
    if fmt == "csv":  # the in-memory run reads the same CSV text
        frames = tuple(
            pd.concat(
                [pd.read_csv(p) for p in sorted(Path(g).parent.glob("*.csv"))],
                ignore_index=True,
            )
            for g in globs
        )
    metrics = (
        None
        if fmt == "parquet"
        else ["dcr_baseline_protection", "dcr_overfitting_protection", "nndr"]
    )
    expected = evaluate(*frames, seed=3, metrics=metrics)
    # a partitioned reference: every reference partition is searched and merged
    with dask_settings(reference_rows=40, partition_rows=30):
        got = evaluate_dataset(*globs, seed=3, metrics=metrics, client=dask_client)
    assert _comparable(got) == _comparable(expected)


def test_sampled_metrics_say_so(dask_client: Any, mixed_tables: tuple) -> None:
    frames = [dd.from_pandas(f, npartitions=2) for f in mixed_tables]
    report = evaluate_dataset(
        *frames,
        metrics={"dcr_overfitting_protection": {}, "nndr": {"distance": "gower"}},
        client=dask_client,
        sample_rows=50,
    )
    full, sampled = report.results
    assert not any("sample" in w for w in full.warnings)
    assert (
        "seeded random sample (50 of 120 real rows, 50 of 90 synthetic rows, 50 of 100 holdout rows; seed 0)"
        in sampled.warnings[-1]
    )


def test_read_dataset_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no file matches the `real` dataset"):
        read_dataset(str(tmp_path / "*.parquet"), name="real")
    (tmp_path / "a.csv").write_text("x\n1\n")
    (tmp_path / "b.json").write_text("{}")
    with pytest.raises(InputError, match=r"must hold only Parquet .* or only CSV"):
        read_dataset(tmp_path, name="synthetic")


def test_subsampled_dcr_gathers_rows_in_order(
    dask_client: Any, mixed_tables: tuple
) -> None:
    """``num_rows_subsample`` takes a seeded subset of the partitioned synthetic rows."""
    frames = [dd.from_pandas(f, npartitions=3) for f in mixed_tables]
    metrics = {
        "dcr_baseline_protection": {"num_rows_subsample": 40, "num_iterations": 2},
        "dcr_overfitting_protection": {
            "num_rows_subsample": 30,
            "subsample_real": True,
        },
    }
    expected = evaluate(*mixed_tables, metrics=metrics, seed=4)
    got = evaluate_dataset(*frames, metrics=metrics, seed=4, client=dask_client)
    assert _comparable(got) == _comparable(expected)


def test_dcr_metrics_run_on_every_row(
    check_partitioned: Any, mixed_tables: tuple
) -> None:
    check_partitioned(
        mixed_tables, ["dcr_baseline_protection", "dcr_overfitting_protection"]
    )


def _column_sums(numeric: np.ndarray, codes: np.ndarray, weight: np.ndarray) -> Any:
    return np.nansum(numeric, axis=0) * weight[: numeric.shape[1]], codes.shape[0]


def test_select_and_map_partitions(dask_client: Any, mixed_tables: tuple) -> None:
    frames = [dd.from_pandas(f, npartitions=3) for f in mixed_tables]
    partitioned = prepare_partitioned(*frames, client=dask_client)
    expected = prepare_tables(*mixed_tables).encoded("real")
    table = partitioned.encoded("real")
    columns = [expected.categorical_names[0], expected.numeric_names[-1]]
    chosen = table.select(columns)
    assert chosen.numeric_names == (expected.numeric_names[-1],)
    assert chosen.categorical_names == (expected.categorical_names[0],)
    assert chosen.n_rows == expected.n_rows
    assert chosen.domain.high[0] == np.nanmax(expected.numeric[:, -1])
    gathered = chosen.take(np.array([5, 0, 119]))
    want = expected.select(columns).take(np.array([5, 0, 119]))
    np.testing.assert_array_equal(gathered.numeric, want.numeric)
    np.testing.assert_array_equal(gathered.codes, want.codes)
    # array arguments above the scatter threshold travel once, results come in row order
    weight = np.full(200_000, 2.0)  # 1.6 MB: scattered
    pieces = table.map_partitions(_column_sums, weight)
    assert [n for _, n in pieces] == list(table.partitions.rows)
    np.testing.assert_allclose(
        sum(s for s, _ in pieces), np.nansum(expected.numeric, axis=0) * 2.0
    )


def test_random_baseline_blocks_are_drawn_on_the_workers(
    check_partitioned: Any, mixed_tables: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The random baseline comes in seeded blocks: several blocks drawn on the workers
    give the in-memory rows, and the baseline is never built on the driver."""
    import synthrisk.metrics.dcr as dcr_module

    monkeypatch.setattr(dcr_module, "RANDOM_BLOCK_ROWS", 32)
    report = check_partitioned(mixed_tables, ["dcr_baseline_protection"])
    records = report.results[0].records["random_to_real"]
    assert records.index.shape == (90,)
    tables = prepare_tables(*mixed_tables)
    random = dcr_module.random_baseline_table(tables, 90, np.random.default_rng(1))
    first = dcr_module.random_baseline_table(tables, 32, np.random.default_rng(1))
    # block 0 does not depend on how many rows follow it
    np.testing.assert_array_equal(random.numeric[:32], first.numeric)
    np.testing.assert_array_equal(random.codes[:32], first.codes)
