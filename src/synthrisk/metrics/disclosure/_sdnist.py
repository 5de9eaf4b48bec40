# SPDX-License-Identifier: BSD-3-Clause
"""NIST CRC SDNist's privacy measures: unique exact matches and the apparent-match distribution.

* :class:`UniqueExactMatches` — SDNist ``unique_exact_matches``: of the real records
  that are unique on all columns, the share that appears exactly in the synthetic
  table.
* :class:`ApparentMatchDistribution` — SDNist ``apparent_match_dist.cellchange``: real
  records unique on the quasi-identifiers are paired with the synthetic record that is
  unique on the same quasi-identifier values (an *apparent match*); for each pair, the
  share of the remaining columns whose values also agree.

Both run the same measure with the holdout in place of the real table as the control.

References
----------
NIST Collaborative Research Cycle, SDNist v2 (``sdnist/metrics/unique_exact_matches.py``,
``sdnist/metrics/apparent_match_dist.py``), https://github.com/usnistgov/SDNist.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy import stats

from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk._validation import check_columns
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._combinations import combination_codes
from synthrisk.metrics._params import Param, boolean, column_list, confidence, integer
from synthrisk.metrics._threat import (
    SOME_COLUMNS,
    SYNTHETIC_ONLY,
    TRAINING,
    ThreatModel,
)
from synthrisk.metrics.disclosure._defaults import (
    exact_choice_text,
    resolve_key_columns,
    run_resolved,
)
from synthrisk.results import MetricResult, RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.control import compare_means, compare_proportions, wilson_bounds

__all__ = ["ApparentMatchDistribution", "UniqueExactMatches"]


def _unique_in(codes: IntArray, n_codes: int) -> np.ndarray:
    """True for the rows whose code occurs once in ``codes``."""
    return np.bincount(codes, minlength=n_codes)[codes] == 1


def unique_exact_matches(
    real_codes: IntArray,
    synthetic_codes: IntArray,
    n_codes: int,
    eligible: np.ndarray | None = None,
) -> np.ndarray:
    """Per real row: 1 if it is unique in the real table and its row occurs in the synthetic table.

    ``eligible`` (per code) limits the records that can count as unique.
    """
    in_syn = np.zeros(n_codes, dtype=bool)
    in_syn[synthetic_codes] = True
    unique = _unique_in(real_codes, n_codes)
    if eligible is not None:
        unique &= eligible[real_codes]
    return (unique & in_syn[real_codes]).astype(np.float64)


def _modelable(tables: Tables) -> list[str]:
    return [spec.name for spec in tables.schema.modelable]


#: ``columns_chosen_by`` of :class:`UniqueExactMatches` without ``columns``
_ALL_COLUMNS = (
    "synthrisk's default (docs/disclosure.md, 'Default columns'): every usable column; columns of "
    "kind id, pii and text are left out (they identify a record on their own)."
)


def _equal_size_counts(
    flags_of: object, n_rows: int, m: int, repeats: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Mean (successes, uniques) of ``flags_of(rows)`` over ``repeats`` samples of ``m`` rows."""
    hits = uniques = 0.0
    for _ in range(repeats):
        rows = np.sort(rng.choice(n_rows, size=m, replace=False))
        h, u = flags_of(rows)  # type: ignore[operator]
        hits += h
        uniques += u
    return hits / repeats, uniques / repeats


