# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from synthrisk.datasets.relational import load_bank
from synthrisk.exceptions import InputError, TableMismatchError
from synthrisk.relational import evaluate_tables, read_tables


def test_read_tables_reads_csv_and_parquet_by_name(tmp_path: Path) -> None:
    bank = load_bank(n_customers=30, seed=0)
    bank.real["customers"].to_csv(tmp_path / "customers.csv", index=False)
    bank.real["accounts"].to_parquet(tmp_path / "accounts.parquet")
    bank.real["transactions"].to_csv(tmp_path / "transactions.csv.gz", index=False)
    (tmp_path / "notes.txt.md").write_text("not a table", encoding="utf-8")
    tables = read_tables(tmp_path)
    assert list(tables) == ["accounts", "customers", "transactions"]
    assert len(tables["transactions"]) == len(bank.real["transactions"])
    pd.testing.assert_frame_equal(
        tables["accounts"], bank.real["accounts"], check_dtype=False
    )
    chosen = read_tables(tmp_path, tables=["customers", "accounts"])
    assert list(chosen) == ["customers", "accounts"]
    # what it reads is evaluated as it is
    report = evaluate_tables(
        tables,
        bank.synthetic["null"],
        metadata=bank.metadata,
        metrics=["dcr_baseline_protection"],
        table_metrics=[],
    )
    assert report.n_people["real"] == 24


def test_read_tables_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        read_tables(tmp_path / "nowhere", name="real")
    with pytest.raises(InputError, match="holds no table file"):
        read_tables(tmp_path)
    pd.DataFrame({"a": [1]}).to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(
        TableMismatchError, match=r"no file for table 'u'.*save it as u\.csv"
    ):
        read_tables(tmp_path, tables=["t", "u"])
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "t.parquet")
    with pytest.raises(InputError, match="two files of table 't'"):
        read_tables(tmp_path)


def test_read_tables_reads_a_parquet_dataset_folder_as_one_table(
    tmp_path: Path,
) -> None:
    bank = load_bank(n_customers=30, seed=0)
    bank.real["customers"].to_csv(tmp_path / "customers.csv", index=False)
    bank.real["accounts"].to_parquet(tmp_path / "accounts.parquet")
    parts = tmp_path / "transactions"
    parts.mkdir()
    transactions = bank.real["transactions"]
    half = len(transactions) // 2
    transactions.iloc[:half].to_parquet(parts / "part-0.parquet")
    transactions.iloc[half:].to_parquet(parts / "part-1.parquet")
    (tmp_path / "notes").mkdir()  # a folder without Parquet files is no table
    (tmp_path / "notes" / "readme.csv").write_text("a\n1\n", encoding="utf-8")
    tables = read_tables(tmp_path)
    assert list(tables) == ["accounts", "customers", "transactions"]
    pd.testing.assert_frame_equal(
        tables["transactions"].reset_index(drop=True),
        transactions.reset_index(drop=True),
        check_dtype=False,
    )
    # Spark's naming: a folder named like a Parquet file
    (tmp_path / "transactions").rename(tmp_path / "transactions.parquet")
    assert len(read_tables(tmp_path)["transactions"]) == len(transactions)
    # a dataset and a file of the same table: one of them must go
    transactions.to_csv(tmp_path / "transactions.csv", index=False)
    with pytest.raises(InputError, match="two files of table 'transactions'"):
        read_tables(tmp_path)


def test_a_parquet_dataset_that_cannot_be_read_is_an_input_error(
    tmp_path: Path,
) -> None:
    parts = tmp_path / "events"
    parts.mkdir()
    (parts / "part-0.parquet").write_bytes(b"not parquet")
    with pytest.raises(
        InputError, match=r"cannot read the real table 'events' Parquet"
    ):
        read_tables(tmp_path, name="real")
