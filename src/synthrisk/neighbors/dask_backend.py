# SPDX-License-Identifier: BSD-3-Clause
"""Distributed neighbour search on a Dask cluster (or Dask's local threaded scheduler).

The query rows are cut into partitions; every partition is one task that runs the
numba kernel against the reference. Two layouts of the reference:

* **broadcast** (the reference fits a worker's memory): the reference is scattered
  once to every worker (``client.scatter(..., broadcast=True)``) and each query task
  searches all of it;
* **partitioned** (it does not): the reference is cut into partitions too, every
  (query partition, reference partition) pair is a task returning its local top k
  with *global* reference positions, and a tree of merge tasks keeps the k smallest
  ``(distance, position)`` pairs per query row.

Both give exactly the numba backend's answer: every pair's distance is computed by
the same kernel in the same term order, and the merge orders by distance, then by
global reference position, so ties still go to the lowest position.

Task inputs are partitions (scattered futures with a client, ``dask.delayed``
literals with the threaded scheduler), never whole arrays captured in closures, so
a distributed scheduler ships each partition once. Numeric partitions may be
float32 and code partitions int32 (compact storage); they are widened to float64 /
int64 inside the task, so results equal the in-memory search.

Where the tasks run (:class:`DaskSettings`, :func:`dask_settings`, the client, the
compute scope) is :mod:`synthrisk.neighbors._compute`; those names are importable
from here too. Callers outside this package search through
:func:`synthrisk.neighbors.nearest_neighbors` and :func:`synthrisk.neighbors.map_neighbors`.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import os
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numba
import numpy as np

from synthrisk._optional import import_optional
from synthrisk._typing import FloatArray, IntArray
from synthrisk._workers import kernel_guard, threadsafe_kernels
from synthrisk.exceptions import ClusterError, ParameterError
from synthrisk.neighbors import numba_backend
from synthrisk.neighbors._compute import (
    DaskSettings,
    active_client,
    compute_scope,
    dask_compute,
    dask_settings,
    get_dask_settings,
    local_cluster_size,
)
from synthrisk.neighbors._protocol import Search
from synthrisk.neighbors._spec import DistanceSpec, column_ranges, distance_spec
from synthrisk.schema.partitioned import Partitions, split_rows

__all__ = [
    "ClusterError",
    "DaskSettings",
    "Partitions",
    "active_client",
    "compute_scope",
    "dask_compute",
    "dask_settings",
    "get_dask_settings",
    "kneighbors",
    "kneighbors_partitioned",
    "local_cluster_size",
    "merge_topk",
    "split_rows",
]

#: share of a worker's memory limit the broadcast reference may take
_BROADCAST_SHARE = 0.25
#: number of partial results merged by one reduction task
_MERGE_FAN_IN = 4
#: times a query partition is resubmitted after its inputs were lost with a worker
_RESUBMITS = 3


def _widen(part: tuple[np.ndarray, ...]) -> tuple[FloatArray, IntArray]:
    numeric, codes = part[0], part[1]
    return (
        np.ascontiguousarray(numeric, dtype=np.float64),
        np.ascontiguousarray(codes, dtype=np.int64),
    )


def _on_worker() -> bool:
    """True inside a task running on a ``dask.distributed`` worker."""
    try:
        from distributed import get_worker
    except ImportError:  # pragma: no cover - the dask extra brings distributed
        return False
    try:
        get_worker()
    except ValueError:
        return False
    return True


def _worker_threads(most: int) -> int:
    """The threads of the ``dask.distributed`` worker running this task (at most ``most``)."""
    from distributed import get_worker

    try:
        threads = int(get_worker().state.nthreads)
    except (ValueError, AttributeError, TypeError):  # pragma: no cover - defensive
        return 1
    return max(1, min(threads, most))


#: the projection walk's pilot choices of the latest searches, in this process (a
#: worker): each search's later query partitions reuse its first one's choice
_PILOTS: collections.OrderedDict[Any, dict[tuple[Any, ...], int]] = (
    collections.OrderedDict()
)
_PILOTS_LOCK = threading.Lock()
_PILOTS_KEPT = 16


def _pilots_of(key: Any) -> dict[tuple[Any, ...], int] | None:
    """The pilot choices of search ``key`` (None: not shared)."""
    if key is None:
        return None
    with _PILOTS_LOCK:
        pilots = _PILOTS.setdefault(key, {})
        _PILOTS.move_to_end(key)
        while len(_PILOTS) > _PILOTS_KEPT:
            _PILOTS.popitem(last=False)
        return pilots


def _search(
    query: tuple[np.ndarray, ...],
    reference: tuple[np.ndarray, ...],
    spec: DistanceSpec,
    k: int,
    working_memory: float | None,
    offset: int,
    prescale: FloatArray | None = None,
    pilot_key: Any = None,
) -> tuple[FloatArray, IntArray]:
    """Task: top-k of one query partition in one reference partition (global positions).

    A reference partition of three arrays ``(numeric, codes, labels)`` is sorted by
    ``labels`` and its neighbours are returned as labels instead of positions (see
    :func:`kneighbors_tables`'s ``order``). ``prescale`` divides the numeric values of
    both sides first (the Gower distance's column ranges). The tasks of one search
    in one reference partition share ``pilot_key``: the projection walk's pilot
    (which column to walk; the neighbours are the same with any) runs in the first
    of them on each worker, and the others reuse its choice.
    """
    q_num, q_cat = _widen(query)
    r_num, r_cat = _widen(reference)
    labels = reference[2] if len(reference) > 2 else None
    if prescale is not None:
        q_num = np.ascontiguousarray(q_num / prescale)
        r_num = np.ascontiguousarray(r_num / prescale)
    k_local = min(k, r_num.shape[0])
    if q_num.shape[0] == 0 or k_local == 0:
        return np.empty((q_num.shape[0], 0)), np.empty((q_num.shape[0], 0), np.int64)
    search = Search(q_num, q_cat, r_num, r_cat, spec, k_local, working_memory)
    # numba's workqueue layer cannot run kernels of two threads at once: then the
    # tasks of this process take turns (synthrisk._workers.kernel_guard)
    with kernel_guard():
        if _on_worker():
            # the worker's threads are the parallelism, so that workers sharing a
            # machine do not each start a thread per core (numba's count is per
            # calling thread): one core per task, or the worker's cores for each of
            # its tasks in turn where they cannot run side by side
            previous = numba.get_num_threads()
            numba.set_num_threads(
                1 if threadsafe_kernels() else _worker_threads(previous)
            )
            try:
                distances, indices = numba_backend.kneighbors(
                    search, pilots=_pilots_of(pilot_key)
                )
            finally:
                numba.set_num_threads(previous)
        else:
            distances, indices = numba_backend.kneighbors(
                search, pilots=_pilots_of(pilot_key)
            )
    if labels is not None:
        indices = np.asarray(labels, dtype=np.int64)[indices]
    elif offset:
        indices += offset
    return distances, indices


def merge_topk(
    *results: tuple[FloatArray, IntArray], k: int
) -> tuple[FloatArray, IntArray]:
    """Keep the k smallest ``(distance, position)`` pairs per row of several partial results.

    Missing distances (NaN) order like +inf, as in the kernels, and ties go to the
    lowest position; the result is the search over the union of the references.
    """
    distances = np.concatenate([r[0] for r in results], axis=1)
    indices = np.concatenate([r[1] for r in results], axis=1)
    key = np.where(np.isnan(distances), np.inf, distances)
    order = np.lexsort((indices, key), axis=-1)[:, :k]
    return (
        np.take_along_axis(distances, order, axis=1),
        np.take_along_axis(indices, order, axis=1),
    )


def _merge_task(
    k: int, *results: tuple[FloatArray, IntArray]
) -> tuple[FloatArray, IntArray]:
    return merge_topk(*results, k=k)


def _worker_memory(client: Any) -> float:
    """Smallest memory limit among the client's workers, in bytes (inf when unknown)."""
    try:
        workers = client.scheduler_info()["workers"].values()
        limits = [w.get("memory_limit") or math.inf for w in workers]
    except (KeyError, AttributeError, OSError):  # pragma: no cover - defensive
        return math.inf
    return float(min(limits)) if limits else math.inf


@dataclasses.dataclass(frozen=True)
class _Job:
    """One partitioned search: the arguments of :func:`kneighbors_partitioned`."""

    query: Partitions
    reference: Partitions
    spec: DistanceSpec
    k: int
    working_memory: float | None
    broadcast: bool | None
    progress: Callable[[int], None] | None
    #: numeric values of both sides are divided by this inside the tasks (Gower)
    prescale: FloatArray | None = None
    #: task run on every query partition's ``(distances, indices)``; its results
    #: come back instead of the neighbours (see :func:`kneighbors_tables_map`)
    finish: Callable[..., Any] | None = None
    finish_args: tuple[Any, ...] = ()
    #: keep the finished results on the cluster: their futures come back
    keep: bool = False


def kneighbors_partitioned(
    query: Partitions,
    reference: Partitions,
    spec: DistanceSpec,
    *,
    k: int,
    working_memory: float | None = None,
    client: Any | None = None,
    broadcast: bool | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[FloatArray, IntArray]:
    """k nearest reference rows of every query row, query (and reference) partitions as tasks.

    Parameters
    ----------
    query, reference : Partitions
        Encoded rows; partitions may be in-memory tuples or futures on ``client``.
    spec : DistanceSpec
        The distance (see :func:`synthrisk.neighbors.distance_spec`).
    k : int
        Number of neighbours, at most ``reference.n_rows``.
    working_memory : float, default=None
        MiB budget of one block inside a task.
    client : dask.distributed.Client, default=None
        Cluster to run on; None uses the threaded scheduler.
    broadcast : bool, default=None
        Ship the whole reference to every worker (True) or search reference
        partitions and merge (False); None broadcasts when the reference takes at
        most a quarter of the smallest worker's memory limit (always with the
        threaded scheduler, if it is one partition).
    progress : callable, default=None
        Called with the number of query rows finished, as query partitions complete.

    Returns
    -------
    distances : ndarray of shape (n_query, k)
    indices : ndarray of shape (n_query, k)
        Global reference positions, ties to the lowest.
    """
    job = _Job(query, reference, spec, k, working_memory, broadcast, progress)
    return _run(job, client)


def _run(job: _Job, client: Any | None) -> tuple[FloatArray, IntArray]:
    """:func:`kneighbors_partitioned` of ``job`` on ``client`` (None: threads).

    On a cluster each partition's neighbours are copied into the output as they
    arrive, so the driver never holds them twice (a list and its concatenation).
    """
    if client is None or job.finish is not None or job.keep:
        return _stack(_results(job, client), job.k)
    n = job.query.n_rows
    distances = np.empty((n, job.k))
    indices = np.empty((n, job.k), dtype=np.int64)
    starts = np.r_[0, np.cumsum(job.query.rows, dtype=np.int64)]

    def sink(i: int, result: tuple[FloatArray, IntArray]) -> None:
        if starts[i + 1] > starts[i]:
            distances[starts[i] : starts[i + 1]] = result[0]
            indices[starts[i] : starts[i + 1]] = result[1]

    _results(job, client, sink)
    return distances, indices


def _results(
    job: _Job, client: Any | None, sink: Callable[[int, Any], None] | None = None
) -> list[Any]:
    """The result of every query partition of ``job``, in order.

    With ``sink`` (on a cluster), ``sink(i, result)`` takes each partition's result
    as it arrives and the list holds None.
    """
    if job.k > job.reference.n_rows:
        msg = f"`k` must be at most the number of reference rows ({job.reference.n_rows}); got {job.k}."
        raise ParameterError(msg)
    if job.query.n_rows == 0:
        return []
    if client is None:
        return _threaded(job)
    return _distributed(client, job, sink)


def _threaded(job: _Job) -> list[Any]:
    query, reference, k = job.query, job.reference, job.k
    dask = import_optional("dask", extra="dask")
    from dask.delayed import Delayed

    delayed = dask.delayed
    if job.broadcast or (job.broadcast is None and len(reference.parts) == 1):
        whole = (
            reference.parts[0]
            if len(reference.parts) == 1
            else delayed(_concat, pure=True)(*reference.parts)
        )
        ref_parts, offsets = [whole], [0]
    else:
        ref_parts, offsets = reference.parts, reference.offsets
    token = uuid.uuid4().hex
    ref_nodes = [
        p if isinstance(p, Delayed) else delayed(p, name=f"synthrisk-ref-{token}-{i}")
        for i, p in enumerate(ref_parts)
    ]
    search = delayed(_search, pure=False)
    merge = delayed(_merge_task, pure=False)
    tasks = []
    for i, part in enumerate(query.parts):
        q = (
            part
            if isinstance(part, Delayed)
            else delayed(part, name=f"synthrisk-query-{token}-{i}")
        )
        partial = [
            search(
                q, r, job.spec, k, job.working_memory, off, job.prescale, (token, off)
            )
            for r, off in zip(ref_nodes, offsets, strict=True)
        ]
        final = _reduce(partial, lambda group: merge(k, *group))
        if job.finish is not None:
            final = delayed(job.finish, pure=False)(final, *job.finish_args)
        tasks.append(final)
    # one query partition per compute call keeps progress reporting live
    out = []
    batch = max(1, len(tasks) // 20)
    for start in range(0, len(tasks), batch):
        chunk = dask.compute(*tasks[start : start + batch], scheduler="threads")
        out.extend(chunk)
        if job.progress is not None:
            job.progress(int(sum(query.rows[start : start + batch])))
    return out


def _distributed(
    client: Any, job: _Job, sink: Callable[[int, Any], None] | None = None
) -> list[Any]:
    distributed = import_optional("distributed", extra="dask")
    query, reference, k, broadcast = job.query, job.reference, job.k, job.broadcast
    if broadcast is None:
        broadcast = reference.nbytes <= _BROADCAST_SHARE * _worker_memory(client)
    local_reference = not any(
        isinstance(p, distributed.Future) for p in reference.parts
    )
    ref_state: dict[str, Any] = {}
    token = uuid.uuid4().hex  # this search's pilot choices, shared by its tasks

    def place_reference() -> None:
        if broadcast and local_reference:
            whole = (
                reference.parts[0]
                if len(reference.parts) == 1
                else _concat(*reference.parts)
            )
            ref_state["parts"] = client.scatter([whole], broadcast=True, hash=False)
            ref_state["offsets"] = [0]
        elif broadcast:
            whole = client.submit(_concat, *reference.parts, pure=False)
            client.replicate([whole])
            ref_state["parts"], ref_state["offsets"] = [whole], [0]
        else:
            ref_state["parts"] = _on_cluster(client, reference.parts)
            ref_state["offsets"] = reference.offsets

    def merge(group: list[Any]) -> Any:
        return client.submit(_merge_task, k, *group, pure=False)

    owner: dict[Any, int] = {}

    def submit(i: int) -> Any:
        [part] = _on_cluster(client, [query.parts[i]])
        partial = [
            client.submit(
                _search,
                part,
                r,
                job.spec,
                k,
                job.working_memory,
                off,
                job.prescale,
                (token, off),
                pure=False,
            )
            for r, off in zip(ref_state["parts"], ref_state["offsets"], strict=True)
        ]
        final = _reduce(partial, merge)
        if job.finish is not None:
            final = client.submit(job.finish, final, *job.finish_args, pure=False)
        owner[final] = i
        return final

    place_reference()
    pending = distributed.as_completed(
        [submit(i) for i in range(len(query.parts))], loop=client.loop
    )
    results: list[Any] = [None] * len(query.parts)
    attempts = [0] * len(query.parts)
    for future in pending:
        i = owner.pop(future)
        try:
            kept = job.keep and future.status == "finished"
            result = future if kept else future.result()
        except Exception:
            # a partition lost with its worker: scattered inputs cannot be rebuilt
            # by Dask, so scatter them again and resubmit this query partition
            attempts[i] += 1
            if attempts[i] > _RESUBMITS:
                raise
            if any(f.status != "finished" for f in ref_state["parts"]):
                place_reference()
            pending.add(submit(i))
            continue
        if sink is None:
            results[i] = result
        else:
            sink(i, result)
        del result
        if not job.keep:
            future.release()
        if job.progress is not None:
            job.progress(query.rows[i])
    return results


def _on_cluster(client: Any, parts: Sequence[Any]) -> list[Any]:
    """Futures of ``parts``: in-memory partitions are scattered (each once)."""
    distributed = import_optional("distributed", extra="dask")
    local = [i for i, p in enumerate(parts) if not isinstance(p, distributed.Future)]
    out = list(parts)
    if local:
        futures = client.scatter([parts[i] for i in local], hash=False)
        for i, future in zip(local, futures, strict=True):
            out[i] = future
    return out


def _reduce(partial: list[Any], merge: Callable[[list[Any]], Any]) -> Any:
    """A tree of merge tasks over partial results (fan-in :data:`_MERGE_FAN_IN`)."""
    while len(partial) > 1:
        partial = [
            merge(partial[i : i + _MERGE_FAN_IN])
            for i in range(0, len(partial), _MERGE_FAN_IN)
        ]
    return partial[0]


def _concat(*parts: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """One partition of several; labelled partitions stay sorted by their labels."""
    numeric = np.concatenate([p[0] for p in parts])
    codes = np.concatenate([p[1] for p in parts])
    if len(parts[0]) < 3:
        return numeric, codes
    labels = np.concatenate([p[2] for p in parts])
    order = np.argsort(labels, kind="stable")
    return numeric[order], codes[order], labels[order]


def _ranked(
    part: tuple[np.ndarray, np.ndarray], ranks: IntArray
) -> tuple[np.ndarray, np.ndarray, IntArray]:
    """Task: one reference partition sorted by the ranks of its rows, with the ranks."""
    order = np.argsort(ranks, kind="stable")
    return part[0][order], part[1][order], np.asarray(ranks, dtype=np.int64)[order]


def _stack(results: list[Any], k: int) -> tuple[FloatArray, IntArray]:
    if not results:
        return np.empty((0, k)), np.empty((0, k), dtype=np.int64)
    return (
        np.concatenate([r[0] for r in results]),
        np.concatenate([r[1] for r in results]),
    )


#: query partitions per worker thread: enough to even out the load, few enough that
#: each task's fixed cost (preparing the whole reference for the kernel: grouping,
#: sorting columns) stays small beside its search
_PARTS_PER_THREAD = 4


def _threads(client: Any | None) -> int:
    """Worker threads of ``client``'s cluster; this machine's cores without one."""
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except (OSError, TimeoutError, AttributeError):  # cannot say: assume cores
            pass
    return os.cpu_count() or 1


def _partition_rows(n_rows: int, client: Any | None = None) -> int:
    """Rows per query partition: :attr:`DaskSettings.partition_rows`, else 4 per thread."""
    parts = _PARTS_PER_THREAD * _threads(client)
    return get_dask_settings().partition_rows or max(1024, -(-n_rows // parts))


def kneighbors(search: Search) -> tuple[FloatArray, IntArray]:
    """:meth:`NeighborBackend.kneighbors` as Dask tasks.

    Runs on the configured or default ``dask.distributed`` client when there is one
    (:func:`active_client`), otherwise on Dask's threaded scheduler. Query rows are
    cut into partitions of :attr:`DaskSettings.partition_rows` rows (default: 4 per
    worker thread, at least 1024 rows each).
    """
    client = active_client()
    r_num, r_cat = search.r_num, search.r_cat
    query = split_rows(
        search.q_num, search.q_cat, _partition_rows(search.q_num.shape[0], client)
    )
    reference = split_rows(r_num, r_cat, max(r_num.shape[0], 1))
    ref_rows = get_dask_settings().reference_rows
    broadcast = None
    if ref_rows is None and client is not None:
        # too large to broadcast: partitions of at most the broadcast share
        limit = _BROADCAST_SHARE * _worker_memory(client)
        if reference.nbytes > limit:
            ref_rows = max(1, int(r_num.shape[0] * limit // reference.nbytes))
    if ref_rows is not None and ref_rows < r_num.shape[0]:
        reference = split_rows(r_num, r_cat, ref_rows)
        broadcast = False
    return kneighbors_partitioned(
        query,
        reference,
        search.spec,
        k=search.k,
        working_memory=search.working_memory,
        client=client,
        broadcast=broadcast,
        progress=search.progress,
    )


def kneighbors_tables(
    query: Any,
    reference: Any,
    *,
    k: int,
    distance: str,
    scale: FloatArray | None,
    working_memory: float | None,
    progress: Callable[[int], None] | None,
    missing: str = "mismatch",
    order: IntArray | None = None,
) -> tuple[FloatArray, IntArray]:
    """Search with a partitioned table on either side (``synthrisk.schema.partitioned``).

    The DCR and Gower distances are supported, with the in-memory results. Without
    ``scale``, the DCR distance takes the reference's ranges and the Gower distance
    the ranges over query ∪ reference, both from the distributed domain reductions
    of the partitioned sides (exactly the in-memory ranges); the Gower distance
    divides every value by its range inside the tasks, as the in-memory search does
    before it starts. An in-memory side is cut into partitions and scattered.

    Parameters
    ----------
    missing : {"mismatch", "anonymeter"}, default="mismatch"
        Missing-value rule of the Gower distance.
    order : ndarray of shape (n_reference,), default=None
        A permutation of the reference rows: the search runs as if on
        ``reference.take(order)`` — returned indices are positions in ``order`` and
        ties go to the lowest of them — without moving the rows (each reference
        partition is sorted by its rows' ranks on its worker). Used for seeded random
        tie-breaking.
    """
    job, client = _tables_job(
        query,
        reference,
        k=k,
        distance=distance,
        scale=scale,
        working_memory=working_memory,
        progress=progress,
        missing=missing,
        order=order,
    )
    return _run(job, client)


def kneighbors_tables_map(
    query: Any,
    reference: Any,
    finish: Callable[..., Any],
    *finish_args: Any,
    k: int,
    scale: FloatArray | None,
    working_memory: float | None,
    progress: Callable[[int], None] | None,
    keep: bool = False,
) -> list[Any]:
    """:func:`kneighbors_tables` (DCR distance) that reduces the neighbours where they are found.

    ``finish((distances, indices), *finish_args)`` runs as one more task on every
    query partition's neighbours, and its results come back, one per query partition
    in row order, instead of the neighbours: the driver never holds the neighbour
    arrays. ``finish`` must be a module-level function (it is pickled).

    With ``keep=True`` the results stay on the cluster and their futures come back
    (the results themselves without a cluster); release them when done.
    """
    job, client = _tables_job(
        query,
        reference,
        k=k,
        distance="dcr",
        scale=scale,
        working_memory=working_memory,
        progress=progress,
    )
    job = dataclasses.replace(job, finish=finish, finish_args=finish_args, keep=keep)
    return _results(job, client)


def _tables_job(
    query: Any,
    reference: Any,
    *,
    k: int,
    distance: str,
    scale: FloatArray | None,
    working_memory: float | None,
    progress: Callable[[int], None] | None,
    missing: str = "mismatch",
    order: IntArray | None = None,
) -> tuple[_Job, Any]:
    """The job of :func:`kneighbors_tables` and the client it runs on."""
    if distance not in ("dcr", "gower"):
        msg = f"partitioned tables support distance='dcr' or 'gower'; got distance={distance!r}."
        raise ParameterError(msg)
    client: Any = getattr(reference, "client", None) or getattr(query, "client", None)

    def as_partitions(table: Any) -> Partitions:
        if hasattr(table, "partitions"):
            return table.partitions
        return split_rows(
            table.numeric, table.codes, _partition_rows(table.n_rows, client)
        )

    n_num = len(reference.numeric_names)
    n_ref = int(reference.n_rows)
    if order is not None:
        order = np.asarray(order, dtype=np.int64)
        rank = np.full(n_ref, -1, dtype=np.int64)
        if order.shape == (n_ref,) and ((order >= 0) & (order < n_ref)).all():
            rank[order] = np.arange(n_ref)
        if (rank < 0).any():
            msg = f"`order` must be a permutation of the {n_ref} reference rows."
            raise ParameterError(msg)
        if not hasattr(reference, "partitions"):
            reference = reference.take(order)
            order = None
    prescale = None
    if distance == "dcr":
        if scale is None:
            scale = (
                reference.domain.ranges
                if hasattr(reference, "domain")
                else column_ranges(reference.numeric)
            )
        empty = np.empty((0, n_num))
        spec, _, _ = distance_spec(
            "dcr", empty, empty, len(reference.categorical_names), scale=scale
        )
    else:
        if scale is None:
            q_lo, q_hi = _bounds(query)
            r_lo, r_hi = _bounds(reference)
            scale = np.fmax(q_hi, r_hi) - np.fmin(q_lo, r_lo)
        empty = np.empty((0, n_num))
        spec, _, _ = distance_spec(
            "gower",
            empty,
            empty,
            len(reference.categorical_names),
            scale=np.ones(n_num),
            missing=missing,  # type: ignore[arg-type]
        )
        scale = np.asarray(scale, dtype=np.float64)
        # as distance_spec: a constant (or empty) column divides by 1
        prescale = np.where((scale == 0) | np.isnan(scale), 1.0, scale)
    q_parts, r_parts = as_partitions(query), as_partitions(reference)
    # what the driver sends (in-memory partitions, rank slices) goes in one round
    outgoing: list[Any] = []
    local_query = client is not None and not hasattr(query, "partitions")
    if local_query:
        outgoing += q_parts.parts
    if order is not None:
        outgoing += [
            rank[off : off + rows]
            for off, rows in zip(r_parts.offsets, r_parts.rows, strict=True)
        ]
    sent = list(client.scatter(outgoing, hash=False)) if outgoing else []
    if local_query:
        q_parts = Partitions(sent[: len(q_parts.parts)], q_parts.rows, q_parts.nbytes)
        sent = sent[len(q_parts.parts) :]
    if order is not None:
        # every reference partition sorted by its rows' ranks, carrying the ranks:
        # the kernel's ties (lowest position) become ties to the lowest rank
        ranked = [
            client.submit(_ranked, part, ranks, pure=False)
            for part, ranks in zip(r_parts.parts, sent, strict=True)
        ]
        r_parts = Partitions(ranked, r_parts.rows, r_parts.nbytes + 8 * n_ref)
    ref_rows = get_dask_settings().reference_rows
    broadcast = False if ref_rows is not None and ref_rows < r_parts.n_rows else None
    job = _Job(q_parts, r_parts, spec, k, working_memory, broadcast, progress, prescale)
    return job, client


def _bounds(table: Any) -> tuple[FloatArray, FloatArray]:
    """Per numeric column smallest and largest value (NaN: none), from the domain
    of a partitioned table or from the values of an in-memory one."""
    if hasattr(table, "domain"):
        return table.domain.low, table.domain.high
    numeric = table.numeric
    lo = np.full(numeric.shape[1], np.nan)
    hi = np.full(numeric.shape[1], np.nan)
    for f in range(numeric.shape[1]):
        col = numeric[:, f]
        col = col[~np.isnan(col)]
        if col.size:
            lo[f], hi[f] = col.min(), col.max()
    return lo, hi
