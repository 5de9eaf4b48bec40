# SPDX-License-Identifier: BSD-3-Clause
"""``l_diversity`` and ``t_closeness`` on equivalence classes of quasi-identifiers.

Both judge the synthetic table's classes (the records sharing every quasi-identifier
value) by what they reveal of the sensitive column: l-diversity (Machanavajjhala et al.
2007) counts the classes' well-represented sensitive values, t-closeness (Li, Li &
Venkatasubramanian 2007) measures how far each class's distribution is from the
table's. The real table and the holdout get the same numbers as references.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import stats

from synthrisk._typing import JSONValue
from synthrisk.metrics._base import Context, Outcome, register
from synthrisk.metrics._params import Param, confidence, integer, number, option
from synthrisk.metrics._threat import SOME_COLUMNS, TRAINING, ThreatModel
from synthrisk.metrics.disclosure._class_metric import (
    Classes,
    ClassMetric,
    class_values,
)
from synthrisk.metrics.disclosure._kanonymity_kernel import ClassStatistics
from synthrisk.results import RecordScores, to_jsonable
from synthrisk.schema.tables import Tables
from synthrisk.stats.control import wilson_bounds

__all__ = ["LDiversity", "TCloseness"]

_DIVERSITY = ("distinct", "entropy", "recursive")
#: the tables in the breakdown: the released one first, then its references
_SYNTHETIC_FIRST = ("synthetic", "real", "holdout")


def _class_l(stat: ClassStatistics, diversity: str) -> np.ndarray:
    """Each class's l under the chosen l-diversity (indexed by class id)."""
    if diversity == "distinct":
        return stat.distinct.astype(np.float64)
    if diversity == "entropy":
        return stat.entropy_l
    return stat.recursive_l.astype(np.float64)


def _below(values: np.ndarray, ell: int) -> np.ndarray:
    """``values < ell``, with a margin for the rounding of ``exp(entropy)``."""
    return values < ell * (1 - 1e-9)


def _drill_down(
    tables: Tables,
    found: Classes,
    qi: list[str],
    rank: np.ndarray,
    top_n: int,
    fields: Callable[[int], dict[str, JSONValue]],
) -> tuple[list[JSONValue], list[JSONValue]]:
    """The ``top_n`` worst synthetic classes: drill-down rows and quasi-identifier values.

    Non-empty synthetic classes are ordered by ``rank`` (indexed by class id; lowest
    first), then by size (largest first). Each row gives the class's rank, its synthetic
    and real sizes and ``fields(class id)``.
    """
    syn = found.stats["synthetic"]
    present = np.flatnonzero(syn.size > 0)
    order = present[np.lexsort((-syn.size[present], rank[present]))][:top_n]
    real_of = found.stats["real"].size
    rows: list[JSONValue] = [
        {
            "class": position,
            "n_synthetic": int(syn.size[c]),
            "n_real": int(real_of[c]),
            **fields(c),
        }
        for position, c in enumerate(order.tolist())
    ]
    values = class_values(
        tables, qi, found.classes["synthetic"], found.n_classes, order
    )
    return rows, values


