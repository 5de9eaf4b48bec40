# SPDX-License-Identifier: BSD-3-Clause
"""Privacy metrics. Each module registers its metrics in :data:`METRICS` on import."""

from __future__ import annotations

from synthrisk.metrics._base import (
    METRICS,
    Context,
    Metric,
    Outcome,
    get_metric,
    register,
)
from synthrisk.metrics.classification import MembershipClassification
from synthrisk.metrics.dcr import DCRBaselineProtection, DCROverfittingProtection
from synthrisk.metrics.disclosure import (
    CategoricalCAP,
    CategoricalGeneralizedCAP,
    CategoricalZeroCAP,
    DisclosureProtection,
    DisclosureProtectionEstimate,
)
from synthrisk.metrics.distribution import DistributionValidation
from synthrisk.metrics.inference import InferenceRisk
from synthrisk.metrics.linkability import LinkabilityRisk
from synthrisk.metrics.membership import (
    NNDR,
    DCRShare,
    IdenticalMatchShare,
    MembershipKnnProbabilities,
)
from synthrisk.metrics.ml_inference import (
    CategoricalEnsemble,
    CategoricalKNN,
    CategoricalNB,
    CategoricalRF,
    CategoricalSVM,
    NewRowSynthesis,
    NumericalLR,
    NumericalMLP,
    NumericalRadiusNearestNeighbor,
    NumericalSVR,
)
from synthrisk.metrics.singling_out import SinglingOutRisk

__all__ = [
    "METRICS",
    "NNDR",
    "CategoricalCAP",
    "CategoricalEnsemble",
    "CategoricalGeneralizedCAP",
    "CategoricalKNN",
    "CategoricalNB",
    "CategoricalRF",
    "CategoricalSVM",
    "CategoricalZeroCAP",
    "Context",
    "DCRBaselineProtection",
    "DCROverfittingProtection",
    "DCRShare",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "DistributionValidation",
    "IdenticalMatchShare",
    "InferenceRisk",
    "LinkabilityRisk",
    "MembershipClassification",
    "MembershipKnnProbabilities",
    "Metric",
    "NewRowSynthesis",
    "NumericalLR",
    "NumericalMLP",
    "NumericalRadiusNearestNeighbor",
    "NumericalSVR",
    "Outcome",
    "SinglingOutRisk",
    "get_metric",
    "register",
]
