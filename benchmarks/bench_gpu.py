# SPDX-License-Identifier: BSD-3-Clause
"""The torch neighbour backend on a CUDA device against the numba backend on the CPU.

Usage::

    python benchmarks/bench_gpu.py                 # needs torch and a CUDA device
    python benchmarks/bench_gpu.py --rows 20000    # smaller tables

Three parts, one run:

1. **Identical neighbours on the device.** Tied and mixed-type tables (repeated rows,
   missing values, a constant column, categorical codes, ranges that are not powers
   of two) searched with the numpy
   backend and with ``backend="torch"`` on the device, for the ``euclidean``, ``dcr``
   and ``gower`` distances and several k, with reference blocks of 7 rows (many merges
   of the running top k) and of the default size; every distance and index must be
   equal bit for bit. A mismatch stops the run with exit status 1.
2. **Euclidean, Gaussian** ``--rows`` × 20 queries against as many reference rows,
   k = 5 (the kNN membership attack's search): the numba backend on every CPU core
   against torch on the device, with the device's float64 rate beside it.
3. **``dcr``, mixed types** (the person-level searches of related tables: 31 numeric
   columns, 3 categorical), ``--rows`` queries against 0.8 × ``--rows`` reference
   rows, k = 3: torch on the device on every query; numba on ``--cpu-rows`` queries
   (the CPU's time for all of them is that figure scaled by the query count, which is
   exact for a brute-force scan and an upper bound for numba's pruned one), and the
   neighbours of those queries compared.

Each timing is the best of ``--repeats`` after one warm-up call (numba compiles,
CUDA initialises); torch's includes moving the tables to the device and the
neighbours back.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from synthrisk.neighbors import nearest_neighbors, torch_backend
from synthrisk.schema.encoding import EncodedTable


def _best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    fn()
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _mixed(
    rng: np.random.Generator, n: int, numeric: int, categorical: int
) -> EncodedTable:
    """Tied mixed-type rows: coarse numbers, 10 % missing, a constant column, codes."""
    values = rng.integers(0, 4, size=(n, numeric)).astype(float) / 3
    values[rng.random((n, numeric)) < 0.1] = np.nan
    values[:, -1] = 5.0
    codes = rng.integers(0, 3, size=(n, categorical))
    return EncodedTable(
        values,
        codes,
        tuple(f"x{i}" for i in range(numeric)),
        tuple(f"c{i}" for i in range(categorical)),
    )


def _same(query: Any, reference: Any, **kwargs: Any) -> bool:
    want = nearest_neighbors(query, reference, backend="numpy", **kwargs)
    got = nearest_neighbors(query, reference, backend="torch", **kwargs)
    return bool(
        np.array_equal(got.distances, want.distances, equal_nan=True)
        and np.array_equal(got.indices, want.indices)
    )


def check_identical() -> int:
    """Part 1: every case equal bit for bit; returns the number of mismatches."""
    failures = 0
    cases = 0
    default_block = torch_backend._REFERENCE_BLOCK
    for block in (7, default_block):
        torch_backend._REFERENCE_BLOCK = block
        n_ref = 300 if block == 7 else 20_000
        for seed in range(3):
            rng = np.random.default_rng(seed)
            reference = rng.integers(0, 3, size=(n_ref, 5)) / 3.0
            query = np.vstack([reference[:50], rng.integers(0, 3, size=(150, 5)) / 3.0])
            for k in (1, 5, 30):
                cases += 1
                ok = _same(query, reference, k=k, distance="euclidean")
                failures += not ok
                if not ok:
                    print(f"  MISMATCH euclidean block={block} seed={seed} k={k}")
            query_m, reference_m = _mixed(rng, 200, 6, 2), _mixed(rng, n_ref, 6, 2)
            for distance in ("dcr", "gower"):
                for k in (1, 5):
                    cases += 1
                    ok = _same(query_m, reference_m, k=k, distance=distance)
                    failures += not ok
                    if not ok:
                        print(f"  MISMATCH {distance} block={block} seed={seed} k={k}")
            # ranges that are not powers of two: a division off by one bit shows here
            query_c, reference_c = (
                EncodedTable(
                    np.column_stack(
                        [rng.random(size) * 13.7, rng.integers(0, 5, size) * 0.3]
                    ),
                    rng.integers(0, 2, size=(size, 1)),
                    ("a", "b"),
                    ("c",),
                )
                for size in (200, n_ref)
            )
            cases += 1
            ok = _same(query_c, reference_c, k=3, distance="dcr")
            failures += not ok
            if not ok:
                print(f"  MISMATCH dcr (continuous ranges) block={block} seed={seed}")
            cases += 1
            ok = _same(
                query_m, reference_m, k=3, distance="gower", missing="anonymeter"
            )
            failures += not ok
    torch_backend._REFERENCE_BLOCK = default_block
    print(
        f"identical neighbours on {torch_backend.device()}: {cases - failures}/{cases} cases"
    )
    return failures


def _explain(q: EncodedTable, r: EncodedTable, cpu: Any, gpu: Any, c: int) -> None:
    """Which backend the numpy backend agrees with, on up to 20 differing query rows."""
    differ = np.flatnonzero(
        (cpu.indices != gpu.indices[:c]).any(axis=1)
        | (cpu.distances != gpu.distances[:c]).any(axis=1)
    )
    rows = differ[:20]
    sub = q.take(rows)
    ref = nearest_neighbors(
        sub, r, k=cpu.indices.shape[1], distance="dcr", backend="numpy"
    )
    agree_cpu = int((ref.indices == cpu.indices[rows]).all(axis=1).sum())
    agree_gpu = int((ref.indices == gpu.indices[rows]).all(axis=1).sum())
    print(
        f"    {differ.size} of {c} rows differ; of {rows.size} checked with the numpy "
        f"backend, numba agrees on {agree_cpu}, torch on {agree_gpu}; largest distance "
        f"difference {np.abs(cpu.distances[rows] - gpu.distances[rows]).max():.3g}"
    )
    for i in rows[:3]:
        print(f"    row {i}: numba {cpu.indices[i]} {cpu.distances[i]}")
        print(f"    row {i}: torch {gpu.indices[i]} {gpu.distances[i]}")


def _float64_rate(torch: Any) -> float:
    """The device's float64 matrix-product rate (TFLOP/s), for scale."""
    a = torch.randn(8192, 8192, dtype=torch.float64, device="cuda")
    torch.matmul(a, a)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        torch.matmul(a, a)
    torch.cuda.synchronize()
    return 5 * 2 * 8192**3 / (time.perf_counter() - t0) / 1e12


