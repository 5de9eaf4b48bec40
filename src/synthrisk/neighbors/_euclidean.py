# SPDX-License-Identifier: BSD-3-Clause
"""Exact Euclidean k-nearest neighbours: a fused, register-blocked, multi-core numba kernel.

For plain Euclidean distance on dense numeric arrays the general neighbour kernel
(term by term, in float64) leaves most of the CPU idle. This kernel splits every
pair into a cheap single-precision *screen* and an exact double-precision *check*,
and never writes an n_query × n_reference matrix.

**Layout.** Columns whose values are all 0 or 1 in both tables (one-hot encoded
categories) are packed as bits, 32 to a word; columns constant over both tables are
left out of the screen; the other ("numeric") columns are centred on the reference
mean. Reference rows are stored in *packs* of 16 rows, feature-major inside a pack
(one 512-bit or two 256-bit vectors per feature), followed by the packs' squared
norms.

**Screen.** A microkernel written in LLVM vector IR (:func:`_screen`) takes six query
rows and one pack and keeps the 6 × 16 accumulators in vector registers for the whole
feature loop:

    s(q, r) = |r|^2 + H(q, r) - 2 q.r      so that      |q - r|^2 = |q|^2 + s(q, r),

where ``H`` is the number of differing bit columns (``popcount(q xor r)``, exact) and
the rest is single precision over the numeric columns. Only then are the 96 values
compared with the six query rows' current limits; a pack with no candidate costs no
memory traffic beyond its loads. Packs are visited in L1-sized blocks for a tile of 48
query rows at a time; tiles are handed out to the threads one at a time.

**Error bound.** With ``u = eps32 / 2``, ``m`` numeric columns, ``q``, ``r`` the screen
vectors (centred numeric values and bits), rounding the inputs to float32 costs at most
``u |r|^2 + 4 u |q| |r|`` (the bits and ``H`` are exact), and any summation order of
the ``m + 2`` terms at most ``gamma_{m+3} (|r|^2 + H + 2 |q| |r|)`` (Higham, *Accuracy
and Stability of Numerical Algorithms*, 2nd ed., §3.1), so

    |s_float32 - s| <= (m + 9) u (|q| + |r|)^2.

Centring in float64 moves ``|q - r|^2`` by at most ``3 eps64 (|q| + |r|)^2`` (each
rounding is relative to the centred value), and the float64 check itself is within
``(p + 1) eps64 |q - r|^2`` of the real number (``p`` columns). The kernel uses the
margin

    e(q, block) = 2 (m + 9) eps32 (|q| + R)^2 + 4 (p + 4) eps64 (|q| + R)^2,

``R`` the largest ``|r|`` of the block: four times the float32 bound plus the float64
terms, so that the exact value (as computed, minus ``|q|^2``) lies within
``s_float32 ± e``.

**Candidates.** Each query row keeps the k smallest upper bounds ``s_float32 + e``
seen so far. A pair whose lower bound ``s_float32 - e`` exceeds the k-th of them is
strictly farther than k rows already seen, so it can neither enter the top k nor tie
with it: the row's screen limit is that k-th upper bound plus ``e``. Pairs under the
limit are remembered (index and lower bound), and at the end of the scan only those
whose lower bound is still under the final k-th upper bound — about k per row on
continuous data — are evaluated exactly (earlier, when more than 64 pile up on coarse
data with many exact ties).

**Check.** The exact value is the sum of squared float64 differences of the
*original* (uncentred) values in column order, the same arithmetic as the general
kernel (:mod:`synthrisk.neighbors.numba_backend`) and the numpy oracle. Candidates
are checked in reference index order and inserted into the running top k only when
strictly better, so the result is identical to the oracle's bit for bit — same
distances, same indices, ties to the lowest reference index.

**scikit-learn arithmetic.** ``arithmetic="sklearn"`` replaces the check with what
scikit-learn's ``NearestNeighbors(algorithm="auto")`` computes, which is what
ai-privacy-toolkit reports: when scikit-learn uses brute force (more than 15 features,
or ``k >= n_reference // 2``) its distance is the expanded form
``sqrt(max(0, (|x|^2 - 2 x.y) + |y|^2))`` on the uncentred rows, with the squared
norms from BLAS ``ddot`` and the dot product from BLAS ``dgemm`` on chunks of 256
rows; otherwise (a KD tree) it is the sum of squared differences. The dot product is
reproduced as a chain of fused multiply-adds in feature order, which is how
OpenBLAS's x86-64 ``dgemm`` kernels accumulate each entry; this is checked once per
chunk shape on random values (:func:`_blas_is_fma_chain`), and the chunks of a shape
that BLAS rounds otherwise (OpenBLAS's small-matrix path for tiny products) are
computed with the same ``dgemm`` call on the same chunk. The norms come from
the same BLAS ``ddot`` that scikit-learn calls. Rounding in the expanded form
decides which of two equally distant rows is nearer (and makes a duplicate row's
distance a few ulps instead of 0), so on coarse data with ties this is what
reproduces scikit-learn's — and ai-privacy-toolkit's — numbers. The margin grows by
``4 (p + 4) eps64 (|x| + |y|)^2`` (uncentred norms), the error of the expanded form.

Memory: the float32 (and bit-packed) copies of both tables (at most half their
float64 size), the ``(n_query, k)`` results and about 50 KiB per thread.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Literal

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils as _cgutils
from numba.extending import intrinsic

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._blocks import rows_per_block

cgutils: Any = _cgutils  # numba's LLVM helpers (untyped)

__all__ = [
    "Arithmetic",
    "euclidean_flops",
    "euclidean_kneighbors",
    "sklearn_uses_brute_force",
]

Arithmetic = Literal["exact", "sklearn"]

_EPS32 = float(np.finfo(np.float32).eps)
_EPS64 = float(np.finfo(np.float64).eps)
_LANES = 16  # reference rows per pack: one 512-bit vector of float32 per feature
_ROWS = 6  # query rows per microkernel call (6 x 16 accumulators in registers)
_TILE = 48  # query rows per parallel task, a multiple of _ROWS
_BLOCK_BYTES = 24 * 1024  # packs visited per tile: about L1-sized
_PENDING = 64  # candidates per query row kept before an exact check
_MIN_BITS = 4  # fewer 0/1 columns than this are screened as numbers
_SKLEARN_CHUNK = 256  # scikit-learn's default ``pairwise_dist_chunk_size``


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


@intrinsic
def _lowest_bit(typingctx, mask):  # pragma: no cover - compiled
    """Position of the lowest set bit of a non-zero int64 (``llvm.cttz``)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i64, [i64, ir.IntType(1)]), "llvm.cttz.i64"
        )
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])

    return sig, codegen