@register
class UniqueExactMatches(Metric):
    """Share of the real records unique on all columns that the synthetic table reproduces exactly.

    SDNist's unique exact matches: a real record that no other real record shares is a
    specific person; when the synthetic table contains exactly that record, the
    person is exposed. The score is ``matched / unique`` (SDNist's ``percent`` / 100);
    the breakdown gives both counts and the share of unique real records. Missing
    values match missing values (as pandas' merge in SDNist does). With a holdout, the
    same share for holdout records (at equal table sizes, since uniqueness depends on
    the size) is the control in ``breakdown["control"]``.

    Parameters
    ----------
    columns : list of str, default=None
        Columns a record consists of. None (or ``[]``): every usable column, leaving
        out columns of kind id, pii and text (synthrisk's default, recorded in the
        result's parameters).
    missing_is_value : bool, default=True
        A record with a missing value can be unique (missing is a value of its own).
        False reproduces SDNist, whose ``groupby`` drops such records, so they never
        count as unique.
    n_repeats : int, default=10
        Equal-size samples of the larger of real and holdout for the control.
    confidence_level : float, default=0.95
        Level of the Wilson interval of the score and of the control's interval.
    """

    id = "unique_exact_matches"
    report_order = 100
    attack = (
        "An attacker finds, in the synthetic table, the exact record of a real person who is the only one "
        "with that combination of values in the real data."
    )
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "share of the real records unique on every compared column that the synthetic table reproduces exactly (SDNist): 0 = none"
        ),
        compared=("columns",),
    )
    higher_is_safer = False
    runs_by_default = False

    columns: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True, allow_empty=True),
        None,
        "Columns a record consists of; None: every usable column (not ids, pii, free text).",
    )
    missing_is_value: Param[bool] = Param(
        boolean(), True, "A record with a missing value can be unique."
    )
    n_repeats: Param[int] = Param(
        integer(minimum=1), 10, "Equal-size samples of the larger of real and holdout."
    )
    confidence_level: Param[float] = Param(
        confidence(), 0.95, "Level of the Wilson interval and of the control."
    )

    def check_tables(self, tables: Tables) -> None:
        """Check the column names."""
        check_columns(
            self.columns or [],
            name="columns",
            available=tables.schema.names,
            allow_empty=True,
        )

    def run(self, tables: Tables, context: Context) -> MetricResult:
        """Use every usable column when none is named (recorded), then compute."""
        if self.columns:
            return super().run(tables, context)
        return run_resolved(
            self, {"columns": _modelable(tables)}, _ALL_COLUMNS, tables, context
        )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        columns = list(self.columns or ()) or _modelable(tables)
        codes, n_codes = combination_codes(tables, columns)
        real, syn = codes["real"], codes["synthetic"]
        eligible = None
        if not self.missing_is_value:
            eligible = np.ones(n_codes, dtype=bool)
            for name, table_codes in codes.items():
                has_missing = tables.table(name)[columns].isna().any(axis=1).to_numpy()
                eligible[table_codes[has_missing]] = False

        def n_uniques(side: IntArray) -> int:
            unique = _unique_in(side, n_codes)
            if eligible is not None:
                unique &= eligible[side]
            return int(unique.sum())

        flags = unique_exact_matches(real, syn, n_codes, eligible)
        n_r = real.size
        n_unique = n_uniques(real)
        n_matched = int(flags.sum())
        level = self.confidence_level
        z = float(stats.norm.ppf(0.5 + level / 2))
        score = n_matched / n_unique if n_unique else None
        breakdown: dict[str, JSONValue] = {
            "unique_exact_match_share": score,
            "n_matched": n_matched,
            "n_real_unique": n_unique,
            "real_unique_share": n_unique / n_r if n_r else None,
            "matched_share_of_real": n_matched / n_r if n_r else None,
            "n_real": n_r,
            "n_synthetic": int(syn.size),
            "n_columns": len(columns),
            "sdnist": {
                "t_rec_matched": n_matched,
                "perc_t_rec_matched": None if score is None else score * 100,
                "t_unique_records": n_unique,
                "perc_t_unique_records": n_unique / n_r * 100 if n_r else None,
            },
        }
        records = {
            "unique_exact_match": RecordScores(
                "real",
                np.arange(n_r),
                flags,
                "1 if the real record is unique in the real table and appears exactly in the synthetic table",
            )
        }
        if tables.holdout is not None:
            hold = codes["holdout"]
            n_h = hold.size
            m = min(n_r, n_h)
            repeats = self.n_repeats

            def counts(side: IntArray) -> object:
                def flags_of(rows: IntArray) -> tuple[float, float]:
                    sub = side[rows]
                    return (
                        float(unique_exact_matches(sub, syn, n_codes, eligible).sum()),
                        float(n_uniques(sub)),
                    )

                return flags_of

            if n_r > n_h:
                x_r, u_r = _equal_size_counts(
                    counts(real), n_r, m, repeats, context.rng
                )
            else:
                x_r, u_r = float(n_matched), float(n_unique)
            if n_h > n_r:
                x_h, u_h = _equal_size_counts(
                    counts(hold), n_h, m, repeats, context.rng
                )
            else:
                x_h, u_h = counts(hold)(np.arange(n_h))  # type: ignore[operator]
            breakdown["control"] = compare_proportions(
                x_r,
                round(u_r),
                x_h,
                round(u_h),
                statistic="unique exact match share (equal-size samples)",
                confidence_level=level,
            )
            records["unique_exact_match_holdout"] = RecordScores(
                "holdout",
                np.arange(n_h),
                unique_exact_matches(hold, syn, n_codes, eligible),
                "1 if the holdout record is unique in the holdout and appears exactly in the synthetic table",
            )
        ci = wilson_bounds(n_matched, n_unique, z) if n_unique else None
        return Outcome(
            score=score,
            breakdown=breakdown,
            ci=ci,
            records=records,
        )


