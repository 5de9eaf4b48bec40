# SPDX-License-Identifier: BSD-3-Clause
"""Identifiers and free text at scale: schema inference by content, identifier_replay, text_replay.

Generates ``--rows`` training rows (holdout half as many, synthetic as many as training)
with an e-mail, a phone number and a note of ``--words`` words from a 20,000-word
vocabulary; 5 % of the synthetic rows carry a training person's e-mail and note. Times
the schema inference of the string columns (no metadata) and each replay metric
(``--metrics``: identifiers, text, rows as text and rare values by default), and
reports the peak resident memory of the process::

    .venv/bin/python benchmarks/bench_replay.py --rows 100000
    .venv/bin/python benchmarks/bench_replay.py --rows 1000000
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd

from synthrisk.metrics import METRICS
from synthrisk.schema.tables import prepare_tables

VOCABULARY = 20_000


def people(n: int, rng: np.random.Generator, words: int, start: int) -> pd.DataFrame:
    """``n`` people with distinct e-mails and phones and random notes."""
    ids = np.arange(start, start + n)
    vocab = np.array([f"w{i}" for i in range(VOCABULARY)], dtype=object)
    notes = vocab[rng.integers(0, VOCABULARY, size=(n, words))]
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, size=n),
            "email": [f"user{i}@clinic.example" for i in ids],
            "phone": [f"+1 555-{i // 10000 % 1000:03d}-{i % 10000:04d}" for i in ids],
            "note": [" ".join(row) for row in notes],
        }
    )


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="training rows")
    parser.add_argument("--words", type=int, default=30, help="words per note")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--metrics",
        default="identifier_replay,text_replay,row_string_replay,rare_value_replay",
        help="comma-separated replay metrics to time",
    )
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    n = args.rows
    real = people(n, rng, args.words, 0)
    holdout = people(n // 2, rng, args.words, n)
    synthetic = people(n, rng, args.words, 2 * n)
    copies = rng.choice(n, size=n // 20, replace=False)
    synthetic.loc[copies, ["email", "note"]] = real.loc[
        copies, ["email", "note"]
    ].to_numpy()
    print(
        f"rows: {n:,} training, {len(holdout):,} holdout, {len(synthetic):,} synthetic; "
        f"{len(copies):,} copies; peak so far {_peak_gb():.2f} GB"
    )
    start = time.perf_counter()
    tables = prepare_tables(real, synthetic, holdout)
    kinds = {c.name: (c.kind, c.semantic) for c in tables.schema.columns}
    print(
        f"preparing the tables (inference by content included): "
        f"{time.perf_counter() - start:.2f} s; kinds {kinds}"
    )
    for metric in (METRICS[name]() for name in args.metrics.split(",")):
        start = time.perf_counter()
        result = metric.run_with(tables, seed=args.seed)
        seconds = time.perf_counter() - start
        test = result.breakdown.get("holdout_test") or {}
        found = (
            f"excess {test['effect']:.0f} people, p {test['p_value']:.2g}"
            if test
            else f"no test ({result.reason or result.status})"
        )
        print(f"{metric.id}: {seconds:.1f} s, {found}; peak {_peak_gb():.2f} GB")


if __name__ == "__main__":
    main()