@intrinsic
def _next_task(typingctx, counter):  # pragma: no cover - compiled
    """Atomically increment ``counter[0]`` (int64) and return its previous value."""
    sig = types.int64(counter)

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        one = ir.Constant(ir.IntType(64), 1)
        return builder.atomic_rmw("add", array.data, one, "seq_cst")

    return sig, codegen


def _emit_screen(context, builder, signature, args):  # pragma: no cover - compiled
    """LLVM IR of :func:`_screen` (vectors of ``_LANES`` lanes, ``_ROWS`` query rows)."""
    qm2_t, qbits_t, _, rpack_t, rbits_t, _, lim_t, out_t, masks_t = signature.args
    qm2 = context.make_array(qm2_t)(context, builder, args[0])
    qbits = context.make_array(qbits_t)(context, builder, args[1])
    rpack = context.make_array(rpack_t)(context, builder, args[3])
    rbits = context.make_array(rbits_t)(context, builder, args[4])
    lim = context.make_array(lim_t)(context, builder, args[6])
    out = context.make_array(out_t)(context, builder, args[7])
    masks = context.make_array(masks_t)(context, builder, args[8])
    t, pack = args[2], args[5]

    i32, i64 = ir.IntType(32), ir.IntType(64)
    vf = ir.VectorType(ir.FloatType(), _LANES)
    vi = ir.VectorType(i32, _LANES)
    lanes = ir.Constant(i64, _LANES)
    splat_mask = ir.Constant(vi, [0] * _LANES)
    contract = ("contract",)
    ctpop = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vi, [vi]), f"llvm.ctpop.v{_LANES}i32"
    )

    def splat(value: Any, vector_type: Any) -> Any:
        one = builder.insert_element(
            ir.Constant(vector_type, ir.Undefined), value, ir.Constant(i32, 0)
        )
        return builder.shuffle_vector(
            one, ir.Constant(vector_type, ir.Undefined), splat_mask
        )

    def load_vector(base: Any, row: Any, vector_type: Any) -> Any:
        ptr = builder.gep(base, [builder.mul(row, lanes)])
        return builder.load(builder.bitcast(ptr, vector_type.as_pointer()), align=4)

    n_num = cgutils.unpack_tuple(builder, qm2.shape)[1]
    n_words = cgutils.unpack_tuple(builder, qbits.shape)[1]
    rows = [builder.add(t, ir.Constant(i64, i)) for i in range(_ROWS)]
    pack_rows = cgutils.unpack_tuple(builder, rpack.shape)[1]  # n_num + 2
    r_base = builder.gep(rpack.data, [builder.mul(pack, builder.mul(pack_rows, lanes))])
    b_base = builder.gep(rbits.data, [builder.mul(pack, builder.mul(n_words, lanes))])
    q_rows = [builder.gep(qm2.data, [builder.mul(row, n_num)]) for row in rows]
    b_rows = [builder.gep(qbits.data, [builder.mul(row, n_words)]) for row in rows]

    # differing bits: integer accumulators, exact
    counts = [
        cgutils.alloca_once_value(builder, ir.Constant(vi, [0] * _LANES)) for _ in rows
    ]
    with cgutils.for_range(builder, n_words) as loop:
        words = load_vector(b_base, loop.index, vi)
        for b_row, count in zip(b_rows, counts, strict=True):
            mine = splat(builder.load(builder.gep(b_row, [loop.index])), vi)
            ones = builder.call(ctpop, [builder.xor(mine, words)])
            builder.store(builder.add(builder.load(count), ones), count)

    # |r|^2 + weight * H, then the numeric columns with the accumulators in registers
    norms = load_vector(r_base, n_num, vf)
    weight = load_vector(r_base, builder.add(n_num, ir.Constant(i64, 1)), vf)
    accs = [
        cgutils.alloca_once_value(
            builder,
            builder.fadd(
                norms, builder.fmul(builder.uitofp(builder.load(count), vf), weight)
            ),
        )
        for count in counts
    ]
    with cgutils.for_range(builder, n_num) as loop:
        values = load_vector(r_base, loop.index, vf)
        for q_row, acc in zip(q_rows, accs, strict=True):
            weight = splat(builder.load(builder.gep(q_row, [loop.index])), vf)
            product = builder.fmul(weight, values, flags=contract)
            builder.store(builder.fadd(builder.load(acc), product, flags=contract), acc)

    # store the 6 x 16 values and each row's mask of lanes at or below its limit
    flags = ir.Constant(i64, 0)
    mask_type = ir.IntType(_LANES)
    for i, (row, acc) in enumerate(zip(rows, accs, strict=True)):
        value = builder.load(acc)
        ptr = builder.gep(out.data, [ir.Constant(i64, i * _LANES)])
        builder.store(value, builder.bitcast(ptr, vf.as_pointer()), align=4)
        below = builder.fcmp_ordered(
            "<=", value, splat(builder.load(builder.gep(lim.data, [row])), vf)
        )
        mask = builder.zext(builder.bitcast(below, mask_type), i32)
        builder.store(mask, builder.gep(masks.data, [ir.Constant(i64, i)]))
        hit = builder.zext(builder.icmp_unsigned("!=", mask, ir.Constant(i32, 0)), i64)
        flags = builder.or_(flags, builder.shl(hit, ir.Constant(i64, i)))
    return flags


