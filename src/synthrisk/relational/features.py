# SPDX-License-Identifier: BSD-3-Clause
"""One row per person: the root row plus documented summaries of everything below it.

For each table ``T`` below the root (children, grandchildren …, all summarised per
person), :class:`PersonFeatures` builds:

* ``T.n_rows`` — how many rows the person has in ``T`` (a sequence's length);
* ``T.<col>.mean`` / ``.min`` / ``.max`` — per numeric (and datetime, in days) column;
* ``T.<col>=<value>`` — the share of the person's rows with each value of a
  low-cardinality column (at most ``max_levels`` values among the real rows; boolean
  columns too);
* for a table with a ``sequence_index`` (a sequence), in the order of that index:
  ``T.<col>.last`` — the last value of each column, and the **order-aware** columns
  ``T.event<j>.<col>`` for the first ``n_events`` events (``j`` = 1 … ``n_events``;
  event 1 holds the first values), missing where the sequence is shorter; with a
  datetime index also ``T.span_days``, from the first to the last event.

A person with no rows in ``T`` has ``T.n_rows = 0`` and missing summaries. The columns
are chosen on the real tables (training and holdout pooled) and built the same way for
every side, so the three feature tables have the same columns.

:meth:`PersonFeatures.row_sets` gives each person an **order-free** code of everything
below them: the multiset of their child rows (each row's values, keys and the sequence
index left out), hashed. Two people have the same code when they have the same rows in
every table below the root, in any order, so a copied history whose events were
reordered, or whose values were shuffled among its dates, keeps its code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from synthrisk.relational.metadata import RelationalMetadata, row_order

__all__ = ["PersonFeatures"]

_NUMERIC = "numerical"
_CATEGORICAL = "categorical"
_DAY = 86_400.0


def _mix(x: np.ndarray, salt: int) -> np.ndarray:
    """SplitMix64's finaliser of ``x + salt`` (uint64, wrapping)."""
    z = x + np.uint64(salt & 0xFFFFFFFFFFFFFFFF)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _kind(
    frame: pd.DataFrame, column: str, columns: Mapping[str, Mapping[str, Any]]
) -> str | None:
    """``numerical``, ``datetime``, ``categorical`` or None (not a feature)."""
    sdtype = columns.get(column, {}).get("sdtype")
    if sdtype in ("numerical", "datetime"):
        return str(sdtype)
    if sdtype in ("categorical", "boolean"):
        return _CATEGORICAL
    if sdtype is not None:
        return None  # id, pii, text …
    values = frame[column]
    if pd.api.types.is_bool_dtype(values):
        return _CATEGORICAL
    if pd.api.types.is_numeric_dtype(values):
        return _NUMERIC
    if pd.api.types.is_datetime64_any_dtype(values):
        return "datetime"
    return _CATEGORICAL


def _as_number(values: pd.Series, kind: str) -> pd.Series:
    if kind == "datetime":
        stamps = pd.to_datetime(values, errors="coerce")
        ns = stamps.to_numpy(dtype="datetime64[ns]").view(np.int64).astype(np.float64)
        ns[stamps.isna().to_numpy()] = np.nan
        return pd.Series(ns / 1e9 / _DAY + 0.0, index=values.index)
    # + 0.0: -0.0 and 0.0 are one value (a minimum never depends on the rows' order)
    return pd.to_numeric(values, errors="coerce").astype(np.float64) + 0.0


@dataclasses.dataclass(frozen=True)
class _TablePlan:
    name: str
    numeric: tuple[tuple[str, str], ...]  # (column, kind)
    levels: tuple[tuple[str, tuple[str, ...]], ...]
    sequence_index: str | None
    ordered: tuple[tuple[str, str], ...]  # (column, "numerical" | "categorical")


