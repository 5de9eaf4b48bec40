# SPDX-License-Identifier: BSD-3-Clause
"""The generator audit's cost and its bounds on a mechanism of known ε.

Usage::

    python benchmarks/bench_audit.py --data ../shared/data/adults

real = 1,000 rows of ``adults_train_reconstructed.csv``, holdout (the attacker's pool) =
3,000 rows of ``adults_control.csv`` (seeded samples; 14 columns, ``fnlwgt`` left out as
the demo leaves it). Three measurements:

1. **Throughput**: shadow runs per minute of a cheap generator, a sequential CART
   synthesizer in the manner of synthpop (each column drawn from the leaf of a decision
   tree fitted on the columns before it), trained on 1,000 rows per run.
2. **Overhead**: the audit's own seconds (target choice, encoding and scoring each output,
   the classifier, the bounds) as a share of the generator's seconds.
3. **Validity and power**: the audit of a mechanism of known ε (each target's record is
   released with probability e^ε / (1 + e^ε) when it trained on it, 1 / (1 + e^ε) when
   not) after 100, 500 and 2,000 runs: the bound must stay below ε and approach it.

Prints a Markdown table for ``benchmarks/RESULTS.md`` and the load average before and after.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from synthrisk.audit import audit

COLUMNS_LEFT_OUT = ["fnlwgt"]


def load(
    data: Path, *, n_real: int, n_holdout: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seeded samples of the Adult training and control files."""
    real = pd.read_csv(data / "adults_train_reconstructed.csv")
    holdout = pd.read_csv(data / "adults_control.csv")
    real = real.drop(columns=[c for c in COLUMNS_LEFT_OUT if c in real.columns])
    holdout = holdout[real.columns]
    real = real.sample(n_real, random_state=seed).reset_index(drop=True)
    holdout = holdout.sample(n_holdout, random_state=seed + 1).reset_index(drop=True)
    return real, holdout


class SequentialCART:
    """A cheap synthpop-style generator: column by column, a draw from a CART leaf."""

    def __init__(self, *, min_samples_leaf: int = 5) -> None:
        self.min_samples_leaf = min_samples_leaf

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        g = np.random.default_rng(seed)
        codes = {}
        encoded = pd.DataFrame(index=train.index)
        for c in train.columns:
            if not pd.api.types.is_numeric_dtype(train[c]):
                cat = pd.Categorical(train[c])
                codes[c] = cat.categories
                encoded[c] = cat.codes
            else:
                encoded[c] = train[c].to_numpy()
        out = pd.DataFrame(index=range(n))
        first = train.columns[0]
        out[first] = encoded[first].to_numpy()[g.integers(0, len(train), n)]
        for i, c in enumerate(train.columns[1:], start=1):
            x_train = encoded[train.columns[:i]].to_numpy(dtype=float)
            y_train = encoded[c].to_numpy()
            tree_cls = DecisionTreeClassifier if c in codes else DecisionTreeRegressor
            tree = tree_cls(
                min_samples_leaf=self.min_samples_leaf,
                random_state=int(g.integers(2**31)),
            )
            tree.fit(x_train, y_train)
            leaf_train = tree.apply(x_train)
            leaf_out = tree.apply(out[train.columns[:i]].to_numpy(dtype=float))
            by_leaf: dict[int, np.ndarray] = {}
            order = np.argsort(leaf_train, kind="stable")
            leaves, starts = np.unique(leaf_train[order], return_index=True)
            for leaf, group in zip(leaves, np.split(order, starts[1:]), strict=True):
                by_leaf[int(leaf)] = y_train[group]
            out[c] = [
                by_leaf[int(leaf)][g.integers(len(by_leaf[int(leaf)]))]
                for leaf in leaf_out
            ]
        for c, categories in codes.items():
            out[c] = np.asarray(categories, dtype=object)[
                out[c].to_numpy(dtype=np.int64)
            ]
        return out[train.columns]


