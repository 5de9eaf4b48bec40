# SPDX-License-Identifier: BSD-3-Clause
"""Row-string replay: whole real rows copied, as text, into the synthetic table.

Generators built on language models write a row as a line of text, and copy one the
same way: a real person's row with a phone number reformatted or one digit of an amount
changed is still that person's row. Each row is **serialised**: every column both tables
share, in the real table's column order, its value as a CSV writer writes it (missing:
empty), joined by ``,``; then lowercased and its runs of whitespace collapsed (digits,
punctuation and formats are kept: they carry the information). A real person is
**replayed** when a synthetic row string is a near copy of one of their row strings:
the Jaccard similarity of the two strings' sets of ``shingle``-character shingles
(default 5) is at least ``threshold`` (default 0.9). Candidate pairs come from MinHash
with LSH banding (:mod:`synthrisk.metrics.replay._minhash`, character shingles) and
are confirmed with the exact Jaccard.

Many real people can share one row string (coarse tables): a near copy of it counts for
all of them, training and holdout alike, and the holdout test (people as the unit, as
:mod:`synthrisk.metrics.replay.text`) absorbs it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from synthrisk._typing import JSONValue
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import (
    Param,
    column_list,
    integer,
    number,
    probability,
)
from synthrisk.metrics._persons import PERSON
from synthrisk.metrics._threat import SYNTHETIC_ONLY, TRAINING, ThreatModel
from synthrisk.metrics.replay._common import (
    LIST_LIMIT,
    RowIndex,
    check_named_columns,
    is_row_counter,
    people,
    per_person_any,
    replay_test,
    singleton_chance,
)
from synthrisk.metrics.replay._minhash import (
    _arrow_buffers,
    lsh_recall,
    near_pairs,
)
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.intervals import wilson_interval

__all__ = ["RowStringReplay", "row_strings", "string_matches", "unique_matches"]

#: the separator of the serialised row
SEPARATOR = ","
#: a band key shared by more distinct real rows than this is a common pattern
BUCKET_CAP = 256
#: kinds whose columns carry formats (identifiers, personal data, free text)
FORMAT_KINDS = frozenset({"id", "pii", "text"})


def _as_text(values: pd.Series) -> pd.Series:
    """The column's values as a CSV writer writes them; missing values empty."""
    missing = values.isna().to_numpy()
    text = values.astype(object).map(str)
    text[missing] = ""
    return text


def _row_columns(tables: Tables, key: str | None) -> list[str]:
    """The columns a row is written with: every shared one but the person key and row
    counters (generators number their rows their own way)."""
    assert tables.holdout is not None
    n_rows = len(tables.real) + len(tables.holdout)
    return [
        c
        for c in tables.real.columns
        if c in tables.synthetic.columns
        and c in tables.holdout.columns
        and c != key
        and not (
            tables.schema[c].kind in ("id", "pii")
            and is_row_counter(tables.real[c], n_rows)
        )
    ]


