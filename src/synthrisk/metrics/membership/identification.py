# SPDX-License-Identifier: BSD-3-Clause
"""Identification: real people the synthetic table reproduces, training against holdout.

The unit is a real person (:mod:`synthrisk.metrics.membership._people`). A synthetic row
identifies a person when it is an exact copy of a record no other real person shares,
or a near copy: closer to them, relative to their nearest other real person, than
chance brings strangers. Every training person and every holdout person is judged — no
arm is subsampled, so no copy is lost — and the share of identified training people is
compared with the share of identified holdout people (new people the generator never
saw, who are identified only by chance):

* **all people**: identified training people against identified holdout people,
  Boschloo's exact unconditional test (Fisher's on large tables);
* **the most isolated people** (Meeus et al. 2023): exact copies among the most
  isolated 1 % and 5 % of training people against exact copies among the most isolated
  20 % of holdout people. A generator that memorised no one reproduces an isolated
  record no more often than a less isolated one (an isolated record lies where real
  people are rare), so the wider holdout stratum bounds the chance rate of the narrow
  one, and copies of a handful of isolated people stand out where a comparison of
  everyone would drown them in chance matches (frequent on coarse tables).
  **People with several rows** are compared with the *same* stratum of holdout people,
  cut at a value of isolation (every person tied at the cut is in, on both sides): a
  person's isolation is their most isolated row's and their chance of an exact copy
  grows with each row, so the longest histories are both the most isolated and the
  most often matched by chance, and a wider stratum would have a lower chance rate (a
  null hospital's procedures table: 180 of the 371 most isolated 5 % of training
  patients against 569 of the 1,487 most isolated 20 % of holdout patients).

* **whole histories** (panel data, when the synthetic table has the person key too):
  real people whose history — the multiset of their records — one synthetic person
  reproduces record for record, among people whose history no other real person
  shares. Chance matches of one coarse yearly row are common; a whole history
  reproduced by one synthetic person is not.

The p-values are combined by Bonferroni; the headline effect is the excess number
of identified training people of the part with the smallest p-value. The verdict's
tolerance is 0 people: any significant excess fails, and the result states how many
identified training people the test would have detected at this size.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._typing import JSONValue
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, custom, number, probability
from synthrisk.metrics._persons import people_excess
from synthrisk.metrics._threat import SYNTHETIC_ONLY, TRAINING, ThreatModel
from synthrisk.metrics.membership._chance import (
    ChanceModel,
    chance_model,
)
from synthrisk.metrics.membership._people import (
    PERSON,
    Geometry,
    People,
    find_person_column,
    geometry,
    isolation_rank,
    near_threshold,
    people_of,
    per_person,
    stratum,
    tied_stratum,
)
from synthrisk.metrics.membership._row_keys import row_keys
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.exact import detectable_excess, excess_greater_p
from synthrisk.stats.intervals import wilson_interval

__all__ = ["Identification", "IdentificationParts", "identification_parts"]

#: the level at which "detectable at this size" is stated: the first Holm step of a
#: default run (about ten gating tests at 0.05) within the three parts of this test
REFERENCE_LEVEL = 0.05 / 10 / 3
#: identified training people listed in the breakdown (all are in the records)
LIST_LIMIT = 200


def _shares(value: Any, name: str) -> tuple[float, ...]:
    if isinstance(value, (int, float)):
        value = [value]
    try:
        shares = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        shares = ()
    if not shares or not all(0 < s < 1 for s in shares):
        msg = f"`{name}` must be a list of shares in (0, 1); got {value!r}."
        raise ParameterError(msg)
    return tuple(sorted(set(shares)))


class IdentificationParts:
    """The counts and tests of one identification run (also used by the self-test)."""

    def __init__(
        self,
        people: People,
        geo: Geometry,
        threshold: float,
        strata: tuple[float, ...],
        control_share: float,
        histories: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.people = people
        self.threshold = threshold
        n_people, person = people.n_people, people.person
        ratio = geo.ratio()
        row_identified = ratio <= threshold
        row_exact = (geo.to_synthetic == 0) & (geo.isolation > 0)
        self.row_ratio = ratio
        self.identified = (
            per_person(row_identified.astype(float), person, n_people, how="max") > 0
        )
        self.exact = (
            per_person(row_exact.astype(float), person, n_people, how="max") > 0
        )
        self.isolation = per_person(geo.isolation, person, n_people, how="max")
        self.ratio = per_person(ratio, person, n_people, how="min")
        self.training = np.arange(n_people) < people.n_train
        eligible = self.isolation > 0
        #: people with several rows: each stratum's exact copies are compared with the
        #: same stratum of holdout people (see the module docstring)
        self.several_rows = people.max_rows > 1
        if self.several_rows:
            tied = {s: tied_stratum(self.isolation, s, eligible) for s in strata}
            self.strata = {s: m & self.training for s, m in tied.items()}
            self.top_holdout = {s: m & ~self.training for s, m in tied.items()}
            self.control = self.top_holdout[max(strata)]
        else:
            rank = isolation_rank(np.where(eligible, self.isolation, -1.0))
            self.control = stratum(rank, control_share, eligible) & ~self.training
            self.strata = {
                s: stratum(rank, s, eligible) & self.training for s in strata
            }
            self.top_holdout = {
                s: stratum(rank, s, eligible) & ~self.training for s in strata
            }
        self.control_share = control_share
        # panel data: real people whose whole history (the multiset of their records)
        # a synthetic person reproduces, among people whose history no other real
        # person shares (``histories``: [copied, unique] per person)
        self.history_copied: np.ndarray | None = None
        self.history_unique: np.ndarray | None = None
        if histories is not None:
            self.history_copied, self.history_unique = histories
        self.geo = geo
        #: ids of the distinct records of the pooled real rows and of the synthetic rows
        self.record_ids: tuple[np.ndarray, np.ndarray] | None = None

    def chance(self) -> ChanceModel | None:
        """How many of the copied training people chance explains (None without record ids)."""
        if self.record_ids is None:
            return None
        pool_ids, synthetic_ids = self.record_ids
        return chance_model(
            pool_ids=pool_ids,
            synthetic_ids=synthetic_ids,
            person=self.people.person,
            n_train=self.people.n_train,
            exact=self.exact,
            identified=self.identified,
            has_unique=self.isolation > 0,
            isolation_rows=self.geo.isolation,
            second_rows=self.geo.second,
            threshold=self.threshold,
            ratio=self.ratio,
        )

    def copies(self) -> list[dict[str, Any]]:
        """Every identified training person with the synthetic rows that copy them.

        Exact copies first (the most isolated person first: the most exposed), then
        near copies (the closest relative to their isolation first). ``real_rows`` are
        positions in the training table; ``synthetic_rows`` in the synthetic table: the
        nearest synthetic row of each identified row, and every synthetic row that
        reproduces an exactly copied record.
        """
        people = self.people
        n_real = people.n_real_rows
        row_person = people.person[:n_real]
        geo = self.geo
        row_identified = self.row_ratio[:n_real] <= self.threshold
        row_exact = (geo.to_synthetic[:n_real] == 0) & (geo.isolation[:n_real] > 0)
        by_record: dict[int, list[int]] = {}
        if self.record_ids is not None and row_exact.any():
            pool_ids, synthetic_ids = self.record_ids
            hit = np.isin(synthetic_ids, pool_ids[:n_real][row_exact])
            for s, rid in zip(
                np.flatnonzero(hit).tolist(), synthetic_ids[hit].tolist(), strict=True
            ):
                by_record.setdefault(rid, []).append(s)
        listed = np.flatnonzero(self.identified[: people.n_train])
        out: list[dict[str, Any]] = []
        for p in listed.tolist():
            rows = np.flatnonzero((row_person == p) & row_identified)
            synthetic: set[int] = set()
            for r in rows.tolist():
                synthetic.add(int(geo.synthetic_row[r]))
                if row_exact[r] and self.record_ids is not None:
                    synthetic.update(by_record.get(int(self.record_ids[0][r]), []))
            out.append(
                {
                    "person": int(p),
                    "real_rows": [int(r) for r in rows],
                    "synthetic_rows": sorted(synthetic),
                    "exact": bool(self.exact[p]),
                    "ratio": float(self.ratio[p]),
                    "isolation": float(self.isolation[p]),
                }
            )
        out.sort(
            key=lambda e: (
                not e["exact"],
                -e["isolation"] if e["exact"] else e["ratio"],
                -e["isolation"],
                e["person"],
            )
        )
        return out

    def parts(self) -> list[dict[str, Any]]:
        """Each part's counts, exact p-value, interval inputs and description."""
        t, h = self.training, ~self.training
        a, n_a = int((self.identified & t).sum()), int(t.sum())
        b, n_b = int((self.identified & h).sum()), int(h.sum())
        out = [
            {
                "part": "all people",
                "training": [a, n_a],
                "holdout": [b, n_b],
                "what": "identified (exact or near copy)",
                "p_value": excess_greater_p(a, n_a, b, n_b),
            }
        ]
        for share, top in self.strata.items():
            control = self.top_holdout[share] if self.several_rows else self.control
            a_s, n_s = int((self.exact & top).sum()), int(top.sum())
            b_c, n_c = int((self.exact & control).sum()), int(control.sum())
            out.append(
                {
                    "part": f"most isolated {share:.0%}, exact copies",
                    "training": [a_s, n_s],
                    "holdout": [b_c, n_c],
                    "what": (
                        "exactly copied; control: exact copies of the same stratum of "
                        "holdout people"
                        if self.several_rows
                        else "exactly copied; control: exact copies of the most isolated "
                        f"{self.control_share:.0%} of holdout people"
                    ),
                    "p_value": excess_greater_p(a_s, n_s, b_c, n_c),
                }
            )
        if self.history_copied is not None and self.history_unique is not None:
            copied, unique = self.history_copied, self.history_unique
            a_w, n_w = int((copied & unique & t).sum()), int((unique & t).sum())
            b_w, n_v = int((copied & unique & h).sum()), int((unique & h).sum())
            out.append(
                {
                    "part": "whole histories",
                    "training": [a_w, n_w],
                    "holdout": [b_w, n_v],
                    "what": (
                        "reproduced by one synthetic person, record for record (people whose "
                        "history no other real person shares)"
                    ),
                    "p_value": excess_greater_p(a_w, n_w, b_w, n_v),
                }
            )
        # near (not exact) copies in the widest stratum, against the same stratum of
        # holdout people: exchangeable, no assumption on how chance varies with isolation
        share = max(self.strata)
        near = self.identified & ~self.exact
        top_t, top_h = self.strata[share], self.top_holdout[share]
        a_s, n_s = int((near & top_t).sum()), int(top_t.sum())
        b_s, n_h = int((near & top_h).sum()), int(top_h.sum())
        out.append(
            {
                "part": f"most isolated {share:.0%}, near copies",
                "training": [a_s, n_s],
                "holdout": [b_s, n_h],
                "what": "near-copied (not exactly); control: the same stratum of holdout people",
                "p_value": excess_greater_p(a_s, n_s, b_s, n_h),
            }
        )
        return out


