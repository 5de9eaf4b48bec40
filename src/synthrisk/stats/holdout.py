# SPDX-License-Identifier: BSD-3-Clause
"""Holdout-controlled tests: how much more does an attack learn about training rows than about new people?

A holdout is a sample of what a generator that never saw the training rows would
produce, so every gating comparison is *attack on training rows* against *the same
attack on holdout rows*. Each helper returns a :func:`holdout_test` mapping (stored
under ``breakdown["holdout_test"]`` of a result) that the verdict reads::

    {"statistic": str, "effect": float, "ci": [low, high], "p_value": float,
     "n": int, "null": float, "estimate": float, "control": float}

``effect`` is oriented so that a positive value means more risk for the training rows;
``ci`` is a two-sided interval at ``confidence_level`` (its lower end is a one-sided
bound at ``(1 + confidence_level) / 2``) and ``p_value`` is the one-sided p-value of
"no excess" (effect <= 0). Normal approximations throughout: every test here is a mean
of many bounded per-row values.

Where p-values are adjusted for multiplicity (Holm's step-down correction, :func:`holm`),
the interval to show beside a decision is not the 95 % one: :func:`holm_levels` gives
each test the one-sided level that matches its Holm step, and :func:`matched_interval`
rescales a test's interval to that level, so that the interval excludes 0 exactly when
the adjusted p-value is significant.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from synthrisk._typing import JSONValue
from synthrisk.exceptions import ParameterError
from synthrisk.stats.ranking import delong_auc

__all__ = [
    "ALPHA",
    "auc_test",
    "finite_values",
    "holdout_test",
    "holm",
    "holm_levels",
    "level_text",
    "matched_interval",
    "mean_difference_test",
    "paired_difference_test",
    "share_test",
]


#: family-wise error rate of the gating tests of one run (Holm's correction), the
#: release verdict's default (``synthrisk.verdict.ALPHA``)
ALPHA = 0.05


def _z(confidence_level: float) -> float:
    return float(stats.norm.ppf(0.5 * (1.0 + confidence_level)))


def _undefined(
    statistic: str, n: int, null: float = 0.0, *, confidence_level: float = 0.95
) -> dict[str, JSONValue]:
    """The test mapping where the data cannot support a test (too few units); the
    same keys as a defined test's, ``confidence_level`` included."""
    return {
        "statistic": statistic,
        "effect": None,
        "ci": None,
        "p_value": None,
        "n": int(n),
        "null": null,
        "estimate": None,
        "control": None,
        "confidence_level": confidence_level,
    }


