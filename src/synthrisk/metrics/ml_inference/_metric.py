# SPDX-License-Identifier: BSD-3-Clause
"""Shared metric class of the ML attribute-inference family: fields, every-column mode, holdout control."""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome
from synthrisk.metrics._every_column import holm_across, worst_column
from synthrisk.metrics._params import Param, column_list, custom, option, probability
from synthrisk.schema.tables import Tables

__all__ = ["Frames", "MLInferenceMetric", "Successes"]

MODES = ("default", "sdmetrics")
#: the synthetic table and the tables scored (``real``, and ``holdout`` when given)
Frames = dict[str, pd.DataFrame]
#: per-row successes of the attack on each scored table, and extra breakdown entries
Successes = tuple[dict[str, np.ndarray], dict[str, Any]]


def _model_kwargs(value: Any, name: str) -> dict[str, Any]:
    if value is not None and not isinstance(value, Mapping):
        msg = f"`{name}` must be a dict of scikit-learn estimator arguments; got {value!r}."
        raise ParameterError(msg)
    return dict(value or {})


class MLInferenceMetric(Metric):
    """An attacker model trained on the synthetic table to predict sensitive columns from key columns.

    Subclasses set the model and implement :meth:`_successes`. With ``sensitive_fields``
    left out, every eligible column is the secret in turn (the others, or the given
    ``key_fields``, are the keys) and the result holds one row per column; the headline
    is the worst column.
    """

    higher_is_safer = True
    runs_by_default = False
    #: column kinds the attacker accepts when columns are named / chosen automatically
    accepted_kinds: ClassVar[tuple[str, ...]] = ()
    default_kinds: ClassVar[tuple[str, ...]] = ()
    #: what one row's success is, for the report
    success_name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A metric whose docstring is one line gets its family's (``_Categorical``...) after it."""
        super().__init_subclass__(**kwargs)
        family = cls.__mro__[1]
        own = cls.__dict__.get("__doc__")
        if own and family.__name__.startswith("_") and "\n" not in own:
            cls.__doc__ = f"{own}\n{family.__doc__ or ''}"

    key_fields: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True, strict=True),
        None,
        "The attacker's known columns (SDMetrics' name).",
    )
    sensitive_fields: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True, strict=True),
        None,
        "The columns to guess; None: every eligible column in turn.",
    )
    model_kwargs: Param[dict[str, Any], Mapping[str, Any] | None] = Param(
        custom(_model_kwargs, "a dict of estimator arguments or None"),
        None,
        "Arguments of the scikit-learn estimator.",
    )
    mode: Param[str] = Param(
        option(MODES), "default", "'sdmetrics' keeps SDMetrics 0.32's behaviour."
    )
    confidence_level: Param[float] = Param(
        probability(), 0.95, "Level of the holdout-control interval."
    )

    def _check_params(self) -> None:
        keys, sensitive = self.key_fields, self.sensitive_fields
        if keys and sensitive and set(keys) & set(sensitive):
            msg = f"`key_fields` and `sensitive_fields` overlap in {sorted(set(keys) & set(sensitive))}; a column is either known or secret."
            raise ParameterError(msg)

    def _estimator_kwargs(self) -> dict[str, Any]:
        """``model_kwargs`` (a copy), for metrics whose attacker is an estimator."""
        return dict(self.model_kwargs)

    def check_tables(self, tables: Tables) -> None:
        kinds = {spec.name: spec.kind for spec in tables.schema.columns}
        fields = {
            "key_fields": self.key_fields,
            "sensitive_fields": self.sensitive_fields,
        }
        for name, columns in fields.items():
            for column in columns or []:
                if column not in kinds:
                    msg = f"`{name}` names {column!r}, which is not a column; columns: {sorted(kinds)}."
                    raise ParameterError(msg)
                if kinds[column] not in self.accepted_kinds:
                    msg = (
                        f"column {column!r} is {kinds[column]}; metric {self.id!r} accepts "
                        f"{' or '.join(self.accepted_kinds)} columns in `{name}`."
                    )
                    raise ParameterError(msg)

    def _tasks(self, tables: Tables) -> list[tuple[list[str], list[str]]]:
        keys = self.key_fields
        sensitive = self.sensitive_fields
        if sensitive is not None:
            if keys is None:
                keys = [
                    s.name
                    for s in tables.schema.columns
                    if s.kind in self.default_kinds and s.name not in sensitive
                ]
            return [(list(keys), list(sensitive))]
        eligible = [
            s.name for s in tables.schema.columns if s.kind in self.default_kinds
        ]
        tasks = []
        for column in eligible:
            if keys is not None and column in keys:
                continue
            task_keys = (
                list(keys) if keys is not None else [c for c in eligible if c != column]
            )
            if task_keys:
                tasks.append((task_keys, [column]))
        return tasks

    @abc.abstractmethod
    def _successes(
        self, frames: Frames, keys: list[str], sensitive: list[str], context: Context
    ) -> Successes:
        """Per-row successes of the attack on ``real`` (and ``holdout``), plus extras."""

    @abc.abstractmethod
    def _control(
        self, real: np.ndarray, holdout: np.ndarray, level: float
    ) -> dict[str, Any]:
        """The holdout ``control`` block from per-row successes."""

    @abc.abstractmethod
    def _score(self, success: np.ndarray) -> float:
        """The SDMetrics score from per-row successes."""

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        tasks = self._tasks(tables)
        if not tasks:
            msg = (
                f"metric {self.id!r} needs at least two {' or '.join(self.default_kinds)} columns "
                "(one secret, one key), or `key_fields` and `sensitive_fields`."
            )
            raise InputError(msg)
        frames = {"synthetic": tables.synthetic, "real": tables.real}
        if tables.holdout is not None:
            frames["holdout"] = tables.holdout
        level = self.confidence_level
        rows = []
        for keys, sensitive in tasks:
            successes, extra = self._successes(frames, keys, sensitive, context)
            real = successes["real"]
            row: dict[str, Any] = {
                "key_fields": keys,
                "sensitive_fields": sensitive,
                "score": self._score(real) if real.size else None,
                **extra,
            }
            if "holdout" in successes:
                hold = successes["holdout"]
                row["holdout_score"] = self._score(hold) if hold.size else None
                row["control"] = self._control(real, hold, level)
            rows.append(row)
        single = self.sensitive_fields is not None
        if single:
            row = rows[0]
            return Outcome(score=row["score"], breakdown=dict(row))
        columns = {r["sensitive_fields"][0]: r for r in rows}
        scored = [c for c, r in columns.items() if r["score"] is not None]
        worst = rows[0]
        if scored:
            worst = columns[
                worst_column(scored, lambda c: columns[c]["score"], highest=False)
            ]
        if tables.holdout is not None:
            adjusted = holm_across(
                {c: r["control"]["p_value"] for c, r in columns.items()}
            )
            for column, p in adjusted.items():
                columns[column]["control"]["p_value_holm"] = p
        breakdown: dict[str, Any] = {
            "score": worst["score"],
            "worst_column": worst["sensitive_fields"][0],
            "columns": columns,
        }
        if tables.holdout is not None:
            control = dict(worst["control"])
            control["p_value"] = control.pop("p_value_holm")
            control["column"] = worst["sensitive_fields"][0]
            control["adjustment"] = "holm"
            breakdown["control"] = control
        return Outcome(score=worst["score"], breakdown=breakdown)
