# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: in memory vs a Dask LocalCluster (1 and 2 workers) as tables grow.

Run from the repository root::

    .venv/bin/python benchmarks/bench_scale.py --sizes 10000 25000 --metrics dcr
    .venv/bin/python benchmarks/bench_scale.py --sizes 100000 1000000 5000000 --metrics none
    .venv/bin/python benchmarks/bench_scale.py --plot docs/scaling.png   # from the saved results

Data: a realistic mixed schema (age, income, balance, tenure, signup date, region,
occupation, education, sex, plan: 4 numbers, 1 date, 5 categories) generated in
partitions of 100k rows, each from its own seeded stream, and written as Parquet
datasets (one folder per table: real, synthetic and holdout of N rows each) under
``--data`` (default: a temporary folder). Nothing is ever built whole in memory by
the generator.

Each configuration runs in its own child process:

* ``memory`` — ``pd.read_parquet`` of the three folders and ``synthrisk.evaluate``
  (numba backend, all cores);
* ``cluster-1`` / ``cluster-2`` — ``synthrisk.cluster.evaluate_dataset`` on a
  ``LocalCluster`` of 1 or 2 single-threaded worker processes, reading the folders
  partition by partition.

``--metrics dcr`` runs the two DCR metrics (every row, on the cluster: four N × N
neighbour searches); ``none`` runs no metric, which measures reading, validation,
schema and encoder reductions and encoding alone (what decides the driver's memory);
``default`` runs the default metric set. Reported per configuration: wall seconds
(whole child, data reading included) and per metric, peak RSS of the driver process
(the ``LocalCluster`` scheduler lives in it) and of the largest worker, and which
metrics ran on the seeded sample instead of every row. Results append to
``benchmarks/scale_results.jsonl``. ``--task-log FILE`` appends every progress task
(each neighbour search, each attack) with its start and end in seconds into the run,
to tell which step a long run is in.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "scale_results.jsonl"
PART_ROWS = 100_000
REGIONS = [f"region-{i:02d}" for i in range(12)]
OCCUPATIONS = [f"occupation-{i}" for i in range(10)]
EDUCATION = [
    "primary",
    "lower",
    "upper",
    "vocational",
    "bachelor",
    "master",
    "doctorate",
]
PLANS = ["basic", "plus", "family", "premium", "business"]


def make_partition(seed: int, index: int, rows: int) -> pd.DataFrame:
    """One partition of the mixed table, from its own seeded stream."""
    g = np.random.default_rng([seed, index])
    age = np.clip(np.round(g.normal(42, 14, rows)), 18, 95)
    education = g.choice(
        len(EDUCATION), rows, p=[0.08, 0.15, 0.3, 0.17, 0.18, 0.1, 0.02]
    )
    income = np.round(np.exp(g.normal(10 + 0.12 * education, 0.5)), 2)
    income[g.random(rows) < 0.03] = np.nan
    balance = np.round(g.normal(income / 12, 900), 2)
    tenure = g.integers(0, 3650, rows).astype(float)
    signup = pd.Timestamp("2015-01-01") + pd.to_timedelta(
        g.integers(0, 3650, rows), unit="D"
    )
    return pd.DataFrame({
        "age": age,
        "income": income,
        "balance": balance,
        "tenure_days": tenure,
        "signup": signup,
        "region": np.asarray(REGIONS, dtype=object)[g.integers(0, 12, rows)],
        "occupation": np.asarray(OCCUPATIONS, dtype=object)[g.integers(0, 10, rows)],
        "education": np.asarray(EDUCATION, dtype=object)[education],
        "sex": np.asarray(["f", "m"], dtype=object)[g.integers(0, 2, rows)],
        "plan": np.asarray(PLANS, dtype=object)[g.integers(0, 5, rows)],
    })  # fmt: skip


def write_dataset(folder: Path, rows: int, seed: int) -> None:
    """``rows`` rows as Parquet files of at most PART_ROWS rows each."""
    if (folder / "_done").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    for index, start in enumerate(range(0, rows, PART_ROWS)):
        part = make_partition(seed, index, min(PART_ROWS, rows - start))
        part.to_parquet(folder / f"part-{index:04d}.parquet", index=False)
    (folder / "_done").write_text("")


def datasets(base: Path, rows: int) -> dict[str, str]:
    out = {}
    for name, seed in (("real", 1), ("synthetic", 2), ("holdout", 3)):
        folder = base / f"rows-{rows}" / name
        write_dataset(folder, rows, seed)
        out[name] = str(folder)
    return out


def _peak_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


METRIC_SETS = {
    "dcr": ["dcr_baseline_protection", "dcr_overfitting_protection"],
    "none": [],
    "default": None,
}


class TaskLog:
    """Progress that appends each task's start and end, with the time into the run, to a file."""

    def __init__(self, path: str | None, start: float) -> None:
        self.path, self.start = path, start

    def _write(self, line: str) -> None:
        if self.path:
            with open(self.path, "a") as handle:
                handle.write(f"{time.perf_counter() - self.start:9.1f} s  {line}\n")

    @contextlib.contextmanager
    def task(self, description: str, total: int) -> Iterator[Callable[[int], None]]:
        self._write(f"start {description} ({total})")
        yield lambda n: None
        self._write(f"end   {description}")


def child(
    mode: str, paths: dict[str, str], metrics: str, task_log: str | None = None
) -> dict[str, object]:
    chosen = METRIC_SETS[metrics]
    start = time.perf_counter()
    progress = TaskLog(task_log, start)
    workers_peak = None
    if mode == "memory":
        from synthrisk import evaluate

        frames = {n: pd.read_parquet(p) for n, p in paths.items()}
        if chosen == []:
            from synthrisk.schema import prepare_tables

            tables = prepare_tables(
                frames["real"], frames["synthetic"], frames["holdout"]
            )
            for name in ("real", "synthetic", "holdout"):
                tables.encoded(name)
            scores, seconds, sampled = {}, {}, []
        else:
            report = evaluate(
                frames["real"],
                frames["synthetic"],
                frames["holdout"],
                metrics=chosen,
                progress=progress,
            )
            scores = {r.metric: r.score for r in report.results}
            seconds = {r.metric: round(r.seconds, 2) for r in report.results}
            sampled = []
    else:
        import dask
        from distributed import Client, LocalCluster

        from synthrisk.cluster import evaluate_dataset

        n_workers = int(mode.split("-")[1])
        with (
            # a short message log, as the clusters synthrisk starts (docs/scaling.md)
            dask.config.set({"distributed.admin.low-level-log-length": 20}),
            LocalCluster(
                n_workers=n_workers, threads_per_worker=1, dashboard_address=":0"
            ) as cluster,
            Client(cluster) as client,
        ):
            report = evaluate_dataset(
                paths["real"],
                paths["synthetic"],
                paths["holdout"],
                metrics=chosen,
                client=client,
                progress=progress,
            )
            scores = {r.metric: r.score for r in report.results}
            seconds = {r.metric: round(r.seconds, 2) for r in report.results}
            sampled = [
                r.metric
                for r in report.results
                if any("seeded random sample" in w for w in r.warnings)
            ]
            workers_peak = max(client.run(_peak_mib).values())
    return {
        "seconds": time.perf_counter() - start,
        "driver_peak_mib": _peak_mib(),
        "worker_peak_mib": workers_peak,
        "scores": scores,
        "metric_seconds": seconds,
        "sampled": sampled,
    }


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:  # pragma: no cover - not Linux
        return "n/a"


def _load(record: dict) -> float:
    try:
        return float(str(record.get("load_before", "")).split()[0])
    except (IndexError, ValueError):
        return float("inf")


def plot(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    latest: dict[tuple[int, str, str], dict] = {}
    for line in RESULTS.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            # the newest run of each configuration (the file is appended to)
            latest[(record["rows"], record["mode"], record["metrics"])] = record
    rows = list(latest.values())
    styles = {"memory": "o-", "cluster-1": "s--", "cluster-2": "^-"}
    colours = {"memory": "C0", "cluster-1": "C1", "cluster-2": "C2"}

    def series(metrics: str, mode: str, key: str) -> list[tuple[int, float]]:
        return sorted(
            (r["rows"], r[key])
            for r in rows
            if r["metrics"] == metrics
            and r["mode"] == mode
            and r.get(key) is not None
            # times only from runs on an otherwise idle machine
            and (key != "seconds" or _load(r) < 4)
        )

    fig, axes = plt.subplots(1, 3, figsize=(14, 3.9))
    for metrics, ax, label in (
        ("default", axes[0], "wall s, whole default assessment (2 cores)"),
        ("dcr", axes[1], "wall s, DCR metrics (2 cores)"),
    ):
        for mode, style in styles.items():
            pts = series(metrics, mode, "seconds")
            if pts:
                ax.plot(*zip(*pts, strict=True), style, color=colours[mode], label=mode)
        ax.set_title(label, fontsize=10)
    ax = axes[2]
    for metrics, mode, style, name in (
        ("default", "memory", "o-", "memory, whole assessment"),
        ("default", "cluster-2", "^-", "cluster-2, whole assessment"),
        ("none", "memory", "o:", "memory, read + encode"),
        ("none", "cluster-2", "^:", "cluster-2, read + encode"),
    ):
        pts = series(metrics, mode, "driver_peak_mib")
        if pts:
            ax.plot(*zip(*pts, strict=True), style, color=colours[mode], label=name)
    ax.axhline(1024, color="grey", lw=0.8, ls="--")
    ax.text(1.0e5, 1100, "1 GiB", fontsize=8, color="grey")
    ax.set_title("driver (scheduler included) peak MiB", fontsize=10)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rows per table")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument(
        "--modes", nargs="+", default=["memory", "cluster-1", "cluster-2"]
    )
    parser.add_argument("--metrics", choices=sorted(METRIC_SETS), default="dcr")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--plot", type=Path, default=None)
    parser.add_argument(
        "--task-log",
        type=Path,
        default=None,
        help="append each progress task's start and end, with seconds into the run, to this file",
    )
    parser.add_argument(
        "--child", nargs=2, metavar=("MODE", "PAYLOAD"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        paths = json.loads(Path(args.child[1]).read_text())
        print(
            json.dumps(
                child(
                    args.child[0],
                    paths["paths"],
                    paths["metrics"],
                    paths.get("task_log"),
                )
            )
        )
        return
    if args.plot:
        plot(args.plot)
        return
    base = args.data or Path(tempfile.mkdtemp(prefix="synthrisk-scale-"))
    print(f"machine: {os.cpu_count()} cores; load average before: {load_average()}")
    print(
        f"{'rows':>9} {'mode':>10} {'seconds':>9} {'driver MiB':>11} {'worker MiB':>11}  scores"
    )
    for rows in args.sizes:
        paths = datasets(base, rows)
        payload = base / "payload.json"
        payload.write_text(
            json.dumps(
                {
                    "paths": paths,
                    "metrics": args.metrics,
                    "task_log": str(args.task_log.resolve()) if args.task_log else None,
                }
            )
        )
        for mode in args.modes:
            load = load_average()
            done = subprocess.run(
                [sys.executable, __file__, "--child", mode, str(payload)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if done.returncode:
                print(done.stderr[-3000:])
                continue
            result = json.loads(done.stdout.strip().splitlines()[-1])
            record = {
                "rows": rows,
                "mode": mode,
                "metrics": args.metrics,
                "load_before": load,
                **result,
            }
            with RESULTS.open("a") as handle:
                handle.write(json.dumps(record) + "\n")
            worker = (
                "-"
                if result["worker_peak_mib"] is None
                else f"{result['worker_peak_mib']:.0f}"
            )
            scores = {
                k: None if v is None else round(v, 4)
                for k, v in result["scores"].items()
            }
            print(
                f"{rows:>9} {mode:>10} {result['seconds']:>9.1f} {result['driver_peak_mib']:>11.0f} "
                f"{worker:>11}  {scores}  (load {load})",
                flush=True,
            )


if __name__ == "__main__":
    main()
