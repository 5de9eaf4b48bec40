# SPDX-License-Identifier: BSD-3-Clause
"""What the replay tests share: their columns, their people and their holdout test."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._typing import JSONValue
from synthrisk.metrics._persons import (
    People,
    find_person_column,
    people_excess,
    people_of,
)
from synthrisk.schema.tables import Tables
from synthrisk.stats.exact import detectable_excess, excess_greater_p

__all__ = [
    "LIST_LIMIT",
    "REFERENCE_LEVEL",
    "is_row_counter",
    "person_column",
    "real_values",
    "replay_test",
]

#: the level at which "detectable at this size" is stated (about ten gating tests at 0.05)
REFERENCE_LEVEL = 0.05 / 10
#: replayed training people listed in the breakdown (all their rows are in the records)
LIST_LIMIT = 200


def person_column(tables: Tables, person: str | None) -> str | None:
    """The person key of the run (``"auto"``: :func:`find_person_column`)."""
    return find_person_column(tables) if person == "auto" else person


def is_row_counter(values: pd.Series, n_rows: int) -> bool:
    """Is the column a row number or surrogate key (dense small integers), not a person's identifier?

    Integers between 0 and ten times the number of rows: generators number their rows
    the same way, so equal values there say nothing about a person.
    """
    numeric = pd.to_numeric(values.dropna(), errors="coerce")
    if numeric.empty or numeric.isna().any():
        return False
    array = numeric.to_numpy(dtype=np.float64)
    if not np.all(np.mod(array, 1) == 0):
        return False
    return bool(array.min() >= 0 and array.max() <= 10 * n_rows + 10)


def real_values(tables: Tables, column: str) -> pd.Series:
    """The column's training then holdout values (pooled rows, training first)."""
    assert tables.holdout is not None
    return pd.concat([tables.real[column], tables.holdout[column]], ignore_index=True)


def people(tables: Tables, person: str | None) -> People:
    """The real people of the run."""
    return people_of(tables, person_column(tables, person))


def replay_test(
    parts: list[dict[str, Any]], *, confidence_level: float
) -> dict[str, JSONValue]:
    """The holdout test over the per-column parts (Bonferroni across them).

    Each part has ``part`` (its name), ``training`` ``[a, n_a]``, ``holdout``
    ``[b, n_b]`` and ``what``. The headline is the part with the smallest p-value: its
    excess of replayed training people over the holdout rate, in people.
    """
    m = max(len(parts), 1)
    for part in parts:
        (a, n_a), (b, n_b) = part["training"], part["holdout"]
        part["p_value"] = excess_greater_p(a, n_a, b, n_b)
        part["p_value_adjusted"] = min(1.0, m * float(part["p_value"]))
        part["detectable_people"] = (
            detectable_excess(n_a, b, n_b, level=REFERENCE_LEVEL / m)
            if n_a and n_b
            else None
        )
    if not parts:
        return {}
    worst = min(parts, key=lambda part: (part["p_value"], part["part"]))
    a, n_a = worst["training"]
    b, n_b = worst["holdout"]
    rate = b / n_b if n_b else 0.0
    effect, ci, se = people_excess(a, n_a, b, n_b, confidence_level=confidence_level)
    detectable = [
        p["detectable_people"] for p in parts if p["detectable_people"] is not None
    ]
    return {
        "statistic": "training people whose values the synthetic table replays beyond the holdout's chance rate (people)",
        "effect": float(effect),
        "ci": [float(ci[0]), float(ci[1])],
        "se": se if math.isfinite(se) else float("nan"),
        "p_value": float(worst["p_value_adjusted"]),
        "n": int(min(n_a, n_b)),
        "null": 0.0,
        "estimate": float(a),
        "control": float(n_a * rate),
        "compared": (
            f"{worst['part']}: {a} of {n_a} training people {worst['what']} vs {b} of {n_b} "
            "holdout people"
        ),
        "confidence_level": confidence_level,
        "unit": "people",
        "decision": "significance",
        "component": worst["part"],
        "components": parts,
        "mde": float(min(detectable)) if detectable else None,
        "mde_level": REFERENCE_LEVEL,
    }


def per_person_any(flags: np.ndarray, person: np.ndarray, n_people: int) -> np.ndarray:
    """Per person: is ``flags`` true for any of their rows."""
    out = np.zeros(n_people, dtype=bool)
    out[person[flags]] = True
    return out


class RowIndex:
    """Rows of each key (person, text id) of an integer array, found by binary search."""

    def __init__(self, keys: np.ndarray) -> None:
        self.order = np.argsort(keys, kind="stable")
        self.sorted = keys[self.order]

    def rows(self, key: int) -> np.ndarray:
        """Positions whose key is ``key``, ascending."""
        lo = int(np.searchsorted(self.sorted, key, side="left"))
        hi = int(np.searchsorted(self.sorted, key, side="right"))
        return np.sort(self.order[lo:hi])
