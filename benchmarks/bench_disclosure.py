# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: DisclosureProtection (cap, zero_cap, generalized_cap) in synthrisk vs SDMetrics 0.32.

Run from the repository root::

    .venv/bin/python benchmarks/bench_disclosure.py                  # 2k, 5k, 10k rows + synthrisk at full size
    .venv/bin/python benchmarks/bench_disclosure.py --full           # SDMetrics at full size too (about 15 min)
    .venv/bin/python benchmarks/bench_disclosure.py --ref-venv /path/to/sdmetrics-venv --data DIR

Data: real = adults_train_reconstructed.csv, synthetic = adults_syn_ctgan.csv (from
../shared/data/adults), the same random row sample for both libraries at each size.
Main configurations: the attacker knows age (10 equal-width bins), sex and race and
guesses income (one sensitive column) or income and marital status (two), with each
of the three computations. Stress configuration: ``generalized_cap`` with seven known
columns matched exactly (age, education, marital, occupation, race, sex, hours per
week: tens of thousands of distinct keys), SDMetrics only up to ``--stress-max`` rows.

Each library runs in its own child process on the same CSV files; times are wall
seconds of the ``compute_breakdown`` call alone (synthrisk through its drop-in
``synthrisk.compat.sdmetrics``, after a tiny warm-up call that loads its compiled
kernels from numba's cache). At full size synthrisk is also timed through its own
API on the whole 15-column table (``DisclosureProtection(...).compute(real,
synthetic)``, which validates and normalises every column).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA, reference_python, run_child

KNOWN = ["age", "sex", "race"]
SENSITIVE = {"1 sensitive": ["income"], "2 sensitive": ["income", "marital"]}
METHODS = ("cap", "zero_cap", "generalized_cap")
STRESS = {
    "label": "stress: 7 exact keys",
    "known": [
        "age",
        "education",
        "marital",
        "occupation",
        "race",
        "sex",
        "hr_per_week",
    ],
    "sensitive": ["income"],
    "method": "generalized_cap",
    "continuous": [],
}
RUNS = [
    {
        "label": label,
        "known": KNOWN,
        "sensitive": sensitive,
        "method": method,
        "continuous": ["age"],
    }
    for label, sensitive in SENSITIVE.items()
    for method in METHODS
]

SDMETRICS_CODE = r"""
import json, os, resource, time, warnings
import pandas as pd
from sdmetrics.single_table import DisclosureProtection
p = json.load(open(os.environ["PAYLOAD"]))
real, syn = pd.read_csv(p["real"]), pd.read_csv(p["synthetic"])
warnings.simplefilter("ignore")
out = {}
for run in p["runs"]:
    t = time.perf_counter()
    b = DisclosureProtection.compute_breakdown(
        real, syn, run["known"], run["sensitive"], run["method"], run["continuous"] or None, 10)
    out[run["label"] + "|" + run["method"]] = {"seconds": time.perf_counter() - t, "score": float(b["score"])}
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

SYNTHRISK_CODE = r"""
import json, os, resource, time, warnings
import pandas as pd
import synthrisk
from synthrisk.compat.sdmetrics import DisclosureProtection
p = json.load(open(os.environ["PAYLOAD"]))
real, syn = pd.read_csv(p["real"]), pd.read_csv(p["synthetic"])
warnings.simplefilter("ignore")  # the stress configuration warns about its exact-matched numeric keys
import numpy as np
from synthrisk.metrics.disclosure import cap_probabilities
one = np.zeros((1, 1), dtype=np.int64)  # warm-up: imports and compiled kernels from numba's cache
cap_probabilities(one, one, one + 1, one, method="generalized_cap", backend="numba", search="scan")
for run in p["runs"]:
    DisclosureProtection.compute_breakdown(
        real.head(300), syn.head(300), run["known"], run["sensitive"], run["method"], run["continuous"] or None, 10)
out = {}
for run in p["runs"]:
    key = run["label"] + "|" + run["method"]
    t = time.perf_counter()
    b = DisclosureProtection.compute_breakdown(
        real, syn, run["known"], run["sensitive"], run["method"], run["continuous"] or None, 10)
    out[key] = {"seconds": time.perf_counter() - t, "score": float(b["score"])}
    if p["native"]:
        metric = synthrisk.DisclosureProtection(
            known_column_names=run["known"], sensitive_column_names=run["sensitive"],
            computation_method=run["method"], continuous_column_names=run["continuous"])
        t = time.perf_counter()
        result = metric.compute(real, syn)
        out[key]["native_seconds"] = time.perf_counter() - t
        out[key]["native_score"] = result.score
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--ref-venv", type=Path, default=None, help="venv with sdmetrics==0.32.0"
    )
    parser.add_argument("--sizes", default="2000,5000,10000")
    parser.add_argument(
        "--stress-max",
        type=int,
        default=2000,
        help="largest size SDMetrics runs the stress case at",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="also run SDMetrics on the full data (about 15 minutes)",
    )
    args = parser.parse_args()

    ref_python = reference_python(args.ref_venv, "sdmetrics")
    real = pd.read_csv(args.data / "adults_train_reconstructed.csv")
    syn = pd.read_csv(args.data / "adults_syn_ctgan.csv")
    rng = np.random.default_rng(0)
    order_real, order_syn = rng.permutation(len(real)), rng.permutation(len(syn))
    sizes = [int(s) for s in args.sizes.split(",") if s]
    lines = [
        "| rows (real x synthetic) | configuration | method | SDMetrics 0.32 | synthrisk | speed-up | |Δ score| |",
        "|---|---|---|---|---|---|---|",
    ]
    full: dict = {}
    peaks = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [*sizes, None]:
            label = "full" if n is None else str(n)
            r = real if n is None else real.iloc[order_real[:n]]
            s = syn if n is None else syn.iloc[order_syn[:n]]
            paths = {
                "real": f"{tmp}/real_{label}.csv",
                "synthetic": f"{tmp}/syn_{label}.csv",
            }
            r.to_csv(paths["real"], index=False)
            s.to_csv(paths["synthetic"], index=False)
            ours = run_child(
                sys.executable,
                SYNTHRISK_CODE,
                {**paths, "runs": [*RUNS, STRESS], "native": n is None},
            )
            ref = None
            if n is not None or args.full:
                stress = [STRESS] if len(r) <= args.stress_max else []
                ref = run_child(
                    ref_python, SDMETRICS_CODE, {**paths, "runs": [*RUNS, *stress]}
                )
            peaks.append(
                (
                    f"{len(r)} x {len(s)}",
                    ref["peak_mib"] if ref else None,
                    ours["peak_mib"],
                )
            )
            for run in [*RUNS, STRESS]:
                key = f"{run['label']}|{run['method']}"
                line = _row(
                    len(r),
                    len(s),
                    run,
                    ours[key],
                    None if ref is None else ref.get(key),
                )
                lines.append(line)
                print(line, flush=True)
            if n is None:
                full = ours
    print()
    print("\n".join(lines))
    print()
    print("| rows | peak RSS SDMetrics | peak RSS synthrisk |")
    print("|---|---|---|")
    for size, ref_peak, our_peak in peaks:
        print(
            f"| {size} | {'—' if ref_peak is None else f'{ref_peak:.0f} MiB'} | {our_peak:.0f} MiB |"
        )
    print()
    print(f"full size, synthrisk's own API on the whole {real.shape[1]}-column table:")
    for run in [*RUNS, STRESS]:
        entry = full[f"{run['label']}|{run['method']}"]
        print(
            f"  {run['label']}, {run['method']}: {entry['native_seconds']:.3f} s (score {entry['native_score']:.6f})"
        )


def _row(n_r: int, n_s: int, run: dict, ours: dict, ref: dict | None) -> str:
    head = f"| {n_r} x {n_s} | {run['label']} | {run['method']} |"
    if ref is None:
        return f"{head} not run | {ours['seconds']:.3f} s | — | — |"
    ratio = ref["seconds"] / ours["seconds"]
    delta = abs(ref["score"] - ours["score"])
    return f"{head} {ref['seconds']:.2f} s | {ours['seconds']:.3f} s | {ratio:.0f}x | {delta:.1e} |"


if __name__ == "__main__":
    main()
