# SPDX-License-Identifier: BSD-3-Clause
"""Related tables at scale: ``evaluate_tables`` with its defaults on 100,000 people.

Usage::

    python benchmarks/bench_relational.py                      # 100,000 people, 10 rows each
    python benchmarks/bench_relational.py --people 20000 --profile out.prof
    python benchmarks/bench_relational.py --backend torch      # neighbour searches on a GPU
    python benchmarks/bench_relational.py --parquet --workers 16   # Parquet datasets, Dask
    python benchmarks/bench_relational.py --layout hospital    # four tables, ~70 features

A seeded bank-like population (as :func:`synthrisk.datasets.relational.load_bank`, at
scale): ``customers`` (age, region, segment, income) → ``transactions``, ``--rows``
(10) per customer, a sequence ordered by date (amount, channel, kind). ``--layout hospital``: ``patients``
(date of birth, sex, ethnicity, insurance, marital status) → ``admissions`` (a sequence
by admission date, Zipf-distributed counts of 1 to 60 per patient; length of stay,
charges, type, discharge, a diagnosis of 500 levels) → ``procedures`` (Poisson 1.5 per
admission; a code of 800 levels, duration, priority), and ``patients`` →
``prescriptions`` (negative binomial, mean ``--rows / 2``; a drug of 300 levels, dose,
days of supply, route): 68 person features. 20 % of the
people are held out; the synthetic tables are as many new people from the same model
(a null generator). The whole default assessment runs — person features, the
person-level metrics (``PERSON_METRICS``), the three linkage attacks and the per-table
metrics (``TABLE_METRICS``) — after a small warm-up run that compiles the numba kernels.
Prints the wall and CPU seconds, the load average before and after, the verdict, and
(with ``--profile``) writes cProfile statistics and prints the 25 largest cumulative
entries.

``--backend`` chooses the neighbour backend (``torch`` runs the searches on a CUDA device
when one is present). ``--parquet`` writes the three sides as folders of Parquet datasets
(each table split into part files, as Spark or Dask write them) and reads them back
with :func:`synthrisk.relational.read_tables` inside the timed run. ``--workers N``
starts a Dask ``LocalCluster`` of ``N`` single-threaded worker processes and runs the
metrics on it (``client=``); its start-up is not timed.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import tempfile
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

REGIONS = ["north", "south", "east", "west", "centre", "coast"]
CHANNELS = ["card", "online", "atm", "transfer"]
KINDS = ["payment", "deposit", "withdrawal"]

METADATA: dict[str, Any] = {
    "METADATA_SPEC_VERSION": "MULTI_TABLE_V1",
    "tables": {
        "customers": {
            "primary_key": "customer_id",
            "columns": {
                "customer_id": {"sdtype": "id"},
                "age": {"sdtype": "numerical"},
                "region": {"sdtype": "categorical"},
                "segment": {"sdtype": "categorical"},
                "income": {"sdtype": "numerical"},
            },
        },
        "transactions": {
            "primary_key": "transaction_id",
            "sequence_index": "date",
            "columns": {
                "transaction_id": {"sdtype": "id"},
                "customer_id": {"sdtype": "id"},
                "date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
                "amount": {"sdtype": "numerical"},
                "channel": {"sdtype": "categorical"},
                "kind": {"sdtype": "categorical"},
            },
        },
    },
    "relationships": [
        {
            "parent_table_name": "customers",
            "parent_primary_key": "customer_id",
            "child_table_name": "transactions",
            "child_foreign_key": "customer_id",
        }
    ],
}


ETHNICITIES = ["a", "b", "c", "d", "e", "f"]
INSURANCES = ["public", "private", "self", "other"]
MARITAL = ["single", "married", "divorced", "widowed", "unknown"]
ADMISSION_TYPES = ["emergency", "elective", "urgent", "transfer"]
DISCHARGES = ["home", "home care", "rehab", "nursing", "died"]
ROUTES = ["oral", "iv", "topical"]
PRIORITIES = ["routine", "urgent", "emergency"]

HOSPITAL: dict[str, Any] = {
    "METADATA_SPEC_VERSION": "MULTI_TABLE_V1",
    "tables": {
        "patients": {
            "primary_key": "patient_id",
            "columns": {
                "patient_id": {"sdtype": "id"},
                "date_of_birth": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
                "sex": {"sdtype": "categorical"},
                "ethnicity": {"sdtype": "categorical"},
                "insurance": {"sdtype": "categorical"},
                "marital": {"sdtype": "categorical"},
            },
        },
        "admissions": {
            "primary_key": "admission_id",
            "sequence_index": "admit_date",
            "columns": {
                "admission_id": {"sdtype": "id"},
                "patient_id": {"sdtype": "id"},
                "admit_date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
                "los_days": {"sdtype": "numerical"},
                "charges": {"sdtype": "numerical"},
                "admission_type": {"sdtype": "categorical"},
                "discharge": {"sdtype": "categorical"},
                "diagnosis": {"sdtype": "categorical"},
            },
        },
        "prescriptions": {
            "primary_key": "prescription_id",
            "columns": {
                "prescription_id": {"sdtype": "id"},
                "patient_id": {"sdtype": "id"},
                "drug": {"sdtype": "categorical"},
                "dose": {"sdtype": "numerical"},
                "days_supply": {"sdtype": "numerical"},
                "route": {"sdtype": "categorical"},
            },
        },
        "procedures": {
            "primary_key": "procedure_id",
            "columns": {
                "procedure_id": {"sdtype": "id"},
                "admission_id": {"sdtype": "id"},
                "procedure_code": {"sdtype": "categorical"},
                "duration_min": {"sdtype": "numerical"},
                "priority": {"sdtype": "categorical"},
            },
        },
    },
    "relationships": [
        {
            "parent_table_name": "patients",
            "parent_primary_key": "patient_id",
            "child_table_name": "admissions",
            "child_foreign_key": "patient_id",
        },
        {
            "parent_table_name": "patients",
            "parent_primary_key": "patient_id",
            "child_table_name": "prescriptions",
            "child_foreign_key": "patient_id",
        },
        {
            "parent_table_name": "admissions",
            "parent_primary_key": "admission_id",
            "child_table_name": "procedures",
            "child_foreign_key": "admission_id",
        },
    ],
}


def _codes(
    prefix: str, n_levels: int, size: int, rng: np.random.Generator
) -> np.ndarray:
    """``size`` codes of ``n_levels`` levels with Zipf-like frequencies (rare codes)."""
    weights = 1.0 / np.arange(1, n_levels + 1) ** 1.1
    picked = rng.choice(n_levels, size, p=weights / weights.sum())
    return np.char.add(prefix, picked.astype(str)).astype(object)


def patients(
    n: int, rows: int, rng: np.random.Generator, prefix: str
) -> dict[str, pd.DataFrame]:
    """``n`` patients: heavy-tailed admissions (with procedures) and prescriptions.

    Admissions per patient are Zipf-distributed (1 to 60, mean about 2.8), each with a
    Poisson number of procedures (mean 1.5); prescriptions per patient are negative
    binomial (mean about ``rows / 2``). Diagnoses (500 levels), drugs (300) and
    procedure codes (800) have Zipf-like frequencies.
    """
    ids = np.char.add(prefix + "p", np.arange(n).astype(str)).astype(object)
    birth = rng.integers(0, 90 * 365, n)
    root = pd.DataFrame(
        {
            "patient_id": ids,
            "date_of_birth": np.datetime64("1930-01-01")
            + birth.astype("timedelta64[D]"),
            "sex": rng.choice(["f", "m"], n),
            "ethnicity": rng.choice(ETHNICITIES, n, p=[0.5, 0.2, 0.1, 0.1, 0.05, 0.05]),
            "insurance": rng.choice(INSURANCES, n, p=[0.5, 0.35, 0.1, 0.05]),
            "marital": rng.choice(MARITAL, n),
        }
    )
    n_adm = np.minimum(rng.zipf(2.0, n), 60)
    m = int(n_adm.sum())
    owner = np.repeat(np.arange(n), n_adm)
    start = rng.integers(0, 3000, n)[owner]
    gaps = rng.integers(1, 400, m)
    first = np.r_[0, np.cumsum(n_adm)[:-1]]
    within = np.cumsum(gaps) - np.repeat(np.cumsum(gaps)[first] - gaps[first], n_adm)
    adm_ids = np.char.add(prefix + "a", np.arange(m).astype(str)).astype(object)
    los = np.round(rng.lognormal(1.2, 0.8, m), 1)
    admissions = pd.DataFrame(
        {
            "admission_id": adm_ids,
            "patient_id": ids[owner],
            "admit_date": np.datetime64("2010-01-01")
            + (start + within).astype("timedelta64[D]"),
            "los_days": los,
            "charges": np.round(los * rng.lognormal(7.5, 0.5, m), 2),
            "admission_type": rng.choice(ADMISSION_TYPES, m, p=[0.5, 0.3, 0.15, 0.05]),
            "discharge": rng.choice(DISCHARGES, m, p=[0.6, 0.15, 0.1, 0.1, 0.05]),
            "diagnosis": _codes("D", 500, m, rng),
        }
    )
    n_proc = rng.poisson(1.5, m)
    q = int(n_proc.sum())
    procedures = pd.DataFrame(
        {
            "procedure_id": np.char.add(prefix + "x", np.arange(q).astype(str)).astype(
                object
            ),
            "admission_id": adm_ids[np.repeat(np.arange(m), n_proc)],
            "procedure_code": _codes("P", 800, q, rng),
            "duration_min": np.round(rng.lognormal(3.5, 0.7, q)),
            "priority": rng.choice(PRIORITIES, q, p=[0.7, 0.2, 0.1]),
        }
    )
    n_rx = rng.negative_binomial(1.0, 1.0 / (1.0 + rows / 2), n)
    r = int(n_rx.sum())
    prescriptions = pd.DataFrame(
        {
            "prescription_id": np.char.add(
                prefix + "r", np.arange(r).astype(str)
            ).astype(object),
            "patient_id": ids[np.repeat(np.arange(n), n_rx)],
            "drug": _codes("R", 300, r, rng),
            "dose": np.round(rng.lognormal(3.0, 1.0, r), 1),
            "days_supply": rng.choice([7, 14, 30, 60, 90], r),
            "route": rng.choice(ROUTES, r, p=[0.7, 0.2, 0.1]),
        }
    )
    return {
        "patients": root,
        "admissions": admissions,
        "prescriptions": prescriptions,
        "procedures": procedures,
    }


LAYOUTS = {"bank": (METADATA, "customer_id"), "hospital": (HOSPITAL, "patient_id")}


def people(
    n: int, rows: int, rng: np.random.Generator, prefix: str
) -> dict[str, pd.DataFrame]:
    """``n`` customers with ``rows`` transactions each (seeded, vectorised)."""
    ids = np.char.add(prefix + "c", np.arange(n).astype(str)).astype(object)
    age = rng.integers(18, 90, n)
    income = np.round(rng.lognormal(10.3, 0.6, n) * (1 + (age - 18) / 120), 2)
    customers = pd.DataFrame(
        {
            "customer_id": ids,
            "age": age,
            "region": rng.choice(REGIONS, n),
            "segment": rng.choice(
                ["retail", "premium", "business"], n, p=[0.7, 0.2, 0.1]
            ),
            "income": income,
        }
    )
    m = n * rows
    owner = np.repeat(np.arange(n), rows)
    start = rng.integers(0, 2500, n)[owner]
    day = start + np.cumsum(rng.integers(1, 30, (n, rows)), axis=1).ravel()
    transactions = pd.DataFrame(
        {
            "transaction_id": np.char.add(
                prefix + "t", np.arange(m).astype(str)
            ).astype(object),
            "customer_id": ids[owner],
            "date": np.datetime64("2015-01-01") + day.astype("timedelta64[D]"),
            "amount": np.round(rng.lognormal(3.5, 1.0, m), 2),
            "channel": rng.choice(CHANNELS, m),
            "kind": rng.choice(KINDS, m),
        }
    )
    return {"customers": customers, "transactions": transactions}


def split(
    tables: dict[str, pd.DataFrame], n_holdout: int, key: str = "customer_id"
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """The last ``n_holdout`` people (root rows), with all their rows, as the holdout."""
    root = next(iter(tables))
    ids = tables[root][key].to_numpy()
    held = set(ids[len(ids) - n_holdout :])
    if "procedures" in tables:  # under admissions: held with their admission
        admissions = tables["admissions"]
        held_adm = set(
            admissions["admission_id"][admissions[key].isin(held)].to_numpy()
        )
    out: tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]] = ({}, {})
    for name, frame in tables.items():
        if key in frame.columns:
            mask = frame[key].isin(held).to_numpy()
        else:
            mask = frame["admission_id"].isin(held_adm).to_numpy()
        out[0][name] = frame[~mask].reset_index(drop=True)
        out[1][name] = frame[mask].reset_index(drop=True)
    return out


def write_parquet(tables: dict[str, pd.DataFrame], folder: str, parts: int = 8) -> None:
    """Each table as a Parquet dataset: ``folder/<table>/part-<i>.parquet``."""
    for name, frame in tables.items():
        os.makedirs(os.path.join(folder, name))
        for i, chunk in enumerate(np.array_split(np.arange(len(frame)), parts)):
            frame.iloc[chunk].to_parquet(
                os.path.join(folder, name, f"part-{i}.parquet"), index=False
            )


#: steps of ``evaluate_tables`` timed apart (names in ``synthrisk.relational.evaluate``)
STEPS = (
    "check_tables",
    "normalise_tables",
    "person_of_rows",
    "PersonFeatures",
    "RowRarity",
    "linkage_attack",
)


def time_steps() -> dict[str, float]:
    """Wrap the steps of ``evaluate_tables`` so that each one's wall seconds add up here."""
    import synthrisk.relational.evaluate as module

    seconds: dict[str, float] = {}

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start

        return wrapper

    for name in STEPS:
        target = getattr(module, name)
        if isinstance(target, type):  # fit, transform and row_sets of the class
            for method in ("fit", "transform", "row_sets"):
                if hasattr(target, method):
                    raw = target.__dict__[method]
                    fn = raw.__func__ if isinstance(raw, classmethod) else raw
                    wrapped = timed(f"{name}.{method}", fn)
                    setattr(
                        target,
                        method,
                        classmethod(wrapped)
                        if isinstance(raw, classmethod)
                        else wrapped,
                    )
        else:
            setattr(module, name, timed(name, target))
    return seconds


