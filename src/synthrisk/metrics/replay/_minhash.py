# SPDX-License-Identifier: BSD-3-Clause
"""Vectorised text shingling, MinHash signatures, LSH banding and n-gram spans.

Cells are held as one UTF-8 buffer with offsets (a pyarrow string array after
normalisation: lowercase, punctuation removed, whitespace collapsed), never as one
Python object per word. Numba kernels read the bytes directly:

* a word's hash is FNV-1a over its bytes; a **shingle** is ``width`` consecutive words,
  hashed by chaining the splitmix64 finaliser (a cell shorter than ``width`` words is one
  shingle of all its words);
* a **MinHash** is the minimum over a cell's shingles of ``a_k * h + b_k`` (mod 2^64,
  ``a_k`` odd), for ``k`` in one band's ``rows`` permutations; ``rows`` minima combine
  into one band key. Two cells of Jaccard similarity ``J`` share a band key with
  probability ``J ** rows``, and some band key with ``1 - (1 - J ** rows) ** bands``;
* candidate pairs (same band key) are confirmed with the **exact Jaccard** of the two
  cells' shingle sets, recomputed from the bytes;
* **spans**: the hashes of every run of ``span`` consecutive words, to find runs a
  synthetic cell shares with one real person's cell.

Bands are computed a few at a time, so memory holds a handful of 64-bit keys per cell.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "band_keys",
    "candidate_pairs",
    "cell_hashes",
    "jaccard_pairs",
    "lsh_recall",
    "ngram_hashes",
    "normalised_buffer",
    "permutations",
]

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def normalised_buffer(
    values: list[object] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes and offsets of the cells, lowercased, punctuation removed, spaces collapsed.

    A missing cell is the empty string.
    """
    array = pa.array(values, type=pa.large_string(), from_pandas=True)
    array = pc.fill_null(array, "")
    array = pc.utf8_lower(array)
    array = pc.replace_substring_regex(array, r"[^\p{L}\p{N}\s]+", " ")
    array = pc.replace_substring_regex(array, r"[\s\p{Z}]+", " ")
    array = pc.utf8_trim_whitespace(array)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64)[
        array.offset : array.offset + len(array) + 1
    ].copy()
    data = (
        np.frombuffer(buffers[2], dtype=np.uint8).copy()
        if buffers[2] is not None
        else np.zeros(0, dtype=np.uint8)
    )
    return data, offsets


