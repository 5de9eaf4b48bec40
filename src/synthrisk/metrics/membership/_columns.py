# SPDX-License-Identifier: BSD-3-Clause
"""The columns a membership measure without column parameters uses, recorded in its result."""

from __future__ import annotations

from synthrisk.metrics._base import Metric, Outcome
from synthrisk.schema.tables import Tables

__all__ = ["ALL_COLUMNS", "with_columns"]

#: ``columns_chosen_by`` of the measures that use every usable column
ALL_COLUMNS = (
    "synthrisk's default (docs/membership.md; this metric has no column parameter): every usable "
    "column; columns of kind id, pii and text are left out (they identify a record on their own)"
)


def with_columns(
    outcome: Outcome, metric: Metric, tables: Tables, *, why: str = ALL_COLUMNS
) -> Outcome:
    """``outcome`` with the columns used and the rule that chose them in its parameters."""
    params = dict(metric.params if outcome.params is None else outcome.params)
    params["columns"] = [spec.name for spec in tables.schema.modelable]
    params["columns_chosen_by"] = why
    outcome.params = params
    return outcome
