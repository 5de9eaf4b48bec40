# SPDX-License-Identifier: BSD-3-Clause
"""Distance to closest record (DCR): SDMetrics' DCRBaselineProtection and DCROverfittingProtection.

Numerically compatible with SDMetrics 0.32's ``compute_breakdown`` (same score, same
breakdown keys, same DCR distance and range rules), with three improvements:

* every random step is seeded (SDMetrics' random baseline and subsamples use numpy's
  global RNG, and its NaN mask cannot be seeded at all);
* when ``num_rows_subsample`` is set, only the synthetic (and random) rows are
  subsampled and the **full real table stays the reference** (SDMetrics #934: sampling
  the reference hides memorised rows and biases the score towards "protected");
  ``subsample_real=True`` restores SDMetrics' behaviour;
* per-record DCRs are kept on the result, and the score comes with a bootstrap
  confidence interval over synthetic rows.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import numpy as np

from synthrisk._typing import IntArray, JSONValue
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, boolean, confidence, integer, option
from synthrisk.metrics._threat import AUDIT, SYNTHETIC_ONLY, TRAINING, ThreatModel
from synthrisk.neighbors import column_ranges, map_neighbors, nearest_neighbors
from synthrisk.results import RecordScores
from synthrisk.schema.encoding import EncodedTable
from synthrisk.schema.partitioned import Domain, PartitionedTable, is_partitioned
from synthrisk.schema.tables import Tables
from synthrisk.stats.bootstrap import (
    bootstrap_interval,
    bootstrap_medians,
    percentile_interval,
)
from synthrisk.stats.holdout import auc_test

__all__ = [
    "DCRBaselineProtection",
    "DCROverfittingProtection",
    "dcr",
    "random_baseline_table",
]


def dcr(
    query: EncodedTable,
    reference: EncodedTable,
    context: Context,
    *,
    description: str = "Computing DCR",
    scale: np.ndarray | None = None,
) -> np.ndarray:
    """DCR of every query row to ``reference`` (SDMetrics' distance, ranges of ``reference``).

    With a table partitioned on a cluster, every query partition's distances are
    taken where its neighbours are found: only the distances come back.
    """
    if is_partitioned(query) or is_partitioned(reference):
        with context.progress.task(description, query.n_rows) as advance:
            parts = map_neighbors(
                query,
                reference,
                _nearest_distance,
                k=1,
                scale=scale,
                working_memory=context.working_memory,
                progress=advance,
            )
        return np.concatenate(parts) if parts else np.empty(0)
    with context.progress.task(description, query.n_rows) as advance:
        nn = nearest_neighbors(
            query,
            reference,
            k=1,
            distance="dcr",
            backend=context.backend,
            working_memory=context.working_memory,
            scale=scale,
            progress=advance,
        )
    return nn.distances[:, 0]


def _synthetic_to_real(
    tables: Tables,
    syn_rows: IntArray,
    reference: EncodedTable,
    context: Context,
    *,
    description: str,
    scale: np.ndarray | None = None,
) -> np.ndarray:
    """DCR of the synthetic rows ``syn_rows`` to ``reference``, shared within one run.

    Both DCR metrics search every synthetic row against the whole real table by
    default: that search runs once per Tables object. It is shared only where it is
    the same search: all synthetic rows in order, the real table itself as the
    reference, the same column ranges (``scale``, or the reference's own, which
    the distance takes when none is given) and the same backend.
    """
    syn, real = tables.encoded("synthetic"), tables.encoded("real")

    def search() -> np.ndarray:
        return dcr(
            syn.take(syn_rows), reference, context, description=description, scale=scale
        )

    if (
        reference is not real
        or is_partitioned(syn)
        or is_partitioned(real)
        or not np.array_equal(syn_rows, np.arange(syn.n_rows))
    ):
        return search()
    ranges = column_ranges(real.numeric) if scale is None else scale
    digest = hashlib.sha256(np.asarray(ranges, dtype=np.float64).tobytes()).hexdigest()
    key = ("dcr synthetic to real", digest, repr(context.backend))
    return tables.derived(key, search)


def _nearest_distance(neighbors: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Task: the distance of every query row to its nearest reference row."""
    return np.ascontiguousarray(neighbors[0][:, 0])


#: integer-valued columns beyond this magnitude are drawn as floats (int64 range)
_INT_LIMIT = 2.0**62


#: rows of one block of the random baseline; each block draws from its own stream,
#: so the same blocks come out in memory and on the workers of a cluster
RANDOM_BLOCK_ROWS = 1 << 16


@dataclasses.dataclass(frozen=True)
class _RandomPlan:
    """What one block of the random baseline needs: the real data's domain per column."""

    low: np.ndarray
    high: np.ndarray
    as_integer: np.ndarray
    numeric_missing: np.ndarray
    codes: list[np.ndarray]
    codes_missing: np.ndarray


def _random_block(
    plan: _RandomPlan, n_rows: int, seed: int, block: int
) -> tuple[np.ndarray, np.ndarray]:
    """Block ``block`` of the random baseline: ``n_rows`` rows from stream ``(seed, block)``."""
    rng = np.random.default_rng([seed, block])
    numeric = np.empty((n_rows, plan.low.shape[0]))
    for f in range(numeric.shape[1]):
        lo, hi = plan.low[f], plan.high[f]
        if plan.as_integer[f]:
            numeric[:, f] = rng.integers(int(lo), int(hi) + 1, size=n_rows).astype(
                np.float64
            )
        else:  # prepare_tables guarantees a finite range
            numeric[:, f] = rng.uniform(lo, hi, size=n_rows)
        if plan.numeric_missing[f]:
            numeric[rng.random(n_rows) < plan.numeric_missing[f], f] = np.nan
    codes: IntArray = np.empty((n_rows, len(plan.codes)), dtype=np.int64)
    for c in range(codes.shape[1]):
        codes[:, c] = rng.choice(plan.codes[c], size=n_rows)
        if plan.codes_missing[c]:
            codes[rng.random(n_rows) < plan.codes_missing[c], c] = -1
    return numeric, codes


def random_baseline_table(
    tables: Tables, n_rows: int, rng: np.random.Generator
) -> EncodedTable:
    """Random rows drawn column by column inside the real data's domain (SDMetrics' baseline).

    Integer-valued numerical columns: uniform integers on [min, max]; other numerical
    and datetime columns: uniform on [min, max]; categorical and boolean columns:
    uniform over the distinct real values (not frequency-weighted, as SDMetrics).
    Each cell is then missing with the real column's missing share.

    The rows come in blocks of :data:`RANDOM_BLOCK_ROWS`, each from its own stream
    seeded by one draw of ``rng`` and the block's number. When the real table is
    partitioned on a Dask cluster the blocks are drawn on the workers and stay there
    (a :class:`PartitionedTable`); the values are the same as in memory.
    """
    real = tables.encoded("real")
    domain = _domain(real)
    is_datetime = np.array(
        [tables.schema[name].kind == "datetime" for name in real.numeric_names],
        dtype=bool,
    )
    magnitude = np.fmax(np.abs(domain.low), np.abs(domain.high))
    plan = _RandomPlan(
        low=domain.low,
        high=domain.high,
        as_integer=~is_datetime & domain.integer & (magnitude < _INT_LIMIT),
        numeric_missing=domain.numeric_missing / max(domain.n_rows, 1),
        codes=domain.codes,
        codes_missing=domain.codes_missing / max(domain.n_rows, 1),
    )
    seed = int(rng.integers(2**63 - 1))
    sizes = [
        min(RANDOM_BLOCK_ROWS, n_rows - start)
        for start in range(0, n_rows, RANDOM_BLOCK_ROWS)
    ]
    names = (real.numeric_names, real.categorical_names)
    if not isinstance(real, PartitionedTable):
        blocks = [_random_block(plan, size, seed, b) for b, size in enumerate(sizes)]
        numeric = (
            np.vstack([b[0] for b in blocks])
            if blocks
            else np.empty((0, plan.low.shape[0]))
        )
        codes = (
            np.vstack([b[1] for b in blocks])
            if blocks
            else np.empty((0, len(plan.codes)), dtype=np.int64)
        )
        return EncodedTable(numeric, codes, *names)
    client = real.client
    futures = [
        client.submit(_random_block, plan, size, seed, b, pure=False)
        for b, size in enumerate(sizes)
    ]
    width = len(names[0]) * 8 + len(names[1]) * 8
    # the interface of an EncodedTable, as ``tables.encoded`` of partitioned tables
    return PartitionedTable.from_futures(client, futures, sizes, n_rows * width, *names)


def _domain(table: Any) -> Domain:
    """Per-column domain: reduced on the cluster for a partitioned table, else computed here."""
    if hasattr(table, "domain"):
        return table.domain
    numeric, codes = table.numeric, table.codes
    nan = np.isnan(numeric)
    values = [col[~np.isnan(col)] for col in numeric.T]
    return Domain(
        low=np.array([v.min() if v.size else np.nan for v in values]),
        high=np.array([v.max() if v.size else np.nan for v in values]),
        integer=np.array([bool(np.all(v == np.round(v))) for v in values], dtype=bool),
        numeric_missing=nan.sum(axis=0),
        codes=[np.unique(c[c >= 0]) for c in codes.T],
        codes_missing=(codes < 0).sum(axis=0),
        n_rows=int(numeric.shape[0]),
    )


class _DCRMetric(Metric):
    """The subsampling parameters of the two DCR metrics."""

    runs_partitioned = True

    num_rows_subsample: Param[int | None] = Param(
        integer(minimum=1, allow_none=True),
        None,
        "Synthetic (and random) rows per iteration; None uses all rows.",
    )
    num_iterations: Param[int] = Param(
        integer(minimum=1), 1, "Iterations to average (needs num_rows_subsample)."
    )
    subsample_real: Param[bool] = Param(
        boolean(), False, "Also subsample the real reference, as SDMetrics does."
    )

    def _check_params(self) -> None:
        if self.num_rows_subsample is None and self.num_iterations > 1:
            msg = (
                f"`num_iterations` > 1 needs `num_rows_subsample`; got num_iterations={self.num_iterations} "
                f"without subsampling (metric {self.id!r}). Without subsampling every iteration would be identical."
            )
            raise ParameterError(msg)


def _subsample_plan(
    metric: _DCRMetric, n_synthetic: int, context: Context
) -> tuple[int | None, int, dict[str, Any]]:
    """``num_rows_subsample``, ``num_iterations`` and the parameters to report.

    A subsample larger than the synthetic table disables subsampling (one iteration on
    all rows), with a warning.
    """
    n_sub, n_iter = metric.num_rows_subsample, metric.num_iterations
    params: dict[str, Any] = dict(metric.params)
    if n_sub is not None and n_sub > n_synthetic:
        context.warn(
            f"num_rows_subsample ({n_sub}) is larger than the synthetic table ({n_synthetic} rows); "
            "subsampling was disabled and one iteration run on all rows."
        )
        n_sub, n_iter = None, 1
        params.update(num_rows_subsample=None, num_iterations=1)
    return n_sub, n_iter, params


def _sample(n: int, size: int | None, rng: np.random.Generator) -> np.ndarray:
    if size is None or size >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=size, replace=False))


