# SPDX-License-Identifier: BSD-3-Clause
"""The generator audit on generators whose answer is known, through the real command line.

Usage (from the repository root)::

    python benchmarks/bench_audit_known.py --data ../shared/data/adults --work WORK \
        --cases rr:1:0,rr:1:1,rr:1:2,rr:0.25:0,rr:2:0,copier,crash,silent,wrong-column

Writes disjoint seeded Adult samples to ``WORK`` (``known_eps_generators.py samples``:
real = 1,000 rows of ``adults_train_reconstructed.csv``, holdout = 1,000 rows of
``adults_control.csv``, 14 columns) and runs ``synthrisk audit --generator-cmd`` on each
case, 200 runs (``--runs``), the default 10 targets and six attacks, 95 %:

``rr:EPS:SEED``
    randomized response on records, exactly EPS-DP (``known_eps_generators.py rr``),
    audited with ``--seed SEED``;
``copier``
    the training rows themselves, gated with ``--max-epsilon 1`` (must exit 1);
``crash``, ``silent``, ``wrong-column``
    generators that fail every run (must exit 4 and say why, on the console and in
    the JSON).

Prints one Markdown row per case (every bound method, the headline, wall time, runs per
minute, exit code) and the load average, then the console's last lines of the failing
cases.

``--in-process-seeds N --epsilon E`` instead audits the same randomized response over
seeds 0 … N-1 with ``synthrisk.audit.audit`` in this process (the script's function on
temporary files, no interpreter per run) and prints the headline's median, its spread and
how often it reaches 0.85 or exceeds ε.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GENERATORS = HERE / "known_eps_generators.py"
METHODS = ("clopper_pearson", "one_run", "guesses", "trade_off", "gdp_mu")


def command(case: str, work: Path) -> tuple[str, list[str], float | None]:
    """``(generator template, extra CLI arguments, true ε or None)`` of one case."""
    gen = f"{shlex.quote(sys.executable)} {shlex.quote(str(GENERATORS))}"
    io = "--train {train} --out {out} --seed {seed}"
    kind, *rest = case.split(":")
    if kind == "rr":
        eps, seed = float(rest[0]), int(rest[1]) if len(rest) > 1 else 0
        universe = shlex.quote(str(work / "universe.csv"))
        template = f"{gen} rr --epsilon {eps:g} --universe {universe} {io}"
        return template, ["--seed", str(seed)], eps
    if kind == "copier":
        return f"{gen} copier {io}", ["--max-epsilon", "1"], None
    if kind in ("crash", "silent", "wrong-column"):
        return f"{gen} {kind} {io}", ["--max-epsilon", "1"], None
    msg = f"unknown case {case!r}"
    raise SystemExit(msg)


class InProcessRR:
    """``known_eps_generators.py rr`` called in this process, through temporary CSV files."""

    def __init__(self, universe: Path, epsilon: float) -> None:
        self.universe, self.epsilon = universe, epsilon

    def __call__(self, train, n, seed):  # type: ignore[no-untyped-def]
        import tempfile

        import pandas as pd

        sys.path.insert(0, str(HERE))
        from known_eps_generators import randomized_response

        with tempfile.TemporaryDirectory() as tmp:
            train.to_csv(Path(tmp) / "train.csv", index=False)
            randomized_response(
                Path(tmp) / "train.csv",
                Path(tmp) / "out.csv",
                universe=self.universe,
                epsilon=self.epsilon,
                seed=seed,
            )
            return pd.read_csv(Path(tmp) / "out.csv")


def in_process(work: Path, epsilon: float, seeds: int, runs: int) -> None:
    """The headline over seeds, the audit called in this process."""
    import numpy as np
    import pandas as pd

    from synthrisk.audit import audit

    real = pd.read_csv(work / "real.csv")
    holdout = pd.read_csv(work / "holdout.csv")
    got = []
    tick = time.perf_counter()
    for seed in range(seeds):
        result = audit(
            InProcessRR(work / "universe.csv", epsilon),
            real,
            holdout,
            n_runs=runs,
            seed=seed,
        )
        got.append(result.epsilon_lower)
        print(
            f"seed {seed}: {result.epsilon_lower:.3f} ({result.best_attack})",
            flush=True,
        )
    v = np.asarray(got)
    print(
        f"\nε = {epsilon:g}, {seeds} seeds, {runs} runs: median {np.median(v):.3f}, "
        f"min {v.min():.3f}, max {v.max():.3f}, ≥ 0.85 in {int((v >= 0.85).sum())}, "
        f"> ε in {int((v > epsilon).sum())}; {time.perf_counter() - tick:.0f} s, "
        f"load {os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, default=HERE.parents[1] / "shared/data/adults"
    )
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument(
        "--cases",
        default="rr:1:0,rr:1:1,rr:1:2,rr:0.25:0,rr:2:0,copier,crash,silent,wrong-column",
    )
    parser.add_argument("--in-process-seeds", type=int, default=0)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    samples = [sys.executable, str(GENERATORS), "samples", "--data", str(args.data)]
    subprocess.run(
        [*samples, "--out", str(args.work)],
        check=True,
    )
    if args.in_process_seeds:
        in_process(args.work, args.epsilon, args.in_process_seeds, args.runs)
        return
    print(f"load before: {os.getloadavg()[0]:.2f}\n")
    print(
        "| case | true ε | exit | selected (attack, method) | "
        + " | ".join(METHODS)
        + " | completed / failed | wall s | runs / min | load after |"
    )
    print("|" + " --- |" * (len(METHODS) + 8))
    consoles = []
    for case in args.cases.split(","):
        template, extra, eps = command(case, args.work)
        out = args.work / f"{case.replace(':', '_')}.json"
        cli = [sys.executable, "-m", "synthrisk", "audit"]
        cli += ["--real", str(args.work / "real.csv")]
        cli += ["--holdout", str(args.work / "holdout.csv")]
        cli += ["--generator-cmd", template, "--runs", str(args.runs)]
        cli += ["--json", str(out), *extra]
        if os.path.exists(out):
            out.unlink()
        tick = time.perf_counter()
        done = subprocess.run(cli, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - tick
        console = (done.stdout + done.stderr).strip().splitlines()
        if not out.exists():
            print(f"| {case} | | {done.returncode} | no JSON written |")
            consoles.append((case, done.returncode, console[-12:], None))
            continue
        d = json.loads(out.read_text())
        b, runs = d["bounds"], d["runs"]
        head = (
            f"**{b['selected']:.3f}** ({b['selected_attack']}, {b['selected_method']})"
        )
        cells = [f"{(b[m] or 0.0):.3f}" for m in METHODS]
        print(
            f"| {case} | {'' if eps is None else f'{eps:g}'} | {done.returncode} | {head} | "
            + " | ".join(cells)
            + f" | {runs['completed']} / {runs['failed']} | {wall:.0f} | "
            f"{args.runs / wall * 60:.0f} | {os.getloadavg()[0]:.2f} |",
            flush=True,
        )
        if eps is not None and b["selected"] > eps:
            print(
                f"<!-- {case}: the headline {b['selected']:.3f} exceeds ε = {eps:g} -->"
            )
        if eps is None:
            shown = {"verdict": d.get("verdict"), "first failure": d["failures"][:1]}
            consoles.append((case, done.returncode, console[-12:], shown))
    for case, code, lines, verdict in consoles:
        print(f"\n{case}: exit {code}; console (last lines):")
        print("\n".join(f"    {line}" for line in lines))
        if verdict:
            print(f"    JSON: {json.dumps(verdict, ensure_ascii=False)[:900]}")


if __name__ == "__main__":
    main()
