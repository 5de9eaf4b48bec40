# SPDX-License-Identifier: BSD-3-Clause
"""Statistical equivalence of synthrisk (``compat="anonymeter-1.1"``) and Anonymeter 1.1.

Anonymeter's random parts (query sampling, target sampling, numba's tie order) cannot
be reproduced digit for digit, so equivalence is judged statistically: for every seed,
attack (singling out, linkability, inference) and rate (main attack, baseline,
control), the two 95 % intervals ``value ± error`` must overlap. Run from the
repository root::

    .venv/bin/python scripts/compare_anonymeter.py                       # Adult + generated, 5 seeds
    .venv/bin/python scripts/compare_anonymeter.py --ref-venv /path/to/anonymeter-venv --seeds 5

Data: ``../shared/data/adults`` (ori = reconstructed train, syn = CTGAN, control =
control) and generated tables (seeded; a third of the synthetic rows copy real rows,
with missing values in numeric and categorical columns). Anonymeter runs in its own
child process (one per data set, looping over the seeds). The numbers go to
``benchmarks/RESULTS.md`` (section "Anonymeter").
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _common import DEFAULT_DATA, reference_python, run_child

ADULT_SPLIT = (
    ["type_employer", "education", "occupation", "race", "sex"],
    ["age", "marital", "relationship", "country", "income"],
)
GENERATED_SPLIT = (["age", "city", "sex"], ["hours", "job", "income"])

ANONYMETER_CODE = r"""
import json, os, time, warnings
import numpy as np
import pandas as pd
from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator
warnings.simplefilter("ignore")
p = json.load(open(os.environ["PAYLOAD"]))
ori, syn, control = (pd.read_csv(p[k]) for k in ("real", "synthetic", "holdout"))
def rates(res):
    out = {"main": list(res.attack_rate), "baseline": list(res.baseline_rate),
           "control": None if res.control_rate is None else list(res.control_rate)}
    out["counts"] = [float(res.n_success), float(res.n_baseline), None if res.n_control is None else float(res.n_control)]
    return out
runs = []
for seed in p["seeds"]:
    run = {}
    t = time.perf_counter()
    so = SinglingOutEvaluator(ori=ori, syn=syn, control=control, n_attacks=p["so_attacks"], seed=seed)
    so.evaluate(mode="multivariate")
    run["singling_out"] = rates(so.results()); run["singling_out"]["seconds"] = time.perf_counter() - t
    np.random.seed(seed)
    t = time.perf_counter()
    li = LinkabilityEvaluator(ori=ori, syn=syn, control=control, aux_cols=p["split"],
                              n_attacks=p["link_attacks"], n_neighbors=p["n_neighbors"]).evaluate(n_jobs=-2)
    run["linkability"] = rates(li.results()); run["linkability"]["seconds"] = time.perf_counter() - t
    run["linkability_k1"] = rates(li.results(n_neighbors=1))
    np.random.seed(seed)
    t = time.perf_counter()
    aux = [c for c in ori.columns if c != p["secret"]]
    inf = InferenceEvaluator(ori=ori, syn=syn, control=control, aux_cols=aux, secret=p["secret"],
                             n_attacks=p["inf_attacks"]).evaluate(n_jobs=-2)
    run["inference"] = rates(inf.results()); run["inference"]["seconds"] = time.perf_counter() - t
    runs.append(run)
print(json.dumps(runs))
"""


def synthrisk_runs(
    paths: dict[str, str], payload: dict[str, Any]
) -> list[dict[str, Any]]:
    from synthrisk.compat.anonymeter import (
        InferenceEvaluator,
        LinkabilityEvaluator,
        SinglingOutEvaluator,
    )

    ori, syn, control = (
        pd.read_csv(paths[k]) for k in ("real", "synthetic", "holdout")
    )

    def rates(res: Any) -> dict[str, Any]:
        return {
            "main": list(res.attack_rate),
            "baseline": list(res.baseline_rate),
            "control": None if res.control_rate is None else list(res.control_rate),
            "counts": [res.n_success, res.n_baseline, res.n_control],
        }

    runs = []
    import warnings

    warnings.simplefilter("ignore")
    for seed in payload["seeds"]:
        run: dict[str, Any] = {}
        t = time.perf_counter()
        so = SinglingOutEvaluator(
            ori=ori,
            syn=syn,
            control=control,
            n_attacks=payload["so_attacks"],
            seed=seed,
        )
        so.evaluate(mode="multivariate")
        run["singling_out"] = {
            **rates(so.results()),
            "seconds": time.perf_counter() - t,
        }
        t = time.perf_counter()
        li = LinkabilityEvaluator(
            ori=ori, syn=syn, control=control, aux_cols=payload["split"], n_attacks=payload["link_attacks"],
            n_neighbors=payload["n_neighbors"], seed=seed,
        ).evaluate()  # fmt: skip
        run["linkability"] = {**rates(li.results()), "seconds": time.perf_counter() - t}
        run["linkability_k1"] = rates(li.results(n_neighbors=1))
        t = time.perf_counter()
        aux = [c for c in ori.columns if c != payload["secret"]]
        inf = InferenceEvaluator(
            ori=ori, syn=syn, control=control, aux_cols=aux, secret=payload["secret"],
            n_attacks=payload["inf_attacks"], seed=seed,
        ).evaluate()  # fmt: skip
        run["inference"] = {**rates(inf.results()), "seconds": time.perf_counter() - t}
        runs.append(run)
    return runs


def generated_tables(
    seed: int = 2024,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Real, synthetic (a third copies real rows) and holdout tables with missing values."""
    g = np.random.default_rng(seed)

    def draw(n: int) -> pd.DataFrame:
        age = g.integers(18, 90, n).astype(float)
        age[g.random(n) < 0.03] = np.nan
        city = pd.Series(g.choice([f"c{i:02d}" for i in range(30)], n), dtype=object)
        city[g.random(n) < 0.03] = None
        return pd.DataFrame(
            {
                "age": age,
                "hours": g.integers(5, 70, n),
                "income": np.round(g.lognormal(10, 0.7, n), -2),
                "city": city,
                "job": g.choice([f"j{i}" for i in range(12)], n),
                "sex": g.choice(["F", "M"], n),
                "married": g.choice(["yes", "no"], n),
            }
        )

    real, hold = draw(6000), draw(1500)
    syn = draw(6000)
    copied = g.choice(len(real), size=2000, replace=False)
    syn.iloc[:2000] = real.iloc[copied].to_numpy()
    return real, syn.sample(frac=1.0, random_state=seed).reset_index(drop=True), hold


