# SPDX-License-Identifier: BSD-3-Clause
"""Disclosure: SDMetrics' CAP family, synthpop's, SDNist's, ARX's and sdcMicro's measures (``docs/disclosure.md``).

The metric classes, and the kernels other packages use: :func:`cap_probabilities`
(every real row's correct attribution probability), :func:`cap_protection`,
:func:`generalized_cap_counts`; :func:`column_list` validates a column-name option.
"""

from __future__ import annotations

from synthrisk.metrics.disclosure._cap import (
    DisclosureProtection,
    DisclosureProtectionEstimate,
)
from synthrisk.metrics.disclosure._categorical_cap import (
    CategoricalCAP,
    CategoricalCAPBase,
    CategoricalGeneralizedCAP,
    CategoricalZeroCAP,
)
from synthrisk.metrics.disclosure._codes import column_list
from synthrisk.metrics.disclosure._diversity import LDiversity, TCloseness
from synthrisk.metrics.disclosure._kanonymity import KAnonymity
from synthrisk.metrics.disclosure._kernels import (
    cap_probabilities,
    cap_protection,
    generalized_cap_counts,
)
from synthrisk.metrics.disclosure._reidentification import ReidentificationRisk
from synthrisk.metrics.disclosure._sdc import SdcRisk
from synthrisk.metrics.disclosure._sdnist import (
    ApparentMatchDistribution,
    UniqueExactMatches,
)
from synthrisk.metrics.disclosure._synthpop import DiSCO, ReplicatedUniques

__all__ = [
    "ApparentMatchDistribution",
    "CategoricalCAP",
    "CategoricalCAPBase",
    "CategoricalGeneralizedCAP",
    "CategoricalZeroCAP",
    "DiSCO",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "KAnonymity",
    "LDiversity",
    "ReidentificationRisk",
    "ReplicatedUniques",
    "SdcRisk",
    "TCloseness",
    "UniqueExactMatches",
    "cap_probabilities",
    "cap_protection",
    "column_list",
    "generalized_cap_counts",
]