@register
class LDiversity(ClassMetric):
    """l-diversity of the synthetic table: records in quasi-identifier classes with too few sensitive values.

    An attacker who knows a person's quasi-identifiers finds their class in the
    released table; when the class's sensitive values are (nearly) all the same, the
    attacker learns the person's value (the homogeneity attack). A class is l-diverse
    (Machanavajjhala et al. 2007) when it holds at least ``l`` *well-represented*
    sensitive values:

    * ``"distinct"``: at least ``l`` distinct values;
    * ``"entropy"``: the entropy of its values is at least ``log(l)`` (``exp`` of the
      entropy, the class's *entropy l*, is at least ``l``);
    * ``"recursive"``: recursive (c, l)-diversity, ``r_1 < c (r_l + ... + r_m)`` for the
      class's value counts in descending order.

    The score is the share of synthetic records in classes that are not l-diverse (0:
    every class is; higher is riskier), with a Wilson interval. The breakdown gives the
    table's l under each definition (the smallest over its classes), the number of
    classes, and the same share for the real table (what releasing the real data would
    expose) and the holdout (another sample of the population; class sizes grow with the
    table, so compare tables of similar sizes). ``records["class_l"]`` is each synthetic
    record's class l; ``classes`` lists the ``top_n`` least diverse synthetic classes,
    their quasi-identifier values in ``class_values`` (JSON only with
    ``include_values``).

    The score is a property of the synthetic table alone, so it cannot tell copies of
    training records from new people: a copy of a training record is a draw from the
    same population as a new person, so a table with 5 % copies has the same
    distribution as one of new people and the same expected score, whatever the
    columns (``docs/disclosure.md``, "Default columns").

    Parameters
    ----------
    quasi_identifiers : list of str, default=None
        Columns an attacker can know. None: synthrisk's default, every usable column
        outside the sensitive column, as for ``k_anonymity`` (no peer has a default;
        recorded in the result's parameters).
    sensitive : list of str, default=None
        Sensitive column(s) (several are one tuple). None: the last categorical column
        outside the quasi-identifiers.
    l : int, default=2
        Smallest acceptable l of a class (2: not every record of a class has the same
        sensitive value).
    diversity : {"distinct", "entropy", "recursive"}, default="distinct"
        Which l-diversity the score uses (the breakdown has all three).
    c : float, default=2.0
        The ``c`` of recursive (c, l)-diversity.
    t_distance : {"equal", "ordered"} or None, default=None
        Ground distance of the classes' t in the drill-down (see :class:`TCloseness`).
    top_n : int, default=20
        Classes in the drill-down.
    confidence_level : float, default=0.95
        Level of the Wilson interval of the score.

    References
    ----------
    A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam (2007), "l-diversity:
    privacy beyond k-anonymity", ACM TKDD 1(1).
    """

    id = "l_diversity"
    report_order = 116
    attack = (
        "An attacker who knows a real person's quasi-identifiers finds their class in the synthetic table; "
        "when the class holds fewer than l distinct sensitive values (l-diversity), the attacker reads off "
        "the person's sensitive value."
    )
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "share of synthetic records in quasi-identifier classes with fewer than l well-represented sensitive values (the homogeneity attack): 0 = none"
        ),
        known=("quasi_identifiers",),
        guessed=("sensitive",),
    )

    l: Param[int] = Param(integer(minimum=2), 2, "Smallest acceptable l of a class.")  # noqa: E741
    diversity: Param[str] = Param(
        option(_DIVERSITY), "distinct", "Which l-diversity the score uses."
    )
    top_n: Param[int] = Param(integer(minimum=0), 20, "Classes in the drill-down.")
    confidence_level: Param[float] = Param(
        confidence(), 0.95, "Level of the Wilson interval of the score."
    )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        qi: list[str] = list(self.quasi_identifiers or ())
        ell, diversity = self.l, self.diversity
        found = self._classes(tables)
        breakdown: dict[str, JSONValue] = {
            "not_diverse_share": None,
            "n_not_diverse": 0,
            "l": ell,
            "diversity": diversity,
            "c": self.c,
        }
        shares: dict[str, tuple[int, int]] = {}
        for name in _SYNTHETIC_FIRST:
            stat = found.stats.get(name)
            if stat is None:
                continue
            per_class = _class_l(stat, diversity)
            below = _below(per_class[found.classes[name]], ell)
            shares[name] = (int(below.sum()), int(below.size))
            nonempty = stat.size > 0
            summary = dict(stat.summary())
            summary.pop("k", None)
            summary.pop("t", None)
            summary["n_classes_not_diverse"] = int(
                np.sum(nonempty & _below(per_class, ell))
            )
            summary["not_diverse_share"] = float(below.mean()) if below.size else None
            breakdown[name] = to_jsonable(summary)
        n_below, n_s = shares["synthetic"]
        score = n_below / n_s if n_s else None
        breakdown["not_diverse_share"] = score
        breakdown["n_not_diverse"] = n_below
        syn = found.stats["synthetic"]
        syn_l = _class_l(syn, diversity)
        breakdown["classes"], breakdown["class_values"] = _drill_down(
            tables,
            found,
            qi,
            syn_l,
            self.top_n,
            lambda c: {
                "distinct_l": int(syn.distinct[c]),
                "entropy_l": float(syn.entropy_l[c]),
                "recursive_l": int(syn.recursive_l[c]),
            },
        )
        syn_classes = found.classes["synthetic"]
        records = {
            "class_l": RecordScores(
                "synthetic",
                np.arange(n_s),
                syn_l[syn_classes],
                f"{diversity} l of the synthetic record's quasi-identifier class in the synthetic table",
            )
        }
        z = float(stats.norm.ppf(0.5 + self.confidence_level / 2))
        ci = wilson_bounds(float(n_below), n_s, z) if n_s else None
        if score is None:
            context.warn("the synthetic table has no rows; the score is undefined.")
        return Outcome(
            score=score,
            breakdown=breakdown,
            ci=ci,
            records=records,
            value_keys=("class_values",),
        )