def apparent_match_shares(
    qi_real: IntArray,
    qi_syn: IntArray,
    n_qi: int,
    other_real: IntArray,
    other_syn: IntArray,
) -> FloatArray:
    """Per real row: share of the other columns equal in its apparent match (NaN without one).

    Parameters
    ----------
    qi_real, qi_syn : ndarray of shape (n,)
        Quasi-identifier combination ids (shared codes).
    n_qi : int
        Number of combination ids.
    other_real, other_syn : ndarray of shape (n, n_other)
        Shared value codes of the remaining columns.
    """
    unique_r = _unique_in(qi_real, n_qi)
    unique_s = _unique_in(qi_syn, n_qi)
    syn_row = np.full(n_qi, -1, dtype=np.int64)
    syn_row[qi_syn[unique_s]] = np.flatnonzero(unique_s)
    partner = np.where(unique_r, syn_row[qi_real], -1)
    out = np.full(qi_real.size, np.nan)
    matched = np.flatnonzero(partner >= 0)
    if other_real.shape[1] == 0:
        out[matched] = np.nan
        return out
    equal = other_real[matched] == other_syn[partner[matched]]
    out[matched] = equal.mean(axis=1)
    return out


#: SDNist's quasi-identifiers of its ACS excerpts (``sdnist/report/score/privacy.py``)
_SDNIST_QUASI_IDENTIFIERS = (
    "SEX",
    "MSP",
    "RAC1P",
    "OWN_RENT",
    "EDU",
    "PUMA",
    "INDP_CAT",
    "HISP",
)
_SDNIST_CHOICE = (
    "SDNist's default (docs/disclosure.md, 'Default columns'): `quasi_identifiers` = the columns of "
    "SDNist's quasi-identifier set (SEX, MSP, RAC1P, OWN_RENT, EDU, PUMA, INDP_CAT, HISP) the table has."
)
_SDNIST_GENERAL = (
    "SDNist's quasi-identifiers are the nominal demographic columns of its ACS excerpts, the numbers "
    "are compared"
)


def _no_match_note(result: MetricResult) -> str | None:
    """A warning when synthrisk's default quasi-identifiers give no apparent match."""
    if result.breakdown.get("n_apparent_matches") != 0:
        return None
    return (
        f"the default quasi-identifiers {result.params['quasi_identifiers']} give no apparent "
        "match: an attacker who knows these columns finds nobody this way. Name the columns "
        "an attacker would know with `quasi_identifiers` to measure another attacker."
    )