def _median(values: np.ndarray) -> float:
    return float(np.median(values)) if values.size else float("nan")


@register
class DCRBaselineProtection(_DCRMetric):
    """How far synthetic rows sit from real rows, relative to random rows in the same domain.

    ``score = min(median DCR(synthetic → real) / median DCR(random → real), 1)``:
    1 means synthetic rows are as far from real rows as random data is (protected), 0
    means they copy real rows. SDMetrics 0.32 ``DCRBaselineProtection``.

    Parameters
    ----------
    num_rows_subsample : int or None, default=None
        Number of synthetic (and random) rows per iteration; None uses all rows.
    num_iterations : int, default=1
        Iterations to average (needs ``num_rows_subsample``).
    subsample_real : bool, default=False
        Also subsample the real reference, as SDMetrics does (biased, see #934).
    confidence_level : float, default=0.95
        Two-sided level of the bootstrap interval.
    """

    id = "dcr_baseline_protection"
    shares = "dcr synthetic to real"
    cost = 6.0
    report_order = 10
    attack = (
        "An attacker holding the synthetic table looks for real people among its rows: "
        "if synthetic rows sit much closer to real rows than random rows do, they copy them."
    )
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "median distance from synthetic rows to their closest training row over that of uniformly random rows, capped at 1: 1 = as far as random data, 0 = copies (a faithful generator also scores low)"
        ),
    )

    confidence_level: Param[float] = Param(
        confidence(), 0.95, "Two-sided level of the bootstrap interval."
    )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        level = self.confidence_level
        real, syn = tables.encoded("real"), tables.encoded("synthetic")
        n_sub, n_iter, params = _subsample_plan(self, syn.n_rows, context)
        if self.subsample_real and n_sub is not None and n_sub > real.n_rows:
            msg = (
                f"`num_rows_subsample` ({n_sub}) is larger than the real table ({real.n_rows} rows) "
                "with `subsample_real=True`; lower it or keep the full real reference."
            )
            raise ParameterError(msg)
        rng = context.rng
        random = random_baseline_table(tables, syn.n_rows, rng)
        scores, m_syn, m_rand = [], [], []
        records: dict[str, RecordScores] = {}
        ci = None
        for it in range(n_iter):
            syn_rows = _sample(syn.n_rows, n_sub, rng)
            rand_rows = _sample(random.n_rows, n_sub, rng)
            ref = (
                real.take(_sample(real.n_rows, n_sub, rng))
                if self.subsample_real
                else real
            )
            label = f" ({it + 1}/{n_iter})" if n_iter > 1 else ""
            d_syn = _synthetic_to_real(
                tables,
                syn_rows,
                ref,
                context,
                description=f"DCR synthetic → real{label}",
            )
            d_rand = dcr(
                random.take(rand_rows),
                ref,
                context,
                description=f"DCR random → real{label}",
            )
            ms, mr = _median(d_syn), _median(d_rand)
            m_syn.append(ms)
            m_rand.append(mr)
            scores.append(float("nan") if mr == 0 else min(ms / mr, 1.0))
            if it == 0:
                records["synthetic_to_real"] = RecordScores(
                    "synthetic",
                    syn_rows,
                    d_syn,
                    "distance of each synthetic row to its closest real row",
                )
                records["random_to_real"] = RecordScores(
                    "random",
                    rand_rows,
                    d_rand,
                    "distance of each random-baseline row to its closest real row",
                )
                if n_iter == 1:
                    ci = _protection_interval(d_syn, d_rand, rng, level)
        if any(s != s for s in scores):  # NaN
            context.warn(
                "the random baseline's median DCR is 0 (random rows hit real rows exactly: a tiny discrete "
                "domain), so the score is undefined."
            )
        score = float(np.mean(scores))
        breakdown: dict[str, Any] = {
            "score": score,
            "median_DCR_to_real_data": {
                "synthetic_data": float(np.mean(m_syn)),
                "random_data_baseline": float(np.mean(m_rand)),
            },
        }
        if tables.holdout is not None:
            # the holdout companion: new people from the same population, at the same
            # distance scale, instead of uniformly random rows
            d_hold = dcr(
                tables.encoded("holdout"),
                real,
                context,
                description="DCR holdout → real",
            )
            breakdown["median_DCR_to_real_data"]["holdout_data"] = _median(d_hold)
            d_first = records["synthetic_to_real"].values
            breakdown["holdout_test"] = auc_test(
                -d_first,
                -d_hold,
                statistic="probability that a synthetic row is closer to the training rows than a holdout row is, minus 0.5",
            )
            records["holdout_to_real"] = RecordScores(
                "holdout",
                np.arange(d_hold.size),
                d_hold,
                "distance of each holdout row to its closest real (training) row",
            )
        return Outcome(
            score=score, breakdown=breakdown, ci=ci, records=records, params=params
        )


