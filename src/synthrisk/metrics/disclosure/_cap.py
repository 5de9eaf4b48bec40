# SPDX-License-Identifier: BSD-3-Clause
"""Disclosure protection: SDMetrics' DisclosureProtection, its Estimate and the CAP attack.

The attacker knows a few columns of a real person (the *known* or *key* columns, e.g.
age bracket and sex), looks them up in the synthetic table and lets the synthetic rows
that share those values vote for the person's *sensitive* values (e.g. income). The
correct attribution probability (CAP) of a real row is the share of votes for its true
sensitive values; ``cap_protection = 1 - mean CAP`` over the real rows. SDMetrics 0.32
semantics, exactly:

* ``cap``: a real row whose known values occur in no synthetic row is skipped;
* ``zero_cap``: such a row counts with probability 0;
* ``generalized_cap``: such a row pools the synthetic rows of *every* distinct synthetic
  key at the minimum Hamming distance (ties kept, weighted by row count).

:class:`DisclosureProtection` first bins the continuous columns (equal-width bins on
the real data only, right-closed, outer edges open), turns missing values into one
category per column and divides by the random-guess baseline
``1 - 1 / prod(n_unique_real(sensitive))``: ``score = min(cap / baseline, 1)``.

The kernels (:mod:`synthrisk.metrics.disclosure._kernels`) are linear-time; the
columns are encoded by :mod:`synthrisk.metrics.disclosure._codes`. Every real row's
probability is kept on the result, with a bootstrap confidence interval over real rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, get_args

import numpy as np

from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk._validation import check_columns
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import (
    Param,
    boolean,
    column_list,
    confidence,
    custom,
    integer,
    option,
)
from synthrisk.metrics._threat import SOME_COLUMNS, TRAINING, ThreatModel
from synthrisk.metrics.disclosure._codes import (
    AttackCodes,
    NatBinning,
    cap_method,
    check_binnable,
)
from synthrisk.metrics.disclosure._defaults import (
    Attack,
    cap_holdout_test,
    default_cap_columns,
    encode_attack,
    encoding_options,
    run_with_default_columns,
)
from synthrisk.metrics.disclosure._kernels import (
    CapMethod,
    bootstrap_cap,
    cap_protection,
)
from synthrisk.results import MetricResult, RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.bootstrap import N_RESAMPLES, percentile_interval

__all__ = [
    "RECORD_DESCRIPTION",
    "DisclosureBase",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "default_cap_columns",
    "no_match_warning",
    "row_summary",
]

_RISK_LEVELS = (0.5, 0.9)
#: SDMetrics' default ``num_rows_subsample`` of the Estimate
_SDMETRICS_SUBSAMPLE = 1000


def _ratio_score(cap: float, baseline: float) -> float:
    if baseline == 0:
        return float("nan")
    return min(cap / baseline, 1.0)


def row_summary(p: FloatArray) -> dict[str, int]:
    out = {"total": int(p.shape[0]), "scored": int((~np.isnan(p)).sum())}
    for level in _RISK_LEVELS:
        out[f"guessed_p_ge_{level}"] = int((p >= level).sum())
    return out


def _sample(n: int, size: int, rng: np.random.Generator) -> IntArray:
    if size >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=size, replace=False))


# ------------------------------------------------------------------------- metrics

_ATTACK = (
    "An attacker who knows some columns of a real person looks them up in the synthetic table "
    "and guesses the person's sensitive columns from the matching synthetic rows."
)
RECORD_DESCRIPTION = (
    "probability that the attacker guesses this real row's sensitive values "
    "(share of the matching synthetic rows' votes); NaN where {why}"
)


def _cap_method_name(value: Any, name: str) -> str | None:
    """A CAP method in any case, or None (:func:`cap_method` normalises it)."""
    if value is not None:
        cap_method(*((value, None) if name == "computation_method" else (None, value)))
    return value


def _required(value: list[str] | None, name: str) -> list[str]:
    if value is None:
        msg = f"`{name}` must name at least one column; got None."
        raise ParameterError(msg)
    return value


class DisclosureBase(Metric):
    """Shared parameters and preprocessing of the disclosure metrics."""

    runs_by_default = False
    attack = _ATTACK

    def _set_columns(
        self, known: list[str], sensitive: list[str], continuous: list[str]
    ) -> None:
        """Set the columns the attack uses (from ``_check_params``)."""
        self.known: list[str] = known
        self.sensitive: list[str] = sensitive
        self.continuous: list[str] = continuous

    def check_tables(self, tables: Tables) -> None:
        """Check the column names against the tables and the binned columns' kinds."""
        names = tables.schema.names
        for param, value in self._column_params():
            check_columns(
                value,
                name=param,
                available=names,
                allow_empty=param.startswith("continuous"),
            )
        check_binnable(tables, self.continuous)

    def _column_params(self) -> list[tuple[str, list[str]]]:
        return [
            ("known_column_names", self.known),
            ("sensitive_column_names", self.sensitive),
            ("continuous_column_names", self.continuous),
        ]


