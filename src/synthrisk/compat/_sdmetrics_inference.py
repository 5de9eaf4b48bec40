# SPDX-License-Identifier: BSD-3-Clause
"""SDMetrics 0.32's "Privacy Against Inference" classes and ``NewRowSynthesis`` as drop-ins.

Re-exported by :mod:`synthrisk.compat.sdmetrics`; see ``docs/ml_inference.md`` for what
differs from SDMetrics and how to get SDMetrics' behaviour back (``mode="sdmetrics"``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, cast

import numpy as np
import pandas as pd

from synthrisk.compat._sdmetrics_common import (
    ColumnNotFoundError,
    field_lists,
    frames,
    single_table_metadata,
)
from synthrisk.exceptions import ParameterError
from synthrisk.metrics import Metric
from synthrisk.metrics import ml_inference as _ml
from synthrisk.metrics.ml_inference import PLACEHOLDER

__all__ = [
    "CategoricalEnsemble",
    "CategoricalKNN",
    "CategoricalKNNAttacker",
    "CategoricalNB",
    "CategoricalNBAttacker",
    "CategoricalPrivacyMetric",
    "CategoricalRF",
    "CategoricalRFAttacker",
    "CategoricalSVM",
    "CategoricalSVMAttacker",
    "InverseCDFCutoff",
    "InverseCDFDistance",
    "NewRowSynthesis",
    "NumericalLR",
    "NumericalMLP",
    "NumericalPrivacyMetric",
    "NumericalRadiusNearestNeighbor",
    "NumericalSVR",
]


def _sdtype_kind(column_meta: Any) -> str | None:
    sdtype = column_meta.get("sdtype") if isinstance(column_meta, Mapping) else None
    return {
        "numerical": "numerical",
        "categorical": "categorical",
        "boolean": "boolean",
        "datetime": "datetime",
        "ordinal": "categorical",
    }.get(str(sdtype))


def _dtype_kind(series: pd.Series) -> str | None:
    """SDMetrics' kind from a dtype (``_DTYPES_TO_TYPES`` on ``dtype.kind``)."""
    return {
        "i": "numerical",
        "f": "numerical",
        "u": "numerical",
        "O": "categorical",
        "b": "boolean",
        "M": "datetime",
    }.get(getattr(series.dtype, "kind", "O"))


def _kinds(
    real: pd.DataFrame, synthetic: pd.DataFrame, meta: Mapping[str, Any]
) -> dict[str, str | None]:
    """Each column's kind: from the metadata (undescribed columns left out), else from the dtype."""
    columns = meta.get("columns") if meta else None
    if columns is not None:
        return {c: _sdtype_kind(columns[c]) for c in real.columns if c in columns}
    return {c: _dtype_kind(real[c]) for c in real.columns}


def _score(
    metric: Metric,
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    columns: Sequence[str],
    kinds: Mapping[str, str | None],
    *,
    seed: int,
) -> float:
    metadata = {"columns": {c: {"kind": kinds[c] or "categorical"} for c in columns}}
    result = metric.compute(
        real[list(columns)], synthetic[list(columns)], metadata=metadata, seed=seed
    )
    for message in result.warnings:
        warnings.warn(message, UserWarning, stacklevel=4)
    return float("nan") if result.score is None else float(result.score)


class _Attacker:
    """Names SDMetrics' attacker classes so that ``model_kwargs={'attackers': [...]}`` works."""

    model: ClassVar[str] = ""


class CategoricalKNNAttacker(_Attacker):
    """Stand-in for SDMetrics' ``CategoricalKNNAttacker`` in ``CategoricalEnsemble``."""

    model = "knn"


class CategoricalNBAttacker(_Attacker):
    """Stand-in for SDMetrics' ``CategoricalNBAttacker`` in ``CategoricalEnsemble``."""

    model = "nb"


class CategoricalRFAttacker(_Attacker):
    """Stand-in for SDMetrics' ``CategoricalRFAttacker`` in ``CategoricalEnsemble``."""

    model = "rf"


class CategoricalSVMAttacker(_Attacker):
    """Stand-in for SDMetrics' ``CategoricalSVMAttacker`` in ``CategoricalEnsemble``."""

    model = "svm"


_ATTACKER_NAMES = {
    "CategoricalKNNAttacker": "knn",
    "CategoricalNBAttacker": "nb",
    "CategoricalRFAttacker": "rf",
    "CategoricalSVMAttacker": "svm",
}


