# SPDX-License-Identifier: BSD-3-Clause
"""What the replay tests share: their columns, their people and their holdout test."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._typing import JSONValue
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._persons import (
    People,
    find_person_column,
    people_excess,
    people_of,
)
from synthrisk.schema.tables import Tables
from synthrisk.stats.exact import detectable_excess, excess_greater_p

__all__ = [
    "CHANCE_ASSUMPTION",
    "CHANCE_MODEL",
    "FINDING_ALPHA",
    "LIST_LIMIT",
    "REFERENCE_LEVEL",
    "check_named_columns",
    "is_row_counter",
    "key_holders",
    "person_column",
    "real_values",
    "replay_test",
    "singleton_chance",
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

    Mostly distinct integers between 0 and ten times the number of rows, bare or after
    one fixed prefix of at most four letters (``u17``, ``P-000017``): generators number their rows the same way, so
    equal values there say nothing about a person.

    Examples
    --------
    >>> import pandas as pd
    >>> is_row_counter(pd.Series(["u0", "u1", "u2"]), 3), is_row_counter(pd.Series([0, 1, 5]), 3)
    (True, True)
    >>> is_row_counter(pd.Series(["u0", "v1"]), 2), is_row_counter(pd.Series(["u1@b.org"]), 1)
    (False, False)
    """
    present = values.dropna()
    numeric = pd.to_numeric(present, errors="coerce")
    if numeric.isna().any() and not present.empty:
        # a short prefix of letters (and - or _) and the number: nothing after it
        # (``user17@example.org`` is an e-mail address, not a counter)
        parts = present.astype(str).str.extract(r"^([A-Za-z_-]{0,4})(\d+)$")
        if parts[1].isna().any() or parts[0].nunique() > 1:
            return False
        numeric = pd.to_numeric(parts[1], errors="coerce")
    if numeric.empty or numeric.isna().any():
        return False
    array = numeric.to_numpy(dtype=np.float64)
    if not np.all(np.mod(array, 1) == 0):
        return False
    # a counter numbers rows (or people): mostly distinct; postcodes repeat
    if np.unique(array).size < 0.5 * array.size:
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
    # a part where no training or no holdout person holds anything compares nothing
    testable = [p for p in parts if p["training"][1] and p["holdout"][1]]
    worst = min(testable or parts, key=lambda part: (part["p_value"], part["part"]))
    a, n_a = worst["training"]
    b, n_b = worst["holdout"]
    rate = b / n_b if n_b else 0.0
    if testable:
        effect, ci, se = people_excess(
            a, n_a, b, n_b, confidence_level=confidence_level
        )
    else:
        effect, ci, se = 0.0, [0.0, 0.0], 0.0
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


#: a count of replayed training people that chance explains with probability below this
#: (Bonferroni across the metric's columns) makes a finding that reads review, as the
#: chance model of copied people does
FINDING_ALPHA = 0.01

CHANCE_ASSUMPTION = (
    "valid when the generator's rows behave like draws from the population the real people come "
    "from; a generator that merely fits badly can trip it, so it asks for review, never fails by itself"
)
CHANCE_MODEL = (
    "values (or combinations) one real person holds, replayed by chance: Good–Turing's estimate of "
    "the probability that a new person draws such a value (2·N2/N over the N1 such values), or the "
    "holdout's own rate, whichever is larger; a binomial tail over the training people who hold one"
)


