# SPDX-License-Identifier: BSD-3-Clause
"""The distance space shared by the membership family: which arrays, which distance.

Two kinds of input are supported:

* **mixed-type tables** (the default): the foundation's :class:`EncodedTable`
  (numeric block + categorical codes) with the ``dcr`` distance — per column
  ``min(|x - y| / range, 1)`` for numbers, 0/1 mismatch for categories, a missing
  value against a present one counts 1, two missing values 0, averaged over columns —
  or Anonymeter's ``gower``. Ranges are those of the real and holdout tables together
  (the population the generator was trained on), so every search of one metric uses
  the same units whichever table is the reference.
* **pre-encoded numeric tables** (``distance="euclidean"``, and every metric's
  ``mode="apt"``): the columns taken as numbers as they are, plain Euclidean distance,
  exactly what ai-privacy-toolkit computes after the caller's own one-hot / scaling.
  With ``mode="apt"`` the distances are rounded as scikit-learn rounds them
  (``arithmetic="sklearn"`` of :func:`synthrisk.neighbors.nearest_neighbors`), so
  ties between equally distant rows fall as in ai-privacy-toolkit; otherwise they
  are exact sums of squared differences.

Tables partitioned on a Dask cluster (:class:`~synthrisk.schema.partitioned.PartitionedTable`)
take part in the ``dcr`` distance only: their ranges come from the distributed domain
reductions, row subsets and concatenations stay on the cluster (:func:`take_rows`,
:func:`concat_rows`), and exact row equality is decided by per-partition row hashes,
every hash group confirmed row by row (:func:`row_ids`), so that every metric gives
the in-memory numbers.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any, Literal, TypeAlias, overload

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics._base import Context
from synthrisk.metrics.membership._partitioned_search import (
    gather_neighbors,
    reduce_neighbors,
)
from synthrisk.metrics.membership._row_ids import distinct_lower_bound, row_ids
from synthrisk.neighbors import (
    Arithmetic,
    Neighbors,
    column_ranges,
    nearest_neighbors,
)
from synthrisk.schema.encoding import EncodedTable
from synthrisk.schema.partitioned import (
    Domain,
    PartitionedTable,
    Partitions,
    is_partitioned,
)
from synthrisk.schema.tables import Tables

__all__ = [
    "DISTANCES",
    "MODES",
    "SHARED_K",
    "Data",
    "Distance",
    "Mode",
    "Rows",
    "Space",
    "concat_rows",
    "distinct_lower_bound",
    "n_rows",
    "numeric_matrix",
    "real_to_synthetic",
    "resolve_distance",
    "row_ids",
    "sample_rows",
    "take_rows",
]

Mode = Literal["default", "apt"]
Distance = Literal["dcr", "gower", "euclidean"]
MODES: tuple[str, ...] = ("default", "apt")
DISTANCES: tuple[str, ...] = ("dcr", "gower", "euclidean")

Data: TypeAlias = EncodedTable | FloatArray
#: what the distance space searches: in-memory arrays or a table on a cluster
Rows: TypeAlias = EncodedTable | FloatArray | PartitionedTable


def resolve_distance(distance: str | None, mode: str) -> str:
    """The distance a metric runs with: ``dcr`` by default, ``euclidean`` in APT mode."""
    if mode not in MODES:
        msg = f"`mode` must be one of {list(MODES)}; got {mode!r}."
        raise ParameterError(msg)
    if distance is None:
        return "euclidean" if mode == "apt" else "dcr"
    if distance not in DISTANCES:
        msg = f"`distance` must be one of {list(DISTANCES)} or None; got {distance!r}."
        raise ParameterError(msg)
    if mode == "apt" and distance != "euclidean":
        msg = (
            f"`mode='apt'` uses Euclidean distance on pre-encoded numeric columns, as "
            f"ai-privacy-toolkit does; got distance={distance!r}. Leave `distance` unset or pass 'euclidean'."
        )
        raise ParameterError(msg)
    return distance


def numeric_matrix(tables: Tables, name: str) -> FloatArray:
    """The table's modelable columns as a float64 matrix of pre-encoded numbers.

    Numerical columns are taken as they are and boolean columns as 0/1; any other
    column, and any missing value, is an error: this is APT's contract (the caller
    encodes and scales, nothing is imputed).
    """
    frame = tables.table(name)
    columns = []
    for spec in tables.schema.modelable:
        values = frame[spec.name]
        col = None
        if spec.kind == "numerical":
            col = values.to_numpy(dtype=np.float64, na_value=np.nan)
        elif spec.kind == "boolean":
            try:
                col = np.array(
                    [np.nan if v != v else float(v) for v in values], dtype=np.float64
                )
            except (TypeError, ValueError):
                col = None
        if col is None:
            msg = (
                f"column {spec.name!r} is {spec.kind}, but Euclidean distance (`distance='euclidean'` or "
                "`mode='apt'`) needs pre-encoded numeric columns; one-hot encode it first, or use the default "
                "mixed-type distance (`distance='dcr'`)."
            )
            raise InputError(msg)
        if np.isnan(col).any():
            n_nan = int(np.isnan(col).sum())
            msg = (
                f"column {spec.name!r} of the `{name}` table has {n_nan} missing value(s); Euclidean distance on "
                "pre-encoded arrays needs complete numbers. Impute them, or use the default mixed-type distance "
                "(`distance='dcr'`), which handles missing values."
            )
            raise InputError(msg)
        columns.append(col)
    return (
        np.ascontiguousarray(np.column_stack(columns))
        if columns
        else np.empty((len(frame), 0))
    )


def n_rows(data: Rows) -> int:
    """Number of rows of an encoded table (in memory or partitioned) or array."""
    if isinstance(data, (EncodedTable, PartitionedTable)):
        return data.n_rows
    return int(data.shape[0])


@overload
def take_rows(data: PartitionedTable, rows: IntArray) -> PartitionedTable: ...
@overload
def take_rows(data: EncodedTable, rows: IntArray) -> EncodedTable: ...
@overload
def take_rows(data: FloatArray, rows: IntArray) -> FloatArray: ...
def take_rows(data: Rows, rows: IntArray) -> Rows:
    """Rows at positions ``rows``; a partitioned table's stay on its cluster."""
    if isinstance(data, PartitionedTable):
        return _take_partitioned(data, np.asarray(rows, dtype=np.int64))
    if isinstance(data, EncodedTable):
        return data.take(rows)
    return np.ascontiguousarray(data[rows])


