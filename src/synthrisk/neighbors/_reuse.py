# SPDX-License-Identifier: BSD-3-Clause
"""Reuse of exact searches between runs on tables that differ in a few rows.

Inside :func:`reuse_searches`, every in-memory search of
:func:`synthrisk.neighbors.nearest_neighbors` is remembered with its inputs. A later
search with the same distance, ``k`` and backend is then answered from a remembered one
when its query and reference are

* **the same** (byte for byte): the remembered result;
* the same reference and a query that differs in a few rows: the remembered rows, and a
  search of the changed query rows only;
* the same query and a reference that differs in a few rows ``D``: for each query row
  whose remembered neighbours avoid ``D``, those neighbours merged with a search of the
  rows ``D`` only (the rows outside ``D`` cannot come nearer than they were); the other
  query rows are searched again in full.

Either way the result is the full search's, index for index and bit for bit: each
pair's distance is computed the same way whatever else is searched (the kernels sum a
pair's terms in column order), and ties go to the lowest reference position in the
merge as in the kernels. Searches with a radius (``max_distance``) or scikit-learn's
rounding (``arithmetic="sklearn"``, whose dot products depend on the BLAS blocks) are
reused only when identical. The known-leak self-test (:mod:`synthrisk.selftest`) uses it:
its planted tables differ from the synthetic table in at most 1 % of the rows.

The remembered rows are referenced, not copied; rows modified in place since are
noticed (their digest changed) and not used.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import threading
from collections.abc import Callable, Iterator

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._spec import DistanceSpec

__all__ = [
    "ReuseStats",
    "SearchReuse",
    "active_reuse",
    "array_digest",
    "merge_topk",
    "params_digest",
    "reuse_searches",
]

#: ``search(q_num, q_cat, r_num, r_cat, k) -> (distances, indices)``: the full search
Kernel = Callable[
    [FloatArray, IntArray, FloatArray, IntArray, int], tuple[FloatArray, IntArray]
]
Rows = tuple[FloatArray, IntArray]

_ACTIVE: contextvars.ContextVar[SearchReuse | None] = contextvars.ContextVar(
    "synthrisk_search_reuse", default=None
)


def array_digest(*arrays: np.ndarray | None) -> bytes:
    """A digest of the arrays' dtypes, shapes and bytes (None counts as a value)."""
    h = hashlib.blake2b(digest_size=20)
    for array in arrays:
        if array is None:
            h.update(b"none;")
            continue
        contiguous = np.ascontiguousarray(array)
        h.update(f"{contiguous.dtype.str}{contiguous.shape};".encode())
        h.update(contiguous.data)
    return h.digest()


def params_digest(
    spec: DistanceSpec, *, k: int, backend: str, arithmetic: str
) -> bytes:
    """The digest of everything but the rows that decides a search's result."""
    head = repr(
        (k, backend, arithmetic, spec.clip, spec.nan_one, spec.nan_both, spec.power)
    )
    return array_digest(
        np.frombuffer(head.encode(), dtype=np.uint8),
        np.asarray([spec.divisor], dtype=np.float64),
        spec.scale,
        spec.indicator,
        spec.weights,
        spec.cat_weights,
    )


def _changed_rows(old: Rows, new: Rows) -> IntArray:
    """Positions of the rows that differ (missing numbers equal each other)."""
    (old_num, old_cat), (new_num, new_cat) = old, new
    same = np.ones(old_num.shape[0], dtype=bool)
    if old_num.shape[1]:
        equal = (old_num == new_num) | (np.isnan(old_num) & np.isnan(new_num))
        same &= equal.all(axis=1)
    if old_cat.shape[1]:
        same &= (old_cat == new_cat).all(axis=1)
    return np.flatnonzero(~same)


def merge_topk(
    first: tuple[FloatArray, IntArray], second: tuple[FloatArray, IntArray], k: int
) -> tuple[FloatArray, IntArray]:
    """The k smallest ``(distance, position)`` pairs per row; missing distances last."""
    distances = np.concatenate([first[0], second[0]], axis=1)
    indices = np.concatenate([first[1], second[1]], axis=1)
    key = np.where(np.isnan(distances), np.inf, distances)
    order = np.lexsort((indices, key), axis=-1)[:, :k]
    return (
        np.take_along_axis(distances, order, axis=1),
        np.take_along_axis(indices, order, axis=1),
    )


