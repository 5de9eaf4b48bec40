# SPDX-License-Identifier: BSD-3-Clause
"""Column subsets for the worst-case DCR share (MOSTLY AI QA's correlated and random groups)."""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
from collections.abc import Callable
from typing import Protocol, TypeVar, cast

import numpy as np

from synthrisk._optional import import_optional
from synthrisk._progress import NullProgress
from synthrisk._workers import threadsafe_kernels
from synthrisk.metrics._base import Context, Outcome
from synthrisk.schema.tables import Tables

__all__ = ["SUBSETS", "column_groups", "subset_tables", "worst_share"]


class _HasScore(Protocol):
    @property
    def score(self) -> float | None: ...


_S = TypeVar("_S", bound=_HasScore)

#: values of ``dcr_share``'s ``column_subsets``
SUBSETS = ("all", "worst")


def subset_tables(tables: Tables, columns: list[str]) -> Tables:
    """The same tables restricted to ``columns`` (already validated), same encoding."""
    return tables.select(columns)


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


#: column subsets searched at a time
_WORKERS = 2


def _largest(
    shares: Callable[[Tables, Context], _S],
    jobs: list[Tables],
    contexts: list[Context],
    context: Context,
) -> tuple[int, _S, list[float | None]]:
    """Run ``shares`` on every job; the first job of the largest score, its state, all scores.

    Only the best state so far is kept (a finished job's state is dropped as soon
    as a better one is known). Jobs run two at a time where numba's
    threading layer can run two parallel kernels at once (not workqueue); each has
    its own context, so the numbers do not depend on the order they finish in.
    """
    scores: list[float | None] = []
    best: tuple[int, _S] | None = None

    def keep(i: int, state: _S) -> None:
        nonlocal best
        scores.append(state.score)
        value = -1.0 if state.score is None else float(state.score)
        if best is None or value > (
            -1.0 if best[1].score is None else float(best[1].score)
        ):
            best = (i, state)

    with context.progress.task("column subsets", len(jobs)) as advance:
        if threadsafe_kernels():
            with concurrent.futures.ThreadPoolExecutor(max_workers=_WORKERS) as pool:
                futures = collections.deque(
                    pool.submit(shares, job, ctx)
                    for job, ctx in zip(jobs, contexts, strict=True)
                )
                i = 0
                while futures:
                    keep(i, futures.popleft().result())
                    i += 1
                    advance(1)
        else:
            for i, (job, ctx) in enumerate(zip(jobs, contexts, strict=True)):
                keep(i, shares(job, ctx))
                advance(1)
    assert best is not None
    return best[0], best[1], scores


def worst_share(
    shares: Callable[[Tables, Context], _S],
    finish: Callable[[_S, Context], Outcome],
    tables: Tables,
    context: Context,
) -> Outcome:
    """The share of every column group of :func:`column_groups`; the largest is reported.

    ``shares`` computes a group's score (the neighbour searches and comparisons);
    ``finish`` adds the permutation test and the interval, which only the largest
    needs. Each group draws from its own generator, seeded from ``context.rng``;
    the one group of tables of at most 10 columns draws from ``context.rng`` itself,
    as the plain run does.
    """
    groups = column_groups(tables, context.rng)
    jobs = [subset_tables(tables, columns) for columns in groups]
    if len(groups) == 1:
        contexts = [context]
    else:
        seeds = context.rng.integers(0, 2**63 - 1, size=len(groups))
        contexts = [
            dataclasses.replace(
                context,
                rng=np.random.default_rng(int(seed)),
                warnings=[],
                progress=NullProgress(),
            )
            for seed in seeds
        ]
    winner, state, scores = _largest(shares, jobs, contexts, context)
    outcome = finish(state, contexts[winner])
    for ctx in contexts:
        if ctx is not context:
            for message in ctx.warnings:
                context.warn(message)
    p_value = cast("float | None", outcome.breakdown.get("p_value"))
    outcome.breakdown.update(
        column_subsets=[
            {"columns": columns, "share": score}
            for columns, score in zip(groups, scores, strict=True)
        ],
        worst_columns=groups[winner],
        p_value_bonferroni=None
        if p_value is None
        else min(1.0, float(p_value) * len(groups)),
    )
    return outcome
