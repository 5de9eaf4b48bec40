# SPDX-License-Identifier: BSD-3-Clause
"""The membership game: shadow training sets, generator runs, budget and retries.

One-run style (Steinke, Nasr & Jagielski 2023, "Privacy auditing with one (1) training
run", arXiv 2305.08846): in every shadow run each target joins the training set
independently with probability 1/2, so all targets are audited by the same runs. A
shadow training set is ``train_size`` rows drawn without replacement from the
auxiliary pool plus the included targets, shuffled. Run ``r`` draws everything from a
generator derived from ``(seed, r)`` alone, so any run can be repeated bit for bit,
whatever ran before it or beside it.

A run whose generator raises, returns no table, or runs past ``run_timeout`` is retried
once with a new seed (drawn from ``(seed, run)`` too, so the retry is reproducible), on
the same training set. With a timeout, an in-process callable runs each attempt in a
child process that is killed when the time is up; command and other-interpreter
adapters kill their own subprocess. A :class:`RunCache` keeps each run's output on disk,
keyed by the generator, the training set, ``n`` and the seed, so that a re-run (with a
larger budget, say) reuses the runs already done bit for bit.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import hashlib
import json
import multiprocessing
import os
import pickle
import signal
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._rng import metric_generator
from synthrisk._typing import IntArray
from synthrisk.audit.generators import FitSample, kills_its_own_process
from synthrisk.exceptions import GeneratorError, ParameterError

__all__ = ["RunCache", "RunDraw", "RunOutcome", "draw_run", "play"]


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
    retry_seed : int
        The seed of the second attempt, when the first failed or hung.
    """

    run: int
    pool_rows: IntArray
    included: np.ndarray
    order: IntArray
    seed: int
    retry_seed: int = 0


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
    retry = metric_generator(seed, f"audit-run-{run}-retry")
    retry_seed = int(retry.integers(0, 2**31 - 1))
    return RunDraw(run, pool_rows, included, order, generator_seed, retry_seed)


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
    cached : bool
        True when the output came from the run cache (the generator was not called).
    """

    draw: RunDraw
    synthetic: pd.DataFrame | None
    error: str | None
    attempts: int
    seconds: float
    prepare_seconds: float = 0.0
    cached: bool = False


def _child_main(
    generator: FitSample, train: pd.DataFrame, n: int, seed: int, conn: Any
) -> None:
    """A child process's run: send ``("ok", table)`` or ``("error", message)`` back.

    The child leads its own process group, so that a timeout kills whatever the
    generator started as well.
    """
    if hasattr(os, "setsid"):
        os.setsid()
    try:
        out = generator(train, n, seed)
        conn.send(("ok", out))
    except BaseException as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _context() -> Any:
    """``fork`` where it exists (no pickling: any callable runs), else ``spawn``."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _kill_group(child: Any) -> None:
    """Kill a child process and the process group it leads (POSIX), or just the child."""
    if hasattr(os, "killpg") and child.pid is not None:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            child.kill()
    else:
        child.kill()


def call_in_child(
    generator: FitSample, train: pd.DataFrame, n: int, seed: int, timeout: float
) -> Any:
    """Call the generator in a child process; kill it after ``timeout`` seconds.

    Raises
    ------
    GeneratorError
        When the call runs past ``timeout``, the child dies, or the generator raised.
    """
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    # not a daemon: a generator may start processes of its own (data loaders, pools)
    child = ctx.Process(target=_child_main, args=(generator, train, n, seed, send))
    with warnings.catch_warnings():
        # Python >= 3.12 warns about fork() in a process with threads (BLAS pools, the
        # audit's worker threads); the child only calls the generator and answers
        warnings.filterwarnings(
            "ignore",
            message=r".*fork\(\) may lead to deadlocks",
            category=DeprecationWarning,
        )
        child.start()
    send.close()
    try:
        if not receive.poll(timeout):
            msg = f"the run ran past `run_timeout`={timeout:g} s and was stopped."
            raise GeneratorError(msg)
        try:
            status, payload = receive.recv()
        except (EOFError, OSError):
            child.join(5)
            msg = (
                "the generator's process died without an answer (exit code "
                f"{child.exitcode}); it may have crashed or run out of memory."
            )
            raise GeneratorError(msg) from None
    finally:
        receive.close()
        if child.is_alive():
            _kill_group(child)
        child.join()
    if status != "ok":
        raise GeneratorError(str(payload))
    return payload


