# SPDX-License-Identifier: BSD-3-Clause
"""Time the peers' measures (synthpop, SDNist, k-anonymity family, ...) on the full Adult data.

Usage::

    .venv/bin/python benchmarks/bench_peers.py --data ../shared/data/adults [--repeat 3]

Real = the training table (39k rows), synthetic = Anonymeter's CTGAN output (39k rows),
holdout = Anonymeter's control table (9.8k rows). Each measure runs ``--repeat`` times
on tables validated once (as ``evaluate`` does); the best wall time and the process CPU
time of that run (all threads) are printed, with the load average before and after
(timings on a shared machine are upper bounds). synthcity's ε-identifiability works on
pre-encoded numbers, so it runs on Adult's six numeric columns.

On a machine shared with other jobs, ``NUMBA_NUM_THREADS=1`` gives steadier CPU times
(compiled kernels on one thread each; the worst-subset DCR share still runs column
subsets side by side).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DEFAULT_DATA, adult_metadata

from synthrisk.metrics import get_metric
from synthrisk.metrics._base import make_context
from synthrisk.schema import prepare_tables

KEYS = ["age", "sex", "race", "marital"]
MEASURES: dict[str, dict[str, object]] = {
    "replicated_uniques": {"keys": KEYS},
    "disco": {"keys": KEYS, "target": "income"},
    "unique_exact_matches": {},
    "apparent_match_distribution": {"quasi_identifiers": KEYS},
    "k_anonymity": {"quasi_identifiers": KEYS, "sensitive": ["income"]},
    "epsilon_identifiability": {},
    "epsilon_identifiability_dcr": {"variant": "dcr"},
    "epsilon_identifiability_synthcity": {"variant": "synthcity"},
    "domias": {},
    "domias_prior": {"density": "prior"},
    "domias_full": {"max_fit_rows": 40_000},
    "monte_carlo_membership": {},
    "collision_membership": {},
    "membership_knn_probabilities": {},
    "dcr_share_worst": {"column_subsets": "worst"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=None, help="comma-separated metric ids")
    args = parser.parse_args()
    real = pd.read_csv(args.data / "adults_train_reconstructed.csv")
    syn = pd.read_csv(args.data / "adults_syn_ctgan.csv")
    hold = pd.read_csv(args.data / "adults_control.csv")
    tables = prepare_tables(real, syn, hold, metadata=adult_metadata())
    numeric = [
        c
        for c, spec in adult_metadata()["columns"].items()
        if spec["sdtype"] == "numerical"
    ]
    numeric_tables = prepare_tables(real[numeric], syn[numeric], hold[numeric])
    only = None if args.only is None else set(args.only.split(","))
    print(f"real {len(real)}, synthetic {len(syn)}, holdout {len(hold)} rows")
    print("load average before: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    for metric_id, params in MEASURES.items():
        if only is not None and metric_id not in only:
            continue
        base = metric_id
        for suffix in ("_prior", "_dcr", "_synthcity", "_full", "_worst"):
            base = base.removesuffix(suffix)
        metric = get_metric(base).from_params(params)
        data = numeric_tables if metric_id.endswith("_synthcity") else tables
        best, best_cpu = float("inf"), float("inf")
        result = None
        for _ in range(args.repeat):
            context = make_context(
                metric.id, seed=0, working_memory=None, backend=None, progress=False
            )
            start, cpu = time.perf_counter(), time.process_time()
            result = metric.run(data, context)
            if time.perf_counter() - start < best:
                best = time.perf_counter() - start
                best_cpu = time.process_time() - cpu
        assert result is not None
        score = "None" if result.score is None else f"{result.score:.6f}"
        print(f"{metric_id:34s} {best:8.3f} s  cpu {best_cpu:7.3f} s   score {score}")
    print("load average after: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
