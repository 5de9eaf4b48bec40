# SPDX-License-Identifier: BSD-3-Clause
"""The generator audit on a differentially private generator, over many seeds.

Usage (from the repository root)::

    python benchmarks/bench_audit_dp.py --seeds 40
    python benchmarks/bench_audit_dp.py --seeds 100 --canaries 10 --generator presence
    python benchmarks/bench_audit_dp.py --seeds 5 --canaries 10 --copier

The generator is the Laplace histogram of ``tests/audit/_dp.py`` (fixed cells, noise of
scale 1/ε on every count, rows drawn from the clipped noisy counts; ``--generator
histogram``, the default) or its randomized-response presence histogram (each cell's
"someone is here" bit kept with probability e^ε / (1 + e^ε); ``--generator presence``):
both ε-DP with respect to each person by construction. The audit (10 most isolated of 60
real people, shadow training sets of 40 rows from a pool of 240, all six attacks, 95 %
confidence) runs once per seed; its lower bound must stay at or below the true ε in at
least 95 % of the seeds.

``--canaries N`` runs every seed twice: without canaries, and with N worst-case canaries
(``n_canaries``), and reports side by side the bound without canaries, and with them the
natural targets' bound, the canaries' bound and the headline (the one test chosen on the
selection runs among both groups). ``--copier`` adds a generator that copies its training
rows (``train.sample(n, replace=True)``), which must get a large bound and fail the gate
``--max-epsilon``. Prints Markdown tables for ``benchmarks/RESULTS.md`` and the load
average.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' generators

from tests.audit._dp import DPHistogram, DPPresence
from tests.audit._generators import population

from synthrisk.audit import AuditResult, audit

GENERATORS: dict[str, Callable[[float], object]] = {
    "histogram": DPHistogram,
    "presence": DPPresence,
}


def copier(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Copies its training rows: no privacy at all."""
    return train.sample(n, replace=True, random_state=seed).reset_index(drop=True)


def _stats(values: list[float], epsilon: float | None) -> str:
    b = np.asarray(values)
    share = "—" if epsilon is None else f"{np.mean(b <= epsilon):.0%}"
    return f"{share} | {b.max():.3f} | {np.median(b):.3f}"


def _plain(args: argparse.Namespace, real: pd.DataFrame, holdout: pd.DataFrame) -> None:
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
                GENERATORS[args.generator](epsilon),  # type: ignore[arg-type]
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


def _side_by_side(
    args: argparse.Namespace, real: pd.DataFrame, holdout: pd.DataFrame
) -> None:
    cases: list[tuple[str, float | None, object]] = [
        (args.generator, float(e), GENERATORS[args.generator](float(e)))
        for e in args.epsilons.split(",")
        if e.strip()
    ]
    if args.copier:
        cases.append(("copier", None, copier))
    print(
        f"{args.canaries} canaries. Each bound: the share of seeds at or below the true "
        "ε, its maximum and its median. Without: the audit without canaries; natural, "
        "canaries: the two groups of the audit with canaries (each at 95 %); headline: "
        "that audit's headline (the larger of the two, each at 97.5 %).\n"
    )
    groups = ("without", "natural", "canaries", "headline")
    print(
        "| generator | true ε | seeds | runs | "
        + " | ".join(f"{g} ≤ ε | {g} max | {g} median" for g in groups)
        + " | headline from the canaries | gate ε ≤ "
        + f"{args.max_epsilon:g} fails (without / with) | "
        "canaries' best AUC (median) | s / audit (without / with) |"
    )
    print("|" + "---|" * (4 + 3 * len(groups) + 4))
    for name, epsilon, generator in cases:
        plain, natural, canary, headline, aucs = [], [], [], [], []
        from_canaries = fails_plain = fails_with = 0
        t_plain = t_with = 0.0
        for seed in range(args.seeds):
            start = time.perf_counter()
            without: AuditResult = audit(
                generator,  # type: ignore[arg-type]
                real,
                holdout,
                n_targets=10,
                n_runs=args.runs,
                train_size=40,
                seed=seed,
            )
            t_plain += time.perf_counter() - start
            start = time.perf_counter()
            with_: AuditResult = audit(
                generator,  # type: ignore[arg-type]
                real,
                holdout,
                n_targets=10,
                n_canaries=args.canaries,
                n_runs=args.runs,
                train_size=40,
                seed=seed,
            )
            t_with += time.perf_counter() - start
            assert with_.canaries is not None
            plain.append(without.epsilon_lower)
            natural.append(float(with_.epsilon_lower_natural or 0.0))
            canary.append(with_.canaries.epsilon_lower)
            headline.append(with_.epsilon_lower)
            aucs.append(max(b.auc for b in with_.canaries.overall.values()))
            from_canaries += with_.selected_targets == "canaries"
            fails_plain += not without.verdict(args.max_epsilon).passed
            fails_with += not with_.verdict(args.max_epsilon).passed
        shown = "—" if epsilon is None else f"{epsilon:g}"
        print(
            f"| {name} | {shown} | {args.seeds} | {args.runs} | {_stats(plain, epsilon)} | "
            f"{_stats(natural, epsilon)} | {_stats(canary, epsilon)} | "
            f"{_stats(headline, epsilon)} | {from_canaries} | "
            f"{fails_plain} / {fails_with} | {np.median(aucs):.3f} | "
            f"{t_plain / args.seeds:.1f} / {t_with / args.seeds:.1f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--epsilons", default="1,4")
    parser.add_argument("--generator", choices=sorted(GENERATORS), default="histogram")
    parser.add_argument("--canaries", type=int, default=0)
    parser.add_argument("--copier", action="store_true")
    parser.add_argument("--max-epsilon", type=float, default=1.0)
    args = parser.parse_args()
    data = population(300, 7)
    real = data.iloc[:60].reset_index(drop=True)
    holdout = data.iloc[60:].reset_index(drop=True)
    print(f"load before: {os.getloadavg()[0]:.2f}")
    if args.canaries:
        _side_by_side(args, real, holdout)
    else:
        _plain(args, real, holdout)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