def no_match_warning(context: Context, p: FloatArray, method: str) -> None:
    n_scored = int((~np.isnan(p)).sum())
    if method != "cap":
        return
    if n_scored == 0:
        context.warn(
            "no real row's known values occur in the synthetic table, so plain CAP scores no row and is "
            "undefined; zero_cap or generalized_cap score every row."
        )
    elif n_scored < 0.5 * p.shape[0]:
        context.warn(
            f"plain CAP scored only {n_scored} of {p.shape[0]} real rows (the others have no synthetic row "
            "with the same known values and are skipped); zero_cap or generalized_cap score every row."
        )


@register
class DisclosureProtection(DisclosureBase):
    """How well the synthetic table protects real people's sensitive values, against random data.

    ``score = min(cap_protection / baseline_protection, 1)``: 1 means the synthetic
    table helps the attacker no more than random data would, 0 that it gives the
    sensitive values away. SDMetrics 0.32 ``DisclosureProtection``, with every real row's
    guess probability kept (``records["guess_probability"]``) and a bootstrap
    confidence interval over real rows.

    With a holdout, ``breakdown["holdout_test"]`` compares the mean guess probability of
    training rows with holdout rows (:func:`cap_holdout_test`).

    On tables partitioned on a Dask cluster it runs on every row, with the in-memory
    result (:mod:`~synthrisk.metrics.disclosure._cap_partitioned`).

    Parameters
    ----------
    known_column_names : list of str or None, default=None
        Columns the attacker knows (e.g. age bracket, sex). None (with
        ``sensitive_column_names`` None too): synthrisk's default choice, see
        :func:`default_cap_columns`.
    sensitive_column_names : list of str or None, default=None
        Columns the attacker guesses; several are matched as one tuple.
    computation_method : {"cap", "zero_cap", "generalized_cap"}, default=None
        ``"cap"`` when neither it nor ``computation`` is given. Case-insensitive; what to do with a real row whose known values occur in no
        synthetic row: skip it, count it as protected, or use the nearest keys.
    computation : str, default=None
        Alias of ``computation_method`` (SDMetrics' documentation uses this name).
    continuous_column_names : list of str, default=None
        Numerical or datetime columns to bin before matching; any other column is
        matched on exact values.
    num_discrete_bins : int, default=10
        Number of equal-width bins of each continuous column (edges from the real data).
    nat_binning : {"missing", "sdmetrics"}, default="missing"
        Missing dates in a binned datetime column: their own missing-value category; or
        ``"sdmetrics"``: read as the smallest int64 like SDMetrics 0.32, which puts
        every real date into the top bin when the real column has a missing date.
    strict_types : bool, default=False
        Raise where SDMetrics 0.32 raises (datetime column not listed as continuous,
        continuous column with no real value) instead of handling the case.
    confidence_level : float, default=0.95
        Two-sided level of the bootstrap interval.
    """

    id = "disclosure_protection"
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "CAP protection (1 − mean probability that the synthetic rows sharing a person's known values vote for their sensitive values) over that of random guessing, capped at 1: 1 = no more help than random data, 0 = gives the values away"
        ),
        known=("known_column_names",),
        guessed=("sensitive_column_names",),
    )
    report_order = 30
    runs_by_default = True
    runs_partitioned = True

    known_column_names: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Columns the attacker knows; None (with the other lists): synthrisk's choice.",
    )
    sensitive_column_names: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True), None, "Columns the attacker guesses."
    )
    computation_method: Param[str | None] = Param(
        custom(_cap_method_name, f"one of {list(get_args(CapMethod))} or None"),
        None,
        "What to do with real rows whose known values no synthetic row has.",
    )
    computation: Param[str | None] = Param(
        custom(_cap_method_name, f"one of {list(get_args(CapMethod))} or None"),
        None,
        "Alias of computation_method.",
        reported=False,
    )
    continuous_column_names: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True, allow_empty=True),
        None,
        "Numerical or datetime columns to bin before matching.",
    )
    num_discrete_bins: Param[int] = Param(
        integer(minimum=1), 10, "Equal-width bins of each continuous column."
    )
    nat_binning: Param[NatBinning] = Param(
        option(get_args(NatBinning)), "missing", "Missing dates in a binned column."
    )
    strict_types: Param[bool] = Param(
        boolean(), False, "Raise where SDMetrics 0.32 raises instead of handling it."
    )
    confidence_level: Param[float] = Param(
        confidence(), 0.95, "Two-sided level of the bootstrap interval."
    )

    def _check_params(self) -> None:
        given = (
            self.known_column_names,
            self.sensitive_column_names,
            self.continuous_column_names,
        )
        self.auto_columns = given == (None,) * 3
        if self.auto_columns:
            self._set_columns([], [], [])
        else:
            self._set_columns(
                _required(self.known_column_names, "known_column_names"),
                _required(self.sensitive_column_names, "sensitive_column_names"),
                self.continuous_column_names or [],
            )
            self._replace_param("continuous_column_names", self.continuous)
        #: the CAP method used (``computation_method`` or its alias, lower-case)
        self.method: CapMethod = cap_method(self.computation_method, self.computation)
        self._replace_param("computation_method", self.method)

    def _codes(self, tables: Tables, context: Context) -> Attack:
        codes = encode_attack(
            tables,
            self.known,
            self.sensitive,
            context,
            **encoding_options(self),
        )
        if codes.baseline == 0:
            context.warn(
                "every sensitive column is constant in the real data, so random guessing is always right "
                "(baseline protection 0) and the score is undefined."
            )
        return codes

    def run(self, tables: Tables, context: Context) -> MetricResult:
        """Resolve the default columns for these tables (when asked to), then compute."""
        if not self.auto_columns:
            return super().run(tables, context)
        return run_with_default_columns(self, tables, context)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        codes = self._codes(tables, context)
        p = codes.probabilities(self.method, context)
        no_match_warning(context, p, self.method)
        cap = cap_protection(p)
        score = _ratio_score(cap, codes.baseline)
        ci = None
        if codes.baseline != 0:
            boot = bootstrap_cap(p, context.rng)
            ci = percentile_interval(
                np.minimum(boot / codes.baseline, 1.0),
                confidence_level=self.confidence_level,
            )
        why = "no synthetic row has the row's known values (plain CAP skips it)"
        records = {
            "guess_probability": RecordScores(
                "real", np.arange(p.shape[0]), p, RECORD_DESCRIPTION.format(why=why)
            )
        }
        breakdown: dict[str, Any] = {
            "score": score,
            "cap_protection": cap,
            "baseline_protection": codes.baseline,
            "real_rows": row_summary(p),
        }
        if tables.holdout is not None:
            breakdown["holdout_test"] = cap_holdout_test(
                tables, self, context, attack=codes
            )
        return Outcome(score=score, breakdown=breakdown, ci=ci, records=records)


