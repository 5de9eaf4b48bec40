# SPDX-License-Identifier: BSD-3-Clause
"""Rare keys replayed: what ``rare_value_replay`` and ``quasi_identifier_replay`` share.

A *key* is something a real person holds: a value of one column, a combination of values
of several columns, or an extreme of a numeric column ("a value at least this large").
Over the pooled real people (training, then holdout) each key has its *holders*; a key
held by at most ``max_people`` people is *rare*. A person is **replayed** when a synthetic
row carries a rare key they hold. Rarity is defined on the pooled data, so a generator
that draws new people from the population replays training and holdout holders alike;
:func:`~synthrisk.metrics.replay._common.replay_test` compares the two (one part per
column or per combination), and :func:`~synthrisk.metrics.replay._common.singleton_chance`
asks whether more training singletons are replayed than chance gives.

Every count here is linear in the rows after ``pd.factorize`` and ``np.unique``: no
Python loop visits rows, only the listed people (at most ``LIST_LIMIT``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._typing import JSONValue
from synthrisk.metrics._base import Context, Outcome
from synthrisk.metrics._persons import People
from synthrisk.metrics.replay._common import (
    LIST_LIMIT,
    RowIndex,
    replay_test,
    singleton_chance,
)
from synthrisk.results import RecordScores
from synthrisk.stats.intervals import wilson_interval

__all__ = [
    "KeyPart",
    "as_float",
    "extreme_part",
    "merge_parts",
    "report",
    "value_part",
]


@dataclasses.dataclass
class KeyPart:
    """One part of the holdout test: a column, or a combination of columns.

    Per person (``n_people``, training first): ``holds`` a rare key, ``replayed``
    through one, ``unique`` (replayed through a key they alone hold). ``syn_rows`` are
    the synthetic rows carrying a rare key some training person holds, ``syn_scores``
    their ``1 / holders`` (the most specific such key). ``chance`` holds the per-key
    arrays of :func:`singleton_chance` (value keys only). ``listing(p)`` gives a
    replayed training person's training rows, the synthetic rows carrying their
    rare keys and the fewest holders of those keys.
    """

    name: str
    columns: list[str]
    match: str
    holds: np.ndarray
    replayed: np.ndarray
    unique: np.ndarray
    syn_rows: np.ndarray
    syn_scores: np.ndarray
    rare_keys: int
    rare_keys_in_synthetic: int
    listing: Callable[[int], tuple[list[int], list[int], int]]
    chance: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    rules: tuple[str, ...] = ()


def as_float(values: pd.Series) -> np.ndarray:
    """Numbers (or dates, as nanoseconds) as float64 with NaN for missing."""
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        out = values.to_numpy(dtype="datetime64[ns]").astype(np.int64).astype(float)
        out[values.isna().to_numpy()] = np.nan
        return out
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)


def value_part(
    real_codes: np.ndarray,
    syn_codes: np.ndarray,
    who: People,
    *,
    max_people: int,
    name: str,
    columns: list[str],
    match: str,
) -> KeyPart:
    """Rare keys given as integer codes shared by the pooled real rows and the synthetic rows.

    ``real_codes`` (pooled real rows, training first) and ``syn_codes`` are codes of one
    factorisation; -1 is no key (a missing value).
    """
    person, n_people, n_train = who.person, who.n_people, who.n_train
    n_keys = max(int(max(real_codes.max(initial=-1), syn_codes.max(initial=-1))) + 1, 1)
    ok = real_codes >= 0
    pairs = np.unique(person[ok].astype(np.int64) * n_keys + real_codes[ok])
    pair_person, pair_key = pairs // n_keys, pairs % n_keys
    holders = np.bincount(pair_key, minlength=n_keys)
    training = (
        np.bincount(pair_key, weights=pair_person < n_train, minlength=n_keys) > 0
    )
    syn_ok = syn_codes >= 0
    appears = np.bincount(syn_codes[syn_ok], minlength=n_keys) > 0
    rare = (holders >= 1) & (holders <= max_people)
    pair_rare = rare[pair_key]
    pair_replayed = pair_rare & appears[pair_key]
    holds = np.zeros(n_people, dtype=bool)
    holds[pair_person[pair_rare]] = True
    replayed = np.zeros(n_people, dtype=bool)
    replayed[pair_person[pair_replayed]] = True
    unique = np.zeros(n_people, dtype=bool)
    unique[pair_person[pair_replayed & (holders[pair_key] == 1)]] = True
    training_rare = rare & training
    carrying = np.flatnonzero(syn_ok & training_rare[np.where(syn_ok, syn_codes, 0)])
    scores = 1.0 / holders[syn_codes[carrying]]
    # replayed (training person, key) pairs, sorted by person, for the listing
    listed = pair_replayed & (pair_person < n_train)
    rep_person, rep_key = pair_person[listed], pair_key[listed]
    n_real_rows = who.n_real_rows
    by_person: list[RowIndex] = []
    by_key: list[RowIndex] = []

    def listing(p: int) -> tuple[list[int], list[int], int]:
        if not by_person:  # built on first use: most runs list nobody
            by_person.append(RowIndex(person[:n_real_rows]))
            by_key.append(RowIndex(syn_codes))
        lo, hi = np.searchsorted(rep_person, [p, p + 1])
        keys = rep_key[lo:hi]
        rows = by_person[0].rows(p)
        rows = rows[np.isin(real_codes[rows], keys)]
        syn = np.concatenate([by_key[0].rows(int(k)) for k in keys])
        return rows.tolist(), np.sort(syn).tolist(), int(holders[keys].min())

    held = holders > 0
    return KeyPart(
        name=name,
        columns=columns,
        match=match,
        holds=holds,
        replayed=replayed,
        unique=unique,
        syn_rows=carrying,
        syn_scores=scores.astype(np.float64),
        rare_keys=int(rare.sum()),
        rare_keys_in_synthetic=int((rare & appears).sum()),
        listing=listing,
        chance=(holders[held], training[held], appears[held]),
        rules=("values",),
    )


def _tail(
    real: np.ndarray,
    syn: np.ndarray,
    who: People,
    *,
    max_people: int,
) -> dict[str, Any]:
    """The upper tail: people whose largest value at most ``max_people`` people reach.

    Person ``i`` with largest value ``v_i`` holds the key "at least ``v_i``", held by the
    people whose largest value is at least ``v_i``; it is rare when they are at most
    ``max_people``; a synthetic value at least ``v_i`` replays ``i``.
    """
    person, n_people, n_train = who.person, who.n_people, who.n_train
    ok = ~np.isnan(real)
    top = np.full(n_people, -np.inf)
    if ok.any():
        frame = pd.Series(real[ok]).groupby(person[ok]).max()
        top[frame.index.to_numpy()] = frame.to_numpy()
    valued = top != -np.inf
    ordered = np.sort(top[valued])
    count = np.zeros(n_people, dtype=np.int64)
    count[valued] = ordered.size - np.searchsorted(ordered, top[valued], side="left")
    extreme = valued & (count <= max_people)
    syn_ok = syn[~np.isnan(syn)]
    syn_top = syn_ok.max() if syn_ok.size else -np.inf
    replayed = extreme & (syn_top >= top)
    # synthetic rows at least as large as some training extreme: the most specific key
    train_ext = np.flatnonzero(extreme[:n_train])
    if train_ext.size and syn_ok.size:
        values = top[train_ext]
        order = np.argsort(values)
        values, counts = values[order], count[train_ext][order]
        rows = np.flatnonzero(~np.isnan(syn) & (syn >= values[0]))
        at = np.searchsorted(values, syn[rows], side="right") - 1
        scores = 1.0 / counts[at]
    else:
        rows, scores = np.zeros(0, dtype=np.int64), np.zeros(0)
    return {
        "extreme": extreme,
        "replayed": replayed,
        "unique": replayed & (count == 1),
        "count": count,
        "top": top,
        "syn_rows": rows,
        "syn_scores": scores,
        "rare_keys": int(extreme.sum()),
        "in_synthetic": int(replayed.sum()),
    }


def extreme_part(
    real: np.ndarray, syn: np.ndarray, who: People, *, max_people: int, name: str
) -> KeyPart:
    """Both tails of a numeric column (float64, NaN missing): see :func:`_tail`."""
    upper = _tail(real, syn, who, max_people=max_people)
    lower = _tail(-real, -syn, who, max_people=max_people)
    rows = np.concatenate([upper["syn_rows"], lower["syn_rows"]])
    scores = np.concatenate([upper["syn_scores"], lower["syn_scores"]])
    rows, scores = _best(rows, scores)
    person, n_real_rows = who.person, who.n_real_rows
    by_person: list[RowIndex] = []

    def listing(p: int) -> tuple[list[int], list[int], int]:
        if not by_person:
            by_person.append(RowIndex(person[:n_real_rows]))
        mine = by_person[0].rows(p)
        keep: list[np.ndarray] = []
        syn_rows: list[np.ndarray] = []
        fewest = np.iinfo(np.int64).max
        for tail, sign in ((upper, 1.0), (lower, -1.0)):
            if not tail["replayed"][p]:
                continue
            v = tail["top"][p]
            keep.append(mine[sign * real[mine] == v])
            syn_rows.append(np.flatnonzero(sign * syn >= v)[:LIST_LIMIT])
            fewest = min(fewest, int(tail["count"][p]))
        return (
            np.unique(np.concatenate(keep)).tolist(),
            np.unique(np.concatenate(syn_rows)).tolist(),
            int(fewest),
        )

    return KeyPart(
        name=name,
        columns=[name],
        match="extreme value",
        holds=upper["extreme"] | lower["extreme"],
        replayed=upper["replayed"] | lower["replayed"],
        unique=upper["unique"] | lower["unique"],
        syn_rows=rows,
        syn_scores=scores,
        rare_keys=upper["rare_keys"] + lower["rare_keys"],
        rare_keys_in_synthetic=upper["in_synthetic"] + lower["in_synthetic"],
        listing=listing,
        rules=("extremes",),
    )


def _best(rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows, ascending, each with its largest score."""
    if not rows.size:
        return rows.astype(np.int64), scores.astype(np.float64)
    order = np.lexsort((-scores, rows))
    rows, scores = rows[order], scores[order]
    first = np.r_[True, rows[1:] != rows[:-1]]
    return rows[first].astype(np.int64), scores[first].astype(np.float64)


