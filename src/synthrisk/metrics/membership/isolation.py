# SPDX-License-Identifier: BSD-3-Clause
"""The most isolated training people: whose copies the known-leak self-test plants.

A real person's **isolation** is the distance from their record to the nearest record of
another real person in the pooled training ∪ holdout rows, in the distance of the DCR
metrics (:mod:`synthrisk.metrics.membership.identification` judges copies of people in
the same geometry). The records far from everyone are the ones attacks expose (Meeus,
Guépin, Creţu & de Montjoye 2023, "Achilles' heels", arXiv 2306.10308), and a copy of
one of them is the clearest leak a verdict must catch. Records another real person
shares (isolation 0) identify no one and are left out.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics._base import Context
from synthrisk.metrics.membership._people import (
    find_person_column,
    geometry,
    isolation_rank,
    people_of,
    per_person,
)
from synthrisk.schema.tables import Tables

__all__ = ["IsolatedPeople", "isolated_training_people"]


@dataclasses.dataclass(frozen=True)
class IsolatedPeople:
    """Training people whose record no other real person shares, most isolated first.

    Attributes
    ----------
    rows : ndarray of shape (n_candidates,)
        One row of the real (training) table per person: the person's most isolated
        row (their only row when every row is a person), most isolated person first.
    isolation : ndarray of shape (n_candidates,)
        Each person's isolation (distance to the nearest other real person), in the
        order of ``rows``; all above 0.
    n_people : int
        Training people, including those whose record another real person shares.
    person_column : str or None
        The column that names people with several rows, or None when every row is a
        person.
    """

    rows: IntArray
    isolation: FloatArray
    n_people: int
    person_column: str | None


def isolated_training_people(
    tables: Tables, *, person: str | None = "auto", context: Context
) -> IsolatedPeople:
    """Rank the training people by isolation (see the module docstring).

    Parameters
    ----------
    tables : Tables
        Validated tables with a holdout (the pool of real people is training ∪ holdout).
    person : str, "auto" or None, default="auto"
        The column that names people with several rows, as for the ``identification``
        metric: ``"auto"`` finds one, None makes every row a person.
    context : Context
        Memory budget, backend and progress of the neighbour searches.

    Returns
    -------
    IsolatedPeople

    Raises
    ------
    InputError
        Without a holdout table.
    """
    column = find_person_column(tables) if person == "auto" else person
    people = people_of(tables, column)
    geo, _, _, _ = geometry(tables, people, context=context)
    n_train, n_rows = people.n_train, people.n_real_rows
    row_person = people.person[:n_rows]
    row_isolation = geo.isolation[:n_rows]
    isolation = per_person(row_isolation, row_person, n_train, how="max")
    # each person's most isolated row; ties: the first row
    order = np.lexsort((np.arange(n_rows), -row_isolation, row_person))
    first = np.ones(n_rows, dtype=bool)
    first[1:] = row_person[order][1:] != row_person[order][:-1]
    best_row = np.empty(n_train, dtype=np.int64)
    best_row[row_person[order][first]] = order[first]
    eligible = isolation > 0
    rank = isolation_rank(np.where(eligible, isolation, -1.0))
    ranked = np.argsort(rank, kind="stable")[: int(eligible.sum())]
    return IsolatedPeople(
        rows=best_row[ranked].astype(np.int64),
        isolation=isolation[ranked].astype(np.float64),
        n_people=n_train,
        person_column=people.column,
    )
