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
days of supply, route): 68 person features
(:func:`synthrisk.datasets.relational.hospital_people`). 20 % of the
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

from synthrisk.datasets.relational import HOSPITAL_METADATA as HOSPITAL
from synthrisk.datasets.relational import hospital_people

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


def patients(
    n: int, rows: int, rng: np.random.Generator, prefix: str
) -> dict[str, pd.DataFrame]:
    """``n`` hospital patients (:func:`synthrisk.datasets.relational.hospital_people`)."""
    return hospital_people(n, rng, prefix, rows=rows)


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
        import logging

        from distributed import Client, LocalCluster

        # the cluster's start-up and shutdown chatter (INFO, with the tracebacks of
        # connections closed on purpose) would bury the timings
        logging.getLogger("distributed").setLevel(logging.WARNING)

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
    if client is not None:
        # close the cluster before the interpreter exits, which would otherwise tear its
        # workers' connections down mid-message (a CommClosedError traceback after the result)
        client.close()
        cluster.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
