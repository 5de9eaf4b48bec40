# SPDX-License-Identifier: BSD-3-Clause
"""The HTML report of large record sets: read as arrays vs as JSON lists.

Usage::

    .venv/bin/python benchmarks/bench_html_records.py [--rows 1000000]

One result with two record sets of ``--rows`` rows (a distance per synthetic row and a
risk per real row). ``render_html(report)`` reads them as arrays; rendering the report's
JSON form (``report.to_dict(include_records=True)``, every value a Python float in a
list) is what the renderer did internally before. Each runs in its own child process
so that the peak memory of one does not hide the other's; printed: wall seconds and the
child's peak RSS above its peak before rendering.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def child(rows: int, form: str) -> dict[str, float]:
    import numpy as np

    from synthrisk.report import render_html
    from synthrisk.results import EvaluationReport, MetricResult, RecordScores

    values = np.random.default_rng(0).random(rows)
    result = MetricResult(
        "dcr_baseline_protection",
        0.5,
        {},
        records={
            "synthetic_to_real": RecordScores(
                "synthetic", np.arange(rows), values, "distance"
            ),
            "real_risk": RecordScores("real", np.arange(rows), values, "risk"),
        },
    )
    report = EvaluationReport("0.1.0", 0, {}, (result,))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    if form == "arrays":
        render_html(report)
    else:
        render_html(report.to_dict(include_records=True))
    return {
        "seconds": time.perf_counter() - start,
        "extra_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.rows, args.child)))
        return
    out = {}
    for form in ("arrays", "lists"):
        done = subprocess.run(
            [sys.executable, __file__, "--rows", str(args.rows), "--child", form],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        out[form] = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"{form:>6}: {out[form]['seconds']:6.2f} s, +{out[form]['extra_mib']:.0f} MiB"
        )
    ratio = out["lists"]["seconds"] / out["arrays"]["seconds"]
    print(f"arrays are {ratio:.1f}x faster than JSON lists")


if __name__ == "__main__":
    main()
