# SPDX-License-Identifier: BSD-3-Clause
"""Related tables at scale: ``evaluate_tables`` with its defaults on 100,000 people.

Usage::

    python benchmarks/bench_relational.py                      # 100,000 people, 10 rows each
    python benchmarks/bench_relational.py --people 20000 --profile out.prof
    python benchmarks/bench_relational.py --backend torch      # neighbour searches on a GPU
    python benchmarks/bench_relational.py --parquet --workers 16   # Parquet datasets, Dask

A seeded bank-like population (as :func:`synthrisk.datasets.relational.load_bank`, at
scale): ``customers`` (age, region, segment, income) → ``transactions``, ``--rows``
(10) per customer, a sequence ordered by date (amount, channel, kind). 20 % of the
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
    tables: dict[str, pd.DataFrame], n_holdout: int
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """The last ``n_holdout`` customers, with their rows, as the holdout."""
    ids = tables["customers"]["customer_id"].to_numpy()
    held = set(ids[len(ids) - n_holdout :])
    out: tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]] = ({}, {})
    for name, frame in tables.items():
        mask = frame["customer_id"].isin(held).to_numpy()
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


def main(argv: list[str] | None = None) -> int:
    """Time ``evaluate_tables`` with its defaults; optionally profile it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=10, help="child rows per person")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", metavar="PATH", help="write cProfile stats here")
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

    rng = np.random.default_rng(args.seed)
    population = people(args.people, args.rows, rng, "")
    n_holdout = round(0.2 * args.people)
    real, holdout = split(population, n_holdout)
    synthetic = people(args.people - n_holdout, args.rows, rng, "s")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = people(3000, args.rows, np.random.default_rng(1), "w")
        warm_real, warm_hold = split(small, 600)
        evaluate_tables(
            warm_real, small, warm_hold, metadata=METADATA, backend=args.backend
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
    load_before = os.getloadavg()[0]
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
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
            metadata=METADATA,
            seed=args.seed,
            backend=args.backend,
            client=client,
        )
        if profiler is not None:
            profiler.disable()
    wall = time.perf_counter() - start
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    print(
        f"{args.people} people ({len(real['customers'])} training, {n_holdout} holdout, "
        f"{len(synthetic['customers'])} synthetic), {args.rows} rows each "
        f"({len(real['transactions']) + len(holdout['transactions'])} real child rows); "
        f"backend {args.backend or 'auto'}"
        + (", read from Parquet datasets" if args.parquet else "")
        + (f", Dask LocalCluster of {args.workers} workers" if args.workers else "")
    )
    for level, rep in (("people", report.people), *report.tables.items()):
        for result in rep.results:
            print(f"  {level:13s} {result.metric:30s} {result.seconds:7.2f} s")
    print(
        f"wall {wall:.1f} s, CPU {cpu:.1f} s, {os.cpu_count()} CPUs, load average "
        f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after; verdict {report.verdict} "
        f"(tables: {report.table_verdicts})"
    )
    if profiler is not None:
        profiler.dump_stats(args.profile)
        pstats.Stats(args.profile).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
