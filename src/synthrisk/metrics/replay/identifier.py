# SPDX-License-Identifier: BSD-3-Clause
"""Identifier replay: real people's identifiers (e-mails, phones, codes) in the synthetic table.

Every other metric leaves columns of kind ``id`` and ``pii`` out. Here each such column
is checked on its own: a real person is **replayed** when a synthetic row carries their
value, exactly or after normalisation (:mod:`synthrisk.metrics.replay._normalise`). The
unit is the person (a person with several rows counts once). Training people replayed
are compared with holdout people replayed (people the generator never saw, whose values
reach the synthetic table only by chance: shared values, a generator that draws from a
public list of names), with the exact one-sided test of the identification metric, per
column, Bonferroni across columns; the headline is the worst column.

Left out: the person key of a panel table (``person``: it numbers people, and a
generator that numbers its own people the same way matches it without copying anyone;
name it in ``columns`` to check it), and any column of dense small integers (row
numbers and surrogate keys, :func:`~synthrisk.metrics.replay._common.is_row_counter`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._typing import JSONValue
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, boolean, column_list, custom, probability
from synthrisk.metrics._persons import PERSON
from synthrisk.metrics._threat import SYNTHETIC_ONLY, TRAINING, ThreatModel
from synthrisk.metrics.replay._common import (
    LIST_LIMIT,
    RowIndex,
    check_named_columns,
    is_row_counter,
    key_holders,
    people,
    per_person_any,
    person_column,
    real_values,
    replay_test,
    singleton_chance,
)
from synthrisk.metrics.replay._normalise import DEFAULT_REGION, Normaliser, check_region
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.intervals import wilson_interval

__all__ = ["IdentifierReplay", "identifier_columns"]

KINDS = ("id", "pii")


def identifier_columns(tables: Tables, *, person: str | None) -> list[str]:
    """The id and pii columns checked by default (see the module docstring)."""
    key = person_column(tables, person) if tables.holdout is not None else None
    n_rows = len(tables.real) + (0 if tables.holdout is None else len(tables.holdout))
    out = []
    for spec in tables.schema.columns:
        if spec.kind not in KINDS or spec.name == key:
            continue
        if spec.name not in tables.synthetic.columns:
            continue
        if spec.semantic is None and is_row_counter(tables.real[spec.name], n_rows):
            continue
        out.append(spec.name)
    return out


def _member(values: np.ndarray, pool: Iterable[object]) -> np.ndarray:
    """Whether each value is in ``pool``, by hashing (``np.isin`` on strings sorts objects)."""
    return pd.Series(values, dtype=object).isin(set(pool)).to_numpy()


@register
class IdentifierReplay(Metric):
    """Real people whose identifier (e-mail, phone, code) a synthetic row carries.

    See :mod:`synthrisk.metrics.replay.identifier`. The score is the share of training
    people replayed in some checked column.

    Parameters
    ----------
    columns : list of str or None, default=None
        Columns to check; None: every column of kind id or pii except the person key
        and row counters.
    person : str, "auto" or None, default="auto"
        The column that names people with several rows.
    phone_region : str, default="US"
        Region of phone numbers written without a country code.
    include_values : bool, default=False
        List the replayed values in the breakdown (``replayed_values``, withheld from
        JSON unless values are asked for).
    confidence_level : float, default=0.95
        Level of the excess's interval.
    """

    id = "identifier_replay"
    report_order = 7
    attack = (
        "An attacker holding the synthetic table reads the e-mails, phone numbers and codes in "
        "it and finds real people's own identifiers."
    )
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "share of training people whose identifier value (exactly or normalised) a synthetic row "
            "carries; the test counts them against holdout people, whom chance alone replays"
        ),
    )
    higher_is_safer = False
    requires_holdout = True

    columns: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Columns to check; None: the id and pii columns.",
    )
    person: Param[str | None] = PERSON
    phone_region: Param[str] = Param(
        custom(check_region, "a two-letter region code"),
        DEFAULT_REGION,
        "Region of phone numbers written without a country code.",
    )
    include_values: Param[bool] = Param(
        boolean(),
        False,
        "List the replayed values (withheld from JSON unless asked for).",
    )
    confidence_level: Param[float] = Param(
        probability(), 0.95, "Level of the excess's interval."
    )

    @classmethod
    def applies_by_default(cls, tables: Tables) -> bool:
        """Only tables with an id or pii column to check (besides the person key)."""
        if tables.holdout is None:
            return any(
                spec.kind in KINDS
                and not is_row_counter(tables.real[spec.name], len(tables.real))
                for spec in tables.schema.columns
            )
        try:
            return bool(identifier_columns(tables, person="auto"))
        except Exception:
            return True

    def check_tables(self, tables: Tables) -> None:
        """Named columns must be in both tables."""
        check_named_columns(self.columns, tables)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        who = people(tables, self.person)
        names = (
            list(self.columns)
            if self.columns is not None
            else identifier_columns(tables, person=self.person)
        )
        if not names:
            reason = (
                "no column of kind id or pii to check (the person key and row counters are left "
                "out); declare identifier columns with kind 'pii' in the metadata, or name them in "
                "`columns`."
            )
            context.warn(reason)
            return Outcome(score=None, breakdown={"columns": {}}, reason=reason)
        normalise = Normaliser(self.phone_region)
        n_train, n_people = who.n_train, who.n_people
        person = who.person
        any_replayed = np.zeros(n_people, dtype=bool)
        any_unique = np.zeros(n_people, dtype=bool)
        chances: list[dict[str, Any]] = []
        parts: list[dict[str, Any]] = []
        per_column: dict[str, JSONValue] = {}
        listed: list[dict[str, Any]] = []
        values_shown: list[JSONValue] = []
        row_match: dict[int, float] = {}
        for name in names:
            real = real_values(tables, name)
            present = real.notna().to_numpy()
            raw_real = real.astype(str).to_numpy()
            synthetic = tables.synthetic[name]
            syn_present = synthetic.notna().to_numpy()
            raw_syn = synthetic.astype(str).to_numpy()
            norm_real = np.asarray(normalise.many(raw_real), dtype=object)
            norm_syn = np.asarray(normalise.many(raw_syn), dtype=object)
            exact_set = set(raw_syn[syn_present].tolist())
            norm_set = set(norm_syn[syn_present].tolist()) - {""}
            row_exact = present & _member(raw_real, exact_set)
            row_norm = present & (norm_real != "") & _member(norm_real, norm_set)
            row_any = row_exact | row_norm
            has_value = per_person_any(present & (norm_real != ""), person, n_people)
            replayed = per_person_any(row_any, person, n_people)
            exact_people = per_person_any(row_exact, person, n_people)
            any_replayed |= replayed
            # values one real person holds: the chance model and the strict policy
            uniques, holders, owner = key_holders(
                norm_real, present & (norm_real != ""), person
            )
            appears = _member(uniques, norm_set)
            chance = singleton_chance(
                holders, owner < n_train, appears, len(synthetic), tests=len(names)
            )
            chance["column"] = name
            chances.append(chance)
            any_unique[owner[(holders == 1) & appears]] = True
            t = np.arange(n_people) < n_train
            a, n_a = int((replayed & t).sum()), int((has_value & t).sum())
            b, n_b = int((replayed & ~t).sum()), int((has_value & ~t).sum())
            distinct = int(pd.unique(norm_real[present]).size)
            repeats = 1.0 - distinct / max(int(present.sum()), 1)
            parts.append(
                {
                    "part": name,
                    "training": [a, n_a],
                    "holdout": [b, n_b],
                    "what": f"whose {name!r} a synthetic row carries",
                }
            )
            per_column[name] = {
                "training_replayed": a,
                "training_replayed_exact": int((exact_people & t).sum()),
                "training_replayed_normalised": int(
                    (replayed & ~exact_people & t).sum()
                ),
                "holdout_replayed": b,
                "training_people": n_a,
                "holdout_people": n_b,
                "distinct_values": distinct,
                "chance": (
                    f"{repeats:.0%} of real rows share their value with another row: chance matches "
                    "are expected, and the holdout people carry their rate"
                    if repeats > 0.01
                    else "values are (almost) all distinct: a match by chance is rare"
                ),
            }
            # synthetic rows that carry a training person's value (vectorised); the
            # listed people (the first LIST_LIMIT) with their rows
            n_real_train = len(tables.real)
            train_hit = row_any[:n_real_train]
            exact_forms = raw_real[:n_real_train][row_exact[:n_real_train]]
            norm_forms = norm_real[:n_real_train][train_hit]
            carries_exact = syn_present & _member(raw_syn, exact_forms)
            carries = syn_present & (norm_syn != "") & _member(norm_syn, norm_forms)
            for s in np.flatnonzero(carries | carries_exact).tolist():
                row_match[s] = max(
                    row_match.get(s, 0.0), 1.0 if carries_exact[s] else 0.5
                )
            if len(listed) >= LIST_LIMIT:
                continue
            by_person = RowIndex(person[:n_real_train])
            syn_norm_codes, uniques = pd.factorize(norm_syn)
            syn_norm_uniques = pd.Index(uniques)
            by_norm = RowIndex(syn_norm_codes)
            for p in np.flatnonzero(replayed[:n_train])[
                : LIST_LIMIT - len(listed)
            ].tolist():
                rows = by_person.rows(p)
                rows = rows[row_any[rows]]
                carrying: set[int] = set()
                exact = bool(row_exact[rows].any())
                for form in set(norm_real[rows].tolist()):
                    code = syn_norm_uniques.get_indexer([form])[0]
                    if code >= 0:
                        carrying.update(
                            r
                            for r in by_norm.rows(int(code)).tolist()
                            if syn_present[r]
                        )
                for r in rows.tolist():
                    carrying.update(
                        np.flatnonzero(
                            carries_exact & (raw_syn == raw_real[r])
                        ).tolist()
                        if exact
                        else []
                    )
                listed.append(
                    {
                        "rows": rows.tolist(),
                        "synthetic_rows": sorted(carrying),
                        "column": name,
                        "match": "exact" if exact else "normalised",
                    }
                )
                if self.include_values and len(values_shown) < LIST_LIMIT:
                    values_shown.append(
                        {"column": name, "value": str(raw_real[int(rows[0])])}
                    )
        test = replay_test(parts, confidence_level=self.confidence_level)
        found = int(any_replayed[:n_train].sum())
        rows_carrying = sorted(row_match)
        p_value = test.get("p_value")
        if found and isinstance(p_value, float) and p_value < 0.05:
            shown = ", ".join(str(s) for s in rows_carrying[:10])
            more = (
                f" and {len(rows_carrying) - 10} more"
                if len(rows_carrying) > 10
                else ""
            )
            context.warn(
                f"{found} training people have an identifier value ({', '.join(names)}) that the "
                f"synthetic table carries, significantly more than the holdout people; the synthetic "
                f"rows that carry them: {shown}{more} (all in the breakdown's `replayed` and the "
                "records `replaying_rows`). Replace these columns with fake values before release."
            )
        breakdown: dict[str, JSONValue] = {
            "replayed_training": found,
            "replayed_holdout": int(any_replayed[n_train:].sum()),
            "training_people": n_train,
            "holdout_people": who.n_holdout,
            "person_column": who.column,
            "phone_region": self.phone_region,
            "columns": per_column,
            "replayed": listed[:LIST_LIMIT],
            "replaying_synthetic_rows": len(rows_carrying),
            "unique_replayed_training": int(any_unique[:n_train].sum()),
            "unique_replayed_holdout": int(any_unique[n_train:].sum()),
            "chance_model": min(chances, key=lambda c: (c["p_value"], -c["replayed"])),
            "holdout_test": test,
        }
        value_keys: tuple[str, ...] = ()
        if self.include_values:
            breakdown["replayed_values"] = values_shown
            value_keys = ("replayed_values",)
        records = {
            "replaying_rows": RecordScores(
                "synthetic",
                np.asarray(rows_carrying, dtype=np.int64),
                np.asarray([row_match[s] for s in rows_carrying], dtype=np.float64),
                "synthetic rows that carry a training person's identifier (1: exactly, 0.5: after "
                "normalisation)",
            )
        }
        score = found / n_train if n_train else None
        ci = wilson_interval(found, n_train) if n_train else None
        return Outcome(
            score=score,
            breakdown=breakdown,
            ci=ci,
            records=records,
            value_keys=value_keys,
        )
