"""Driver memory of chosen metrics on a ``LocalCluster``: what each metric adds on the driver.

    .venv/bin/python benchmarks/bench_driver_memory.py --data DIR --rows 1000000 \\
        --metrics membership_knn_probabilities,dcr_share

The Parquet datasets are those of ``bench_scale.py`` (``DIR/rows-N/{real,synthetic,holdout}``,
its realistic mixed schema), written there first if they are not yet; then it runs
``synthrisk.cluster.evaluate_dataset`` with only the chosen metrics on a ``LocalCluster``
of single-threaded worker processes and prints, for each metric: its seconds, the
Python allocations it keeps and its traced peak above its start (``tracemalloc``, numpy
arrays included; also per row of one table), the driver's peak RSS so far (the
scheduler lives in the driver; RSS also counts freed memory the allocator has not
returned) and its score.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench_scale import _peak_mib, datasets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--metrics", required=True, help="comma-separated metric ids")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    folders = datasets(args.data, args.rows)

    from distributed import Client, LocalCluster

    import synthrisk.cluster
    from synthrisk.metrics import _base

    run = _base.Metric.run

    def traced_run(self: Any, tables: Any, context: Any) -> Any:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        result = run(self, tables, context)
        current, peak = tracemalloc.get_traced_memory()
        print(
            f"{self.id}: {time.perf_counter() - start:.1f} s, "
            f"keeps {(current - before) / 2**20:.0f} MiB, "
            f"peak +{(peak - before) / 2**20:.0f} MiB "
            f"({(peak - before) / args.rows:.0f} B/row), "
            f"driver peak RSS so far {_peak_mib():.0f} MiB, score {result.score}",
            flush=True,
        )
        return result

    _base.Metric.run = traced_run  # type: ignore[method-assign]
    tracemalloc.start()
    with (
        LocalCluster(
            n_workers=args.workers, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        start = time.perf_counter()
        synthrisk.cluster.evaluate_dataset(
            folders["real"],
            folders["synthetic"],
            folders["holdout"],
            metrics=args.metrics.split(","),
            client=client,
        )
        print(
            f"total {time.perf_counter() - start:.1f} s, "
            f"driver peak RSS {_peak_mib():.0f} MiB"
        )


if __name__ == "__main__":
    main()
