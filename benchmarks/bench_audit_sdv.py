# SPDX-License-Identifier: BSD-3-Clause
"""The generator audit of SDV synthesizers on a 1,000-row Adult sample: worker vs fresh interpreter.

Usage (from the repository root; SDV 2.x needs pandas < 3, so it lives in its own
virtual environment, and synthrisk need not be installed there)::

    python -m venv sdv-venv && sdv-venv/bin/pip install torch==2.13.0 sdv 'pandas<3'
    PYTHONPATH=src python benchmarks/bench_audit_sdv.py --sdv-python sdv-venv/bin/python \
        --synthesizer gaussian_copula --mode worker,fresh,instant --runs 100 \
        --fresh-runs 20 --n-jobs 1

real = 1,000 rows of ``adults_train_reconstructed.csv``, holdout (the attacker's pool) =
3,000 rows of ``adults_control.csv`` (the samples of ``bench_audit.py``), shadow training
sets of 1,000 pool rows plus the included targets, the 10 most isolated real people as
targets, the default attacks, 95 % confidence, δ = 0. ``--mode`` lists what runs, one
after the other, on the same samples and seed:

* ``worker``: :class:`synthrisk.audit.PythonGenerator` with its persistent worker (one
  interpreter per job slot imports SDV once);
* ``fresh``: the same with ``worker=False`` (a fresh interpreter per run, which imports SDV
  every time);
* ``command``: :class:`synthrisk.audit.CommandGenerator` running
  ``benchmarks/sdv_generator.py`` (a fresh interpreter per run: the earlier measurement);
* ``instant``: an in-process generator that only resamples its training rows, so that
  the run is the audit's own cost (drawing the training sets, encoding and scoring each
  output, the classifier, the bounds) at the same sizes.

In ``worker`` and ``fresh`` the generator is a small module written to a temporary folder
that imports SDV, runs SDV through synthrisk's own adapter
(:func:`synthrisk.audit.adapters.fit_named`, loaded from its file: synthrisk is not
installed in the SDV environment) and logs, in the SDV interpreter, the seconds of its
import of SDV and of each fit and sample. Per mode it prints runs per minute and where a
run's seconds go: fit and sample (in the SDV interpreter); the rest of the generator call
(tables to and from CSV files, the protocol, the interpreter's start and its import of
pandas: once per worker, every run in ``fresh``), the imports of SDV left out (they have
their own column); the audit's scoring (``result.runs["scoring_seconds"]``: drawing the
training set, encoding and scoring the output) and its set-up and bounds (once per
audit), with the load average before and after. ``--results`` prints the overall and
per-target tables of the SDV mode with the most runs (row numbers of the real sample,
never values).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
from bench_audit import load, load_average

from synthrisk.audit import CommandGenerator, PythonGenerator, adapters, audit

MODES = ("worker", "fresh", "command", "instant")

#: the generator module run in the SDV interpreter; logs its import and each fit
TIMED = """
import time as _time

_START = _time.perf_counter()
import importlib.util
import json
import os

import sdv.metadata  # noqa: F401 - the import a fresh interpreter pays every run
import sdv.single_table  # noqa: F401

_SPEC = importlib.util.spec_from_file_location("_bench_adapters", {adapters!r})
_ADAPTERS = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_ADAPTERS)
_IMPORT = _time.perf_counter() - _START
_FIRST = [True]


def fit_sample(train, n, seed, **params):
    tick = _time.perf_counter()
    out = _ADAPTERS.fit_named({name!r}, train, n, seed, **params)
    record = {{"pid": os.getpid(), "fit": _time.perf_counter() - tick}}
    if _FIRST[0]:
        record["import"] = _IMPORT
        _FIRST[0] = False
    with open(os.environ["BENCH_SDV_TIMINGS"], "a") as log:
        log.write(json.dumps(record) + "\\n")
    return out
"""


def instant(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """No generator at all: ``n`` training rows drawn with replacement."""
    return train.sample(n, replace=True, random_state=seed).reset_index(drop=True)


def run_mode(
    mode: str,
    args: argparse.Namespace,
    real: pd.DataFrame,
    holdout: pd.DataFrame,
    folder: Path,
) -> dict[str, Any]:
    """One audit in ``mode``; its rate and the breakdown of a run's seconds."""
    timings = folder / f"timings-{mode}.jsonl"
    os.environ["BENCH_SDV_TIMINGS"] = str(timings)  # the SDV interpreter inherits it
    params = {} if args.synthesizer == "gaussian_copula" else {"epochs": args.epochs}
    generator: Any
    if mode in ("worker", "fresh"):
        generator = PythonGenerator(
            args.sdv_python,
            "bench_sdv_timed:fit_sample",
            params=params,
            path=(str(folder),),
            timeout=1800,
            worker=mode == "worker",
        )
    elif mode == "command":
        script = Path(__file__).with_name("sdv_generator.py")
        generator = CommandGenerator(
            f"{shlex.quote(args.sdv_python)} {shlex.quote(str(script))} --train {{train}} "
            f"--out {{out}} --rows {{n}} --seed {{seed}} --synthesizer {args.synthesizer} "
            f"--epochs {args.epochs}",
            timeout=1800,
        )
    else:
        generator = instant
    n_runs = args.fresh_runs if mode in ("fresh", "command") else args.runs
    before = load_average()
    start = time.perf_counter()
    result = audit(
        generator,
        real,
        holdout,
        n_targets=10,
        n_runs=n_runs,
        train_size=1000,
        n_jobs=args.n_jobs,
        seed=args.seed,
    )
    wall = time.perf_counter() - start
    records = (
        [json.loads(line) for line in timings.read_text().splitlines()]
        if timings.exists()
        else []
    )
    n = max(result.n_runs, 1)
    runs = result.runs
    fits = [r["fit"] for r in records]
    imports = [r["import"] for r in records if "import" in r]
    return {
        "mode": mode,
        "result": result,
        "n_runs": result.n_runs,
        "failed": runs.get("failed", 0),
        "wall": wall,
        "rate": 60 * result.n_runs / wall,
        "generator": runs["generator_seconds"] / n,
        "fit": sum(fits) / len(fits) if fits else None,
        # the rest of the generator calls, the imports of SDV left out
        "overhead": (runs["generator_seconds"] - sum(fits) - sum(imports)) / n
        if fits
        else None,
        "imports": imports,
        "scoring": runs["scoring_seconds"] / n,
        "setup": runs["setup_seconds"],
        "bounds": runs["bounds_seconds"],
        "load": (before, load_average()),
    }


