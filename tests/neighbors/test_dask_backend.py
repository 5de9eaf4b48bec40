# SPDX-License-Identifier: BSD-3-Clause
"""The Dask neighbour search: exact equality with the numba backend, threaded and on a
real ``LocalCluster`` of worker processes (broadcast and partitioned references, a
worker killed mid-run), and the cluster entry points."""

from __future__ import annotations

import itertools
import os
import threading
from typing import Any

import numpy as np
import pytest

from synthrisk.neighbors import distance_spec, nearest_neighbors
from synthrisk.schema.encoding import EncodedTable

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from synthrisk.cluster import ClusterError, compute_scope, dask_compute  # noqa: E402
from synthrisk.exceptions import ParameterError  # noqa: E402
from synthrisk.neighbors import dask_backend  # noqa: E402
from synthrisk.neighbors.dask_backend import dask_settings, merge_topk  # noqa: E402
from synthrisk.schema.partitioned import split_rows  # noqa: E402

pytestmark = pytest.mark.dask


def _table(rng: np.random.Generator, n: int, *, nan: float = 0.05) -> EncodedTable:
    num = rng.integers(0, 4, (n, 3)).astype(np.float64)  # coarse: ties everywhere
    num[rng.random(num.shape) < nan] = np.nan
    codes = rng.integers(-1, 3, (n, 2))
    return EncodedTable(num, codes, ("a", "b", "c"), ("x", "y"))


def _assert_same(a, b) -> None:
    np.testing.assert_array_equal(a.distances, b.distances)
    np.testing.assert_array_equal(a.indices, b.indices)


def test_merge_topk_keeps_smallest_pairs_ties_to_lowest_position() -> None:
    left = (np.array([[0.1, 0.5]]), np.array([[7, 2]]))
    right = (np.array([[0.1, np.nan]]), np.array([[3, 9]]))
    d, i = merge_topk(left, right, k=3)
    np.testing.assert_array_equal(i, [[3, 7, 2]])
    np.testing.assert_array_equal(d, [[0.1, 0.1, 0.5]])
    # a missing distance orders like +inf, after every finite one
    d, i = merge_topk((np.array([[np.nan]]), np.array([[0]])), right, k=2)
    np.testing.assert_array_equal(i, [[3, 0]])
    assert np.isnan(d[0, 1])


def test_split_rows_offsets() -> None:
    parts = split_rows(np.zeros((10, 2)), np.zeros((10, 1), np.int64), 4)
    assert parts.rows == (4, 4, 2)
    assert parts.offsets == [0, 4, 8]
    assert parts.n_rows == 10


@pytest.mark.parametrize("distance", ["dcr", "gower"])
@pytest.mark.parametrize("reference_rows", [None, 37, 2])
def test_threaded_equals_numba(
    rng: np.random.Generator, distance: str, reference_rows: int | None
) -> None:
    query, reference = _table(rng, 700), _table(rng, 150)
    expected = nearest_neighbors(
        query, reference, k=3, distance=distance, backend="numba"
    )
    seen: list[int] = []
    with dask_settings(partition_rows=128, reference_rows=reference_rows):
        got = nearest_neighbors(
            query,
            reference,
            k=3,
            distance=distance,
            backend="dask",
            progress=seen.append,
        )
    _assert_same(expected, got)
    assert sum(seen) == query.n_rows


def test_threaded_euclidean_equals_numba(rng: np.random.Generator) -> None:
    query, reference = rng.normal(size=(300, 4)), rng.normal(size=(120, 4))
    expected = nearest_neighbors(
        query, reference, k=2, distance="euclidean", backend="numba"
    )
    with dask_settings(partition_rows=64, reference_rows=25):
        got = nearest_neighbors(
            query, reference, k=2, distance="euclidean", backend="dask"
        )
    _assert_same(expected, got)


def test_compact_partitions_equal_float64(rng: np.random.Generator) -> None:
    """float32 / int32 partitions holding float32-exact values give the float64 answer."""
    query, reference = _table(rng, 200), _table(rng, 90)
    expected = nearest_neighbors(query, reference, k=2, backend="numba")
    spec, _, _ = distance_spec("dcr", query.numeric, reference.numeric, 2)
    q = split_rows(query.numeric.astype(np.float32), query.codes.astype(np.int32), 64)
    r = split_rows(
        reference.numeric.astype(np.float32), reference.codes.astype(np.int32), 40
    )
    d, i = dask_backend.kneighbors_partitioned(q, r, spec, k=2, broadcast=False)
    np.testing.assert_array_equal(expected.distances, d)
    np.testing.assert_array_equal(expected.indices, i)


