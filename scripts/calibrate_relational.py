# SPDX-License-Identifier: BSD-3-Clause
"""Calibrate the person-level verdict of ``evaluate_tables`` on null and copying generators.

For each dataset of :mod:`synthrisk.datasets.relational` (the ``bank``: customers →
accounts → transactions; the ``clinic``: patients → visits ordered by date) and each
seed, one population of ``--people`` people is drawn and 20 % of them held out; the
synthetic versions are

* ``null`` — new people from the same model (must not fail);
* ``whole_copies`` — ``--copy-share`` of the synthetic people replaced by training
  people with all their rows (must fail);
* ``child_copies`` — ``--copy-share`` of the synthetic people given a training person's
  rows below the root, under their own new root row (must be detected: fail);
* ``shuffled_sequences`` (clinic) — copies of training patients whose visits keep their
  dates but have their other values shuffled among the visits (must fail).

The verdict is the person-level one (the per-table reports are skipped with
``table_metrics=[]``: they do not enter it). Run from the repository root::

    python scripts/calibrate_relational.py --people 4000 --seeds 5

Detection needs enough copies: with a 20 % holdout and no holdout person linked, the
linkage's exact test reaches its level (0.01 over three attacks) from about 26 copied
people, so 1 % copies need a few thousand people.
"""

from __future__ import annotations

import argparse
import collections
import time
import warnings

import synthrisk
from synthrisk.datasets.relational import load_bank, load_clinic

SCENARIOS = {
    "bank": ("null", "whole_copies", "child_copies"),
    "clinic": ("null", "whole_copies", "child_copies", "shuffled_sequences"),
}
TARGET = {
    "null": "pass or review",
    "whole_copies": "fail",
    "child_copies": "fail",
    "shuffled_sequences": "fail",
}


def main() -> None:
    """Run every dataset × seed × scenario; print each run and the pass/review/fail table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=4000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--copy-share", type=float, default=0.01)
    parser.add_argument("--datasets", default="bank,clinic")
    args = parser.parse_args()
    counts: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    print(
        "dataset | seed | scenario | verdict | person level | linkage (p) | worst attack"
    )
    for dataset in args.datasets.split(","):
        loader = load_bank if dataset == "bank" else load_clinic
        for seed in range(args.seeds):
            data = loader(args.people, copy_share=args.copy_share, seed=seed)
            for scenario in SCENARIOS[dataset]:
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    report = synthrisk.evaluate_tables(
                        data.real,
                        data.synthetic[scenario],
                        data.holdout,
                        metadata=data.metadata,
                        seed=seed,
                        table_metrics=[],
                    )
                seconds = time.perf_counter() - start
                counts[dataset, scenario][report.verdict] += 1
                people = report.people.verdict
                worst = min(report.linkage.attacks, key=lambda a: a.p_value)
                print(
                    f"{dataset} | {seed} | {scenario} | {report.verdict} | "
                    f"{people.overall if people else 'review'} | "
                    f"{report.linkage.level} ({report.linkage.p_value:.2g}) | "
                    f"{worst.name} {worst.linked_training}/{worst.n_training} vs "
                    f"{worst.linked_holdout}/{worst.n_holdout} ({seconds:.1f} s)",
                    flush=True,
                )
    n_copies = round(args.copy_share * round(args.people * 0.8))
    print(
        f"\n{args.people} people (20 % held out), {args.copy_share:.0%} of the synthetic "
        f"people copied ({n_copies}), seeds 0 to {args.seeds - 1}\n"
    )
    print("| dataset | scenario | target | pass | review | fail |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (dataset, scenario), c in counts.items():
        print(
            f"| {dataset} | `{scenario}` | {TARGET[scenario]} | {c['pass']} | "
            f"{c['review']} | {c['fail']} |"
        )


if __name__ == "__main__":
    main()
