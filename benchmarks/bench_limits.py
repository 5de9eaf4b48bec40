# SPDX-License-Identifier: BSD-3-Clause
"""The physical limits of this CPU that the metrics are measured against.

Usage::

    python benchmarks/bench_limits.py

Prints the matrix-product peak (numpy ``matmul`` of two 2048 x 2048 matrices, float64
and float32, GFLOP/s = 2 n^3 / seconds, best of 5) and the rate of counting
comparisons (a compiled loop counting the rows of an int8 column equal to a value,
comparisons per second, best of 5), each on one thread and on every core. The
singling-out and linkability counts are comparisons of codes; the DCR distances, on
numeric columns, are at best a matrix product (``|x|^2 + |y|^2 - 2 x.y``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _count_equal(column: np.ndarray, values: np.ndarray) -> int:  # pragma: no cover
    """For each value, the rows of ``column`` equal to it, summed."""
    total = 0
    for v in values:
        for x in column:
            total += x == v
    return total


@numba.njit(cache=True, nogil=True, parallel=True)
def _count_equal_parallel(
    column: np.ndarray, values: np.ndarray
) -> int:  # pragma: no cover
    total = 0
    for i in numba.prange(values.shape[0]):
        v = values[i]
        for x in column:
            total += x == v
    return total


def _best(fn: object, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2048, help="matrix side")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    n = args.n
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    for dtype in (np.float64, np.float32):
        a = rng.random((n, n)).astype(dtype)
        b = rng.random((n, n)).astype(dtype)
        for threads in (1, os.cpu_count() or 1):
            with threadpool_limits(limits=threads, user_api="blas"):
                a @ b  # warm the library
                seconds = _best(lambda a=a, b=b: a @ b, args.repeats)
            gflops = 2 * n**3 / seconds / 1e9
            print(
                f"matmul {np.dtype(dtype).name} {threads} thread(s): {gflops:.1f} GFLOP/s"
            )
    column = rng.integers(0, 16, 1_000_000).astype(np.int8)
    values = rng.integers(0, 16, 200).astype(np.int8)
    _count_equal(column[:10], values[:2])
    _count_equal_parallel(column[:10], values[:2])
    pairs = column.size * values.size
    one = _best(lambda: _count_equal(column, values), args.repeats)
    every = _best(lambda: _count_equal_parallel(column, values), args.repeats)
    print(f"comparisons 1 thread: {pairs / one / 1e9:.2f} billion/s")
    print(
        f"comparisons {numba.get_num_threads()} threads: {pairs / every / 1e9:.2f} billion/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
