# SPDX-License-Identifier: BSD-3-Clause
"""Where the ``"dask"`` backend runs: its settings, the client, and the compute scope.

:func:`dask_compute` connects to a scheduler or starts a local cluster for the
duration of a block (and closes what it started); :func:`compute_scope` is the scope
``evaluate`` runs its metrics in. Dask is imported only when a cluster is needed.
:mod:`synthrisk.cluster` gives these entry points to users.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator
from typing import Any

from synthrisk._optional import import_optional
from synthrisk._typing import Backend
from synthrisk.exceptions import ClusterError, ParameterError

__all__ = [
    "CONNECT_TIMEOUT",
    "DaskSettings",
    "active_client",
    "compute_scope",
    "dask_compute",
    "dask_settings",
    "get_dask_settings",
    "local_cluster_size",
]

#: messages each connection of a client or scheduler that synthrisk starts keeps for
#: debugging (``distributed.admin.low-level-log-length``, 1,000 by default): every
#: message under 1 MB is kept whole, task arguments included, in the driver's memory
_LOG_LENGTH = 20


@dataclasses.dataclass(frozen=True)
class DaskSettings:
    """How the ``"dask"`` backend of :func:`~synthrisk.neighbors.nearest_neighbors` runs.

    Attributes
    ----------
    client : dask.distributed.Client or None
        Cluster to run on; None uses the default client if one exists, else Dask's
        threaded scheduler.
    partition_rows : int or None
        Query rows per task; None cuts the query into 4 partitions per worker thread
        of the cluster (per core without one), of at least 1,024 rows.
    reference_rows : int or None
        Cut an in-memory reference into partitions of this many rows and merge the
        partial top-k results; None keeps it whole and broadcasts it when it fits.
    """

    client: Any = None
    partition_rows: int | None = None
    reference_rows: int | None = None


_SETTINGS = [DaskSettings()]


@contextlib.contextmanager
def dask_settings(**changes: Any) -> Iterator[DaskSettings]:
    """Temporarily change :class:`DaskSettings`, e.g. ``dask_settings(client=client)``."""
    _SETTINGS.append(dataclasses.replace(_SETTINGS[-1], **changes))
    try:
        yield _SETTINGS[-1]
    finally:
        _SETTINGS.pop()


def get_dask_settings() -> DaskSettings:
    """The current :class:`DaskSettings`."""
    return _SETTINGS[-1]


def active_client() -> Any | None:
    """The ``dask.distributed`` client to use: the configured one, else the default one, else None."""
    client = get_dask_settings().client
    if client is not None:
        return client
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()  # type: ignore[no-untyped-call]
    except ValueError:
        return None


#: seconds to wait for a scheduler before giving up
CONNECT_TIMEOUT = 10.0


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
    timeout: float | None = None,
) -> Iterator[Any]:
    """Run the ``"dask"`` backend on a cluster for the duration of the block.

    A cluster or client started here keeps 20 messages per connection in its debug
    log instead of Dask's 1,000 (``distributed.admin.low-level-log-length``): the log
    keeps every message under 1 MB whole, so on the driver it would hold on to
    hundreds of MiB of task arguments. Set it on a client of your own before
    creating it (see ``docs/scaling.md``).

    Parameters
    ----------
    client : dask.distributed.Client, default=None
        Use this client (it stays open after the block).
    scheduler : str, default=None
        Address of a running scheduler (``tcp://host:8786``) to connect to.
    n_workers : int, default=None
        Workers of a local cluster (default: one per core); only used when neither
        ``client`` nor ``scheduler`` is given.
    timeout : float, default=None
        Seconds to wait for the scheduler (None: ``CONNECT_TIMEOUT``, 10).

    Yields
    ------
    dask.distributed.Client

    Raises
    ------
    ClusterError
        The scheduler cannot be reached.
    """
    distributed = import_optional("distributed", extra="dask")
    dask = import_optional("dask", extra="dask")
    with contextlib.ExitStack() as stack:
        if client is None:
            # read when connections open: the cluster and client started below
            stack.enter_context(
                dask.config.set({"distributed.admin.low-level-log-length": _LOG_LENGTH})
            )
        if client is None and scheduler is not None:
            client = stack.enter_context(
                _connect(
                    distributed.Client,
                    scheduler,
                    CONNECT_TIMEOUT if timeout is None else timeout,
                )
            )
        elif client is None:
            workers, threads = local_cluster_size(n_workers)
            try:
                cluster = stack.enter_context(
                    distributed.LocalCluster(
                        n_workers=workers,
                        threads_per_worker=threads,
                        processes=True,
                        dashboard_address=":0",
                    )
                )
            except (
                OSError,
                TimeoutError,
            ) as exc:  # pragma: no cover - machine-specific
                msg = f"cannot start a local Dask cluster ({exc}); pass the address of a running scheduler instead."
                raise ClusterError(msg) from None
            client = stack.enter_context(
                distributed.Client(cluster, set_as_default=False)
            )
        stack.enter_context(dask_settings(client=client))
        yield client


@contextlib.contextmanager
def compute_scope(
    backend: Backend | None, *, client: Any | None = None, scheduler: str | None = None
) -> Iterator[Backend | None]:
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
        client = active_client()
    with dask_compute(client=client, scheduler=scheduler):
        yield "dask"