@register
class TCloseness(ClassMetric):
    """t-closeness of the synthetic table: how far a quasi-identifier class's sensitive values stray from the table's.

    An attacker who knows a person's quasi-identifiers learns, from their class, a
    distribution of the sensitive value; t-closeness (Li, Li & Venkatasubramanian 2007)
    bounds how far that distribution may be from the whole table's, measured by the
    earth mover's distance (EMD). The score is the synthetic table's t: the largest EMD
    of a class (0: every class looks like the table; 1: some class pins the value down
    as far from the table's distribution as possible; higher is riskier). The ground
    distance is ``"equal"`` (every two values at distance 1: the EMD is the total
    variation ``Σ|p - q| / 2``) for categorical columns and ``"ordered"`` (values in
    their sort order: ``Σ_i |Σ_{j≤i} (p_j - q_j)| / (m - 1)``) for one numerical
    column. The breakdown gives the share of synthetic records in classes farther than
    ``t`` from the table, the record-weighted mean EMD, and the same for the real table
    and the holdout as references (class sizes grow with the table: a small class is
    far from the table by chance, so compare tables of similar sizes).
    ``records["class_distance"]`` is each synthetic record's class EMD. Like
    :class:`LDiversity`'s, the score is a property of the synthetic table alone and
    cannot tell copies of training records from new people of the same population.

    Parameters
    ----------
    quasi_identifiers : list of str, default=None
        Columns an attacker can know. None: synthrisk's default, every usable column
        outside the sensitive column, as for ``k_anonymity`` (no peer has a default;
        recorded in the result's parameters).
    sensitive : list of str, default=None
        Sensitive column(s) (several are one tuple). None: the last categorical column
        outside the quasi-identifiers.
    t : float, default=0.2
        The acceptable distance, for the share of records in classes farther than it.
    t_distance : {"equal", "ordered"} or None, default=None
        Ground distance; None: ordered for one numerical or datetime sensitive column,
        else equal.
    c : float, default=2.0
        The ``c`` of recursive (c, l)-diversity (in the breakdown's table summaries).
    top_n : int, default=20
        Classes in the drill-down (farthest first).

    References
    ----------
    N. Li, T. Li, S. Venkatasubramanian (2007), "t-closeness: privacy beyond
    k-anonymity and l-diversity", IEEE ICDE.
    """

    id = "t_closeness"
    report_order = 117
    attack = (
        "An attacker who knows a real person's quasi-identifiers finds their class in the synthetic table; "
        "the farther the class's sensitive values are from the whole table's (t-closeness), the more the "
        "attacker learns about the person's sensitive value."
    )
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "largest distance (earth mover's) between the sensitive values of a quasi-identifier class and those of the whole synthetic table: 0 = every class looks like the table"
        ),
        known=("quasi_identifiers",),
        guessed=("sensitive",),
    )

    t: Param[float] = Param(
        number(gt=0, le=1), 0.2, "Acceptable distance of a class from the table."
    )
    top_n: Param[int] = Param(integer(minimum=0), 20, "Classes in the drill-down.")

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        qi: list[str] = list(self.quasi_identifiers or ())
        found = self._classes(tables)
        t = self.t
        breakdown: dict[str, JSONValue] = {
            "t": None,
            "farther_share": None,
            "t_distance": self._distance_name(found),
            "threshold": t,
        }
        for name in _SYNTHETIC_FIRST:
            stat = found.stats.get(name)
            if stat is None:
                continue
            distance = stat.t_distance[found.classes[name]]
            nonempty = stat.size > 0
            farther = nonempty & (stat.t_distance > t + 1e-12)
            breakdown[name] = {
                "t": float(stat.t_distance[nonempty].max()) if nonempty.any() else None,
                "mean_distance": float(distance.mean()) if distance.size else None,
                "farther_share": float(np.mean(distance > t + 1e-12))
                if distance.size
                else None,
                "n_classes": int(nonempty.sum()),
                "n_classes_farther": int(farther.sum()),
            }
        syn = found.stats["synthetic"]
        syn_block = breakdown["synthetic"]
        assert isinstance(syn_block, dict)
        score = syn_block["t"]
        breakdown["t"] = score
        breakdown["farther_share"] = syn_block["farther_share"]
        breakdown["classes"], breakdown["class_values"] = _drill_down(
            tables,
            found,
            qi,
            -syn.t_distance,
            self.top_n,
            lambda c: {
                "distance": float(syn.t_distance[c]),
                "distinct_l": int(syn.distinct[c]),
            },
        )
        syn_classes = found.classes["synthetic"]
        records = {
            "class_distance": RecordScores(
                "synthetic",
                np.arange(syn_classes.size),
                syn.t_distance[syn_classes],
                "earth mover's distance of the synthetic record's class's sensitive values from the "
                "synthetic table's",
            )
        }
        if score is None:
            context.warn("the synthetic table has no rows; the score is undefined.")
        return Outcome(
            score=score,
            breakdown=breakdown,
            records=records,
            value_keys=("class_values",),
        )
