# SPDX-License-Identifier: BSD-3-Clause
"""SDMetrics 0.32's privacy metrics with SDMetrics' class methods, on synthrisk's engine.

Change one import and keep the rest of the code::

    # from sdmetrics.single_table import DisclosureProtection
    from synthrisk.compat.sdmetrics import DisclosureProtection

    DisclosureProtection.compute_breakdown(
        real_data=real, synthetic_data=synthetic,
        known_column_names=["age", "sex"], sensitive_column_names=["income"],
        continuous_column_names=["age"],
    )
    # {'score': ..., 'cap_protection': ..., 'baseline_protection': ...}

Every class has SDMetrics' ``compute`` and ``compute_breakdown`` class methods with the
same positional parameters, defaults and breakdown keys, and returns the same numbers
(``score`` is the int ``1`` when SDMetrics' ``min(x, 1)`` clips, NaN where SDMetrics
gives NaN). Where SDMetrics 0.32 is broken synthrisk's fix is the default; extra
keyword-only arguments restore SDMetrics' behaviour (see ``docs/disclosure.md``):

* ``DisclosureProtectionEstimate.compute(..., ignore_arguments=True)``: SDMetrics'
  ``compute`` drops ``num_rows_subsample``, ``num_iterations`` and ``verbose``;
* ``nat_binning="sdmetrics"``: missing dates in a binned datetime column collapse
  every real date into the top bin;
* ``strict_types=True``: raise where SDMetrics raises (pandas ``category`` columns,
  unsigned-integer and timedelta columns, datetime columns not listed as continuous,
  continuous columns with no real value);
* ``missing="never_equal"`` (CategoricalCAP family): missing values never match, as in
  SDMetrics' float columns;
* ``subsample_real=True`` (DCR metrics): subsample the real reference too (SDMetrics #934).

Random steps are seeded (``seed=0`` unless given); SDMetrics uses numpy's global RNG.
Statistical caveats that synthrisk records on its results are re-issued as
:class:`~synthrisk.exceptions.SynthriskWarning`.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, cast

import pandas as pd

from synthrisk._validation import check_columns, check_int
from synthrisk.compat._sdmetrics_common import (
    as_frame,
    field_lists,
    frames,
    get_table_data_from_dict,
    single_table_metadata,
)
from synthrisk.compat._sdmetrics_inference import (
    CategoricalEnsemble,
    CategoricalKNN,
    CategoricalKNNAttacker,
    CategoricalNB,
    CategoricalNBAttacker,
    CategoricalPrivacyMetric,
    CategoricalRF,
    CategoricalRFAttacker,
    CategoricalSVM,
    CategoricalSVMAttacker,
    InverseCDFCutoff,
    InverseCDFDistance,
    NewRowSynthesis,
    NumericalLR,
    NumericalMLP,
    NumericalPrivacyMetric,
    NumericalRadiusNearestNeighbor,
    NumericalSVR,
)
from synthrisk.exceptions import ParameterError, SynthriskWarning
from synthrisk.metrics import Metric, make_context
from synthrisk.metrics import dcr as _dcr
from synthrisk.metrics import disclosure as _disclosure
from synthrisk.results import MetricResult
from synthrisk.schema.tables import prepare_tables

__all__ = [
    "CategoricalCAP",
    "CategoricalEnsemble",
    "CategoricalGeneralizedCAP",
    "CategoricalKNN",
    "CategoricalKNNAttacker",
    "CategoricalNB",
    "CategoricalNBAttacker",
    "CategoricalPrivacyMetric",
    "CategoricalRF",
    "CategoricalRFAttacker",
    "CategoricalSVM",
    "CategoricalSVMAttacker",
    "CategoricalZeroCAP",
    "DCRBaselineProtection",
    "DCROverfittingProtection",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "InverseCDFCutoff",
    "InverseCDFDistance",
    "NewRowSynthesis",
    "NumericalLR",
    "NumericalMLP",
    "NumericalPrivacyMetric",
    "NumericalRadiusNearestNeighbor",
    "NumericalSVR",
    "get_table_data_from_dict",
]


class _SDMetricsMetric:
    """Class attributes SDMetrics' metrics carry (``goal`` is a plain string here)."""

    name: ClassVar[str] = ""
    goal: ClassVar[str] = "maximize"
    min_value: ClassVar[float] = 0.0
    max_value: ClassVar[float] = 1.0


