# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: singling out, linkability and inference in synthrisk vs Anonymeter 1.1 on Adult.

Run from the repository root::

    .venv/bin/python benchmarks/bench_anonymeter.py
    .venv/bin/python benchmarks/bench_anonymeter.py --ref-venv /path/to/anonymeter-1.1-venv
    .venv/bin/python benchmarks/bench_anonymeter.py --quick        # 1/4 of the attacks, for a smoke test
    .venv/bin/python benchmarks/bench_anonymeter.py --rows 5000 --so-attacks 500 --rounds 2 --repeats 3

Data (``../shared/data/adults``): ori / real = ``adults_train_reconstructed.csv``
(39,032 rows), syn = ``adults_syn_ctgan.csv`` (39,040), control / holdout =
``adults_control.csv`` (9,758). Attacks:

* singling out, multivariate, 3 columns, 2,000 queries;
* linkability with the attacker's two datasets ``type_employer, education, occupation,
  race, sex`` and ``age, marital, relationship, country, income``, as many targets as
  holdout rows (9,758), 10 neighbours computed (k = 1 and k = 10 reported);
* inference of ``income`` and of ``age`` from all other columns, 9,758 targets.

``--rows N`` keeps the first N rows of each file (targets: the holdout rows kept);
``--so-attacks`` sets the number of singling-out queries.

Each library runs in its own child process on the same CSV files; ``--rounds`` runs the
two children alternately (synthrisk, then Anonymeter, and again), each timing every
attack ``--repeats`` times, so that both see the same machine load; the tables give the
medians, and the load average is printed before and after every child. Times are wall
seconds of the evaluation alone: Anonymeter's ``evaluate()`` after a tiny warm-up call
that compiles its numba kernel (about 12 s per process, not counted), synthrisk's
``Metric.compute`` (validation and encoding included) after a tiny warm-up call that
loads its cached kernels. synthrisk is timed in its default (fixed) behaviour and with
``compat="anonymeter-1.1"`` (the side-by-side numbers), each with its ratio to Anonymeter.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA, adult_metadata, reference_python, run_child

SPLIT = (
    ["type_employer", "education", "occupation", "race", "sex"],
    ["age", "marital", "relationship", "country", "income"],
)

ANONYMETER_CODE = r"""
import json, os, resource, time, warnings
import numpy as np
import pandas as pd
from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator
warnings.simplefilter("ignore")
p = json.load(open(os.environ["PAYLOAD"]))
ori, syn, control = (pd.read_csv(p[k], nrows=p["rows"]) for k in ("real", "synthetic", "holdout"))
aux_all = lambda secret: [c for c in ori.columns if c != secret]
t = time.perf_counter()  # numba JIT, once per process
InferenceEvaluator(ori=ori.head(30), syn=syn.head(30), control=control.head(30), aux_cols=aux_all("income"),
                   secret="income", n_attacks=5).evaluate(n_jobs=-2)
jit = time.perf_counter() - t
def risk(res):
    r = res.risk()
    return {"risk": r.value, "ci": list(r.ci), "main": list(res.attack_rate), "baseline": list(res.baseline_rate),
            "control": list(res.control_rate), "counts": [float(res.n_success), float(res.n_baseline), float(res.n_control)]}
out = {"jit_seconds": jit}
for _ in range(p["repeats"]):
    np.random.seed(0)
    t = time.perf_counter()
    so = SinglingOutEvaluator(ori=ori, syn=syn, control=control, n_attacks=p["so_attacks"], n_cols=3, seed=0)
    so.evaluate(mode="multivariate")
    seconds = time.perf_counter() - t
    out["singling_out"] = {"seconds": out.get("singling_out", {}).get("seconds", []) + [seconds], **risk(so.results())}
    t = time.perf_counter()
    li = LinkabilityEvaluator(ori=ori, syn=syn, control=control, aux_cols=p["split"], n_attacks=p["link_attacks"],
                              n_neighbors=10).evaluate(n_jobs=-2)
    seconds = time.perf_counter() - t
    out["linkability"] = {"seconds": out.get("linkability", {}).get("seconds", []) + [seconds],
                          **risk(li.results()), "k1": risk(li.results(n_neighbors=1))}
    for secret in ("income", "age"):
        t = time.perf_counter()
        inf = InferenceEvaluator(ori=ori, syn=syn, control=control, aux_cols=aux_all(secret), secret=secret,
                                 n_attacks=p["inf_attacks"]).evaluate(n_jobs=-2)
        seconds = time.perf_counter() - t
        key = "inference_" + secret
        out[key] = {"seconds": out.get(key, {}).get("seconds", []) + [seconds], **risk(inf.results())}
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

SYNTHRISK_CODE = r"""
import json, os, resource, time, warnings
import pandas as pd
from synthrisk import InferenceRisk, LinkabilityRisk, SinglingOutRisk
p = json.load(open(os.environ["PAYLOAD"]))
ori, syn, control = (pd.read_csv(p[k], nrows=p["rows"]) for k in ("real", "synthetic", "holdout"))
md = p["metadata"]
metrics = {
    "singling_out": lambda c: SinglingOutRisk(n_attacks=p["so_attacks"], n_cols=3, compat=c),
    "linkability": lambda c: LinkabilityRisk(aux_cols=p["split"], n_attacks=p["link_attacks"], n_neighbors=10, compat=c),
    "inference_income": lambda c: InferenceRisk(secret="income", n_attacks=p["inf_attacks"], compat=c),
    "inference_age": lambda c: InferenceRisk(secret="age", n_attacks=p["inf_attacks"], compat=c),
}
for make in metrics.values():  # load the cached numba kernels
    make(None).compute(ori.head(60), syn.head(60), control.head(60), metadata=md)