@dataclasses.dataclass
class _Entry:
    params: bytes
    query: bytes
    reference: bytes
    distances: FloatArray
    indices: IntArray
    exact_only: bool
    used: bool = True


@dataclasses.dataclass
class ReuseStats:
    """What the searches of a scope cost.

    ``searches`` were asked for: ``identical`` ones answered from memory, ``delta`` ones
    from a search that differs in a few rows, ``full`` ones run in full. ``pairs_asked``
    counts the (query row, reference row) pairs they cover, ``pairs_searched`` those
    whose distance was computed.
    """

    searches: int = 0
    identical: int = 0
    delta: int = 0
    full: int = 0
    pairs_asked: int = 0
    pairs_searched: int = 0


class SearchReuse:
    """Searches remembered in one :func:`reuse_searches` scope (see the module docstring).

    Parameters
    ----------
    max_changed : float, default=0.2
        A remembered search is reused when at most this share of the rows of the
        side that changed differ; beyond it, the search runs in full.
    max_mib : float, default=1024
        Memory for the remembered results and the rows they were searched on (rows
        that other objects hold too are counted all the same); beyond it, the oldest
        searches are forgotten first.
    """

    def __init__(self, *, max_changed: float = 0.2, max_mib: float = 1024) -> None:
        self.max_changed = float(max_changed)
        self.max_bytes = float(max_mib) * 2**20
        self.stats = ReuseStats()
        self._entries: list[_Entry] = []
        self._rows: dict[bytes, Rows] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """Bytes of the remembered results and rows."""
        results = sum(e.distances.nbytes + e.indices.nbytes for e in self._entries)
        rows = sum(num.nbytes + cat.nbytes for num, cat in self._rows.values())
        return int(results + rows)

    def sweep(self) -> None:
        """Forget the searches neither made nor reused since the last sweep."""
        with self._lock:
            self._entries = [e for e in self._entries if e.used]
            for entry in self._entries:
                entry.used = False
            self._drop_unused_rows()

    def _drop_unused_rows(self) -> None:
        kept = {e.query for e in self._entries} | {e.reference for e in self._entries}
        self._rows = {d: rows for d, rows in self._rows.items() if d in kept}

    def _trim(self) -> None:
        """Forget the oldest searches while over the memory budget (never the newest)."""
        while len(self._entries) > 1 and self.nbytes > self.max_bytes:
            del self._entries[0]
            self._drop_unused_rows()

    def kneighbors(
        self,
        query: Rows,
        reference: Rows,
        *,
        k: int,
        params: bytes,
        exact_only: bool,
        search: Kernel,
        progress: Callable[[int], None] | None = None,
    ) -> tuple[FloatArray, IntArray]:
        """The k nearest ``reference`` rows of every ``query`` row (``search`` when needed)."""
        q_key, r_key = array_digest(*query), array_digest(*reference)
        n_query, n_reference = query[0].shape[0], reference[0].shape[0]
        with self._lock:
            self.stats.searches += 1
            self.stats.pairs_asked += n_query * n_reference
            found = self._find(params, q_key, r_key, query, reference, exact_only)
        if found is None:
            distances, indices = search(*query, *reference, k)
            kind, searched = "full", n_query * n_reference
        else:
            entry, side, changed = found
            if side == "same":
                distances, indices = entry.distances.copy(), entry.indices.copy()
                kind, searched = "identical", 0
            elif side == "query":
                distances, indices = entry.distances.copy(), entry.indices.copy()
                if changed.size:
                    d, i = search(query[0][changed], query[1][changed], *reference, k)
                    distances[changed], indices[changed] = d, i
                kind, searched = "delta", int(changed.size) * n_reference
            else:
                distances, indices, searched = self._reference_delta(
                    entry, query, reference, changed, k, search
                )
                kind = "delta"
        with self._lock:
            self.stats.pairs_searched += searched
            setattr(self.stats, kind, getattr(self.stats, kind) + 1)
            if kind != "identical":
                self._rows.setdefault(q_key, query)
                self._rows.setdefault(r_key, reference)
                self._entries.append(
                    _Entry(
                        params,
                        q_key,
                        r_key,
                        distances.copy(),
                        indices.copy(),
                        exact_only,
                    )
                )
                self._trim()
        if progress is not None:
            progress(n_query)
        return distances, indices

    def _find(
        self,
        params: bytes,
        q_key: bytes,
        r_key: bytes,
        query: Rows,
        reference: Rows,
        exact_only: bool,
    ) -> tuple[_Entry, str, IntArray] | None:
        """The remembered search to start from: identical, else the fewest changed rows."""
        best: tuple[_Entry, str, IntArray] | None = None
        for entry in self._entries:
            if entry.params != params:
                continue
            if entry.query == q_key and entry.reference == r_key:
                entry.used = True
                return entry, "same", np.zeros(0, dtype=np.int64)
            if exact_only or entry.exact_only:
                continue
            if entry.reference == r_key and entry.query in self._rows:
                side, key, new = "query", entry.query, query
            elif entry.query == q_key and entry.reference in self._rows:
                side, key, new = "reference", entry.reference, reference
            else:
                continue
            old = self._rows[key]
            if old[0].shape != new[0].shape or old[1].shape != new[1].shape:
                continue
            # rows modified in place since: they no longer show what was searched
            if array_digest(*old) != key:
                del self._rows[key]
                continue
            changed = _changed_rows(old, new)
            if changed.size > self.max_changed * new[0].shape[0]:
                continue
            if best is None or changed.size < best[2].size:
                best = (entry, side, changed)
        if best is not None:
            best[0].used = True
        return best

    @staticmethod
    def _reference_delta(
        entry: _Entry,
        query: Rows,
        reference: Rows,
        changed: IntArray,
        k: int,
        search: Kernel,
    ) -> tuple[FloatArray, IntArray, int]:
        """The remembered neighbours merged with those among the changed reference rows."""
        distances, indices = entry.distances.copy(), entry.indices.copy()
        if not changed.size:
            return distances, indices, 0
        # a query row whose neighbours include a changed row is searched again in full
        redo = np.isin(indices, changed).any(axis=1)
        keep = np.flatnonzero(~redo)
        if keep.size:
            d, i = search(
                query[0][keep],
                query[1][keep],
                reference[0][changed],
                reference[1][changed],
                min(k, int(changed.size)),
            )
            merged = merge_topk((distances[keep], indices[keep]), (d, changed[i]), k)
            distances[keep], indices[keep] = merged
        again = np.flatnonzero(redo)
        if again.size:
            d, i = search(query[0][again], query[1][again], *reference, k)
            distances[again], indices[again] = d, i
        searched = keep.size * changed.size + again.size * reference[0].shape[0]
        return distances, indices, int(searched)


