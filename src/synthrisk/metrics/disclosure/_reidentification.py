# SPDX-License-Identifier: BSD-3-Clause
"""``reidentification_risk``: prosecutor, journalist and marketer risk as ARX computes them.

The classical re-identification risk models regulators' thresholds refer to (El Emam,
"Guide to the De-Identification of Personal Health Information", 2013), in the form ARX
reports them (``RiskModelSampleSummary``): for each attacker model, the share of records
whose risk is above a threshold (ARX's "records at risk", rA), the highest risk (rB) and
the success rate (rC, the expected share of records re-identified), computed on the
equivalence classes of the quasi-identifiers (exact combinations of their values; a
missing value is a value). Also the real-anchored risk: what the synthetic table's
classes mean for the real people behind them (``docs/disclosure.md``,
"Re-identification risk").

The quasi-identifiers are ``columns``, else the attacker-known columns found by name
(:func:`synthrisk.metrics._known.known_columns`: date of birth, postcode, sex, age ...),
else the 3 usable columns with the fewest distinct values; :func:`quasi_identifiers`
makes that choice for ``sdc_risk`` too. Cost: one factorisation of the rows, then
``O(n)`` bincounts.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk._validation import check_columns
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._combinations import combination_codes
from synthrisk.metrics._known import KNOWN_RULE, known_columns
from synthrisk.metrics._params import Param, column_list, number
from synthrisk.metrics._threat import SOME_COLUMNS, TRAINING, ThreatModel
from synthrisk.metrics.disclosure._defaults import (
    exact_choice_text,
    resolve_key_columns,
)
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.control import wilson_bounds

__all__ = [
    "EMA_THRESHOLD",
    "ReidentificationRisk",
    "journalist_risk",
    "prosecutor_risk",
    "quasi_identifiers",
    "real_anchored_risk",
]

#: the highest acceptable probability of re-identifying one record: EMA's Policy 0070
#: anonymisation-report template (risk ≤ 9 %; El Emam et al., JMIR 2020, e23139), the
#: value PETsARD uses after Singapore PDPC's guide to synthetic data
EMA_THRESHOLD = 0.09

_Z95 = 1.959963984540054


def quasi_identifiers(
    tables: Tables, columns: list[str] | None, *, metric: str
) -> tuple[list[str], str]:
    """The quasi-identifiers of ``reidentification_risk`` and ``sdc_risk``, and why.

    ``columns`` when given; else the attacker-known columns found by name
    (:data:`~synthrisk.metrics._known.KNOWN_NAMES`); else, when no column is named like
    one, the 3 usable columns with the fewest distinct real values, leaving out the last
    categorical column (the sensitive column of the disclosure family's default attacker).
    """
    if columns is not None:
        return list(columns), "`columns`"
    found = known_columns(tables, person="auto")
    if found:
        return found, KNOWN_RULE
    keys, _, rule = resolve_key_columns(
        tables,
        keys=None,
        sensitive=None,
        metric=metric,
        hint="name the quasi-identifiers with `columns`",
        rule="coarsest",
    )
    why = exact_choice_text(
        keys="columns", sensitive=None, uses_sensitive=False, rule=rule
    )
    return keys, "no column is named like an attacker-known attribute; " + why


def _share(mask: np.ndarray, weights: IntArray, total: float) -> float:
    return float(weights[mask].sum() / total) if total else 0.0


def prosecutor_risk(
    sizes: IntArray, *, threshold: float
) -> dict[str, float | int | None]:
    """ARX's prosecutor risk from the sizes of the released table's classes.

    Every record's risk is ``1 / f_k``, ``f_k`` the size of its class. ``highest`` is
    ``1 / min f_k`` (rB), ``average`` the success rate ``n_classes / n`` (rC, also the
    mean of the records' risks and the prosecutor-marketer risk), ``records_at_risk``
    the share of records with ``1 / f_k > threshold`` (rA; strictly above, as ARX).

    Parameters
    ----------
    sizes : ndarray of shape (n_classes,)
        Size of each class present (every entry at least 1).
    threshold : float
        Highest acceptable risk of one record.
    """
    sizes = sizes[sizes > 0]
    n = int(sizes.sum())
    if n == 0:
        return {"highest": None, "average": None, "records_at_risk": None}
    return {
        "highest": 1.0 / float(sizes.min()),
        "average": sizes.size / n,
        "records_at_risk": _share(1.0 / sizes > threshold, sizes, n),
    }


def journalist_risk(
    sizes: IntArray, population: IntArray, *, threshold: float
) -> dict[str, float | int | None]:
    """ARX's journalist and journalist-marketer risk, with population class sizes.

    A record's risk is ``1 / F_k``, ``F_k`` the number of population records in its
    class; a class without any (``F_k = 0``) points at nobody: risk 0. ``highest`` is
    ``1 / min F_k`` over the classes with ``F_k > 0`` (rB), ``average`` ARX's success
    rate ``max(n_classes / sum F_k, sum(f_k / F_k) / n)`` (rC, over the classes with
    ``F_k > 0``), ``records_at_risk`` the share of released records with
    ``1 / F_k > threshold`` (rA), ``marketer`` the journalist-marketer risk
    ``sum(f_k / F_k) / n`` (the expected share of released records matched to the right
    person when each is matched to one of its ``F_k`` people at random).

    Parameters
    ----------
    sizes, population : ndarray of shape (n_classes,)
        ``f_k`` (released records) and ``F_k`` (population records) of each class.
    threshold : float
        Highest acceptable risk of one record.
    """
    present = sizes > 0
    f, big_f = sizes[present], population[present]
    n = int(f.sum())
    if n == 0:
        return {
            "highest": None,
            "average": None,
            "records_at_risk": None,
            "marketer": None,
        }
    held = big_f > 0
    f_h, big_h = f[held].astype(np.float64), big_f[held].astype(np.float64)
    if not held.any():
        return {"highest": 0.0, "average": 0.0, "records_at_risk": 0.0, "marketer": 0.0}
    marketer = float((f_h / big_h).sum() / n)
    return {
        "highest": 1.0 / float(big_h.min()),
        "average": max(f_h.size / float(big_h.sum()), marketer),
        "records_at_risk": float(f_h[1.0 / big_h > threshold].sum() / n),
        "marketer": marketer,
    }


def real_anchored_risk(
    real_classes: IntArray,
    n_real_of: IntArray,
    n_synthetic_of: IntArray,
    *,
    threshold: float,
) -> tuple[dict[str, float | int | None], FloatArray]:
    """The risk a real person faces from the synthetic table's classes.

    A real record whose class the synthetic table repeats (at least one synthetic record
    with the same quasi-identifiers) is one of ``|real class|`` real people behind those
    synthetic records: risk ``1 / |real class|``; a real record whose class the synthetic
    table does not repeat: risk 0. ``highest``, ``average`` (the mean over real records)
    and ``records_at_risk`` (share of real records with risk above ``threshold``) are over
    the real records; ``synthetic_records_at_risk`` is the share of synthetic records
    whose class holds between 1 and ``1 / threshold`` real records (they point at a real
    person with a probability above the threshold).

    Returns
    -------
    summary : dict
    risk : ndarray of shape (n_real,)
        Every real record's risk.
    """
    repeated = n_synthetic_of[real_classes] > 0
    size = n_real_of[real_classes].astype(np.float64)
    risk = np.where(repeated, 1.0 / np.maximum(size, 1.0), 0.0)
    n_real = risk.size
    n_syn = int(n_synthetic_of.sum())
    with_both = (n_real_of > 0) & (n_synthetic_of > 0)
    pointing = with_both & (1.0 / np.maximum(n_real_of, 1) > threshold)
    summary: dict[str, float | int | None] = {
        "highest": float(risk.max()) if n_real else None,
        "average": float(risk.mean()) if n_real else None,
        "records_at_risk": float(np.mean(risk > threshold)) if n_real else None,
        "n_real_at_risk": int((risk > threshold).sum()),
        "real_in_repeated_classes": float(repeated.mean()) if n_real else None,
        "classes_repeated": int(with_both.sum()),
        "synthetic_records_at_risk": float(n_synthetic_of[pointing].sum() / n_syn)
        if n_syn
        else None,
    }
    return summary, risk


@register
class ReidentificationRisk(Metric):
    """Prosecutor, journalist and marketer re-identification risk (ARX), and the real-anchored risk.

    On the equivalence classes of the quasi-identifiers (exact combinations of their
    values) of the synthetic table, as ARX's ``RiskModelSampleSummary`` (El Emam 2013):

    * ``prosecutor``: a record's risk is ``1 / f_k``, ``f_k`` the size of its synthetic
      class;
    * ``journalist``: ``1 / F_k``, ``F_k`` the size of its class in the population,
      estimated by the real people synthrisk holds (training ∪ holdout rows; training rows
      alone without a holdout): the attacker does not know whether the target is in the
      release, only that the target is one of the people with those values;
    * ``marketer``: the expected share of synthetic records matched to the right person
      when every record is matched: ``sum(f_k / F_k) / n`` (journalist-marketer, the
      headline ``average``) and ``n_classes / n`` (prosecutor-marketer).

    For each: ``highest`` (ARX's rB), ``average`` (ARX's success rate rC) and
    ``records_at_risk`` (rA, the share of records whose risk is above ``threshold``;
    None for the marketer, which ARX reports as one number). A synthetic class size
    counts synthetic records, which are not people: ``real_anchored`` gives the risk a
    real (training) person faces, ``1 / |real class|`` when the synthetic table repeats
    the person's class, else 0, and its share of real people above the threshold — the
    score. Informational: no holdout test.

    The formulas follow ARX's ``RiskModelSampleSummary`` line by line (no worked example
    with published numbers was found in ARX's documentation); the tests check them on
    hand-computed tables of 6 to 10 rows.

    Parameters
    ----------
    columns : list of str, default=None
        The quasi-identifiers (attacker-known columns). None: those named like date of
        birth, postcode, sex, age, ... (as ``quasi_identifier_replay``), else the 3
        usable columns with the fewest distinct values; recorded in
        ``columns_chosen_by``.
    threshold : float, default=0.09
        Highest acceptable probability of re-identifying one record (EMA's Policy 0070
        template: 9 %).

    References
    ----------
    K. El Emam (2013), "Guide to the De-Identification of Personal Health Information";
    F. Prasser, F. Kohlmayer et al., ARX (``RiskModelSampleSummary``); European
    Medicines Agency (2017), "External guidance on the implementation of the European
    Medicines Agency policy on the publication of clinical data" (Policy 0070).
    """

    id = "reidentification_risk"
    report_order = 118
    runs_by_default = False
    higher_is_safer = False
    attack = (
        "An attacker who knows a real person's quasi-identifiers (age, sex, postcode ...) looks them up "
        "in the synthetic table and takes one of the records, or one of the people, sharing them."
    )
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "share of real (training) people whose quasi-identifier class the synthetic table repeats "
            "and whom 1 / |real class| > threshold exposes: 0 = none; prosecutor, journalist and "
            "marketer risk (ARX) in the breakdown"
        ),
        known=("columns",),
    )

    columns: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Quasi-identifiers; None: the attacker-known columns found by name.",
    )
    threshold: Param[float] = Param(
        number(gt=0, le=1),
        EMA_THRESHOLD,
        "Highest acceptable risk of one record (EMA: 0.09).",
    )

    def check_tables(self, tables: Tables) -> None:
        """The quasi-identifiers must be columns of the tables."""
        if self.columns is not None:
            check_columns(self.columns, name="columns", available=tables.schema.names)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        qi, why = quasi_identifiers(tables, self.columns, metric=self.id)
        threshold = self.threshold
        codes, n_classes = combination_codes(tables, qi)
        syn, real = codes["synthetic"], codes["real"]
        n_syn_of = np.bincount(syn, minlength=n_classes)
        n_real_of = np.bincount(real, minlength=n_classes)
        population = n_real_of.copy()
        if "holdout" in codes:
            population += np.bincount(codes["holdout"], minlength=n_classes)
        prosecutor = prosecutor_risk(n_syn_of, threshold=threshold)
        journalist = journalist_risk(n_syn_of, population, threshold=threshold)
        marketer: dict[str, JSONValue] = {
            "highest": None,
            "average": journalist.pop("marketer"),
            "records_at_risk": None,
            "prosecutor_marketer": prosecutor["average"],
        }
        anchored, real_risk = real_anchored_risk(
            real, n_real_of, n_syn_of, threshold=threshold
        )
        n_real = real.size
        score = anchored["records_at_risk"]
        breakdown: dict[str, JSONValue] = {
            "prosecutor": dict(prosecutor),
            "journalist": dict(journalist),
            "marketer": marketer,
            "real_anchored": dict(anchored),
            "threshold": threshold,
            "quasi_identifiers": list(qi),
            "population": "training ∪ holdout rows"
            if "holdout" in codes
            else "training rows",
            "n_synthetic_classes": int((n_syn_of > 0).sum()),
            "n_real_classes": int((n_real_of > 0).sum()),
            "population_uniques_share": float(np.mean(population[syn] == 1))
            if syn.size
            else None,
        }
        records = {
            "prosecutor_risk": RecordScores(
                "synthetic",
                np.arange(syn.size),
                1.0 / n_syn_of[syn].astype(np.float64),
                "prosecutor risk of the synthetic record: 1 / size of its quasi-identifier class in the synthetic table",
            ),
            "real_anchored_risk": RecordScores(
                "real",
                np.arange(n_real),
                real_risk,
                "1 / size of the real record's quasi-identifier class among training rows when the synthetic table repeats the class, else 0",
            ),
        }
        n_at = int(anchored["n_real_at_risk"] or 0)
        params = dict(self.params)
        params["columns"] = list(qi)
        params["columns_chosen_by"] = why
        return Outcome(
            score=score,
            breakdown=breakdown,
            ci=wilson_bounds(float(n_at), n_real, _Z95) if n_real else None,
            records=records,
            params=params,
        )
