# SPDX-License-Identifier: BSD-3-Clause
"""Singling out's control-size correction (Anonymeter 1.1, with a better-started fit).

The holdout is usually smaller than the real table, and a query singles out a row more
easily in a smaller table; the control attack's success count is scaled by the ratio of
a fitted model ``s(n) = A · F(n; w)`` at the two sizes (Cohen and Nissim 2020).
"""

from __future__ import annotations

import math
import warnings as _warnings
from typing import Any, Literal

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics.attacks._queries import QueryBatch, QueryTable, match_lists
from synthrisk.metrics.attacks._query_generation import Rules

__all__ = [
    "control_correction",
    "fit_size_correction",
    "singling_out_probability_integral",
]


def singling_out_probability_integral(n: Any, w_max: Any) -> Any:
    """Integral over ``w ∈ [0, w_max]`` of ``P(w, n) = n w (1 - w)^(n - 1)``.

    ``P`` is the probability that a query of weight ``w`` singles out one record in a
    population of ``n`` (Cohen and Nissim 2020); the integral is
    ``(1 - (n w_max + 1)(1 - w_max)^n) / (n + 1)``.

    References
    ----------
    A. Cohen and K. Nissim (2020), "Towards formalizing the GDPR's notion of singling
    out", PNAS 117 (15), 8344-8352, https://arxiv.org/abs/1904.06009.
    """
    return (1.0 - (n * w_max + 1.0) * (1.0 - w_max) ** n) / (n + 1.0)


def _size_model(n: Any, w_eff: float, norm: float) -> Any:
    return norm * singling_out_probability_integral(n, w_eff)


def fit_size_correction(
    sizes: IntArray,
    successes: FloatArray,
    n_real: int,
    n_control: int,
    *,
    start: Literal["anonymeter", "global"],
) -> float:
    """Factor ``s(n_real) / s(n_control)`` of the fitted model ``s(n) = A · F(n; w)``.

    The fit is scipy's ``curve_fit`` with bounds ``w ∈ [0, 1]``, ``A ∈ [0, ∞)``.

    * ``start="anonymeter"``: Anonymeter's start ``w₀ = 1 / max(n)``,
      ``A₀ = 1 / F(max(n); w₀)``. ``A₀`` scales the model to about one success at the
      largest size, far below typical counts, and the optimiser then often drifts to
      ``w → 1`` where ``F ≈ 1 / (n + 1)``: the factor becomes
      ``(n_control + 1) / (n_real + 1)`` whatever the data (seen on Adult: a sum of
      squares 145 times the optimum).
    * ``start="global"`` (synthrisk's default): the least-squares optimum over a
      logarithmic grid of ``w`` (``A`` in closed form), refined by ``curve_fit``.

    Raises
    ------
    RuntimeError
        When the fit fails or the factor is not a finite positive number.
    """
    x = np.asarray(sizes, dtype=np.float64)
    y = np.asarray(successes, dtype=np.float64)
    n_max = float(np.max(x))
    if start == "global":
        best = (np.inf, 1.0 / n_max, 0.0)
        for w in np.logspace(np.log10(0.01 / n_max), 0.0, 600):
            f = singling_out_probability_integral(x, w)
            ff = float(f @ f)
            if ff <= 0:
                continue
            a = max(float(f @ y) / ff, 0.0)
            sse = float(np.sum((a * f - y) ** 2))
            if sse < best[0]:
                best = (sse, float(w), a)
        p0 = (best[1], max(best[2], 1e-12))
    else:
        w_guess = 1.0 / n_max
        p0 = (w_guess, 1.0 / singling_out_probability_integral(n_max, w_guess))
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore", OptimizeWarning)
        _warnings.simplefilter("ignore", RuntimeWarning)
        popt, _ = curve_fit(
            _size_model, xdata=x, ydata=y, bounds=(0, (1, np.inf)), p0=p0
        )
    if start == "global" and np.sum((_size_model(x, *popt) - y) ** 2) > np.sum(
        (_size_model(x, *p0) - y) ** 2
    ):
        popt = np.asarray(p0)
    with np.errstate(all="ignore"):
        factor = float(
            _size_model(float(n_real), *popt) / _size_model(float(n_control), *popt)
        )
    if not math.isfinite(factor) or factor < 0:
        msg = f"the size-correction fit gave an unusable factor {factor!r}."
        raise RuntimeError(msg)
    return factor


def control_correction(
    control: Any,
    queries: QueryBatch,
    *,
    n_real: int,
    rules: Rules,
    rng: np.random.Generator,
    warnings: list[str],
) -> float | None:
    n_control = control.n_rows
    lower = min(1000, n_control)
    if rules.compat is None:
        # Anonymeter's sizes all equal the holdout size when it has <= 1000 rows, which
        # leaves nothing to fit; synthrisk spans at least the upper half
        lower = min(1000, -(-n_control // 2))
    sizes = np.repeat(np.linspace(lower, n_control, 10).astype(int), 5)
    if rules.compat == "anonymeter-1.1":
        # Anonymeter 1.1 counts every query, singling out or not, in every subsample
        successes = np.full(sizes.size, float(len(queries)))
    elif not isinstance(control, QueryTable):
        # a holdout on a cluster: every subsample as a bit mask, counted in one pass
        packer = control.packer(sizes.size)
        for size in sizes:
            packer.add(rng.choice(n_control, size=int(size), replace=False))
        counts = control.masked_counts(
            queries, packer.packed, cap=2, ne_matches_null=rules.ne_matches_null
        )
        successes = np.sum(counts == 1, axis=0).astype(np.float64)
    else:
        offsets, rows = match_lists(
            control, queries, ne_matches_null=rules.ne_matches_null
        )
        query_of = np.repeat(np.arange(len(queries)), np.diff(offsets))
        successes = np.empty(sizes.size)
        for i, size in enumerate(sizes):
            mask = np.zeros(n_control, dtype=np.float64)
            mask[rng.choice(n_control, size=int(size), replace=False)] = 1.0
            per_query = np.bincount(
                query_of, weights=mask[rows], minlength=len(queries)
            )
            successes[i] = float(np.sum(per_query == 1))
    try:
        start: Literal["anonymeter", "global"] = (
            "global" if rules.compat is None else "anonymeter"
        )
        return fit_size_correction(sizes, successes, n_real, n_control, start=start)
    except (RuntimeError, ValueError) as exc:
        warnings.append(
            f"the control-size correction could not be fitted ({exc}); the control count is not corrected "
            "for the different sizes of the holdout and the real table."
        )
        return None
