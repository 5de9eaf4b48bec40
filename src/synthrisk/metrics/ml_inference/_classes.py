# SPDX-License-Identifier: BSD-3-Clause
"""The nine attribute-inference metrics of SDMetrics' "Privacy Against Inference", thin over shared code."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from synthrisk._validation import check_option
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, register
from synthrisk.metrics._params import NOT_A_PARAM, Param, custom, number, option
from synthrisk.metrics._threat import SOME_COLUMNS, TRAINING, ThreatModel
from synthrisk.metrics.ml_inference._attackers import (
    CATEGORICAL_MODELS,
    TIES,
    categorical_hits,
    numerical_losses,
)
from synthrisk.metrics.ml_inference._metric import (
    Frames,
    MLInferenceMetric,
    Successes,
)
from synthrisk.stats.control import compare_means, compare_proportions

__all__ = [
    "CategoricalEnsemble",
    "CategoricalKNN",
    "CategoricalNB",
    "CategoricalRF",
    "CategoricalSVM",
    "NumericalLR",
    "NumericalMLP",
    "NumericalRadiusNearestNeighbor",
    "NumericalSVR",
]


def _attackers(value: Any, name: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        msg = f"`{name}` must be a non-empty list of {list(CATEGORICAL_MODELS)}; got {value!r}."
        raise ParameterError(msg)
    for item in value:
        check_option(item, name=name, allowed=CATEGORICAL_MODELS)
    return list(value)


class _Categorical(MLInferenceMetric):
    """Accuracy-based categorical attacker (SDMetrics' ``CategoricalPrivacyMetric``).

    The score is ``1 - share of real rows whose sensitive values are all guessed``
    (1 is safest). Key and sensitive columns may be categorical, boolean or
    numerical (numbers are treated as categories, as in SDMetrics); by default
    (``sensitive_fields=None``) every categorical or boolean column is the secret in turn.

    Parameters
    ----------
    key_fields, sensitive_fields : list of str, default=None
        The attacker's known columns and the columns to guess (SDMetrics' names).
    model_kwargs : dict, default=None
        Arguments of the scikit-learn estimator (SDMetrics 0.32 passes them to its
        attacker class, whose constructor takes none, so any argument fails there).
    mode : {"default", "sdmetrics"}, default="default"
        ``"sdmetrics"`` keeps SDMetrics 0.32's behaviour: a missing real sensitive value
        never counts as guessed, and missing values in non-text columns fail.
    ties : {"lowest_index", "sklearn"} or None, default=None
        How the k-nearest-neighbours attacker chooses among equally distant synthetic
        rows. ``"lowest_index"``: the rows at the k-th distance fill the remaining places
        in row order, the same on every machine. ``"sklearn"``: scikit-learn's
        ``KNeighborsClassifier`` searches, as in SDMetrics, whose choice among ties
        depends on the CPU (NumPy partitions with AVX-512, AVX2 or plain code). None:
        ``"sklearn"`` with ``mode="sdmetrics"``, else ``"lowest_index"``. Other
        attackers have no such choice.
    confidence_level : float, default=0.95
        Level of the holdout-control interval.
    """

    accepted_kinds = ("categorical", "boolean", "numerical")
    default_kinds = ("categorical", "boolean")
    success_name = "correct guess of every sensitive value"
    models: ClassVar[tuple[str, ...]] = ()

    ties: Param[str | None] = Param(
        option(TIES, allow_none=True),
        None,
        "How the k-NN attacker picks among equally distant rows; None: 'sklearn' with "
        "mode='sdmetrics', else 'lowest_index'.",
    )

    def _ties(self) -> str:
        if self.ties is not None:
            return str(self.ties)
        return "sklearn" if self.mode == "sdmetrics" else "lowest_index"

    def _successes(
        self, frames: Frames, keys: list[str], sensitive: list[str], context: Context
    ) -> Successes:
        hits = categorical_hits(
            frames,
            keys,
            sensitive,
            models=self.models,
            mode=self.mode,
            seed=context.seed,
            model_kwargs=self._estimator_kwargs(),
            ties=self._ties(),
        )
        extra: dict[str, Any] = {
            "accuracy": float(hits["real"].mean()) if hits["real"].size else None
        }
        if "knn" in self.models:  # which rows the k-NN attacker keeps among ties
            extra["ties"] = self._ties()
        return {k: v.astype(np.float64) for k, v in hits.items()}, extra

    def _score(self, success: np.ndarray) -> float:
        return 1.0 - float(success.mean())

    def _control(
        self, real: np.ndarray, holdout: np.ndarray, level: float
    ) -> dict[str, Any]:
        return compare_proportions(
            float(real.sum()),
            real.size,
            float(holdout.sum()),
            holdout.size,
            statistic=self.success_name,
            confidence_level=level,
        )


@register
class CategoricalKNN(_Categorical):
    """SDMetrics' ``CategoricalKNN``: k-nearest-neighbours on one-hot keys."""

    id = "categorical_knn"
    report_order = 220
    attack = "A k-nearest-neighbours model trained on the synthetic table guesses real people's sensitive categories from their key columns."
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "1 − share of training people whose sensitive values a k-nearest-neighbours model trained on the synthetic table guesses right from their keys (the worst column when every column is attacked): 1 = never right"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
        unset_means_all=True,
    )
    models = ("knn",)


