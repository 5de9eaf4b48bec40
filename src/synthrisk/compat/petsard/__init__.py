# SPDX-License-Identifier: BSD-3-Clause
"""PETsARD configuration files, run unchanged (``docs/petsard.md``).

``synthrisk run petsard.yaml`` reads PETsARD's YAML layout, runs its Anonymeter
evaluators as synthrisk metrics and writes PETsARD's CSV reports.
"""

from __future__ import annotations

from synthrisk.compat.petsard.parse import (
    PetsardConfig,
    PetsardRun,
    fill_missing_petsard,
    is_petsard_layout,
    parse_petsard,
    petsard_outputs,
    petsard_schema_to_metadata,
    run_petsard,
)

__all__ = [
    "PetsardConfig",
    "PetsardRun",
    "fill_missing_petsard",
    "is_petsard_layout",
    "parse_petsard",
    "petsard_outputs",
    "petsard_schema_to_metadata",
    "run_petsard",
]