# ----------------------------------------------------------------------- helpers


def _described(meta: Mapping[str, Any], *tables: tuple[str, Any]) -> list[pd.DataFrame]:
    """SDMetrics' DCR inputs: columns the metadata does not describe are dropped (with its warning);
    a datetime column of text without a ``datetime_format`` is refused, as SDMetrics refuses it."""
    described = dict(meta.get("columns") or {})
    out = []
    for name, data in tables:
        frame = as_frame(data, name=name)
        extra = [c for c in frame.columns if c not in described]
        if extra:
            listed = ", ".join(extra)
            warnings.warn(
                f"The columns ('{listed}') are not present in the metadata. "
                "They will not be included for further evaluation.",
                UserWarning,
                stacklevel=3,
            )
        frame = frame[[c for c in frame.columns if c in described]]
        for column in frame.columns:
            entry = described[column] or {}
            if (
                entry.get("sdtype") == "datetime"
                and "datetime_format" not in entry
                and not pd.api.types.is_datetime64_any_dtype(frame[column].dtype)
            ):
                msg = (
                    f"Datetime column '{column}' does not have a specified 'datetime_format'. "
                    "Please add a the required datetime_format to the metadata or convert this column "
                    "to 'pd.datetime' to bypass this requirement."
                )
                raise ParameterError(msg)
        out.append(frame)
    return out


def _present(meta: Mapping[str, Any], frame: pd.DataFrame) -> dict[str, Any]:
    """The metadata without the columns the tables do not have (SDMetrics ignores them)."""
    out = dict(meta)
    out["columns"] = {
        c: v for c, v in dict(meta.get("columns") or {}).items() if c in frame.columns
    }
    return out


def _subsample_args(
    num_rows_subsample: Any, num_iterations: Any, n_synthetic: int
) -> tuple[Any, Any]:
    """SDMetrics' DCR rule: a subsample larger than the synthetic table is ignored, with its warning."""
    if (
        isinstance(num_rows_subsample, int)
        and not isinstance(num_rows_subsample, bool)
        and num_rows_subsample > n_synthetic
    ):
        warnings.warn(
            f"num_rows_subsample ({num_rows_subsample}) is greater than the length of the "
            f"synthetic data ({n_synthetic}). Ignoring the num_rows_subsample and "
            "num_iterations args.",
            UserWarning,
            stacklevel=3,
        )
        return None, 1
    return num_rows_subsample, num_iterations


def _kind(real: pd.Series, synthetic: pd.Series) -> str:
    """synthrisk kind of a column from its pandas dtype, as SDMetrics reads dtype kinds."""
    if real.isna().all() or synthetic.isna().all():
        return "id"  # used as given (raw values), never rejected as "entirely missing"
    dtype = real.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        return "numerical"
    return "categorical"


def _strict_check(real: pd.DataFrame, columns: Sequence[str]) -> None:
    """Raise where SDMetrics 0.32's type handling raises (``strict_types=True``)."""
    for column in columns:
        dtype = real[column].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            msg = (
                f"column {column!r} has the pandas 'category' dtype, on which SDMetrics 0.32 crashes "
                "(strict_types=True); convert it with .astype(object) or drop strict_types."
            )
            raise ParameterError(msg)
        if getattr(dtype, "kind", "O") not in "ifObM":
            msg = (
                f"column {column!r} has dtype {dtype}, which SDMetrics 0.32 rejects as an invalid data "
                "type (strict_types=True); drop strict_types to use it."
            )
            raise ParameterError(msg)