def test_unreachable_scheduler_is_a_clear_error() -> None:
    with (
        pytest.raises(
            ClusterError,
            match=r"cannot reach the Dask scheduler at 'tcp://127\.0\.0\.1:9'",
        ),
        dask_compute(scheduler="tcp://127.0.0.1:9", timeout=1),
    ):
        pass  # pragma: no cover


def test_client_with_another_backend_is_rejected() -> None:
    with (
        pytest.raises(ParameterError, match="need `backend='dask'`"),
        compute_scope("numba", scheduler="tcp://127.0.0.1:9"),
    ):
        pass  # pragma: no cover


@pytest.mark.parametrize("reference_rows", [None, 50])
def test_local_cluster_equals_numba(
    dask_client, rng: np.random.Generator, reference_rows: int | None
) -> None:
    client = dask_client
    for distance in ("dcr", "gower"):
        query, reference = _table(rng, 900), _table(rng, 230)
        expected = nearest_neighbors(
            query, reference, k=4, distance=distance, backend="numba"
        )
        seen: list[int] = []
        with dask_settings(
            client=client, partition_rows=200, reference_rows=reference_rows
        ):
            got = nearest_neighbors(
                query,
                reference,
                k=4,
                distance=distance,
                backend="dask",
                progress=seen.append,
            )
        _assert_same(expected, got)
        assert sum(seen) == query.n_rows


def _search_threads() -> dict[str, Any]:
    """Run one search task here (on a worker): numba's threads during and after it, the
    layer, whether this is a worker, and the worker's threads."""
    import numba

    seen: list[int] = []
    original = dask_backend.numba_backend.kneighbors

    def spy(search: Any, **kwargs: Any) -> Any:
        seen.append(numba.get_num_threads())
        return original(search, **kwargs)

    dask_backend.numba_backend.kneighbors = spy
    try:
        numeric = np.arange(6.0).reshape(3, 2)
        part = (numeric, np.zeros((3, 1), np.int64))
        spec, _, _ = distance_spec("dcr", numeric, numeric, 1)
        dask_backend._search(part, part, spec, 1, None, 0)
    finally:
        dask_backend.numba_backend.kneighbors = original
    return {
        "on_worker": dask_backend._on_worker(),
        "during": seen[0],
        "after": numba.get_num_threads(),
        "layer": str(numba.threading_layer()),
        "threads": dask_backend._worker_threads(64),
    }


def test_tasks_on_workers_use_one_numba_thread(dask_client) -> None:
    # a worker's threads are the parallelism: a search task runs its kernel on one core
    # (a worker of one thread, as here) and leaves the thread's numba setting as it
    # found it
    found = dask_client.submit(_search_threads, pure=False).result()
    assert found["on_worker"]
    assert found["during"] == 1
    assert found["after"] == dask_client.submit(_numba_threads, pure=False).result()
    assert not dask_backend._on_worker()


def _numba_threads() -> int:
    import numba

    return numba.get_num_threads()


def test_a_worker_of_two_threads_under_workqueue_gives_each_task_both() -> None:
    """Under numba's workqueue layer (what ``import synthrisk`` picks without TBB) a
    worker's tasks cannot run kernels side by side: they take turns, each on the
    worker's threads; under OpenMP or TBB each task runs on one."""
    distributed = pytest.importorskip("distributed")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: numba has one thread to give")
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        found = client.submit(_search_threads, pure=False).result()
    assert found["threads"] == 2
    assert found["during"] == (1 if found["layer"] in ("omp", "tbb") else 2)


def test_killed_worker_leaves_the_result_unchanged(
    dask_client, rng: np.random.Generator
) -> None:
    query, reference = _table(rng, 20000), _table(rng, 6000)
    expected = nearest_neighbors(query, reference, k=2, backend="numba")
    client = dask_client
    victim = next(iter(client.run(os.getpid).values()))
    started = threading.Event()

    def kill() -> None:
        started.wait(60)
        os.kill(victim, 9)

    killer = threading.Thread(target=kill, daemon=True)
    killer.start()
    with dask_settings(client=client, partition_rows=500, reference_rows=1500):
        got = nearest_neighbors(
            query, reference, k=2, backend="dask", progress=lambda _: started.set()
        )
    killer.join(5)
    _assert_same(expected, got)
    # the nanny restarts the worker: the cluster is whole again for later tests
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()