@intrinsic
def _screen(
    typingctx, qm2, qbits, t, rpack, rbits, pack, lim, out, masks
):  # pragma: no cover - compiled
    """Screen query rows ``t .. t + 5`` against reference pack ``pack``.

    ``qm2`` (float32, n x m) holds ``-2 q`` of the numeric columns, ``qbits``
    (uint32, n x words) the bit columns, ``rpack`` (float32, packs x (m + 2) x 16) the
    reference pack feature-major, then the squared norms, then the weight of a
    differing bit (the screen's scale squared) in every lane, ``rbits`` (uint32,
    packs x words x 16) its bits. Writes the 6 x 16 screen values to ``out``, and to
    ``masks[i]`` (int32) the lanes at or below the limit ``lim[t + i]`` of row
    ``t + i``; returns the rows with such a lane as bits ``0 .. 5``.
    """
    sig = types.int64(qm2, qbits, t, rpack, rbits, pack, lim, out, masks)
    return sig, _emit_screen


@numba.njit(nogil=True, cache=True)
def _round_up32(value):  # pragma: no cover - compiled
    """A float32 at or above ``value`` (at most a few ulps above; no branch, so it vectorises).

    ``value (1 + 2^-22)`` rounded to nearest float32 cannot fall below ``value``; the
    tiny constant covers values that would round to a float32 subnormal.
    """
    return np.float32(value + abs(value) * 2.384185791015625e-07 + 1e-30)


@numba.njit(nogil=True, cache=True)
def _insert(best, best_i, row, value, index):  # pragma: no cover - compiled
    """Put ``(value, index)`` into the sorted top k of ``row`` if it is strictly better.

    Reference rows arrive in increasing index order, so an equal value keeps the
    earlier (lower) index. ``best_i`` may be None (values only). Returns the new
    k-th best value.
    """
    k = best.shape[1]
    if value < best[row, k - 1]:
        pos = k - 1
        while pos > 0 and best[row, pos - 1] > value:
            best[row, pos] = best[row, pos - 1]
            if best_i is not None:
                best_i[row, pos] = best_i[row, pos - 1]
            pos -= 1
        best[row, pos] = value
        if best_i is not None:
            best_i[row, pos] = index
    return best[row, k - 1]


