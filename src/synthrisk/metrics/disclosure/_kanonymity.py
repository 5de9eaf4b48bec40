# SPDX-License-Identifier: BSD-3-Clause
"""``k_anonymity``: the k-anonymity family on equivalence classes of quasi-identifiers.

One metric reports k-anonymity, distinct / entropy / recursive l-diversity and
t-closeness of the synthetic table (and of the real table and the holdout as
references), k-map and δ-presence of the synthetic table against the real one, and a
per-class drill-down; its score is the k-map share. ``l_diversity`` and ``t_closeness``
(:mod:`~synthrisk.metrics.disclosure._diversity`) score the same classes by l and t.
Classes are exact combinations of the quasi-identifier values (a missing value is a
value), not clusters: synthcity's metrics of the same names cluster the data with
k-means instead, which is why its users see non-integer k and equal k and l.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from synthrisk._typing import JSONValue
from synthrisk.metrics._base import Context, Outcome, register
from synthrisk.metrics._params import Param, column_list, integer
from synthrisk.metrics._threat import SOME_COLUMNS, TRAINING, ThreatModel
from synthrisk.metrics.disclosure._class_metric import Z95, ClassMetric, class_values
from synthrisk.results import RecordScores, to_jsonable
from synthrisk.schema.tables import Tables
from synthrisk.stats.control import compare_proportions, wilson_bounds

__all__ = ["KAnonymity"]


@register
class KAnonymity(ClassMetric):
    """k-anonymity, l-diversity, t-closeness, k-map and δ-presence on quasi-identifier classes.

    An equivalence class is the set of records sharing every quasi-identifier value.
    The score is the share of synthetic records whose class holds between 1 and
    ``k - 1`` real records: synthetic records that point at fewer than ``k`` real
    people (a k-map violation). With a holdout, the same share for the holdout rows
    released in place of the synthetic table (new people, nothing memorised) is the
    control (``breakdown["control"]``).

    The breakdown has, for the synthetic, real and holdout tables: ``k`` (smallest
    class), ``distinct_l`` (fewest distinct sensitive values in a class),
    ``entropy_l`` (``exp`` of the smallest class entropy of the sensitive values),
    ``recursive_l`` (largest ``l`` such that every class is recursive (c, l)-diverse),
    ``t`` (largest distance of a class's sensitive distribution from the table's);
    ``k_map`` (fewest real records behind a synthetic class that has any), the share
    of synthetic records whose class has no real record, ``delta_presence``
    (``min(1, n_synthetic / n_real)`` per class with real records: its maximum and
    minimum), and ``classes``: the ``top_n`` riskiest synthetic classes (fewest real
    records first) with their counts, l and t. Their quasi-identifier values are in
    ``class_values``, written to JSON only with ``include_values``.
    :class:`LDiversity` and :class:`TCloseness` score the same classes by l and t.

    Parameters
    ----------
    quasi_identifiers : list of str, default=None
        Columns an attacker can know (age, sex, postcode, ...). None: synthrisk's
        default, every usable column outside the sensitive column, so that a copy of
        a training record points at that one person (no peer has a default;
        ``docs/disclosure.md``, "Default columns"); the columns used are recorded in
        the result's parameters.
    sensitive : list of str, default=None
        Sensitive column(s) for l-diversity and t-closeness (several are one tuple).
        None with ``quasi_identifiers`` None: the last categorical column; None with
        ``quasi_identifiers`` given, or ``[]``: no sensitive column (k and k-map only).
    k : int, default=5
        Smallest acceptable number of real records behind a synthetic class.
    c : float, default=2.0
        The ``c`` of recursive (c, l)-diversity.
    t_distance : {"equal", "ordered"} or None, default=None
        Ground distance of t-closeness: ``"equal"`` (total variation, categorical),
        ``"ordered"`` (values in their sort order, for numerical or ordinal columns).
        None: ordered for one numerical sensitive column, else equal.
    top_n : int, default=20
        Classes in the drill-down.
    """

    id = "k_anonymity"
    report_order = 115
    attack = (
        "An attacker who knows a real person's quasi-identifiers finds the synthetic records with the same "
        "values; when only a few real people share them, the synthetic records point at those people."
    )
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "share of synthetic records whose quasi-identifier values only 1 to k − 1 real records share (records that point at fewer than k people): 0 = none"
        ),
        known=("quasi_identifiers",),
    )

    sensitive: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True, allow_empty=True),
        None,
        "Sensitive columns for l-diversity and t-closeness; None: synthrisk's choice.",
    )
    k: Param[int] = Param(
        integer(minimum=1), 5, "Smallest acceptable number of real records."
    )
    top_n: Param[int] = Param(integer(minimum=0), 20, "Classes in the drill-down.")

    needs_sensitive = False

    def _check_params(self) -> None:
        super()._check_params()
        if self.quasi_identifiers is not None and self.sensitive is None:
            self._replace_param("sensitive", [])

    def _unresolved(self) -> bool:
        return self.quasi_identifiers is None

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        qi: list[str] = list(self.quasi_identifiers or ())
        sens: list[str] = list(self.sensitive or ())
        k = self.k
        found = self._classes(tables)
        classes, n_classes, stats = found.classes, found.n_classes, found.stats
        n_real_of = stats["real"].size
        n_syn_of = stats["synthetic"].size
        syn_classes = classes["synthetic"]
        real_behind = n_real_of[syn_classes]
        at_risk = (real_behind >= 1) & (real_behind < k)
        n_s = syn_classes.size
        matched = n_syn_of > 0
        with_real = matched & (n_real_of > 0)
        delta = np.minimum(1.0, n_syn_of / np.maximum(n_real_of, 1))
        score = float(at_risk.mean()) if n_s else None
        breakdown: dict[str, JSONValue] = {
            "at_risk_share": score,
            "n_at_risk": int(at_risk.sum()),
            "k": k,
            "k_map": int(n_real_of[with_real].min()) if with_real.any() else None,
            "synthetic_without_real_share": float(np.mean(real_behind == 0))
            if n_s
            else None,
            "delta_presence": {
                "delta_max": float(delta[with_real].max()) if with_real.any() else None,
                "delta_min": float(delta[n_real_of > 0].min())
                if (n_real_of > 0).any()
                else None,
            },
            "t_distance": self._distance_name(found),
            **{name: to_jsonable(stat.summary()) for name, stat in stats.items()},
        }
        records = {
            "real_records_behind": RecordScores(
                "synthetic",
                np.arange(n_s),
                real_behind.astype(np.float64),
                "number of real records in the synthetic record's quasi-identifier class (k-map count)",
            ),
            "class_size": RecordScores(
                "real",
                np.arange(classes["real"].size),
                n_real_of[classes["real"]].astype(np.float64),
                "size of the real record's quasi-identifier class in the real table",
            ),
        }
        if tables.holdout is not None:
            hold_behind = n_real_of[classes["holdout"]]
            hold_risk = (hold_behind >= 1) & (hold_behind < k)
            breakdown["control"] = compare_proportions(
                float(at_risk.sum()),
                n_s,
                float(hold_risk.sum()),
                hold_risk.size,
                statistic=f"released records behind 1 to {k - 1} real records (synthetic vs holdout as the release)",
            )
        top_n = self.top_n
        risky = np.flatnonzero(with_real)
        order = risky[np.lexsort((-n_syn_of[risky], n_real_of[risky]))][:top_n]
        hold_of = stats["holdout"].size if "holdout" in stats else None
        syn_stat = stats["synthetic"]
        breakdown["classes"] = [
            {
                "class": rank,
                "n_real": int(n_real_of[c]),
                "n_synthetic": int(n_syn_of[c]),
                "n_holdout": None if hold_of is None else int(hold_of[c]),
                "distinct_l": int(syn_stat.distinct[c]) if sens else None,
                "t": float(syn_stat.t_distance[c]) if sens else None,
            }
            for rank, c in enumerate(order.tolist())
        ]
        breakdown["class_values"] = class_values(
            tables, qi, syn_classes, n_classes, order
        )
        ci = wilson_bounds(float(at_risk.sum()), n_s, Z95) if n_s else None
        return Outcome(
            score=score,
            breakdown=breakdown,
            ci=ci,
            records=records,
            value_keys=("class_values",),
        )
