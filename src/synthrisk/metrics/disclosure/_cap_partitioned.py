# SPDX-License-Identifier: BSD-3-Clause
"""The CAP attack on tables partitioned on a Dask cluster, on every row.

CAP probabilities are group-bys and joins over integer codes of the known and sensitive
columns, so they are computed where the rows are:

1. a reduction over the partitions gives what the codes need: the distinct values of
   the numeric columns matched exactly, the range of the binned ones (the bin edges
   are then the in-memory edges: :func:`~synthrisk.schema.keys.bin_edges` only uses
   the minimum and the maximum of the real values);
2. each synthetic partition counts its distinct (known, sensitive) code tuples and the
   driver adds them up: ``O(distinct synthetic tuples)``;
3. each real partition looks its rows up in those counts (scattered to the workers
   once) and sends back one probability per row; the real rows whose known values no
   synthetic row has come back as distinct (known, sensitive) tuples, which
   generalized CAP solves on the driver with the in-memory nearest-key search.

The kernels only compare codes for equality, column by column, and count rows, so codes
numbered differently from the in-memory ones give the same probabilities, bit for bit.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics._base import Context
from synthrisk.metrics.disclosure._codes import (
    NatBinning,
    exact_datetime,
    identifier_like,
    many_numeric_values,
    no_real_value,
)
from synthrisk.metrics.disclosure._kernels import (
    CapMethod,
    _KeyIndex,
    _nearest_key_counts,
    _offsets,
)
from synthrisk.metrics.disclosure._partition_tasks import (
    CAPPED_DISTINCT,
    Column,
    Layout,
    TupleIndex,
    build_index,
    count_part,
    prepare_part,
    score_part,
)
from synthrisk.schema.keys import bin_edges
from synthrisk.schema.partitioned import PartitionedTable, PartitionedTables

__all__ = [
    "PartitionedAttack",
    "distinct_real_values",
    "is_partitioned_tables",
    "partitioned_attack",
    "time_origin",
]


def is_partitioned_tables(tables: Any) -> bool:
    """True for tables partitioned on a cluster (:class:`PartitionedTables`)."""
    return isinstance(tables, PartitionedTables)


# ---------------------------------------------------------------------- the attack


@dataclasses.dataclass
class _SyntheticCounts:
    """The combined counts of the synthetic table's (key, sensitive) code tuples."""

    keys: TupleIndex
    sens: TupleIndex
    n_sens: int
    pair_ids: IntArray
    pair_rows: IntArray
    key_rows: IntArray
    key_index: _KeyIndex


@dataclasses.dataclass
class _Scores:
    """Per-row probabilities of one real-side table (NaN where the key is unmatched),
    and per partition the distinct unmatched tuples and each unmatched row's tuple."""

    p: FloatArray
    unmatched: list[IntArray]
    unmatched_ids: list[IntArray]


@dataclasses.dataclass
class PartitionedAttack:
    """The CAP attack on partitioned tables: what :class:`AttackCodes` is in memory.

    The synthetic counts and the matched real rows' probabilities are computed when it
    is built; :meth:`probabilities` resolves the unmatched rows for a method.
    """

    baseline: float
    scores: list[_Scores]
    counts: _SyntheticCounts
    n_key: int
    key_radix: tuple[int, ...]
    columns: tuple[Column, ...] = ()
    arrays: tuple[np.ndarray, ...] = ()
    #: the method the unmatched rows were resolved for (None: not yet)
    resolved: CapMethod | None = None

    def probabilities(self, method: CapMethod, context: Context) -> FloatArray:
        """Every row of the (first) real-side table: :func:`cap_probabilities`."""
        return self.table_probabilities(method, context)[0]

    def table_probabilities(
        self, method: CapMethod, context: Context
    ) -> list[FloatArray]:
        """The probabilities of each real-side table (real, then holdout when pooled).

        The unmatched rows are resolved in place, in the attack's own arrays (one
        O(rows) array per table on the driver, not two), so an attack serves one method.
        """
        if self.resolved not in (None, method):
            msg = (
                f"this attack's probabilities were resolved for {self.resolved!r}; "
                f"build another attack for {method!r}."
            )
            raise ParameterError(msg)
        out = [s.p for s in self.scores]
        if self.resolved is not None or method == "cap":
            self.resolved = method
            return out
        self.resolved = method
        if method == "zero_cap":
            for p in out:
                p[np.isnan(p)] = 0.0
            return out
        pieces = [u for s in self.scores for u in s.unmatched]
        if not sum(u.shape[0] for u in pieces):
            return out
        stacked = np.concatenate(pieces)
        _, ids = build_index(stacked, (*self.key_radix, self.counts.n_sens))
        _, first = np.unique(ids, return_index=True)
        probs = self._generalized(stacked[first], context)
        at = 0
        for s, p in zip(self.scores, out, strict=True):
            rows = []  # the global tuple of each unmatched row, in row order
            for u, local in zip(s.unmatched, s.unmatched_ids, strict=True):
                rows.append(ids[at : at + u.shape[0]][local])
                at += u.shape[0]
            p[np.isnan(p)] = probs[np.concatenate(rows)]
        return out

    def _generalized(self, queries: IntArray, context: Context) -> FloatArray:
        """Generalized CAP of distinct unmatched (key codes, sensitive id) tuples."""
        k = self.n_key
        keys, key_ids = build_index(queries[:, :k], self.key_radix)
        _, first = np.unique(key_ids, return_index=True)
        real_keys = np.ascontiguousarray(queries[first, :k], dtype=np.int64)
        order = np.lexsort((queries[:, k], key_ids))
        q_sens = np.ascontiguousarray(queries[order, k], dtype=np.int64)
        q_ptr = _offsets(key_ids[order], keys.size)
        numerator, denominator = _nearest_key_counts(
            real_keys,
            self.counts.key_index,
            q_ptr,
            q_sens,
            self.counts.n_sens,
            search="auto",
            # the distinct keys are in this process: numpy or numba by their number
            backend="auto" if context.backend == "dask" else context.backend,
            working_memory=context.working_memory,
        )
        probs = np.empty(queries.shape[0])
        probs[order] = numerator / denominator[key_ids[order]]
        return probs