def _run(
    metric: Metric,
    real_data: Any,
    synthetic_data: Any,
    columns: Sequence[str],
    *,
    seed: int = 0,
    progress: bool = False,
    strict_columns: Sequence[str] = (),
) -> MetricResult:
    """Run a synthrisk metric on the named columns, typed from their dtypes as SDMetrics does."""
    real, synthetic = frames(real_data, synthetic_data)
    if strict_columns:
        _strict_check(real, strict_columns)
    used = [c for c in real.columns if c in set(columns)]
    metadata = {"columns": {c: {"kind": _kind(real[c], synthetic[c])} for c in used}}
    result = metric.compute(
        real[used], synthetic[used], metadata=metadata, seed=seed, progress=progress
    )
    _reissue(result)
    return result


def _reissue(result: MetricResult) -> None:
    for message in result.warnings:
        warnings.warn(message, SynthriskWarning, stacklevel=4)


def _names(
    value: Any, *, name: str, available: Sequence[str], allow_empty: bool = False
) -> list[str]:
    names = _disclosure.column_list(value, name=name, allow_empty=allow_empty)
    return check_columns(
        names, name=name, available=list(map(str, available)), allow_empty=allow_empty
    )


def _clip_score(cap: float, baseline: float) -> float:
    """SDMetrics' ``min(cap / baseline, 1)``: the int 1 when clipped, NaN for baseline 0."""
    if baseline == 0:
        return float("nan")
    return min(cap / baseline, 1)


def _disclosure_breakdown(result: MetricResult) -> dict[str, Any]:
    """SDMetrics' breakdown dict of DisclosureProtection (and its Estimate)."""
    cap = float(cast("float", result.breakdown["cap_protection"]))
    baseline = float(cast("float", result.breakdown["baseline_protection"]))
    return {
        "score": _clip_score(cap, baseline),
        "cap_protection": cap,
        "baseline_protection": baseline,
    }


def _metadata_for(metadata: dict[str, Any], frame: pd.DataFrame) -> dict[str, Any]:
    """SDMetrics drops the columns its metadata does not describe: mark them excluded."""
    out = copy.deepcopy(metadata)
    columns = dict(out.get("columns") or {})
    missing = [str(c) for c in frame.columns if str(c) not in columns]
    if missing:
        warnings.warn(
            f"columns {missing} are not in the metadata and are ignored (as SDMetrics does).",
            SynthriskWarning,
            stacklevel=4,
        )
        for column in missing:
            columns[column] = {"sdtype": "unknown"}
    out["columns"] = columns
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------- disclosure family


