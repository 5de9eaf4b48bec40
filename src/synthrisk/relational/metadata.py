# SPDX-License-Identifier: BSD-3-Clause
"""Multi-table and sequential metadata (SDV's formats), and the checks of related tables.

Two formats are read:

* **multi-table** (SDV's ``MULTI_TABLE_V1``): ``{"tables": {name: {"primary_key": ...,
  "columns": {...}, "sequence_index": ...}}, "relationships": [{"parent_table_name",
  "parent_primary_key", "child_table_name", "child_foreign_key"}]}``;
* **sequential** (SDV's single-table metadata with ``sequence_key``): one table whose
  ``sequence_key`` column names the person of each row and whose ``sequence_index``
  orders their rows. It is turned into two tables (:func:`expand_sequences`): one row
  per person (named after the sequence key, holding the columns that never change
  within a real person's sequence) and their events.

The **root** table is the one whose rows are people: the one table without a parent,
or the one named with ``root``. Every table below it reaches it through one chain of
foreign keys (the first one found, breadth first), which gives each of its rows a person.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthrisk.exceptions import (
    KeyIntegrityError,
    ParameterError,
    RelationshipError,
    TableMismatchError,
)
from synthrisk.schema import parse_dates

__all__ = [
    "SIDES",
    "RelationalMetadata",
    "Relationship",
    "SequenceSpec",
    "TableSpec",
    "check_tables",
    "expand_sequences",
    "load_metadata",
    "normalise_tables",
    "row_order",
]

#: the names of the three sides, in the order they are checked
SIDES = ("real", "synthetic", "holdout")


@dataclasses.dataclass(frozen=True)
class Relationship:
    """A foreign key: ``child.child_key`` names a row of ``parent`` by ``parent_key``."""

    parent: str
    parent_key: str
    child: str
    child_key: str


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """One table of the metadata: its columns (SDV column metadata), keys and order."""

    name: str
    columns: Mapping[str, Mapping[str, Any]]
    primary_key: str | None = None
    sequence_index: str | None = None


@dataclasses.dataclass(frozen=True)
class SequenceSpec:
    """Sequential metadata: one table of events, ``key`` names the person, ``index`` orders."""

    table: str
    key: str
    index: str | None
    columns: Mapping[str, Mapping[str, Any]]
    context_columns: tuple[str, ...] | None = None


@dataclasses.dataclass(frozen=True)
class RelationalMetadata:
    """Tables, their relationships and the root table whose rows are people.

    Build it with :func:`load_metadata`. With sequential metadata, ``sequence`` is set
    and ``tables`` is empty until :func:`expand_sequences` turns the events into a
    root table and a child table.
    """

    tables: Mapping[str, TableSpec]
    relationships: tuple[Relationship, ...]
    root: str
    sequence: SequenceSpec | None = None

    def links(self) -> dict[str, Relationship]:
        """For each table below the root, the relationship that leads to its parent.

        Breadth first from the root; a table with several parents in the root's tree
        takes the first one reached (in the order of ``relationships``).
        """
        out: dict[str, Relationship] = {}
        queue = [self.root]
        seen = {self.root}
        while queue:
            parent = queue.pop(0)
            for rel in self.relationships:
                if rel.parent == parent and rel.child not in seen:
                    seen.add(rel.child)
                    out[rel.child] = rel
                    queue.append(rel.child)
        return out

    def descendants(self) -> list[str]:
        """The tables below the root, parents before children."""
        return list(self.links())

    def detached(self) -> list[str]:
        """Tables outside the root's tree (evaluated per table, without people)."""
        inside = {self.root, *self.links()}
        return [name for name in self.tables if name not in inside]

    def key_columns(self, table: str) -> list[str]:
        """The primary key and every foreign key of ``table`` (never used as values)."""
        spec = self.tables[table]
        keys = [] if spec.primary_key is None else [spec.primary_key]
        keys += [r.child_key for r in self.relationships if r.child == table]
        return list(dict.fromkeys(keys))

    def value_columns(self, table: str, frame: pd.DataFrame) -> list[str]:
        """Columns of ``frame`` that describe something (keys and ``id`` columns left out)."""
        keys = set(self.key_columns(table))
        columns = self.tables[table].columns
        return [
            str(c)
            for c in frame.columns
            if c not in keys and columns.get(str(c), {}).get("sdtype") != "id"
        ]


