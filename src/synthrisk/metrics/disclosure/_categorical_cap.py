# SPDX-License-Identifier: BSD-3-Clause
"""SDMetrics' legacy CAP metrics: ``CategoricalCAP``, ``CategoricalZeroCAP``, ``CategoricalGeneralizedCAP``.

CAP protection without baseline or binning (every column is matched on exact values);
the attack and its kernels are :mod:`synthrisk.metrics.disclosure._cap`'s. Without
``key_fields`` / ``sensitive_fields``, synthrisk's default columns are used (every
other categorical column as a key: :func:`~synthrisk.metrics.disclosure._defaults.default_key_columns`
with ``rule="categorical"``, recorded in the result's parameters).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, get_args

import numpy as np

from synthrisk._typing import JSONValue
from synthrisk._validation import check_columns
from synthrisk.metrics._base import Context, Outcome, register
from synthrisk.metrics._params import Param, boolean, column_list, confidence, option
from synthrisk.metrics._threat import SOME_COLUMNS, TRAINING, ThreatModel
from synthrisk.metrics.disclosure._cap import (
    RECORD_DESCRIPTION,
    DisclosureBase,
    no_match_warning,
    row_summary,
)
from synthrisk.metrics.disclosure._codes import MissingRule, attack_codes
from synthrisk.metrics.disclosure._defaults import (
    exact_choice_text,
    resolve_key_columns,
    run_resolved,
)
from synthrisk.metrics.disclosure._kernels import (
    CapMethod,
    bootstrap_cap,
    cap_protection,
)
from synthrisk.results import MetricResult, RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.bootstrap import percentile_interval

#: why the family's default key fields are the categorical columns (SDMetrics has no default)
_CAP_SOURCE = "SDMetrics has no default; its categorical CAP family matches categorical columns exactly"

__all__ = [
    "CategoricalCAP",
    "CategoricalCAPBase",
    "CategoricalGeneralizedCAP",
    "CategoricalZeroCAP",
]


class CategoricalCAPBase(DisclosureBase):
    """SDMetrics' legacy CategoricalCAP family: CAP protection without baseline or binning."""

    method: ClassVar[CapMethod] = "cap"

    key_fields: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Columns the attacker knows; None: synthrisk's default choice.",
    )
    sensitive_fields: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Columns the attacker guesses; None: synthrisk's default choice.",
    )
    missing: Param[MissingRule] = Param(
        option(get_args(MissingRule)), "category", "How missing values are matched."
    )
    strict_types: Param[bool] = Param(
        boolean(), False, "Raise where SDMetrics 0.32 raises instead of handling it."
    )
    confidence_level: Param[float] = Param(
        confidence(), 0.95, "Two-sided level of the bootstrap interval."
    )

    def _check_params(self) -> None:
        self._set_columns(self.key_fields or [], self.sensitive_fields or [], [])

    def _column_params(self) -> list[tuple[str, list[str]]]:
        return [("key_fields", self.known), ("sensitive_fields", self.sensitive)]

    def run(self, tables: Tables, context: Context) -> MetricResult:
        """Choose the columns left out (synthrisk's default, recorded), then compute."""
        keys, sensitive = self.key_fields, self.sensitive_fields
        if keys is not None and sensitive is not None:
            return super().run(tables, context)
        if keys is not None:
            check_columns(keys, name="key_fields", available=tables.schema.names)
        if sensitive is not None:
            check_columns(
                sensitive, name="sensitive_fields", available=tables.schema.names
            )
        keys, sensitive, rule = resolve_key_columns(
            tables,
            keys=keys,
            sensitive=sensitive,
            metric=self.id,
            hint="name them with `key_fields` and `sensitive_fields`",
            rule="categorical",
        )
        why = exact_choice_text(
            keys="key_fields" if self.key_fields is None else None,
            sensitive="sensitive_fields" if self.sensitive_fields is None else None,
            rule=rule,
            source=_CAP_SOURCE if rule == "categorical" else None,
        )
        chosen = {"key_fields": keys, "sensitive_fields": sensitive}
        return run_resolved(self, chosen, why, tables, context)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        codes = attack_codes(
            tables,
            self.known,
            self.sensitive,
            context,
            missing=self.missing,
            strict_types=self.strict_types,
            numeric_hint="bin it first, or use 'disclosure_protection' with `continuous_column_names`",
        )
        p = codes.probabilities(self.method, context)
        no_match_warning(context, p, self.method)
        cap = cap_protection(p)
        why = "no synthetic row has the row's known values (CAP skips it)"
        records = {
            "guess_probability": RecordScores(
                "real", np.arange(p.shape[0]), p, RECORD_DESCRIPTION.format(why=why)
            )
        }
        ci = percentile_interval(
            bootstrap_cap(p, context.rng),
            confidence_level=self.confidence_level,
        )
        breakdown: dict[str, JSONValue] = {"score": cap, "real_rows": row_summary(p)}
        return Outcome(score=cap, breakdown=breakdown, ci=ci, records=records)


