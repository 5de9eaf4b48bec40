# SPDX-License-Identifier: BSD-3-Clause
"""The generator audit on a differentially private generator, over many seeds.

Usage (from the repository root)::

    python benchmarks/bench_audit_dp.py --seeds 40

The generator is the Laplace histogram of ``tests/audit/_dp.py`` (fixed cells, noise of
scale 1/ε on every count, rows drawn from the clipped noisy counts): ε-DP with respect to
each person by construction. The audit (10 most isolated of 60 real people, shadow
training sets of 40 rows from a pool of 240, all four attacks, 95 % confidence) runs once
per seed; its lower bound must stay at or below the true ε in at least 95 % of the seeds.
Prints a Markdown table for ``benchmarks/RESULTS.md`` and the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' generators

from tests.audit._dp import DPHistogram
from tests.audit._generators import population

from synthrisk.audit import audit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--epsilons", default="1,4")
    args = parser.parse_args()
    data = population(300, 7)
    real = data.iloc[:60].reset_index(drop=True)
    holdout = data.iloc[60:].reset_index(drop=True)
    print(f"load before: {os.getloadavg()[0]:.2f}")
    print(
        "| true ε | seeds | runs | bound ≤ ε | max bound | median bound | "
        "seeds with a bound > 0 | best pooled AUC (median) | s / audit |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for epsilon in (float(e) for e in args.epsilons.split(",")):
        bounds, aucs, seconds = [], [], []
        for seed in range(args.seeds):
            start = time.perf_counter()
            result = audit(
                DPHistogram(epsilon),
                real,
                holdout,
                n_targets=10,
                n_runs=args.runs,
                train_size=40,
                seed=seed,
            )
            seconds.append(time.perf_counter() - start)
            bounds.append(result.epsilon_lower)
            aucs.append(max(r.auc for r in result.overall.values()))
        b = np.asarray(bounds)
        print(
            f"| {epsilon:g} | {args.seeds} | {args.runs} | {np.mean(b <= epsilon):.0%} | "
            f"{b.max():.3f} | {np.median(b):.3f} | {int((b > 0).sum())} | "
            f"{np.median(aucs):.3f} | {np.mean(seconds):.1f} |"
        )
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
