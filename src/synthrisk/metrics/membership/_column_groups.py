# SPDX-License-Identifier: BSD-3-Clause
"""Column subsets for the worst-case DCR share (MOSTLY AI QA's correlated and random groups)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from synthrisk._optional import import_optional
from synthrisk.metrics._base import Context, Outcome
from synthrisk.schema.schema import Schema
from synthrisk.schema.tables import Tables

__all__ = ["SUBSETS", "column_groups", "subset_tables", "worst_share"]

#: values of ``dcr_share``'s ``column_subsets``
SUBSETS = ("all", "worst")


def subset_tables(tables: Tables, columns: list[str]) -> Tables:
    """The same tables restricted to ``columns`` (already validated)."""
    specs = tuple(spec for spec in tables.schema.columns if spec.name in columns)
    return Tables(
        real=tables.real[columns],
        synthetic=tables.synthetic[columns],
        holdout=None if tables.holdout is None else tables.holdout[columns],
        schema=Schema(specs),
    )


def column_groups(
    tables: Tables, rng: np.random.Generator, k: int = 3
) -> list[list[str]]:
    """All modelable columns, plus (above 10 columns) ``k`` correlated and ``k`` random groups.

    MOSTLY AI QA's choice: correlated groups by spectral clustering of the absolute
    correlation matrix of the encoded real and holdout rows (category codes as numbers),
    random groups of near-equal size from a seeded permutation.
    """
    names = [spec.name for spec in tables.schema.modelable]
    groups = [names]
    if len(names) <= 10:
        return groups
    parts = [tables.encoded("real")]
    if tables.holdout is not None:
        parts.append(tables.encoded("holdout"))
    order = list(parts[0].numeric_names) + list(parts[0].categorical_names)
    matrix = np.vstack(
        [np.hstack([p.numeric, p.codes.astype(np.float64)]) for p in parts]
    )
    means = np.nanmean(matrix, axis=0)
    matrix = np.where(np.isnan(matrix), means, matrix)
    matrix = matrix + 1e-8 * rng.standard_normal(matrix.shape)
    corr = np.nan_to_num(np.abs(np.corrcoef(matrix, rowvar=False)))
    np.fill_diagonal(corr, 0.0)
    cluster = import_optional("sklearn.cluster", extra="ml")
    labels = cluster.SpectralClustering(
        n_clusters=k,
        affinity="precomputed",
        assign_labels="kmeans",
        random_state=int(rng.integers(0, 2**31 - 1)),
    ).fit_predict(corr)
    for c in range(k):
        group = [order[j] for j in np.flatnonzero(labels == c)]
        if group:
            groups.append([n for n in names if n in group])
    shuffled = [names[i] for i in rng.permutation(len(names))]
    for chunk in np.array_split(np.arange(len(names)), k):
        groups.append([n for n in names if n in {shuffled[i] for i in chunk}])
    return groups


def worst_share(
    compute: Callable[[Tables, Context], Outcome], tables: Tables, context: Context
) -> Outcome:
    """Run ``compute`` on every column group of :func:`column_groups`; keep the largest score."""
    groups = column_groups(tables, context.rng)
    best: tuple[float, Outcome, list[str]] | None = None
    tried = []
    for columns in groups:
        outcome = compute(subset_tables(tables, columns), context)
        share = -1.0 if outcome.score is None else float(outcome.score)
        tried.append({"columns": columns, "share": outcome.score})
        if best is None or share > best[0]:
            best = (share, outcome, columns)
    assert best is not None
    _, outcome, columns = best
    p_value = outcome.breakdown.get("p_value")
    outcome.breakdown.update(
        column_subsets=tried,
        worst_columns=columns,
        p_value_bonferroni=None
        if p_value is None
        else min(1.0, float(p_value) * len(groups)),
    )
    return outcome