class DisclosureProtection(_SDMetricsMetric):
    """SDMetrics' ``DisclosureProtection`` (CAP attack against a random-data baseline)."""

    name = "DisclosureProtection"

    @classmethod
    def compute_breakdown(
        cls,
        real_data: Any,
        synthetic_data: Any,
        known_column_names: Sequence[str],
        sensitive_column_names: Sequence[str],
        computation_method: str = "cap",
        continuous_column_names: Sequence[str] | None = None,
        num_discrete_bins: int = 10,
        *,
        nat_binning: str = "missing",
        strict_types: bool = False,
    ) -> dict[str, Any]:
        """Score with its parts.

        Parameters
        ----------
        real_data, synthetic_data : pandas.DataFrame
            Tables with the same columns.
        known_column_names, sensitive_column_names : list of str
            Columns the attacker knows, and those it guesses.
        computation_method : {"cap", "zero_cap", "generalized_cap"}, default="cap"
        continuous_column_names : list of str, default=None
            Numerical or datetime columns to bin.
        num_discrete_bins : int, default=10
        nat_binning : {"missing", "sdmetrics"}, default="missing"
            ``"sdmetrics"`` reproduces SDMetrics' collapse of dates with a missing date.
        strict_types : bool, default=False
            Raise where SDMetrics 0.32 raises.

        Returns
        -------
        dict
            ``{'score', 'cap_protection', 'baseline_protection'}``.
        """
        result = cls._result(
            real_data,
            synthetic_data,
            known_column_names,
            sensitive_column_names,
            computation_method,
            continuous_column_names,
            num_discrete_bins,
            nat_binning=nat_binning,
            strict_types=strict_types,
        )
        return _disclosure_breakdown(result)

    @classmethod
    def compute(
        cls,
        real_data: Any,
        synthetic_data: Any,
        known_column_names: Sequence[str],
        sensitive_column_names: Sequence[str],
        computation_method: str = "cap",
        continuous_column_names: Sequence[str] | None = None,
        num_discrete_bins: int = 10,
        *,
        nat_binning: str = "missing",
        strict_types: bool = False,
    ) -> float:
        """The score only (see :meth:`compute_breakdown`)."""
        return cls.compute_breakdown(
            real_data,
            synthetic_data,
            known_column_names,
            sensitive_column_names,
            computation_method,
            continuous_column_names,
            num_discrete_bins,
            nat_binning=nat_binning,
            strict_types=strict_types,
        )["score"]

    @classmethod
    def _result(
        cls,
        real_data: Any,
        synthetic_data: Any,
        known_column_names: Sequence[str],
        sensitive_column_names: Sequence[str],
        computation_method: str,
        continuous_column_names: Sequence[str] | None,
        num_discrete_bins: int,
        *,
        nat_binning: str,
        strict_types: bool,
        seed: int = 0,
        progress: bool = False,
        **estimate: Any,
    ) -> MetricResult:
        real = as_frame(real_data, name="real_data")
        available = list(map(str, real.columns))
        known = _names(
            known_column_names, name="known_column_names", available=available
        )
        sensitive = _names(
            sensitive_column_names, name="sensitive_column_names", available=available
        )
        continuous = _names(
            continuous_column_names,
            name="continuous_column_names",
            available=available,
            allow_empty=True,
        )
        params: dict[str, Any] = {
            "known_column_names": known,
            "sensitive_column_names": sensitive,
            "computation_method": computation_method,
            "continuous_column_names": continuous,
            "num_discrete_bins": num_discrete_bins,
            "nat_binning": nat_binning,
            "strict_types": strict_types,
        }
        if estimate:
            metric: Metric = _disclosure.DisclosureProtectionEstimate(
                **params, **estimate
            )
        else:
            metric = _disclosure.DisclosureProtection(**params)
        return _run(
            metric,
            real,
            synthetic_data,
            [*known, *sensitive, *continuous],
            seed=seed,
            progress=progress,
            strict_columns=[*known, *sensitive] if strict_types else (),
        )


