# SPDX-License-Identifier: BSD-3-Clause
"""SDMetrics 0.32's "Privacy Against Inference" classes and ``NewRowSynthesis`` as drop-ins.

Re-exported by :mod:`synthrisk.compat.sdmetrics`; see ``docs/ml_inference.md`` for what
differs from SDMetrics and how to get SDMetrics' behaviour back (``mode="sdmetrics"``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from synthrisk.exceptions import ParameterError, SchemaMismatchError
from synthrisk.metrics import Metric
from synthrisk.metrics import ml_inference as _ml
from synthrisk.schema.tables import as_pandas

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


def _table(data: Any, name: str) -> pd.DataFrame:
    """A DataFrame from a DataFrame (or SDMetrics' ``{table_name: DataFrame}`` with one table)."""
    if isinstance(data, Mapping) and len(data) > 0:  # SDMetrics takes the first table
        data = data[next(iter(data))]
    return as_pandas(data, name=name).rename(columns=str)


def _frames(real_data: Any, synthetic_data: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    real, synthetic = (
        _table(real_data, "real_data"),
        _table(synthetic_data, "synthetic_data"),
    )
    if set(real.columns) != set(synthetic.columns):
        msg = "`real_data` and `synthetic_data` must have the same columns."
        raise SchemaMismatchError(msg)
    return real, synthetic[list(real.columns)]


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


def _single_metadata(metadata: Any, table_name: str | None) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        msg = f"`metadata` must be a dict; got {type(metadata).__name__}."
        raise TypeError(msg)
    if table_name is not None and not isinstance(table_name, str):
        msg = "`table_name` must be a string."
        raise TypeError(msg)
    if "tables" in metadata:
        tables = metadata["tables"]
        names = list(tables)
        if not names:
            msg = "Metadata does not contain any tables."
            raise ValueError(msg)
        if table_name is None:
            if len(names) > 1:
                msg = "Metadata contains more than one table, please specify the `table_name`."
                raise ValueError(msg)
            table_name = names[0]
        elif table_name not in tables:
            msg = f"Unknown table ('{table_name}'). Must be one of {names}."
            raise ValueError(msg)
        return dict(tables[table_name])
    return dict(metadata)


def _kinds(
    real: pd.DataFrame, synthetic: pd.DataFrame, meta: Mapping[str, Any]
) -> dict[str, str | None]:
    columns = meta.get("columns") if meta else None
    kinds: dict[str, str | None] = {}
    for column in real.columns:
        if columns is not None:
            kind = _sdtype_kind(columns.get(column)) if column in columns else None
        else:
            kind = _dtype_kind(real[column])
        kinds[column] = kind
    return kinds


def _fields(
    meta: Mapping[str, Any], key_fields: Any, sensitive_fields: Any
) -> tuple[list[str], list[str]]:
    """SDMetrics' rules: metadata entries win; None is a TypeError, empty a ValueError."""
    if "key_fields" in meta:
        key_fields = meta["key_fields"]
    elif key_fields is None:
        msg = "`key_fields` must be passed either directly or inside `metadata`"
        raise TypeError(msg)
    if "sensitive_fields" in meta:
        sensitive_fields = meta["sensitive_fields"]
    elif sensitive_fields is None:
        msg = "`sensitive_fields` must be passed either directly or inside `metadata`"
        raise TypeError(msg)
    if isinstance(key_fields, str):
        key_fields = [key_fields]
    if isinstance(sensitive_fields, str):
        sensitive_fields = [sensitive_fields]
    if len(key_fields) == 0 or len(sensitive_fields) == 0:
        msg = "`key_fields` or `sensitive_fields` is empty"
        raise ValueError(msg)
    return [str(c) for c in key_fields], [str(c) for c in sensitive_fields]


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
    def _prepare(
        cls,
        real_data: Any,
        synthetic_data: Any,
        metadata: Any,
        table_name: str | None,
        key_fields: Any,
        sensitive_fields: Any,
    ) -> tuple[pd.DataFrame, pd.DataFrame, list[str], list[str], dict[str, str | None]]:
        meta = _single_metadata(metadata, table_name)
        real, synthetic = _frames(real_data, synthetic_data)
        keys, sensitive = _fields(meta, key_fields, sensitive_fields)
        kinds = _kinds(real, synthetic, meta)
        for column in [*keys, *sensitive]:
            if column not in kinds:
                msg = f"Column {column} is not in the data; columns: {list(real.columns)}."
                raise ValueError(msg)
            kind = kinds[column]
            if real[column].isna().all() and synthetic[column].isna().all():
                continue
            if kind not in cls._accepted:
                msg = f"Column {column} has invalid data type {kind}"
                raise TypeError(msg)
        return real, synthetic, keys, sensitive, kinds


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
        SDMetrics' handling of missing values.
        """
        real, synthetic, keys, sensitive, kinds = cls._prepare(
            real_data,
            synthetic_data,
            metadata,
            table_name,
            key_fields,
            sensitive_fields,
        )
        metric = cls._metric(
            key_fields=keys,
            sensitive_fields=sensitive,
            model_kwargs=model_kwargs,
            mode=mode,
        )  # type: ignore[call-arg]
        return _score(metric, real, synthetic, [*keys, *sensitive], kinds, seed=seed)


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
            if name is None:
                msg = f"unknown attacker {attacker!r}; use {sorted(_ATTACKER_NAMES)}."
                raise ParameterError(msg)
            names.append(name)
        real, synthetic, keys, sensitive, kinds = cls._prepare(
            real_data,
            synthetic_data,
            metadata,
            table_name,
            key_fields,
            sensitive_fields,
        )
        metric = _ml.CategoricalEnsemble(
            key_fields=keys, sensitive_fields=sensitive, attackers=names, mode=mode
        )
        return _score(metric, real, synthetic, [*keys, *sensitive], kinds, seed=seed)


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
        real, synthetic, keys, sensitive, kinds = cls._prepare(
            real_data,
            synthetic_data,
            metadata,
            table_name,
            key_fields,
            sensitive_fields,
        )
        metric = cls._build(keys, sensitive, model_kwargs, p=p, mode=mode)
        return _score(metric, real, synthetic, [*keys, *sensitive], kinds, seed=seed)

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
        )  # type: ignore[call-arg]


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

    ``model_kwargs={'weight_func_kwargs': {'p': 2, 'cutoff': 0.3}}`` as in SDMetrics. The
    guess is the mean of the near synthetic rows (SDMetrics 0.32 divides the sum of all
    synthetic values by their number); ``mode="sdmetrics"`` restores SDMetrics' guess.
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
        weight = dict(
            (model_kwargs or {}).get("weight_func_kwargs") or {"p": 2, "cutoff": 0.3}
        )
        if float(weight.get("p", 2)) != p:
            msg = "the radius attacker's `weight_func_kwargs['p']` must equal the loss's `p` in synthrisk."
            raise ParameterError(msg)
        return _ml.NumericalRadiusNearestNeighbor(
            key_fields=keys,
            sensitive_fields=sensitive,
            cutoff=float(weight.get("cutoff", 0.3)),
            p=p,
            mode=mode,
        )


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
        meta = _single_metadata(metadata, table_name)
        real, synthetic = _frames(real_data, synthetic_data)
        columns = meta.get("columns") if meta else None
        spec: dict[str, Any] = {}
        for column in real.columns:
            if columns is not None:
                kind = _sdtype_kind(columns.get(column)) if column in columns else None
                if kind == "datetime" and "datetime_format" in (
                    columns.get(column) or {}
                ):
                    spec[column] = {
                        "kind": "datetime",
                        "datetime_format": columns[column]["datetime_format"],
                    }
                    continue
            else:
                kind = _dtype_kind(real[column])
            spec[column] = {"kind": kind or "id"}
        if synthetic_sample_size is not None and synthetic_sample_size > len(synthetic):
            warnings.warn(
                f"The provided `synthetic_sample_size` of {synthetic_sample_size} is larger than the number "
                f"of synthetic data rows ({len(synthetic)}). Proceeding without sampling.",
                UserWarning,
                stacklevel=2,
            )
            synthetic_sample_size = None
        metric = _ml.NewRowSynthesis(
            numerical_match_tolerance=numerical_match_tolerance,
            synthetic_sample_size=synthetic_sample_size,
        )
        result = metric.compute(real, synthetic, metadata={"columns": spec}, seed=seed)
        return {
            k: result.breakdown[k]
            for k in ("score", "num_new_rows", "num_matched_rows")
        }

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
