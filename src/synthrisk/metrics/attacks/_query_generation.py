# SPDX-License-Identifier: BSD-3-Clause
"""Singling-out query generation: Anonymeter 1.1's univariate, multivariate and baseline queries.

Queries are generated in vectorised batches of integer column / operator / value arrays
(:class:`~synthrisk.metrics.attacks._queries.QueryBatch`), kept only when they single
out exactly one synthetic row, deduplicated, and rendered as text at the end.
"""

from __future__ import annotations

import dataclasses
import itertools
import keyword
import math
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._progress import Progress
from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics.attacks._queries import (
    OP_EQ,
    OP_GE,
    OP_GT,
    OP_ISNULL,
    OP_LE,
    OP_LT,
    OP_NE,
    OP_NEVER,
    OP_NOTNULL,
    ColumnInfo,
    QueryBatch,
    QueryTable,
    choose_columns,
    count_matches,
    format_value,
)

__all__ = [
    "Rules",
    "baseline_queries",
    "dedup",
    "multivariate_queries",
    "univariate_queries",
]

_BATCH_MIN = 1000
_BATCH_MAX = 200_000
_ENUMERATE_MAX = 2_000_000
_KIND_CODE = {"numerical": 0, "datetime": 1, "categorical": 2, "boolean": 3}
_NUMERIC_OPS = np.array([OP_EQ, OP_NE, OP_GT, OP_LT, OP_GE, OP_LE], dtype=np.int8)


def dedup(values: FloatArray) -> IntArray:
    """Positions of the first occurrence of every distinct row (NaN equals NaN)."""
    if values.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    duplicated = pd.DataFrame(values).duplicated(keep="first").to_numpy()
    return np.flatnonzero(~duplicated)


class Rules:
    """Version-dependent rules of query generation and evaluation."""

    def __init__(
        self, info: ColumnInfo, compat: str | None, mode: str, warnings: list[str]
    ) -> None:
        self.compat = compat
        self.info = info
        m = info.n_columns
        kinds = np.array([_KIND_CODE[k] for k in info.kinds], dtype=np.int64)
        self.kinds = kinds
        # pandas' `!=` is True for a missing value (Anonymeter 1.0); polars' is null
        self.ne_matches_null = compat == "anonymeter-1.0"
        # columns whose predicates can never match (Anonymeter 1.0's failing queries)
        never = np.zeros(m, dtype=bool)
        if compat == "anonymeter-1.0":
            for j, name in enumerate(info.names):
                if not name.isidentifier() or keyword.iskeyword(name):
                    never[j] = True
            never |= kinds == _KIND_CODE["datetime"]
            if never.any():
                warnings.append(
                    "Anonymeter 1.0 compatibility: columns "
                    f"{[info.names[j] for j in np.flatnonzero(never)]} never appear in a working query "
                    "(names that are not Python identifiers and datetime columns make 1.0's pandas queries "
                    "fail silently)."
                )
        self.never = never
        # ordered kinds: half-lines in multivariate mode, min/max in univariate mode
        halfline = kinds == _KIND_CODE["numerical"]
        if compat != "anonymeter-1.0":
            halfline |= kinds == _KIND_CODE["datetime"]
        self.halfline = halfline & ~never
        minmax = kinds == _KIND_CODE["numerical"]
        if compat is None:
            minmax |= kinds == _KIND_CODE["datetime"]
        self.minmax = minmax & ~never
        # baseline operators: 6 comparison operators for these columns, == / != otherwise
        base_numeric = kinds == _KIND_CODE["numerical"]
        if compat is None:
            base_numeric |= kinds == _KIND_CODE["datetime"]
        self.base_numeric = base_numeric
        if (
            compat == "anonymeter-1.1"
            and mode == "multivariate"
            and (kinds == _KIND_CODE["datetime"]).any()
        ):
            warnings.append(
                "Anonymeter 1.1 compatibility: Anonymeter 1.1 raises an error on datetime columns in "
                "multivariate mode (it compares them with strings); synthrisk uses half-lines on them as "
                "in its default mode."
            )
        # Anonymeter 1.1 escapes quotes in string values of multivariate queries, so those
        # predicates never match
        self.bad_codes: dict[int, np.ndarray] = {}
        if compat == "anonymeter-1.1":
            for j, categories in enumerate(info.categories):
                if categories is None:
                    continue
                bad = np.array(
                    [isinstance(v, str) and ("'" in v or '"' in v) for v in categories],
                    dtype=bool,
                )
                if bad.any():
                    self.bad_codes[j] = bad

    def multivariate_ops(
        self, cols: IntArray, vals: FloatArray, medians: FloatArray
    ) -> np.ndarray:
        """Operators of multivariate queries built from record values ``vals``."""
        with np.errstate(invalid="ignore"):
            above = vals > medians[cols]
        ops = np.full(cols.shape, OP_EQ, dtype=np.int8)
        half = self.halfline[cols]
        ops[half & above] = OP_GE
        ops[half & ~above] = OP_LE
        ops[np.isnan(vals)] = OP_ISNULL
        for j, bad in self.bad_codes.items():
            sel = (cols == j) & ~np.isnan(vals)
            if sel.any():
                hit = np.zeros(cols.shape, dtype=bool)
                hit[sel] = bad[vals[sel].astype(np.int64)]
                ops[hit] = OP_NEVER
        ops[self.never[cols]] = OP_NEVER
        return ops

    def v10_text(
        self,
        cols: IntArray,
        ops: np.ndarray,
        vals: FloatArray,
        length: int,
        *,
        univariate: bool,
    ) -> str:
        """The query as Anonymeter 1.0 writes it (its duplicate check compares sorted characters)."""
        parts = []
        for t in range(length):
            j, op, v = int(cols[t]), int(ops[t]), float(vals[t])
            name = self.info.names[j]
            if op == OP_ISNULL:
                parts.append(f"{name}.isna()")
                continue
            text = format_value(self.info, j, v)
            kind = self.info.kinds[j]
            if kind in ("categorical", "boolean"):
                categories = self.info.categories[j]
                assert categories is not None
                item = categories[int(v)]
                if isinstance(item, str):
                    text = "'" + item.replace('"', '\\"').replace("'", "\\'") + "'"
                elif not univariate and kind != "boolean":
                    text = f'"{item}"'
                else:
                    text = str(item)
            symbol = {OP_EQ: "==", OP_LE: "<=", OP_GE: ">="}.get(op, "==")
            parts.append(
                f"{name} {symbol} {text}" if univariate else f"{name}{symbol} {text}"
            )
        return " & ".join(parts)


