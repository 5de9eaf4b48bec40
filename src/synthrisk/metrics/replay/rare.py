# SPDX-License-Identifier: BSD-3-Clause
"""Rare-value replay: values that one real person holds, carried into the synthetic table.

A rare diagnosis code, an unusual job title or the largest income of the table points at
the one person who holds it: a synthetic row that carries it tells whoever knows that
person that they were in the training data. Each column is checked on its own
(:mod:`synthrisk.metrics.replay._keys`):

* **values** (categorical and boolean columns, and numerical columns of at most
  ``DISCRETE_LEVELS`` integer values): a value is rare when at most ``max_people``
  (default 1) of the pooled real people (training and holdout) hold it; its holders are
  replayed when a synthetic row carries it;
* **extremes** (numerical and datetime columns): a person's value is extreme when at
  most ``max_people`` real people have a value at least as large (upper tail) or at
  least as small (lower tail); they are replayed when a synthetic row carries their
  value or a more extreme one. With the default 1 these are the people whose value lies
  beyond every other real person's: the largest and the smallest, when one person
  holds them.

Rarity is read on the pooled real people, so the rule treats training and holdout people
alike; training people replayed are compared with holdout people replayed, per column,
Bonferroni across columns. The chance model
(:func:`~synthrisk.metrics.replay._common.singleton_chance`) asks whether more training
singletons are replayed than a generator of new people would replay.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from synthrisk._typing import JSONValue
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, boolean, column_list, integer, probability
from synthrisk.metrics._persons import PERSON, People
from synthrisk.metrics._threat import SYNTHETIC_ONLY, TRAINING, ThreatModel
from synthrisk.metrics.replay._common import (
    check_named_columns,
    people,
    person_column,
    real_values,
)
from synthrisk.metrics.replay._keys import (
    KeyPart,
    as_float,
    extreme_part,
    merge_parts,
    report,
    value_part,
)
from synthrisk.results import to_jsonable
from synthrisk.schema.tables import Tables

__all__ = ["DISCRETE_LEVELS", "RareValueReplay", "rare_value_columns"]

#: a numerical column of integers with at most this many distinct real values is
#: checked for rare values too (codes, counts), besides its extremes
DISCRETE_LEVELS = 50
#: default of ``max_people``: a value one real person holds
DEFAULT_MAX_PEOPLE = 1

_VALUE_KINDS = ("categorical", "boolean")
_EXTREME_KINDS = ("numerical", "datetime")
_EXCLUDED_KINDS = ("id", "pii", "text")


def _is_discrete(values: pd.Series) -> bool:
    numbers = pd.to_numeric(values.dropna(), errors="coerce").to_numpy(dtype=np.float64)
    if not numbers.size or np.isnan(numbers).any():
        return False
    return bool(
        np.all(np.mod(numbers, 1) == 0) and np.unique(numbers).size <= DISCRETE_LEVELS
    )


def _rules(tables: Tables, name: str) -> tuple[str, ...]:
    kind = tables.schema[name].kind
    if kind == "datetime":
        return ("extremes",)
    if kind == "numerical":
        discrete = _is_discrete(real_values(tables, name))
        return ("values", "extremes") if discrete else ("extremes",)
    return ("values",)


def rare_value_columns(tables: Tables, *, person: str | None) -> list[str]:
    """The columns checked by default: every column but id, pii and text ones and the person key."""
    key = person_column(tables, person) if tables.holdout is not None else None
    return [
        spec.name
        for spec in tables.schema.columns
        if spec.kind not in _EXCLUDED_KINDS
        and spec.name != key
        and spec.name in tables.synthetic.columns
    ]


def _part(tables: Tables, name: str, who: People, *, max_people: int) -> KeyPart | None:
    rules = _rules(tables, name)
    real = real_values(tables, name)
    syn = tables.synthetic[name].reset_index(drop=True)
    found: list[KeyPart] = []
    if "values" in rules:
        codes, _ = pd.factorize(pd.concat([real, syn], ignore_index=True))
        codes = codes.astype(np.int64)
        found.append(
            value_part(
                codes[: len(real)],
                codes[len(real) :],
                who,
                max_people=max_people,
                name=name,
                columns=[name],
                match="rare value",
            )
        )
    if "extremes" in rules:
        found.append(
            extreme_part(
                as_float(real), as_float(syn), who, max_people=max_people, name=name
            )
        )
    if not found:
        return None
    return found[0] if len(found) == 1 else merge_parts(found[0], found[1])


@register
class RareValueReplay(Metric):
    """Real people whose rare value (or extreme) a synthetic row carries.

    See :mod:`synthrisk.metrics.replay.rare`. The score is the share of training people
    replayed in some checked column.

    Parameters
    ----------
    columns : list of str or None, default=None
        Columns to check; None: every column except those of kind id, pii or text
        (identifier_replay and text_replay check them) and the person key.
    person : str, "auto" or None, default="auto"
        The column that names people with several rows.
    max_people : int, default=1
        A value (or an extreme) is rare when at most this many real people hold it.
    include_values : bool, default=False
        List the replayed values in the breakdown (``replayed_values``, withheld from
        JSON unless values are asked for).
    confidence_level : float, default=0.95
        Level of the excess's interval.
    """

    id = "rare_value_replay"
    report_order = 9
    attack = (
        "An attacker holding the synthetic table looks for values that only one real person "
        "has (a rare diagnosis, the largest income) and learns that person was in the training "
        "data, and what else their row says."
    )
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "share of training people whose rare value (held by at most `max_people` real people) "
            "or extreme a synthetic row carries; the test counts them against holdout people, whom "
            "chance alone replays"
        ),
        compared=("columns",),
    )
    higher_is_safer = False
    requires_holdout = True

    columns: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Columns to check; None: all but id, pii and text columns and the person key.",
    )
    person: Param[str | None] = PERSON
    max_people: Param[int] = Param(
        integer(minimum=1),
        DEFAULT_MAX_PEOPLE,
        "A value is rare when at most this many real people hold it.",
    )
    include_values: Param[bool] = Param(
        boolean(),
        False,
        "List the replayed values (withheld from JSON unless asked for).",
    )
    confidence_level: Param[float] = Param(
        probability(), 0.95, "Level of the excess's interval."
    )

    @classmethod
    def applies_by_default(cls, tables: Tables) -> bool:
        """Only with a holdout, and when some column has a rare value or extreme."""
        if tables.holdout is None:
            return False
        try:
            who = people(tables, "auto")
            for name in rare_value_columns(tables, person="auto"):
                part = _part(tables, name, who, max_people=DEFAULT_MAX_PEOPLE)
                if part is not None and part.holds.any():
                    return True
        except Exception:
            return True
        return False

    def check_tables(self, tables: Tables) -> None:
        """Named columns must be in both tables."""
        check_named_columns(
            self.columns,
            tables,
            fix="name columns of both, or leave `columns` unset to check every column.",
        )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        who = people(tables, self.person)
        names = (
            list(self.columns)
            if self.columns is not None
            else rare_value_columns(tables, person=self.person)
        )
        parts = [
            part
            for name in names
            if (part := _part(tables, name, who, max_people=self.max_people))
            is not None
        ]
        parts = [part for part in parts if part.holds.any()]
        if not parts:
            reason = (
                f"no column has a value or an extreme that at most {self.max_people} real "
                "people hold"
                + (
                    f" (checked: {', '.join(names)})"
                    if names
                    else " (no column to check)"
                )
                + "; name the columns in `columns`, or raise `max_people`."
            )
            context.warn(reason)
            return Outcome(score=None, breakdown={"columns": {}}, reason=reason)

        def value_of(part: KeyPart, row: int) -> JSONValue:
            return to_jsonable(tables.real[part.columns[0]].iloc[row])

        return report(
            parts,
            who,
            n_synthetic=len(tables.synthetic),
            confidence_level=self.confidence_level,
            include_values=self.include_values,
            value_of=value_of,
            context=context,
            group="columns",
            what="a rare value",
            advice=(
                "Merge rare categories, top- and bottom-code extremes, or regenerate with value "
                "protection before release."
            ),
            extra={"max_people": self.max_people},
        )