def merge_parts(first: KeyPart, second: KeyPart) -> KeyPart:
    """One part from two rules on the same column (values and extremes)."""
    rows, scores = _best(
        np.concatenate([first.syn_rows, second.syn_rows]),
        np.concatenate([first.syn_scores, second.syn_scores]),
    )

    def listing(p: int) -> tuple[list[int], list[int], int]:
        found = [part.listing(p) for part in (first, second) if part.replayed[p]]
        return (
            sorted({r for f in found for r in f[0]}),
            sorted({r for f in found for r in f[1]}),
            min(f[2] for f in found),
        )

    return dataclasses.replace(
        first,
        holds=first.holds | second.holds,
        replayed=first.replayed | second.replayed,
        unique=first.unique | second.unique,
        syn_rows=rows,
        syn_scores=scores,
        rare_keys=first.rare_keys + second.rare_keys,
        rare_keys_in_synthetic=first.rare_keys_in_synthetic
        + second.rare_keys_in_synthetic,
        listing=listing,
        rules=first.rules + second.rules,
    )


def report(
    parts: list[KeyPart],
    who: People,
    *,
    n_synthetic: int,
    confidence_level: float,
    include_values: bool,
    value_of: Callable[[KeyPart, int], JSONValue],
    context: Context,
    group: str,
    what: str,
    advice: str,
    extra: dict[str, JSONValue],
) -> Outcome:
    """The outcome of a rare-key metric over its parts.

    ``group`` is the breakdown key of the per-part counts (``"columns"`` or
    ``"combinations"``), ``what`` the thing replayed in words ("a rare value"),
    ``value_of(part, training_row)`` the value shown with ``include_values``.
    """
    n_train, n_people = who.n_train, who.n_people
    training = np.arange(n_people) < n_train
    label = "column" if group == "columns" else "columns"
    tests: list[dict[str, Any]] = []
    per_part: dict[str, JSONValue] = {}
    any_replayed = np.zeros(n_people, dtype=bool)
    any_unique = np.zeros(n_people, dtype=bool)
    for part in parts:
        a, n_a = (
            int((part.replayed & training).sum()),
            int((part.holds & training).sum()),
        )
        b, n_b = (
            int((part.replayed & ~training).sum()),
            int((part.holds & ~training).sum()),
        )
        any_replayed |= part.replayed
        any_unique |= part.unique
        tests.append(
            {
                "part": part.name,
                "training": [a, n_a],
                "holdout": [b, n_b],
                "what": f"holding {what} of {part.name!r} that a synthetic row carries",
            }
        )
        per_part[part.name] = {
            "columns": list(part.columns),
            "rules": list(part.rules),
            "training_replayed": a,
            "holdout_replayed": b,
            "training_holders": n_a,
            "holdout_holders": n_b,
            "unique_replayed_training": int((part.unique & training).sum()),
            "unique_replayed_holdout": int((part.unique & ~training).sum()),
            "rare_keys": part.rare_keys,
            "rare_keys_in_synthetic": part.rare_keys_in_synthetic,
            "synthetic_rows_carrying": int(part.syn_rows.size),
        }
    test = replay_test(tests, confidence_level=confidence_level)
    for entry, one in zip(tests, parts, strict=True):
        counts = per_part[one.name]
        assert isinstance(counts, dict)
        counts["p_value"] = float(entry["p_value"])
        counts["p_value_adjusted"] = float(entry["p_value_adjusted"])
    # the chance model of the part with the smallest holdout-test p-value (the test's
    # headline part among those with value keys; ties: the smaller chance p-value)
    modelled = [
        (entry, part) for entry, part in zip(tests, parts, strict=True) if part.chance
    ]
    chance_model: dict[str, JSONValue] | None = None
    best: tuple[float, float] | None = None
    for entry, part in modelled:
        assert part.chance is not None
        holders, held_by_training, appears = part.chance
        block = singleton_chance(
            holders, held_by_training, appears, n_synthetic, tests=len(modelled)
        )
        block[label] = part.name if label == "column" else list(part.columns)
        counts = per_part[part.name]
        assert isinstance(counts, dict)
        counts["chance_p_value"] = block["p_value"]
        rank = (float(entry["p_value"]), float(block["p_value"]))  # type: ignore[arg-type]
        if best is None or rank < best:
            best, chance_model = rank, block
    # listing, records, values
    listed: list[JSONValue] = []
    seen = np.zeros(n_people, dtype=bool)
    values_shown: list[JSONValue] = []
    for part in parts:
        if len(listed) >= LIST_LIMIT:
            break
        chosen = np.flatnonzero(part.replayed[:n_train] & ~seen[:n_train])
        for who_p in chosen[: LIST_LIMIT - len(listed)].tolist():
            # a person replayed through several combinations is listed once (the
            # first: the full set); through several columns, once per column
            seen[who_p] = group == "combinations"
            own, carrying, fewest = part.listing(int(who_p))
            named: JSONValue = part.name if label == "column" else list(part.columns)
            listed.append(
                {
                    "rows": list(own),
                    "synthetic_rows": list(carrying),
                    label: named,
                    "match": part.match if len(part.rules) == 1 else "rare value",
                    "holders": fewest,
                }
            )
            if include_values and own:
                values_shown.append({label: named, "value": value_of(part, own[0])})
    all_rows = (
        np.concatenate([part.syn_rows for part in parts]) if parts else np.zeros(0)
    )
    all_scores = (
        np.concatenate([part.syn_scores for part in parts]) if parts else np.zeros(0)
    )
    rows, scores = _best(all_rows.astype(np.int64), all_scores.astype(np.float64))
    found = int(any_replayed[:n_train].sum())
    p_value = test.get("p_value")
    if found and isinstance(p_value, float) and p_value < 0.05:
        shown = ", ".join(str(s) for s in rows[:10].tolist())
        more = f" and {rows.size - 10} more" if rows.size > 10 else ""
        context.warn(
            f"{found} training people hold {what} ({', '.join(x.name for x in parts)}) that a "
            "synthetic row carries, significantly more than the holdout people; the "
            f"synthetic rows that carry them: {shown}{more} (all in the breakdown's `replayed` and "
            f"the records `replaying_rows`). {advice}"
        )
    breakdown: dict[str, JSONValue] = {
        "replayed_training": found,
        "replayed_holdout": int(any_replayed[n_train:].sum()),
        "unique_replayed_training": int(any_unique[:n_train].sum()),
        "unique_replayed_holdout": int(any_unique[n_train:].sum()),
        "training_people": n_train,
        "holdout_people": who.n_holdout,
        "person_column": who.column,
        **extra,
        group: per_part,
        "replayed": listed,
        "replaying_synthetic_rows": int(rows.size),
        "chance_model": chance_model,
        "holdout_test": test,
    }
    value_keys: tuple[str, ...] = ()
    if include_values:
        breakdown["replayed_values"] = values_shown
        value_keys = ("replayed_values",)
    records = {
        "replaying_rows": RecordScores(
            "synthetic",
            rows,
            scores,
            f"synthetic rows that carry {what} a training person holds (1 / the real people "
            "holding it)",
        )
    }
    return Outcome(
        score=found / n_train if n_train else None,
        breakdown=breakdown,
        ci=wilson_interval(found, n_train) if n_train else None,
        records=records,
        value_keys=value_keys,
    )