_NUMERIC = ("numerical", "datetime")


def _check_encoded(tables: PartitionedTables, columns: Sequence[str]) -> None:
    for column in columns:
        spec = tables.schema[column]
        if spec.excluded:
            msg = (
                f"column {column!r} has kind {spec.kind!r}, which tables partitioned on a "
                "cluster do not carry (only numerical, datetime, categorical and boolean "
                "columns are encoded); declare its kind as 'categorical' in the metadata to "
                "use it as a known or sensitive column."
            )
            raise ParameterError(msg)


def _numeric_at(table: PartitionedTable, column: str) -> int:
    return table.numeric_names.index(column)


def _code_at(table: PartitionedTable, column: str) -> int:
    return table.categorical_names.index(column)


def time_origin(tables: PartitionedTables) -> int:
    """The encoder's time origin (earliest date of all tables) in nanoseconds.

    The encoded dates are seconds since this origin.
    """
    if tables.encoder is None:
        msg = "these partitioned tables carry no encoder; build them with prepare_partitioned."
        raise InputError(msg)
    return int(tables.encoder.time_origin)


#: arrays larger than this go to the workers once, before the tasks that read them
_SCATTER_BYTES = 1 << 20


def _scatter(client: Any, arrays: Sequence[np.ndarray]) -> list[Any]:
    """The large arrays as futures on every worker (the small ones as they are).

    Scattered without content hashing: two attacks may ship equal arrays one after
    the other, and a hashed key released by the first would be lost to the second.
    """
    return [
        client.scatter(a, broadcast=True, hash=False)
        if a.nbytes > _SCATTER_BYTES
        else a
        for a in arrays
    ]


def _union(parts: Sequence[np.ndarray]) -> FloatArray:
    return np.unique(np.concatenate(parts)) if parts else np.empty(0)


@dataclasses.dataclass
class _Plan:
    """The codes of every attack column (what the tasks need) and the caveats' counts."""

    columns: dict[str, Column] = dataclasses.field(default_factory=dict)
    arrays: list[np.ndarray] = dataclasses.field(default_factory=list)
    #: distinct real codes (missing values one of them), for the baseline
    real_distinct: dict[str, int] = dataclasses.field(default_factory=dict)

    def add(self, name: str, column: Column, array: np.ndarray | None = None) -> None:
        if array is not None:
            column = dataclasses.replace(column, slot=len(self.arrays))
            self.arrays.append(array)
        self.columns[name] = column


