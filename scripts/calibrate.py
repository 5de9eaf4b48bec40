# SPDX-License-Identifier: BSD-3-Clause
"""Calibrate the release verdict on null and leaky generators built from real data.

Every split cuts a real table into three disjoint parts: *real* (the training rows),
*holdout*, and a third part that plays the synthetic table. That third part is the
best any generator can do (new people from the same population), so its verdict must
be ``pass``. Leaky generators are built from the same split by replacing synthetic rows
with copies of training rows:

* ``copies_5``: 5 % exact copies (must ``fail``);
* ``copies_1``: 1 % exact copies (at least ``review``);
* ``noisy_30``: 30 % noisy copies — numeric noise of 5 % of the column's standard
  deviation, 10 % of categorical cells swapped for another value (must ``fail``).

Splits are thirds (1/3 each) and 60 / 20 / 20 (a holdout smaller than the training
table, as users usually have it). Datasets: Adult (``--adult DIR`` with
``adults_train_reconstructed.csv`` and ``adults_control.csv``, pooled) when given, and
two generated ones: ``coarse`` (few categorical and small-integer columns, many
duplicate rows) and ``continuous`` (correlated continuous columns with 5 % missing
values). Each dataset is subsampled to ``--rows`` rows before splitting.

Usage::

    python scripts/calibrate.py --adult path/to/adults --rows 15000 --splits 7 --uneven 7

prints one line per evaluation and the table of verdict counts per scenario.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from synthrisk import evaluate
from synthrisk.datasets.calibration import coarse_data, continuous_data

SCENARIOS = ("null", "copies_1", "copies_5", "noisy_30")


def adult_data(folder: Path) -> pd.DataFrame:
    """Adult (UCI), the 48,790 de-duplicated rows of Anonymeter's example split, pooled."""
    frames = [
        pd.read_csv(folder / name)
        for name in ("adults_train_reconstructed.csv", "adults_control.csv")
    ]
    return pd.concat(frames, ignore_index=True)


def split(frame: pd.DataFrame, shares: tuple[float, float], rng: np.random.Generator):
    order = rng.permutation(len(frame))
    n_real = round(shares[0] * len(frame))
    n_hold = round(shares[1] * len(frame))
    real = frame.iloc[order[:n_real]].reset_index(drop=True)
    holdout = frame.iloc[order[n_real : n_real + n_hold]].reset_index(drop=True)
    synthetic = frame.iloc[order[n_real + n_hold :]].reset_index(drop=True)
    return real, holdout, synthetic


def noisy_copies(
    rows: pd.DataFrame, pool: pd.DataFrame, rng: np.random.Generator
) -> pd.DataFrame:
    """Numeric noise of 5 % of each column's SD; 10 % of categorical cells swapped."""
    out = rows.copy()
    for column in out.columns:
        if pd.api.types.is_numeric_dtype(out[column]):
            sd = float(pool[column].std())
            out[column] = out[column] + rng.normal(0, 0.05 * sd, len(out))
            if pd.api.types.is_integer_dtype(rows[column]):
                out[column] = out[column].round().astype(rows[column].dtype)
        else:
            values = pool[column].dropna().unique()
            swap = rng.random(len(out)) < 0.10
            out.loc[swap, column] = rng.choice(values, int(swap.sum()))
    return out


