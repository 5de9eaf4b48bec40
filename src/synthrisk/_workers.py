# SPDX-License-Identifier: BSD-3-Clause
"""The metrics of one run side by side, in worker processes.

A default run is fifteen independent metrics on the same tables. One metric alone
rarely keeps every core busy: much of it is numpy, scipy and Python on one core
between the multi-core neighbour searches. :func:`evaluate` therefore hands the
metrics to a few worker processes (``workers``; ``"auto"`` by default) when that is
safe and pays:

* the workers are **forked** from the process that holds the prepared tables, so
  they start at once and read the encoded arrays without copying them (Linux only:
  other systems run the metrics one after another);
* numba's threading layer must survive a fork. GNU OpenMP does not, so when nothing
  has chosen a layer yet (no ``NUMBA_THREADING_LAYER``, no parallel kernel run in
  this process), ``import synthrisk`` asks numba for a fork-safe one (``forksafe``:
  TBB if installed, else numba's own workqueue, which runs one thread's kernels at a
  time: synthrisk's threaded paths take turns through :func:`kernel_guard` or run
  one after another). A process already running OpenMP (a layer chosen by the user,
  or kernels run before synthrisk was imported) runs the metrics one after another;
* each worker runs numba's kernels on its share of the cores, and metrics that share
  an intermediate result (:meth:`~synthrisk.schema.Tables.derived`, for example the
  synthetic-to-real search of both DCR metrics) run in the same worker, longest
  first (:attr:`~synthrisk.metrics.Metric.cost`).

The results are those of a run in one process, bit for bit (each metric draws from
its own random stream, and the kernels' results do not depend on their thread
count); only the metrics' timings differ. A worker that dies (killed for memory, for
example) costs nothing but time: the metrics it had not returned run again here.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import logging
import multiprocessing
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numba
import numpy as np

from synthrisk._typing import Backend
from synthrisk.exceptions import SynthriskError
from synthrisk.settings import Workers

if TYPE_CHECKING:
    from synthrisk.metrics._base import Metric
    from synthrisk.results import MetricResult
    from synthrisk.schema.tables import Tables

__all__ = [
    "fork_safe_kernels",
    "forked_map",
    "kernel_guard",
    "plan_workers",
    "prefer_fork_safe_layer",
    "run_in_workers",
    "threadsafe_kernels",
]

logger = logging.getLogger(__name__)

#: most worker processes ``"auto"`` starts: more rarely pays for the memory
_MAX_AUTO_WORKERS = 4
#: ``"auto"`` runs in one process below this many rows in all tables together
#: (forking and returning the results cost tens of milliseconds)
_MIN_AUTO_ROWS = 20_000
#: bytes a metric may hold at once per byte of the encoded tables (copies, orders,
#: per-record arrays): ``"auto"`` keeps ``workers`` times this under half the free memory
_MEMORY_PER_ENCODED_BYTE = 16


def prefer_fork_safe_layer() -> None:
    """Ask numba for a fork-safe threading layer, unless the layer is chosen already.

    ``import synthrisk`` calls this. It changes nothing when ``NUMBA_THREADING_LAYER``
    or ``numba.config.THREADING_LAYER`` names a layer, or when a parallel kernel has
    already run in this process (numba then keeps the layer it launched).
    """
    try:
        numba.threading_layer()  # type: ignore[attr-defined]
    except ValueError:  # no parallel kernel has run: the layer is still to be chosen
        chosen = str(numba.config.THREADING_LAYER)  # type: ignore[attr-defined]
        if chosen == "default" and "NUMBA_THREADING_LAYER" not in os.environ:
            numba.config.THREADING_LAYER = "forksafe"  # type: ignore[attr-defined]


def fork_safe_kernels() -> bool:
    """Whether processes forked now may run numba's parallel kernels."""
    prefer_fork_safe_layer()
    try:
        layer = str(numba.threading_layer())  # type: ignore[attr-defined]
    except ValueError:  # to be launched with the configured choice
        chosen = str(numba.config.THREADING_LAYER)  # type: ignore[attr-defined]
        # "forksafe" and "safe" exclude GNU OpenMP; "threadsafe" may pick it
        return chosen in ("forksafe", "safe", "workqueue", "tbb")
    return layer in ("workqueue", "tbb")


def threadsafe_kernels() -> bool:
    """Whether two threads may run numba's parallel kernels at the same time.

    Numba's workqueue layer aborts the process when they do; OpenMP and TBB do not.
    Runs a tiny parallel kernel first if none has run (that chooses the layer).
    """
    if os.cpu_count() == 1:
        return False
    try:
        layer = str(numba.threading_layer())  # type: ignore[attr-defined]
    except ValueError:
        _touch()
        layer = str(numba.threading_layer())  # type: ignore[attr-defined]
    return layer in ("omp", "tbb")