class InverseCDFDistance:
    """Stand-in for SDMetrics' loss function (the only one synthrisk computes)."""


class InverseCDFCutoff(InverseCDFDistance):
    """Stand-in for SDMetrics' radius weight function."""


#: a real value no attacker can guess (SDMetrics: a missing real sensitive value)
_NEVER_GUESSED = "<missing in every real row>"
#: SDMetrics' ``compute(real_data, synthetic_data, metadata, table_name, key_fields, sensitive_fields)``
_Inputs = tuple[Any, Any, Any, Any, Any, Any]


class _PrivacyMetric:
    name: ClassVar[str | None] = None
    goal: ClassVar[str] = "maximize"
    min_value: ClassVar[float] = 0.0
    max_value: ClassVar[float] = 1.0
    _metric: ClassVar[type[Metric]]
    _accepted: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def get_subclasses(cls, include_parents: bool = False) -> dict[str, type]:
        """Subclasses by name, as SDMetrics' ``BaseMetric.get_subclasses``."""
        out: dict[str, type] = {}
        for sub in cls.__subclasses__():
            if include_parents or not sub.__subclasses__():
                out[sub.__name__] = sub
            out.update(sub.get_subclasses(include_parents))
        return out

    @classmethod
    def _run(
        cls,
        inputs: _Inputs,
        build: Callable[[list[str], list[str]], Metric],
        *,
        seed: int,
        mode: str,
    ) -> float:
        """Check the inputs as SDMetrics does, build the metric for the fields, score it."""
        (
            real_data,
            synthetic_data,
            metadata,
            table_name,
            key_fields,
            sensitive_fields,
        ) = inputs
        meta = single_table_metadata(metadata, table_name) or {}
        real, synthetic = frames(real_data, synthetic_data)
        keys, sensitive = field_lists(meta, key_fields, sensitive_fields)
        kinds = _kinds(real, synthetic, meta)
        for column in [*keys, *sensitive]:
            if column not in real.columns:
                msg = f"Column {column!r} is not in the data; columns: {list(real.columns)}."
                raise ColumnNotFoundError(msg)
            if column not in kinds:  # SDMetrics refuses undescribed columns
                msg = f"Column {column!r} not found in metadata; describe it under metadata['columns']."
                raise ParameterError(msg)
            if real[column].isna().all() and synthetic[column].isna().all():
                continue
            if kinds[column] not in cls._accepted:
                msg = f"Column {column} has invalid data type {kinds[column]}"
                raise TypeError(msg)
        real, synthetic = cls._all_missing(
            real, synthetic, keys, sensitive, kinds, mode
        )
        return _score(
            build(keys, sensitive),
            real,
            synthetic,
            [*keys, *sensitive],
            kinds,
            seed=seed,
        )

    @classmethod
    def _all_missing(
        cls,
        real: pd.DataFrame,
        synthetic: pd.DataFrame,
        keys: list[str],
        sensitive: list[str],
        kinds: dict[str, str | None],
        mode: str,
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The tables to score, given columns missing in every real row (refused by default)."""
        return real, synthetic


class CategoricalPrivacyMetric(_PrivacyMetric):
    """SDMetrics' base of the categorical attackers (``compute`` as a class method)."""

    _accepted = ("numerical", "categorical", "boolean")

    @classmethod
    def compute(
        cls,
        real_data: Any,
        synthetic_data: Any,
        metadata: Mapping[str, Any] | None = None,
        table_name: str | None = None,
        key_fields: Sequence[str] | None = None,
        sensitive_fields: Sequence[str] | None = None,
        model_kwargs: Mapping[str, Any] | None = None,
        *,
        mode: str = "default",
        seed: int = 0,
    ) -> float:
        """``1 -`` the share of real rows whose sensitive values the attacker guesses.

        ``model_kwargs`` are passed to the scikit-learn estimator (SDMetrics 0.32 passes
        them to its attacker class, which takes none); ``mode="sdmetrics"`` keeps
        SDMetrics' handling of missing values. The attackers are SDMetrics' scikit-learn
        estimators in both modes, so that on tied keys the k-nearest-neighbours attacker
        keeps the rows SDMetrics keeps on this machine (the native metric's default,
        ``ties="lowest_index"``, is the same on every machine instead).
        """
        return cls._run(
            (
                real_data,
                synthetic_data,
                metadata,
                table_name,
                key_fields,
                sensitive_fields,
            ),
            lambda keys, sensitive: cls._metric(
                key_fields=keys,
                sensitive_fields=sensitive,
                model_kwargs=model_kwargs,
                mode=mode,
                ties="sklearn",
            ),
            seed=seed,
            mode=mode,
        )

    @classmethod
    def _all_missing(
        cls,
        real: pd.DataFrame,
        synthetic: pd.DataFrame,
        keys: list[str],
        sensitive: list[str],
        kinds: dict[str, str | None],
        mode: str,
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """SDMetrics scores a column that is missing in every real row: the rows all hold its
        missing-value placeholder. A guess of it then counts as correct where the synthetic
        column is missing too, except with ``mode="sdmetrics"``, where a missing real
        sensitive value is never guessed."""
        empty = [c for c in [*keys, *sensitive] if real[c].isna().all()]
        if not empty:
            return real, synthetic
        real, synthetic = real.copy(), synthetic.copy()
        for column in empty:
            kinds[column] = "categorical"
            if synthetic[column].isna().all():
                synthetic[column] = PLACEHOLDER
            else:
                synthetic[column] = synthetic[column].astype(object)
            never = mode == "sdmetrics" and column in sensitive
            real[column] = _NEVER_GUESSED if never else PLACEHOLDER
        return real, synthetic


class CategoricalKNN(CategoricalPrivacyMetric):
    """SDMetrics' ``CategoricalKNN``."""

    name = "K-Nearest Neighbors"
    _metric = _ml.CategoricalKNN


class CategoricalNB(CategoricalPrivacyMetric):
    """SDMetrics' ``CategoricalNB``."""

    name = "Categorical NaiveBayesian"
    _metric = _ml.CategoricalNB


class CategoricalRF(CategoricalPrivacyMetric):
    """SDMetrics' ``CategoricalRF`` (seeded)."""

    name = "Categorical Random Forest"
    _metric = _ml.CategoricalRF


class CategoricalSVM(CategoricalPrivacyMetric):
    """SDMetrics' ``CategoricalSVM``."""

    name = "Support Vector Classifier"
    _metric = _ml.CategoricalSVM


class CategoricalEnsemble(CategoricalPrivacyMetric):
    """SDMetrics' ``CategoricalEnsemble``: ``model_kwargs={'attackers': [attacker classes]}``.

    The attacker classes may be SDMetrics' own or the stand-ins of this module. Without
    attackers SDMetrics *returns* a ``ValueError`` instance as the score; here it is raised.
    """

    name = "Ensemble"
    _metric = _ml.CategoricalEnsemble

    @classmethod
    def compute(
        cls,
        real_data: Any,
        synthetic_data: Any,
        metadata: Mapping[str, Any] | None = None,
        table_name: str | None = None,
        key_fields: Sequence[str] | None = None,
        sensitive_fields: Sequence[str] | None = None,
        model_kwargs: Mapping[str, Any] | None = None,
        *,
        mode: str = "default",
        seed: int = 0,
    ) -> float:
        """Majority vote of the given attackers; ``1 -`` its share of correct guesses."""
        attackers = (model_kwargs or {}).get("attackers")
        if not isinstance(attackers, list) or not attackers:
            msg = "No attackers specified: pass model_kwargs={'attackers': [CategoricalNBAttacker, ...]}."
            raise ValueError(msg)
        names = []
        for attacker in attackers:
            name = _ATTACKER_NAMES.get(getattr(attacker, "__name__", ""))
            if (
                name is None
            ):  # SDMetrics calls each attacker: a TypeError for a non-class
                msg = f"unknown attacker {attacker!r}; use the classes {sorted(_ATTACKER_NAMES)}."
                raise TypeError(msg)
            names.append(name)
        return cls._run(
            (
                real_data,
                synthetic_data,
                metadata,
                table_name,
                key_fields,
                sensitive_fields,
            ),
            lambda keys, sensitive: _ml.CategoricalEnsemble(
                key_fields=keys,
                sensitive_fields=sensitive,
                attackers=names,
                mode=mode,
                ties="sklearn",
            ),
            seed=seed,
            mode=mode,
        )


class NumericalPrivacyMetric(_PrivacyMetric):
    """SDMetrics' base of the numerical attackers (``compute`` as a class method)."""

    max_value = float(np.inf)
    _accepted = ("numerical",)

    @classmethod
    def compute(
        cls,
        real_data: Any,
        synthetic_data: Any,
        metadata: Mapping[str, Any] | None = None,
        table_name: str | None = None,
        key_fields: Sequence[str] | None = None,
        sensitive_fields: Sequence[str] | None = None,
        model_kwargs: Mapping[str, Any] | None = None,
        loss_function: Any = None,
        loss_function_kwargs: Mapping[str, Any] | None = None,
        *,
        mode: str = "default",
        seed: int = 0,
    ) -> float:
        """Mean inverse-CDF loss of the attacker's guesses over the real rows.

        Only SDMetrics' ``InverseCDFDistance`` loss is available (its ``p`` is read from
        ``loss_function_kwargs``). Metadata with ``computer_representation`` entries is
        accepted (SDMetrics 0.32 raises ``TypeError`` on it).
        """
        if (
            loss_function is not None
            and getattr(loss_function, "__name__", "") != "InverseCDFDistance"
        ):
            msg = (
                f"only the InverseCDFDistance loss is available; got {loss_function!r}."
            )
            raise ParameterError(msg)
        p = float((loss_function_kwargs or {}).get("p", 2))
        return cls._run(
            (
                real_data,
                synthetic_data,
                metadata,
                table_name,
                key_fields,
                sensitive_fields,
            ),
            lambda keys, sensitive: cls._build(
                keys, sensitive, model_kwargs, p=p, mode=mode
            ),
            seed=seed,
            mode=mode,
        )

    @classmethod
    def _build(
        cls,
        keys: list[str],
        sensitive: list[str],
        model_kwargs: Any,
        *,
        p: float,
        mode: str,
    ) -> Metric:
        return cls._metric(
            key_fields=keys,
            sensitive_fields=sensitive,
            model_kwargs=model_kwargs,
            p=p,
            mode=mode,
        )


class NumericalLR(NumericalPrivacyMetric):
    """SDMetrics' ``NumericalLR``."""

    name = "Numerical Linear Regression"
    _metric = _ml.NumericalLR


class NumericalMLP(NumericalPrivacyMetric):
    """SDMetrics' ``NumericalMLP`` (seeded)."""

    name = "Multi-layer Perceptron Regression"
    _metric = _ml.NumericalMLP


class NumericalSVR(NumericalPrivacyMetric):
    """SDMetrics' ``NumericalSVR``."""

    name = "Numerical Support-vector Regression"
    _metric = _ml.NumericalSVR


class NumericalRadiusNearestNeighbor(NumericalPrivacyMetric):
    """SDMetrics' ``NumericalRadiusNearestNeighbor``.

    ``model_kwargs`` as in SDMetrics: left out, the weight function is
    ``InverseCDFCutoff(p=2, cutoff=0.3)``; given, ``{'weight_func': InverseCDFCutoff,
    'weight_func_kwargs': {...}}`` with ``InverseCDFCutoff``'s own defaults ``p=2,
    cutoff=0.1`` for what ``weight_func_kwargs`` leaves out. The guess is the mean of the
    near synthetic rows (SDMetrics 0.32 divides the sum of all synthetic values by their
    number); ``mode="sdmetrics"`` restores SDMetrics' guess.
    """

    name = "Numerical Radius Nearest Neighbor"
    _metric = _ml.NumericalRadiusNearestNeighbor

    @classmethod
    def _build(
        cls,
        keys: list[str],
        sensitive: list[str],
        model_kwargs: Any,
        *,
        p: float,
        mode: str,
    ) -> Metric:
        if model_kwargs is None:  # SDMetrics' MODEL_KWARGS
            weight: dict[str, Any] = {"p": 2, "cutoff": 0.3}
        else:
            weight_func = model_kwargs.get("weight_func", InverseCDFCutoff)
            if getattr(weight_func, "__name__", "") != "InverseCDFCutoff":
                msg = f"only the InverseCDFCutoff weight function is available; got {weight_func!r}."
                raise ParameterError(msg)
            weight = {
                "p": 2,
                "cutoff": 0.1,
                **(model_kwargs.get("weight_func_kwargs") or {}),
            }
        if float(weight["p"]) != p:
            msg = "the radius attacker's `weight_func_kwargs['p']` must equal the loss's `p` in synthrisk."
            raise ParameterError(msg)
        return _ml.NumericalRadiusNearestNeighbor(
            key_fields=keys,
            sensitive_fields=sensitive,
            cutoff=float(weight["cutoff"]),
            p=p,
            mode=mode,
        )


def _match_spec(
    real: pd.DataFrame, meta: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """synthrisk column kinds for ``NewRowSynthesis``: SDMetrics matches numerical and datetime
    columns within the tolerance and categorical, boolean and ordinal ones exactly; it ignores
    other sdtypes, the primary and alternate keys, ``pii`` columns and undescribed columns."""
    columns = meta.get("columns") if meta else None
    if columns is None:
        return {c: {"kind": _dtype_kind(real[c]) or "id"} for c in real.columns}
    keys = meta.get("alternate_keys") or []
    ignored = {meta.get("primary_key")} | {
        k for key in keys for k in (key if isinstance(key, list) else [key])
    }
    spec: dict[str, dict[str, Any]] = {}
    for column in real.columns:
        entry = columns.get(column) or {}
        kind = None if column in ignored or "pii" in entry else _sdtype_kind(entry)
        spec[column] = {"kind": kind or "id"}
        if kind == "datetime" and "datetime_format" in entry:
            spec[column]["datetime_format"] = entry["datetime_format"]
    return spec


class NewRowSynthesis:
    """SDMetrics' ``NewRowSynthesis`` (``compute`` and ``compute_breakdown`` class methods)."""

    name: ClassVar[str] = "NewRowSynthesis"
    goal: ClassVar[str] = "maximize"
    min_value: ClassVar[float] = 0.0
    max_value: ClassVar[float] = 1.0

    @classmethod
    def compute_breakdown(
        cls,
        real_data: Any,
        synthetic_data: Any,
        metadata: Mapping[str, Any] | None = None,
        table_name: str | None = None,
        numerical_match_tolerance: float = 0.01,
        synthetic_sample_size: int | None = None,
        *,
        seed: int = 0,
    ) -> dict[str, Any]:
        """``{'score', 'num_new_rows', 'num_matched_rows'}`` as SDMetrics returns them.

        Columns the metadata does not describe (or whose sdtype is not numerical,
        datetime, categorical, boolean or ordinal) are ignored.
        """
        meta = single_table_metadata(metadata, table_name) or {}
        real, synthetic = frames(real_data, synthetic_data)
        spec = _match_spec(real, meta)
        if synthetic_sample_size is not None and synthetic_sample_size > len(synthetic):
            warnings.warn(
                f"The provided `synthetic_sample_size` of {synthetic_sample_size} is larger than the number "
                f"of synthetic data rows ({len(synthetic)}). Proceeding without sampling.",
                UserWarning,
                stacklevel=2,
            )
            synthetic_sample_size = None
        # a column missing in every real row: a synthetic row matches only where it is missing too
        empty = [
            c for c, s in spec.items() if s["kind"] != "id" and real[c].isna().all()
        ]
        if empty and synthetic_sample_size is not None:
            rows = np.random.default_rng(seed).choice(
                len(synthetic), size=synthetic_sample_size, replace=False
            )
            synthetic, synthetic_sample_size = synthetic.iloc[np.sort(rows)], None
        unmatchable = synthetic[empty].notna().any(axis=1).to_numpy()
        for column in empty:
            spec[column] = {"kind": "id"}
        counts = {"num_new_rows": int(unmatchable.sum()), "num_matched_rows": 0}
        if (
            not unmatchable.all() or len(synthetic) == 0
        ):  # (an empty table: a clear error)
            metric = _ml.NewRowSynthesis(
                numerical_match_tolerance=numerical_match_tolerance,
                synthetic_sample_size=synthetic_sample_size,
            )
            result = metric.compute(
                real, synthetic[~unmatchable], metadata={"columns": spec}, seed=seed
            )
            for key in counts:
                counts[key] += int(cast("float", result.breakdown[key]))
        n_rows = counts["num_new_rows"] + counts["num_matched_rows"]
        return {"score": counts["num_new_rows"] / n_rows, **counts}

    @classmethod
    def compute(
        cls,
        real_data: Any,
        synthetic_data: Any,
        metadata: Mapping[str, Any] | None = None,
        table_name: str | None = None,
        numerical_match_tolerance: float = 0.01,
        synthetic_sample_size: int | None = None,
        *,
        seed: int = 0,
    ) -> float:
        """The share of synthetic rows that match no real row."""
        return float(
            cls.compute_breakdown(
                real_data,
                synthetic_data,
                metadata,
                table_name,
                numerical_match_tolerance,
                synthetic_sample_size,
                seed=seed,
            )["score"]
        )

    @classmethod
    def normalize(cls, raw_score: float) -> float:
        """SDMetrics' ``normalize``: the score is already in [0, 1]."""
        return float(raw_score)