@register
class ApparentMatchDistribution(Metric):
    """How much of a real record its apparent match in the synthetic table reproduces (SDNist).

    A real record unique on the quasi-identifiers, and a synthetic record unique on
    the same quasi-identifier values, form an *apparent match*: an attacker who knows
    the person's quasi-identifiers would take the synthetic record for theirs. For each
    apparent match, SDNist's ``cellchange`` computes the share of the remaining columns
    whose values agree. The score is the mean of that share over the apparent matches
    (0 = the synthetic record says nothing else true about the person, 1 = it is their
    record); the breakdown gives the number of apparent matches, the distribution (a
    10-bin histogram and quantiles) and the share of exact reproductions. With a
    holdout, the same distribution for holdout records is the control
    (``breakdown["control"]``, Welch test of the means).

    Parameters
    ----------
    quasi_identifiers : list of str, default=None
        Columns an attacker knows. None: SDNist's own set (SEX, MSP, RAC1P, OWN_RENT,
        EDU, PUMA, INDP_CAT, HISP) where the table has some of these columns; else its
        generalisation, every usable categorical or boolean column but the last
        categorical one (SDNist's are the nominal demographics; the numbers are
        compared); ``exclude_columns`` are left out (``docs/disclosure.md``, "Default
        columns"; recorded in the result's parameters).
    exclude_columns : list of str, default=None
        Columns left out of the comparison (SDNist's ``exclude_cols``).
    missing_matches : bool, default=True
        A missing value agrees with a missing value. False reproduces SDNist, whose
        ``==`` on pandas columns counts two missing values as different.
    confidence_level : float, default=0.95
        Level of the control's interval.
    """

    id = "apparent_match_distribution"
    report_order = 110
    attack = (
        "An attacker who knows a real person's quasi-identifiers, unique in the real data, finds the one "
        "synthetic record with those values and reads the person's other values off it."
    )
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "mean share of a person's other columns that the one synthetic record matching their unique quasi-identifiers gets right (SDNist): 0 = it says nothing true about them, 1 = it is their record"
        ),
        known=("quasi_identifiers",),
    )
    higher_is_safer = False
    runs_by_default = False

    quasi_identifiers: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Columns an attacker knows; None: synthrisk's default choice.",
    )
    exclude_columns: Param[list[str], Iterable[str] | None] = Param(
        column_list(allow_empty=True), None, "Columns left out of the comparison."
    )
    missing_matches: Param[bool] = Param(
        boolean(), True, "A missing value agrees with a missing value."
    )
    confidence_level: Param[float] = Param(
        confidence(), 0.95, "Level of the control's interval."
    )

    def check_tables(self, tables: Tables) -> None:
        """Check the column names."""
        names = tables.schema.names
        if self.quasi_identifiers is not None:
            check_columns(
                self.quasi_identifiers, name="quasi_identifiers", available=names
            )
        check_columns(
            self.exclude_columns,
            name="exclude_columns",
            available=names,
            allow_empty=True,
        )

    def run(self, tables: Tables, context: Context) -> MetricResult:
        """Choose the quasi-identifiers when none are named (synthrisk's default, recorded), then compute."""
        if self.quasi_identifiers is not None:
            return super().run(tables, context)
        self.check_tables(tables)
        excluded = set(self.exclude_columns)
        usable = [c.name for c in tables.schema.modelable if c.name not in excluded]
        qi = [name for name in usable if name in _SDNIST_QUASI_IDENTIFIERS]
        if qi and len(qi) < len(usable):
            why = _SDNIST_CHOICE
        else:
            qi, _, rule = resolve_key_columns(
                tables,
                keys=None,
                sensitive=None,
                metric=self.id,
                hint="name them with `quasi_identifiers`",
                exclude=self.exclude_columns,
                rule="categorical",
            )
            why = exact_choice_text(
                keys="quasi_identifiers",
                sensitive=None,
                uses_sensitive=False,
                rule=rule,
                source=_SDNIST_GENERAL if rule == "categorical" else None,
            )
        return run_resolved(
            self,
            {"quasi_identifiers": qi},
            why,
            tables,
            context,
            note=_no_match_note,
        )

    def _other_codes(self, tables: Tables, columns: list[str]) -> dict[str, IntArray]:
        names = ["real", "synthetic"] + (
            ["holdout"] if tables.holdout is not None else []
        )
        blocks: dict[str, list[IntArray]] = {name: [] for name in names}
        for column in columns:
            frames = [tables.table(name)[column] for name in names]
            stacked = pd.concat(frames, ignore_index=True)
            codes, uniques = pd.factorize(stacked, use_na_sentinel=True)
            codes = codes.astype(np.int64)
            missing = codes < 0
            if self.missing_matches:
                codes[missing] = len(uniques)
            else:
                # every missing value gets its own code: it never equals anything
                codes[missing] = len(uniques) + np.arange(int(missing.sum()))
            start = 0
            for name, frame in zip(names, frames, strict=True):
                blocks[name].append(codes[start : start + len(frame)])
                start += len(frame)
        return {
            name: np.column_stack(parts)
            if parts
            else np.empty((len(tables.table(name)), 0), np.int64)
            for name, parts in blocks.items()
        }

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        qi = list(self.quasi_identifiers or ())
        excluded = set(self.exclude_columns)
        others = [c for c in tables.schema.names if c not in qi and c not in excluded]
        qi_codes, n_qi = combination_codes(tables, qi)
        other = self._other_codes(tables, others)
        if not others:
            context.warn(
                "no column is left besides the quasi-identifiers and the excluded columns."
            )
        shares = apparent_match_shares(
            qi_codes["real"],
            qi_codes["synthetic"],
            n_qi,
            other["real"],
            other["synthetic"],
        )
        n_r = shares.size
        found = shares[np.isfinite(shares)]
        n_matches = int(np.sum(np.isfinite(shares)))
        hist, edges = np.histogram(found, bins=10, range=(0.0, 1.0))
        breakdown: dict[str, JSONValue] = {
            "mean_match_share": float(found.mean()) if found.size else None,
            "n_apparent_matches": n_matches,
            "apparent_match_share_of_real": n_matches / n_r if n_r else None,
            "n_real_unique_on_quasi_identifiers": int(
                _unique_in(qi_codes["real"], n_qi).sum()
            ),
            "n_synthetic_unique_on_quasi_identifiers": int(
                _unique_in(qi_codes["synthetic"], n_qi).sum()
            ),
            "exact_reproductions": int(np.sum(found == 1.0)),
            "quantiles": {
                str(q): float(np.quantile(found, q)) if found.size else None
                for q in (0.1, 0.25, 0.5, 0.75, 0.9)
            },
            "histogram": {"edges": edges.tolist(), "counts": hist.tolist()},
            "compared_columns": others,
            "n_real": n_r,
        }
        records = {
            "apparent_match_share": RecordScores(
                "real",
                np.arange(n_r),
                shares,
                "share of the non-quasi-identifier columns that the real record's apparent match in the "
                "synthetic table reproduces; NaN where the record has no apparent match",
            )
        }
        if tables.holdout is not None:
            hold = apparent_match_shares(
                qi_codes["holdout"],
                qi_codes["synthetic"],
                n_qi,
                other["holdout"],
                other["synthetic"],
            )
            breakdown["control"] = compare_means(
                shares,
                hold,
                statistic="share of the other columns matching, per apparent match",
                confidence_level=self.confidence_level,
            )
            records["apparent_match_share_holdout"] = RecordScores(
                "holdout",
                np.arange(hold.size),
                hold,
                "the same for each holdout record; NaN without an apparent match",
            )
        if n_matches == 0:
            context.warn(
                "no real record unique on the quasi-identifiers has a synthetic record unique on the same "
                "values; the score is undefined."
            )
        return Outcome(
            score=float(found.mean()) if found.size else None,
            breakdown=breakdown,
            records=records,
        )
