# SPDX-License-Identifier: BSD-3-Clause
"""Exact Euclidean k-nearest neighbours on dense numeric arrays, screened with BLAS.

The general neighbour kernel (:mod:`synthrisk.neighbors`) evaluates every pair term by
term. For plain Euclidean distance on pre-encoded arrays (ai-privacy-toolkit's
setting) most of that work can be handed to a matrix product: for a block of query
rows ``Q`` and reference rows ``R`` (both centred on the reference mean),

    s(q, r) = |r|^2 - 2 q.r        so that        |q - r|^2 = |q|^2 + s(q, r).

``s`` comes from one single-precision GEMM per block (``[q, 1] . [-2 r, |r|^2]``). It is only a *screen*: a pair
is evaluated exactly (sum of squared float64 differences in column order, the same
arithmetic as the general kernel) unless the screen proves it cannot enter the
current top-k, i.e. unless ``|q|^2 + s - margin`` already exceeds the k-th best exact
value, where ``margin`` bounds the rounding error of the screen (float32 inputs and
products, with a factor 16 of slack). The result is therefore exactly what the
general kernel returns — same distances, same indices, ties to the lowest reference
index — at BLAS speed.

Query blocks are spread over worker threads, each running single-threaded BLAS and a
serial numba kernel that releases the GIL (BLAS threads are pinned to 1 for the
duration with ``threadpoolctl`` when it is installed; without it the blocks run one
after the other on multi-threaded BLAS).

This module is private to the membership family; it is a candidate for a
``euclidean`` fast path inside :mod:`synthrisk.neighbors`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Callable, Iterator

import numba
import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.settings import get_config

__all__ = ["euclidean_neighbors"]

_EPS32 = float(np.finfo(np.float32).eps)
_QUERY_ROWS = 128
_REFERENCE_ROWS = 2048


@numba.njit(nogil=True, cache=True)
def _screened_topk(
    screen, q, r, r_start, q_sq, margin, best, best_i
):  # pragma: no cover - compiled
    n_q, n_r = screen.shape
    k = best.shape[1]
    p = q.shape[1]
    for i in range(n_q):
        worst = best[i, k - 1]
        limit = worst - q_sq[i] + margin[i]
        for j in range(n_r):
            if screen[i, j] > limit:
                continue
            jj = r_start + j
            acc = 0.0
            for f in range(p):
                d = q[i, f] - r[jj, f]
                acc += d * d
            if acc < worst:
                pos = k - 1
                while pos > 0 and best[i, pos - 1] > acc:
                    best[i, pos] = best[i, pos - 1]
                    best_i[i, pos] = best_i[i, pos - 1]
                    pos -= 1
                best[i, pos] = acc
                best_i[i, pos] = jj
                worst = best[i, k - 1]
                limit = worst - q_sq[i] + margin[i]


@contextlib.contextmanager
def _single_threaded_blas() -> Iterator[bool]:
    """Pin BLAS to one thread if ``threadpoolctl`` is available; yield whether it was."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        yield False
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield True


def euclidean_neighbors(
    query: FloatArray,
    reference: FloatArray,
    *,
    k: int,
    working_memory: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[FloatArray, IntArray]:
    """Exact k nearest ``reference`` rows of every ``query`` row (Euclidean).

    Parameters
    ----------
    query : ndarray of shape (n_query, n_features)
        Finite float64 values (validated by the caller).
    reference : ndarray of shape (n_reference, n_features)
        Finite float64 values; ``1 <= k <= n_reference``.
    k : int
        Number of neighbours.
    working_memory : float, default=None
        MiB budget of the screening blocks of all threads (global default when None).
    progress : callable, default=None
        Called with the number of query rows finished after each block.

    Returns
    -------
    distances : ndarray of shape (n_query, k)
        Ascending Euclidean distances.
    indices : ndarray of shape (n_query, k)
        Reference positions; ties go to the lowest position.
    """
    query = np.ascontiguousarray(query, dtype=np.float64)
    reference = np.ascontiguousarray(reference, dtype=np.float64)
    n_query, p = query.shape
    n_ref = reference.shape[0]
    best = np.full((n_query, k), np.inf)
    best_i = np.full((n_query, k), -1, dtype=np.int64)
    if n_query == 0:
        return best, best_i
    centre = reference.mean(axis=0)
    ref_c = reference - centre
    ref_sq = np.einsum("ij,ij->i", ref_c, ref_c)
    # one GEMM gives the whole screen: [q, 1] . [-2 r, |r|^2]
    augmented = np.empty((p + 1, n_ref), dtype=np.float32)
    augmented[:p] = -2.0 * ref_c.T
    augmented[p] = ref_sq
    r_max = float(np.sqrt(ref_sq.max()))
    workers = max(1, min(numba.get_num_threads(), -(-n_query // _QUERY_ROWS)))
    budget = get_config().working_memory if working_memory is None else working_memory
    per_worker = max(int(budget * 2**20) // workers, 4 * 64)
    ref_rows = max(1, min(n_ref, _REFERENCE_ROWS, per_worker // (4 * 16)))
    query_rows = max(1, min(_QUERY_ROWS, per_worker // (4 * ref_rows)))

    def block(start: int) -> int:
        stop = min(start + query_rows, n_query)
        q_c = query[start:stop] - centre
        q_sq = np.einsum("ij,ij->i", q_c, q_c)
        q_aug = np.empty((stop - start, p + 1), dtype=np.float32)
        q_aug[:, :p] = q_c
        q_aug[:, p] = 1.0
        # rounding of the float32 screen is below (2p + 10) eps32 (|q| + |r|)^2
        margin = 16.0 * (p + 4) * _EPS32 * (np.sqrt(q_sq) + r_max) ** 2 + 1e-300
        screen = np.empty((stop - start, ref_rows), dtype=np.float32)
        for r_start in range(0, n_ref, ref_rows):
            r_stop = min(r_start + ref_rows, n_ref)
            view = screen[:, : r_stop - r_start]
            np.matmul(q_aug, augmented[:, r_start:r_stop], out=view)
            _screened_topk(
                view,
                query[start:stop],
                reference,
                r_start,
                q_sq,
                margin,
                best[start:stop],
                best_i[start:stop],
            )
        return stop - start

    starts = range(0, n_query, query_rows)
    with _single_threaded_blas() as pinned:
        if not pinned:
            workers = 1
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            for done in pool.map(block, starts):
                if progress is not None:
                    progress(done)
    return np.sqrt(best), best_i
