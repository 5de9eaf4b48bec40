# SPDX-License-Identifier: BSD-3-Clause
"""Worst-case canaries: crafted records that the audit inserts beside the real targets.

A black-box audit with natural targets shows what an attack can tell about real people;
it is a loose lower bound on the generator's ε, because the real people are rarely the
generator's worst case. Annamalai, Ganev & De Cristofaro (2024, "What do you want from
theory alone? Experimenting with tight auditing of differentially private synthetic data
generation", USENIX Security, arXiv 2405.10994) audit with a target that agrees with no
other record on any column while staying inside the domain the generator is told about:
whether it was in training is then as visible in the output as it can be, and black-box
attacks come much closer to the theoretical ε.

:func:`craft_canaries` builds such records from the real and holdout tables' observed
domain. Each column's candidates are its extremes: the observed minimum and maximum of a
numerical or datetime column, and the rarest few categories of a categorical or boolean
column (values some real or holdout row has, so never outside the domain a generator
is fitted or clipped to). The combinations of these candidates (all of them, or a seeded
sample when there are too many) are scored by their distance to the nearest real or
holdout row (the DCR distance of the attacks, on the population's ranges), and the
canaries are chosen greedily, farthest first: each maximises its distance to every real
and holdout row and to the canaries already chosen, so that the canaries are distinct
from every real row and from each other and do not mask each other in the output. Ties
go to the rarer categories, then to a seeded draw.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._rng import metric_generator
from synthrisk._typing import FloatArray, IntArray, TableLike
from synthrisk._validation import check_int
from synthrisk.exceptions import ParameterError
from synthrisk.neighbors import column_ranges, nearest_neighbors
from synthrisk.schema import EncodedTable, Schema, Tables, as_pandas, prepare_tables

__all__ = ["CANDIDATE_LIMIT", "RAREST_CATEGORIES", "Canaries", "craft_canaries"]

#: rarest categories of each categorical column a canary may take
RAREST_CATEGORIES = 3
#: combinations of the columns' candidates scored (a seeded sample beyond it)
CANDIDATE_LIMIT = 4096


@dataclasses.dataclass(frozen=True)
class Canaries:
    """Crafted canaries, as records and in the tables' encoding.

    Attributes
    ----------
    frame : DataFrame
        The canaries in the real table's columns (one row each); a column that no
        distance uses (an id, a name, free text) takes a holdout row's value.
    encoded : EncodedTable
        The same rows in the tables' encoding.
    isolation : ndarray of shape (n_canaries,)
        Each canary's DCR distance to the nearest real or holdout row (> 0).
    """

    frame: pd.DataFrame
    encoded: EncodedTable
    isolation: FloatArray


def _column_candidates(
    population: EncodedTable, rng: np.random.Generator
) -> tuple[list[IntArray], list[IntArray]]:
    """Per column, the population rows whose values are its candidates.

    A numeric column's rows hold its minimum and maximum (one row when they are equal,
    any row when the column is all missing); a categorical column's hold its rarest
    categories, rarest first.
    """
    numeric: list[IntArray] = []
    for j in range(population.numeric.shape[1]):
        col = population.numeric[:, j]
        present = np.flatnonzero(~np.isnan(col))
        if present.size == 0:  # all missing: the canary is missing there too
            numeric.append(np.array([0], dtype=np.int64))
            continue
        low = present[np.argmin(col[present])]
        high = present[np.argmax(col[present])]
        rows = [low] if col[low] == col[high] else [low, high]
        numeric.append(np.asarray(rows, dtype=np.int64))
    categorical: list[IntArray] = []
    for j in range(population.codes.shape[1]):
        codes_j = population.codes[:, j]
        known = codes_j >= 0
        if not known.any():
            categorical.append(np.array([0], dtype=np.int64))
            continue
        codes, first, counts = np.unique(
            codes_j[known], return_index=True, return_counts=True
        )
        # rarest first; ties broken by a seeded draw
        order = np.lexsort((rng.random(codes.size), counts))[:RAREST_CATEGORIES]
        categorical.append(np.flatnonzero(known)[first[order]].astype(np.int64))
    return numeric, categorical


def _candidate_grid(sizes: list[int], rng: np.random.Generator) -> IntArray:
    """The combinations of the columns' candidate indices: all, or a seeded sample."""
    total = math.prod(sizes) if sizes else 1
    if total <= CANDIDATE_LIMIT:
        grid = np.array(list(itertools.product(*(range(s) for s in sizes))))
        return grid.reshape(total, len(sizes)).astype(np.int64)
    drawn = np.column_stack(
        [rng.integers(0, s, size=CANDIDATE_LIMIT) for s in sizes]
    ).astype(np.int64)
    return np.unique(drawn, axis=0)


