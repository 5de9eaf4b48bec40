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
import difflib
import inspect
import logging
import time
import warnings
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, overload

import numpy as np

from synthrisk._progress import NullProgress, Progress, as_progress
from synthrisk._rng import metric_generator
from synthrisk._typing import Backend, JSONValue, TableLike, dataclass_transform
from synthrisk.exceptions import (
    InputError,
    ParameterError,
    SynthriskDeprecationWarning,
    SynthriskError,
)
from synthrisk.metrics._params import NOT_A_PARAM, Param
from synthrisk.results import MetricResult, RecordScores, ThreatModel, to_jsonable
from synthrisk.schema.tables import Tables, prepare_tables

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "METRICS",
    "Context",
    "Metric",
    "Outcome",
    "for_metric",
    "get_metric",
    "make_context",
    "register",
    "suggest",
]

logger = logging.getLogger(__name__)

METRICS: dict[str, type[Metric]] = {}


R = TypeVar("R", bound="type[Metric]")
M = TypeVar("M", bound="Metric")


def register(cls: R) -> R:
    """Class decorator adding a metric to the registry under its ``id``.

    Raises
    ------
    TypeError
        If the class does not declare its own :attr:`Metric.threat_model` (a
        :class:`~synthrisk.results.ThreatModel`): every number in a report says what
        the attacker holds and what it means.
    """
    if not isinstance(vars(cls).get("threat_model"), ThreatModel):
        raise TypeError(_no_threat_model_message(cls))
    METRICS[cls.id] = cls
    # stable sort: metrics of equal report_order keep their registration order
    ranked = sorted(METRICS.items(), key=lambda item: item[1].report_order)
    METRICS.clear()
    METRICS.update(ranked)
    return cls


def _no_threat_model_message(cls: type[Metric]) -> str:
    parent = next(
        (
            k
            for k in cls.__mro__[1:]
            if isinstance(vars(k).get("threat_model"), ThreatModel)
        ),
        None,
    )
    hint = (
        ""
        if parent is None
        else f" of its own (it would inherit {parent.__name__}'s: write "
        f"`threat_model = {parent.__name__}.threat_model` if that one is right for it)"
    )
    return (
        f"metric {cls.id!r} ({cls.__name__}) declares no threat model{hint}. Add the class "
        "attribute `threat_model = ThreatModel(attacker_holds=..., target=..., meaning=...)` "
        '(`from synthrisk.results import ThreatModel`): what the attacker holds ("the synthetic '
        'table only", "the synthetic table and some columns of a target person\'s record"), whom '
        'it attacks ("training people") and what the score means, in one line each; name the '
        "parameters that list the attacker's columns in `known=`, `guessed=` or `compared=`. "
        "See docs/report.md, 'Threat model of every number'."
    )


def suggest(name: str, choices: Iterable[str]) -> str:
    """`` Did you mean 'x'?`` for the choices closest to a misspelt ``name`` (or ``""``)."""
    choices = list(choices)
    close = difflib.get_close_matches(
        str(name).strip().lower(), choices, n=3, cutoff=0.6
    )
    if not close:
        # a prefix or a fragment: "dcr" -> the dcr_* metrics
        fragment = str(name).strip().lower()
        close = [c for c in choices if fragment and fragment in c][:3]
    if not close:
        return ""
    return " Did you mean " + " or ".join(repr(c) for c in close) + "?"


@overload
def get_metric(metric_id: str, kind: None = None) -> type[Metric]: ...


@overload
def get_metric(metric_id: str, kind: type[M]) -> type[M]: ...


def get_metric(metric_id: str, kind: type[Metric] | None = None) -> type[Metric]:
    """Return the metric class registered as ``metric_id``.

    With ``kind``, the class must be ``kind`` or a subclass of it, and type checkers
    read the result as ``type[kind]``: ``get_metric("nndr", NNDR).from_params(...)``
    is an ``NNDR``.

    Raises
    ------
    ParameterError
        If no metric is registered under that id (the message suggests the closest
        ids and lists the available ones), or the one registered is not a ``kind``.
    """
    try:
        cls = METRICS[metric_id]
    except (KeyError, TypeError):
        hint = suggest(metric_id, METRICS)
        msg = (
            f"unknown metric {metric_id!r}.{hint} Available metrics (`synthrisk metrics` "
            f"describes them): {', '.join(sorted(METRICS))}."
        )
        raise ParameterError(msg) from None
    if kind is not None and not issubclass(cls, kind):
        msg = (
            f"metric {metric_id!r} is {cls.__name__}, not a {kind.__name__} (or a "
            "subclass of it)."
        )
        raise ParameterError(msg)
    return cls