def overlap(a: list[float] | None, b: list[float] | None) -> bool | None:
    if a is None or b is None:
        return None
    return abs(a[0] - b[0]) <= a[1] + b[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--ref-venv", type=Path, default=None, help="venv with anonymeter==1.1.0"
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--so-attacks", type=int, default=500)
    parser.add_argument("--link-attacks", type=int, default=2000)
    parser.add_argument("--inf-attacks", type=int, default=2000)
    parser.add_argument("--n-neighbors", type=int, default=10)
    parser.add_argument("--only", choices=["adult", "generated"], default=None)
    parser.add_argument(
        "--out", type=Path, default=None, help="write all numbers as JSON here"
    )
    args = parser.parse_args()
    ref_python = reference_python(args.ref_venv, "anonymeter")
    seeds = list(range(args.seeds))
    all_rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        datasets = []
        if args.only in (None, "adult"):
            paths = {
                "real": str(args.data / "adults_train_reconstructed.csv"),
                "synthetic": str(args.data / "adults_syn_ctgan.csv"),
                "holdout": str(args.data / "adults_control.csv"),
            }
            datasets.append(("adult", paths, ADULT_SPLIT, "income"))
        if args.only in (None, "generated"):
            real, syn, hold = generated_tables()
            paths = {
                "real": f"{tmp}/real.csv",
                "synthetic": f"{tmp}/syn.csv",
                "holdout": f"{tmp}/hold.csv",
            }
            for frame, key in ((real, "real"), (syn, "synthetic"), (hold, "holdout")):
                frame.to_csv(paths[key], index=False)
            datasets.append(("generated", paths, GENERATED_SPLIT, "job"))
        for name, paths, split, secret in datasets:
            n_holdout = len(
                pd.read_csv(paths["holdout"])
            )  # Anonymeter raises above the control size
            payload = {
                **paths, "seeds": seeds, "so_attacks": args.so_attacks, "link_attacks": min(args.link_attacks, n_holdout),
                "inf_attacks": min(args.inf_attacks, n_holdout), "n_neighbors": args.n_neighbors, "split": [list(s) for s in split],
                "secret": secret,
            }  # fmt: skip
            print(f"[{name}] Anonymeter 1.1 ...", flush=True)
            ref = run_child(ref_python, ANONYMETER_CODE, payload)
            print(f"[{name}] synthrisk (compat='anonymeter-1.1') ...", flush=True)
            ours = synthrisk_runs(paths, payload)
            all_rows[name] = {"anonymeter": ref, "synthrisk": ours}
            report(name, ref, ours, payload)
    if args.out is not None:
        args.out.write_text(json.dumps(all_rows, indent=1))


def report(name: str, ref: list[dict], ours: list[dict], p: dict[str, Any]) -> None:
    attacks = [
        ("singling_out", f"singling out (multivariate, {p['so_attacks']} queries)"),
        (
            "linkability",
            f"linkability ({p['link_attacks']} targets, k = {p['n_neighbors']})",
        ),
        ("linkability_k1", f"linkability ({p['link_attacks']} targets, k = 1)"),
        ("inference", f"inference of `{p['secret']}` ({p['inf_attacks']} targets)"),
    ]
    print(f"\n### {name}: overlap of the 95 % intervals over {len(ref)} seeds\n")
    print(
        "| attack | rate | Anonymeter 1.1 (mean ± mean error) | synthrisk (mean ± mean error) | seeds overlapping |"
    )
    print("|---|---|---|---|---|")
    total = ok = 0
    for key, label in attacks:
        for rate in ("main", "baseline", "control"):
            pairs = [
                (r[key][rate], o[key][rate]) for r, o in zip(ref, ours, strict=True)
            ]
            flags = [overlap(a, b) for a, b in pairs]
            if any(f is None for f in flags):
                continue
            total += len(flags)
            ok += sum(bool(f) for f in flags)
            ref_mean = (
                np.mean([a[0] for a, _ in pairs]),
                np.mean([a[1] for a, _ in pairs]),
            )
            our_mean = (
                np.mean([b[0] for _, b in pairs]),
                np.mean([b[1] for _, b in pairs]),
            )
            print(
                f"| {label} | {rate} | {ref_mean[0]:.4f} ± {ref_mean[1]:.4f} | {our_mean[0]:.4f} ± {our_mean[1]:.4f} "
                f"| {sum(bool(f) for f in flags)}/{len(flags)} |"
            )
    print(f"\n{ok}/{total} interval pairs overlap.")
    for key in ("singling_out", "linkability", "inference"):
        t_ref = np.mean([r[key]["seconds"] for r in ref])
        t_ours = np.mean([o[key]["seconds"] for o in ours])
        print(
            f"- {key}: mean seconds per seed Anonymeter {t_ref:.1f} s, synthrisk {t_ours:.2f} s"
        )


if __name__ == "__main__":
    main()