@register
class CategoricalNB(_Categorical):
    """SDMetrics' ``CategoricalNB``: categorical naive Bayes on ordinal keys."""

    id = "categorical_nb"
    report_order = 230
    attack = "A naive Bayes model trained on the synthetic table guesses real people's sensitive categories from their key columns."
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "1 − share of training people whose sensitive values a naive Bayes model trained on the synthetic table guesses right from their keys (the worst column when every column is attacked): 1 = never right"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
        unset_means_all=True,
    )
    models = ("nb",)


@register
class CategoricalRF(_Categorical):
    """SDMetrics' ``CategoricalRF``: a random forest on one-hot keys (seeded)."""

    id = "categorical_rf"
    report_order = 240
    attack = "A random forest trained on the synthetic table guesses real people's sensitive categories from their key columns."
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "1 − share of training people whose sensitive values a random forest trained on the synthetic table guesses right from their keys (the worst column when every column is attacked): 1 = never right"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
        unset_means_all=True,
    )
    models = ("rf",)


@register
class CategoricalSVM(_Categorical):
    """SDMetrics' ``CategoricalSVM``: a support-vector classifier per sensitive column."""

    id = "categorical_svm"
    report_order = 250
    attack = "A support-vector classifier trained on the synthetic table guesses real people's sensitive categories from their key columns."
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "1 − share of training people whose sensitive values a support-vector classifier trained on the synthetic table guesses right from their keys (the worst column when every column is attacked): 1 = never right"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
        unset_means_all=True,
    )
    models = ("svm",)


@register
class CategoricalEnsemble(_Categorical):
    """SDMetrics' ``CategoricalEnsemble``: the majority vote of several categorical attackers.

    Parameters are those of the other categorical metrics, plus ``attackers``: a list
    of ``"knn"``, ``"nb"``, ``"rf"``, ``"svm"`` (default: all four, in that order; on a
    tie the attacker listed first among the most frequent guesses wins, as in
    SDMetrics' ``majority``).
    """

    id = "categorical_ensemble"
    report_order = 260
    attack = "Several models trained on the synthetic table vote on real people's sensitive categories given their key columns."
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "1 − share of training people whose sensitive values the majority vote of several models trained on the synthetic table guesses right from their keys (the worst column when every column is attacked): 1 = never right"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
        unset_means_all=True,
    )

    attackers: Param[list[str], Sequence[str]] = Param(
        custom(_attackers, f"a non-empty list of {list(CATEGORICAL_MODELS)}"),
        CATEGORICAL_MODELS,
        "The attackers whose majority vote is the guess (first wins a tie).",
    )

    @property
    def models(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.attackers)


class _Numerical(MLInferenceMetric):
    """Loss-based numerical attacker (SDMetrics' ``NumericalPrivacyMetric``).

    The score is the mean over real rows of ``sum_j |F_j(guess_j) - F_j(real_j)|**p``,
    where ``F_j`` is the CDF that copulas' ``Univariate()`` selects for the real
    sensitive column ``j`` (0 when every value is guessed; higher is safer). By
    default (``sensitive_fields=None``) every numerical column is the secret in turn.

    Parameters
    ----------
    key_fields, sensitive_fields : list of str, default=None
        The attacker's known columns and the columns to guess (numerical).
    model_kwargs : dict, default=None
        Arguments of the scikit-learn estimator.
    p : float, default=2
        Exponent of the loss (SDMetrics' ``loss_function_kwargs={'p': 2}``).
    mode : {"default", "sdmetrics"}, default="default"
        By default rows with a missing key or sensitive value are left out (reported);
        ``"sdmetrics"`` fails on them as SDMetrics 0.32 does.
    confidence_level : float, default=0.95
        Level of the holdout-control interval.
    """

    accepted_kinds = ("numerical",)
    default_kinds = ("numerical",)
    success_name = "minus the inverse-CDF loss of the guess"
    model: ClassVar[str] = ""

    p: Param[float] = Param(number(gt=0), 2.0, "Exponent of the loss.")

    def _cutoff(self) -> float:
        """The radius attacker's cutoff (SDMetrics' default for the others)."""
        return 0.3

    def _successes(
        self, frames: Frames, keys: list[str], sensitive: list[str], context: Context
    ) -> Successes:
        losses = numerical_losses(
            frames,
            keys,
            sensitive,
            model=self.model,
            mode=self.mode,
            seed=context.seed,
            model_kwargs=self._estimator_kwargs(),
            p=self.p,
            cutoff=self._cutoff(),
        )
        skipped = {
            name: len(frames[name]) - rows.size for name, (_, rows) in losses.items()
        }
        if any(skipped.values()):
            context.warn(
                f"rows with a missing key or sensitive value were not scored: {skipped}."
            )
        extra = {
            "n_scored": {name: int(rows.size) for name, (_, rows) in losses.items()}
        }
        return {name: -loss for name, (loss, _) in losses.items()}, extra

    def _score(self, success: np.ndarray) -> float:
        return float(-success.mean())

    def _control(
        self, real: np.ndarray, holdout: np.ndarray, level: float
    ) -> dict[str, Any]:
        return compare_means(
            real, holdout, statistic=self.success_name, confidence_level=level
        )