def identification_parts(
    tables: Tables,
    *,
    person: str | None,
    near_quantile: float,
    strata: tuple[float, ...],
    control_share: float,
    context: Context,
) -> tuple[IdentificationParts, Geometry]:
    """Geometry and counts of the identification test on ``tables``."""
    column = find_person_column(tables) if person == "auto" else person
    people = people_of(tables, column)
    geo, _, pool, synthetic = geometry(tables, people, context=context)
    threshold = near_threshold(geo, near_quantile)
    histories = (
        None
        if people.column is None or people.column not in tables.synthetic.columns
        else history_matches(tables, people)
    )
    parts = IdentificationParts(
        people, geo, threshold, strata, control_share, histories=histories
    )
    pool_ids, synthetic_ids = row_keys(pool, synthetic)
    parts.record_ids = (np.asarray(pool_ids), np.asarray(synthetic_ids))
    return parts, geo


def _histories(frame: pd.DataFrame, key: pd.Series, columns: list[str]) -> pd.Series:
    """Each person's history: the sorted hashes of their records, one tuple per person."""
    hashes = pd.util.hash_pandas_object(frame[columns], index=False).to_numpy()
    grouped = pd.Series(hashes).groupby(key.to_numpy(), sort=False)
    return grouped.agg(lambda values: tuple(sorted(values.tolist())))


