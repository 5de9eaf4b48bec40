# SPDX-License-Identifier: BSD-3-Clause
"""Generators whose answer is known, as standalone commands for ``synthrisk audit --generator-cmd``.

Usage (from the repository root)::

    python benchmarks/known_eps_generators.py samples --data ../shared/data/adults --out DIR
    synthrisk audit --real DIR/real.csv --holdout DIR/holdout.csv --generator-cmd \
        "python benchmarks/known_eps_generators.py rr --epsilon 1 --universe DIR/universe.csv
         --train {train} --out {out} --seed {seed}"

Subcommands:

``samples``
    Writes disjoint seeded samples of the Adult files: ``real.csv`` (1,000 rows of
    ``adults_train_reconstructed.csv``), ``holdout.csv`` (1,000 rows of
    ``adults_control.csv``), 14 columns (``fnlwgt`` left out), and ``universe.csv``, the
    distinct records of both: the public record universe of ``rr``.
``rr --epsilon E --universe U``
    Randomized response on records, **exactly ε-DP** with respect to adding or removing
    one record (proof below). Writes every distinct record ``u`` of the universe ``U``
    independently with probability ``p = e^ε / (1 + e^ε)`` when ``u`` is in the training
    table, and ``1 - p`` when it is not; nothing else. The output has about
    ``p·|D ∩ U| + (1 - p)·|U \\ D|`` rows whatever ``{n}`` asks (about 770 rows at ε = 1
    with 505 training rows in a universe of 2,000).
``copier``
    Writes the training rows themselves, shuffled: no privacy at all.
``crash``
    Raises (non-zero exit, a Python traceback on standard error).
``silent``
    Exits 0 and writes nothing.
``wrong-column``
    Writes the training rows with the first column renamed (``age`` -> ``age_years``).

**Why ``rr`` is exactly ε-DP.** The universe ``U`` is fixed before any training table is
seen (it is an input of the mechanism, like a domain), and the output is a function of
the coins ``(b_u)`` for ``u`` in ``U`` (which records are written; their order is a
seeded shuffle, independent of the data). Given a training table ``D``, the coins are
independent with ``P(b_u = 1) = p`` if ``u ∈ D`` and ``1 - p`` otherwise, so

    P(b | D) = Π_u P(b_u | u ∈ D).

Let ``D' = D ∪ {x}`` (one record added). If ``x ∉ U``, or ``x`` already equals a record
of ``D`` (membership is by value), no factor changes and the two output distributions are
equal. Otherwise exactly one factor changes, ``b_x``'s: from ``1 - p`` to ``p`` for
``b_x = 1`` and from ``p`` to ``1 - p`` for ``b_x = 0``, ratios ``e^ε`` and ``e^-ε``. So for
every output set ``S``, ``P(S | D') ≤ e^ε P(S | D)`` and ``P(S | D) ≤ e^ε P(S | D')``
(sum over the outcomes in ``S``): ε-DP, and tight, since the test "``x`` was written"
has TPR ``p`` and FPR ``1 - p``, ratio exactly ``e^ε``. Shuffling and writing a CSV are
post-processing. No attack can therefore refute any ε' ≥ ε, and a perfect reader of the
coin is right with probability exactly ``p`` on every guess: the ceiling of
``guess_ceiling`` in ``synthrisk.audit.guessing``.

Records are compared by value after normalising each field (numbers as floats, text
stripped), so the CSV that the audit writes matches the universe file whatever number
formatting either side used. These generators need only the standard library (each
shadow run starts a fresh interpreter; no pandas import to pay for).
"""

from __future__ import annotations

import argparse
import csv
import math
import random
import sys
from pathlib import Path

Record = tuple[str, ...]


def _field(value: str) -> str:
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return repr(number) if math.isfinite(number) else text