@overload
def concat_rows(
    first: PartitionedTable, second: PartitionedTable
) -> PartitionedTable: ...
@overload
def concat_rows(first: EncodedTable, second: EncodedTable) -> EncodedTable: ...
@overload
def concat_rows(first: FloatArray, second: FloatArray) -> FloatArray: ...
@overload
def concat_rows(first: Data, second: Data) -> Data: ...
def concat_rows(first: Rows, second: Rows) -> Rows:
    """``first`` followed by ``second``."""
    if isinstance(first, PartitionedTable):
        assert isinstance(second, PartitionedTable)
        return _concat_partitioned(first, second)
    if isinstance(first, EncodedTable):
        assert isinstance(second, EncodedTable)
        return dataclasses.replace(
            first,
            numeric=np.ascontiguousarray(np.vstack([first.numeric, second.numeric])),
            codes=np.ascontiguousarray(np.vstack([first.codes, second.codes])),
        )
    assert not isinstance(second, (EncodedTable, PartitionedTable))
    return np.ascontiguousarray(np.vstack([first, second]))


@dataclasses.dataclass(frozen=True)
class Space:
    """Arrays and distance of one metric run."""

    distance: str
    scale: FloatArray | None
    arithmetic: Arithmetic = "exact"

    @classmethod
    def for_tables(cls, tables: Tables, distance: str, mode: str = "default") -> Space:
        """Build the space; ranges come from the real and holdout tables together."""
        if distance == "euclidean":
            return cls(distance, None, "sklearn" if mode == "apt" else "exact")
        real = tables.encoded("real")
        if is_partitioned(real):
            return cls(distance, _partitioned_ranges(tables))
        parts = [real.numeric]
        if tables.holdout is not None:
            parts.append(tables.encoded("holdout").numeric)
        stacked = np.vstack(parts)
        ranges = column_ranges(stacked)
        ranges = np.where(np.isnan(ranges), 0.0, ranges)
        return cls(distance, ranges)

    def data(self, tables: Tables, name: str) -> Data:
        """The arrays of one table in this space."""
        if self.distance == "euclidean":
            return numeric_matrix(tables, name)
        return tables.encoded(name)

    def search_reduce(
        self,
        query: Rows,
        reference: Rows,
        finish: Callable[..., np.ndarray],
        *args: Any,
        k: int,
        context: Context,
        description: str,
    ) -> np.ndarray:
        """``finish((distances, indices), *args)`` of the k nearest ``reference`` rows.

        ``finish`` reduces the neighbours of a block of query rows to one value (or
        row) per query row, the same whatever the block. On partitioned tables it runs
        on the cluster, once per query partition, and only its results come back, in
        row order; in memory it runs once on every row.
        """
        if self.distance == "dcr" and (
            is_partitioned(query) or is_partitioned(reference)
        ):
            return reduce_neighbors(
                query,
                reference,
                finish,
                *args,
                k=k,
                scale=self.scale,
                context=context,
                description=description,
            )
        nn = self.search(
            query, reference, k=k, context=context, description=description
        )
        return np.asarray(finish((nn.distances, nn.indices), *args))

    def search(
        self,
        query: Rows,
        reference: Rows,
        *,
        k: int,
        context: Context,
        description: str,
    ) -> Neighbors:
        """Exact k nearest ``reference`` rows of every ``query`` row."""
        # scikit-learn's rounding is implemented by the numba kernel only
        backend = "numba" if self.arithmetic == "sklearn" else context.backend
        if self.distance == "dcr" and (
            is_partitioned(query) or is_partitioned(reference)
        ):
            return gather_neighbors(
                query,
                reference,
                k=k,
                scale=self.scale,
                context=context,
                description=description,
            )
        with context.progress.task(description, n_rows(query)) as advance:
            return nearest_neighbors(
                query,
                reference,
                k=k,
                distance=self.distance,  # type: ignore[arg-type]
                backend=backend,
                working_memory=context.working_memory,
                scale=self.scale,
                arithmetic=self.arithmetic,
                progress=advance,
            )