def history_matches(tables: Tables, people: People) -> tuple[np.ndarray, np.ndarray]:
    """Per real person: is their whole history reproduced by a synthetic person; is it unique?

    A history is the multiset of a person's records (the rows without the person key).
    It is *unique* when no other real person of the pool has the same one, and
    *reproduced* when some synthetic person (by the same key column in the synthetic
    table) has exactly that history.
    """
    assert people.column is not None
    assert tables.holdout is not None
    columns = [
        spec.name
        for spec in tables.schema.columns
        if not spec.excluded and spec.name != people.column
    ]
    pooled = pd.concat(
        [tables.real[columns], tables.holdout[columns]], ignore_index=True
    )
    real_history = _histories(pooled, pd.Series(people.person), columns)
    order = real_history.reindex(np.arange(people.n_people))
    counts = order.map(order.value_counts())
    unique = (counts == 1).to_numpy()
    synthetic = _histories(
        tables.synthetic, tables.synthetic[people.column].astype(str), columns
    )
    copied = order.isin(set(synthetic.tolist())).to_numpy()
    return copied, unique


def identification_test(
    counts: IdentificationParts, *, confidence_level: float
) -> dict[str, JSONValue]:
    """The holdout test of the identification metric (see the module docstring)."""
    parts = counts.parts()
    m = len(parts)
    for part in parts:
        part["p_value_adjusted"] = min(1.0, m * float(part["p_value"]))
    worst = min(parts, key=lambda part: (part["p_value"], part["part"] != "all people"))
    a, n_a = worst["training"]
    b, n_b = worst["holdout"]
    rate = b / n_b if n_b else 0.0
    effect, ci, se = people_excess(a, n_a, b, n_b, confidence_level=confidence_level)
    detectable = {}
    for part in parts:
        (_, n_p), (b_p, n_q) = part["training"], part["holdout"]
        k = (
            detectable_excess(n_p, b_p, n_q, level=REFERENCE_LEVEL)
            if n_p and n_q
            else None
        )
        part["detectable_people"] = k
        detectable[part["part"]] = k
    smallest = [k for k in detectable.values() if k is not None]
    return {
        "statistic": "training people identified beyond the holdout's chance rate (people)",
        "effect": float(effect),
        "ci": [float(ci[0]), float(ci[1])],
        "se": se,
        "p_value": float(worst["p_value_adjusted"]),
        "n": int(min(counts.training.sum(), (~counts.training).sum())),
        "null": 0.0,
        "estimate": float(a),
        "control": float(n_a * rate),
        "compared": (
            f"{worst['part']}: {a} of {n_a} training people {worst['what'].split(';')[0]} vs "
            f"{b} of {n_b} holdout people"
        ),
        "confidence_level": confidence_level,
        "unit": "people",
        "decision": "significance",
        "component": worst["part"],
        "components": parts,
        "mde": float(min(smallest)) if smallest else None,
        "mde_level": REFERENCE_LEVEL,
    }


