# SPDX-License-Identifier: BSD-3-Clause
"""Real people of the pooled training ∪ holdout rows: the unit of the per-person tests.

A person is a row, or every row that shares a person key (panel data: several rows per
person). Shared by the families that judge people — membership's identification and
vulnerable people, and replay's identifiers and text — so that each counts the same
people the same way.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from synthrisk._typing import IntArray
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics._params import Param, custom
from synthrisk.schema.schema import is_person_key
from synthrisk.schema.tables import Tables
from synthrisk.stats.exact import newcombe_interval

__all__ = [
    "MAX_ROWS_PER_PERSON",
    "PERSON",
    "People",
    "find_person_column",
    "people_excess",
    "people_of",
    "person_param",
]

#: a person key with more rows than this per person is refused (the search for the
#: nearest *other* person needs this many neighbours per row)
MAX_ROWS_PER_PERSON = 200


@dataclasses.dataclass(frozen=True)
class People:
    """Who is who in the pooled training ∪ holdout rows (training rows first).

    ``person[i]`` numbers the person of pooled row ``i``; training people come first
    (``0 .. n_train - 1``), then holdout people. ``column`` is the person key, or None
    when every row is a person.
    """

    person: IntArray
    n_train: int
    n_holdout: int
    n_real_rows: int
    column: str | None
    max_rows: int

    @property
    def n_people(self) -> int:
        """Training and holdout people together."""
        return self.n_train + self.n_holdout

    def rows_of(self, people: IntArray) -> IntArray:
        """Pooled rows of the given people, ascending."""
        return np.flatnonzero(np.isin(self.person, people))


def person_param(value: object, name: str) -> str | None:
    """Check a ``person`` parameter: a column name, ``"auto"`` or None."""
    if value is None or isinstance(value, str):
        return value
    msg = f"`{name}` must be a column name, 'auto' or None; got {value!r}."
    raise ParameterError(msg)


#: the ``person`` parameter of the per-person metrics (identification, vulnerable
#: people, DCR share and identical match share)
PERSON: Param[str | None] = Param(
    custom(person_param, "a column name, 'auto' or None"),
    "auto",
    "Column naming people with several rows; 'auto' finds one; None: rows are people.",
)


def find_person_column(tables: Tables) -> str | None:
    """The column that names people in a panel table, when one is unambiguous.

    A column whose name says it is an identifier (``id``, ``person_id``, ``user``,
    ``patient_key`` …) and whose values repeat a few times in the training table:
    several rows then belong to one person (:func:`synthrisk.schema.schema.is_person_key`;
    schema inference leaves such a key out of distances). Columns whose values never
    repeat are row ids (every row is then a person anyway); codes with few values
    (``region_id``) are attributes.
    """
    found = [
        str(column)
        for column in tables.real.columns
        if is_person_key(tables.real[column], str(column))
    ]
    return found[0] if len(found) == 1 else None


def people_of(tables: Tables, column: str | None) -> People:
    """Number the real people of the training and holdout tables."""
    if tables.holdout is None:
        msg = "the per-person tests need a holdout table (real people the generator never saw)."
        raise InputError(msg)
    n_real, n_hold = len(tables.real), len(tables.holdout)
    if column is None:
        person = np.arange(n_real + n_hold, dtype=np.int64)
        return People(person, n_real, n_hold, n_real, None, 1)
    if column not in tables.real.columns:
        msg = f"`person` names {column!r}, which is not a column; columns: {list(map(str, tables.real.columns))}."
        raise ParameterError(msg)
    keys = []
    for name, frame in (("real", tables.real), ("holdout", tables.holdout)):
        values = frame[column]
        if values.isna().any():
            msg = (
                f"the person key {column!r} is missing in {int(values.isna().sum())} row(s) of the "
                f"{name} table; every row must name its person."
            )
            raise InputError(msg)
        keys.append(values.astype(str).to_numpy())
    shared = np.intersect1d(keys[0], keys[1])
    if shared.size:
        msg = (
            f"{shared.size} person(s) of {column!r} have rows in both the training and the holdout "
            "table: the holdout must hold other people, split by person (each person's rows on one "
            "side), or the holdout control compares people with themselves."
        )
        raise InputError(msg)
    codes_real, first_real = pd.factorize(keys[0])[0], None
    codes_hold = pd.factorize(keys[1])[0]
    del first_real
    n_train = int(codes_real.max()) + 1 if codes_real.size else 0
    n_holdout = int(codes_hold.max()) + 1 if codes_hold.size else 0
    person = np.concatenate([codes_real, codes_hold + n_train]).astype(np.int64)
    max_rows = int(np.bincount(person).max()) if person.size else 1
    if max_rows > MAX_ROWS_PER_PERSON:
        msg = (
            f"a person of {column!r} has {max_rows} rows (at most {MAX_ROWS_PER_PERSON} are supported); "
            "is it the person key? Name another column with `person`, or pass person=None "
            "to treat each row as a person."
        )
        raise ParameterError(msg)
    return People(person, n_train, n_holdout, n_real, column, max_rows)


def people_excess(
    a: int, n_a: int, b: int, n_b: int, *, confidence_level: float
) -> tuple[float, list[float], float]:
    """Excess of ``a`` of ``n_a`` training people over the rate of ``b`` of ``n_b`` holdout people.

    In people: ``a - n_a * b / n_b``, with Newcombe's interval of the difference of the
    two shares scaled to ``n_a`` people, and the standard error that interval implies
    (NaN without people on either side). The per-person tests' headline excess.
    """
    rate = b / n_b if n_b else 0.0
    effect = float(a - n_a * rate)
    if not (n_a and n_b):
        return effect, [float("nan"), float("nan")], float("nan")
    from scipy import stats

    low, high = newcombe_interval(a, n_a, b, n_b, confidence_level=confidence_level)
    z = float(stats.norm.ppf(0.5 + confidence_level / 2))
    return (
        effect,
        [float(low * n_a), float(high * n_a)],
        float((high - low) / (2 * z) * n_a),
    )
