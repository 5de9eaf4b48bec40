# SPDX-License-Identifier: BSD-3-Clause
"""Drop-in replacement for IBM ai-privacy-toolkit 0.2.1's ``apt.risk.data_assessment``.

Same classes, constructor arguments, config fields, score objects and CSV layout as
APT; the numbers (ROC AUC, average precision, share, classifier AUCs) equal APT's to
1e-9 on the same pre-encoded arrays. Replace::

    from apt.utils.datasets import ArrayDataset
    from apt.risk.data_assessment.dataset_assessment_manager import (
        DatasetAssessmentManager, DatasetAssessmentManagerConfig)

with::

    from synthrisk.compat.apt import (
        ArrayDataset, DatasetAssessmentManager, DatasetAssessmentManagerConfig)

What is different from APT (all deliberate; see ``docs/membership.md``):

* no torch / adversarial-robustness-toolbox import and no scikit-learn version cap;
  the kNN searches use synthrisk's fused multi-core Euclidean search, rounding each
  distance as scikit-learn's ``NearestNeighbors`` does (expanded form
  ``|x|^2 - 2 x.y + |y|^2`` when it searches by brute force), so ties between equally
  distant rows fall as in APT (scikit-learn is needed only for the classification
  attack);
* each :class:`DatasetAssessmentManager` keeps its own scores (APT shares one
  class-level dict between all managers), and reports and plots go to
  ``config.output_dir`` (APT: always the working directory);
* ``categorical_features`` may name columns as well as give positions, and
  ``None`` works (APT crashes); the distribution checks are fixed (a real chi-square
  of category counts, Cramér-von Mises against the original data, float32 / int32 /
  bool arrays tested, a failed test reported as not validated);
* batching never drops the last rows (``use_batches`` is accepted and has no
  effect on the result);
* NaN, infinite or non-numeric arrays are rejected with a message saying what to do;
* progress goes to the ``logging`` module instead of ``print``.
"""

from __future__ import annotations

import abc
import concurrent.futures
import dataclasses
import io
import logging
import math
import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np
import pandas as pd

from synthrisk._atomic import write_text_atomic
from synthrisk._optional import import_optional
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics.membership.classification import (
    make_classifier,
    normalized_auc_ratio,
)
from synthrisk.metrics.membership.distribution import (
    CATEGORICAL_TESTS,
    NUMERIC_TESTS,
    two_sample_test,
)
from synthrisk.metrics.membership.knn import parzen_probabilities
from synthrisk.neighbors import nearest_neighbors
from synthrisk.stats.ranking import average_precision, roc_auc, roc_curve

__all__ = [
    "DEFAULT_DATASET_NAME",
    "ArrayDataset",
    "Config",
    "DatasetAssessmentManager",
    "DatasetAssessmentManagerConfig",
    "DatasetAttack",
    "DatasetAttackConfigMembershipClassification",
    "DatasetAttackConfigMembershipKnnProbabilities",
    "DatasetAttackConfigWholeDatasetKnnDistance",
    "DatasetAttackMembership",
    "DatasetAttackMembershipClassification",
    "DatasetAttackMembershipKnnProbabilities",
    "DatasetAttackResult",
    "DatasetAttackResultMembership",
    "DatasetAttackScore",
    "DatasetAttackScoreMembershipClassification",
    "DatasetAttackScoreMembershipKnnProbabilities",
    "DatasetAttackScoreWholeDatasetKnnDistance",
    "DatasetAttackWholeDatasetKnnDistance",
    "DistributionValidationResult",
]

logger = logging.getLogger(__name__)

DEFAULT_DATASET_NAME = "dataset"
_T = TypeVar("_T")
_DROPPED_CSV_COLUMNS = ("result", "distributions_validation_result")


# --------------------------------------------------------------------------- data


def _to_numpy(values: Any, *, name: str) -> np.ndarray:
    """APT's ``array2numpy``: numpy, pandas, list, torch tensor or scipy sparse to numpy."""
    if isinstance(values, np.ndarray):
        return values
    if isinstance(values, (pd.DataFrame, pd.Series)):
        return values.to_numpy()
    if isinstance(values, (list, tuple)):
        return np.array(values)
    if hasattr(values, "detach") and hasattr(
        values, "cpu"
    ):  # torch.Tensor, without importing torch
        return np.asarray(values.detach().cpu().numpy())
    if hasattr(values, "toarray"):  # scipy sparse matrices
        return np.asarray(values.toarray())
    msg = (
        f"`{name}` must be a numpy array, pandas DataFrame or Series, list, torch Tensor or scipy "
        f"sparse matrix; got {type(values).__name__}."
    )
    raise InputError(msg)