@numba.njit(inline="always", nogil=True, cache=True)
def _mix(x: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


@numba.njit(nogil=True, cache=True)
def _words(data, start, end, out):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Hashes of the words of one cell into ``out``; returns how many."""
    n = 0
    h = _FNV_OFFSET
    inside = False
    for i in range(start, end):
        c = data[i]
        if c <= 32:
            if inside:
                out[n] = _mix(h)
                n += 1
                inside = False
                h = _FNV_OFFSET
        else:
            h = (h ^ np.uint64(c)) * _FNV_PRIME
            inside = True
    if inside:
        out[n] = _mix(h)
        n += 1
    return n


@numba.njit(nogil=True, cache=True)
def _shingles(words, n, width, out):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Hashes of the ``width``-word shingles (one of all words when fewer); returns how many."""
    if n == 0:
        return 0
    if n < width:
        h = np.uint64(width)
        for j in range(n):
            h = _mix(h ^ words[j])
        out[0] = h
        return 1
    for i in range(n - width + 1):
        h = np.uint64(width)
        for j in range(width):
            h = _mix(h ^ words[i + j])
        out[i] = h
    return n - width + 1


def _max_words(offsets: np.ndarray) -> int:
    lengths = np.diff(offsets)
    return int(lengths.max()) // 2 + 2 if lengths.size else 2


@numba.njit(parallel=True, nogil=True, cache=True)
def _cell_hashes(data, offsets, max_words):  # type: ignore[no-untyped-def]  # pragma: no cover
    n = offsets.shape[0] - 1
    out = np.zeros(n, dtype=np.uint64)
    n_chunks = (n + 4095) // 4096
    for chunk in numba.prange(n_chunks):
        words = np.empty(max_words, dtype=np.uint64)
        for c in range(chunk * 4096, min(n, (chunk + 1) * 4096)):
            k = _words(data, offsets[c], offsets[c + 1], words)
            h = np.uint64(0x9E3779B97F4A7C15)
            for j in range(k):
                h = _mix(h ^ words[j])
            out[c] = h if k > 0 else np.uint64(0)
    return out


def cell_hashes(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each normalised cell's word sequence (0 for an empty cell)."""
    result: np.ndarray = _cell_hashes(data, offsets, _max_words(offsets))
    return result


def permutations(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` affine permutations (odd multipliers, offsets) from ``seed``."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**63, size=count, dtype=np.uint64) * np.uint64(2) + np.uint64(
        1
    )
    b = rng.integers(0, 2**63, size=count, dtype=np.uint64)
    return a, b


@numba.njit(parallel=True, nogil=True, cache=True)
def _band_keys(data, offsets, cells, width, a, b, rows, max_words):  # type: ignore[no-untyped-def]  # pragma: no cover
    n = cells.shape[0]
    n_bands = a.shape[0] // rows
    out = np.zeros((n, n_bands), dtype=np.uint64)
    n_chunks = (n + 1023) // 1024
    for chunk in numba.prange(n_chunks):
        words = np.empty(max_words, dtype=np.uint64)
        sh = np.empty(max_words, dtype=np.uint64)
        for i in range(chunk * 1024, min(n, (chunk + 1) * 1024)):
            c = cells[i]
            k = _words(data, offsets[c], offsets[c + 1], words)
            m = _shingles(words, k, width, sh)
            if m == 0:
                continue
            for band in range(n_bands):
                key = np.uint64(band + 1)
                for r in range(rows):
                    p = band * rows + r
                    low = np.uint64(0xFFFFFFFFFFFFFFFF)
                    ap = a[p]
                    bp = b[p]
                    for s in range(m):
                        v = ap * sh[s] + bp
                        if v < low:
                            low = v
                    key = _mix(key ^ low)
                out[i, band] = key
    return out


def band_keys(
    data: np.ndarray,
    offsets: np.ndarray,
    cells: np.ndarray,
    *,
    width: int,
    a: np.ndarray,
    b: np.ndarray,
    rows: int,
) -> np.ndarray:
    """LSH band keys of ``cells`` (one column per band of ``rows`` permutations of ``a, b``).

    An empty cell has key 0 in every band (never a candidate).
    """
    result: np.ndarray = _band_keys(
        data, offsets, cells.astype(np.int64), width, a, b, rows, _max_words(offsets)
    )
    return result


@numba.njit(nogil=True, cache=True)
def _pairs(sorted_keys, order, query, cap):  # type: ignore[no-untyped-def]  # pragma: no cover
    lo = np.searchsorted(sorted_keys, query, side="left")
    hi = np.searchsorted(sorted_keys, query, side="right")
    total = 0
    for i in range(query.shape[0]):
        size = hi[i] - lo[i]
        if query[i] != 0 and 0 < size <= cap:
            total += size
    left = np.empty(total, dtype=np.int64)
    right = np.empty(total, dtype=np.int64)
    t = 0
    for i in range(query.shape[0]):
        size = hi[i] - lo[i]
        if query[i] != 0 and 0 < size <= cap:
            for j in range(lo[i], hi[i]):
                left[t] = order[j]
                right[t] = i
                t += 1
    return left, right


def candidate_pairs(
    real_keys: np.ndarray, synthetic_keys: np.ndarray, *, cap: int
) -> tuple[np.ndarray, np.ndarray]:
    """(real index, synthetic index) pairs sharing a key in some band.

    A band key shared by more than ``cap`` real cells is common phrasing and is skipped
    in that band (the other bands still pair the cells it holds).
    """
    lefts, rights = [], []
    for band in range(real_keys.shape[1]):
        keys = real_keys[:, band]
        order = np.argsort(keys, kind="stable")
        left, right = _pairs(keys[order], order, synthetic_keys[:, band], cap)
        lefts.append(left)
        rights.append(right)
    left = np.concatenate(lefts) if lefts else np.zeros(0, dtype=np.int64)
    right = np.concatenate(rights) if rights else np.zeros(0, dtype=np.int64)
    if left.size == 0:
        return left, right
    n_syn = max(int(synthetic_keys.shape[0]), 1)
    code = np.unique(left * n_syn + right)
    return code // n_syn, code % n_syn


@numba.njit(parallel=True, nogil=True, cache=True)
def _jaccard(data, offsets, left, right, width, max_words):  # type: ignore[no-untyped-def]  # pragma: no cover
    n = left.shape[0]
    out = np.zeros(n, dtype=np.float64)
    n_chunks = (n + 255) // 256
    for chunk in numba.prange(n_chunks):
        words = np.empty(max_words, dtype=np.uint64)
        sa = np.empty(max_words, dtype=np.uint64)
        sb = np.empty(max_words, dtype=np.uint64)
        for i in range(chunk * 256, min(n, (chunk + 1) * 256)):
            c = left[i]
            k = _words(data, offsets[c], offsets[c + 1], words)
            ma = _shingles(words, k, width, sa)
            c = right[i]
            k = _words(data, offsets[c], offsets[c + 1], words)
            mb = _shingles(words, k, width, sb)
            if ma == 0 or mb == 0:
                continue
            x = np.unique(sa[:ma])
            y = np.unique(sb[:mb])
            p = 0
            q = 0
            both = 0
            while p < x.shape[0] and q < y.shape[0]:
                if x[p] == y[q]:
                    both += 1
                    p += 1
                    q += 1
                elif x[p] < y[q]:
                    p += 1
                else:
                    q += 1
            out[i] = both / (x.shape[0] + y.shape[0] - both)
    return out


def jaccard_pairs(
    data: np.ndarray,
    offsets: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    *,
    width: int,
) -> np.ndarray:
    """Exact Jaccard similarity of the shingle sets of cells ``left[i]`` and ``right[i]``."""
    if left.size == 0:
        return np.zeros(0, dtype=np.float64)
    result: np.ndarray = _jaccard(
        data,
        offsets,
        left.astype(np.int64),
        right.astype(np.int64),
        width,
        _max_words(offsets),
    )
    return result


@numba.njit(nogil=True, cache=True)
def _ngrams(data, offsets, cells, span, parts, part, max_words):  # type: ignore[no-untyped-def]  # pragma: no cover
    words = np.empty(max_words, dtype=np.uint64)
    sh = np.empty(max_words, dtype=np.uint64)
    total = 0
    for i in range(cells.shape[0]):
        c = cells[i]
        k = _words(data, offsets[c], offsets[c + 1], words)
        if k < span:
            continue
        m = _shingles(words, k, span, sh)
        for s in range(m):
            if sh[s] % np.uint64(parts) == np.uint64(part):
                total += 1
    hashes = np.empty(total, dtype=np.uint64)
    owner = np.empty(total, dtype=np.int64)
    t = 0
    for i in range(cells.shape[0]):
        c = cells[i]
        k = _words(data, offsets[c], offsets[c + 1], words)
        if k < span:
            continue
        m = _shingles(words, k, span, sh)
        for s in range(m):
            if sh[s] % np.uint64(parts) == np.uint64(part):
                hashes[t] = sh[s]
                owner[t] = i
                t += 1
    return hashes, owner


def ngram_hashes(
    data: np.ndarray,
    offsets: np.ndarray,
    cells: np.ndarray,
    *,
    span: int,
    parts: int = 1,
    part: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Hashes of every run of ``span`` words in ``cells`` (one hash partition), with the cell's index."""
    hashes, owner = _ngrams(
        data, offsets, cells.astype(np.int64), span, parts, part, _max_words(offsets)
    )
    return hashes, owner


def lsh_recall(similarity: float, *, rows: int, bands: int) -> float:
    """Chance that two cells of this Jaccard similarity share some band key."""
    return float(1.0 - (1.0 - similarity**rows) ** bands)
