# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: DCRBaselineProtection in synthrisk vs SDMetrics 0.32 on the Adult data.

Run from the repository root::

    .venv/bin/python benchmarks/bench_dcr.py                 # 2k, 5k, 10k rows + synthrisk at full size
    .venv/bin/python benchmarks/bench_dcr.py --full          # SDMetrics at full size too (about an hour)
    .venv/bin/python benchmarks/bench_dcr.py --ref-venv /path/to/sdmetrics-venv

real = adults_train_reconstructed.csv, synthetic = adults_syn_ctgan.csv, holdout =
adults_control.csv (from ../shared/data/adults). Each library runs in its own child
process on the same CSV sample, so peak memory (max RSS of the child) is its own.
Times are wall seconds of the metric call alone (files read and, for synthrisk, the
numba kernels loaded from cache by a tiny warm-up call before timing).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA, adult_metadata, reference_python, run_child

SDMETRICS_CODE = r"""
import json, os, resource, time, warnings
import pandas as pd
from sdmetrics.single_table import DCRBaselineProtection, DCROverfittingProtection
p = json.load(open(os.environ["PAYLOAD"]))
real, syn = pd.read_csv(p["real"]), pd.read_csv(p["synthetic"])
warnings.simplefilter("ignore")
t = time.perf_counter()
out = DCRBaselineProtection.compute_breakdown(real, syn, p["metadata"], None)
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "score": float(out["score"]),
                  "median_syn": float(out["median_DCR_to_real_data"]["synthetic_data"]),
                  "median_rand": float(out["median_DCR_to_real_data"]["random_data_baseline"]),
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

SYNTHRISK_CODE = r"""
import json, os, resource, time
import pandas as pd
import synthrisk
p = json.load(open(os.environ["PAYLOAD"]))
real, syn = pd.read_csv(p["real"]), pd.read_csv(p["synthetic"])
hold = pd.read_csv(p["holdout"]) if p.get("holdout") else None
synthrisk.DCRBaselineProtection().compute(real.head(20), syn.head(20), metadata=p["metadata"])  # load kernels
t = time.perf_counter()
out = synthrisk.DCRBaselineProtection().compute(real, syn, metadata=p["metadata"], seed=0)
seconds = time.perf_counter() - t
result = {"seconds": seconds, "score": out.score,
          "median_syn": out.breakdown["median_DCR_to_real_data"]["synthetic_data"],
          "median_rand": out.breakdown["median_DCR_to_real_data"]["random_data_baseline"]}
if hold is not None:
    t = time.perf_counter()
    over = synthrisk.DCROverfittingProtection().compute(real, syn, hold, metadata=p["metadata"])
    result["overfitting_seconds"] = time.perf_counter() - t
    result["overfitting_score"] = over.score
result["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(result))
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
        "--full",
        action="store_true",
        help="also run SDMetrics on the full data (about an hour)",
    )
    args = parser.parse_args()

    ref_python = reference_python(args.ref_venv, "sdmetrics")
    real = pd.read_csv(args.data / "adults_train_reconstructed.csv")
    syn = pd.read_csv(args.data / "adults_syn_ctgan.csv")
    hold = pd.read_csv(args.data / "adults_control.csv")
    metadata = adult_metadata()
    rng = np.random.default_rng(0)
    order_real, order_syn = rng.permutation(len(real)), rng.permutation(len(syn))
    sizes = [int(s) for s in args.sizes.split(",") if s]
    rows = []
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
            payload = {**paths, "metadata": metadata}
            if n is None:
                hold.to_csv(f"{tmp}/hold.csv", index=False)
                payload["holdout"] = f"{tmp}/hold.csv"
            ours = run_child(sys.executable, SYNTHRISK_CODE, payload)
            ref = (
                run_child(ref_python, SDMETRICS_CODE, payload)
                if (n is not None or args.full)
                else None
            )
            rows.append((label, len(r), len(s), ours, ref))
            print(_row(label, len(r), len(s), ours, ref), flush=True)
    print()
    print(
        "| rows (real × synthetic) | SDMetrics 0.32 | synthrisk | speed-up | |Δ median DCR syn→real| | peak RSS SDMetrics | peak RSS synthrisk |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, n_r, n_s, ours, ref in rows:
        print(_row(label, n_r, n_s, ours, ref))
    full = rows[-1][3]
    print(
        f"\nfull size ({rows[-1][1]} × {rows[-1][2]}): synthrisk dcr_baseline_protection {full['seconds']:.2f} s "
        f"(score {full['score']:.4f}), dcr_overfitting_protection vs {len(hold)} holdout rows "
        f"{full['overfitting_seconds']:.2f} s (score {full['overfitting_score']:.4f}), peak RSS {full['peak_mib']:.0f} MiB"
    )


def _row(label: str, n_r: int, n_s: int, ours: dict, ref: dict | None) -> str:
    if ref is None:
        return f"| {n_r} × {n_s} | not run | {ours['seconds']:.2f} s | — | — | — | {ours['peak_mib']:.0f} MiB |"
    ratio = ref["seconds"] / ours["seconds"]
    delta = abs(ref["median_syn"] - ours["median_syn"])
    return (
        f"| {n_r} × {n_s} | {ref['seconds']:.1f} s | {ours['seconds']:.3f} s | {ratio:.0f}× | {delta:.1e} | "
        f"{ref['peak_mib']:.0f} MiB | {ours['peak_mib']:.0f} MiB |"
    )


if __name__ == "__main__":
    main()