def singleton_chance(
    holders: np.ndarray,
    training: np.ndarray,
    appears: np.ndarray,
    n_synthetic: int,
    *,
    tests: int = 1,
    approximate: bool = False,
) -> dict[str, JSONValue]:
    """Training people replayed through a value only they hold, against chance.

    The keys are a column's distinct values (or a combination's), over the pooled real
    people. A key held by one person (a *singleton*) that a synthetic row carries points
    at that person. If the generator drew new people from the population, a singleton's
    chance of reaching ``n_synthetic`` rows is ``q = 1 - exp(-n_s · 2·N2 / (N · N1))``
    (Good–Turing: the probability mass of values seen once is ``2·N2/N``, shared by the
    ``N1`` of them; ``N2`` at least 1), or the rate at which holdout singletons are
    replayed (its one-sided 95 % lower bound: the holdout overrides the model only where
    it clearly replays more), whichever is larger. The training singletons replayed are compared with ``Binomial(N1_t, q)``.

    Parameters
    ----------
    holders : int array
        Per key, the number of real people (training and holdout) holding it.
    training : bool array
        Per key, whether its holders are training people (read for singletons).
    appears : bool array
        Per key, whether a synthetic row carries it.
    n_synthetic : int
        Rows of the synthetic table.
    tests : int
        Comparisons the p-value is Bonferroni-adjusted over (the metric's columns).
    approximate : bool
        The keys are replayed by *near* copies (free text, rows as text): Good–Turing
        counts exact values and says nothing of near ones, so the holdout's rate enters
        with its uncertainty (its one-sided 95 % Clopper–Pearson upper bound) instead of
        its point estimate. Exact keys (identifiers, values, combinations) use the point
        estimate, as the chance model of copied people does.

    Returns
    -------
    dict
        ``replayed`` (training singletons replayed), ``holdout_replayed``, ``training_singletons``,
        ``holdout_singletons``, ``rate_model``, ``rate_holdout``, ``rate``, ``expected``,
        ``upper`` (95 % upper bound of the chance count), ``p_value`` (adjusted),
        ``significant``, ``detectable`` (the fewest replayed training singletons that would
        read significant), ``model``, ``assumption``, ``alpha``.

    Examples
    --------
    >>> import numpy as np
    >>> out = singleton_chance(np.array([1, 1, 1, 2, 2]), np.array([True, True, False, True, False]),
    ...                        np.array([True, False, False, True, False]), 10)
    >>> out["replayed"], out["training_singletons"], out["holdout_replayed"]
    (1, 2, 0)
    """
    from scipy import stats  # local: scipy.stats is slow to import

    holders = np.asarray(holders)
    training = np.asarray(training, dtype=bool)
    appears = np.asarray(appears, dtype=bool)
    single = holders == 1
    total = float(holders.sum())
    n1 = int(single.sum())
    n2 = int((holders == 2).sum())
    n1_t = int((single & training).sum())
    n1_h = n1 - n1_t
    a = int((single & training & appears).sum())
    h = int((single & ~training & appears).sum())
    # Good–Turing's mass of the values seen once, 2·N2/N, is 0 when no value is held by
    # two people, and one chance replay would then read p = 0: at least one doubleton is
    # assumed (the smallest count that says "values like these do recur")
    rate_model = (
        -math.expm1(-n_synthetic * 2.0 * max(n2, 1) / (total * n1))
        if n1 and total
        else 0.0
    )
    rate_holdout = h / n1_h if n1_h else 0.0
    # the holdout guards the model: its rate enters with its uncertainty, as its lower
    # 95 % bound where the model counts exact values (it overrides the model only when
    # the holdout clearly replays more), its upper bound where near copies replay
    guard = rate_holdout
    if n1_h and approximate:
        guard = float(stats.beta.ppf(0.95, h + 1, n1_h - h)) if h < n1_h else 1.0
    elif n1_h:
        guard = float(stats.beta.ppf(0.05, h, n1_h - h + 1)) if h > 0 else 0.0
    rate = max(rate_model, guard)
    expected = n1_t * rate
    m = max(int(tests), 1)
    if a == 0:
        p = 1.0
    elif rate <= 0.0:
        p = 0.0
    else:
        p = float(stats.binom.sf(a - 1, n1_t, rate))
    p_adj = min(1.0, m * p)
    upper = float(stats.binom.ppf(0.95, n1_t, rate)) if n1_t else 0.0
    detectable: int | None = None
    if n1_t:
        if rate <= 0.0:
            detectable = 1
        else:
            tail = stats.binom.sf(np.arange(n1_t + 1) - 1, n1_t, rate) * m
            hits = np.flatnonzero(tail < FINDING_ALPHA)
            detectable = int(hits[0]) if hits.size else None
    return {
        "replayed": a,
        "holdout_replayed": h,
        "training_singletons": n1_t,
        "holdout_singletons": n1_h,
        "singletons": n1,
        "doubletons": n2,
        "rate_model": float(rate_model),
        "rate_holdout": float(rate_holdout),
        "rate_holdout_bound": float(guard),
        "rate": float(rate),
        "expected": float(expected),
        "upper": upper,
        "p_value": p_adj,
        "significant": bool(a > 0 and p_adj < FINDING_ALPHA),
        "detectable": detectable,
        "tests": m,
        "approximate": approximate,
        "alpha": FINDING_ALPHA,
        "model": CHANCE_MODEL,
        "assumption": CHANCE_ASSUMPTION,
    }


def key_holders(
    keys: np.ndarray, present: np.ndarray, person: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct keys of the real rows, how many people hold each and one holder.

    Parameters
    ----------
    keys : array
        One key per pooled real row (a value, a normalised value, a combination code).
    present : bool array
        Rows whose key counts (a missing value holds nothing).
    person : int array
        The person of each row (training people first).

    Returns
    -------
    uniques : array
        The distinct keys.
    holders : int array
        Per key, the number of distinct people holding it.
    owner : int array
        Per key, its holder with the smallest number (the only one of a singleton).

    Examples
    --------
    >>> import numpy as np
    >>> u, h, o = key_holders(np.array(["a", "b", "a", "c"], dtype=object),
    ...                       np.array([True, True, True, False]), np.array([0, 1, 2, 2]))
    >>> list(u), h.tolist(), o.tolist()
    (['a', 'b'], [2, 1], [0, 1])
    """
    codes, uniques = pd.factorize(pd.Series(keys[present], dtype=object))
    who = np.asarray(person)[present].astype(np.int64)
    if codes.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return np.asarray(uniques, dtype=object), empty, empty
    n = int(who.max()) + 1
    pairs = np.unique(codes.astype(np.int64) * n + who)
    pair_codes = pairs // n
    holders = np.bincount(pair_codes, minlength=len(uniques))
    owner = np.full(len(uniques), n, dtype=np.int64)
    np.minimum.at(owner, pair_codes, pairs % n)
    return np.asarray(uniques, dtype=object), holders, owner


def check_named_columns(
    columns: Iterable[str] | None, tables: Tables, *, fix: str | None = None
) -> None:
    """Columns named in a replay metric's ``columns`` must be in both tables.

    ``fix`` is what the message advises before listing the real table's columns.
    """
    for name in columns or ():
        if name not in tables.real.columns or name not in tables.synthetic.columns:
            known = list(map(str, tables.real.columns))
            tail = f"; {fix} Columns: {known}." if fix else f"; columns: {known}."
            msg = (
                f"`columns` names {name!r}, which is not a column of both the real and the "
                f"synthetic table{tail}"
            )
            raise ParameterError(msg)
