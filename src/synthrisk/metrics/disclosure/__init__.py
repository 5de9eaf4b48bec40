# SPDX-License-Identifier: BSD-3-Clause
"""Disclosure: SDMetrics' CAP family and synthpop's disclosure measures (``docs/disclosure.md``)."""

from __future__ import annotations

from synthrisk.metrics.disclosure._cap import (
    CategoricalCAP,
    CategoricalGeneralizedCAP,
    CategoricalZeroCAP,
    DisclosureProtection,
    DisclosureProtectionEstimate,
)
from synthrisk.metrics.disclosure._synthpop import DiSCO, ReplicatedUniques

__all__ = [
    "CategoricalCAP",
    "CategoricalGeneralizedCAP",
    "CategoricalZeroCAP",
    "DiSCO",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "ReplicatedUniques",
]