def _encoded_candidates(
    population: EncodedTable,
    numeric_rows: list[IntArray],
    categorical_rows: list[IntArray],
    grid: IntArray,
) -> tuple[EncodedTable, IntArray]:
    """The candidates' encodings and, per candidate and column, the source row."""
    p = len(numeric_rows)
    source = np.empty(grid.shape, dtype=np.int64)
    for j, rows in enumerate([*numeric_rows, *categorical_rows]):
        source[:, j] = rows[grid[:, j]]
    numeric = np.empty((grid.shape[0], p), dtype=np.float64)
    for j in range(p):
        numeric[:, j] = population.numeric[source[:, j], j]
    codes = np.empty((grid.shape[0], len(categorical_rows)), dtype=np.int64)
    for j in range(len(categorical_rows)):
        codes[:, j] = population.codes[source[:, p + j], j]
    encoded = dataclasses.replace(population, numeric=numeric, codes=codes)
    return encoded, source


def _rarity(population: EncodedTable, candidates: EncodedTable) -> FloatArray:
    """Sum over the categorical columns of ``-log`` of each candidate value's share."""
    out = np.zeros(candidates.n_rows)
    for j in range(population.codes.shape[1]):
        col = population.codes[:, j]
        present = col[col >= 0]
        if present.size == 0:
            continue
        counts = np.bincount(present)
        share = counts[candidates.codes[:, j]] / present.size
        out -= np.log(share)
    return out


def choose_canaries(
    population: EncodedTable,
    n_canaries: int,
    *,
    scale: FloatArray,
    seed: int,
) -> tuple[IntArray, FloatArray, EncodedTable]:
    """Choose the canaries in the population's encoding.

    Returns
    -------
    source : ndarray of shape (n_canaries, n_numeric + n_categorical)
        Per canary and encoded column (numeric block, then categorical), the population
        row whose value the canary takes.
    isolation : ndarray of shape (n_canaries,)
        Each canary's distance to the nearest population row.
    encoded : EncodedTable
        The canaries' encodings.

    Raises
    ------
    ParameterError
        When the domain does not hold ``n_canaries`` records distinct from every
        population row and from each other.
    """
    rng = metric_generator(seed, "audit-canaries")
    numeric_rows, categorical_rows = _column_candidates(population, rng)
    sizes = [len(r) for r in (*numeric_rows, *categorical_rows)]
    grid = _candidate_grid(sizes, rng)
    candidates, source = _encoded_candidates(
        population, numeric_rows, categorical_rows, grid
    )
    to_population = nearest_neighbors(
        candidates, population, k=1, distance="dcr", scale=scale, backend="numpy"
    ).distances[:, 0]
    rarity = _rarity(population, candidates)
    tie = rng.random(candidates.n_rows)
    spread = to_population.copy()
    chosen: list[int] = []
    for _ in range(n_canaries):
        best = int(np.lexsort((tie, rarity, spread))[-1])
        if not spread[best] > 0:
            msg = (
                f"`n_canaries` asks for {n_canaries} canaries, but the tables' domain "
                f"holds only {len(chosen)} records made of extreme values and rare "
                "categories that differ from every real and holdout row and from each "
                f"other; ask for at most {len(chosen)}."
            )
            raise ParameterError(msg)
        chosen.append(best)
        to_best = nearest_neighbors(
            candidates,
            candidates.take(np.array([best], dtype=np.int64)),
            k=1,
            distance="dcr",
            scale=scale,
            backend="numpy",
        ).distances[:, 0]
        spread = np.minimum(spread, to_best)
    rows = np.asarray(chosen, dtype=np.int64)
    return source[rows], to_population[rows], candidates.take(rows)


