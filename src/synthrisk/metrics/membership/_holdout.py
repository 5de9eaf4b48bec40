# SPDX-License-Identifier: BSD-3-Clause
"""Holdout tests of the DCR share and of identical matches: permutation nulls of training vs holdout."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from synthrisk.metrics.membership._share_kernels import CLOSER_REAL, TIE
from synthrisk.stats.holdout import share_test

__all__ = ["relabel_null", "share_holdout_test", "unique_copies"]

#: two-sided 95 % normal quantile
_Z95 = 1.959963984540054


def share_holdout_test(
    rows: np.ndarray,
    null_sd: float,
    p_permutation: float | None,
    full: np.ndarray,
    null_mean: float | None,
    weight: float,
) -> dict[str, Any]:
    """The DCR share against its value without memorisation, in equal-size units.

    With the permutation null (the default), the share on the *full* tables (ties
    counted one half) is compared with its mean under random relabelling of training
    and holdout rows — exact under "the generator never saw the training rows",
    whatever the two sizes, and without the loss of power of subsampling the larger
    side. The excess is divided by ``2 (1 - w)``, ``w = n_real / (n_real + n_holdout)``,
    so that it reads like ``share - 0.5`` at equal sizes (a synthetic row that copies
    a training row adds ``1/2`` per row in either case). The standard error combines
    the per-row one with the spread of the permutation null, which carries the chance
    of which real people fell into the training table. Without permutations, the
    size-corrected share is compared with 0.5.
    """
    statistic = "share of synthetic rows closer to training than to holdout rows, minus its value without memorisation"
    if null_mean is None:
        test = share_test(rows, statistic=statistic)
        return test
    values = (full == CLOSER_REAL) + 0.5 * (full == TIE)
    scale = 2.0 * (1.0 - weight)
    n = values.size
    if n < 2 or scale <= 0:
        return share_test(rows, statistic=statistic)
    se = null_sd / scale
    effect = (float(values.mean()) - null_mean) / scale
    p_normal = (
        float(stats.norm.sf(effect / se)) if se > 0 else (0.0 if effect > 0 else 1.0)
    )
    return {
        "statistic": statistic,
        "effect": effect,
        "ci": [effect - _Z95 * se, effect + _Z95 * se],
        "p_value": p_normal if p_permutation is None else max(p_normal, p_permutation),
        "n": int(n),
        "null": 0.0,
        "estimate": float(values.mean()),
        "control": null_mean,
        "confidence_level": 0.95,
    }


def unique_copies(
    syn_ids: np.ndarray, first: np.ndarray, second: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per synthetic row: copies a row unique in ``first ∪ second`` that is in ``first`` (or in ``second``)."""
    n_ids = (
        int(max(first.max(initial=0), second.max(initial=0), syn_ids.max(initial=0)))
        + 1
    )
    count_a = np.bincount(first, minlength=n_ids)
    count_b = np.bincount(second, minlength=n_ids)
    only_a = (count_a == 1) & (count_b == 0)
    only_b = (count_b == 1) & (count_a == 0)
    return only_a[syn_ids].astype(np.float64), only_b[syn_ids].astype(np.float64)


def relabel_null(
    syn_ids: np.ndarray,
    real_ids: np.ndarray,
    hold_ids: np.ndarray,
    rng: np.random.Generator,
    n_relabel: int = 200,
) -> tuple[float, float]:
    """Mean and spread of the unique-copy difference under random relabelling.

    The pooled real rows are split at random into sides of the training table's and
    the holdout's sizes; without memorisation the observed difference is one draw of
    this distribution, whatever the two sizes.
    """
    pool = np.r_[real_ids, hold_ids]
    n_r = real_ids.size
    if syn_ids.size == 0 or pool.size == 0:
        return 0.0, 0.0
    values = np.empty(n_relabel)
    for b in range(n_relabel):
        order = rng.permutation(pool.size)
        side_a, side_b = unique_copies(syn_ids, pool[order[:n_r]], pool[order[n_r:]])
        values[b] = float(side_a.mean() - side_b.mean())
    return float(values.mean()), float(values.std(ddof=1))