def _read(metadata: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, Any]:
    if isinstance(metadata, (str, os.PathLike)):
        from synthrisk.io import read_metadata

        return read_metadata(Path(metadata))
    if not isinstance(metadata, Mapping):
        msg = (
            "`metadata` must be SDV's multi-table or sequential metadata (a dict) or the "
            f"path of its JSON file; got {type(metadata).__name__}."
        )
        raise ParameterError(msg)
    return dict(metadata)


def _columns(name: str, data: Any) -> dict[str, dict[str, Any]]:
    columns = data.get("columns") if isinstance(data, Mapping) else None
    if not isinstance(columns, Mapping):
        msg = f"table {name!r} of the metadata has no 'columns' mapping; give each table its columns."
        raise RelationshipError(msg)
    return {
        str(k): dict(v) if isinstance(v, Mapping) else {} for k, v in columns.items()
    }


def load_metadata(
    metadata: Mapping[str, Any] | str | os.PathLike[str] | RelationalMetadata,
    *,
    root: str | None = None,
) -> RelationalMetadata:
    """Read SDV's multi-table metadata, or sequential metadata, into :class:`RelationalMetadata`.

    Parameters
    ----------
    metadata : dict, path or RelationalMetadata
        SDV's multi-table metadata (``tables`` and ``relationships``), or single-table
        metadata with a ``sequence_key`` (flat, or inside ``tables`` as SDV writes
        ``SINGLE_TABLE_V1``), or the path of a JSON / YAML file holding either.
    root : str, default=None
        The table whose rows are people; None: the one table without a parent.

    Returns
    -------
    RelationalMetadata

    Raises
    ------
    RelationshipError
        A relationship names an unknown table or column, the relationships form a
        cycle, several tables have no parent and ``root`` is not given, ``root`` is not a
        table, or single-table metadata has no ``sequence_key``.
    """
    if isinstance(metadata, RelationalMetadata):
        if root is None or root == metadata.root:
            return metadata
        return dataclasses.replace(metadata, root=root)
    data = _read(metadata)
    tables = data.get("tables")
    relationships = data.get("relationships") or []
    if isinstance(tables, Mapping) and len(tables) == 1 and not relationships:
        (name, table), *_ = tables.items()
        if isinstance(table, Mapping) and table.get("sequence_key"):
            return _sequential(str(name), dict(table))
    if tables is None and "columns" in data:
        if data.get("sequence_key"):
            return _sequential(None, data)
        msg = (
            "the metadata describes one table without a `sequence_key`: evaluate it with "
            "synthrisk.evaluate, or give multi-table metadata (tables and relationships) "
            "or sequential metadata (a `sequence_key` naming the person of each row)."
        )
        raise RelationshipError(msg)
    if not isinstance(tables, Mapping) or not tables:
        msg = "the metadata has no 'tables' mapping; give SDV's multi-table metadata."
        raise RelationshipError(msg)
    specs = {
        str(name): TableSpec(
            name=str(name),
            columns=_columns(str(name), table),
            primary_key=table.get("primary_key"),
            sequence_index=table.get("sequence_index"),
        )
        for name, table in tables.items()
    }
    rels = tuple(_relationship(r, specs) for r in relationships)
    _check_acyclic(rels)
    return RelationalMetadata(specs, rels, _root(specs, rels, root))


def _relationship(data: Any, specs: Mapping[str, TableSpec]) -> Relationship:
    fields = (
        "parent_table_name",
        "parent_primary_key",
        "child_table_name",
        "child_foreign_key",
    )
    if not isinstance(data, Mapping) or any(f not in data for f in fields):
        msg = f"a relationship must give {list(fields)}; got {data!r}."
        raise RelationshipError(msg)
    rel = Relationship(*(str(data[f]) for f in fields))
    for table, column in ((rel.parent, rel.parent_key), (rel.child, rel.child_key)):
        if table not in specs:
            msg = (
                f"a relationship names table {table!r}, which the metadata does not describe; "
                f"tables: {sorted(specs)}."
            )
            raise RelationshipError(msg)
        if column not in specs[table].columns:
            msg = (
                f"a relationship names column {column!r} of table {table!r}, which its metadata "
                "does not list; add the column to the table's metadata or fix the relationship."
            )
            raise RelationshipError(msg)
    if specs[rel.parent].primary_key != rel.parent_key:
        msg = (
            f"the relationship {rel.parent}.{rel.parent_key} → {rel.child}.{rel.child_key} must "
            f"point at the primary key of {rel.parent!r} "
            f"({specs[rel.parent].primary_key!r}); set it as 'primary_key' of {rel.parent!r}."
        )
        raise RelationshipError(msg)
    return rel


