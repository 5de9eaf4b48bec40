# SPDX-License-Identifier: BSD-3-Clause
"""Singling-out risk: Anonymeter's ``SinglingOutEvaluator``, vectorised.

The attacker writes queries on the synthetic table that match exactly one synthetic
row (``age >= 63 AND race == 'Other' AND sex == 'Female'``) and bets that each matches
exactly one real person too. The main attack counts the queries that single out a
real row; the same queries are tried on the holdout (real people the generator never
saw: the control attack); random queries over the synthetic value domain give the
baseline. Risk = ``(main rate - control rate) / (1 - control rate)``.

Query generation follows Anonymeter 1.1:

* ``univariate``: for every column, ``c IS NULL`` if exactly one value is missing,
  ``c <= min`` and ``c >= max`` for numeric columns, ``c == v`` for every value seen
  exactly once; shuffled; those that single out in the synthetic table are kept;
* ``multivariate``: pick a synthetic row at random and ``n_cols`` distinct columns;
  numeric columns give the half-line from the row's value towards the nearer tail
  (``c >= v`` if ``v`` is above the synthetic median, else ``c <= v``), other columns
  ``c == v``, missing values ``c IS NULL``; keep the query if it singles out in the
  synthetic table and was not seen before; stop at ``n_attacks`` queries or
  ``max_attempts`` attempts.

All three tables are de-duplicated first. Counting uses :mod:`synthrisk.metrics.attacks._queries`:
every query walks only the rows of its most selective predicate and stops at two
matches, so millions of candidate queries are decided in seconds.
"""

from __future__ import annotations

import dataclasses
import itertools
import keyword
import math
import warnings as _warnings
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeWarning, curve_fit

from synthrisk._progress import NullProgress, Progress
from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk._validation import check_int, check_option
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics.attacks._common import (
    attack_breakdown,
    check_compat,
    check_confidence_level,
    check_n_attacks,
    score_and_ci,
)
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
    count_matches,
    format_value,
    match_lists,
    render_query,
    unified_values,
)
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.holdout import holdout_test
from synthrisk.stats.intervals import AttackEstimate, estimate_attack

__all__ = [
    "SinglingOutAttack",
    "SinglingOutRisk",
    "column_info",
    "singling_out_attack",
    "singling_out_probability_integral",
]

Mode = Literal["univariate", "multivariate"]

_BATCH_MIN = 1000
_BATCH_MAX = 200_000
_ENUMERATE_MAX = 2_000_000
_KIND_CODE = {"numerical": 0, "datetime": 1, "categorical": 2, "boolean": 3}
_NUMERIC_OPS = np.array([OP_EQ, OP_NE, OP_GT, OP_LT, OP_GE, OP_LE], dtype=np.int8)


def singling_out_probability_integral(n: Any, w_max: Any) -> Any:
    """Integral over ``w ∈ [0, w_max]`` of ``P(w, n) = n w (1 - w)^(n - 1)``.

    ``P`` is the probability that a query of weight ``w`` singles out one record in a
    population of ``n`` (Cohen and Nissim 2020); the integral is
    ``(1 - (n w_max + 1)(1 - w_max)^n) / (n + 1)``.

    References
    ----------
    A. Cohen and K. Nissim (2020), "Towards formalizing the GDPR's notion of singling
    out", PNAS 117 (15), 8344-8352, https://arxiv.org/abs/1904.06009.
    """
    return (1.0 - (n * w_max + 1.0) * (1.0 - w_max) ** n) / (n + 1.0)


def _size_model(n: Any, w_eff: float, norm: float) -> Any:
    return norm * singling_out_probability_integral(n, w_eff)