def row_strings(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Each row serialised: ``columns``' values as text joined by ``,`` (object array)."""
    if not columns:
        return np.full(len(frame), "", dtype=object)
    parts = [_as_text(frame[c]).to_numpy(dtype=object) for c in columns]
    out = parts[0]
    for part in parts[1:]:
        out = out + SEPARATOR + part
    result: np.ndarray = out.astype(object)
    return result


def _normalised(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes and offsets: lowercased, runs of whitespace one space, trimmed."""
    array = pa.array(values, type=pa.large_string(), from_pandas=True)
    array = pc.fill_null(array, "")
    array = pc.utf8_lower(array)
    array = pc.replace_substring_regex(array, r"[\s\p{Z}]+", " ")
    array = pc.utf8_trim_whitespace(array)
    data, offsets = _arrow_buffers(array)
    base = int(offsets[0])
    return data[base:].copy(), offsets - base


def string_matches(
    real: np.ndarray,
    synthetic: np.ndarray,
    *,
    shingle: int,
    threshold: float,
    num_perm: int,
    bands: int,
    seed: int,
    working_memory: float | None = None,
) -> dict[str, Any]:
    """Near-copied real row strings: ``inverse`` (distinct string of each pooled row,
    real then synthetic) and the pairs of distinct strings ``left``, ``right``, ``jaccard``
    at or above ``threshold``, with the candidate count."""
    data, offsets = _normalised(np.concatenate([real, synthetic]))
    found = near_pairs(
        data,
        offsets,
        len(real),
        shingle=shingle,
        threshold=threshold,
        num_perm=num_perm,
        bands=bands,
        seed=seed,
        cap=BUCKET_CAP,
        chars=True,
        working_memory=working_memory,
    )
    return {
        "inverse": found.inverse,
        "n_distinct": found.n_distinct,
        "left": found.left,
        "right": found.right,
        "jaccard": found.jaccard,
        "candidates": found.candidates,
        "distinct_real": int(found.real_texts.size),
        "distinct_synthetic": int(found.syn_texts.size),
    }


def holders_of(
    real_inverse: np.ndarray, person: np.ndarray, n_distinct: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (text, person) pairs sorted by text, and each text's first pair."""
    n = max(int(person.max()) + 1 if person.size else 1, 1)
    code = np.unique(real_inverse.astype(np.int64) * n + person)
    text, who = code // n, code % n
    start = np.searchsorted(text, np.arange(n_distinct + 1))
    return text, who, start


def unique_matches(
    left: np.ndarray,
    right: np.ndarray,
    who: np.ndarray,
    start: np.ndarray,
    n_people: int,
) -> np.ndarray:
    """People replayed through a match no other real person shares.

    ``left``/``right`` pair real and synthetic items (texts, strings); ``who`` and
    ``start`` list each real item's people (:func:`holders_of`). A synthetic item whose
    matched real items are held by one person alone points at that person.
    """
    out = np.zeros(n_people, dtype=bool)
    if left.size == 0:
        return out
    count = start[left + 1] - start[left]
    pair_syn = np.repeat(right, count)
    first = np.repeat(start[left], count)
    within = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    pair_person = who[first + within]
    code = np.unique(pair_syn.astype(np.int64) * n_people + pair_person)
    syn_of, person_of = code // n_people, code % n_people
    edge = np.r_[True, syn_of[1:] != syn_of[:-1]]
    runs = np.diff(np.r_[np.flatnonzero(edge), syn_of.size])
    alone = np.flatnonzero(edge)[runs == 1]
    out[person_of[alone]] = True
    return out


@register
class RowStringReplay(Metric):
    """Real people whose whole row, as a string, a synthetic row nearly copies.

    See :mod:`synthrisk.metrics.replay.row_string`. The score is the share of training
    people replayed.

    Parameters
    ----------
    columns : list of str or None, default=None
        Columns serialised; None: every column of both tables, in the real table's order.
    person : str, "auto" or None, default="auto"
        The column that names people with several rows.
    threshold : float, default=0.9
        Smallest Jaccard similarity of the character-shingle sets that makes a near copy.
    shingle : int, default=5
        Characters (UTF-8 bytes) per shingle.
    num_perm : int, default=120
        MinHash permutations (``bands`` bands of ``num_perm // bands`` rows).
    bands : int, default=15
        LSH bands.
    confidence_level : float, default=0.95
        Level of the excess's interval.
    """

    id = "row_string_replay"
    report_order = 9
    cost = 2.0
    attack = (
        "An attacker holding the synthetic table reads its rows as lines of text and finds real "
        "people's rows, copied with a format or a digit changed."
    )
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "share of training people whose whole row, written as text, a synthetic row nearly "
            "copies; the test counts them against holdout people"
        ),
    )
    higher_is_safer = False
    requires_holdout = True

    columns: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Columns serialised; None: every column both tables share.",
    )
    person: Param[str | None] = PERSON
    threshold: Param[float] = Param(
        number(gt=0, le=1), 0.9, "Smallest Jaccard similarity that makes a near copy."
    )
    shingle: Param[int] = Param(integer(minimum=1), 5, "Characters per shingle.")
    num_perm: Param[int] = Param(integer(minimum=1), 120, "MinHash permutations.")
    bands: Param[int] = Param(integer(minimum=1), 15, "LSH bands.")
    confidence_level: Param[float] = Param(
        probability(), 0.95, "Level of the excess's interval."
    )

    def _check_params(self) -> None:
        if self.bands > self.num_perm:
            msg = (
                f"`bands` ({self.bands}) must be at most `num_perm` ({self.num_perm})."
            )
            raise ParameterError(msg)

    @classmethod
    def applies_by_default(cls, tables: Tables) -> bool:
        """Only tables with a column of kind id, pii or text (formats carry information)."""
        candidates = [
            spec.name for spec in tables.schema.columns if spec.kind in FORMAT_KINDS
        ]
        if not candidates:
            return False
        try:
            candidates = [c for c in candidates if c in tables.synthetic.columns]
            n_rows = len(tables.real)
            return any(
                not is_row_counter(tables.real[name], n_rows) for name in candidates
            )
        except Exception:  # tables partitioned on a cluster: their rows are not here
            return True

    def check_tables(self, tables: Tables) -> None:
        """Named columns must be in both tables."""
        check_named_columns(self.columns, tables)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        assert tables.holdout is not None
        who = people(tables, self.person)
        names = (
            list(self.columns)
            if self.columns is not None
            else _row_columns(tables, who.column)
        )
        n_train, n_people, person = who.n_train, who.n_people, who.person
        pooled = pd.concat(
            [tables.real[names], tables.holdout[names]], ignore_index=True
        )
        found = string_matches(
            row_strings(pooled, names),
            row_strings(tables.synthetic, names),
            shingle=self.shingle,
            threshold=self.threshold,
            num_perm=self.num_perm,
            bands=self.bands,
            seed=int(context.rng.integers(0, 2**31)),
            working_memory=context.working_memory,
        )
        n_real = len(pooled)
        inverse = found["inverse"]
        left, right, jac = found["left"], found["right"], found["jaccard"]
        row_flag = np.isin(inverse[:n_real], left)
        replayed = per_person_any(row_flag, person, n_people)
        t = np.arange(n_people) < n_train
        a, b = int(replayed[:n_train].sum()), int(replayed[n_train:].sum())
        test = replay_test(
            [
                {
                    "part": "row",
                    "training": [a, n_train],
                    "holdout": [b, who.n_holdout],
                    "what": "whose row, as text, a synthetic row nearly copies",
                }
            ],
            confidence_level=self.confidence_level,
        )
        # people replayed through a synthetic row that matches no other real person
        _, who_of, start = holders_of(inverse[:n_real], person, found["n_distinct"])
        alone = unique_matches(left, right, who_of, start, n_people)
        holders = np.diff(start)
        real_keys = np.flatnonzero(holders > 0)
        first_holder = who_of[np.minimum(start[real_keys], max(who_of.size - 1, 0))]
        appears = np.zeros(found["n_distinct"], dtype=bool)
        appears[left] = True
        chance = singleton_chance(
            holders[real_keys],
            first_holder < n_train,
            appears[real_keys],
            len(tables.synthetic),
            approximate=True,
        )
        # synthetic rows that near-copy a training person's row, with the best Jaccard
        n_real_train = len(tables.real)
        train_texts = np.unique(inverse[:n_real_train][row_flag[:n_real_train]])
        on_train = np.isin(left, train_texts)
        best = pd.Series(jac[on_train]).groupby(right[on_train]).max()
        syn_ids = inverse[n_real:]
        carrying = np.isin(syn_ids, best.index.to_numpy())
        carrying_rows = np.flatnonzero(carrying)
        carrying_score = best.reindex(syn_ids[carrying]).to_numpy(dtype=np.float64)
        listed: list[dict[str, Any]] = []
        by_person = RowIndex(person[:n_real_train])
        by_syn = RowIndex(syn_ids)
        by_left = RowIndex(left)
        for p in np.flatnonzero(replayed[:n_train])[:LIST_LIMIT].tolist():
            rows = by_person.rows(p)
            rows = rows[row_flag[rows]]
            synthetic_rows: set[int] = set()
            how: set[str] = set()
            top = 0.0
            for text in set(inverse[rows].tolist()):
                idx = by_left.rows(text)
                top = max(top, float(jac[idx].max()))
                for r in right[idx].tolist():
                    how.add("exact" if r == text else "near")
                    synthetic_rows.update(by_syn.rows(r).tolist())
            listed.append(
                {
                    "rows": rows.tolist(),
                    "synthetic_rows": sorted(synthetic_rows),
                    "match": sorted(how),
                    "jaccard": top,
                }
            )
        p_value = test.get("p_value")
        if a and isinstance(p_value, float) and p_value < 0.05:
            shown = ", ".join(str(s) for s in carrying_rows[:10].tolist())
            more = (
                f" and {carrying_rows.size - 10} more"
                if carrying_rows.size > 10
                else ""
            )
            context.warn(
                f"{a} training people have a row that a synthetic row nearly copies as text, "
                f"significantly more than the holdout people; the synthetic rows: {shown}{more} "
                "(all in the breakdown's `replayed` and the records `replaying_rows`)."
            )
        breakdown: dict[str, JSONValue] = {
            "replayed_training": a,
            "replayed_holdout": b,
            "training_people": n_train,
            "holdout_people": who.n_holdout,
            "person_column": who.column,
            "columns": [str(c) for c in names],
            "separator": SEPARATOR,
            "distinct_real_rows": found["distinct_real"],
            "distinct_synthetic_rows": found["distinct_synthetic"],
            "candidate_pairs": found["candidates"],
            "recall_at_threshold": lsh_recall(
                self.threshold,
                rows=max(self.num_perm // self.bands, 1),
                bands=self.bands,
            ),
            "unique_replayed_training": int((alone & t).sum()),
            "unique_replayed_holdout": int((alone & ~t).sum()),
            "replayed": listed,
            "replaying_synthetic_rows": int(carrying_rows.size),
            "holdout_test": test,
            "chance_model": chance,
        }
        records = {
            "replaying_rows": RecordScores(
                "synthetic",
                carrying_rows.astype(np.int64),
                carrying_score,
                "synthetic rows whose row string nearly copies a training person's (the Jaccard "
                "similarity of the character shingles)",
            )
        }
        score = a / n_train if n_train else None
        ci = wilson_interval(a, n_train) if n_train else None
        return Outcome(score=score, breakdown=breakdown, ci=ci, records=records)