def _check_acyclic(rels: tuple[Relationship, ...]) -> None:
    children: dict[str, list[str]] = {}
    for rel in rels:
        children.setdefault(rel.parent, []).append(rel.child)
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for child in children.get(node, []):
            if state.get(child) == 1:
                cycle = (
                    [*path[path.index(child) :], child]
                    if child in path
                    else [node, child]
                )
                msg = (
                    f"the relationships form a cycle: {' → '.join(cycle)}; people are defined "
                    "by a tree of tables, so drop the relationship that points back (a table "
                    "that references itself, or a child that is also an ancestor)."
                )
                raise RelationshipError(msg)
            if state.get(child) is None:
                visit(child, [*path, child])
        state[node] = 2

    for node in sorted(children):
        if state.get(node) is None:
            visit(node, [node])


def _root(
    specs: Mapping[str, TableSpec], rels: tuple[Relationship, ...], root: str | None
) -> str:
    if root is not None:
        if root not in specs:
            msg = f"`root` names {root!r}, which is not a table of the metadata; tables: {sorted(specs)}."
            raise RelationshipError(msg)
        if specs[root].primary_key is None:
            msg = f"the root table {root!r} needs a 'primary_key' naming its people."
            raise RelationshipError(msg)
        return root
    children = {r.child for r in rels}
    parents = {r.parent for r in rels}
    candidates = [name for name in specs if name not in children and name in parents]
    if not candidates:
        candidates = [name for name in specs if name not in children]
    if len(candidates) != 1:
        msg = (
            f"several tables have no parent ({sorted(candidates)}): name the one whose rows are "
            "people with `root=`."
        )
        raise RelationshipError(msg)
    name = candidates[0]
    if specs[name].primary_key is None:
        msg = f"the root table {name!r} needs a 'primary_key' naming its people."
        raise RelationshipError(msg)
    return name


def _sequential(name: str | None, data: Mapping[str, Any]) -> RelationalMetadata:
    columns = _columns(name or "the sequence table", data)
    key = str(data["sequence_key"])
    index = data.get("sequence_index")
    for column, role in ((key, "sequence_key"), (index, "sequence_index")):
        if column is not None and column not in columns:
            msg = f"the {role} {column!r} is not a column of the metadata; add it to 'columns'."
            raise RelationshipError(msg)
    context = data.get("context_columns")
    spec = SequenceSpec(
        table=name or "",
        key=key,
        index=None if index is None else str(index),
        columns=columns,
        context_columns=None if context is None else tuple(map(str, context)),
    )
    return RelationalMetadata({}, (), root=key, sequence=spec)


def _root_name(spec: SequenceSpec) -> str:
    return spec.key if spec.key != spec.table else f"{spec.key}_people"


def expand_sequences(
    sides: Mapping[str, Mapping[str, pd.DataFrame] | None],
    metadata: RelationalMetadata,
) -> tuple[dict[str, dict[str, pd.DataFrame] | None], RelationalMetadata]:
    """Turn one sequence table per side into a root table of people and their events.

    The root table is named after the sequence key and has one row per person: the key
    and the **context columns** — those named ``context_columns`` in the metadata, or
    else every column whose value never changes within a real person's sequence (read
    on the real table). A synthetic person whose context varies takes their first
    row's values. The events keep the key (now a foreign key), the index and the other
    columns. Multi-table metadata is returned unchanged.

    Raises
    ------
    TableMismatchError
        A side does not hold exactly one table.
    KeyIntegrityError
        A side's table lacks the sequence key.
    """
    spec = metadata.sequence
    if spec is None:
        return {k: None if v is None else dict(v) for k, v in sides.items()}, metadata
    frames: dict[str, pd.DataFrame] = {}
    table = spec.table
    for side, tables in sides.items():
        if tables is None:
            continue
        if len(tables) != 1 or (table and table not in tables):
            msg = (
                f"sequential metadata describes one table{f' ({table!r})' if table else ''}; the "
                f"{side} side holds {sorted(tables)}. Pass that one table on every side."
            )
            raise TableMismatchError(msg)
        (name, frame), *_ = tables.items()
        table = table or str(name)
        if spec.key not in frame.columns:
            msg = (
                f"the {side} table {table!r} lacks the sequence key {spec.key!r}; "
                "every row must name its person."
            )
            raise KeyIntegrityError(msg)
        frames[side] = frame
    real = frames["real"]
    if spec.context_columns is not None:
        context = [c for c in spec.context_columns if c in real.columns]
    else:
        others = [c for c in real.columns if c not in (spec.key, spec.index)]
        constant = real.groupby(spec.key, sort=False)[others].nunique(dropna=False)
        context = [c for c in others if bool((constant[c] <= 1).all())]
    root = _root_name(dataclasses.replace(spec, table=table))
    out: dict[str, dict[str, pd.DataFrame] | None] = dict.fromkeys(sides)
    for side, frame in frames.items():
        # rows by person, then in sequence order (ties by their values): the person's
        # context is their first event's, whatever order the rows came in
        rest = [c for c in frame.columns if c not in (spec.key, spec.index)]
        first = [spec.key] if spec.index is None else [spec.key, spec.index]
        frame = frame.iloc[row_order(frame, [*first, *rest])].reset_index(drop=True)
        people = frame[[spec.key, *context]].drop_duplicates(spec.key, keep="first")
        events = frame[[c for c in frame.columns if c not in context]]
        out[side] = {root: people.reset_index(drop=True), table: events}
    root_columns = {spec.key: {"sdtype": "id"}}
    root_columns.update({c: dict(spec.columns.get(c, {})) for c in context})
    event_columns = {c: dict(v) for c, v in spec.columns.items() if c not in context}
    event_columns.setdefault(spec.key, {"sdtype": "id"})
    specs = {
        root: TableSpec(root, root_columns, primary_key=spec.key),
        table: TableSpec(table, event_columns, sequence_index=spec.index),
    }
    rel = Relationship(root, spec.key, table, spec.key)
    expanded = RelationalMetadata(
        specs, (rel,), root, dataclasses.replace(spec, table=table)
    )
    return out, expanded


