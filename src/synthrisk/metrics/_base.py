# SPDX-License-Identifier: BSD-3-Clause
"""The Metric base class, the evaluation context and the metric registry.

A metric is a thin class over pure kernels: it validates its parameters when built,
receives validated :class:`~synthrisk.schema.Tables` and a :class:`Context`, and returns
an :class:`Outcome`; :meth:`Metric.run` wraps that into a timed
:class:`~synthrisk.results.MetricResult`. New metric families register themselves with
:func:`register` and are picked up by ``evaluate``, the CLI and the YAML config.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import logging
import time
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

import numpy as np

from synthrisk._progress import NullProgress, Progress, as_progress
from synthrisk._rng import metric_generator
from synthrisk._typing import Backend, JSONValue
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.results import MetricResult, RecordScores, to_jsonable
from synthrisk.schema.tables import Tables, prepare_tables

__all__ = [
    "METRICS",
    "Context",
    "Metric",
    "Outcome",
    "get_metric",
    "make_context",
    "register",
]

logger = logging.getLogger(__name__)

METRICS: dict[str, type[Metric]] = {}


M = TypeVar("M", bound="type[Metric]")


def register(cls: M) -> M:
    """Class decorator adding a metric to the registry under its ``id``."""
    METRICS[cls.id] = cls
    # stable sort: metrics of equal report_order keep their registration order
    ranked = sorted(METRICS.items(), key=lambda item: item[1].report_order)
    METRICS.clear()
    METRICS.update(ranked)
    return cls


def get_metric(metric_id: str) -> type[Metric]:
    """Return the metric class registered as ``metric_id``."""
    try:
        return METRICS[metric_id]
    except KeyError:
        msg = f"unknown metric {metric_id!r}; available metrics: {sorted(METRICS)}."
        raise ParameterError(msg) from None


@dataclasses.dataclass
class Context:
    """What a metric needs besides the tables: randomness, memory budget, progress."""

    seed: int = 0
    rng: np.random.Generator = dataclasses.field(
        default_factory=lambda: np.random.default_rng(0)
    )
    working_memory: float | None = None
    backend: Backend | None = None
    progress: Progress = dataclasses.field(default_factory=NullProgress)
    warnings: list[str] = dataclasses.field(default_factory=list)

    def warn(self, message: str) -> None:
        """Record a statistical caveat in the result (and log it at INFO level)."""
        logger.info(message)
        if message not in self.warnings:
            self.warnings.append(message)


@dataclasses.dataclass
class Outcome:
    """What a metric's ``_compute`` returns; :meth:`Metric.run` adds the rest."""

    score: float | None
    breakdown: dict[str, JSONValue]
    ci: tuple[float, float] | None = None
    records: dict[str, RecordScores] = dataclasses.field(default_factory=dict)
    params: dict[str, JSONValue] | None = None
    #: breakdown keys built from real records' values (withheld from JSON by default)
    value_keys: tuple[str, ...] = ()
    #: why the score is undefined, when ``score`` is None (else the last warning says)
    reason: str | None = None


