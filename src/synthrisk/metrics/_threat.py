# SPDX-License-Identifier: BSD-3-Clause
"""The words metrics share in their threat models (what the attacker holds, whom it attacks).

Each registered metric declares its own :class:`~synthrisk.results.ThreatModel` as the
``threat_model`` class attribute (:func:`synthrisk.metrics.register` refuses a class
without one); the phrases below keep the families' wording the same.
"""

from __future__ import annotations

from synthrisk.results import ThreatModel

__all__ = [
    "AUDIT",
    "FULL_RECORD",
    "MEMBERS",
    "SOME_COLUMNS",
    "SYNTHETIC_ONLY",
    "TRAINING",
    "ThreatModel",
]

#: the release alone: the attacker looks for real people in the synthetic rows
SYNTHETIC_ONLY = "the synthetic table only"
#: a memorisation audit: nothing beyond the release, measured against both real tables
AUDIT = (
    "the synthetic table only (synthrisk measures it against the training rows and the "
    "holdout)"
)
#: attribute-disclosure attackers: a target's quasi-identifiers or key columns
SOME_COLUMNS = "the synthetic table and some columns of a target person's record"
#: membership attackers: the record of the person whose membership is guessed
FULL_RECORD = "the synthetic table and a target person's full record"
#: the people attacked: the real table's rows, which the generator saw
TRAINING = "training people"
#: membership attacks rank training people against holdout people
MEMBERS = "training people, told apart from holdout people"
