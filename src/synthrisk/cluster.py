# SPDX-License-Identifier: BSD-3-Clause
"""Running synthrisk on a Dask cluster: connect, start a local one, or use the caller's client.

>>> from synthrisk.cluster import dask_compute
>>> with dask_compute(scheduler=None, n_workers=1) as client:  # doctest: +SKIP
...     report = evaluate(real, synthetic, holdout, backend="dask")

Inside the block every neighbour search of the ``"dask"`` backend runs its tasks on
``client``; the cluster this function started is closed again on exit (an existing
client or scheduler is left running).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from synthrisk._progress import as_progress, metric_plan
from synthrisk._spill import spill
from synthrisk._validation import check_int
from synthrisk.evaluate import applicable_by_default, resolve_metrics, run_metrics
from synthrisk.exceptions import ClusterError
from synthrisk.holdout_check import check_holdout, holdout_warnings
from synthrisk.io.dataset import read_dataset
from synthrisk.neighbors import (
    CONNECT_TIMEOUT,
    active_client,
    compute_scope,
    dask_compute,
    local_cluster_size,
)
from synthrisk.results import MetricResult, RecordScores
from synthrisk.schema.partitioned import prepare_partitioned
from synthrisk.verdict import Thresholds, judge

__all__ = [
    "CONNECT_TIMEOUT",
    "ClusterError",
    "compute_scope",
    "dask_compute",
    "evaluate_dataset",
    "local_cluster_size",
]

#: rows per table of the seeded sample the other metrics run on
DEFAULT_SAMPLE_ROWS = 50_000

#: rows per table the holdout check reads on a cluster (a seeded sample beyond it)
HOLDOUT_CHECK_ROWS = 20_000


def spill_records(result: MetricResult) -> MetricResult:
    """``result`` with its large per-record arrays in memory-mapped scratch files.

    The arrays keep their values, dtype and shape and become read-only; see
    :mod:`synthrisk._spill`.
    """
    if not result.records:
        return result
    records = {
        name: RecordScores(
            rec.table, spill(rec.index), spill(rec.values), rec.description
        )
        for name, rec in result.records.items()
    }
    return dataclasses.replace(result, records=records)


def evaluate_dataset(
    real: Any,
    synthetic: Any,
    holdout: Any = None,
    *,
    metadata: Any = None,
    metrics: Any = None,
    seed: int = 0,
    client: Any | None = None,
    scheduler: str | None = None,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    working_memory: float | None = None,
    progress: Any = False,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
) -> Any:
    """Evaluate tables that do not fit one machine, on a Dask cluster.

    Parameters
    ----------
    real, synthetic, holdout : dask DataFrame, folder, glob or file
        Parquet datasets (a folder or ``"part-*.parquet"``), CSV globs
        (``"claims/*.csv.gz"``) or ``dask.dataframe`` objects; see
        :func:`synthrisk.io.dataset.read_dataset`.
    metadata, metrics, seed, working_memory, progress, thresholds
        As :func:`synthrisk.evaluate`.
    client, scheduler
        The cluster (as :func:`synthrisk.evaluate`); neither starts a local cluster
        sized to this machine.
    sample_rows : int, default=50_000
        Metrics that need every row in memory (those whose
        :meth:`~synthrisk.metrics.Metric.supports_partitioned` is False, such as
        ``membership_classification``) run on a sample of at most this many rows per table, drawn
        without replacement with ``seed``, and say so in their warnings. Tables no
        larger than this are taken whole, so the report equals :func:`synthrisk.evaluate`.

    Returns
    -------
    EvaluationReport
        As :func:`synthrisk.evaluate`.
    """
    seed = check_int(seed, name="seed", minimum=0)
    sample_rows = check_int(sample_rows, name="sample_rows", minimum=1)
    with compute_scope("dask", client=client, scheduler=scheduler):
        frames = {
            "real": read_dataset(real, name="real"),
            "synthetic": read_dataset(synthetic, name="synthetic"),
            "holdout": None
            if holdout is None
            else read_dataset(holdout, name="holdout"),
        }
        tables = prepare_partitioned(
            frames["real"],
            frames["synthetic"],
            frames["holdout"],
            client=active_client(),
            metadata=metadata,
        )
        chosen = resolve_metrics(metrics)
        if metrics is None:
            # a default run leaves out what has nothing to examine (replay metrics
            # without identifier or free-text columns), as in memory
            chosen = applicable_by_default(tables, chosen)  # type: ignore[arg-type]
        # the holdout check (synthrisk.holdout_check) on a seeded sample of the tables:
        # exact where they hold at most HOLDOUT_CHECK_ROWS rows
        check_tables, check_drawn = tables.sample(HOLDOUT_CHECK_ROWS, seed)
        checked_holdout = check_holdout(check_tables, seed=seed)
        if checked_holdout is not None and check_drawn:
            checked_holdout["sampled"] = dict(check_drawn)
        on_rows = [m for m in chosen if m.supports_partitioned()]
        sampled = [m for m in chosen if not m.supports_partitioned()]
        # one numbering ([i/n]) across the metrics on every row and those on the sample
        progress = as_progress(progress)
        common = {
            "seed": seed,
            "working_memory": working_memory,
            "backend": "dask",
            "progress": progress,
            # a default run skips the metrics that cannot run, with the reason
            "skip_inapplicable": metrics is None,
            # per-record arrays leave the driver's memory as each metric finishes
            "on_result": spill_records,
        }
        results = {}
        with metric_plan(progress, len(chosen)):
            full = run_metrics(tables, on_rows, **common)  # type: ignore[arg-type]
            results.update({r.metric: r for r in full.results})
            if sampled:
                sample, drawn = tables.sample(sample_rows, seed)
                part = run_metrics(sample, sampled, **common)
                for result in part.results:
                    if drawn:
                        sizes = ", ".join(
                            f"{n} of {tables.encoded(t).n_rows} {t} rows"
                            for t, n in drawn.items()
                        )
                        note = (
                            f"computed on a seeded random sample ({sizes}; seed {seed}): this metric "
                            "needs all rows in memory; raise `sample_rows` (`--sample-rows`, "
                            "`compute.sample_rows`) to use more."
                        )
                        result = dataclasses.replace(
                            result, warnings=(*result.warnings, note)
                        )
                    results[result.metric] = result
    # a metric run on the sample may find nothing to examine there (the replay metrics
    # decide on the rows in memory): it is left out, as in memory
    report = dataclasses.replace(
        full, results=tuple(results[m.id] for m in chosen if m.id in results)
    )
    if checked_holdout is not None:
        report = dataclasses.replace(
            report,
            inputs={**report.inputs, "holdout_check": checked_holdout},
            warnings=(*report.warnings, *holdout_warnings(checked_holdout)),
        )
    if thresholds is not None and not isinstance(thresholds, Thresholds):
        thresholds = Thresholds.from_dict(thresholds)
    return dataclasses.replace(report, verdict=judge(report, thresholds))
