# SPDX-License-Identifier: BSD-3-Clause
"""``sdc_risk``: sdcMicro's individual risk and SUDA scores, on the synthetic and the real table.

Two of the statistical-disclosure-control measures of sdcMicro (Templ, Kowarik, Meindl),
on the quasi-identifiers of ``reidentification_risk``
(:func:`~synthrisk.metrics.disclosure._reidentification.quasi_identifiers`):

* the individual risk (``measure_risk`` / ``indivRisk``, method ``"approx"``): the
  Benedetti–Franconi estimate of the probability of re-identifying a record from its
  class's sample frequency ``f_k`` and estimated population frequency ``F_k`` (sum of
  the sampling weights), :func:`individual_risk`;
* SUDA (Elliot et al. 2002; sdcMicro's ``suda2``): minimal sample uniques (MSUs), the
  smallest sets of quasi-identifier values that single a record out, and the SUDA and
  DIS-SUDA scores built on them, :func:`suda_scores`.

Both run on the synthetic table and, for comparison, on the real table: a release
riskier than the data it came from shows here. Cost: the individual risk is one
factorisation and ``O(n)`` bincounts; SUDA factorises the rows once per subset of at
most ``max_msu`` quasi-identifiers, ``O(n · sum_{k ≤ max_msu} C(m, k))`` for ``m``
quasi-identifiers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk._validation import check_columns
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._combinations import combination_codes
from synthrisk.metrics._params import Param, column_list, custom, integer, number
from synthrisk.metrics._threat import SOME_COLUMNS, TRAINING, ThreatModel
from synthrisk.metrics.disclosure._reidentification import (
    EMA_THRESHOLD,
    quasi_identifiers,
)
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables

__all__ = [
    "SUDA_MAX_ALL",
    "SdcRisk",
    "SudaScores",
    "individual_risk",
    "suda_scores",
    "suda_weights",
]

#: ``max_msu=None`` searches every subset size (as sdcMicro's ``suda2``) up to this
#: many quasi-identifiers (``2^m - 1`` subsets); beyond it, sizes up to 3
SUDA_MAX_ALL = 10
_SUDA_CAPPED = 3


# ------------------------------------------------------------------ individual risk


def individual_risk(fk: FloatArray, big_fk: FloatArray) -> FloatArray:
    """sdcMicro's individual risk (``indivRisk(method="approx")``) of each record.

    With ``p = f_k / F_k`` (``f_k`` the record's class size in the sample, ``F_k`` the
    estimated population size of the class, the sum of its sampling weights):

    * ``f_k = 1``: ``p / (1 - p) · log(1 / p)``;
    * ``f_k = 2``: ``p / (1 - p) - (p / (1 - p))² · log(1 / p)``;
    * ``f_k ≥ 3``: ``p / (f_k - (1 - p))``;
    * ``F_k ≤ f_k`` (the sample is the population, sdcMicro's ``fk == Fk``): ``1 / f_k``.

    Benedetti and Franconi's negative-binomial estimate, the expectation of
    ``1 / F`` given ``f_k`` (Benedetti, Franconi 1998; Franconi, Polettini 2004).

    Parameters
    ----------
    fk, big_fk : ndarray of shape (n,)
        Sample and population frequency of each record's class.
    """
    fk = np.asarray(fk, dtype=np.float64)
    big_fk = np.asarray(big_fk, dtype=np.float64)
    whole = big_fk <= fk
    p = np.where(whole, 0.5, fk / np.where(whole, 1.0, big_fk))
    ratio = p / (1.0 - p)
    log_inv = np.log(1.0 / p)
    risk = np.where(
        fk == 1,
        ratio * log_inv,
        np.where(fk == 2, ratio - ratio**2 * log_inv, p / (fk - (1.0 - p))),
    )
    return np.where(whole, 1.0 / fk, risk)


def _risk_summary(risk: FloatArray, threshold: float) -> dict[str, JSONValue]:
    n = risk.size
    if n == 0:
        return {
            "global_risk": None,
            "expected_reidentifications": None,
            "highest": None,
            "records_at_risk": None,
        }
    return {
        "global_risk": float(risk.mean()),
        "expected_reidentifications": float(risk.sum()),
        "highest": float(risk.max()),
        "records_at_risk": float(np.mean(risk > threshold)),
    }


# ------------------------------------------------------------------ SUDA


def suda_weights(n_attributes: int, max_msu: int) -> FloatArray:
    """SUDA's weight of an MSU of each size ``1 .. max_msu``.

    Elliot et al.'s ``prod_{i=k}^{M} (ATT - i)`` for an MSU of size ``k``, with ``M`` the
    largest size searched, capped at ``ATT - 1`` (an MSU of every attribute weighs 1): with
    every size searched it is sdcMicro's ``(ATT - k)!`` (``suda2(original_scores=TRUE)``).
    """
    top = min(max_msu, n_attributes - 1)
    return np.array(
        [
            float(math.prod(n_attributes - i for i in range(k, top + 1)))
            for k in range(1, max_msu + 1)
        ]
    )


class SudaScores:
    """Per-record SUDA results: MSU counts by size, SUDA and DIS-SUDA scores."""

    def __init__(
        self, msu_counts: IntArray, score: FloatArray, dis_score: FloatArray
    ) -> None:
        self.msu_counts = msu_counts
        self.score = score
        self.dis_score = dis_score

    def summary(self) -> dict[str, JSONValue]:
        """Summary statistics of the table's scores."""
        n = self.score.size
        if n == 0:
            return {
                "mean_score": None,
                "highest_score": None,
                "share_with_msu": None,
                "msu_by_size": {},
                "mean_dis_score": None,
                "highest_dis_score": None,
            }
        return {
            "mean_score": float(self.score.mean()),
            "highest_score": float(self.score.max()),
            "share_with_msu": float(np.mean(self.score > 0)),
            "msu_by_size": {
                str(k + 1): int(c) for k, c in enumerate(self.msu_counts.sum(axis=0))
            },
            "mean_dis_score": float(self.dis_score.mean()),
            "highest_dis_score": float(self.dis_score.max()),
        }


def _unique_mask(codes: IntArray) -> np.ndarray:
    counts = np.bincount(codes)
    return counts[codes] == 1


def _combine(a: IntArray, b: IntArray) -> IntArray:
    """Dense ids of the pairs ``(a, b)`` (hash factorisation, ``O(n)``)."""
    width = np.int64(int(b.max()) + 1 if b.size else 1)
    ids, _ = pd.factorize(a.astype(np.int64) * width + b, sort=False)
    return ids.astype(np.intp)


def suda_scores(
    codes: IntArray,
    *,
    max_msu: int,
    dis_fraction: float = 0.01,
) -> SudaScores:
    """SUDA: minimal sample uniques of each record, its SUDA and DIS-SUDA scores.

    A set of a record's quasi-identifier values is a sample unique when no other record
    shares it, and minimal (an MSU) when no proper subset is unique; uniqueness only
    grows with the set, so checking the subsets one value smaller suffices. The SUDA
    score adds, over the record's MSUs, the weight of each size (:func:`suda_weights`);
    sdcMicro pads fewer than 3 quasi-identifiers with constant columns, so ``ATT`` is at
    least 3 here too. DIS-SUDA (sdcMicro's formula): with ``U`` the records unique on
    every quasi-identifier, ``P`` the records in classes of exactly 2, ``f`` =
    ``dis_fraction``, ``Dis = U f / (U f + P (1 - f))``, ``Q = 1 + (8 - ATT) / 20`` and
    ``A = sum_j score_j^{-Q}`` over the records with a score, a record's DIS score is
    ``1 / (1 + (U / Dis - U) / (score^Q A))`` (0 without a score).

    Parameters
    ----------
    codes : ndarray of shape (n, m)
        Integer codes of each quasi-identifier (a missing value is a value).
    max_msu : int
        Largest MSU size searched (at most ``m``).
    dis_fraction : float, default=0.01
        Sampling fraction of DIS-SUDA (sdcMicro's ``DisFraction``).

    Cost ``O(n · sum_{k ≤ max_msu} C(m, k))`` time, ``O(n · C(m, k - 1))`` memory.
    """
    n, m = codes.shape
    max_msu = max(1, min(max_msu, m))
    att = max(m, 3)
    weights = suda_weights(att, max_msu)
    counts = np.zeros((n, max_msu), dtype=np.int64)
    if n == 0 or m == 0:
        return SudaScores(counts, np.zeros(n), np.zeros(n))
    single: dict[tuple[int, ...], IntArray] = {
        (j,): pd.factorize(codes[:, j])[0].astype(np.intp) for j in range(m)
    }
    previous_ids = single
    previous_unique: dict[tuple[int, ...], np.ndarray] = {
        key: _unique_mask(ids) for key, ids in single.items()
    }
    for unique in previous_unique.values():
        counts[:, 0] += unique
    for size in range(2, max_msu + 1):
        ids_now: dict[tuple[int, ...], IntArray] = {}
        unique_now: dict[tuple[int, ...], np.ndarray] = {}
        for subset in itertools.combinations(range(m), size):
            head = subset[:-1]
            ids = _combine(previous_ids[head], single[(subset[-1],)])
            unique = _unique_mask(ids)
            ids_now[subset] = ids
            unique_now[subset] = unique
            minimal = unique.copy()
            for drop in range(size):
                if not minimal.any():
                    break
                minimal &= ~previous_unique[subset[:drop] + subset[drop + 1 :]]
            counts[:, size - 1] += minimal
        previous_ids, previous_unique = ids_now, unique_now
    score = counts @ weights
    full = single[(0,)]
    for j in range(1, m):
        full = _combine(full, single[(j,)])
    full_size = np.bincount(full)[full]
    n_unique = float(np.sum(full_size == 1))
    n_pairs = float(np.sum(full_size == 2))
    dis = np.zeros(n)
    scored = score > 0
    if scored.any() and n_unique > 0:
        f = dis_fraction
        dis_rate = n_unique * f / (n_unique * f + n_pairs * (1.0 - f))
        q = 1.0 + (8.0 - att) / 20.0
        powered = score[scored] ** q
        adjust = float(np.sum(1.0 / powered))
        dis[scored] = 1.0 / (
            1.0 + (n_unique / dis_rate - n_unique) / (powered * adjust)
        )
    return SudaScores(counts, score, dis)


def _max_msu(value: int | None, m: int) -> int:
    if value is not None:
        return min(value, m)
    return m if m <= SUDA_MAX_ALL else _SUDA_CAPPED


def _weights_column(value: object, name: str) -> str | None:
    if value is None or (isinstance(value, str) and value):
        return value
    msg = f"`{name}` must be a column name (a string) or None; got {value!r}."
    raise ParameterError(msg)


# ------------------------------------------------------------------ the metric


@register
class SdcRisk(Metric):
    """sdcMicro's individual risk and SUDA scores of the synthetic table, and of the real one.

    On the quasi-identifiers (``columns``, else the attacker-known columns found by
    name, as ``reidentification_risk``), for the synthetic table and, as a reference, the
    real (training) table:

    * ``individual_risk``: sdcMicro's ``measure_risk`` individual risk of each record
      (:func:`individual_risk`), summarised as ``global_risk`` (its mean, sdcMicro's
      global risk), ``expected_reidentifications`` (its sum), ``highest`` and
      ``records_at_risk`` (share above ``threshold``). Population frequencies: the real
      table's sampling ``weights`` (a column), else ``1 / sampling_fraction`` per real
      record; the population size ``N`` they give is spread evenly over the synthetic
      records (weight ``N / n_synthetic``). With the defaults (the real table is the
      whole population) and equal table sizes every risk is ``1 / f_k``.
    * ``suda``: SUDA scores (:func:`suda_scores`): ``mean_score``, ``highest_score``,
      ``share_with_msu`` (records with at least one minimal sample unique),
      ``msu_by_size``, ``mean_dis_score`` and ``highest_dis_score``.

    The score is the synthetic table's global individual risk; informational (no
    holdout test). Reproduces sdcMicro's published examples: ``indivRisk``'s 8-record
    weighted test table, the SUDA scores of the 8-record example of Templ's book
    (2017) and of the 10-record example of the SDC practice guide (Benschop, Machingauta,
    Welch), in ``tests/metrics/disclosure/test_sdc.py``.

    Parameters
    ----------
    columns : list of str, default=None
        The quasi-identifiers; None: as ``reidentification_risk`` chooses them.
    weights : str, default=None
        Column of the real table with sampling weights (left out of the
        quasi-identifiers); None: ``sampling_fraction``.
    sampling_fraction : float, default=1.0
        Share of the population in the real table when no ``weights`` are given: 1, the
        real table is the whole population (every real risk is ``1 / f_k``).
    max_msu : int, default=None
        Largest minimal-sample-unique size SUDA searches. None: every size, as
        sdcMicro's ``suda2`` (which has no limit), up to 10 quasi-identifiers; 3 beyond.
    dis_fraction : float, default=0.01
        Sampling fraction of the DIS-SUDA score (sdcMicro's ``DisFraction``).
    threshold : float, default=0.09
        Individual risk above which a record counts as at risk (EMA: 0.09).

    References
    ----------
    M. Templ, A. Kowarik, B. Meindl (2015), "Statistical disclosure control for
    micro-data using the R package sdcMicro", J. Stat. Softw. 67(4); R. Benedetti,
    L. Franconi (1998), "Statistical and technological solutions for controlled data
    dissemination"; M. J. Elliot, A. M. Manning, R. W. Ford (2002), "A computational
    algorithm for handling the special uniques problem"; M. J. Elliot et al. (2005),
    "SUDA: a program for detecting special uniques".
    """

    id = "sdc_risk"
    report_order = 119
    runs_by_default = False
    higher_is_safer = False
    attack = (
        "An attacker who knows a real person's quasi-identifiers looks for records that a few of "
        "those values already single out (sample uniques), which are likely population uniques."
    )
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "sdcMicro's global individual risk of the synthetic table (mean probability of "
            "re-identifying a record, Benedetti–Franconi): 0 = none; SUDA scores and the real "
            "table's values in the breakdown"
        ),
        known=("columns",),
    )

    columns: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Quasi-identifiers; None: the attacker-known columns found by name.",
    )
    weights: Param[str | None] = Param(
        custom(_weights_column, "a column name or None"),
        None,
        "Column of sampling weights in the real table; None: sampling_fraction.",
    )
    sampling_fraction: Param[float] = Param(
        number(gt=0, le=1),
        1.0,
        "Share of the population in the real table (1: all of it).",
    )
    max_msu: Param[int | None] = Param(
        integer(minimum=1, allow_none=True),
        None,
        "Largest MSU size SUDA searches; None: every size up to 10 quasi-identifiers.",
    )
    dis_fraction: Param[float] = Param(
        number(gt=0, lt=1), 0.01, "Sampling fraction of DIS-SUDA."
    )
    threshold: Param[float] = Param(
        number(gt=0, le=1),
        EMA_THRESHOLD,
        "Individual risk above which a record is at risk (EMA: 0.09).",
    )

    def _check_params(self) -> None:
        if self.weights is not None and self.sampling_fraction != 1.0:
            msg = (
                "give `weights` or `sampling_fraction`, not both: the weights already say how "
                "many people each real record stands for."
            )
            raise ParameterError(msg)

    def check_tables(self, tables: Tables) -> None:
        """The quasi-identifiers and the weights must be columns of the tables."""
        names = tables.schema.names
        if self.columns is not None:
            check_columns(self.columns, name="columns", available=names)
        if self.weights is not None:
            check_columns([self.weights], name="weights", available=names)
            w = pd.to_numeric(tables.real[self.weights], errors="coerce")
            if w.isna().any() or bool((w <= 0).any()):
                msg = (
                    f"`weights` column {self.weights!r} must hold positive numbers in every "
                    "real row (sampling weights: how many people each record stands for)."
                )
                raise ParameterError(msg)
            if self.columns is not None and self.weights in self.columns:
                msg = f"`weights` column {self.weights!r} is also a quasi-identifier; leave it out of `columns`."
                raise ParameterError(msg)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        qi, why = quasi_identifiers(tables, self.columns, metric=self.id)
        qi = [c for c in qi if c != self.weights]
        if not qi:
            msg = "`sdc_risk` has no quasi-identifier left besides the `weights` column; name them with `columns`."
            raise ParameterError(msg)
        threshold = self.threshold
        codes, n_classes = combination_codes(tables, qi, ["real", "synthetic"])
        real, syn = codes["real"], codes["synthetic"]
        if self.weights is not None:
            w_real = pd.to_numeric(tables.real[self.weights]).to_numpy(np.float64)
        else:
            w_real = np.full(real.size, 1.0 / self.sampling_fraction)
        population = float(w_real.sum())
        w_syn = np.full(syn.size, population / max(syn.size, 1))
        risks: dict[str, FloatArray] = {}
        for name, cls, w in (("synthetic", syn, w_syn), ("real", real, w_real)):
            fk = np.bincount(cls, minlength=n_classes)[cls]
            big_fk = np.bincount(cls, weights=w, minlength=n_classes)[cls]
            risks[name] = individual_risk(
                fk.astype(np.float64), big_fk.astype(np.float64)
            )
        max_msu = _max_msu(self.max_msu, len(qi))
        suda: dict[str, SudaScores] = {}
        for name in ("synthetic", "real"):
            matrix = np.column_stack(
                [
                    combination_codes(tables, [c], ["real", "synthetic"])[0][name]
                    for c in qi
                ]
            )
            suda[name] = suda_scores(
                matrix, max_msu=max_msu, dis_fraction=self.dis_fraction
            )
        individual: dict[str, JSONValue] = {
            name: _risk_summary(risks[name], threshold)
            for name in ("synthetic", "real")
        }
        individual["population_size"] = population
        individual["weights"] = (
            f"column {self.weights!r}"
            if self.weights is not None
            else f"1 / sampling_fraction = {1.0 / self.sampling_fraction:g} per real record"
        )
        suda_part: dict[str, JSONValue] = {
            name: suda[name].summary() for name in ("synthetic", "real")
        }
        suda_part["max_msu"] = max_msu
        suda_part["dis_fraction"] = self.dis_fraction
        breakdown: dict[str, JSONValue] = {
            "individual_risk": individual,
            "suda": suda_part,
            "threshold": threshold,
            "quasi_identifiers": list(qi),
        }
        records = {
            "individual_risk": RecordScores(
                "synthetic",
                np.arange(syn.size),
                risks["synthetic"],
                "sdcMicro's individual risk of the synthetic record (Benedetti–Franconi)",
            ),
            "suda_score": RecordScores(
                "synthetic",
                np.arange(syn.size),
                suda["synthetic"].score.astype(np.float64),
                "SUDA score of the synthetic record (minimal sample uniques, Elliot et al.)",
            ),
        }
        syn_risk = risks["synthetic"]
        params: dict[str, Any] = dict(self.params)
        params["columns"] = list(qi)
        params["columns_chosen_by"] = why
        return Outcome(
            score=float(syn_risk.mean()) if syn_risk.size else None,
            breakdown=breakdown,
            records=records,
            params=params,
        )