def for_metric(exc: SynthriskError, metric_id: str) -> SynthriskError:
    """``exc`` naming the metric it concerns: ``metric 'id': <message>``.

    The copy (of the same class) records ``metric``, ``detail`` (the message without
    the prefix) and the ``parameter`` of the original; an error that already names a
    metric is returned as it is.
    """
    if exc.metric is not None:
        return exc
    detail = str(exc)
    message = (
        detail
        if detail.startswith(f"metric {metric_id!r}")
        else f"metric {metric_id!r}: {detail}"
    )
    try:
        named = type(exc)(message)
    except Exception:  # an error class with another constructor: keep it as it is
        return exc
    named.metric, named.parameter, named.detail = metric_id, exc.parameter, detail
    return named


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


def _unknown_message(metric_id: str, unknown: list[str], allowed: list[str]) -> str:
    return (
        f"metric {metric_id!r} has no parameter(s) {unknown}; "
        f"allowed parameters: {allowed}."
    )


@dataclass_transform(kw_only_default=True, frozen_default=True, eq_default=False)
class Metric(abc.ABC):
    """Base class of all metrics.

    Subclasses set the class attributes, declare their options as annotated
    :class:`~synthrisk.metrics._params.Param` class attributes
    (``rank: Param[int] = Param(integer(minimum=1), 10, "...")``; a subclass redeclares
    a parent's parameter to change its default or constraint, and may assign
    :data:`~synthrisk.metrics._params.NOT_A_PARAM` to drop one) and implement
    :meth:`_compute`. The base class gives every subclass one keyword-only
    ``__init__`` over the declared parameters, in declaration order: unknown names
    are refused with the house message, defaults applied, each value checked, the
    JSON :attr:`params` built, and then :meth:`_check_params` runs the rules that
    involve several parameters. ``Metric`` is a ``dataclass_transform`` (PEP 681):
    type checkers read the annotated parameters as that ``__init__``'s keyword
    arguments (and as read-only attributes), so an annotation in a metric's class
    body declares a parameter; annotate derived attributes where
    :meth:`_check_params` sets them, or as ``ClassVar``.
    """

    id: ClassVar[str] = ""
    #: one plain sentence: what the attacker knows and tries
    attack: ClassVar[str] = ""
    #: what the attacker holds, whom it attacks and what the score means; every
    #: registered metric declares its own (:func:`register` refuses a class without)
    threat_model: ClassVar[ThreatModel | None] = None
    #: True when a higher score means better protection
    higher_is_safer: ClassVar[bool] = True
    requires_holdout: ClassVar[bool] = False
    #: run when ``evaluate(metrics=None)``; False for metrics that need parameters
    runs_by_default: ClassVar[bool] = True
    #: position in the registry, the default run and the report (lower first); the
    #: families leave gaps of 10 so that a new metric can sit beside its relatives
    report_order: ClassVar[int] = 10_000
    #: True when :meth:`_compute` also works on tables partitioned on a Dask cluster
    #: (:class:`~synthrisk.schema.partitioned.PartitionedTables`); on such tables the
    #: other metrics run on a seeded sample (:func:`synthrisk.cluster.evaluate_dataset`)
    runs_partitioned: ClassVar[bool] = False
    #: metrics naming the same value here share an intermediate result through
    #: :meth:`~synthrisk.schema.Tables.derived` (a search both need): a run with worker
    #: processes (:mod:`synthrisk._workers`) keeps them in one worker
    shares: ClassVar[str] = ""
    #: rough run time relative to a light metric (1) on a typical table: a run with
    #: worker processes starts the longest first. Only the order depends on it.
    cost: ClassVar[float] = 1.0
    #: the declared parameters by name, in declaration order (set per class)
    declared_params: ClassVar[Mapping[str, Param[Any, Any]]] = MappingProxyType({})
    #: renamed parameters still accepted under their old name, with a
    #: :class:`~synthrisk.exceptions.SynthriskDeprecationWarning`:
    #: ``{old: (new, version that removes the old name)}``
    renamed_params: ClassVar[Mapping[str, tuple[str, str]]] = MappingProxyType({})

    params: dict[str, JSONValue]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in vars(cls):
            msg = (
                f"metric class {cls.__qualname__} defines __init__; a metric declares its "
                "options as annotated class attributes, `name: Param[T] = Param(constraint, "
                "default, doc)`, and gets its __init__ from Metric. Move the checks of "
                "__init__ into `_check_params` (see docs/architecture.md, 'Adding a metric')."
            )
            raise TypeError(msg)
        declared: dict[str, Param[Any, Any]] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Param):
                    declared[name] = value  # a redeclaration keeps its parent's place
                elif value is NOT_A_PARAM:
                    declared.pop(name, None)
        cls.declared_params = MappingProxyType(declared)

        def __init__(self: Metric, **params: object) -> None:
            self._init_params(params)

        __init__.__qualname__ = f"{cls.__qualname__}.__init__"
        __init__.__doc__ = (
            f"Build :class:`{cls.__name__}`; see the class for the parameters."
        )
        __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
            + [
                inspect.Parameter(
                    name, inspect.Parameter.KEYWORD_ONLY, default=param.default
                )
                for name, param in declared.items()
            ],
            return_annotation=None,
        )
        cls.__init__ = __init__  # type: ignore[method-assign]

    def __init__(self, **params: object) -> None:
        self._init_params(params)

    @classmethod
    def rename_params(cls, params: Mapping[str, object]) -> dict[str, object]:
        """``params`` with old parameter names replaced by the new ones (warning for each)."""
        out = dict(params)
        for old, (new, removed_in) in cls.renamed_params.items():
            if old not in out:
                continue
            if new in out:
                msg = (
                    f"metric {cls.id!r}: give `{new}` only; `{old}` is its old name (deprecated, "
                    f"removed in synthrisk {removed_in})."
                )
                raise ParameterError(msg)
            warnings.warn(
                f"metric {cls.id!r}: the parameter `{old}` was renamed `{new}`; the old name still works "
                f"but is deprecated and will be removed in synthrisk {removed_in}. Write `{new}` instead.",
                SynthriskDeprecationWarning,
                stacklevel=4,
            )
            out[new] = out.pop(old)
        return out

    def _init_params(self, params: Mapping[str, object]) -> None:
        cls = type(self)
        params = cls.rename_params(params)
        declared = cls.declared_params
        unknown = sorted(set(params) - set(declared))
        if unknown:
            raise ParameterError(_unknown_message(cls.id, unknown, list(declared)))
        values: dict[str, object] = {}
        self.__dict__["_param_values"] = values
        for name, param in declared.items():
            try:
                values[name] = param.check(params.get(name, param.default))
            except ParameterError as exc:
                exc.parameter = name  # for messages that name the metric and parameter
                raise
        self._check_params()
        self.params = {
            name: to_jsonable(values[name])
            for name, param in declared.items()
            if param.reported
        }

    def _check_params(self) -> None:  # noqa: B027 - optional hook, empty by default
        """Rules across parameters, and derived attributes; override as needed.

        Runs after each parameter is checked and before the JSON :attr:`params` is
        built; :meth:`_replace_param` changes a checked value (a resolved default).
        """

    def _replace_param(self, name: str, value: object) -> None:
        """Set the checked value of parameter ``name`` (from :meth:`_check_params`)."""
        self.__dict__["_param_values"][name] = value

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    @classmethod
    def param_names(cls) -> list[str]:
        """Names of the keyword options this metric accepts, in declaration order."""
        return list(cls.declared_params)

    @classmethod
    def from_params(cls, params: Mapping[str, object] | None) -> Self:
        """Build the metric from a dict of options, rejecting unknown names.

        Errors name the metric (``metric 'id': …``; see :func:`for_metric`): a dict of
        options comes from a YAML file, the command line or a ``metrics`` mapping,
        where several metrics are built at once. The result is an instance of the
        class it is called on (``NNDR.from_params(...)`` is an ``NNDR``).
        """
        params = cls.rename_params(params or {})
        allowed = cls.param_names()
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            hints = "".join(suggest(name, allowed) for name in unknown)
            exc = ParameterError(_unknown_message(cls.id, unknown, allowed) + hints)
            raise for_metric(exc, cls.id)
        try:
            return cls(**params)
        except SynthriskError as exc:
            raise for_metric(exc, cls.id) from None

    def with_params(self, changes: Mapping[str, object]) -> Self:
        """This metric with the parameters in ``changes`` replaced (checked as when built).

        Errors name the metric, as :meth:`from_params`'s do.
        """
        current = dict(self.__dict__["_param_values"])
        changes = type(self).rename_params(changes)
        return type(self).from_params({**current, **changes})

    @classmethod
    def applies_by_default(cls, tables: Tables) -> bool:
        """Does a default run include this metric on ``tables``? True unless overridden.

        A metric that examines only some column kinds (the replay metrics: identifiers
        and free text) returns False when the tables have none: a default run then
        leaves it out silently, as if it did not exist, rather than reporting it skipped.
        A metric the user names always runs.
        """
        return True

    def more_precise(self, tables: Tables) -> Metric | None:
        """This metric with a more precise setting for ``tables``, or None when it has none.

        :func:`synthrisk.evaluate` re-runs a metric whose holdout test reads review with
        it before reporting review (a test that is merely imprecise raises its own
        precision where it can). A metric overrides it where a parameter buys precision
        cheaply (the inference attack: every row as a target); None by default.
        """
        return None

    def compute(
        self,
        real: TableLike,
        synthetic: TableLike,
        holdout: TableLike | None = None,
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
        result = self.run_with(
            tables,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            progress=progress,
        )
        if tables.notes:
            result = dataclasses.replace(
                result, warnings=tuple(tables.notes) + result.warnings
            )
        return result

    def run_with(
        self,
        tables: Tables,
        *,
        seed: int,
        working_memory: float | None = None,
        backend: Backend | None = None,
        progress: bool | Progress | None = None,
        skip_inapplicable: bool = False,
    ) -> MetricResult:
        """Compute on already validated tables as one metric of a run with these settings.

        The metric gets its own random stream from ``seed``. With ``skip_inapplicable``
        (a default run, or the self-test's planted tables) a metric that cannot run on
        these tables (it needs a holdout, a column kind the tables lack, more rows, or a
        missing optional dependency: any :class:`SynthriskError` it raises) is recorded
        as skipped with the reason; without it, the error is raised.
        """
        if skip_inapplicable and self.requires_holdout and tables.holdout is None:
            return self.skipped(
                "it needs a holdout table (real rows the generator never saw); "
                "none was given."
            )
        context = make_context(
            self.id,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            progress=progress,
        )
        if not skip_inapplicable:
            return self.run(tables, context)
        try:
            return self.run(tables, context)
        except SynthriskError as exc:
            logger.info("metric %r skipped: %s", self.id, exc)
            return self.skipped(exc.detail or str(exc))

    def run(self, tables: Tables, context: Context) -> MetricResult:
        """Compute on already validated tables."""
        if self.requires_holdout and tables.holdout is None:
            msg = f"metric {self.id!r} needs a `holdout` table (real rows the generator never saw); none was given."
            raise InputError(msg)
        try:
            self.check_tables(tables)
            start = time.perf_counter()
            outcome = self._compute(tables, context)
            seconds = time.perf_counter() - start
        except SynthriskError as exc:
            raise for_metric(exc, self.id) from None
        score = outcome.score
        if score is not None and not np.isfinite(score):
            score = None
        params = dict(self.params) if outcome.params is None else outcome.params
        return MetricResult(
            metric=self.id,
            score=None if score is None else float(score),
            breakdown=outcome.breakdown,
            ci=outcome.ci,
            params=params,
            warnings=tuple(context.warnings),
            seconds=seconds,
            records=outcome.records,
            attack=self.attack,
            higher_is_safer=self.higher_is_safer,
            value_keys=outcome.value_keys,
            reason=outcome.reason if score is None else None,
            threat_model=self._threat_model(params),
        )

    def skipped(self, reason: str) -> MetricResult:
        """The result recording that this metric did not run, and why."""
        return MetricResult.skipped(
            self.id,
            reason,
            params=self.params,
            attack=self.attack,
            higher_is_safer=self.higher_is_safer,
            threat_model=self._threat_model(self.params),
        )

    def _threat_model(self, params: Mapping[str, Any]) -> ThreatModel | None:
        """The class's threat model with the columns named in ``params``."""
        declared = type(self).threat_model
        return None if declared is None else declared.for_params(params)

    def supports_partitioned(self) -> bool:
        """True when this metric, with its parameters, runs on every row of partitioned tables.

        :attr:`runs_partitioned` by default; a metric overrides this when some of its
        options (a mode that needs pandas frames, say) need every row in memory.
        """
        return self.runs_partitioned

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
