# SPDX-License-Identifier: BSD-3-Clause
"""The audit's result: frozen, JSON-safe, with row numbers and never record values.

JSON (``AuditResult.to_dict``; ``schema_version`` 1)::

    {"schema_version": 1, "kind": "generator_audit", "generator": str,
     "threat_model": {"attacker_knows": str, "attacker_holds": str, "targets": str,
                      "game": str, "guarantee": str},
     "settings": {"n_runs_requested": int, "n_targets": int, "target_rows": [int],
                  "train_size": int, "n_synthetic": int, "selection_share": float,
                  "delta": float, "confidence_level": float,
                  "attack_confidence_level": float, "multiplicity": str,
                  "attacks": [str], "classifier": str, "seed": int, "n_jobs": int,
                  "max_seconds": float | null, "run_timeout": float | null},
     "runs": {"completed": int, "selection": int, "evaluation": int, "failed": int,
              "retried": int, "cached": int, "stopped_early": str | null,
              "generator_seconds": float, "audit_seconds": float, "setup_seconds": float,
              "scoring_seconds": float, "bounds_seconds": float, "total_seconds": float},

``generator_seconds`` add up the generator calls (over all workers); ``audit_seconds`` is
the audit's own work in this process: ``setup_seconds`` once (validating the tables,
choosing targets, the auxiliary densities), ``scoring_seconds`` per run (building training
tables, encoding and scoring outputs) and ``bounds_seconds`` once (the classifier and the
bounds).
     "epsilon_lower": float, "best_attack": str | null,
     "selected_targets": "natural" | "canaries" | null,
     "epsilon_lower_natural": float | null,
     "epsilon_lower_one_run": float | null,
     "bounds": {"selected": float, "selected_attack": str | null,
                "selected_method": "guesses" | "clopper_pearson" | null,
                "clopper_pearson": float, "one_run": float | null, "guesses": float,
                "trade_off": float, "gdp_mu": float},
     "overall": {attack: {"auc", "tpr_at_fpr", "epsilon_lower", "threshold",
                          "direction", "tpr", "fpr", "n_members", "n_non_members",
                          "epsilon_lower_one_run", "roc": {"fpr": [float],
                          "tpr": [float]} | null, "epsilon_lower_guesses",
                          "guesses": {"direction", "low", "high", "correct",
                                      "n_guesses"}, "epsilon_lower_trade_off",
                          "mu_lower"}},
     "canaries": {"n_canaries": int, "epsilon_lower": float,
                  "best_attack": str | null, "epsilon_lower_one_run": float | null,
                  "bounds": {...as above...}, "overall": {attack: {...}}} | null,
     "targets": [{"row": int | null, "source": "vulnerable" | "named" | "canary",
                  "canary": int | null, "isolation": float,
                  "n_included": int, "epsilon_lower": float, "best_attack": str | null,
                  "attacks": {attack: {...}}}],
     "failures": [{"run": int, "error": str}],
     "retries": [{"run": int, "error": str}]}

``roc`` is the attack's ROC curve on the evaluation runs (at most 101 points; for the
pooled ``overall`` entry, of the scores pooled as for the bound). ``failures`` are runs
left out (failed twice); ``retries`` the first failures of runs whose retry succeeded
(``runs.retried`` is its length; a run that failed twice counts in ``runs.failed`` only).
``overall``, ``bounds`` and ``epsilon_lower_one_run`` pool the natural targets (real
people); ``canaries`` pools the crafted canaries the same way (None without canaries). A
canary is a target with ``row`` None and ``canary`` its number: its values are never
written.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any, Literal

from synthrisk._typing import JSONValue
from synthrisk.audit.bounds import Bound, SelectedBound, epsilon_lower_bound
from synthrisk.audit.guessing import guess_epsilon
from synthrisk.exceptions import ParameterError
from synthrisk.results import to_jsonable

__all__ = [
    "AUDIT_SCHEMA_VERSION",
    "AuditResult",
    "AuditVerdict",
    "CanaryAudit",
    "RunFailure",
    "TargetAudit",
    "method_bounds",
]

AUDIT_SCHEMA_VERSION = 1


def method_bounds(
    overall: Mapping[str, Bound], selected: SelectedBound
) -> dict[str, JSONValue]:
    """Each method's pooled bound side by side (the ``bounds`` of the JSON).

    ``selected`` (the headline: one test chosen on the selection runs, at the full
    confidence level) with its ``selected_attack`` and ``selected_method``; then the
    largest over the attacks of each method's per-attack bound (each at the attack's
    Bonferroni level, so each maximum holds at the full level on its own; the methods'
    maxima are shown together, not combined): ``clopper_pearson``, ``one_run`` (None
    when δ > 0), ``guesses``, ``trade_off`` and ``gdp_mu`` (the Gaussian-DP μ refuted).
    """

    def top(field: str) -> float | None:
        values = [getattr(b, field) for b in overall.values()]
        present = [float(v) for v in values if v is not None]
        return max(present, default=0.0) if present or not values else None

    return {
        "selected": selected.epsilon_lower,
        "selected_attack": selected.attack,
        "selected_method": selected.method,
        "clopper_pearson": top("epsilon_lower"),
        "one_run": top("epsilon_lower_one_run"),
        "guesses": top("epsilon_lower_guesses"),
        "trade_off": top("epsilon_lower_trade_off"),
        "gdp_mu": top("mu_lower"),
    }


def _bound_dict(bound: Bound) -> dict[str, JSONValue]:
    return to_jsonable(dataclasses.asdict(bound))


def _bound_from(data: Mapping[str, Any]) -> Bound:
    values = dict(data)
    values["tpr"] = tuple(values["tpr"])
    values["fpr"] = tuple(values["fpr"])
    values["tpr_at_fpr"] = dict(values["tpr_at_fpr"])
    if values.get("roc") is not None:
        values["roc"] = {k: list(v) for k, v in values["roc"].items()}
    return Bound(**values)


@dataclasses.dataclass(frozen=True)
class TargetAudit:
    """One target's audit.

    Attributes
    ----------
    row : int or None
        The target's 0-based row in the ``real`` table (None for a canary).
    source : {"vulnerable", "named", "canary"}
        Chosen by the isolation rule, named by the user, or a crafted canary
        (:mod:`synthrisk.audit.canaries`).
    isolation : float
        Distance to the nearest other real person (0: another real person shares the
        record); for a canary, to the nearest real or holdout row.
    n_included : int
        Completed runs whose training set held the target.
    attacks : dict of str to Bound
        Each attack's result on this target's evaluation runs.
    epsilon_lower : float
        The largest bound over the attacks.
    best_attack : str or None
        The attack that reached it (None when no attack refuted any ε).
    canary : int or None
        A canary's number (0-based, in the order crafted); None for a real person.
    """

    row: int | None
    source: Literal["vulnerable", "named", "canary"]
    isolation: float
    n_included: int
    attacks: dict[str, Bound]
    epsilon_lower: float
    best_attack: str | None
    canary: int | None = None

    @property
    def label(self) -> str:
        """``"row 17"`` for a real person, ``"canary 2"`` for a canary."""
        return f"canary {self.canary}" if self.row is None else f"row {self.row}"

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form."""
        return {
            "row": self.row,
            "source": self.source,
            "canary": self.canary,
            "isolation": to_jsonable(self.isolation),
            "n_included": self.n_included,
            "epsilon_lower": self.epsilon_lower,
            "best_attack": self.best_attack,
            "attacks": {name: _bound_dict(b) for name, b in self.attacks.items()},
        }


