# SPDX-License-Identifier: BSD-3-Clause
"""Tables that live on a Dask cluster: schema and encoders from distributed reductions.

:func:`prepare_partitioned` does what :func:`~synthrisk.schema.prepare_tables` does, for
tables given as ``dask.dataframe`` (Parquet datasets, CSV globs), without ever holding a
whole table on the driver:

1. the schema is inferred (or read from the metadata) on the first rows of the real
   table, with the same rules as in memory; date formats are fixed there once;
2. every partition is validated and normalised by the in-memory rules
   (``_normalise_column``) inside its task;
3. reductions over the partitions give row counts, missing counts, the category
   dictionaries (in order of first appearance over real, synthetic, holdout, so the
   codes equal the in-memory :class:`~synthrisk.schema.Encoder`'s) and the time origin;
4. each partition is encoded by that :class:`~synthrisk.schema.Encoder` into compact
   arrays — float32 numbers when every value of the partition is exactly a float32,
   else float64, and int32 category codes — which stay on the workers;
5. per-column domains (min, max, integer-valued, missing count, codes present) are
   reduced from the encoded partitions for the metrics that need them.

Metrics whose :meth:`~synthrisk.metrics.Metric.supports_partitioned` is True work from
these partitions and run on every row: their neighbour searches take
:class:`PartitionedTable` arguments, :meth:`PartitionedTable.map_partitions` runs
per-partition reductions, :meth:`PartitionedTable.take` gathers a few rows.
:meth:`PartitionedTables.sample` gives an in-memory :class:`~synthrisk.schema.Tables` of
a seeded row sample for the others.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from synthrisk._optional import import_optional
from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk.exceptions import InputError, SchemaMismatchError
from synthrisk.schema.encoding import EncodedTable, Encoder
from synthrisk.schema.schema import (
    ColumnSpec,
    Schema,
    infer_schema,
    schema_from_metadata,
)
from synthrisk.schema.tables import (
    _HIGH_CARDINALITY_MIN,
    _HIGH_CARDINALITY_SHARE,
    TABLE_NAMES,
    Tables,
    _check_same_columns,
    _normalise_column,
    excluded_notes,
    prepare_tables,
)

__all__ = [
    "Domain",
    "PartitionedTable",
    "PartitionedTables",
    "Partitions",
    "combine_domains",
    "domain_of_part",
    "is_partitioned",
    "prepare_partitioned",
    "split_rows",
]

#: rows of the real table the schema is inferred from
SCHEMA_SAMPLE_ROWS = 10_000


@dataclasses.dataclass(frozen=True)
class Partitions:
    """Row partitions of an encoded table, in row order.

    Attributes
    ----------
    parts : list
        One entry per partition: a ``(numeric, codes)`` tuple of arrays of shape
        (n_rows_p, n_numeric) and (n_rows_p, n_categorical), or a
        ``dask.distributed.Future`` / ``dask.delayed`` object holding one.
    rows : tuple of int
        Number of rows of each partition.
    nbytes : int
        Total size of the arrays in bytes.
    """

    parts: list[Any]
    rows: tuple[int, ...]
    nbytes: int

    @property
    def n_rows(self) -> int:
        """Total number of rows."""
        return int(sum(self.rows))

    @property
    def offsets(self) -> list[int]:
        """Global position of the first row of each partition."""
        return [0, *np.cumsum(self.rows).tolist()][:-1]


def split_rows(
    numeric: np.ndarray, codes: np.ndarray, rows_per_part: int
) -> Partitions:
    """Cut in-memory arrays into :class:`Partitions` of ``rows_per_part`` rows (views)."""
    n = numeric.shape[0]
    step = max(int(rows_per_part), 1)
    starts = range(0, n, step) if n else range(0)
    parts = [(numeric[s : s + step], codes[s : s + step]) for s in starts]
    rows = tuple(min(s + step, n) - s for s in starts)
    return Partitions(parts, rows, int(numeric.nbytes + codes.nbytes))


@dataclasses.dataclass(frozen=True)
class Domain:
    """Per-column domain of an encoded table (what the random DCR baseline needs)."""

    low: FloatArray
    high: FloatArray
    integer: np.ndarray
    numeric_missing: IntArray
    codes: list[IntArray]
    codes_missing: IntArray
    n_rows: int

    @property
    def ranges(self) -> FloatArray:
        """``max - min`` per numeric column (NaN for an all-missing column)."""
        return self.high - self.low


@dataclasses.dataclass(frozen=True, eq=False)
class PartitionedTable:
    """One encoded table whose row partitions live on a Dask cluster.

    Attributes
    ----------
    partitions : Partitions
        Futures of ``(numeric, codes)`` arrays, in row order.
    numeric_names, categorical_names : tuple of str
        Column names of the two blocks.
    domain : Domain
        Per-column domain from a distributed reduction.
    client : dask.distributed.Client
        The cluster holding the partitions.
    """

    partitions: Partitions
    numeric_names: tuple[str, ...]
    categorical_names: tuple[str, ...]
    domain: Domain
    client: Any = dataclasses.field(repr=False)

    @classmethod
    def from_futures(
        cls,
        client: Any,
        parts: list[Any],
        rows: list[int],
        nbytes: int,
        numeric_names: tuple[str, ...],
        categorical_names: tuple[str, ...],
    ) -> PartitionedTable:
        """The table of ``parts`` (futures of ``(numeric, codes)`` on ``client``, ``rows`` rows each).

        The partitions' domains are reduced on the cluster; only they come back.
        """
        domains = client.gather(
            [client.submit(domain_of_part, f, pure=False) for f in parts]
        )
        return cls(
            partitions=Partitions(parts, tuple(rows), nbytes),
            numeric_names=numeric_names,
            categorical_names=categorical_names,
            domain=combine_domains(domains, len(numeric_names), len(categorical_names)),
            client=client,
        )

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return self.partitions.n_rows

    @property
    def n_columns(self) -> int:
        """Number of encoded columns."""
        return len(self.numeric_names) + len(self.categorical_names)

    def select(self, columns: Sequence[str]) -> PartitionedTable:
        """Only ``columns`` (encoded column names), as :meth:`EncodedTable.select`.

        The selection runs as one task per partition; the result stays on the cluster.
        """
        num_at = {name: i for i, name in enumerate(self.numeric_names)}
        cat_at = {name: i for i, name in enumerate(self.categorical_names)}
        num = [num_at[c] for c in columns if c in num_at]
        cat = [cat_at[c] for c in columns if c in cat_at]
        parts = [
            self.client.submit(_select, part, num, cat, pure=False)
            for part in self.partitions.parts
        ]
        domain = Domain(
            low=self.domain.low[num],
            high=self.domain.high[num],
            integer=self.domain.integer[num],
            numeric_missing=self.domain.numeric_missing[num],
            codes=[self.domain.codes[c] for c in cat],
            codes_missing=self.domain.codes_missing[cat],
            n_rows=self.domain.n_rows,
        )
        width = len(num) * 8 + len(cat) * 4
        return PartitionedTable(
            partitions=Partitions(parts, self.partitions.rows, self.n_rows * width),
            numeric_names=tuple(self.numeric_names[i] for i in num),
            categorical_names=tuple(self.categorical_names[i] for i in cat),
            domain=domain,
            client=self.client,
        )

    def map_partitions(self, func: Any, *args: Any) -> list[Any]:
        """``func(numeric, codes, *args)`` on every partition, gathered in row order.

        ``numeric`` is float64 and ``codes`` int64, as in an :class:`EncodedTable`.
        Array arguments are scattered to the workers once (not shipped with every
        task); ``func`` must be a module-level function (it is pickled) and should
        return something small — a per-partition count, a reduction, or per-row
        values of that partition.
        """
        shipped = [
            # hash=False: equal arrays of two calls must not share (and race on) one key
            self.client.scatter(a, broadcast=True, hash=False)
            if isinstance(a, np.ndarray) and a.nbytes > _SCATTER_BYTES
            else a
            for a in args
        ]
        futures = [
            self.client.submit(_apply, func, part, *shipped, pure=False)
            for part in self.partitions.parts
        ]
        return list(self.client.gather(futures))

    def take(self, rows: IntArray) -> PartitionedTable | EncodedTable:
        """The rows at positions ``rows``: this table when that is every row in order,
        else an in-memory :class:`EncodedTable` gathered from the partitions."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.shape[0] == self.n_rows and np.array_equal(
            rows, np.arange(self.n_rows)
        ):
            return self
        starts = np.asarray([*self.partitions.offsets, self.n_rows])
        owner = np.searchsorted(starts, rows, side="right") - 1
        pieces = []
        for p in np.unique(owner):
            local = rows[owner == p] - starts[p]
            pieces.append(self.client.submit(_take, self.partitions.parts[p], local))
        gathered = self.client.gather(pieces)
        numeric = (
            np.concatenate([g[0] for g in gathered])
            if gathered
            else np.empty((0, len(self.numeric_names)))
        )
        codes = (
            np.concatenate([g[1] for g in gathered])
            if gathered
            else np.empty((0, len(self.categorical_names)), np.int64)
        )
        # back to the requested order (pieces came grouped by partition)
        order = np.argsort(np.argsort(owner, kind="stable"), kind="stable")
        return EncodedTable(
            np.ascontiguousarray(numeric[order], dtype=np.float64),
            np.ascontiguousarray(codes[order], dtype=np.int64),
            self.numeric_names,
            self.categorical_names,
        )