@register
class NumericalLR(_Numerical):
    """SDMetrics' ``NumericalLR``: linear regression."""

    id = "numerical_lr"
    report_order = 270
    attack = "A linear regression trained on the synthetic table guesses real people's sensitive numbers from their key columns."
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "mean squared gap between the quantiles of the sensitive numbers that a linear regression trained on the synthetic table predicts from a person's keys and the true ones (the worst column when every column is attacked): 0 = every value guessed, higher = safer"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
        unset_means_all=True,
    )
    model = "lr"


@register
class NumericalMLP(_Numerical):
    """SDMetrics' ``NumericalMLP``: a multi-layer perceptron (seeded)."""

    id = "numerical_mlp"
    report_order = 280
    attack = "A neural network trained on the synthetic table guesses real people's sensitive numbers from their key columns."
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "mean squared gap between the quantiles of the sensitive numbers that a neural network trained on the synthetic table predicts from a person's keys and the true ones (the worst column when every column is attacked): 0 = every value guessed, higher = safer"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
        unset_means_all=True,
    )
    model = "mlp"


@register
class NumericalSVR(_Numerical):
    """SDMetrics' ``NumericalSVR``: support-vector regression per sensitive column."""

    id = "numerical_svr"
    report_order = 290
    attack = "A support-vector regression trained on the synthetic table guesses real people's sensitive numbers from their key columns."
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "mean squared gap between the quantiles of the sensitive numbers that a support-vector regression trained on the synthetic table predicts from a person's keys and the true ones (the worst column when every column is attacked): 0 = every value guessed, higher = safer"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
        unset_means_all=True,
    )
    model = "svr"


@register
class NumericalRadiusNearestNeighbor(_Numerical):
    """SDMetrics' ``NumericalRadiusNearestNeighbor``: the mean of synthetic rows near in CDF space.

    A synthetic row is near a real row when ``sum_j |F_j(real_j) - F_j(syn_j)|**2`` over
    the key columns is below ``cutoff**2 * n_keys`` (``F_j`` fitted on the synthetic
    keys). The guess is the mean sensitive value of the near synthetic rows, or the
    synthetic mean when none is near. SDMetrics 0.32 divides the sum of *all* synthetic
    sensitive values by the number of near rows and guesses 0 when none is near;
    ``mode="sdmetrics"`` reproduces that. Other parameters as the numerical metrics,
    plus ``cutoff`` (default 0.3, SDMetrics' ``weight_func_kwargs``) and without
    ``model_kwargs`` (the attacker is not a scikit-learn estimator).
    """

    id = "numerical_radius_nearest_neighbor"
    report_order = 300
    attack = "Real people's sensitive numbers are guessed as the mean of synthetic rows whose key columns are close to theirs."
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "mean squared gap between the quantiles of the sensitive numbers guessed as the mean of the synthetic rows whose keys are close to a person's and the true ones (the worst column when every column is attacked): 0 = every value guessed, higher = safer"
        ),
        known=("key_fields",),
        guessed=("sensitive_fields",),
        unset_means_all=True,
    )
    model = "radius_nearest_neighbor"

    model_kwargs = NOT_A_PARAM  # the radius attacker is not a scikit-learn estimator
    cutoff: Param[float] = Param(
        number(gt=0), 0.3, "Radius in CDF space (SDMetrics' weight_func_kwargs)."
    )

    def _estimator_kwargs(self) -> dict[str, Any]:
        return {}

    def _cutoff(self) -> float:
        return self.cutoff