def _keep_unique(
    batch: QueryBatch,
    hits: IntArray,
    seen: set[Any],
    limit: int,
    rules: Rules,
    *,
    univariate: bool,
) -> tuple[list[int], int]:
    """Hits whose query was not seen before, up to ``limit``; and the last hit examined.

    Exact repeats inside the batch are dropped first (vectorised), so that only new
    candidates reach the Python-level check against earlier batches.
    """
    kept: list[int] = []
    last = int(hits[-1]) if hits.size else -1
    if hits.size == 0:
        return kept, last
    key_matrix = np.hstack(
        [
            batch.cols[hits],
            batch.ops[hits].astype(np.int64),
            batch.vals[hits].view(np.int64),
        ]
    )
    _, first = np.unique(key_matrix, axis=0, return_index=True)
    candidates = hits[np.sort(first)]
    if rules.compat == "anonymeter-1.0":
        keys: list[Any] = [
            "".join(
                sorted(
                    rules.v10_text(
                        batch.cols[i],
                        batch.ops[i],
                        batch.vals[i],
                        int(batch.lengths[i]),
                        univariate=univariate,
                    )
                )
            )
            for i in candidates
        ]
    else:
        keys = batch.take(candidates).keys()
    for i, key in zip(candidates, keys, strict=True):
        if key in seen:
            continue
        seen.add(key)
        kept.append(int(i))
        if len(kept) >= limit:
            last = int(i)
            break
    return kept, last


def _count(syn: Any, batch: QueryBatch, rules: Rules) -> IntArray:
    """Matches of every query in the synthetic table, up to 2 (in memory or sharded)."""
    if isinstance(syn, QueryTable):
        counts, _ = count_matches(
            syn, batch, cap=2, ne_matches_null=rules.ne_matches_null
        )
    else:
        counts, _ = syn.count(batch, cap=2, ne_matches_null=rules.ne_matches_null)
    return counts


def _cells(syn: Any, rows: IntArray, cols: IntArray) -> FloatArray:
    """``values[rows[:, None], cols]`` of the synthetic table (in memory or sharded)."""
    if isinstance(syn, QueryTable):
        return np.ascontiguousarray(syn.values[rows[:, None], cols])
    return syn.cells(rows, cols)