@register
class Identification(Metric):
    """Real people the synthetic table identifies: training people against holdout people.

    See :mod:`synthrisk.metrics.membership.identification`. The score is the share of
    training people identified by some synthetic row (an exact copy of their record, or
    a near copy far closer to them than any other real person is).

    Parameters
    ----------
    person : str, "auto" or None, default="auto"
        The column that names people when one person has several rows (panel data):
        their rows are judged together and never count as each other's neighbours.
        ``"auto"``: a column named like an identifier (``id``, ``person_id``, ``user`` …)
        whose values repeat in the training table; None: every row is a person.
    near_quantile : float, default=0.001
        The threshold of a near copy: the ratio (nearest over second-nearest stranger)
        that only this share of real people reaches by chance.
    strata : list of float, default=[0.01, 0.05]
        The most isolated shares of training people whose exact copies are tested
        against the control stratum of holdout people.
    control_share : float, default=0.2
        The most isolated share of holdout people that gives the control rate.
    confidence_level : float, default=0.95
        Level of the excess's interval.
    """

    id = "identification"
    shares = "real people and synthetic rows"
    cost = 3.0
    report_order = 5
    attack = (
        "An attacker holding the synthetic table looks for rows that copy one real person's record, "
        "exactly or closer to them than any other real person is, and so finds that person."
    )
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "share of training people a synthetic row copies (exactly, or closer to them than any other "
            "real person is); the test counts them against holdout people, whom chance alone "
            "identifies: 0 identified beyond chance = no one given away"
        ),
    )
    higher_is_safer = False
    requires_holdout = True

    person: Param[str | None] = PERSON
    near_quantile: Param[float] = Param(
        number(gt=0, lt=0.5),
        0.001,
        "Share of real people whose nearest stranger comes as close by chance.",
    )
    strata: Param[tuple[float, ...], float | Iterable[float]] = Param(
        custom(_shares, "a list of shares in (0, 1)"),
        (0.01, 0.05),
        "Most isolated shares of training people tested for exact copies.",
    )
    control_share: Param[float] = Param(
        number(gt=0, le=1), 0.2, "Most isolated share of holdout people (the control)."
    )
    confidence_level: Param[float] = Param(
        probability(), 0.95, "Level of the excess's interval."
    )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        counts, geo = identification_parts(
            tables,
            person=self.person,
            near_quantile=self.near_quantile,
            strata=tuple(self.strata),
            control_share=self.control_share,
            context=context,
        )
        people = counts.people
        test = identification_test(counts, confidence_level=self.confidence_level)
        n_train = people.n_train
        found = int(counts.identified[:n_train].sum())
        n_exact = int(counts.exact[:n_train].sum())
        chance = counts.chance()
        copies = counts.copies()
        row_person = people.person[: people.n_real_rows]
        identified_rows = np.flatnonzero(
            counts.identified[row_person]
            & (counts.row_ratio[: people.n_real_rows] <= counts.threshold)
        )
        entries: list[JSONValue] = [
            {
                "rows": entry["real_rows"],
                "synthetic_rows": entry["synthetic_rows"],
                "ratio": entry["ratio"],
                "exact": entry["exact"],
                "isolation": entry["isolation"],
            }
            for entry in copies[:LIST_LIMIT]
        ]
        copying = sorted({s for entry in copies for s in entry["synthetic_rows"]})
        ratio_of: dict[int, float] = {}
        for entry in copies:
            for s in entry["synthetic_rows"]:
                ratio_of[s] = min(ratio_of.get(s, math.inf), entry["ratio"])
        p_test = test["p_value"]
        beyond_chance = (chance is not None and chance.significant) or (
            isinstance(p_test, float) and p_test < 0.05
        )
        if found > 0 and beyond_chance:
            expected = (
                ""
                if chance is None
                else f", where chance explains about {chance.expected_identified:.1f}"
            )
            shown = ", ".join(str(s) for s in copying[:10])
            more = f" and {len(copying) - 10} more" if len(copying) > 10 else ""
            context.warn(
                f"{found} training people have a synthetic row that copies their record "
                f"({n_exact} exactly){expected}; the synthetic rows that carry them: {shown}{more} "
                "(all in the breakdown's `identified` and the records `copying_rows`). Regenerate "
                "rather than delete them (`synthrisk filter` removes them and re-assesses): the "
                "next most isolated people become the exposed ones (the privacy onion)."
                if found <= 0.05 * n_train
                else f"{found} of {n_train} training people have a synthetic row that copies their "
                f"record ({n_exact} exactly){expected}."
            )
        breakdown: dict[str, JSONValue] = {
            "identified_training": found,
            "identified_holdout": int(counts.identified[n_train:].sum()),
            "training_people": n_train,
            "holdout_people": people.n_holdout,
            "exact_training": n_exact,
            "exact_holdout": int(counts.exact[n_train:].sum()),
            "near_threshold": counts.threshold,
            "near_quantile": self.near_quantile,
            "person_column": people.column,
            "unique_records": float((counts.isolation > 0).mean()),
            "identified": entries,
            "copying_synthetic_rows": len(copying),
            "holdout_test": test,
        }
        if chance is not None:
            model = chance.to_dict()
            model["detectable"] = chance.detectable()
            model["detectable_near"] = chance.detectable(near=True)
            breakdown["chance_model"] = model
        records = {
            "identified": RecordScores(
                "real",
                identified_rows.astype(np.int64),
                counts.row_ratio[identified_rows].astype(np.float64),
                "training rows a synthetic row identifies: its distance over the distance to "
                "the nearest other real person (0: an exact copy)",
            ),
            "copying_rows": RecordScores(
                "synthetic",
                np.asarray(copying, dtype=np.int64),
                np.asarray([ratio_of[s] for s in copying], dtype=np.float64),
                "synthetic rows that copy a training person (exactly: 0, or nearly: their distance "
                "over the person's distance to the nearest other real person)",
            ),
            "isolation": RecordScores(
                "real",
                np.arange(people.n_real_rows, dtype=np.int64),
                geo.isolation[: people.n_real_rows].astype(np.float64),
                "distance of each training row to the nearest record of another real person",
            ),
        }
        ci = wilson_interval(found, n_train) if n_train else None
        score = found / n_train if n_train else None
        if score is not None and not math.isfinite(score):
            score = None
        return Outcome(score=score, breakdown=breakdown, ci=ci, records=records)
