# SPDX-License-Identifier: BSD-3-Clause
"""Verdicts: pass / review / fail per metric and overall, against documented thresholds.

A :class:`Threshold` gives two limits on a metric's score. For a metric where a
higher score is safer (the DCR and disclosure *protection* scores)::

    score >= pass_at            -> pass
    fail_at <= score < pass_at  -> review
    score < fail_at             -> fail

and mirrored for a metric where a higher score means more risk (Anonymeter risks,
membership AUC)::

    score <= pass_at            -> pass   (score < pass_at when ``inclusive=False``)
    pass_at < score < fail_at   -> review
    score >= fail_at            -> fail

A metric that was skipped (it did not run in a default evaluation) is reported with
its reason and does not count towards the overall verdict. A metric with an undefined
score, without a threshold, or whose threshold assumes the
other orientation than its result reports is ``review``: a person has to read it. The
overall verdict is the worst metric verdict (``review`` when nothing was evaluated).

With ``conservative=True`` the bound of the score's confidence interval on the unsafe
side is judged instead of the point estimate (the upper bound of a risk, the lower bound
of a protection score), where the result has an interval.

Every default below is listed with its source in ``docs/report.md``; all are
configurable (:meth:`Thresholds.from_dict`, ``thresholds:`` in the YAML configuration,
``--thresholds FILE`` on the command line).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, get_args

from synthrisk.exceptions import ParameterError
from synthrisk.results import EvaluationReport, MetricResult

__all__ = [
    "DEFAULT_THRESHOLDS",
    "LEVELS",
    "Level",
    "MetricVerdict",
    "Threshold",
    "Thresholds",
    "Verdict",
    "check_fail_on",
    "judge",
    "judge_result",
]

Level = Literal["pass", "review", "fail"]
#: verdict levels from best to worst
LEVELS: tuple[Level, ...] = get_args(Level)
_RANK = {level: rank for rank, level in enumerate(LEVELS)}


@dataclasses.dataclass(frozen=True)
class Threshold:
    """Pass and fail limits on one metric's score.

    Parameters
    ----------
    pass_at : float
        Limit of the ``pass`` band, in [0, 1].
    fail_at : float
        Limit of the ``fail`` band, in [0, 1]; scores between the two limits are
        ``review``. Equal limits leave no review band.
    higher_is_safer : bool
        Orientation the limits assume; must agree with the result's.
    source : str, default=""
        Where the limits come from (shown in the report).
    inclusive : bool, default=True
        Whether a score exactly at ``pass_at`` passes. PETsARD's "risk < 0.09" is
        exclusive.
    """

    pass_at: float
    fail_at: float
    higher_is_safer: bool
    source: str = ""
    inclusive: bool = True

    def __post_init__(self) -> None:
        for name in ("pass_at", "fail_at"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, numbers.Real)
                or not 0.0 <= float(value) <= 1.0
            ):
                msg = f"`{name}` must be a number in [0, 1]; got {value!r}."
                raise ParameterError(msg)
            object.__setattr__(self, name, float(value))
        if self.higher_is_safer and self.fail_at > self.pass_at:
            msg = (
                f"for a metric where higher is safer, `fail_at` must not exceed `pass_at`; "
                f"got pass_at={self.pass_at}, fail_at={self.fail_at}."
            )
            raise ParameterError(msg)
        if not self.higher_is_safer and self.fail_at < self.pass_at:
            msg = (
                f"for a metric where higher means more risk, `fail_at` must not be below `pass_at`; "
                f"got pass_at={self.pass_at}, fail_at={self.fail_at}."
            )
            raise ParameterError(msg)

    def level(self, value: float) -> Level:
        """The verdict for ``value`` (already oriented as this threshold assumes)."""
        if self.higher_is_safer:
            if value > self.pass_at or (value == self.pass_at and self.inclusive):
                return "pass"
            return "fail" if value < self.fail_at else "review"
        if value < self.pass_at or (value == self.pass_at and self.inclusive):
            return "pass"
        return "fail" if value >= self.fail_at else "review"

    def describe(self) -> str:
        """The rule in words, e.g. ``pass ≥ 0.5, fail < 0.25``."""
        if self.higher_is_safer:
            return f"pass {'≥' if self.inclusive else '>'} {self.pass_at:g}, fail < {self.fail_at:g}"
        return f"pass {'≤' if self.inclusive else '<'} {self.pass_at:g}, fail ≥ {self.fail_at:g}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (the keys :meth:`Thresholds.from_dict` reads)."""
        return {
            "pass": self.pass_at,
            "fail": self.fail_at,
            "higher_is_safer": self.higher_is_safer,
            "inclusive": self.inclusive,
            "source": self.source,
        }


