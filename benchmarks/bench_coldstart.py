# SPDX-License-Identifier: BSD-3-Clause
"""A user's first call: the default assessment with an empty numba cache, kernel by kernel.

Usage::

    python benchmarks/bench_coldstart.py --data path/to/adults [--json out.json]

real = the first 3,000 rows of ``adults_train_reconstructed.csv``, synthetic = the first
3,000 of ``adults_syn_ctgan.csv``, holdout = the first 1,000 of ``adults_control.csv``
(``--rows``, ``--synthetic-rows``, ``--holdout-rows``). Three fresh processes share one
new, empty numba cache (``NUMBA_CACHE_DIR`` pointed at a temporary folder):

1. *cold*: ``evaluate`` with nothing compiled (a user's first call after installing);
   numba's ``numba:compile`` events give each kernel's compile seconds (inclusive of
   the kernels it calls that compile inside it, and exclusive of them) and its number
   of signatures; further calls in the same process (``--warm-calls``, default 1)
   give the warm time;
2. *cached*: a new process whose kernels all load from the cache (a user's next call).

Prints the load average before each process, the wall time of each call, the top
kernels by compile seconds, and whether the three reports agree (timings left out).
``--json`` writes the report of the cold call (timings left out) and the kernel table.

``--searches`` times the numba neighbour searches one by one instead, in one process
with an empty cache, on the whole files: holdout against real (the grouped scan's level
lists), 10,000 synthetic against 10,000 real rows with categorical weights (its
buckets), synthetic against real with k = 5 (the first pass) and with one heavy numeric
column (the projection walk). For each: its first call, its best of three warm calls,
and the kernels its first call compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CHILD = r"""
import json, os, sys, threading, time
from timeit import default_timer as timer

from numba.core import event

compiles = {}  # (module, qualname) -> {"signatures": [...], "inclusive": s, "exclusive": s}
local = threading.local()


class Recorder(event.Listener):
    def on_start(self, ev):
        stack = getattr(local, "stack", None)
        if stack is None:
            stack = local.stack = []
        stack.append([timer(), 0.0])

    def on_end(self, ev):
        start, inner = local.stack.pop()
        took = timer() - start
        if local.stack:
            local.stack[-1][1] += took
        py = ev.data["dispatcher"].py_func
        entry = compiles.setdefault(
            f"{py.__module__}.{py.__qualname__}",
            {"signatures": [], "inclusive": 0.0, "exclusive": 0.0, "top_level": 0.0},
        )
        entry["signatures"].append(str(tuple(ev.data["args"])))
        entry["inclusive"] += took
        entry["exclusive"] += took - inner
        if not local.stack:
            entry["top_level"] += took


event.register("numba:compile", Recorder())

payload = json.loads(sys.argv[1])
t0 = time.perf_counter()
from synthrisk import evaluate
from synthrisk.io import read_table
imported = time.perf_counter() - t0
data = payload["data"]
real = read_table(os.path.join(data, "adults_train_reconstructed.csv")).head(payload["rows"])
synthetic = read_table(os.path.join(data, "adults_syn_ctgan.csv")).head(payload["synthetic_rows"])
holdout = read_table(os.path.join(data, "adults_control.csv")).head(payload["holdout_rows"])


def comparable(report):
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "seconds"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(report.to_dict(include_records=True))


if payload["searches"]:
    import numpy as np
    from synthrisk.neighbors import nearest_neighbors
    from synthrisk.schema import prepare_tables

    # whole files: the first pass and the projection walk need large searches
    tables = prepare_tables(
        read_table(os.path.join(data, "adults_train_reconstructed.csv")),
        read_table(os.path.join(data, "adults_syn_ctgan.csv")),
        read_table(os.path.join(data, "adults_control.csv")),
    )
    q, r, h = (tables.encoded(name) for name in ("synthetic", "real", "holdout"))
    n_num, n_cat = q.numeric.shape[1], q.codes.shape[1]
    cat_weights = np.concatenate([np.ones(n_num), np.linspace(0.5, 1.5, n_cat)])
    num_weights = np.full(n_num + n_cat, 0.05)
    num_weights[0] = 10.0
    head = np.arange(10_000)
    searches = {
        # holdout against real: the grouped scan's level lists
        "levels": lambda: nearest_neighbors(h, r, k=2, backend="numba"),
        # categorical weights: the grouped scan with buckets
        "weighted": lambda: nearest_neighbors(
            q.take(head), r.take(head), k=1, backend="numba", weights=cat_weights
        ),
        # synthetic against real, k = 5: the first pass
        "first_pass": lambda: nearest_neighbors(q, r, k=5, backend="numba"),
        # one heavy numeric column: the projection walk
        "walk": lambda: nearest_neighbors(q, r, k=1, backend="numba", weights=num_weights),
    }
    out = {}
    for name, search in searches.items():
        seen = {k: v["inclusive"] for k, v in compiles.items()}
        start = time.perf_counter()
        first = search()
        cold = time.perf_counter() - start
        warm = []
        for _ in range(3):
            start = time.perf_counter()
            again = search()
            warm.append(time.perf_counter() - start)
        assert np.array_equal(first.indices, again.indices)
        compiled = {
            k: v["inclusive"] - seen.get(k, 0.0)
            for k, v in compiles.items()
            if v["inclusive"] > seen.get(k, 0.0) and k.startswith("synthrisk.")
        }
        out[name] = {
            "cold": cold,
            "warm": min(warm),
            "compiled": compiled,
            "result": [first.distances.tolist(), first.indices.tolist()],
        }
    print(json.dumps({"imported": imported, "searches": out, "compiles": compiles}))
    sys.exit(0)

