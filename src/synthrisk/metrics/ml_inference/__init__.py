# SPDX-License-Identifier: BSD-3-Clause
"""SDMetrics' "Privacy Against Inference" metrics and ``NewRowSynthesis``.

Nine attacker models trained on the synthetic table to guess real people's sensitive
columns from their key columns (``CategoricalKNN`` ... ``NumericalRadiusNearestNeighbor``),
scored as SDMetrics 0.32 scores them, each with a holdout control and an
"every column as the secret" mode; and the share of synthetic rows that copy no real
row. See ``docs/ml_inference.md``.
"""

from __future__ import annotations

from synthrisk.metrics.ml_inference._attackers import PLACEHOLDER
from synthrisk.metrics.ml_inference._classes import (
    CategoricalEnsemble,
    CategoricalKNN,
    CategoricalNB,
    CategoricalRF,
    CategoricalSVM,
    NumericalLR,
    NumericalMLP,
    NumericalRadiusNearestNeighbor,
    NumericalSVR,
)
from synthrisk.metrics.ml_inference._metric import MLInferenceMetric
from synthrisk.metrics.ml_inference.new_row_synthesis import (
    NewRowSynthesis,
    copied_rows,
)

__all__ = [
    "PLACEHOLDER",
    "CategoricalEnsemble",
    "CategoricalKNN",
    "CategoricalNB",
    "CategoricalRF",
    "CategoricalSVM",
    "MLInferenceMetric",
    "NewRowSynthesis",
    "NumericalLR",
    "NumericalMLP",
    "NumericalRadiusNearestNeighbor",
    "NumericalSVR",
    "copied_rows",
]