class ArrayDataset:
    """Samples (and optional labels) of one dataset, as APT's ``apt.utils.datasets.ArrayDataset``.

    Parameters
    ----------
    x : array-like of shape (n_samples, n_features)
        numpy array, pandas DataFrame, list, torch Tensor or scipy sparse matrix
        (densified).
    y : array-like of shape (n_samples,), default=None
        Labels; never used by the assessments.
    features_names : list of str, default=None
        Column names; taken from ``x`` when it is a DataFrame (and must then agree).
    """

    def __init__(
        self,
        x: Any,
        y: Any = None,
        features_names: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        self.is_pandas = isinstance(x, (pd.DataFrame, pd.Series))
        self.features_names = None if features_names is None else list(features_names)
        self._y = None if y is None else _to_numpy(y, name="y")
        self._x = _to_numpy(x, name="x")
        if self.is_pandas:
            columns = list(x.columns) if isinstance(x, pd.DataFrame) else [x.name]
            if features_names is not None and list(features_names) != columns:
                msg = (
                    f"`features_names` {list(features_names)} are not the DataFrame's columns {columns}; "
                    "leave `features_names` out to use the columns."
                )
                raise InputError(msg)
            self.features_names = columns
        if self._y is not None and len(self._x) != len(self._y):
            msg = f"`x` and `y` must have the same length; got {len(self._x)} and {len(self._y)}."
            raise InputError(msg)

    def get_samples(self) -> np.ndarray:
        """The samples as a numpy array."""
        return self._x

    def get_labels(self) -> np.ndarray | None:
        """The labels as a numpy array (or None)."""
        return self._y

    def get_predictions(self) -> None:
        """Predictions; an ``ArrayDataset`` has none."""
        return None


def _samples(dataset: Any, name: str) -> np.ndarray:
    """The samples of ``dataset`` as a finite float64 matrix, or a clear error."""
    raw = dataset.get_samples() if hasattr(dataset, "get_samples") else dataset
    array = np.asarray(raw)
    if array.ndim != 2:
        msg = f"the {name} must be a 2-D array of shape (n_samples, n_features); got shape {array.shape}."
        raise InputError(msg)
    if array.dtype.kind not in "biuf":
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            bad = next(
                (
                    (i, j, v)
                    for (i, j), v in np.ndenumerate(array)
                    if not isinstance(
                        v, (int, float, np.integer, np.floating, bool, np.bool_)
                    )
                ),
                None,
            )
            where = (
                ""
                if bad is None
                else f" (e.g. {bad[2]!r} at row {bad[0]}, column {bad[1]})"
            )
            msg = (
                f"the {name} hold non-numeric values{where}; the APT assessments need pre-encoded numeric "
                "arrays: one-hot encode categorical columns first, or run synthrisk's metrics on the "
                "DataFrame, which handle mixed types."
            )
            raise InputError(msg) from None
    array = np.ascontiguousarray(array, dtype=np.float64)
    finite = np.isfinite(array)
    if not finite.all():
        i, j = np.argwhere(~finite)[0]
        n_bad = int((~finite).sum())
        kind = "missing (NaN)" if np.isnan(array[i, j]) else "infinite"
        msg = (
            f"the {name} contain {n_bad} missing or infinite value(s) (first: {kind} at row {i}, column {j}); "
            "impute or drop them before the assessment, or run synthrisk's metrics on the DataFrame, "
            "whose mixed-type distance handles missing values."
        )
        raise InputError(msg)
    return array


def _feature_names(*datasets: Any) -> list[str] | None:
    for dataset in datasets:
        names = getattr(dataset, "features_names", None)
        if names is not None:
            return [str(n) for n in names]
    return None


def _categorical_positions(
    categorical_features: Any, n_features: int, names: list[str] | None
) -> list[int]:
    """Column positions of ``categorical_features`` given as names or positions."""
    if categorical_features is None:
        return []
    if isinstance(categorical_features, (str, int)):
        categorical_features = [categorical_features]
    positions = []
    for item in categorical_features:
        if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            if not -n_features <= item < n_features:
                msg = f"`categorical_features` position {item} is out of range for {n_features} features."
                raise ParameterError(msg)
            positions.append(int(item) % n_features)
        elif isinstance(item, str):
            if names is None:
                msg = (
                    f"`categorical_features` names a column ({item!r}) but the datasets have no feature "
                    "names; give positions, or build the ArrayDataset from a DataFrame or with `features_names`."
                )
                raise ParameterError(msg)
            if item not in names:
                msg = f"`categorical_features` names columns that are not in the data: [{item!r}]. Features: {names}."
                raise ParameterError(msg)
            positions.append(names.index(item))
        else:
            msg = f"`categorical_features` entries must be column names or positions; got {item!r}."
            raise ParameterError(msg)
    return sorted(set(positions))


# --------------------------------------------------------------------------- results


@dataclasses.dataclass
class DatasetAttackResult:
    """Base class of detailed attack results."""


@dataclasses.dataclass
class DatasetAttackResultMembership(DatasetAttackResult):
    """Per-record membership probabilities of members and non-members."""

    member_probabilities: np.ndarray
    non_member_probabilities: np.ndarray


@dataclasses.dataclass
class DatasetAttackScore:
    """Base class of attack scores (``risk_score`` is the headline number)."""

    dataset_name: str
    risk_score: float
    result: DatasetAttackResult | None


@dataclasses.dataclass
class DistributionValidationResult:
    """Outcome of the per-column distribution checks.

    Attributes
    ----------
    distributions_validated : bool
        False when some test could not run (APT always says True).
    distributions_valid : bool
        False when some column differs (or some test could not run).
    member_column_distribution_diff, non_member_column_distribution_diff : list of int
        Positions of the columns whose synthetic distribution differs from the
        members' / non-members'.
    """

    distributions_validated: bool
    distributions_valid: bool
    member_column_distribution_diff: list[int]
    non_member_column_distribution_diff: list[int]


@dataclasses.dataclass
class DatasetAttackScoreMembershipKnnProbabilities(DatasetAttackScore):
    """Score of :class:`DatasetAttackMembershipKnnProbabilities` (``risk_score`` = ROC AUC)."""

    roc_auc_score: float
    average_precision_score: float
    distributions_validation_result: DistributionValidationResult | None
    assessment_type: str = "MembershipKnnProbabilities"

    def __init__(
        self,
        dataset_name: str,
        roc_auc_score: float,
        average_precision_score: float,
        result: DatasetAttackResultMembership,
    ) -> None:
        super().__init__(
            dataset_name=dataset_name, risk_score=roc_auc_score, result=result
        )
        self.roc_auc_score = roc_auc_score
        self.average_precision_score = average_precision_score
        self.distributions_validation_result = None
        self.assessment_type = "MembershipKnnProbabilities"


@dataclasses.dataclass
class DatasetAttackScoreWholeDatasetKnnDistance(DatasetAttackScore):
    """Score of :class:`DatasetAttackWholeDatasetKnnDistance` (``risk_score`` = share)."""

    share: float
    distributions_validation_result: DistributionValidationResult | None
    assessment_type: str = "WholeDatasetKnnDistance"

    def __init__(self, dataset_name: str, share: float) -> None:
        super().__init__(dataset_name=dataset_name, risk_score=share, result=None)
        self.share = share
        self.distributions_validation_result = None
        self.assessment_type = "WholeDatasetKnnDistance"


@dataclasses.dataclass
class DatasetAttackScoreMembershipClassification(DatasetAttackScore):
    """Score of :class:`DatasetAttackMembershipClassification` (``risk_score`` = normalised ratio)."""

    member_roc_auc_score: float
    non_member_roc_auc_score: float
    normalized_ratio: float
    synthetic_data_quality_warning: bool
    assessment_type: str = "MembershipClassification"

    def __init__(
        self,
        dataset_name: str,
        member_roc_auc_score: float,
        non_member_roc_auc_score: float,
        normalized_ratio: float,
        synthetic_data_quality_warning: bool,
    ) -> None:
        super().__init__(
            dataset_name=dataset_name, risk_score=normalized_ratio, result=None
        )
        self.member_roc_auc_score = member_roc_auc_score
        self.non_member_roc_auc_score = non_member_roc_auc_score
        self.normalized_ratio = normalized_ratio
        self.synthetic_data_quality_warning = synthetic_data_quality_warning
        self.assessment_type = "MembershipClassification"


# --------------------------------------------------------------------------- configs


class Config(abc.ABC):  # noqa: B024 - APT's marker base class
    """Base class of attack configurations."""


@dataclasses.dataclass
class DatasetAttackConfigMembershipKnnProbabilities(Config):
    """Configuration of :class:`DatasetAttackMembershipKnnProbabilities` (APT's fields).

    ``compute_distance`` may be None or ``"euclidean"`` (APT also accepts any
    scikit-learn metric or Python callable; use synthrisk's metrics for other
    distances). ``plot_dir`` (synthrisk) is where the ROC plot goes.
    """

    k: int = 5
    use_batches: bool = False
    batch_size: int = 10
    compute_distance: Callable[..., float] | str | None = None
    distance_params: dict[str, Any] | None = None
    generate_plot: bool = False
    distribution_comparison_alpha: float = 0.05
    plot_dir: str | os.PathLike[str] | None = None


@dataclasses.dataclass
class DatasetAttackConfigWholeDatasetKnnDistance(Config):
    """Configuration of :class:`DatasetAttackWholeDatasetKnnDistance` (APT's fields).

    As in APT, the two ``distribution_comparison_*_test`` fields are not read; pass the
    tests as keyword arguments of the attack.
    """

    use_batches: bool = False
    batch_size: int = 10
    compute_distance: Callable[..., float] | str | None = None
    distance_params: dict[str, Any] | None = None
    distribution_comparison_alpha: float = 0.05
    distribution_comparison_numeric_test: str = "KS"
    distribution_comparison_categorical_test: str = "CHI"


@dataclasses.dataclass
class DatasetAttackConfigMembershipClassification(Config):
    """Configuration of :class:`DatasetAttackMembershipClassification`."""

    classifier_type: str = "RandomForestClassifier"
    threshold: float = 0.9


# --------------------------------------------------------------------------- attacks


def _apt_distances(query: np.ndarray, reference: np.ndarray, *, k: int) -> np.ndarray:
    """Distances to the k nearest ``reference`` rows, rounded as APT's scikit-learn rounds them."""
    return nearest_neighbors(
        query,
        reference,
        k=k,
        distance="euclidean",
        backend="numba",
        arithmetic="sklearn",
    ).distances


def _check_distance(config: Any) -> None:
    distance = getattr(config, "compute_distance", None)
    if distance not in (None, "euclidean"):
        msg = (
            f"`compute_distance` must be None or 'euclidean' in synthrisk.compat.apt; got {distance!r}. "
            "For other distances use synthrisk's metrics (distance='dcr' or 'gower') on the DataFrame."
        )
        raise ParameterError(msg)
    if getattr(config, "use_batches", False) and getattr(config, "batch_size", 1) < 1:
        msg = f"`batch_size` must be > 0 when `use_batches` is True; got {config.batch_size}."
        raise ParameterError(msg)


_KS_EXACT_ROWS = (
    10_000  # SciPy's ks_2samp(method="auto") is exact up to this sample size
)


def _ks_differs(x: np.ndarray, y: np.ndarray, alpha: float) -> bool:
    """Whether SciPy's ``ks_2samp(x, y).pvalue`` (two-sided, ``method="auto"``) is below ``alpha``.

    ``x`` and ``y`` are sorted. Up to SciPy's exact-method size this is SciPy's test.
    Above it SciPy's p-value is the one-sample Kolmogorov survival function
    ``kstwo.sf(d, n)`` with ``n = round(n1 n2 / (n1 + n2))``; here the statistic ``d``
    is evaluated only at each sample's distinct values, with sorted search keys, and
    when Massart's inequality ``P(D_n >= d) <= 2 exp(-2 n d^2)`` (Massart, *Ann.
    Probab.* 18, 1990) already puts the p-value below ``alpha / 2`` the slow exact
    survival function (a matrix power of order ``n d``) is not evaluated.
    """
    from scipy import stats

    n1, n2 = x.size, y.size
    if max(n1, n2) <= _KS_EXACT_ROWS:
        return bool(two_sample_test("KS", x, y)[1] < alpha)
    lo, hi = np.inf, -np.inf
    for values in (x, y):
        keys = values[np.r_[True, values[1:] != values[:-1]]]
        diffs = (
            np.searchsorted(x, keys, side="right") / n1
            - np.searchsorted(y, keys, side="right") / n2
        )
        lo, hi = min(lo, float(diffs.min())), max(hi, float(diffs.max()))
    below = min(max(-lo, 0.0), 1.0)
    d = below if below > hi else hi
    m, n = sorted([float(n1), float(n2)], reverse=True)
    size = float(np.round(m * n / (m + n)))
    if 2.0 * math.exp(-2.0 * size * d * d) < alpha / 2:
        return True
    with np.errstate(all="ignore"):
        p = float(stats.kstwo.sf(d, size))
    return min(max(p, 0.0), 1.0) < alpha


class _Validator:
    """APT's ``KNNAttackStrategyUtils.validate_distributions``, fixed (see the module docstring)."""

    def __init__(
        self,
        alpha: float = 0.05,
        distribution_comparison_numeric_test: str = "KS",
        distribution_comparison_categorical_test: str = "CHI",
    ) -> None:
        if distribution_comparison_numeric_test not in NUMERIC_TESTS:
            msg = (
                f"`distribution_comparison_numeric_test` must be one of {list(NUMERIC_TESTS)}; "
                f"got {distribution_comparison_numeric_test!r}."
            )
            raise ParameterError(msg)
        if distribution_comparison_categorical_test not in CATEGORICAL_TESTS:
            msg = (
                f"`distribution_comparison_categorical_test` must be one of {list(CATEGORICAL_TESTS)}; "
                f"got {distribution_comparison_categorical_test!r}."
            )
            raise ParameterError(msg)
        self.alpha = alpha
        self.numeric_test = distribution_comparison_numeric_test
        self.categorical_test = distribution_comparison_categorical_test

    def _differing(
        self,
        synthetic: np.ndarray,
        original: np.ndarray,
        categorical: list[int],
        sorted_columns: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> tuple[list[int], bool]:
        differing, failed = [], False
        for col in range(synthetic.shape[1]):
            test = self.categorical_test if col in categorical else self.numeric_test
            if test == "KS" and sorted_columns is not None:
                x, y = sorted_columns[0][col], sorted_columns[1][col]
                if _ks_differs(x, y, self.alpha):
                    differing.append(col)
                continue
            try:
                _, p_value = two_sample_test(test, synthetic[:, col], original[:, col])
            except (ValueError, np.linalg.LinAlgError) as exc:
                logger.warning(
                    "column %d: the %s test could not run: %s", col, test, exc
                )
                failed = True
                continue
            if np.isnan(p_value):
                failed = True
            elif p_value < self.alpha:
                differing.append(col)
        return differing, failed

    def validate(
        self,
        members: np.ndarray,
        non_members: np.ndarray,
        synthetic: np.ndarray,
        categorical: list[int],
    ) -> DistributionValidationResult:
        sorted_m: tuple[np.ndarray, np.ndarray] | None = None
        sorted_n: tuple[np.ndarray, np.ndarray] | None = None
        if self.numeric_test == "KS":
            # each column sorted once, the synthetic ones shared by both comparisons
            syn, mem, non = (
                np.sort(np.ascontiguousarray(a.T), axis=1)
                for a in (synthetic, members, non_members)
            )
            sorted_m, sorted_n = (syn, mem), (syn, non)
        member_diff, failed_m = self._differing(
            synthetic, members, categorical, sorted_m
        )
        non_member_diff, failed_n = self._differing(
            synthetic, non_members, categorical, sorted_n
        )
        failed = failed_m or failed_n
        return DistributionValidationResult(
            distributions_validated=not failed,
            distributions_valid=not (failed or member_diff or non_member_diff),
            member_column_distribution_diff=member_diff,
            non_member_column_distribution_diff=non_member_diff,
        )

    def validate_alongside(
        self,
        known: DistributionValidationResult | None,
        arrays: tuple[np.ndarray, np.ndarray, np.ndarray],
        categorical: list[int],
        work: Callable[[], _T],
    ) -> tuple[DistributionValidationResult, _T]:
        """:meth:`validate` (unless ``known``) on a second thread while ``work()`` runs.

        ``work`` is the attack's kNN searches. The two overlap only when every check is the large-sample KS path, which touches no global
        state (SciPy's other tests are run under ``warnings.catch_warnings``, which is
        not thread-safe); otherwise one after the other.
        """
        if known is not None:
            return known, work()
        members, non_members, synthetic = arrays
        smallest = min(members.shape[0], non_members.shape[0])
        if (
            self.numeric_test != "KS"
            or categorical
            or max(synthetic.shape[0], smallest) <= _KS_EXACT_ROWS
        ):
            return self.validate(members, non_members, synthetic, categorical), work()
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(
                self.validate, members, non_members, synthetic, categorical
            )
            result = work()
            return pending.result(), result


class DatasetAttack(abc.ABC):
    """Base class of the dataset attacks (APT's interface)."""

    def __init__(
        self,
        original_data_members: Any,
        original_data_non_members: Any,
        synthetic_data: Any,
        config: Config,
        dataset_name: str = DEFAULT_DATASET_NAME,
        categorical_features: Sequence[str | int] | None = None,
    ) -> None:
        self.original_data_members = original_data_members
        self.original_data_non_members = original_data_non_members
        self.synthetic_data = synthetic_data
        self.config = config
        self.dataset_name = dataset_name
        self.categorical_features = (
            [] if categorical_features is None else list(categorical_features)
        )

    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        members = _samples(self.original_data_members, "original data members")
        non_members = _samples(
            self.original_data_non_members, "original data non-members"
        )
        synthetic = _samples(self.synthetic_data, "synthetic data")
        widths = {members.shape[1], non_members.shape[1], synthetic.shape[1]}
        if len(widths) != 1:
            msg = (
                f"members, non-members and synthetic data must have the same number of features; got "
                f"{members.shape[1]}, {non_members.shape[1]} and {synthetic.shape[1]}."
            )
            raise InputError(msg)
        for array, name in (
            (members, "members"),
            (non_members, "non-members"),
            (synthetic, "synthetic data"),
        ):
            if array.shape[0] == 0:
                msg = f"the {name} have no rows."
                raise InputError(msg)
        return members, non_members, synthetic

    def _categorical(self, n_features: int) -> list[int]:
        names = _feature_names(
            self.original_data_members,
            self.original_data_non_members,
            self.synthetic_data,
        )
        return _categorical_positions(self.categorical_features, n_features, names)

    @abc.abstractmethod
    def assess_privacy(self) -> DatasetAttackScore:
        """Run the attack and return its score."""

    @abc.abstractmethod
    def short_name(self) -> str:
        """The attack's name in reports."""


class DatasetAttackMembership(DatasetAttack):
    """Base class of per-record membership attacks."""

    @staticmethod
    def calculate_metrics(
        member_probabilities: np.ndarray, non_member_probabilities: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
        """``(fpr, tpr, thresholds, roc_auc, average_precision)``, members positive."""
        labels = np.r_[
            np.zeros(len(non_member_probabilities)), np.ones(len(member_probabilities))
        ]
        scores = np.r_[non_member_probabilities, member_probabilities]
        fpr, tpr, thresholds = roc_curve(labels, scores)
        return (
            fpr,
            tpr,
            thresholds,
            roc_auc(labels, scores),
            average_precision(labels, scores),
        )

    @staticmethod
    def plot_roc_curve(
        dataset_name: str,
        member_probabilities: np.ndarray,
        non_member_probabilities: np.ndarray,
        filename_prefix: str = "",
        output_dir: str | os.PathLike[str] | None = None,
    ) -> Path:
        """Save the ROC curve as ``{output_dir}/{filename_prefix}{dataset_name}_roc_curve.png``."""
        import_optional("matplotlib", extra="report")
        from matplotlib.figure import Figure

        fpr, tpr, _, auc, _ = DatasetAttackMembership.calculate_metrics(
            member_probabilities, non_member_probabilities
        )
        folder = Path("." if output_dir is None else output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{filename_prefix}{dataset_name}_roc_curve.png"
        fig = Figure()
        ax = fig.subplots()
        ax.plot(fpr, tpr, label=f"Classifier (AUC = {auc:.2f})")
        ax.plot(
            [0, 1], [0, 1], color="navy", linewidth=2, linestyle="--", label="No skill"
        )
        ax.set_xlabel("False Positive Rate (Positive label: 1)")
        ax.set_ylabel("True Positive Rate (Positive label: 1)")
        ax.set_title("ROC curve")
        ax.legend(loc="lower right")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        return write_text_atomic(path, buffer.getvalue())


def _validator(config: Any, kwargs: dict[str, Any]) -> _Validator:
    allowed = {
        "distribution_comparison_numeric_test",
        "distribution_comparison_categorical_test",
    }
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        msg = f"unexpected keyword argument(s) {unknown}; allowed: {sorted(allowed)}."
        raise ParameterError(msg)
    return _Validator(alpha=config.distribution_comparison_alpha, **kwargs)


class DatasetAttackMembershipKnnProbabilities(DatasetAttackMembership):
    """GAN-Leaks membership attack: Parzen-window probabilities from the k nearest synthetic rows.

    Parameters
    ----------
    original_data_members, original_data_non_members, synthetic_data : ArrayDataset
        Pre-encoded numeric samples (members = training rows, non-members = holdout).
    config : DatasetAttackConfigMembershipKnnProbabilities, default=None
        APT's configuration (defaults when None).
    dataset_name : str, default="dataset"
        Name in reports and in the plot's file name.
    categorical_features : list of int or str, default=None
        Columns tested as categorical in the distribution validation.
    **kwargs
        ``distribution_comparison_numeric_test`` and
        ``distribution_comparison_categorical_test``, as in APT.
    """

    SHORT_NAME = "MembershipKnnProbabilities"

    def __init__(
        self,
        original_data_members: Any,
        original_data_non_members: Any,
        synthetic_data: Any,
        config: DatasetAttackConfigMembershipKnnProbabilities | None = None,
        dataset_name: str = DEFAULT_DATASET_NAME,
        categorical_features: Sequence[str | int] | None = None,
        **kwargs: Any,
    ) -> None:
        config = (
            DatasetAttackConfigMembershipKnnProbabilities()
            if config is None
            else config
        )
        _check_distance(config)
        super().__init__(
            original_data_members,
            original_data_non_members,
            synthetic_data,
            config,
            dataset_name,
            categorical_features,
        )
        self._validator = _validator(config, kwargs)
        self._validation: DistributionValidationResult | None = None

    def short_name(self) -> str:
        """``"MembershipKnnProbabilities"``."""
        return self.SHORT_NAME

    def assess_privacy(self) -> DatasetAttackScoreMembershipKnnProbabilities:
        """Validate the distributions, score members and non-members, and compute ROC AUC and AP."""
        members, non_members, synthetic = self._arrays()
        config = self.config
        assert isinstance(config, DatasetAttackConfigMembershipKnnProbabilities)
        k = int(config.k)
        if synthetic.shape[0] < k:
            msg = f"the synthetic data has {synthetic.shape[0]} row(s), fewer than k={k} neighbours; lower `k`."
            raise InputError(msg)

        def distances() -> tuple[np.ndarray, np.ndarray]:
            return (
                _apt_distances(members, synthetic, k=k),
                _apt_distances(non_members, synthetic, k=k),
            )

        validation, (d_members, d_non_members) = self._validator.validate_alongside(
            self._validation,
            (members, non_members, synthetic),
            self._categorical(members.shape[1]),
            distances,
        )
        result = DatasetAttackResultMembership(
            member_probabilities=self.probability_per_sample(d_members),
            non_member_probabilities=self.probability_per_sample(d_non_members),
        )
        score = self.calculate_privacy_score(result, config.generate_plot)
        score.distributions_validation_result = validation
        return score

    def calculate_privacy_score(
        self,
        dataset_attack_result: DatasetAttackResultMembership,
        generate_plot: bool = False,
    ) -> DatasetAttackScoreMembershipKnnProbabilities:
        """ROC AUC and average precision of the probabilities (and the ROC plot if asked)."""
        member_p = dataset_attack_result.member_probabilities
        non_member_p = dataset_attack_result.non_member_probabilities
        _, _, _, auc, ap = self.calculate_metrics(member_p, non_member_p)
        score = DatasetAttackScoreMembershipKnnProbabilities(
            self.dataset_name,
            roc_auc_score=auc,
            average_precision_score=ap,
            result=dataset_attack_result,
        )
        if generate_plot:
            plot_dir = getattr(self.config, "plot_dir", None)
            self.plot_roc_curve(
                self.dataset_name, member_p, non_member_p, output_dir=plot_dir
            )
        return score

    @staticmethod
    def probability_per_sample(distances: np.ndarray) -> np.ndarray:
        """``mean_j exp(-d_j)`` per row of an (n, k) distance array."""
        return parzen_probabilities(distances, bandwidth=1.0)


class DatasetAttackWholeDatasetKnnDistance(DatasetAttack):
    """Share of synthetic rows closer to the members than to the non-members (APT's DCR share).

    ``share = mean(d_members < d_non_members) + n_members / (n_members + n_non_members)
    * mean(d_members == d_non_members)``, exactly as APT. Its value without
    memorisation is about ``n_members / (n_members + n_non_members)``, 0.5 only for
    equal sizes; :class:`synthrisk.metrics.DCRShare` gives the size-corrected share and
    a p-value.
    """

    SHORT_NAME = "WholeDatasetKnnDistance"

    def __init__(
        self,
        original_data_members: Any,
        original_data_non_members: Any,
        synthetic_data: Any,
        config: DatasetAttackConfigWholeDatasetKnnDistance | None = None,
        dataset_name: str = DEFAULT_DATASET_NAME,
        categorical_features: Sequence[str | int] | None = None,
        **kwargs: Any,
    ) -> None:
        config = (
            DatasetAttackConfigWholeDatasetKnnDistance() if config is None else config
        )
        _check_distance(config)
        super().__init__(
            original_data_members,
            original_data_non_members,
            synthetic_data,
            config,
            dataset_name,
            categorical_features,
        )
        self._validator = _validator(config, kwargs)
        self._validation: DistributionValidationResult | None = None

    def short_name(self) -> str:
        """``"WholeDatasetKnnDistance"``."""
        return self.SHORT_NAME

    def calculate_distances(self) -> tuple[np.ndarray, np.ndarray]:
        """Distance of every synthetic row to its nearest member and nearest non-member, shape (n, 1)."""
        members, non_members, synthetic = self._arrays()
        d_members = _apt_distances(synthetic, members, k=1)
        d_non_members = _apt_distances(synthetic, non_members, k=1)
        return d_members, d_non_members

    def assess_privacy(self) -> DatasetAttackScoreWholeDatasetKnnDistance:
        """Validate the distributions and compute the share."""
        members, non_members, synthetic = self._arrays()
        validation, (d_members, d_non_members) = self._validator.validate_alongside(
            self._validation,
            (members, non_members, synthetic),
            self._categorical(members.shape[1]),
            self.calculate_distances,
        )
        n_m, n_n = members.shape[0], non_members.shape[0]
        share = float(
            np.mean(d_members < d_non_members)
            + n_m / (n_m + n_n) * np.mean(d_members == d_non_members)
        )
        score = DatasetAttackScoreWholeDatasetKnnDistance(
            self.dataset_name, share=share
        )
        score.distributions_validation_result = validation
        return score


class DatasetAttackMembershipClassification(DatasetAttackMembership):
    """Real-vs-synthetic and holdout-vs-synthetic classifiers; score = APT's normalised AUC ratio.

    Exactly APT's procedure (``train_test_split(test_size=0.5, random_state=42)`` on
    each dataset, scikit-learn's ``LogisticRegression()`` or
    ``RandomForestClassifier(max_depth=2, random_state=0)``). Needs scikit-learn
    (a core dependency). Note that APT's ratio is 0 whenever synthetic
    rows are harder to tell from the members than from the non-members, which is
    what memorisation does; :class:`synthrisk.metrics.MembershipClassification`
    reports the ratio the other way round.
    """

    SHORT_NAME = "MembershipClassification"
    _TYPES: ClassVar[dict[str, str]] = {
        "LogisticRegression": "logistic_regression",
        "RandomForestClassifier": "random_forest",
    }

    def __init__(
        self,
        original_data_members: Any,
        original_data_non_members: Any,
        synthetic_data: Any,
        config: DatasetAttackConfigMembershipClassification | None = None,
        dataset_name: str = DEFAULT_DATASET_NAME,
        categorical_features: Sequence[str | int] | None = None,
    ) -> None:
        config = (
            DatasetAttackConfigMembershipClassification() if config is None else config
        )
        if config.classifier_type not in self._TYPES:
            msg = f"`classifier_type` must be one of {list(self._TYPES)}; got {config.classifier_type!r}."
            raise ParameterError(msg)
        super().__init__(
            original_data_members,
            original_data_non_members,
            synthetic_data,
            config,
            dataset_name,
            categorical_features,
        )
        self.threshold = config.threshold

    def short_name(self) -> str:
        """``"MembershipClassification"``."""
        return self.SHORT_NAME

    def _classify(self, original: np.ndarray, synthetic: np.ndarray) -> float:
        import_optional("sklearn", package="scikit-learn")
        from sklearn.model_selection import train_test_split

        config = self.config
        assert isinstance(config, DatasetAttackConfigMembershipClassification)
        orig_train, orig_test = train_test_split(
            original, test_size=0.5, random_state=42
        )
        syn_train, syn_test = train_test_split(
            synthetic, test_size=0.5, random_state=42
        )
        x_train = np.concatenate([orig_train, syn_train])
        y_train = np.r_[
            np.ones(len(orig_train), dtype=int), np.zeros(len(syn_train), dtype=int)
        ]
        x_test = np.concatenate([orig_test, syn_test])
        y_test = np.r_[
            np.ones(len(orig_test), dtype=int), np.zeros(len(syn_test), dtype=int)
        ]
        classifier = make_classifier(
            self._TYPES[config.classifier_type], random_state=0, apt=True
        )
        classifier.fit(x_train, y_train)
        logger.info("Model accuracy: %s", classifier.score(x_test, y_test))
        return roc_auc(y_test, classifier.predict_proba(x_test)[:, 1])

    def assess_privacy(self) -> DatasetAttackScoreMembershipClassification:
        """Train both classifiers and compute the normalised ratio."""
        members, non_members, synthetic = self._arrays()
        return self.calculate_privacy_score(
            self._classify(members, synthetic), self._classify(non_members, synthetic)
        )

    def calculate_privacy_score(
        self, member_roc_auc: float, non_member_roc_auc: float
    ) -> DatasetAttackScoreMembershipClassification:
        """APT's score from the two AUCs (``normalized_ratio`` is 0, an int, when not applicable, as in APT)."""
        ratio: float = normalized_auc_ratio(member_roc_auc, non_member_roc_auc)
        if not 0 < non_member_roc_auc <= member_roc_auc:
            ratio = 0
        warning = bool(
            member_roc_auc >= self.threshold or non_member_roc_auc >= self.threshold
        )
        return DatasetAttackScoreMembershipClassification(
            self.dataset_name,
            member_roc_auc_score=member_roc_auc,
            non_member_roc_auc_score=non_member_roc_auc,
            normalized_ratio=ratio,
            synthetic_data_quality_warning=warning,
        )


# --------------------------------------------------------------------------- manager


@dataclasses.dataclass
class DatasetAssessmentManagerConfig:
    """Configuration of :class:`DatasetAssessmentManager`.

    Attributes
    ----------
    persist_reports : bool, default=False
        Write one CSV per attack in :meth:`DatasetAssessmentManager.dump_all_scores_to_files`.
    timestamp_reports : bool, default=False
        Prefix the CSV names with ``YYYYmmdd-HHMMSS_``.
    generate_plots : bool, default=False
        Save the kNN-probabilities attack's ROC curve as ``<dataset_name>_roc_curve.png``.
    output_dir : str or path, default="."
        Folder for reports and plots (synthrisk; APT always uses the working directory).
    """

    persist_reports: bool = False
    timestamp_reports: bool = False
    generate_plots: bool = False
    output_dir: str | os.PathLike[str] = "."


class DatasetAssessmentManager:
    """Runs APT's three dataset attacks and collects their scores.

    Parameters
    ----------
    config : DatasetAssessmentManagerConfig, default=None
        Defaults when None (the config class itself is accepted too, as in APT).

    Attributes
    ----------
    attack_scores : dict of str to list
        Scores of every :meth:`assess` call of *this* manager, by attack name.
    """

    def __init__(
        self,
        config: DatasetAssessmentManagerConfig
        | type[DatasetAssessmentManagerConfig]
        | None = None,
    ) -> None:
        if config is None or config is DatasetAssessmentManagerConfig:
            config = DatasetAssessmentManagerConfig()
        self.config: DatasetAssessmentManagerConfig = config  # type: ignore[assignment]
        self.attack_scores: defaultdict[str, list[DatasetAttackScore]] = defaultdict(
            list
        )

    def assess(
        self,
        original_data_members: Any,
        original_data_non_members: Any,
        synthetic_data: Any,
        dataset_name: str = DEFAULT_DATASET_NAME,
        categorical_features: Sequence[str | int] | None = None,
    ) -> defaultdict[str, list[DatasetAttackScore]]:
        """Run the three attacks; return all scores of this manager by attack name (as APT does).

        Order and settings are APT's: kNN probabilities (k = 5, plot if
        ``generate_plots``), whole-dataset kNN distance, and classification with
        logistic regression and threshold 0.9. The distribution validation runs once
        and is attached to both kNN scores.
        """
        knn = DatasetAttackMembershipKnnProbabilities(
            original_data_members,
            original_data_non_members,
            synthetic_data,
            DatasetAttackConfigMembershipKnnProbabilities(
                use_batches=False,
                generate_plot=self.config.generate_plots,
                plot_dir=self.config.output_dir,
            ),
            dataset_name,
            categorical_features,
        )
        share = DatasetAttackWholeDatasetKnnDistance(
            original_data_members,
            original_data_non_members,
            synthetic_data,
            DatasetAttackConfigWholeDatasetKnnDistance(use_batches=False),
            dataset_name,
            categorical_features,
        )
        classification = DatasetAttackMembershipClassification(
            original_data_members,
            original_data_non_members,
            synthetic_data,
            DatasetAttackConfigMembershipClassification(
                classifier_type="LogisticRegression", threshold=0.9
            ),
            dataset_name,
        )
        members, non_members, synthetic = knn._arrays()
        validation = knn._validator.validate(
            members, non_members, synthetic, knn._categorical(members.shape[1])
        )
        knn._validation = share._validation = validation
        for attack in (knn, share, classification):
            logger.info("Running %s attack on %s", attack.short_name(), dataset_name)
            self.attack_scores[attack.short_name()].append(attack.assess_privacy())
        return self.attack_scores

    def dump_all_scores_to_files(
        self, output_dir: str | os.PathLike[str] | None = None
    ) -> list[Path]:
        """Write one CSV per attack (APT's layout) if ``persist_reports``; return the paths written.

        Files: ``[<YYYYmmdd-HHMMSS>_]<attack>_results.log.csv`` in ``output_dir`` (default
        ``config.output_dir``), one row per :meth:`assess` call, columns as APT's
        (per-record probabilities and distribution checks are not written).
        """
        if not self.config.persist_reports:
            return []
        folder = Path(self.config.output_dir if output_dir is None else output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        time_str = time.strftime("%Y%m%d-%H%M%S")
        written = []
        for attack_name, scores in self.attack_scores.items():
            name = f"{attack_name}_results.log.csv"
            if self.config.timestamp_reports:
                name = f"{time_str}_{name}"
            rows = [
                {
                    f.name: getattr(s, f.name)
                    for f in dataclasses.fields(s)
                    if f.name not in _DROPPED_CSV_COLUMNS
                }
                for s in scores
            ]
            path = folder / name
            write_text_atomic(path, pd.DataFrame(rows).to_csv(header=True, index=False))
            written.append(path)
        return written