def check_tables(
    sides: Mapping[str, Mapping[str, pd.DataFrame] | None],
    metadata: RelationalMetadata,
) -> None:
    """Check that every side holds the metadata's tables and that their keys hold together.

    Raises
    ------
    TableMismatchError
        A table is on one side only, or a side holds a table the metadata does not
        describe.
    KeyIntegrityError
        A key column is missing, a primary key repeats or is missing, or a foreign key
        names no row of its parent table (an orphan).
    """
    names = set(metadata.tables)
    for side in SIDES:
        tables = sides.get(side)
        if tables is None:
            continue
        if not isinstance(tables, Mapping):
            msg = f"`{side}` must map table names to DataFrames; got {type(tables).__name__}."
            raise ParameterError(msg)
        for name, frame in tables.items():
            if not isinstance(frame, pd.DataFrame):
                msg = f"table {name!r} of `{side}` must be a pandas DataFrame; got {type(frame).__name__}."
                raise ParameterError(msg)
        missing = sorted(names - set(tables))
        extra = sorted(set(tables) - names)
        if missing:
            present = [s for s in SIDES if missing[0] in (sides.get(s) or {})]
            where = f" (present in {present})" if present else ""
            msg = (
                f"table {missing[0]!r} is missing from the {side} side{where}; every side must "
                "hold every table of the metadata: pass it, or drop it from the metadata."
            )
            raise TableMismatchError(msg)
        if extra:
            msg = (
                f"the {side} side holds table {extra[0]!r}, which the metadata does not describe; "
                "add it to the metadata or leave it out."
            )
            raise TableMismatchError(msg)
        for name in sorted(names):
            _check_keys(side, name, tables[name], metadata)
        for rel in metadata.relationships:
            _check_orphans(side, rel, tables)


def _check_keys(
    side: str, name: str, frame: pd.DataFrame, metadata: RelationalMetadata
) -> None:
    spec = metadata.tables[name]
    needed = [*metadata.key_columns(name)]
    if spec.sequence_index is not None:
        needed.append(spec.sequence_index)
    for column in needed:
        if column not in frame.columns:
            msg = (
                f"the {side} table {name!r} lacks the key column {column!r} that the metadata "
                "names; add the column, or fix the metadata's keys."
            )
            raise KeyIntegrityError(msg)
    key = spec.primary_key
    if key is None:
        return
    values = frame[key]
    if values.isna().any():
        msg = (
            f"the primary key {name}.{key} is missing in {int(values.isna().sum())} row(s) of the "
            f"{side} side; every row needs its own key."
        )
        raise KeyIntegrityError(msg)
    repeated = values[values.duplicated()]
    if len(repeated):
        msg = (
            f"the primary key {name}.{key} is not unique on the {side} side: "
            f"{repeated.nunique()} value(s) repeat (for example {repeated.iloc[0]!r}); give each "
            "row its own key."
        )
        raise KeyIntegrityError(msg)


