# SPDX-License-Identifier: BSD-3-Clause
"""Privacy metrics, one subpackage per family (named like its page in ``docs/``).

* :mod:`synthrisk.metrics.dcr`: SDMetrics' DCR baseline and overfitting protection;
* :mod:`synthrisk.metrics.disclosure`: SDMetrics' disclosure protection (CAP family);
* :mod:`synthrisk.metrics.attacks`: Anonymeter's singling-out, linkability and
  inference attacks;
* :mod:`synthrisk.metrics.membership`: membership measures (kNN probabilities, DCR
  share, NNDR, identical matches, classification, distribution validation).

Each module registers its metrics in :data:`METRICS` on import.
"""

from __future__ import annotations

from synthrisk.metrics._base import (
    METRICS,
    Context,
    Metric,
    Outcome,
    get_metric,
    register,
)
from synthrisk.metrics.attacks import InferenceRisk, LinkabilityRisk, SinglingOutRisk
from synthrisk.metrics.dcr import DCRBaselineProtection, DCROverfittingProtection
from synthrisk.metrics.disclosure import (
    ApparentMatchDistribution,
    CategoricalCAP,
    CategoricalGeneralizedCAP,
    CategoricalZeroCAP,
    DisclosureProtection,
    DisclosureProtectionEstimate,
    DiSCO,
    ReplicatedUniques,
    UniqueExactMatches,
)
from synthrisk.metrics.membership import (
    NNDR,
    DCRShare,
    DistributionValidation,
    IdenticalMatchShare,
    MembershipClassification,
    MembershipKnnProbabilities,
)

__all__ = [
    "METRICS",
    "NNDR",
    "ApparentMatchDistribution",
    "CategoricalCAP",
    "CategoricalGeneralizedCAP",
    "CategoricalZeroCAP",
    "Context",
    "DCRBaselineProtection",
    "DCROverfittingProtection",
    "DCRShare",
    "DiSCO",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "DistributionValidation",
    "IdenticalMatchShare",
    "InferenceRisk",
    "LinkabilityRisk",
    "MembershipClassification",
    "MembershipKnnProbabilities",
    "Metric",
    "Outcome",
    "ReplicatedUniques",
    "SinglingOutRisk",
    "UniqueExactMatches",
    "get_metric",
    "register",
]
