# SPDX-License-Identifier: BSD-3-Clause
"""Statistics of privacy attacks: Wilson success rates, residual risk, clipping."""

from __future__ import annotations

from synthrisk.stats.intervals import (
    AttackEstimate,
    PrivacyRisk,
    SuccessRate,
    baseline_warning,
    bind_value,
    check_confidence_level,
    estimate_attack,
    probit,
    residual_success,
    success_rate,
)

__all__ = [
    "AttackEstimate",
    "PrivacyRisk",
    "SuccessRate",
    "baseline_warning",
    "bind_value",
    "check_confidence_level",
    "estimate_attack",
    "probit",
    "residual_success",
    "success_rate",
]