@register
class CategoricalCAP(CategoricalCAPBase):
    """CAP protection ``1 - mean P(true sensitive | known)``; unmatched real rows are skipped.

    SDMetrics' legacy ``CategoricalCAP`` (no baseline, no binning: every column is
    matched on exact values). NaN when no real row's key occurs in the synthetic table.

    Parameters
    ----------
    key_fields : list of str, default=None
        Columns the attacker knows. None: every usable categorical or boolean column
        outside the sensitive columns (SDMetrics has no default; the family matches
        categorical columns exactly), or the 3 with the fewest distinct real values
        when there is none (synthrisk's default,
        :func:`~synthrisk.metrics.disclosure._defaults.default_key_columns`; recorded in
        the result's parameters).
    sensitive_fields : list of str, default=None
        Columns the attacker guesses (matched as one tuple). None: the last
        categorical column outside the key fields.
    missing : {"category", "never_equal"}, default="category"
        Missing values form one category per column; or ``"never_equal"``: a missing
        value equals nothing, not even another missing value (what SDMetrics does for
        float columns; for object columns it depends on object identity).
    strict_types : bool, default=False
        Raise where SDMetrics 0.32 raises (datetime columns) instead of matching exactly.
    confidence_level : float, default=0.95
        Two-sided level of the bootstrap interval.
    """

    id = "categorical_cap"
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "1 − mean probability that the synthetic rows sharing a person's key values vote for their sensitive values (people without such rows are skipped): 1 = never guessed, 0 = always"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
    )
    report_order = 50
    method = "cap"


@register
class CategoricalZeroCAP(CategoricalCAPBase):
    """Like :class:`CategoricalCAP`, but a real row with no matching synthetic key counts as protected (p = 0).

    SDMetrics' legacy ``CategoricalZeroCAP``; parameters as :class:`CategoricalCAP`.
    """

    id = "categorical_zero_cap"
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "1 − mean probability that the synthetic rows sharing a person's key values vote for their sensitive values (people without such rows count as never guessed): 1 = never guessed, 0 = always"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
    )
    report_order = 60
    method = "zero_cap"


@register
class CategoricalGeneralizedCAP(CategoricalCAPBase):
    """Like :class:`CategoricalCAP`, but unmatched real rows pool the nearest synthetic keys.

    All distinct synthetic keys at the minimum Hamming distance are pooled, weighted by
    their row counts. SDMetrics' legacy ``CategoricalGeneralizedCAP``; parameters as
    :class:`CategoricalCAP`.
    """

    id = "categorical_generalized_cap"
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "1 − mean probability that the synthetic rows sharing a person's key values vote for their sensitive values (people without such rows use the rows with the nearest keys): 1 = never guessed, 0 = always"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
    )
    report_order = 70
    method = "generalized_cap"
