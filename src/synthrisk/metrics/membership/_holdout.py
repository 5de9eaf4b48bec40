# SPDX-License-Identifier: BSD-3-Clause
"""Holdout tests of the DCR share and of identical matches: permutation nulls of training vs holdout."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from synthrisk.metrics.membership._share_kernels import CLOSER_REAL, TIE
from synthrisk.stats.holdout import holdout_test, share_test

__all__ = ["copy_test", "share_holdout_test"]

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


def _people_h(
    pooled: np.ndarray,
    hit: np.ndarray,
    person: np.ndarray,
    n_train_people: int,
    n_ids: int,
) -> tuple[np.ndarray, int, int]:
    """``h`` per person: their distinct found records, each over the people who have it."""
    n_people = int(person.max()) + 1 if person.size else 0
    pairs = np.unique(np.stack([person[hit], pooled[hit]], axis=1), axis=0)
    sharing = np.bincount(pairs[:, 1], minlength=n_ids)
    h = np.bincount(
        pairs[:, 0], weights=1.0 / sharing[pairs[:, 1]], minlength=n_people
    ).astype(np.float64)
    return h, n_train_people, n_people - n_train_people


def copy_test(
    syn_ids: np.ndarray,
    real_ids: np.ndarray,
    hold_ids: np.ndarray,
    *,
    confidence_level: float = 0.95,
    person: np.ndarray | None = None,
    n_train_people: int = 0,
) -> dict[str, Any]:
    """Exact copies of training people against exact copies of holdout people.

    With ``person`` (each pooled row's person, training people first; panel data) the
    units are people: a person's ``h`` sums, over their distinct records found in the
    synthetic table, one over the number of people who have that record, and the
    relabelling draws people, not rows.

    Every real person ``i`` of the pooled training ∪ holdout rows gets
    ``h_i = [their record appears in the synthetic table] / n_i``, with ``n_i`` the
    number of pooled real people who share that record (a record many people have
    points at none of them). ``T`` is the sum of ``h`` over the training people.

    Without memorisation the training people are a random subset of the pooled people
    (the synthetic table, which is the one to be released, is held fixed), so ``T`` has
    the moments of a sum drawn without replacement (Cochran, *Sampling Techniques*,
    1977, theorem 2.2): ``E[T] = N_a h̄`` and
    ``Var[T] = N_a N_b / (N (N - 1)) Σ (h_i - h̄)²``, exactly, whatever the two sizes
    ``N_a`` (training) and ``N_b`` (holdout). The excess ``(T - E[T]) / ((1 - w) N_s)``
    (``w = N_a / N``, ``N_s`` synthetic rows) is the share of synthetic rows that copy
    a training person beyond chance: each synthetic row copying a training person no
    one else shares adds ``1 / N_s``.

    ``chance`` is the share of synthetic rows that match training people by chance, on
    the same scale (``w Σ h / N_s``: the rate at which a new person's record turns up
    in the synthetic table, times the training table's size). The verdict judges the
    excess against it: ``effect / chance`` is the relative increase of the training
    people's chance of being found in the synthetic table.
    """
    statistic = (
        "share of synthetic rows copying a training person beyond chance "
        "(rows many real people share count by the training share among them)"
    )
    n_a, n_b, n_s = real_ids.size, hold_ids.size, syn_ids.size
    n = n_a + n_b
    if n_a == 0 or n_b == 0 or n_s == 0:
        return holdout_test(
            statistic=statistic,
            effect=float("nan"),
            se=float("nan"),
            n=min(n_a, n_b),
            estimate=float("nan"),
            control=float("nan"),
            confidence_level=confidence_level,
        )
    # h without temporaries the size of the pooled rows beyond h itself (millions of rows
    # on a cluster's driver): ids of pooled rows found in the synthetic table share
    # counts; the others are 0
    pooled = np.concatenate([real_ids, hold_ids])
    n_ids = int(max(pooled.max(), syn_ids.max())) + 1
    found = np.zeros(n_ids, dtype=bool)
    found[syn_ids] = True
    hit = found[pooled]
    del found
    if person is not None:
        h, n_a, n_b = _people_h(pooled, hit, person, n_train_people, n_ids)
        n = n_a + n_b
    else:
        pooled = pooled[hit]
        h = np.zeros(n, dtype=np.float64)
        h[hit] = 1.0 / np.bincount(pooled, minlength=n_ids)[pooled]
    del pooled, hit
    w = n_a / n
    total = float(h.sum())
    observed = float(h[:n_a].sum())
    control = float(h[n_a:].sum()) / n_b
    expected = w * total
    h -= h.mean()
    np.square(h, out=h)
    variance = n_a * n_b / (n * (n - 1.0)) * float(h.sum())
    scale = (1.0 - w) * n_s
    test = holdout_test(
        statistic=statistic,
        effect=(observed - expected) / scale,
        se=math.sqrt(max(variance, 0.0)) / scale,
        n=min(n_a, n_b),
        estimate=observed / n_a,
        control=control,
        confidence_level=confidence_level,
    )
    test["chance"] = w * total / n_s
    return test
