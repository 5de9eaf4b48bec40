# SPDX-License-Identifier: BSD-3-Clause
"""Column kinds, validation of input tables and their encoding (the one home for dtypes)."""

from __future__ import annotations

from synthrisk.schema.encoding import EncodedTable, Encoder
from synthrisk.schema.schema import (
    MODELABLE_KINDS,
    ColumnSpec,
    Schema,
    infer_schema,
    schema_from_metadata,
)
from synthrisk.schema.tables import (
    TABLE_NAMES,
    Tables,
    as_pandas,
    parse_dates,
    prepare_tables,
)

__all__ = [
    "MODELABLE_KINDS",
    "TABLE_NAMES",
    "ColumnSpec",
    "EncodedTable",
    "Encoder",
    "Schema",
    "Tables",
    "as_pandas",
    "infer_schema",
    "parse_dates",
    "prepare_tables",
    "schema_from_metadata",
]
