# SPDX-License-Identifier: BSD-3-Clause
"""Identical matches: MOSTLY AI QA's identical match share, training vs holdout.

Exact row equality (missing equals missing, -0.0 equals 0.0) in memory and on a
cluster alike (:func:`~synthrisk.metrics.membership._row_keys.row_keys`); near
matches in a distance of :mod:`synthrisk.metrics.membership._space`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, number, option
from synthrisk.metrics._threat import SYNTHETIC_ONLY, TRAINING, ThreatModel
from synthrisk.metrics.membership._holdout import copy_test
from synthrisk.metrics.membership._people import (
    PERSON,
    People,
    find_person_column,
    people_of,
)
from synthrisk.metrics.membership._row_keys import row_keys
from synthrisk.metrics.membership._space import (
    DISTANCES,
    Space,
    n_rows,
    sample_rows,
    take_rows,
)
from synthrisk.results import RecordScores
from synthrisk.schema.partitioned import is_partitioned
from synthrisk.schema.tables import Tables
from synthrisk.stats.holdout import paired_difference_test
from synthrisk.stats.intervals import wilson_interval

__all__ = ["IdenticalMatchShare"]


@register
class IdenticalMatchShare(Metric):
    """Share of synthetic rows that copy a real row exactly (MOSTLY AI QA's IMS).

    A synthetic row matches when its distance to the closest real row is at most
    ``tolerance`` (0 = every column equal, missing matching missing). With a holdout,
    the same share against the holdout says how often rows coincide by chance
    (frequent in tables of a few categorical columns); the breakdown also gives the
    share of holdout rows that coincide with a real row, and the training share at the
    holdout's size.

    Parameters
    ----------
    tolerance : float, default=0.0
        Largest distance that counts as a match; 0 compares rows exactly (fast, by
        hashing). MOSTLY AI uses 1e-6 in its own embedding space.
    distance : {"dcr", "gower", "euclidean"}, default="dcr"
        Distance used when ``tolerance > 0``.
    person : str, "auto" or None, default="auto"
        The column naming people with several rows (panel data): the holdout test
        relabels people, not rows (exact copies). ``"auto"`` finds a person key.
    """

    id = "identical_match_share"
    report_order = 200
    attack = "An attacker holding the synthetic table finds real people's records copied into it verbatim."
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "share of synthetic rows that copy a training row (distance at most the tolerance; exact by default): 0 = none; compare with how often holdout rows coincide by chance"
        ),
    )
    higher_is_safer = False

    tolerance: Param[float] = Param(
        number(ge=0), 0.0, "Largest distance that counts as a match; 0: exact."
    )
    distance: Param[str] = Param(
        option(DISTANCES), "dcr", "Distance used when tolerance > 0."
    )
    person: Param[str | None] = PERSON

    runs_partitioned = True

    def supports_partitioned(self) -> bool:
        """Exact matches, or near matches in the ``dcr`` distance, run on every row."""
        return self.tolerance == 0.0 or self.distance == "dcr"

    def _people_of(self, tables: Tables) -> People | None:
        """Who owns which rows, when a person key says that people own several rows."""
        if (
            self.person is None
            or tables.holdout is None
            or is_partitioned(tables.encoded("real"))
        ):
            return None
        column = find_person_column(tables) if self.person == "auto" else self.person
        return None if column is None else people_of(tables, column)

    def _holdout_test(
        self,
        keys: dict[str, np.ndarray] | None,
        match_real: np.ndarray,
        match_hold: np.ndarray,
        people: People | None = None,
    ) -> dict[str, Any]:
        """Copies of training people against copies of holdout people.

        With ``tolerance=0`` (exact copies), the exact moments of the training side's
        count under random relabelling of the pooled real rows (see
        :func:`~synthrisk.metrics.membership._holdout.copy_test`): exact without
        memorisation whatever the two sizes, and no copy is lost to subsampling. The
        synthetic table is the one to be released, so it is held fixed: the only chance
        is which real people fell into the training table. With ``tolerance > 0``,
        the paired difference of near matches per synthetic row.
        """
        if keys is None:
            return paired_difference_test(
                match_real,
                match_hold,
                statistic="share of synthetic rows matching a training row minus a holdout row",
            )
        return copy_test(
            keys["synthetic"],
            keys["real"],
            keys["holdout"],
            person=None if people is None else people.person,
            n_train_people=0 if people is None else people.n_train,
        )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        exact = self.tolerance == 0.0
        space = Space.for_tables(tables, "dcr" if exact else self.distance)
        names = ["synthetic", "real"] + ([] if tables.holdout is None else ["holdout"])
        data = {name: space.data(tables, name) for name in names}
        # exact matches: ids of the distinct rows over all tables, computed once
        keys = (
            dict(zip(names, row_keys(*data.values()), strict=True)) if exact else None
        )
        n_ids = (
            1 + max((int(k.max(initial=-1)) for k in keys.values()), default=-1)
            if keys
            else 0
        )

        def matches(
            query: str, reference: str, rows: np.ndarray | None = None
        ) -> np.ndarray:
            if keys is not None:  # ids are dense: a flag per id (as np.isin)
                present = np.zeros(n_ids, dtype=bool)
                present[keys[reference] if rows is None else keys[reference][rows]] = (
                    True
                )
                return present[keys[query]]
            ref = data[reference] if rows is None else take_rows(data[reference], rows)
            what = f"matches {query} → {reference}"
            nn = space.search(data[query], ref, k=1, context=context, description=what)
            return nn.distances[:, 0] <= self.tolerance

        n_s = n_rows(data["synthetic"])
        match_real = matches("synthetic", "real")
        share = float(match_real.mean())
        breakdown: dict[str, Any] = {
            "identical_match_share": share,
            "n_matches": int(match_real.sum()),
            "n_synthetic": n_s,
            "tolerance": self.tolerance,
        }
        records = {
            "matches_real": RecordScores(
                "synthetic",
                np.arange(n_s),
                match_real.astype(np.float64),
                "1 if the synthetic row copies a real row",
            )
        }
        if tables.holdout is not None:
            n_r, n_h = n_rows(data["real"]), n_rows(data["holdout"])
            match_hold = matches("synthetic", "holdout")
            hold_in_real = matches("holdout", "real")
            breakdown["identical_match_share_holdout"] = float(match_hold.mean())
            breakdown["holdout_rows_matching_real"] = float(hold_in_real.mean())
            if n_r > n_h:
                rows = sample_rows(n_r, n_h, context.rng)
                breakdown["identical_match_share_real_at_holdout_size"] = float(
                    matches("synthetic", "real", rows).mean()
                )
            else:
                breakdown["identical_match_share_real_at_holdout_size"] = share
            breakdown["n_holdout"] = n_h
            breakdown["holdout_test"] = self._holdout_test(
                keys, match_real, match_hold, self._people_of(tables)
            )
            records["matches_holdout"] = RecordScores(
                "synthetic",
                np.arange(n_s),
                match_hold.astype(np.float64),
                "1 if the synthetic row copies a holdout row",
            )
        ci = wilson_interval(int(match_real.sum()), n_s)
        return Outcome(
            score=share,
            breakdown=breakdown,
            ci=ci,
            records=records,
        )