def _plan(
    tables: PartitionedTables,
    known: Sequence[str],
    names: Sequence[str],
    queries: Sequence[PartitionedTable],
    context: Context,
    *,
    binned: set[str],
    n_bins: int,
    nat_binning: NatBinning,
    strict_types: bool,
    numeric_hint: str,
    origin: int,
) -> _Plan:
    """The codes of each column, with :func:`attack_codes`' caveats in its order."""
    kinds = {c: tables.schema[c].kind for c in names}
    dates = [c for c in names if c in binned and kinds[c] == "datetime"]
    exact = [c for c in names if c not in binned and kinds[c] in _NUMERIC]
    everything = [
        t for t in (tables.real, tables.synthetic, tables.holdout) if t is not None
    ]
    # one reduction per table: distinct values of exact columns, ranges of binned dates
    prepared = {
        id(t): t.map_partitions(
            prepare_part,
            [_numeric_at(t, c) for c in exact],
            [(_numeric_at(t, c), nat_binning) for c in dates],
            [],
            origin,
        )
        if exact or dates
        else []
        for t in everything
    }

    def uniques(column: str, among: Sequence[PartitionedTable]) -> FloatArray:
        at = exact.index(column)
        return _union([p["uniques"][at] for t in among for p in prepared[id(t)]])

    def dates_range(column: str) -> np.ndarray | None:
        at = dates.index(column)
        found = [p["ranges"][at] for t in queries for p in prepared[id(t)]]
        ranges = [r for r in found if r is not None]
        if not ranges:
            return None
        return np.array([min(r[0] for r in ranges), max(r[1] for r in ranges)])

    def numbers_range(column: str) -> np.ndarray | None:
        j = [_numeric_at(t, column) for t in queries]
        lows = [t.domain.low[i] for t, i in zip(queries, j, strict=True)]
        highs = [t.domain.high[i] for t, i in zip(queries, j, strict=True)]
        valued = [i for i, v in enumerate(lows) if not math.isnan(v)]
        if not valued:
            return None
        return np.array([min(lows[i] for i in valued), max(highs[i] for i in valued)])

    plan = _Plan()
    real = tables.real
    n_query_rows = sum(t.n_rows for t in queries)
    for column in names:
        kind = kinds[column]
        if column in binned:
            is_date = kind == "datetime"
            bounds = dates_range(column) if is_date else numbers_range(column)
            if bounds is None:
                no_real_value(column, context, strict_types=strict_types)
            edges = None if bounds is None else bin_edges(bounds, n_bins)
            rule: Literal["", "missing", "sdmetrics"] = nat_binning if is_date else ""
            spec = Column(True, _numeric_at(real, column), "binned", n_bins, -1, rule)
            plan.add(column, spec, edges)
        elif kind in _NUMERIC:
            if kind == "datetime":
                exact_datetime(column, context, strict_types=strict_types)
            values = uniques(column, everything)
            j = _numeric_at(real, column)
            plan.add(column, Column(True, j, "exact", values.shape[0]), values)
            n_distinct = uniques(column, queries).shape[0]
            if kind == "numerical" and column in known:
                many_numeric_values(
                    column, n_distinct, n_bins, context, numeric_hint=numeric_hint
                )
            missing = sum(
                t.domain.numeric_missing[_numeric_at(t, column)] for t in queries
            )
            plan.real_distinct[column] = n_distinct + int(missing > 0)
        else:
            at = {id(t): _code_at(t, column) for t in everything}
            top = max(
                int(t.domain.codes[at[id(t)]].max(initial=-1)) for t in everything
            )
            plan.add(column, Column(False, _code_at(real, column), "category", top + 1))
            present = np.unique(
                np.concatenate([t.domain.codes[at[id(t)]] for t in queries])
            )
            if column in known:
                identifier_like(column, present.shape[0], n_query_rows, context)
            missing = sum(t.domain.codes_missing[at[id(t)]] for t in queries)
            plan.real_distinct[column] = present.shape[0] + int(missing > 0)
    return plan