#: the real and holdout rows' nearest synthetic rows are searched once per run with at
#: least this many neighbours, for every metric that needs as many or fewer
SHARED_K = 5


def real_to_synthetic(
    tables: Tables, space: Space, *, k: int, context: Context
) -> tuple[Neighbors, Neighbors | None] | None:
    """The ``k`` nearest synthetic rows of the real rows and of the holdout rows, shared.

    One search per run and space (:meth:`Tables.derived`) of the real and holdout rows
    together against the synthetic table, with ``max(k, SHARED_K)`` neighbours; each
    caller takes the first ``k`` columns. Those are exactly a ``k``-search's: every
    backend ranks by ``(distance, synthetic position)``, so the first ``k`` of a longer
    list are the ``k`` nearest with the same ties. ``identification`` (k = 1) and the
    kNN membership attack (k = 5) of one run share it.

    Returns None where the search is not shared: the ``euclidean`` space (scikit-learn's
    rounding may depend on the query block), partitioned tables, ``k > SHARED_K``.
    """
    if space.distance == "euclidean" or space.arithmetic != "exact" or k > SHARED_K:
        return None
    real, synthetic = space.data(tables, "real"), space.data(tables, "synthetic")
    holdout = space.data(tables, "holdout") if tables.holdout is not None else None
    if any(is_partitioned(t) for t in (real, synthetic, holdout) if t is not None):
        return None
    if n_rows(synthetic) < SHARED_K:
        return None
    digest = hashlib.blake2b(
        np.ascontiguousarray(space.scale, dtype=np.float64).tobytes(), digest_size=16
    ).hexdigest()
    key = ("real-to-synthetic", space.distance, digest, str(SHARED_K))

    def search() -> Neighbors:
        pool = real if holdout is None else concat_rows(real, holdout)
        return space.search(
            pool,
            synthetic,
            k=SHARED_K,
            context=context,
            description="real and holdout rows → synthetic",
        )

    nn = tables.derived(key, search)
    n_real = n_rows(real)

    def part(rows: slice) -> Neighbors:
        return Neighbors(nn.distances[rows, :k], nn.indices[rows, :k])

    return part(slice(0, n_real)), None if holdout is None else part(
        slice(n_real, None)
    )


