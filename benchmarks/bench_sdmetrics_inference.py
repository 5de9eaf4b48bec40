# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: SDMetrics' inference metrics and NewRowSynthesis in synthrisk vs SDMetrics 0.32.

Run from the repository root::

    .venv/bin/python benchmarks/bench_sdmetrics_inference.py              # default sizes
    .venv/bin/python benchmarks/bench_sdmetrics_inference.py --rows 2000 --metrics NumericalLR
    .venv/bin/python benchmarks/bench_sdmetrics_inference.py --ref-venv /path/to/sdmetrics-venv --data DIR

Data: real = adults_train_reconstructed.csv, synthetic = adults_syn_ctgan.csv (from
../shared/data/adults); at each size the same seeded row sample of both files goes to both
libraries. Categorical attackers know education, sex, race and relationship and guess
income; numerical attackers know age and education_num and guess hours per week. The
ensemble votes NB, KNN and RF. Each library runs in its own child process (synthrisk
through ``synthrisk.compat.sdmetrics``); the table gives the wall seconds and the CPU
seconds (all threads of the process) of the ``compute`` call, and the ratio of the CPU
seconds, which a busy machine distorts less than the wall seconds. SDMetrics' RF and MLP
are unseeded: numpy's global RNG is seeded with 0 before the call, which draws the same
stream as synthrisk's ``seed=0``, so their scores agree too. The radius attacker runs at
``--radius-rows`` rows: SDMetrics' loop makes ``n_real * n_synthetic`` pairs of
``DataFrame.iloc`` calls; synthrisk runs it with ``mode="sdmetrics"`` (SDMetrics' radius
guess, which its default fixes) and also prints its default score. ``--full`` also times synthrisk alone on the whole files.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA, reference_python, run_child

KEYS_CAT = ["education", "sex", "race", "relationship"]
SENS_CAT = ["income"]
KEYS_NUM = ["age", "education_num"]
SENS_NUM = ["hr_per_week"]
CATEGORICAL = [
    "CategoricalKNN",
    "CategoricalNB",
    "CategoricalRF",
    "CategoricalSVM",
    "CategoricalEnsemble",
]
NUMERICAL = [
    "NumericalLR",
    "NumericalMLP",
    "NumericalSVR",
    "NumericalRadiusNearestNeighbor",
]
ALL = [*CATEGORICAL, *NUMERICAL, "NewRowSynthesis"]

CODE = r"""
import json, os, sys, time, warnings
import numpy as np, pandas as pd
warnings.simplefilter("ignore")
p = json.load(open(os.environ["PAYLOAD"]))
if p["library"] == "sdmetrics":
    from sdmetrics.single_table import NewRowSynthesis
    from sdmetrics.single_table import privacy as mod
    from sdmetrics.single_table.privacy import categorical_sklearn as attackers
else:
    from synthrisk.compat import sdmetrics as mod
    from synthrisk.compat.sdmetrics import NewRowSynthesis
    attackers = mod
real = pd.read_csv(p["real"])
synthetic = pd.read_csv(p["synthetic"])
name = p["metric"]
np.random.seed(0)
start, cpu = time.perf_counter(), time.process_time()
if name == "NewRowSynthesis":
    score = NewRowSynthesis.compute(real, synthetic, p["metadata"])
else:
    cls = getattr(mod, name)
    kwargs = {"key_fields": p["keys"], "sensitive_fields": p["sensitive"]}
    if name == "CategoricalEnsemble":
        kwargs["model_kwargs"] = {"attackers": [attackers.CategoricalNBAttacker, attackers.CategoricalKNNAttacker,
                                                attackers.CategoricalRFAttacker]}
    if p["library"] == "synthrisk" and name == "NumericalRadiusNearestNeighbor":
        # SDMetrics' radius guess (Σ over all synthetic rows / neighbours); the default fixes it
        kwargs["mode"] = "sdmetrics"
    cols = p["keys"] + p["sensitive"]
    score = cls.compute(real[cols], synthetic[cols], **kwargs)
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
out = {"seconds": seconds, "cpu": cpu, "score": float(score)}
if kwargs.get("mode") == "sdmetrics":
    kwargs["mode"] = "default"
    out["score_default"] = float(cls.compute(real[cols], synthetic[cols], **kwargs))
print(json.dumps(out))
"""