def main(argv: list[str] | None = None) -> int:
    """Run the three parts; exit 1 on any mismatch, 2 without a CUDA device."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--cpu-rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--working-memory",
        type=float,
        nargs="+",
        default=[256.0, 4096.0],
        help="MiB of the torch blocks (each is timed)",
    )
    parser.add_argument(
        "--save",
        metavar="DIR",
        help="write the dcr neighbours of both backends here (npz)",
    )
    args = parser.parse_args(argv)
    import numba
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to measure")
        return 2
    print(
        f"{torch.cuda.get_device_name(0)}; torch {torch.__version__}, numpy {np.__version__}, "
        f"numba {numba.__version__} ({numba.get_num_threads()} threads), "
        f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), "
        f"Python {sys.version.split()[0]}"
    )
    print(f"device float64 GEMM: {_float64_rate(torch):.1f} TFLOP/s")
    failures = check_identical()
    rng = np.random.default_rng(0)

    n = args.rows
    query = rng.standard_normal((n, 20))
    reference = rng.standard_normal((n, 20))
    t_cpu, cpu = _best(
        lambda: nearest_neighbors(
            query, reference, k=5, distance="euclidean", backend="numba"
        ),
        args.repeats,
    )
    print(f"euclidean {n} x {n} x 20, k=5: numba {t_cpu:.2f} s")
    for wm in args.working_memory:
        t_gpu, gpu = _best(
            lambda wm=wm: nearest_neighbors(
                query,
                reference,
                k=5,
                distance="euclidean",
                backend="torch",
                working_memory=wm,
            ),
            args.repeats,
        )
        same = np.array_equal(cpu.indices, gpu.indices) and np.array_equal(
            cpu.distances, gpu.distances
        )
        print(
            f"  torch, blocks of {wm:.0f} MiB: {t_gpu:.2f} s ({t_cpu / t_gpu:.1f}x); "
            f"identical: {same}"
        )
        failures += not same

    m = int(0.8 * n)
    numeric = rng.random((n + m, 31))
    numeric[:, :8] = np.round(numeric[:, :8] * 10)  # counts: ties
    codes = rng.integers(0, 6, size=(n + m, 3))
    names = tuple(f"x{i}" for i in range(31)), tuple(f"c{i}" for i in range(3))
    q = EncodedTable(numeric[:n], codes[:n], *names)
    r = EncodedTable(numeric[n:], codes[n:], *names)
    c = min(args.cpu_rows, n)
    q_small = EncodedTable(numeric[:c], codes[:c], *names)
    t_cpu, cpu = _best(
        lambda: nearest_neighbors(q_small, r, k=3, distance="dcr", backend="numba"),
        args.repeats,
    )
    scaled = t_cpu * n / c
    print(
        f"dcr {n} x {m} (31 numeric + 3 categorical), k=3: numba {t_cpu:.2f} s on {c} "
        f"queries (x{n / c:.0f} = {scaled:.1f} s for all {n})"
    )
    for wm in args.working_memory:
        t_gpu, gpu = _best(
            lambda wm=wm: nearest_neighbors(
                q, r, k=3, distance="dcr", backend="torch", working_memory=wm
            ),
            args.repeats,
        )
        same = np.array_equal(cpu.indices, gpu.indices[:c]) and np.array_equal(
            cpu.distances, gpu.distances[:c]
        )
        print(
            f"  torch, blocks of {wm:.0f} MiB, all {n} queries: {t_gpu:.2f} s "
            f"({scaled / t_gpu:.1f}x); identical on the {c}: {same}"
        )
        failures += not same
        if not same:
            _explain(q, r, cpu, gpu, c)
        if args.save:
            np.savez(
                os.path.join(args.save, f"dcr_{wm:.0f}.npz"),
                cpu_d=cpu.distances,
                cpu_i=cpu.indices,
                gpu_d=gpu.distances[:c],
                gpu_i=gpu.indices[:c],
            )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
