# SPDX-License-Identifier: BSD-3-Clause
"""The membership game: shadow training sets, generator runs, budget and retries.

One-run style (Steinke, Nasr & Jagielski 2023, "Privacy auditing with one (1) training
run", arXiv 2305.08846): in every shadow run each target joins the training set
independently with probability 1/2, so all targets are audited by the same runs. A
shadow training set is ``train_size`` rows drawn without replacement from the
auxiliary pool plus the included targets, shuffled. Run ``r`` draws everything from a
generator derived from ``(seed, r)`` alone, so any run can be repeated bit for bit,
whatever ran before it or beside it.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import pickle
import time
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd

from synthrisk._rng import metric_generator
from synthrisk._typing import IntArray
from synthrisk.audit.generators import FitSample

__all__ = ["RunDraw", "RunOutcome", "draw_run", "play"]


@dataclasses.dataclass(frozen=True)
class RunDraw:
    """What one shadow run trains on.

    Attributes
    ----------
    run : int
        The run's number (0-based).
    pool_rows : ndarray of shape (train_size,)
        Rows of the auxiliary pool in the shadow training set.
    included : ndarray of shape (n_targets,), bool
        Whether each target is in the shadow training set.
    order : ndarray of shape (train_size + n_included,)
        The shuffle of the training rows (pool rows first, then included targets).
    seed : int
        The seed handed to the generator.
    """

    run: int
    pool_rows: IntArray
    included: np.ndarray
    order: IntArray
    seed: int


def draw_run(
    seed: int, run: int, *, n_pool: int, train_size: int, n_targets: int
) -> RunDraw:
    """Draw run ``run``'s shadow training set from the generator of ``(seed, run)``."""
    rng = metric_generator(seed, f"audit-run-{run}")
    included = rng.random(n_targets) < 0.5
    pool_rows = np.sort(rng.choice(n_pool, size=train_size, replace=False)).astype(
        np.int64
    )
    order = rng.permutation(train_size + int(included.sum())).astype(np.int64)
    generator_seed = int(rng.integers(0, 2**31 - 1))
    return RunDraw(run, pool_rows, included, order, generator_seed)