class DisclosureProtectionEstimate(DisclosureProtection):
    """SDMetrics' ``DisclosureProtectionEstimate`` (seeded subsamples; ``seed=0`` by default)."""

    name = "DisclosureProtectionEstimate"

    @classmethod
    def compute_breakdown(
        cls,
        real_data: Any,
        synthetic_data: Any,
        known_column_names: Sequence[str],
        sensitive_column_names: Sequence[str],
        computation_method: str = "cap",
        continuous_column_names: Sequence[str] | None = None,
        num_discrete_bins: int = 10,
        num_rows_subsample: int = 1000,
        num_iterations: int = 10,
        verbose: bool = True,
        *,
        seed: int = 0,
        nat_binning: str = "missing",
        strict_types: bool = False,
    ) -> dict[str, Any]:
        """Score with its parts, from ``num_iterations`` subsamples of ``num_rows_subsample`` rows.

        As SDMetrics, a table with fewer rows than ``num_rows_subsample`` is used whole;
        ``verbose`` shows a progress bar; ``seed`` seeds the subsamples.

        Returns
        -------
        dict
            ``{'score', 'cap_protection', 'baseline_protection'}`` with the mean CAP
            protection over the iterations.
        """
        n_sub = check_int(num_rows_subsample, name="num_rows_subsample", minimum=1)
        real = as_frame(real_data, name="real_data")
        synthetic = as_frame(synthetic_data, name="synthetic_data")
        n_sub = min(
            n_sub, max(len(real), len(synthetic))
        )  # SDMetrics samples min(n, len) rows
        result = cls._result(
            real,
            synthetic,
            known_column_names,
            sensitive_column_names,
            computation_method,
            continuous_column_names,
            num_discrete_bins,
            nat_binning=nat_binning,
            strict_types=strict_types,
            seed=seed,
            progress=bool(verbose),
            num_rows_subsample=n_sub,
            num_iterations=num_iterations,
        )
        return _disclosure_breakdown(result)

    @classmethod
    def compute(
        cls,
        real_data: Any,
        synthetic_data: Any,
        known_column_names: Sequence[str],
        sensitive_column_names: Sequence[str],
        computation_method: str = "cap",
        continuous_column_names: Sequence[str] | None = None,
        num_discrete_bins: int = 10,
        num_rows_subsample: int = 1000,
        num_iterations: int = 10,
        verbose: bool = True,
        *,
        seed: int = 0,
        nat_binning: str = "missing",
        strict_types: bool = False,
        ignore_arguments: bool = False,
    ) -> float:
        """The score only.

        SDMetrics 0.32's ``compute`` ignores ``num_rows_subsample``, ``num_iterations``
        and ``verbose`` (it always runs 10 x 1000 rows with a progress bar); synthrisk
        honours them. ``ignore_arguments=True`` reproduces SDMetrics.
        """
        if ignore_arguments:
            num_rows_subsample, num_iterations, verbose = 1000, 10, True
        return cls.compute_breakdown(
            real_data,
            synthetic_data,
            known_column_names,
            sensitive_column_names,
            computation_method,
            continuous_column_names,
            num_discrete_bins,
            num_rows_subsample,
            num_iterations,
            verbose,
            seed=seed,
            nat_binning=nat_binning,
            strict_types=strict_types,
        )["score"]


#: SDMetrics 0.32's warning on the legacy CAP classes
CAP_DEPRECATION_MSG = (
    "Computing CAP metrics directly is deprecated. For improved privacy metrics, "
    "please use the 'DisclosureProtection' and 'DisclosureProtectionEstimate' "
    "metrics instead."
)


#: how missing values are matched (``CategoricalCAPBase``'s ``missing``)
_Missing = Literal["category", "never_equal"]


class _LegacyCAP(CategoricalPrivacyMetric):
    """SDMetrics' legacy ``compute(real, synthetic, metadata, table_name, key_fields, sensitive_fields)``."""

    _cap: ClassVar[type[_disclosure.CategoricalCAPBase]]

    @classmethod
    def compute(  # type: ignore[override]
        cls,
        real_data: Any,
        synthetic_data: Any,
        metadata: Mapping[str, Any] | None = None,
        table_name: str | None = None,
        key_fields: Sequence[str] | None = None,
        sensitive_fields: Sequence[str] | None = None,
        model_kwargs: Mapping[str, Any] | None = None,
        *,
        missing: _Missing = "category",
        strict_types: bool = False,
    ) -> float:
        """CAP protection ``1 - mean P(true sensitive | key)`` over the real rows.

        ``key_fields`` and ``sensitive_fields`` may also come from ``metadata`` (which
        takes priority, as in SDMetrics; a missing one is a ``TypeError``, an empty one
        a ``ValueError``); ``model_kwargs`` is accepted and unused. Issues SDMetrics'
        ``DeprecationWarning``.
        """
        warnings.warn(CAP_DEPRECATION_MSG, DeprecationWarning, stacklevel=2)
        meta = single_table_metadata(metadata, table_name) or {}
        key_fields, sensitive_fields = field_lists(meta, key_fields, sensitive_fields)
        real = as_frame(real_data, name="real_data")
        synthetic_data = as_frame(synthetic_data, name="synthetic_data")
        available = list(map(str, real.columns))
        keys = _names(key_fields, name="key_fields", available=available)
        sens = _names(sensitive_fields, name="sensitive_fields", available=available)
        metric = cls._cap(
            key_fields=keys,
            sensitive_fields=sens,
            missing=missing,
            strict_types=strict_types,
        )
        result = _run(
            metric,
            real,
            synthetic_data,
            [*keys, *sens],
            strict_columns=[*keys, *sens] if strict_types else (),
        )
        return float(cast("float", result.breakdown["score"]))

    @classmethod
    def compute_breakdown(
        cls,
        real_data: Any,
        synthetic_data: Any,
        metadata: Mapping[str, Any] | None = None,
        table_name: str | None = None,
        key_fields: Sequence[str] | None = None,
        sensitive_fields: Sequence[str] | None = None,
        model_kwargs: Mapping[str, Any] | None = None,
        *,
        missing: _Missing = "category",
        strict_types: bool = False,
    ) -> dict[str, float]:
        """``{'score': compute(...)}``, as SDMetrics' single-table metrics do."""
        score = cls.compute(
            real_data,
            synthetic_data,
            metadata,
            table_name,
            key_fields,
            sensitive_fields,
            model_kwargs,
            missing=missing,
            strict_types=strict_types,
        )
        return {"score": score}


