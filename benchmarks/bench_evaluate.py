# SPDX-License-Identifier: BSD-3-Clause
"""The whole default assessment (every family) on the full Adult data: wall time per metric.

Usage::

    python benchmarks/bench_evaluate.py --data path/to/adults

real = ``adults_train_reconstructed.csv`` (39,032 rows), synthetic = ``adults_syn_ctgan.csv``
(39,040), holdout = ``adults_control.csv`` (9,758). Prints each metric's seconds, the total wall
and CPU seconds (CPU above wall means several cores worked), the load average before and after,
the seconds of ``import synthrisk`` and of reading the three CSVs (outside the total), and the
verdict.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="folder with the Adult CSVs"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    from synthrisk import evaluate
    from synthrisk.io import read_table

    imported = time.perf_counter() - start
    start = time.perf_counter()
    # read as the command line reads its files (the frames equal pandas.read_csv's here)
    real = read_table(args.data / "adults_train_reconstructed.csv")
    synthetic = read_table(args.data / "adults_syn_ctgan.csv")
    holdout = read_table(args.data / "adults_control.csv")
    read = time.perf_counter() - start

    # warm the numba kernels on a small sample so that compilation is not timed
    evaluate(real.head(300), synthetic.head(300), holdout.head(300), seed=args.seed)
    load_before = os.getloadavg()[0]
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    report = evaluate(real, synthetic, holdout, seed=args.seed)
    wall = time.perf_counter() - start
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    for result in report.results:
        print(f"{result.metric:32s} {result.seconds:7.2f} s")
    assert report.verdict is not None
    print(
        f"total wall {wall:.1f} s, CPU {cpu:.1f} s, cores {os.cpu_count()}, "
        f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    print(f"import synthrisk {imported:.2f} s, reading the three CSVs {read:.2f} s")
    print(f"verdict: {report.verdict.overall} ({report.verdict.reason})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
