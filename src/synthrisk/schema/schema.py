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
import ipaddress
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
    "SEMANTIC_TYPES",
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
#: what a column's values are, when inference recognised them (``ColumnSpec.semantic``)
SEMANTIC_TYPES = (
    "email",
    "phone",
    "iban",
    "ip",
    "url",
    "national_id",
    "name",
    "uuid",
    "free_text",
)
#: the kind each semantic type gives a column
SEMANTIC_KINDS = {
    "email": "pii",
    "phone": "pii",
    "iban": "pii",
    "ip": "pii",
    "url": "pii",
    "national_id": "pii",
    "name": "pii",
    "uuid": "id",
    "free_text": "text",
}
#: SDV's personal-data sdtypes that name a semantic type
_SDV_SEMANTIC = {
    "email": "email",
    "phone_number": "phone",
    "iban": "iban",
    "ipv4_address": "ip",
    "ipv6_address": "ip",
    "url": "url",
    "ssn": "national_id",
    "name": "name",
    "first_name": "name",
    "last_name": "name",
}
#: how the inference note describes each semantic type
_SEMANTIC_WORDS = {
    "email": "e-mail addresses",
    "phone": "phone numbers",
    "iban": "IBANs (bank account numbers)",
    "ip": "IP addresses",
    "url": "web addresses (URLs)",
    "national_id": "national identification numbers",
    "name": "person names",
    "uuid": "UUIDs",
    "free_text": "free text",
}
#: content inference reads at most this many values of a column (evenly spaced)
CONTENT_SAMPLE = 2000
#: share of the sampled values that must fit a pattern
PATTERN_SHARE = 0.9
#: share of distinct values (among the non-missing ones) of a phone, name or text column
MOSTLY_DISTINCT = 0.5
#: ... of a column of short codes inferred as an identifier
NEAR_UNIQUE = 0.95
#: a strongly patterned column (e-mail, IBAN, ...) repeating values (one person's rows)
#: is personal data from this many distinct values on
MANY_DISTINCT = 1000
_EMAIL = r"[A-Za-z0-9._%+'\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"
_UUID = r"\{?[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}\}?"
_URL = r"(?:[A-Za-z][A-Za-z0-9+.\-]*://|www\.)[^\s/$.?#][^\s]*"
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_IPV6 = r"[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*"
_IBAN = r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}"
#: US social security numbers, UK national insurance numbers
_NATIONAL_ID = r"\d{3}-\d{2}-\d{4}|[A-CEGHJ-PR-TW-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]"
_PHONE = r"\+?(?:\(\d{1,5}\)|\d)[\d\s().\-]*\d(?:\s*(?:x|ext\.?)\s*\d{1,6})?"
#: a date or a decimal number, which the phone shape would otherwise take
_NOT_PHONE = r"\d{1,4}([\-./])\d{1,2}\1\d{1,4}|\d+\.\d+|\d{1,3}(?:,\d{3})+"
#: decimal numbers stored as strings: measurements, not codes
_DECIMAL = r"[+\-]?\d*[.,]\d+"
_PHONE_NAME = re.compile(r"phone|tel|mobile|cell|fax|msisdn", re.IGNORECASE)
_NAME_WORD = r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’\-]+"
_NAME = rf"{_NAME_WORD}(?: (?:(?:de|da|del|di|van|von|der|la|le|bin|al)\s)?{_NAME_WORD}){{1,2}}"
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
    semantic : str or None
        What the values are, when known: one of :data:`SEMANTIC_TYPES` (``"email"``,
        ``"phone"``, ``"iban"``, ``"ip"``, ``"url"``, ``"national_id"``, ``"name"``,
        ``"uuid"``, ``"free_text"``), recognised from the values or declared in the
        metadata (SDV's personal-data sdtypes name one).
    """

    name: str
    kind: str
    datetime_format: str | None = None
    source: str = "inferred"
    note: str | None = None
    semantic: str | None = None

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
        if self.semantic is not None:
            out["semantic"] = self.semantic
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
        iso = _ISO_DATE.pattern.strip("^$")
        # the sample first: most string columns fail on it, without a pass over all rows
        if (
            _content_sample(strings).str.fullmatch(iso).all()
            and strings.str.fullmatch(iso).all()
        ):
            return ColumnSpec(
                name,
                "datetime",
                datetime_format="ISO8601",
                note="ISO 8601 date strings",
            )
        by_content = infer_from_content(strings, name)
        if by_content is not None:
            return by_content
        # the sample first: a repeat in it is a repeat in the column
        if (
            len(strings) >= 20
            and _content_sample(strings).is_unique
            and strings.is_unique
        ):
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


def _content_sample(strings: pd.Series) -> pd.Series:
    """At most ``CONTENT_SAMPLE`` values of ``strings``, evenly spaced, in order."""
    step = max(1, -(-len(strings) // CONTENT_SAMPLE))
    return strings.iloc[::step]


def _iban_checksum(values: pd.Series) -> pd.Series:
    """ISO 13616's check: the IBAN, its first four characters moved to the end, mod 97 is 1."""
    compact = values.str.replace(" ", "", regex=False).str.upper()
    rotated = compact.str[4:] + compact.str[:4]

    def valid(text: str) -> bool:
        digits = "".join(str(int(ch, 36)) for ch in text)
        return int(digits) % 97 == 1

    return rotated.map(valid).astype(bool)


def _ip_valid(values: pd.Series) -> pd.Series:
    """Which values parse as IPv4 or IPv6 addresses."""

    def valid(text: str) -> bool:
        try:
            ipaddress.ip_address(text)
        except ValueError:
            return False
        return True

    return values.map(valid).astype(bool)


def _share(mask: pd.Series) -> float:
    return float(mask.mean()) if len(mask) else 0.0


def infer_from_content(strings: pd.Series, name: str) -> ColumnSpec | None:
    """Recognise identifiers, personal data and free text from a string column's values.

    Patterns are checked on at most ``CONTENT_SAMPLE`` values, evenly spaced; a
    pattern holds when it fits ``PATTERN_SHARE`` (90 %) of them. Distinct shares are
    counted over all the non-missing values. The rules, in order:

    * UUIDs → ``id``; e-mail addresses, URLs, IPv4/IPv6 addresses, IBANs (with a valid
      checksum), US social security numbers (``ddd-dd-dddd``) and UK national
      insurance numbers → ``pii``: when at least half of the values are distinct, or
      ``MANY_DISTINCT`` values are (the same person's address on several rows).
    * Phone numbers (7 to 15 digits, with ``+``, spaces, dashes, dots or parentheses;
      not a date or a decimal number) → ``pii``, at least half distinct. Digits alone,
      without a separator, are a phone number only with a leading ``+`` or in a column
      named like one (``phone``, ``tel``, ``mobile``, ``cell``, ``fax``); otherwise they
      are a code (below).
    * Person names (two or three capitalised words, e.g. ``Maria Lopez``) → ``pii``,
      at least half distinct.
    * Free text (words separated by spaces, on average four or more, or 30 characters
      or more) → ``text``, at least half distinct.
    * Short codes without spaces (at most 64 characters, not decimal numbers), at
      least 95 % distinct → ``id``.

    Columns with fewer than 20 values, or whose values repeat more (categories such as
    occupations, countries or zip codes), are left to the other rules.

    Parameters
    ----------
    strings : Series of str
        The column's non-missing values.
    name : str
        The column's name.

    Returns
    -------
    ColumnSpec or None
        The inferred column (with ``semantic`` set), or None when no rule applies.
    """
    n = len(strings)
    if n < 20:
        return None
    sample = _content_sample(strings).str.strip()
    distinct: list[int] = []

    def share_distinct() -> float:
        if not distinct:
            # 64-bit hashes of the values: one pass, about twice as fast as hashing
            # the strings in a table (a collision among a million values is unlikely
            # and moves a share by one in a million)
            hashes = pd.util.hash_array(
                strings.to_numpy(dtype=object), categorize=False
            )
            distinct.append(len(pd.unique(hashes)))
        return distinct[0] / n

    def mostly_distinct() -> bool:
        # the sample's distinct share is at least the column's, nearly always: cheap first
        return bool(
            sample.nunique() >= MOSTLY_DISTINCT * len(sample)
            and share_distinct() >= MOSTLY_DISTINCT
        )

    def strong() -> bool:
        # many distinct values in the sample are many in the column: no full count
        return (
            sample.nunique() >= MANY_DISTINCT
            or mostly_distinct()
            or share_distinct() * n >= MANY_DISTINCT
        )

    def spec(semantic: str) -> ColumnSpec:
        return ColumnSpec(
            name,
            SEMANTIC_KINDS[semantic],
            note=f"{_SEMANTIC_WORDS[semantic]}, by content",
            semantic=semantic,
        )

    def fits(pattern: str) -> pd.Series:
        return sample.str.fullmatch(pattern).astype(bool)

    if _share(fits(_UUID)) >= PATTERN_SHARE and strong():
        return spec("uuid")
    for semantic, pattern in (
        ("email", _EMAIL),
        ("url", _URL),
        ("national_id", _NATIONAL_ID),
    ):
        if _share(fits(pattern)) >= PATTERN_SHARE and strong():
            return spec(semantic)
    shaped = fits(_IPV4) | fits(_IPV6)
    if _share(shaped) >= PATTERN_SHARE:
        valid = shaped.copy()
        valid[shaped] = _ip_valid(sample[shaped])
        if _share(valid) >= PATTERN_SHARE and strong():
            return spec("ip")
    shaped = fits(_IBAN)
    if _share(shaped) >= PATTERN_SHARE:
        valid = shaped.copy()
        valid[shaped] = _iban_checksum(sample[shaped])
        if _share(valid) >= PATTERN_SHARE and strong():
            return spec("iban")
    n_digits = sample.str.count(r"\d")
    phone = fits(_PHONE) & ~fits(_NOT_PHONE) & n_digits.between(7, 15)
    if not _PHONE_NAME.search(str(name)):
        phone &= sample.str.contains(r"[\s().\-+]")
    if _share(phone) >= PATTERN_SHARE and mostly_distinct():
        return spec("phone")
    if _share(fits(_NAME)) >= PATTERN_SHARE and mostly_distinct():
        return spec("name")
    spaced = sample.str.contains(r"\s")
    if (
        _share(spaced) >= 0.5
        and (
            float(sample.str.count(r"\S+").mean()) >= 4
            or float(sample.str.len().mean()) >= 30
        )
        and mostly_distinct()
    ):
        return spec("free_text")
    if (
        not spaced.any()
        and int(sample.str.len().max()) <= 64
        and _share(fits(_DECIMAL)) < PATTERN_SHARE
        and sample.nunique() >= NEAR_UNIQUE * len(sample)
        and share_distinct() >= NEAR_UNIQUE
    ):
        return ColumnSpec(
            name,
            "id",
            note=f"{share_distinct():.0%} of the values are distinct short codes",
        )
    return None


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
    semantic = entry.get("semantic")
    if semantic is None and kind in EXCLUDED_KINDS:
        semantic = _SDV_SEMANTIC.get(str(entry.get("sdtype")))
    if semantic is not None and semantic not in SEMANTIC_TYPES:
        msg = (
            f"`metadata` column {name!r} has unknown semantic type {semantic!r}; "
            f"allowed: {list(SEMANTIC_TYPES)}, or leave 'semantic' out."
        )
        raise SchemaMismatchError(msg)
    return ColumnSpec(
        name,
        kind,
        datetime_format=fmt,
        source="metadata",
        note=note,
        semantic=semantic,
    )
