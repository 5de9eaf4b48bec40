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
from synthrisk.metrics.inference import InferenceRisk
from synthrisk.metrics.linkability import LinkabilityRisk
from synthrisk.metrics.singling_out import SinglingOutRisk

__all__ = [
    "METRICS",
    "Context",
    "DCRBaselineProtection",
    "DCROverfittingProtection",
    "InferenceRisk",
    "LinkabilityRisk",
    "Metric",
    "Outcome",
    "SinglingOutRisk",
    "get_metric",
    "register",
]