def _medians(syn: Any, rules: Rules) -> FloatArray:
    """Median of every half-line column's non-missing values (NaN elsewhere)."""
    m = syn.n_columns
    medians = np.full(m, np.nan)
    if isinstance(syn, QueryTable):
        values = syn.values
        for j in np.flatnonzero(rules.halfline):
            col = values[:, j]
            col = col[~np.isnan(col)]
            if col.size:
                medians[j] = float(np.median(col))
        return medians
    if rules.halfline.any():
        summaries = syn.summaries()
        for j in np.flatnonzero(rules.halfline):
            if summaries[j].n_distinct:
                medians[j] = summaries[j].median
    return medians


def _enumerable(n_syn: int, m: int, n_cols: int, budget: int | None) -> bool:
    """Whether :func:`_enumerate_if_small` may enumerate (see there)."""
    space = n_syn * math.comb(m, n_cols)
    return not (
        space > _ENUMERATE_MAX
        or (budget is not None and budget < space * (math.log(space) + 10))
    )


def multivariate_queries(
    syn: Any,
    rules: Rules,
    *,
    n_attacks: int,
    n_cols: int,
    max_attempts: int | None,
    rng: np.random.Generator,
    progress: Progress,
) -> tuple[QueryBatch, int]:
    """Multivariate queries singling out in ``syn`` (a :class:`QueryTable`, or a
    sharded table on a cluster, gathered when it is small enough to enumerate)."""
    budget = max_attempts
    if budget is not None and rules.compat == "anonymeter-1.1":
        # Anonymeter 1.1 tries whole batches of min(1000, max_attempts) attempts
        step = min(1000, budget)
        budget = -(-budget // step) * step
    if not isinstance(syn, QueryTable) and _enumerable(
        syn.n_rows, syn.n_columns, n_cols, budget
    ):
        syn = syn.gather()
    n_syn, m = syn.n_rows, syn.n_columns
    rank = rules.info.name_rank()
    medians = _medians(syn, rules)
    enumerated = (
        _enumerate_if_small(
            syn,
            rules,
            medians,
            n_attacks=n_attacks,
            n_cols=n_cols,
            budget=budget,
            rng=rng,
        )
        if isinstance(syn, QueryTable)
        else None
    )
    if enumerated is not None:
        return enumerated
    found: list[QueryBatch] = []
    seen: set[Any] = set()
    n_found = attempts = 0
    batch_size = _BATCH_MIN
    with progress.task("Singling out: generating queries", n_attacks) as advance:
        while n_found < n_attacks and (budget is None or attempts < budget):
            size = batch_size if budget is None else min(batch_size, budget - attempts)
            rows = rng.integers(0, n_syn, size=size)
            cols = choose_columns(rng, size, m, n_cols, rank)
            vals = _cells(syn, rows, cols)
            ops = rules.multivariate_ops(cols, vals, medians)
            batch = QueryBatch(cols, ops, vals, np.full(size, n_cols, dtype=np.int64))
            counts = _count(syn, batch, rules)
            hits = np.flatnonzero(counts == 1)
            kept, last = _keep_unique(
                batch, hits, seen, n_attacks - n_found, rules, univariate=False
            )
            if kept:
                found.append(batch.take(np.asarray(kept)))
                advance(len(kept))
            n_found += len(kept)
            attempts += last + 1 if n_found >= n_attacks else size
            # size the next batch from the rate of *new* queries (it grows when they run out)
            rate = max(n_found / max(attempts, 1), 1e-5)
            batch_size = int(
                min(max((n_attacks - n_found) / rate * 1.1 + 1, _BATCH_MIN), _BATCH_MAX)
            )
    return QueryBatch.concat(found, n_cols), attempts


def _enumerate_if_small(
    syn: QueryTable,
    rules: Rules,
    medians: FloatArray,
    *,
    n_attacks: int,
    n_cols: int,
    budget: int | None,
    rng: np.random.Generator,
) -> tuple[QueryBatch, int] | None:
    """All multivariate queries, when there are few and fewer single out than requested.

    A multivariate query is fixed by a synthetic row and a set of ``n_cols`` columns,
    so there are at most ``n_rows * C(n_columns, n_cols)`` of them. When that space is
    small and the attempt budget exceeds the coupon-collector bound ``S (ln S + 10)``,
    random sampling would find every singling-out query with near certainty; if they
    are fewer than ``n_attacks``, they are all returned at once (in random order)
    instead of spending the whole budget looking for more. Returns None otherwise.
    """
    n_syn, m = syn.values.shape
    space = n_syn * math.comb(m, n_cols)
    if not _enumerable(n_syn, m, n_cols, budget):
        return None
    rank = rules.info.name_rank()
    subsets = np.array(list(itertools.combinations(range(m), n_cols)), dtype=np.int64)
    subsets = np.take_along_axis(
        subsets, np.argsort(rank[subsets], axis=1, kind="stable"), axis=1
    )
    rows = np.repeat(np.arange(n_syn), len(subsets))
    cols = np.ascontiguousarray(np.tile(subsets, (n_syn, 1)))
    vals = np.ascontiguousarray(syn.values[rows[:, None], cols])
    ops = rules.multivariate_ops(cols, vals, medians)
    batch = QueryBatch(cols, ops, vals, np.full(space, n_cols, dtype=np.int64))
    counts, _ = count_matches(syn, batch, cap=2, ne_matches_null=rules.ne_matches_null)
    hits = np.flatnonzero(counts == 1)
    kept, _ = _keep_unique(batch, hits, set(), n_attacks, rules, univariate=False)
    if len(kept) >= n_attacks:
        return None
    order = rng.permutation(np.asarray(kept, dtype=np.int64))
    return batch.take(order), space


def univariate_queries(
    syn: Any, rules: Rules, *, n_attacks: int, rng: np.random.Generator
) -> tuple[QueryBatch, int]:
    """Univariate queries singling out in ``syn`` (a :class:`QueryTable` or sharded)."""
    if not isinstance(syn, QueryTable):
        return _univariate_sharded(syn, rules, n_attacks=n_attacks, rng=rng)
    values = syn.values
    cols_l: list[int] = []
    ops_l: list[int] = []
    vals_l: list[float] = []
    for j in range(values.shape[1]):
        col = values[:, j]
        missing = np.isnan(col)
        if int(missing.sum()) == 1:
            cols_l.append(j)
            ops_l.append(OP_ISNULL)
            vals_l.append(np.nan)
        present = col[~missing]
        if rules.minmax[j] and present.size:
            cols_l += [j, j]
            ops_l += [OP_LE, OP_GE]
            vals_l += [float(present.min()), float(present.max())]
        uniques, counts = np.unique(present, return_counts=True)
        rare = uniques[counts == 1]
        cols_l += [j] * rare.size
        ops_l += [OP_EQ] * rare.size
        vals_l += rare.tolist()
    n = len(cols_l)
    perm = rng.permutation(n)
    batch = QueryBatch(
        np.asarray(cols_l, dtype=np.int64)[perm][:, None],
        np.asarray(ops_l, dtype=np.int8)[perm][:, None],
        np.asarray(vals_l, dtype=np.float64)[perm][:, None],
        np.ones(n, dtype=np.int64),
    )
    ops = batch.ops.copy()
    ops[rules.never[batch.cols]] = OP_NEVER
    batch = dataclasses.replace(batch, ops=ops)
    counts, _ = count_matches(syn, batch, cap=2, ne_matches_null=rules.ne_matches_null)
    hits = np.flatnonzero(counts == 1)
    kept, _ = _keep_unique(batch, hits, set(), n_attacks, rules, univariate=True)
    return batch.take(np.asarray(kept, dtype=np.int64)), n


def _univariate_sharded(
    syn: Any, rules: Rules, *, n_attacks: int, rng: np.random.Generator
) -> tuple[QueryBatch, int]:
    """:func:`univariate_queries` on a sharded table: the same candidates in the same
    order, built chunk by chunk from the column statistics (the rare values stay on
    the cluster until drawn) and counted until enough are kept."""
    summaries = syn.summaries()
    # per column: [IS NULL], [<= min, >= max], then == each rare value, as in memory
    special: list[list[tuple[int, float]]] = []
    for j, column in enumerate(summaries):
        terms = []
        if column.n_missing == 1:
            terms.append((OP_ISNULL, np.nan))
        if rules.minmax[j] and column.n_distinct:
            terms += [(OP_LE, column.low), (OP_GE, column.high)]
        special.append(terms)
    sizes = [len(t) + c.n_rare for t, c in zip(special, summaries, strict=True)]
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(starts[-1])
    perm = rng.permutation(n)
    seen: set[Any] = set()
    found: list[QueryBatch] = []
    n_found, start, chunk = 0, 0, max(2 * n_attacks, _BATCH_MIN)
    while start < n and n_found < n_attacks:
        picked = perm[start : start + chunk]
        cols = np.searchsorted(starts, picked, side="right") - 1
        local = picked - starts[cols]
        ops = np.full(picked.size, OP_EQ, dtype=np.int8)
        vals = np.empty(picked.size)
        requests = []
        for j in np.unique(cols):
            at = np.flatnonzero(cols == j)
            n_special = len(special[j])
            for t, (op, value) in enumerate(special[j]):
                hit = at[local[at] == t]
                ops[hit] = op
                vals[hit] = value
            rare = at[local[at] >= n_special]
            if rare.size:
                requests.append((int(j), rare, local[rare] - n_special))
        fetched = syn.rare_at([(j, ranks) for j, _, ranks in requests])
        for (_, rare, _), values in zip(requests, fetched, strict=True):
            vals[rare] = values
        ops[rules.never[cols]] = OP_NEVER
        part = QueryBatch(
            cols.astype(np.int64)[:, None],
            ops[:, None],
            vals[:, None],
            np.ones(picked.size, dtype=np.int64),
        )
        hits = np.flatnonzero(_count(syn, part, rules) == 1)
        kept, _ = _keep_unique(
            part, hits, seen, n_attacks - n_found, rules, univariate=True
        )
        if kept:
            found.append(part.take(np.asarray(kept, dtype=np.int64)))
        n_found += len(kept)
        start, chunk = start + picked.size, min(2 * chunk, _BATCH_MAX)
    return QueryBatch.concat(found, 1), n


def baseline_queries(
    syn: Any,
    rules: Rules,
    *,
    n_queries: int,
    width: int,
    rng: np.random.Generator,
) -> QueryBatch:
    """Random queries: random columns, a random distinct synthetic value each, a random operator.

    ``syn`` is a :class:`QueryTable` or a sharded table on a cluster, whose distinct
    values are fetched once at the end (the random draws do not depend on them).
    """
    m = syn.n_columns
    cols = choose_columns(rng, n_queries, m, width, rules.info.name_rank())
    ops = np.full(cols.shape, OP_NEVER, dtype=np.int8)
    vals = np.zeros(cols.shape)
    compat_10 = rules.compat == "anonymeter-1.0"
    in_memory = isinstance(syn, QueryTable)
    summaries = None if in_memory else syn.summaries()
    deferred: list[tuple[np.ndarray, np.ndarray, int, IntArray]] = []
    for j in range(m):
        sel = cols == j
        k = int(sel.sum())
        if not k:
            continue
        if in_memory:
            col = syn.values[:, j]
            uniques = np.unique(col[~np.isnan(col)])
            n_distinct = uniques.size
            has_missing = bool(np.isnan(col).any())
        else:
            assert summaries is not None
            n_distinct = summaries[j].n_distinct
            has_missing = summaries[j].n_missing > 0
        idx = rng.integers(0, n_distinct + int(has_missing), size=k)
        missing = idx >= n_distinct
        v: FloatArray | None = None
        if in_memory:
            v = np.full(k, np.nan)
            v[~missing] = uniques[idx[~missing]]
        kind = rules.info.kinds[j]
        takes_value = False
        out_v: FloatArray | None
        if kind == "boolean":
            choice = rng.integers(0, 2, size=k)
            true_code = rules.info.code_of(j, True)
            false_code = rules.info.code_of(j, False)
            o = np.full(k, OP_EQ, dtype=np.int8)
            out_v = np.where(choice == 0, true_code, false_code)
            o[np.isnan(out_v)] = OP_NEVER
        elif rules.base_numeric[j]:
            choice = rng.integers(0, 6, size=k)
            o = _NUMERIC_OPS[choice].copy()
            out_v, takes_value = v, True
        else:
            choice = rng.integers(0, 2, size=k)
            o = np.where(choice == 0, OP_EQ, OP_NE).astype(np.int8)
            out_v, takes_value = v, True
        if missing.any():
            null_first = (
                (rng.integers(0, 2, size=k) == 0) if compat_10 else (choice == 0)
            )
            o[missing] = np.where(null_first[missing], OP_ISNULL, OP_NOTNULL)
            if out_v is not None:
                out_v = np.where(missing, 0.0, out_v)
        if rules.never[j]:
            o[:] = OP_NEVER
        ops[sel] = o
        if out_v is not None:
            vals[sel] = out_v
        elif takes_value:
            deferred.append((sel, missing, j, idx))
    if deferred:
        fetched = syn.distinct_at(
            [(j, idx[~missing]) for _, missing, j, idx in deferred]
        )
        for (sel, missing, _, _), values in zip(deferred, fetched, strict=True):
            out = np.zeros(missing.shape[0])
            out[~missing] = values
            vals[sel] = out
    return QueryBatch(
        cols, ops, np.ascontiguousarray(vals), np.full(n_queries, width, dtype=np.int64)
    )