def _read(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        msg = f"{path} is empty: expected a header and rows"
        raise SystemExit(msg)
    return rows[0], rows[1:]


def _key(row: list[str]) -> Record:
    return tuple(_field(v) for v in row)


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def randomized_response(
    train: Path, out: Path, *, universe: Path, epsilon: float, seed: int
) -> int:
    """Write the universe's records by randomized response on membership; rows written."""
    header, train_rows = _read(train)
    u_header, u_rows = _read(universe)
    if [c.strip() for c in u_header] != [c.strip() for c in header]:
        msg = f"the universe's columns {u_header} differ from the training table's {header}"
        raise SystemExit(msg)
    members = {_key(r) for r in train_rows}
    distinct: dict[Record, list[str]] = {}
    for row in u_rows:
        distinct.setdefault(_key(row), row)
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    rng = random.Random(seed)
    written = [
        row
        for key, row in distinct.items()
        if rng.random() < (p if key in members else 1 - p)
    ]
    rng.shuffle(written)
    _write(out, header, written)
    return len(written)


def copier(train: Path, out: Path, *, seed: int) -> None:
    """Write the training rows, shuffled."""
    header, rows = _read(train)
    random.Random(seed).shuffle(rows)
    _write(out, header, rows)


def wrong_column(train: Path, out: Path) -> None:
    """Write the training rows with the first column renamed."""
    header, rows = _read(train)
    _write(out, [f"{header[0]}_years", *header[1:]], rows)


def samples(
    data: Path,
    out: Path,
    *,
    n_real: int,
    n_holdout: int,
    seed: int,
    columns: list[str] | None = None,
) -> None:
    """Disjoint seeded Adult samples: real.csv, holdout.csv and universe.csv in ``out``.

    ``columns`` keeps only those columns of the same rows.
    """
    import pandas as pd

    real = pd.read_csv(data / "adults_train_reconstructed.csv").drop(columns="fnlwgt")
    holdout = pd.read_csv(data / "adults_control.csv")[real.columns]
    real = real.sample(n_real, random_state=seed).reset_index(drop=True)
    holdout = holdout.sample(n_holdout, random_state=seed + 1).reset_index(drop=True)
    if columns:
        real, holdout = real[columns], holdout[columns]
    out.mkdir(parents=True, exist_ok=True)
    real.to_csv(out / "real.csv", index=False)
    holdout.to_csv(out / "holdout.csv", index=False)
    universe = pd.concat([real, holdout], ignore_index=True).drop_duplicates()
    universe.to_csv(out / "universe.csv", index=False)
    print(
        f"real {len(real)}, holdout {len(holdout)}, universe {len(universe)} "
        f"distinct records -> {out}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("samples", help="write the Adult samples and the universe")
    s.add_argument("--data", type=Path, default=Path("../shared/data/adults"))
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--real-rows", type=int, default=1000)
    s.add_argument("--holdout-rows", type=int, default=1000)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--columns", default=None, help="comma-separated columns to keep")
    for name in ("rr", "copier", "crash", "silent", "wrong-column"):
        g = sub.add_parser(name)
        g.add_argument("--train", type=Path, required=True)
        g.add_argument("--out", type=Path, required=True)
        g.add_argument("--seed", type=int, default=0)
        g.add_argument("--rows", type=int, default=None, help="ignored")
        if name == "rr":
            g.add_argument("--epsilon", type=float, required=True)
            g.add_argument("--universe", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "samples":
        samples(
            args.data,
            args.out,
            n_real=args.real_rows,
            n_holdout=args.holdout_rows,
            seed=args.seed,
            columns=args.columns.split(",") if args.columns else None,
        )
    elif args.command == "rr":
        randomized_response(
            args.train,
            args.out,
            universe=args.universe,
            epsilon=args.epsilon,
            seed=args.seed,
        )
    elif args.command == "copier":
        copier(args.train, args.out, seed=args.seed)
    elif args.command == "crash":
        msg = "known_eps_generators crash: this generator always fails"
        raise RuntimeError(msg)
    elif args.command == "wrong-column":
        wrong_column(args.train, args.out)
    # "silent": exit 0 without writing anything


if __name__ == "__main__":
    sys.exit(main())