def _check_orphans(
    side: str, rel: Relationship, tables: Mapping[str, pd.DataFrame]
) -> None:
    child = tables[rel.child][rel.child_key]
    parent = tables[rel.parent][rel.parent_key]
    orphan = child.isna() | ~child.isin(parent)
    if orphan.any():
        example = child[orphan].iloc[0]
        msg = (
            f"{int(orphan.sum())} row(s) of the {side} table {rel.child!r} have a foreign key "
            f"{rel.child_key!r} that names no row of {rel.parent!r} (orphans, for example "
            f"{example!r}); every child row must belong to a parent row: drop the orphans or "
            "add their parents."
        )
        raise KeyIntegrityError(msg)


def _rank(values: pd.Series) -> np.ndarray:
    """A sort key of one column: equal values get equal keys, missing values last."""
    dtype = values.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype):
        if getattr(values.dt, "tz", None) is not None:
            values = values.dt.tz_convert("UTC").dt.tz_localize(None)
        ns = values.to_numpy(dtype="datetime64[ns]").view(np.int64).copy()
        ns[values.isna().to_numpy()] = np.iinfo(np.int64).max
        return ns
    if (
        pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype)
    ) and not (
        isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_complex_dtype(dtype)
    ):
        # + 0.0 makes -0.0 and 0.0 one key; NaN sorts last
        return values.to_numpy(dtype=np.float64, na_value=np.nan) + 0.0
    codes, uniques = pd.factorize(values.astype(object), use_na_sentinel=True)
    by_text = sorted(
        range(len(uniques)),
        key=lambda j: (str(uniques[j]), type(uniques[j]).__name__),
    )
    rank = np.empty(len(uniques) + 1, dtype=np.int64)
    rank[by_text] = np.arange(len(uniques))
    rank[-1] = len(uniques)  # missing (code -1) last
    return rank[codes]


def row_order(
    frame: pd.DataFrame,
    columns: Sequence[Hashable],
    *,
    first: tuple[np.ndarray, ...] = (),
) -> np.ndarray:
    """The canonical order of a table's rows: by ``first``, then by ``columns``' values.

    Two tables holding the same rows in different orders are put in the same order
    (rows equal in every one of ``columns`` keep their relative order, and are
    interchangeable for whatever reads only those columns). Numbers and dates sort by
    value, other values by their text; missing values last.

    Parameters
    ----------
    frame : DataFrame
        The table (not modified).
    columns : list of column labels
        The columns to sort by, the first one first.
    first : tuple of ndarray, default=()
        Sort keys (one value per row) that come before ``columns``, the first one
        first (each row's person, say).

    Returns
    -------
    ndarray of intp, shape (n_rows,)
        Row positions in the canonical order.
    """
    keys = [*first, *(_rank(frame[c]) for c in columns)]
    if not keys or len(frame) == 0:
        return np.arange(len(frame), dtype=np.intp)
    return np.lexsort(keys[::-1]).astype(np.intp)


def normalise_tables(
    sides: Mapping[str, Mapping[str, pd.DataFrame] | None],
    metadata: RelationalMetadata,
) -> dict[str, dict[str, pd.DataFrame] | None]:
    """Every side's checked tables with their dates parsed and their rows in canonical order.

    Date columns are parsed once, here, for every consumer (the person features, the
    linkage attack, each table's metrics) as single tables parse them
    (:func:`synthrisk.schema.parse_dates`: by the metadata's ``sdtype`` and
    ``datetime_format``, or by content). Rows are then put in a canonical order
    (:func:`row_order`): by primary key, or by every column for a table without one, so
    the same rows given in another order give the same results.

    Parameters
    ----------
    sides : dict of str to (dict of str to DataFrame or None)
        The ``real``, ``synthetic`` and ``holdout`` tables (checked by
        :func:`check_tables`; never modified).
    metadata : RelationalMetadata
        Multi-table metadata (sequential metadata expanded).

    Returns
    -------
    dict of str to (dict of str to DataFrame or None)
        The same sides and tables: copies, with a fresh row index.
    """
    out: dict[str, dict[str, pd.DataFrame] | None] = {
        side: None if tables is None else dict(tables) for side, tables in sides.items()
    }
    present = {side: tables for side, tables in out.items() if tables is not None}
    for name, spec in metadata.tables.items():
        frames = {side: tables[name] for side, tables in present.items()}
        parsed = parse_dates(
            frames, spec.columns, table=name, skip=metadata.key_columns(name)
        )
        for side, frame in parsed.items():
            columns = (
                [spec.primary_key]
                if spec.primary_key is not None
                else list(frame.columns)
            )
            order = row_order(frame, columns)
            present[side][name] = frame.iloc[order].reset_index(drop=True)
    return out
