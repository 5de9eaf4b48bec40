# SPDX-License-Identifier: BSD-3-Clause
"""Exact Euclidean k-nearest neighbours: a fused, blocked, multi-core numba kernel.

For plain Euclidean distance on dense numeric arrays the general neighbour kernel
(term by term, in float64) leaves most of the CPU idle. This kernel splits every
pair into a cheap single-precision *screen* and an exact double-precision *check*,
and never writes an n_query × n_reference matrix.

**Screen.** Both tables are centred on the reference mean (``q``, ``r``). For a tile
of query rows and a block of reference rows small enough to stay in L1/L2 cache, the
kernel evaluates in float32, two query rows at a time with four features per pass,

    s(q, r) = |r|^2 - 2 q.r        so that        |q - r|^2 = |q|^2 + s(q, r).

**Error bound.** With ``u = eps32 / 2`` and ``p`` features, rounding the inputs to
float32 costs at most ``u |r|^2 + 4 u |q| |r|``, and any summation order of the
``p + 1`` terms at most ``gamma_{p+2} (|r|^2 + 2 |q| |r|)`` (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., §3.1), so

    |s_float32 - s| <= (p + 7) u (|q| + |r|)^2.

Centring in float64 moves ``|q - r|^2`` by at most ``3 eps64 (|q| + |r|)^2`` (each
rounding is relative to the centred value), and the float64 check itself is within
``(p + 1) eps64 |q - r|^2`` of the real number. The kernel uses the margin

    m(q, block) = 2 (p + 8) eps32 (|q| + max_block |r|)^2 + 4 (p + 4) eps64 (|q| + max_block |r|)^2,

four times the float32 bound plus the float64 terms, and skips a pair only when
``|q|^2 + s_float32 - m`` already exceeds the current k-th best exact value. A
skipped pair therefore could never have entered the top k.

With 48 features or more the same float32 screen is computed as a BLAS product per
tile of query rows and group of blocks (worker threads, single-threaded BLAS): the
inner dimension is then large enough for BLAS to beat the hand-written loops. The
bound holds for any summation order, so nothing else changes.

**Check.** Every pair that survives the screen is evaluated exactly: the sum of
squared float64 differences of the *original* (uncentred) values in column order, the
same arithmetic as the general kernel (:mod:`synthrisk.neighbors.numba_backend`) and
the numpy oracle. The result is identical to theirs bit for bit — same distances,
same indices, ties to the lowest reference index (references are visited in index
order and insertion into the running top k is stable).

**scikit-learn arithmetic.** ``arithmetic="sklearn"`` replaces the check with what
scikit-learn's ``NearestNeighbors(algorithm="auto")`` computes, which is what
ai-privacy-toolkit reports: when scikit-learn uses brute force (more than 15 features,
or ``k >= n_reference // 2``) its distance is the expanded form
``sqrt(max(0, (|x|^2 - 2 x.y) + |y|^2))`` on the uncentred rows, with the squared
norms from BLAS ``ddot`` and the dot product from BLAS ``dgemm``; otherwise (a KD
tree) it is the sum of squared differences. The dot product is reproduced as a chain
of fused multiply-adds in feature order, which is how OpenBLAS's x86-64 ``dgemm``
kernels accumulate each entry; the norms come from the same BLAS ``ddot`` that
scikit-learn calls. Rounding in the expanded form decides which of two equally distant
rows is nearer (and makes a duplicate row's distance a few ulps instead of 0), so on
coarse data with ties this is what reproduces scikit-learn's — and
ai-privacy-toolkit's — numbers. The margin grows by ``4 (p + 4) eps64 (|x| + |y|)^2``
(uncentred norms), the error of the expanded form.

Memory: the float32 copies of both tables (half their float64 size), the
``(n_query, k)`` results and two cache-sized buffers per thread.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any, Literal

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._blocks import rows_per_block

__all__ = ["Arithmetic", "euclidean_kneighbors", "sklearn_uses_brute_force"]

Arithmetic = Literal["exact", "sklearn"]

_EPS32 = float(np.finfo(np.float32).eps)
_EPS64 = float(np.finfo(np.float64).eps)
_TILE = 64  # query rows per parallel task
_BLOCK = 256  # reference rows per cache block (p * 1 KiB of float32)


@intrinsic
def _fma(typingctx, a, b, c):  # pragma: no cover - compiled
    """``a * b + c`` with one rounding (LLVM's ``llvm.fma.f64``)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        double = ir.DoubleType()
        fn = builder.module.declare_intrinsic(
            "llvm.fma", [double], ir.FunctionType(double, [double, double, double])
        )
        return builder.call(fn, args)

    return sig, codegen


@numba.njit(parallel=True, nogil=True, cache=True)
def _fused_kernel(
    query,
    reference,
    rt64,
    qm2,
    rt,
    rsq,
    q_sq,
    q_norm,
    r_norm_max,
    x_sq,
    y_sq,
    x_norm,
    y_norm_max,
    expanded,
    c32,
    c64,
    tile_rows,
    block_rows,
    best,
    best_i,
):  # pragma: no cover - compiled
    n_query = query.shape[0]
    n_ref = reference.shape[0]
    p = reference.shape[1]
    k = best.shape[1]
    n_tiles = (n_query + tile_rows - 1) // tile_rows
    n_blocks = (n_ref + block_rows - 1) // block_rows
    for tile in numba.prange(n_tiles):
        c0 = np.empty(block_rows, dtype=np.float32)
        c1 = np.empty(block_rows, dtype=np.float32)
        exact = np.empty(block_rows, dtype=np.float64)
        q0 = tile * tile_rows
        q1 = min(n_query, q0 + tile_rows)
        for b in range(n_blocks):
            r0 = b * block_rows
            r1 = min(n_ref, r0 + block_rows)
            rb = r1 - r0
            rs = rsq[r0:r1]
            for t in range(q0, q1, 2):
                u = min(t + 1, q1 - 1)
                _screen_pair(qm2, t, u, rt, rs, r0, r1, c0, c1)
                _check(
                    query,
                    reference,
                    rt64,
                    t,
                    c0,
                    exact,
                    r0,
                    rb,
                    q_sq,
                    q_norm,
                    r_norm_max[b],
                    x_sq,
                    y_sq,
                    x_norm,
                    y_norm_max[b],
                    expanded,
                    c32,
                    c64,
                    best,
                    best_i,
                )
                if u != t:
                    _check(
                        query,
                        reference,
                        rt64,
                        u,
                        c1,
                        exact,
                        r0,
                        rb,
                        q_sq,
                        q_norm,
                        r_norm_max[b],
                        x_sq,
                        y_sq,
                        x_norm,
                        y_norm_max[b],
                        expanded,
                        c32,
                        c64,
                        best,
                        best_i,
                    )
    return p * k  # keeps numba from treating the kernel as pure


@numba.njit(fastmath={"contract"}, nogil=True, cache=True)
def _screen_pair(qm2, t, u, rt, rs, r0, r1, c0, c1):  # pragma: no cover - compiled
    """``c0[j] = |r_j|^2 - 2 q_t.r_j`` and ``c1`` for ``q_u``, in float32."""
    p = rt.shape[0]
    rb = r1 - r0
    for j in range(rb):
        c0[j] = rs[j]
        c1[j] = rs[j]
    f = 0
    while f + 4 <= p:
        a0 = qm2[t, f]
        a1 = qm2[t, f + 1]
        a2 = qm2[t, f + 2]
        a3 = qm2[t, f + 3]
        b0 = qm2[u, f]
        b1 = qm2[u, f + 1]
        b2 = qm2[u, f + 2]
        b3 = qm2[u, f + 3]
        w0 = rt[f, r0:r1]
        w1 = rt[f + 1, r0:r1]
        w2 = rt[f + 2, r0:r1]
        w3 = rt[f + 3, r0:r1]
        for j in range(rb):
            x0 = w0[j]
            x1 = w1[j]
            x2 = w2[j]
            x3 = w3[j]
            c0[j] += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3
            c1[j] += b0 * x0 + b1 * x1 + b2 * x2 + b3 * x3
        f += 4
    while f < p:
        a0 = qm2[t, f]
        b0 = qm2[u, f]
        w0 = rt[f, r0:r1]
        for j in range(rb):
            c0[j] += a0 * w0[j]
            c1[j] += b0 * w0[j]
        f += 1


@numba.njit(nogil=True, cache=True)
def _check(
    query,
    reference,
    rt64,
    i,
    screen,
    exact,
    r0,
    rb,
    q_sq,
    q_norm,
    r_norm_max,
    x_sq,
    y_sq,
    x_norm,
    y_norm_max,
    expanded,
    c32,
    c64,
    best,
    best_i,
):  # pragma: no cover - compiled
    """Evaluate exactly every pair of query row ``i`` the screen cannot rule out."""
    k = best.shape[1]
    p = query.shape[1]
    reach = q_norm[i] + r_norm_max
    margin = c32 * reach * reach + c64 * reach * reach
    if expanded:
        reach64 = x_norm[i] + y_norm_max
        margin += c64 * reach64 * reach64
    worst = best[i, k - 1]
    limit = worst - q_sq[i] + margin
    # vectorised count first: most blocks hold no candidate at all
    limit32 = np.float32(limit)
    if limit32 < limit:
        limit32 = np.nextafter(limit32, np.float32(np.inf))
    n_candidates = 0
    for j in range(rb):
        n_candidates += screen[j] <= limit32
    if n_candidates == 0:
        return
    if n_candidates * 8 > rb:
        # many candidates (ties on coarse data): evaluate the whole block with loops
        # that vectorise across reference rows, each sum still in feature order
        e = exact[:rb]
        e[:] = 0.0
        for f in range(p):
            a = query[i, f]
            row = rt64[f, r0 : r0 + rb]
            if expanded:
                for j in range(rb):
                    e[j] = _fma(a, row[j], e[j])  # type: ignore[call-arg]
            else:
                for j in range(rb):
                    d = a - row[j]
                    e[j] += d * d
        if expanded:
            for j in range(rb):
                v = (x_sq[i] + -2.0 * e[j]) + y_sq[r0 + j]
                e[j] = v if v > 0.0 else 0.0
        for j in range(rb):
            acc = e[j]
            if acc < worst:
                pos = k - 1
                while pos > 0 and best[i, pos - 1] > acc:
                    best[i, pos] = best[i, pos - 1]
                    best_i[i, pos] = best_i[i, pos - 1]
                    pos -= 1
                best[i, pos] = acc
                best_i[i, pos] = r0 + j
                worst = best[i, k - 1]
        return
    for j in range(rb):
        if screen[j] > limit:
            continue
        jj = r0 + j
        if expanded:
            dot = 0.0
            for f in range(p):
                dot = _fma(query[i, f], reference[jj, f], dot)  # type: ignore[call-arg]
            acc = (x_sq[i] + -2.0 * dot) + y_sq[jj]
            if acc < 0.0:
                acc = 0.0
        else:
            acc = 0.0
            for f in range(p):
                d = query[i, f] - reference[jj, f]
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
            limit = worst - q_sq[i] + margin


def sklearn_uses_brute_force(n_features: int, n_reference: int, k: int) -> bool:
    """Whether ``NearestNeighbors(algorithm="auto")`` searches by brute force.

    scikit-learn (1.2 to 1.9) chooses brute force when there are more than 15
    features or ``k >= n_reference // 2``, and a KD tree otherwise.
    """
    return n_features > 15 or k >= n_reference // 2


def _blas_squared_norms(rows: FloatArray) -> FloatArray:
    """``x.x`` of every row from BLAS ``ddot``, as scikit-learn computes it."""
    from scipy.linalg.blas import ddot

    out = np.empty(rows.shape[0])
    for i in range(rows.shape[0]):
        out[i] = ddot(rows[i], rows[i])
    return out


def euclidean_kneighbors(
    query: FloatArray,
    reference: FloatArray,
    *,
    k: int,
    arithmetic: Arithmetic = "exact",
    working_memory: float | None = None,
    progress: Callable[[int], None] | None = None,
    tile_rows: int = _TILE,
    block_rows: int = _BLOCK,
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
    arithmetic : {"exact", "sklearn"}, default="exact"
        ``"exact"``: sums of squared differences. ``"sklearn"``: scikit-learn's
        ``NearestNeighbors`` arithmetic (see the module docstring).
    working_memory : float, default=None
        MiB; bounds the number of query rows per progress step.
    progress : callable, default=None
        Called with the number of query rows finished after each step.
    tile_rows, block_rows : int
        Query rows per parallel task and reference rows per cache block (tests use
        tiny blocks; the defaults fit L1/L2 caches).

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
    if n_query == 0 or p == 0:
        best = np.zeros((n_query, k))
        best_i = np.tile(np.arange(k, dtype=np.int64), (n_query, 1))
        if progress is not None and n_query:
            progress(n_query)
        return best, best_i
    if arithmetic == "sklearn" and sklearn_uses_brute_force(p, n_ref, k):
        best, best_i = _sklearn_brute(
            query, reference, k, working_memory, progress, tile_rows, block_rows
        )
    else:
        best, best_i = _fused(
            query,
            reference,
            k,
            None,
            None,
            working_memory,
            progress,
            tile_rows,
            block_rows,
        )
    return np.sqrt(best), best_i


def _fused(
    query: FloatArray,
    reference: FloatArray,
    k: int,
    x_sq: FloatArray | None,
    y_sq: FloatArray | None,
    working_memory: float | None,
    progress: Callable[[int], None] | None,
    tile_rows: int,
    block_rows: int,
) -> tuple[FloatArray, IntArray]:
    """Squared distances (exact, or expanded when norms are given) and indices of the k nearest."""
    n_query, p = query.shape
    n_ref = reference.shape[0]
    best = np.full((n_query, k), np.inf)
    best_i = np.full((n_query, k), -1, dtype=np.int64)
    expanded = x_sq is not None and y_sq is not None
    centre = reference.mean(axis=0)
    ref_c = reference - centre
    r_sq = np.einsum("ij,ij->i", ref_c, ref_c)
    rt64 = np.ascontiguousarray(reference.T)
    # many features: the float32 screen as a BLAS product; otherwise the fused kernel
    blas = p >= _BLAS_FEATURES
    rt = np.ascontiguousarray(ref_c.T, dtype=np.float32)
    rsq = r_sq.astype(np.float32)
    n_blocks = -(-n_ref // block_rows)
    pad = n_blocks * block_rows - n_ref

    def block_max(values: FloatArray) -> FloatArray:
        return np.pad(values, (0, pad)).reshape(n_blocks, block_rows).max(axis=1)

    r_norm_max = block_max(np.sqrt(r_sq))
    if x_sq is not None and y_sq is not None:
        y_norm_max = block_max(np.sqrt(y_sq))
    else:
        x_sq = y_sq = np.zeros(0)
        y_norm_max = np.zeros(n_blocks)
    c32 = 2.0 * (p + 8) * _EPS32
    c64 = 4.0 * (p + 4) * _EPS64
    # progress steps: enough rows for every thread, bounded by working memory
    step = rows_per_block(
        8 * (4 * p + k), working_memory=working_memory, n_rows=n_query
    )
    step = min(step, max(tile_rows * numba.get_num_threads() * 8, -(-n_query // 20)))
    for start in range(0, n_query, step):
        stop = min(start + step, n_query)
        q_c = query[start:stop] - centre
        q_sq = np.einsum("ij,ij->i", q_c, q_c)
        qm2 = np.ascontiguousarray(-2.0 * q_c, dtype=np.float32)
        x_part = x_sq[start:stop] if expanded else x_sq
        args = (
            query[start:stop],
            reference,
            rt64,
            qm2,
            rt,
            rsq,
            q_sq,
            np.sqrt(q_sq),
            r_norm_max,
            x_part,
            y_sq,
            np.sqrt(x_part),
            y_norm_max,
            expanded,
            c32,
            c64,
            tile_rows,
            block_rows,
            best[start:stop],
            best_i[start:stop],
        )
        if blas:
            _blas_screened(*args)
        else:
            _fused_kernel(*args)
        if progress is not None:
            progress(stop - start)
    return best, best_i


_BLAS_FEATURES = 48  # from this many features on, BLAS computes the float32 screen
_BLAS_GROUP = 8  # cache blocks per BLAS product


@numba.njit(nogil=True, cache=True)
def _check_tile(
    query,
    reference,
    rt64,
    screen,
    exact,
    q0,
    r_start,
    block_rows,
    q_sq,
    q_norm,
    r_norm_max,
    x_sq,
    y_sq,
    x_norm,
    y_norm_max,
    expanded,
    c32,
    c64,
    best,
    best_i,
):  # pragma: no cover - compiled
    """Check a tile of query rows against a group of cache blocks screened by BLAS."""
    n_ref = reference.shape[0]
    width = screen.shape[1]
    for start in range(0, width, block_rows):
        r0 = r_start + start
        rb = min(block_rows, n_ref - r0, width - start)
        b = r0 // block_rows
        for t in range(screen.shape[0]):
            _check(
                query,
                reference,
                rt64,
                q0 + t,
                screen[t, start : start + rb],
                exact,
                r0,
                rb,
                q_sq,
                q_norm,
                r_norm_max[b],
                x_sq,
                y_sq,
                x_norm,
                y_norm_max[b],
                expanded,
                c32,
                c64,
                best,
                best_i,
            )


def _blas_screened(
    query: FloatArray,
    reference: FloatArray,
    rt64: FloatArray,
    qm2: Any,
    rt: Any,
    rsq: Any,
    q_sq: FloatArray,
    q_norm: FloatArray,
    r_norm_max: FloatArray,
    x_sq: FloatArray,
    y_sq: FloatArray,
    x_norm: FloatArray,
    y_norm_max: FloatArray,
    expanded: bool,
    c32: float,
    c64: float,
    tile_rows: int,
    block_rows: int,
    best: FloatArray,
    best_i: IntArray,
) -> None:
    """The fused kernel's float32 screen as BLAS products (many features), same checks.

    Tiles of query rows run on worker threads, each with single-threaded BLAS; the
    rounding bound of the screen holds for any summation order, so the checks and
    the results are those of the fused kernel.
    """
    from threadpoolctl import threadpool_limits

    n_query, n_ref = query.shape[0], reference.shape[0]
    group = block_rows * _BLAS_GROUP
    tile = max(tile_rows, 128)

    def run(q0: int) -> None:
        q1 = min(q0 + tile, n_query)
        exact = np.empty(block_rows)
        for g0 in range(0, n_ref, group):
            g1 = min(g0 + group, n_ref)
            screen = qm2[q0:q1] @ rt[:, g0:g1]
            screen += rsq[g0:g1]
            _check_tile(
                query,
                reference,
                rt64,
                screen,
                exact,
                q0,
                g0,
                block_rows,
                q_sq,
                q_norm,
                r_norm_max,
                x_sq,
                y_sq,
                x_norm,
                y_norm_max,
                expanded,
                c32,
                c64,
                best,
                best_i,
            )

    workers = max(1, min(numba.get_num_threads(), -(-n_query // tile)))
    with (
        threadpool_limits(limits=1, user_api="blas"),
        concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool,
    ):
        list(pool.map(run, range(0, n_query, tile)))


_SKLEARN_CHUNK = 256  # scikit-learn's default ``pairwise_dist_chunk_size``


def _sklearn_block(
    x: FloatArray, x_sq: FloatArray, y: FloatArray, y_sq: FloatArray
) -> FloatArray:
    """scikit-learn's squared distances of one chunk pair, with its very BLAS call."""
    from scipy.linalg.blas import dgemm

    # row-major C = -2 X Y^T as scikit-learn's cython_blas wrapper issues it
    middle = dgemm(-2.0, y.T, x.T, trans_a=1, trans_b=0).T
    values = (x_sq[:, None] + middle) + y_sq[None, :]
    return np.maximum(values, 0.0)


def _merge(
    best: FloatArray, best_i: IntArray, values: FloatArray, first: int
) -> tuple[FloatArray, IntArray]:
    """Running top k merged with a block of reference rows starting at ``first``."""
    k = best.shape[1]
    index = np.broadcast_to(np.arange(first, first + values.shape[1]), values.shape)
    all_v = np.hstack([best, values])
    all_i = np.hstack([best_i, index])
    order = np.lexsort((all_i, all_v))[:, :k]
    return np.take_along_axis(all_v, order, 1), np.take_along_axis(all_i, order, 1)


def _sklearn_brute(
    query: FloatArray,
    reference: FloatArray,
    k: int,
    working_memory: float | None,
    progress: Callable[[int], None] | None,
    tile_rows: int,
    block_rows: int,
) -> tuple[FloatArray, IntArray]:
    """scikit-learn's brute-force values: fused kernel on full chunk pairs, BLAS on the rest.

    scikit-learn multiplies chunks of 256 rows with one BLAS thread. For full
    256 x 256 chunks OpenBLAS accumulates every entry in feature order with fused
    multiply-adds, which the fused kernel reproduces; for the last, partial chunks
    it may take its small-matrix path, whose order differs, so those strips are
    computed with the same ``dgemm`` call on the same chunk.
    """
    from threadpoolctl import threadpool_limits

    n_query, n_ref = query.shape[0], reference.shape[0]
    chunk = _SKLEARN_CHUNK
    x_full = n_query - n_query % chunk
    y_full = n_ref - n_ref % chunk
    x_sq = _blas_squared_norms(query)
    y_sq = _blas_squared_norms(reference)
    best = np.full((n_query, k), np.inf)
    best_i = np.full((n_query, k), -1, dtype=np.int64)
    if x_full and y_full:
        best[:x_full], best_i[:x_full] = _fused(
            query[:x_full],
            reference[:y_full],
            k,
            x_sq[:x_full],
            y_sq[:y_full],
            working_memory,
            progress,
            tile_rows,
            block_rows,
        )
    elif x_full and progress is not None:
        progress(x_full)
    with threadpool_limits(limits=1, user_api="blas"):
        if y_full < n_ref:
            for start in range(0, x_full, chunk):
                rows = slice(start, start + chunk)
                values = _sklearn_block(
                    query[rows], x_sq[rows], reference[y_full:], y_sq[y_full:]
                )
                best[rows], best_i[rows] = _merge(
                    best[rows], best_i[rows], values, y_full
                )
        if x_full < n_query:
            rows = slice(x_full, n_query)
            for start in range(0, n_ref, chunk):
                cols = slice(start, min(start + chunk, n_ref))
                values = _sklearn_block(
                    query[rows], x_sq[rows], reference[cols], y_sq[cols]
                )
                best[rows], best_i[rows] = _merge(
                    best[rows], best_i[rows], values, start
                )
            if progress is not None:
                progress(n_query - x_full)
    return best, best_i


def euclidean_flops(n_query: int, n_reference: int, n_features: int) -> float:
    """Floating-point operations of the screen (one multiply-add per feature and pair)."""
    return 2.0 * n_query * n_reference * n_features
