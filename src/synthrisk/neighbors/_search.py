# SPDX-License-Identifier: BSD-3-Clause
"""The search entry point: tables in memory or partitioned on a cluster, any backend.

:func:`nearest_neighbors` validates the tables, builds the distance
(:func:`~synthrisk.neighbors._spec.distance_spec`) and hands the search to a backend
module, imported on first use; a table partitioned on a Dask cluster goes to
:mod:`synthrisk.neighbors.dask_backend`, imported only then (Dask is optional).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, get_args

import numpy as np

from synthrisk._typing import Backend, DistanceName, FloatArray, IntArray
from synthrisk._validation import check_int, check_option
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.neighbors._euclidean import Arithmetic, euclidean_kneighbors
from synthrisk.neighbors._protocol import NeighborBackend, Search
from synthrisk.neighbors._reuse import active_reuse, array_digest, params_digest
from synthrisk.neighbors._spec import MissingRule, distance_spec
from synthrisk.schema.encoding import EncodedTable
from synthrisk.settings import get_config

if TYPE_CHECKING:
    from synthrisk.schema.partitioned import PartitionedTable

__all__ = [
    "Neighbors",
    "distance_matrix",
    "get_backend",
    "map_neighbors",
    "nearest_neighbors",
]


def get_backend(name: Backend) -> NeighborBackend:
    """The backend module called ``name`` (``"auto"`` is numba), imported on first use."""
    check_option(name, name="backend", allowed=get_args(Backend))
    backend: NeighborBackend
    if name == "numpy":
        from synthrisk.neighbors import numpy_backend as backend
    elif name == "dask":
        from synthrisk.neighbors import dask_backend as backend
    elif name == "torch":
        from synthrisk.neighbors import torch_backend as backend
    else:
        from synthrisk.neighbors import numba_backend as backend
    return backend


@dataclasses.dataclass(frozen=True)
class Neighbors:
    """Result of a neighbour search.

    Attributes
    ----------
    distances : ndarray of shape (n_query, k)
        Distances to the k nearest reference rows, ascending.
    indices : ndarray of shape (n_query, k)
        Row positions of those reference rows; ties go to the lowest position.
    """

    distances: FloatArray
    indices: IntArray


def _partitioned(*tables: object) -> bool:
    """True when a table is partitioned on a Dask cluster (``synthrisk.schema.partitioned``)."""
    return any(hasattr(table, "partitions") for table in tables)


def _as_blocks(
    table: EncodedTable | FloatArray | PartitionedTable, name: str
) -> tuple[FloatArray, IntArray]:
    if isinstance(table, EncodedTable):
        return table.numeric, table.codes
    array = np.asarray(table)
    if array.ndim != 2:
        msg = f"`{name}` must be a 2-D array or an EncodedTable; got an array of shape {array.shape}."
        raise ParameterError(msg)
    if not np.issubdtype(array.dtype, np.number) or np.issubdtype(
        array.dtype, np.complexfloating
    ):
        msg = f"`{name}` must hold real numbers; got dtype {array.dtype}."
        raise InputError(msg)
    array = np.ascontiguousarray(array, dtype=np.float64)
    return array, np.empty((array.shape[0], 0), dtype=np.int64)


def _both_blocks(
    query: EncodedTable | FloatArray | PartitionedTable,
    reference: EncodedTable | FloatArray | PartitionedTable,
) -> tuple[FloatArray, IntArray, FloatArray, IntArray]:
    """Both sides' numeric and categorical blocks, checked to have the same columns."""
    q_num, q_cat = _as_blocks(query, "query")
    r_num, r_cat = _as_blocks(reference, "reference")
    if q_num.shape[1] != r_num.shape[1] or q_cat.shape[1] != r_cat.shape[1]:
        msg = (
            f"`query` and `reference` must have the same columns; got {q_num.shape[1]}+{q_cat.shape[1]} "
            f"and {r_num.shape[1]}+{r_cat.shape[1]} (numeric+categorical)."
        )
        raise ParameterError(msg)
    return q_num, q_cat, r_num, r_cat


def distance_matrix(
    query: EncodedTable | FloatArray,
    reference: EncodedTable | FloatArray,
    *,
    distance: DistanceName = "dcr",
    scale: FloatArray | None = None,
    missing: MissingRule = "mismatch",
) -> FloatArray:
    """Distances from every query row to every reference row, in the reference's order.

    The arithmetic of :func:`nearest_neighbors` (its numpy backend's block sums), without
    ranking: for the small tables whose every distance is used (a kernel density's
    mean), where sorting them would be wasted work. It holds the whole
    ``(n_query, n_reference)`` matrix: keep ``n_query * n_reference`` to millions.

    Raises
    ------
    ParameterError
        If the two sides have different columns.

    Examples
    --------
    >>> import numpy as np
    >>> distance_matrix(np.array([[5.0]]), np.array([[0.0], [10.0]])).tolist()
    [[0.5, 0.5]]
    """
    from synthrisk.neighbors.numpy_backend import block_sums, finish

    q_num, q_cat, r_num, r_cat = _both_blocks(query, reference)
    spec, q_num, r_num = distance_spec(
        distance, q_num, r_num, q_cat.shape[1], scale=scale, missing=missing
    )
    return finish(block_sums(q_num, q_cat, r_num, r_cat, spec), spec)


