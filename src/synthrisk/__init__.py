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
    DCRBaselineProtection,
    DCROverfittingProtection,
    DCRShare,
    DisclosureProtection,
    DisclosureProtectionEstimate,
    DiSCO,
    DistributionValidation,
    IdenticalMatchShare,
    InferenceRisk,
    LinkabilityRisk,
    MembershipClassification,
    MembershipKnnProbabilities,
    Metric,
    NewRowSynthesis,
    NumericalLR,
    NumericalMLP,
    NumericalRadiusNearestNeighbor,
    NumericalSVR,
    ReplicatedUniques,
    SinglingOutRisk,
    UniqueExactMatches,
)
from synthrisk.pipeline import FileEvaluation, evaluate_files, run_file
from synthrisk.report import Thresholds, render_html
from synthrisk.results import EvaluationReport, MetricResult, RecordScores
from synthrisk.schema import ColumnSpec, Schema, infer_schema

__all__ = [
    "METRICS",
    "NNDR",
    "ApparentMatchDistribution",
    "CategoricalCAP",
    "CategoricalEnsemble",
    "CategoricalGeneralizedCAP",
    "CategoricalKNN",
    "CategoricalNB",
    "CategoricalRF",
    "CategoricalSVM",
    "CategoricalZeroCAP",
    "ColumnSpec",
    "ConfigError",
    "DCRBaselineProtection",
    "DCROverfittingProtection",
    "DCRShare",
    "DiSCO",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "DistributionValidation",
    "EvaluationReport",
    "FileEvaluation",
    "IdenticalMatchShare",
    "InferenceRisk",
    "InputError",
    "LinkabilityRisk",
    "MembershipClassification",
    "MembershipKnnProbabilities",
    "Metric",
    "MetricResult",
    "MissingDependencyError",
    "NewRowSynthesis",
    "NumericalLR",
    "NumericalMLP",
    "NumericalRadiusNearestNeighbor",
    "NumericalSVR",
    "ParameterError",
    "RecordScores",
    "ReplicatedUniques",
    "Schema",
    "SchemaMismatchError",
    "SinglingOutRisk",
    "SynthriskError",
    "SynthriskWarning",
    "Thresholds",
    "UniqueExactMatches",
    "UnreliableEstimateWarning",
    "__version__",
    "evaluate",
    "evaluate_files",
    "infer_schema",
    "render_html",
    "run_file",
]
