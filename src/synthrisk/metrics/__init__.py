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
from synthrisk.metrics.dcr import DCRBaselineProtection, DCROverfittingProtection
from synthrisk.metrics.disclosure import (
    CategoricalCAP,
    CategoricalGeneralizedCAP,
    CategoricalZeroCAP,
    DisclosureProtection,
    DisclosureProtectionEstimate,
)

__all__ = [
    "METRICS",
    "CategoricalCAP",
    "CategoricalGeneralizedCAP",
    "CategoricalZeroCAP",
    "Context",
    "DCRBaselineProtection",
    "DCROverfittingProtection",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "Metric",
    "Outcome",
    "get_metric",
    "register",
]