def _protection_ratio(d_syn: np.ndarray, d_rand: np.ndarray) -> float:
    """``min(median(d_syn) / median(d_rand), 1)``; NaN when the random median is 0."""
    ms, mr = np.median(d_syn), np.median(d_rand)
    return float("nan") if mr == 0 else float(min(ms / mr, 1.0))


def _protection_interval(
    d_syn: np.ndarray, d_rand: np.ndarray, rng: np.random.Generator, level: float
) -> tuple[float, float] | None:
    """``bootstrap_interval(_protection_ratio, d_syn, d_rand)``, from the resamples' medians.

    The same resamples and the same interval (:func:`bootstrap_medians`), without
    partitioning every resample of both samples.
    """
    medians = bootstrap_medians(d_syn, d_rand, rng=rng)
    if medians is None:
        return None
    ms, mr = medians
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(mr == 0, np.nan, np.minimum(ms / mr, 1.0))
    return percentile_interval(ratio, confidence_level=level)


def _overfitting_protection(closer: np.ndarray) -> float:
    """``min(2 (1 - p), 1)`` for the share ``p`` of synthetic rows closer to real rows."""
    return float(min(2.0 * (1.0 - closer.mean()), 1.0))


@register
class DCROverfittingProtection(_DCRMetric):
    """Are synthetic rows closer to the real rows the generator saw than to a holdout it never saw?

    ``p`` = share of synthetic rows strictly closer (DCR) to the real table than to the
    holdout; ``score = min(2 (1 - p), 1)``: 1 when no more than half the synthetic rows
    are closer to the training rows (no overfitting), 0 when all are. SDMetrics 0.32
    ``DCROverfittingProtection``.

    Parameters
    ----------
    num_rows_subsample : int or None, default=None
        Number of synthetic rows per iteration; None uses all rows.
    num_iterations : int, default=1
        Iterations to average (needs ``num_rows_subsample``).
    subsample_real : bool, default=False
        Also subsample the real and holdout references to ``num_rows_subsample`` rows,
        as SDMetrics does (biased, see #934).
    range_source : {"reference", "real"}, default="reference"
        ``"reference"`` normalises DCR to real by the real table's ranges and DCR to
        holdout by the holdout's ranges, as SDMetrics does; ``"real"`` uses the real
        table's ranges for both, so the two distances are measured in the same units.
    confidence_level : float, default=0.95
        Two-sided level of the bootstrap interval.
    """

    id = "dcr_overfitting_protection"
    shares = "dcr synthetic to real"
    cost = 0.5
    report_order = 20
    attack = (
        "A generator that memorised its training rows produces synthetic rows closer to those "
        "rows than to real rows it never saw (the holdout)."
    )
    threat_model = ThreatModel(
        attacker_holds=AUDIT,
        target=TRAINING,
        meaning=(
            "2 × (1 − share of synthetic rows strictly closer to a training row than to a holdout row), capped at 1: 1 = at most half are (no memorisation, with a holdout as large as the training table), 0 = all are"
        ),
    )
    requires_holdout = True

    range_source: Param[str] = Param(
        option(("reference", "real")),
        "reference",
        "Whose column ranges scale the distances.",
    )
    confidence_level: Param[float] = Param(
        confidence(), 0.95, "Two-sided level of the bootstrap interval."
    )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        level = self.confidence_level
        real, syn, hold = (
            tables.encoded("real"),
            tables.encoded("synthetic"),
            tables.encoded("holdout"),
        )
        if hold.n_rows < 0.5 * real.n_rows:
            context.warn(
                f"the holdout ({hold.n_rows} rows) is less than half the size of the real table "
                f"({real.n_rows} rows); the comparison favours 'closer to real'."
            )
        n_sub, n_iter, params = _subsample_plan(self, syn.n_rows, context)
        if (
            self.subsample_real
            and n_sub is not None
            and n_sub > min(real.n_rows, hold.n_rows)
        ):
            msg = (
                f"`num_rows_subsample` ({n_sub}) is larger than the real ({real.n_rows}) or holdout "
                f"({hold.n_rows}) table with `subsample_real=True`; lower it or keep the full references."
            )
            raise ParameterError(msg)
        rng = context.rng
        shares, scores = [], []
        records: dict[str, RecordScores] = {}
        ci = None
        for it in range(n_iter):
            syn_rows = _sample(syn.n_rows, n_sub, rng)
            if self.subsample_real:
                ref_real = real.take(_sample(real.n_rows, n_sub, rng))
                ref_hold = hold.take(_sample(hold.n_rows, n_sub, rng))
            else:
                ref_real, ref_hold = real, hold
            scale = _domain(ref_real).ranges if self.range_source == "real" else None
            label = f" ({it + 1}/{n_iter})" if n_iter > 1 else ""
            query = syn.take(syn_rows)
            d_real = _synthetic_to_real(
                tables,
                syn_rows,
                ref_real,
                context,
                description=f"DCR synthetic → real{label}",
                scale=scale,
            )
            d_hold = dcr(
                query,
                ref_hold,
                context,
                description=f"DCR synthetic → holdout{label}",
                scale=scale,
            )
            closer = d_real < d_hold
            p = float(closer.mean())
            shares.append(p)
            scores.append(min(2.0 * (1.0 - p), 1.0))
            if it == 0:
                records["synthetic_to_real"] = RecordScores(
                    "synthetic",
                    syn_rows,
                    d_real,
                    "distance of each synthetic row to its closest real row",
                )
                records["synthetic_to_holdout"] = RecordScores(
                    "synthetic",
                    syn_rows,
                    d_hold,
                    "distance of each synthetic row to its closest holdout row",
                )
                if n_iter == 1:
                    ci = bootstrap_interval(
                        _overfitting_protection, closer, rng=rng, confidence_level=level
                    )
        score = float(np.mean(scores))
        breakdown: dict[str, JSONValue] = {
            "score": score,
            "synthetic_data_percentages": {
                "closer_to_training": float(np.mean(shares)),
                "closer_to_holdout": float(np.mean([1.0 - p for p in shares])),
            },
        }
        return Outcome(
            score=score, breakdown=breakdown, ci=ci, records=records, params=params
        )
