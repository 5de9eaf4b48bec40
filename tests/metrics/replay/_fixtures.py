"""Seeded clinic tables with e-mails, phones and free-text notes (small vocabulary)."""

from __future__ import annotations

import numpy as np
import pandas as pd

WORDS = [f"w{i}" for i in range(2000)]


def population(n: int, seed: int, *, words: int = 30) -> pd.DataFrame:
    """``n`` distinct people: age, e-mail, phone and a note of ``words`` words."""
    rng = np.random.default_rng(seed)
    ids = rng.choice(10**8, size=n, replace=False)
    notes = rng.integers(0, len(WORDS), size=(n, words))
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, size=n),
            "email": [f"user{i}@clinic.example" for i in ids],
            "phone": [
                f"(2{i % 100:02d}) {i // 100 % 1000:03d}-{i % 10000:04d}" for i in ids
            ],
            "note": [" ".join(WORDS[j] for j in row) for row in notes],
        }
    )


METADATA = {
    "columns": {
        "age": {"kind": "numerical"},
        "email": {"kind": "pii"},
        "phone": {"kind": "pii"},
        "note": {"kind": "text"},
    }
}


def tables(
    n: int = 1000, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Training, holdout and a synthetic table of new people (a third each)."""
    people = population(3 * n, seed)
    return (
        people.iloc[:n].reset_index(drop=True),
        people.iloc[n : 2 * n].reset_index(drop=True),
        people.iloc[2 * n :].reset_index(drop=True),
    )