@dataclasses.dataclass(frozen=True)
class PersonFeatures:
    """The plan of the person features, fitted on the real tables.

    Build it with :meth:`fit`, then :meth:`transform` each side. ``root_columns`` are
    the root row's columns; ``child_columns`` the summaries of the tables below it;
    ``metadata`` the single-table metadata of the feature table (for
    :func:`synthrisk.evaluate`).
    """

    root: str
    root_kinds: tuple[tuple[str, str], ...]
    plans: tuple[_TablePlan, ...]
    n_events: int
    max_levels: int
    metadata: Mapping[str, Any]

    @property
    def root_columns(self) -> list[str]:
        """Feature columns taken from the root row."""
        return [c for c, _ in self.root_kinds]

    @property
    def child_columns(self) -> list[str]:
        """Feature columns that summarise the tables below the root."""
        return [c for c in self.metadata["columns"] if c not in set(self.root_columns)]

    @classmethod
    def fit(
        cls,
        sides: Mapping[str, Mapping[str, pd.DataFrame]],
        metadata: RelationalMetadata,
        *,
        n_events: int = 3,
        max_levels: int = 10,
    ) -> PersonFeatures:
        """Choose the feature columns on the real tables (every side in ``sides`` pooled)."""
        frames = list(sides.values())
        root_spec = metadata.tables[metadata.root]
        pooled_root = pd.concat([f[metadata.root] for f in frames], ignore_index=True)
        root_kinds = []
        columns: dict[str, dict[str, Any]] = {}
        for column in metadata.value_columns(metadata.root, pooled_root):
            kind = _kind(pooled_root, column, root_spec.columns)
            if kind is None:
                continue
            root_kinds.append((column, kind))
            # categorical and boolean columns are categories of the feature table;
            # numbers and datetimes keep their metadata (a datetime's format)
            if kind == _CATEGORICAL:
                columns[column] = {"sdtype": _CATEGORICAL}
            else:
                columns[column] = dict(root_spec.columns.get(column, {})) or {
                    "sdtype": kind
                }
        plans = []
        for name in metadata.descendants():
            spec = metadata.tables[name]
            pooled = pd.concat([f[name] for f in frames], ignore_index=True)
            numeric: list[tuple[str, str]] = []
            levels: list[tuple[str, tuple[str, ...]]] = []
            ordered: list[tuple[str, str]] = []
            columns[f"{name}.n_rows"] = {"sdtype": _NUMERIC}
            for column in metadata.value_columns(name, pooled):
                kind = _kind(pooled, column, spec.columns)
                if kind is None:
                    continue
                if kind in ("numerical", "datetime"):
                    numeric.append((column, kind))
                    for stat in ("mean", "min", "max"):
                        columns[f"{name}.{column}.{stat}"] = {"sdtype": _NUMERIC}
                    ordered.append((column, _NUMERIC))
                else:
                    values = pooled[column].dropna().astype(str)
                    found = tuple(sorted(values.unique()))
                    if 0 < len(found) <= max_levels:
                        levels.append((column, found))
                        for level in found:
                            columns[f"{name}.{column}={level}"] = {"sdtype": _NUMERIC}
                    ordered.append((column, _CATEGORICAL))
            index = spec.sequence_index
            if index is not None:
                ordered = [(c, k) for c, k in ordered if c != index]
                if (
                    index in pooled.columns
                    and _kind(pooled, index, spec.columns) == "datetime"
                ):
                    columns[f"{name}.span_days"] = {"sdtype": _NUMERIC}
                for column, kind in ordered:
                    columns[f"{name}.{column}.last"] = {"sdtype": kind}
                for j in range(1, n_events + 1):
                    for column, kind in ordered:
                        columns[f"{name}.event{j}.{column}"] = {"sdtype": kind}
            plans.append(
                _TablePlan(name, tuple(numeric), tuple(levels), index, tuple(ordered))
            )
        return cls(
            root=metadata.root,
            root_kinds=tuple(root_kinds),
            plans=tuple(plans),
            n_events=n_events,
            max_levels=max_levels,
            metadata={"columns": columns},
        )

    def transform(
        self,
        tables: Mapping[str, pd.DataFrame],
        person: Mapping[str, pd.Series],
    ) -> pd.DataFrame:
        """The feature table of one side: one row per root row, in the root's order.

        Parameters
        ----------
        tables : dict of str to DataFrame
            One side's tables (never modified).
        person : dict of str to Series
            Each row's person (:func:`~synthrisk.relational.people.person_of_rows`).

        Returns
        -------
        DataFrame
            Indexed by the root key (as text), one column per feature of
            ``metadata["columns"]``, in that order.
        """
        ids = person[self.root].astype(str).to_numpy()
        root = tables[self.root]
        parts: dict[str, pd.Series | np.ndarray] = {}
        for column, kind in self.root_kinds:
            values = root[column]
            if kind == _CATEGORICAL:
                parts[column] = (
                    values.astype(object).where(values.notna(), None).to_numpy()
                )
            else:
                parts[column] = values.to_numpy()
        out = pd.DataFrame(parts, index=pd.Index(ids, name="person"))
        extra: dict[str, pd.Series] = {}
        for plan in self.plans:
            extra.update(
                self._summaries(plan, tables[plan.name], person[plan.name], ids)
            )
        if extra:
            out = pd.concat([out, pd.DataFrame(extra, index=out.index)], axis=1)
        cols = list(self.metadata["columns"])
        return out.reindex(columns=cols)

    def row_sets(
        self,
        tables: Mapping[str, pd.DataFrame],
        person: Mapping[str, pd.Series],
    ) -> np.ndarray:
        """Each person's order-free code: the multiset of their rows below the root.

        A row enters by its values in the plan's columns (keys, ids and the sequence
        index left out; numbers and datetimes as floats, other values as text), tagged
        with its table; the codes of a person's rows are combined by sums of two
        mixing functions, so the code depends on which rows (with their counts) a
        person has, never on their order.

        Parameters
        ----------
        tables : dict of str to DataFrame
            One side's tables (never modified).
        person : dict of str to Series
            Each row's person (:func:`~synthrisk.relational.people.person_of_rows`).

        Returns
        -------
        ndarray of uint64, shape (n_people,)
            In the root's order; 0 for a person without rows below the root.
        """
        ids = person[self.root].astype(str).to_numpy()
        n = ids.size
        first = np.zeros(n, dtype=np.uint64)
        second = np.zeros(n, dtype=np.uint64)
        count = np.zeros(n, dtype=np.uint64)
        index = pd.Index(ids)
        with np.errstate(over="ignore"):
            for t, plan in enumerate(self.plans):
                frame = tables[plan.name]
                if len(frame) == 0:
                    continue
                position = index.get_indexer(person[plan.name].astype(str).to_numpy())
                parts: dict[str, np.ndarray] = {}
                for column, kind in plan.ordered:
                    raw = frame[column]
                    if kind == _NUMERIC:
                        source = (
                            "datetime"
                            if pd.api.types.is_datetime64_any_dtype(raw)
                            or dict(plan.numeric).get(column) == "datetime"
                            else _NUMERIC
                        )
                        parts[column] = _as_number(raw, source).to_numpy()
                    else:
                        codes, uniques = pd.factorize(raw, use_na_sentinel=True)
                        text = np.array(
                            [str(u) for u in uniques] + [None], dtype=object
                        )
                        parts[column] = text[codes]  # -1 (missing) -> None
                if parts:
                    rows = pd.util.hash_pandas_object(
                        pd.DataFrame(parts), index=False
                    ).to_numpy(dtype=np.uint64)
                else:
                    rows = np.zeros(len(frame), dtype=np.uint64)
                rows = _mix(rows, 0x9E3779B97F4A7C15 * (t + 1))
                ok = position >= 0
                at = position[ok]
                np.add.at(first, at, _mix(rows[ok], 1))
                np.add.at(second, at, _mix(rows[ok], 2))
                np.add.at(count, at, np.uint64(1))
            code = _mix(first ^ _mix(second, 3) ^ _mix(count, 4), 5)
        code[count == 0] = 0
        code[(count > 0) & (code == 0)] = 1
        return code

    def _summaries(
        self, plan: _TablePlan, frame: pd.DataFrame, person: pd.Series, ids: np.ndarray
    ) -> dict[str, pd.Series]:
        name = plan.name
        index = pd.Index(ids)
        n = ids.size
        # each row's person as a position in ``ids`` (every row has one: keys checked)
        position = index.get_indexer(person.astype(str).to_numpy())
        # each person's rows in a canonical order (by the sequence index, then by their
        # values), so every summary below is reduced in an order that depends on the
        # rows alone, never on the order they came in: sums of floats, last values and
        # events are the same for the same rows in any order
        by = [c for c, _ in plan.ordered]
        if plan.sequence_index is not None:
            by = [plan.sequence_index, *by]
        canonical = row_order(frame, by, first=(position,))
        frame = frame.iloc[canonical]
        position = position[canonical]
        out: dict[str, pd.Series] = {}
        counts = np.bincount(position, minlength=n).astype(np.float64)
        out[f"{name}.n_rows"] = pd.Series(counts, index=index)
        for column, kind in plan.numeric:
            values = _as_number(frame[column], kind).to_numpy()
            stats = (
                pd.Series(values)
                .groupby(position)
                .agg(["mean", "min", "max"])
                .reindex(range(n))
            )
            for stat in ("mean", "min", "max"):
                out[f"{name}.{column}.{stat}"] = pd.Series(
                    stats[stat].to_numpy(dtype=np.float64), index=index
                )
        for column, found in plan.levels:
            raw = frame[column]
            codes, uniques = pd.factorize(raw, use_na_sentinel=True)
            # each value of the column -> the level it is (by text), or -1
            level_of = {level: j for j, level in enumerate(found)}
            which = np.array(
                [level_of.get(str(u), -1) for u in uniques], dtype=np.int64
            )
            row_level = np.where(codes >= 0, which[np.maximum(codes, 0)], -1)
            hit = row_level >= 0
            hits = np.bincount(
                position[hit] * len(found) + row_level[hit],
                minlength=n * len(found),
            ).reshape(n, len(found))
            with np.errstate(invalid="ignore", divide="ignore"):
                shares = np.where(counts[:, None] > 0, hits / counts[:, None], np.nan)
            for j, level in enumerate(found):
                out[f"{name}.{column}={level}"] = pd.Series(shares[:, j], index=index)
        if plan.sequence_index is None:
            return out
        order_values = frame[plan.sequence_index]
        sort_key = (
            _as_number(order_values, "datetime")
            if pd.api.types.is_datetime64_any_dtype(order_values)
            or isinstance(order_values.dtype, pd.StringDtype)
            or order_values.dtype == object
            else pd.to_numeric(order_values, errors="coerce")
        ).to_numpy(dtype=np.float64)
        # rows by person, then by the index (missing last), then by their values (the
        # canonical order above)
        rows = np.lexsort((np.arange(len(frame)), sort_key, position))
        people = position[rows]
        starts = np.r_[True, people[1:] != people[:-1]] if rows.size else np.array([])
        first_row = np.flatnonzero(starts)
        rank = np.arange(rows.size) - np.repeat(
            first_row, np.diff(np.r_[first_row, rows.size])
        )
        if f"{name}.span_days" in self.metadata["columns"]:
            span = pd.Series(sort_key).groupby(position).agg(["min", "max"])
            span = span.reindex(range(n))
            out[f"{name}.span_days"] = pd.Series(
                (span["max"] - span["min"]).to_numpy(dtype=np.float64), index=index
            )
        last = np.r_[people[1:] != people[:-1], True] if rows.size else np.array([])
        last = last.astype(bool)
        for column, kind in plan.ordered:
            raw = frame[column].iloc[rows]
            if kind == _NUMERIC:
                source_kind = (
                    "datetime"
                    if pd.api.types.is_datetime64_any_dtype(raw)
                    else _NUMERIC
                )
                ordered_values = _as_number(raw, source_kind).to_numpy()
                empty: np.ndarray = np.full(n, np.nan)
            else:
                ordered_values = raw.astype(object).where(raw.notna(), None).to_numpy()
                empty = np.full(n, np.nan, dtype=object)
            at_last = empty.copy()
            at_last[people[last]] = ordered_values[last]
            out[f"{name}.{column}.last"] = pd.Series(at_last, index=index)
            for j in range(1, self.n_events + 1):
                at = rank == j - 1
                event = empty.copy()
                event[people[at]] = ordered_values[at]
                out[f"{name}.event{j}.{column}"] = pd.Series(event, index=index)
        return out
