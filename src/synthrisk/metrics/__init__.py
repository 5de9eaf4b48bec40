# SPDX-License-Identifier: BSD-3-Clause
"""Privacy metrics, one subpackage per family (named like its page in ``docs/``).

* :mod:`synthrisk.metrics.dcr`: SDMetrics' DCR baseline and overfitting protection;
* :mod:`synthrisk.metrics.disclosure`: SDMetrics' disclosure protection (CAP family);
* :mod:`synthrisk.metrics.attacks`: Anonymeter's singling-out, linkability and
  inference attacks;
* :mod:`synthrisk.metrics.membership`: membership measures (kNN probabilities, DCR
  share, NNDR, identical matches, classification, distribution validation);
* :mod:`synthrisk.metrics.ml_inference`: SDMetrics' "Privacy Against Inference" model
  attacks (``CategoricalKNN`` ... ``NumericalRadiusNearestNeighbor``) and
  ``NewRowSynthesis``;
* :mod:`synthrisk.metrics.replay`: identifiers, free text, rare values and rare
  combinations of known columns of real people replayed in the synthetic table (run by
  default only when such columns or values exist).

Each module registers its metrics in :data:`METRICS` on import.
"""

from __future__ import annotations

from synthrisk.metrics._base import (
    METRICS,
    Context,
    Metric,
    Outcome,
    for_metric,
    get_metric,
    make_context,
    register,
    suggest,
)
from synthrisk.metrics.attacks import (
    InferenceRisk,
    LinkabilityRisk,
    SinglingOutRisk,
    SinglingOutUnivariateRisk,
)
from synthrisk.metrics.dcr import DCRBaselineProtection, DCROverfittingProtection
from synthrisk.metrics.disclosure import (
    ApparentMatchDistribution,
    CategoricalCAP,
    CategoricalGeneralizedCAP,
    CategoricalZeroCAP,
    DisclosureProtection,
    DisclosureProtectionEstimate,
    DiSCO,
    KAnonymity,
    LDiversity,
    ReidentificationRisk,
    ReplicatedUniques,
    SdcRisk,
    TCloseness,
    UniqueExactMatches,
)
from synthrisk.metrics.membership import (
    DOMIAS,
    NNDR,
    CollisionMembership,
    DCRShare,
    DistributionValidation,
    EpsilonIdentifiability,
    IdenticalMatchShare,
    Identification,
    MembershipClassification,
    MembershipKnnProbabilities,
    MonteCarloMembership,
    VulnerablePeople,
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
from synthrisk.metrics.replay import (
    IdentifierReplay,
    QuasiIdentifierReplay,
    RareValueReplay,
    RowStringReplay,
    TextReplay,
)

__all__ = [
    "DOMIAS",
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
    "CollisionMembership",
    "Context",
    "DCRBaselineProtection",
    "DCROverfittingProtection",
    "DCRShare",
    "DiSCO",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "DistributionValidation",
    "EpsilonIdentifiability",
    "IdenticalMatchShare",
    "Identification",
    "IdentifierReplay",
    "InferenceRisk",
    "KAnonymity",
    "LDiversity",
    "LinkabilityRisk",
    "MembershipClassification",
    "MembershipKnnProbabilities",
    "Metric",
    "MonteCarloMembership",
    "NewRowSynthesis",
    "NumericalLR",
    "NumericalMLP",
    "NumericalRadiusNearestNeighbor",
    "NumericalSVR",
    "Outcome",
    "QuasiIdentifierReplay",
    "RareValueReplay",
    "ReidentificationRisk",
    "ReplicatedUniques",
    "RowStringReplay",
    "SdcRisk",
    "SinglingOutRisk",
    "SinglingOutUnivariateRisk",
    "TCloseness",
    "TextReplay",
    "UniqueExactMatches",
    "VulnerablePeople",
    "for_metric",
    "get_metric",
    "make_context",
    "register",
    "suggest",
]