def _s(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    print(
        f"\n{args.synthesizer}, n_jobs {args.n_jobs}, cpus {os.cpu_count()}, seed {args.seed}\n"
    )
    print(
        "| mode | runs (failed) | wall s | runs / min | generator call s / run | "
        "fit + sample s / run | rest of the call s / run | SDV import s | scoring s / run | "
        "set-up s | bounds s | ε lower | load before → after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        overhead = row["overhead"]
        imports = row["imports"]
        if not imports:
            imported = "–"
        elif len(imports) <= 2:
            imported = ", ".join(f"{v:.2f}" for v in imports)
        else:
            imported = f"{sum(imports) / len(imports):.2f} (mean of {len(imports)})"
        print(
            f"| {row['mode']} | {row['n_runs']} ({row['failed']}) | {row['wall']:.1f} | "
            f"{row['rate']:.1f} | {_s(row['generator'])} | {_s(row['fit'])} | "
            f"{_s(overhead)} | {imported} | {_s(row['scoring'])} | {row['setup']:.2f} | "
            f"{row['bounds']:.2f} | {row['result'].epsilon_lower:.3f} | "
            f"{row['load'][0]} → {row['load'][1]} |"
        )


def results_tables(result: Any) -> None:
    print(
        f"\nε lower (95 %, all attacks): {result.epsilon_lower:.3f}, best attack {result.best_attack}"
    )
    print("\n| attack | AUC (pooled) | TPR at FPR 1 %, 10 % | ε lower |")
    print("|---|---|---|---|")
    for name, b in result.overall.items():
        print(f"| {name} | {_num(b.auc)} | {_rates(b)} | {b.epsilon_lower:.3f} |")
    print(
        "\n| target (real row) | isolation | times included | ε lower | best attack | its AUC |"
    )
    print("|---|---|---|---|---|---|")
    for t in result.targets:
        best = t.attacks.get(t.best_attack) if t.best_attack else None
        auc = _num(best.auc) if best is not None else "–"
        print(
            f"| {t.row} | {t.isolation:.3f} | {t.n_included} | {t.epsilon_lower:.3f} "
            f"| {t.best_attack or '–'} | {auc} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/adults"))
    parser.add_argument(
        "--sdv-python", required=True, help="the SDV environment's python"
    )
    parser.add_argument("--synthesizer", default="gaussian_copula")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument(
        "--mode",
        default="worker,fresh",
        help=f"comma-separated, run in this order: {', '.join(MODES)}",
    )
    parser.add_argument(
        "--runs", type=int, default=100, help="shadow runs of worker and instant"
    )
    parser.add_argument(
        "--fresh-runs", type=int, default=20, help="shadow runs of fresh and command"
    )
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--results",
        action="store_true",
        help="print the bounds of the SDV mode with the most runs",
    )
    args = parser.parse_args()
    modes = [m.strip() for m in args.mode.split(",") if m.strip()]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"unknown --mode {unknown}; choose from {list(MODES)}")
    if args.synthesizer not in adapters.SDV_SYNTHESIZERS:
        parser.error(f"--synthesizer must be one of {list(adapters.SDV_SYNTHESIZERS)}")

    real, holdout = load(args.data, n_real=1000, n_holdout=3000, seed=0)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-audit-sdv-") as name:
        folder = Path(name)
        (folder / "bench_sdv_timed.py").write_text(
            TIMED.format(adapters=adapters.__file__, name=f"sdv:{args.synthesizer}")
        )
        for mode in modes:
            print(f"{mode}: load average {load_average()}", file=sys.stderr, flush=True)
            rows.append(run_mode(mode, args, real, holdout, folder))
            row = rows[-1]
            print(
                f"  {row['n_runs']} runs in {row['wall']:.1f} s: {row['rate']:.1f} runs / min",
                file=sys.stderr,
                flush=True,
            )
    report(rows, args)
    sdv_rows = [r for r in rows if r["mode"] != "instant"]
    if args.results and sdv_rows:
        results_tables(max(sdv_rows, key=lambda r: r["n_runs"])["result"])


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _rates(bound: object) -> str:
    rates = getattr(bound, "tpr_at_fpr", {}) or {}
    return ", ".join(_num(v) for v in rates.values()) or "–"


if __name__ == "__main__":
    main()
