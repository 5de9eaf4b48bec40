# SPDX-License-Identifier: BSD-3-Clause
"""Disclosure protection: SDMetrics' CAP family (``docs/disclosure.md``)."""

from __future__ import annotations

from synthrisk.metrics.disclosure._cap import (
    CategoricalCAP,
    CategoricalGeneralizedCAP,
    CategoricalZeroCAP,
    DisclosureProtection,
    DisclosureProtectionEstimate,
)

__all__ = [
    "CategoricalCAP",
    "CategoricalGeneralizedCAP",
    "CategoricalZeroCAP",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
]