@numba.njit(nogil=True, cache=True)
def _exact(checks, i, j):  # pragma: no cover - compiled
    """Squared distance of query row ``i`` and reference row ``j`` as the oracle computes it.

    ``checks`` is ``(query, reference, expanded, x_sq, y_sq)``.
    """
    query, reference, expanded, x_sq, y_sq = checks
    if expanded:
        dot = 0.0
        for f in range(query.shape[1]):
            dot = _fma(query[i, f], reference[j, f], dot)  # type: ignore[call-arg]
        value = (x_sq[i] + -2.0 * dot) + y_sq[j]
        return value if value > 0.0 else 0.0
    acc = 0.0
    for f in range(query.shape[1]):
        d = query[i, f] - reference[j, f]
        acc += d * d
    return acc


@numba.njit(nogil=True, cache=True)
def _flush(row, local, candidates, checks, best, best_i):  # pragma: no cover - compiled
    """Check exactly, in index order, the pending candidates of ``row`` that can still enter the top k.

    ``candidates`` is ``(bound, pending, lower, n_pending)`` of the tile; ``local`` is
    the row's position in it.
    """
    bound, pending, lower, n_pending = candidates
    k = bound.shape[1]
    for c in range(n_pending[local]):
        if lower[local, c] <= bound[local, k - 1]:
            j = pending[local, c]
            value = _exact(checks, row, j)
            if value < best[row, k - 1]:
                _insert(best, best_i, row, value, j)
    n_pending[local] = 0


@numba.njit(nogil=True, cache=True)
def _make_room(
    row, local, candidates, checks, best, best_i
):  # pragma: no cover - compiled
    """Drop the pending candidates that can no longer enter the top k; check exactly if many remain."""
    bound, pending, lower, n_pending = candidates
    k = bound.shape[1]
    kept = 0
    for c in range(n_pending[local]):
        if lower[local, c] <= bound[local, k - 1]:
            pending[local, kept] = pending[local, c]
            lower[local, kept] = lower[local, c]
            kept += 1
    n_pending[local] = kept
    if kept > pending.shape[1] // 2:
        _flush(row, local, candidates, checks, best, best_i)


@numba.njit(nogil=True, cache=True)
def _take_hits(
    hits, t, q0, pack, screened, candidates, checks, best, best_i
):  # pragma: no cover - compiled
    """Record the pairs of a screened pack that are at or below their row's limit.

    ``screened`` is ``(out, masks, lim, margin)`` (:func:`_screen`'s outputs, the rows'
    limits and margins). A candidate ``j`` of row ``i`` is kept with the lower bound
    ``s_j - e`` of its exact value (``e`` the margin), and its upper bound ``s_j + e``
    tightens the running k-th upper bound ``bound[i, k - 1]``: the k-th exact value
    cannot exceed it, so a later row whose lower bound is above it is skipped.
    Candidates are checked exactly only at the end (:func:`_flush`), or earlier when
    many exact ties pile up (:func:`_make_room`).
    """
    out, masks, lim, margin = screened
    bound, pending, lower, n_pending = candidates
    k = bound.shape[1]
    n_ref = checks[1].shape[0]
    for i in range(_ROWS):
        if (hits >> i) & 1 == 0:
            continue
        row = t + i
        local = row - q0
        e = margin[row]
        mask = np.int64(masks[i])
        while mask != 0:
            lane = _lowest_bit(mask)  # type: ignore[call-arg,var-annotated]
            mask &= mask - 1
            j = pack * _LANES + lane
            if j >= n_ref:
                break
            if out[i, lane] > lim[row]:  # the limit may have dropped since the screen
                continue
            if n_pending[local] == pending.shape[1]:
                _make_room(row, local, candidates, checks, best, best_i)
            s = np.float64(out[i, lane])
            pending[local, n_pending[local]] = j
            lower[local, n_pending[local]] = s - e
            n_pending[local] += 1
            if s + e < bound[local, k - 1]:
                worst = _insert(bound, None, local, s + e, j)
                lim[row] = _round_up32(worst + e)