def fit_size_correction(
    sizes: IntArray,
    successes: FloatArray,
    n_real: int,
    n_control: int,
    *,
    start: Literal["anonymeter", "global"],
) -> float:
    """Factor ``s(n_real) / s(n_control)`` of the fitted model ``s(n) = A · F(n; w)``.

    The fit is scipy's ``curve_fit`` with bounds ``w ∈ [0, 1]``, ``A ∈ [0, ∞)``.

    * ``start="anonymeter"``: Anonymeter's start ``w₀ = 1 / max(n)``,
      ``A₀ = 1 / F(max(n); w₀)``. ``A₀`` scales the model to about one success at the
      largest size, far below typical counts, and the optimiser then often drifts to
      ``w → 1`` where ``F ≈ 1 / (n + 1)``: the factor becomes
      ``(n_control + 1) / (n_real + 1)`` whatever the data (seen on Adult: a sum of
      squares 145 times the optimum).
    * ``start="global"`` (synthrisk's default): the least-squares optimum over a
      logarithmic grid of ``w`` (``A`` in closed form), refined by ``curve_fit``.

    Raises
    ------
    RuntimeError
        When the fit fails or the factor is not a finite positive number.
    """
    x = np.asarray(sizes, dtype=np.float64)
    y = np.asarray(successes, dtype=np.float64)
    n_max = float(np.max(x))
    if start == "global":
        best = (np.inf, 1.0 / n_max, 0.0)
        for w in np.logspace(np.log10(0.01 / n_max), 0.0, 600):
            f = singling_out_probability_integral(x, w)
            ff = float(f @ f)
            if ff <= 0:
                continue
            a = max(float(f @ y) / ff, 0.0)
            sse = float(np.sum((a * f - y) ** 2))
            if sse < best[0]:
                best = (sse, float(w), a)
        p0 = (best[1], max(best[2], 1e-12))
    else:
        w_guess = 1.0 / n_max
        p0 = (w_guess, 1.0 / singling_out_probability_integral(n_max, w_guess))
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore", OptimizeWarning)
        _warnings.simplefilter("ignore", RuntimeWarning)
        popt, _ = curve_fit(
            _size_model, xdata=x, ydata=y, bounds=(0, (1, np.inf)), p0=p0
        )
    if start == "global" and np.sum((_size_model(x, *popt) - y) ** 2) > np.sum(
        (_size_model(x, *p0) - y) ** 2
    ):
        popt = np.asarray(p0)
    with np.errstate(all="ignore"):
        factor = float(
            _size_model(float(n_real), *popt) / _size_model(float(n_control), *popt)
        )
    if not math.isfinite(factor) or factor < 0:
        msg = f"the size-correction fit gave an unusable factor {factor!r}."
        raise RuntimeError(msg)
    return factor


def column_info(tables: Tables) -> ColumnInfo:
    """Names, kinds and categories of the encoded columns of ``tables``."""
    real = tables.encoded("real")
    names = real.numeric_names + real.categorical_names
    kinds = tuple(tables.schema[n].kind for n in names)
    categories = tuple(
        tables.encoder.categories.get(n) if n in real.categorical_names else None
        for n in names
    )
    integral = []
    for i in range(len(names)):
        if i < len(real.numeric_names) and kinds[i] == "numerical":
            col = real.numeric[:, i]
            col = col[~np.isnan(col)]
            integral.append(bool(np.all(col == np.round(col))))
        else:
            integral.append(False)
    return ColumnInfo(
        names, kinds, categories, tables.encoder.time_origin, tuple(integral)
    )


