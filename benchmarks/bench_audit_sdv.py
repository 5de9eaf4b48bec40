# SPDX-License-Identifier: BSD-3-Clause
"""The generator audit of SDV synthesizers on a 1,000-row Adult sample.

Usage (from the repository root; SDV 2.x needs pandas < 3, so it lives in its own
virtual environment and runs through the command adapter)::

    python -m venv sdv-venv && sdv-venv/bin/pip install torch==2.13.0 sdv 'pandas<3'
    python benchmarks/bench_audit_sdv.py --sdv-python sdv-venv/bin/python \
        --synthesizer gaussian_copula --runs 200 --n-jobs 2

real = 1,000 rows of ``adults_train_reconstructed.csv``, holdout (the attacker's pool) =
3,000 rows of ``adults_control.csv`` (the samples of ``bench_audit.py``), shadow training
sets of 1,000 pool rows plus the included targets, the 10 most isolated real people as
targets, all four attacks, 95 % confidence, δ = 0. Each shadow run starts
``benchmarks/sdv_generator.py`` in the SDV environment (a fresh interpreter: its import of
SDV is part of the generator's time). Prints the overall result, the per-target table
(row numbers of the real sample, never values) and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

from bench_audit import load, load_average

from synthrisk.audit import CommandGenerator, audit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/adults"))
    parser.add_argument(
        "--sdv-python", required=True, help="the SDV environment's python"
    )
    parser.add_argument("--synthesizer", default="gaussian_copula")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    script = Path(__file__).with_name("sdv_generator.py")
    template = (
        f"{shlex.quote(args.sdv_python)} {shlex.quote(str(script))} --train {{train}} "
        f"--out {{out}} --rows {{n}} --seed {{seed}} --synthesizer {args.synthesizer} "
        f"--epochs {args.epochs}"
    )
    real, holdout = load(args.data, n_real=1000, n_holdout=3000, seed=0)
    print(f"load average before: {load_average()}", flush=True)
    start = time.perf_counter()
    done = [0]

    def progress(n_done: int, total: int) -> None:
        if n_done - done[0] >= max(1, total // 10):
            done[0] = n_done
            print(
                f"  {n_done}/{total} runs, {time.perf_counter() - start:.0f} s",
                file=sys.stderr,
            )

    result = audit(
        CommandGenerator(template, timeout=1800),
        real,
        holdout,
        n_targets=10,
        n_runs=args.runs,
        train_size=1000,
        n_jobs=args.n_jobs,
        seed=args.seed,
        progress=progress,
    )
    wall = time.perf_counter() - start
    n = result.n_runs
    gen_s = float(result.runs["generator_seconds"])
    print(f"load average after: {load_average()}")
    print(
        f"\n{args.synthesizer} (epochs {args.epochs} where it trains), {n} runs "
        f"({result.runs.get('failed', 0)} failed), n_jobs {args.n_jobs}, cpus {os.cpu_count()}: "
        f"wall {wall:.0f} s, {60 * n / wall:.1f} runs / min, generator {gen_s / max(n, 1):.2f} s / run\n"
    )
    print(
        f"ε lower (95 %, all attacks): {result.epsilon_lower:.3f}, best attack {result.best_attack}"
    )
    print("\n| attack | AUC (pooled) | TPR at FPR 1 %, 10 % | ε lower |")
    print("|---|---|---|---|")
    for name, b in result.overall.items():
        print(f"| {name} | {_num(b.auc)} | {_rates(b)} | {b.epsilon_lower:.3f} |")
    print(
        "\n| target (real row) | isolation | times included | ε lower | best attack | its AUC |"
    )
    print("|---|---|---|---|---|---|")
    for t in result.targets:
        best = t.attacks.get(t.best_attack) if t.best_attack else None
        auc = _num(best.auc) if best is not None else "–"
        print(
            f"| {t.row} | {t.isolation:.3f} | {t.n_included} | {t.epsilon_lower:.3f} "
            f"| {t.best_attack or '–'} | {auc} |"
        )


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _rates(bound: object) -> str:
    rates = getattr(bound, "tpr_at_fpr", {}) or {}
    return ", ".join(_num(v) for v in rates.values()) or "–"


if __name__ == "__main__":
    main()
