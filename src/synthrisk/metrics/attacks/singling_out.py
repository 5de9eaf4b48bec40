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
matches, so millions of candidate queries are decided in seconds. The holdout test's
subsamples of equal size are row masks over the same indexed tables, all counted in one
walk per query. Tables partitioned
on a Dask cluster are de-duplicated, indexed and counted there, partition by partition
(:mod:`synthrisk.metrics.attacks._sharded`), with the same queries and counts.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np

from synthrisk._progress import NullProgress, Progress
from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, integer, option
from synthrisk.metrics._threat import SYNTHETIC_ONLY, TRAINING, ThreatModel
from synthrisk.metrics.attacks._common import (
    COMPAT,
    CONFIDENCE_LEVEL,
    Compat,
    attack_outcome,
)
from synthrisk.metrics.attacks._equal_size import equal_size_successes
from synthrisk.metrics.attacks._partitioned import encoder_of, on_cluster
from synthrisk.metrics.attacks._queries import (
    ColumnInfo,
    QueryBatch,
    QueryTable,
    render_query,
    unified_values,
)
from synthrisk.metrics.attacks._query_generation import (
    Rules,
    baseline_queries,
    dedup,
    multivariate_queries,
    univariate_queries,
)
from synthrisk.metrics.attacks._sharded import count_all, sharded_tables
from synthrisk.metrics.attacks._size_correction import (
    control_correction,
    singling_out_probability_integral,
)
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.holdout import holdout_test
from synthrisk.stats.intervals import (
    AttackEstimate,
    estimate_attack,
)

__all__ = [
    "SinglingOutAttack",
    "SinglingOutRisk",
    "column_info",
    "singling_out_attack",
    "singling_out_probability_integral",
]

Mode = Literal["univariate", "multivariate"]
#: Anonymeter's default cap on candidate multivariate queries
_DEFAULT_MAX_ATTEMPTS = 10_000_000
MODES: tuple[Mode, ...] = ("multivariate", "univariate")


def column_info(tables: Tables) -> ColumnInfo:
    """Names, kinds and categories of the encoded columns of ``tables``."""
    real = tables.encoded("real")
    encoder = encoder_of(tables)
    names = real.numeric_names + real.categorical_names
    kinds = tuple(tables.schema[n].kind for n in names)
    categories = tuple(
        encoder.categories.get(n) if n in real.categorical_names else None
        for n in names
    )
    integral = []
    for i in range(len(names)):
        if i < len(real.numeric_names) and kinds[i] == "numerical":
            if on_cluster(real):
                integral.append(bool(real.domain.integer[i]))
                continue
            col = real.numeric[:, i]
            col = col[~np.isnan(col)]
            integral.append(bool(np.all(col == np.round(col))))
        else:
            integral.append(False)
    return ColumnInfo(names, kinds, categories, encoder.time_origin, tuple(integral))


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
            n_success=self.n_success,
            n_attacks=self.denominator,
            n_baseline=self.n_baseline,
            n_baseline_attacks=self.n_attacks,
            n_control=self.n_control,
            n_control_attacks=self.denominator,
            confidence_level=confidence_level,
        )

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