def _payload(metric: str, paths: dict[str, str], metadata: dict) -> dict:
    categorical = metric.startswith("Categorical")
    return {
        **paths,
        "metric": metric,
        "keys": KEYS_CAT if categorical else KEYS_NUM,
        "sensitive": SENS_CAT if categorical else SENS_NUM,
        "metadata": metadata,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref-venv", type=Path, default=None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--rows", type=int, default=10_000, help="rows of each table (both libraries)"
    )
    parser.add_argument(
        "--radius-rows",
        type=int,
        default=500,
        help="rows for NumericalRadiusNearestNeighbor",
    )
    parser.add_argument("--metrics", default=",".join(ALL))
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds per SDMetrics call"
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="also time synthrisk alone on the whole files",
    )
    args = parser.parse_args()
    ref_python = reference_python(args.ref_venv, "sdmetrics")
    real_all = pd.read_csv(args.data / "adults_train_reconstructed.csv")
    syn_all = pd.read_csv(args.data / "adults_syn_ctgan.csv")
    numeric = {
        "age",
        "fnlwgt",
        "education_num",
        "capital_gain",
        "capital_loss",
        "hr_per_week",
    }
    metadata = {
        "columns": {
            c: {"sdtype": "numerical" if c in numeric else "categorical"}
            for c in real_all.columns
        }
    }
    lines = [
        "| metric | rows | SDMetrics 0.32 wall / CPU (s) | synthrisk wall / CPU (s) | CPU ratio "
        "| SDMetrics score | synthrisk score |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for metric in args.metrics.split(","):
            rows = (
                args.radius_rows
                if metric == "NumericalRadiusNearestNeighbor"
                else args.rows
            )
            real = real_all.sample(n=min(rows, len(real_all)), random_state=0)
            syn = syn_all.sample(n=min(rows, len(syn_all)), random_state=1)
            paths = {
                "real": f"{tmp}/real_{rows}.csv",
                "synthetic": f"{tmp}/syn_{rows}.csv",
            }
            real.to_csv(paths["real"], index=False)
            syn.to_csv(paths["synthetic"], index=False)
            payload = _payload(metric, paths, metadata)
            ours = run_child(sys.executable, CODE, {**payload, "library": "synthrisk"})
            try:
                ref = run_child(
                    ref_python,
                    CODE,
                    {**payload, "library": "sdmetrics"},
                    timeout=args.timeout,
                )
                ref_s, ref_score, ratio = (
                    f"{ref['seconds']:.2f} / {ref['cpu']:.2f}",
                    f"{ref['score']:.6f}",
                    f"{ref['cpu'] / ours['cpu']:.0f}x",
                )
            except Exception as exc:
                ref_s, ref_score, ratio = f"failed ({type(exc).__name__})", "-", "-"
            label, score = metric, f"{ours['score']:.6f}"
            if "score_default" in ours:
                label += " (`mode='sdmetrics'`)"
                score += f" (default mode: {ours['score_default']:.6f})"
            line = (
                f"| {label} | {len(real)} | {ref_s} | {ours['seconds']:.2f} / {ours['cpu']:.2f} "
                f"| {ratio} | {ref_score} | {score} |"
            )
            print(line, flush=True)
            lines.append(line)
        if args.full:
            paths = {
                "real": str(args.data / "adults_train_reconstructed.csv"),
                "synthetic": str(args.data / "adults_syn_ctgan.csv"),
            }
            for metric in args.metrics.split(","):
                ours = run_child(
                    sys.executable,
                    CODE,
                    {**_payload(metric, paths, metadata), "library": "synthrisk"},
                )
                line = (
                    f"| {metric} (synthrisk only) | {len(real_all)} | - "
                    f"| {ours['seconds']:.2f} / {ours['cpu']:.2f} | - | - | {ours['score']:.6f} |"
                )
                print(line, flush=True)
                lines.append(line)
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
