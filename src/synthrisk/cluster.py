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

__all__ = ["ClusterError", "compute_scope", "dask_compute", "local_cluster_size"]

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
                        processes=True, dashboard_address=None,
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
