# SPDX-License-Identifier: BSD-3-Clause
"""synthrisk: measure how much a synthetic table leaks about the real records it was made from.

>>> import synthrisk
>>> "dcr_baseline_protection" in synthrisk.METRICS
True
"""

from __future__ import annotations

from synthrisk._version import __version__
from synthrisk.evaluate import evaluate
from synthrisk.exceptions import (
    ConfigError,
    InputError,
    MissingDependencyError,
    ParameterError,
    SchemaMismatchError,
    SynthriskError,
    SynthriskWarning,
    UnreliableEstimateWarning,
)
from synthrisk.metrics import (
    DOMIAS,
    METRICS,
    NNDR,
    ApparentMatchDistribution,
    CategoricalCAP,
    CategoricalEnsemble,
    CategoricalGeneralizedCAP,
    CategoricalKNN,
    CategoricalNB,
    CategoricalRF,
    CategoricalSVM,
    CategoricalZeroCAP,
    CollisionMembership,
    DCRBaselineProtection,
    DCROverfittingProtection,
    DCRShare,
    DisclosureProtection,
    DisclosureProtectionEstimate,
    DiSCO,
    DistributionValidation,
    EpsilonIdentifiability,
    IdenticalMatchShare,
    InferenceRisk,
    KAnonymity,
    LDiversity,
    LinkabilityRisk,
    MembershipClassification,
    MembershipKnnProbabilities,
    Metric,
    MonteCarloMembership,
    NewRowSynthesis,
    NumericalLR,
    NumericalMLP,
    NumericalRadiusNearestNeighbor,
    NumericalSVR,
    ReplicatedUniques,
    SinglingOutRisk,
    TCloseness,
    UniqueExactMatches,
)
from synthrisk.pipeline import FileEvaluation, evaluate_files, run_file
from synthrisk.report import Thresholds, render_html
from synthrisk.results import EvaluationReport, MetricResult, RecordScores
from synthrisk.schema import ColumnSpec, Schema, infer_schema

__all__ = [
    "METRICS",
    "ColumnSpec",
    "ConfigError",
    "EvaluationReport",
    "FileEvaluation",
    "InputError",
    "Metric",
    "MetricResult",
    "MissingDependencyError",
    "ParameterError",
    "RecordScores",
    "Schema",
    "SchemaMismatchError",
    "SynthriskError",
    "SynthriskWarning",
    "Thresholds",
    "UnreliableEstimateWarning",
    "__version__",
    "evaluate",
    "evaluate_files",
    "infer_schema",
    "render_html",
    "run_file",
]
# the metric classes in report order (``report_order``), family by family
__all__ += [  # noqa: RUF022
    "DCRBaselineProtection",
    "DCROverfittingProtection",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "CategoricalCAP",
    "CategoricalZeroCAP",
    "CategoricalGeneralizedCAP",
    "ReplicatedUniques",
    "DiSCO",
    "UniqueExactMatches",
    "ApparentMatchDistribution",
    "KAnonymity",
    "LDiversity",
    "TCloseness",
    "SinglingOutRisk",
    "LinkabilityRisk",
    "InferenceRisk",
    "MembershipKnnProbabilities",
    "DCRShare",
    "MembershipClassification",
    "DistributionValidation",
    "NNDR",
    "IdenticalMatchShare",
    "EpsilonIdentifiability",
    "DOMIAS",
    "MonteCarloMembership",
    "CollisionMembership",
    "NewRowSynthesis",
    "CategoricalKNN",
    "CategoricalNB",
    "CategoricalRF",
    "CategoricalSVM",
    "CategoricalEnsemble",
    "NumericalLR",
    "NumericalMLP",
    "NumericalSVR",
    "NumericalRadiusNearestNeighbor",
]