walls = []
reports = []
for _ in range(payload["calls"]):
    start = time.perf_counter()
    report = evaluate(real, synthetic, holdout, seed=payload["seed"])
    walls.append(time.perf_counter() - start)
    reports.append(comparable(report))
    if not walls[1:]:
        compiled_in_first = {k: dict(v) for k, v in compiles.items()}
print(json.dumps({
    "imported": imported,
    "walls": walls,
    "report": reports[0],
    "same_in_process": all(r == reports[0] for r in reports),
    "compiles": compiled_in_first,
    "compiles_after_first": {
        k: len(v["signatures"]) - len(compiled_in_first.get(k, {"signatures": []})["signatures"])
        for k, v in compiles.items()
    },
}, default=str))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="folder with the Adult CSVs"
    )
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--synthetic-rows", type=int, default=3000)
    parser.add_argument("--holdout-rows", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=15, help="kernels listed")
    parser.add_argument(
        "--warm-calls", type=int, default=1, help="warm calls after the cold one"
    )
    parser.add_argument(
        "--json", type=Path, default=None, help="write the results here"
    )
    parser.add_argument(
        "--searches",
        action="store_true",
        help="instead: the numba neighbour searches one by one, on the whole files",
    )
    args = parser.parse_args(argv)
    payload = {
        "data": str(args.data.resolve()),
        "rows": args.rows,
        "synthetic_rows": args.synthetic_rows,
        "holdout_rows": args.holdout_rows,
        "seed": args.seed,
        "searches": args.searches,
    }
    if args.searches:
        return _searches(payload, args.json)
    with tempfile.TemporaryDirectory(prefix="synthrisk-numba-cache-") as cache:
        cold = _child(
            payload | {"calls": 1 + args.warm_calls}, cache, "cold (empty cache)"
        )
        cached = _child(payload | {"calls": 1}, cache, "cached (a new process)")
    if args.warm_calls > 1:
        warm = sorted(cold["walls"][1:])
        print(f"warm calls: median {warm[len(warm) // 2]:.2f} s of {len(warm)}")
    compiles = cold["compiles"]
    total = sum(entry["top_level"] for entry in compiles.values())
    n_sigs = sum(len(entry["signatures"]) for entry in compiles.values())
    print(
        f"compiled in the cold call: {len(compiles)} kernels, {n_sigs} signatures, "
        f"{total:.1f} s in numba's compiler (outermost compiles)"
    )
    print(f"{'kernel':64s} {'sigs':>4s} {'incl. s':>8s} {'excl. s':>8s}")
    ranked = sorted(compiles.items(), key=lambda kv: -kv[1]["inclusive"])
    for name, entry in ranked[: args.top]:
        print(
            f"{name[-64:]:64s} {len(entry['signatures']):4d} "
            f"{entry['inclusive']:8.2f} {entry['exclusive']:8.2f}"
        )
    for name, entry in ranked:
        if len(entry["signatures"]) > 1:
            print(f"  {name}: {len(entry['signatures'])} signatures")
            for sig in entry["signatures"]:
                print(f"    {sig[:300]}")
    later = {k: v for k, v in cold["compiles_after_first"].items() if v}
    if later:
        print(f"compiled again in the warm call: {later}")
    same = cold["report"] == cached["report"] and cold["same_in_process"]
    print(f"reports identical (cold, warm, cached; timings left out): {same}")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "report": cold["report"],
                    "walls": {"cold": cold["walls"], "cached": cached["walls"]},
                    "load": {"cold": cold["load"], "cached": cached["load"]},
                    "compiles": compiles,
                },
                indent=1,
                sort_keys=True,
            )
        )
    return 0 if same else 1


def _searches(payload: dict[str, Any], out: Path | None) -> int:
    """Each neighbour search's first call (empty cache), its best warm call, its kernels."""
    with tempfile.TemporaryDirectory(prefix="synthrisk-numba-cache-") as cache:
        found = _child(payload | {"calls": 0}, cache, "searches (empty cache)")
    for name, entry in found["searches"].items():
        top = sorted(entry["compiled"].items(), key=lambda kv: -kv[1])[:4]
        kernels = ", ".join(f"{k.rsplit('.', 1)[-1]} {v:.1f}" for k, v in top)
        print(
            f"{name:11s} first call {entry['cold']:6.2f} s, warm {entry['warm']:.3f} s; "
            f"compiled (s, incl. nested): {kernels}"
        )
    if out is not None:
        out.write_text(json.dumps(found, indent=1, sort_keys=True))
    return 0


def _child(payload: dict[str, Any], cache: str, label: str) -> dict[str, Any]:
    load = os.getloadavg()
    env = os.environ | {"NUMBA_CACHE_DIR": cache, "PYTHONWARNINGS": "ignore"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(payload)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{label} failed:\n{done.stderr[-4000:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    found["load"] = [round(x, 2) for x in load]
    walls = ", ".join(f"{w:.1f}" for w in found.get("walls", []))
    print(
        f"{label}: process {wall:.1f} s, import {found['imported']:.1f} s, "
        f"evaluate calls [{walls}] s; load average before {found['load']}",
        flush=True,
    )
    return found


if __name__ == "__main__":
    sys.exit(main())
