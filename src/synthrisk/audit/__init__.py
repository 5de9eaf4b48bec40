# SPDX-License-Identifier: BSD-3-Clause
"""The generator audit: shadow-model membership attacks and an effective-ε lower bound.

The dataset-only metrics judge one synthetic table; the audit judges the generator that
made it, by training it again and again on shadow training sets with and without the
people it targets (``docs/audit.md``):

* :mod:`~synthrisk.audit.generators`: adapters (a callable, a command, another Python
  interpreter, SDV, synthpop / dpmm / smartnoise-synth by name);
* :mod:`~synthrisk.audit.game`: the shadow runs (seeded, parallel, budgeted, retried);
* :mod:`~synthrisk.audit.canaries`: worst-case canaries crafted from the tables' domain;
* :mod:`~synthrisk.audit.attacks`: the membership attacks on each run's output;
* :mod:`~synthrisk.audit.bounds`: Clopper–Pearson bounds and the effective ε;
* :mod:`~synthrisk.audit.result`: the frozen, JSON-safe result and its verdict.
"""

from __future__ import annotations

from synthrisk.audit._audit import THREAT_MODEL, audit
from synthrisk.audit.attacks import ATTACKS, CLASSIFIERS
from synthrisk.audit.bounds import Bound, epsilon_lower_bound
from synthrisk.audit.canaries import craft_canaries
from synthrisk.audit.game import RunCache
from synthrisk.audit.generators import (
    NAMED_GENERATORS,
    SDV_SYNTHESIZERS,
    CommandGenerator,
    FitSample,
    GeneratorError,
    GeneratorLike,
    NamedGenerator,
    PythonGenerator,
    SDVGenerator,
    as_fit_sample,
)
from synthrisk.audit.result import (
    AuditResult,
    AuditVerdict,
    CanaryAudit,
    RunFailure,
    TargetAudit,
)

__all__ = [
    "ATTACKS",
    "CLASSIFIERS",
    "NAMED_GENERATORS",
    "SDV_SYNTHESIZERS",
    "THREAT_MODEL",
    "AuditResult",
    "AuditVerdict",
    "Bound",
    "CanaryAudit",
    "CommandGenerator",
    "FitSample",
    "GeneratorError",
    "GeneratorLike",
    "NamedGenerator",
    "PythonGenerator",
    "RunCache",
    "RunFailure",
    "SDVGenerator",
    "TargetAudit",
    "as_fit_sample",
    "audit",
    "craft_canaries",
    "epsilon_lower_bound",
]
