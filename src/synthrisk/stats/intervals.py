# SPDX-License-Identifier: BSD-3-Clause
"""Success rates, residual risk and their confidence intervals for privacy attacks.

The formulas are Anonymeter's (Giomi et al. 2022), which the notes of the reference
(``anonymeter_petsard.md`` §5) pin down exactly:

* the success rate of ``n`` successes in ``N`` attacks is the **Wilson score centre**
  ``(n + z²/2) / (N + z²)`` with error ``z / (N + z²) · sqrt(n (N - n) / N + z²/4)``,
  ``z = Φ⁻¹((1 + confidence) / 2)`` (``n`` may be fractional: the singling-out control
  count is size-corrected);
* the residual risk against a control attack is ``R = (A - C) / (1 - C)`` with its error
  propagated to first order;
* a risk and its interval ``R ± σ`` are clipped to ``[0, 1]``.

>>> from synthrisk.stats import success_rate
>>> rate = success_rate(16, 500)
>>> round(rate.value, 7), round(rate.error, 7)
(0.0355682, 0.0157767)
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, NamedTuple

from scipy.stats import norm

from synthrisk._typing import JSONValue
from synthrisk.exceptions import ParameterError

__all__ = [
    "AttackEstimate",
    "PrivacyRisk",
    "SuccessRate",
    "baseline_warning",
    "bind_value",
    "check_confidence_level",
    "estimate_attack",
    "probit",
    "residual_success",
    "success_rate",
    "wilson_interval",
]


class SuccessRate(NamedTuple):
    """Estimated success rate of an attack.

    Attributes
    ----------
    value : float
        Best estimate (the Wilson score centre).
    error : float
        Half-width of the interval at the chosen confidence level.
    """

    value: float
    error: float

    def to_risk(self) -> PrivacyRisk:
        """The rate as a :class:`PrivacyRisk` (value and interval clipped to [0, 1])."""
        return bind_value(self.value, self.error)


class PrivacyRisk(NamedTuple):
    """A privacy risk in [0, 1] with its confidence interval.

    Attributes
    ----------
    value : float
        Best estimate, clipped to [0, 1].
    ci : tuple of (float, float)
        Lower and upper bound, each clipped to [0, 1].
    """

    value: float
    ci: tuple[float, float]


def check_confidence_level(value: Any, *, name: str = "confidence_level") -> float:
    """Return ``value`` as a float if it is in [0, 1), else raise :class:`ParameterError`.

    ``0`` is allowed: the interval then collapses to the point ``n / N``.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not 0.0 <= float(value) < 1.0
    ):
        msg = f"`{name}` must be a number in [0, 1), e.g. 0.95; got {value!r}."
        raise ParameterError(msg)
    return float(value)


def probit(confidence_level: float) -> float:
    """Two-sided normal quantile ``z = Φ⁻¹((1 + confidence_level) / 2)``.

    >>> round(probit(0.95), 6)
    1.959964
    """
    level = check_confidence_level(confidence_level)
    return float(norm.ppf(0.5 * (1.0 + level)))


def success_rate(
    n_success: float, n_total: int, *, confidence_level: float = 0.95
) -> SuccessRate:
    """Wilson score estimate of a success rate.

    Parameters
    ----------
    n_success : float
        Number of successful attacks, ``0 <= n_success <= n_total``; may be fractional.
    n_total : int
        Number of attacks, at least 1.
    confidence_level : float, default=0.95
        Two-sided confidence level in [0, 1).

    Returns
    -------
    SuccessRate
        Wilson centre and half-width. At ``confidence_level=0`` these are ``n/N`` and 0.

    References
    ----------
    E. B. Wilson (1927), "Probable inference, the law of succession, and statistical
    inference", JASA 22, 209-212.

    Examples
    --------
    >>> rate = success_rate(0, 500)  # the Wilson centre, not 0
    >>> round(rate.value, 7), round(rate.error, 7)
    (0.0038122, 0.0038122)
    """
    if (
        isinstance(n_total, bool)
        or not isinstance(n_total, numbers.Integral)
        or n_total < 1
    ):
        msg = f"`n_total` must be an integer >= 1; got {n_total!r}."
        raise ParameterError(msg)
    if (
        isinstance(n_success, bool)
        or not isinstance(n_success, numbers.Real)
        or not 0 <= n_success <= n_total
    ):
        msg = f"`n_success` must be a number between 0 and n_total ({n_total}); got {n_success!r}."
        raise ParameterError(msg)
    z = probit(confidence_level)
    z2 = z * z
    n, total = float(n_success), float(n_total)
    denominator = total + z2
    rate = (n + 0.5 * z2) / denominator
    error = (z / denominator) * math.sqrt(n * (total - n) / total + 0.25 * z2)
    return SuccessRate(value=rate, error=error)


