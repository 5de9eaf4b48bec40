# SPDX-License-Identifier: BSD-3-Clause
"""Running synthrisk on a Dask cluster: connect, start a local one, or use the caller's client.

>>> from synthrisk.cluster import dask_compute
>>> with dask_compute(scheduler=None, n_workers=1) as client:  # doctest: +SKIP
...     report = evaluate(real, synthetic, holdout, backend="dask")

Inside the block every neighbour search of the ``"dask"`` backend runs its tasks on
``client``; the cluster this function started is closed again on exit (an existing
client or scheduler is left running).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

from synthrisk._optional import import_optional
from synthrisk.exceptions import ParameterError, SynthriskError

__all__ = [
    "ClusterError",
    "compute_scope",
    "dask_compute",
    "evaluate_dataset",
    "local_cluster_size",
]

#: seconds to wait for a scheduler before giving up
CONNECT_TIMEOUT = 10.0


class ClusterError(SynthriskError, RuntimeError):
    """The Dask scheduler cannot be reached or the cluster cannot be started."""


def local_cluster_size(n_workers: int | None = None) -> tuple[int, int]:
    """``(workers, threads per worker)`` of a local cluster sized to this machine.

    One single-threaded worker process per usable core by default (the numba
    kernels release the GIL, but processes keep one worker's memory spike from
    stopping the others).
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    workers = cores if n_workers is None else max(int(n_workers), 1)
    return workers, max(cores // workers, 1)


def _connect(client_cls: Callable[..., Any], scheduler: str, timeout: float) -> Any:
    try:
        return client_cls(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        msg = (
            f"cannot reach the Dask scheduler at {scheduler!r} within {timeout:g} s ({exc}). "
            "Check the address (e.g. tcp://host:8786) and that the scheduler is running, "
            "or leave out the scheduler to start a local cluster."
        )
        raise ClusterError(msg) from None


@contextlib.contextmanager
def dask_compute(
    *,
    client: Any | None = None,
    scheduler: str | None = None,
    n_workers: int | None = None,
    timeout: float = CONNECT_TIMEOUT,
) -> Iterator[Any]:
    """Run the ``"dask"`` backend on a cluster for the duration of the block.

    Parameters
    ----------
    client : dask.distributed.Client, default=None
        Use this client (it stays open after the block).
    scheduler : str, default=None
        Address of a running scheduler (``tcp://host:8786``) to connect to.
    n_workers : int, default=None
        Workers of a local cluster (default: one per core); only used when neither
        ``client`` nor ``scheduler`` is given.
    timeout : float, default=10
        Seconds to wait for the scheduler.

    Yields
    ------
    dask.distributed.Client

    Raises
    ------
    ClusterError
        The scheduler cannot be reached.
    """
    distributed = import_optional("distributed", extra="dask")
    with contextlib.ExitStack() as stack:
        if client is None and scheduler is not None:
            client = stack.enter_context(
                _connect(distributed.Client, scheduler, timeout)
            )
        elif client is None:
            workers, threads = local_cluster_size(n_workers)
            try:
                cluster = stack.enter_context(
                    distributed.LocalCluster(
                        n_workers=workers, threads_per_worker=threads,
                        processes=True, dashboard_address=":0",
                    )
                )  # fmt: skip
            except (
                OSError,
                TimeoutError,
            ) as exc:  # pragma: no cover - machine-specific
                msg = f"cannot start a local Dask cluster ({exc}); pass the address of a running scheduler instead."
                raise ClusterError(msg) from None
            client = stack.enter_context(
                distributed.Client(cluster, set_as_default=False)
            )
        from synthrisk.neighbors.dask_backend import dask_settings

        stack.enter_context(dask_settings(client=client))
        yield client


@contextlib.contextmanager
def compute_scope(
    backend: str | None, *, client: Any | None = None, scheduler: str | None = None
) -> Iterator[str | None]:
    """Where ``evaluate`` runs: yields the backend name for the metrics.

    A ``client`` or ``scheduler`` means ``"dask"`` on that cluster; ``backend="dask"``
    alone uses the default ``dask.distributed`` client if one exists, else starts a
    local cluster for the block; any other backend runs in this process.
    """
    if client is None and scheduler is None and backend != "dask":
        yield backend
        return
    if backend not in (None, "dask"):
        msg = f"`client` and `scheduler` need `backend='dask'` (or no backend); got backend={backend!r}."
        raise ParameterError(msg)
    if client is not None and scheduler is not None:
        msg = "give either `client` or `scheduler`, not both."
        raise ParameterError(msg)
    if client is None and scheduler is None:
        from synthrisk.neighbors.dask_backend import active_client

        client = active_client()
    with dask_compute(client=client, scheduler=scheduler):
        yield "dask"


#: metrics that run on every row of partitioned tables (their neighbour searches
#: are distributed; everything else they compute is O(rows) on the driver)
PARTITIONED_METRICS = ("dcr_baseline_protection", "dcr_overfitting_protection")
#: rows per table of the seeded sample the other metrics run on
DEFAULT_SAMPLE_ROWS = 200_000


def evaluate_dataset(
    real: Any,
    synthetic: Any,
    holdout: Any = None,
    *,
    metadata: Any = None,
    metrics: Any = None,
    seed: int = 0,
    client: Any | None = None,
    scheduler: str | None = None,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    working_memory: float | None = None,
    progress: Any = False,
) -> Any:
    """Evaluate tables that do not fit one machine, on a Dask cluster.

    Parameters
    ----------
    real, synthetic, holdout : dask DataFrame, folder, glob or file
        Parquet datasets (a folder or ``"part-*.parquet"``), CSV globs
        (``"claims/*.csv.gz"``) or ``dask.dataframe`` objects; see
        :func:`synthrisk.io.dataset.read_dataset`.
    metadata, metrics, seed, working_memory, progress
        As :func:`synthrisk.evaluate`.
    client, scheduler
        The cluster (as :func:`synthrisk.evaluate`); neither starts a local cluster
        sized to this machine.
    sample_rows : int, default=200_000
        Metrics outside :data:`PARTITIONED_METRICS` need pandas frames of all rows in
        memory; they run on a sample of at most this many rows per table, drawn
        without replacement with ``seed``, and say so in their warnings. Tables no
        larger than this are taken whole, so the report equals :func:`synthrisk.evaluate`.

    Returns
    -------
    EvaluationReport
        As :func:`synthrisk.evaluate`.
    """
    import dataclasses

    from synthrisk import __version__
    from synthrisk._progress import as_progress
    from synthrisk._validation import check_int
    from synthrisk.evaluate import resolve_metrics
    from synthrisk.metrics._base import make_context
    from synthrisk.neighbors.dask_backend import active_client
    from synthrisk.results import EvaluationReport
    from synthrisk.schema.partitioned import prepare_partitioned

    seed = int(check_int(seed, name="seed", minimum=0))  # type: ignore[arg-type]
    sample_rows = int(check_int(sample_rows, name="sample_rows", minimum=1))  # type: ignore[arg-type]
    with compute_scope("dask", client=client, scheduler=scheduler):
        tables = prepare_partitioned(
            real, synthetic, holdout, client=active_client(), metadata=metadata
        )
        chosen, notes = resolve_metrics(metrics, has_holdout=tables.holdout is not None)
        reporter = as_progress(progress)
        sample: Any = None
        drawn: dict[str, int] = {}
        results = []
        for metric in chosen:
            context = make_context(
                metric.id, seed=seed, working_memory=working_memory, backend="dask",
                progress=reporter,
            )  # fmt: skip
            if metric.id in PARTITIONED_METRICS:
                results.append(metric.run(tables, context))  # type: ignore[arg-type]
                continue
            if sample is None:
                sample, drawn = tables.sample(sample_rows, seed)
            result = metric.run(sample, context)
            if drawn:
                sizes = ", ".join(
                    f"{n} of {getattr(tables, t).n_rows} {t} rows"
                    for t, n in drawn.items()
                )
                note = (
                    f"computed on a seeded random sample ({sizes}; seed {seed}): this metric "
                    "needs all rows in memory; raise sample_rows to use more."
                )
                result = dataclasses.replace(result, warnings=(*result.warnings, note))
            results.append(result)
    schema = tables.schema.to_dict()
    schema["excluded"] = [c.name for c in tables.schema.excluded]
    return EvaluationReport(
        synthrisk_version=__version__,
        seed=seed,
        inputs=tables.summary(),
        results=tuple(results),
        schema=schema,
        warnings=tuple(tables.notes) + tuple(notes),
    )