def partitioned_attack(
    tables: PartitionedTables,
    known: Sequence[str],
    sensitive: Sequence[str],
    context: Context,
    *,
    continuous: Sequence[str] = (),
    n_bins: int = 10,
    nat_binning: NatBinning = "missing",
    strict_types: bool = False,
    numeric_hint: str = "list it in `continuous_column_names` to bin it",
    pooled: bool = False,
    reuse: PartitionedAttack | None = None,
) -> PartitionedAttack:
    """:func:`attack_codes` and the counts of the CAP attack, on partitioned tables.

    The same caveats are recorded (or raised with ``strict_types``) in the same order.
    With ``pooled``, the attacked rows are the real rows and then the holdout rows,
    binned on the edges of both (the holdout test); ``reuse``: an attack on the same
    tables whose synthetic counts are reused when the codes are the same.
    """
    names = list(dict.fromkeys([*known, *sensitive]))
    _check_encoded(tables, names)
    queries = [tables.real]
    if pooled and tables.holdout is not None:
        queries.append(tables.holdout)
    binned = set(continuous)
    has_dates = any(tables.schema[c].kind == "datetime" for c in binned & set(names))
    origin = time_origin(tables) if has_dates else 0
    plan = _plan(
        tables,
        known,
        names,
        queries,
        context,
        binned=binned,
        n_bins=n_bins,
        nat_binning=nat_binning,
        strict_types=strict_types,
        numeric_hint=numeric_hint,
        origin=origin,
    )
    columns = tuple(plan.columns[c] for c in [*known, *sensitive])
    k = len(known)
    key_radix = tuple(c.size + 1 for c in columns[:k])
    sens_radix = tuple(c.size + 1 for c in columns[k:])
    arrays = tuple(plan.arrays)

    # the synthetic counts (reused when the codes are those of an earlier attack)
    if (
        reuse is not None
        and reuse.columns == columns
        and len(reuse.arrays) == len(arrays)
        and all(np.array_equal(a, b) for a, b in zip(reuse.arrays, arrays, strict=True))
    ):
        counts = reuse.counts
    else:
        counts = _synthetic_counts(
            tables.synthetic, columns, arrays, origin, k, key_radix, sens_radix
        )

    # the real rows' probabilities where their key is in the synthetic table
    binned_sensitive = tuple(j for j, c in enumerate(columns[k:]) if c.mode == "binned")
    layout = Layout(
        k, counts.n_sens, len(arrays), key_radix, sens_radix, binned_sensitive
    )
    lookups = _scatter(
        tables.real.client,
        [
            *arrays,
            *counts.keys.stages,
            *counts.sens.stages,
            counts.pair_ids,
            counts.pair_rows,
            counts.key_rows,
        ],
    )
    scores = []
    present: list[list[np.ndarray]] = [[] for _ in binned_sensitive]
    for table in queries:
        parts = table.map_partitions(score_part, columns, origin, layout, *lookups)
        p, unmatched, ids = zip(
            *((q["p"], q["unmatched"], q["unmatched_ids"]) for q in parts), strict=True
        )
        for i, codes in enumerate(present):
            codes.extend(q["present"][i] for q in parts)
        del parts  # the per-partition arrays: only their concatenation is kept
        scores.append(_Scores(np.concatenate(p), list(unmatched), list(ids)))
        del p
    for j, codes in zip(binned_sensitive, present, strict=True):
        plan.real_distinct[sensitive[j]] = _union(codes).shape[0]

    n_distinct_product = 1
    for column in sensitive:
        n_distinct_product *= plan.real_distinct[column]
    return PartitionedAttack(
        baseline=1 - float(1 / n_distinct_product),
        scores=scores,
        counts=counts,
        n_key=k,
        key_radix=key_radix,
        columns=columns,
        arrays=arrays,
    )


def _synthetic_counts(
    syn: PartitionedTable,
    columns: tuple[Column, ...],
    arrays: Sequence[np.ndarray],
    origin: int,
    k: int,
    key_radix: tuple[int, ...],
    sens_radix: tuple[int, ...],
) -> _SyntheticCounts:
    """Count the synthetic (key, sensitive) tuples per partition and add them up."""
    parts = syn.map_partitions(
        count_part, columns, origin, *_scatter(syn.client, arrays)
    )
    stacked = np.concatenate([rows for rows, _ in parts])
    rows_of = np.concatenate([n for _, n in parts])
    tuples, ids = build_index(stacked, (*key_radix, *sens_radix))
    _, first = np.unique(ids, return_index=True)
    combos = stacked[first]
    combo_rows = np.bincount(ids, weights=rows_of, minlength=tuples.size).astype(
        np.int64
    )
    keys, key_of = build_index(combos[:, :k], key_radix)
    sens, sens_of = build_index(combos[:, k:], sens_radix)
    n_sens = sens.size + 1  # one more id: a sensitive tuple no synthetic row has
    key_rows = np.bincount(key_of, weights=combo_rows, minlength=keys.size).astype(
        np.int64
    )
    pair_ids = key_of * n_sens + sens_of
    order = np.argsort(pair_ids, kind="stable")
    pair_ids, pair_rows = pair_ids[order], combo_rows[order]
    _, key_first = np.unique(key_of, return_index=True)
    key_index = _KeyIndex(
        np.ascontiguousarray(combos[key_first, :k], dtype=np.int64),
        key_rows,
        _offsets(pair_ids // n_sens, keys.size),
        (pair_ids % n_sens).astype(np.int64),
        pair_rows,
    )
    return _SyntheticCounts(
        keys, sens, n_sens, pair_ids, pair_rows, key_rows, key_index
    )


# -------------------------------------------------------------- default columns


def distinct_real_values(tables: PartitionedTables) -> dict[str, int]:
    """Distinct real values of each usable column, missing values counted as one;
    numerical and datetime columns capped at 10 (as :func:`default_cap_columns` counts)."""
    real = tables.real
    capped = list(real.numeric_names)
    parts = real.map_partitions(prepare_part, [], [], list(range(len(capped))), 0)
    out: dict[str, int] = {}
    for j, name in enumerate(capped):
        few = [p["capped"][j] for p in parts]
        if any(f is None for f in few):
            out[name] = CAPPED_DISTINCT
            continue
        n = _union(few).shape[0] + int(real.domain.numeric_missing[j] > 0)
        out[name] = min(n, CAPPED_DISTINCT)
    for j, name in enumerate(real.categorical_names):
        out[name] = real.domain.codes[j].shape[0] + int(
            real.domain.codes_missing[j] > 0
        )
    return out