def residual_success(
    attack_rate: SuccessRate, control_rate: SuccessRate
) -> SuccessRate:
    """Excess of the attack over the control attack, ``(A - C) / (1 - C)``.

    The error is propagated to first order,
    ``σ_R = sqrt((σ_A / |1 - C|)² + (σ_C (A - 1) / (1 - C)²)²)``. The value is *not*
    clipped (negative when the control attack does better); see :func:`bind_value`.
    """
    a, c = attack_rate.value, control_rate.value
    if c >= 1.0:
        msg = f"the control success rate must be below 1 to measure a residual risk; got {c!r}."
        raise ParameterError(msg)
    residual = (a - c) / (1.0 - c)
    d_attack = 1.0 / abs(1.0 - c)
    d_control = (a - 1.0) / (1.0 - c) ** 2
    error = math.sqrt(
        (attack_rate.error * d_attack) ** 2 + (control_rate.error * d_control) ** 2
    )
    return SuccessRate(value=residual, error=error)


def bind_value(point_estimate: float, error_bound: float) -> PrivacyRisk:
    """Clip a point estimate and its symmetric interval ``± error_bound`` to [0, 1].

    >>> bind_value(-0.1, 0.2)
    PrivacyRisk(value=0.0, ci=(0.0, 0.1))
    """

    def clip(x: float) -> float:
        return min(max(float(x), 0.0), 1.0)

    return PrivacyRisk(
        value=clip(point_estimate),
        ci=(clip(point_estimate - error_bound), clip(point_estimate + error_bound)),
    )


def baseline_warning(
    attack_rate: SuccessRate, baseline_rate: SuccessRate, *, attack: str = "attack"
) -> str | None:
    """The sanity-check message when the attack does no better than random guessing, else None."""
    if baseline_rate.value >= attack_rate.value:
        return (
            f"the {attack} succeeded no more often than the random-guessing baseline "
            f"(attack rate {attack_rate.value:.4f} <= baseline rate {baseline_rate.value:.4f}); "
            "the attack is not informative on these data and the risk should not be trusted as it stands "
            "(look at the confidence intervals)."
        )
    return None


@dataclasses.dataclass(frozen=True)
class AttackEstimate:
    """Success counts of the main, baseline and control attacks and the risk they imply.

    Build it with :func:`estimate_attack`.

    Attributes
    ----------
    n_attacks, n_baseline_attacks : int
        Number of main and baseline attacks (the denominators).
    n_control_attacks : int or None
        Number of control attacks; None without a holdout.
    n_success, n_baseline : float
        Successful main and baseline attacks.
    n_control : float or None
        Successful control attacks (may be fractional after a size correction).
    confidence_level : float
        Confidence level of every interval.
    attack_rate, baseline_rate : SuccessRate
        Wilson estimates of the main and baseline success rates.
    control_rate : SuccessRate or None
        Wilson estimate of the control success rate.
    """

    n_attacks: int
    n_baseline_attacks: int
    n_control_attacks: int | None
    n_success: float
    n_baseline: float
    n_control: float | None
    confidence_level: float
    attack_rate: SuccessRate
    baseline_rate: SuccessRate
    control_rate: SuccessRate | None

    def risk(self, *, baseline: bool = False) -> PrivacyRisk:
        """The privacy risk: residual against the control rate, or the attack rate without control.

        ``baseline=True`` returns the baseline rate as a risk (Anonymeter's convention).
        When the control attack always succeeds (possible only at
        ``confidence_level=0``) the residual is undefined: value and bounds are NaN.
        """
        if baseline:
            return self.baseline_rate.to_risk()
        return self.residual().to_risk()

    def residual(self) -> SuccessRate:
        """The unclipped residual (or the attack rate without control); NaN if control = 1."""
        if self.control_rate is None:
            return self.attack_rate
        if self.control_rate.value >= 1.0:
            return SuccessRate(float("nan"), float("nan"))
        return residual_success(self.attack_rate, self.control_rate)

    def warnings(self, *, attack: str = "attack") -> list[str]:
        """Statistical caveats: the baseline sanity check, a control attack that always succeeds."""
        message = baseline_warning(self.attack_rate, self.baseline_rate, attack=attack)
        out = [] if message is None else [message]
        if self.control_rate is not None and self.control_rate.value >= 1.0:
            out.append(
                f"the control {attack} succeeded every time, so the residual risk cannot be measured "
                "(it is reported as undefined)."
            )
        return out

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe breakdown: risk, interval, the three rates, counts and denominators."""
        risk = self.risk()

        def rate(r: SuccessRate | None) -> dict[str, float] | None:
            return (
                None
                if r is None
                else {"value": float(r.value), "error": float(r.error)}
            )

        return {
            "risk": risk.value,
            "risk_ci": None if math.isnan(risk.value) else [risk.ci[0], risk.ci[1]],
            "attack_rate": rate(self.attack_rate),
            "baseline_rate": rate(self.baseline_rate),
            "control_rate": rate(self.control_rate),
            "n_attacks": {
                "main": self.n_attacks,
                "baseline": self.n_baseline_attacks,
                "control": self.n_control_attacks,
            },
            "n_success": {
                "main": float(self.n_success),
                "baseline": float(self.n_baseline),
                "control": None if self.n_control is None else float(self.n_control),
            },
            "confidence_level": self.confidence_level,
        }

    def petsard(self) -> dict[str, float | None]:
        """PETsARD's ``global`` columns, at full precision (PETsARD itself rounds to 2 decimals)."""
        risk = self.risk()
        control = self.control_rate
        return {
            "risk": risk.value,
            "risk_CI_btm": risk.ci[0],
            "risk_CI_top": risk.ci[1],
            "attack_rate": self.attack_rate.value,
            "attack_rate_err": self.attack_rate.error,
            "baseline_rate": self.baseline_rate.value,
            "baseline_rate_err": self.baseline_rate.error,
            "control_rate": None if control is None else control.value,
            "control_rate_err": None if control is None else control.error,
        }


