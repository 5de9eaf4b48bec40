# SPDX-License-Identifier: BSD-3-Clause
"""The verdict layer lives in :mod:`synthrisk.verdict`; the report only reads it."""

from __future__ import annotations

from synthrisk.verdict import (
    DEFAULT_THRESHOLDS,
    DEFAULT_TOLERANCES,
    LEVELS,
    Level,
    MetricVerdict,
    Threshold,
    Thresholds,
    Verdict,
    check_fail_on,
    judge,
    judge_result,
)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "DEFAULT_TOLERANCES",
    "LEVELS",
    "Level",
    "MetricVerdict",
    "Threshold",
    "Thresholds",
    "Verdict",
    "check_fail_on",
    "judge",
    "judge_result",
]
