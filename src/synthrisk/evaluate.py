# SPDX-License-Identifier: BSD-3-Clause
"""``evaluate``: run a set of metrics on one real / synthetic / holdout triple."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from synthrisk._progress import Progress, as_progress, metric_plan, metric_step
from synthrisk._typing import Backend, TableLike
from synthrisk._validation import check_int
from synthrisk._version import __version__
from synthrisk._warmup import numba_warmup
from synthrisk._workers import plan_workers, run_in_workers
from synthrisk.context import ReleaseContext, check_context
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.holdout_check import check_holdout, holdout_warnings
from synthrisk.metrics import METRICS, Metric, get_metric
from synthrisk.neighbors import compute_scope, reuse_searches
from synthrisk.results import EvaluationReport, MetricResult
from synthrisk.schema.schema import Schema
from synthrisk.schema.tables import Tables, excluded_note, prepare_tables
from synthrisk.selftest import run_self_test
from synthrisk.settings import Workers, check_compute, check_workers, get_config
from synthrisk.verdict import Thresholds, judge

__all__ = [
    "RECORD_METRICS",
    "MetricsSpec",
    "apply_params",
    "check_self_test",
    "evaluate",
    "raise_precision",
    "resolve_metrics",
]

logger = logging.getLogger(__name__)

#: the classical risk models an anonymisation record shows (added to a default run
#: with ``record=True`` when this synthrisk registers them)
RECORD_METRICS = ("reidentification_risk", "sdc_risk")

#: parameter names through which a classical risk model takes the attacker's columns
_KNOWN_COLUMNS_PARAMS = ("quasi_identifiers", "key_fields", "key_columns", "columns")

#: metric ids or instances, or metric ids with their parameters (checked when built)
MetricsSpec = (
    Sequence["str | Metric"] | Mapping[str, Mapping[str, object] | None] | None
)


def apply_params(
    chosen: list[Metric], params: Mapping[str, Mapping[str, object]] | None
) -> list[Metric]:
    """``chosen`` with the parameters of ``params`` (metric id -> {name: value}) set.

    Every other parameter keeps its value, and the metrics the run does not name in
    ``params`` are unchanged.

    Raises
    ------
    ParameterError
        ``params`` is not a mapping of mappings, or names a metric that is not in the
        run (an unknown id suggests the closest), or a parameter the metric lacks.
    """
    if params is None:
        return chosen
    if not isinstance(params, Mapping):
        msg = (
            "`params` must map metric ids to {parameter: value} mappings, e.g. "
            f'{{"inference": {{"n_attacks": 3000}}}}; got {params!r}.'
        )
        raise ParameterError(msg)
    by_id = {m.id: i for i, m in enumerate(chosen)}
    out = list(chosen)
    for metric_id, values in params.items():
        if not isinstance(values, Mapping):
            msg = (
                f"`params.{metric_id}` must map parameter names to values, e.g. "
                f'{{"n_attacks": 3000}}; got {values!r}.'
            )
            raise ParameterError(msg)
        if metric_id not in by_id:
            get_metric(
                str(metric_id)
            )  # an unknown id: the message suggests the closest
            msg = (
                f"`params` sets parameters of {metric_id!r}, which is not in this run "
                f"(it runs {', '.join(by_id)}); add it to `metrics`, or drop its parameters."
            )
            raise ParameterError(msg)
        i = by_id[str(metric_id)]
        out[i] = out[i].with_params(values)
    return out


def resolve_metrics(metrics: MetricsSpec) -> list[Metric]:
    """Turn the ``metrics`` argument into metric instances.

    ``None`` selects the full assessment: every metric that runs with default
    parameters — DCR, disclosure (CAP with default columns), singling out
    (multivariate and univariate), linkability (a seeded split of the columns),
    inference (every column as the secret), membership; those that cannot run (for
    example without a holdout) are skipped with the reason. A list names metric ids or
    holds instances; a dict maps ids to parameter dicts.
    """
    if metrics is None:
        return [cls() for cls in METRICS.values() if cls.runs_by_default]
    if isinstance(metrics, Mapping):
        out = []
        for metric_id, params in metrics.items():
            if params is not None and not isinstance(params, Mapping):
                msg = f"parameters of metric {metric_id!r} must be a mapping; got {params!r}."
                raise ParameterError(msg)
            out.append(get_metric(metric_id).from_params(params))
        return out
    if isinstance(metrics, str):
        metrics = [metrics]
    out = []
    for item in metrics:
        if isinstance(item, Metric):
            out.append(item)
        elif isinstance(item, str):
            out.append(get_metric(item).from_params(None))
        else:
            msg = f"`metrics` entries must be metric ids or Metric instances; got {item!r}."
            raise ParameterError(msg)
    ids = [m.id for m in out]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        msg = f"`metrics` lists {dupes} more than once; give each metric once."
        raise ParameterError(msg)
    return out


def applicable_by_default(tables: Tables, metrics: Sequence[Metric]) -> list[Metric]:
    """The metrics of a default run that have something to examine in ``tables``.

    A metric whose :meth:`~synthrisk.metrics.Metric.applies_by_default` is False (the
    replay metrics on tables without identifier or text columns) is dropped silently.
    """
    return [m for m in metrics if type(m).applies_by_default(tables)]


def evaluate(
    real: TableLike,
    synthetic: TableLike,
    holdout: TableLike | None = None,
    *,
    metadata: Mapping[str, Any] | Schema | None = None,
    metrics: MetricsSpec = None,
    seed: int = 0,
    working_memory: float | None = None,
    backend: Backend | None = None,
    progress: bool | Progress = False,
    client: Any = None,
    scheduler: str | None = None,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    self_test: bool = False,
    workers: Workers | None = None,
    policy: str | None = None,
    params: Mapping[str, Mapping[str, object]] | None = None,
    context: ReleaseContext | Mapping[str, Any] | None = None,
    record: bool = False,
) -> EvaluationReport:
    """Evaluate how much ``synthetic`` leaks about ``real``.

    Parameters
    ----------
    real : pandas DataFrame, polars DataFrame or pyarrow Table
        The real rows the generator was trained on.
    synthetic : table
        The generator's output.
    holdout : table, default=None
        Real rows the generator never saw; needed by holdout-based metrics.
    metadata : dict or Schema, default=None
        Column kinds (SDMetrics' single-table metadata or synthrisk's format);
        inferred from dtypes when None.
    metrics : list of ids / Metric instances, or dict id -> params, default=None
        Which metrics to run; None runs every metric that works with default
        parameters.
    seed : int, default=0
        Seed of every random step; each metric gets its own stream derived from it.
    working_memory : float, default=None
        MiB budget of blocked computations (global default 256).
    backend : {"auto", "numpy", "numba", "dask"}, default=None
        Neighbour-search backend. ``"dask"`` runs every neighbour search as tasks on
        ``client``, on the scheduler at ``scheduler``, on the default
        ``dask.distributed`` client if there is one, or else on a local cluster
        started for this call (one worker process per core); see
        :func:`synthrisk.cluster.dask_compute`.
    progress : bool, default=False
        Show progress bars on standard error.
    client : dask.distributed.Client, default=None
        Run on this cluster (implies ``backend="dask"``).
    scheduler : str, default=None
        Address of a running Dask scheduler, e.g. ``"tcp://host:8786"`` (implies
        ``backend="dask"``); an unreachable one raises
        :class:`~synthrisk.cluster.ClusterError`.
    thresholds : Thresholds or dict, default=None
        What the verdict judges by (user score thresholds, tolerances, ``alpha``);
        None: the documented defaults (see ``docs/verdict.md``).
    policy : {"statistical", "strict"} or None, default=None
        The release policy for copied people (None: the thresholds' own, by default
        ``statistical``). ``statistical``: the holdout-controlled gates decide, and
        training people copied by synthetic rows beyond what the chance model explains
        read review; ``strict``: any synthetic row that reproduces a training person's
        record no other real person shares, exactly or within the near-copy threshold,
        fails (see docs/verdict.md, "Copied people: the chance model and the release policy").
    self_test : bool, default=False
        Run the known-leak self-test after the evaluation (``report.self_test``): plant
        exact and near copies of the most isolated training people into the synthetic
        table (0.1 %, 0.5 % and 1 % of its rows), re-run the gating metrics on each
        planted table with the same parameters and seed, and record whether the verdict
        would have caught them (:mod:`synthrisk.selftest`). Needs a holdout; the run's
        encodings and neighbour searches are reused, and on Adult the self-test adds
        about twice the evaluation's own time.
    workers : int or "auto", default=None
        Worker processes that run the metrics side by side; None takes the global
        setting (``"auto"``). ``"auto"`` forks up to one per core (at most 4) on Linux
        for tables of 20,000 rows or more; 1 runs one metric after another in this
        process. The report is the same either way (the metrics' timings aside). Runs
        with a Dask or torch backend, or with the self-test, stay in this process.
        See ``docs/performance.md``.
    params : dict of metric id -> dict, default=None
        Parameters of metrics of the run, e.g. ``{"inference": {"n_attacks": 3000}}``:
        with ``metrics=None`` they change those metrics of the full assessment and keep
        the rest of it (``--param METRIC.NAME=VALUE`` on the command line). A metric that
        is not in the run raises :class:`~synthrisk.exceptions.ParameterError`.
    context : ReleaseContext or dict, default=None
        The release context recorded in the report (``report.context``): purpose,
        recipient, release model, the columns the attacker is assumed to know, the
        share of the population in the training table, assessor and dates (see
        :class:`synthrisk.context.ReleaseContext`); ``assessed_on`` defaults to today.
        The columns the attacker knows must be columns of the real table.
    record : bool, default=False
        The run is for an anonymisation record (``report.write_record``): a default
        run (``metrics=None``) also runs the classical risk models of
        :data:`RECORD_METRICS` that this synthrisk registers (skipped with their reason
        where they do not apply; the record shows the others as not run).

    Returns
    -------
    EvaluationReport
        Results in the order the metrics ran, and the release verdict
        (``report.verdict``); ``.to_json()`` gives the JSON report,
        ``.to_frame()`` one row per metric.

    Raises
    ------
    InputError
        ``self_test=True`` without a holdout table; or a holdout that holds exactly the
        training rows (see :mod:`synthrisk.holdout_check`: an overlapping holdout, or one
        from another population, is recorded in ``report.inputs["holdout_check"]`` and
        caps the verdict at review).

    Examples
    --------
    >>> from synthrisk import evaluate
    >>> from synthrisk.datasets import load_demo
    >>> demo = load_demo(n_rows=400)
    >>> report = evaluate(demo.real, demo.synthetic["leaky"], demo.holdout)
    >>> report["dcr_overfitting_protection"].score < 0.5
    True
    >>> report.verdict.overall
    'fail'
    """
    seed = check_int(seed, name="seed", minimum=0)
    check_self_test(self_test, has_holdout=holdout is not None)
    working_memory, backend = check_compute(working_memory, backend)
    workers = get_config().workers if workers is None else check_workers(workers)
    # numba's one-time start-up runs beside the tables' preparation and holdout check
    with numba_warmup():
        tables = prepare_tables(real, synthetic, holdout, metadata=metadata)
        if thresholds is not None and not isinstance(thresholds, Thresholds):
            thresholds = Thresholds.from_dict(thresholds)
        if policy is not None:
            thresholds = (
                Thresholds() if thresholds is None else thresholds
            ).with_policy(policy)
        checked_context = check_context(context)
        if checked_context is not None:
            checked_context = _checked_columns(checked_context, tables).dated()
        chosen = resolve_metrics(metrics)
        if record and metrics is None:
            chosen += record_metrics(chosen, checked_context)
        chosen = apply_params(chosen, params)
        if metrics is None:
            chosen = applicable_by_default(tables, chosen)
        # a holdout identical to the training table is refused before any metric runs
        checked_holdout = check_holdout(tables, seed=seed)
    reporter = as_progress(progress)
    with contextlib.ExitStack() as stack:
        backend = stack.enter_context(
            compute_scope(backend, client=client, scheduler=scheduler)
        )
        if self_test:
            # the self-test's planted tables differ from the synthetic table in a few
            # rows: their searches start from the run's (synthrisk.neighbors._reuse)
            stack.enter_context(reuse_searches())
        report = run_metrics(
            tables,
            chosen,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            progress=reporter,
            skip_inapplicable=metrics is None,
            # the self-test reuses this run's searches: they must be made here
            workers=1
            if self_test or client is not None or scheduler is not None
            else plan_workers(workers, tables, chosen, backend=backend),
        )
        if checked_holdout is not None:
            report = dataclasses.replace(
                report,
                inputs={**report.inputs, "holdout_check": checked_holdout},
                warnings=(*report.warnings, *holdout_warnings(checked_holdout)),
            )
        if checked_context is not None:
            report = dataclasses.replace(report, context=checked_context)
        if record:
            # the record tells a classical model this synthrisk lacks from one not run
            missing = [m for m in RECORD_METRICS if m not in METRICS]
            report = dataclasses.replace(
                report,
                inputs={**report.inputs, "record_metrics": {"unavailable": missing}},
            )
        # the one verdict of the run: the pipeline and the HTML report reuse it
        report = dataclasses.replace(report, verdict=judge(report, thresholds))
        report, chosen = raise_precision(
            report,
            tables,
            chosen,
            thresholds,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            skip_inapplicable=metrics is None,
        )
        if not self_test:
            return report
        tested = run_self_test(
            tables,
            chosen,
            report,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            progress=reporter,
            thresholds=thresholds,
        )
    return dataclasses.replace(report, self_test=tested)


def record_metrics(
    chosen: Sequence[Metric], context: ReleaseContext | None = None
) -> list[Metric]:
    """The classical risk models of :data:`RECORD_METRICS` a record adds to ``chosen``.

    Only the ids this synthrisk registers and ``chosen`` lacks; one that cannot be
    built with its defaults is left out (the record shows it as not run). The columns
    the attacker knows (``context.attacker_knows``) become its quasi-identifiers when it
    takes them.
    """
    have = {m.id for m in chosen}
    out = []
    for metric_id in RECORD_METRICS:
        if metric_id in have or metric_id not in METRICS:
            continue
        cls = METRICS[metric_id]
        values: dict[str, object] = {}
        known = None if context is None else context.attacker_knows
        if known:
            declared = cls.declared_params
            for name in _KNOWN_COLUMNS_PARAMS:
                if name in declared:
                    values[name] = list(known)
                    break
        try:
            out.append(cls.from_params(values or None))
        except ParameterError:
            logger.info(
                "%s: not built with its defaults; the record shows it as not run",
                metric_id,
            )
    return out


def _checked_columns(context: ReleaseContext, tables: Tables) -> ReleaseContext:
    """``context`` whose ``attacker_knows`` names columns of the real table."""
    known = context.attacker_knows or ()
    columns = [str(c) for c in tables.real.columns]
    missing = [c for c in known if c not in columns]
    if missing:
        msg = (
            f"`context.attacker_knows` names {missing}, which the real table lacks; "
            f"its columns are {columns}."
        )
        raise ParameterError(msg)
    return context


def raise_precision(
    report: EvaluationReport,
    tables: Tables,
    chosen: Sequence[Metric],
    thresholds: Thresholds | None,
    *,
    seed: int,
    working_memory: float | None,
    backend: Backend | None,
    skip_inapplicable: bool,
) -> tuple[EvaluationReport, list[Metric]]:
    """Re-run, more precisely, the metrics whose holdout test reads review, and judge again.

    A test that is merely imprecise raises its own precision where it can before it
    reads review (:meth:`~synthrisk.metrics.Metric.more_precise`: the inference
    attack on every training and holdout row). Runs that are already decided are left
    as they are, so their numbers do not move. The re-run result records the first
    run under ``breakdown["precision_raised"]``; the returned metrics carry the raised
    parameters (the self-test re-runs them).
    """
    verdict = report.verdict
    assert verdict is not None
    results = list(report.results)
    metrics = list(chosen)
    raised = False
    for i, (metric, judged) in enumerate(zip(chosen, verdict.metrics, strict=True)):
        if (
            judged.level != "review"
            or not judged.gating
            or judged.threshold is not None
        ):
            continue
        precise = metric.more_precise(tables)
        if precise is None:
            continue
        result = precise.run_with(
            tables,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            skip_inapplicable=skip_inapplicable,
        )
        if result.status == "skipped":
            continue
        first = {
            "params": dict(results[i].params),
            "effect": judged.effect,
            "ci": None if judged.ci is None else list(judged.ci),
            "ci_level": judged.ci_level,
            "tolerance": judged.tolerance,
            "seconds": results[i].seconds,
        }
        breakdown = {**result.breakdown, "precision_raised": first}
        results[i] = dataclasses.replace(
            result, breakdown=breakdown, seconds=result.seconds + results[i].seconds
        )
        metrics[i] = precise
        raised = True
    if not raised:
        return report, metrics
    report = dataclasses.replace(report, results=tuple(results))
    return dataclasses.replace(report, verdict=judge(report, thresholds)), metrics


def check_self_test(value: Any, *, has_holdout: bool) -> bool:
    """Validate ``self_test``: a bool, and true only with a holdout table.

    Raises
    ------
    ParameterError
        ``value`` is not a bool.
    InputError
        ``value`` is true and there is no holdout table.
    """
    if not isinstance(value, bool):
        msg = f"`self_test` must be true or false; got {value!r}."
        raise ParameterError(msg)
    if value and not has_holdout:
        msg = (
            "the self-test (`self_test=True`, `--self-test`) needs a `holdout` table: "
            "without one the verdict is always review (closeness to real rows cannot be "
            "told apart from fidelity), so there is no detection power to measure. Pass "
            "the holdout, or leave the self-test off."
        )
        raise InputError(msg)
    return value


def run_metrics(
    tables: Tables,
    metrics: Sequence[Metric],
    *,
    seed: int,
    working_memory: float | None = None,
    backend: Backend | None = None,
    progress: bool | Progress = False,
    skip_inapplicable: bool = False,
    on_result: Callable[[MetricResult], MetricResult] | None = None,
    workers: int = 1,
) -> EvaluationReport:
    """Run already-built metrics on validated tables and collect the report (not judged).

    With ``skip_inapplicable`` (a default run: the user named no metrics), a metric
    that cannot run on these tables (it needs a holdout, a column kind the tables
    lack, more rows, or a missing optional dependency: any :class:`SynthriskError`
    it raises) is recorded as skipped with the reason and the others run. Without
    it, the first such error is raised: a metric the user named must run.
    ``on_result`` is applied to each result as soon as its metric is done (the
    cluster path moves per-record arrays out of memory with it). ``workers`` > 1
    runs the metrics in that many forked worker processes (see
    :func:`synthrisk._workers.plan_workers`, which decides whether that is possible);
    the report is the same, in the same order.
    """
    if skip_inapplicable:
        metrics = applicable_by_default(tables, metrics)
    if not skip_inapplicable:
        for metric in metrics:
            if metric.requires_holdout and tables.holdout is None:
                msg = f"metric {metric.id!r} needs a `holdout` table (real rows the generator never saw); none was given."
                raise InputError(msg)
    reporter = as_progress(progress)
    if workers > 1:
        results = _run_in_workers(
            tables,
            metrics,
            workers,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            reporter=reporter,
            skip_inapplicable=skip_inapplicable,
            on_result=on_result,
        )
    else:
        results = []
        with metric_plan(reporter, len(metrics)):
            for metric in metrics:
                with metric_step(reporter, metric.id) as finished:
                    result = metric.run_with(
                        tables,
                        seed=seed,
                        working_memory=working_memory,
                        backend=backend,
                        progress=reporter,
                        skip_inapplicable=skip_inapplicable,
                    )
                    finished(result.score, result.status)
                results.append(result if on_result is None else on_result(result))
    schema = tables.schema.to_dict()
    schema["excluded"] = [c.name for c in tables.schema.excluded]
    return EvaluationReport(
        synthrisk_version=__version__,
        seed=seed,
        inputs=tables.summary(),
        results=tuple(results),
        schema=schema,
        warnings=tuple(checked_notes(tables.notes, tables.schema, results)),
    )


def checked_notes(
    notes: Sequence[str], schema: Schema, results: Sequence[MetricResult]
) -> list[str]:
    """The validation notes, with each excluded column's note saying what checked it.

    Columns of kind id, pii and text are left out of the distance-based metrics; the
    replay metrics check them (``docs/replay.md``). A column a metric of the run checked
    (it is among the columns of the metric's breakdown) reads "checked by …"; one that
    no metric checked says which metric would.
    """
    checked: dict[str, list[str]] = {}
    for result in results:
        if result.status != "ok":
            continue
        columns = result.breakdown.get("columns")
        if isinstance(columns, (Mapping, list, tuple)):
            names = [str(c) for c in columns]
        else:
            continue
        for name in names:
            checked.setdefault(name, []).append(result.metric)
    would = {
        "id": "identifier_replay",
        "pii": "identifier_replay",
        "text": "text_replay",
    }
    out = list(notes)
    for spec in schema.excluded:
        if spec.source != "inferred":
            continue
        old = excluded_note(spec)
        if old not in out:
            continue
        by = checked.get(spec.name)
        new = (
            f"column {spec.name!r} ({spec.kind}, {spec.note or 'inferred'}) is left out of the "
            f"distance-based metrics and checked by {', '.join(by)}."
            if by
            else f"column {spec.name!r} ({spec.kind}, {spec.note or 'inferred'}) is left out of "
            f"every metric of this run; {would.get(spec.kind, 'identifier_replay')} checks such "
            "columns (it needs a holdout table). Declare its kind in the metadata to use it "
            "otherwise."
        )
        out[out.index(old)] = new
    return out


def _run_in_workers(
    tables: Tables,
    metrics: Sequence[Metric],
    workers: int,
    *,
    seed: int,
    working_memory: float | None,
    backend: Backend | None,
    reporter: Progress,
    skip_inapplicable: bool,
    on_result: Callable[[MetricResult], MetricResult] | None,
) -> list[MetricResult]:
    """:func:`run_metrics` in worker processes: the results in the metrics' order."""
    found: dict[int, MetricResult] = {}
    with metric_plan(reporter, len(metrics)):
        for i, result in run_in_workers(
            tables,
            metrics,
            workers,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            skip_inapplicable=skip_inapplicable,
        ):
            with metric_step(reporter, metrics[i].id) as finished:
                finished(result.score, result.status, result.seconds)
            found[i] = result if on_result is None else on_result(result)
    return [found[i] for i in range(len(metrics))]