@register
class DisclosureProtectionEstimate(DisclosureProtection):
    """:class:`DisclosureProtection` averaged over seeded subsamples (SDMetrics' Estimate).

    Binning, missing values and the baseline use the full tables; each iteration then
    draws ``num_rows_subsample`` real and synthetic rows (without replacement,
    independently) and runs the CAP attack on them. ``cap_protection`` is the mean over
    iterations and ``score = min(mean cap / baseline, 1)`` (mean first, then divide, as
    SDMetrics 0.32). With synthrisk's linear-time kernels the exact
    :class:`DisclosureProtection` is fast even on large tables; the Estimate exists for
    compatibility.

    Parameters
    ----------
    num_rows_subsample : int or None, default=None
        Rows drawn from each table per iteration; a table with fewer rows is used
        whole. Larger than both tables is an error (nothing would be subsampled).
        None: SDMetrics' default 1000, or the larger table's size when both tables
        are smaller (the result's parameters give the number used).
    num_iterations : int, default=10
        Number of subsamples.
    **options
        The parameters of :class:`DisclosureProtection`.
    """

    id = "disclosure_protection_estimate"
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "disclosure_protection on subsamples: mean CAP protection over the iterations, over that of random guessing, capped at 1: 1 = no more help than random data, 0 = gives the values away"
        ),
        known=("known_column_names",),
        guessed=("sensitive_column_names",),
    )
    report_order = 40
    runs_by_default = False
    runs_partitioned = False  # subsamples of in-memory codes

    num_rows_subsample: Param[int | None] = Param(
        integer(minimum=1, allow_none=True),
        None,
        "Rows drawn from each table per iteration; None: 1000, at most the larger table.",
    )
    num_iterations: Param[int] = Param(integer(minimum=1), 10, "Number of subsamples.")

    def _subsample_size(self, tables: Tables) -> int:
        """``num_rows_subsample``; for None, 1000 or the larger table's size when smaller."""
        if self.num_rows_subsample is not None:
            return self.num_rows_subsample
        return min(_SDMETRICS_SUBSAMPLE, max(len(tables.real), len(tables.synthetic)))

    def check_tables(self, tables: Tables) -> None:
        """Also check ``num_rows_subsample`` against the table sizes."""
        super().check_tables(tables)
        n_sub = self._subsample_size(tables)
        n_real, n_syn = len(tables.real), len(tables.synthetic)
        if n_sub > n_real and n_sub > n_syn:
            msg = (
                f"`num_rows_subsample` ({n_sub}) is larger than both the real ({n_real} rows) and the "
                f"synthetic ({n_syn} rows) table, so nothing would be subsampled; use at most "
                f"{max(n_real, n_syn)}, or the exact metric 'disclosure_protection'."
            )
            raise ParameterError(msg)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        n_sub, n_iter = self._subsample_size(tables), self.num_iterations
        n_real, n_syn = len(tables.real), len(tables.synthetic)
        if n_sub > min(n_real, n_syn):
            smaller = "real" if n_real < n_syn else "synthetic"
            context.warn(
                f"num_rows_subsample ({n_sub}) is larger than the {smaller} table ({min(n_real, n_syn)} rows), "
                "which is used whole in every iteration."
            )
        codes = self._codes(tables, context)
        assert isinstance(codes, AttackCodes)
        rng = context.rng
        samples = [
            (_sample(n_real, n_sub, rng), _sample(n_syn, n_sub, rng))
            for _ in range(n_iter)
        ]
        method = self.method
        with context.progress.task(
            "Estimating disclosure protection", n_iter
        ) as advance:
            caps, p_iter = estimate_iterations(
                codes, samples, method, context, advance=advance
            )
        if any(math.isnan(c) for c in caps):
            context.warn(
                "plain CAP scored no row in at least one subsample (no real key found in the synthetic "
                "subsample), so the mean and the score are undefined; use zero_cap or generalized_cap, or "
                "larger subsamples."
            )
        mean_cap = estimate_mean(caps)
        score = _ratio_score(mean_cap, codes.baseline)
        # per real row: mean probability over the iterations that drew and scored it
        p_sum, p_n = np.zeros(n_real), np.zeros(n_real)
        for (real_rows, _), p in zip(samples, p_iter, strict=True):
            ok = ~np.isnan(p)
            np.add.at(p_sum, real_rows[ok], p[ok])
            np.add.at(p_n, real_rows[ok], 1)
        drawn = np.flatnonzero(p_n > 0)
        p_mean = p_sum[drawn] / p_n[drawn]
        records = {
            "guess_probability": RecordScores(
                "real",
                drawn,
                p_mean,
                "mean over the subsamples that drew (and scored) this real row of the probability "
                "that the attacker guesses its sensitive values",
            )
        }
        ci = None
        if codes.baseline != 0:
            if n_iter >= 2:
                idx = rng.integers(0, n_iter, size=(N_RESAMPLES, n_iter))
                boot = np.asarray(caps)[idx].mean(axis=1)
            else:
                boot = bootstrap_cap(p_iter[0], rng)
            ci = percentile_interval(
                np.minimum(boot / codes.baseline, 1.0),
                confidence_level=self.confidence_level,
            )
        summary = row_summary(p_mean)
        summary["total"] = n_real
        breakdown: dict[str, JSONValue] = {
            "score": score,
            "cap_protection": mean_cap,
            "baseline_protection": codes.baseline,
            "cap_protection_per_iteration": [float(c) for c in caps],
            "real_rows": summary,
        }
        params = {**self.params, "num_rows_subsample": n_sub}
        return Outcome(
            score=score, breakdown=breakdown, ci=ci, records=records, params=params
        )


def estimate_iterations(
    codes: AttackCodes,
    samples: Sequence[tuple[IntArray, IntArray]],
    method: CapMethod,
    context: Context,
    *,
    advance: Any = None,
) -> tuple[list[float], list[FloatArray]]:
    """CAP protection and per-row probabilities of each (real rows, synthetic rows) sample."""
    caps, probabilities = [], []
    for real_rows, syn_rows in samples:
        p = codes.probabilities(method, context, real_rows, syn_rows)
        caps.append(cap_protection(p))
        probabilities.append(p)
        if advance is not None:
            advance(1)
    return caps, probabilities


def estimate_mean(caps: Sequence[float]) -> float:
    """Running sum divided by the count, as SDMetrics' Estimate accumulates it."""
    total = 0.0
    for cap in caps:
        total += cap
    return total / float(len(caps))