def summary(res):
    b = res.breakdown
    return {"risk": res.score, "ci": list(res.ci) if res.ci else None,
            "main": [b["attack_rate"]["value"], b["attack_rate"]["error"]],
            "baseline": [b["baseline_rate"]["value"], b["baseline_rate"]["error"]],
            "control": [b["control_rate"]["value"], b["control_rate"]["error"]],
            "counts": [b["n_success"]["main"], b["n_success"]["baseline"], b["n_success"]["control"]]}
out = {}
for name, make in metrics.items():
    for compat in (None, "anonymeter-1.1"):
        seconds = []
        for _ in range(p["repeats"]):
            t = time.perf_counter()
            res = make(compat).compute(ori, syn, control, metadata=md, seed=0)
            seconds.append(time.perf_counter() - t)
        entry = {"seconds": seconds, **summary(res)}
        if name == "linkability":
            k1 = res.breakdown["by_n_neighbors"]["1"]
            entry["k1"] = {"risk": k1["risk"], "ci": k1["risk_ci"], "counts": list(k1["n_success"].values())}
        out[name + ("" if compat is None else "_compat")] = entry
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

ATTACKS = ("singling_out", "linkability", "inference_income", "inference_age")


def _labels(so_attacks: int, targets: int) -> dict[str, str]:
    return {
        "singling_out": f"singling out, multivariate, {so_attacks:,} queries",
        "linkability": f"linkability, {targets:,} targets, k = 10",
        "inference_income": f"inference of `income`, {targets:,} targets",
        "inference_age": f"inference of `age`, {targets:,} targets",
    }


def _risk(entry: dict) -> str:
    if entry.get("risk") is None:
        return "undefined"
    lo, hi = entry["ci"]
    return f"{entry['risk']:.4f} [{lo:.4f}, {hi:.4f}]"


def _counts(entry: dict) -> str:
    return " / ".join("—" if c is None else f"{c:g}" for c in entry["counts"])


