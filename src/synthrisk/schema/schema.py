# SPDX-License-Identifier: BSD-3-Clause
"""Column kinds: inference from pandas dtypes and parsing of explicit metadata.

Two metadata formats are accepted:

* SDMetrics / SDV single-table metadata::

      {"columns": {"age": {"sdtype": "numerical", "computer_representation": "Int64"},
                   "dob": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
                   "user": {"sdtype": "id"}},
       "primary_key": "user"}

  A multi-table dict (``{"tables": {...}}``) holding exactly one table is accepted too.
* synthrisk's own format: the same layout with ``"kind"`` instead of ``"sdtype"``
  (kinds: numerical, categorical, boolean, datetime, id, pii, text).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from synthrisk.exceptions import SchemaMismatchError

if TYPE_CHECKING:
    from synthrisk._typing import JSONValue

__all__ = [
    "MODELABLE_KINDS",
    "ColumnSpec",
    "Schema",
    "infer_schema",
    "schema_from_metadata",
]

MODELABLE_KINDS = ("numerical", "categorical", "boolean", "datetime")
EXCLUDED_KINDS = ("id", "pii", "text")
ALL_KINDS = MODELABLE_KINDS + EXCLUDED_KINDS

# SDV's sdtypes for personal data (Faker-backed); all are excluded like ``pii``.
_SDV_PII_SDTYPES = frozenset(
    {
        "address",
        "administrative_unit",
        "city",
        "company",
        "country",
        "country_code",
        "credit_card_number",
        "email",
        "first_name",
        "iban",
        "ipv4_address",
        "ipv6_address",
        "job",
        "last_name",
        "latitude",
        "license_plate",
        "longitude",
        "mac_address",
        "name",
        "phone_number",
        "postcode",
        "ssn",
        "state",
        "state_abbr",
        "street_address",
        "swift11",
        "swift8",
        "url",
        "user_agent_string",
        "vin",
        "zipcode",
    }
)
_SDTYPE_TO_KIND = {
    "numerical": "numerical",
    "categorical": "categorical",
    "ordinal": "categorical",
    "boolean": "boolean",
    "datetime": "datetime",
    "id": "id",
    "pii": "pii",
    "text": "text",
    "unknown": "text",
}
_ID_NAME = re.compile(r"(^id$|_id$|^id_|uuid|^key$|^index$)", re.IGNORECASE)
#: words that name a person in a key column (``patient_key``, ``customer``, ``user_id``)
_PERSON_WORDS = frozenset(
    {"id", "key", "uuid", "person", "subject", "patient", "customer", "user", "member"}
)
#: a person key names at most this many rows per person ...
MAX_ROWS_PER_KEY = 200
#: ... and has at least this share of distinct values (a few rows per person on
#: average); a repeating code with few values (``region_id``) is an attribute
MIN_DISTINCT_KEY_SHARE = 0.02
#: pandas' name of a CSV column without a header (a row index saved with the data)
_UNNAMED = re.compile(r"^Unnamed: \d+$")
_ISO_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$"
)


@dataclasses.dataclass(frozen=True)
class ColumnSpec:
    """What synthrisk knows about one column.

    Attributes
    ----------
    name : str
        Column name.
    kind : str
        ``numerical``, ``categorical``, ``boolean``, ``datetime`` (used in distances)
        or ``id``, ``pii``, ``text`` (excluded from distances).
    datetime_format : str or None
        ``strftime`` format of a datetime column stored as strings, or ``"ISO8601"``.
    source : str
        ``"metadata"`` when given by the user, ``"inferred"`` otherwise.
    note : str or None
        Why the kind was inferred as it was, when it is not obvious.
    """

    name: str
    kind: str
    datetime_format: str | None = None
    source: str = "inferred"
    note: str | None = None

    @property
    def excluded(self) -> bool:
        """True when the column is left out of distances and metrics."""
        return self.kind in EXCLUDED_KINDS

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe representation."""
        out: dict[str, JSONValue] = {"kind": self.kind, "source": self.source}
        if self.datetime_format is not None:
            out["datetime_format"] = self.datetime_format
        if self.note is not None:
            out["note"] = self.note
        return out


@dataclasses.dataclass(frozen=True)
class Schema:
    """The kinds of all columns of a set of tables, in table order."""

    columns: tuple[ColumnSpec, ...]
    primary_key: str | None = None

    @property
    def names(self) -> list[str]:
        """All column names, in order."""
        return [c.name for c in self.columns]

    @property
    def modelable(self) -> list[ColumnSpec]:
        """Columns used in distances and metrics, in order."""
        return [c for c in self.columns if not c.excluded]

    @property
    def excluded(self) -> list[ColumnSpec]:
        """Columns left out (id, pii, text)."""
        return [c for c in self.columns if c.excluded]

    def __getitem__(self, name: str) -> ColumnSpec:
        for column in self.columns:
            if column.name == name:
                return column
        msg = f"column {name!r} is not in the schema; columns are {self.names}."
        raise KeyError(msg)

    def to_dict(self) -> dict[str, JSONValue]:
        """synthrisk's own metadata format (accepted back by :func:`schema_from_metadata`)."""
        return {
            "columns": {c.name: c.to_dict() for c in self.columns},
            "primary_key": self.primary_key,
        }