def training_frame(
    draw: RunDraw,
    pool: pd.DataFrame,
    targets: pd.DataFrame,
    *,
    stacked: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The shadow training table of ``draw`` (original columns, shuffled rows).

    ``stacked`` is ``pool`` followed by ``targets`` (``pd.concat(..., ignore_index=True)``),
    when the caller keeps it for many runs: the table is then one row selection.
    """
    if stacked is None:
        stacked = pd.concat([pool, targets], ignore_index=True)
    rows = np.concatenate([draw.pool_rows, len(pool) + np.flatnonzero(draw.included)])
    return stacked.iloc[rows[draw.order]].reset_index(drop=True)


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    """One shadow run's result.

    Attributes
    ----------
    draw : RunDraw
    synthetic : DataFrame or None
        The generator's output; None when it failed twice.
    error : str or None
        The last failure's message (also set when a retry succeeded).
    attempts : int
        1, or 2 when the first attempt failed.
    seconds : float
        Wall seconds of the generator calls (both attempts).
    prepare_seconds : float
        Wall seconds spent drawing and building the training table.
    """

    draw: RunDraw
    synthetic: pd.DataFrame | None
    error: str | None
    attempts: int
    seconds: float
    prepare_seconds: float = 0.0


def _call(
    generator: FitSample, train: pd.DataFrame, n: int, seed: int
) -> tuple[pd.DataFrame | None, str | None, int, float]:
    """Call the generator, once more if it fails; the output must be a non-empty table."""
    error = None
    start = time.perf_counter()
    for attempt in (1, 2):
        try:
            out = generator(train.copy(), n, seed)
            if not isinstance(out, pd.DataFrame):
                error = f"the generator returned {type(out).__name__}, not a pandas DataFrame."
            elif len(out) == 0:
                error = "the generator returned an empty table."
            else:
                return out, error, attempt, time.perf_counter() - start
        except (
            Exception
        ) as exc:  # any failure of user code is reported, the audit goes on
            error = f"{type(exc).__name__}: {exc}"
    return None, error, 2, time.perf_counter() - start


def _picklable(obj: object) -> bool:
    try:
        pickle.dumps(obj)
    except Exception:  # any pickling failure means "use threads"
        return False
    return True


def play(
    generator: FitSample,
    pool: pd.DataFrame,
    targets: pd.DataFrame,
    *,
    n_runs: int,
    train_size: int,
    n_synthetic: int,
    seed: int,
    n_jobs: int = 1,
    max_seconds: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[RunOutcome]:
    """Play the game's shadow runs and yield each outcome in run order.

    Runs go to ``n_jobs`` worker processes when the generator can be pickled (worker
    threads otherwise, which suit command generators); with ``n_jobs=1`` they run in
    this process. No run starts once ``max_seconds`` have passed since the first; the
    runs already started finish and are yielded. ``progress(done, n_runs)`` is called
    after each run.
    """
    start = time.perf_counter()

    def out_of_time() -> bool:
        return max_seconds is not None and time.perf_counter() - start >= max_seconds

    prepared: dict[int, float] = {}
    stacked = pd.concat([pool, targets], ignore_index=True)

    def prepare(run: int) -> tuple[RunDraw, pd.DataFrame]:
        tick = time.perf_counter()
        draw = draw_run(
            seed, run, n_pool=len(pool), train_size=train_size, n_targets=len(targets)
        )
        train = training_frame(draw, pool, targets, stacked=stacked)
        prepared[run] = time.perf_counter() - tick
        return draw, train

    done = 0
    if n_jobs == 1:
        for run in range(n_runs):
            if out_of_time():
                return
            draw, train = prepare(run)
            out, error, attempts, seconds = _call(
                generator, train, n_synthetic, draw.seed
            )
            done += 1
            if progress is not None:
                progress(done, n_runs)
            yield RunOutcome(draw, out, error, attempts, seconds, prepared.pop(run))
        return
    executor: concurrent.futures.Executor
    if _picklable(generator):
        executor = concurrent.futures.ProcessPoolExecutor(max_workers=n_jobs)
    else:
        executor = concurrent.futures.ThreadPoolExecutor(max_workers=n_jobs)
    with executor:
        pending: dict[
            int,
            tuple[
                RunDraw,
                concurrent.futures.Future[
                    tuple[pd.DataFrame | None, str | None, int, float]
                ],
            ],
        ] = {}
        finished: dict[int, RunOutcome] = {}
        next_run, next_yield = 0, 0
        while next_yield < n_runs:
            # keep at most 2 * n_jobs runs in flight, so a budget stops soon
            while next_run < n_runs and len(pending) < 2 * n_jobs and not out_of_time():
                draw, train = prepare(next_run)
                future = executor.submit(
                    _call, generator, train, n_synthetic, draw.seed
                )
                pending[next_run] = (draw, future)
                next_run += 1
            if not pending:
                return
            ready, _ = concurrent.futures.wait(
                [f for _, f in pending.values()],
                return_when=concurrent.futures.FIRST_COMPLETED,
            )
            for run in [r for r, (_, f) in pending.items() if f in ready]:
                draw, future = pending.pop(run)
                try:
                    out, error, attempts, seconds = future.result()
                except Exception as exc:  # a worker that died is a failed run
                    out, error, attempts, seconds = (
                        None,
                        f"{type(exc).__name__}: {exc}",
                        2,
                        0.0,
                    )
                finished[run] = RunOutcome(
                    draw, out, error, attempts, seconds, prepared.pop(run)
                )
                done += 1
                if progress is not None:
                    progress(done, n_runs)
            while next_yield in finished:
                yield finished.pop(next_yield)
                next_yield += 1
            if next_run < n_runs and out_of_time() and not pending:
                return