class RunCache:
    """Shadow-run outputs kept on disk, so that a re-run reuses the runs already done.

    An output is stored under the SHA-256 of the generator's description, the training
    table (its columns, dtypes and a hash of every value), ``n`` and the run's seed;
    the audit draws the same training table and seed for run ``r`` whatever ``n_runs``
    is, so an audit re-run with more runs calls the generator only for the new ones.
    Outputs are pickled (bit for bit); keep the folder as private as the synthetic data,
    and never point it at files you did not write.

    Parameters
    ----------
    folder : path
        Where the outputs are kept (created when missing).
    generator : str
        What names the generator in the key. Change it (or the folder) when the
        generator's code or settings change: the cache cannot see inside a callable.
    """

    def __init__(self, folder: str | os.PathLike[str], generator: str) -> None:
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            msg = f"`cache` {str(folder)!r} is a file; give a folder for the run cache."
            raise ParameterError(msg)
        self.generator = generator
        self.hits = 0

    def key(self, train: pd.DataFrame, n: int, seed: int) -> str:
        """The cache key of one generator call."""
        values = pd.util.hash_pandas_object(train, index=False).to_numpy()
        digest = hashlib.sha256(values.tobytes())
        digest.update(
            json.dumps(
                [[str(c) for c in train.columns], [str(t) for t in train.dtypes]]
            ).encode()
        )
        head = json.dumps([self.generator, digest.hexdigest(), int(n), int(seed)])
        return hashlib.sha256(head.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.pkl"

    def get(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame | None:
        """The stored output of this call, or None."""
        path = self._path(self.key(train, n, seed))
        if not path.is_file():
            return None
        try:
            with path.open("rb") as handle:
                out = pickle.load(handle)
        except Exception:  # a torn or foreign file is a miss, the run is redone
            return None
        if not isinstance(out, pd.DataFrame):
            return None
        self.hits += 1
        return out

    def put(self, train: pd.DataFrame, n: int, seed: int, out: pd.DataFrame) -> None:
        """Store an output (atomically: a reader never sees half a file)."""
        path = self._path(self.key(train, n, seed))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(out, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _call(
    generator: FitSample,
    train: pd.DataFrame,
    n: int,
    seeds: tuple[int, int],
    timeout: float | None = None,
) -> tuple[pd.DataFrame | None, str | None, int, float]:
    """Call the generator, once more with the retry seed if it fails; the output must be a non-empty table.

    With ``timeout``, each attempt runs in a child process killed when the time is up.
    """
    error = None
    start = time.perf_counter()
    for attempt, seed in enumerate(seeds, start=1):
        try:
            if timeout is None:
                out = generator(train.copy(), n, seed)
            else:
                out = call_in_child(generator, train, n, seed, timeout)
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
    run_timeout: float | None = None,
    cache: RunCache | None = None,
    executor: concurrent.futures.Executor | None = None,
) -> Iterator[RunOutcome]:
    """Play the game's shadow runs and yield each outcome in run order.

    Runs go to ``n_jobs`` worker processes when the generator can be pickled (worker
    threads otherwise, and for command and other-interpreter generators, whose work runs
    in their own subprocesses: a persistent worker per thread); with ``n_jobs=1`` they run in
    this process. With ``run_timeout``, an in-process callable runs each attempt in a
    child process killed after that many seconds (the workers are then threads);
    command adapters are given the timeout by the caller. No run starts once
    ``max_seconds`` have passed since the first; the runs already started finish and
    are yielded. ``progress(done, n_runs)`` is called after each run. Runs found in
    ``cache`` are not run again; completed runs are stored in it. An ``executor`` of the
    caller's (a Dask client's, say) runs them instead, ``n_jobs`` of them at a time
    (twice as many in flight); it is left open.
    """
    timeout = (
        None if run_timeout is None or kills_its_own_process(generator) else run_timeout
    )
    start = time.perf_counter()

    def out_of_time() -> bool:
        return max_seconds is not None and time.perf_counter() - start >= max_seconds

    prepared: dict[int, float] = {}
    stacked = pd.concat([pool, targets], ignore_index=True)

    def prepare(run: int) -> tuple[RunDraw, pd.DataFrame, pd.DataFrame | None]:
        tick = time.perf_counter()
        draw = draw_run(
            seed, run, n_pool=len(pool), train_size=train_size, n_targets=len(targets)
        )
        train = training_frame(draw, pool, targets, stacked=stacked)
        hit = None if cache is None else cache.get(train, n_synthetic, draw.seed)
        prepared[run] = time.perf_counter() - tick
        return draw, train, hit

    trains: dict[int, pd.DataFrame] = {}

    def finish(
        draw: RunDraw,
        train: pd.DataFrame,
        result: tuple[pd.DataFrame | None, str | None, int, float],
    ) -> RunOutcome:
        out, error, attempts, seconds = result
        if cache is not None and out is not None:
            cache.put(train, n_synthetic, draw.seed, out)
        return RunOutcome(draw, out, error, attempts, seconds, prepared.pop(draw.run))

    def from_cache(draw: RunDraw, hit: pd.DataFrame) -> RunOutcome:
        return RunOutcome(draw, hit, None, 1, 0.0, prepared.pop(draw.run), True)

    def seeds_of(draw: RunDraw) -> tuple[int, int]:
        return (draw.seed, draw.retry_seed)

    done = 0
    if n_jobs == 1 and executor is None:
        for run in range(n_runs):
            if out_of_time():
                return
            draw, train, hit = prepare(run)
            if hit is not None:
                outcome = from_cache(draw, hit)
            else:
                outcome = finish(
                    draw,
                    train,
                    _call(generator, train, n_synthetic, seeds_of(draw), timeout),
                )
            done += 1
            if progress is not None:
                progress(done, n_runs)
            yield outcome
        return
    scope: contextlib.AbstractContextManager[object]
    if executor is not None:
        scope = contextlib.nullcontext()  # the caller's: it stays open
    elif (
        timeout is None
        and not kills_its_own_process(generator)  # its work is in its own subprocess
        and _picklable(generator)
    ):
        executor = concurrent.futures.ProcessPoolExecutor(max_workers=n_jobs)
        scope = executor
    else:
        executor = concurrent.futures.ThreadPoolExecutor(max_workers=n_jobs)
        scope = executor
    with scope:
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
                draw, train, hit = prepare(next_run)
                if hit is not None:
                    finished[next_run] = from_cache(draw, hit)
                    done += 1
                    if progress is not None:
                        progress(done, n_runs)
                    next_run += 1
                    continue
                future = executor.submit(
                    _call, generator, train, n_synthetic, seeds_of(draw), timeout
                )
                pending[next_run] = (draw, future)
                trains[next_run] = train
                next_run += 1
            while next_yield in finished:
                yield finished.pop(next_yield)
                next_yield += 1
            if not pending:
                if next_yield < next_run or (next_run < n_runs and not out_of_time()):
                    continue
                return
            ready, _ = concurrent.futures.wait(
                [f for _, f in pending.values()],
                return_when=concurrent.futures.FIRST_COMPLETED,
            )
            for run in [r for r, (_, f) in pending.items() if f in ready]:
                draw, future = pending.pop(run)
                result: tuple[pd.DataFrame | None, str | None, int, float]
                try:
                    result = future.result()
                except Exception as exc:  # a worker that died is a failed run
                    result = (None, f"{type(exc).__name__}: {exc}", 2, 0.0)
                finished[run] = finish(draw, trains.pop(run), result)
                done += 1
                if progress is not None:
                    progress(done, n_runs)
            while next_yield in finished:
                yield finished.pop(next_yield)
                next_yield += 1
            if next_run < n_runs and out_of_time() and not pending:
                return
