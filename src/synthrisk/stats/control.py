# SPDX-License-Identifier: BSD-3-Clause
"""Holdout control of a per-record attack: the same attack on real rows and on holdout rows.

A holdout is a sample of what a generator that never saw the training rows would
produce, so an attack's success on holdout rows is what it achieves without any
memorisation. :func:`compare_proportions` turns the two success counts into the
``control`` block every holdout-controlled metric of synthrisk reports::

    {"statistic": str, "real": p_real, "holdout": p_holdout, "effect": p_real - p_holdout,
     "ci": [low, high], "confidence_level": 0.95, "p_value": float, "test": str,
     "n_real": int, "n_holdout": int, "alternative": "greater"}

``effect`` is the excess risk of the training rows, ``ci`` its Newcombe hybrid score
interval, ``p_value`` the one-sided Fisher exact test of "the training rows are no
more at risk than the holdout rows".

References
----------
R. G. Newcombe (1998), "Interval estimation for the difference between independent
proportions: comparison of eleven methods", Statistics in Medicine 17, 873-890
(method 10).
"""

from __future__ import annotations

import math

from scipy import stats

from synthrisk._typing import FloatArray, JSONValue
from synthrisk.stats.holdout import finite_values

__all__ = ["compare_means", "compare_proportions", "wilson_bounds"]


def wilson_bounds(successes: float, total: int, z: float) -> tuple[float, float]:
    """Wilson score interval of ``successes / total`` (``(0, 1)`` when ``total`` is 0)."""
    if total <= 0:
        return 0.0, 1.0
    p = successes / total
    denom = 1.0 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = (
        z
        * math.sqrt(max(p * (1 - p), 0.0) / total + z * z / (4 * total * total))
        / denom
    )
    return max(0.0, centre - half), min(1.0, centre + half)


def compare_proportions(
    successes_real: float,
    n_real: int,
    successes_holdout: float,
    n_holdout: int,
    *,
    statistic: str,
    confidence_level: float = 0.95,
) -> dict[str, JSONValue]:
    """Excess success of an attack on real rows over the same attack on holdout rows.

    Parameters
    ----------
    successes_real, successes_holdout : float
        Records the attack succeeds on; they may be averages over equal-size repeats
        (2.5). Fisher's exact test takes integer counts: each is rounded to the nearest
        integer, and an exact half toward the conservative side of the one-sided test,
        the real side's down and the holdout side's up (2.5 real and 2.5 holdout
        successes are tested as 2 and 3). Python's ``round`` rounded halves to even,
        toward a smaller p-value for 3.5 real successes and a larger one for 2.5. The
        proportions, the effect and the interval use the unrounded counts.
    n_real, n_holdout : int
        Records attacked on each side.
    statistic : str
        Name of the per-record success (for the report).
    confidence_level : float, default=0.95
        Two-sided level of the interval of the difference.

    Returns
    -------
    dict
        The ``control`` block (see the module docstring); ``effect``, ``ci`` and
        ``p_value`` are None when a side has no records.
    """
    p_r = successes_real / n_real if n_real > 0 else None
    p_h = successes_holdout / n_holdout if n_holdout > 0 else None
    out: dict[str, JSONValue] = {
        "statistic": statistic,
        "real": p_r,
        "holdout": p_h,
        "effect": None,
        "ci": None,
        "confidence_level": confidence_level,
        "p_value": None,
        "test": "one-sided Fisher exact test (real more at risk than holdout); Newcombe hybrid score interval",
        "alternative": "greater",
        "n_real": int(n_real),
        "n_holdout": int(n_holdout),
    }
    if p_r is None or p_h is None:
        return out
    z = float(stats.norm.ppf(0.5 + confidence_level / 2))
    l1, u1 = wilson_bounds(successes_real, n_real, z)
    l2, u2 = wilson_bounds(successes_holdout, n_holdout, z)
    effect = p_r - p_h
    low = effect - math.sqrt((p_r - l1) ** 2 + (u2 - p_h) ** 2)
    high = effect + math.sqrt((u1 - p_r) ** 2 + (p_h - l2) ** 2)
    a = min(max(math.ceil(successes_real - 0.5), 0), n_real)
    c = min(max(math.floor(successes_holdout + 0.5), 0), n_holdout)
    table = [[a, n_real - a], [c, n_holdout - c]]
    p_value = float(stats.fisher_exact(table, alternative="greater").pvalue)
    out.update(
        effect=effect, ci=[max(-1.0, low), min(1.0, high)], p_value=min(1.0, p_value)
    )
    return out


def compare_means(
    values_real: FloatArray,
    values_holdout: FloatArray,
    *,
    statistic: str,
    confidence_level: float = 0.95,
) -> dict[str, JSONValue]:
    """Excess mean of a per-record value on real rows over holdout rows (Welch).

    The ``control`` block of :func:`compare_proportions` for a value that is not a
    success indicator: ``effect`` is the difference of the means, ``ci`` its Welch
    interval, ``p_value`` the one-sided Welch t-test of "the real rows' mean is no
    larger than the holdout rows'". NaN and ±inf values are dropped from either side
    (the rule of :func:`~synthrisk.stats.holdout.mean_difference_test` too), counted
    in ``n_dropped_real`` and ``n_dropped_holdout``; ``n_real`` and ``n_holdout``
    count the values kept.
    """
    a, dropped_a = finite_values(values_real)
    b, dropped_b = finite_values(values_holdout)
    out: dict[str, JSONValue] = {
        "statistic": statistic,
        "real": float(a.mean()) if a.size else None,
        "holdout": float(b.mean()) if b.size else None,
        "effect": None,
        "ci": None,
        "confidence_level": confidence_level,
        "p_value": None,
        "test": "one-sided Welch t-test (real mean larger than holdout mean); Welch interval",
        "alternative": "greater",
        "n_real": int(a.size),
        "n_holdout": int(b.size),
        "n_dropped_real": dropped_a,
        "n_dropped_holdout": dropped_b,
    }
    if a.size < 2 or b.size < 2:
        return out
    effect = float(a.mean() - b.mean())
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    if se == 0.0:
        out.update(
            effect=effect, ci=[effect, effect], p_value=0.0 if effect > 0 else 1.0
        )
        return out
    dof = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    t_crit = float(stats.t.ppf(0.5 + confidence_level / 2, dof))
    p_value = float(stats.t.sf(effect / se, dof))
    out.update(
        effect=effect, ci=[effect - t_crit * se, effect + t_crit * se], p_value=p_value
    )
    return out
