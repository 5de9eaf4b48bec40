# SPDX-License-Identifier: BSD-3-Clause
"""Input handling shared by SDMetrics' drop-in classes: tables, metadata, field lists.

SDMetrics accepts a DataFrame or a ``{table_name: DataFrame}`` dict for each table, a
single- or multi-table metadata dict with an optional ``table_name``, and raises
``TypeError`` for inputs of the wrong type and ``ValueError`` for wrong values; these
helpers do the same, with messages that name the parameter and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from synthrisk.exceptions import ParameterError, SchemaMismatchError
from synthrisk.schema.tables import as_pandas

__all__ = [
    "ColumnNotFoundError",
    "as_frame",
    "field_lists",
    "frames",
    "get_table_data_from_dict",
    "single_table_metadata",
]


class ColumnNotFoundError(ParameterError, KeyError):
    """A named column is not in the table: SDMetrics raises ``KeyError`` here."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def get_table_data_from_dict(data: Any) -> Any:
    """SDMetrics' ``get_table_data_from_dict``: the first table of a ``{name: DataFrame}`` dict."""
    if isinstance(data, Mapping) and len(data) > 0:
        return data[next(iter(data))]
    return data


def as_frame(data: Any, *, name: str) -> pd.DataFrame:
    """A pandas DataFrame with string column names from a table or ``{table_name: table}``."""
    return as_pandas(get_table_data_from_dict(data), name=name).rename(columns=str)


def frames(real_data: Any, synthetic_data: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The real and synthetic tables, the synthetic columns in the real table's order."""
    real = as_frame(real_data, name="real_data")
    synthetic = as_frame(synthetic_data, name="synthetic_data")
    if set(real.columns) != set(synthetic.columns):
        only_real = sorted(set(real.columns) - set(synthetic.columns))
        only_syn = sorted(set(synthetic.columns) - set(real.columns))
        msg = (
            "`real_data` and `synthetic_data` must have the same columns; "
            f"only in real_data: {only_real}, only in synthetic_data: {only_syn}."
        )
        raise SchemaMismatchError(msg)
    return real, synthetic[list(real.columns)]


def single_table_metadata(
    metadata: Any, table_name: str | None
) -> dict[str, Any] | None:
    """SDMetrics' choice of one table's metadata from a single- or multi-table dict.

    ``None`` stays ``None``. As in SDMetrics, a ``metadata`` that is not a dict or a
    ``table_name`` that is not a string is a ``TypeError``; a multi-table dict without
    tables, with several tables and no ``table_name``, or without the named table is a
    ``ValueError`` (:class:`~synthrisk.exceptions.ParameterError`).
    """
    if table_name is not None and not isinstance(table_name, str):
        msg = f"`table_name` must be a string; got {table_name!r}."
        raise TypeError(msg)
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        msg = (
            f"`metadata` must be a dict; got {type(metadata).__name__}. For an SDV metadata "
            "object, pass its `.to_dict()`."
        )
        raise TypeError(msg)
    if "tables" not in metadata:
        return dict(metadata)
    tables = metadata["tables"]
    names = list(tables) if isinstance(tables, Mapping) else []
    if not names:
        msg = "`metadata` does not contain any tables."
        raise ParameterError(msg)
    if table_name is None:
        if len(names) > 1:
            msg = f"`metadata` contains more than one table {names}; give the `table_name`."
            raise ParameterError(msg)
        table_name = names[0]
    elif table_name not in tables:
        msg = f"`table_name` {table_name!r} is not in the metadata; tables: {names}."
        raise ParameterError(msg)
    return dict(tables[table_name])


def field_lists(
    meta: Mapping[str, Any], key_fields: Any, sensitive_fields: Any
) -> tuple[list[str], list[str]]:
    """SDMetrics' rules: metadata entries win; a missing list is a ``TypeError``, an empty one a ``ValueError``."""
    if "key_fields" in meta:
        key_fields = meta["key_fields"]
    elif key_fields is None:
        msg = "`key_fields` must be passed either directly or inside `metadata`."
        raise TypeError(msg)
    if "sensitive_fields" in meta:
        sensitive_fields = meta["sensitive_fields"]
    elif sensitive_fields is None:
        msg = "`sensitive_fields` must be passed either directly or inside `metadata`."
        raise TypeError(msg)
    if isinstance(key_fields, str):
        key_fields = [key_fields]
    if isinstance(sensitive_fields, str):
        sensitive_fields = [sensitive_fields]
    if len(key_fields) == 0 or len(sensitive_fields) == 0:
        msg = "`key_fields` or `sensitive_fields` is empty; name at least one column in each."
        raise ParameterError(msg)
    return [str(c) for c in key_fields], [str(c) for c in sensitive_fields]
