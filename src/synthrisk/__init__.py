# SPDX-License-Identifier: BSD-3-Clause
"""synthrisk: measure how much a synthetic table leaks about the real records it was made from.

>>> import synthrisk
>>> "dcr_baseline_protection" in synthrisk.METRICS
True
"""

from __future__ import annotations

from synthrisk._version import __version__
from synthrisk._workers import prefer_fork_safe_layer

# ``synthrisk.audit`` is the audit subpackage; its function is ``synthrisk.audit.audit``,
# re-exported here as ``run_audit`` (never as ``audit``, which would hide the subpackage)
from synthrisk.audit import AuditResult, AuditVerdict, GeneratorError
from synthrisk.audit import audit as run_audit
from synthrisk.evaluate import evaluate
from synthrisk.exceptions import (
    ConfigError,
    InputError,
    MissingDependencyError,
    ParameterError,
    SchemaMismatchError,
    SynthriskDeprecationWarning,
    SynthriskError,
    SynthriskWarning,
    UnreliableEstimateWarning,
)
from synthrisk.filtering import FilterResult, filter_copies
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
    Identification,
    IdentifierReplay,
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
    QuasiIdentifierReplay,
    RareValueReplay,
    ReidentificationRisk,
    ReplicatedUniques,
    RowStringReplay,
    SdcRisk,
    SinglingOutRisk,
    TCloseness,
    TextReplay,
    UniqueExactMatches,
    VulnerablePeople,
)
from synthrisk.pipeline import FileEvaluation, evaluate_files, run_file
from synthrisk.relational import (
    MultiTableReport,
    evaluate_tables,
    read_tables,
    split_people,
)
from synthrisk.report import Thresholds, render_html
from synthrisk.results import (
    EvaluationReport,
    MetricResult,
    RecordScores,
    SelfTest,
    SelfTestScenario,
)
from synthrisk.schema import ColumnSpec, Schema, infer_schema

# before any parallel kernel runs: worker processes need a layer that survives a fork
prefer_fork_safe_layer()

__all__ = [
    "METRICS",
    "AuditResult",
    "AuditVerdict",
    "ColumnSpec",
    "ConfigError",
    "EvaluationReport",
    "FileEvaluation",
    "FilterResult",
    "GeneratorError",
    "InputError",
    "Metric",
    "MetricResult",
    "MissingDependencyError",
    "MultiTableReport",
    "ParameterError",
    "RecordScores",
    "Schema",
    "SchemaMismatchError",
    "SelfTest",
    "SelfTestScenario",
    "SynthriskDeprecationWarning",
    "SynthriskError",
    "SynthriskWarning",
    "Thresholds",
    "UnreliableEstimateWarning",
    "__version__",
    "evaluate",
    "evaluate_files",
    "evaluate_tables",
    "filter_copies",
    "infer_schema",
    "read_tables",
    "render_html",
    "run_audit",
    "run_file",
    "split_people",
]
# the metric classes in report order (``report_order``), family by family
__all__ += [  # noqa: RUF022
    "Identification",
    "VulnerablePeople",
    "IdentifierReplay",
    "TextReplay",
    "QuasiIdentifierReplay",
    "RareValueReplay",
    "RowStringReplay",
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
    "ReidentificationRisk",
    "SdcRisk",
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