def singling_out_attack(
    tables: Tables,
    *,
    mode: Mode = "multivariate",
    n_attacks: int = 2000,
    n_cols: int = 3,
    max_attempts: int | None = _DEFAULT_MAX_ATTEMPTS,
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
    rules = Rules(info, compat, mode, warnings)
    gen_rng, base_rng, ctrl_rng = rng.spawn(3)

    real: Any
    syn: Any
    control: Any = None
    if on_cluster(tables.encoded("real")):
        # de-duplicated and indexed on the cluster, one shard per partition
        shards = sharded_tables(tables)
        real, syn = shards[0], shards[1]
        control = shards[2] if len(shards) > 2 else None
    else:
        real_values = unified_values(tables.encoded("real"))
        real_keep = dedup(real_values)
        real = QueryTable.from_values(real_values[real_keep])
        syn_values = unified_values(tables.encoded("synthetic"))
        syn = QueryTable.from_values(syn_values[dedup(syn_values)])
        if tables.holdout is not None:
            hold_values = unified_values(tables.encoded("holdout"))
            control = QueryTable.from_values(hold_values[dedup(hold_values)])

    if mode == "multivariate":
        queries, n_attempts = multivariate_queries(
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
            reason = _budget_reason(len(queries), n_attacks, max_attempts)
        else:
            reason = "the synthetic table offers no more distinct ones"
    else:
        queries, n_attempts = univariate_queries(
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
            f"only {len(queries)} of the requested {n_attacks} singling-out queries could be generated: "
            f"{reason}. {denominator[0].upper()}{denominator[1:]}."
        )

    width = n_cols if mode == "multivariate" else 1
    baseline = baseline_queries(
        syn, rules, n_queries=n_attacks, width=width, rng=base_rng
    )
    (main_counts, main_first), (baseline_counts, _), control_result = count_all(
        [(real, queries), (real, baseline), (control, queries)],
        ne_matches_null=rules.ne_matches_null,
    )
    if isinstance(real, QueryTable):
        main_rows = np.where(main_counts == 1, real_keep[np.maximum(main_first, 0)], -1)
    else:  # the sharded count gives the input position of a single match
        main_rows = np.where(main_counts == 1, main_first, -1)

    control_counts = None
    correction = None
    if control is not None:
        control_counts = control_result[0]
        if control.n_rows != real.n_rows and np.any(control_counts == 1):
            correction = control_correction(
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
        equal_size = equal_size_successes(
            real,
            control,
            queries,
            main_counts,
            control_counts,
            ne_matches_null=rules.ne_matches_null,
            rng=rng.spawn(1)[0],
        )
    return SinglingOutAttack(
        mode=mode,
        n_attacks=n_attacks,
        n_cols=n_cols,
        compat=compat,
        info=info,
        queries=queries,
        main_counts=main_counts,
        main_rows=main_rows,
        baseline_queries=baseline,
        baseline_counts=baseline_counts,
        control_counts=control_counts,
        control_correction=correction,
        n_attempts=int(n_attempts),
        warnings=tuple(warnings),
        equal_size=equal_size,
    )


def _budget_reason(n_found: int, n_attacks: int, max_attempts: int) -> str:
    """Why the attempts ran out, and how many would give ``n_attacks`` queries."""
    reason = f"`max_attempts` ({max_attempts:,}) was reached"
    advice = f"raise `max_attempts`, or leave it out: synthrisk's default is {_DEFAULT_MAX_ATTEMPTS:,}"
    if n_found == 0:
        return f"{reason} without one candidate singling out a synthetic row ({advice})"
    needed = float(f"{n_attacks * max_attempts / n_found:.2g}")
    return (
        f"{reason}, and about 1 candidate in {max_attempts / n_found:,.0f} singles out a synthetic row on "
        f"these tables, so about {needed:,.0f} attempts would give {n_attacks} ({advice})"
    )


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

    On tables partitioned on a Dask cluster
    (:func:`synthrisk.cluster.evaluate_dataset`) it runs on every row, with the
    in-memory result.
    """

    id = "singling_out"
    cost = 5.0
    report_order = 120
    attack = (
        "An attacker writes queries on the synthetic table that match exactly one synthetic row and "
        "checks how many of them also match exactly one real person, compared with real people the "
        "generator never saw."
    )
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "Anonymeter's risk: share of queries of several columns that isolate one synthetic row and exactly one training person, beyond the share on holdout people: 0 = no more than for new people, 1 = every query"
        ),
    )
    higher_is_safer = False
    requires_holdout = True
    runs_partitioned = True

    mode: Param[Mode] = Param(
        option(MODES),
        "multivariate",
        "multivariate: n_cols columns of a synthetic row; univariate: rare values.",
    )
    n_attacks: Param[int] = Param(
        integer(minimum=1), 2000, "Singling-out queries to generate."
    )
    n_cols: Param[int] = Param(integer(minimum=1), 3, "Columns per multivariate query.")
    max_attempts: Param[int | None] = Param(
        integer(minimum=1, allow_none=True),
        _DEFAULT_MAX_ATTEMPTS,
        "Cap on candidate queries in multivariate mode; None for no cap.",
    )
    confidence_level: Param[float] = CONFIDENCE_LEVEL
    compat: Param[str | None, Compat | None] = COMPAT

    def check_tables(self, tables: Tables) -> None:
        """``n_cols`` must not exceed the number of usable columns."""
        n_usable = len(tables.schema.modelable)
        if self.mode == "multivariate" and self.n_cols > n_usable:
            msg = (
                f"`n_cols` must be at most the number of usable columns ({n_usable}); "
                f"got {self.n_cols}. Lower `n_cols` or use mode='univariate'."
            )
            raise ParameterError(msg)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        result = singling_out_attack(
            tables,
            mode=self.mode,
            n_attacks=self.n_attacks,
            n_cols=self.n_cols,
            max_attempts=self.max_attempts,
            compat=self.compat,
            rng=context.rng,
            progress=context.progress,
        )
        details: dict[str, JSONValue] = {}
        if result.equal_size is not None:
            main_eq, ctrl_eq, se = result.equal_size
            details["holdout_test"] = holdout_test(
                statistic="share of queries singling out a training person minus a holdout person (equal sizes)",
                effect=float(main_eq.mean() - ctrl_eq.mean())
                if main_eq.size
                else float("nan"),
                se=se,
                n=int(main_eq.size),
                estimate=float(main_eq.mean()) if main_eq.size else float("nan"),
                control=float(ctrl_eq.mean()) if ctrl_eq.size else float("nan"),
            )
            if isinstance(details["holdout_test"], dict):
                # what the attacker could try at all: the verdict bounds the risk by the
                # successes over the queries asked for when the table offers few
                details["holdout_test"].update(
                    n_requested=int(self.n_attacks),
                    successes=float(main_eq.sum()),
                    control_successes=float(ctrl_eq.sum()),
                )
        details.update(
            mode=self.mode,
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
        return attack_outcome(
            result.estimate(confidence_level=self.confidence_level),
            context,
            attack="singling-out attack",
            details=details,
            records=records,
            run_warnings=result.warnings,
            value_keys=("successful_queries",),
        )


@register
class SinglingOutUnivariateRisk(SinglingOutRisk):
    """:class:`SinglingOutRisk` with ``mode="univariate"`` by default (rare values and extremes).

    Registered under its own id so that a default run reports both query generators.
    Parameters as :class:`SinglingOutRisk`.
    """

    id = "singling_out_univariate"
    cost = 1.5
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "Anonymeter's risk: share of one-column queries that isolate one synthetic row and exactly one training person, beyond the share on holdout people: 0 = no more than for new people, 1 = every query"
        ),
    )
    report_order = 125

    mode: Param[Mode] = Param(
        option(MODES),
        "univariate",
        "univariate: rare values and extremes; multivariate: n_cols columns of a row.",
    )
