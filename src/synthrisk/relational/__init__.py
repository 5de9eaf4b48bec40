# SPDX-License-Identifier: BSD-3-Clause
"""Privacy of multi-table and sequential synthetic data, judged per person.

See ``docs/relational.md``.
"""

from __future__ import annotations

from synthrisk.relational.evaluate import (
    PERSON_COLUMN,
    PERSON_METRICS,
    TABLE_METRICS,
    TABLE_PEOPLE,
    evaluate_tables,
)
from synthrisk.relational.features import PersonFeatures
from synthrisk.relational.files import read_tables
from synthrisk.relational.linkage import LinkageAttack, LinkageResult, linkage_attack
from synthrisk.relational.metadata import (
    RelationalMetadata,
    Relationship,
    check_tables,
    load_metadata,
)
from synthrisk.relational.people import person_of_rows, split_people
from synthrisk.relational.results import MultiTableReport

__all__ = [
    "PERSON_COLUMN",
    "PERSON_METRICS",
    "TABLE_METRICS",
    "TABLE_PEOPLE",
    "LinkageAttack",
    "LinkageResult",
    "MultiTableReport",
    "PersonFeatures",
    "RelationalMetadata",
    "Relationship",
    "check_tables",
    "evaluate_tables",
    "linkage_attack",
    "load_metadata",
    "person_of_rows",
    "read_tables",
    "split_people",
]