def sample_rows(n: int, size: int, rng: np.random.Generator) -> IntArray:
    """``size`` sorted row positions of ``n`` drawn without replacement (all when fewer)."""
    if size >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=size, replace=False))


# --------------------------------------------------------------------------- partitioned tables


def _partitioned_ranges(tables: Tables) -> FloatArray:
    """Ranges of real + holdout from their domains: the in-memory ``column_ranges`` exactly."""
    domains = [tables.encoded("real").domain]  # type: ignore[attr-defined]
    if tables.holdout is not None:
        domains.append(tables.encoded("holdout").domain)  # type: ignore[attr-defined]
    low = domains[0].low
    high = domains[0].high
    for domain in domains[1:]:
        low, high = np.fmin(low, domain.low), np.fmax(high, domain.high)
    ranges = np.asarray(high - low, dtype=np.float64)
    return np.where(np.isnan(ranges), 0.0, ranges)


def _concat_domains(first: Domain, second: Domain) -> Domain:
    return Domain(
        low=np.fmin(first.low, second.low),
        high=np.fmax(first.high, second.high),
        integer=first.integer & second.integer,
        numeric_missing=first.numeric_missing + second.numeric_missing,
        codes=[
            np.union1d(a, b) for a, b in zip(first.codes, second.codes, strict=True)
        ],
        codes_missing=first.codes_missing + second.codes_missing,
        n_rows=first.n_rows + second.n_rows,
    )


def _concat_partitioned(
    first: PartitionedTable, second: PartitionedTable
) -> PartitionedTable:
    """Both tables' partitions one after the other (nothing moves on the cluster)."""
    return PartitionedTable(
        partitions=Partitions(
            [*first.partitions.parts, *second.partitions.parts],
            first.partitions.rows + second.partitions.rows,
            first.partitions.nbytes + second.partitions.nbytes,
        ),
        numeric_names=first.numeric_names,
        categorical_names=first.categorical_names,
        domain=_concat_domains(first.domain, second.domain),
        client=first.client,
    )


def _local_rows(
    part: tuple[np.ndarray, np.ndarray], rows: IntArray
) -> tuple[np.ndarray, np.ndarray]:
    """Task: some rows of one partition."""
    return np.ascontiguousarray(part[0][rows]), np.ascontiguousarray(part[1][rows])


def _take_partitioned(table: PartitionedTable, rows: IntArray) -> PartitionedTable:
    """The rows at positions ``rows`` as a new partitioned table, in that order.

    Each run of rows from one partition becomes one task on the cluster (a whole
    partition taken in order is reused as it is); only the small per-partition
    domains come back to the driver.
    """
    if rows.size == table.n_rows and np.array_equal(rows, np.arange(table.n_rows)):
        return table
    sizes = table.partitions.rows
    starts = np.asarray([*table.partitions.offsets, table.n_rows])
    owner = np.searchsorted(starts, rows, side="right") - 1
    # runs of consecutive requested rows that live in one partition
    cuts = np.flatnonzero(np.diff(owner)) + 1 if rows.size else np.zeros(0, np.int64)
    client = table.client
    parts: list[Any] = []
    counts: list[int] = []
    for run in np.split(np.arange(rows.size), cuts) if rows.size else []:
        p = int(owner[run[0]])
        local = rows[run] - starts[p]
        source = table.partitions.parts[p]
        if local.size == sizes[p] and np.array_equal(local, np.arange(sizes[p])):
            parts.append(source)
        else:
            parts.append(client.submit(_local_rows, source, local, pure=False))
        counts.append(int(local.size))
    n_num, n_cat = len(table.numeric_names), len(table.categorical_names)
    return PartitionedTable.from_futures(
        client,
        parts,
        counts,
        int(rows.size) * (8 * n_num + 4 * n_cat),
        table.numeric_names,
        table.categorical_names,
    )
