# SPDX-License-Identifier: BSD-3-Clause
"""New row synthesis: the share of synthetic rows that do not copy a real row (SDMetrics' ``NewRowSynthesis``).

A synthetic row copies a real row when every categorical and boolean value is equal,
every missing value sits where the real row's is, and every numerical or datetime value
``s`` is within ``numerical_match_tolerance * |s|`` of the real value. SDMetrics 0.32
runs one ``DataFrame.query`` per synthetic row; here rows are grouped by their exact
part (codes and missing pattern), the most selective numerical column is searched in
sorted order, and only the candidates found there are checked on the other columns.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, integer, number, probability
from synthrisk.metrics._threat import SYNTHETIC_ONLY, TRAINING, ThreatModel
from synthrisk.schema.tables import Tables
from synthrisk.stats.control import compare_proportions

__all__ = ["NewRowSynthesis", "copied_rows"]

#: candidate pairs checked per block
_BLOCK = 2_000_000


def copied_rows(
    real_numeric: np.ndarray,
    real_codes: np.ndarray,
    syn_numeric: np.ndarray,
    syn_codes: np.ndarray,
    *,
    tolerance: float,
) -> np.ndarray:
    """Which synthetic rows match some real row, shape (n_synthetic,).

    Parameters
    ----------
    real_numeric, syn_numeric : ndarray of shape (n, n_numeric)
        Numerical columns (NaN for missing).
    real_codes, syn_codes : ndarray of shape (n, n_categorical)
        Categorical codes from one shared encoding (-1 for missing).
    tolerance : float
        Relative tolerance: ``|real - s| <= |tolerance * s|`` matches.
    """
    n_real, n_syn = real_numeric.shape[0], syn_numeric.shape[0]
    if n_real == 0 or n_syn == 0:
        return np.zeros(n_syn, dtype=bool)
    exact = np.hstack(
        [
            np.vstack([real_codes, syn_codes]),
            np.isnan(np.vstack([real_numeric, syn_numeric])).astype(np.int64),
        ]
    )
    if exact.shape[1]:
        group = (
            np.unique(exact, axis=0, return_inverse=True)[1].ravel().astype(np.int64)
        )
    else:
        group = np.zeros(n_real + n_syn, dtype=np.int64)
    real_group, syn_group = group[:n_real], group[n_real:]
    if real_numeric.shape[1] == 0:
        return np.isin(syn_group, real_group)
    pivot = int(np.argmax([np.unique(c[~np.isnan(c)]).size for c in real_numeric.T]))
    real_x = np.nan_to_num(real_numeric[:, pivot], nan=0.0)
    syn_x = np.nan_to_num(syn_numeric[:, pivot], nan=0.0)
    distinct = np.unique(real_x)
    stride = distinct.size + 1
    real_key = real_group * stride + np.searchsorted(distinct, real_x)
    order = np.argsort(real_key, kind="stable")
    sorted_key = real_key[order]
    width = np.abs(tolerance * syn_x)
    slack = (
        width * 1e-9 + np.abs(syn_x) * 1e-12 + 1e-300
    )  # widen; the exact test follows
    rank_lo = np.searchsorted(distinct, syn_x - width - slack, side="left")
    rank_hi = np.searchsorted(distinct, syn_x + width + slack, side="right")
    start = np.searchsorted(sorted_key, syn_group * stride + rank_lo, side="left")
    end = np.searchsorted(sorted_key, syn_group * stride + rank_hi, side="left")
    counts = end - start
    matched = np.zeros(n_syn, dtype=bool)
    limits = np.abs(tolerance * syn_numeric)
    todo = np.flatnonzero(counts > 0)
    cum = np.cumsum(counts[todo])
    first = 0
    while first < todo.size:
        budget = (cum[first - 1] if first else 0) + _BLOCK
        last = max(first + 1, int(np.searchsorted(cum, budget, side="right")))
        rows = todo[first:last]
        n = counts[rows]
        rep = np.repeat(rows, n)
        offsets = np.arange(rep.size) - np.repeat(np.cumsum(n) - n, n)
        cand = order[np.repeat(start[rows], n) + offsets]
        s = syn_numeric[rep]
        ok = (np.abs(real_numeric[cand] - s) <= limits[rep]) | np.isnan(s)
        matched[rep[ok.all(axis=1)]] = True
        first = last
    return matched


@register
class NewRowSynthesis(Metric):
    """Share of synthetic rows that are not a copy of a real row (SDMetrics' ``NewRowSynthesis``).

    Score 1 means no synthetic row matches a real row. Identifier, PII and text columns
    are ignored, as SDMetrics ignores columns that are neither numerical, datetime,
    categorical nor boolean. With a holdout, the same matching against holdout rows is
    the control: a generator that copied nothing matches real rows no more often than
    new people from the same population (both references are sampled to the same size).

    Parameters
    ----------
    numerical_match_tolerance : float, default=0.01
        Relative tolerance of numerical matches (SDMetrics' default).
    synthetic_sample_size : int, default=None
        Score this many synthetic rows, drawn without replacement (seeded).
    confidence_level : float, default=0.95
        Level of the holdout-control interval.
    """

    id = "new_row_synthesis"
    report_order = 210
    attack = "Synthetic rows that repeat a real person's row, every value equal or within a small tolerance, disclose that person."
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "share of synthetic rows that match no training row (numbers within a relative tolerance, 1 % by default): 1 = every row is new, 0 = every row copies one"
        ),
    )
    higher_is_safer = True
    runs_by_default = False

    numerical_match_tolerance: Param[float] = Param(
        number(ge=0, finite=True),
        0.01,
        "Relative tolerance of numerical matches (SDMetrics' default).",
    )
    synthetic_sample_size: Param[int | None] = Param(
        integer(minimum=1, allow_none=True),
        None,
        "Score this many synthetic rows, drawn without replacement (seeded).",
    )
    confidence_level: Param[float] = Param(
        probability(), 0.95, "Level of the holdout-control interval."
    )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        tol = self.numerical_match_tolerance
        syn = tables.encoded("synthetic")
        real = tables.encoded("real")
        rows = np.arange(syn.n_rows)
        size = self.synthetic_sample_size
        if size is not None:
            if int(size) > syn.n_rows:
                context.warn(
                    f"`synthetic_sample_size` ({size}) is larger than the number of synthetic rows "
                    f"({syn.n_rows}); all rows are used."
                )
            else:
                rows = np.sort(
                    context.rng.choice(syn.n_rows, size=int(size), replace=False)
                )
        s_num, s_codes = syn.numeric[rows], syn.codes[rows]
        matched = copied_rows(real.numeric, real.codes, s_num, s_codes, tolerance=tol)
        n_new = int((~matched).sum())
        breakdown: dict[str, Any] = {
            "score": n_new / rows.size,
            "num_new_rows": n_new,
            "num_matched_rows": int(rows.size - n_new),
        }
        if tables.holdout is not None:
            hold = tables.encoded("holdout")
            m = min(real.n_rows, hold.n_rows)
            r_rows = np.sort(context.rng.choice(real.n_rows, size=m, replace=False))
            h_rows = np.sort(context.rng.choice(hold.n_rows, size=m, replace=False))
            to_real = copied_rows(
                real.numeric[r_rows], real.codes[r_rows], s_num, s_codes, tolerance=tol
            )
            to_hold = copied_rows(
                hold.numeric[h_rows], hold.codes[h_rows], s_num, s_codes, tolerance=tol
            )
            breakdown["holdout_score"] = float(1 - to_hold.mean())
            breakdown["control"] = compare_proportions(
                float(to_real.sum()),
                to_real.size,
                float(to_hold.sum()),
                to_hold.size,
                statistic=f"synthetic row matches a row of a {m}-row sample",
                confidence_level=self.confidence_level,
            )
        return Outcome(score=breakdown["score"], breakdown=breakdown)
