# SPDX-License-Identifier: BSD-3-Clause
"""Frozen result objects and the JSON report contract.

JSON report (schema_version 1; keys fixed, more may be added)::

    {"schema_version": 1, "synthrisk_version": str, "seed": int,
     "inputs": {"real": {"rows": int, "columns": [...]}, "synthetic": {...}, "holdout": {...} | null},
     "schema": {...}, "warnings": [str],
     "results": [{"metric": id, "status": "ok" | "undefined" | "skipped", "reason": str | null,
                  "score": float | null, "breakdown": {...},
                  "ci": [low, high] | null, "params": {...}, "warnings": [str], "seconds": float,
                  "attack": str, "higher_is_safer": bool, "value_keys": [str] (when any),
                  "threat_model": {"attacker_holds": str, "target": str, "meaning": str,
                                   "columns": str | null} (absent in reports before it)}],
     "self_test": {"headline": str, "metrics": [id], "synthetic_rows": int,
                   "training_people": int, "candidates": int, "person_column": str | null,
                   "near_move": float, "notes": [str],
                   "scenarios": [{"kind": "exact" | "near", "share": float, "planted": int,
                                  "overall": "pass" | "review" | "fail" | "skipped",
                                  "caught": bool, "failed": [id], "review": [id],
                                  "passed": [id], "reason": str}]}
                  (only with the known-leak self-test)}

``status`` says whether a metric ran: ``ok`` (it has a score), ``undefined`` (it ran
but its score is undefined on these tables, ``reason`` says why) or ``skipped`` (it did
not run: it does not apply to these tables or needs something that is missing, and
``reason`` says what; only metrics chosen by default are skipped, a metric named
explicitly that cannot run is an error).

Per-record values (for example every synthetic row's DCR) live on the result objects
and enter the JSON only when asked (``include_records=True``), as row positions with
values; real record *values* are never written.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, get_args, overload

import numpy as np

from synthrisk._format import (
    format_excess,
    format_level,
    format_number,
    shorten,
)
from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk.context import ReleaseContext
from synthrisk.exceptions import MissingDependencyError

__all__ = [
    "LEVELS",
    "QUALIFYING_CHECKS",
    "SCHEMA_VERSION",
    "STATUSES",
    "EvaluationReport",
    "Finding",
    "MetricResult",
    "MetricVerdict",
    "RecordScores",
    "SelfTest",
    "SelfTestScenario",
    "Status",
    "ThreatModel",
    "Verdict",
    "check_fail_on",
    "register_html_renderers",
    "register_record_writer",
    "to_jsonable",
]

SCHEMA_VERSION = 1

Status = Literal["ok", "undefined", "skipped"]
#: what happened to a metric: it has a score, its score is undefined, it did not run
STATUSES: tuple[Status, ...] = get_args(Status)

#: HTML renderers of Jupyter's display, set by :mod:`synthrisk.report` when it is
#: imported (rendering sits above the results it renders, never below)
_HTML_RENDERERS: dict[str, Callable[[Any], str]] = {}


def register_html_renderers(
    *, result: Callable[[Any], str], report: Callable[[Any], str]
) -> None:
    """Set the renderers behind ``MetricResult._repr_html_`` and ``EvaluationReport._repr_html_``."""
    _HTML_RENDERERS.update(result=result, report=report)


#: the anonymisation record's writer, set by :mod:`synthrisk.report` when it is imported
_RECORD_WRITER: dict[str, Callable[..., Any]] = {}


def register_record_writer(writer: Callable[..., Any]) -> None:
    """Set the writer behind :meth:`EvaluationReport.write_record`."""
    _RECORD_WRITER["record"] = writer


def _render_html(kind: str, obj: Any) -> str | None:
    renderer = _HTML_RENDERERS.get(kind)
    if renderer is None:
        return None
    try:
        return renderer(obj)
    except (
        MissingDependencyError
    ):  # the report extra is not installed: Jupyter shows repr
        return None


@overload
def to_jsonable(value: Mapping[Any, Any]) -> dict[str, JSONValue]: ...


@overload
def to_jsonable(value: list[Any] | tuple[Any, ...] | np.ndarray) -> list[JSONValue]: ...


@overload
def to_jsonable(value: object) -> JSONValue: ...


def to_jsonable(value: object) -> JSONValue:
    """Convert numpy scalars/arrays, tuples and NaN into JSON-safe Python values.

    A mapping becomes a ``dict`` (keys as strings), a list, tuple or array a ``list``.
    """
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return None if math.isnan(value) or math.isinf(value) else value
    if value is None or isinstance(value, str):
        return value
    return str(value)


@dataclasses.dataclass(frozen=True)
class RecordScores:
    """One value per record of one table (for example each synthetic row's DCR).

    Attributes
    ----------
    table : str
        ``real``, ``synthetic`` or ``holdout``: whose rows ``index`` refers to.
    index : ndarray of shape (n,)
        0-based row positions in that input table.
    values : ndarray of shape (n,)
        The value for each of those rows.
    description : str
        What the values mean, in one sentence.
    """

    table: str
    index: IntArray
    values: FloatArray
    description: str = ""

    def __repr__(self) -> str:
        return f"RecordScores(table={self.table!r}, n={len(self.index)}, description={self.description!r})"

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form: positions and values, never record contents."""
        return {
            "table": self.table,
            "description": self.description,
            "index": to_jsonable(self.index),
            "values": to_jsonable(self.values),
        }

    def to_frame(self) -> Any:
        """The scores as a pandas DataFrame indexed by row position."""
        import pandas as pd

        return pd.DataFrame(
            {"value": self.values}, index=pd.Index(self.index, name=f"{self.table}_row")
        )


#: column lists longer than this are cut in a threat model's text ("a, b, c and 4 more")
_THREAT_COLUMNS_SHOWN = 6


def _names(value: Any) -> str | None:
    """Column names of a parameter value as words (None when it names none)."""
    if isinstance(value, str):
        return value or None
    if not isinstance(value, (list, tuple)) or not value:
        return None
    if all(isinstance(v, (list, tuple)) for v in value):
        groups = [g for g in (_names(v) for v in value) if g]
        if len(groups) == 2:
            return f"{groups[0]} in one record and {groups[1]} in the other"
        return " | ".join(groups) or None
    items = [str(v) for v in value]
    keep = _THREAT_COLUMNS_SHOWN
    if len(items) > keep + 1:
        return f"{', '.join(items[:keep])} and {len(items) - keep} more"
    return ", ".join(items)


@dataclasses.dataclass(frozen=True)
class ThreatModel:
    """What the attacker behind a metric holds, whom it attacks, and what the number means.

    Every registered metric declares one as its ``threat_model`` class attribute; each
    result carries it, with the columns of that run, into the JSON and the HTML report.

    Attributes
    ----------
    attacker_holds : str
        What the attacker has, in a few plain words: "the synthetic table only", "the
        synthetic table and some columns of a target person's record", ...
    target : str
        Whose privacy is attacked: "training people" (the rows of the real table the
        generator saw), ...
    meaning : str
        What the score means, in one line: its definition, scale and no-leak value.
    known, guessed, compared : tuple of str
        Names of the metric's parameters that list the columns the attacker knows of a
        target (``aux_cols``, ``key_fields``), the columns it tries to learn (``secret``,
        ``sensitive_fields``) and the columns a record is compared on (``columns``).
        They turn into :attr:`columns` for a result; not written to JSON.
    unset_means_all : bool
        True when an unset (None) ``known`` parameter means every other column and an
        unset ``guessed`` parameter every column in turn (inference attacks).
    columns : str or None
        The columns of one run in words, from the result's parameters
        ("knows age, sex; guesses income"); None where the metric names no columns or
        for the class-level declaration.

    Examples
    --------
    >>> tm = ThreatModel(
    ...     attacker_holds="the synthetic table and some columns of a target person's record",
    ...     target="training people",
    ...     meaning="share of secrets guessed right",
    ...     known=("aux_cols",),
    ...     guessed=("secret",),
    ... )
    >>> tm.for_params({"aux_cols": ["age", "sex"], "secret": "income"}).columns
    'knows age, sex; guesses income'
    """

    attacker_holds: str
    target: str
    meaning: str
    known: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    guessed: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    compared: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    unset_means_all: bool = dataclasses.field(default=False, compare=False)
    columns: str | None = None

    def __post_init__(self) -> None:
        for name in ("attacker_holds", "target", "meaning"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or "\n" in value:
                msg = (
                    f"`{name}` of a threat model must be a non-empty text of one line; "
                    f"got {value!r}."
                )
                raise ValueError(msg)
        for name in ("known", "guessed", "compared"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                msg = (
                    f"`{name}` of a threat model must be a tuple of parameter names; "
                    f"got {value!r}."
                )
                raise ValueError(msg)

    def for_params(self, params: Mapping[str, Any]) -> ThreatModel:
        """This threat model with :attr:`columns` read from a result's parameters."""
        known = [t for t in (_names(params.get(p)) for p in self.known) if t]
        guessed = [t for t in (_names(params.get(p)) for p in self.guessed) if t]
        parts = []
        if known:
            parts.append("knows " + "; ".join(known))
        elif self.unset_means_all and self.guessed and guessed:
            parts.append("knows every other column")
        if guessed:
            parts.append("guesses " + "; ".join(guessed))
        elif self.unset_means_all and self.guessed:
            parts.append(
                "guesses each column in turn"
                + ("" if known else " from all the others")
            )
        compared = [t for t in (_names(params.get(p)) for p in self.compared) if t]
        if compared:
            parts.append("columns " + "; ".join(compared))
        return dataclasses.replace(self, columns="; ".join(parts) or None)

    def describe(self) -> str:
        """The threat model in one line (the HTML report's wording)."""
        holds = self.attacker_holds + (f" ({self.columns})" if self.columns else "")
        return f"Attacker holds: {holds}. Target: {self.target}. The number: {self.meaning}."

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form (a result's ``threat_model``)."""
        return {
            "attacker_holds": self.attacker_holds,
            "target": self.target,
            "meaning": self.meaning,
            "columns": self.columns,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ThreatModel:
        """Rebuild from :meth:`to_dict` output."""
        columns = data.get("columns")
        return cls(
            attacker_holds=str(data.get("attacker_holds", "")),
            target=str(data.get("target", "")),
            meaning=str(data.get("meaning", "")),
            columns=None if columns is None else str(columns),
        )


@dataclasses.dataclass(frozen=True)
class MetricResult:
    """The outcome of one metric.

    Attributes
    ----------
    metric : str
        Metric id, e.g. ``dcr_baseline_protection``.
    score : float or None
        The headline number (None where it is undefined, e.g. NaN in the reference).
    breakdown : dict
        Reference-compatible breakdown (same keys as the reference library) plus extras.
    ci : tuple of (float, float) or None
        Confidence interval of the score, where the metric provides one.
    params : dict
        Parameters the metric ran with (after defaults were applied).
    warnings : tuple of str
        Statistical caveats found while computing.
    seconds : float
        Wall time of the computation.
    records : dict of str to RecordScores
        Per-record values (not in the JSON unless asked for).
    attack : str
        One plain sentence: what the attacker knows and tries (for reports).
    higher_is_safer : bool
        True when a higher score means better protection (DCR protection scores),
        False when it means more risk (attack success, membership AUC).
    value_keys : tuple of str
        Breakdown keys whose contents are built from real records' values (for
        example singling-out queries that match exactly one real person). They are
        withheld from the JSON unless ``include_values=True``.
    status : {"ok", "undefined", "skipped"}
        ``ok``: the metric ran and has a score; ``undefined``: it ran but the score is
        undefined on these tables; ``skipped``: it did not run. Derived when not
        given: ``undefined`` when ``score`` is None or not finite (it is then None).
    reason : str or None
        Why the score is undefined or the metric was skipped (None when ``ok``).
    threat_model : ThreatModel or None
        What the attacker holds, whom it attacks and what the score means, with the
        columns of this run (None in reports written before synthrisk recorded it).
    """

    metric: str
    score: float | None
    breakdown: Mapping[str, JSONValue]
    ci: tuple[float, float] | None = None
    params: Mapping[str, JSONValue] = dataclasses.field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    records: Mapping[str, RecordScores] = dataclasses.field(
        default_factory=dict, compare=False
    )
    attack: str = ""
    higher_is_safer: bool = True
    value_keys: tuple[str, ...] = ()
    status: Status = "ok"
    reason: str | None = None
    threat_model: ThreatModel | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            msg = f"`status` must be one of {list(STATUSES)}; got {self.status!r}."
            raise ValueError(msg)
        if self.score is not None and not math.isfinite(self.score):
            object.__setattr__(self, "score", None)
        if self.status == "ok" and self.score is None:
            object.__setattr__(self, "status", "undefined")
        if self.status == "undefined" and not self.reason:
            reason = (
                self.warnings[-1]
                if self.warnings
                else "the score is undefined on these tables."
            )
            object.__setattr__(self, "reason", reason)
        if self.status == "skipped" and not self.reason:
            object.__setattr__(self, "reason", "the metric did not run.")
        if self.status == "ok":
            object.__setattr__(self, "reason", None)

    @classmethod
    def skipped(
        cls,
        metric: str,
        reason: str,
        *,
        params: Mapping[str, JSONValue] | None = None,
        attack: str = "",
        higher_is_safer: bool = True,
        threat_model: ThreatModel | None = None,
    ) -> MetricResult:
        """The result of a metric that did not run, with the reason."""
        return cls(
            metric=metric,
            score=None,
            breakdown={},
            params=dict(params or {}),
            attack=attack,
            higher_is_safer=higher_is_safer,
            status="skipped",
            reason=reason,
            threat_model=threat_model,
        )

    def __repr__(self) -> str:
        if self.status == "skipped":
            return f"MetricResult(metric={self.metric!r}, status='skipped', reason={self.reason!r})"
        score = "None" if self.score is None else f"{self.score:.4f}"
        ci = "" if self.ci is None else f", ci=({self.ci[0]:.4f}, {self.ci[1]:.4f})"
        warn = f", warnings={len(self.warnings)}" if self.warnings else ""
        return f"MetricResult(metric={self.metric!r}, score={score}{ci}{warn})"

    def _repr_html_(self) -> str | None:
        """Jupyter display: a small card with the verdict (None without the report extra)."""
        return _render_html("result", self)

    def to_dict(
        self, *, include_records: bool = False, include_values: bool = False
    ) -> dict[str, JSONValue]:
        """JSON-safe form following the report contract.

        ``include_records`` adds per-record scores (row positions and numbers);
        ``include_values`` keeps the breakdown entries built from real values
        (``value_keys``), which are otherwise replaced by a note.
        """
        breakdown = to_jsonable(self.breakdown)
        if not include_values:
            for key in self.value_keys:
                entries = breakdown.get(key)
                already = isinstance(entries, str) and entries.startswith("withheld: ")
                if key in breakdown and not already:  # (the note, read back from JSON)
                    count = len(entries) if isinstance(entries, list) else 1
                    breakdown[key] = (
                        f"withheld: {count} entries built from real records' values; "
                        "pass include_values (--include-values) to write them"
                    )
        out: dict[str, JSONValue] = {
            "metric": self.metric,
            "status": self.status,
            "reason": self.reason,
            "score": to_jsonable(self.score),
            "breakdown": breakdown,
            "ci": None if self.ci is None else to_jsonable(list(self.ci)),
            "params": to_jsonable(self.params),
            "warnings": list(self.warnings),
            "seconds": round(float(self.seconds), 6),
            "attack": self.attack,
            "higher_is_safer": self.higher_is_safer,
        }
        if self.value_keys:
            out["value_keys"] = list(self.value_keys)
        if self.threat_model is not None:
            out["threat_model"] = self.threat_model.to_dict()
        if include_records and self.records:
            out["records"] = {name: rec.to_dict() for name, rec in self.records.items()}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricResult:
        """Rebuild a result from its JSON form (records are restored when present)."""
        records = {
            name: RecordScores(
                table=rec["table"],
                index=np.asarray(rec["index"], dtype=np.int64),
                values=np.asarray(
                    [np.nan if v is None else v for v in rec["values"]],
                    dtype=np.float64,
                ),
                description=rec.get("description", ""),
            )
            for name, rec in (data.get("records") or {}).items()
        }
        ci = data.get("ci")
        return cls(
            metric=data["metric"],
            score=data.get("score"),
            breakdown=data.get("breakdown") or {},
            ci=None if ci is None else (float(ci[0]), float(ci[1])),
            params=data.get("params") or {},
            warnings=tuple(data.get("warnings") or ()),
            seconds=float(data.get("seconds") or 0.0),
            records=records,
            attack=str(data.get("attack", "")),
            higher_is_safer=bool(data.get("higher_is_safer", True)),
            value_keys=tuple(data.get("value_keys") or ()),
            status=data.get("status") or "ok",
            reason=data.get("reason"),
            threat_model=_threat_model(data.get("threat_model")),
        )


def _threat_model(data: Any) -> ThreatModel | None:
    """A result's threat model from JSON; None when absent (older reports) or incomplete."""
    if not isinstance(data, Mapping):
        return None
    try:
        return ThreatModel.from_dict(data)
    except ValueError:
        return None


Level = Literal["pass", "review", "fail"]
#: verdict levels from best to worst (``info`` marks a metric that does not gate)
LEVELS: tuple[Level, ...] = get_args(Level)
_RANK = {level: rank for rank, level in enumerate(LEVELS)}


def check_fail_on(value: Any) -> str:
    """Validate a gate level: ``review`` or ``fail``."""
    if not isinstance(value, str) or value not in ("review", "fail"):
        from synthrisk.exceptions import ParameterError

        msg = (
            f"`fail_on` must be 'review' or 'fail'; got {value!r}. 'review' fails the gate unless every "
            "metric passes; 'fail' fails it only when some metric fails."
        )
        raise ParameterError(msg)
    return value


def _pair(value: Any) -> tuple[float, float] | None:
    if value is None or value[0] is None or value[1] is None:
        return None
    return float(value[0]), float(value[1])


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclasses.dataclass(frozen=True)
class MetricVerdict:
    """The verdict on one metric result.

    Attributes
    ----------
    metric : str
        Metric id.
    level : {"pass", "review", "fail", "info"}
        The verdict; ``info`` for a metric that does not gate (informational, skipped).
    value : float or None
        The number that was judged: the excess risk over the holdout (``effect``) for
        a holdout-controlled test, the score (or an interval bound) for a user threshold.
    threshold : Threshold or None
        The user threshold applied (None when the holdout test or nothing applied).
    reason : str
        The verdict in plain words.
    gating : bool
        Whether this metric counts towards the overall verdict.
    rule : str
        The rule in words (e.g. ``fail if significant and lower bound > 0.05``).
    source : str
        Where the tolerance or threshold comes from.
    statistic : str
        What the holdout test compares, in words.
    effect : float or None
        Excess of the attack on training rows over the holdout rows (0 = none).
    ci : tuple of (float, float) or None
        Confidence interval of ``effect``. For a gating holdout test it is at the level
        that matches the Holm-adjusted test (``ci_level``), so that it excludes 0
        exactly when ``p_adjusted`` is significant; its bounds are the ones the verdict
        compares with the tolerance.
    ci_level : float or None
        Two-sided confidence level of ``ci`` (each end a one-sided bound at
        ``(1 + ci_level) / 2``).
    p_value, p_adjusted : float or None
        One-sided p-value of "no excess", and after Holm's correction across the
        run's gating tests.
    tolerance : float or None
        Largest excess that is not material (the documented default or the user's).
    skipped : bool
        The metric did not run (a default run skips what does not apply).
    detectable : float or None
        The smallest excess the test finds with 80 % power at its level, at this size
        (in the units of ``effect``; for a test with a tolerance, the smallest excess
        that fails): what a pass can and cannot rule out.
    underpowered : bool
        At this size the test cannot tell an excess at its tolerance from none (its
        ``detectable`` excess is beyond twice the tolerance), and it passed because its
        excess is within the tolerance and not significant: it leaves the decision to
        the tests that can decide.
    next_step : str
        For a ``review``: one concrete step that would decide it (a parameter and its
        value, the holdout size that would decide it, or the rows to inspect); empty
        otherwise. The reason ends with the same step.
    unit : str
        The unit of ``effect`` and ``ci``: ``"people"`` for the per-person tests
        (counts of people, written as whole numbers), empty for shares and rates.
    """

    metric: str
    level: str
    value: float | None
    threshold: Any
    reason: str
    gating: bool = True
    rule: str = ""
    source: str = ""
    statistic: str = ""
    effect: float | None = None
    ci: tuple[float, float] | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    tolerance: float | None = None
    skipped: bool = False
    ci_level: float | None = None
    detectable: float | None = None
    underpowered: bool = False
    next_step: str = ""
    unit: str = ""

    def __repr__(self) -> str:
        parts = [f"metric={self.metric!r}", f"level={self.level!r}"]
        if self.skipped:
            parts.append("skipped=True")
        if not self.gating:
            parts.append("gating=False")
        if self.effect is not None:
            parts.append(f"effect={self.effect:.4g}")
        if self.ci is not None:
            parts.append(f"ci=({self.ci[0]:.4g}, {self.ci[1]:.4g})")
        if self.p_adjusted is not None:
            parts.append(f"p_adjusted={self.p_adjusted:.2g}")
        if self.tolerance is not None:
            parts.append(f"tolerance={self.tolerance:.4g}")
        if self.threshold is not None and self.value is not None:
            parts.append(f"value={self.value:.4g}")
        return f"MetricVerdict({', '.join(parts)})"

    def __str__(self) -> str:
        return "\n".join(_verdict_lines(self, None, width=WIDTH, header=False))

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form (the ``verdict.metrics`` entries of the report)."""
        return {
            "metric": self.metric,
            "level": self.level,
            "gating": self.gating,
            "reason": self.reason,
            "rule": self.rule,
            "source": self.source,
            "statistic": self.statistic,
            "value": to_jsonable(self.value),
            "effect": to_jsonable(self.effect),
            "ci": None if self.ci is None else to_jsonable(list(self.ci)),
            "ci_level": to_jsonable(self.ci_level),
            "p_value": to_jsonable(self.p_value),
            "p_adjusted": to_jsonable(self.p_adjusted),
            "tolerance": to_jsonable(self.tolerance),
            "skipped": self.skipped,
            "detectable": to_jsonable(self.detectable),
            "underpowered": self.underpowered,
            "next_step": self.next_step,
            "unit": self.unit,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricVerdict:
        """Rebuild from :meth:`to_dict` output."""
        return cls(
            metric=str(data["metric"]),
            level=str(data["level"]),
            value=_opt_float(data.get("value")),
            threshold=None,
            reason=str(data.get("reason", "")),
            gating=bool(data.get("gating", True)),
            rule=str(data.get("rule", "")),
            source=str(data.get("source", "")),
            statistic=str(data.get("statistic", "")),
            effect=_opt_float(data.get("effect")),
            ci=_pair(data.get("ci")),
            p_value=_opt_float(data.get("p_value")),
            p_adjusted=_opt_float(data.get("p_adjusted")),
            tolerance=_opt_float(data.get("tolerance")),
            skipped=bool(data.get("skipped", False)),
            ci_level=_opt_float(data.get("ci_level")),
            detectable=_opt_float(data.get("detectable")),
            underpowered=bool(data.get("underpowered", False)),
            next_step=str(data.get("next_step") or ""),
            unit=str(data.get("unit") or ""),
        )


#: how many copied people a finding lists (every one is in the metric's records)
FINDING_LIST = 50

#: the self-test's scenarios in words
SCENARIO_PHRASES: Mapping[str, str] = {
    "exact": "exact copies",
    "near": "near copies",
    "identifiers": "copied identifiers and text",
}

#: the heading of each kind of finding
FINDING_TITLES: Mapping[str, str] = {
    "copied_people": "Copied people",
    "replayed_identifiers": "Identifiers replayed",
    "replayed_text": "Free text replayed",
    "replayed_rows": "Rows replayed as text",
    "rare_values": "Rare values replayed",
    "singled_out_people": "Known combinations replayed",
}


@dataclasses.dataclass(frozen=True)
class Finding:
    """A per-person finding of the verdict: real people a synthetic row gives away.

    Attributes
    ----------
    kind : str
        ``copied_people``: training people whose record a synthetic row reproduces,
        exactly or nearly; ``replayed_identifiers``, ``replayed_text``,
        ``replayed_rows``, ``rare_values``, ``singled_out_people``: training people
        whose identifier, free text, row as text, rare value or combination of known
        values a synthetic row carries (:data:`FINDING_TITLES`).
    metric : str
        The metric whose result carries the evidence (``identification``,
        ``identifier_replay``, …).
    level : {"pass", "review", "fail"}
        What the finding does to the overall verdict under ``policy``.
    policy : {"statistical", "strict"}
        The release policy the finding was judged by.
    summary : str
        The finding in plain words, with the chance model's numbers.
    next_step : str
        What to do about it.
    people : tuple of dict
        The training people found, each with its rows in the training table
        (``real_rows``) and the synthetic rows that copy or carry it
        (``synthetic_rows``); copied people also say how close (``ratio``, 0 for an
        exact copy) and how isolated, replayed people ``how`` (the column and the kind
        of match); never record values. At most :data:`FINDING_LIST`.
    chance : dict or None
        The chance model: observed, expected and upper counts, p-value, the model
        and its assumption.
    total : int or None
        Training people found in all (``people`` lists at most :data:`FINDING_LIST`).
    """

    kind: str
    metric: str
    level: str
    policy: str
    summary: str
    next_step: str = ""
    people: tuple[Mapping[str, Any], ...] = ()
    chance: Mapping[str, Any] | None = None
    total: int | None = None

    @property
    def title(self) -> str:
        """The finding's heading (``Copied people``, ``Identifiers replayed``, …)."""
        return FINDING_TITLES.get(self.kind, self.kind)

    @property
    def count(self) -> int:
        """Training people found (at least those listed)."""
        if self.total is not None:
            return max(int(self.total), len(self.people))
        return max(len(self.people), int((self.chance or {}).get("identified") or 0))

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form (the ``verdict.findings`` entries)."""
        return {
            "kind": self.kind,
            "metric": self.metric,
            "level": self.level,
            "policy": self.policy,
            "summary": self.summary,
            "next_step": self.next_step,
            "people": to_jsonable([dict(p) for p in self.people]),
            "chance": None if self.chance is None else to_jsonable(dict(self.chance)),
            "total": self.total,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        """Rebuild from :meth:`to_dict` output."""
        return cls(
            kind=str(data["kind"]),
            metric=str(data.get("metric", "")),
            level=str(data["level"]),
            policy=str(data.get("policy", "statistical")),
            summary=str(data.get("summary", "")),
            next_step=str(data.get("next_step", "")),
            people=tuple(dict(p) for p in data.get("people") or ()),
            chance=None if data.get("chance") is None else dict(data["chance"]),
            total=None if data.get("total") is None else int(data["total"]),
        )


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Per-metric verdicts (in result order) and the overall verdict.

    Attributes
    ----------
    overall : {"pass", "review", "fail"}
        The worst level of the gating metrics; ``review`` without a holdout or
        without any gating metric.
    metrics : tuple of MetricVerdict
        One per result, in result order.
    conservative : bool
        Whether user thresholds judged the unsafe interval bound.
    reason : str
        The overall verdict in plain words.
    alpha : float
        Family-wise error rate of the gating tests.
    correction : str
        How the p-values were adjusted (``holm``).
    caveats : tuple of str
        Warnings that qualify this verdict, each led by the metric it comes from (see
        :meth:`EvaluationReport.verdict_caveats`); filled in when the verdict is
        attached to a report.
    findings : tuple of Finding
        Per-person findings (copied people), judged under ``policy``; each counts
        towards ``overall`` with its level.
    policy : {"statistical", "strict"}
        The release policy: ``statistical`` (the holdout-controlled gates, and copied
        people beyond what chance explains read review) or ``strict`` (any synthetic
        row that copies a training person's record fails).
    too_few_rows : str
        Set when a table has fewer rows than any test needs to detect a leak
        (:func:`synthrisk.verdict.fewest_rows`): the one reason, which is then the
        verdict's reason and its only caveat; empty otherwise (and absent from the
        JSON).

    Notes
    -----
    ``print(verdict)`` gives a summary of a few lines: the overall verdict and its
    reason, one line per metric (level, excess over the holdout with its interval, a
    short reason) and the caveats. ``repr(verdict)`` is one line.
    """

    overall: str
    metrics: tuple[MetricVerdict, ...]
    conservative: bool = False
    reason: str = ""
    alpha: float = 0.05
    correction: str = "holm"
    caveats: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    policy: str = "statistical"
    too_few_rows: str = ""

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.counts().items())
        caveats = f", caveats={len(self.caveats)}" if self.caveats else ""
        return f"Verdict(overall={self.overall!r}, {counts}{caveats})"

    def __str__(self) -> str:
        return "\n".join(_summary_lines(self, None, width=WIDTH))

    def fails(self, fail_on: str) -> bool:
        """True when the overall verdict is at or below ``fail_on`` (``review`` or ``fail``)."""
        fail_on = check_fail_on(fail_on)
        return _RANK[self.overall] >= _RANK[fail_on]  # type: ignore[index]

    def counts(self) -> dict[str, int]:
        """How many metrics got each level (``info``: not gating)."""
        return {
            level: sum(v.level == level for v in self.metrics)
            for level in (*LEVELS, "info")
        }

    def __getitem__(self, metric: str) -> MetricVerdict:
        for verdict in self.metrics:
            if verdict.metric == metric:
                return verdict
        msg = f"no verdict for metric {metric!r}; metrics: {[v.metric for v in self.metrics]}."
        raise KeyError(msg)

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form (the report's ``verdict`` block)."""
        out: dict[str, JSONValue] = {
            "overall": self.overall,
            "reason": self.reason,
            "alpha": self.alpha,
            "correction": self.correction,
            "conservative": self.conservative,
            "counts": dict(self.counts()),
            "caveats": list(self.caveats),
            "policy": self.policy,
            "findings": [f.to_dict() for f in self.findings],
            "metrics": [v.to_dict() for v in self.metrics],
        }
        if self.too_few_rows:
            out["too_few_rows"] = self.too_few_rows
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """Rebuild from :meth:`to_dict` output."""
        return cls(
            overall=str(data["overall"]),
            metrics=tuple(
                MetricVerdict.from_dict(m) for m in data.get("metrics") or ()
            ),
            conservative=bool(data.get("conservative", False)),
            reason=str(data.get("reason", "")),
            alpha=float(data.get("alpha", 0.05)),
            correction=str(data.get("correction", "holm")),
            caveats=tuple(str(c) for c in data.get("caveats") or ()),
            findings=tuple(Finding.from_dict(f) for f in data.get("findings") or ()),
            policy=str(data.get("policy", "statistical")),
            too_few_rows=str(data.get("too_few_rows") or ""),
        )


def _share_text(share: float) -> str:
    """``0.001`` -> ``0.1 %``."""
    return f"{share * 100:g} %"


@dataclasses.dataclass(frozen=True)
class SelfTestScenario:
    """One planted leak of the known-leak self-test and the verdict it got.

    Attributes
    ----------
    kind : {"exact", "near", "identifiers"}
        ``exact``: copies of training records; ``near``: the same copies with every
        numerical (and date) cell moved by a small share of the column's standard
        deviation; ``identifiers``: only the identifier and free-text cells (kinds id,
        pii, text) of training people copied into synthetic rows.
    share : float
        The share of synthetic rows replaced by the copies.
    planted : int
        Rows replaced, one per training person copied (the most isolated first).
    overall : {"pass", "review", "fail", "skipped"}
        The overall verdict of the gating tests re-run on the planted table
        (``skipped``: the scenario did not run, ``reason`` says why).
    failed, review, passed : tuple of str
        The gating tests (metric ids) at each level.
    reason : str
        The verdict's reason, or why the scenario was skipped.
    """

    kind: str
    share: float
    planted: int
    overall: str
    failed: tuple[str, ...] = ()
    review: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()
    reason: str = ""

    @property
    def caught(self) -> bool:
        """True when the verdict fails: the planted leak would have been stopped."""
        return self.overall == "fail"

    @property
    def what(self) -> str:
        """``exact copies`` / ``near copies`` / ``copied identifiers and text``."""
        return SCENARIO_PHRASES.get(self.kind, f"{self.kind} copies")

    @property
    def label(self) -> str:
        """``exact copies, 0.1 % (39 rows)``."""
        return f"{self.what}, {_share_text(self.share)} ({self.planted} rows)"

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form (an entry of ``self_test.scenarios``)."""
        return {
            "kind": self.kind,
            "share": self.share,
            "planted": self.planted,
            "overall": self.overall,
            "caught": self.caught,
            "failed": list(self.failed),
            "review": list(self.review),
            "passed": list(self.passed),
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SelfTestScenario:
        """Rebuild from :meth:`to_dict` output."""
        return cls(
            kind=str(data["kind"]),
            share=float(data["share"]),
            planted=int(data["planted"]),
            overall=str(data["overall"]),
            failed=tuple(str(m) for m in data.get("failed") or ()),
            review=tuple(str(m) for m in data.get("review") or ()),
            passed=tuple(str(m) for m in data.get("passed") or ()),
            reason=str(data.get("reason") or ""),
        )


@dataclasses.dataclass(frozen=True)
class SelfTest:
    """The known-leak self-test: would the verdict have caught planted copies of people?

    Copies of the most isolated training people replace random synthetic rows (exact
    and near copies, several shares of the synthetic rows); the gating tests of the run
    are re-run on each planted table with the same parameters and seed, and judged as
    the run was. See ``docs/verdict.md``, "Known-leak self-test".

    Attributes
    ----------
    scenarios : tuple of SelfTestScenario
        One per planted leak, exact copies first, smaller shares first.
    metrics : tuple of str
        The gating tests re-run (the run's metrics whose verdict gates).
    synthetic_rows : int
        Rows of the synthetic table.
    training_people : int
        Training people (rows, or people of the person column).
    candidates : int
        Training people whose record no other real person shares, the most isolated
        of whom are copied.
    person_column : str or None
        The column naming people with several rows (their most isolated row is copied).
    near_move : float
        How far a near copy's numerical cells move, as a share of the column's standard
        deviation in the real table.
    notes : tuple of str
        What qualifies the scenarios (fewer candidates than rows to plant, no column
        for near copies to move).
    """

    scenarios: tuple[SelfTestScenario, ...]
    metrics: tuple[str, ...]
    synthetic_rows: int
    training_people: int
    candidates: int
    person_column: str | None = None
    near_move: float = 0.01
    notes: tuple[str, ...] = ()

    @property
    def headline(self) -> str:
        """What the verdict would have caught, in one or two sentences."""
        ran = [s for s in self.scenarios if s.overall != "skipped"]
        if not ran:
            return "No planted leak was evaluated" + (
                f": {self.notes[0]}" if self.notes else "."
            )
        caught = []
        for kind in dict.fromkeys(s.kind for s in ran):
            failing = [s for s in ran if s.kind == kind and s.caught]
            if failing:
                caught.append(min(failing, key=lambda s: s.share))
        missed = [s for s in ran if not s.caught]
        clauses = []
        for i, s in enumerate(caught):
            if i == 0:
                people = "training person" if s.planted == 1 else "training people"
                clauses.append(
                    f"{s.what} of {s.planted} {people} "
                    f"({_share_text(s.share)} of the synthetic rows)"
                )
            else:
                clauses.append(f"{s.what} of {s.planted} ({_share_text(s.share)})")
        missed_text = ", ".join(
            f"{s.what} of {s.planted} ({_share_text(s.share)}: {s.overall})"
            for s in missed
        )
        if not caught:
            return (
                "The verdict would have caught none of the planted leaks: "
                f"{missed_text}."
            )
        text = "The verdict would have caught " + " and ".join(clauses)
        if not missed:
            return text + "; every planted leak fails."
        return f"{text}. Not caught: {missed_text}."

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form (the report's ``self_test`` block): counts and verdicts only."""
        return {
            "headline": self.headline,
            "metrics": list(self.metrics),
            "synthetic_rows": self.synthetic_rows,
            "training_people": self.training_people,
            "candidates": self.candidates,
            "person_column": self.person_column,
            "near_move": self.near_move,
            "notes": list(self.notes),
            "scenarios": [s.to_dict() for s in self.scenarios],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SelfTest:
        """Rebuild from :meth:`to_dict` output."""
        person = data.get("person_column")
        return cls(
            scenarios=tuple(
                SelfTestScenario.from_dict(s) for s in data.get("scenarios") or ()
            ),
            metrics=tuple(str(m) for m in data.get("metrics") or ()),
            synthetic_rows=int(data.get("synthetic_rows") or 0),
            training_people=int(data.get("training_people") or 0),
            candidates=int(data.get("candidates") or 0),
            person_column=None if person is None else str(person),
            near_move=float(data.get("near_move", 0.01)),
            notes=tuple(str(n) for n in data.get("notes") or ()),
        )

    def summary_lines(self, *, width: int = 120) -> list[str]:
        """The self-test in ``print(report)``: the headline and one line of levels."""
        lines = textwrap.wrap(
            "self-test (copies of the most isolated training people planted): "
            + self.headline,
            width=width,
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
        parts = []
        for kind in dict.fromkeys(s.kind for s in self.scenarios):
            levels = ", ".join(
                f"{_share_text(s.share)} {s.overall}"
                for s in self.scenarios
                if s.kind == kind
            )
            parts.append(f"{kind}: {levels}")
        if parts:
            lines.append(shorten("  " + " · ".join(parts), width))
        return lines


#: informational metrics whose warnings qualify the verdict: fidelity checks that say how
#: to read the gating metrics (synthetic columns that differ from the real ones make the
#: membership attacks partly measure fidelity)
QUALIFYING_CHECKS = frozenset({"distribution_validation"})
#: line width of ``print(report)`` and ``print(report.verdict)``
WIDTH = 120
_LIST_REPR = re.compile(r"\[('[^'\n]*'(?:, '[^'\n]*')*)\]")


def _compact(text: str, keep: int = 3) -> str:
    """``text`` with each Python list of strings written as words, long ones cut to ``keep`` items."""

    def words(match: re.Match[str]) -> str:
        items = re.findall(r"'([^'\n]*)'", match.group(1))
        if len(items) > keep + 1:
            return f"{', '.join(items[:keep])} and {len(items) - keep} more"
        return ", ".join(items)

    return " ".join(_LIST_REPR.sub(words, str(text)).split())


def _shorten_sentences(text: str, width: int) -> str:
    """Whole sentences of ``text`` while they fit in ``width``, else cut at a word."""
    if len(text) <= width:
        return text
    sentences = re.split(r"(?<=[.;!?])\s+", text)
    kept = ""
    for sentence in sentences:
        candidate = f"{kept} {sentence}".strip()
        if len(candidate) + 2 > width:
            break
        kept = candidate
    return f"{kept} …" if kept else shorten(text, width)


def _excess(v: MetricVerdict) -> str:
    """``+0.200 [+0.190, +0.210] (98.89 %)``: the excess, its interval and the interval's level."""
    excess, interval = format_excess(v.effect, v.ci, unit=v.unit)
    if interval:
        excess += f" {interval}"
        if v.ci_level is not None:
            excess += f" ({format_level(v.ci_level)})"
    return excess


#: the interval's level, as a column head: each row's own level (Holm-adjusted)
LEVEL_HEAD = "(level)"
#: the excess column's head: each row's interval is at its own level (Holm-adjusted)
EXCESS_HEAD = f"excess [interval] {LEVEL_HEAD}"
#: what the level of each row's interval is, said once under the table
LEVEL_NOTE = (
    "(level): the two-sided level of each interval. A gating test's interval is at the "
    "level of its Holm-adjusted test, so it excludes 0 exactly when the test is "
    "significant; an informational metric's is at its own level."
)
#: below this width the plain-text table leaves out the score column
SCORE_WIDTH = 100


def _short_reason(reason: str) -> str:
    """The reason's first clause (``no evidence of leakage``), without an ``informational:`` lead."""
    for prefix in ("informational: ", "skipped: "):
        if reason.startswith(prefix):
            reason = reason[len(prefix) :]
    clause = re.split(r"[:;] ", reason, maxsplit=1)[0]
    reason = clause if len(clause) >= 12 else reason
    return " ".join(re.sub(r"\s*\([^()]*\)", "", reason).split())


def _level(v: MetricVerdict) -> str:
    return "skipped" if v.skipped else v.level


def _verdict_lines(
    v: MetricVerdict,
    result: MetricResult | None,
    *,
    width: int,
    header: bool,
    name_width: int | None = None,
    excess_width: int = 24,
    with_score: bool = False,
) -> list[str]:
    """One metric's verdict: level, metric (never cut), [score,] excess with its
    interval and level, and a short reason, on the same line when it fits in ``width``
    with at least 24 characters for the reason, else on a line of its own below."""
    name_width = max(len(v.metric), 0 if name_width is None else name_width)
    cells = [f"{_level(v):<7}", f"{v.metric:<{name_width}}"]
    heads = [f"{'level':<7}", f"{'metric':<{name_width}}"]
    if with_score:
        score = "—" if result is None else format_number(result.score)
        cells.append(f"{score:>11}")
        heads.append(f"{'score':>11}")
    excess_width = max(excess_width, len(EXCESS_HEAD))
    cells.append(f"{_excess(v):<{excess_width}}")
    heads.append(f"{EXCESS_HEAD:<{excess_width}}")
    used = len("  " + "  ".join(cells)) + 2
    reason = _short_reason(v.reason)
    if width - used >= 24:
        cells.append(shorten(reason, width - used))
        heads.append("reason")
        lines = [("  " + "  ".join(cells)).rstrip()]
    else:  # the reason on its own line, under the metric
        lines = [
            ("  " + "  ".join(cells)).rstrip(),
            "    " + shorten(reason, width - 4),
        ]
    if header:
        lines.insert(0, ("  " + "  ".join(heads)).rstrip())
    return lines


def _caveat_lines(caveats: Sequence[str], width: int) -> list[str]:
    if not caveats:
        return []
    lines = ["caveats (warnings that qualify the verdict):"]
    for caveat in caveats:
        lines += textwrap.wrap(
            _shorten_sentences(caveat, 2 * width - 8),
            width=width,
            initial_indent="  - ",
            subsequent_indent="    ",
            break_on_hyphens=False,
        )
    return lines


def _summary_lines(
    verdict: Verdict, results: Sequence[MetricResult] | None, *, width: int
) -> list[str]:
    """The verdict's summary: overall level and reason, a line per metric, the caveats."""
    lines = [f"verdict: {verdict.overall.upper()}"]
    lines += textwrap.wrap(
        verdict.reason,
        width=width,
        initial_indent="  ",
        subsequent_indent="  ",
        break_on_hyphens=False,
    )
    if results is not None and len(results) != len(verdict.metrics):
        results = None
    # findings first: the people a synthetic row gives away, then the tests
    lines += _finding_lines(verdict.findings, width)
    if verdict.metrics:
        name_width = max(len(v.metric) for v in verdict.metrics)
        excess_width = max(len(_excess(v)) for v in verdict.metrics)
        for i, v in enumerate(verdict.metrics):
            result = None if results is None else results[i]
            lines += _verdict_lines(
                v,
                result,
                width=width,
                header=i == 0,
                name_width=name_width,
                excess_width=excess_width,
                with_score=results is not None and width >= SCORE_WIDTH,
            )
        if any(v.ci is not None for v in verdict.metrics):
            lines += textwrap.wrap(
                LEVEL_NOTE,
                width=width,
                initial_indent="  ",
                subsequent_indent="  ",
                break_on_hyphens=False,
            )
    lines += _caveat_lines(verdict.caveats, width)
    return lines


def _units(
    verdicts: Sequence[MetricVerdict], results: Sequence[MetricResult]
) -> tuple[MetricVerdict, ...] | None:
    """The verdicts with the unit of their holdout test (``people``) filled in where a
    report written before verdicts recorded it left it out; None when nothing changes."""
    if len(verdicts) != len(results):
        return None
    out, changed = [], False
    for v, result in zip(verdicts, results, strict=True):
        test = (result.breakdown or {}).get("holdout_test")
        unit = test.get("unit") if isinstance(test, Mapping) else None
        if not v.unit and unit and v.effect is not None:
            v, changed = dataclasses.replace(v, unit=str(unit)), True
        out.append(v)
    return tuple(out) if changed else None


def _finding_lines(findings: Sequence[Finding], width: int) -> list[str]:
    """The findings that ask for something (review or fail), their people paired with rows."""
    lines: list[str] = []
    for finding in findings:
        if finding.level not in ("review", "fail"):
            continue
        lines.append(
            f"finding: {finding.title.lower()} ({finding.level}, {finding.policy} policy):"
        )
        lines += textwrap.wrap(
            finding.summary,
            width=width,
            initial_indent="  ",
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
        shown = finding.people[:10]
        if shown:
            lines.append(
                "  training row(s) → synthetic row(s) that "
                + ("carry it:" if finding.kind != "copied_people" else "copy them:")
            )
            for person in shown:
                kind = str(
                    person.get("how") or ("exact" if person.get("exact") else "near ")
                )
                real = ", ".join(str(r) for r in person.get("real_rows", ()))
                syn = ", ".join(str(r) for r in person.get("synthetic_rows", ()))
                lines.append("    " + shorten(f"{kind}  {real} → {syn}", width - 4))
            if finding.count > len(shown):
                lines.append(f"    … {finding.count - len(shown)} more in the JSON")
        if finding.next_step:
            lines += textwrap.wrap(
                "next: " + finding.next_step,
                width=width,
                initial_indent="  ",
                subsequent_indent="  ",
                break_on_hyphens=False,
            )
    return lines


def _result_lines(results: Sequence[MetricResult], width: int) -> list[str]:
    """One line per result of a report without a verdict."""
    if not results:
        return []
    name_width = min(max(len(r.metric) for r in results), 32)
    lines = []
    for r in results:
        ci = (
            ""
            if r.ci is None
            else f" [{format_number(r.ci[0])}, {format_number(r.ci[1])}]"
        )
        tail = r.reason or ""
        line = f"  {r.status:<9}{shorten(r.metric, name_width):<{name_width}}  {format_number(r.score):>11}{ci}"
        if tail:
            line += "  " + shorten(tail, max(width - len(line) - 2, 20))
        lines.append(line[:width].rstrip())
    return lines


@dataclasses.dataclass(frozen=True)
class EvaluationReport:
    """Everything one evaluation produced; serialises to the JSON report contract.

    ``print(report)`` gives a summary of a few lines (the verdict, one line per metric,
    the caveats); ``repr(report)`` is one line; in Jupyter the report renders as HTML,
    verdict first.
    """

    synthrisk_version: str
    seed: int
    inputs: Mapping[str, JSONValue]
    results: tuple[MetricResult, ...]
    schema: Mapping[str, JSONValue] = dataclasses.field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    schema_version: int = SCHEMA_VERSION
    #: the release verdict (set by ``evaluate``; None on a report built by hand)
    verdict: Verdict | None = None
    #: the known-leak self-test (``evaluate(..., self_test=True)``; None otherwise)
    self_test: SelfTest | None = None
    #: the release context (``evaluate(..., context=...)``; None when none was given)
    context: ReleaseContext | None = None

    def __getitem__(self, metric: str) -> MetricResult:
        for result in self.results:
            if result.metric == metric:
                return result
        msg = f"no result for metric {metric!r}; results: {[r.metric for r in self.results]}."
        raise KeyError(msg)

    def __post_init__(self) -> None:
        if self.verdict is not None:
            caveats = tuple(self.verdict_caveats(width=None))
            if caveats != self.verdict.caveats:
                verdict = dataclasses.replace(self.verdict, caveats=caveats)
                object.__setattr__(self, "verdict", verdict)
            units = _units(self.verdict.metrics, self.results)
            if units is not None:
                verdict = dataclasses.replace(self.verdict, metrics=units)
                object.__setattr__(self, "verdict", verdict)

    def __repr__(self) -> str:
        verdict = "None" if self.verdict is None else repr(self.verdict.overall)
        warnings = f", warnings={len(self.warnings)}" if self.warnings else ""
        tested = ""
        if self.self_test is not None:
            caught = sum(s.caught for s in self.self_test.scenarios)
            tested = f", self_test={caught}/{len(self.self_test.scenarios)} caught"
        return (
            f"EvaluationReport(synthrisk_version={self.synthrisk_version!r}, seed={self.seed}, "
            f"results={len(self.results)}, verdict={verdict}{warnings}{tested})"
        )

    def __str__(self) -> str:
        return "\n".join(self.summary_lines())

    def summary_lines(self, *, width: int = 120) -> list[str]:
        """The summary that ``print(report)`` shows, as lines of at most ``width`` characters.

        The inputs, the overall verdict with its reason, one line per metric (verdict
        level, score, excess over the holdout with its interval and the interval's level, a
        short reason; below 100 characters without the score, the reason on its own line
        where it does not fit),
        the caveats of :meth:`verdict_caveats` and, after a known-leak self-test, its
        headline and levels.
        """
        width = max(int(width), 60)
        lines = [
            shorten(
                f"synthrisk report: {len(self.results)} metric(s), seed {self.seed}, "
                f"synthrisk {self.synthrisk_version}",
                width,
            )
        ]
        tables = []
        for name in ("real", "synthetic", "holdout"):
            entry = (self.inputs or {}).get(name)
            if isinstance(entry, Mapping):
                columns = entry.get("columns")
                n_columns = len(columns) if isinstance(columns, (list, tuple)) else "?"
                tables.append(f"{name} {entry.get('rows', '?')} × {n_columns}")
            elif name in (self.inputs or {}):
                tables.append(f"{name}: none")
        if tables:  # wrapped between tables, never cut: each size is part of the record
            line = "inputs (rows × columns): " + tables[0]
            for table in tables[1:]:
                if len(line) + 2 + len(table) > width - 1:
                    lines.append(line + ",")
                    line = "  " + table
                else:
                    line += ", " + table
            lines.append(line)
        if self.verdict is None:
            lines.append("no verdict (judge it with synthrisk.report.judge(report))")
            lines += _result_lines(self.results, width)
            caveats = self.verdict_caveats(width=None)
            lines += _caveat_lines(caveats, width)
        else:
            lines += _summary_lines(self.verdict, self.results, width=width)
        if self.self_test is not None:
            lines += self.self_test.summary_lines(width=width)
        return lines

    def verdict_caveats(
        self, *, verdict: Verdict | None = None, width: int | None = 200
    ) -> list[str]:
        """The warnings that qualify the verdict, each as ``"<metric>: <warning>"``.

        A warning qualifies the verdict when it is

        * a note about the inputs (the report's own ``warnings``; led by ``inputs``),
        * a warning of a metric that gates (it qualifies that metric's level), or
        * a warning of a fidelity check listed in :data:`QUALIFYING_CHECKS` (for example
          ``distribution_validation``: when synthetic columns differ from the real
          ones, the membership attacks partly measure fidelity).

        Warnings of informational metrics are about those metrics' own scores and stay
        in their sections. Without a verdict every metric that ran counts. The same
        warning from several metrics is listed once, led by all their names; long lists
        of column names are shortened.

        Parameters
        ----------
        verdict : Verdict, default=None
            The verdict to qualify; None uses the report's own.
        width : int or None, default=200
            Shorten each caveat to at most this many characters (at a sentence or a
            word, with ``…``); None keeps the whole text.

        Returns
        -------
        list of str
            In result order, the notes about the inputs first; empty when nothing
            qualifies the verdict.
        """
        verdict = self.verdict if verdict is None else verdict
        # too few rows: one message, not one per metric
        if verdict is not None and verdict.too_few_rows:
            line = f"inputs: {verdict.too_few_rows}"
            return [line if width is None else _shorten_sentences(line, width)]
        gates = [True] * len(self.results)  # without a verdict, every metric counts
        if verdict is not None and len(verdict.metrics) == len(self.results):
            gates = [v.gating and not v.skipped for v in verdict.metrics]
        sources = [("inputs", self.warnings)]
        for result, gates_verdict in zip(self.results, gates, strict=True):
            if result.status != "skipped" and (
                gates_verdict or result.metric in QUALIFYING_CHECKS
            ):
                sources.append((result.metric, result.warnings))
        found: dict[str, list[str]] = {}
        for source, warnings in sources:
            for text in warnings:
                names = found.setdefault(_compact(text), [])
                if source not in names:
                    names.append(source)
        out = []
        for text, names in found.items():
            line = f"{', '.join(names)}: {text}"
            out.append(line if width is None else _shorten_sentences(line, width))
        return out

    def _repr_html_(self) -> str | None:
        """Jupyter display: the full HTML report as a fragment (None without the report extra)."""
        return _render_html("report", self)

    def to_dict(
        self, *, include_records: bool = False, include_values: bool = False
    ) -> dict[str, JSONValue]:
        """JSON-safe form following the report contract (see :meth:`MetricResult.to_dict`)."""
        out: dict[str, JSONValue] = {
            "schema_version": self.schema_version,
            "synthrisk_version": self.synthrisk_version,
            "seed": self.seed,
            "inputs": to_jsonable(self.inputs),
            "schema": to_jsonable(self.schema),
            "warnings": list(self.warnings),
        }
        if self.verdict is not None:
            out["verdict"] = self.verdict.to_dict()
        if self.self_test is not None:
            out["self_test"] = self.self_test.to_dict()
        if self.context is not None:
            out["context"] = to_jsonable(self.context.to_dict())
        out["results"] = [
            r.to_dict(include_records=include_records, include_values=include_values)
            for r in self.results
        ]
        return out

    def to_frame(self) -> Any:
        """One row per metric: score, interval, excess over the holdout, p-values, level, gating.

        Returns
        -------
        pandas.DataFrame
            Indexed by metric id, with columns ``score``, ``ci_low``, ``ci_high``,
            ``higher_is_safer``, ``effect`` (excess risk of training rows over holdout
            rows), ``effect_ci_low``, ``effect_ci_high``, ``p_value``, ``p_adjusted``,
            ``tolerance``, ``level``, ``gating`` and ``reason``. The verdict columns
            are empty on a report without a verdict.
        """
        import pandas as pd

        rows = []
        for i, r in enumerate(self.results):
            v = self.verdict.metrics[i] if self.verdict is not None else None
            rows.append(
                {
                    "metric": r.metric,
                    "score": r.score,
                    "ci_low": None if r.ci is None else r.ci[0],
                    "ci_high": None if r.ci is None else r.ci[1],
                    "higher_is_safer": r.higher_is_safer,
                    "effect": None if v is None else v.effect,
                    "effect_ci_low": None if v is None or v.ci is None else v.ci[0],
                    "effect_ci_high": None if v is None or v.ci is None else v.ci[1],
                    "p_value": None if v is None else v.p_value,
                    "p_adjusted": None if v is None else v.p_adjusted,
                    "tolerance": None if v is None else v.tolerance,
                    "level": None if v is None else v.level,
                    "gating": None if v is None else v.gating,
                    "reason": None if v is None else v.reason,
                }
            )
        frame = pd.DataFrame(rows)
        return frame.set_index("metric") if rows else frame

    def to_json(
        self,
        *,
        include_records: bool = False,
        include_values: bool = False,
        indent: int | None = 2,
    ) -> str:
        """The report as a JSON string (NaN never appears: undefined numbers are null)."""
        data = self.to_dict(
            include_records=include_records, include_values=include_values
        )
        return json.dumps(data, indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvaluationReport:
        """Rebuild a report from its JSON form.

        Raises
        ------
        InputError
            If the report comes from a newer ``schema_version`` than this synthrisk reads.
        """
        version = int(data.get("schema_version", SCHEMA_VERSION))
        if version > SCHEMA_VERSION:
            from synthrisk.exceptions import InputError

            msg = (
                f"the report has schema_version {version}, newer than the {SCHEMA_VERSION} this "
                "synthrisk reads; upgrade synthrisk."
            )
            raise InputError(msg)
        return cls(
            synthrisk_version=data["synthrisk_version"],
            seed=int(data["seed"]),
            inputs=data.get("inputs") or {},
            results=tuple(MetricResult.from_dict(r) for r in data.get("results") or ()),
            schema=data.get("schema") or {},
            warnings=tuple(data.get("warnings") or ()),
            schema_version=int(data.get("schema_version", SCHEMA_VERSION)),
            verdict=None
            if data.get("verdict") is None
            else Verdict.from_dict(data["verdict"]),
            self_test=None
            if data.get("self_test") is None
            else SelfTest.from_dict(data["self_test"]),
            context=None
            if data.get("context") is None
            else ReleaseContext.from_dict(data["context"]),
        )

    @classmethod
    def from_json(cls, text: str) -> EvaluationReport:
        """Rebuild a report from a JSON string."""
        return cls.from_dict(json.loads(text))

    def write_record(self, path: Any, **options: Any) -> Any:
        """Write the anonymisation record of this report (HTML, or PDF by the suffix).

        See :func:`synthrisk.report.write_record` for ``options`` (``context``,
        ``command``); the record never holds record values.
        """
        import importlib

        writer = _RECORD_WRITER.get("record")
        if writer is None:  # synthrisk.report registers it when imported
            importlib.import_module("synthrisk.report")
            writer = _RECORD_WRITER["record"]
        return writer(self, path, **options)
