# SPDX-License-Identifier: BSD-3-Clause
"""Tables that do not fit one machine: Parquet datasets, CSV globs and ``dask.dataframe``.

:func:`read_dataset` returns a lazy ``dask.dataframe.DataFrame``; nothing is read on the
driver beyond file footers and, for CSV, the first block (to learn the columns).
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

from synthrisk._optional import import_optional
from synthrisk.exceptions import InputError

__all__ = ["is_dataset", "read_dataset"]

_PARQUET = (".parquet", ".pq")
_CSV = (".csv", ".tsv", ".csv.gz", ".tsv.gz", ".csv.bz2")


def is_dataset(source: Any) -> bool:
    """True for a ``dask.dataframe``, a folder, or a glob pattern that is not a file's name."""
    if type(source).__module__.split(".")[0] == "dask":
        return True
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        try:
            if Path(text).is_file():  # a file whose name has brackets: not a glob
                return False
            is_dir = Path(text).is_dir()
        except OSError:  # a name the system refuses: the reader says so
            return False
        return is_dir or any(ch in text for ch in "*?[")
    return False


def read_dataset(source: Any, *, name: str = "table") -> Any:
    """A partitioned table as a ``dask.dataframe.DataFrame``.

    Parameters
    ----------
    source : dask DataFrame, str or path
        A ``dask.dataframe`` (returned as is), a folder of Parquet files (a Parquet
        dataset, hive partitions included), a folder of CSV files, or a glob pattern
        such as ``"claims/part-*.parquet"`` or ``"claims/*.csv.gz"``; a single file
        works too. Each CSV file is one partition: split very large CSV files, or
        convert them to Parquet, to spread the work.
    name : str, default="table"
        The table's role, for error messages.

    Raises
    ------
    InputError
        No file matches, mixed or unsupported file types, or a file cannot be read.
    """
    dask = import_optional("dask", extra="dask")
    dd = import_optional("dask.dataframe", extra="dask")
    if type(source).__module__.split(".")[0] == "dask":
        return source
    text = os.fspath(source)
    path = Path(text)
    if path.is_dir():
        files = sorted(str(p) for p in path.rglob("*") if p.is_file())
        files = [f for f in files if not Path(f).name.startswith((".", "_"))]
    else:
        files = sorted(glob.glob(text))
    if not files:
        msg = f"no file matches the `{name}` dataset {text!r}; give a folder, a glob such as 'data/*.parquet', or a file."
        raise InputError(msg)
    kinds = {_kind(f) for f in files}
    if None in kinds or len(kinds) != 1:
        odd = sorted({Path(f).name for f in files if _kind(f) is None})[:3]
        msg = (
            f"the `{name}` dataset {text!r} must hold only Parquet (.parquet) or only CSV "
            f"(.csv, .tsv, .csv.gz) files; found {odd or sorted(k for k in kinds if k)}."
        )
        raise InputError(msg)
    kind = str(kinds.pop())
    try:
        if kind == "parquet":
            target = text if path.is_dir() else files
            return dd.read_parquet(target)
        sep = "\t" if all(".tsv" in f.lower() for f in files) else ","
        # one partition per file, each parsed by pandas on its own exactly as the
        # in-memory reader does (no dtype guessed from the first block and forced
        # on the others, which turns a later block's missing values into errors
        # or wrong values); the schema rules then normalise every partition alike
        meta = _read_csv(files[0], sep=sep, nrows=100)
        # and no conversion of object columns to strings (it would turn booleans
        # and numbers mixed with text into text)
        with dask.config.set({"dataframe.convert-string": False}):
            return dd.from_map(
                _read_csv, files, sep=sep, meta=meta, enforce_metadata=False
            )
    except Exception as exc:  # every reader failure becomes one clear message
        msg = (
            f"the `{name}` dataset {text!r} could not be read as {kind.upper()}: {exc}"
        )
        raise InputError(msg) from None


def _read_csv(file: str, *, sep: str, nrows: int | None = None) -> Any:
    import pandas as pd

    return pd.read_csv(file, sep=sep, low_memory=False, nrows=nrows)


def _kind(file: str) -> str | None:
    lower = file.lower()
    if lower.endswith(_PARQUET):
        return "parquet"
    if lower.endswith(_CSV):
        return "csv"
    return None
