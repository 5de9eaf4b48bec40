# SPDX-License-Identifier: BSD-3-Clause
"""Reading related tables from a folder: one CSV or Parquet file per table, named by table.

A table may also be a Parquet dataset: a sub-folder named by the table (``transactions/``
or ``transactions.parquet/``) holding its Parquet files (``part-0.parquet`` …, hive
partitions included), as Spark, Dask or pyarrow write them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from synthrisk.exceptions import InputError, TableMismatchError
from synthrisk.io import read_table

__all__ = ["TABLE_SUFFIXES", "read_tables"]

#: the file endings read as tables (compressed CSV too)
TABLE_SUFFIXES = (
    ".csv",
    ".csv.gz",
    ".csv.bz2",
    ".csv.zip",
    ".csv.xz",
    ".tsv",
    ".parquet",
    ".pq",
)


_PARQUET = (".parquet", ".pq")


def _parquet_dataset(path: Path) -> bool:
    """True for a folder that holds Parquet files (at any depth)."""
    return any(
        f.is_file() and f.name.lower().endswith(_PARQUET) for f in path.rglob("*")
    )


def _read_dataset(path: Path, name: str) -> pd.DataFrame:
    """A Parquet dataset, read whole (pyarrow's errors are ValueError or OSError)."""
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError, TypeError) as exc:
        msg = (
            f"cannot read the {name} Parquet dataset {str(path)!r}: {exc}. Give a folder "
            "holding Parquet files of one table with the same columns."
        )
        raise InputError(msg) from None


def _table_name(path: Path) -> str | None:
    if path.is_dir():
        if not _parquet_dataset(path):
            return None
        for suffix in _PARQUET:
            if path.name.lower().endswith(suffix):
                return path.name[: -len(suffix)]
        return path.name
    name = path.name
    for suffix in sorted(TABLE_SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return None


def read_tables(
    folder: str | os.PathLike[str],
    *,
    tables: Iterable[str] | None = None,
    name: str = "tables",
) -> dict[str, pd.DataFrame]:
    """Read every table of a folder: ``customers.csv``, ``accounts.parquet`` … by table name.

    Each file is read with :func:`synthrisk.io.read_table` (CSV, TSV, compressed CSV
    or Parquet); the table's name is the file name without its ending. A sub-folder
    holding Parquet files is one table, a Parquet dataset (``transactions/``, or
    ``transactions.parquet/``), read whole; sub-folders without Parquet files are
    ignored.

    Parameters
    ----------
    folder : path
        The folder that holds one file per table.
    tables : iterable of str, default=None
        The tables to read (the metadata's); None reads every table file.
    name : str, default="tables"
        The side's role (``real``, ``synthetic``, ``holdout``), used in messages.

    Returns
    -------
    dict of str to DataFrame
        By table name, in the order of ``tables`` (or sorted by name).

    Raises
    ------
    InputError
        The folder does not exist, holds no table file, or holds two files of one table.
    TableMismatchError
        A table named in ``tables`` has no file.
    """
    path = Path(folder)
    if not path.is_dir():
        msg = f"the {name} folder {str(path)!r} does not exist (give a folder holding one file per table)."
        raise InputError(msg)
    files: dict[str, Path] = {}
    for entry in sorted(path.iterdir()):
        table = _table_name(entry) if entry.is_file() or entry.is_dir() else None
        if table is None:
            continue
        if table in files:
            msg = (
                f"the {name} folder {str(path)!r} holds two files of table {table!r} "
                f"({files[table].name}, {entry.name}); keep one."
            )
            raise InputError(msg)
        files[table] = entry
    wanted = sorted(files) if tables is None else list(tables)
    if not files:
        msg = (
            f"the {name} folder {str(path)!r} holds no table file (endings: "
            f"{', '.join(TABLE_SUFFIXES)})."
        )
        raise InputError(msg)
    missing = [t for t in wanted if t not in files]
    if missing:
        msg = (
            f"the {name} folder {str(path)!r} has no file for table {missing[0]!r} (found: "
            f"{sorted(files)}); save it as {missing[0]}.csv or {missing[0]}.parquet."
        )
        raise TableMismatchError(msg)
    return {
        t: _read_dataset(files[t], f"{name} table {t!r}")
        if files[t].is_dir()
        else read_table(files[t], name=f"{name} table {t!r}")
        for t in wanted
    }