class KnownEpsilon:
    """ε-DP with respect to each target: its record is released by a biased coin."""

    def __init__(self, targets: pd.DataFrame, epsilon: float) -> None:
        self.targets = targets.reset_index(drop=True)
        self.keys = pd.util.hash_pandas_object(self.targets, index=False).to_numpy()
        self.epsilon = epsilon

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        g = np.random.default_rng(seed)
        train_keys = pd.util.hash_pandas_object(train, index=False).to_numpy()
        present = np.isin(self.keys, train_keys)
        p_in = math.exp(self.epsilon) / (1 + math.exp(self.epsilon))
        coin = g.random(len(self.targets))
        released = np.where(present, coin < p_in, coin < 1 - p_in)
        others = train[~np.isin(train_keys, self.keys)]
        draws = others.iloc[g.integers(0, len(others), size=n - int(released.sum()))]
        out = pd.concat([draws, self.targets[released]], ignore_index=True)
        return out.iloc[g.permutation(len(out))].reset_index(drop=True)


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/adults"))
    parser.add_argument(
        "--runs", type=int, default=40, help="shadow runs of the CART generator"
    )
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--known-runs", default="100,500,2000")
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args()

    print(f"load average before: {load_average()}")
    real, holdout = load(args.data, n_real=1000, n_holdout=3000, seed=0)
    # warm the neighbour kernels (numba compiles on first use)
    audit(SequentialCART(), real.iloc[:200], holdout.iloc[:400], n_targets=2, n_runs=4)

    start = time.perf_counter()
    result = audit(
        SequentialCART(),
        real,
        holdout,
        n_targets=10,
        n_runs=args.runs,
        train_size=1000,
        n_jobs=args.n_jobs,
        seed=0,
    )
    wall = time.perf_counter() - start
    runs = result.runs
    gen_s, audit_s = float(runs["generator_seconds"]), float(runs["audit_seconds"])
    setup_s, scoring_s, bounds_s = (
        float(runs["setup_seconds"]),
        float(runs["scoring_seconds"]),
        float(runs["bounds_seconds"]),
    )
    n = result.n_runs
    print(
        "\n| generator | runs | wall s | runs / min | generator s/run | audit ms/run "
        "| audit per run / generator | audit once (setup + bounds) s | audit total / generator "
        "| ε lower | best attack |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| sequential CART, 1,000 rows | {n} | {wall:.1f} | {60 * n / wall:.1f} "
        f"| {gen_s / n:.3f} | {1000 * scoring_s / n:.1f} | {100 * scoring_s / gen_s:.1f} % "
        f"| {setup_s:.2f} + {bounds_s:.2f} | {100 * audit_s / gen_s:.1f} % "
        f"| {result.epsilon_lower:.3f} | {result.best_attack} |"
    )

    targets_result = audit(
        SequentialCART(),
        real,
        holdout,
        n_targets=10,
        n_runs=4,
        train_size=1000,
        attacks=["dcr"],
    )
    rows = [t.row for t in targets_result.targets]
    mechanism = KnownEpsilon(real.iloc[rows], args.epsilon)
    print(
        f"\nKnown-ε mechanism, ε = {args.epsilon:g}, the 10 most isolated real people as targets:\n"
    )
    print(
        "| runs | ε lower (all attacks, 95 %) | best attack | dcr AUC | dcr TPR interval | dcr FPR interval | wall s |"
    )
    print("|---|---|---|---|---|---|---|")
    for n_runs in (int(v) for v in args.known_runs.split(",") if v):
        start = time.perf_counter()
        r = audit(
            mechanism,
            real,
            holdout,
            n_targets=0,
            target_rows=rows,
            n_runs=n_runs,
            train_size=1000,
            seed=1,
            n_jobs=args.n_jobs,
        )
        dcr = r.overall["dcr"]
        print(
            f"| {n_runs} | {r.epsilon_lower:.3f} | {r.best_attack} | {dcr.auc:.3f} "
            f"| [{dcr.tpr[0]:.3f}, {dcr.tpr[1]:.3f}] | [{dcr.fpr[0]:.3f}, {dcr.fpr[1]:.3f}] "
            f"| {time.perf_counter() - start:.1f} |"
        )
    print(f"\nload average after: {load_average()}")


if __name__ == "__main__":
    main()