def reap_workers() -> None:
    """Wait for the metrics' worker processes when they are ended.

    ``synthrisk._workers`` ends its workers without waiting for them; a process not
    waited for is missing from ``RUSAGE_CHILDREN``. Even so the printed CPU misses most
    of the workers' CPU (benchmarks/RESULTS.md): read it as a lower bound.
    """
    import synthrisk._workers as workers

    stop = workers._stop

    def stop_and_wait(executor: Any) -> None:
        processes = list((getattr(executor, "_processes", None) or {}).values())
        stop(executor)
        for process in processes:
            process.join(timeout=30)

    workers._stop = stop_and_wait


def main(argv: list[str] | None = None) -> int:
    """Time ``evaluate_tables`` with its defaults; optionally profile it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=100_000)
    parser.add_argument(
        "--rows",
        type=int,
        default=10,
        help="child rows per person (hospital: twice the mean prescriptions)",
    )
    parser.add_argument(
        "--layout",
        choices=sorted(LAYOUTS),
        default="bank",
        help="bank: customers -> transactions; hospital: patients -> admissions "
        "(-> procedures), prescriptions",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", metavar="PATH", help="write cProfile stats here")
    parser.add_argument("--json", metavar="PATH", help="write the report's JSON here")
    parser.add_argument(
        "--backend", default=None, help="neighbour backend (torch: GPU)"
    )
    parser.add_argument(
        "--parquet", action="store_true", help="read the sides from Parquet datasets"
    )
    parser.add_argument(
        "--workers", type=int, default=0, help="Dask LocalCluster of this many workers"
    )
    args = parser.parse_args(argv)
    from synthrisk import evaluate_tables
    from synthrisk.relational import read_tables

    metadata, key = LAYOUTS[args.layout]
    make = patients if args.layout == "hospital" else people
    rng = np.random.default_rng(args.seed)
    population = make(args.people, args.rows, rng, "")
    n_holdout = round(0.2 * args.people)
    real, holdout = split(population, n_holdout, key)
    synthetic = make(args.people - n_holdout, args.rows, rng, "s")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = make(3000, args.rows, np.random.default_rng(1), "w")
        warm_real, warm_hold = split(small, 600, key)
        evaluate_tables(
            warm_real, small, warm_hold, metadata=metadata, backend=args.backend
        )
    client = None
    if args.workers:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True
        )
        client = Client(cluster)
    folder = tempfile.mkdtemp(prefix="bench-relational-")
    if args.parquet:
        for side, tables in (
            ("real", real),
            ("synthetic", synthetic),
            ("holdout", holdout),
        ):
            write_parquet(tables, os.path.join(folder, side))
    steps = time_steps()
    reap_workers()
    load_before = os.getloadavg()[0]
    # this process and its reaped children (the forked workers of the metrics)
    cpu0 = [
        resource.getrusage(who)
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    ]
    profiler = cProfile.Profile() if args.profile else None
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if profiler is not None:
            profiler.enable()
        if args.parquet:
            real, synthetic, holdout = (
                read_tables(os.path.join(folder, side), name=side)
                for side in ("real", "synthetic", "holdout")
            )
        report = evaluate_tables(
            real,
            synthetic,
            holdout,
            metadata=metadata,
            seed=args.seed,
            backend=args.backend,
            client=client,
        )
        if profiler is not None:
            profiler.disable()
    wall = time.perf_counter() - start
    cpu1 = [
        resource.getrusage(who)
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    ]
    cpu = sum(
        (b.ru_utime - a.ru_utime) + (b.ru_stime - a.ru_stime)
        for a, b in zip(cpu0, cpu1, strict=True)
    )
    root, *children = metadata["tables"]
    n_child = sum(len(real[t]) + len(holdout[t]) for t in children)
    print(
        f"{args.layout}: {args.people} people ({len(real[root])} training, {n_holdout} "
        f"holdout, {len(synthetic[root])} synthetic), {args.rows} rows each "
        f"({n_child} real child rows, {len(report.features['root'])} + "
        f"{len(report.features['children'])} person features); "
        f"backend {args.backend or 'auto'}"
        + (", read from Parquet datasets" if args.parquet else "")
        + (f", Dask LocalCluster of {args.workers} workers" if args.workers else "")
    )
    for name, seconds in steps.items():
        print(f"  {'relational':13s} {name:30s} {seconds:7.2f} s")
    for level, rep in (("people", report.people), *report.tables.items()):
        for result in rep.results:
            print(f"  {level:13s} {result.metric:30s} {result.seconds:7.2f} s")
    print(
        f"wall {wall:.1f} s, CPU {cpu:.1f} s, {os.cpu_count()} CPUs, load average "
        f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after; verdict {report.verdict} "
        f"(tables: {report.table_verdicts})"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            handle.write(report.to_json())
    if profiler is not None:
        profiler.dump_stats(args.profile)
        pstats.Stats(args.profile).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