def active_reuse() -> SearchReuse | None:
    """The store of the innermost open :func:`reuse_searches` scope (None outside one)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def reuse_searches(
    *, max_changed: float = 0.2, max_mib: float = 1024
) -> Iterator[SearchReuse]:
    """Remember the searches run inside the block and reuse them (see the module docstring).

    ``max_changed`` and ``max_mib`` are those of :class:`SearchReuse`.

    Examples
    --------
    >>> import numpy as np
    >>> from synthrisk.neighbors import nearest_neighbors, reuse_searches
    >>> rng = np.random.default_rng(0)
    >>> query, reference = rng.random((50, 3)), rng.random((80, 3))
    >>> with reuse_searches() as store:
    ...     first = nearest_neighbors(query, reference, k=2, distance="dcr", scale=np.ones(3))
    ...     planted = reference.copy()
    ...     planted[7] = query[0]  # one row replaced by a copy of a query row
    ...     second = nearest_neighbors(query, planted, k=2, distance="dcr", scale=np.ones(3))
    >>> store.stats.delta, store.stats.pairs_searched < 2 * 50 * 80, int(second.indices[0, 0])
    (1, True, 7)
    """
    store = SearchReuse(max_changed=max_changed, max_mib=max_mib)
    token = _ACTIVE.set(store)
    try:
        yield store
    finally:
        _ACTIVE.reset(token)