def nearest_neighbors(
    query: EncodedTable | FloatArray | PartitionedTable,
    reference: EncodedTable | FloatArray | PartitionedTable,
    *,
    k: int = 1,
    distance: DistanceName = "dcr",
    backend: Backend | None = None,
    working_memory: float | None = None,
    scale: FloatArray | None = None,
    missing: MissingRule = "mismatch",
    arithmetic: Arithmetic = "exact",
    progress: Callable[[int], None] | None = None,
    weights: FloatArray | None = None,
    max_distance: FloatArray | None = None,
    order: IntArray | None = None,
) -> Neighbors:
    """Exact k nearest reference rows of every query row.

    Parameters
    ----------
    query : EncodedTable or ndarray of shape (n_query, n_features)
        Rows to find neighbours for.
    reference : EncodedTable or ndarray of shape (n_reference, n_features)
        Rows to search; same columns as ``query``. Either side may also be a
        :class:`~synthrisk.schema.partitioned.PartitionedTable` (rows on a Dask
        cluster) for the ``dcr`` and ``gower`` distances, without ``weights`` or
        ``max_distance``: the same result, the partitions searched where they are.
    k : int, default=1
        Number of neighbours, ``1 <= k <= n_reference``.
    distance : {"dcr", "gower", "euclidean"}, default="dcr"
        See :func:`distance_spec`.
    backend : {"auto", "numpy", "numba", "dask", "torch"}, default=None
        ``None`` takes the global default. ``"auto"`` (= numba) runs the fused
        single-precision-screened kernel for ``"euclidean"`` and the general numba
        kernel otherwise. The numpy backend is the slow reference implementation;
        ``"dask"`` runs numba blocks as dask tasks (needs the ``dask`` extra);
        ``"torch"`` runs the same blocked search on torch tensors, on a CUDA device when
        one is available (needs the ``gpu`` extra). All give identical results.
    working_memory : float, default=None
        MiB budget of one block's temporaries (global default 256).
    scale : ndarray of shape (n_numeric,), default=None
        Column ranges to use instead of the distance's own (``dcr``: reference ranges;
        ``gower``: ranges over query ∪ reference).
    missing : {"mismatch", "anonymeter"}, default="mismatch"
        Missing-value rule of the ``gower`` distance.
    arithmetic : {"exact", "sklearn"}, default="exact"
        ``"sklearn"`` (``euclidean`` only, numba backend): reproduce the rounding of
        scikit-learn's ``NearestNeighbors`` — the expanded form
        ``|x|^2 - 2 x.y + |y|^2`` where scikit-learn uses brute force — so that ties
        between equally distant rows are broken as scikit-learn (and
        ai-privacy-toolkit) breaks them. ``"exact"`` sums squared differences.
    progress : callable, default=None
        Called with the number of query rows finished after each block.
    weights : ndarray of shape (n_numeric + n_categorical,), default=None
        ``dcr`` and ``gower`` with the numpy, numba or dask backend: each column's
        term is multiplied by its weight (numeric columns first, then categorical
        ones, as in :class:`EncodedTable`); the divisor is unchanged.
    max_distance : ndarray of shape (n_query,), default=None
        ``dcr`` and ``gower`` with the numpy or numba backend: only reference rows at
        most this far from each query row (fewer than k: the remaining slots hold
        distance inf and index -1). The search prunes with it from the start.
    order : ndarray of shape (n_reference,), default=None
        With a partitioned table on either side: a permutation of the reference
        rows, searched as if on ``reference.take(order)`` (indices are positions in
        ``order``, ties go to the lowest of them) without moving the rows. For
        tables in memory, search ``reference.take(order)`` itself.

    Returns
    -------
    Neighbors
        ``distances`` and ``indices``, both of shape (n_query, k).
    """
    if _partitioned(query, reference):
        # a table partitioned on a Dask cluster (synthrisk.schema.partitioned)
        if weights is not None or max_distance is not None:
            msg = "`weights` and `max_distance` need tables in memory, not partitioned ones."
            raise ParameterError(msg)
        from synthrisk.neighbors.dask_backend import kneighbors_tables

        k = check_int(k, name="k", minimum=1)
        check_option(missing, name="missing", allowed=get_args(MissingRule))
        distances, indices = kneighbors_tables(
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
        return Neighbors(distances=distances, indices=indices)
    if order is not None:
        msg = (
            "`order` needs a partitioned table; search `reference.take(order)` instead."
        )
        raise ParameterError(msg)
    q_num, q_cat, r_num, r_cat = _both_blocks(query, reference)
    n_ref = r_num.shape[0]
    if n_ref == 0:
        msg = "`reference` has no rows; neighbours need at least one reference row."
        raise InputError(msg)
    k = check_int(k, name="k", minimum=1)
    if k > n_ref:
        msg = f"`k` must be at most the number of reference rows ({n_ref}); got {k}."
        raise ParameterError(msg)
    spec, q_num, r_num = distance_spec(
        distance, q_num, r_num, q_cat.shape[1], scale=scale, missing=missing
    )
    if weights is not None:
        spec = spec.weighted(
            weights, distance, n_numeric=q_num.shape[1], n_categorical=q_cat.shape[1]
        )
    name = get_config().backend if backend is None else backend
    check_option(name, name="backend", allowed=get_args(Backend))
    check_option(arithmetic, name="arithmetic", allowed=get_args(Arithmetic))
    if name == "auto":
        name = "numba"
    if weights is not None and name == "torch":
        msg = "`weights` need the numpy, numba or dask backend; got backend='torch'."
        raise ParameterError(msg)
    if max_distance is not None and (
        distance == "euclidean"
        or name in ("dask", "torch")
        or np.shape(max_distance) != (q_num.shape[0],)
    ):
        msg = (
            "`max_distance` needs one distance per query row, distance 'dcr' or 'gower' and "
            f"the numpy or numba backend; got shape {np.shape(max_distance)}, {distance!r}, {name!r}."
        )
        raise ParameterError(msg)
    if arithmetic != "exact" and (distance != "euclidean" or name != "numba"):
        msg = (
            f"`arithmetic={arithmetic!r}` applies to `distance='euclidean'` with the numba "
            f"backend; got distance={distance!r}, backend={name!r}. Use arithmetic='exact'."
        )
        raise ParameterError(msg)
    backend_name: Backend = name

    def run(
        q_num: FloatArray,
        q_cat: IntArray,
        r_num: FloatArray,
        r_cat: IntArray,
        k: int,
        progress: Callable[[int], None] | None = progress,
    ) -> tuple[FloatArray, IntArray]:
        if distance == "euclidean" and backend_name == "numba":
            return euclidean_kneighbors(
                q_num,
                r_num,
                k=k,
                arithmetic=arithmetic,
                working_memory=working_memory,
                progress=progress,
            )
        search = Search(
            np.ascontiguousarray(q_num),
            np.ascontiguousarray(q_cat),
            np.ascontiguousarray(r_num),
            np.ascontiguousarray(r_cat),
            spec,
            k,
            working_memory=working_memory,
            progress=progress,
            radius=max_distance,
        )
        return get_backend(backend_name).kneighbors(search)

    reuse = active_reuse()
    if reuse is None:
        distances, indices = run(q_num, q_cat, r_num, r_cat, k)
        return Neighbors(distances=distances, indices=indices)
    params = params_digest(spec, k=k, backend=name, arithmetic=arithmetic)
    if max_distance is not None:
        params += array_digest(np.asarray(max_distance, dtype=np.float64))
    distances, indices = reuse.kneighbors(
        (q_num, q_cat),
        (r_num, r_cat),
        k=k,
        params=params,
        exact_only=max_distance is not None or arithmetic != "exact",
        search=lambda qn, qc, rn, rc, kk: run(qn, qc, rn, rc, kk, None),
        progress=progress,
    )
    return Neighbors(distances=distances, indices=indices)


def map_neighbors(
    query: EncodedTable | PartitionedTable,
    reference: EncodedTable | PartitionedTable,
    finish: Callable[..., Any],
    *finish_args: Any,
    k: int,
    scale: FloatArray | None,
    working_memory: float | None,
    progress: Callable[[int], None] | None,
    keep: bool = False,
) -> list[Any]:
    """:func:`nearest_neighbors` (``dcr`` distance) reduced where the neighbours are found.

    Runs as Dask tasks (needs the ``dask`` extra): on the cluster of the partitioned
    table, or on Dask's threaded scheduler for tables in memory.

    Parameters
    ----------
    query, reference : EncodedTable or PartitionedTable
        As :func:`nearest_neighbors`.
    finish : callable
        ``finish((distances, indices), *finish_args)`` runs as one more task on every
        query partition's neighbours; a module-level function (it is pickled).
    *finish_args
        Further arguments of ``finish``.
    k : int
        Number of neighbours.
    scale : ndarray of shape (n_numeric,) or None
        Column ranges instead of the reference's.
    working_memory : float or None
        MiB budget of one block inside a task.
    progress : callable or None
        Called with the number of query rows finished, as query partitions complete.
    keep : bool, default=False
        Keep the results on the cluster and return their futures (the results
        themselves without a cluster); release them when done.

    Returns
    -------
    list
        ``finish``'s result of every query partition, in row order: the driver never
        holds the neighbour arrays.
    """
    from synthrisk.neighbors.dask_backend import kneighbors_tables_map

    return kneighbors_tables_map(
        query,
        reference,
        finish,
        *finish_args,
        k=k,
        scale=scale,
        working_memory=working_memory,
        progress=progress,
        keep=keep,
    )
