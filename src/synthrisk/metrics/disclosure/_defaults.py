# SPDX-License-Identifier: BSD-3-Clause
"""The CAP attack in the default run: synthrisk's default columns, the holdout test, and
the choice between the in-memory encoding and the one on a cluster."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import pandas as pd

from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context
from synthrisk.metrics.disclosure._cap_partitioned import (
    PartitionedAttack,
    distinct_real_values,
    is_partitioned_tables,
    partitioned_attack,
)
from synthrisk.metrics.disclosure._codes import AttackCodes, NatBinning, attack_codes
from synthrisk.results import MetricResult
from synthrisk.schema.tables import Tables
from synthrisk.stats.holdout import mean_difference_test

if TYPE_CHECKING:
    from synthrisk.metrics.disclosure._cap import DisclosureProtection

__all__ = [
    "DEFAULT_KNOWN",
    "Attack",
    "cap_holdout_test",
    "default_cap_columns",
    "encode_attack",
    "run_with_default_columns",
]

#: known columns in the default choice
DEFAULT_KNOWN = 3

#: the encoded attack: codes in memory, or counts made on a cluster
Attack: TypeAlias = AttackCodes | PartitionedAttack


def encode_attack(
    tables: Tables,
    known: Sequence[str],
    sensitive: Sequence[str],
    context: Context,
    *,
    continuous: Sequence[str],
    n_bins: int,
    nat_binning: NatBinning,
    strict_types: bool,
) -> Attack:
    """:func:`attack_codes` in memory; :func:`partitioned_attack` (every row, on the
    cluster) for tables partitioned on a cluster."""
    build: Any = partitioned_attack if is_partitioned_tables(tables) else attack_codes
    return build(
        tables,
        known,
        sensitive,
        context,
        continuous=continuous,
        n_bins=n_bins,
        nat_binning=nat_binning,
        strict_types=strict_types,
    )


def default_cap_columns(tables: Tables) -> tuple[list[str], list[str], list[str]]:
    """synthrisk's default known / sensitive / binned columns of the CAP attack.

    * sensitive: the last categorical or boolean usable column in table order (tables
      usually end with the outcome: income, diagnosis), else the last usable column;
    * known: the ``DEFAULT_KNOWN`` other usable columns with the fewest distinct real
      values (numeric ones counted after binning into 10 bins) — the coarse,
      widely known attributes (sex, age band, region) an attacker is likely to hold;
    * binned: the numerical and datetime columns among them.

    Raises
    ------
    ParameterError
        If the tables have fewer than 2 usable columns.
    """
    usable = list(tables.schema.modelable)
    if len(usable) < 2:
        msg = (
            f"the CAP attack needs at least 2 usable columns (known and sensitive); the tables have "
            f"{len(usable)}."
        )
        raise ParameterError(msg)
    categorical = [c for c in usable if c.kind in ("categorical", "boolean")]
    sensitive = (categorical or usable)[-1]
    numeric_kinds = ("numerical", "datetime")
    # partitioned tables: counted on the cluster (numeric columns capped at 10 there)
    counted = distinct_real_values(tables) if is_partitioned_tables(tables) else None  # type: ignore[arg-type]

    def distinct(column: Any) -> int:
        if counted is not None:
            return counted[column.name]
        n = int(tables.real[column.name].nunique(dropna=False))
        return min(n, 10) if column.kind in numeric_kinds else n

    others = [c for c in usable if c.name != sensitive.name]
    ranked = sorted(others, key=lambda c: (distinct(c), usable.index(c)))
    known = sorted(ranked[:DEFAULT_KNOWN], key=usable.index)
    continuous = [c.name for c in [*known, sensitive] if c.kind in numeric_kinds]
    return [c.name for c in known], [sensitive.name], continuous


def run_with_default_columns(
    cls: Any, params: dict[str, Any], tables: Tables, context: Context
) -> MetricResult:
    """Run ``cls`` (DisclosureProtection) with :func:`default_cap_columns`, recording the choice."""
    known, sensitive, continuous = default_cap_columns(tables)
    resolved = cls(
        known_column_names=known,
        sensitive_column_names=sensitive,
        computation_method=params["computation_method"],
        continuous_column_names=continuous,
        num_discrete_bins=params["num_discrete_bins"],
        nat_binning=params["nat_binning"],
        strict_types=params["strict_types"],
        confidence_level=params["confidence_level"],
    )
    result = resolved.run(tables, context)
    out = dict(result.params)
    out["columns_chosen_by"] = (
        "synthrisk's default: sensitive = the last categorical column, known = the 3 other columns "
        "with the fewest distinct values (numeric ones binned)"
    )
    return dataclasses.replace(result, params=out)


def cap_holdout_test(
    tables: Tables,
    metric: DisclosureProtection,
    context: Context,
    *,
    attack: Attack | None = None,
) -> dict[str, Any]:
    """The CAP attack on training rows against the same attack on holdout rows.

    Both are encoded together (bins from training ∪ holdout), so that the two sides are
    treated alike; the score itself keeps SDMetrics' encoding. On partitioned tables the
    synthetic counts of ``attack`` (the score's attack) are reused when the pooled bins
    are the same.
    """
    assert tables.holdout is not None
    statistic = "mean probability of guessing a training person's sensitive values minus a holdout person's"
    if is_partitioned_tables(tables):
        pooled_attack = partitioned_attack(
            tables,  # type: ignore[arg-type]
            metric.known,
            metric.sensitive,
            Context(),
            continuous=metric.continuous,
            n_bins=metric.num_discrete_bins,
            nat_binning=metric.nat_binning,
            strict_types=metric.strict_types,
            pooled=True,
            reuse=attack if isinstance(attack, PartitionedAttack) else None,
        )
        p_real, p_holdout = pooled_attack.table_probabilities(metric.method, context)
        return mean_difference_test(p_real, p_holdout, statistic=statistic)
    n_real = len(tables.real)
    pooled = Tables(
        real=pd.concat([tables.real, tables.holdout], ignore_index=True),
        synthetic=tables.synthetic,
        holdout=None,
        schema=tables.schema,
    )
    codes = attack_codes(
        pooled,
        metric.known,
        metric.sensitive,
        Context(),
        continuous=metric.continuous,
        n_bins=metric.num_discrete_bins,
        nat_binning=metric.nat_binning,
        strict_types=metric.strict_types,
    )
    p = codes.probabilities(metric.method, context)
    return mean_difference_test(p[:n_real], p[n_real:], statistic=statistic)