@numba.njit(nogil=True, cache=True)
def _tile(
    q0, q1, checks, q_side, r_side, settings, best, best_i
):  # pragma: no cover - compiled
    """Screen and check query rows ``q0 .. q1`` (at most ``_TILE``) against every reference row.

    ``checks`` is ``(query, reference, expanded, x_sq, y_sq)``, ``q_side`` and
    ``r_side`` come from :class:`_Plan`, ``settings`` is ``(c32, c64,
    packs_per_block)``.
    """
    expanded = checks[2]
    qm2, qbits, q_norm, x_norm, lim, margin = q_side
    rpack, rbits, r_norm_max, y_norm_max = r_side
    c32, c64, c_abs, packs_per_block = settings
    k = best.shape[1]
    n_packs = rpack.shape[0]
    q_end = q0 + (q1 - q0 + _ROWS - 1) // _ROWS * _ROWS  # padded rows never hit
    out = np.empty((_ROWS, _LANES), dtype=np.float32)
    masks = np.empty(_ROWS, dtype=np.int32)
    screened = (out, masks, lim, margin)
    # upper bounds of the k best exact values (minus |q|^2), and pending candidates
    bound = np.full((_TILE, k), np.inf)
    candidates = (
        bound,
        np.empty((_TILE, _PENDING), dtype=np.int64),
        np.empty((_TILE, _PENDING)),
        np.zeros(_TILE, dtype=np.int64),
    )
    for row in range(q1, q_end):
        lim[row] = -np.inf
    for p0 in range(0, n_packs, packs_per_block):
        block = p0 // packs_per_block
        for row in range(q0, q1):
            reach = q_norm[row] + r_norm_max[block]
            value = (c32 + c64) * reach * reach + c_abs
            if expanded:
                reach64 = x_norm[row] + y_norm_max[block]
                value += c64 * reach64 * reach64
            margin[row] = value
            lim[row] = _round_up32(bound[row - q0, k - 1] + value)
        for t in range(q0, q_end, _ROWS):
            for pack in range(p0, min(p0 + packs_per_block, n_packs)):
                hits = _screen(qm2, qbits, t, rpack, rbits, pack, lim, out, masks)  # type: ignore[call-arg,var-annotated]
                if hits != 0:
                    _take_hits(
                        hits, t, q0, pack, screened, candidates, checks, best, best_i
                    )
    for row in range(q0, q1):
        _flush(row, row - q0, candidates, checks, best, best_i)


@numba.njit(parallel=True, nogil=True, cache=True)
def _search(
    checks, q_side, r_side, settings, start, stop, n_threads, best, best_i
):  # pragma: no cover - compiled
    """Query rows ``start .. stop`` in tiles of ``_TILE`` rows, on all threads (see :func:`_tile`)."""
    n_tiles = (stop - start + _TILE - 1) // _TILE
    # tiles are handed out one at a time, so a core slowed by other work takes fewer
    counter = np.zeros(1, dtype=np.int64)
    for _ in numba.prange(min(n_threads, n_tiles)):
        task = _next_task(counter)  # type: ignore[call-arg,var-annotated]
        while task < n_tiles:
            q0 = start + task * _TILE
            q1 = min(q0 + _TILE, stop)
            _tile(q0, q1, checks, q_side, r_side, settings, best, best_i)
            task = _next_task(counter)
    return n_tiles  # keeps numba from treating the kernel as pure


@numba.njit(nogil=True, cache=True)
def _merge(values, first, best, best_i):  # pragma: no cover - compiled
    """Merge a block of squared distances (reference rows ``first ..``) into the top k."""
    k = best.shape[1]
    for i in range(values.shape[0]):
        worst = best[i, k - 1]
        for j in range(values.shape[1]):
            if values[i, j] < worst:
                worst = _insert(best, best_i, i, values[i, j], first + j)


def sklearn_uses_brute_force(n_features: int, n_reference: int, k: int) -> bool:
    """Whether ``NearestNeighbors(algorithm="auto")`` searches by brute force.

    scikit-learn (1.2 to 1.9) chooses brute force when there are more than 15
    features or ``k >= n_reference // 2``, and a KD tree otherwise.
    """
    return n_features > 15 or k >= n_reference // 2


def euclidean_flops(n_query: int, n_reference: int, n_features: int) -> float:
    """Floating-point operations of a dense screen (one multiply-add per feature and pair)."""
    return 2.0 * n_query * n_reference * n_features


@numba.njit(nogil=True, cache=True)
def _ddot_rows(rows, ddot):  # pragma: no cover - compiled
    """``ddot(x, x)`` of every row, through the BLAS function pointer ``ddot``."""
    out = np.empty(rows.shape[0])
    ints = np.array([rows.shape[1], 1], dtype=np.int32)  # n, incx (Fortran ints)
    n_ptr = ints.ctypes.data
    inc_ptr = ints[1:].ctypes.data
    for i in range(rows.shape[0]):
        row = rows[i].ctypes.data
        out[i] = ddot(n_ptr, row, inc_ptr, row, inc_ptr)
    return out