@numba.njit(parallel=True, cache=True)
def _count(out: np.ndarray) -> None:  # pragma: no cover - compiled
    for i in numba.prange(out.shape[0]):
        out[i] = i


def _touch() -> None:
    """Run one parallel kernel: numba chooses its threading layer at the first."""
    _count(np.zeros(2, dtype=np.int64))


_KERNEL_LOCK = threading.Lock()


@contextlib.contextmanager
def kernel_guard() -> Iterator[None]:
    """Serialise parallel kernels of several threads where the layer needs it.

    With OpenMP or TBB this does nothing; with numba's workqueue layer (not thread
    safe) one thread at a time runs its kernels.
    """
    if threadsafe_kernels():
        yield
        return
    with _KERNEL_LOCK:
        yield


def plan_workers(
    requested: Workers,
    tables: Tables,
    metrics: Sequence[Metric],
    *,
    backend: Backend | None,
) -> int:
    """How many worker processes run these metrics (1: this process, one by one).

    ``requested`` is ``"auto"`` or a number; either way the run stays in this
    process where workers are not possible: not on Linux, a Dask or torch backend, a
    process whose numba threading layer cannot fork, or a single group of metrics.
    ``"auto"`` also stays for small tables, and caps the workers by the cores
    (at most 4) and by the free memory.
    """
    from synthrisk.settings import get_config

    if requested == 1:
        return 1
    name = get_config().backend if backend is None else backend
    if (
        not sys.platform.startswith("linux")
        or "fork" not in multiprocessing.get_all_start_methods()
        or name not in ("auto", "numba", "numpy")
        or not _is_main_process()
        # choose numba's layer now, even when this run stays here: a later, larger
        # run of this process can then still fork
        or not fork_safe_kernels()
    ):
        return 1
    groups = len(_groups(metrics))
    cores = os.cpu_count() or 1
    if requested == "auto":
        frames = [
            f for f in (tables.real, tables.synthetic, tables.holdout) if f is not None
        ]
        rows = sum(len(frame) for frame in frames)
        if cores < 2 or rows < _MIN_AUTO_ROWS:
            return 1
        n = min(cores, groups, _MAX_AUTO_WORKERS)
        free = _free_memory()
        if free is not None:
            need = _MEMORY_PER_ENCODED_BYTE * _encoded_bytes(tables)
            n = min(n, max(1, int(free // 2 // max(need, 1))))
    else:
        n = min(requested, groups)
    return n if n >= 2 else 1


def _is_main_process() -> bool:
    return multiprocessing.parent_process() is None


def _free_memory() -> int | None:
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _encoded_bytes(tables: Tables) -> int:
    """The encoded tables' size: 8 bytes a cell (numbers as float64, codes as int64)."""
    columns = len(tables.schema.columns)
    frames = [
        f for f in (tables.real, tables.synthetic, tables.holdout) if f is not None
    ]
    return 8 * columns * sum(len(frame) for frame in frames)


def _groups(metrics: Sequence[Metric]) -> list[list[int]]:
    """Positions of the metrics, grouped by :attr:`Metric.shares`, longest first."""
    by_key: dict[str, list[int]] = {}
    groups: list[list[int]] = []
    for i, metric in enumerate(metrics):
        key = metric.shares
        if key and key in by_key:
            by_key[key].append(i)
            continue
        group = [i]
        groups.append(group)
        if key:
            by_key[key] = group
    # stable: equal costs keep the run's order
    return sorted(groups, key=lambda g: -sum(metrics[i].cost for i in g))


@dataclasses.dataclass(frozen=True)
class _Job:
    tables: Tables
    metrics: Sequence[Metric]
    seed: int
    working_memory: float | None
    backend: Backend | None
    skip_inapplicable: bool


#: the run the forked workers read (set in the parent just before the fork)
_JOB: _Job | None = None


def _start_worker(threads: int) -> None:
    most = int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]
    numba.set_num_threads(max(1, min(threads, most)))


#: a Python warning raised in a worker: ``(message, category, filename, lineno)``
_Warned = tuple[str, type[Warning], str, int]


def _run_group(
    positions: list[int],
) -> list[tuple[int, MetricResult, list[_Warned]]]:
    job = _JOB
    if job is None:  # pragma: no cover - a worker forked by run_in_workers has one
        msg = "no run to work on in this worker process."
        raise RuntimeError(msg)
    out = []
    for i in positions:
        # the filters stay the parent's; what they let through is raised again there
        with warnings.catch_warnings(record=True) as caught:
            result = _run_one(job, i)
        warned = [(str(w.message), w.category, w.filename, w.lineno) for w in caught]
        out.append((i, result, warned))
    return out


def _run_one(job: _Job, i: int) -> MetricResult:
    return job.metrics[i].run_with(
        job.tables,
        seed=job.seed,
        working_memory=job.working_memory,
        backend=job.backend,
        progress=None,
        skip_inapplicable=job.skip_inapplicable,
    )


def run_in_workers(
    tables: Tables,
    metrics: Sequence[Metric],
    n_workers: int,
    *,
    seed: int,
    working_memory: float | None,
    backend: Backend | None,
    skip_inapplicable: bool,
) -> Iterator[tuple[int, MetricResult]]:
    """Yield ``(position, result)`` of every metric as its worker returns it.

    ``n_workers`` forked processes (see the module docstring). A metric's error is
    raised here as it would be in this process (the other workers are stopped at
    once), and so are the Python warnings its worker let through (with this
    process's filters, inherited by the fork). If a worker dies, the metrics not yet
    returned run here, one after another, with a warning in the log.
    """
    global _JOB
    # encode before forking: the workers share the arrays instead of each encoding
    # (an input that cannot be encoded fails in each metric, as in one process)
    with contextlib.suppress(SynthriskError):
        for name in ("real", "synthetic", "holdout"):
            if getattr(tables, name) is not None:
                tables.encoded(name)
    job = _Job(tables, metrics, seed, working_memory, backend, skip_inapplicable)
    groups = _groups(metrics)
    threads = max(1, (os.cpu_count() or 1) // n_workers)
    done: set[int] = set()
    finished = False
    _JOB = job
    executor = concurrent.futures.ProcessPoolExecutor(
        max_workers=n_workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_start_worker,
        initargs=(threads,),
    )
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns on forking a process with threads (numba's and
            # the BLAS's idle pools here; the workers start no thread of theirs first)
            warnings.simplefilter("ignore", DeprecationWarning)
            futures = [executor.submit(_run_group, group) for group in groups]
        try:
            for future in concurrent.futures.as_completed(futures):
                for i, result, warned in future.result():
                    for message, category, filename, lineno in warned:
                        warnings.warn_explicit(message, category, filename, lineno)
                    done.add(i)
                    yield i, result
        except concurrent.futures.process.BrokenProcessPool as exc:
            logger.warning(
                "a worker process died (%s); the metrics it had not returned run in "
                "this process",
                exc,
            )
            _stop(executor)
            for i in range(len(metrics)):
                if i not in done:
                    yield i, _run_one(job, i)
        finished = True
    finally:
        if finished:
            # every result is in: the workers exit now (no process outlives the run)
            executor.shutdown(wait=True)
        else:
            # an error, an interrupt or an abandoned generator: stop the workers now
            # rather than after the metrics they are running
            _stop(executor)
        _JOB = None


def _stop(executor: concurrent.futures.ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the worker processes."""
    # the executor forgets its processes when shut down: take them first
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.terminate()


T = TypeVar("T")

#: the function :func:`forked_map`'s workers call (set in the parent before the fork)
_MAPPED: Callable[[int], Any] | None = None


def _call_mapped(i: int) -> Any:
    if _MAPPED is None:  # pragma: no cover - a worker forked by forked_map has one
        msg = "no function to call in this worker process."
        raise RuntimeError(msg)
    return _MAPPED(i)


def forked_map(
    function: Callable[[int], T], count: int, *, min_count: int = 4
) -> list[T]:
    """``[function(i) for i in range(count)]``, in forked worker processes where that pays.

    For CPU-bound pure-Python work that numba does not run (the HTML report's plots):
    ``function`` may be a closure (the workers are forked, nothing is pickled but the
    results), must not run numba's parallel kernels, and must give the same result
    wherever it runs. The workers follow the ``workers`` setting (1: this process;
    ``"auto"``: one per core, at most 4), on Linux, for at least ``min_count`` items;
    otherwise, or if a worker dies, the calls run here in order.
    """
    from synthrisk.settings import get_config

    global _MAPPED
    requested = get_config().workers
    limit = _MAX_AUTO_WORKERS if requested == "auto" else requested
    n_workers = min(os.cpu_count() or 1, count, limit)
    if (
        n_workers < 2
        or count < min_count
        or not sys.platform.startswith("linux")
        or "fork" not in multiprocessing.get_all_start_methods()
        or not _is_main_process()
    ):
        return [function(i) for i in range(count)]
    _MAPPED = function
    executor = concurrent.futures.ProcessPoolExecutor(
        max_workers=n_workers, mp_context=multiprocessing.get_context("fork")
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # see run_in_workers
            futures = [executor.submit(_call_mapped, i) for i in range(count)]
        try:
            out = [future.result() for future in futures]
        except concurrent.futures.process.BrokenProcessPool as exc:
            logger.warning("a worker process died (%s); the rest runs here", exc)
            _stop(executor)
            return [function(i) for i in range(count)]
        executor.shutdown(wait=True)
        return out
    finally:
        _stop(executor)
        _MAPPED = None