def leaky(
    real: pd.DataFrame, synthetic: pd.DataFrame, scenario: str, rng: np.random.Generator
) -> pd.DataFrame:
    if scenario == "null":
        return synthetic
    share = {"copies_1": 0.01, "copies_5": 0.05, "noisy_30": 0.30}[scenario]
    n_copy = round(share * len(synthetic))
    sources = real.iloc[rng.choice(len(real), n_copy, replace=False)].reset_index(
        drop=True
    )
    if scenario == "noisy_30":
        sources = noisy_copies(sources, real, rng)
    keep = synthetic.iloc[
        rng.choice(len(synthetic), len(synthetic) - n_copy, replace=False)
    ]
    mixed = pd.concat([keep, sources], ignore_index=True)
    return mixed.iloc[rng.permutation(len(mixed))].reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--adult", type=Path, default=None, help="folder with the Adult CSVs"
    )
    parser.add_argument(
        "--rows", type=int, default=15_000, help="rows per dataset before splitting"
    )
    parser.add_argument(
        "--splits", type=int, default=7, help="thirds splits per dataset"
    )
    parser.add_argument(
        "--uneven", type=int, default=7, help="60/20/20 splits per dataset"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument(
        "--datasets", default="adult,coarse,continuous", help="which datasets to run"
    )
    args = parser.parse_args(argv)
    scenarios = [s for s in args.scenarios.split(",") if s]
    rng = np.random.default_rng(args.seed)
    wanted = set(args.datasets.split(","))
    datasets = {}
    if args.adult is not None and "adult" in wanted:
        adult = adult_data(args.adult)
        datasets["adult"] = adult.iloc[
            rng.choice(len(adult), min(args.rows, len(adult)), replace=False)
        ]
    if "coarse" in wanted:
        datasets["coarse"] = coarse_data(args.rows, rng)
    if "continuous" in wanted:
        datasets["continuous"] = continuous_data(args.rows, rng)
    counts: dict[tuple[str, str, str], collections.Counter[str]] = (
        collections.defaultdict(collections.Counter)
    )
    worst: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    effects: dict[tuple[str, str, str, str], list[tuple[float, float]]] = (
        collections.defaultdict(list)
    )
    for name, frame in datasets.items():
        frame = frame.reset_index(drop=True)
        layouts = [("thirds", (1 / 3, 1 / 3))] * args.splits + [
            ("60/20/20", (0.6, 0.2))
        ] * args.uneven
        for i, (layout, shares) in enumerate(layouts):
            real, holdout, third = split(frame, shares, rng)
            for scenario in scenarios:
                synthetic = leaky(real, third, scenario, rng)
                start = time.perf_counter()
                report = evaluate(real, synthetic, holdout, seed=i)
                seconds = time.perf_counter() - start
                verdict = report.verdict
                assert verdict is not None
                counts[(name, layout, scenario)][verdict.overall] += 1
                counts[("all", "all", scenario)][verdict.overall] += 1
                bad = [
                    f"{v.metric}={v.level}"
                    for v in verdict.metrics
                    if v.gating and v.level != "pass"
                ]
                worst[(name, scenario)].extend(bad)
                for v in verdict.metrics:
                    if v.gating and v.effect is not None and v.ci is not None:
                        half = (v.ci[1] - v.ci[0]) / 2
                        effects[(name, layout, scenario, v.metric)].append(
                            (v.effect, half)
                        )
                print(
                    f"{name:10s} {layout:8s} split {i} {scenario:9s} {verdict.overall:6s} {seconds:6.1f}s "
                    + " ".join(bad),
                    flush=True,
                )
    print()
    print("| dataset | split | scenario | runs | pass | review | fail |")
    print("|---|---|---|---|---|---|---|")
    for (name, layout, scenario), c in counts.items():
        total = sum(c.values())
        print(
            f"| {name} | {layout} | {scenario} | {total} | {c['pass']} | {c['review']} | {c['fail']} |"
        )
    print()
    print("mean excess ± mean interval half-width of each gating test:")
    print("| dataset | split | scenario | metric | excess | half-width |")
    print("|---|---|---|---|---|---|")
    for (name, layout, scenario, metric), values in sorted(effects.items()):
        arr = np.asarray(values)
        print(
            f"| {name} | {layout} | {scenario} | {metric} | {arr[:, 0].mean():.4f} | {arr[:, 1].mean():.4f} |"
        )
    print()
    print("non-pass gating metrics by dataset and scenario:")
    for (name, scenario), items in worst.items():
        print(f"  {name} {scenario}: {dict(collections.Counter(items))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
