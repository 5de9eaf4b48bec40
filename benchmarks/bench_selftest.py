# SPDX-License-Identifier: BSD-3-Clause
"""The known-leak self-test on the full Adult data: its cost against the run it tests.

Usage::

    python benchmarks/bench_selftest.py --data path/to/adults

real = ``adults_train_reconstructed.csv`` (39,032 rows), synthetic = ``adults_syn_ctgan.csv``
(39,040), holdout = ``adults_control.csv`` (9,758). Runs the default assessment once without
and once with ``self_test=True`` (numba kernels warmed on 300 rows first) and prints both wall
times, the self-test's time per step (the isolation ranking, each scenario's gating metrics),
the load average before and after, and the self-test's table. ``--without-reuse`` adds a third
run in which every neighbour search of the self-test runs in full (no
:func:`synthrisk.neighbors.reuse_searches`), to measure what reusing the run's searches saves.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd


class Timings:
    """A progress object that records how long each metric of each stage took."""

    def __init__(self) -> None:
        self.labels: list[str] = []
        self.rows: list[tuple[str, str, float]] = []

    @contextlib.contextmanager
    def task(self, description: str, total: int) -> Iterator[Callable[[int], None]]:
        yield lambda n: None

    @contextlib.contextmanager
    def stage(self, label: str) -> Iterator[None]:
        self.labels.append(label)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.labels.pop()
            if label == "self-test":  # the isolation ranking
                self.rows.append(
                    ("self-test", "isolation ranking", time.perf_counter() - start)
                )

    @contextlib.contextmanager
    def metric(self, metric_id: str) -> Iterator[Callable[[float | None, str], None]]:
        start = time.perf_counter()
        yield lambda score, status: None
        stage = " · ".join(self.labels) or "run"
        self.rows.append((stage, metric_id, time.perf_counter() - start))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="folder with the Adult CSVs"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--without-reuse",
        action="store_true",
        help="also time the self-test with every search run in full",
    )
    args = parser.parse_args(argv)
    real = pd.read_csv(args.data / "adults_train_reconstructed.csv")
    synthetic = pd.read_csv(args.data / "adults_syn_ctgan.csv")
    holdout = pd.read_csv(args.data / "adults_control.csv")
    from synthrisk import evaluate

    evaluate(
        real.head(300), synthetic.head(300), holdout.head(300), self_test=True
    )  # warm the numba kernels
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    plain = evaluate(real, synthetic, holdout, seed=args.seed)
    wall_plain = time.perf_counter() - start
    timings = Timings()
    start = time.perf_counter()
    report = evaluate(
        real, synthetic, holdout, seed=args.seed, self_test=True, progress=timings
    )
    wall_tested = time.perf_counter() - start
    assert report.self_test is not None
    assert plain.verdict is not None
    per_stage: dict[str, float] = {}
    for stage, _, seconds in timings.rows:
        key = stage if stage.startswith("self-test") else "run"
        per_stage[key] = per_stage.get(key, 0.0) + seconds
    for stage, seconds in per_stage.items():
        print(f"{stage:55s} {seconds:7.1f} s")
    gating = {}
    for stage, metric, seconds in timings.rows:
        if stage.startswith("self-test ·"):
            gating[metric] = gating.get(metric, 0.0) + seconds
    print("self-test time per gating metric (all scenarios):")
    for metric, seconds in gating.items():
        print(f"  {metric:32s} {seconds:7.1f} s")
    print(
        f"evaluate: {wall_plain:.1f} s; with self_test=True: {wall_tested:.1f} s "
        f"(self-test {wall_tested - wall_plain:+.1f} s, x{wall_tested / wall_plain:.1f}); "
        f"cores {os.cpu_count()}, load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    if args.without_reuse:
        from synthrisk.neighbors import _reuse

        def full_search(
            self: object, query: Any, reference: Any, *, k: int, search: Any, **_: Any
        ) -> Any:
            return search(*query, *reference, k)

        _reuse.SearchReuse.kneighbors = full_search  # type: ignore[method-assign,assignment]
        start = time.perf_counter()
        again = evaluate(real, synthetic, holdout, seed=args.seed, self_test=True)
        wall_full = time.perf_counter() - start
        assert again.self_test == report.self_test
        print(
            f"with self_test=True, every search in full: {wall_full:.1f} s (self-test "
            f"{wall_full - wall_plain:+.1f} s); load average {os.getloadavg()[0]:.1f}"
        )
    print(f"verdict: {plain.verdict.overall}")
    print(report.self_test.headline)
    print("| kind | share | planted rows | verdict | failed | review |")
    print("|---|---:|---:|---|---|---|")
    for s in report.self_test.scenarios:
        print(
            f"| {s.kind} | {s.share * 100:g} % | {s.planted} | {s.overall} | "
            f"{', '.join(s.failed) or '—'} | {', '.join(s.review) or '—'} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