@dataclasses.dataclass(frozen=True)
class SinglingOutAttack:
    """Everything one singling-out evaluation produced.

    Attributes
    ----------
    mode : {"univariate", "multivariate"}
        How the queries were generated.
    n_attacks : int
        Number of queries requested.
    n_cols : int
        Columns per multivariate query.
    compat : str or None
        Anonymeter version reproduced, None for synthrisk's fixed behaviour.
    info : ColumnInfo
        The columns the queries refer to.
    queries : QueryBatch
        The generated queries (each singles out in the de-duplicated synthetic table).
    main_counts : ndarray of shape (n_queries,)
        Real rows matched by each query, counted up to 2.
    main_rows : ndarray of shape (n_queries,)
        Position in the input real table of the row each query singles out, -1 if none.
    baseline_queries : QueryBatch
        The random queries of the baseline attack.
    baseline_counts : ndarray of shape (n_attacks,)
        Real rows matched by each random query, counted up to 2.
    control_counts : ndarray of shape (n_queries,) or None
        Holdout rows matched by each query, counted up to 2.
    control_correction : float or None
        Factor applied to the control count for the holdout's size (None when the
        holdout and the real table have the same size, or the fit failed).
    n_attempts : int
        Candidate queries tried.
    warnings : tuple of str
        Caveats found while running.
    equal_size : (ndarray, ndarray, float) or None
        Success of each query (it singles out exactly one row) on the training side and
        on the holdout side at *equal sizes*: the larger table is subsampled to the
        smaller one's size, ``EQUAL_SIZE_REPEATS`` times (seeded), and the successes
        averaged, and the standard error of their mean difference (from random
        relabellings of the pooled rows). The holdout test of the verdict compares the
        two; None without a holdout.
    """

    mode: str
    n_attacks: int
    n_cols: int
    compat: str | None
    info: ColumnInfo
    queries: QueryBatch
    main_counts: IntArray
    main_rows: IntArray
    baseline_queries: QueryBatch
    baseline_counts: IntArray
    control_counts: IntArray | None
    control_correction: float | None
    n_attempts: int
    warnings: tuple[str, ...]
    equal_size: tuple[FloatArray, FloatArray, float] | None = None

    @property
    def n_queries(self) -> int:
        """Number of queries generated (at most ``n_attacks``)."""
        return len(self.queries)

    @property
    def n_success(self) -> int:
        """Queries that single out a real row."""
        return int(np.sum(self.main_counts == 1))

    @property
    def n_baseline(self) -> int:
        """Random queries that single out a real row."""
        return int(np.sum(self.baseline_counts == 1))

    @property
    def n_control_raw(self) -> int | None:
        """Queries that single out a holdout row, before the size correction."""
        return (
            None
            if self.control_counts is None
            else int(np.sum(self.control_counts == 1))
        )

    @property
    def denominator(self) -> int:
        """Number of attacks the main and control rates are computed over.

        The queries actually generated (synthrisk), or the number requested
        (Anonymeter, which under-states the risk when fewer queries could be made).
        """
        if self.compat is not None or self.n_queries == 0:
            return self.n_attacks
        return self.n_queries

    @property
    def n_control(self) -> float | None:
        """Size-corrected control successes (capped at the denominator)."""
        raw = self.n_control_raw
        if raw is None:
            return None
        value = raw * (
            1.0 if self.control_correction is None else self.control_correction
        )
        return min(value, float(self.denominator))

    def estimate(self, *, confidence_level: float = 0.95) -> AttackEstimate:
        """Rates and risk at ``confidence_level``."""
        return estimate_attack(
            n_success=self.n_success, n_attacks=self.denominator,
            n_baseline=self.n_baseline, n_baseline_attacks=self.n_attacks,
            n_control=self.n_control, n_control_attacks=self.denominator,
            confidence_level=confidence_level,
        )  # fmt: skip

    def query_strings(
        self, which: Literal["main", "baseline", "generated"] = "main"
    ) -> list[str]:
        """Readable queries: those that singled out a real row (``"main"``), the random
        ones that did (``"baseline"``), or every generated query (``"generated"``)."""
        if which == "baseline":
            batch, keep = self.baseline_queries, self.baseline_counts == 1
        elif which == "main":
            batch, keep = self.queries, self.main_counts == 1
        else:
            batch, keep = self.queries, np.ones(self.n_queries, dtype=bool)
        return [
            render_query(
                self.info,
                batch.cols[i],
                batch.ops[i],
                batch.vals[i],
                int(batch.lengths[i]),
            )
            for i in np.flatnonzero(keep)
        ]