@dataclasses.dataclass(frozen=True)
class CanaryAudit:
    """The canaries' bounds, pooled over the canaries as ``overall`` pools the real people.

    Attributes
    ----------
    n_canaries : int
        Canaries inserted (each joins each shadow training set with probability 1/2).
    epsilon_lower : float
        The one test chosen on the selection runs among the attacks' tests on the
        canaries, counted on the evaluation runs at the full confidence level: the
        generator's worst case as these canaries show it.
    best_attack : str or None
        The attack of that test.
    overall : dict of str to Bound
        Each attack's result pooled over the canaries.
    bounds : dict
        Each method's bound side by side (:func:`method_bounds`).
    epsilon_lower_one_run : float or None
        The largest one-run bound over the attacks (None when δ > 0).
    """

    n_canaries: int
    epsilon_lower: float
    best_attack: str | None
    overall: dict[str, Bound]
    bounds: dict[str, JSONValue]
    epsilon_lower_one_run: float | None = None

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form."""
        return {
            "n_canaries": self.n_canaries,
            "epsilon_lower": self.epsilon_lower,
            "best_attack": self.best_attack,
            "epsilon_lower_one_run": self.epsilon_lower_one_run,
            "bounds": to_jsonable(self.bounds),
            "overall": {name: _bound_dict(b) for name, b in self.overall.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CanaryAudit:
        """Rebuild from :meth:`to_dict`."""
        return cls(
            n_canaries=int(data["n_canaries"]),
            epsilon_lower=float(data["epsilon_lower"]),
            best_attack=data["best_attack"],
            overall={k: _bound_from(v) for k, v in data["overall"].items()},
            bounds=dict(data.get("bounds") or {}),
            epsilon_lower_one_run=data.get("epsilon_lower_one_run"),
        )


@dataclasses.dataclass(frozen=True)
class RunFailure:
    """A shadow run whose generator failed (twice: the audit went on without it; or once, then retried)."""

    run: int
    error: str


@dataclasses.dataclass(frozen=True)
class AuditVerdict:
    """Pass, review or fail of an audit against a largest acceptable ε.

    Attributes
    ----------
    passed : bool
        True when the audit's ε lower bound does not exceed ``max_epsilon``.
    epsilon_lower : float
    max_epsilon : float
    reason : str
        One sentence for people.
    level : {"pass", "review", "fail"}
        ``fail`` when the bound is above ``max_epsilon`` (or nothing was tested);
        ``review`` when it is not, but the audit could not have shown more: even an
        attack right on every guess would not have refuted ``max_epsilon`` with these
        runs (``reachable``), or a tenth of the runs or more failed; ``pass`` otherwise.
    reachable : float or None
        The largest ε these evaluation runs could refute: the bound of an attack that
        guesses every target right (its true-positive rate 1, false-positive rate 0).
    """

    passed: bool
    epsilon_lower: float
    max_epsilon: float
    reason: str
    level: str = "pass"
    reachable: float | None = None

    def fails(self, fail_on: str = "fail") -> bool:
        """True when the level is at or beyond ``fail_on`` (``"review"`` or ``"fail"``)."""
        rank = {"pass": 0, "review": 1, "fail": 2}
        if fail_on not in ("review", "fail"):
            msg = f"`fail_on` must be 'review' or 'fail'; got {fail_on!r}."
            raise ParameterError(msg)
        return rank[self.level] >= rank[fail_on]

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form."""
        return to_jsonable(dataclasses.asdict(self))


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """The generator audit: bounds overall and per target, and how they were reached.

    Attributes
    ----------
    generator : str
        What was audited (a description, never data).
    threat_model : dict of str to str
        Who the attacker is, what they know and hold, whom they target, and what the
        bound promises.
    settings : dict
        The audit's parameters.
    runs : dict
        Completed, selection, evaluation, failed and retried runs, why the audit
        stopped early (None when it ran every run) and the seconds spent.
    epsilon_lower : float
        The headline: the pooled bound of the one test (group of targets, attack, and
        guess rule or threshold) chosen on the selection runs and counted on the
        evaluation runs, at ``settings["confidence_level"]``
        (:func:`synthrisk.audit.bounds.selected_bound`). With both natural targets and
        canaries, the larger of the two groups' chosen tests, each counted at half the
        error (Bonferroni over the two groups), so that the maximum holds at the
        confidence level: at most the larger of ``epsilon_lower_natural`` and
        ``canaries.epsilon_lower`` (each at the full level on its own).
    best_attack : str or None
        The attack that reached it.
    overall : dict of str to Bound
        Each attack's result pooled over the natural targets (real people); empty when
        the audit has only canaries.
    targets : tuple of TargetAudit
        Each target, in the order chosen (most vulnerable first, then the named rows,
        then the canaries).
    failures : tuple of RunFailure
        Runs left out because the generator failed twice.
    epsilon_lower_one_run : float or None
        The largest pooled bound over the attacks read as one-run guesses (the precision
        of the "member" calls; Steinke, Nasr & Jagielski 2023), valid for pure ε-DP
        however the guesses about the targets of one run depend on each other; None when
        δ > 0.
    bounds : dict
        Each method's pooled bound side by side (:func:`method_bounds`): the headline
        ``selected`` test and the per-method maxima over the attacks.
    retries : tuple of RunFailure
        The first failure (a crash, or a run past ``run_timeout``) of each run whose
        retry with a new seed succeeded.
    epsilon_lower_natural : float or None
        The natural targets' own headline: the one test chosen on the selection runs
        among their tests (what the audit shows about real people); None without
        natural targets.
    selected_targets : {"natural", "canaries"} or None
        The group whose test is the headline (the natural targets when tied).
    canaries : CanaryAudit or None
        The canaries' bounds; None when the audit inserted none.
    """

    generator: str
    threat_model: dict[str, str]
    settings: dict[str, JSONValue]
    runs: dict[str, JSONValue]
    epsilon_lower: float
    best_attack: str | None
    overall: dict[str, Bound]
    targets: tuple[TargetAudit, ...]
    failures: tuple[RunFailure, ...] = ()
    epsilon_lower_one_run: float | None = None
    retries: tuple[RunFailure, ...] = ()
    bounds: dict[str, JSONValue] = dataclasses.field(default_factory=dict)
    epsilon_lower_natural: float | None = None
    selected_targets: Literal["natural", "canaries"] | None = None
    canaries: CanaryAudit | None = None

    @property
    def n_runs(self) -> int:
        """Completed shadow runs."""
        value = self.runs["completed"]
        assert isinstance(value, int)
        return value

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form (see the module docstring)."""
        return {
            "schema_version": AUDIT_SCHEMA_VERSION,
            "kind": "generator_audit",
            "generator": self.generator,
            "threat_model": dict(self.threat_model),
            "settings": to_jsonable(self.settings),
            "runs": to_jsonable(self.runs),
            "epsilon_lower": self.epsilon_lower,
            "best_attack": self.best_attack,
            "selected_targets": self.selected_targets,
            "epsilon_lower_natural": self.epsilon_lower_natural,
            "epsilon_lower_one_run": self.epsilon_lower_one_run,
            "bounds": to_jsonable(self.bounds),
            "overall": {name: _bound_dict(b) for name, b in self.overall.items()},
            "canaries": None if self.canaries is None else self.canaries.to_dict(),
            "targets": [t.to_dict() for t in self.targets],
            "failures": [to_jsonable(dataclasses.asdict(f)) for f in self.failures],
            "retries": [to_jsonable(dataclasses.asdict(f)) for f in self.retries],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditResult:
        """Rebuild a result from :meth:`to_dict` (or the parsed :meth:`to_json`).

        Raises
        ------
        ParameterError
            If ``data`` is not an audit result of a known ``schema_version``.
        """
        if (
            data.get("kind") != "generator_audit"
            or data.get("schema_version") != AUDIT_SCHEMA_VERSION
        ):
            msg = (
                "`data` must be a generator audit's JSON (kind 'generator_audit', "
                f"schema_version {AUDIT_SCHEMA_VERSION}); got kind {data.get('kind')!r}, "
                f"schema_version {data.get('schema_version')!r}."
            )
            raise ParameterError(msg)
        targets = tuple(
            TargetAudit(
                row=None if t["row"] is None else int(t["row"]),
                source=t["source"],
                isolation=float(t["isolation"]),
                n_included=int(t["n_included"]),
                attacks={k: _bound_from(v) for k, v in t["attacks"].items()},
                epsilon_lower=float(t["epsilon_lower"]),
                best_attack=t["best_attack"],
                canary=None if t.get("canary") is None else int(t["canary"]),
            )
            for t in data["targets"]
        )
        return cls(
            generator=str(data["generator"]),
            threat_model=dict(data["threat_model"]),
            settings=dict(data["settings"]),
            runs=dict(data["runs"]),
            epsilon_lower=float(data["epsilon_lower"]),
            best_attack=data["best_attack"],
            overall={k: _bound_from(v) for k, v in data["overall"].items()},
            targets=targets,
            failures=tuple(
                RunFailure(int(f["run"]), str(f["error"])) for f in data["failures"]
            ),
            epsilon_lower_one_run=data.get("epsilon_lower_one_run"),
            retries=tuple(
                RunFailure(int(f["run"]), str(f["error"]))
                for f in data.get("retries") or ()
            ),
            bounds=dict(data.get("bounds") or {}),
            epsilon_lower_natural=data.get("epsilon_lower_natural"),
            selected_targets=data.get("selected_targets"),
            canaries=(
                None
                if data.get("canaries") is None
                else CanaryAudit.from_dict(data["canaries"])
            ),
        )

    def to_json(self, *, indent: int | None = 2) -> str:
        """The JSON text of :meth:`to_dict` (NaN is refused, so it never slips in)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def verdict(self, max_epsilon: float) -> AuditVerdict:
        """Fail when the audit refutes ``max_epsilon``: its ε lower bound is above it.

        Passing does not prove the generator ``max_epsilon``-private: the bound is a
        lower bound, reached by these attacks on these targets with these runs. An audit
        without any evaluation run (a budget spent before the runs) never passes.

        Raises
        ------
        ParameterError
            If ``max_epsilon`` is not a number >= 0.
        """
        value: Any = max_epsilon
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not value >= 0
            or math.isinf(value)
        ):
            msg = f"`max_epsilon` must be a finite number >= 0; got {max_epsilon!r}."
            raise ParameterError(msg)
        eps = self.epsilon_lower
        level = self.settings.get("confidence_level")
        if not self.runs.get("evaluation"):
            reason = (
                f"no evaluation run completed ({self.runs_summary()}): the audit tested "
                "nothing, so it cannot pass."
            )
            return AuditVerdict(
                passed=False,
                epsilon_lower=eps,
                max_epsilon=float(max_epsilon),
                reason=reason,
                level="fail",
            )
        passed = eps <= max_epsilon
        reachable = self.reachable_epsilon()
        failures = self.runs.get("failed")
        failed = failures if isinstance(failures, int) else 0
        verdict_level = "pass"
        if passed:
            reason = (
                f"no attack refuted ε = {max_epsilon:g}: the audit's lower bound is {eps:.3g} "
                f"after {self.n_runs} shadow runs (confidence {level})."
            )
            if reachable is not None and reachable <= max_epsilon:
                verdict_level = "review"
                reason += (
                    f" But these runs could not have refuted it: even an attack right on "
                    f"every guess would reach only ε ≥ {reachable:.3g}. Run more shadow runs "
                    "(or audit more targets) for a test of this ε."
                )
            if failed and failed * 10 >= self.n_runs + failed:
                verdict_level = "review"
                reason += (
                    f" {self.runs_summary()}: read `failures` (the generator's errors) "
                    "before relying on it."
                )
        else:
            on = (
                " on the crafted canaries"
                if self.selected_targets == "canaries"
                else ""
            )
            reason = (
                f"the {self.best_attack} attack{on} shows the generator is not "
                f"{max_epsilon:g}-differentially private: ε ≥ {eps:.3g} with confidence "
                f"{level}, after {self.n_runs} shadow runs."
            )
        return AuditVerdict(
            passed=passed,
            epsilon_lower=eps,
            max_epsilon=float(max_epsilon),
            reason=reason,
            level=verdict_level if passed else "fail",
            reachable=reachable,
        )

    def runs_summary(self) -> str:
        """``"38 of 40 shadow runs completed; 2 failed: runs 3 and 17"``: the runs
        done and, when some failed, which (the first ten, by run number)."""
        done = self.n_runs
        recorded = self.runs.get("failed")
        n_failed = recorded if isinstance(recorded, int) else len(self.failures)
        total = done + n_failed
        text = f"{done} of {total} shadow run{'s' if total != 1 else ''} completed"
        if not n_failed:
            return text
        text += f"; {n_failed} failed"
        named = [str(f.run) for f in self.failures[:10]]
        if named:
            more = n_failed - len(named)
            if more > 0:
                listed = ", ".join(named) + f" and {more} more"
            elif len(named) == 1:
                listed = named[0]
            else:
                listed = ", ".join(named[:-1]) + f" and {named[-1]}"
            text += f": run{'s' if n_failed > 1 else ''} {listed}"
        return text

    def reachable_epsilon(self) -> float | None:
        """The largest ε the evaluation runs could refute (an attack right on every guess).

        With ``m`` member and ``k`` non-member guesses pooled over the targets, the
        Clopper–Pearson bounds of a perfect attack (``m`` of ``m`` members flagged, 0 of
        ``k`` non-members) at each attack's confidence, or ``m + k`` right guesses out of
        ``m + k`` at the full confidence (the headline's guesses), whichever is larger,
        give the most any attack could show; with canaries, the larger of the natural
        targets' reach and the canaries'. None before any evaluation run.
        """
        reaches = [
            r
            for overall in (
                self.overall,
                self.canaries.overall if self.canaries is not None else {},
            )
            if (r := self._reach(overall)) is not None
        ]
        return max(reaches) if reaches else None

    def _reach(self, overall: Mapping[str, Bound]) -> float | None:
        """:meth:`reachable_epsilon` of one group of targets."""
        if not overall:
            return None
        bound = next(iter(overall.values()))
        if not bound.n_members or not bound.n_non_members:
            return None
        attack_level = float(
            self.settings.get("attack_confidence_level")  # type: ignore[arg-type]
            or self.settings.get("confidence_level")
            or 0.95
        )
        delta = float(self.settings.get("delta") or 0.0)  # type: ignore[arg-type]
        eps, *_ = epsilon_lower_bound(
            bound.n_members,
            bound.n_members,
            0,
            bound.n_non_members,
            delta=delta,
            confidence_level=attack_level,
        )
        n = bound.n_members + bound.n_non_members
        level = float(self.settings.get("confidence_level") or 0.95)  # type: ignore[arg-type]
        guesses = guess_epsilon(n, n, delta=delta, confidence_level=level)
        return float(max(eps[0], guesses[0]))
