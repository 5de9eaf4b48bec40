# SPDX-License-Identifier: BSD-3-Clause
"""Multi-core numba kernel of generalized CAP's nearest-key search.

One pass over the distinct synthetic keys per distinct real key keeps the current
minimum Hamming distance and the pooled vote counts at that distance; a comparison is
abandoned as soon as it exceeds the current minimum, which is exact. Real keys run in
parallel with ``prange`` (each writes its own slice of the outputs).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["generalized_cap_kernel"]


@numba.njit(parallel=True, nogil=True, cache=True)
def generalized_cap_kernel(
    real_keys: np.ndarray,
    synthetic_keys: np.ndarray,
    synthetic_count: np.ndarray,
    csr_ptr: np.ndarray,
    csr_sens: np.ndarray,
    csr_count: np.ndarray,
    q_ptr: np.ndarray,
    q_sens: np.ndarray,
    out_num: np.ndarray,
    out_den: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Fill ``out_num`` (votes per asked sensitive id) and ``out_den`` (pooled rows per real key).

    Arguments are those of :func:`synthrisk.metrics.disclosure.generalized_cap_counts`;
    ``out_num`` and ``out_den`` are int64 arrays of zeros.
    """
    m, k = real_keys.shape
    n_syn = synthetic_keys.shape[0]
    for i in numba.prange(m):
        best = k + 1
        den = 0
        q0 = q_ptr[i]
        q1 = q_ptr[i + 1]
        for j in range(n_syn):
            d = 0
            for c in range(k):
                if real_keys[i, c] != synthetic_keys[j, c]:
                    d += 1
                    if d > best:
                        break
            if d > best:
                continue
            if d < best:
                best = d
                den = 0
                for q in range(q0, q1):
                    out_num[q] = 0
            den += synthetic_count[j]
            lo = csr_ptr[j]
            hi = csr_ptr[j + 1]
            for q in range(q0, q1):
                target = q_sens[q]
                a = lo
                b = hi
                while a < b:  # binary search: the sensitive ids of key j are sorted
                    mid = (a + b) >> 1
                    if csr_sens[mid] < target:
                        a = mid + 1
                    else:
                        b = mid
                if a < hi and csr_sens[a] == target:
                    out_num[q] += csr_count[a]
        out_den[i] = den