class Metric(abc.ABC):
    """Base class of all metrics.

    Subclasses set the class attributes, take their options as keyword-only
    ``__init__`` arguments (stored with :meth:`_set_params`) and implement
    :meth:`_compute`.
    """

    id: ClassVar[str] = ""
    #: one plain sentence: what the attacker knows and tries
    attack: ClassVar[str] = ""
    #: True when a higher score means better protection
    higher_is_safer: ClassVar[bool] = True
    requires_holdout: ClassVar[bool] = False
    #: run when ``evaluate(metrics=None)``; False for metrics that need parameters
    runs_by_default: ClassVar[bool] = True
    #: position in the registry, the default run and the report (lower first); the
    #: families leave gaps of 10 so that a new metric can sit beside its relatives
    report_order: ClassVar[int] = 10_000

    params: dict[str, JSONValue]

    def _set_params(self, **params: Any) -> None:
        self.params = {k: to_jsonable(v) for k, v in params.items()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    @classmethod
    def param_names(cls) -> list[str]:
        """Names of the keyword options this metric accepts.

        The keyword-only arguments of ``__init__``. A variant that changes a default or
        adds options passes the rest on with ``**options`` to the class it extends,
        whose options then count too.
        """
        names: list[str] = []
        for klass in cls.__mro__:
            if "__init__" not in vars(klass):
                continue
            params = inspect.signature(vars(klass)["__init__"]).parameters.values()
            names += [
                p.name
                for p in params
                if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in names
            ]
            if all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in params):
                break
        return names

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None) -> Metric:
        """Build the metric from a dict of options, rejecting unknown names."""
        params = dict(params or {})
        allowed = cls.param_names()
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            msg = f"metric {cls.id!r} has no parameter(s) {unknown}; allowed parameters: {allowed}."
            raise ParameterError(msg)
        return cls(**params)

    def compute(
        self,
        real: Any,
        synthetic: Any,
        holdout: Any = None,
        *,
        metadata: Mapping[str, Any] | None = None,
        seed: int = 0,
        working_memory: float | None = None,
        backend: Backend | None = None,
        progress: bool | Progress = False,
    ) -> MetricResult:
        """Validate the tables and compute this metric on them.

        Parameters
        ----------
        real, synthetic : pandas DataFrame, polars DataFrame or pyarrow Table
            The real rows the generator saw, and the generator's output.
        holdout : table, default=None
            Real rows the generator never saw (required by some metrics).
        metadata : dict, default=None
            Column kinds in SDMetrics' or synthrisk's format; inferred when None.
        seed : int, default=0
            Seed of every random step.
        working_memory : float, default=None
            MiB budget of blocked computations.
        backend : {"auto", "numpy", "numba"}, default=None
            Neighbour-search backend.
        progress : bool, default=False
            Show a progress bar on standard error.
        """
        tables = prepare_tables(real, synthetic, holdout, metadata=metadata)
        context = make_context(
            self.id,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            progress=progress,
        )
        result = self.run(tables, context)
        if tables.notes:
            result = dataclasses.replace(
                result, warnings=tuple(tables.notes) + result.warnings
            )
        return result

    def run(self, tables: Tables, context: Context) -> MetricResult:
        """Compute on already validated tables."""
        if self.requires_holdout and tables.holdout is None:
            msg = f"metric {self.id!r} needs a `holdout` table (real rows the generator never saw); none was given."
            raise InputError(msg)
        self.check_tables(tables)
        start = time.perf_counter()
        outcome = self._compute(tables, context)
        seconds = time.perf_counter() - start
        score = outcome.score
        if score is not None and not np.isfinite(score):
            score = None
        return MetricResult(
            metric=self.id,
            score=None if score is None else float(score),
            breakdown=outcome.breakdown,
            ci=outcome.ci,
            params=self.params if outcome.params is None else outcome.params,
            warnings=tuple(context.warnings),
            seconds=seconds,
            records=outcome.records,
            attack=self.attack,
            higher_is_safer=self.higher_is_safer,
            value_keys=outcome.value_keys,
            reason=outcome.reason if score is None else None,
        )

    def skipped(self, reason: str) -> MetricResult:
        """The result recording that this metric did not run, and why."""
        return MetricResult.skipped(
            self.id,
            reason,
            params=self.params,
            attack=self.attack,
            higher_is_safer=self.higher_is_safer,
        )

    def check_tables(self, tables: Tables) -> None:  # noqa: B027 - optional hook, empty by default
        """Check parameters that depend on the tables (column names); override as needed."""

    @abc.abstractmethod
    def _compute(self, tables: Tables, context: Context) -> Outcome:
        """Compute the metric on validated tables."""


def make_context(
    metric_id: str,
    *,
    seed: int,
    working_memory: float | None,
    backend: Backend | None,
    progress: bool | Progress | None,
) -> Context:
    """Build the context of one metric run (its own random stream)."""
    return Context(
        seed=seed,
        rng=metric_generator(seed, metric_id),
        working_memory=working_memory,
        backend=backend,
        progress=as_progress(progress),
    )
