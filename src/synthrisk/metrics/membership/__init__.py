# SPDX-License-Identifier: BSD-3-Clause
"""Membership: is a real row closer to the synthetic table than a holdout row is?

ai-privacy-toolkit's dataset assessments and their peers (``docs/membership.md``):
kNN membership probabilities, the DCR share, NNDR, identical matches, a membership
classifier and distribution validation; and the per-person tests: people the synthetic
table identifies, and the membership attacks on the most isolated people.
"""

from __future__ import annotations

from synthrisk.metrics.membership.classification import MembershipClassification
from synthrisk.metrics.membership.density import (
    DOMIAS,
    CollisionMembership,
    MonteCarloMembership,
)
from synthrisk.metrics.membership.distribution import DistributionValidation
from synthrisk.metrics.membership.identifiability import EpsilonIdentifiability
from synthrisk.metrics.membership.identification import Identification
from synthrisk.metrics.membership.knn import MembershipKnnProbabilities
from synthrisk.metrics.membership.nndr import NNDR
from synthrisk.metrics.membership.share import DCRShare, IdenticalMatchShare
from synthrisk.metrics.membership.vulnerable import VulnerablePeople

__all__ = [
    "DOMIAS",
    "NNDR",
    "CollisionMembership",
    "DCRShare",
    "DistributionValidation",
    "EpsilonIdentifiability",
    "IdenticalMatchShare",
    "Identification",
    "MembershipClassification",
    "MembershipKnnProbabilities",
    "MonteCarloMembership",
    "VulnerablePeople",
]
