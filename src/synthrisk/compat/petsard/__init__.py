# SPDX-License-Identifier: BSD-3-Clause
"""PETsARD configuration files, run unchanged (``docs/petsard.md``).

``synthrisk run petsard.yaml`` reads PETsARD's YAML layout (:mod:`.parse`), runs its
Anonymeter evaluators as synthrisk metrics (:mod:`.run`) and writes PETsARD's CSV
reports (:mod:`.output`).
"""

from __future__ import annotations

from synthrisk.compat.petsard.output import (
    PETSARD_COLUMNS,
    petsard_outputs,
    petsard_view,
)
from synthrisk.compat.petsard.parse import (
    PetsardConfig,
    PetsardRun,
    is_petsard_layout,
    parse_petsard,
    petsard_schema_to_metadata,
)
from synthrisk.compat.petsard.run import fill_missing_petsard, run_petsard

__all__ = [
    "PETSARD_COLUMNS",
    "PetsardConfig",
    "PetsardRun",
    "fill_missing_petsard",
    "is_petsard_layout",
    "parse_petsard",
    "petsard_outputs",
    "petsard_schema_to_metadata",
    "petsard_view",
    "run_petsard",
]
