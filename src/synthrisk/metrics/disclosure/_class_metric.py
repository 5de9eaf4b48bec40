# SPDX-License-Identifier: BSD-3-Clause
"""Quasi-identifier classes shared by ``k_anonymity``, ``l_diversity`` and ``t_closeness``.

The base class declares the quasi-identifier and sensitive columns, chooses them when
they are not given (synthrisk's default, every usable column but the sensitive one:
:func:`default_key_columns` with ``rule="all"``, recorded in the result's parameters) and computes every table's class statistics
(:func:`class_statistics`). Classes are exact combinations of the quasi-identifier
values (a missing value is a value).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._typing import IntArray, JSONValue
from synthrisk._validation import check_columns
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric
from synthrisk.metrics._combinations import combination_codes
from synthrisk.metrics._params import Param, column_list, number, option
from synthrisk.metrics.disclosure._defaults import (
    exact_choice_text,
    resolve_key_columns,
    run_resolved,
)
from synthrisk.metrics.disclosure._kanonymity_kernel import (
    ClassStatistics,
    class_statistics,
)
from synthrisk.results import MetricResult, to_jsonable
from synthrisk.schema.tables import Tables

__all__ = ["Z95", "ClassMetric", "Classes", "class_values"]

Z95 = 1.959963984540054

#: why the family's default quasi-identifiers are every other column (no peer has a default)
_FAMILY_SOURCE = (
    "no peer has a default; an attacker who knows the rest of a record, so that a copy of a "
    "training record points at that one person"
)


@dataclasses.dataclass(frozen=True)
class Classes:
    """Every table's class ids and per-class statistics."""

    classes: dict[str, IntArray]
    n_classes: int
    stats: dict[str, ClassStatistics]
    ordered: bool


class ClassMetric(Metric):
    """Quasi-identifier and sensitive columns, their defaults, and the class statistics."""

    runs_by_default = False
    higher_is_safer = False

    quasi_identifiers: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Columns an attacker can know; None: synthrisk's default choice.",
    )
    sensitive: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True, allow_empty=True),
        None,
        "Sensitive columns (several are one tuple); None: synthrisk's default choice.",
    )
    c: Param[float] = Param(number(ge=1), 2.0, "The c of recursive (c, l)-diversity.")
    t_distance: Param[str | None] = Param(
        option(("equal", "ordered"), allow_none=True),
        None,
        "Ground distance of t-closeness; None: from the sensitive column.",
    )

    #: whether the metric needs a sensitive column (chosen by default when not given)
    needs_sensitive = True

    def _check_params(self) -> None:
        qi, sens = self.quasi_identifiers, self.sensitive
        overlap = sorted(set(qi or ()) & set(sens or ()))
        if overlap:
            msg = f"`sensitive` columns {overlap} are also quasi-identifiers; a column is one or the other."
            raise ParameterError(msg)
        if sens is not None and not sens and self.needs_sensitive:
            msg = f"`sensitive` must name at least one column for {self.id!r} (or None for synthrisk's choice); got an empty list."
            raise ParameterError(msg)

    def _unresolved(self) -> bool:
        """True when some columns are left to synthrisk's default choice."""
        return self.quasi_identifiers is None or (
            self.sensitive is None and self.needs_sensitive
        )

    def check_tables(self, tables: Tables) -> None:
        """Check the column names."""
        names = tables.schema.names
        if self.quasi_identifiers is not None:
            check_columns(
                self.quasi_identifiers, name="quasi_identifiers", available=names
            )
        if self.sensitive is not None:
            check_columns(
                self.sensitive, name="sensitive", available=names, allow_empty=True
            )

    def _note(self, result: MetricResult) -> str | None:
        """A warning about the default columns' result (none by default)."""
        return None

    def run(self, tables: Tables, context: Context) -> MetricResult:
        """Choose the columns left out (synthrisk's default, recorded), then compute."""
        if not self._unresolved():
            return super().run(tables, context)
        self.check_tables(tables)
        qi, sens, rule = resolve_key_columns(
            tables,
            keys=self.quasi_identifiers,
            sensitive=self.sensitive,
            metric=self.id,
            hint="name them with `quasi_identifiers` and `sensitive`",
            rule="all",
        )
        why = exact_choice_text(
            keys="quasi_identifiers" if self.quasi_identifiers is None else None,
            sensitive="sensitive" if self.sensitive is None else None,
            rule=rule,
            source=_FAMILY_SOURCE if self.quasi_identifiers is None else None,
        )
        chosen = {"quasi_identifiers": qi, "sensitive": sens}
        return run_resolved(self, chosen, why, tables, context, note=self._note)

    def _classes(self, tables: Tables) -> Classes:
        qi: list[str] = list(self.quasi_identifiers or ())
        sens: list[str] = list(self.sensitive or ())
        classes, n_classes = combination_codes(tables, qi)
        names = list(classes)
        values: dict[str, Any] = dict.fromkeys(names)
        n_values = 0
        ordered = False
        if sens:
            values, n_values = _sorted_codes(tables, sens)
            distance = self.t_distance
            if distance is None:
                ordered = len(sens) == 1 and tables.schema[sens[0]].kind in (
                    "numerical",
                    "datetime",
                )
            else:
                ordered = distance == "ordered"
        stats = {
            name: class_statistics(
                classes[name],
                values[name],
                n_classes=n_classes,
                n_values=n_values,
                c=self.c,
                ordered=ordered,
            )
            for name in names
        }
        return Classes(classes, n_classes, stats, ordered)

    def _distance_name(self, found: Classes) -> str | None:
        if not self.sensitive:
            return None
        return "ordered" if found.ordered else "equal"


def class_values(
    tables: Tables,
    qi: list[str],
    syn_classes: IntArray,
    n_classes: int,
    order: IntArray,
) -> list[JSONValue]:
    """The quasi-identifier values of the synthetic classes ``order`` (first record of each)."""
    first_row = np.full(n_classes, -1, dtype=np.int64)
    n_s = syn_classes.size
    first_row[syn_classes[::-1]] = np.arange(n_s)[::-1]
    frame = tables.synthetic
    return [
        {col: to_jsonable(frame[col].iloc[int(first_row[c])]) for col in qi}
        for c in order.tolist()
    ]


def _sorted_codes(tables: Tables, columns: list[str]) -> tuple[dict[str, Any], int]:
    """Sensitive value ids in sort order of the values (for the ordered distance)."""
    codes, n = combination_codes(tables, columns)
    if len(columns) != 1:
        return codes, n
    names = list(codes)
    stacked = pd.concat(
        [tables.table(name)[columns[0]] for name in names], ignore_index=True
    )
    all_codes = np.concatenate([codes[name] for name in names])
    first = pd.Series(np.arange(all_codes.size)).groupby(all_codes).first().to_numpy()
    try:
        rank = np.argsort(
            np.argsort(stacked.iloc[first].to_numpy(), kind="stable"), kind="stable"
        )
    except TypeError:
        return codes, n
    return {name: rank[codes[name]] for name in names}, n
