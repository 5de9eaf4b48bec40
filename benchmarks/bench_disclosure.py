# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: DisclosureProtection (cap, zero_cap, generalized_cap) in synthrisk vs SDMetrics 0.32.

Run from the repository root::

    .venv/bin/python benchmarks/bench_disclosure.py                  # 2k, 5k, 10k rows + synthrisk at full size
    .venv/bin/python benchmarks/bench_disclosure.py --full           # SDMetrics at full size too (about 15 min)
    .venv/bin/python benchmarks/bench_disclosure.py --ref-venv /path/to/sdmetrics-venv

Data: real = adults_train_reconstructed.csv, synthetic = adults_syn_ctgan.csv (from
../shared/data/adults), the same random row sample for both libraries at each size.
The attacker knows age (10 equal-width bins), sex and race and guesses income (one
sensitive column) or income and marital status (two). Each library runs in its own
child process on the same CSV files; times are wall seconds of the
``compute_breakdown`` call alone (synthrisk through its drop-in
``synthrisk.compat.sdmetrics``, after a tiny warm-up call that loads its compiled
kernels). At full size synthrisk is also timed through its own API on the whole
15-column table (``DisclosureProtection(...).compute(real, synthetic)``, which
validates and normalises every column).
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
CONFIGS = {"1 sensitive": ["income"], "2 sensitive": ["income", "marital"]}
METHODS = ("cap", "zero_cap", "generalized_cap")

SDMETRICS_CODE = r"""
import json, os, resource, time, warnings
import pandas as pd
from sdmetrics.single_table import DisclosureProtection
p = json.load(open(os.environ["PAYLOAD"]))
real, syn = pd.read_csv(p["real"]), pd.read_csv(p["synthetic"])
warnings.simplefilter("ignore")
out = {}
for config, sensitive in p["configs"].items():
    for method in p["methods"]:
        t = time.perf_counter()
        b = DisclosureProtection.compute_breakdown(real, syn, p["known"], sensitive, method, ["age"], 10)
        out[f"{config}|{method}"] = {"seconds": time.perf_counter() - t, "score": float(b["score"]),
                                     "cap": float(b["cap_protection"])}
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

SYNTHRISK_CODE = r"""
import json, os, resource, time
import pandas as pd
import synthrisk
from synthrisk.compat.sdmetrics import DisclosureProtection
p = json.load(open(os.environ["PAYLOAD"]))
real, syn = pd.read_csv(p["real"]), pd.read_csv(p["synthetic"])
for method in p["methods"]:  # warm-up: imports and compiled kernels from numba's cache
    DisclosureProtection.compute_breakdown(real.head(50), syn.head(50), p["known"], ["income"], method, ["age"], 10)
out = {}
for config, sensitive in p["configs"].items():
    for method in p["methods"]:
        t = time.perf_counter()
        b = DisclosureProtection.compute_breakdown(real, syn, p["known"], sensitive, method, ["age"], 10)
        out[f"{config}|{method}"] = {"seconds": time.perf_counter() - t, "score": float(b["score"]),
                                     "cap": float(b["cap_protection"])}
        if p["native"]:
            metric = synthrisk.DisclosureProtection(known_column_names=p["known"], sensitive_column_names=sensitive,
                                                    computation_method=method, continuous_column_names=["age"])
            t = time.perf_counter()
            result = metric.compute(real, syn)
            out[f"{config}|{method}"]["native_seconds"] = time.perf_counter() - t
            out[f"{config}|{method}"]["native_score"] = result.score
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
        "| rows (real x synthetic) | sensitive | method | SDMetrics 0.32 | synthrisk | speed-up | |Δ score| |",
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
            payload = {
                **paths,
                "known": KNOWN,
                "configs": CONFIGS,
                "methods": list(METHODS),
                "native": n is None,
            }
            ours = run_child(sys.executable, SYNTHRISK_CODE, payload)
            ref = (
                run_child(ref_python, SDMETRICS_CODE, payload)
                if (n is not None or args.full)
                else None
            )
            peaks.append(
                (
                    f"{len(r)} x {len(s)}",
                    ref["peak_mib"] if ref else None,
                    ours["peak_mib"],
                )
            )
            for config in CONFIGS:
                for method in METHODS:
                    key = f"{config}|{method}"
                    line = _row(
                        len(r),
                        len(s),
                        config,
                        method,
                        ours[key],
                        None if ref is None else ref[key],
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
    for config in CONFIGS:
        for method in METHODS:
            entry = full[f"{config}|{method}"]
            print(
                f"  {config}, {method}: {entry['native_seconds']:.3f} s (score {entry['native_score']:.6f})"
            )


def _row(
    n_r: int, n_s: int, config: str, method: str, ours: dict, ref: dict | None
) -> str:
    head = f"| {n_r} x {n_s} | {config} | {method} |"
    if ref is None:
        return f"{head} not run | {ours['seconds']:.3f} s | — | — |"
    ratio = ref["seconds"] / ours["seconds"]
    delta = abs(ref["score"] - ours["score"])
    return f"{head} {ref['seconds']:.2f} s | {ours['seconds']:.3f} s | {ratio:.0f}x | {delta:.1e} |"


if __name__ == "__main__":
    main()