def test_reference_larger_than_a_worker_share_is_partitioned(
    dask_client, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    query, reference = _table(rng, 300), _table(rng, 400)
    expected = nearest_neighbors(query, reference, k=3, backend="numba")
    seen: list[tuple] = []
    original = dask_backend.kneighbors_partitioned

    def spy(query_parts, reference_parts, *args, **kwargs):
        seen.append((len(reference_parts.parts), kwargs["broadcast"]))
        return original(query_parts, reference_parts, *args, **kwargs)

    # the reference is 400 rows × 5 columns × 8 bytes = 16,000 bytes; a worker of
    # 80 kB may hold a quarter (20 kB): broadcast whole
    monkeypatch.setattr(dask_backend, "_worker_memory", lambda client: 80_000.0)
    monkeypatch.setattr(dask_backend, "kneighbors_partitioned", spy)
    with dask_settings(client=dask_client, partition_rows=100):
        got = nearest_neighbors(query, reference, k=3, backend="dask")
    _assert_same(expected, got)
    assert seen == [(1, None)]
    # a worker of 40 kB may hold 10 kB: two reference partitions of 250 and 150 rows
    monkeypatch.setattr(dask_backend, "_worker_memory", lambda client: 40_000.0)
    seen.clear()
    with dask_settings(client=dask_client, partition_rows=100):
        got = nearest_neighbors(query, reference, k=3, backend="dask")
    _assert_same(expected, got)
    assert seen == [(2, False)]


def _partitioned(client, table: EncodedTable, rows_per_part: int):
    """``table`` as a PartitionedTable: scattered partitions and their reduced domain."""
    from synthrisk.schema.partitioned import (
        PartitionedTable,
        Partitions,
        combine_domains,
        domain_of_part,
    )

    local = split_rows(table.numeric, table.codes, rows_per_part)
    futures = client.scatter(local.parts, hash=False)
    domain = combine_domains(
        [domain_of_part(p) for p in local.parts],
        len(table.numeric_names),
        len(table.categorical_names),
    )
    return PartitionedTable(
        partitions=Partitions(futures, local.rows, local.nbytes),
        numeric_names=table.numeric_names,
        categorical_names=table.categorical_names,
        domain=domain,
        client=client,
    )


@pytest.mark.parametrize("missing", ["mismatch", "anonymeter"])
@pytest.mark.parametrize("reference_rows", [None, 40])
def test_partitioned_gower_equals_in_memory(
    dask_client, rng: np.random.Generator, missing: str, reference_rows: int | None
) -> None:
    query, reference = _table(rng, 90, nan=0.2), _table(rng, 130, nan=0.2)
    # query values outside the reference's range: the ranges span query ∪ reference
    query.numeric[:5, 0] = 9.0
    expected = nearest_neighbors(
        query, reference, k=3, distance="gower", missing=missing, backend="numba"
    )
    assert np.isnan(expected.distances).any() == (missing == "anonymeter")
    partitioned = _partitioned(dask_client, reference, 50)
    with dask_settings(partition_rows=30, reference_rows=reference_rows):
        got = nearest_neighbors(
            query, partitioned, k=3, distance="gower", missing=missing
        )
        _assert_same(expected, got)
        # partitioned on both sides, and with given ranges
        scale = np.array([2.0, 0.0, 5.0])
        expected = nearest_neighbors(
            query, reference, k=2, distance="gower", scale=scale, backend="numba"
        )
        got = nearest_neighbors(
            _partitioned(dask_client, query, 40),
            partitioned,
            k=2,
            distance="gower",
            scale=scale,
        )
    _assert_same(expected, got)


@pytest.mark.parametrize("reference_rows", [None, 40])
def test_partitioned_order_searches_the_permuted_reference(
    dask_client, rng: np.random.Generator, reference_rows: int | None
) -> None:
    # coarse values: many ties, which the order decides
    query, reference = _table(rng, 60, nan=0.0), _table(rng, 150, nan=0.0)
    order = rng.permutation(reference.n_rows)
    expected = nearest_neighbors(
        query, reference.take(order), k=4, distance="gower", backend="numba"
    )
    unordered = nearest_neighbors(query, reference, k=4, distance="gower")
    assert not np.array_equal(order[expected.indices], unordered.indices)
    with dask_settings(partition_rows=25, reference_rows=reference_rows):
        dist, idx = dask_backend.kneighbors_tables(
            query,
            _partitioned(dask_client, reference, 45),
            k=4,
            distance="gower",
            scale=None,
            working_memory=None,
            progress=None,
            order=order,
        )
    np.testing.assert_array_equal(dist, expected.distances)
    np.testing.assert_array_equal(idx, expected.indices)


def test_partitioned_order_must_be_a_permutation(
    dask_client, rng: np.random.Generator
) -> None:
    reference = _partitioned(dask_client, _table(rng, 20), 10)
    with pytest.raises(ParameterError, match="permutation of the 20 reference rows"):
        dask_backend.kneighbors_tables(
            _table(rng, 3),
            reference,
            k=1,
            distance="gower",
            scale=None,
            working_memory=None,
            progress=None,
            order=np.zeros(20, dtype=np.int64),
        )
    with pytest.raises(ParameterError, match="'dcr' or 'gower'"):
        nearest_neighbors(_table(rng, 3).numeric, reference, distance="euclidean")


def test_clients_it_starts_keep_a_short_message_log(dask_client: Any) -> None:
    """Dask keeps 1,000 messages (task arguments included) per connection by default."""
    import dask

    address = dask_client.scheduler.address
    with dask_compute(scheduler=address) as client:
        assert client is not dask_client
        assert client.scheduler_comm.recent_message_log.maxlen == 20
    assert dask.config.get("distributed.admin.low-level-log-length") == 1000
    # a client of the user's own is used as it is
    with dask_compute(client=dask_client) as client:
        assert client is dask_client


def test_cluster_results_fill_the_output_in_row_order(
    dask_client, rng: np.random.Generator
) -> None:
    # query partitions finish in any order, one of them empty; each is copied into
    # its rows of the result as it arrives
    from synthrisk.neighbors.dask_backend import kneighbors_partitioned
    from synthrisk.schema.partitioned import Partitions

    query, reference = _table(rng, 130), _table(rng, 60)
    expected = nearest_neighbors(query, reference, k=3, backend="numba")
    spec, q_num, r_num = distance_spec(
        "dcr", query.numeric, reference.numeric, len(query.categorical_names)
    )
    cuts = [0, 50, 50, 90, 130]  # the second partition has no rows
    parts = [(q_num[a:b], query.codes[a:b]) for a, b in itertools.pairwise(cuts)]
    rows = tuple(b - a for a, b in itertools.pairwise(cuts))
    seen: list[int] = []
    distances, indices = kneighbors_partitioned(
        Partitions(parts, rows, int(q_num.nbytes + query.codes.nbytes)),
        split_rows(r_num, reference.codes, 25),
        spec,
        k=3,
        client=dask_client,
        broadcast=False,
        progress=seen.append,
    )
    np.testing.assert_array_equal(distances, expected.distances)
    np.testing.assert_array_equal(indices, expected.indices)
    assert sorted(seen) == [0, 40, 40, 50]


def test_query_partitions_of_one_search_share_the_pilot(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the projection walk tries its candidate columns on a pilot sample once per
    # search (per reference partition and process), not once per query partition;
    # the neighbours do not depend on the column walked
    from synthrisk.neighbors import _projection

    n_ref, n_query = 40_000, 1_000
    reference = EncodedTable(
        rng.random((n_ref, 3)) * [1.0, 1.2, 0.9],
        rng.integers(0, 2, (n_ref, 1)),
        ("a", "b", "c"),
        ("x",),
    )
    query = EncodedTable(
        rng.random((n_query, 3)),
        rng.integers(0, 2, (n_query, 1)),
        ("a", "b", "c"),
        ("x",),
    )
    expected = nearest_neighbors(query, reference, k=2, backend="numba")
    calls: list[int] = []
    original = _projection._search

    def spy(search, how):
        calls.append(search.q_num.shape[0])
        return original(search, how)

    monkeypatch.setattr(_projection, "_search", spy)
    # the pilot also times the grouped scan; here the walk is kept whatever the times
    monkeypatch.setattr(_projection, "prefer_scan", lambda walk, scan: False)
    with dask_settings(partition_rows=500):
        got = nearest_neighbors(query, reference, k=2, backend="dask")
    _assert_same(expected, got)
    # one-row calls load and time the walk's kernel before the pilot proper
    pilots = [n for n in calls if 1 < n <= _projection._PILOT_ROWS]
    finals = [n for n in calls if n > _projection._PILOT_ROWS]
    assert len(finals) == n_query // 500
    assert 2 <= len(pilots) <= _projection._PILOT_COLUMNS  # one pilot, not four