def _blas_squared_norms(rows: FloatArray) -> FloatArray:
    """``x.x`` of every row from SciPy's BLAS ``ddot``, the very function scikit-learn calls."""
    import ctypes

    from scipy.linalg import cython_blas

    capsule = cython_blas.__pyx_capi__["ddot"]
    # private prototypes: ctypes.pythonapi's shared function objects stay untouched
    name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
        ("PyCapsule_GetName", ctypes.pythonapi)
    )
    pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi)
    )
    signature = ctypes.CFUNCTYPE(ctypes.c_double, *[ctypes.c_void_p] * 5)
    ddot = signature(pointer(capsule, name(capsule)))
    return _ddot_rows(np.ascontiguousarray(rows), ddot)


def _aligned(shape: tuple[int, ...], dtype: Any, fill: float = 0) -> np.ndarray:
    """A C-contiguous array of ``shape`` starting on a 64-byte boundary."""
    itemsize = np.dtype(dtype).itemsize
    size = int(np.prod(shape))
    raw = np.full(size + 64 // itemsize, fill, dtype=dtype)
    offset = (-raw.ctypes.data % 64) // itemsize
    return raw[offset : offset + size].reshape(shape)


def _bits(rows: np.ndarray, n_words: int) -> np.ndarray:
    """0/1 columns packed into ``n_words`` uint32 words per row."""
    packed = np.packbits(rows.astype(bool), axis=1, bitorder="little")
    words = np.zeros((rows.shape[0], 4 * n_words), dtype=np.uint8)
    words[:, : packed.shape[1]] = packed
    return words.view("<u4").astype(np.uint32)


class _Plan:
    """Everything :func:`_search` reads besides the tables: column roles, packs, norms, bounds.

    The screen is computed on the centred numeric values and the bits times ``2^σ``
    (``σ`` such that the largest screen norm of either table is in [1/2, 1)): a power
    of two changes no rounding, keeps float32 from overflowing, and keeps the bound's
    relative terms valid; what underflows is covered by an absolute term of the
    margin. Screen values, bounds and margins are all in these scaled units.
    """

    def __init__(
        self,
        query: FloatArray,
        reference: FloatArray,
        x_sq: FloatArray | None,
        y_sq: FloatArray | None,
    ) -> None:
        n_ref, p = reference.shape
        lo = np.minimum(reference.min(axis=0), query.min(axis=0))
        hi = np.maximum(reference.max(axis=0), query.max(axis=0))
        binary = (lo == 0) & (hi == 1)  # then check that no value lies in between
        for table in (reference, query):
            part = table[:, binary]
            binary[binary] = ((part == 0) | (part == 1)).all(axis=0)
        if binary.sum() < _MIN_BITS:
            binary[:] = False
        self.binary = np.flatnonzero(binary)
        self.numeric = np.flatnonzero((lo != hi) & ~binary)
        n_words = -(-self.binary.size // 32)
        centre = reference[:, self.numeric].mean(axis=0)
        ref_c = reference[:, self.numeric] - centre
        q_c = query[:, self.numeric] - centre
        r_ones = reference[:, self.binary].sum(axis=1)
        q_ones = query[:, self.binary].sum(axis=1)
        # a bound of the largest screen norm sets the power of two
        widest = max(
            max(float(a.max(initial=0.0)), -float(a.min(initial=0.0)))
            for a in (ref_c, q_c)
        )
        ones = max(float(r_ones.max()), float(q_ones.max()))
        largest = widest * math.sqrt(ref_c.shape[1]) + math.sqrt(ones)
        exponent = math.frexp(largest)[1] if 0 < largest < np.inf else 0
        scale = math.ldexp(1.0, min(-exponent, 1000))
        # of one differing bit (with bits, largest >= 1 and scale <= 1)
        weight = scale * scale if n_words else 0.0
        ref_c *= scale
        q_c *= scale
        r_sq = np.einsum("ij,ij->i", ref_c, ref_c)
        q_sq = np.einsum("ij,ij->i", q_c, q_c)
        r_norm = np.sqrt(r_sq + weight * r_ones)
        q_norm = np.sqrt(q_sq + weight * q_ones)

        # reference packs: 16 rows feature-major, then |r|^2, then the weight of a bit
        m = self.numeric.size
        n_packs = -(-n_ref // _LANES)
        padded = np.zeros((n_packs * _LANES, m + 2), dtype=np.float32)
        padded[:n_ref, :m] = ref_c
        padded[:, m] = np.inf  # padding lanes never pass the screen
        padded[:n_ref, m] = r_sq
        padded[:, m + 1] = weight
        self.rpack = _aligned((n_packs, m + 2, _LANES), np.float32)
        self.rpack[...] = padded.reshape(n_packs, _LANES, m + 2).transpose(0, 2, 1)
        words = np.zeros((n_packs * _LANES, n_words), dtype=np.uint32)
        words[:n_ref] = _bits(reference[:, self.binary], n_words)
        self.rbits = _aligned((n_packs, n_words, _LANES), np.uint32)
        self.rbits[...] = words.reshape(n_packs, _LANES, n_words).transpose(0, 2, 1)

        # query rows padded to a multiple of _ROWS
        n = query.shape[0]
        n_pad = -(-n // _ROWS) * _ROWS
        self.qm2 = np.zeros((n_pad, m), dtype=np.float32)
        np.multiply(q_c, -2.0, out=self.qm2[:n], casting="same_kind")
        self.qbits = np.zeros((n_pad, n_words), dtype=np.uint32)
        self.qbits[:n] = _bits(query[:, self.binary], n_words)

        # packs per cache block; the margin uses the block's largest norm
        pack_bytes = (m + 2 + n_words) * _LANES * 4
        self.packs_per_block = int(min(16, max(1, _BLOCK_BYTES // pack_bytes)))
        block_rows = self.packs_per_block * _LANES
        n_blocks = -(-n_packs // self.packs_per_block)

        def block_max(values: FloatArray) -> FloatArray:
            padded = np.pad(values, (0, n_blocks * block_rows - values.size))
            return padded.reshape(n_blocks, block_rows).max(axis=1)

        def scaled_norms(rows: FloatArray) -> FloatArray:
            with np.errstate(over="ignore"):  # inf: every pair is checked
                rows = rows * scale
                return np.sqrt(np.einsum("ij,ij->i", rows, rows))

        self.r_norm_max = block_max(r_norm)
        self.q_norm = q_norm
        # the expanded form's error is relative to the uncentred norms
        expanded = x_sq is not None and y_sq is not None
        self.x_norm = scaled_norms(query) if expanded else np.zeros(0)
        self.y_norm_max = (
            block_max(scaled_norms(reference)) if expanded else np.zeros(n_blocks)
        )
        self.settings = (
            2.0 * (m + 9) * _EPS32,
            4.0 * (p + 4) * _EPS64,
            # what float32 subnormals can lose, in scaled units
            (p + 4) * 2.0**-100,
            self.packs_per_block,
        )
        self.checks = (
            query,
            reference,
            expanded,
            np.zeros(0) if x_sq is None else x_sq,
            np.zeros(0) if y_sq is None else y_sq,
        )

    def sides(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """The query and reference arrays of :func:`_search`."""
        n_pad = self.qm2.shape[0]
        lim = np.empty(n_pad, dtype=np.float32)
        q_side = (self.qm2, self.qbits, self.q_norm, self.x_norm, lim, np.empty(n_pad))
        return q_side, (self.rpack, self.rbits, self.r_norm_max, self.y_norm_max)


def _fused(
    query: FloatArray,
    reference: FloatArray,
    k: int,
    x_sq: FloatArray | None,
    y_sq: FloatArray | None,
    working_memory: float | None,
    progress: Callable[[int], None] | None,
) -> tuple[FloatArray, IntArray]:
    """Squared distances (exact, or expanded when norms are given) and indices of the k nearest."""
    n_query, p = query.shape
    best = np.full((n_query, k), np.inf)
    best_i = np.full((n_query, k), -1, dtype=np.int64)
    plan = _Plan(query, reference, x_sq, y_sq)
    q_side, r_side = plan.sides()
    # progress steps: enough tiles for every thread, bounded by working memory
    step = rows_per_block(
        8 * (4 * p + k), working_memory=working_memory, n_rows=n_query
    )
    step = min(step, max(_TILE * numba.get_num_threads() * 8, -(-n_query // 20)))
    step = -(-step // _TILE) * _TILE
    threads = numba.get_num_threads()
    for start in range(0, n_query, step):
        stop = min(start + step, n_query)
        _search(
            plan.checks,
            q_side,
            r_side,
            plan.settings,
            start,
            stop,
            threads,
            best,
            best_i,
        )
        if progress is not None:
            progress(stop - start)
    return best, best_i


def euclidean_kneighbors(
    query: FloatArray,
    reference: FloatArray,
    *,
    k: int,
    arithmetic: Arithmetic = "exact",
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
    arithmetic : {"exact", "sklearn"}, default="exact"
        ``"exact"``: sums of squared differences. ``"sklearn"``: scikit-learn's
        ``NearestNeighbors`` arithmetic (see the module docstring).
    working_memory : float, default=None
        MiB; bounds the number of query rows per progress step.
    progress : callable, default=None
        Called with the number of query rows finished after each step.

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
        best, best_i = _sklearn_brute(query, reference, k, working_memory, progress)
    else:
        best, best_i = _fused(query, reference, k, None, None, working_memory, progress)
    return np.sqrt(best), best_i


def _sklearn_middle(x: FloatArray, y: FloatArray) -> FloatArray:
    """``-2 X Y^T`` of one chunk pair with scikit-learn's very BLAS call (one thread)."""
    from scipy.linalg.blas import dgemm
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        # row-major C = -2 X Y^T as scikit-learn's cython_blas wrapper issues it
        return dgemm(-2.0, y.T, x.T, trans_a=1, trans_b=0).T


@numba.njit(nogil=True, cache=True)
def _fma_chain_middle(x, y):  # pragma: no cover - compiled
    """``-2 X Y^T``, every entry a chain of fused multiply-adds in feature order."""
    out = np.empty((x.shape[0], y.shape[0]))
    for i in range(x.shape[0]):
        for j in range(y.shape[0]):
            dot = 0.0
            for f in range(x.shape[1]):
                dot = _fma(x[i, f], y[j, f], dot)  # type: ignore[call-arg]
            out[i, j] = -2.0 * dot
    return out


@functools.lru_cache(maxsize=64)
def _blas_is_fma_chain(n_x: int, n_y: int, n_features: int) -> bool:
    """Whether BLAS ``dgemm`` on an ``n_x`` x ``n_y`` chunk pair rounds as the fused kernel.

    BLAS picks its kernel, and with it the order in which each entry is accumulated,
    from the shapes alone (OpenBLAS: its small-matrix path for tiny products, blocks
    of the inner dimension for very wide rows), never from the values; so one
    product of random values of these shapes, equal entry for entry, shows the
    order. Random values make a different order visible in about half the entries.
    """
    rng = np.random.default_rng(n_x * 1_000_003 + n_y * 1_009 + n_features)
    x = rng.normal(size=(n_x, n_features))
    y = rng.normal(size=(n_y, n_features))
    return bool(np.array_equal(_sklearn_middle(x, y), _fma_chain_middle(x, y)))


def _sklearn_brute(
    query: FloatArray,
    reference: FloatArray,
    k: int,
    working_memory: float | None,
    progress: Callable[[int], None] | None,
) -> tuple[FloatArray, IntArray]:
    """scikit-learn's brute-force values: the fused kernel wherever it rounds as BLAS does.

    scikit-learn multiplies chunks of 256 rows with one BLAS thread. OpenBLAS's
    x86-64 ``dgemm`` kernels accumulate every entry in feature order with fused
    multiply-adds, which the fused kernel reproduces; a BLAS that rounds otherwise on
    some chunk shape (:func:`_blas_is_fma_chain`, checked once per shape) gets those
    chunks computed with the very ``dgemm`` call instead.
    """
    n_query, n_ref, p = query.shape[0], reference.shape[0], query.shape[1]
    chunk = _SKLEARN_CHUNK
    x_full = n_query - n_query % chunk
    y_full = n_ref - n_ref % chunk
    x_sq = _blas_squared_norms(query)
    y_sq = _blas_squared_norms(reference)
    # the chunk shapes that occur: (rows of X chunk, rows of Y chunk)
    x_sizes = {min(chunk, n_query)} | (
        {n_query - x_full} if x_full < n_query else set()
    )
    y_sizes = {min(chunk, n_ref)} | ({n_ref - y_full} if y_full < n_ref else set())
    if all(_blas_is_fma_chain(a, b, p) for a in x_sizes for b in y_sizes):
        return _fused(query, reference, k, x_sq, y_sq, working_memory, progress)
    best = np.full((n_query, k), np.inf)
    best_i = np.full((n_query, k), -1, dtype=np.int64)
    fused_rows = fused_cols = 0
    if x_full and y_full and _blas_is_fma_chain(chunk, chunk, p):
        fused_rows, fused_cols = x_full, y_full
        best[:x_full], best_i[:x_full] = _fused(
            query[:x_full], reference[:y_full], k, x_sq[:x_full], y_sq[:y_full],
            working_memory, progress,
        )  # fmt: skip
    # every other chunk pair through BLAS, in increasing reference order for each row
    for x0 in range(0, n_query, chunk):
        rows = slice(x0, min(x0 + chunk, n_query))
        y_start = fused_cols if x0 < fused_rows else 0
        for y0 in range(y_start, n_ref, chunk):
            y1 = min(y0 + chunk, n_ref)
            middle = _sklearn_middle(query[rows], reference[y0:y1])
            values = np.maximum((x_sq[rows, None] + middle) + y_sq[None, y0:y1], 0.0)
            _merge(values, y0, best[rows], best_i[rows])
        if x0 >= fused_rows and progress is not None:
            progress(rows.stop - rows.start)
    return best, best_i