def finite_values(values: np.ndarray) -> tuple[np.ndarray, int]:
    """The finite entries of ``values`` as float64, and how many were dropped.

    The one rule of the two-sample tests (:func:`mean_difference_test`,
    :func:`synthrisk.stats.control.compare_means`): NaN (a unit without a value) and
    ±inf (an unbounded one, which no mean or variance survives) are both dropped.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    keep = np.isfinite(v)
    return v[keep], int(v.size - keep.sum())


def holdout_test(
    *,
    statistic: str,
    effect: float,
    se: float,
    n: int,
    estimate: float,
    control: float,
    null: float = 0.0,
    confidence_level: float = 0.95,
    p_value: float | None = None,
) -> dict[str, JSONValue]:
    """Assemble the test mapping from an effect and its standard error.

    A zero standard error gives a degenerate interval at the effect and a p-value of
    0 or 1 (an exact statement: nothing varied).
    """
    effect = float(effect)
    se = float(se)
    # no standard error (one unit) or an unbounded one: the data support no test
    if not math.isfinite(effect) or (p_value is None and not math.isfinite(se)):
        return _undefined(statistic, n, null, confidence_level=confidence_level)
    z = _z(confidence_level)
    if p_value is None:
        if se > 0:
            p_value = float(stats.norm.sf(effect / se))
        else:
            p_value = 0.0 if effect > 0 else 1.0
    return {
        "statistic": statistic,
        "effect": effect,
        "ci": [effect - z * se, effect + z * se] if se > 0 else [effect, effect],
        "p_value": float(p_value),
        "n": int(n),
        "null": float(null),
        "estimate": float(estimate),
        "control": float(control),
        "confidence_level": confidence_level,
    }


def _difference(
    a: np.ndarray,
    b: np.ndarray,
    effect: float,
    se: float,
    n: int,
    statistic: str,
    confidence_level: float,
) -> dict[str, JSONValue]:
    """The test of a training-minus-holdout ``effect``: the two means and the difference."""
    return holdout_test(
        statistic=statistic,
        effect=effect,
        se=se,
        n=n,
        estimate=float(a.mean()),
        control=float(b.mean()),
        confidence_level=confidence_level,
    )


def _against(
    null: float,
    estimate: float,
    se: float,
    n: int,
    statistic: str,
    confidence_level: float,
    p_value: float | None = None,
) -> dict[str, JSONValue]:
    """The test of ``estimate`` against its value without memorisation, ``null``."""
    return holdout_test(
        statistic=statistic,
        effect=estimate - null,
        se=se,
        n=n,
        estimate=estimate,
        control=null,
        null=null,
        confidence_level=confidence_level,
        p_value=p_value,
    )


def paired_difference_test(
    training: np.ndarray,
    holdout: np.ndarray,
    *,
    statistic: str,
    confidence_level: float = 0.95,
) -> dict[str, JSONValue]:
    """Mean of ``training - holdout`` over paired units (e.g. synthetic rows, queries).

    Parameters
    ----------
    training, holdout : ndarray of shape (n,)
        The attack's outcome (0/1, or a mean over repeated equal-size samples) on the
        training side and on the holdout side for the same units.
    """
    a = np.asarray(training, dtype=np.float64)
    b = np.asarray(holdout, dtype=np.float64)
    d = a - b
    n = d.size
    if n < 2:  # one pair has no standard error
        return _undefined(statistic, n, confidence_level=confidence_level)
    se = float(d.std(ddof=1) / math.sqrt(n))
    return _difference(a, b, float(d.mean()), se, n, statistic, confidence_level)


def mean_difference_test(
    training: np.ndarray,
    holdout: np.ndarray,
    *,
    statistic: str,
    confidence_level: float = 0.95,
) -> dict[str, JSONValue]:
    """Difference of the means of two independent samples (Welch's standard error).

    NaN and ±inf values are dropped from either sample (:func:`finite_values`, the
    rule of :func:`~synthrisk.stats.control.compare_means` too); the mapping counts
    them in ``n_dropped_training`` and ``n_dropped_holdout``.
    """
    a, dropped_a = finite_values(training)
    b, dropped_b = finite_values(holdout)
    n = min(a.size, b.size)
    if a.size < 2 or b.size < 2:
        out = _undefined(statistic, n, confidence_level=confidence_level)
    else:
        se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
        effect = float(a.mean() - b.mean())
        out = _difference(a, b, effect, se, n, statistic, confidence_level)
    out["n_dropped_training"] = dropped_a
    out["n_dropped_holdout"] = dropped_b
    return out


def share_test(
    values: np.ndarray,
    *,
    statistic: str,
    null: float = 0.5,
    confidence_level: float = 0.95,
    p_value: float | None = None,
) -> dict[str, JSONValue]:
    """Mean of per-unit values in [0, 1] against its value without memorisation (``null``).

    ``effect = mean - null``; ``estimate`` is the mean and ``control`` the null value.
    A permutation ``p_value`` may replace the normal one.
    """
    v = np.asarray(values, dtype=np.float64)
    n = v.size
    if n < 2:
        return _undefined(statistic, n, null, confidence_level=confidence_level)
    se = float(v.std(ddof=1) / math.sqrt(n))
    mean = float(v.mean())
    return _against(null, mean, se, n, statistic, confidence_level, p_value)


def auc_test(
    positives: np.ndarray,
    negatives: np.ndarray,
    *,
    statistic: str,
    confidence_level: float = 0.95,
) -> dict[str, JSONValue]:
    """ROC AUC of ``positives`` (training side) over ``negatives`` (holdout side) against 0.5.

    DeLong's standard error (DeLong, DeLong and Clarke-Pearson, Biometrics 1988); ties
    count one half. ``effect = AUC - 0.5``. The AUC does not depend on the two sizes,
    so arms of different sizes need no correction.
    """
    x = np.asarray(positives, dtype=np.float64)
    y = np.asarray(negatives, dtype=np.float64)
    m, n = x.size, y.size
    if m < 2 or n < 2:
        return _undefined(statistic, min(m, n), 0.5, confidence_level=confidence_level)
    auc, se = delong_auc(x, y)
    return _against(0.5, auc, se, min(m, n), statistic, confidence_level)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm, Scand. J. Statist. 1979), in input order.

    Examples
    --------
    >>> [round(p, 3) for p in holm([0.01, 0.04, 0.03])]
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    k = p.size
    if k == 0:
        return []
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (k - np.arange(k))))
    out = np.empty(k)
    out[order] = adjusted
    return [float(v) for v in out]


def holm_levels(p_values: Sequence[float], alpha: float) -> list[float]:
    """The one-sided level matching each test's Holm decision, in input order.

    Holm's step-down procedure (Holm 1979) at family-wise error ``alpha`` compares the
    ``j``-th smallest of ``k`` p-values with ``alpha / (k - j + 1)`` and stops at the
    first step that is not significant, ``s``. A test rejected at step ``j < s`` gets
    the level ``alpha / (k - j + 1)`` of its step (tied p-values the most lenient level
    of their tie), every other test ``alpha / (k - s + 1)``: the level of the step that
    stopped the procedure. Then ``p < level`` holds exactly for the tests Holm rejects,
    so a one-sided bound at ``1 - level`` excludes 0 exactly for them (for a p-value
    that is the bound's own normal test; see :func:`matched_interval`). These are the
    levels of Holm's step-down intervals for the tests not rejected (Strassburger and
    Bretz, Statistics in Medicine 27, 2008) and the marginal levels of the steps for
    the others.

    Examples
    --------
    >>> [round(a, 4) for a in holm_levels([0.001, 0.04, 0.03], 0.05)]
    [0.0167, 0.025, 0.025]
    >>> holm_levels([0.01], 0.05)
    [0.05]
    """
    if not 0.0 < alpha < 0.5:
        msg = f"`alpha` must be strictly between 0 and 0.5 (one-sided tests); got {alpha!r}."
        raise ParameterError(msg)
    p = np.asarray(p_values, dtype=np.float64)
    k = p.size
    if k == 0:
        return []
    order = np.argsort(p, kind="stable")
    sorted_p = p[order]
    multiplier = k - np.arange(k)
    # the same arithmetic as holm(): step j is significant when p * (k - j) < alpha
    significant = sorted_p * multiplier < alpha
    stop = int(np.argmin(significant)) if not significant.all() else k
    levels = np.empty(k)
    j = 0
    while j < k:
        end = j
        while end + 1 < k and sorted_p[end + 1] == sorted_p[j]:
            end += 1
        step = end if j < stop else stop
        levels[order[j : end + 1]] = alpha / (k - step)
        j = end + 1
    return [float(v) for v in levels]


def matched_interval(
    effect: float,
    ci: Sequence[float],
    *,
    level: float,
    significant: bool,
    p_value: float | None = None,
    confidence_level: float = 0.95,
) -> tuple[float, float]:
    """The interval ``ci`` at another level: each end a one-sided ``1 - level`` bound.

    ``ci`` is a two-sided interval at ``confidence_level`` around ``effect``; each half
    is rescaled by the ratio of the normal quantiles (exact for a normal interval). The
    result is the two-sided ``1 - 2 level`` interval whose lower end is the one-sided
    bound of a test at ``level`` (``0 < level < 0.5``).

    The lower end always agrees with ``significant`` (the decision of the adjusted
    test): above 0 when significant, at or below 0 otherwise. Where the rescaled bound
    disagrees — the p-value is not the interval's normal one (a permutation p-value,
    Fisher's exact test) — the bound the p-value implies under a normal shape,
    ``effect * (1 - z(level) / z(p_value))``, replaces it; and if that does not agree
    either, 0 (not significant) or the smallest positive number (significant).

    Examples
    --------
    A 95 % interval [0, 0.04] (one-sided 97.5 % bounds, p = 0.025) at the one-sided
    level 0.005 of a test that Holm does not reject:

    >>> low, high = matched_interval(0.02, (0.0, 0.04), level=0.005, significant=False)
    >>> round(low, 4), round(high, 4)
    (-0.0063, 0.0463)

    A narrow interval whose permutation p-value (0.01, the smallest 99 permutations
    give) is not significant at the level 0.005:

    >>> low, high = matched_interval(0.2, (0.19, 0.21), level=0.005, p_value=0.01, significant=False)
    >>> round(low, 4), round(high, 4)
    (-0.0214, 0.2131)
    """
    low, high = float(ci[0]), float(ci[1])
    effect = float(effect)
    z_ci = _z(confidence_level)
    # an interval at level 0 is the point itself: nothing to rescale (the lower end
    # still follows the p-value below)
    scale = float(stats.norm.isf(level)) / z_ci if z_ci > 0.0 else 1.0
    low = effect - (effect - low) * scale
    high = effect + (high - effect) * scale
    if (low > 0.0) == significant:
        return low, high
    implied = None
    if p_value is not None and effect > 0.0 and 0.0 < p_value < 0.5:
        implied = effect * (
            1.0 - float(stats.norm.isf(level) / stats.norm.isf(p_value))
        )
    if implied is not None and (implied > 0.0) == significant:
        low = implied
    else:
        low = math.ulp(0.0) if significant else 0.0
    return low, max(high, low)


def level_text(level: float) -> str:
    """A two-sided confidence level as a percentage, with 3 significant digits of what it misses.

    Examples
    --------
    >>> level_text(0.9), level_text(0.95), level_text(1 - 2 * 0.05 / 8), level_text(1 - 0.1 / 120)
    ('90 %', '95 %', '98.75 %', '99.9167 %')
    """
    miss = 100.0 * (1.0 - float(level))
    if not miss > 0.0:
        return "100 %"
    decimals = max(0, 2 - math.floor(math.log10(miss)))
    text = f"{100.0 - miss:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} %"
