# SPDX-License-Identifier: BSD-3-Clause
"""Statistics shared by several metric families.

* :mod:`~synthrisk.stats.intervals`: Wilson success rates of attacks, the residual risk
  against a control attack, clipping to [0, 1];
* :mod:`~synthrisk.stats.bootstrap`: bootstrap percentile intervals;
* :mod:`~synthrisk.stats.ranking`: ROC curve, AUC, average precision and DeLong's
  interval of membership scores.
"""

from __future__ import annotations

from synthrisk.stats.bootstrap import (
    N_RESAMPLES,
    bootstrap_interval,
    percentile_interval,
)
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
    wilson_interval,
)
from synthrisk.stats.ranking import (
    RankingScores,
    RankingSummary,
    auc_delong_interval,
    average_precision,
    ranking_scores,
    ranking_summary,
    roc_auc,
    roc_curve,
    thin_curve,
)

__all__ = [
    "N_RESAMPLES",
    "AttackEstimate",
    "PrivacyRisk",
    "RankingScores",
    "RankingSummary",
    "SuccessRate",
    "auc_delong_interval",
    "average_precision",
    "baseline_warning",
    "bind_value",
    "bootstrap_interval",
    "check_confidence_level",
    "estimate_attack",
    "percentile_interval",
    "probit",
    "ranking_scores",
    "ranking_summary",
    "residual_success",
    "roc_auc",
    "roc_curve",
    "success_rate",
    "thin_curve",
    "wilson_interval",
]
