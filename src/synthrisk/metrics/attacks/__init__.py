# SPDX-License-Identifier: BSD-3-Clause
"""Anonymeter's attacks: singling out, linkability and inference (``docs/attacks.md``).

Each attack is run on the real rows (the main attack), on the holdout rows (the
control attack) and with random guesses (the baseline); the risk is the main attack's
success beyond the control's.
"""

from __future__ import annotations

from synthrisk.metrics.attacks._common import check_compat
from synthrisk.metrics.attacks._queries import polars_term
from synthrisk.metrics.attacks.inference import InferenceRisk
from synthrisk.metrics.attacks.linkability import LinkabilityRisk
from synthrisk.metrics.attacks.singling_out import SinglingOutRisk

__all__ = [
    "InferenceRisk",
    "LinkabilityRisk",
    "SinglingOutRisk",
    "check_compat",
    "polars_term",
]
