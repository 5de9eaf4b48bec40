# SPDX-License-Identifier: BSD-3-Clause
"""The audit's bounds side by side on an exactly ε-DP mechanism, over many seeds.

Usage (from the repository root)::

    python benchmarks/bench_audit_bounds.py --seeds 200

Randomized response on membership: in each of 200 runs each of 10 targets joins the
training set with probability 1/2, and its record is released with probability
``e^ε / (1 + e^ε)`` when it did, ``1 / (1 + e^ε)`` when not (the known-ε mechanism of
``tests/audit/_generators.py``; the distance attacks read the release exactly, so the
attack's score is simulated directly). Half the runs select, half evaluate, as in
``synthrisk.audit``. Per-attack methods are at the level of six attacks
(``1 - 0.05 / 6``), as in the audit's ``overall``; the selected test at 0.95. Prints
the median of each bound, the share of seeds where it exceeds the true ε, and the
ceiling: the median bound of a perfect count of right guesses (see docs/audit.md).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from synthrisk.audit.bounds import attack_bound, selected_bound
from synthrisk.audit.guessing import guess_ceiling

N_ATTACKS = 6


def observations(epsilon: float, seed: int, n_runs: int, n_targets: int):
    g = np.random.default_rng(seed)
    member = g.random((n_runs, n_targets)) < 0.5
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    released = np.where(member, g.random(member.shape) < p, g.random(member.shape) >= p)
    scores = released.astype(np.float64)
    sel = np.arange(n_runs) % 2 == 0
    return (
        scores[sel].ravel(),
        member[sel].ravel(),
        scores[~sel].ravel(),
        member[~sel].ravel(),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--targets", type=int, default=10)
    parser.add_argument("--epsilons", default="0.25,1,2")
    args = parser.parse_args()
    level = 1 - 0.05 / N_ATTACKS
    names = ["clopper_pearson", "one_run", "guesses", "trade_off", "selected"]
    print(
        f"{args.seeds} seeds, {args.runs} runs x {args.targets} targets "
        f"({args.runs // 2 * args.targets} evaluation guesses)\n"
    )
    print(
        "| ε | " + " | ".join(names) + " | gdp_mu | ceiling (selected, 1,000 guesses) |"
    )
    print("|" + " --- |" * (len(names) + 3))
    for eps in (float(v) for v in args.epsilons.split(",")):
        tick = time.perf_counter()
        rows, mus = [], []
        for seed in range(args.seeds):
            obs = observations(eps, seed, args.runs, args.targets)
            b = attack_bound(*obs, delta=0.0, confidence_level=level)
            chosen = selected_bound({"dcr": obs}, delta=0.0, confidence_level=0.95)
            rows.append(
                [
                    b.epsilon_lower,
                    b.epsilon_lower_one_run or 0.0,
                    b.epsilon_lower_guesses or 0.0,
                    b.epsilon_lower_trade_off or 0.0,
                    chosen.epsilon_lower,
                ]
            )
            mus.append(b.mu_lower or 0.0)
        r = np.array(rows)
        cells = [
            f"{np.median(r[:, i]):.3f} ({np.mean(r[:, i] > eps):.1%})"
            for i in range(len(names))
        ]
        n_ev = args.runs // 2 * args.targets
        ceiling = guess_ceiling(n_ev, eps, confidence_level=0.95)
        print(
            f"| {eps:g} | " + " | ".join(cells) + f" | {np.median(mus):.3f} "
            f"| {ceiling:.3f} |"
        )
        print(f"<!-- ε = {eps:g}: {time.perf_counter() - tick:.1f} s -->")
    print("\nEach cell: median bound over the seeds (share of seeds above the true ε).")


if __name__ == "__main__":
    main()
