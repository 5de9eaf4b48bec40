# SPDX-License-Identifier: BSD-3-Clause
"""The release verdict: every gate is a test against the holdout.

A holdout is a sample of exactly what a generator that never saw the training rows
would produce: new people from the same population. So each gating judgement asks how
much more an attack learns about the training rows than about the holdout rows. A
metric that supports it reports a *holdout test* (``breakdown["holdout_test"]``, see
:mod:`synthrisk.stats.holdout`): the excess ``effect`` (0 = none), its interval, a
one-sided p-value. With the metric's documented tolerance ``t``
(:data:`DEFAULT_TOLERANCES`)::

    fail    if significant after Holm's correction across all gating tests of the run
            AND the interval's lower bound > t
    pass    if the interval's upper bound <= t
    review  otherwise (the interval straddles t, or too few rows to tell)

The interval is at the level that matches the test's Holm step
(:func:`~synthrisk.stats.holdout.holm_levels`: each end a one-sided bound at
``1 - alpha / (number of tests still in play)``), so that it excludes 0 exactly when
the Holm-adjusted p-value is significant, and the bounds shown are the bounds judged.
A metric of several parts (inference with every column as the secret) corrects its
parts again, nested at its own matched level.

Metrics without a holdout control (SDMetrics' ``DCRBaselineProtection`` against random
rows, distribution validation, ...) are *informational* (level ``info``): shown and
explained, never gating. Without a holdout the overall verdict is ``review``: closeness
to real rows cannot be told apart from fidelity.

User thresholds on a metric's score (:class:`Threshold`, ``thresholds:`` in the YAML,
``--thresholds FILE``) override all of this for the metrics they name: such a metric is
judged on its score and gates::

    higher is safer:   score >= pass -> pass;  score < fail -> fail;  review between
    higher is risk:    score <= pass -> pass;  score >= fail -> fail; review between

A partial override (``{pass: 0.05}``) is completed from :data:`DEFAULT_THRESHOLDS`,
the documented score scale. With ``conservative=True`` the unsafe end of the score's
interval is judged instead of the point estimate. Every default is listed with its
reasoning in ``docs/verdict.md``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from scipy import stats

from synthrisk.exceptions import ParameterError
from synthrisk.results import (
    FINDING_LIST,
    LEVELS,
    EvaluationReport,
    Finding,
    Level,
    MetricResult,
    MetricVerdict,
    Verdict,
    check_fail_on,
)
from synthrisk.stats.exact import fewest_people
from synthrisk.stats.holdout import (
    ALPHA,
    holm,
    holm_levels,
    level_text,
    matched_interval,
)

__all__ = [
    "ALPHA",
    "DEFAULT_THRESHOLDS",
    "DEFAULT_TOLERANCES",
    "INFORMATIONAL",
    "LEVELS",
    "MIN_ROWS",
    "POLICIES",
    "Finding",
    "Level",
    "MetricVerdict",
    "Threshold",
    "Thresholds",
    "Tolerance",
    "Verdict",
    "check_fail_on",
    "judge",
    "judge_result",
]

_RANK = {level: rank for rank, level in enumerate(LEVELS)}

#: a holdout test on fewer units than this is "inconclusive: too few rows"
MIN_ROWS = 30

#: the release policies: ``statistical`` — the holdout-controlled gates, and copied
#: people beyond the chance model read review; ``strict`` — any synthetic row that
#: copies a training person's record fails (docs/verdict.md, "Copied people: the chance
#: model and the release policy")
POLICIES: tuple[str, ...] = ("statistical", "strict")


def check_policy(value: Any) -> str:
    """Validate a release policy name."""
    if not isinstance(value, str) or value not in POLICIES:
        msg = (
            f"`policy` must be one of {list(POLICIES)} (statistical: holdout-controlled gates, copies "
            f"beyond chance read review; strict: any copied person fails); got {value!r}."
        )
        raise ParameterError(msg)
    return value


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """The largest excess over the holdout that is not material, with its reasoning.

    Parameters
    ----------
    value : float
        Tolerance on the test's ``effect`` (same units).
    unit : str
        What the effect measures, in words.
    reasoning : str
        Why this value (shown in the report and ``docs/verdict.md``).
    relative : float or None, default=None
        When the holdout test reports the excess that chance alone produces on the
        same scale (``chance``), the tolerance grows to ``relative * chance`` where
        that is larger than ``value``: the excess is then judged against what new
        people already give away.
    ceiling : float or None, default=None
        The relative part never raises the tolerance above this value.
    decision : {"interval", "significance"}, default="interval"
        ``"interval"``: fail when significant and the interval's lower end is above
        the tolerance, pass when its upper end is within it, review otherwise.
        ``"significance"`` (a tolerance of 0): any significant excess fails, anything
        else passes, and the verdict states the excess the test detects at this size.

    Examples
    --------
    >>> t = Tolerance(0.005, "share", "why", relative=0.25, ceiling=0.03)
    >>> t.for_test({"chance": 0.002}), t.for_test({"chance": 0.08}), t.for_test({"chance": 0.4})
    (0.005, 0.02, 0.03)
    """

    value: float
    unit: str
    reasoning: str
    relative: float | None = None
    ceiling: float | None = None
    decision: str = "interval"

    def for_test(self, test: Mapping[str, Any]) -> float:
        """The tolerance that applies to ``test`` (see ``relative`` and ``ceiling``)."""
        chance = test.get("chance")
        if self.relative is None or chance is None or not math.isfinite(chance):
            return self.value
        grown = self.relative * float(chance)
        if self.ceiling is not None:
            grown = min(grown, self.ceiling)
        return max(self.value, grown)


_SHARE = (
    "a generator that never saw the training rows puts half of its rows closer to them and half closer to "
    "the holdout; more than 55 % closer to the training rows is a material tilt towards the people it was "
    "trained on (the size-corrected share; 0.55 was synthrisk's previous pass limit)"
)
_ATTACK_TOLERANCE = (
    "PETsARD (NICS, Taiwan), after Singapore PDPC's guide on synthetic data, accepts an Anonymeter risk "
    "below 0.09; on the excess scale (success on training people minus success on people the generator "
    "never saw) synthrisk tolerates the same 9 in 100, judged on the interval's upper end. The attack runs "
    "on thousands of targets, so its interval is narrow (half-width about 0.02)"
)
_SINGLING_OUT_TOLERANCE = (
    "PETsARD (NICS, Taiwan), after Singapore PDPC's guide on synthetic data, accepts an Anonymeter risk "
    "below 0.09 — a rule on the point estimate. synthrisk judges the interval instead, and singling out is "
    "imprecise: a query counts only when it isolates one person, and coarse tables offer a few hundred such "
    "queries, so the interval's half-width reaches 0.06. A tolerance of 0.15 on the interval's upper end is "
    "PETsARD's 0.09 on the point estimate at that precision; on tables with 2,000 queries it is stricter"
)
_CAP_TOLERANCE = (
    "a guess of a training person's sensitive value at most 5 percentage points more likely than a "
    "stranger's is within what a privacy officer accepts; the CAP attack's per-row probabilities are "
    "averaged over every real row, so this is measured precisely"
)

_IDENTIFICATION_TOLERANCE = (
    "a synthetic row that copies one real person's record — exactly, or far closer to them than any "
    "other real person is — finds that person: releasing it discloses them, however few they are. So "
    "any significant excess of identified training people over the identified holdout people (whom "
    "chance alone identifies) fails: the tolerance is 0 people. The holdout control keeps new people "
    "from failing (chance matches are common on coarse tables, and count on both sides), and the "
    "verdict states how many identified training people the test would have found at this size"
)

_VULNERABLE_TOLERANCE = (
    "the most isolated people are the ones a membership attack can single out (Meeus et al. 2023, "
    "'Achilles' heels'); among them, training and holdout people were chosen alike, so an attack that "
    "ranks significantly more training people at the top has found people the generator memorised. As "
    "for identification, any significant excess fails (0 people): the holdout people of the same "
    "stratum carry the chance rate, and the result states the excess the test would have detected"
)

_REPLAY_TOLERANCE = (
    "a real person's e-mail, phone number, account number or clinical note in the release discloses "
    "that person by itself, whatever the other columns say. So any significant excess of replayed "
    "training people over replayed holdout people fails: the tolerance is 0 people. The holdout "
    "control keeps shared values (a common first name, a clinic's phone number, a stock phrase) from "
    "failing: they reach people the generator never saw just as often"
)

_RARE_TOLERANCE = (
    "a value or a combination of known values that one real person holds (a rare diagnosis, a date "
    "of birth with a postcode) points at that person wherever it appears: a synthetic row that "
    "carries it tells whoever knows the person that they were in the training data, and what else "
    "the row says about them. So any significant excess of such training people over the holdout "
    "people (whose rare values reach the synthetic table only by chance) fails: the tolerance is 0 people"
)

#: The default tolerances by metric id (see ``docs/verdict.md`` for the reasoning).
DEFAULT_TOLERANCES: Mapping[str, Tolerance] = {
    "identification": Tolerance(
        0.0,
        "training people identified beyond the holdout's chance rate (people)",
        _IDENTIFICATION_TOLERANCE,
        decision="significance",
    ),
    "identifier_replay": Tolerance(
        0.0,
        "training people whose identifier the synthetic table carries, beyond the holdout's chance rate (people)",
        _REPLAY_TOLERANCE,
        decision="significance",
    ),
    "text_replay": Tolerance(
        0.0,
        "training people whose free text a synthetic cell copies, beyond the holdout's chance rate (people)",
        _REPLAY_TOLERANCE,
        decision="significance",
    ),
    "quasi_identifier_replay": Tolerance(
        0.0,
        "training people singled out by a combination of known columns that a synthetic row repeats, beyond the holdout's chance rate (people)",
        _RARE_TOLERANCE,
        decision="significance",
    ),
    "rare_value_replay": Tolerance(
        0.0,
        "training people whose rare value a synthetic row carries, beyond the holdout's chance rate (people)",
        _RARE_TOLERANCE,
        decision="significance",
    ),
    "row_string_replay": Tolerance(
        0.0,
        "training people whose whole row, as text, a synthetic row nearly copies, beyond the holdout's chance rate (people)",
        _REPLAY_TOLERANCE,
        decision="significance",
    ),
    "vulnerable_people": Tolerance(
        0.0,
        "training people among the most isolated that an attack ranks highest, beyond chance (people)",
        _VULNERABLE_TOLERANCE,
        decision="significance",
    ),
    "dcr_share": Tolerance(
        0.05,
        "share of synthetic rows closer to training than to holdout rows, minus 0.5",
        _SHARE,
    ),
    "nndr": Tolerance(
        0.05,
        "share of synthetic rows whose distance ratio is lower against training rows than against holdout rows, minus 0.5",
        "the same tilt as for the DCR share, measured on the nearest-neighbour distance ratio (a synthetic row "
        "that points at one person much more sharply than at anyone else)",
    ),
    "membership_knn_probabilities": Tolerance(
        0.05,
        "membership ROC AUC minus 0.5",
        "an AUC of 0.55 lets an attacker tell training people from others only slightly better than a coin "
        "toss (0.5); above it, membership becomes a material signal",
    ),
    "identical_match_share": Tolerance(
        0.005,
        "share of synthetic rows copying a training person beyond chance",
        "verbatim copies are the clearest leak: more than 1 synthetic row in 200 copying a training person "
        "beyond what chance coincidences with new people produce is material — and, on tables where new "
        "people's records often turn up in the synthetic table by chance (few coarse columns), more than "
        "2/9 of that chance rate: training people then are more than 11/9 times as likely as new people to "
        "be found in it, so an attacker who claims membership for everyone found is right more than 55 % "
        "of the time where a coin toss is right 50 % (the same odds as the membership AUC's tolerance). "
        "Whatever the chance rate, more than 1 synthetic row in 50 copying a training person beyond chance "
        "is never within tolerance (0.02 at most): on very coarse tables 5 % copies then still read as a "
        "leak, not as chance",
        relative=2 / 9,
        ceiling=0.02,
    ),
    "disclosure_protection": Tolerance(
        0.05,
        "mean probability of guessing a training person's sensitive value minus the same for holdout people",
        _CAP_TOLERANCE,
    ),
    "singling_out": Tolerance(
        0.15,
        "singling-out success on training rows minus on holdout rows (equal sizes)",
        _SINGLING_OUT_TOLERANCE,
    ),
    "singling_out_univariate": Tolerance(
        0.15,
        "singling-out success on training rows minus on holdout rows (equal sizes)",
        _SINGLING_OUT_TOLERANCE,
    ),
    "linkability": Tolerance(
        0.09,
        "linkability success on training rows minus on holdout rows",
        _ATTACK_TOLERANCE,
    ),
    "inference": Tolerance(
        0.09,
        "inference success on training rows minus on holdout rows (worst column)",
        _ATTACK_TOLERANCE,
    ),
}

#: metrics that never gate by default, with the reason shown in the report
INFORMATIONAL: Mapping[str, str] = {
    "dcr_baseline_protection": (
        "informational: it compares synthetic rows with uniformly random rows, which are far from any real "
        "table, so a faithful generator scores low here without leaking anything; its holdout companion "
        "(synthetic vs holdout rows' distance to the training rows) is shown beside it"
    ),
    "dcr_overfitting_protection": (
        "informational: SDMetrics' share compares the full training table with a holdout of another size, "
        "so its value without memorisation depends on the sizes; dcr_share is the size-corrected, tested "
        "version of the same question"
    ),
    "distribution_validation": (
        "informational: it measures fidelity, not leakage; a table that does not follow the real one is "
        "private for the wrong reason"
    ),
    "nndr": (
        "informational: MOSTLY AI's summary (the 10th smallest ratio) is noisy, and its holdout companion "
        "(which side gives the lower ratio) repeats the DCR share's question without accounting for which "
        "real people fell into the training table; dcr_share gates instead"
    ),
    "membership_classification": (
        "informational: the classifier's memorisation ratio has no calibrated interval; the membership AUC "
        "and the DCR share test the same question against the holdout"
    ),
}


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
        source="synthrisk's default: membership AUC ≤ 0.6 (0.5 is a coin toss); fail at 0.75",
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
    """What the verdict judges by: user score thresholds, tolerances, error rate.

    A metric named in ``overrides`` is judged on its score by a :class:`Threshold`
    (and gates); every other metric is judged by its holdout test against its
    tolerance, or is informational.

    Parameters
    ----------
    overrides : mapping of str to Threshold or dict, default=None
        Per-metric score thresholds. A dict may give only ``pass`` and/or ``fail``;
        the rest is taken from :data:`DEFAULT_THRESHOLDS`. A metric without a default
        needs ``higher_is_safer`` or takes it from its result.
    conservative : bool, default=False
        Judge the unsafe end of the score's confidence interval instead of the point
        estimate (score thresholds only).
    defaults : bool, default=True
        Complete partial overrides from :data:`DEFAULT_THRESHOLDS`; False needs both
        limits.
    tolerances : mapping of str to float, default=None
        Per-metric tolerances replacing :data:`DEFAULT_TOLERANCES`.
    alpha : float, default=0.05
        Family-wise error rate of the gating tests (Holm's correction), below 0.5.
    policy : {"statistical", "strict"}, default="statistical"
        The release policy for copied people (:data:`POLICIES`).

    Examples
    --------
    >>> t = Thresholds({"singling_out": {"pass": 0.05}})
    >>> t["singling_out"].pass_at, t["singling_out"].fail_at
    (0.05, 0.18)
    >>> Thresholds(tolerances={"dcr_share": 0.03}).tolerance("dcr_share").value
    0.03
    """

    def __init__(
        self,
        overrides: Mapping[str, Threshold | Mapping[str, Any]] | None = None,
        *,
        conservative: bool = False,
        defaults: bool = True,
        tolerances: Mapping[str, Any] | None = None,
        alpha: float = ALPHA,
        policy: str = "statistical",
    ) -> None:
        self.policy: str = check_policy(policy)
        if not isinstance(conservative, bool):
            msg = f"`conservative` must be true or false; got {conservative!r}."
            raise ParameterError(msg)
        self.conservative = conservative
        if (
            isinstance(alpha, bool)
            or not isinstance(alpha, numbers.Real)
            or not 0.0 < float(alpha) < 0.5
        ):
            msg = (
                f"`alpha` must be a number strictly between 0 and 0.5 (the family-wise error of one-sided "
                f"tests; 0.05 by default); got {alpha!r}."
            )
            raise ParameterError(msg)
        self.alpha: float = float(alpha)
        base: dict[str, Threshold] = dict(DEFAULT_THRESHOLDS) if defaults else {}
        self._table: dict[str, Threshold] = {}
        self._pending: dict[str, Mapping[str, Any]] = {}
        if overrides is not None and not isinstance(overrides, Mapping):
            msg = f"`thresholds` must map metric ids to {{pass: …, fail: …}}; got {overrides!r}."
            raise ParameterError(msg)
        for metric, spec in (overrides or {}).items():
            if isinstance(spec, Threshold):
                self._table[str(metric)] = spec
                continue
            built = _threshold_from_mapping(str(metric), spec, base.get(str(metric)))
            if isinstance(built, Threshold):
                self._table[str(metric)] = built
            else:
                self._pending[str(metric)] = built
        self._tolerances: dict[str, Tolerance] = dict(DEFAULT_TOLERANCES)
        if tolerances is not None and not isinstance(tolerances, Mapping):
            msg = f"`tolerances` must map metric ids to numbers; got {tolerances!r}."
            raise ParameterError(msg)
        for metric, value in (tolerances or {}).items():
            default = DEFAULT_TOLERANCES.get(str(metric))
            # a tolerance in people (identification) is a count; the others are shares
            in_people = default is not None and default.unit.endswith("(people)")
            top = math.inf if in_people else 1.0
            if (
                isinstance(value, bool)
                or not isinstance(value, numbers.Real)
                or not 0.0 <= float(value) <= top
            ):
                what = "a number of people >= 0" if in_people else "a number in [0, 1]"
                msg = f"`tolerances.{metric}` must be {what}; got {value!r}."
                raise ParameterError(msg)
            self._tolerances[str(metric)] = Tolerance(
                float(value),
                "" if default is None else default.unit,
                "user-supplied"
                if default is None
                else f"user-supplied (default {default.value:g})",
                decision="significance"
                if in_people and float(value) == 0.0
                else "interval",
            )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Thresholds:
        """Read ``{metric: {pass, fail, …}, …, "conservative": bool, "tolerances": {…}, "alpha": float}``."""
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            msg = f"`thresholds` must be a mapping of metric ids to {{pass: …, fail: …}}; got {data!r}."
            raise ParameterError(msg)
        data = dict(data)
        conservative = data.pop("conservative", False)
        tolerances = data.pop("tolerances", None)
        alpha = data.pop("alpha", ALPHA)
        policy = data.pop("policy", "statistical")
        return cls(
            data,
            conservative=conservative,
            tolerances=tolerances,
            alpha=alpha,
            policy=policy,
        )

    def with_policy(self, policy: str | None) -> Thresholds:
        """A copy judged under ``policy`` (this one when None)."""
        if policy is None or policy == self.policy:
            return self
        import copy

        out = copy.copy(self)
        out.policy = check_policy(policy)
        return out

    def with_alpha(self, alpha: float) -> Thresholds:
        """A copy whose gating tests are Holm-corrected at family-wise error ``alpha``."""
        if not 0.0 < alpha < 0.5:
            msg = f"`alpha` must be a number strictly between 0 and 0.5; got {alpha!r}."
            raise ParameterError(msg)
        import copy

        out = copy.copy(self)
        out.alpha = float(alpha)
        return out

    def __getitem__(self, metric: str) -> Threshold:
        if metric in self._table:
            return self._table[metric]
        return DEFAULT_THRESHOLDS[metric]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._table, *DEFAULT_THRESHOLDS]))

    def __len__(self) -> int:
        return len(set(self._table) | set(DEFAULT_THRESHOLDS))

    def __repr__(self) -> str:
        return (
            f"Thresholds({len(self._table) + len(self._pending)} user thresholds, "
            f"conservative={self.conservative}, alpha={self.alpha}, policy={self.policy!r})"
        )

    @property
    def user(self) -> frozenset[str]:
        """Metric ids judged on their score by a user threshold."""
        return frozenset(self._table) | frozenset(self._pending)

    def tolerance(self, metric: str) -> Tolerance | None:
        """The tolerance of ``metric``'s holdout test (None when it has none)."""
        return self._tolerances.get(metric)

    def for_result(self, result: MetricResult) -> Threshold | None:
        """The user threshold that applies to ``result`` (completing a partial override)."""
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
        out["tolerances"] = {k: v.value for k, v in sorted(self._tolerances.items())}
        out["alpha"] = self.alpha
        out["conservative"] = self.conservative
        out["policy"] = self.policy
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


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _holdout_test(result: MetricResult) -> Mapping[str, Any] | None:
    """The result's holdout test: ``holdout_test``, or a ``control`` block of the same shape."""
    test = result.breakdown.get("holdout_test")
    if test is None:
        control = result.breakdown.get("control")
        if isinstance(control, Mapping) and control.get("effect") is not None:
            counts: Mapping[str, Any] = control  # a JSON block, read for its numbers
            n = min(int(counts.get("n_real") or 0), int(counts.get("n_holdout") or 0))
            test = {
                **control,
                "n": n,
                "estimate": control.get("real"),
                "control": control.get("holdout"),
            }
    if (
        not isinstance(test, Mapping)
        or test.get("effect") is None
        or test.get("ci") is None
    ):
        return None
    return test


def _skipped(result: MetricResult) -> str | None:
    if getattr(result, "status", None) == "skipped":
        return str(getattr(result, "reason", "") or "it does not apply to these tables")
    return None


_NO_HOLDOUT = (
    "without a holdout, closeness to real rows cannot be told apart from fidelity: a faithful generator "
    "also produces rows close to real people. Pass real rows the generator never saw (--holdout) for a "
    "pass or fail verdict."
)


def _score_verdict(
    result: MetricResult, threshold: Threshold, conservative: bool
) -> MetricVerdict:
    metric = result.metric
    if threshold.higher_is_safer != result.higher_is_safer:
        side = "higher" if threshold.higher_is_safer else "lower"
        return MetricVerdict(
            metric,
            "review",
            result.score,
            threshold,
            f"the threshold assumes a {side} score is safer, but the result says the opposite; "
            "fix the threshold's `higher_is_safer`.",
            rule=threshold.describe(),
            source=threshold.source,
            next_step=f"set `higher_is_safer: {str(result.higher_is_safer).lower()}` in the threshold of {metric!r}.",
        )
    score = result.score
    if score is None or not math.isfinite(score):
        return MetricVerdict(
            metric,
            "review",
            None,
            threshold,
            "the score is undefined (see the metric's warnings).",
            rule=threshold.describe(),
            source=threshold.source,
            next_step=(
                f"fix what the result's warnings name, or remove the threshold on {metric!r} "
                "to judge it by its holdout test."
            ),
        )
    value, what = float(score), "score"
    if conservative and result.ci is not None:
        value = float(result.ci[0] if result.higher_is_safer else result.ci[1])
        what = (
            "lower interval bound" if result.higher_is_safer else "upper interval bound"
        )
    level = threshold.level(value)
    rule = threshold.describe()
    next_step = ""
    if level == "pass":
        reason = f"{what} {_fmt(value)} is within the pass limit ({rule})."
    elif level == "fail":
        reason = f"{what} {_fmt(value)} is beyond the fail limit ({rule})."
    else:
        next_step = (
            f"inspect the training rows the result lists (`--include-records` writes them to the "
            f"JSON), or remove the threshold on {metric!r} to judge it by its holdout test."
        )
        reason = (
            f"{what} {_fmt(value)} lies between the pass and fail limits ({rule}). "
            f"Next step: {next_step}"
        )
    return MetricVerdict(
        metric,
        level,
        value,
        threshold,
        reason,
        rule=rule,
        source=threshold.source,
        next_step=next_step,
    )


def _part_intervals(
    test: Mapping[str, Any], level: float, significant: bool
) -> tuple[float, float, float, float] | None:
    """Headline interval, highest upper bound and level of a test with ``parts``.

    A metric made of several parts (the every-column inference attack) reports each
    part's raw test under ``parts`` and its headline part under ``part``; its own
    p-value is Holm-adjusted across the parts. Nested in the run's correction, the
    parts are Holm-corrected at the metric's matched ``level``: each part's interval is
    at its own step's level, and the headline's agrees with the metric's decision.
    """
    parts = test.get("parts")
    head = test.get("part")
    if not isinstance(parts, Mapping) or not isinstance(head, str) or head not in parts:
        return None
    names = [
        name
        for name, part in parts.items()
        if isinstance(part, Mapping)
        and part.get("effect") is not None
        and part.get("ci") is not None
        and part.get("p_value") is not None
    ]
    if head not in names:
        return None
    raw = [float(parts[name]["p_value"]) for name in names]
    levels = holm_levels(raw, level)
    adjusted = holm(raw)
    bounds: dict[str, tuple[float, float]] = {}
    for name, p, part_level, p_adj in zip(names, raw, levels, adjusted, strict=True):
        part = parts[name]
        bounds[name] = matched_interval(
            float(part["effect"]),
            part["ci"],
            level=part_level,
            significant=significant if name == head else p_adj < level,
            p_value=p,
            confidence_level=float(part.get("confidence_level") or 0.95),
        )
    low, high = bounds[head]
    upper = max(b[1] for b in bounds.values())
    return low, high, upper, 1.0 - 2.0 * levels[names.index(head)]


def _intervals(
    test: Mapping[str, Any], level: float, significant: bool
) -> tuple[float, float, float, float]:
    """The interval at the level matching the test's decision: (low, high, upper, ci_level).

    ``level`` is the one-sided level that matches the test's step in Holm's correction
    (:func:`~synthrisk.stats.holdout.holm_levels`); ``upper`` is the highest upper
    bound of any part (``high`` for a test of one part).
    """
    nested = _part_intervals(test, level, significant)
    if nested is not None:
        return nested
    low, high = matched_interval(
        float(test["effect"]),
        test["ci"],
        level=level,
        significant=significant,
        p_value=float(test["p_value"]),
        confidence_level=float(test.get("confidence_level") or 0.95),
    )
    # a test of parts written without them (older reports): their 95 % upper bound
    upper = max(high, float(test.get("upper", high)))
    return low, high, upper, 1.0 - 2.0 * level


def _test_verdict(
    result: MetricResult,
    test: Mapping[str, Any],
    tolerance: Tolerance,
    p_adjusted: float,
    alpha: float,
    level: float,
) -> MetricVerdict:
    """The verdict of one holdout test.

    ``level`` is the one-sided level matching the test's Holm step: the interval shown
    and compared with the tolerance has each end a one-sided ``1 - level`` bound, so it
    excludes 0 exactly when the test is significant.
    """
    effect = float(test["effect"])
    p_value = float(test["p_value"])
    significant = p_adjusted < alpha
    low, high, upper, ci_level = _intervals(test, level, significant)
    t = tolerance.for_test(test)
    tol = f"{t:.3g}"
    if t > tolerance.value:
        capped = tolerance.ceiling is not None and t >= tolerance.ceiling
        tol += (
            f" (the ceiling; {tolerance.relative:.3g} × the chance rate {float(test['chance']):.3g} is larger)"
            if capped
            else f" ({tolerance.relative:.3g} × the chance rate {float(test['chance']):.3g})"
        )
    n = int(test.get("n", 0))
    statistic = str(test.get("statistic", tolerance.unit))
    pct = level_text(ci_level)
    decision = str(test.get("decision") or tolerance.decision)
    if decision == "significance" and t > 0:
        decision = "interval"  # a user tolerance of some people: judged on the interval
    reach = (
        float(stats.norm.isf(min(max(level, 1e-300), 0.5))) + _Z_POWER
    ) * _standard_error(test)
    if decision == "significance":
        detectable = None if test.get("mde") is None else float(test["mde"])
        underpowered = False
        rule = (
            f"fail if the excess is significant (Holm-adjusted p < {alpha:.3g}); pass otherwise (a "
            f"tolerance of 0 {tolerance.unit.rsplit('(', 1)[-1].rstrip(')') or 'units'})"
        )
    else:
        detectable = t + reach if math.isfinite(reach) else None
        underpowered = math.isfinite(reach) and reach > t
        rule = (
            f"fail if significant (Holm-adjusted p < {alpha:.3g}) and the lower bound > {t:.3g}; pass if the "
            f"upper bound ≤ {t:.3g} (bounds of the {pct} interval, the level that matches the Holm-adjusted "
            "test), or if not significant with the excess within the tolerance where the test cannot tell "
            "an excess at the tolerance from none at this size (80 % power), or if not significant with "
            "every part's excess within the tolerance"
        )
    level_name: Level
    compare = ""
    if test.get("estimate") is not None and test.get("control") is not None:
        compare = f" ({_fmt(float(test['estimate']))} on training rows vs {_fmt(float(test['control']))} for the control)"
        if test.get("compared"):
            compare = f" ({test['compared']})"
    interval = f"{pct} interval [{_fmt(low)}, {_fmt(high)}]"
    few = n < MIN_ROWS and decision != "significance"  # exact tests decide at any size
    next_step = ""
    bound = (
        None if decision == "significance" or significant else _few_to_try(test, level)
    )
    if bound is not None and bound[0] <= t and (few or upper > t):
        # nothing (or almost nothing) to try: the attack's success over the queries
        # asked for bounds the excess, and that bound is within the tolerance
        level_name = "pass"
        underpowered = False
        reason = f"{bound[1]}, within the tolerance {tol}: low risk (excess {_fmt(effect)}{compare}, {interval})."
    elif few and not significant and effect <= t:
        level_name = "pass"
        underpowered = True
        reason = (
            f"too few units ({n}) to judge precisely; excess {_fmt(effect)}, within the tolerance {tol}, "
            f"not significant{compare}, {interval}. It does not hold the verdict back (the per-person "
            "identification test judges copies of people)."
        )
    elif few:
        level_name = "review"
        next_step = _next_step(
            result, test, effect, t, level, (low, high, upper), few=True
        )
        reason = (
            f"inconclusive: too few rows ({n}) to tell the training rows from the holdout rows; "
            f"excess {_fmt(effect)}, {interval}. Next step: {next_step}"
        )
    elif decision == "significance":
        found = (
            ""
            if detectable is None
            else f"; at this size {math.ceil(detectable)} such training people would have been "
            "detected (80 % power)"
        )
        if significant:
            level_name = "fail"
            reason = (
                f"the synthetic table reproduces training people beyond chance{compare}: excess "
                f"{_fmt(effect)}, {interval}, significant (Holm-adjusted p = {p_adjusted:.2g}); any "
                "significant excess fails (tolerance 0)."
            )
        else:
            level_name = "pass"
            reason = f"no significant excess{compare}; excess {_fmt(effect)}, {interval}{found}."
    elif significant and low > t:
        level_name = "fail"
        reason = (
            f"the attack learns materially more about the training rows than about new people: excess "
            f"{_fmt(effect)}{compare}, {interval} entirely above the tolerance {tol}, "
            f"significant (Holm-adjusted p = {p_adjusted:.2g})."
        )
    elif not significant and underpowered and effect <= t and upper > t:
        level_name = "pass"
        reason = (
            f"no significant excess{compare}; excess {_fmt(effect)}, within the tolerance {tol}, "
            f"{interval}. At this size the test only detects an excess above {_fmt(t + reach)} "
            "(80 % power): too imprecise to show the excess within its tolerance, it does not hold the "
            "verdict back (the per-person identification test judges copies of people)."
        )
    elif not significant and upper > t and _largest_effect(test, effect) <= t:
        # no evidence of a leak: not significant, and every part's excess is within the
        # tolerance; only the interval's width (the size, and the multiplicity of a test
        # of many parts) reaches past the tolerance. A review needs evidence: a
        # significant excess, or an excess beyond the tolerance
        level_name = "pass"
        underpowered = True
        reason = (
            f"no significant excess{compare}; excess {_fmt(effect)}"
            + (
                " (the largest of its parts)"
                if isinstance(test.get("parts"), Mapping)
                else ""
            )
            + f", within the tolerance {tol}, {interval}: only the interval's width reaches past "
            f"the tolerance. At this size the test detects an excess above {_fmt(t + reach)} (80 % "
            "power); it does not hold the verdict back."
        )
    elif upper <= t:
        level_name = "pass"
        if not significant:
            reason = (
                f"no evidence of leakage: the attack does no better on the training rows than on new "
                f"people beyond chance{compare}; excess {_fmt(effect)}, {interval} includes 0 and stays "
                f"within the tolerance {tol}."
            )
        else:
            reason = (
                f"a small excess {_fmt(effect)}{compare} is detectable, Holm-adjusted p = {p_adjusted:.2g}, "
                f"but its {interval} stays within the tolerance {tol}."
            )
    else:
        level_name = "review"
        next_step = _next_step(result, test, effect, t, level, (low, high, upper))
        if upper > high:
            part = _widest_part(test, t)
            reason = (
                f"excess {_fmt(effect)}{compare}: the worst part's {interval} is within the "
                f"tolerance {tol}, but {part}'s upper bound ({_fmt(upper)}) is not. Next step: {next_step}"
            )
        elif significant:
            reason = (
                f"a significant excess {_fmt(effect)}{compare}, Holm-adjusted p = {p_adjusted:.2g}, whose "
                f"{interval} reaches both sides of the tolerance {tol}. Next step: {next_step}"
            )
        else:
            reason = (
                f"inconclusive: the {interval} of the excess {_fmt(effect)}{compare} reaches past "
                f"the tolerance {tol}, and the excess is not significant. Next step: {next_step}"
            )
    note = _raised_note(result)
    if note:
        head, marker, tail = reason.partition(" Next step: ")
        reason = head + note + marker + tail
    return MetricVerdict(
        result.metric,
        level_name,
        effect,
        None,
        reason,
        gating=True,
        rule=rule,
        source=tolerance.reasoning,
        statistic=statistic,
        effect=effect,
        ci=(low, high),
        p_value=p_value,
        p_adjusted=p_adjusted,
        tolerance=t,
        ci_level=ci_level,
        detectable=detectable,
        underpowered=bool(
            underpowered
            and level_name == "pass"
            and not significant
            and (few or upper > t)
        ),
        next_step=next_step,
        unit=str(test.get("unit") or ""),
    )


#: targets per side of the inference attack with ``n_attacks="all"`` (as in
#: :mod:`synthrisk.metrics.attacks._common`; the verdict does not import metrics)
_ALL_TARGETS = 10_000
#: a review whose excess sits this close to its tolerance cannot be decided by more rows
_MAX_GROWTH = 100.0


def _raised_note(result: MetricResult) -> str:
    """The sentence saying that this result is a re-run at raised precision, or ""."""
    first: Any = result.breakdown.get(
        "precision_raised"
    )  # a JSON block, read for its numbers
    if not isinstance(first, Mapping):
        return ""
    ci = first.get("ci")
    was = ""
    if isinstance(ci, Sequence) and len(ci) == 2 and None not in ci:
        was = f" (excess {_fmt(float(first['effect']))}, interval [{_fmt(float(ci[0]))}, {_fmt(float(ci[1]))}])"
    params = first.get("params") if isinstance(first.get("params"), Mapping) else {}
    targets = params.get("n_attacks") if isinstance(params, Mapping) else None
    size = "" if targets is None else f" with {targets} targets per side"
    return (
        f" The default run{size} reached past the tolerance{was}, so this is a re-run with "
        "raised precision (every training and holdout row as a target)."
    )


def _few_to_try(test: Mapping[str, Any], level: float) -> tuple[float, str] | None:
    """The bound on a singling-out risk from what the attacker could try, in words.

    A singling-out test reports the queries asked for (``n_requested``), the queries
    the synthetic table offered (``n``: each singles out one synthetic row) and the
    successes on each side (``successes``, ``control_successes``: queries that single
    out exactly one training, resp. holdout, person at equal sizes). The excess is at
    most the training side's success over the queries asked for; its one-sided
    Clopper–Pearson upper bound at ``level`` (over the ``n`` queries offered, scaled by
    ``n / n_requested``) is returned with the sentence that states it. None for other
    tests.
    """
    requested, successes = test.get("n_requested"), test.get("successes")
    n = int(test.get("n") or 0)
    if requested is None or successes is None or int(requested) <= 0 or n <= 0:
        return None
    requested = int(requested)
    k = min(max(math.ceil(float(successes) - 1e-9), 0), n)
    rate = (
        1.0
        if k >= n
        else float(stats.beta.ppf(1.0 - min(max(level, 1e-300), 0.5), k + 1, n - k))
    )
    bound = rate * n / max(requested, n)
    control = float(test.get("control_successes") or 0.0)
    if n < requested:
        offered = (
            f"only {n:,} of the {requested:,} singling-out queries asked for could be written on the "
            "synthetic table (it offers few rare values or extremes to single out), and "
            f"{_count(float(successes))} of them single out a training person ({_count(control)} a "
            "holdout person)"
        )
    else:
        offered = (
            f"only {_count(float(successes))} of the {n:,} singling-out queries single out a training "
            f"person ({_count(control)} a holdout person)"
        )
    words = (
        f"{offered}: at most {_fmt(bound)} of the queries asked for single out a training person "
        f"(one-sided {level_text(1.0 - level)} upper bound), which bounds the excess"
    )
    return bound, words


def _count(value: float) -> str:
    """A count of queries, averaged over equal-size subsamples: whole when it is."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _part_effect(test: Mapping[str, Any], upper: float) -> float:
    """The excess of the part whose matched upper bound is ``upper`` (the headline's without parts).

    The part is the one with the highest 95 % upper bound, the one that sets ``upper``.
    """
    parts = test.get("parts")
    if isinstance(parts, Mapping):
        named = [
            p
            for p in parts.values()
            if isinstance(p, Mapping) and p.get("ci") and p.get("effect") is not None
        ]
        if named:
            worst = max(named, key=lambda p: float(p["ci"][1]))
            return float(worst["effect"])
    return float(test["effect"])


def _widest_part(test: Mapping[str, Any], t: float) -> str:
    """The part (column) whose 95 % upper bound is the highest, in words."""
    parts = test.get("parts")
    if not isinstance(parts, Mapping) or not parts:
        return "another part"
    name = max(
        (p for p in parts if isinstance(parts[p], Mapping) and parts[p].get("ci")),
        key=lambda p: float(parts[p]["ci"][1]),
        default=None,
    )
    return "another part" if name is None else f"the {name!r} column"


def _next_step(
    result: MetricResult,
    test: Mapping[str, Any],
    effect: float,
    t: float,
    level: float,
    bounds: tuple[float, float, float],
    *,
    few: bool = False,
) -> str:
    """One concrete step that would decide a review: a parameter, or the size that would.

    A metric whose precision a parameter raises gets that parameter (the inference
    attack's every-row targets, more singling-out queries where the table offers them);
    otherwise the holdout size at which the interval's half-width, shrinking as
    ``1 / sqrt(n)``, would end on one side of the tolerance.
    """
    metric = result.metric
    params = result.params or {}
    n = int(test.get("n") or 0)
    if metric == "inference" and params.get("n_attacks") != "all" and not few:
        return (
            f"--param inference.n_attacks=all (every training and holdout row as a target, up to "
            f'{_ALL_TARGETS:,} each; `{{"inference": {{"n_attacks": "all"}}}}` as `params=` in Python).'
        )
    low, _, upper = bounds
    if effect > t:  # to fail, the lower bound must rise above the tolerance
        reach, gap = effect - low, effect - t
    else:  # to pass, the upper bound (of every part) must fall to the tolerance
        part = _part_effect(test, upper)
        reach, gap = upper - part, t - part
    growth = (reach / gap) ** 2 if gap > 0 and math.isfinite(reach) else math.inf
    if few:
        growth = max(growth, MIN_ROWS / max(n, 1))
    if few and metric.startswith("singling_out") and test.get("successes") is not None:
        return (
            f"inspect the training rows that the {_count(float(test['successes']))} successful "
            "queries single out: the result's `successful_queries` lists the queries, and "
            "`--include-records` writes the rows (`singled_out_real`) to the JSON."
        )
    if (
        metric.startswith("singling_out")
        and test.get("n_requested") is not None
        and n >= int(test["n_requested"])
        and math.isfinite(growth)
        and growth <= _MAX_GROWTH
    ):
        # the table offered every query asked for: more may be there
        queries = max(math.ceil(n * growth), n + 1)
        return (
            f"--param {metric}.n_attacks={queries} (more queries: the interval's half-width shrinks "
            f"as 1/sqrt(queries); the table offered all {n:,} asked for)."
        )
    if not math.isfinite(growth) or growth > _MAX_GROWTH:
        return (
            f"the excess ({_fmt(effect)}) sits at the tolerance ({t:.3g}), where no affordable size "
            "decides it: inspect the training rows the result lists (`--include-records` writes them "
            "to the JSON) and set the tolerance you accept under `thresholds: tolerances:`."
        )
    growth = max(growth, 1.05)
    target = math.ceil(growth * n) if n else None
    size = (
        "" if target is None else f" (the test's {n:,} units would be about {target:,})"
    )
    return (
        f"a holdout about {growth:.2g} times as large, with the training table grown "
        f"alike{size}: the interval's half-width shrinks as 1/sqrt(rows) and would then end on "
        f"one side of the tolerance {t:.3g}."
    )


def _largest_effect(test: Mapping[str, Any], effect: float) -> float:
    """The largest excess of a test's parts (its own excess for a test of one part)."""
    parts = test.get("parts")
    if not isinstance(parts, Mapping):
        # a test of parts written without them (older reports): their excesses are unknown
        return math.inf if test.get("upper") is not None else effect
    values = [
        float(part["effect"])
        for part in parts.values()
        if isinstance(part, Mapping)
        and part.get("effect") is not None
        and math.isfinite(float(part["effect"]))
    ]
    return max([effect, *values])


#: the power at which a test's detectable excess is stated
POWER = 0.8
_Z_POWER = float(stats.norm.ppf(POWER))


def _standard_error(test: Mapping[str, Any]) -> float:
    """The test's standard error: its own ``se``, or its interval's half-width over z."""
    if test.get("se") is not None and math.isfinite(float(test["se"])):
        return float(test["se"])
    ci = test.get("ci")
    if not ci or ci[0] is None or ci[1] is None:
        return math.nan
    z = float(stats.norm.ppf(0.5 + float(test.get("confidence_level") or 0.95) / 2))
    low, high = float(ci[0]), float(ci[1])
    if not (math.isfinite(low) and math.isfinite(high)) or z <= 0:
        return math.nan
    return (high - low) / (2.0 * z)


def _info_verdict(
    result: MetricResult, reason: str, test: Mapping[str, Any] | None
) -> MetricVerdict:
    effect = ci = p = ci_level = None
    statistic = unit = ""
    if test is not None:
        unit = str(test.get("unit") or "")
        effect = float(test["effect"])
        ci = (float(test["ci"][0]), float(test["ci"][1]))
        ci_level = float(test.get("confidence_level") or 0.95)
        p = None if test.get("p_value") is None else float(test["p_value"])
        statistic = str(test.get("statistic", ""))
    return MetricVerdict(
        result.metric,
        "info",
        result.score,
        None,
        reason,
        gating=False,
        rule="does not gate",
        statistic=statistic,
        effect=effect,
        ci=ci,
        p_value=p,
        skipped=_skipped(result) is not None,
        ci_level=ci_level,
        unit=unit,
    )


def _plan(
    result: MetricResult, thresholds: Thresholds, has_holdout: bool
) -> tuple[str, Any]:
    """How one result is judged: ("skip" | "score" | "test" | "info", payload)."""
    skipped = _skipped(result)
    if skipped is not None:
        return "info", f"skipped: {skipped}"
    threshold = thresholds.for_result(result)
    if threshold is not None:
        return "score", threshold
    test = _holdout_test(result)
    tolerance = thresholds.tolerance(result.metric)
    if result.metric in INFORMATIONAL:
        return "info", INFORMATIONAL[result.metric]
    if test is not None and tolerance is not None:
        return "test", (test, tolerance)
    if not has_holdout:
        return "info", "informational without a holdout: " + _NO_HOLDOUT
    if result.score is None:
        return (
            "info",
            "informational: the score is undefined (see the metric's warnings).",
        )
    return "info", (
        f"informational: {result.metric!r} has no holdout-controlled test or tolerance; add a threshold "
        "under `thresholds` to make it gate."
    )


def judge_result(
    result: MetricResult, thresholds: Thresholds | None = None
) -> MetricVerdict:
    """The verdict on one result on its own (no multiple-testing correction)."""
    thresholds = Thresholds() if thresholds is None else thresholds
    kind, payload = _plan(result, thresholds, has_holdout=True)
    if kind == "score":
        return _score_verdict(result, payload, thresholds.conservative)
    if kind == "test":
        test, tolerance = payload
        alpha = thresholds.alpha
        return _test_verdict(
            result, test, tolerance, float(test["p_value"]), alpha, alpha
        )
    return _info_verdict(result, payload, _holdout_test(result))


def judge(
    report: EvaluationReport | Mapping[str, Any], thresholds: Thresholds | None = None
) -> Verdict:
    """Judge every result of ``report`` (an :class:`EvaluationReport` or its JSON dict).

    The p-values of all gating holdout tests are adjusted together (Holm), so that a
    generator that never saw the training rows passes with probability of about
    ``1 - alpha`` however many metrics run.

    Examples
    --------
    >>> from synthrisk import EvaluationReport, MetricResult
    >>> test = {"effect": 0.2, "ci": [0.15, 0.25], "p_value": 1e-9, "n": 1000}
    >>> r = EvaluationReport("0.1.0", 0, {"holdout": {"rows": 1000}},
    ...     (MetricResult("dcr_share", 0.7, {"holdout_test": test}, higher_is_safer=False),))
    >>> judge(r).overall
    'fail'
    """
    if not isinstance(report, EvaluationReport):
        report = EvaluationReport.from_dict(report)
    thresholds = Thresholds() if thresholds is None else thresholds
    inputs = report.inputs or {}
    if "holdout" in inputs:
        has_holdout = inputs.get("holdout") is not None
    else:
        has_holdout = any(_holdout_test(r) is not None for r in report.results)
    plans = [_plan(r, thresholds, has_holdout) for r in report.results]
    tests = [i for i, (kind, _) in enumerate(plans) if kind == "test"]
    raw = [float(plans[i][1][0]["p_value"]) for i in tests]
    p_adj = dict(zip(tests, holm(raw), strict=True))
    levels = dict(zip(tests, holm_levels(raw, thresholds.alpha), strict=True))
    verdicts = []
    for i, (result, (kind, payload)) in enumerate(
        zip(report.results, plans, strict=True)
    ):
        if kind == "score":
            verdicts.append(_score_verdict(result, payload, thresholds.conservative))
        elif kind == "test":
            test, tolerance = payload
            verdicts.append(
                _test_verdict(
                    result, test, tolerance, p_adj[i], thresholds.alpha, levels[i]
                )
            )
        else:
            verdicts.append(_info_verdict(result, payload, _holdout_test(result)))
    too_few = _too_few_rows(inputs, thresholds.alpha, len(tests))
    if too_few:
        verdicts = [
            dataclasses.replace(
                v,
                level="review",
                reason="too few rows to judge: see the verdict's reason.",
            )
            if kind == "test" and v.level == "pass"
            else v
            for v, (kind, _) in zip(verdicts, plans, strict=True)
        ]
    gating = [v.level for v in verdicts if v.gating]
    findings = _findings(report, thresholds.policy, verdicts) if has_holdout else ()
    overall = _worst(gating)
    if gating or findings:
        overall = _worst([*gating, *(f.level for f in findings)])
    capped = _holdout_cap(inputs)
    if capped is not None:
        overall = _worst([overall, "review"])
    if not has_holdout:
        overall = _worst([*gating, "review"])
        reason = "review: " + _NO_HOLDOUT
        if overall == "fail":
            reason = "fail: a user threshold failed. " + _NO_HOLDOUT
    elif not gating:
        reason = "review: no metric of this run gates (no holdout test ran and no threshold was given)."
    else:
        counts = {level: gating.count(level) for level in LEVELS}
        reason = (
            f"{overall}: {counts['pass']} of {len(gating)} gating tests pass, {counts['review']} need review, "
            f"{counts['fail']} fail (Holm-corrected at {thresholds.alpha:.3g} across the run)."
        )
        flagged = [f for f in findings if f.level in ("review", "fail")]
        if len(flagged) == 1:
            reason += f" One finding reads {flagged[0].level}: {_finding_headline(flagged[0])}"
        elif flagged:
            reason += f" {len(flagged)} findings: " + " ".join(
                f"({i}, {f.level}) {_finding_headline(f)}"
                for i, f in enumerate(flagged, 1)
            )
        reason += _power_sentence(verdicts, findings)
    if capped is not None:
        reason += capped
    if too_few:
        overall = "fail" if overall == "fail" else "review"
        reason = f"{overall}: {too_few}" + (
            " A user threshold fails." if overall == "fail" else ""
        )
    return Verdict(
        overall=overall,
        metrics=tuple(verdicts),
        conservative=thresholds.conservative,
        reason=reason,
        alpha=thresholds.alpha,
        correction="holm",
        findings=findings,
        policy=thresholds.policy,
        too_few_rows=too_few,
    )


def fewest_rows(alpha: float, n_tests: int) -> int:
    """Fewest rows of each table for any test of a run to detect a leak.

    With ``n_tests`` gating tests, Holm's correction asks the most significant of them
    for a p-value below ``alpha / n_tests``; the exact per-person test
    (:func:`synthrisk.stats.exact.fewest_people`) reaches it with at least this many
    people on each side, every one of them reached on the training side and none on
    the holdout side. The other tests (shares of rows, rates of attacks) need at least
    as many rows. Default run (9 gating tests, alpha 0.05): 4.
    """
    return fewest_people(alpha / max(int(n_tests), 1))


def _too_few_rows(inputs: Mapping[str, Any], alpha: float, n_tests: int) -> str:
    """The one reason a run is too small to judge (empty when it is not)."""
    rows: dict[str, int] = {}
    for name in ("real", "synthetic", "holdout"):
        entry = inputs.get(name)
        if isinstance(entry, Mapping) and isinstance(entry.get("rows"), int):
            rows[name] = int(entry["rows"])
    need = fewest_rows(alpha, n_tests)
    if not rows or min(rows.values()) >= need:
        return ""
    sizes = ", ".join(f"{name} {n:,}" for name, n in rows.items())
    return (
        f"too few rows to judge: {sizes}; at least {need} of each are needed for any test "
        f"to detect a leak (the exact test of people reaches significance at "
        f"{alpha:.3g} / {max(n_tests, 1)} gating tests only from {need} people on each side)."
    )


def _finding_headline(finding: Finding) -> str:
    """The finding in one sentence, for the verdict's reason (its summary has the details)."""
    if finding.kind != "copied_people":
        return (
            f"{finding.title.lower()}: {_people_text(finding.count)} {REPLAY_FINDINGS[finding.metric][1]} "
            "that a synthetic row carries (see the finding)."
        )
    model = finding.chance or {}
    k = int(model.get("identified") or 0)
    exact = int(model.get("exact") or 0)
    expected = float(model.get("expected_identified") or 0.0)
    p = float(model.get("p_value", 1.0))
    p_text = "p < 1e-12" if p < 1e-12 else f"p = {p:.2g}"
    if finding.policy == "strict":
        return (
            "the strict policy tolerates no synthetic row that copies a training person "
            "(see the finding)."
        )
    return (
        f"{_people_text(k)} a synthetic row that copies their record ({exact} exactly), where "
        f"chance explains about {expected:.1f} ({p_text} under the chance model; see the "
        "finding)."
    )


def _people_text(n: int) -> str:
    """``1 training person has`` / ``3 training people have``."""
    return f"{n} training {'person has' if n == 1 else 'people have'}"


def _findings(
    report: EvaluationReport, policy: str, verdicts: Sequence[MetricVerdict] = ()
) -> tuple[Finding, ...]:
    """The per-person findings of the run under ``policy``: copied people, then the
    people whose identifiers, text, rows, rare values or known combinations a
    synthetic row carries."""
    out = list(_copied_findings(report, policy))
    levels = {v.metric: v.level for v in verdicts if v.gating and not v.skipped}
    for result in report.results:
        if result.metric in REPLAY_FINDINGS and _skipped(result) is None:
            finding = _replay_finding(result, policy, levels.get(result.metric))
            if finding is not None:
                out.append(finding)
    return tuple(out)


#: the replay metrics whose results make a finding: (kind, what is replayed, whether the
#: strict policy fails on a value one person holds — identifiers, text and rows
#: disclose the person by themselves; a rare value or combination points at them)
REPLAY_STEPS: Mapping[str, str] = {
    "identifier_replay": "replace identifier columns with fake values before training (SDV's PII "
    "sdtypes do this), or leave them out of the release",
    "text_replay": "leave free text out of the training data, or redact names, numbers and "
    "identifiers in it and train on the redacted text",
    "row_string_replay": "the generator writes training rows back as text: train with fewer epochs "
    "or with differential privacy, and deduplicate its output against the training rows",
    "rare_value_replay": "group values that few people hold into broader ones (or suppress them) "
    "before training, or train with differential privacy",
    "quasi_identifier_replay": "coarsen the known columns (dates of birth to years, postcodes to "
    "areas) before training, or train with differential privacy",
}

REPLAY_FINDINGS: Mapping[str, tuple[str, str, bool]] = {
    "identifier_replay": ("replayed_identifiers", "an identifier", True),
    "text_replay": ("replayed_text", "free text", True),
    "row_string_replay": ("replayed_rows", "their row, written as text,", True),
    "rare_value_replay": ("rare_values", "a rare value", False),
    "quasi_identifier_replay": (
        "singled_out_people",
        "a combination of known values that singles them out",
        False,
    ),
}


def _replay_how(entry: Mapping[str, Any]) -> str:
    """Which column carried a replayed person, and how (``email, exact``)."""
    columns = entry.get("columns")
    where = (
        " + ".join(str(c) for c in columns)
        if isinstance(columns, (list, tuple))
        else str(entry.get("column", ""))
    )
    match = entry.get("match")
    if isinstance(match, (list, tuple)):
        match = ", ".join(str(m) for m in match)
    jaccard = entry.get("jaccard")
    how = f"{where}, {match}" if match else where
    if isinstance(jaccard, (int, float)) and jaccard < 1:
        how += f" (Jaccard {float(jaccard):.2f})"
    return how


def _replay_finding(
    result: MetricResult, policy: str, metric_level: str | None
) -> Finding | None:
    """The finding of one replay metric: the people it found, judged under ``policy``."""
    kind, what, strict_fails = REPLAY_FINDINGS[result.metric]
    breakdown: Mapping[str, Any] = result.breakdown
    model: Any = breakdown.get("chance_model")
    total = int(breakdown.get("replayed_training") or 0)
    unique = int(breakdown.get("unique_replayed_training") or 0)
    if not isinstance(model, Mapping) and not total:
        return None
    model = dict(model) if isinstance(model, Mapping) else {}
    people: tuple[dict[str, Any], ...] = tuple(
        {
            "real_rows": list(entry.get("rows") or ()),
            "synthetic_rows": list(entry.get("synthetic_rows") or ()),
            "how": _replay_how(entry),
        }
        for entry in (breakdown.get("replayed") or ())[:FINDING_LIST]
        if isinstance(entry, Mapping)
    )
    test = breakdown.get("holdout_test") or {}
    compared = str(test.get("compared") or "")
    held = int(breakdown.get("replayed_holdout") or 0)
    found = (
        f"{_people_text(total)} {what} that a synthetic row carries ({unique} through a "
        f"value only they hold); holdout people: {held}"
    )
    chance = ""
    if model:
        p_value = float(model.get("p_value", 1.0))
        p_text = "p < 1e-12" if p_value < 1e-12 else f"p = {p_value:.2g}"
        where = model.get("column") or " + ".join(map(str, model.get("columns") or ()))
        chance = (
            f"; in {where}, {int(model.get('replayed') or 0)} of {int(model.get('training_singletons') or 0)} "
            "training people replayed through a value only they hold, where chance explains about "
            f"{float(model.get('expected') or 0.0):.1f} ({p_text}, Bonferroni across the columns; "
            "valid when the generator's rows behave like draws from the population)"
        )
    rows = sorted({r for p in people for r in p["synthetic_rows"]})
    shown = ", ".join(str(r) for r in rows[:12]) + (" …" if len(rows) > 12 else "")
    step = (
        f"inspect synthetic rows {shown}; {REPLAY_STEPS[result.metric]}, and regenerate "
        "(removing the rows leaves the next rarest people exposed)"
        if rows
        else ""
    )
    significant = bool(model.get("significant"))
    if metric_level == "fail":
        level = "fail"
        summary = (
            f"{found}: significantly more than the holdout people ({compared}){chance}."
        )
    elif policy == "strict" and unique and strict_fails:
        level = "fail"
        summary = (
            f"{found}{chance}. The strict policy tolerates no real person's own identifier, "
            "text or row in the release, whatever chance explains."
        )
    elif significant or (policy == "strict" and unique):
        level = "review"
        summary = (
            f"{found}{chance}: more than chance explains."
            if significant
            else f"{found}{chance}. The strict policy asks for review of any value one "
            "training person alone holds in the release."
        )
    else:
        level, step = "pass", ""
        summary = (
            f"{found}{chance}: no more than chance explains."
            if total
            else f"no synthetic row carries {what} of a training person."
        )
    return Finding(
        kind=kind,
        metric=result.metric,
        level=level,
        policy=policy,
        summary=summary,
        next_step=step,
        people=people,
        chance=model or None,
        total=total,
    )


def _copied_findings(report: EvaluationReport, policy: str) -> tuple[Finding, ...]:
    """The copied-people findings (the identification metric's chance model)."""
    out = []
    for result in report.results:
        if result.metric != "identification" or _skipped(result) is not None:
            continue
        breakdown: Mapping[str, Any] = result.breakdown
        model: Any = breakdown.get("chance_model")
        if not isinstance(model, Mapping):
            continue
        k = int(model.get("identified") or 0)
        k_exact = int(model.get("exact") or 0)
        people: tuple[dict[str, Any], ...] = tuple(
            {
                "real_rows": list(entry.get("rows") or ()),
                "synthetic_rows": list(entry.get("synthetic_rows") or ()),
                "exact": bool(entry.get("exact")),
                "ratio": entry.get("ratio"),
                "isolation": entry.get("isolation"),
            }
            for entry in (breakdown.get("identified") or ())[:FINDING_LIST]
            if isinstance(entry, Mapping)
        )
        rows = sorted({r for p in people for r in p["synthetic_rows"]})
        shown = ", ".join(str(r) for r in rows[:12]) + (" …" if len(rows) > 12 else "")
        copied = (
            f"{_people_text(k)} a synthetic row that copies their record ({k_exact} exactly, "
            f"{k - k_exact} nearly)"
        )
        expected = float(model.get("expected_identified") or 0.0)
        upper = float(model.get("upper_identified") or 0.0)
        p_value = float(model.get("p_value", 1.0))
        p_text = "p < 1e-12" if p_value < 1e-12 else f"p = {p_value:.2g}"
        chance = (
            f"chance explains about {expected:.1f} (95 % upper bound {upper:.1f}; {p_text} under "
            "the chance model, valid when the generator's rows behave like draws from the population)"
        )
        filter_step = (
            f"inspect synthetic rows {shown}; `synthrisk filter` writes the table without them and "
            "re-assesses it, but regenerating is safer: the next most isolated people become the "
            "exposed ones (the privacy onion)"
        )
        components: Any = model.get("components") or {}
        strict_near = int(components.get("strict_near") or 0)
        if policy == "strict":
            if k_exact + strict_near > 0:
                level, summary = (
                    "fail",
                    (
                        f"{_people_text(k_exact + strict_near)} a synthetic row that copies their "
                        f"record ({k_exact} exactly, {strict_near} within the strict near-copy threshold "
                        f"{float(components.get('strict_threshold') or 0):.3g}): the strict policy "
                        f"tolerates none, whatever chance explains ({chance})."
                    ),
                )
                step = filter_step
            else:
                level, step = "pass", ""
                summary = (
                    "no synthetic row reproduces a training person's record exactly or within the "
                    f"strict near-copy threshold {float(components.get('strict_threshold') or 0):.3g}"
                    + (
                        f"; {k} near copies within the identification's looser threshold, where "
                        f"{chance}."
                        if k
                        else "."
                    )
                )
        elif bool(model.get("significant")) and k > 0:
            level, summary = "review", f"{copied}, more than {chance}."
            step = filter_step
        else:
            level = "pass"
            summary = (
                f"{copied}; {chance}: no more than chance explains."
                if k
                else "no synthetic row copies a training person's record, exactly or nearly."
            )
            step = ""
        out.append(
            Finding(
                kind="copied_people",
                metric=result.metric,
                level=level,
                policy=policy,
                summary=summary,
                next_step=step,
                people=people,
                chance=dict(model),
            )
        )
    return tuple(out)


def _holdout_cap(inputs: Mapping[str, Any]) -> str | None:
    """The reason the holdout check caps the verdict at review (None: no cap).

    Reads ``inputs["holdout_check"]`` (:mod:`synthrisk.holdout_check`), so that a report
    re-read from JSON is capped as the run was.
    """
    block = inputs.get("holdout_check")
    if not isinstance(block, Mapping) or block.get("caps_at") is None:
        return None
    found = []
    if isinstance(block.get("overlap"), Mapping) and block["overlap"].get("excess"):
        found.append("overlaps the training table")
    people = block.get("repeated_people")
    if isinstance(people, Mapping) and people.get("likely"):
        found.append("likely shares people with the training table (no person key)")
    population = block.get("population")
    if isinstance(population, Mapping) and population.get("shifted"):
        found.append("comes from another population")
    why = " and ".join(found) or "failed its check"
    return (
        f" At most review: the holdout {why}, so the holdout control is not valid "
        "(see the caveats led by inputs)."
    )


def _power_sentence(
    verdicts: Sequence[MetricVerdict], findings: Sequence[Finding] = ()
) -> str:
    """What the run could have caught at this size, in words, and whom it covers."""
    out = []
    for v in verdicts:
        if v.metric == "identification" and v.gating and v.detectable is not None:
            out.append(
                f" At this size the holdout-controlled test detects copies of {math.ceil(v.detectable)} "
                "training people among the most isolated 1–5 % (80 % power); copies of ordinary people "
                "are judged by the chance model."
            )
    for finding in findings:
        model = finding.chance or {}
        if finding.kind != "copied_people":
            continue
        if finding.policy == "statistical" and model.get("detectable") is not None:
            exact = int(model["detectable"])
            near = int(model.get("detectable_near") or 0)
            out.append(
                f" The chance model flags exact copies of {exact} ordinary training "
                f"{'person' if exact == 1 else 'people'} with a record of their own beyond chance "
                f"({near} if near copies), for review."
            )
    quiet = [v.metric for v in verdicts if v.underpowered]
    if quiet:
        out.append(
            f" Too imprecise at this size to show their excess within tolerance, and not significant: "
            f"{', '.join(quiet)} (they pass; their sections say what they would detect)."
        )
    return "".join(out)


def _worst(levels: Sequence[str]) -> str:
    if not levels:
        return "review"
    return max(levels, key=lambda level: _RANK[level])  # type: ignore[index]
