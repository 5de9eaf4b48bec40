# SPDX-License-Identifier: BSD-3-Clause
"""Calibrate the release verdict of ``evaluate_tables`` on null and copying generators.

For each dataset of :mod:`synthrisk.datasets.relational` and each seed, one population
of ``--people`` people is drawn and 20 % of them held out:

* ``bank``: customers → accounts → transactions;
* ``clinic``: patients → visits ordered by date;
* ``hospital``: patients (with a date of birth) → admissions (by date) → procedures, and
  patients → prescriptions; heavy-tailed histories, codes of hundreds of levels;
* ``claims``: insurance claims as one SDV sequential table (several claim lines a day).

The synthetic versions are

* ``null`` — new people from the same model (target: pass);
* ``whole_copies`` — ``--copy-share`` of the synthetic people replaced by training
  people with all their rows (target: fail);
* ``child_copies`` — ``--copy-share`` of the synthetic people given a training person's
  rows below the root, under their own new root row (target: fail);
* ``one_table_copies`` (hospital) — ``--copy-share`` of the synthetic people given a
  training person's prescriptions, their other tables their own (target: fail);
* ``shuffled_sequences`` (clinic) — copies of training patients whose visits keep their
  dates but have their other values shuffled among the visits (target: fail);
* ``long_rare_copies`` (hospital, claims) — whole copies of the 0.5 % of training people
  with the longest, rarest histories (target: at least review).

Each run is the default ``evaluate_tables`` a user gets — person level, linkage and each
table's own metrics, a failing table making the release at least review; ``--person-level``
skips the per-table metrics (``table_metrics=[]``), as this script did before. Run from
the repository root::

    python scripts/calibrate_relational.py --datasets hospital,claims --people 3000 --seeds 5
    python scripts/calibrate_relational.py --datasets hospital --scenarios null --seeds 10

Detection needs enough copies: with a 20 % holdout and no holdout person linked, the
linkage's exact test reaches its level 0.01 from about 21 copied people (0.8^21 = 0.009;
a few more where the attacks, combined by Westfall–Young min-p, disagree), so 1 % copies
need a few thousand people.
"""

from __future__ import annotations

import argparse
import collections
import os
import time
import warnings
from collections.abc import Callable

import synthrisk
from synthrisk.datasets.relational import (
    RelationalData,
    load_bank,
    load_claims,
    load_clinic,
    load_hospital,
)

LOADERS: dict[str, Callable[..., RelationalData]] = {
    "bank": load_bank,
    "clinic": load_clinic,
    "hospital": load_hospital,
    "claims": load_claims,
}
TARGET = {
    "null": "pass",
    "whole_copies": "fail",
    "child_copies": "fail",
    "one_table_copies": "fail",
    "shuffled_sequences": "fail",
    "long_rare_copies": "review or fail",
}
_RANK = {"pass": 0, "review": 1, "fail": 2}


def met(scenario: str, verdict: str) -> bool:
    """Whether a run's verdict meets its scenario's target."""
    if scenario == "null":
        return verdict == "pass"
    if scenario == "long_rare_copies":
        return _RANK[verdict] >= 1
    return verdict == "fail"


def main() -> None:
    """Run every dataset × seed × scenario; print each run and the pass/review/fail table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=3000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--copy-share", type=float, default=0.01)
    parser.add_argument("--datasets", default="bank,clinic,hospital,claims")
    parser.add_argument(
        "--scenarios",
        default=None,
        help="comma-separated (default: all of a dataset's)",
    )
    parser.add_argument(
        "--person-level",
        action="store_true",
        help="skip the per-table metrics (table_metrics=[]): person level and linkage only",
    )
    args = parser.parse_args()
    wanted = None if args.scenarios is None else set(args.scenarios.split(","))
    counts: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    print(
        "dataset | seed | scenario | verdict | person level | linkage (p) | "
        "tables failing | worst attack"
    )
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    for dataset in args.datasets.split(","):
        loader = LOADERS[dataset]
        for seed in seeds:
            data = loader(args.people, copy_share=args.copy_share, seed=seed)
            for scenario in data.synthetic:
                if wanted is not None and scenario not in wanted:
                    continue
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    report = synthrisk.evaluate_tables(
                        data.real,
                        data.synthetic[scenario],
                        data.holdout,
                        metadata=data.metadata,
                        seed=seed,
                        table_metrics=[] if args.person_level else None,
                    )
                seconds = time.perf_counter() - start
                counts[dataset, scenario][report.verdict] += 1
                people = report.people.verdict
                worst = min(report.linkage.attacks, key=lambda a: a.p_value)
                failing = [
                    name for name, v in report.table_verdicts.items() if v == "fail"
                ]
                print(
                    f"{dataset} | {seed} | {scenario} | {report.verdict}"
                    f"{'' if met(scenario, report.verdict) else ' (MISSED)'} | "
                    f"{people.overall if people else 'review'} | "
                    f"{report.linkage.level} ({report.linkage.p_value:.2g}) | "
                    f"{','.join(failing) or '-'} | "
                    f"{worst.label} {worst.linked_training}/{worst.n_training} vs "
                    f"{worst.linked_holdout}/{worst.n_holdout} ({seconds:.1f} s, "
                    f"load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
    n_copies = round(args.copy_share * round(args.people * 0.8))
    mode = (
        "person level and linkage only (--person-level)"
        if args.person_level
        else "default evaluate_tables (per-table metrics on)"
    )
    print(
        f"\n{args.people} people (20 % held out), {args.copy_share:.0%} of the synthetic "
        f"people copied ({n_copies}), seeds {seeds.start} to {seeds.stop - 1}; {mode}\n"
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