def _dedup(values: FloatArray) -> IntArray:
    """Positions of the first occurrence of every distinct row (NaN equals NaN)."""
    if values.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    duplicated = pd.DataFrame(values).duplicated(keep="first").to_numpy()
    return np.flatnonzero(~duplicated)


def _choose_columns(
    rng: np.random.Generator, n_queries: int, n_columns: int, width: int, rank: IntArray
) -> IntArray:
    """``width`` distinct columns per query (uniform), ordered by column name."""
    if width >= n_columns:
        cols = np.tile(np.arange(n_columns), (n_queries, 1))
    else:
        keys = rng.random((n_queries, n_columns))
        cols = np.argpartition(keys, width - 1, axis=1)[:, :width]
    order = np.argsort(rank[cols], axis=1, kind="stable")
    return np.ascontiguousarray(
        np.take_along_axis(cols, order, axis=1).astype(np.int64)
    )


class _Rules:
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
    rules: _Rules,
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


def _multivariate_queries(
    syn: QueryTable,
    rules: _Rules,
    *,
    n_attacks: int,
    n_cols: int,
    max_attempts: int | None,
    rng: np.random.Generator,
    progress: Progress,
) -> tuple[QueryBatch, int]:
    values = syn.values
    n_syn, m = values.shape
    rank = rules.info.name_rank()
    medians = np.full(m, np.nan)
    for j in np.flatnonzero(rules.halfline):
        col = values[:, j]
        col = col[~np.isnan(col)]
        if col.size:
            medians[j] = float(np.median(col))
    budget = max_attempts
    if budget is not None and rules.compat == "anonymeter-1.1":
        # Anonymeter 1.1 tries whole batches of min(1000, max_attempts) attempts
        step = min(1000, budget)
        budget = -(-budget // step) * step
    enumerated = _enumerate_if_small(
        syn, rules, medians, n_attacks=n_attacks, n_cols=n_cols, budget=budget, rng=rng
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
            cols = _choose_columns(rng, size, m, n_cols, rank)
            vals = np.ascontiguousarray(values[rows[:, None], cols])
            ops = rules.multivariate_ops(cols, vals, medians)
            batch = QueryBatch(cols, ops, vals, np.full(size, n_cols, dtype=np.int64))
            counts, _ = count_matches(
                syn, batch, cap=2, ne_matches_null=rules.ne_matches_null
            )
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
    rules: _Rules,
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
    if space > _ENUMERATE_MAX or (
        budget is not None and budget < space * (math.log(space) + 10)
    ):
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


def _univariate_queries(
    syn: QueryTable, rules: _Rules, *, n_attacks: int, rng: np.random.Generator
) -> tuple[QueryBatch, int]:
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


def _baseline_queries(
    syn: QueryTable,
    rules: _Rules,
    *,
    n_queries: int,
    width: int,
    rng: np.random.Generator,
) -> QueryBatch:
    """Random queries: random columns, a random distinct synthetic value each, a random operator."""
    values = syn.values
    m = values.shape[1]
    cols = _choose_columns(rng, n_queries, m, width, rules.info.name_rank())
    ops = np.full(cols.shape, OP_NEVER, dtype=np.int8)
    vals = np.zeros(cols.shape)
    compat_10 = rules.compat == "anonymeter-1.0"
    for j in range(m):
        sel = cols == j
        k = int(sel.sum())
        if not k:
            continue
        col = values[:, j]
        uniques = np.unique(col[~np.isnan(col)])
        if np.isnan(col).any():
            uniques = np.append(uniques, np.nan)
        v = uniques[rng.integers(0, uniques.size, size=k)]
        kind = rules.info.kinds[j]
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
            out_v = v
        else:
            choice = rng.integers(0, 2, size=k)
            o = np.where(choice == 0, OP_EQ, OP_NE).astype(np.int8)
            out_v = v
        missing = np.isnan(v)
        if missing.any():
            null_first = (
                (rng.integers(0, 2, size=k) == 0) if compat_10 else (choice == 0)
            )
            o[missing] = np.where(null_first[missing], OP_ISNULL, OP_NOTNULL)
            out_v = np.where(missing, 0.0, out_v)
        if rules.never[j]:
            o[:] = OP_NEVER
        ops[sel] = o
        vals[sel] = out_v
    return QueryBatch(
        cols, ops, np.ascontiguousarray(vals), np.full(n_queries, width, dtype=np.int64)
    )


def _control_correction(
    control: QueryTable,
    queries: QueryBatch,
    *,
    n_real: int,
    rules: _Rules,
    rng: np.random.Generator,
    warnings: list[str],
) -> float | None:
    n_control = control.n_rows
    lower = min(1000, n_control)
    if rules.compat is None:
        # Anonymeter's sizes all equal the holdout size when it has <= 1000 rows, which
        # leaves nothing to fit; synthrisk spans at least the upper half
        lower = min(1000, -(-n_control // 2))
    sizes = np.repeat(np.linspace(lower, n_control, 10).astype(int), 5)
    if rules.compat == "anonymeter-1.1":
        # Anonymeter 1.1 counts every query, singling out or not, in every subsample
        successes = np.full(sizes.size, float(len(queries)))
    else:
        offsets, rows = match_lists(
            control, queries, ne_matches_null=rules.ne_matches_null
        )
        query_of = np.repeat(np.arange(len(queries)), np.diff(offsets))
        successes = np.empty(sizes.size)
        for i, size in enumerate(sizes):
            mask = np.zeros(n_control, dtype=np.float64)
            mask[rng.choice(n_control, size=int(size), replace=False)] = 1.0
            per_query = np.bincount(
                query_of, weights=mask[rows], minlength=len(queries)
            )
            successes[i] = float(np.sum(per_query == 1))
    try:
        start: Literal["anonymeter", "global"] = (
            "global" if rules.compat is None else "anonymeter"
        )
        return fit_size_correction(sizes, successes, n_real, n_control, start=start)
    except (RuntimeError, ValueError) as exc:
        warnings.append(
            f"the control-size correction could not be fitted ({exc}); the control count is not corrected "
            "for the different sizes of the holdout and the real table."
        )
        return None


def singling_out_attack(
    tables: Tables,
    *,
    mode: Mode = "multivariate",
    n_attacks: int = 2000,
    n_cols: int = 3,
    max_attempts: int | None = 10_000_000,
    compat: str | None = None,
    rng: np.random.Generator,
    progress: Progress | None = None,
) -> SinglingOutAttack:
    """Run the singling-out attack on validated tables (the holdout is optional).

    Parameters
    ----------
    tables : Tables
        Validated tables; only modelable columns are used.
    mode : {"univariate", "multivariate"}, default="multivariate"
        Query generator.
    n_attacks : int, default=2000
        Number of queries to generate.
    n_cols : int, default=3
        Columns per multivariate query.
    max_attempts : int or None, default=10_000_000
        Cap on multivariate candidate queries; None for no cap.
    compat : {None, "anonymeter-1.0", "anonymeter-1.1"}, default=None
        Reference behaviour to reproduce (see ``docs/attacks.md``).
    rng : numpy Generator
        Source of every random draw.
    progress : Progress, default=None
        Progress reporter.

    Returns
    -------
    SinglingOutAttack
    """
    progress = NullProgress() if progress is None else progress
    warnings: list[str] = []
    info = column_info(tables)
    rules = _Rules(info, compat, mode, warnings)
    gen_rng, base_rng, ctrl_rng = rng.spawn(3)

    real_values = unified_values(tables.encoded("real"))
    real_keep = _dedup(real_values)
    real = QueryTable.from_values(real_values[real_keep])
    syn_values = unified_values(tables.encoded("synthetic"))
    syn = QueryTable.from_values(syn_values[_dedup(syn_values)])
    control = None
    if tables.holdout is not None:
        hold_values = unified_values(tables.encoded("holdout"))
        control = QueryTable.from_values(hold_values[_dedup(hold_values)])

    if mode == "multivariate":
        queries, n_attempts = _multivariate_queries(
            syn,
            rules,
            n_attacks=n_attacks,
            n_cols=n_cols,
            max_attempts=max_attempts,
            rng=gen_rng,
            progress=progress,
        )
        if len(queries) < n_attacks and (
            max_attempts is not None and n_attempts >= max_attempts
        ):
            reason = f"`max_attempts` ({max_attempts}) was reached"
        else:
            reason = "the synthetic table offers no more distinct ones"
    else:
        queries, n_attempts = _univariate_queries(
            syn, rules, n_attacks=n_attacks, rng=gen_rng
        )
        reason = "the synthetic table has no more rare values or extremes"
    if len(queries) < n_attacks:
        if compat is None:
            denominator = (
                f"the rates are computed over the {len(queries)} generated queries"
                if len(queries)
                else "no attack could be made, so the risk is 0 with a wide interval"
            )
        else:
            denominator = (
                f"as in Anonymeter, the rates are still divided by the requested {n_attacks}, which "
                "under-states the risk"
            )
        warnings.append(
            f"only {len(queries)} of the requested {n_attacks} singling-out queries could be generated "
            f"({reason}); {denominator}."
        )

    main_counts, main_first = count_matches(
        real, queries, cap=2, ne_matches_null=rules.ne_matches_null
    )
    main_rows = np.where(main_counts == 1, real_keep[np.maximum(main_first, 0)], -1)

    width = n_cols if mode == "multivariate" else 1
    baseline = _baseline_queries(
        syn, rules, n_queries=n_attacks, width=width, rng=base_rng
    )
    baseline_counts, _ = count_matches(
        real, baseline, cap=2, ne_matches_null=rules.ne_matches_null
    )

    control_counts = None
    correction = None
    if control is not None:
        control_counts, _ = count_matches(
            control, queries, cap=2, ne_matches_null=rules.ne_matches_null
        )
        if control.n_rows != real.n_rows and np.any(control_counts == 1):
            correction = _control_correction(
                control,
                queries,
                n_real=real.n_rows,
                rules=rules,
                rng=ctrl_rng,
                warnings=warnings,
            )
        if correction is not None:
            n_denominator = (
                len(queries) if (compat is None and len(queries)) else n_attacks
            )
            corrected = int(np.sum(control_counts == 1)) * correction
            if corrected > n_denominator:
                warnings.append(
                    f"the size-corrected control count ({corrected:.1f}) exceeds the number of attacks "
                    f"({n_denominator}); it was capped."
                )
    equal_size = None
    if control is not None and control_counts is not None:
        equal_size = _equal_size_successes(
            real_values[real_keep], hold_values[_dedup(hold_values)], queries, main_counts, control_counts,
            ne_matches_null=rules.ne_matches_null, rng=rng.spawn(1)[0],
        )  # fmt: skip
    return SinglingOutAttack(
        mode=mode, n_attacks=n_attacks, n_cols=n_cols, compat=compat, info=info, queries=queries,
        main_counts=main_counts, main_rows=main_rows, baseline_queries=baseline, baseline_counts=baseline_counts,
        control_counts=control_counts, control_correction=correction, n_attempts=int(n_attempts),
        warnings=tuple(warnings), equal_size=equal_size,
    )  # fmt: skip


#: seeded subsamples of the larger table for the equal-size comparison
EQUAL_SIZE_REPEATS = 5
#: random relabellings of training ∪ holdout rows for the standard error of the comparison
RELABEL_REPEATS = 30


def _equal_size_successes(
    real_values: FloatArray,
    hold_values: FloatArray,
    queries: QueryBatch,
    main_counts: IntArray,
    control_counts: IntArray,
    *,
    ne_matches_null: bool,
    rng: np.random.Generator,
) -> tuple[FloatArray, FloatArray, float]:
    """Per-query success on training and holdout rows at equal sizes, and the null spread.

    The larger side is subsampled to the smaller one's size ``EQUAL_SIZE_REPEATS``
    times and the successes averaged. Given the queries (built from the synthetic
    table), the only chance left is which real people fell into the training table
    and which into the holdout; the spread of the difference under
    ``RELABEL_REPEATS`` random relabellings of the pooled rows is its standard error.
    """
    n_r, n_h = real_values.shape[0], hold_values.shape[0]
    m = min(n_r, n_h)
    main = (main_counts == 1).astype(np.float64)
    ctrl = (control_counts == 1).astype(np.float64)
    if len(queries) == 0 or m == 0:
        return main, ctrl, 0.0

    def successes(values: FloatArray) -> FloatArray:
        counts, _ = count_matches(
            QueryTable.from_values(values),
            queries,
            cap=2,
            ne_matches_null=ne_matches_null,
        )
        return (counts == 1).astype(np.float64)

    if n_r != n_h:
        big = real_values if n_r > n_h else hold_values
        total = np.zeros(len(queries))
        for _ in range(EQUAL_SIZE_REPEATS):
            total += successes(
                big[np.sort(rng.choice(big.shape[0], size=m, replace=False))]
            )
        total /= EQUAL_SIZE_REPEATS
        main, ctrl = (total, ctrl) if n_r > n_h else (main, total)
    pool = np.concatenate([real_values, hold_values])
    diffs = np.empty(RELABEL_REPEATS)
    for b in range(RELABEL_REPEATS):
        order = rng.permutation(pool.shape[0])
        first = successes(pool[np.sort(order[:m])])
        second = successes(pool[np.sort(order[m : 2 * m])])
        diffs[b] = float(first.mean() - second.mean())
    return main, ctrl, float(diffs.std(ddof=1))


@register
class SinglingOutRisk(Metric):
    """Singling-out risk: can a query written on the synthetic table isolate one real person?

    Anonymeter's singling-out evaluation (WP29 / CNIL criterion), statistically
    equivalent to Anonymeter 1.1 with ``compat="anonymeter-1.1"`` and much faster.
    ``score`` is the risk ``(main - control) / (1 - control)`` in [0, 1] (higher = more
    leakage) and ``ci`` its interval.

    Parameters
    ----------
    mode : {"multivariate", "univariate"}, default="multivariate"
        ``multivariate`` combines ``n_cols`` columns of a random synthetic row;
        ``univariate`` uses rare values and extremes of single columns.
    n_attacks : int, default=2000
        Number of singling-out queries to generate (PETsARD's recommendation).
    n_cols : int, default=3
        Columns per multivariate query.
    max_attempts : int or None, default=10_000_000
        Cap on candidate queries in multivariate mode (Anonymeter's default); None for
        no cap.
    confidence_level : float, default=0.95
        Confidence level of the interval.
    compat : {None, "anonymeter-1.0", "anonymeter-1.1"}, default=None
        None fixes Anonymeter's bugs (rates over the queries actually generated, the
        intended holdout-size correction, datetime columns and quoted strings work);
        a version string reproduces that version's behaviour.
    """

    id = "singling_out"
    attack = (
        "An attacker writes queries on the synthetic table that match exactly one synthetic row and "
        "checks how many of them also match exactly one real person, compared with real people the "
        "generator never saw."
    )
    higher_is_safer = False
    requires_holdout = True

    def __init__(
        self,
        *,
        mode: Mode = "multivariate",
        n_attacks: int = 2000,
        n_cols: int = 3,
        max_attempts: int | None = 10_000_000,
        confidence_level: float = 0.95,
        compat: str | None = None,
    ) -> None:
        check_option(mode, name="mode", allowed=("multivariate", "univariate"))
        self._set_params(
            mode=mode,
            n_attacks=check_n_attacks(n_attacks, allow_none=False),
            n_cols=check_int(n_cols, name="n_cols", minimum=1),
            max_attempts=check_int(
                max_attempts, name="max_attempts", minimum=1, allow_none=True
            ),
            confidence_level=check_confidence_level(confidence_level),
            compat=check_compat(compat),
        )

    def check_tables(self, tables: Tables) -> None:
        """``n_cols`` must not exceed the number of usable columns."""
        n_usable = len(tables.schema.modelable)
        if self.params["mode"] == "multivariate" and self.params["n_cols"] > n_usable:
            msg = (
                f"`n_cols` must be at most the number of usable columns ({n_usable}); "
                f"got {self.params['n_cols']}. Lower `n_cols` or use mode='univariate'."
            )
            raise ParameterError(msg)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        p = self.params
        result = singling_out_attack(
            tables, mode=p["mode"], n_attacks=p["n_attacks"], n_cols=p["n_cols"], max_attempts=p["max_attempts"],
            compat=p["compat"], rng=context.rng, progress=context.progress,
        )  # fmt: skip
        for message in result.warnings:
            context.warn(message)
        estimate = result.estimate(confidence_level=p["confidence_level"])
        for message in estimate.warnings(attack="singling-out attack"):
            context.warn(message)
        score, ci = score_and_ci(estimate.risk())
        extra: dict[str, JSONValue] = {}
        if result.equal_size is not None:
            main_eq, ctrl_eq, se = result.equal_size
            extra["holdout_test"] = holdout_test(
                statistic="share of queries singling out a training person minus a holdout person (equal sizes)",
                effect=float(main_eq.mean() - ctrl_eq.mean()) if main_eq.size else float("nan"),
                se=se, n=int(main_eq.size), estimate=float(main_eq.mean()) if main_eq.size else float("nan"),
                control=float(ctrl_eq.mean()) if ctrl_eq.size else float("nan"),
            )  # fmt: skip
        breakdown: dict[str, JSONValue] = attack_breakdown(
            estimate,
            **extra,
            mode=p["mode"],
            n_queries=result.n_queries,
            n_attempts=result.n_attempts,
            n_control_uncorrected=result.n_control_raw,
            control_size_correction=result.control_correction,
            successful_queries=result.query_strings("main"),
        )
        singled = result.main_rows >= 0
        records = {
            "singled_out_real": RecordScores(
                "real",
                result.main_rows[singled],
                np.flatnonzero(singled).astype(np.float64),
                "real rows singled out by a successful query (value: the query's number among the generated ones)",
            )
        }
        return Outcome(
            score=score,
            breakdown=breakdown,
            ci=ci,
            records=records,
            value_keys=("successful_queries",),
        )


@register
class SinglingOutUnivariateRisk(SinglingOutRisk):
    """:class:`SinglingOutRisk` with ``mode="univariate"`` by default (rare values and extremes).

    Registered under its own id so that a default run reports both query generators.
    Parameters as :class:`SinglingOutRisk`.
    """

    id = "singling_out_univariate"

    def __init__(
        self,
        *,
        mode: Mode = "univariate",
        n_attacks: int = 2000,
        n_cols: int = 3,
        max_attempts: int | None = 10_000_000,
        confidence_level: float = 0.95,
        compat: str | None = None,
    ) -> None:
        super().__init__(
            mode=mode, n_attacks=n_attacks, n_cols=n_cols, max_attempts=max_attempts,
            confidence_level=confidence_level, compat=compat,
        )  # fmt: skip