class CategoricalCAP(_LegacyCAP):
    """SDMetrics' legacy ``CategoricalCAP`` (unmatched real rows are skipped)."""

    name = "CategoricalCAP"
    _cap = _disclosure.CategoricalCAP


class CategoricalZeroCAP(_LegacyCAP):
    """SDMetrics' legacy ``CategoricalZeroCAP`` (unmatched real rows count as protected)."""

    name = "0CAP"
    _cap = _disclosure.CategoricalZeroCAP


class CategoricalGeneralizedCAP(_LegacyCAP):
    """SDMetrics' legacy ``CategoricalGeneralizedCAP`` (unmatched real rows pool the nearest keys)."""

    name = "Categorical GeneralizedCAP"
    _cap = _disclosure.CategoricalGeneralizedCAP


# ---------------------------------------------------------------------------- DCR


class DCRBaselineProtection(_SDMetricsMetric):
    """SDMetrics' ``DCRBaselineProtection`` on :class:`synthrisk.metrics.dcr.DCRBaselineProtection`."""

    name = "DCRBaselineProtection"

    @classmethod
    def compute_breakdown(
        cls,
        real_data: Any,
        synthetic_data: Any,
        metadata: Mapping[str, Any],
        table_name: str | None = None,
        num_rows_subsample: int | None = None,
        num_iterations: int = 1,
        *,
        seed: int = 0,
        subsample_real: bool = False,
    ) -> dict[str, Any]:
        """Score and median DCRs.

        Parameters
        ----------
        real_data, synthetic_data : pandas.DataFrame
        metadata : dict
            SDV/SDMetrics metadata (single table, or multi-table with ``table_name``);
            columns it does not describe are ignored, as in SDMetrics.
        table_name : str, default=None
        num_rows_subsample : int or None, default=None
            Synthetic (and random) rows per iteration.
        num_iterations : int, default=1
        seed : int, default=0
            Seed of the random baseline and the subsamples.
        subsample_real : bool, default=False
            Also subsample the real reference, as SDMetrics does (biased, SDMetrics #934).

        Returns
        -------
        dict
            ``{'score', 'median_DCR_to_real_data': {'synthetic_data', 'random_data_baseline'}}``.
        """
        meta = single_table_metadata(metadata, table_name)
        if meta is None:
            msg = "`metadata` is required (SDV/SDMetrics single-table metadata)."
            raise ParameterError(msg)
        real, synthetic = frames(
            *_described(
                meta, ("real_data", real_data), ("synthetic_data", synthetic_data)
            )
        )
        meta = _present(meta, real)
        num_rows_subsample, num_iterations = _subsample_args(
            num_rows_subsample, num_iterations, len(synthetic)
        )
        metric = _dcr.DCRBaselineProtection(
            num_rows_subsample=num_rows_subsample,
            num_iterations=num_iterations,
            subsample_real=subsample_real,
        )
        tables = prepare_tables(
            real, synthetic, metadata=_metadata_for(meta, real), allow_all_missing=True
        )
        result = metric.run(
            tables,
            make_context(
                metric.id, seed=seed, working_memory=None, backend=None, progress=False
            ),
        )
        result = dataclasses.replace(
            result, warnings=tuple(tables.notes) + result.warnings
        )
        _reissue(result)
        return _plain(result.breakdown)

    @classmethod
    def compute(
        cls,
        real_data: Any,
        synthetic_data: Any,
        metadata: Mapping[str, Any],
        table_name: str | None = None,
        num_rows_subsample: int | None = None,
        num_iterations: int = 1,
        *,
        seed: int = 0,
        subsample_real: bool = False,
    ) -> float:
        """The score only (see :meth:`compute_breakdown`)."""
        return cls.compute_breakdown(
            real_data,
            synthetic_data,
            metadata,
            table_name,
            num_rows_subsample,
            num_iterations,
            seed=seed,
            subsample_real=subsample_real,
        )["score"]


