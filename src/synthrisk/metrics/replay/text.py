# SPDX-License-Identifier: BSD-3-Clause
"""Text replay: real people's free text copied into the synthetic table.

For each column of kind ``text``, a real person is **replayed** when a synthetic cell

* is a **near copy** of one of their cells: the Jaccard similarity of the two cells'
  sets of ``shingle``-word shingles (after lowercasing, removing punctuation and
  collapsing whitespace) is at least ``threshold``. Candidate pairs come from MinHash
  signatures with LSH banding (:mod:`synthrisk.metrics.replay._minhash`) and are
  confirmed with the exact Jaccard;
* contains a **verbatim span**: a run of at least ``span`` consecutive words of their
  cell that no other real person's cells contain (common phrases are not a copy);
* carries an **entity** of their text: an e-mail, phone number or code found by pattern
  in their cell and in a synthetic cell, after normalisation.

Training people replayed are compared with holdout people replayed (exact one-sided
test, per column, Bonferroni across columns), people as the unit, as
:mod:`synthrisk.metrics.replay.identifier` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._typing import JSONValue
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import (
    Param,
    boolean,
    column_list,
    custom,
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
    people,
    per_person_any,
    real_values,
    replay_test,
    singleton_chance,
)
from synthrisk.metrics.replay._minhash import (
    lsh_recall,
    near_pairs,
    prepare_texts,
    span_pairs,
    word_counts,
)
from synthrisk.metrics.replay._normalise import (
    DEFAULT_REGION,
    ENTITY_PATTERN,
    Normaliser,
    check_region,
    find_entities,
)
from synthrisk.metrics.replay.row_string import holders_of, unique_matches
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.exact import excess_greater_p
from synthrisk.stats.intervals import wilson_interval

__all__ = ["TextReplay", "text_matches"]

#: a band key shared by more distinct real texts than this is common phrasing
BUCKET_CAP = 64


def text_matches(
    real: pd.Series,
    synthetic: pd.Series,
    *,
    shingle: int,
    threshold: float,
    span: int,
    num_perm: int,
    bands: int,
    seed: int,
    real_person: np.ndarray,
    normalise: Normaliser,
    entities: bool = True,
    working_memory: float | None = None,
) -> dict[str, Any]:
    """Which real rows a synthetic cell replays, and how.

    Returns per real row ``near`` (a near copy), ``span`` and ``entity`` flags, the
    best Jaccard per real row, the replaying synthetic rows of each real row (sparse
    pairs ``pair_real``, ``pair_synthetic``, ``pair_how``) and the candidate counts.
    """
    n_real, n_syn = len(real), len(synthetic)
    values = np.concatenate(
        [real.to_numpy(dtype=object), synthetic.to_numpy(dtype=object)]
    )
    data, offsets, may_hold_entity = prepare_texts(values)
    # near copies: LSH over the distinct texts, confirmed by the exact Jaccard
    found = near_pairs(
        data,
        offsets,
        n_real,
        shingle=shingle,
        threshold=threshold,
        num_perm=num_perm,
        bands=bands,
        seed=seed,
        cap=BUCKET_CAP,
        working_memory=working_memory,
    )
    first, inverse = found.first, found.inverse
    real_texts, syn_texts = found.real_texts, found.syn_texts
    n_distinct, candidates = found.n_distinct, found.candidates
    near = (found.left, found.right, found.jaccard)
    # verbatim spans of `span` words found in one real person's cells only
    pair_code = np.unique(inverse[:n_real] * max(len(real_person), 1) + real_person)
    people_per_text = np.bincount(
        pair_code // max(len(real_person), 1), minlength=n_distinct
    )
    counts = word_counts(data, offsets)
    span_left, span_right = span_pairs(
        data,
        offsets,
        first[real_texts],
        first[syn_texts],
        people_per_text[real_texts] == 1,
        span=span,
        counts=counts,
        working_memory=working_memory,
    )
    del counts
    code = np.unique(real_texts[span_left] * n_distinct + syn_texts[span_right])
    span_pairs_ = (code // n_distinct, code % n_distinct)
    # entities inside the text
    entity_pairs: tuple[np.ndarray, np.ndarray] = (
        np.zeros(0, np.int64),
        np.zeros(0, np.int64),
    )
    if entities:
        cells = np.flatnonzero(may_hold_entity)
        real_forms: dict[str, set[int]] = {}
        syn_forms: dict[str, set[int]] = {}
        for c, text in zip(cells.tolist(), values[cells].tolist(), strict=True):
            if not isinstance(text, str) or not ENTITY_PATTERN.search(text):
                continue
            target = real_forms if c < n_real else syn_forms
            for form in find_entities(text, normalise):
                target.setdefault(form, set()).add(int(inverse[c]))
        el, er = [], []
        for form, texts in real_forms.items():
            for s in syn_forms.get(form, ()):
                for t in texts:
                    el.append(t)
                    er.append(s)
        if el:
            code = np.unique(
                np.asarray(el, np.int64) * n_distinct + np.asarray(er, np.int64)
            )
            entity_pairs = (code // n_distinct, code % n_distinct)
    return {
        "inverse": inverse,
        "n_real": n_real,
        "n_syn": n_syn,
        "near": near,
        "span": span_pairs_,
        "entity": entity_pairs,
        "candidates": candidates,
        "distinct_real": int(real_texts.size),
        "distinct_synthetic": int(syn_texts.size),
    }


@register
class TextReplay(Metric):
    """Real people whose free text a synthetic cell copies (near copy, verbatim span, entity).

    See :mod:`synthrisk.metrics.replay.text`. The score is the share of training people
    replayed in some text column.

    Parameters
    ----------
    columns : list of str or None, default=None
        Text columns to check; None: every column of kind text.
    person : str, "auto" or None, default="auto"
        The column that names people with several rows.
    threshold : float, default=0.5
        Smallest Jaccard similarity of shingle sets that makes a near copy.
    shingle : int, default=3
        Words per shingle.
    span : int, default=8
        Fewest consecutive words of one real person's cell that make a verbatim span.
    num_perm : int, default=96
        MinHash permutations (``bands`` bands of ``num_perm // bands`` rows).
    bands : int, default=32
        LSH bands.
    entities : bool, default=True
        Also match e-mails, phone numbers and codes found inside the text.
    phone_region : str, default="US"
        Region of phone numbers written without a country code.
    confidence_level : float, default=0.95
        Level of the excess's interval.
    """

    id = "text_replay"
    report_order = 8
    cost = 2.0
    attack = (
        "An attacker holding the synthetic table reads its free text and finds real people's "
        "notes, copied whole, nearly, or in long verbatim passages."
    )
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "share of training people whose free text a synthetic cell copies (near copy, verbatim "
            "span or an identifier inside it); the test counts them against holdout people"
        ),
    )
    higher_is_safer = False
    requires_holdout = True

    columns: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Text columns to check; None: the text columns.",
    )
    person: Param[str | None] = PERSON
    threshold: Param[float] = Param(
        number(gt=0, le=1), 0.5, "Smallest Jaccard similarity that makes a near copy."
    )
    shingle: Param[int] = Param(integer(minimum=1), 3, "Words per shingle.")
    span: Param[int] = Param(
        integer(minimum=2), 8, "Fewest consecutive words that make a verbatim span."
    )
    num_perm: Param[int] = Param(integer(minimum=1), 96, "MinHash permutations.")
    bands: Param[int] = Param(integer(minimum=1), 32, "LSH bands.")
    entities: Param[bool] = Param(
        boolean(), True, "Also match e-mails, phones and codes inside the text."
    )
    phone_region: Param[str] = Param(
        custom(check_region, "a two-letter region code"),
        DEFAULT_REGION,
        "Region of phone numbers written without a country code.",
    )
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
        """Only tables with a text column."""
        return any(
            spec.kind == "text" and spec.name in tables.synthetic.columns
            for spec in tables.schema.columns
        )

    def check_tables(self, tables: Tables) -> None:
        """Named columns must be in both tables."""
        check_named_columns(self.columns, tables)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        who = people(tables, self.person)
        names = (
            list(self.columns)
            if self.columns is not None
            else [
                s.name
                for s in tables.schema.columns
                if s.kind == "text" and s.name in tables.synthetic.columns
            ]
        )
        if not names:
            reason = (
                "no column of kind text to check; declare free-text columns with kind 'text' in "
                "the metadata, or name them in `columns`."
            )
            context.warn(reason)
            return Outcome(score=None, breakdown={"columns": {}}, reason=reason)
        normalise = Normaliser(self.phone_region)
        n_train, n_people, person = who.n_train, who.n_people, who.person
        rows_per_band = max(self.num_perm // self.bands, 1)
        any_replayed = np.zeros(n_people, dtype=bool)
        parts: list[dict[str, Any]] = []
        per_column: dict[str, JSONValue] = {}
        listed: list[dict[str, Any]] = []
        row_score: dict[int, float] = {}
        t = np.arange(n_people) < n_train
        any_alone = np.zeros(n_people, dtype=bool)
        chances: list[tuple[float, dict[str, JSONValue]]] = []
        for index, name in enumerate(names):
            real = real_values(tables, name)
            found = text_matches(
                real,
                tables.synthetic[name],
                shingle=self.shingle,
                threshold=self.threshold,
                span=self.span,
                num_perm=self.num_perm,
                bands=self.bands,
                seed=int(context.rng.integers(0, 2**31)) + index,
                real_person=person,
                normalise=normalise,
                entities=self.entities,
                working_memory=context.working_memory,
            )
            n_real = found["n_real"]
            inverse = found["inverse"]
            kinds = ("near", "span", "entity")
            pair_left = np.concatenate([found[k][0] for k in kinds])
            pair_right = np.concatenate([found[k][1] for k in kinds])
            pair_score = np.concatenate(
                [found["near"][2]] + [np.ones(found[k][0].size) for k in kinds[1:]]
            )
            pair_jaccard = np.concatenate(
                [found["near"][2]] + [np.zeros(found[k][0].size) for k in kinds[1:]]
            )
            row_flag = np.isin(inverse[:n_real], pair_left)
            replayed = per_person_any(row_flag, person, n_people)
            has_text = per_person_any(real.notna().to_numpy(), person, n_people)
            kinds_people = {
                k: per_person_any(
                    np.isin(inverse[:n_real], found[k][0]), person, n_people
                )
                for k in kinds
            }
            any_replayed |= replayed
            # people replayed through a match no other real person shares, and chance
            n_distinct = int(inverse.max()) + 1 if inverse.size else 1
            _, who_of, start = holders_of(inverse[:n_real], person, n_distinct)
            any_alone |= unique_matches(pair_left, pair_right, who_of, start, n_people)
            holders = np.diff(start)
            keys = np.flatnonzero(holders > 0)
            appears = np.zeros(n_distinct, dtype=bool)
            appears[found["near"][0]] = True
            chance = singleton_chance(
                holders[keys],
                who_of[start[keys]] < n_train,
                appears[keys],
                len(tables.synthetic),
                tests=len(names),
                approximate=True,
            )
            a, n_a = int((replayed & t).sum()), int((has_text & t).sum())
            b, n_b = int((replayed & ~t).sum()), int((has_text & ~t).sum())
            parts.append(
                {
                    "part": name,
                    "training": [a, n_a],
                    "holdout": [b, n_b],
                    "what": f"whose {name!r} a synthetic cell copies",
                }
            )
            chances.append(
                (excess_greater_p(a, n_a, b, n_b), {"column": name, **chance})
            )
            per_column[name] = {
                "training_replayed": a,
                "holdout_replayed": b,
                "training_near_copies": int((kinds_people["near"] & t).sum()),
                "holdout_near_copies": int((kinds_people["near"] & ~t).sum()),
                "training_spans": int((kinds_people["span"] & t).sum()),
                "holdout_spans": int((kinds_people["span"] & ~t).sum()),
                "training_entities": int((kinds_people["entity"] & t).sum()),
                "holdout_entities": int((kinds_people["entity"] & ~t).sum()),
                "training_people": n_a,
                "holdout_people": n_b,
                "distinct_real_texts": found["distinct_real"],
                "distinct_synthetic_texts": found["distinct_synthetic"],
                "candidate_pairs": found["candidates"],
                "recall_at_threshold": lsh_recall(
                    self.threshold, rows=rows_per_band, bands=self.bands
                ),
            }
            # synthetic rows that replay a training person's text (vectorised), and the
            # listed people (the first LIST_LIMIT) with their rows
            n_real_train = len(tables.real)
            train_pairs = np.isin(
                pair_left, inverse[:n_real_train][row_flag[:n_real_train]]
            )
            best_of_syn = (
                pd.Series(pair_score[train_pairs])
                .groupby(pair_right[train_pairs])
                .max()
            )
            syn_ids = inverse[n_real:]
            carrying_mask = np.isin(syn_ids, best_of_syn.index.to_numpy())
            for s, score in zip(
                np.flatnonzero(carrying_mask).tolist(),
                best_of_syn.reindex(syn_ids[carrying_mask]).to_numpy().tolist(),
                strict=True,
            ):
                row_score[s] = max(row_score.get(s, 0.0), float(score))
            if len(listed) >= LIST_LIMIT:
                continue
            by_person = RowIndex(person[:n_real_train])
            by_syn_text = RowIndex(syn_ids)
            by_left = RowIndex(pair_left)
            how_names = np.repeat(np.asarray(kinds), [found[k][0].size for k in kinds])
            for p in np.flatnonzero(replayed[:n_train])[
                : LIST_LIMIT - len(listed)
            ].tolist():
                rows = by_person.rows(p)
                rows = rows[row_flag[rows]]
                carrying: set[int] = set()
                how: set[str] = set()
                best = 0.0
                for text in set(inverse[rows].tolist()):
                    idx = by_left.rows(text)
                    how.update(how_names[idx].tolist())
                    best = max(best, float(pair_jaccard[idx].max()))
                    for right in pair_right[idx].tolist():
                        carrying.update(by_syn_text.rows(right).tolist())
                listed.append(
                    {
                        "rows": rows.tolist(),
                        "synthetic_rows": sorted(carrying),
                        "column": name,
                        "match": sorted(how),
                        "jaccard": best,
                    }
                )
        test = replay_test(parts, confidence_level=self.confidence_level)
        found_people = int(any_replayed[:n_train].sum())
        carrying_rows = sorted(row_score)
        p_value = test.get("p_value")
        if found_people and isinstance(p_value, float) and p_value < 0.05:
            shown = ", ".join(str(s) for s in carrying_rows[:10])
            more = (
                f" and {len(carrying_rows) - 10} more"
                if len(carrying_rows) > 10
                else ""
            )
            context.warn(
                f"{found_people} training people have free text ({', '.join(names)}) that a synthetic "
                f"cell copies, significantly more than the holdout people; the synthetic rows that "
                f"carry it: {shown}{more} (all in the breakdown's `replayed` and the records "
                "`replaying_rows`). Regenerate the text, or leave it out of the release."
            )
        breakdown: dict[str, JSONValue] = {
            "replayed_training": found_people,
            "replayed_holdout": int(any_replayed[n_train:].sum()),
            "training_people": n_train,
            "holdout_people": who.n_holdout,
            "person_column": who.column,
            "columns": per_column,
            "replayed": listed[:LIST_LIMIT],
            "replaying_synthetic_rows": len(carrying_rows),
            "holdout_test": test,
            "unique_replayed_training": int((any_alone & t).sum()),
            "unique_replayed_holdout": int((any_alone & ~t).sum()),
            "chance_model": min(chances, key=lambda c: c[0])[1] if chances else None,
        }
        records = {
            "replaying_rows": RecordScores(
                "synthetic",
                np.asarray(carrying_rows, dtype=np.int64),
                np.asarray([row_score[s] for s in carrying_rows], dtype=np.float64),
                "synthetic rows whose text copies a training person's (the Jaccard similarity of a "
                "near copy; 1 for a verbatim span or identifier)",
            )
        }
        score = found_people / n_train if n_train else None
        ci = wilson_interval(found_people, n_train) if n_train else None
        return Outcome(score=score, breakdown=breakdown, ci=ci, records=records)
