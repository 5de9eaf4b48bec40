# SPDX-License-Identifier: BSD-3-Clause
"""Shadow runs per minute of an other-interpreter generator, with and without the worker.

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/bench_audit_worker.py --runs 12 --n-jobs 1

The generator is ``slow_import_gen:fit_sample``, written to a temporary folder: a module
whose import sleeps ``--import-seconds`` (default 2 s, standing in for SDV's or torch's
imports) and whose ``fit_sample`` draws ``n`` training rows with replacement. It runs in
another interpreter (this one's executable, through :class:`PythonGenerator`) once with a
fresh interpreter per run (``worker=False``) and once with a persistent worker per job
slot (``worker=True``, the default). real = 500 rows of ``adults_train_reconstructed.csv``,
holdout = 1,500 rows of ``adults_control.csv``, 5 targets, the ``dcr`` attack only (so that
the generator's start-up is what is measured). Prints runs per minute of each mode and
the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from synthrisk.audit import PythonGenerator, audit

MODULE = """
import time
time.sleep({seconds})  # an expensive import
import pandas as pd


def fit_sample(train, n, seed):
    return train.sample(n, replace=True, random_state=seed).reset_index(drop=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/adults"))
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--import-seconds", type=float, default=2.0)
    args = parser.parse_args()
    real = pd.read_csv(args.data / "adults_train_reconstructed.csv").sample(
        500, random_state=0
    )
    holdout = pd.read_csv(args.data / "adults_control.csv").sample(1500, random_state=1)
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "slow_import_gen.py").write_text(
            MODULE.format(seconds=args.import_seconds)
        )
        print(f"load average before: {os.getloadavg()}")
        results = {}
        for worker in (False, True):
            gen = PythonGenerator(
                sys.executable,
                "slow_import_gen:fit_sample",
                path=(folder,),
                worker=worker,
            )
            tick = time.perf_counter()
            result = audit(
                gen,
                real,
                holdout,
                n_targets=5,
                n_runs=args.runs,
                attacks=["dcr"],
                n_jobs=args.n_jobs,
            )
            seconds = time.perf_counter() - tick
            assert result.runs["completed"] == args.runs, result.failures
            rate = args.runs / seconds * 60
            results[worker] = result
            mode = "persistent worker" if worker else "fresh interpreter per run"
            print(
                f"{mode:26s}: {args.runs} runs in {seconds:6.1f} s = {rate:6.1f} runs/min "
                f"(generator {result.runs['generator_seconds']:.1f} s over all runs)"
            )
        same = results[False].epsilon_lower == results[True].epsilon_lower
        print(f"same bound in both modes: {same} ({results[True].epsilon_lower:.3f})")
        print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
