# SPDX-License-Identifier: BSD-3-Clause
"""Validation and normalisation of the input tables (real, synthetic, holdout).

Everything that looks at user-supplied dtypes lives here and in ``schema.py``: metrics
receive clean pandas copies with one dtype per kind, and encoded arrays.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import math
import re
import warnings
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import pandas as pd

from synthrisk.exceptions import InputError, SchemaMismatchError
from synthrisk.schema.schema import (
    ColumnSpec,
    Schema,
    infer_kind,
    infer_schema,
    schema_from_metadata,
)

if TYPE_CHECKING:
    from synthrisk._typing import JSONValue, TableLike
    from synthrisk.schema.encoding import EncodedTable, Encoder

T = TypeVar("T")

__all__ = ["TABLE_NAMES", "Tables", "as_pandas", "parse_dates", "prepare_tables"]

TABLE_NAMES = ("real", "synthetic", "holdout")
#: pandas' name of a column without a header
_UNNAMED = re.compile(r"Unnamed: \d+")
_HIGH_CARDINALITY_SHARE = 0.5
_HIGH_CARDINALITY_MIN = 1000


def as_pandas(table: Any, *, name: str) -> pd.DataFrame:
    """Return ``table`` as a pandas DataFrame (pandas, polars or pyarrow input).

    pandas input is returned as is (callers never modify it); polars and pyarrow
    tables are converted.
    """
    if isinstance(table, pd.DataFrame):
        return table
    module = type(table).__module__.split(".")[0]
    if module == "polars" and hasattr(table, "to_pandas"):
        try:
            return table.to_pandas()
        except ImportError:  # polars needs pyarrow for to_pandas in some versions
            return pd.DataFrame(table.to_dict(as_series=False))
    if module == "pyarrow" and hasattr(table, "to_pandas"):
        return table.to_pandas()
    msg = (
        f"`{name}` must be a pandas DataFrame, a polars DataFrame or a pyarrow Table; "
        f"got {type(table).__name__}."
    )
    raise InputError(msg)


@dataclasses.dataclass(frozen=True, eq=False)
class Tables:
    """Validated, normalised copies of the input tables and their schema.

    Numerical columns are float64, datetime columns datetime64[ns] (naive UTC),
    categorical and boolean columns object dtype with ``NaN`` for missing values.
    Row positions (0-based) are the row identifiers used in per-record results.
    """

    real: pd.DataFrame
    synthetic: pd.DataFrame
    holdout: pd.DataFrame | None
    schema: Schema
    notes: tuple[str, ...] = ()
    _cache: dict[str, EncodedTable] = dataclasses.field(
        default_factory=dict, repr=False
    )
    _derived: dict[tuple[str, ...], object] = dataclasses.field(
        default_factory=dict, repr=False
    )

    def table(self, name: str) -> pd.DataFrame:
        """Return one table by name (``real``, ``synthetic`` or ``holdout``)."""
        frame = getattr(self, name)
        if frame is None:
            msg = f"no `{name}` table was given."
            raise InputError(msg)
        return frame

    @functools.cached_property
    def encoder(self) -> Encoder:
        """Encoder fitted on all tables (shared category codes and time origin)."""
        from synthrisk.schema.encoding import Encoder

        frames = [f for f in (self.real, self.synthetic, self.holdout) if f is not None]
        return Encoder.fit(self.schema, *frames)

    def encoded(self, name: str) -> EncodedTable:
        """Encoded arrays of one table (computed once per Tables object)."""
        if name not in self._cache:
            self._cache[name] = self.encoder.transform(self.table(name))
        return self._cache[name]

    def derived(self, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        """A value derived from these tables alone, computed once per Tables object.

        Metrics of one run share the Tables object, so an expensive search that
        depends only on the tables (such as the real people's isolation, used by the
        per-person tests) runs once. ``key`` must name everything the value depends on.
        """
        if key not in self._derived:
            self._derived[key] = compute()
        return cast("T", self._derived[key])

    def select(self, columns: list[str]) -> Tables:
        """The same tables restricted to ``columns`` (modelable column names).

        The encoding is this one's, restricted: the same category codes and time
        origin; the encoded arrays are this object's, selected (encoded once for
        all the selections of one table).
        """
        keep = set(columns)
        specs = tuple(spec for spec in self.schema.columns if spec.name in keep)
        ordered = [spec.name for spec in specs]
        sub = Tables(
            real=self.real[ordered],
            synthetic=self.synthetic[ordered],
            holdout=None if self.holdout is None else self.holdout[ordered],
            schema=Schema(specs),
            notes=self.notes,
        )
        # cached_property's slot: a frozen dataclass only refuses attribute assignment
        sub.__dict__["encoder"] = self.encoder.select(ordered)
        for name in TABLE_NAMES:
            if getattr(self, name) is not None:
                sub._cache[name] = self.encoded(name).select(ordered)
        return sub

    def with_synthetic(self, synthetic: pd.DataFrame) -> Tables:
        """The same tables with another synthetic table (the known-leak self-test's).

        ``synthetic`` must be normalised as this object's synthetic table is (the same
        columns in the same order, float64 numbers, ``datetime64[ns]`` dates, object
        categories), and its categories must be known to the encoding (values of the
        input tables: rows copied from them, say). The schema, the encoder and the
        encoded real and holdout tables are reused; the new synthetic table is encoded
        once, here. This object is not modified.

        Raises
        ------
        InputError
            If the columns or their dtypes differ, or a category is unknown to the
            encoding.
        """
        same = list(synthetic.columns) == list(self.synthetic.columns) and all(
            synthetic[c].dtype == self.synthetic[c].dtype for c in synthetic.columns
        )
        if not same:
            msg = (
                "the replacement synthetic table must have the synthetic table's columns, "
                "in its order and with its normalised dtypes."
            )
            raise InputError(msg)
        sub = Tables(
            real=self.real,
            synthetic=synthetic.reset_index(drop=True),
            holdout=self.holdout,
            schema=self.schema,
            notes=self.notes,
        )
        # cached_property's slot: a frozen dataclass only refuses attribute assignment
        sub.__dict__["encoder"] = self.encoder
        for name in ("real", "holdout"):
            if getattr(self, name) is not None:
                sub._cache[name] = self.encoded(name)
        encoded = sub.encoded("synthetic")
        for j, name in enumerate(encoded.categorical_names):
            unknown = (encoded.codes[:, j] < 0) & sub.synthetic[name].notna().to_numpy()
            if unknown.any():
                msg = (
                    f"column {name!r} of the replacement synthetic table holds "
                    f"{int(unknown.sum())} value(s) the encoding does not know; only values "
                    "of the input tables can be encoded without fitting it again."
                )
                raise InputError(msg)
        return sub

    def summary(self) -> dict[str, JSONValue]:
        """The ``inputs`` block of the JSON report."""
        out: dict[str, JSONValue] = {}
        for name in TABLE_NAMES:
            frame = getattr(self, name)
            out[name] = (
                None
                if frame is None
                else {"rows": len(frame), "columns": list(map(str, frame.columns))}
            )
        return out


def prepare_tables(
    real: TableLike,
    synthetic: TableLike,
    holdout: TableLike | None = None,
    *,
    metadata: Mapping[str, Any] | Schema | None = None,
    allow_all_missing: bool = False,
) -> Tables:
    """Validate the input tables and return normalised copies with their schema.

    ``allow_all_missing=True`` keeps a column that is entirely missing in the synthetic
    or holdout table (drop-in layers of references that score it) instead of refusing it.

    Raises
    ------
    InputError
        Empty tables, all-missing columns, infinite values, unparsable dates,
        unsupported dtypes.
    SchemaMismatchError
        Tables with different columns, metadata naming unknown columns or sdtypes.
    """
    frames: dict[str, pd.DataFrame | None] = {
        "real": as_pandas(real, name="real"),
        "synthetic": as_pandas(synthetic, name="synthetic"),
        "holdout": None if holdout is None else as_pandas(holdout, name="holdout"),
    }
    for name, frame in frames.items():
        if frame is None:
            continue
        if frame.shape[1] == 0:
            msg = f"the `{name}` table has no columns."
            raise InputError(msg)
        if len(frame) == 0:
            msg = f"the `{name}` table is empty (0 rows); every table needs at least one row."
            raise InputError(msg)
        names = [str(c) for c in frame.columns]
        if len(set(names)) != len(names):
            dupes = sorted({c for c in names if names.count(c) > 1})
            msg = (
                f"the `{name}` table has duplicated column names {dupes}; rename them."
            )
            raise InputError(msg)
    index_notes = _drop_unmatched_row_indexes(frames)
    _check_same_columns(frames)

    reference = frames["real"]
    assert reference is not None
    reference = (
        reference.rename(columns=str)
        if not all(isinstance(c, str) for c in reference.columns)
        else reference
    )
    notes: list[str] = []
    if metadata is None:
        schema = infer_schema(reference)
    elif isinstance(metadata, Schema):
        schema = metadata
        missing = [c for c in reference.columns if c not in schema.names]
        if missing:
            msg = f"the schema does not describe columns {missing}."
            raise SchemaMismatchError(msg)
    else:
        schema, notes = schema_from_metadata(metadata, reference)
    notes = index_notes + notes

    order = schema.names
    cleaned: dict[str, pd.DataFrame | None] = {}
    declared = schema.columns
    specs = list(declared)
    for name, frame in frames.items():
        if frame is None:
            cleaned[name] = None
            continue
        frame = frame.rename(columns=str)
        columns = {}
        for i, given in enumerate(declared):
            if given.kind == "datetime" and not (
                given.source == "metadata" and given.datetime_format
            ):
                # no format given: each table's dates are read in their own format
                unset = dataclasses.replace(given, datetime_format=None)
                values, used = _normalise_column(frame[given.name], unset, table=name)
                if name == "real":
                    specs[i] = used
                elif (
                    used.datetime_format is not None
                    and specs[i].datetime_format is not None
                    and used.datetime_format != specs[i].datetime_format
                ):
                    notes.append(
                        f"column {given.name!r} holds dates as {used.datetime_format!r} in the "
                        f"`{name}` table and as {specs[i].datetime_format!r} in the `real` "
                        "table; each table was read in its own format."
                    )
            else:
                values, specs[i] = _normalise_column(
                    frame[given.name], specs[i], table=name
                )
            columns[given.name] = values
        cleaned[name] = pd.DataFrame(columns, columns=order).reset_index(drop=True)
    schema = dataclasses.replace(schema, columns=tuple(specs))

    for spec in schema.modelable:
        for name, frame in cleaned.items():
            if frame is None or not frame[spec.name].isna().all():
                continue
            if name == "real":
                msg = (
                    f"column {spec.name!r} is entirely missing in the `real` table; "
                    "drop it, or mark it as kind 'id' in the metadata to exclude it."
                )
                raise InputError(msg)
            if allow_all_missing:
                continue
            notes.append(
                f"column {spec.name!r} is entirely missing in the `{name}` table; it is "
                "evaluated as it is (a missing value never matches a real one)."
            )
    notes.extend(excluded_notes(schema))
    _check_ranges(schema, cleaned)
    real_frame = cleaned["real"]
    assert real_frame is not None
    for spec in schema.modelable:
        if spec.kind == "categorical":
            n_unique = real_frame[spec.name].nunique()
            if (
                n_unique >= _HIGH_CARDINALITY_MIN
                and n_unique > _HIGH_CARDINALITY_SHARE * len(real_frame)
            ):
                notes.append(
                    f"column {spec.name!r} has {n_unique} distinct values in {len(real_frame)} real rows: "
                    "it behaves like an identifier; exact matches on it dominate distances. "
                    "Mark it as kind 'id' or 'text' in the metadata if it is one."
                )
    if not schema.modelable:
        msg = "no column is usable for the metrics: every column is an id, pii or text column."
        raise InputError(msg)
    return Tables(
        real=real_frame,
        synthetic=cleaned["synthetic"],  # type: ignore[arg-type]
        holdout=cleaned["holdout"],
        schema=schema,
        notes=tuple(notes),
    )


def parse_dates(
    frames: Mapping[str, pd.DataFrame],
    columns: Mapping[str, Mapping[str, Any]],
    *,
    table: str,
    skip: Collection[str] = (),
) -> dict[str, pd.DataFrame]:
    """One table on each side with its date columns parsed, as :func:`prepare_tables` does.

    A column is a date column when its metadata entry says so (``sdtype`` or ``kind``
    ``datetime``), or, without an entry, when :func:`~synthrisk.schema.schema.infer_kind`
    reads the ``real`` side's values as dates (datetime dtypes, date objects, ISO 8601
    strings). Each side's values become ``datetime64[ns]`` (naive UTC): with the
    metadata's ``datetime_format`` when it gives one, else in each side's own format,
    guessed from its values. Other columns, and the row index, are kept as they are.

    Parameters
    ----------
    frames : dict of str to DataFrame
        The table on each side (``real``, ``synthetic``, ``holdout``; never modified);
        ``real`` decides which columns without metadata hold dates.
    columns : dict of str to dict
        The table's column metadata (SDV's ``columns``).
    table : str
        The table's name, used in messages.
    skip : collection of str, default=()
        Columns never parsed (keys).

    Returns
    -------
    dict of str to DataFrame
        The same sides, copies where a column was parsed.

    Raises
    ------
    InputError
        Values that do not parse as dates, dates that read in two formats, dates
        outside the years 1678 to 2261.
    """
    reference = frames.get("real")
    out = dict(frames)
    if reference is None:
        return out
    for column in reference.columns:
        name = str(column)
        if name in skip:
            continue
        entry = columns.get(name)
        if isinstance(entry, Mapping):
            if "datetime" not in (entry.get("kind"), entry.get("sdtype")):
                continue
            fmt = entry.get("datetime_format")
            spec = ColumnSpec(
                name,
                "datetime",
                datetime_format=fmt if isinstance(fmt, str) else None,
                source="metadata",
            )
        else:
            spec = infer_kind(reference[column], name)
            if spec.kind != "datetime":
                continue
            spec = dataclasses.replace(spec, datetime_format=None)
        for side, frame in out.items():
            if column not in frame.columns:
                continue
            where = f"column {name!r} of the {side} table {table!r}"
            parsed, _ = _to_datetime(frame[column], spec, where)
            frame = frame.copy(deep=False)
            frame[column] = pd.Series(parsed.to_numpy(), index=frame.index)
            out[side] = frame
    return out


def excluded_note(spec: ColumnSpec) -> str:
    """The note of a column that inference excluded (an identifier, free text)."""
    return (
        f"column {spec.name!r} was excluded from every metric as kind {spec.kind!r} "
        f"({spec.note or 'inferred'}); declare its kind in the metadata to use it."
    )


def excluded_notes(schema: Schema) -> list[str]:
    """One note per column that inference excluded (identifiers, free text)."""
    return [
        excluded_note(spec) for spec in schema.excluded if spec.source == "inferred"
    ]


def _check_ranges(schema: Schema, frames: Mapping[str, pd.DataFrame | None]) -> None:
    """Numerical columns whose range overflows float64 (e.g. -1e308 and 1e308) are refused.

    Every distance divides by a column's range; magnitudes up to about 1e307 work
    exactly as small ones do.
    """
    for spec in schema.modelable:
        if spec.kind != "numerical":
            continue
        values = [
            f[spec.name].to_numpy(dtype=np.float64)
            for f in frames.values()
            if f is not None
        ]
        stacked = np.concatenate(values)
        stacked = stacked[~np.isnan(stacked)]
        if not stacked.size:
            continue
        lo, hi = float(stacked.min()), float(stacked.max())
        if not math.isfinite(hi - lo):
            msg = (
                f"column {spec.name!r} spans more than the floating-point range (from {lo:.3g} to "
                f"{hi:.3g}): differences between its values overflow. Rescale it (divide it by a "
                "power of ten) in every table."
            )
            raise InputError(msg)


def _drop_unmatched_row_indexes(frames: dict[str, pd.DataFrame | None]) -> list[str]:
    """Leave out header-less columns (``Unnamed: 0``: a saved row index) that not every table has.

    ``DataFrame.to_csv`` writes the row index as a first column without a header unless
    told ``index=False``; one table saved that way and another not is common, and such a
    column cannot be compared anyway. ``frames`` is updated with copies without it.
    """
    present = [f for f in frames.values() if f is not None]
    names = [{str(c) for c in f.columns} for f in present]
    shared = names[0].intersection(*names[1:])
    unmatched = sorted(
        {c for cols in names for c in cols if _UNNAMED.fullmatch(c)} - shared
    )
    notes = []
    for column in unmatched:
        holders = [
            n for n, f in frames.items() if f is not None and column in f.columns
        ]
        for name in holders:
            frame = frames[name]
            assert frame is not None
            frames[name] = frame.drop(columns=[column])
        notes.append(
            f"column {column!r} has no header and is only in the "
            f"{' and '.join(f'`{n}`' for n in holders)} table{'s' * (len(holders) > 1)} "
            "(a row index saved with the data, as DataFrame.to_csv does without index=False); "
            "it was left out."
        )
    return notes


def _check_same_columns(frames: Mapping[str, pd.DataFrame | None]) -> None:
    real = frames["real"]
    assert real is not None
    real_cols = [str(c) for c in real.columns]
    for name in ("synthetic", "holdout"):
        frame = frames[name]
        if frame is None:
            continue
        cols = [str(c) for c in frame.columns]
        only_real = [c for c in real_cols if c not in cols]
        only_other = [c for c in cols if c not in real_cols]
        if only_real or only_other:
            parts = []
            if only_real:
                parts.append(f"only in `real`: {only_real}")
            if only_other:
                parts.append(f"only in `{name}`: {only_other}")
            fold = {" ".join(c.split()).casefold(): c for c in only_real}
            alike = [
                (fold[key], c)
                for c in only_other
                if (key := " ".join(c.split()).casefold()) in fold
            ]
            hint = (
                f" The names {', '.join(f'{a!r} / {b!r}' for a, b in alike)} differ only in "
                "upper/lower case or spaces: rename them to match."
                if alike
                else ""
            )
            if not set(real_cols) & set(cols):  # nothing in common: a missing header?
                for table, names in (("real", real_cols), (name, cols)):
                    numbers = [c for c in names if _looks_like_number(c)]
                    if numbers:
                        hint += (
                            f" The `{table}` table has columns named like values ({numbers[0]!r}): "
                            "does its file lack a header row? Its first line must name the columns."
                        )
            msg = (
                f"the `real` and `{name}` tables have different columns ({'; '.join(parts)}). "
                f"Pass tables with the same columns.{hint}"
            )
            raise SchemaMismatchError(msg)


def _looks_like_number(text: str) -> bool:
    try:
        float(text.replace(",", "."))
    except ValueError:
        return False
    return True


def _normalise_column(
    series: pd.Series, spec: ColumnSpec, *, table: str
) -> tuple[pd.Series, ColumnSpec]:
    where = f"column {spec.name!r} of the `{table}` table"
    if spec.excluded:
        return series.astype(object).reset_index(drop=True), spec
    _reject_unsupported(series, where)
    if spec.kind == "numerical":
        values = _to_float(series, where, spec)
        if np.isinf(values).any():
            n_inf = int(np.isinf(values).sum())
            msg = f"{where} has {n_inf} infinite value(s); replace them with finite numbers or missing values."
            raise InputError(msg)
        return pd.Series(values), spec
    if spec.kind == "datetime":
        parsed, spec = _to_datetime(series, spec, where)
        return parsed, spec
    # categorical / boolean: object values, NaN for every kind of missing
    values = series.astype(object).to_numpy(copy=True)
    missing = pd.isna(values)
    values[missing] = np.nan
    for v in values[~missing][:1000]:
        if isinstance(v, float) and np.isinf(v):
            msg = f"{where} has infinite values; replace them with finite numbers or missing values."
            raise InputError(msg)
    return pd.Series(values, dtype=object), spec


def _reject_unsupported(series: pd.Series, where: str) -> None:
    if pd.api.types.is_complex_dtype(series.dtype):
        msg = f"{where} has complex numbers, which synthrisk does not support; split them into real and imaginary columns."
        raise InputError(msg)
    if series.dtype == object:
        sample = series.dropna().iloc[:1000]
        for v in sample:
            if isinstance(v, (list, dict, set, tuple, np.ndarray, complex)):
                msg = (
                    f"{where} holds nested or complex values ({type(v).__name__}); "
                    "flatten them into scalar columns first."
                )
                raise InputError(msg)


def _kind_origin(spec: ColumnSpec) -> str:
    """How the column got its kind: ``declared numerical (metadata)`` or ``inferred ...``."""
    if spec.source == "metadata":
        return f"declared {spec.kind} (metadata)"
    return f"inferred {spec.kind} (from the `real` table's values)"


def _redeclare(spec: ColumnSpec, kind: str) -> str:
    """How to give the column another kind."""
    if spec.source == "metadata":
        return f"declare it {kind} in the metadata"
    return f"declare it {kind} in the metadata (`--metadata`; its kind was inferred)"


def _to_float(series: pd.Series, where: str, spec: ColumnSpec) -> np.ndarray:
    if pd.api.types.is_timedelta64_dtype(series.dtype):
        return series.dt.total_seconds().to_numpy(dtype="float64", na_value=np.nan)
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        msg = f"{where} is a datetime but is {_kind_origin(spec)}; {_redeclare(spec, 'datetime')}."
        raise InputError(msg)
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.astype("float64").to_numpy()
    if pd.api.types.is_numeric_dtype(series.dtype) and not isinstance(
        series.dtype, pd.CategoricalDtype
    ):
        return series.to_numpy(dtype="float64", na_value=np.nan)
    try:
        return pd.to_numeric(series.astype(object), errors="raise").to_numpy(
            dtype="float64", na_value=np.nan
        )
    except (ValueError, TypeError) as exc:
        msg = (
            f"{where} is {_kind_origin(spec)} but holds values that are not numbers ({exc}); "
            f"clean it, or {_redeclare(spec, 'categorical')}."
        )
        raise InputError(msg) from None


def _to_datetime(
    series: pd.Series, spec: ColumnSpec, where: str
) -> tuple[pd.Series, ColumnSpec]:
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        values = series
        if getattr(series.dt, "tz", None) is not None:
            values = series.dt.tz_convert("UTC").dt.tz_localize(None)
        return _as_ns(values, where).reset_index(drop=True), spec
    if series.isna().all():  # entirely missing: read as float or object, not dates
        return pd.Series(pd.NaT, index=range(len(series)), dtype="datetime64[ns]"), spec
    if pd.api.types.is_numeric_dtype(series.dtype):
        msg = f"{where} is {_kind_origin(spec)} but holds numbers; store dates, or {_redeclare(spec, 'numerical')}."
        raise InputError(msg)
    strings = series.astype(object)
    sample = strings.dropna().iloc[:1000]
    if all(isinstance(v, datetime.date) for v in sample):  # date objects (Parquet)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            parsed = pd.to_datetime(strings, errors="coerce", utc=True)
        fmt = spec.datetime_format
    else:
        non_null = strings.dropna().astype(str)
        fmt = spec.datetime_format
        if fmt is None:
            fmt = _guess_format(non_null, where, spec)
            spec = dataclasses.replace(spec, datetime_format=fmt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            parsed = pd.to_datetime(strings, format=fmt, errors="coerce", utc=True)
    bad = parsed.isna() & strings.notna()
    if bad.any():
        examples = strings[bad].astype(str).unique()[:3].tolist()
        shown = f"with format {fmt!r}" if fmt is not None else ""
        msg = (
            f"{where} holds values that do not parse as dates {shown}: {examples}. "
            "Fix the values or give the right 'datetime_format' in the metadata."
        )
        raise InputError(" ".join(msg.split()))
    return _as_ns(parsed.dt.tz_localize(None), where).reset_index(drop=True), spec


def _as_ns(values: pd.Series, where: str) -> pd.Series:
    """Dates as ``datetime64[ns]``; dates beyond its range (years 1678-2261) are refused."""
    try:
        return values.astype("datetime64[ns]")
    except (pd.errors.OutOfBoundsDatetime, OverflowError):
        pass
    outside = values.notna() & (
        (values < pd.Timestamp.min) | (values > pd.Timestamp.max)
    )
    examples = values[outside].astype(str).unique()[:3].tolist()
    msg = (
        f"{where} has dates outside the range synthrisk handles (years 1678 to 2261): "
        f"{examples}. Such dates are often placeholders (9999-12-31 for 'no end date'): "
        "replace them with missing values, or declare the column categorical in the metadata."
    )
    raise InputError(msg)


def _guess_format(values: pd.Series, where: str, spec: ColumnSpec) -> str:
    from pandas.tseries.api import guess_datetime_format

    if len(values) == 0:
        return "ISO8601"
    first = values.iloc[0]
    if values.str.match(r"^\d{4}-\d{2}-\d{2}").all():
        return "ISO8601"
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore", UserWarning
        )  # pandas' dayfirst hints: we try both on purpose
        month_first = guess_datetime_format(first, dayfirst=False)
        day_first = guess_datetime_format(first, dayfirst=True)
        candidates = [
            f for f in dict.fromkeys([month_first, day_first]) if f is not None
        ]
        working = []
        for fmt in candidates:
            parsed = pd.to_datetime(values, format=fmt, errors="coerce")
            if parsed.notna().all():
                working.append(fmt)
    if len(working) == 1:
        return working[0]
    if not working:
        msg = (
            f"{where} is {_kind_origin(spec)} but its values (e.g. {first!r}) do not parse as dates; "
            f"give a 'datetime_format' in the metadata, or {_redeclare(spec, 'categorical')}."
        )
        raise InputError(msg)
    msg = (
        f"{where} has dates such as {first!r} that read both as {working[0]!r} and {working[1]!r}; "
        "give the 'datetime_format' in the metadata."
    )
    raise InputError(msg)
