# SPDX-License-Identifier: BSD-3-Clause
"""The whole default assessment (every family) on the full Adult data: wall time per metric.

Usage::

    python benchmarks/bench_evaluate.py --data path/to/adults

real = ``adults_train_reconstructed.csv`` (39,032 rows), synthetic = ``adults_syn_ctgan.csv``
(39,040), holdout = ``adults_control.csv`` (9,758). Prints each metric's seconds, the total wall
and CPU seconds (CPU above wall means several cores worked; with worker processes the CPU
includes theirs), the load average before and after, the seconds of ``import synthrisk`` and of
reading the three CSVs (outside the total), and the verdict.

``--ref-venv PATH`` (a venv with ``anonymeter==1.1.0``, as ``../shared/tools/ref-venvs.sh``
builds it) also times one Anonymeter inference attack in a child process: ``income`` from every
other column, one attack per holdout row (9,758: PETsARD's ``max_n_attacks``), after a warm-up
that compiles Anonymeter's numba kernel; it prints how many times longer that one attack takes
than the whole assessment.

``--workers`` sets the run's worker processes (default ``auto``). ``--rounds N`` times the run N
times, alternating with a run in one process (``workers=1``) on the same warm interpreter, and
prints both medians, their ratio, and whether the two reports are identical (they must be).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="folder with the Adult CSVs"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--workers", default="auto", help="worker processes: auto or a number"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="alternate N timed runs with runs in one process (workers=1)",
    )
    parser.add_argument(
        "--ref-venv",
        type=Path,
        default=None,
        help="venv with anonymeter==1.1.0: also time one of its inference attacks",
    )
    args = parser.parse_args(argv)
    workers = args.workers if args.workers == "auto" else int(args.workers)
    start = time.perf_counter()
    from synthrisk import evaluate
    from synthrisk.io import read_table

    imported = time.perf_counter() - start
    start = time.perf_counter()
    # read as the command line reads its files (the frames equal pandas.read_csv's here)
    real = read_table(args.data / "adults_train_reconstructed.csv")
    synthetic = read_table(args.data / "adults_syn_ctgan.csv")
    holdout = read_table(args.data / "adults_control.csv")
    read = time.perf_counter() - start

    # warm the numba kernels on a small sample so that compilation is not timed
    evaluate(real.head(300), synthetic.head(300), holdout.head(300), seed=args.seed)
    if args.rounds:
        return _alternate(
            evaluate, real, synthetic, holdout, args.seed, workers, args.rounds
        )
    load_before = os.getloadavg()[0]
    cpu0 = _cpu()
    start = time.perf_counter()
    report = evaluate(real, synthetic, holdout, seed=args.seed, workers=workers)
    wall = time.perf_counter() - start
    cpu = _cpu() - cpu0
    for result in report.results:
        print(f"{result.metric:32s} {result.seconds:7.2f} s")
    assert report.verdict is not None
    print(
        f"total wall {wall:.1f} s, CPU {cpu:.1f} s, cores {os.cpu_count()}, "
        f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    print(f"import synthrisk {imported:.2f} s, reading the three CSVs {read:.2f} s")
    print(f"verdict: {report.verdict.overall} ({report.verdict.reason})")
    if args.ref_venv is not None:
        _one_anonymeter_attack(args.ref_venv, args.data, wall)
    return 0


ANONYMETER_INFERENCE = r"""
import json, os, time, warnings
import pandas as pd
from anonymeter.evaluators import InferenceEvaluator
warnings.simplefilter("ignore")
p = json.load(open(os.environ["PAYLOAD"]))
ori, syn, control = (pd.read_csv(p[k]) for k in ("real", "synthetic", "holdout"))
aux = [c for c in ori.columns if c != "income"]
InferenceEvaluator(ori=ori.head(30), syn=syn.head(30), control=control.head(30), aux_cols=aux,
                   secret="income", n_attacks=5).evaluate(n_jobs=-2)  # numba JIT, not timed
t = time.perf_counter()
InferenceEvaluator(ori=ori, syn=syn, control=control, aux_cols=aux, secret="income",
                   n_attacks=len(control)).evaluate(n_jobs=-2)
print(json.dumps({"seconds": time.perf_counter() - t, "n_attacks": len(control)}))
"""


def _one_anonymeter_attack(venv: Path, data: Path, wall: float) -> None:
    from _common import reference_python, run_child

    python = reference_python(venv, "anonymeter")
    payload = {
        "real": str(data / "adults_train_reconstructed.csv"),
        "synthetic": str(data / "adults_syn_ctgan.csv"),
        "holdout": str(data / "adults_control.csv"),
    }
    load = os.getloadavg()[0]
    found = run_child(python, ANONYMETER_INFERENCE, payload)
    print(
        f"one Anonymeter 1.1 inference attack (income, {found['n_attacks']:,} targets): "
        f"{found['seconds']:.1f} s, {found['seconds'] / wall:.1f}x the whole assessment "
        f"(load average {load:.1f} -> {os.getloadavg()[0]:.1f})"
    )


def _cpu() -> float:
    """CPU seconds of this process and of its finished worker processes."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def _comparable(report: Any) -> str:
    data = report.to_dict(include_records=True)
    for result in data["results"]:
        result.pop("seconds")
    return json.dumps(data, sort_keys=True, default=str)


def _alternate(
    evaluate: Any,
    real: Any,
    synthetic: Any,
    holdout: Any,
    seed: int,
    workers: Any,
    rounds: int,
) -> int:
    walls: dict[Any, list[float]] = {workers: [], 1: []}
    cpus: dict[Any, list[float]] = {workers: [], 1: []}
    reports: dict[Any, str] = {}
    load_before = os.getloadavg()[0]
    for _ in range(rounds):
        for w in (workers, 1):
            cpu0 = _cpu()
            start = time.perf_counter()
            report = evaluate(real, synthetic, holdout, seed=seed, workers=w)
            walls[w].append(time.perf_counter() - start)
            cpus[w].append(_cpu() - cpu0)
            reports[w] = _comparable(report)
    for w in (workers, 1):
        print(
            f"workers={w}: wall median {statistics.median(walls[w]):.2f} s "
            f"(runs {', '.join(f'{x:.2f}' for x in walls[w])}), "
            f"CPU median {statistics.median(cpus[w]):.1f} s"
        )
    ratio = statistics.median(walls[1]) / statistics.median(walls[workers])
    print(
        f"one process / workers={workers}: {ratio:.2f}x; reports identical: "
        f"{reports[workers] == reports[1]}; cores {os.cpu_count()}, load average "
        f"{load_before:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    return 0 if reports[workers] == reports[1] else 1


if __name__ == "__main__":
    sys.exit(main())