def canary_frame(
    source: IntArray,
    population: pd.DataFrame,
    holdout: pd.DataFrame,
    encoded: EncodedTable,
    *,
    seed: int,
) -> pd.DataFrame:
    """The canaries as records: each encoded column's value from its source row.

    Columns that no distance uses take the values of seeded holdout rows.
    """
    rng = metric_generator(seed, "audit-canary-base")
    base = rng.choice(len(holdout), size=source.shape[0], replace=True)
    columns: dict[str, pd.Series] = {}
    names = [*encoded.numeric_names, *encoded.categorical_names]
    for name in population.columns:
        if name in names:
            rows = source[:, names.index(name)]
            columns[name] = population[name].iloc[rows].reset_index(drop=True)
        else:
            columns[name] = holdout[name].iloc[base].reset_index(drop=True)
    return pd.DataFrame(columns)


def crafted(
    tables: Tables,
    real: pd.DataFrame,
    holdout: pd.DataFrame,
    n_canaries: int,
    *,
    seed: int,
) -> Canaries:
    """Craft ``n_canaries`` canaries from prepared tables (the audit's entry point)."""
    real_enc, pool_enc = tables.encoded("real"), tables.encoded("holdout")
    population = dataclasses.replace(
        real_enc,
        numeric=np.vstack([real_enc.numeric, pool_enc.numeric]),
        codes=np.vstack([real_enc.codes, pool_enc.codes]),
    )
    scale = column_ranges(population.numeric)
    source, isolation, encoded = choose_canaries(
        population, n_canaries, scale=scale, seed=seed
    )
    frames = pd.concat([real, holdout[list(real.columns)]], ignore_index=True)
    frame = canary_frame(source, frames, holdout, encoded, seed=seed)
    return Canaries(frame=frame, encoded=encoded, isolation=isolation)


def craft_canaries(
    real: TableLike,
    holdout: TableLike,
    n_canaries: int = 10,
    *,
    metadata: Mapping[str, Any] | Schema | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Craft worst-case canaries from the real and holdout tables' domain.

    The records :func:`synthrisk.audit.audit` inserts with ``n_canaries``: for each
    column, a value at the observed minimum or maximum, or one of the rarest categories,
    combined so that each canary is as far as possible from every real and holdout row
    and from the other canaries (Annamalai, Ganev & De Cristofaro 2024, arXiv
    2405.10994). Every value is one that some real or holdout row has, so the canaries
    stay inside the domain a generator is fitted or clipped to.

    Parameters
    ----------
    real, holdout : DataFrame
        The tables of the audit.
    n_canaries : int, default=10
        Canaries to craft.
    metadata : mapping or Schema, default=None
        Column kinds, as for :func:`synthrisk.evaluate`.
    seed : int, default=0
        The same seed gives the same canaries.

    Returns
    -------
    DataFrame
        One row per canary, in the real table's columns.

    Raises
    ------
    ParameterError
        When ``n_canaries`` is not a positive integer, or the domain does not hold that
        many distinct canaries.

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "c": ["a", "a", "b", "a"]})
    >>> holdout = pd.DataFrame({"x": [2.0, 3.0, 5.0, 1.5], "c": ["a", "b", "a", "a"]})
    >>> craft_canaries(real, holdout, 2)
         x  c
    0  1.0  b
    1  5.0  b
    """
    n_canaries = check_int(n_canaries, name="n_canaries", minimum=1)
    seed = check_int(seed, name="seed", minimum=0)
    real_frame = as_pandas(real, name="real").reset_index(drop=True)
    pool_frame = as_pandas(holdout, name="holdout").reset_index(drop=True)
    tables = prepare_tables(
        real_frame,
        real_frame.iloc[:1],
        pool_frame,
        metadata=metadata,
    )
    if not tables.schema.modelable:
        msg = "no column of `real` can make a canary: every column is an id, a name or free text."
        raise ParameterError(msg)
    return crafted(tables, real_frame, pool_frame, n_canaries, seed=seed).frame
