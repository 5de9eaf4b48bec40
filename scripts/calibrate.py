# SPDX-License-Identifier: BSD-3-Clause
"""Calibrate the release verdict on null and leaky generators built from real data.

Every split cuts a real table into three disjoint parts: *real* (the training rows),
*holdout*, and a third part that plays the synthetic table. That third part is the
best any generator can do (new people from the same population), so its verdict must
never be ``fail``, and must be ``pass`` from 2,000 rows per table. Leaky generators are built from the same split by replacing synthetic rows
with copies of training rows:

* ``copies_5``: 5 % exact copies (must ``fail`` from 2,000 rows per table);
* ``copies_1``: 1 % exact copies (no target: on coarse tables 1 % copies change no
  one's odds materially; elsewhere they should read at least ``review``);
* ``noisy_30``: 30 % noisy copies — numeric noise of 5 % of the column's standard
  deviation, 10 % of categorical cells swapped for another value (must ``fail`` from 2,000
  rows per table);
* ``isolated_0.2``: 0.2 % (at least one) verbatim copies of the most isolated training
  people — isolation is the distance to the nearest other real person in the pooled
  training ∪ holdout rows (the mixed-type DCR distance of the per-person tests), and
  only records no other real person shares are copied (must ``fail``);
* ``isolated_near_0.5``: 0.5 % near copies of the most isolated training people, each
  numeric cell moved by 1 % of the column's standard deviation (up or down at random),
  categorical cells kept (at least ``review``).
* ``ordinary_8`` and ``ordinary_near_8``: verbatim and near copies of 8 *ordinary*
  training people with a record of their own (drawn at random outside the most
  isolated fifth): invisible to the holdout-controlled tests below about 20 copies,
  judged by the chance model of copied people (at least ``review``; ``ordinary_8``
  must ``fail`` under the strict policy, and the null must pass it). Every evaluation
  is also judged under the strict policy, printed beside the statistical verdict.

Splits are thirds (1/3 each), 60 / 20 / 20 (a holdout smaller than the training
table, as users usually have it) and, with ``--wide``, 3 : 1 : 3 (3,000 training, 1,000
holdout and 3,000 synthetic rows of 7,000). Datasets: Adult (``--adult DIR`` with
``adults_train_reconstructed.csv`` and ``adults_control.csv``, pooled) when given, and
generated ones: ``coarse`` (few categorical and small-integer columns, many
duplicate rows), ``continuous`` (correlated continuous columns with 5 % missing values),
``clinic`` (clinic-like admissions: ages, an admission date, a diagnosis code of 150
levels, stays and measurements), ``panel`` (2 to 6 yearly rows per person under a
``person_id`` column, often identical, coarse columns) and ``panel_rows`` (the same
panel without its ``person_id``, split by rows: a person's yearly rows on every side,
nothing naming them). A panel is split by person (all rows of a person on one
side), its ``person_id`` is declared an identifier, and its leaky generators copy
people — all the rows of randomly chosen training people (``copies_*``, ``noisy_30``)
or of the most isolated ones (``isolated_*``) — in place of whole synthetic people,
under new person ids.

Each dataset has ``--rows`` rows (Adult is subsampled; the generated ones are drawn at
that size; a panel keeps whole people). ``--rows``, ``--splits`` and ``--uneven`` take
one number for every dataset, ``name=number`` pairs, or both (``15000,panel=20000``).
Every split and every scenario draws from its own generator, seeded by ``--seed``, the
dataset's name, the split's number and the scenario's name: a run is deterministic, and
a run of fewer datasets or scenarios repeats the same evaluations as a larger one.

Usage::

    python scripts/calibrate.py --adult path/to/adults --rows 15000 --splits 7 --uneven 7
    python scripts/calibrate.py --quick      # a few minutes: 2 splits of each generated dataset

prints one line per evaluation (its verdict and the gating tests that did not pass),
then the verdict counts per dataset, split and scenario, the same counts side by side,
the mean excess and interval half-width of each gating test, the gating tests that did
not pass, and the targets the verdict missed.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthrisk import evaluate
from synthrisk.datasets.calibration import (
    clinic_data,
    coarse_data,
    continuous_data,
    panel_data,
)
from synthrisk.metrics import make_context
from synthrisk.metrics.membership.isolation import isolated_training_people
from synthrisk.schema.tables import prepare_tables
from synthrisk.verdict import Thresholds, judge

SCENARIOS = (
    "null",
    "copies_1",
    "copies_5",
    "noisy_30",
    "isolated_0.2",
    "isolated_near_0.5",
    "ordinary_8",
    "ordinary_near_8",
)
DATASETS = ("adult", "coarse", "continuous", "panel", "panel_rows", "clinic")
#: share of the synthetic rows each leaky scenario replaces
SHARES = {
    "copies_1": 0.01,
    "copies_5": 0.05,
    "noisy_30": 0.30,
    "isolated_0.2": 0.002,
    "isolated_near_0.5": 0.005,
}
#: people copied by the ``ordinary_*`` scenarios: 8 training people with a record of
#: their own, drawn at random outside the most isolated fifth (ordinary, not outliers)
ORDINARY = 8
#: the least each scenario must read under the strict policy (checked beside the
#: statistical verdict: the same evaluation judged again)
STRICT_TARGETS = {"null": "pass", "ordinary_8": "fail"}
#: the person column of each panel dataset (declared an identifier)
PERSON = {"panel": "person_id"}
#: the least each scenario must read (``pass``: the null must pass; it must never fail);
#: 1 % copies have none: on coarse tables they change no one's odds materially
TARGETS = {
    "null": "pass",
    "copies_5": "fail",
    "noisy_30": "fail",
    "isolated_0.2": "fail",
    "isolated_near_0.5": "review",
    "ordinary_8": "review",
    "ordinary_near_8": "review",
}
#: rows per table from which the targets hold (0: at every size)
TARGET_ROWS = {
    "null": 2000,
    "copies_5": 2000,
    "noisy_30": 2000,
    "isolated_0.2": 0,
    "isolated_near_0.5": 0,
    "ordinary_8": 0,
    "ordinary_near_8": 0,
}
LEVELS = {"pass": 0, "review": 1, "fail": 2}
QUICK = {
    "datasets": "coarse,continuous,panel",
    "rows": "6000",
    "splits": "1",
    "uneven": "1",
}
DEFAULTS = {
    "datasets": ",".join(DATASETS),
    "rows": "15000,panel=20000",
    "splits": "7",
    "uneven": "7",
}


def key(name: str) -> int:
    """A stable number for a name (part of a seed)."""
    return zlib.crc32(name.encode())


def per_dataset(text: str, *, option: str, wanted: list[str]) -> dict[str, int]:
    """``"6000"``, ``"coarse=6000,panel=20000"`` or ``"6000,panel=20000"`` per dataset."""
    out: dict[str, int] = {}
    default: int | None = None
    for item in filter(None, text.split(",")):
        name, sep, value = item.partition("=")
        try:
            if sep:
                out[name.strip()] = int(value)
            else:
                default = int(name)
        except ValueError:
            msg = f"`{option}` must be a number or name=number pairs; got {text!r}."
            raise SystemExit(msg) from None
    unknown = sorted(set(out) - set(DATASETS))
    if unknown:
        msg = f"`{option}` names unknown datasets {unknown}; datasets are {list(DATASETS)}."
        raise SystemExit(msg)
    for name in wanted:
        if name not in out:
            if default is None:
                msg = f"`{option}` gives no number for dataset {name!r}."
                raise SystemExit(msg)
            out[name] = default
    return out


def adult_data(folder: Path) -> pd.DataFrame:
    """Adult (UCI), the 48,790 de-duplicated rows of Anonymeter's example split, pooled."""
    frames = [
        pd.read_csv(folder / name)
        for name in ("adults_train_reconstructed.csv", "adults_control.csv")
    ]
    return pd.concat(frames, ignore_index=True)


