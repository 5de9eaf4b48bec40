# SPDX-License-Identifier: BSD-3-Clause
"""NNDR: MOSTLY AI QA's nearest-neighbour distance ratio, training vs holdout."""

from __future__ import annotations

import numpy as np

from synthrisk._typing import JSONValue
from synthrisk.exceptions import InputError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, integer, option
from synthrisk.metrics._threat import AUDIT, TRAINING, ThreatModel
from synthrisk.metrics.membership._space import (
    DISTANCES,
    Space,
    n_rows,
    sample_rows,
    take_rows,
)
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.holdout import share_test

__all__ = ["NNDR"]

#: MOSTLY AI QA's offset that keeps the distance ratio finite for exact copies
_NNDR_EPS = 1e-8


def _distance_ratio(neighbors: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Task: ``(d1 + 1e-8) / (d2 + 1e-8)`` of every query row's two nearest rows."""
    d = neighbors[0]
    return np.asarray((d[:, 0] + _NNDR_EPS) / (d[:, 1] + _NNDR_EPS))


def _kth_smallest(values: np.ndarray, rank: int) -> float:
    return float(np.partition(values, rank - 1)[rank - 1])


@register
class NNDR(Metric):
    """Nearest-neighbour distance ratio of synthetic rows, real vs holdout (MOSTLY AI QA).

    For every synthetic row, ``(d1 + 1e-8) / (d2 + 1e-8)`` with ``d1``, ``d2`` the
    distances to its nearest and second-nearest real rows: close to 0 when the row
    sits on one real row much closer than any other (a near copy of a single
    person), close to 1 in a crowded neighbourhood. The summary is MOSTLY AI's: the
    ``rank``-th smallest ratio (10th by default). The same is done against the
    holdout, with real and holdout sampled to the same size; the score is
    ``nndr_training / nndr_holdout`` — about 1 without memorisation, below 1 when
    synthetic rows single out training rows more sharply than unseen rows.

    Parameters
    ----------
    rank : int, default=10
        Which smallest ratio summarises each side (MOSTLY AI uses the 10th).
    distance : {"dcr", "gower", "euclidean"}, default="dcr"
        Distance between rows.
    """

    id = "nndr"
    report_order = 190
    attack = (
        "Synthetic rows that sit much closer to one training row than to any other point at individual "
        "people; the holdout shows how often that happens by chance."
    )
    threat_model = ThreatModel(
        attacker_holds=AUDIT,
        target=TRAINING,
        meaning=(
            "the rank-th (by default 10th) smallest ratio of a synthetic row's distances to its nearest and second-nearest training rows, over the same against the holdout: about 1 = no memorisation, below 1 = synthetic rows sit on single training rows"
        ),
    )
    higher_is_safer = True
    requires_holdout = True

    rank: Param[int] = Param(
        integer(minimum=1), 10, "Which smallest ratio summarises each side."
    )
    distance: Param[str] = Param(option(DISTANCES), "dcr", "Distance between rows.")

    runs_partitioned = True

    def supports_partitioned(self) -> bool:
        """The ``dcr`` distance runs on every row of partitioned tables."""
        return self.distance == "dcr"

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        space = Space.for_tables(tables, self.distance)
        real, holdout, syn = (
            space.data(tables, name) for name in ("real", "holdout", "synthetic")
        )
        n_r, n_h, n_s = n_rows(real), n_rows(holdout), n_rows(syn)
        m = min(n_r, n_h)
        if m < 2:
            msg = (
                f"`nndr` needs at least 2 rows in the real and holdout tables (the ratio uses the two nearest "
                f"rows); got {n_r} real and {n_h} holdout rows."
            )
            raise InputError(msg)
        rng = context.rng
        rows_r, rows_h = sample_rows(n_r, m, rng), sample_rows(n_h, m, rng)
        ratio_r = space.search_reduce(
            syn,
            take_rows(real, rows_r),
            _distance_ratio,
            k=2,
            context=context,
            description="NNDR synthetic → real",
        )
        ratio_h = space.search_reduce(
            syn,
            take_rows(holdout, rows_h),
            _distance_ratio,
            k=2,
            context=context,
            description="NNDR synthetic → holdout",
        )
        rank = self.rank
        if n_s < rank:
            context.warn(
                f"the synthetic table has {n_s} rows, fewer than rank={rank}; the largest ratio was used instead."
            )
            rank = n_s
        stat_r, stat_h = _kth_smallest(ratio_r, rank), _kth_smallest(ratio_h, rank)
        score = stat_r / stat_h
        breakdown: dict[str, JSONValue] = {
            "nndr_ratio": score,
            "nndr_training": stat_r,
            "nndr_holdout": stat_h,
            "mean": {
                "training": float(ratio_r.mean()),
                "holdout": float(ratio_h.mean()),
            },
            "median": {
                "training": float(np.median(ratio_r)),
                "holdout": float(np.median(ratio_h)),
            },
            "share_lower_to_training": float(np.mean(ratio_r < ratio_h)),
            "holdout_test": share_test(
                (ratio_r < ratio_h) + 0.5 * (ratio_r == ratio_h),
                statistic="share of synthetic rows with a lower distance ratio to training than to holdout rows",
            ),
            "rank": rank,
            "sample_size": m,
            "n_synthetic": n_s,
            "distance": self.distance,
        }
        records = {
            "nndr_training": RecordScores(
                "synthetic",
                np.arange(n_s),
                ratio_r,
                "NNDR of each synthetic row to real",
            ),
            "nndr_holdout": RecordScores(
                "synthetic",
                np.arange(n_s),
                ratio_h,
                "NNDR of each synthetic row to holdout",
            ),
        }
        return Outcome(score=score, breakdown=breakdown, records=records)
