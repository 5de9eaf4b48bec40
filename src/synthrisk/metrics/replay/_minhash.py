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

import dataclasses
import itertools

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from synthrisk.neighbors import rows_per_block
from synthrisk.settings import get_config

__all__ = [
    "NearPairs",
    "band_keys",
    "candidate_pairs",
    "cell_hashes",
    "jaccard_pairs",
    "lsh_candidates",
    "lsh_recall",
    "near_pairs",
    "ngram_hashes",
    "normalised_buffer",
    "permutations",
    "prepare_texts",
    "span_pairs",
    "word_counts",
]

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def normalised_buffer(
    values: list[object] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes and offsets of the cells, lowercased, punctuation removed, spaces collapsed.

    A missing cell is the empty string. The normal form is that of pyarrow's
    ``utf8_lower``, then ``[^\\p{L}\\p{N}\\s]+`` and ``[\\s\\p{Z}]+`` replaced by one
    space, then trimmed (:func:`prepare_texts` computes it).
    """
    data, offsets, _ = prepare_texts(values)
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


@numba.njit(nogil=True, cache=True)
def _char_shingles(data, start, end, width, out):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Hashes of the ``width``-byte windows of one cell (one of all its bytes when shorter)."""
    n = end - start
    if n == 0:
        return 0
    if n < width:
        h = _FNV_OFFSET
        for i in range(start, end):
            h = (h ^ np.uint64(data[i])) * _FNV_PRIME
        out[0] = _mix(h ^ np.uint64(width))
        return 1
    for i in range(n - width + 1):
        h = _FNV_OFFSET
        for j in range(start + i, start + i + width):
            h = (h ^ np.uint64(data[j])) * _FNV_PRIME
        out[i] = _mix(h ^ np.uint64(width))
    return n - width + 1


@numba.njit(nogil=True, cache=True)
def _cell_shingles(data, start, end, width, chars, words, out):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Shingle hashes of one cell: ``width`` words, or ``width`` bytes when ``chars``."""
    if chars:
        return _char_shingles(data, start, end, width, out)
    k = _words(data, start, end, words)
    return _shingles(words, k, width, out)


def _max_shingles(offsets: np.ndarray, chars: bool) -> int:
    if not chars:
        return _max_words(offsets)
    lengths = np.diff(offsets)
    return int(lengths.max()) + 2 if lengths.size else 2


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
def _band_keys(data, offsets, cells, width, a, b, rows, max_words, chars=False):  # type: ignore[no-untyped-def]  # pragma: no cover
    n = cells.shape[0]
    n_bands = a.shape[0] // rows
    out = np.zeros((n, n_bands), dtype=np.uint64)
    n_chunks = (n + 1023) // 1024
    for chunk in numba.prange(n_chunks):
        words = np.empty(max_words, dtype=np.uint64)
        sh = np.empty(max_words, dtype=np.uint64)
        for i in range(chunk * 1024, min(n, (chunk + 1) * 1024)):
            c = cells[i]
            m = _cell_shingles(
                data, offsets[c], offsets[c + 1], width, chars, words, sh
            )
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
    chars: bool = False,
) -> np.ndarray:
    """LSH band keys of ``cells`` (one column per band of ``rows`` permutations of ``a, b``).

    Shingles are ``width`` words, or ``width`` bytes with ``chars``. An empty cell has
    key 0 in every band (never a candidate).
    """
    result: np.ndarray = _band_keys(
        data,
        offsets,
        cells.astype(np.int64),
        width,
        a,
        b,
        rows,
        _max_shingles(offsets, chars),
        chars,
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
def _shingle_sets(data, offsets, cells, width, chars, max_words):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Each cell's distinct shingle hashes, sorted, in one pass: slot ``i`` starts at
    ``indptr[i]`` (room for as many shingles as the cell could have) and holds
    ``used[i]`` of them."""
    n = cells.shape[0]
    room = np.empty(n + 1, dtype=np.int64)
    room[0] = 0
    for i in range(n):
        length = offsets[cells[i] + 1] - offsets[cells[i]]
        room[i + 1] = length + 1 if chars else length // 2 + 2
    indptr = np.cumsum(room)
    values = np.empty(indptr[n], dtype=np.uint64)
    used = np.zeros(n, dtype=np.int64)
    n_chunks = (n + 255) // 256
    for chunk in numba.prange(n_chunks):
        words = np.empty(max_words, dtype=np.uint64)
        sh = np.empty(max_words, dtype=np.uint64)
        for i in range(chunk * 256, min(n, (chunk + 1) * 256)):
            c = cells[i]
            m = _cell_shingles(
                data, offsets[c], offsets[c + 1], width, chars, words, sh
            )
            if m == 0:
                continue
            x = np.sort(sh[:m])
            k = 0
            base = indptr[i]
            for j in range(m):
                if j == 0 or x[j] != x[j - 1]:
                    values[base + k] = x[j]
                    k += 1
            used[i] = k
    return indptr, values, used


@numba.njit(parallel=True, nogil=True, cache=True)
def _set_jaccard(indptr, values, used, left, right):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Jaccard similarity of the sorted sets ``left[i]`` and ``right[i]`` (0 when one is empty)."""
    n = left.shape[0]
    out = np.zeros(n, dtype=np.float64)
    for i in numba.prange(n):
        a = left[i]
        b = right[i]
        na = used[a]
        nb = used[b]
        if na == 0 or nb == 0:
            continue
        p = indptr[a]
        q = indptr[b]
        pe = p + na
        qe = q + nb
        both = 0
        while p < pe and q < qe:
            if values[p] == values[q]:
                both += 1
                p += 1
                q += 1
            elif values[p] < values[q]:
                p += 1
            else:
                q += 1
        out[i] = both / (na + nb - both)
    return out


#: shingle hashes held at once by :func:`jaccard_pairs` (8 bytes each: 256 MiB)
_SET_BUDGET = 32 * 1024 * 1024


def jaccard_pairs(
    data: np.ndarray,
    offsets: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    *,
    width: int,
    chars: bool = False,
) -> np.ndarray:
    """Exact Jaccard similarity of the shingle sets of cells ``left[i]`` and ``right[i]``.

    Shingles are ``width`` words, or ``width`` bytes with ``chars``. Each cell's set is
    built once (sorted, distinct) and shared by all of its pairs; pairs are taken in
    blocks, in the order of their left cell, so that the sets held at once stay within
    about 256 MiB whatever the table's size.
    """
    out = np.zeros(left.size, dtype=np.float64)
    if left.size == 0:
        return out
    left = left.astype(np.int64)
    right = right.astype(np.int64)
    max_words = _max_shingles(offsets, chars)
    lengths = np.diff(offsets).astype(np.int64)
    order = np.argsort(left, kind="stable")
    # a block's cells hold at most their byte lengths in shingles (one per window)
    cost = lengths[left[order]] + lengths[right[order]] + 2
    ends = np.searchsorted(
        np.cumsum(cost),
        np.arange(1, 1 + int(cost.sum()) // _SET_BUDGET + 1) * _SET_BUDGET,
    )
    bounds = np.unique(np.r_[0, np.minimum(ends, order.size), order.size])
    for lo, hi in itertools.pairwise(bounds):
        idx = order[lo:hi]
        cells, where = np.unique(
            np.concatenate([left[idx], right[idx]]), return_inverse=True
        )
        where = where.reshape(-1)
        indptr, values, used = _shingle_sets(
            data, offsets, cells, width, chars, max_words
        )
        out[idx] = _set_jaccard(
            indptr, values, used, where[: idx.size], where[idx.size :]
        )
    return out


@dataclasses.dataclass(frozen=True)
class NearPairs:
    """Distinct cells of real then synthetic cells, and the near-copied pairs among them.

    ``inverse`` gives each pooled cell (real first) its distinct cell, ``first`` each
    distinct cell's first pooled position; ``real_texts`` and ``syn_texts`` are the
    non-empty distinct cells found on each side; ``left``, ``right``, ``jaccard`` the
    pairs of distinct cells (real, synthetic) at or above the threshold, out of
    ``candidates`` checked (the LSH candidates and every cell found verbatim on both
    sides).
    """

    n_distinct: int
    first: np.ndarray
    inverse: np.ndarray
    real_texts: np.ndarray
    syn_texts: np.ndarray
    left: np.ndarray
    right: np.ndarray
    jaccard: np.ndarray
    candidates: int


def near_pairs(
    data: np.ndarray,
    offsets: np.ndarray,
    n_real: int,
    *,
    shingle: int,
    threshold: float,
    num_perm: int,
    bands: int,
    seed: int,
    cap: int,
    chars: bool = False,
    working_memory: float | None = None,
) -> NearPairs:
    """Near copies between the first ``n_real`` normalised cells and the rest.

    Cells are made distinct by their hash (:func:`cell_hashes`); real and synthetic
    distinct cells are paired by MinHash LSH (``num_perm`` permutations in ``bands``
    bands, seeded; a band key shared by more than ``cap`` real cells is skipped) and
    every pair, with the cells found verbatim on both sides, is
    confirmed by the exact Jaccard of its ``shingle`` shingles (words, or bytes with
    ``chars``).
    """
    hashes = cell_hashes(data, offsets)
    distinct, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    del hashes
    inverse = inverse.reshape(-1)
    in_real = np.zeros(distinct.size, dtype=bool)
    in_real[inverse[:n_real]] = True
    in_syn = np.zeros(distinct.size, dtype=bool)
    in_syn[inverse[n_real:]] = True
    nonempty = distinct != 0
    real_texts = np.flatnonzero(in_real & nonempty)
    syn_texts = np.flatnonzero(in_syn & nonempty)
    rows = max(num_perm // bands, 1)
    a, b = permutations(rows * bands, seed)
    left, right = lsh_candidates(
        data,
        offsets,
        first[real_texts],
        first[syn_texts],
        width=shingle,
        a=a,
        b=b,
        rows=rows,
        cap=cap,
        chars=chars,
        working_memory=working_memory,
    )
    both = np.flatnonzero(in_real & in_syn & nonempty)  # the same cell on both sides
    left_t = np.concatenate([real_texts[left], both])
    right_t = np.concatenate([syn_texts[right], both])
    code = np.unique(left_t * distinct.size + right_t)
    left_t, right_t = code // distinct.size, code % distinct.size
    jac = jaccard_pairs(
        data, offsets, first[left_t], first[right_t], width=shingle, chars=chars
    )
    keep = jac >= threshold
    return NearPairs(
        int(distinct.size),
        first,
        inverse,
        real_texts,
        syn_texts,
        left_t[keep],
        right_t[keep],
        jac[keep],
        int(left_t.size),
    )


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


# --------------------------------------------------------------------------------------
# Fast normalisation: one numba pass over the UTF-8 bytes (ASCII cells), pyarrow's
# Unicode regexes only for the cells that hold a non-ASCII byte.


@numba.njit(inline="always", nogil=True, cache=True)
def _in_entity_run(c):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # the class [\d\s().\-/] of the entity prefilter (RE2: \d and \s are ASCII)
    return (
        (48 <= c <= 57)
        or c == 32
        or c == 9
        or c == 10
        or c == 12
        or c == 13
        or c == 40
        or c == 41
        or c == 45
        or c == 46
        or c == 47
    )


@numba.njit(parallel=True, nogil=True, cache=True)
def _ascii_normalise(raw, raw_off, out):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Normalise the ASCII cells into ``out`` (same layout as ``raw``).

    Per cell: the normalised length (ASCII cells), whether the cell is ASCII, and whether
    it may hold an entity (``_MAY_HOLD_ENTITY``, matched exactly on the raw bytes).
    """
    n = raw_off.shape[0] - 1
    lengths = np.zeros(n, dtype=np.int64)
    ascii_ = np.ones(n, dtype=np.bool_)
    entity = np.zeros(n, dtype=np.bool_)
    n_chunks = (n + 4095) // 4096
    for chunk in numba.prange(n_chunks):
        for c in range(chunk * 4096, min(n, (chunk + 1) * 4096)):
            s = raw_off[c]
            e = raw_off[c + 1]
            # entity prefilter: "@" | \d[\d\s().\-/]{4,}\d | [A-Z]{2}\d{2}
            first = -1
            may = False
            for i in range(s, e):
                ch = raw[i]
                if ch == 64:
                    may = True
                    break
                if _in_entity_run(ch):
                    if 48 <= ch <= 57:
                        if first < 0:
                            first = i
                        elif i - first >= 5:
                            may = True
                            break
                        if (
                            i - s >= 3
                            and 48 <= raw[i - 1] <= 57
                            and 65 <= raw[i - 2] <= 90
                            and 65 <= raw[i - 3] <= 90
                        ):
                            may = True
                            break
                else:
                    first = -1
            entity[c] = may
            # lowercase, runs of anything but [a-z0-9] become one space, trimmed
            w = s
            gap = False
            for i in range(s, e):
                ch = raw[i]
                if ch >= 128:
                    ascii_[c] = False
                    break
                if 65 <= ch <= 90:
                    ch += 32
                elif not ((97 <= ch <= 122) or (48 <= ch <= 57)):
                    gap = True
                    continue
                if gap and w > s:
                    out[w] = 32
                    w += 1
                gap = False
                out[w] = ch
                w += 1
            lengths[c] = w - s if ascii_[c] else 0
    return lengths, ascii_, entity


@numba.njit(parallel=True, nogil=True, cache=True)
def _gather(out, raw_off, other, other_off, which, new_off, data):  # type: ignore[no-untyped-def]  # pragma: no cover
    n = raw_off.shape[0] - 1
    for c in numba.prange(n):
        dst = new_off[c]
        size = new_off[c + 1] - dst
        k = which[c]
        if k < 0:
            src = raw_off[c]
            for i in range(size):
                data[dst + i] = out[src + i]
        else:
            src = other_off[k]
            for i in range(size):
                data[dst + i] = other[src + i]


def _arrow_buffers(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64)[
        array.offset : array.offset + len(array) + 1
    ]
    data = (
        np.frombuffer(buffers[2], dtype=np.uint8)
        if buffers[2] is not None
        else np.zeros(0, dtype=np.uint8)
    )
    return data, offsets


def _normalise_regex(array: pa.Array) -> pa.Array:
    """The reference normalisation (pyarrow, Unicode-aware)."""
    array = pc.fill_null(array, "")
    array = pc.utf8_lower(array)
    array = pc.replace_substring_regex(array, r"[^\p{L}\p{N}\s]+", " ")
    array = pc.replace_substring_regex(array, r"[\s\p{Z}]+", " ")
    return pc.utf8_trim_whitespace(array)


#: cells normalised per block (the block's raw and normalised bytes are the temporaries)
_CELLS_PER_BLOCK = 1 << 17


def prepare_texts(
    values: list[object] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalised UTF-8 bytes and offsets of the cells, and which cells may hold an entity.

    The normal form is :func:`normalised_buffer`'s. Cells are read a block at a time:
    an ASCII cell is normalised by one numba pass over its bytes; a cell with a
    non-ASCII byte goes through pyarrow's Unicode regexes. The third array flags the
    cells the entity prefilter ``@|\\d[\\d\\s().\\-/]{4,}\\d|[A-Z]{2}\\d{2}`` matches (on
    the original text).
    """
    values = np.asarray(values, dtype=object) if isinstance(values, list) else values
    n = len(values)
    chunks: list[np.ndarray] = []
    sizes: list[np.ndarray] = []
    flags: list[np.ndarray] = []
    for start in range(0, max(n, 1), _CELLS_PER_BLOCK):
        block = values[start : start + _CELLS_PER_BLOCK]
        array = pc.fill_null(
            pa.array(block, type=pa.large_string(), from_pandas=True), ""
        )
        raw, raw_off = _arrow_buffers(array)
        base = int(raw_off[0])
        raw, raw_off = raw[base:], raw_off - base
        out = np.empty(max(int(raw_off[-1]), 1), dtype=np.uint8)
        lengths, ascii_, entity = _ascii_normalise(raw, raw_off, out)
        which = np.full(len(block), -1, dtype=np.int64)
        other = np.zeros(1, dtype=np.uint8)
        other_off = np.zeros(1, dtype=np.int64)
        wide = np.flatnonzero(~ascii_)
        if wide.size:
            normal = _normalise_regex(array.take(pa.array(wide)))
            other, other_off = _arrow_buffers(normal)
            base = int(other_off[0])
            other, other_off = other[base:], other_off - base
            which[wide] = np.arange(wide.size)
            lengths[wide] = np.diff(other_off)
        new_off = np.zeros(len(block) + 1, dtype=np.int64)
        np.cumsum(lengths, out=new_off[1:])
        data = np.empty(int(new_off[-1]), dtype=np.uint8)
        _gather(out, raw_off, other, other_off, which, new_off, data)
        chunks.append(data)
        sizes.append(lengths)
        flags.append(entity)
        del out, raw, array
    lengths = np.concatenate(sizes) if sizes else np.zeros(0, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths[:n], out=offsets[1:])
    data = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.uint8)
    entity = np.concatenate(flags)[:n] if flags else np.zeros(0, dtype=bool)
    return data, offsets, entity


# --------------------------------------------------------------------------------------
# Blocked LSH and span matching: bit filters instead of sorting every key.


@numba.njit(parallel=True, nogil=True, cache=True)
def _word_counts(data, offsets):  # type: ignore[no-untyped-def]  # pragma: no cover
    n = offsets.shape[0] - 1
    out = np.zeros(n, dtype=np.int64)
    for c in numba.prange(n):
        k = 0
        inside = False
        for i in range(offsets[c], offsets[c + 1]):
            if data[i] <= 32:
                inside = False
            elif not inside:
                inside = True
                k += 1
        out[c] = k
    return out


def word_counts(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Words of each normalised cell."""
    result: np.ndarray = _word_counts(data, offsets)
    return result


def _filter_bits(entries: int, working_memory: float | None) -> int:
    """Words (uint64) of a bit filter for ``entries`` keys: 32 bits a key, a power of 2.

    At most half the working memory (a fuller filter passes more false keys, never
    loses a true one).
    """
    budget = get_config().working_memory if working_memory is None else working_memory
    cap = max(int(budget * 2**20) // 2 // 8, 1 << 10)
    want = max(32 * max(entries, 1) // 64, 1 << 10)
    words = 1 << int(np.ceil(np.log2(want)))
    while words > cap:
        words >>= 1
    return words


@numba.njit(nogil=True, cache=True)
def _set_bits(bits, values):  # type: ignore[no-untyped-def]  # pragma: no cover
    mask = np.uint64(bits.shape[0] - 1)
    for i in range(values.shape[0]):
        v = values[i]
        w = (v >> np.uint64(6)) & mask
        bits[w] |= np.uint64(1) << (v & np.uint64(63))


@numba.njit(parallel=True, nogil=True, cache=True)
def _test_bits(bits, values):  # type: ignore[no-untyped-def]  # pragma: no cover
    mask = np.uint64(bits.shape[0] - 1)
    out = np.zeros(values.shape[0], dtype=np.bool_)
    for i in numba.prange(values.shape[0]):
        v = values[i]
        w = (v >> np.uint64(6)) & mask
        out[i] = (bits[w] >> (v & np.uint64(63))) & np.uint64(1) != 0
    return out


def _block_ranges(n: int, per_item: int, working_memory: float | None) -> list[slice]:
    rows = rows_per_block(per_item, working_memory=working_memory, n_rows=n)
    return [slice(s, min(s + rows, n)) for s in range(0, n, rows)]


@numba.njit(nogil=True, cache=True)
def _lookup_bands(keys, bands, real, query, query_band, query_syn):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Pairs (real, synthetic) of equal band and key; ``keys`` sorted (then ``bands``)."""
    total = 0
    for j in range(query.shape[0]):
        q = query[j]
        lo = np.searchsorted(keys, q)
        while lo < keys.shape[0] and keys[lo] == q:
            if bands[lo] == query_band[j]:
                total += 1
            lo += 1
    left = np.empty(total, dtype=np.int64)
    right = np.empty(total, dtype=np.int64)
    t = 0
    for j in range(query.shape[0]):
        q = query[j]
        lo = np.searchsorted(keys, q)
        while lo < keys.shape[0] and keys[lo] == q:
            if bands[lo] == query_band[j]:
                left[t] = real[lo]
                right[t] = query_syn[j]
                t += 1
            lo += 1
    return left, right


def lsh_candidates(
    data: np.ndarray,
    offsets: np.ndarray,
    real_cells: np.ndarray,
    synthetic_cells: np.ndarray,
    *,
    width: int,
    a: np.ndarray,
    b: np.ndarray,
    rows: int,
    cap: int,
    chars: bool = False,
    working_memory: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(real index, synthetic index) pairs sharing a band key, as :func:`candidate_pairs`.

    The same pairs as ``candidate_pairs(band_keys(real), band_keys(synthetic))``, found
    without holding or sorting every key: the synthetic cells' keys set a bit filter
    (block by block), the real keys that pass it (the real keys a synthetic cell
    shares, and a few per cent of false passes) are sorted and counted (``cap``), and
    the synthetic keys are looked up among them. Keys are computed a block of cells at
    a time (``working_memory``); the filter takes at most half of it.
    """
    n_bands = a.shape[0] // rows
    max_words = _max_shingles(offsets, chars)
    real_cells = real_cells.astype(np.int64)
    synthetic_cells = synthetic_cells.astype(np.int64)
    per_cell = 8 * n_bands * 3  # keys, flat copy and the filter's flags
    bits = np.zeros(
        _filter_bits(synthetic_cells.size * n_bands, working_memory), np.uint64
    )

    def keys_of(cells: np.ndarray) -> np.ndarray:
        out: np.ndarray = _band_keys(
            data, offsets, cells, width, a, b, rows, max_words, chars
        )
        return out.reshape(-1)

    for sl in _block_ranges(synthetic_cells.size, per_cell, working_memory):
        _set_bits(bits, keys_of(synthetic_cells[sl]))
    hit_key, hit_band, hit_real = [], [], []
    for sl in _block_ranges(real_cells.size, per_cell, working_memory):
        flat = keys_of(real_cells[sl])
        at = np.flatnonzero(_test_bits(bits, flat) & (flat != 0))
        hit_key.append(flat[at])
        hit_band.append(at % n_bands)
        hit_real.append(sl.start + at // n_bands)
    del bits
    key = np.concatenate(hit_key) if hit_key else np.zeros(0, np.uint64)
    band = np.concatenate(hit_band) if hit_band else np.zeros(0, np.int64)
    real = np.concatenate(hit_real) if hit_real else np.zeros(0, np.int64)
    # (band, key) groups of at most `cap` real cells; sorted by key for the look-ups
    order = np.lexsort((band, key))
    key, band, real = key[order], band[order], real[order]
    new = np.ones(key.size, dtype=bool)
    new[1:] = (key[1:] != key[:-1]) | (band[1:] != band[:-1])
    starts = np.flatnonzero(new)
    sizes = np.diff(np.r_[starts, key.size])
    keep = np.repeat(sizes <= cap, sizes)
    key, band, real = key[keep], band[keep], real[keep]
    small = np.zeros(_filter_bits(key.size, working_memory), np.uint64)
    _set_bits(small, key)
    lefts, rights = [], []
    for sl in _block_ranges(synthetic_cells.size, per_cell, working_memory):
        flat = keys_of(synthetic_cells[sl])
        at = np.flatnonzero(_test_bits(small, flat) & (flat != 0))
        left, right = _lookup_bands(
            key, band, real, flat[at], at % n_bands, sl.start + at // n_bands
        )
        lefts.append(left)
        rights.append(right)
    left = np.concatenate(lefts) if lefts else np.zeros(0, np.int64)
    right = np.concatenate(rights) if rights else np.zeros(0, np.int64)
    if left.size == 0:
        return left, right
    n_syn = max(int(synthetic_cells.size), 1)
    code = np.unique(left * n_syn + right)
    return code // n_syn, code % n_syn


@numba.njit(parallel=True, nogil=True, cache=True)
def _span_block(data, offsets, cells, span, starts, max_words):  # type: ignore[no-untyped-def]  # pragma: no cover
    n = cells.shape[0]
    out = np.empty(starts[n], dtype=np.uint64)
    n_chunks = (n + 1023) // 1024
    for chunk in numba.prange(n_chunks):
        words = np.empty(max_words, dtype=np.uint64)
        sh = np.empty(max_words, dtype=np.uint64)
        for i in range(chunk * 1024, min(n, (chunk + 1) * 1024)):
            if starts[i + 1] == starts[i]:
                continue
            c = cells[i]
            k = _words(data, offsets[c], offsets[c + 1], words)
            m = _shingles(words, k, span, sh)
            for s in range(m):
                out[starts[i] + s] = sh[s]
    return out


def _weighted_ranges(weights: np.ndarray, capacity: int) -> list[slice]:
    """Consecutive ranges whose weights sum to at most ``capacity`` (at least one item)."""
    n = int(weights.size)
    cum = np.cumsum(weights)
    out, start = [], 0
    while start < n:
        before = int(cum[start - 1]) if start else 0
        stop = int(np.searchsorted(cum, before + capacity, side="right"))
        stop = min(max(stop, start + 1), n)
        out.append(slice(start, stop))
        start = stop
    return out


def span_pairs(
    data: np.ndarray,
    offsets: np.ndarray,
    real_cells: np.ndarray,
    synthetic_cells: np.ndarray,
    real_ok: np.ndarray,
    *,
    span: int,
    counts: np.ndarray,
    working_memory: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(real index, synthetic index): the synthetic cell holds a run of ``span`` words
    that one real cell alone holds, and ``real_ok`` is true for that real cell.

    ``counts`` are the words of every cell (:func:`word_counts`). As
    :func:`ngram_hashes` over every real cell, sorted and counted, then looked up:
    but the synthetic runs set a bit filter first, and only the real runs that pass it
    (every real run a synthetic cell shares, and a few per cent of false passes) are
    sorted. Runs are hashed a block of cells at a time (``working_memory``).
    """
    budget = get_config().working_memory if working_memory is None else working_memory
    capacity = max(int(budget * 2**20) // 4 // 32, 1)  # hash, owner, flags, copies
    max_words = _max_words(offsets)
    real_cells = real_cells.astype(np.int64)
    synthetic_cells = synthetic_cells.astype(np.int64)

    def runs(cells: np.ndarray) -> np.ndarray:
        return np.maximum(counts[cells] - span + 1, 0)

    def hashes(cells: np.ndarray, per: np.ndarray) -> np.ndarray:
        starts = np.zeros(cells.size + 1, dtype=np.int64)
        np.cumsum(per, out=starts[1:])
        out: np.ndarray = _span_block(data, offsets, cells, span, starts, max_words)
        return out

    syn_runs = runs(synthetic_cells)
    real_runs = runs(real_cells)
    bits = np.zeros(_filter_bits(int(syn_runs.sum()), working_memory), np.uint64)
    for sl in _weighted_ranges(syn_runs, capacity):
        _set_bits(bits, hashes(synthetic_cells[sl], syn_runs[sl]))
    kept_hash, kept_owner = [], []
    for sl in _weighted_ranges(real_runs, capacity):
        h = hashes(real_cells[sl], real_runs[sl])
        at = np.flatnonzero(_test_bits(bits, h))
        owner = np.repeat(np.arange(sl.start, sl.stop), real_runs[sl])
        kept_hash.append(h[at])
        kept_owner.append(owner[at])
    del bits
    rh = np.concatenate(kept_hash) if kept_hash else np.zeros(0, np.uint64)
    ro = np.concatenate(kept_owner) if kept_owner else np.zeros(0, np.int64)
    order = np.lexsort((ro, rh))
    rh, ro = rh[order], ro[order]
    new_pair = np.ones(rh.size, dtype=bool)
    new_pair[1:] = (rh[1:] != rh[:-1]) | (ro[1:] != ro[:-1])
    rh, ro = rh[new_pair], ro[new_pair]
    # hashes held by one real cell, a cell that `real_ok` allows
    starts = np.flatnonzero(np.r_[True, rh[1:] != rh[:-1]]) if rh.size else rh
    sizes = np.diff(np.r_[starts, rh.size])
    single_hash = rh[starts[sizes == 1]]
    single_owner = ro[starts[sizes == 1]]
    ok = real_ok[single_owner]
    single_hash, single_owner = single_hash[ok], single_owner[ok]
    small = np.zeros(_filter_bits(single_hash.size, working_memory), np.uint64)
    _set_bits(small, single_hash)
    lefts, rights = [], []
    for sl in _weighted_ranges(syn_runs, capacity):
        h = hashes(synthetic_cells[sl], syn_runs[sl])
        at = np.flatnonzero(_test_bits(small, h))
        owner = np.repeat(np.arange(sl.start, sl.stop), syn_runs[sl])[at]
        h = h[at]
        pos = np.searchsorted(single_hash, h)
        pos_ok = pos < single_hash.size
        hit = np.zeros(h.size, dtype=bool)
        hit[pos_ok] = single_hash[pos[pos_ok]] == h[pos_ok]
        lefts.append(single_owner[pos[hit]])
        rights.append(owner[hit])
    left = np.concatenate(lefts) if lefts else np.zeros(0, np.int64)
    right = np.concatenate(rights) if rights else np.zeros(0, np.int64)
    n_syn = max(int(synthetic_cells.size), 1)
    code = np.unique(left * n_syn + right)
    return code // n_syn, code % n_syn