def is_person_key(series: pd.Series, name: str) -> bool:
    """Does the column name people who own several rows (panel or event data)?

    Named like an identifier (``id``, ``person_id``, ``patient_key``, ``user`` …), no
    missing value, its values repeat — several rows per person — but not many times
    (at most ``MAX_ROWS_PER_KEY`` rows per value, and at least
    ``MIN_DISTINCT_KEY_SHARE`` distinct values among the rows): a code such as
    ``region_id`` with a dozen values is an attribute, not a person.
    """
    lowered = str(name).lower()
    words = set(re.split(r"[_\-\s.]+", lowered))
    if not (_ID_NAME.search(lowered) or words & _PERSON_WORDS):
        return False
    if len(series) < 2 or series.isna().any() or series.is_unique:
        return False
    counts = series.value_counts(sort=False)
    return bool(
        int(counts.max()) <= MAX_ROWS_PER_KEY
        and len(counts) >= MIN_DISTINCT_KEY_SHARE * len(series)
    )


def infer_kind(series: pd.Series, name: str) -> ColumnSpec:
    """Infer the kind of one column from its pandas dtype (and, for strings, its values)."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return ColumnSpec(name, "categorical")
    if pd.api.types.is_bool_dtype(dtype):
        return ColumnSpec(name, "boolean")
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return ColumnSpec(name, "datetime")
    if pd.api.types.is_timedelta64_dtype(dtype):
        return ColumnSpec(name, "numerical", note="timedelta, measured in seconds")
    if (
        pd.api.types.is_integer_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype)
    ) and is_person_key(series, name):
        return ColumnSpec(
            name,
            "id",
            note="named like an identifier, a few rows per value: the key of a person with several rows",
        )
    if pd.api.types.is_integer_dtype(dtype):
        non_null = series.dropna()
        if _ID_NAME.search(str(name)) and len(non_null) > 1 and non_null.is_unique:
            return ColumnSpec(
                name,
                "id",
                note="integer column named like an identifier with unique values",
            )
        if _UNNAMED.match(str(name)) and len(non_null) > 1 and non_null.is_unique:
            return ColumnSpec(
                name,
                "id",
                note="unnamed column of unique integers: a saved row index",
            )
        return ColumnSpec(name, "numerical")
    if pd.api.types.is_float_dtype(dtype):
        return ColumnSpec(name, "numerical")
    if pd.api.types.is_complex_dtype(dtype):
        return ColumnSpec(
            name, "categorical"
        )  # rejected with a clear message by validation
    # object / string columns
    non_null = series.dropna()
    sample = non_null.iloc[:1000]
    if len(sample) and all(isinstance(v, decimal.Decimal) for v in sample):
        return ColumnSpec(name, "numerical", note="decimal numbers")
    if len(sample) and all(isinstance(v, datetime.date) for v in sample):
        return ColumnSpec(name, "datetime", note="date objects")
    if len(non_null) and all(isinstance(v, str) for v in non_null.iloc[:1000]):
        strings = non_null.astype(str)
        if strings.str.fullmatch(_ISO_DATE.pattern.strip("^$")).all():
            return ColumnSpec(
                name,
                "datetime",
                datetime_format="ISO8601",
                note="ISO 8601 date strings",
            )
        if len(strings) >= 20 and strings.is_unique:
            kind = (
                "id"
                if _ID_NAME.search(str(name)) or strings.str.len().max() <= 40
                else "text"
            )
            return ColumnSpec(
                name,
                kind,
                note="every value is distinct: an identifier or free text, not a category",
            )
    if len(non_null) and all(
        isinstance(v, (bool, np.bool_)) for v in non_null.iloc[:1000]
    ):
        return ColumnSpec(name, "boolean")
    return ColumnSpec(name, "categorical")


def infer_schema(frame: pd.DataFrame) -> Schema:
    """Infer a :class:`Schema` from the dtypes (and string values) of ``frame``."""
    return Schema(tuple(infer_kind(frame[name], name) for name in frame.columns))


def schema_from_metadata(
    metadata: Mapping[str, Any], frame: pd.DataFrame
) -> tuple[Schema, list[str]]:
    """Build a :class:`Schema` from SDMetrics/SDV or synthrisk metadata.

    Columns of ``frame`` that the metadata does not mention are inferred; a note saying
    so is returned with the schema.

    Returns
    -------
    schema : Schema
    notes : list of str
        Human-readable notes (inferred columns, ignored keys).

    Raises
    ------
    SchemaMismatchError
        If the metadata names columns that are not in the table, or unknown sdtypes.
    """
    if not isinstance(metadata, Mapping):
        msg = f"`metadata` must be a dict (SDMetrics or synthrisk format); got {type(metadata).__name__}."
        raise SchemaMismatchError(msg)
    if "tables" in metadata:
        tables = metadata["tables"]
        if not isinstance(tables, Mapping) or len(tables) != 1:
            names = list(tables) if isinstance(tables, Mapping) else tables
            msg = (
                f"`metadata` describes several tables {names}; pass the single-table "
                "entry (metadata['tables'][name]) instead."
            )
            raise SchemaMismatchError(msg)
        metadata = next(iter(tables.values()))
    columns = metadata.get("columns")
    if isinstance(columns, Sequence) and not isinstance(columns, str):
        try:
            columns = {entry["name"]: entry for entry in columns}
        except (TypeError, KeyError):
            columns = None
    if not isinstance(columns, Mapping):
        msg = "`metadata` must have a 'columns' entry mapping column names to {'sdtype': ...} or {'kind': ...}."
        raise SchemaMismatchError(msg)
    unknown = [name for name in columns if name not in frame.columns]
    if unknown:
        msg = (
            f"`metadata` names columns that are not in the tables: {unknown}. "
            f"Table columns: {list(frame.columns)}."
        )
        raise SchemaMismatchError(msg)
    primary_key = metadata.get("primary_key")
    if primary_key is not None and not isinstance(primary_key, str):
        msg = (
            f"`metadata` primary_key must be one column name; got {primary_key!r}. For a key of "
            "several columns, declare each of them with sdtype 'id' instead."
        )
        raise SchemaMismatchError(msg)
    if primary_key is not None and primary_key not in frame.columns:
        msg = f"`metadata` primary_key {primary_key!r} is not a column of the tables."
        raise SchemaMismatchError(msg)
    notes: list[str] = []
    specs = []
    for name in frame.columns:
        entry = columns.get(name)
        if entry is None:
            spec = infer_kind(frame[name], name)
            notes.append(
                f"column {name!r} is not in the metadata; its kind was inferred as {spec.kind}."
            )
        else:
            spec = _spec_from_entry(name, entry)
        if name == primary_key and spec.kind != "id":
            spec = dataclasses.replace(spec, kind="id", note="primary key")
        specs.append(spec)
    return Schema(tuple(specs), primary_key=primary_key), notes


def _spec_from_entry(name: str, entry: Any) -> ColumnSpec:
    if not isinstance(entry, Mapping):
        msg = f"`metadata` entry for column {name!r} must be a dict with 'sdtype' or 'kind'; got {entry!r}."
        raise SchemaMismatchError(msg)
    for key in ("kind", "sdtype"):
        if key in entry and not isinstance(entry[key], str):
            msg = f"`metadata` column {name!r}: {key!r} must be a string such as 'numerical' or 'categorical'; got {entry[key]!r}."
            raise SchemaMismatchError(msg)
    if "kind" in entry:
        kind = entry["kind"]
        if kind not in ALL_KINDS:
            msg = f"`metadata` column {name!r} has unknown kind {kind!r}; allowed kinds: {list(ALL_KINDS)}."
            raise SchemaMismatchError(msg)
    elif "sdtype" in entry:
        sdtype = entry["sdtype"]
        if sdtype in _SDTYPE_TO_KIND:
            kind = _SDTYPE_TO_KIND[sdtype]
        elif sdtype in _SDV_PII_SDTYPES:
            kind = "pii"
        else:
            allowed = [*sorted(_SDTYPE_TO_KIND), "<an SDV PII sdtype such as 'email'>"]
            msg = f"`metadata` column {name!r} has unknown sdtype {sdtype!r}; allowed sdtypes: {allowed}."
            raise SchemaMismatchError(msg)
        if entry.get("pii") is True and kind in MODELABLE_KINDS:
            kind = "pii"
    else:
        msg = f"`metadata` entry for column {name!r} has neither 'sdtype' nor 'kind'."
        raise SchemaMismatchError(msg)
    fmt = entry.get("datetime_format")
    if fmt is not None and not isinstance(fmt, str):
        msg = f"`metadata` column {name!r}: 'datetime_format' must be a string; got {fmt!r}."
        raise SchemaMismatchError(msg)
    note = (
        "ordinal sdtype, compared as categorical"
        if entry.get("sdtype") == "ordinal"
        else None
    )
    return ColumnSpec(name, kind, datetime_format=fmt, source="metadata", note=note)