def estimate_attack(
    *,
    n_success: float,
    n_attacks: int,
    n_baseline: float,
    n_baseline_attacks: int | None = None,
    n_control: float | None = None,
    n_control_attacks: int | None = None,
    confidence_level: float = 0.95,
) -> AttackEstimate:
    """Turn attack counts into rates and a risk (Anonymeter's ``EvaluationResults``).

    Parameters
    ----------
    n_success : float
        Successful main attacks (on the real rows the generator saw).
    n_attacks : int
        Number of main attacks.
    n_baseline : float
        Successful random-guessing attacks.
    n_baseline_attacks : int, default=None
        Number of baseline attacks; ``n_attacks`` when None.
    n_control : float, default=None
        Successful attacks on the holdout; None without a holdout.
    n_control_attacks : int, default=None
        Number of control attacks; ``n_attacks`` when None.
    confidence_level : float, default=0.95
        Confidence level of the intervals, in [0, 1).

    Examples
    --------
    >>> est = estimate_attack(n_success=327, n_attacks=2000, n_baseline=64, n_control=60.0046115)
    >>> round(est.risk().value, 7)
    0.1374907
    """
    level = check_confidence_level(confidence_level)
    n_base_attacks = n_attacks if n_baseline_attacks is None else n_baseline_attacks
    n_ctrl_attacks = (
        None
        if n_control is None
        else (n_attacks if n_control_attacks is None else n_control_attacks)
    )
    attack = success_rate(n_success, n_attacks, confidence_level=level)
    base = success_rate(n_baseline, n_base_attacks, confidence_level=level)
    control = None
    if n_control is not None:
        control = success_rate(n_control, n_ctrl_attacks, confidence_level=level)  # type: ignore[arg-type]
    return AttackEstimate(
        n_attacks=int(n_attacks),
        n_baseline_attacks=int(n_base_attacks),
        n_control_attacks=None if n_ctrl_attacks is None else int(n_ctrl_attacks),
        n_success=float(n_success),
        n_baseline=float(n_baseline),
        n_control=None if n_control is None else float(n_control),
        confidence_level=level,
        attack_rate=attack,
        baseline_rate=base,
        control_rate=control,
    )


def wilson_interval(
    successes: int, total: int, *, confidence_level: float = 0.95
) -> tuple[float, float] | None:
    """Wilson score interval of a proportion, clipped to [0, 1].

    The interval of :func:`success_rate` (Wilson 1927), as bounds: centre ∓ error.

    Parameters
    ----------
    successes : int
        Number of successes, ``0 <= successes <= total``.
    total : int
        Number of trials.
    confidence_level : float, default=0.95
        Two-sided confidence level in [0, 1).

    Returns
    -------
    tuple of (float, float) or None
        Lower and upper bound; None when ``total`` is 0.

    Examples
    --------
    >>> low, high = wilson_interval(50, 100)
    >>> round(low, 4), round(high, 4)
    (0.4038, 0.5962)
    """
    if total <= 0:
        return None
    z = probit(confidence_level)
    p = successes / total
    denom = 1.0 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
