# SPDX-License-Identifier: BSD-3-Clause
"""Column subsets for the worst-case DCR share (MOSTLY AI QA's correlated and random groups)."""

from __future__ import annotations

import concurrent.futures
import copy
import dataclasses
import os
import threading
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from synthrisk._optional import import_optional
from synthrisk._progress import NullProgress
from synthrisk.metrics._base import Context, Outcome
from synthrisk.metrics.membership._share_kernels import compare_sides
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


class _Relay(np.random.Generator):
    """A generator that continues a shared stream once the previous task is done with it.

    Tasks that would draw from one generator one after the other can then run at
    the same time and still draw the same numbers: task ``i``'s first draw waits
    until task ``i - 1`` has finished and handed the shared state on, and task
    ``i`` hands its own state on when it finishes (see :func:`_in_order`).
    """

    def __init__(self, shared: np.random.Generator, turn: threading.Event) -> None:
        super().__init__(copy.deepcopy(shared.bit_generator))
        self._shared = shared
        self._turn = turn
        self.used = False

    def _sync(self) -> None:
        if not self.used:
            self._turn.wait()
            super().bit_generator.state = self._shared.bit_generator.state
            self.used = True

    @property
    def bit_generator(self) -> np.random.BitGenerator:
        """The bit generator, in the shared stream's state (see the class docstring)."""
        self._sync()
        return super().bit_generator


def _relayed(name: str) -> Callable[..., Any]:
    method = getattr(np.random.Generator, name)

    def call(self: _Relay, *args: Any, **kwargs: Any) -> Any:
        self._sync()
        return method(self, *args, **kwargs)

    call.__name__ = name
    # numpy's own docstring would bring its doctests along
    call.__doc__ = (
        f"``numpy.random.Generator.{name}``, drawn once this relay has its turn."
    )
    return call


for _name in dir(np.random.Generator):
    if not _name.startswith("_") and _name != "bit_generator":
        setattr(_Relay, _name, _relayed(_name))


def _concurrent_kernels() -> bool:
    """Whether two threads may run numba's parallel kernels at the same time."""
    if os.cpu_count() == 1:
        return False
    # the threading layer is chosen by the first parallel kernel
    compare_sides(
        np.zeros(1, dtype=np.int64),
        np.zeros(0),
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.bool_),
        np.zeros(0, dtype=np.bool_),
        0,
    )
    layer = numba.threading_layer()  # type: ignore[attr-defined]
    return str(layer) in ("omp", "tbb")


#: column subsets run at a time: one may wait for its turn to draw while two compute
_WORKERS = 3


def _in_order(
    compute: Callable[[Tables, Context], Outcome],
    jobs: list[Tables],
    context: Context,
) -> list[Outcome]:
    """``[compute(job, context) for job in jobs]``, several jobs at a time, same numbers.

    Each job gets its own context: a :class:`_Relay` of ``context.rng`` (so the
    jobs draw the numbers they would draw one after the other, and ``context.rng``
    ends where it would), its own warnings (added to ``context``'s in job order) and
    no progress bars of its own (one bar counts the jobs). The part of a job before
    its first random draw (the neighbour searches) overlaps the rest of the previous
    jobs (their permutation tests and bootstraps). Jobs run one after the other where
    numba's threading layer cannot run two parallel kernels at once (workqueue).
    """
    if len(jobs) < 2 or not _concurrent_kernels():
        return [compute(job, context) for job in jobs]
    turns = [threading.Event() for _ in range(len(jobs) + 1)]
    turns[0].set()
    contexts = [
        dataclasses.replace(
            context,
            rng=_Relay(context.rng, turns[i]),
            warnings=[],
            progress=NullProgress(),
        )
        for i in range(len(jobs))
    ]

    def run(i: int) -> Outcome:
        try:
            return compute(jobs[i], contexts[i])
        finally:
            # hand the stream on in job order, whether or not this job drew from it
            turns[i].wait()
            relay = contexts[i].rng
            assert isinstance(relay, _Relay)
            if relay.used:
                state = np.random.Generator.bit_generator.__get__(relay).state
                context.rng.bit_generator.state = state
            turns[i + 1].set()

    with (
        context.progress.task("column subsets", len(jobs)) as advance,
        concurrent.futures.ThreadPoolExecutor(max_workers=_WORKERS) as pool,
    ):
        futures = [pool.submit(run, i) for i in range(len(jobs))]
        outcomes = []
        for i, future in enumerate(futures):
            outcomes.append(future.result())
            for message in contexts[i].warnings:
                if message not in context.warnings:
                    context.warnings.append(message)
            advance(1)
    return outcomes


def worst_share(
    compute: Callable[[Tables, Context], Outcome], tables: Tables, context: Context
) -> Outcome:
    """Run ``compute`` on every column group of :func:`column_groups`; keep the largest score."""
    groups = column_groups(tables, context.rng)
    outcomes = _in_order(
        compute, [subset_tables(tables, columns) for columns in groups], context
    )
    best: tuple[float, Outcome, list[str]] | None = None
    tried = []
    for columns, outcome in zip(groups, outcomes, strict=True):
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