def split(
    frame: pd.DataFrame,
    shares: tuple[float, float],
    rng: np.random.Generator,
    *,
    person: str | None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Real, holdout and synthetic parts; by person when ``person`` names a column."""
    units = frame[person].unique() if person else np.arange(len(frame))
    order = rng.permutation(len(units))
    n_real = round(shares[0] * len(units))
    n_hold = round(shares[1] * len(units))
    parts = (order[:n_real], order[n_real : n_real + n_hold], order[n_real + n_hold :])
    if person is None:
        real, holdout, synthetic = (
            frame.iloc[part].reset_index(drop=True) for part in parts
        )
    else:
        real, holdout, synthetic = (
            frame[frame[person].isin(units[part])].reset_index(drop=True)
            for part in parts
        )
    return real, holdout, synthetic


def isolated_people(
    real: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    person: str | None,
    metadata: dict[str, Any] | None,
) -> list[np.ndarray]:
    """Training people no other real person shares a record with, most isolated first.

    Each person is the array of their rows in ``real``. Isolation is that of the
    per-person tests and the self-test
    (:func:`synthrisk.metrics.membership.isolation.isolated_training_people`).
    """
    tables = prepare_tables(real, synthetic, holdout, metadata=metadata)
    context = make_context(
        "identification", seed=0, working_memory=None, backend=None, progress=False
    )
    ranked = isolated_training_people(tables, person=person, context=context)
    if person is None:
        return [np.array([row]) for row in ranked.rows]
    codes = pd.factorize(real[person])[0]
    return [np.flatnonzero(codes == codes[row]) for row in ranked.rows]


def people_rows(frame: pd.DataFrame, person: str | None) -> list[np.ndarray]:
    """The rows of each person of ``frame`` (each row its own person without a key)."""
    if person is None:
        return [np.array([i]) for i in range(len(frame))]
    codes = pd.factorize(frame[person])[0]
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return np.split(order, bounds)


def take_people(
    people: list[np.ndarray], order: np.ndarray, n_rows: int
) -> list[np.ndarray]:
    """Whole people in ``order`` until they hold ``n_rows`` rows (at least one person)."""
    taken: list[np.ndarray] = []
    total = 0
    for i in order:
        if taken and total >= n_rows:
            break
        taken.append(people[i])
        total += len(people[i])
    return taken


def noisy_copies(
    rows: pd.DataFrame,
    pool: pd.DataFrame,
    rng: np.random.Generator,
    *,
    person: str | None,
) -> pd.DataFrame:
    """Numeric noise of 5 % of each column's SD; 10 % of categorical and boolean cells swapped.

    Dates are kept (their own kind; a copy's date is as telling as its other cells).
    """
    out = rows.copy()
    for column in out.columns:
        if column == person or pd.api.types.is_datetime64_any_dtype(out[column]):
            continue
        if pd.api.types.is_numeric_dtype(
            out[column]
        ) and not pd.api.types.is_bool_dtype(out[column]):
            sd = float(pool[column].std())
            out[column] = out[column] + rng.normal(0, 0.05 * sd, len(out))
            if pd.api.types.is_integer_dtype(rows[column]):
                out[column] = out[column].round().astype(rows[column].dtype)
        else:
            values = pool[column].dropna().unique()
            swap = rng.random(len(out)) < 0.10
            out.loc[swap, column] = rng.choice(values, int(swap.sum()))
    return out


def near_copies(
    rows: pd.DataFrame,
    pool: pd.DataFrame,
    rng: np.random.Generator,
    *,
    person: str | None,
) -> pd.DataFrame:
    """Every numeric cell moved up or down by 1 % of its column's SD; others kept."""
    out = rows.copy()
    for column in out.columns:
        if (
            column == person
            or not pd.api.types.is_numeric_dtype(out[column])
            or pd.api.types.is_bool_dtype(out[column])
        ):
            continue  # categorical and boolean cells are kept
        sd = float(pool[column].std())
        sign = rng.choice([-1.0, 1.0], len(out))
        out[column] = out[column].astype(float) + sign * 0.01 * sd
    return out


def leaky(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    scenario: str,
    rng: np.random.Generator,
    *,
    person: str | None,
    isolated: list[np.ndarray] | None,
) -> pd.DataFrame:
    """The synthetic part with a share of its rows replaced by copies of training people."""
    if scenario == "null":
        return synthetic
    n_target = round(SHARES.get(scenario, 0.0) * len(synthetic))
    if scenario.startswith("ordinary"):
        assert isolated is not None
        ordinary = isolated[len(isolated) // 5 :]
        if len(ordinary) < ORDINARY:
            msg = "fewer than 8 ordinary training people have a record of their own."
            raise SystemExit(msg)
        picks = rng.choice(len(ordinary), ORDINARY, replace=False)
        chosen = [ordinary[i] for i in picks]
    elif scenario.startswith("isolated"):
        assert isolated is not None
        if not isolated:
            msg = "no training person has a record of their own: nothing to copy."
            raise SystemExit(msg)
        chosen = take_people(isolated, np.arange(len(isolated)), max(1, n_target))
    else:
        people = people_rows(real, person)
        chosen = take_people(people, rng.permutation(len(people)), n_target)
    sources = real.iloc[np.concatenate(chosen)].reset_index(drop=True)
    if scenario == "noisy_30":
        sources = noisy_copies(sources, real, rng, person=person)
    elif scenario.startswith(("isolated_near", "ordinary_near")):
        sources = near_copies(sources, real, rng, person=person)
    if person is not None:
        # a generator names its own people: the copies get new ids
        first = int(max(real[person].max(), synthetic[person].max())) + 1
        sources[person] = first + pd.factorize(sources[person])[0]
    # make room: whole synthetic people, in random order, as many rows as were added
    own = people_rows(synthetic, person)
    drop = take_people(own, rng.permutation(len(own)), len(sources))
    keep = synthetic.drop(np.concatenate(drop))
    mixed = pd.concat([keep, sources], ignore_index=True)
    return mixed.iloc[rng.permutation(len(mixed))].reset_index(drop=True)


def missed_targets(
    runs: list[tuple[str, str, str, int, str, list[str]]],
    *,
    targets: dict[str, str] | None = None,
) -> list[str]:
    """Lines naming each (dataset, split, scenario) whose verdicts missed the target."""
    targets = TARGETS if targets is None else targets
    grouped: dict[tuple[str, str, str], list[tuple[int, str, list[str]]]] = (
        collections.defaultdict(list)
    )
    for name, layout, scenario, rows, overall, bad in runs:
        grouped[(name, layout, scenario)].append((rows, overall, bad))
    lines = []
    for (name, layout, scenario), items in grouped.items():
        target = targets.get(scenario)
        if target is None:
            continue
        misses = []
        for rows, overall, bad in items:
            if scenario == "null":
                missed = overall == "fail" or (
                    rows >= TARGET_ROWS.get(scenario, 0) and overall != "pass"
                )
            else:
                missed = (
                    rows >= TARGET_ROWS.get(scenario, 0)
                    and LEVELS[overall] < LEVELS[target]
                )
            if missed:
                misses.append(f"{overall} ({' '.join(bad) or 'no gating test'})")
        if misses:
            lines.append(
                f"  {name} {layout} {scenario} (target {target}): {len(misses)} of "
                f"{len(items)} runs: " + "; ".join(misses)
            )
    return lines


def print_levels(
    counts: dict[tuple[str, str, str], collections.Counter[str]],
    sizes: dict[tuple[str, str], int],
    scenarios: list[str],
) -> None:
    """A markdown table of pass / review / fail per dataset, split and scenario."""
    print("| dataset | rows | split | " + " | ".join(scenarios) + " |")
    print("|---|---:|---|" + "---|" * len(scenarios))
    for (name, layout), smallest in sizes.items():
        cells = []
        for scenario in scenarios:
            c = counts[(name, layout, scenario)]
            cells.append(f"{c['pass']} / {c['review']} / {c['fail']}")
        print(f"| {name} | {smallest:,} | {layout} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--adult", type=Path, default=None, help="folder with the Adult CSVs"
    )
    parser.add_argument(
        "--rows",
        default=None,
        help=f"rows per dataset before splitting: N, name=N pairs, or both (default {DEFAULTS['rows']})",
    )
    parser.add_argument(
        "--splits",
        default=None,
        help=f"thirds splits per dataset, as --rows (default {DEFAULTS['splits']})",
    )
    parser.add_argument(
        "--uneven",
        default=None,
        help=f"60/20/20 splits per dataset, as --rows (default {DEFAULTS['uneven']})",
    )
    parser.add_argument(
        "--wide",
        default="0",
        help=(
            "3:1:3 splits per dataset (3,000 training, 1,000 holdout and 3,000 synthetic rows "
            "of 7,000), as --rows (default 0)"
        ),
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument(
        "--datasets",
        default=None,
        help=f"which datasets to run (default {DEFAULTS['datasets']})",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=(
            "a run of a few minutes: coarse, continuous and panel at 6,000 rows, one split "
            "of each layout, every scenario (options given explicitly still apply)"
        ),
    )
    args = parser.parse_args(argv)
    preset = QUICK if args.quick else DEFAULTS
    for option in ("rows", "splits", "uneven", "datasets"):
        if getattr(args, option) is None:
            setattr(args, option, preset[option])
    wanted = [d for d in DATASETS if d in set(args.datasets.split(","))]
    rows = per_dataset(args.rows, option="--rows", wanted=wanted)
    n_thirds = per_dataset(args.splits, option="--splits", wanted=wanted)
    n_uneven = per_dataset(args.uneven, option="--uneven", wanted=wanted)
    n_wide = per_dataset(args.wide, option="--wide", wanted=wanted)
    scenarios = [s for s in args.scenarios.split(",") if s]
    unknown = sorted(set(scenarios) - set(SCENARIOS))
    if unknown:
        msg = f"unknown scenarios {unknown}; scenarios are {list(SCENARIOS)}."
        raise SystemExit(msg)
    datasets: dict[str, pd.DataFrame] = {}
    for name in wanted:
        rng = np.random.default_rng([args.seed, key(name)])
        if name == "adult":
            if args.adult is None:
                continue
            adult = adult_data(args.adult)
            datasets[name] = adult.iloc[
                rng.choice(len(adult), min(rows[name], len(adult)), replace=False)
            ]
        else:
            make = {
                "coarse": coarse_data,
                "continuous": continuous_data,
                "panel": panel_data,
                "panel_rows": panel_data,
                "clinic": clinic_data,
            }[name]
            datasets[name] = make(rows[name], rng)
            if name == "panel_rows":
                # a panel split by rows, its person key dropped: a person's yearly rows
                # land on every side, and nothing names them
                datasets[name] = datasets[name].drop(columns="person_id")
    counts: dict[tuple[str, str, str], collections.Counter[str]] = (
        collections.defaultdict(collections.Counter)
    )
    sizes: dict[tuple[str, str], int] = {}
    worst: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    effects: dict[tuple[str, str, str, str], list[tuple[float, float]]] = (
        collections.defaultdict(list)
    )
    runs: list[tuple[str, str, str, int, str, list[str]]] = []
    strict_counts: dict[tuple[str, str, str], collections.Counter[str]] = (
        collections.defaultdict(collections.Counter)
    )
    strict_runs: list[tuple[str, str, str, int, str, list[str]]] = []
    for name, frame in datasets.items():
        frame = frame.reset_index(drop=True)
        person = PERSON.get(name)
        metadata = {"columns": {person: {"sdtype": "id"}}} if person else None
        layouts = (
            [("thirds", (1 / 3, 1 / 3))] * n_thirds[name]
            + [("60/20/20", (0.6, 0.2))] * n_uneven[name]
            + [("3:1:3", (3 / 7, 1 / 7))] * n_wide[name]
        )
        for i, (layout, shares) in enumerate(layouts):
            split_rng = np.random.default_rng([args.seed, key(name), i])
            real, holdout, third = split(frame, shares, split_rng, person=person)
            smallest = min(len(real), len(holdout), len(third))
            sizes[(name, layout)] = smallest
            isolated = None
            if any(s.startswith(("isolated", "ordinary")) for s in scenarios):
                isolated = isolated_people(
                    real, holdout, third, person=person, metadata=metadata
                )
            for scenario in scenarios:
                rng = np.random.default_rng([args.seed, key(name), i, key(scenario)])
                synthetic = leaky(
                    real, third, scenario, rng, person=person, isolated=isolated
                )
                start = time.perf_counter()
                report = evaluate(real, synthetic, holdout, metadata=metadata, seed=i)
                seconds = time.perf_counter() - start
                verdict = report.verdict
                assert verdict is not None
                strict = judge(report, Thresholds(policy="strict"))
                strict_counts[(name, layout, scenario)][strict.overall] += 1
                strict_runs.append(
                    (name, layout, scenario, smallest, strict.overall, [])
                )
                counts[(name, layout, scenario)][verdict.overall] += 1
                counts[("all", "all", scenario)][verdict.overall] += 1
                bad = [
                    f"{v.metric}={v.level}"
                    for v in verdict.metrics
                    if v.gating and v.level != "pass"
                ]
                worst[(name, scenario)].extend(bad)
                runs.append((name, layout, scenario, smallest, verdict.overall, bad))
                for v in verdict.metrics:
                    if v.gating and v.effect is not None and v.ci is not None:
                        half = (v.ci[1] - v.ci[0]) / 2
                        effects[(name, layout, scenario, v.metric)].append(
                            (v.effect, half)
                        )
                finding = next(
                    (f.level for f in verdict.findings if f.kind == "copied_people"),
                    "-",
                )
                # the other findings (replayed identifiers, rare values, …) and the
                # caveats that cap the verdict, where they decide it
                others = [
                    f"{f.kind}={f.level}"
                    for f in verdict.findings
                    if f.kind != "copied_people" and f.level != "pass"
                ]
                capped = [
                    c.split(":")[0]
                    for c in verdict.caveats
                    if verdict.overall != "pass" and not bad and c.startswith("inputs")
                ]
                print(
                    f"{name:10s} {layout:8s} split {i} {scenario:17s} {verdict.overall:6s} "
                    f"strict {strict.overall:6s} {seconds:6.1f}s copied={finding} "
                    + " ".join(bad + others + capped),
                    flush=True,
                )
    print()
    print("| dataset | split | scenario | runs | pass | review | fail |")
    print("|---|---|---|---|---|---|---|")
    # the totals over every dataset last
    for (name, layout, scenario), c in sorted(
        counts.items(), key=lambda item: item[0][0] == "all"
    ):
        total = sum(c.values())
        print(
            f"| {name} | {layout} | {scenario} | {total} | {c['pass']} | {c['review']} | {c['fail']} |"
        )
    print()
    print("pass / review / fail per scenario (rows: of the smallest table of a split):")
    print_levels(counts, sizes, scenarios)
    print()
    print("under the strict policy (the same evaluations judged again):")
    print_levels(strict_counts, sizes, scenarios)
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
    print()
    missed = missed_targets(runs)
    print(
        "targets missed (null: never fail, pass from 2,000 rows per table; isolated_0.2: "
        "fail; isolated_near_0.5: at least review; copies_5 and noisy_30: fail from 2,000 "
        "rows per table):"
    )
    print("\n".join(missed) if missed else "  none")
    missed_strict = missed_targets(strict_runs, targets=STRICT_TARGETS)
    print("targets missed under the strict policy (null: pass; ordinary_8: fail):")
    print("\n".join(missed_strict) if missed_strict else "  none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