class DCROverfittingProtection(_SDMetricsMetric):
    """SDMetrics' ``DCROverfittingProtection`` on :class:`synthrisk.metrics.dcr.DCROverfittingProtection`."""

    name = "DCROverfittingProtection"

    @classmethod
    def compute_breakdown(
        cls,
        real_training_data: Any,
        synthetic_data: Any,
        real_validation_data: Any,
        metadata: Mapping[str, Any],
        table_name: str | None = None,
        num_rows_subsample: int | None = None,
        num_iterations: int = 1,
        *,
        seed: int = 0,
        subsample_real: bool = False,
        range_source: str = "reference",
    ) -> dict[str, Any]:
        """Score and the shares of synthetic rows closer to training or validation rows.

        Parameters are SDMetrics' (``real_validation_data`` is synthrisk's holdout),
        plus ``seed``, ``subsample_real`` (see :class:`DCRBaselineProtection`) and
        ``range_source`` (``"real"`` measures both distances with the training ranges).

        Returns
        -------
        dict
            ``{'score', 'synthetic_data_percentages': {'closer_to_training', 'closer_to_holdout'}}``.
        """
        meta = single_table_metadata(metadata, table_name)
        if meta is None:
            msg = "`metadata` is required (SDV/SDMetrics single-table metadata)."
            raise ParameterError(msg)
        real, synthetic, holdout = _described(
            meta,
            ("real_training_data", real_training_data),
            ("synthetic_data", synthetic_data),
            ("real_validation_data", real_validation_data),
        )
        real, synthetic = frames(real, synthetic)
        meta = _present(meta, real)
        num_rows_subsample, num_iterations = _subsample_args(
            num_rows_subsample, num_iterations, len(synthetic)
        )
        metric = _dcr.DCROverfittingProtection(
            num_rows_subsample=num_rows_subsample,
            num_iterations=num_iterations,
            subsample_real=subsample_real,
            range_source=range_source,
        )
        result = metric.compute(
            real, synthetic, holdout, metadata=_metadata_for(meta, real), seed=seed
        )
        _reissue(result)
        return _plain(result.breakdown)

    @classmethod
    def compute(
        cls,
        real_training_data: Any,
        synthetic_data: Any,
        real_validation_data: Any,
        metadata: Mapping[str, Any],
        table_name: str | None = None,
        num_rows_subsample: int | None = None,
        num_iterations: int = 1,
        *,
        seed: int = 0,
        subsample_real: bool = False,
        range_source: str = "reference",
    ) -> float:
        """The score only (see :meth:`compute_breakdown`)."""
        return cls.compute_breakdown(
            real_training_data,
            synthetic_data,
            real_validation_data,
            metadata,
            table_name,
            num_rows_subsample,
            num_iterations,
            seed=seed,
            subsample_real=subsample_real,
            range_source=range_source,
        )["score"]