_ANONYMETER = (
    "pass: PETsARD (NICS, Taiwan) recommends Anonymeter risk < 0.09, after Singapore PDPC's guide on "
    "synthetic data; fail at twice that: synthrisk's choice"
)
_PROTECTION = (
    "synthrisk's choice: at least half the protection of the random baseline passes, "
    "less than a quarter fails"
)
_DCR_BASELINE = (
    "synthrisk's default: DCR-based protection ≥ 0.5, synthetic rows at least half as far from real rows as "
    "random rows are; fail below 0.1 (synthetic rows ten times closer to real rows than random rows, "
    "i.e. near-copies): synthrisk's choice. Faithful generators often land in between: random data is "
    "far from any real table, so read the overfitting and membership metrics too"
)
_DCR_OVERFITTING = (
    "synthrisk's default: DCR-based protection ≥ 0.5, at most 75 % of synthetic rows closer to the training "
    "rows than to the holdout; fail below 0.25 (more than 87.5 %): synthrisk's choice"
)
_CAP = "synthrisk's choice: the real rows are at least half safe from the CAP attack on average"

#: The default thresholds by metric id (see ``docs/report.md`` for the sources).
DEFAULT_THRESHOLDS: Mapping[str, Threshold] = {
    "singling_out": Threshold(
        0.09, 0.18, higher_is_safer=False, source=_ANONYMETER, inclusive=False
    ),
    "linkability": Threshold(
        0.09, 0.18, higher_is_safer=False, source=_ANONYMETER, inclusive=False
    ),
    "inference": Threshold(
        0.09, 0.18, higher_is_safer=False, source=_ANONYMETER, inclusive=False
    ),
    "dcr_baseline_protection": Threshold(
        0.5, 0.1, higher_is_safer=True, source=_DCR_BASELINE
    ),
    "dcr_overfitting_protection": Threshold(
        0.5, 0.25, higher_is_safer=True, source=_DCR_OVERFITTING
    ),
    "disclosure_protection": Threshold(
        0.5, 0.25, higher_is_safer=True, source=_PROTECTION
    ),
    "disclosure_protection_estimate": Threshold(
        0.5, 0.25, higher_is_safer=True, source=_PROTECTION
    ),
    "categorical_cap": Threshold(0.5, 0.25, higher_is_safer=True, source=_CAP),
    "categorical_zero_cap": Threshold(0.5, 0.25, higher_is_safer=True, source=_CAP),
    "categorical_generalized_cap": Threshold(
        0.5, 0.25, higher_is_safer=True, source=_CAP
    ),
    "membership_knn_probabilities": Threshold(
        0.6,
        0.75,
        higher_is_safer=False,
        source="synthrisk's default: membership AUC ≤ 0.6 passes (0.5 is a coin toss); fail at 0.75",
    ),
    "dcr_share": Threshold(
        0.55,
        0.65,
        higher_is_safer=False,
        source="synthrisk's choice: a size-corrected share of 0.5 means no memorisation",
    ),
    "identical_match_share": Threshold(
        0.01,
        0.05,
        higher_is_safer=False,
        source="synthrisk's choice: at most 1 % of synthetic rows may copy a real row exactly",
    ),
    "membership_classification": Threshold(
        0.05,
        0.2,
        higher_is_safer=False,
        source="synthrisk's choice: synthetic rows at most 5 % harder to tell from training rows than from unseen rows (0 = no memorisation)",
    ),
    "nndr": Threshold(
        0.8,
        0.5,
        higher_is_safer=True,
        source="synthrisk's choice: the training / holdout NNDR ratio is about 1 without memorisation (MOSTLY AI QA)",
    ),
    "distribution_validation": Threshold(
        0.0,
        0.0,
        higher_is_safer=True,
        source="informational: it qualifies the attacks (a table that does not follow the real one is private for the wrong reason) and never gates a release by itself",
    ),
}

_THRESHOLD_KEYS = ("pass", "fail", "higher_is_safer", "inclusive", "source")