def _load() -> str:
    return "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def _merge(runs: list[dict]) -> dict:
    """The last run's numbers with every run's seconds (one list per attack)."""
    out = dict(runs[-1])
    for key, entry in out.items():
        if isinstance(entry, dict) and "seconds" in entry:
            out[key] = {
                **entry,
                "seconds": [t for run in runs for t in run[key]["seconds"]],
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--ref-venv", type=Path, default=None, help="venv with anonymeter==1.1.0"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a quarter of the attacks (smoke test)"
    )
    parser.add_argument(
        "--rows", type=int, default=None, help="first ROWS rows of each file (all)"
    )
    parser.add_argument(
        "--so-attacks", type=int, default=2000, help="singling-out queries (2000)"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="alternate runs of both children (1)"
    )
    parser.add_argument(
        "--repeats", type=int, default=1, help="timings of each attack per child (1)"
    )
    args = parser.parse_args()
    ref_python = reference_python(args.ref_venv, "anonymeter")
    scale = 4 if args.quick else 1
    n_holdout = 9758 if args.rows is None else min(args.rows, 9758)
    so_attacks = args.so_attacks // scale
    targets = n_holdout // scale
    payload = {
        "real": str(args.data / "adults_train_reconstructed.csv"),
        "synthetic": str(args.data / "adults_syn_ctgan.csv"),
        "holdout": str(args.data / "adults_control.csv"),
        "rows": args.rows,
        "repeats": args.repeats,
        "so_attacks": so_attacks,
        "link_attacks": targets,
        "inf_attacks": targets,
        "split": [list(s) for s in SPLIT],
        "metadata": adult_metadata(),
    }
    print(f"cores {os.cpu_count()}, {_load()}", flush=True)
    ours_runs, ref_runs = [], []
    for r in range(args.rounds):
        print(f"round {r + 1}/{args.rounds}: synthrisk ...", flush=True)
        ours_runs.append(run_child(sys.executable, SYNTHRISK_CODE, payload))
        print(f"  {_load()}; Anonymeter 1.1 ...", flush=True)
        ref_runs.append(run_child(ref_python, ANONYMETER_CODE, payload))
        print(f"  {_load()}", flush=True)
    ours, ref = _merge(ours_runs), _merge(ref_runs)
    labels = _labels(so_attacks, targets)
    rows = "all rows" if args.rows is None else f"first {args.rows:,} rows of each file"
    print(
        f"\n{rows}; medians of {len(ref['singling_out']['seconds'])} timings per attack "
        f"and library ({args.rounds} round(s) of {args.repeats})"
    )
    print(
        "\n| attack | Anonymeter 1.1 | synthrisk | speed-up | synthrisk compat 1.1 | speed-up |"
    )
    print("|---|---|---|---|---|---|")
    for key in ATTACKS:
        t_ref = statistics.median(ref[key]["seconds"])
        t_ours = statistics.median(ours[key]["seconds"])
        t_compat = statistics.median(ours[key + "_compat"]["seconds"])
        print(
            f"| {labels[key]} | {t_ref:.2f} s | {t_ours:.3f} s | {t_ref / t_ours:.0f}× "
            f"| {t_compat:.3f} s | {t_ref / t_compat:.0f}× |"
        )
    print(
        f"\nAnonymeter's one-off numba compilation: {ref['jit_seconds']:.1f} s (not counted). "
        f"Peak RSS: Anonymeter {ref['peak_mib']:.0f} MiB, synthrisk {ours['peak_mib']:.0f} MiB."
    )
    print("\nEvery timing (s), Anonymeter; synthrisk; synthrisk compat 1.1:")
    for key in ATTACKS:
        print(
            f"  {key}: "
            + "; ".join(
                " ".join(f"{t:.3f}" for t in entry[name]["seconds"])
                for entry, name in ((ref, key), (ours, key), (ours, key + "_compat"))
            )
        )
    print("\n| attack | Anonymeter 1.1 risk [95 % CI] | synthrisk compat 1.1 | synthrisk default | "
          "successes main / baseline / control (Anonymeter; compat; default) |")  # fmt: skip
    print("|---|---|---|---|---|")
    for key in ATTACKS:
        a, c, d = ref[key], ours[key + "_compat"], ours[key]
        print(
            f"| {labels[key]} | {_risk(a)} | {_risk(c)} | {_risk(d)} | {_counts(a)}; {_counts(c)}; {_counts(d)} |"
        )
        if key == "linkability":
            a1, c1, d1 = a["k1"], c["k1"], d["k1"]
            print(
                f"| linkability, k = 1 | {_risk(a1)} | {_risk(c1)} | {_risk(d1)} | "
                f"{_counts(a1)}; {_counts(c1)}; {_counts(d1)} |"
            )


if __name__ == "__main__":
    main()
