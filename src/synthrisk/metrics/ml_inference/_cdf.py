# SPDX-License-Identifier: BSD-3-Clause
"""Univariate CDFs chosen as SDMetrics' loss functions choose them (copulas' ``Univariate()``).

SDMetrics' ``InverseCDFDistance`` fits ``copulas.univariate.Univariate()`` to each column:
eight scipy distributions are fitted in a fixed order (beta, gamma, Gaussian, Gaussian
KDE, log-Laplace, Student t, truncated Gaussian, uniform) and the one with the smallest
Kolmogorov-Smirnov statistic against the data wins (the first on ties). This module
repeats that choice with scipy directly, so synthrisk needs no copulas dependency, and
evaluates the Gaussian KDE's CDF in memory-bounded blocks over distinct values.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import optimize, special, stats

__all__ = ["fit_cdf"]

#: copulas' EPSILON (float32 machine epsilon)
_EPSILON = float(np.finfo(np.float32).eps)
#: kernel evaluations per block of the KDE CDF
_BLOCK = 4_000_000

Cdf = Callable[[np.ndarray], np.ndarray]


def _beta(x: np.ndarray) -> Cdf:
    low, high = np.min(x), np.max(x)
    a, b, loc, scale = stats.beta.fit(x, loc=low, scale=high - low)
    if loc > high or scale + loc < low:
        msg = "beta parameters outside the data range"
        raise ValueError(msg)
    if scale < _EPSILON:
        msg = "beta scale near zero"
        raise ValueError(msg)
    return lambda v: stats.beta.cdf(v, a=a, b=b, loc=loc, scale=scale)


def _gamma(x: np.ndarray) -> Cdf:
    a, loc, scale = stats.gamma.fit(x)
    return lambda v: stats.gamma.cdf(v, a=a, loc=loc, scale=scale)


def _gaussian(x: np.ndarray) -> Cdf:
    loc, scale = np.mean(x), np.std(x)
    return lambda v: stats.norm.cdf(v, loc=loc, scale=scale)


def _kde(x: np.ndarray) -> Cdf:
    model = stats.gaussian_kde(x)
    stdev = float(np.sqrt(model.covariance[0, 0]))
    lower_bound = np.min(x) - 5 * np.std(x)
    data, counts = np.unique(x, return_counts=True)
    weights = counts * model.weights[0]  # equal weights 1/n, grouped by distinct value
    lower = special.ndtr((lower_bound - data) / stdev)

    def cdf(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=np.float64)
        flat = v.ravel()
        distinct, inverse = np.unique(flat, return_inverse=True)
        out = np.empty(distinct.size)
        step = max(1, _BLOCK // max(1, data.size))
        for start in range(0, distinct.size, step):
            block = distinct[start : start + step]
            uppers = special.ndtr((block[:, None] - data[None, :]) / stdev)
            out[start : start + step] = (uppers - lower[None, :]) @ weights
        return out[inverse].reshape(v.shape)

    return cdf


def _loglaplace(x: np.ndarray) -> Cdf:
    c, loc, scale = stats.loglaplace.fit(x)
    return lambda v: stats.loglaplace.cdf(v, c=c, loc=loc, scale=scale)


def _student_t(x: np.ndarray) -> Cdf:
    df, loc, scale = stats.t.fit(x)
    return lambda v: stats.t.cdf(v, df=df, loc=loc, scale=scale)


def _truncated_gaussian(x: np.ndarray) -> Cdf:
    low, high = x.min() - _EPSILON, x.max() + _EPSILON

    def nnlf(params: np.ndarray) -> float:
        loc, scale = params
        return float(
            stats.truncnorm.nnlf(
                ((low - loc) / scale, (high - loc) / scale, loc, scale), x
            )
        )

    loc, scale = optimize.fmin_slsqp(
        nnlf,
        (x.mean(), x.std()),
        iprint=False,
        bounds=[(low, high), (0.0, (high - low) ** 2)],
    )
    a, b = (low - loc) / scale, (high - loc) / scale
    return lambda v: stats.truncnorm.cdf(v, a=a, b=b, loc=loc, scale=scale)


def _uniform(x: np.ndarray) -> Cdf:
    loc, scale = np.min(x), np.max(x) - np.min(x)
    return lambda v: stats.uniform.cdf(v, loc=loc, scale=scale)


_CANDIDATES: tuple[Callable[[np.ndarray], Cdf], ...] = (
    _beta,
    _gamma,
    _gaussian,
    _kde,
    _loglaplace,
    _student_t,
    _truncated_gaussian,
    _uniform,
)


def _constant(value: float) -> Cdf:
    return lambda v: np.where(np.asarray(v) < value, 0.0, 1.0)


def fit_cdf(values: Any) -> tuple[Cdf, str]:
    """The CDF copulas' ``Univariate()`` selects for ``values``, and the candidate's name.

    Parameters
    ----------
    values : array-like of shape (n,)
        Observed values without missing entries.

    Returns
    -------
    cdf : callable
        Maps an array of values to CDF values of the same shape.
    name : str
        ``beta``, ``gamma``, ``gaussian``, ``gaussian_kde``, ``loglaplace``,
        ``student_t``, ``truncated_gaussian``, ``uniform`` or ``constant``.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        msg = "cannot fit a distribution to no values"
        raise ValueError(msg)
    distinct = np.unique(x)
    if distinct.size == 1:
        return _constant(float(distinct[0])), "constant"
    best: tuple[float, Cdf, str] | None = None
    best_ks = np.inf
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for candidate in _CANDIDATES:
            try:
                cdf = candidate(x)
                ks = float(stats.kstest(x, cdf).statistic)
            except Exception:
                continue
            if ks < best_ks:
                best_ks = ks
                best = (ks, cdf, candidate.__name__.lstrip("_"))
    if best is None:
        msg = "no candidate distribution could be fitted"
        raise ValueError(msg)
    name = {"kde": "gaussian_kde"}.get(best[2], best[2])
    return best[1], name