class Thresholds(Mapping[str, Threshold]):
    """Thresholds by metric id: the defaults, updated by user overrides.

    Parameters
    ----------
    overrides : mapping of str to Threshold or dict, default=None
        Per-metric thresholds replacing (or adding to) the defaults. A dict may give
        only ``pass`` and/or ``fail``; the rest is taken from the default. A metric
        without a default needs ``higher_is_safer`` or takes it from its result.
    conservative : bool, default=False
        Judge the unsafe end of the confidence interval instead of the point estimate.
    defaults : bool, default=True
        Start from :data:`DEFAULT_THRESHOLDS`; False starts from none.

    Examples
    --------
    >>> t = Thresholds({"singling_out": {"pass": 0.05}})
    >>> t["singling_out"].pass_at, t["singling_out"].fail_at
    (0.05, 0.18)
    """

    def __init__(
        self,
        overrides: Mapping[str, Threshold | Mapping[str, Any]] | None = None,
        *,
        conservative: bool = False,
        defaults: bool = True,
    ) -> None:
        if not isinstance(conservative, bool):
            msg = f"`conservative` must be true or false; got {conservative!r}."
            raise ParameterError(msg)
        self.conservative = conservative
        table: dict[str, Threshold | Mapping[str, Any]] = (
            dict(DEFAULT_THRESHOLDS) if defaults else {}
        )
        self._pending: dict[str, Mapping[str, Any]] = {}
        if overrides is not None and not isinstance(overrides, Mapping):
            msg = f"`thresholds` must map metric ids to {{pass: …, fail: …}}; got {overrides!r}."
            raise ParameterError(msg)
        for metric, spec in (overrides or {}).items():
            if isinstance(spec, Threshold):
                table[str(metric)] = spec
                continue
            built = _threshold_from_mapping(str(metric), spec, table.get(str(metric)))
            if isinstance(built, Threshold):
                table[str(metric)] = built
            else:
                self._pending[str(metric)] = built
        self._table: dict[str, Threshold] = {
            k: v for k, v in table.items() if isinstance(v, Threshold)
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Thresholds:
        """Read ``{metric: {pass, fail, …}, …, "conservative": bool}`` (YAML/JSON form)."""
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            msg = f"`thresholds` must be a mapping of metric ids to {{pass: …, fail: …}}; got {data!r}."
            raise ParameterError(msg)
        data = dict(data)
        conservative = data.pop("conservative", False)
        return cls(data, conservative=conservative)

    def __getitem__(self, metric: str) -> Threshold:
        return self._table[metric]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __repr__(self) -> str:
        return f"Thresholds({len(self)} metrics, conservative={self.conservative})"

    def for_result(self, result: MetricResult) -> Threshold | None:
        """The threshold that applies to ``result`` (completing a partial override)."""
        if result.metric in self._table:
            return self._table[result.metric]
        spec = self._pending.get(result.metric)
        if spec is None:
            return None
        return Threshold(
            spec["pass"],
            spec["fail"],
            higher_is_safer=result.higher_is_safer,
            source=spec.get("source", "user-supplied"),
            inclusive=spec.get("inclusive", True),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (for the report's reproducibility block)."""
        out: dict[str, Any] = {k: v.to_dict() for k, v in sorted(self._table.items())}
        for metric, spec in sorted(self._pending.items()):
            out[metric] = {**spec, "higher_is_safer": "from the result"}
        out["conservative"] = self.conservative
        return out


def _threshold_from_mapping(
    metric: str, spec: Any, default: Any
) -> Threshold | dict[str, Any]:
    where = f"thresholds.{metric}"
    if not isinstance(spec, Mapping):
        msg = f"`{where}` must be a mapping with keys {list(_THRESHOLD_KEYS)}; got {spec!r}."
        raise ParameterError(msg)
    unknown = sorted(set(map(str, spec)) - set(_THRESHOLD_KEYS))
    if unknown:
        msg = f"`{where}` has unknown keys {unknown}; allowed keys are {list(_THRESHOLD_KEYS)}."
        raise ParameterError(msg)
    base = default.to_dict() if isinstance(default, Threshold) else {}
    merged = {**base, **spec}
    if "source" not in spec:
        merged["source"] = (
            "user-supplied"
            if not base
            else f"user-supplied (default: {base['source']})"
        )
    for key in ("pass", "fail"):
        if key not in merged:
            msg = (
                f"`{where}` needs `{key}` (metric {metric!r} has no default threshold)."
            )
            raise ParameterError(msg)
        value = merged[key]
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not 0.0 <= float(value) <= 1.0
        ):
            msg = f"`{where}.{key}` must be a number in [0, 1]; got {value!r}."
            raise ParameterError(msg)
    for key in ("higher_is_safer", "inclusive"):
        if key in merged and not isinstance(merged[key], bool):
            msg = f"`{where}.{key}` must be true or false; got {merged[key]!r}."
            raise ParameterError(msg)
    if "higher_is_safer" not in merged:
        return merged
    try:
        return Threshold(
            merged["pass"],
            merged["fail"],
            higher_is_safer=merged["higher_is_safer"],
            source=str(merged["source"]),
            inclusive=merged.get("inclusive", True),
        )
    except ParameterError as exc:
        msg = f"`{where}`: {exc}"
        raise ParameterError(msg) from None


@dataclasses.dataclass(frozen=True)
class MetricVerdict:
    """The verdict on one metric result.

    Attributes
    ----------
    metric : str
        Metric id.
    level : {"pass", "review", "fail"}
        The verdict.
    value : float or None
        The number that was judged (the score, or an interval bound when conservative).
    threshold : Threshold or None
        The threshold applied (None when the metric has none).
    reason : str
        One sentence explaining the verdict.
    skipped : bool
        The metric did not run (``level`` is then ``review`` but does not count
        towards the overall verdict).
    """

    metric: str
    level: Level
    value: float | None
    threshold: Threshold | None
    reason: str
    skipped: bool = False


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Per-metric verdicts (in result order) and the overall verdict."""

    overall: Level
    metrics: tuple[MetricVerdict, ...]
    conservative: bool = False

    def fails(self, fail_on: str) -> bool:
        """True when the overall verdict is at or below ``fail_on`` (``review`` or ``fail``)."""
        fail_on = check_fail_on(fail_on)
        return _RANK[self.overall] >= _RANK[fail_on]  # type: ignore[index]

    def counts(self) -> dict[str, int]:
        """How many metrics got each level (skipped metrics are not counted)."""
        return {
            level: sum(v.level == level and not v.skipped for v in self.metrics)
            for level in LEVELS
        }


def check_fail_on(value: Any) -> str:
    """Validate a gate level: ``review`` or ``fail``."""
    if not isinstance(value, str) or value not in ("review", "fail"):
        msg = (
            f"`fail_on` must be 'review' or 'fail'; got {value!r}. 'review' fails the gate unless every "
            "metric passes; 'fail' fails it only when some metric fails."
        )
        raise ParameterError(msg)
    return value


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def judge_result(
    result: MetricResult, thresholds: Thresholds | None = None
) -> MetricVerdict:
    """The verdict on one result."""
    thresholds = Thresholds() if thresholds is None else thresholds
    threshold = thresholds.for_result(result)
    metric = result.metric
    if result.status == "skipped":
        return MetricVerdict(
            metric,
            "review",
            None,
            threshold,
            f"not evaluated: {result.reason}",
            skipped=True,
        )
    if threshold is None:
        return MetricVerdict(
            metric,
            "review",
            result.score,
            None,
            f"no threshold is configured for {metric!r}; read its section and judge it, or add one under `thresholds`.",
        )
    if threshold.higher_is_safer != result.higher_is_safer:
        side = "higher" if threshold.higher_is_safer else "lower"
        return MetricVerdict(
            metric,
            "review",
            result.score,
            threshold,
            f"the threshold assumes a {side} score is safer, but the result says the opposite; "
            "fix the threshold's `higher_is_safer`.",
        )
    score = result.score
    if score is None or not math.isfinite(score):
        return MetricVerdict(
            metric,
            "review",
            None,
            threshold,
            "the score is undefined (see the metric's warnings).",
        )
    value, what = float(score), "score"
    if thresholds.conservative and result.ci is not None:
        value = float(result.ci[0] if result.higher_is_safer else result.ci[1])
        what = (
            "lower interval bound" if result.higher_is_safer else "upper interval bound"
        )
    level = threshold.level(value)
    rule = threshold.describe()
    if level == "pass":
        reason = f"{what} {_fmt(value)} is within the pass limit ({rule})."
    elif level == "fail":
        reason = f"{what} {_fmt(value)} is beyond the fail limit ({rule})."
    else:
        reason = f"{what} {_fmt(value)} lies between the pass and fail limits ({rule})."
    return MetricVerdict(metric, level, value, threshold, reason)


def judge(
    report: EvaluationReport | Mapping[str, Any], thresholds: Thresholds | None = None
) -> Verdict:
    """Judge every result of ``report`` (an :class:`EvaluationReport` or its JSON dict).

    Examples
    --------
    >>> from synthrisk import EvaluationReport, MetricResult
    >>> r = EvaluationReport("0.1.0", 0, {}, (MetricResult("singling_out", 0.2, {}, higher_is_safer=False),))
    >>> judge(r).overall
    'fail'
    """
    if not isinstance(report, EvaluationReport):
        report = EvaluationReport.from_dict(report)
    thresholds = Thresholds() if thresholds is None else thresholds
    verdicts = tuple(judge_result(r, thresholds) for r in report.results)
    return Verdict(
        overall=_worst([v.level for v in verdicts if not v.skipped]),
        metrics=verdicts,
        conservative=thresholds.conservative,
    )


def _worst(levels: Sequence[Level]) -> Level:
    if not levels:
        return "review"
    return max(levels, key=lambda level: _RANK[level])
