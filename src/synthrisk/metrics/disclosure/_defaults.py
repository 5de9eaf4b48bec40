# SPDX-License-Identifier: BSD-3-Clause
"""synthrisk's default columns of the disclosure measures, the CAP attack's holdout test,
and the choice between the in-memory encoding and the one on a cluster.

Every disclosure measure runs without column parameters. ``disclosure_protection``
attacks with the attacker :func:`default_cap_columns` describes (the sensitive column
is the last categorical column; the attacker knows the 3 other columns with the fewest
distinct values); the peers' measures follow their own defaults where they have one
(synthpop's ``replicated.uniques``: every column; SDNist: its quasi-identifiers) and
otherwise a rule under which copies of unique training records rank above new people
(:func:`default_key_columns`' ``rule``). Each records the columns and the rule in its
result's parameters (``columns_chosen_by``); :func:`run_resolved` runs a metric with the
chosen columns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict

import pandas as pd

from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric
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
    "CAP_CHOICE",
    "DEFAULT_KNOWN",
    "Attack",
    "EncodingOptions",
    "KeyRule",
    "cap_holdout_test",
    "default_cap_columns",
    "default_key_columns",
    "encode_attack",
    "encoding_options",
    "exact_choice_text",
    "resolve_key_columns",
    "run_resolved",
    "run_with_default_columns",
]

#: known columns in the default choice
DEFAULT_KNOWN = 3

#: the encoded attack: codes in memory, or counts made on a cluster
Attack: TypeAlias = AttackCodes | PartitionedAttack


class EncodingOptions(TypedDict):
    """How a CAP attack encodes its columns: the keyword arguments of :func:`encode_attack`."""

    continuous: Sequence[str]
    n_bins: int
    nat_binning: NatBinning
    strict_types: bool


def encoding_options(metric: DisclosureProtection) -> EncodingOptions:
    """The encoding ``metric``'s parameters ask for (its score and its holdout test alike)."""
    return {
        "continuous": metric.continuous,
        "n_bins": metric.num_discrete_bins,
        "nat_binning": metric.nat_binning,
        "strict_types": metric.strict_types,
    }


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


#: how :func:`default_key_columns` chooses the key columns
KeyRule: TypeAlias = Literal["coarsest", "all", "categorical"]

#: the key rules as ``columns_chosen_by`` words them (``{others}``: the columns they pick from)
_RULE_TEXT: dict[str, str] = {
    "all": "every one of {others}",
    "categorical": "every categorical or boolean one of {others}",
}


def default_key_columns(
    tables: Tables,
    *,
    keys: Sequence[str] | None,
    sensitive: Sequence[str] | None,
    metric: str,
    hint: str,
    n_keys: int = DEFAULT_KNOWN,
    exclude: Sequence[str] = (),
    rule: KeyRule = "coarsest",
) -> tuple[list[str], list[str]]:
    """The key and sensitive columns of a measure that matches exact values; defaults fill what is None.

    * sensitive (when ``sensitive`` is None): the last categorical or boolean usable
      column outside ``keys`` in table order, else the last usable column outside them;
    * keys (when ``keys`` is None), by ``rule``:

      - ``"coarsest"`` (:func:`default_cap_columns`' rule, with the values counted
        exactly): the ``n_keys`` other usable columns with the fewest distinct real
        values (a missing value is one value; this measure matches exact values, so a
        numerical column counts all its values), ties in table order;
      - ``"all"``: every other usable column (synthpop's ``replicated.uniques`` compares
        whole records; its ``disclosure()`` example keys every column but the target);
      - ``"categorical"``: every other usable categorical or boolean column (SDMetrics'
        categorical CAP family, SDNist's nominal quasi-identifiers); the ``"coarsest"``
        rule when there is none.

      Listed in table order; fewer when the table has fewer columns.

    Parameters
    ----------
    tables : Tables
        Validated tables.
    keys, sensitive : list of str or None
        The columns given by the user; None: choose them.
    metric : str
        The metric's id, for the error message.
    hint : str
        How to name the columns instead, for the error message.
    n_keys : int, default=DEFAULT_KNOWN
        Number of key columns the ``"coarsest"`` rule chooses.
    exclude : sequence of str, default=()
        Columns never chosen.
    rule : {"coarsest", "all", "categorical"}, default="coarsest"
        How the keys are chosen.

    Raises
    ------
    ParameterError
        If no key or no sensitive column is left to choose.
    """
    return resolve_key_columns(
        tables,
        keys=keys,
        sensitive=sensitive,
        metric=metric,
        hint=hint,
        n_keys=n_keys,
        exclude=exclude,
        rule=rule,
    )[:2]


