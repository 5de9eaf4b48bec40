# SPDX-License-Identifier: BSD-3-Clause
"""Quasi-identifier replay: combinations of known columns that single out one real person.

Date of birth, postcode and sex single out most people (Sweeney 2000: 87 % of the US
population); a synthetic row that repeats a combination of such values that only one
real person holds points at that person, whatever its other columns say — and tells
whoever knows them what those other columns claim. SDV checks for reproduced
combinations (``get_combination_overlap``, sdv-dev/SDV#2921) without a control; here the
combinations are counted over the pooled real people (training and holdout), so a
generator of new people replays training and holdout holders alike, and training people
replayed are compared with holdout people replayed
(:mod:`synthrisk.metrics.replay._keys`).

The attacker-known columns are found by name (:data:`KNOWN_NAMES`, shared with the
disclosure family's re-identification risks in :mod:`synthrisk.metrics._known`), or named with
``columns``. Values are compared exactly as given (continuous columns too; dates as
dates: a date-of-birth column stored as text is parsed as the schema parses dates, when
every value parses); a missing value is a value of its own, as in synthpop. Each
combination set is one part of the test: the full set of known columns, and with
``pairs`` (default) each pair of them when there are three or more — an attacker who
knows only a date of birth and a postcode singles people out with those two, and a
generator that repeats the pair but changes the third column escapes the full set.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd

from synthrisk._typing import JSONValue
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._combinations import combination_codes
from synthrisk.metrics._known import (
    KNOWN_NAMES,
    KNOWN_RULE,
    known_columns,
    known_label,
)
from synthrisk.metrics._params import Param, boolean, column_list, integer, probability
from synthrisk.metrics._persons import PERSON, People
from synthrisk.metrics._threat import SOME_COLUMNS, TRAINING, ThreatModel
from synthrisk.metrics.replay._common import people, person_column
from synthrisk.metrics.replay._keys import KeyPart, report, value_part
from synthrisk.results import to_jsonable
from synthrisk.schema.schema import Schema
from synthrisk.schema.tables import Tables

__all__ = [
    "KNOWN_NAMES",
    "KNOWN_RULE",
    "QuasiIdentifierReplay",
    "known_columns",
    "known_label",
]


def _as_dates(values: pd.Series) -> pd.Series | None:
    """Text dates parsed as the schema parses them (ISO 8601, else one unambiguous format)."""
    from pandas.tseries.api import guess_datetime_format

    text = values.dropna().astype(str)
    if text.empty:
        return None
    if text.str.match(r"^\d{4}-\d{2}-\d{2}").all():
        formats = ["ISO8601"]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            first = str(text.iloc[0])
            guesses = [guess_datetime_format(first, dayfirst=d) for d in (False, True)]
            formats = [
                f
                for f in dict.fromkeys(guesses)
                if f is not None
                and pd.to_datetime(text, format=f, errors="coerce").notna().all()
            ]
    if len(formats) != 1:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        parsed = pd.to_datetime(
            values.astype(object).where(values.notna(), None),
            format=formats[0],
            errors="coerce",
        )
    if (parsed.isna() & values.notna()).any():
        return None
    return parsed


def _compared(tables: Tables, columns: list[str]) -> Tables:
    """The tables restricted to ``columns``, text dates of birth parsed as dates."""
    assert tables.holdout is not None
    frames = {
        "real": tables.real[columns].reset_index(drop=True),
        "synthetic": tables.synthetic[columns].reset_index(drop=True),
        "holdout": tables.holdout[columns].reset_index(drop=True),
    }
    for name in columns:
        if tables.schema[name].kind == "datetime":
            continue
        if known_label(name) not in ("date of birth",):
            continue
        stacked = pd.concat([f[name] for f in frames.values()], ignore_index=True)
        parsed = _as_dates(stacked)
        if parsed is None:
            continue
        start = 0
        for key, frame in frames.items():
            frame[name] = parsed.iloc[start : start + len(frame)].to_numpy()
            frames[key] = frame
            start += len(frame)
    specs = tuple(spec for spec in tables.schema.columns if spec.name in set(columns))
    return Tables(
        real=frames["real"],
        synthetic=frames["synthetic"],
        holdout=frames["holdout"],
        schema=Schema(specs),
    )


@register
class QuasiIdentifierReplay(Metric):
    """Real people singled out by known columns whose combination a synthetic row repeats.

    See :mod:`synthrisk.metrics.replay.quasi_identifier`. The score is the share of
    training people replayed through some combination set.

    Parameters
    ----------
    columns : list of str or None, default=None
        The attacker-known columns; None: those found by name (:data:`KNOWN_NAMES`).
    person : str, "auto" or None, default="auto"
        The column that names people with several rows.
    max_people : int, default=1
        A combination is rare when at most this many real people hold it (1: it singles
        out one person).
    pairs : bool, default=True
        Check each pair of known columns too (when there are three or more).
    include_values : bool, default=False
        List the replayed combinations in the breakdown (``replayed_values``, withheld
        from JSON unless values are asked for).
    confidence_level : float, default=0.95
        Level of the excess's interval.
    """

    id = "quasi_identifier_replay"
    report_order = 9
    attack = (
        "An attacker who knows a person's date of birth, postcode, sex (or other known "
        "columns) finds a synthetic row with exactly that combination, which only that person "
        "has, and learns they were in the training data and what the row says about them."
    )
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "share of training people whose combination of known columns, held by at most "
            "`max_people` real people, a synthetic row repeats; the test counts them against "
            "holdout people, whom chance alone replays"
        ),
        known=("columns",),
    )
    higher_is_safer = False
    requires_holdout = True

    columns: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "The attacker-known columns; None: those named like date of birth, postcode, sex, age ...",
    )
    person: Param[str | None] = PERSON
    max_people: Param[int] = Param(
        integer(minimum=1),
        1,
        "A combination is rare when at most this many real people hold it.",
    )
    pairs: Param[bool] = Param(
        boolean(), True, "Check each pair of known columns too (three or more)."
    )
    include_values: Param[bool] = Param(
        boolean(),
        False,
        "List the replayed combinations (withheld from JSON unless asked for).",
    )
    confidence_level: Param[float] = Param(
        probability(), 0.95, "Level of the excess's interval."
    )

    @classmethod
    def applies_by_default(cls, tables: Tables) -> bool:
        """Only with a holdout, and when at least two known columns are found by name."""
        if tables.holdout is None:
            return False
        try:
            return len(known_columns(tables, person="auto")) >= 2
        except Exception:
            return True

    def check_tables(self, tables: Tables) -> None:
        """Named columns must be in both tables, and not the person key."""
        for name in self.columns or ():
            if name not in tables.real.columns or name not in tables.synthetic.columns:
                msg = (
                    f"`columns` names {name!r}, which is not a column of both the real and the "
                    "synthetic table; name the attacker-known columns of both tables, or leave "
                    f"`columns` unset to find them by name. Columns: "
                    f"{list(map(str, tables.real.columns))}."
                )
                raise ParameterError(msg)
        if self.columns and tables.holdout is not None:
            key = person_column(tables, self.person)
            if key is not None and key in self.columns:
                msg = (
                    f"`columns` names {key!r}, the person key: it numbers people and is not "
                    "something an attacker knows about them; leave it out of `columns`, or pass "
                    "person=None if it is not a person key."
                )
                raise ParameterError(msg)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        who = people(tables, self.person)
        given = self.columns is not None
        names = (
            list(self.columns or ())
            if given
            else known_columns(tables, person=self.person)
        )
        if not names or (not given and len(names) < 2):
            found = f"found only {names[0]!r}" if names else "found none"
            reason = (
                f"quasi_identifier_replay needs at least two attacker-known columns and {found} by "
                "name (date of birth, postcode, sex, age, race, marital status, place of residence, "
                "nationality); name them with `columns=[...]` (in YAML: `params: {columns: [...]}`)."
            )
            context.warn(reason)
            return Outcome(score=None, breakdown={"combinations": {}}, reason=reason)
        compared = _compared(tables, names)
        sets = [names]
        if self.pairs and len(names) >= 3:
            sets += [list(pair) for pair in itertools.combinations(names, 2)]
        parts: list[KeyPart] = [self._part(compared, columns, who) for columns in sets]
        parts = [part for part in parts if part.holds.any()] or parts[:1]

        def value_of(part: KeyPart, row: int) -> JSONValue:
            return {c: to_jsonable(tables.real[c].iloc[row]) for c in part.columns}

        outcome = report(
            parts,
            who,
            n_synthetic=len(tables.synthetic),
            confidence_level=self.confidence_level,
            include_values=self.include_values,
            value_of=value_of,
            context=context,
            group="combinations",
            what="a rare combination",
            advice=(
                "Coarsen the known columns (year of birth, postcode district, age bands) or "
                "regenerate before release."
            ),
            extra={
                "known_columns": list(names),
                "columns_chosen_by": "`columns`" if given else KNOWN_RULE,
                "max_people": self.max_people,
            },
        )
        return outcome

    def _part(self, compared: Tables, columns: list[str], who: People) -> KeyPart:
        codes, _ = combination_codes(compared, columns)
        real = np.concatenate([codes["real"], codes["holdout"]]).astype(np.int64)
        return value_part(
            real,
            codes["synthetic"].astype(np.int64),
            who,
            max_people=self.max_people,
            name="+".join(columns),
            columns=list(columns),
            match="combination",
        )
