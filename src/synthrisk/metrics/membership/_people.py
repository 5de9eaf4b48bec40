# SPDX-License-Identifier: BSD-3-Clause
"""Real people and how isolated each is: the geometry of the per-person tests.

The unit of the per-person tests is a real person of the pooled training ∪ holdout
rows: a row, or every row that shares a person key (panel data, several rows per
person). A person's **isolation** is the distance from their record to the nearest
record of *another* real person in the pool (Meeus, Guépin, Creţu & de Montjoye 2023,
"Achilles' heels", arXiv 2306.10308: the records far from everyone are the ones attacks
expose); a person with several rows takes their most isolated row. Isolation 0 means
another real person shares the record exactly: such a record identifies no one.

A synthetic row **identifies** a row ``r`` when it is far closer to ``r`` than any other
real person is: its distance, divided by ``r``'s isolation, is at most the threshold
``c`` (an exact copy has ratio 0). ``c`` is derived from the real people themselves
(:func:`near_threshold`): how much closer their nearest stranger comes than the next
one, a ratio that only one real person in ``1 / quantile`` reaches by chance.

Distances are those of the DCR metrics (:mod:`synthrisk.metrics.membership._space`),
on the columns that describe a person (the person key itself is left out), with one
change for **missing cells** (:func:`read_missing_as_typical`): a missing cell is read
as the column's typical value over the pooled real rows (the median of a number, the
most frequent category), in the real and the synthetic rows alike. The DCR distance
counts a missing value against a present one as the column's maximum (1: a whole range
apart, or a mismatch), so on a table with missing values the people with a missing cell
were the "most isolated" (Adult, 3,000 training people, 2 % of cells missing: 26 % of
the people have one, but 62 % of the top 5 %), although a missing cell tells an attacker
nothing about where the person lies. Read as the typical value, a missing cell is on
average no farther from a present one than two present values are from each other (the
median minimises the mean absolute distance; ``1 - p_mode <= 1 - sum p²``), and two
missing cells still match. A record whose only difference from another person's is a
missing cell where that person holds the typical value reads as shared (isolation 0).
Tables without missing values are unchanged, and so are all numbers of the tests on
them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics._base import Context
from synthrisk.metrics._persons import (
    MAX_ROWS_PER_PERSON,
    PERSON,
    People,
    find_person_column,
    people_of,
    person_param,
)
from synthrisk.metrics.membership._space import (
    Data,
    Space,
    concat_rows,
    n_rows,
    real_to_synthetic,
    take_rows,
)
from synthrisk.schema.encoding import EncodedTable
from synthrisk.schema.tables import Tables

__all__ = [
    "MAX_ROWS_PER_PERSON",
    "PERSON",
    "Geometry",
    "People",
    "find_person_column",
    "geometry",
    "near_threshold",
    "people_of",
    "person_param",
    "tied_stratum",
]


@dataclasses.dataclass(frozen=True)
class Geometry:
    """Distances of every pooled real row (training rows first).

    ``isolation``: to the nearest row of another person (0: another person shares the
    record); ``second``: to the nearest row of a third person (for the threshold);
    ``to_synthetic``: to the nearest synthetic row, with its position ``synthetic_row``.
    """

    isolation: FloatArray
    second: FloatArray
    to_synthetic: FloatArray
    synthetic_row: IntArray

    def ratio(self) -> FloatArray:
        """Distance to the nearest synthetic row over isolation (inf where isolation is 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self.to_synthetic / self.isolation
        return np.where(self.isolation > 0, out, np.inf)


#: neighbours of the first isolation search of people with several rows; the rows
#: whose list holds fewer than two other people are searched again with the full k
FIRST_K = 5


def _other_people(
    distances: FloatArray,
    indices: IntArray,
    person: IntArray,
    rows: IntArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Nearest and second-nearest *other* person of each query row.

    The query rows are the pooled rows ``rows`` (None: every pooled row, in order).
    """
    n = distances.shape[0]
    own = person[np.arange(n) if rows is None else rows]
    first = np.full(n, np.inf)
    second = np.full(n, np.inf)
    first_person = np.full(n, -1, dtype=np.int64)
    for j in range(distances.shape[1]):
        other = person[indices[:, j]]
        d = distances[:, j]
        take_first = (other != own) & np.isinf(first)
        first[take_first] = d[take_first]
        first_person[take_first] = other[take_first]
        take_second = (
            (other != own)
            & (other != first_person)
            & np.isinf(second)
            & ~take_first
            & (first_person >= 0)
        )
        second[take_second] = d[take_second]
    return first, second


def geometry(
    tables: Tables,
    people: People,
    *,
    context: Context,
    space: Space | None = None,
) -> tuple[Geometry, Space, Data, Data]:
    """The pooled rows' isolation and their distances to the synthetic table.

    Returns the geometry, the space, the pooled real data and the synthetic data (so
    that planted copies can be measured in the same units). Computed once per tables
    and person column (:meth:`Tables.derived`): the per-person tests of one run share it.
    """
    if space is not None:
        return _geometry(tables, people, context=context, space=space)
    key = ("people-geometry", str(people.column), str(people.max_rows))
    return tables.derived(
        key, lambda: _geometry(tables, people, context=context, space=None)
    )


def read_missing_as_typical(pool: Data, synthetic: Data) -> tuple[Data, Data, bool]:
    """``pool`` and ``synthetic`` with each missing cell read as the column's typical
    value over ``pool``: the median of a number, the most frequent category (lowest
    code among ties); and whether any cell was missing. See the module docstring.

    Arrays that are not in-memory encoded tables (partitioned tables keep the DCR
    rule), and columns missing in every pooled row, are returned as they are.
    """
    if not isinstance(pool, EncodedTable) or not isinstance(synthetic, EncodedTable):
        return pool, synthetic, False
    if not any(
        np.isnan(t.numeric).any() or (t.codes < 0).any() for t in (pool, synthetic)
    ):
        return pool, synthetic, False
    num_seen = ~np.isnan(pool.numeric).all(axis=0)
    median = np.zeros(pool.numeric.shape[1])
    if num_seen.any():
        median[num_seen] = np.nanmedian(pool.numeric[:, num_seen], axis=0)
    n_cat = pool.codes.shape[1]
    mode = np.full(n_cat, -1, dtype=np.int64)
    for c in range(n_cat):
        present = pool.codes[:, c][pool.codes[:, c] >= 0]
        if present.size:
            mode[c] = int(np.argmax(np.bincount(present)))

    def filled(table: EncodedTable) -> EncodedTable:
        numeric = np.where(np.isnan(table.numeric) & num_seen, median, table.numeric)
        codes = np.where(table.codes < 0, mode, table.codes)
        return dataclasses.replace(
            table,
            numeric=np.ascontiguousarray(numeric),
            codes=np.ascontiguousarray(codes),
        )

    return filled(pool), filled(synthetic), True


def _geometry(
    tables: Tables, people: People, *, context: Context, space: Space | None
) -> tuple[Geometry, Space, Data, Data]:
    if people.column is not None:
        tables = tables.select([c for c in tables.real.columns if c != people.column])
    space = Space.for_tables(tables, "dcr") if space is None else space
    real = space.data(tables, "real")
    holdout = space.data(tables, "holdout")
    synthetic = space.data(tables, "synthetic")
    pool = concat_rows(real, holdout)
    pool, synthetic, imputed = read_missing_as_typical(pool, synthetic)
    isolation, second = _isolation(pool, people, space, context)
    # the run's shared search measures the DCR distance itself, without typical values
    shared = None if imputed else real_to_synthetic(tables, space, k=1, context=context)
    if shared is not None and shared[1] is not None:
        # the search the kNN membership attack of this run uses too
        to_syn = np.concatenate([shared[0].distances[:, 0], shared[1].distances[:, 0]])
        nearest = np.concatenate([shared[0].indices[:, 0], shared[1].indices[:, 0]])
    else:
        syn = space.search(
            pool,
            synthetic,
            k=1,
            context=context,
            description="real people → synthetic",
        )
        to_syn, nearest = syn.distances[:, 0], syn.indices[:, 0]
    return (Geometry(isolation, second, to_syn, nearest), space, pool, synthetic)


def _isolation(
    pool: Data, people: People, space: Space, context: Context
) -> tuple[FloatArray, FloatArray]:
    """Each pooled row's distances to the nearest and second-nearest other person.

    The nearest rows of two other people are among a row's ``2 * max_rows + 1``
    nearest pooled rows (at most ``max_rows`` of its own and of the first other
    person's come before them). With several rows per person that list is long (a
    person with 60 rows makes it 121 for everyone) while the two other people are
    usually among the first few: every row is searched with ``FIRST_K`` neighbours,
    and only the rows whose list holds fewer than two other people again with the
    full ``k``. Both give the same two distances: every backend ranks by ``(distance,
    position)``, so a shorter list is the longer one's beginning.
    """
    n = n_rows(pool)
    full_k = min(n, 2 * people.max_rows + 1)
    k = min(full_k, FIRST_K)
    nn = space.search(
        pool, pool, k=k, context=context, description="isolation of real people"
    )
    isolation, second = _other_people(nn.distances, nn.indices, people.person)
    if k < full_k:
        # fewer than two other people listed: the second slot was never filled
        redo = np.flatnonzero(np.isinf(second))
        if redo.size:
            more = space.search(
                take_rows(pool, redo),
                pool,
                k=full_k,
                context=context,
                description="isolation of real people (long lists)",
            )
            isolation[redo], second[redo] = _other_people(
                more.distances, more.indices, people.person, rows=redo
            )
    return isolation, second


def near_threshold(geo: Geometry, quantile: float) -> float:
    """The ratio below which a synthetic row identifies a person rather than resembles them.

    Among the real people whose record no one else shares, the ratio of the distance to
    their nearest stranger over the distance to the next stranger: new people come
    that much closer than the runner-up only for a share ``quantile`` of real people.
    A synthetic row whose distance over a person's isolation is at most that ratio is
    closer to them than chance puts a stranger (capped at 0.5; 0 when no real person
    has two strangers at a distance).
    """
    ok = (geo.isolation > 0) & np.isfinite(geo.second) & (geo.second > 0)
    if not ok.any():
        return 0.0
    ratios = geo.isolation[ok] / geo.second[ok]
    return float(min(0.5, np.quantile(ratios, quantile, method="lower")))


def per_person(
    values: FloatArray, person: IntArray, n_people: int, *, how: str
) -> FloatArray:
    """Reduce one value per pooled row to one per person (``"min"`` or ``"max"``)."""
    out = np.full(n_people, np.inf if how == "min" else -np.inf)
    if how == "min":
        np.minimum.at(out, person, values)
    else:
        np.maximum.at(out, person, values)
    return out


def isolation_rank(isolation: FloatArray) -> IntArray:
    """Rank of each person by isolation, 0 the most isolated (ties by position)."""
    order = np.argsort(-isolation, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank


def tied_stratum(
    isolation: FloatArray, share: float, eligible: Sequence[bool] | np.ndarray
) -> np.ndarray:
    """The most isolated ``share`` of the eligible people, with everyone tied at the cut.

    Unlike :func:`stratum` (ties broken by position, so training people, who come
    first, fill a tie at the cut before any holdout person), a person's membership
    depends on their isolation only: a training and a holdout person with the same
    isolation are both in or both out, so the stratum holds the two sides alike. On a
    coarse table, where many people share the largest isolation, the stratum can hold
    more than ``share`` of the people.
    """
    eligible = np.asarray(eligible, dtype=bool)
    n = int(eligible.sum())
    if n == 0:
        return eligible.copy()
    size = max(1, round(share * n))
    values = np.sort(isolation[eligible])[::-1]
    cut = values[min(size, n) - 1]
    return eligible & (isolation >= cut)


def stratum(
    rank: IntArray, share: float, eligible: Sequence[bool] | np.ndarray
) -> np.ndarray:
    """The most isolated ``share`` of the eligible people (at least one)."""
    eligible = np.asarray(eligible, dtype=bool)
    size = max(1, round(share * int(eligible.sum())))
    ranked = np.where(eligible, rank, np.iinfo(np.int64).max)
    cut = np.sort(ranked)[min(size, ranked.size) - 1]
    return eligible & (ranked <= cut)