def _take(
    part: tuple[np.ndarray, np.ndarray], rows: IntArray
) -> tuple[np.ndarray, np.ndarray]:
    return part[0][rows], part[1][rows]


def _select(
    part: tuple[np.ndarray, np.ndarray], num: list[int], cat: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    return np.ascontiguousarray(part[0][:, num]), np.ascontiguousarray(part[1][:, cat])


def _apply(func: Any, part: tuple[np.ndarray, np.ndarray], *args: Any) -> Any:
    numeric = np.ascontiguousarray(part[0], dtype=np.float64)
    codes = np.ascontiguousarray(part[1], dtype=np.int64)
    return func(numeric, codes, *args)


#: array arguments of :meth:`PartitionedTable.map_partitions` larger than this are
#: scattered to every worker once instead of travelling with each task
_SCATTER_BYTES = 1 << 20


def is_partitioned(table: Any) -> bool:
    """True for a :class:`PartitionedTable` (rows on a cluster), False for an in-memory table."""
    return isinstance(table, PartitionedTable)


@dataclasses.dataclass(frozen=True, eq=False)
class PartitionedTables:
    """The real / synthetic / holdout tables on a cluster, with their schema.

    ``encoded(name)`` gives a :class:`PartitionedTable`; metrics that need pandas
    frames of all rows run on :meth:`sample` instead.
    """

    real: PartitionedTable
    synthetic: PartitionedTable
    holdout: PartitionedTable | None
    schema: Schema
    frames: Mapping[str, Any] = dataclasses.field(repr=False)
    notes: tuple[str, ...] = ()
    #: the fitted encoder: category dictionaries and time origin of the codes
    encoder: Encoder | None = dataclasses.field(default=None, repr=False)

    def encoded(self, name: str) -> PartitionedTable:
        """The encoded partitions of one table."""
        table = getattr(self, name)
        if table is None:
            msg = f"no `{name}` table was given."
            raise InputError(msg)
        return table

    def table(self, name: str) -> pd.DataFrame:
        """Not available: pandas frames of every row would not fit the driver."""
        msg = (
            f"the `{name}` table is partitioned on a cluster; this metric needs all its rows "
            "in memory and runs on a seeded sample (PartitionedTables.sample)."
        )
        raise InputError(msg)

    def summary(self) -> dict[str, JSONValue]:
        """The ``inputs`` block of the JSON report."""
        out: dict[str, JSONValue] = {}
        for name in TABLE_NAMES:
            frame = self.frames.get(name)
            table = getattr(self, name)
            out[name] = (
                None
                if table is None or frame is None
                else {"rows": table.n_rows, "columns": [str(c) for c in frame.columns]}
            )
        return out

    def sample(self, n_rows: int, seed: int) -> tuple[Tables, dict[str, int]]:
        """An in-memory :class:`Tables` of at most ``n_rows`` rows per table.

        Rows are drawn without replacement by a generator seeded with ``seed`` and
        kept in their original order; a table with at most ``n_rows`` rows is taken
        whole, so small tables give exactly the in-memory evaluation.

        Returns
        -------
        tables : Tables
        sampled : dict of str to int
            Rows drawn per table, for the tables that were sampled.
        """
        rng = np.random.default_rng(seed)
        frames: dict[str, pd.DataFrame | None] = {}
        sampled: dict[str, int] = {}
        for name in TABLE_NAMES:
            table = getattr(self, name)
            if table is None:
                frames[name] = None
                continue
            n = table.n_rows
            if n <= n_rows:
                rows = np.arange(n)
            else:
                rows = np.sort(rng.choice(n, size=n_rows, replace=False))
                sampled[name] = n_rows
            frames[name] = _gather_rows(
                table.client, self.frames[name], table.partitions, rows
            )
        tables = prepare_tables(
            cast("pd.DataFrame", frames["real"]),  # never None: only a holdout may be
            cast("pd.DataFrame", frames["synthetic"]),
            frames["holdout"],
            metadata=self.schema,
        )
        return tables, sampled


def _gather_rows(
    client: Any, frame: Any, partitions: Partitions, rows: IntArray
) -> pd.DataFrame:
    starts = np.asarray([*partitions.offsets, partitions.n_rows])
    owner = np.searchsorted(starts, rows, side="right") - 1
    delayed_parts = frame.to_delayed()
    dask = import_optional("dask", extra="dask")
    tasks = []
    for p in np.unique(owner):
        local = rows[owner == p] - starts[p]
        tasks.append(dask.delayed(_iloc)(delayed_parts[p], local))
    pieces = client.gather(client.compute(tasks))
    return pd.concat(pieces, ignore_index=True) if pieces else frame._meta


def _iloc(frame: pd.DataFrame, rows: IntArray) -> pd.DataFrame:
    return frame.iloc[rows]


def _normalise(
    frame: pd.DataFrame, specs: Sequence[ColumnSpec], table: str
) -> pd.DataFrame:
    """One partition validated and normalised by the in-memory rules."""
    frame = frame.rename(columns=str)
    columns = {}
    for spec in specs:
        values, _ = _normalise_column(
            frame[spec.name].reset_index(drop=True), spec, table=table
        )
        columns[spec.name] = values
    return pd.DataFrame(columns, columns=[s.name for s in specs])


def _summarise(
    frame: pd.DataFrame,
    specs: Sequence[ColumnSpec],
    table: str,
    categorical: Sequence[str],
    datetimes: Sequence[str],
) -> dict[str, Any]:
    """Task: rows, non-missing counts, categories in order of appearance, earliest dates."""
    norm = _normalise(frame, specs, table)
    return {
        "rows": len(norm),
        "present": {
            s.name: int(norm[s.name].notna().sum()) for s in specs if not s.excluded
        },
        "categories": {
            c: pd.unique(norm[c].dropna().to_numpy(dtype=object)) for c in categorical
        },
        "time_min": [norm[d].min() for d in datetimes],
    }


def _encode(
    frame: pd.DataFrame, specs: Sequence[ColumnSpec], table: str, encoder: Encoder
) -> tuple[np.ndarray, np.ndarray]:
    """Task: one partition as compact arrays (float32 when exact, int32 codes)."""
    encoded = encoder.transform(_normalise(frame, specs, table))
    numeric: np.ndarray = encoded.numeric
    compact = numeric.astype(np.float32)
    with np.errstate(invalid="ignore"):
        exact = np.array_equal(compact.astype(np.float64), numeric, equal_nan=True)
    if exact:
        numeric = compact
    return numeric, encoded.codes.astype(np.int32)


def domain_of_part(part: tuple[np.ndarray, np.ndarray]) -> dict[str, Any]:
    """Task: the domain of one ``(numeric, codes)`` partition, for :func:`combine_domains`."""
    numeric = np.asarray(part[0], dtype=np.float64)
    codes = np.asarray(part[1], dtype=np.int64)
    nan = np.isnan(numeric)
    with np.errstate(invalid="ignore"):
        low = np.where(
            nan.all(axis=0),
            np.nan,
            np.nanmin(np.where(nan, np.inf, numeric), axis=0, initial=np.inf),
        )
        high = np.where(
            nan.all(axis=0),
            np.nan,
            np.nanmax(np.where(nan, -np.inf, numeric), axis=0, initial=-np.inf),
        )
    integer = np.array(
        [
            bool(np.all(col[~np.isnan(col)] == np.round(col[~np.isnan(col)])))
            for col in numeric.T
        ],
        dtype=bool,
    )
    return {
        "low": low,
        "high": high,
        "integer": integer,
        "numeric_missing": nan.sum(axis=0),
        "codes": [np.unique(c[c >= 0]) for c in codes.T],
        "codes_missing": (codes < 0).sum(axis=0),
        "rows": numeric.shape[0],
    }


def combine_domains(parts: list[dict[str, Any]], n_num: int, n_cat: int) -> Domain:
    """The :class:`Domain` of a table from the :func:`domain_of_part` of its partitions."""
    low = np.full(n_num, np.nan)
    high = np.full(n_num, np.nan)
    for p in parts:
        low = np.fmin(low, p["low"])
        high = np.fmax(high, p["high"])
    integer = np.ones(n_num, dtype=bool)
    for p in parts:
        integer &= p["integer"]
    codes = [
        np.unique(np.concatenate([p["codes"][c] for p in parts]))
        if parts
        else np.zeros(0, np.int64)
        for c in range(n_cat)
    ]
    return Domain(
        low=low,
        high=high,
        integer=integer,
        numeric_missing=np.sum(
            [p["numeric_missing"] for p in parts], axis=0, dtype=np.int64
        ).reshape(n_num),
        codes=codes,
        codes_missing=np.sum(
            [p["codes_missing"] for p in parts], axis=0, dtype=np.int64
        ).reshape(n_cat),
        n_rows=int(sum(p["rows"] for p in parts)),
    )


def _schema(
    reference: pd.DataFrame, metadata: Mapping[str, Any] | Schema | None
) -> tuple[Schema, list[str]]:
    if metadata is None:
        return infer_schema(reference), []
    if isinstance(metadata, Schema):
        missing = [c for c in reference.columns if c not in metadata.names]
        if missing:
            msg = f"the schema does not describe columns {missing}."
            raise SchemaMismatchError(msg)
        return metadata, []
    return schema_from_metadata(metadata, reference)


def prepare_partitioned(
    real: Any,
    synthetic: Any,
    holdout: Any = None,
    *,
    client: Any,
    metadata: Mapping[str, Any] | Schema | None = None,
) -> PartitionedTables:
    """Validate, fit the encoders and encode partitioned tables on ``client``'s cluster.

    Parameters
    ----------
    real, synthetic, holdout : dask.dataframe.DataFrame
        The tables (``holdout`` may be None); see
        :func:`synthrisk.io.dataset.read_dataset` for Parquet datasets and CSV globs.
    client : dask.distributed.Client
        The cluster that reads, encodes and keeps the partitions.
    metadata : dict or Schema, default=None
        Column kinds; inferred from the first rows of ``real`` when None (declare id
        columns in the metadata: uniqueness is judged on those rows only).

    Raises
    ------
    InputError, SchemaMismatchError
        As :func:`~synthrisk.schema.prepare_tables`.
    """
    dask = import_optional("dask", extra="dask")
    frames = {"real": real, "synthetic": synthetic, "holdout": holdout}
    metas = {name: None if f is None else f._meta for name, f in frames.items()}
    for name, meta in metas.items():
        if meta is None:
            continue
        names = [str(c) for c in meta.columns]
        if not names:
            msg = f"the `{name}` table has no columns."
            raise InputError(msg)
        if len(set(names)) != len(names):
            dupes = sorted({c for c in names if names.count(c) > 1})
            msg = (
                f"the `{name}` table has duplicated column names {dupes}; rename them."
            )
            raise InputError(msg)
    _check_same_columns(metas)
    head = frames["real"].head(
        SCHEMA_SAMPLE_ROWS, npartitions=min(4, frames["real"].npartitions)
    )
    head = head.rename(columns=str).reset_index(drop=True)
    schema, notes = _schema(head, metadata)
    # fix date formats (and any other data-dependent choice) once, on the first rows
    specs = [
        _normalise_column(head[s.name], s, table="real")[1] for s in schema.columns
    ]
    schema = dataclasses.replace(schema, columns=tuple(specs))
    modelable = schema.modelable
    numeric = tuple(c.name for c in modelable if c.kind in ("numerical", "datetime"))
    categorical = tuple(
        c.name for c in modelable if c.kind in ("categorical", "boolean")
    )
    datetimes = tuple(c.name for c in modelable if c.kind == "datetime")

    delayed = dask.delayed
    parts = {name: None if f is None else f.to_delayed() for name, f in frames.items()}
    summary_tasks = {
        name: [delayed(_summarise)(p, specs, name, categorical, datetimes) for p in ps]
        for name, ps in parts.items()
        if ps is not None
    }
    summaries = dict(
        zip(
            summary_tasks,
            client.gather(client.compute(list(summary_tasks.values()))),
            strict=True,
        )
    )
    for name, parts_summary in summaries.items():
        if sum(s["rows"] for s in parts_summary) == 0:
            msg = f"the `{name}` table is empty (0 rows); every table needs at least one row."
            raise InputError(msg)
        for spec in modelable:
            if sum(s["present"][spec.name] for s in parts_summary) == 0:
                msg = (
                    f"column {spec.name!r} is entirely missing in the `{name}` table; "
                    "drop it, or mark it as kind 'id' in the metadata to exclude it."
                )
                raise InputError(msg)
    if not modelable:
        msg = "no column is usable for the metrics: every column is an id, pii or text column."
        raise InputError(msg)
    categories = {}
    for c in categorical:
        seen = [s["categories"][c] for name in summaries for s in summaries[name]]
        stacked = np.concatenate(seen) if seen else np.empty(0, dtype=object)
        categories[c] = pd.Index(pd.unique(stacked), dtype=object)
    times = [
        t
        for name in summaries
        for s in summaries[name]
        for t in s["time_min"]
        if not pd.isna(t)
    ]
    origin = int(min(times).value) if times else 0
    encoder = Encoder(numeric, categorical, datetimes, categories, origin)
    notes.extend(excluded_notes(schema))
    real_rows = sum(s["rows"] for s in summaries["real"])
    real_uniques = {
        c: len(
            pd.unique(np.concatenate([s["categories"][c] for s in summaries["real"]]))
        )
        for c in categorical
    }
    for spec in modelable:
        n_unique = real_uniques.get(spec.name, 0)
        if (
            spec.kind == "categorical"
            and n_unique >= _HIGH_CARDINALITY_MIN
            and n_unique > _HIGH_CARDINALITY_SHARE * real_rows
        ):
            notes.append(
                f"column {spec.name!r} has at least {n_unique} distinct values in {real_rows} real rows: "
                "it behaves like an identifier; exact matches on it dominate distances. "
                "Mark it as kind 'id' or 'text' in the metadata if it is one."
            )

    tables: dict[str, PartitionedTable | None] = {}
    for name, ps in parts.items():
        if ps is None:
            tables[name] = None
            continue
        futures = client.compute(
            [delayed(_encode)(p, specs, name, encoder) for p in ps]
        )
        rows = tuple(s["rows"] for s in summaries[name])
        domains = client.gather(
            [client.submit(domain_of_part, f, pure=False) for f in futures]
        )
        nbytes = sum(r * (len(numeric) * 8 + len(categorical) * 4) for r in rows)
        tables[name] = PartitionedTable(
            partitions=Partitions(list(futures), rows, int(nbytes)),
            numeric_names=numeric,
            categorical_names=categorical,
            domain=combine_domains(domains, len(numeric), len(categorical)),
            client=client,
        )
    return PartitionedTables(
        real=tables["real"],  # type: ignore[arg-type]
        synthetic=tables["synthetic"],  # type: ignore[arg-type]
        holdout=tables["holdout"],
        schema=schema,
        frames=frames,
        notes=tuple(notes),
        encoder=encoder,
    )