def resolve_key_columns(
    tables: Tables,
    *,
    keys: Sequence[str] | None,
    sensitive: Sequence[str] | None,
    metric: str,
    hint: str,
    n_keys: int = DEFAULT_KNOWN,
    exclude: Sequence[str] = (),
    rule: KeyRule = "coarsest",
) -> tuple[list[str], list[str], KeyRule]:
    """:func:`default_key_columns` and the rule it applied (``"categorical"`` falls back
    to ``"coarsest"`` on a table without another categorical column)."""
    usable = [c for c in tables.schema.modelable if c.name not in set(exclude)]
    names = [c.name for c in usable]
    taken = set(keys or ())
    if sensitive is None:
        outside = [c for c in usable if c.name not in taken]
        categorical = [c for c in outside if c.kind in ("categorical", "boolean")]
        pool = categorical or outside
        if not pool:
            msg = (
                f"metric {metric!r} found no column outside the keys to use as its sensitive column "
                f"(usable columns: {names}); {hint}."
            )
            raise ParameterError(msg)
        sensitive = [pool[-1].name]
    if keys is None:
        others = [c for c in usable if c.name not in set(sensitive)]
        if not others:
            msg = (
                f"metric {metric!r} needs at least one usable column besides {list(sensitive)} to use as "
                f"a key (usable columns: {names}); {hint}."
            )
            raise ParameterError(msg)
        if rule == "categorical":
            chosen = [c.name for c in others if c.kind in ("categorical", "boolean")]
            if chosen:
                return chosen, list(sensitive), rule
            rule = "coarsest"
        if rule == "all":
            return [c.name for c in others], list(sensitive), rule
        real = tables.real

        def distinct(name: str) -> int:
            return int(real[name].nunique(dropna=False))

        ranked = sorted(
            (c.name for c in others), key=lambda n: (distinct(n), names.index(n))
        )
        keys = sorted(ranked[:n_keys], key=names.index)
    return list(keys), list(sensitive), rule


def exact_choice_text(
    *,
    keys: str | None,
    sensitive: str | None,
    uses_sensitive: bool = True,
    n_keys: int = DEFAULT_KNOWN,
    rule: KeyRule = "coarsest",
    source: str | None = None,
) -> str:
    """What ``columns_chosen_by`` says for :func:`default_key_columns`' choice.

    ``keys`` and ``sensitive`` name the parameters that were chosen (None: given);
    ``uses_sensitive`` is False for a measure without a sensitive column (its keys
    still leave out the column the others would guess); ``rule`` is the key rule
    applied and ``source`` the peer default it follows, if any.
    """
    parts = []
    if sensitive is not None:
        where = "" if keys is not None else " outside the given keys"
        parts.append(f"`{sensitive}` = the last categorical column{where}")
    if keys is not None:
        outside = (
            "the other usable columns"
            if uses_sensitive
            else "the usable columns other than the last categorical one (the column the family's "
            "default attacker guesses)"
        )
        if rule == "coarsest":
            text = (
                f"`{keys}` = the {n_keys} of {outside} with the fewest distinct real values, counted "
                "exactly because this metric matches exact values (coarse attributes an attacker is "
                "likely to know)"
            )
        else:
            text = f"`{keys}` = " + _RULE_TEXT[rule].format(others=outside)
        if source:
            text += f" ({source})"
        parts.append(text)
    return (
        "synthrisk's default (docs/disclosure.md, 'Default columns'): "
        + "; ".join(parts)
        + "."
    )


def run_resolved(
    metric: Metric,
    chosen: dict[str, Any],
    why: str,
    tables: Tables,
    context: Context,
    *,
    note: Callable[[MetricResult], str | None] | None = None,
) -> MetricResult:
    """Run ``metric`` with the parameters ``chosen`` for these tables, recording the choice.

    The result is that of the metric built with its own parameters and ``chosen`` (so
    the JSON names the columns used), with ``columns_chosen_by`` = ``why`` added to its
    parameters, and the warning ``note(result)`` when that says something.
    """
    resolved = type(metric).from_params({**metric.params, **chosen})
    result = resolved.run(tables, context)
    out = dict(result.params)
    out["columns_chosen_by"] = why
    result = dataclasses.replace(result, params=out)
    extra = None if note is None else note(result)
    if extra:
        result = dataclasses.replace(result, warnings=(*result.warnings, extra))
    return result


#: what ``columns_chosen_by`` says for :func:`default_cap_columns`' choice
CAP_CHOICE = (
    "synthrisk's default: sensitive = the last categorical column, known = the 3 other columns "
    "with the fewest distinct values (numeric ones binned)"
)


def run_with_default_columns(
    metric: Metric, tables: Tables, context: Context
) -> MetricResult:
    """Run ``metric`` (a DisclosureProtection) with :func:`default_cap_columns`, recording the choice."""
    known, sensitive, continuous = default_cap_columns(tables)
    chosen = {
        "known_column_names": known,
        "sensitive_column_names": sensitive,
        "continuous_column_names": continuous,
    }
    return run_resolved(metric, chosen, CAP_CHOICE, tables, context)


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
            **encoding_options(metric),
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
        **encoding_options(metric),
    )
    p = codes.probabilities(metric.method, context)
    return mean_difference_test(p[:n_real], p[n_real:], statistic=statistic)
