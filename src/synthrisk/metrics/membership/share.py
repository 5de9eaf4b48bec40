# SPDX-License-Identifier: BSD-3-Clause
"""Membership metrics from nearest-neighbour distances, with a holdout as the control.

Did the generator memorise its training rows? These metrics compare how close synthetic
rows sit to the real rows the generator saw with how close they sit to real rows it
never saw (the holdout):

* :class:`DCRShare` — IBM ai-privacy-toolkit (APT) 0.2.1's ``DatasetAttackWholeDatasetKnnDistance`` share, by default
  size-corrected (real and holdout compared at equal size), with a permutation p-value
  and a bootstrap interval;
* :class:`IdenticalMatchShare` — MOSTLY AI QA's identical match share, training vs
  holdout (defined in :mod:`.identical`; its nearest-neighbour distance ratio is in
  :mod:`.nndr`).

Distances: see :mod:`synthrisk.metrics.membership._space` (mixed-type ``dcr`` distance by default,
Euclidean on pre-encoded numeric columns with ``mode="apt"``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from synthrisk._typing import JSONValue
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, confidence, integer, option
from synthrisk.metrics._threat import AUDIT, TRAINING, ThreatModel
from synthrisk.metrics.membership._column_groups import SUBSETS, worst_share
from synthrisk.metrics.membership._holdout import share_holdout_test
from synthrisk.metrics.membership._people import (
    PERSON,
    People,
    find_person_column,
    people_of,
)
from synthrisk.metrics.membership._row_keys import distinct_rows
from synthrisk.metrics.membership._share_kernels import (
    CLOSER_HOLDOUT,
    CLOSER_REAL,
    TIE,
    compare_sides,
    permutation_shares,
    tie_sets,
)
from synthrisk.metrics.membership._share_lists import pool_lists, resolve
from synthrisk.metrics.membership._space import (
    DISTANCES,
    MODES,
    Space,
    concat_rows,
    distinct_lower_bound,
    n_rows,
    resolve_distance,
    sample_rows,
    take_rows,
)
from synthrisk.metrics.membership.identical import IdenticalMatchShare
from synthrisk.results import RecordScores
from synthrisk.schema.partitioned import is_partitioned
from synthrisk.schema.tables import Tables
from synthrisk.stats.bootstrap import bootstrap_interval

__all__ = ["DCRShare", "IdenticalMatchShare"]

#: a holdout (or real table) smaller than this share of the other is "much smaller"
_SIZE_WARNING_RATIO = 0.5


@dataclasses.dataclass
class _Shares:
    """What :meth:`DCRShare._shares` found, before the test and the interval."""

    n_real: int
    n_holdout: int
    sample_size: int
    repeats: int
    #: CSR neighbour lists of the distinct synthetic rows in real + holdout (None
    #: once :meth:`take_lists` handed them over)
    lists: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    #: distinct synthetic rows whose tie set could not be listed
    truncated: np.ndarray
    #: copies of each distinct synthetic row (None: one each)
    counts: np.ndarray | None
    #: each synthetic row's distinct row (None: every row is distinct)
    inverse: np.ndarray | None
    #: each synthetic row's comparison on the full tables
    full: np.ndarray
    #: each synthetic row's size-corrected share
    corrected_rows: np.ndarray
    #: the metric's score
    score: float
    #: each pool row's person (training people first), when people own several rows
    person: np.ndarray | None = None
    #: training people (with ``person``)
    n_train_people: int = 0

    def take_lists(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The neighbour lists, dropped from here so that they are freed with their last use."""
        lists = self.lists
        assert lists is not None, "the neighbour lists were already taken"
        self.lists = None
        return lists


def _on_score_scale(
    test: dict[str, Any],
    weight: float,
    *,
    score: float,
    apt_expected: float | None,
) -> dict[str, Any]:
    """The holdout test with ``estimate`` and ``control`` on the scale of the score.

    The permutation test compares the share on the full tables with its value under
    random relabelling, then rescales the excess to equal-size units. Where the two
    sides differ in size, those full-table shares (``share_full_tables`` and
    ``expected_full_tables``, kept in the test) sit near the training share of the
    pooled rows — 0.8 for a 4:1 split — not near the size-corrected score (0.5 without
    memorisation): ``estimate`` becomes ``0.5 + effect`` and ``control`` 0.5, so that
    ``effect == estimate - control`` on the score's scale, and ``compared`` says in
    words what each number is, the ``score`` included (it compares equal-size
    subsamples, which see fewer of the larger side's copies; with ``apt_expected``,
    APT's share on the full tables). At equal sizes the full-table share is the score
    itself (in either mode) and nothing changes but the two added keys.
    """
    if test.get("effect") is None or test.get("null") != 0.0:
        return test  # the size-corrected share against 0.5: already the score's scale
    full, expected = float(test["estimate"]), float(test["control"])
    test["share_full_tables"] = full
    test["expected_full_tables"] = expected
    if abs(weight - 0.5) < 1e-12:
        return test
    estimate = 0.5 + float(test["effect"])
    test["estimate"] = estimate
    test["control"] = 0.5
    if apt_expected is None:
        the_score = f"the score, {score:.4g}, compares equal-size subsamples"
    else:
        the_score = f"the score, APT's share on the full tables, {score:.4g} vs {apt_expected:.4g} by chance"
    test["compared"] = (
        f"{estimate:.4g} of synthetic rows closer to training rows in equal-size units vs 0.5 without "
        f"memorisation; on the full tables, where {100 * weight:.0f} % of the real rows are training rows, "
        f"{full:.4g} vs {expected:.4g} by chance; {the_score}"
    )
    return test


@register
class DCRShare(Metric):
    """Share of synthetic rows closer to the real table than to the holdout.

    Each synthetic row is compared on its distance to the closest real row and to the
    closest holdout row. With no memorisation, and real and holdout tables of equal
    size, half of the synthetic rows are closer to either side; a share well above
    0.5 means the synthetic rows cling to the training rows.

    The score is the **size-corrected** share: real and holdout are compared at equal
    size (the larger table is subsampled to the smaller one, ``n_repeats`` times,
    seeded), ties count 1/2, so its expected value without memorisation is 0.5
    whatever the table sizes. The breakdown also gives APT's share on the full tables
    (ties weighted by ``n_real / (n_real + n_holdout)``, expected value about that
    fraction, *not* 0.5), a one-sided permutation p-value of "real and holdout rows
    are exchangeable" (no memorisation), and the expected values under that null.
    ``mode="apt"`` makes APT's share the score (equal to
    ``DatasetAttackWholeDatasetKnnDistance`` to 1e-9).

    Parameters
    ----------
    mode : {"default", "apt"}, default="default"
        ``"apt"``: APT's share on the full tables is the score, Euclidean distance on
        pre-encoded numeric columns.
    distance : {"dcr", "gower", "euclidean"} or None, default=None
        Distance in the default mode (None = ``"dcr"``).
    n_repeats : int, default=10
        Subsamples of the larger table for the size-corrected share (unused when the
        tables have the same size).
    n_permutations : int, default=999
        Random relabellings of real + holdout for the p-value; 0 skips the test.
    column_subsets : {"all", "worst"}, default="all"
        ``"worst"``: also 3 correlated and 3 random column groups (above 10 columns, as MOSTLY
        AI QA); the largest share is kept, its p-value Bonferroni-corrected (``p_value_bonferroni``).
    confidence_level : float, default=0.95
        Two-sided level of the bootstrap interval.
    person : str, "auto" or None, default="auto"
        The column that names people with several rows (panel data): the size
        correction subsamples people and the permutation test relabels people, so that
        the rows of one person stay on one side. ``"auto"``: a column named like an
        identifier whose values repeat a few times; None: every row is a person.
    """

    id = "dcr_share"
    cost = 3.0
    report_order = 160
    attack = (
        "A generator that memorised its training rows puts synthetic rows closer to those rows than to "
        "real rows it never saw (the holdout)."
    )
    threat_model = ThreatModel(
        attacker_holds=AUDIT,
        target=TRAINING,
        meaning=(
            "share of synthetic rows closer to a training row than to a holdout row, at equal sizes (ties count ½): 0.5 = no memorisation, 1 = every row clings to training rows (mode 'apt': APT's share on the full tables)"
        ),
    )
    higher_is_safer = False
    requires_holdout = True

    mode: Param[str] = Param(
        option(MODES), "default", "'apt': APT's share on the full tables is the score."
    )
    distance: Param[str | None] = Param(
        option(DISTANCES, allow_none=True), None, "Distance; None: the mode's."
    )
    n_repeats: Param[int] = Param(
        integer(minimum=1), 10, "Subsamples of the larger table for the share."
    )
    n_permutations: Param[int] = Param(
        integer(minimum=0), 999, "Relabellings for the p-value; 0 skips the test."
    )
    column_subsets: Param[str] = Param(
        option(SUBSETS), "all", "'worst': also correlated and random column groups."
    )
    confidence_level: Param[float] = Param(
        confidence(), 0.95, "Two-sided level of the bootstrap interval."
    )
    person: Param[str | None] = PERSON

    runs_partitioned = True

    def _check_params(self) -> None:
        self._replace_param("distance", resolve_distance(self.distance, self.mode))

    def supports_partitioned(self) -> bool:
        """The default mode with the ``dcr`` distance on all columns runs on every row."""
        return (
            self.mode == "default"
            and self.distance == "dcr"
            and self.column_subsets == "all"
        )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        people = self._people(tables)
        if self.column_subsets == "worst":
            return worst_share(
                functools.partial(self._shares, people=people),
                self._finish,
                tables,
                context,
            )
        return self._finish(self._shares(tables, context, people=people), context)

    def _people(self, tables: Tables) -> People | None:
        """Who owns which rows, when a person key says that people own several rows."""
        if self.person is None or is_partitioned(tables.encoded("real")):
            return None
        column = find_person_column(tables) if self.person == "auto" else self.person
        return None if column is None else people_of(tables, column)

    def _shares(
        self, tables: Tables, context: Context, people: People | None = None
    ) -> _Shares:
        """The shares: neighbour lists of the synthetic rows and their comparisons.

        With ``people``, the size-corrected share subsamples people (all rows of each)
        and the permutation test relabels people, never rows: the rows of one person
        are on one side, and relabelling them one by one would break that.
        """
        space = Space.for_tables(tables, str(self.distance), self.mode)
        real, holdout, syn = (
            space.data(tables, name) for name in ("real", "holdout", "synthetic")
        )
        n_r, n_h, n_s = n_rows(real), n_rows(holdout), n_rows(syn)
        n_pool = n_r + n_h
        m = min(n_r, n_h)
        rng = context.rng
        apt_weight = n_r / n_pool
        if m < _SIZE_WARNING_RATIO * max(n_r, n_h):
            smaller = "holdout" if n_h < n_r else "real table"
            context.warn(
                f"the {smaller} ({m} rows) is much smaller than the other table ({max(n_r, n_h)} rows): APT's "
                f"share expects about {apt_weight:.3f} without memorisation, not 0.5. The size-corrected share "
                f"compares {m} rows of each side instead."
            )
        if m < 30:
            context.warn(
                f"only {m} rows on the smaller side; the share is a rough estimate."
            )
        pool = concat_rows(real, holdout)
        is_real = np.r_[np.ones(n_r, dtype=bool), np.zeros(n_h, dtype=bool)]
        equal = n_r == n_h
        k = min(n_pool, 2 if equal else 16)
        # identical synthetic rows have identical neighbours: search each distinct row
        # once (few columns or coarse tables: a handful of rows with huge tie sets)
        inverse: np.ndarray | None = None  # each synthetic row is its own
        counts: np.ndarray | None = None  # one copy of each
        if is_partitioned(syn) and distinct_lower_bound(syn) == n_s:  # type: ignore[arg-type]
            distinct = syn
        else:
            first, inverse = distinct_rows(syn)
            counts = np.bincount(inverse, minlength=first.size).astype(np.float64)
            distinct = syn if first.size == n_s else take_rows(syn, first)
            if first.size == n_s:
                inverse = None
            del first
        offsets, dist, idx, truncated = pool_lists(
            space, distinct, pool, k=k, context=context
        )

        everyone = np.ones(n_pool, dtype=bool)
        full = compare_sides(offsets, dist, idx, is_real, everyone, n_pool)
        full = resolve(space, distinct, pool, is_real, everyone, full, context)
        if inverse is not None:
            full = full[inverse]

        if equal:
            corrected_rows = (full == CLOSER_REAL) + 0.5 * (full == TIE)
            repeats = 0
        else:
            corrected_rows = np.zeros(n_s)
            small_is_real = n_r < n_h
            small = is_real if small_is_real else ~is_real
            large_positions = np.flatnonzero(~small)
            repeats = self.n_repeats
            if people is not None:  # subsample people, not rows
                training_people = np.arange(people.n_people) < people.n_train
                small_people = training_people if small_is_real else ~training_people
                large_people = np.flatnonzero(~small_people)
                m_people = int(small_people.sum())
            with context.progress.task("size-corrected share", repeats) as advance:
                for _ in range(repeats):
                    included = small.copy()
                    if people is None:
                        included[
                            large_positions[sample_rows(large_positions.size, m, rng)]
                        ] = True
                    else:
                        chosen = large_people[
                            sample_rows(large_people.size, m_people, rng)
                        ]
                        included[people.rows_of(chosen)] = True
                    out = compare_sides(offsets, dist, idx, is_real, included, n_pool)
                    out = resolve(
                        space, distinct, pool, is_real, included, out, context
                    )
                    if inverse is not None:
                        out = out[inverse]
                    corrected_rows += (out == CLOSER_REAL) + 0.5 * (out == TIE)
                    advance(1)
            corrected_rows /= repeats
        return _Shares(
            n_real=n_r,
            n_holdout=n_h,
            sample_size=m,
            repeats=repeats,
            lists=(offsets, dist, idx),
            truncated=truncated,
            counts=counts,
            inverse=inverse,
            full=full,
            corrected_rows=corrected_rows,
            score=float(corrected_rows.mean())
            if self.mode != "apt"
            else float(
                np.mean(full == CLOSER_REAL) + apt_weight * np.mean(full == TIE)
            ),
            person=None if people is None else people.person,
            n_train_people=0 if people is None else people.n_train,
        )

    def _finish(self, shares: _Shares, context: Context) -> Outcome:
        """The permutation test, the interval, the breakdown and the per-row scores."""
        rng = context.rng
        n_r, n_h = shares.n_real, shares.n_holdout
        n_pool = n_r + n_h
        n_s = shares.full.size
        apt_weight = n_r / n_pool
        offsets, dist, idx = shares.take_lists()
        # what the lists are needed for; then they are freed before the test
        nearest = dist[offsets[:-1]]
        tie_offsets, tie_idx = (
            tie_sets(offsets, dist, idx)
            if self.n_permutations
            else (np.zeros(1, np.int64), np.zeros(0, np.int64))
        )
        del offsets, dist, idx
        full, corrected_rows, counts = (
            shares.full,
            shares.corrected_rows,
            shares.counts,
        )
        closer = float(np.mean(full == CLOSER_REAL))
        farther = float(np.mean(full == CLOSER_HOLDOUT))
        ties = float(np.mean(full == TIE))
        share_apt = closer + apt_weight * ties
        share_half = closer + 0.5 * ties
        share_corrected = float(corrected_rows.mean())

        n_perm = self.n_permutations
        p_value = None
        expected_apt = None
        null_sd = 0.0
        half_null_mean = None
        if n_perm:
            seed = int(rng.integers(0, 2**31 - 1))
            units, n_units, n_real_units = tie_idx, n_pool, n_r
            if shares.person is not None:  # relabel people, all their rows at once
                units = shares.person[tie_idx]
                n_units = int(shares.person.max()) + 1
                n_real_units = shares.n_train_people
            half_null, apt_null = permutation_shares(
                tie_offsets,
                units,
                n_real=n_real_units,
                n_pool=n_units,
                n_permutations=n_perm,
                seed=seed,
                weights=counts,
            )
            del tie_offsets, tie_idx
            p_value = float(
                (1 + np.sum(half_null >= share_half - 1e-12)) / (1 + n_perm)
            )
            expected_apt = float(apt_null.mean())
            null_sd = float(half_null.std(ddof=1)) if n_perm > 1 else 0.0
            half_null_mean = float(half_null.mean())
            n_truncated = (
                shares.truncated.size
                if counts is None
                else int(counts[shares.truncated].sum())
            )
            if n_truncated:
                context.warn(
                    f"{n_truncated} synthetic row(s) are equally close to more pool rows than the memory cap "
                    "allows to list; the permutation p-value treats only the listed ones."
                )

        apt_mode = self.mode == "apt"
        score = share_apt if apt_mode else share_corrected
        row_values = (
            (full == CLOSER_REAL) + apt_weight * (full == TIE)
            if apt_mode
            else corrected_rows
        )
        breakdown: dict[str, JSONValue] = {
            "share": share_apt,
            "size_corrected_share": share_corrected,
            "share_ties_half": share_half,
            "expected_share_no_memorisation": {
                "size_corrected_share": 0.5,
                "share": expected_apt if expected_apt is not None else apt_weight,
                "share_ties_half": apt_weight,
            },
            "p_value": p_value,
            "synthetic_data_percentages": {
                "closer_to_real": closer,
                "closer_to_holdout": farther,
                "tied": ties,
            },
            "n_real": n_r,
            "n_holdout": n_h,
            "n_synthetic": n_s,
            "sample_size": shares.sample_size,
            "n_repeats": shares.repeats,
            "n_permutations": n_perm,
            "distance": self.distance,
            "holdout_test": _on_score_scale(
                share_holdout_test(
                    corrected_rows, null_sd, p_value, full, half_null_mean, apt_weight
                ),
                apt_weight,
                score=score,
                apt_expected=(
                    (expected_apt if expected_apt is not None else apt_weight)
                    if apt_mode
                    else None
                ),
            ),
        }
        records = {
            "closer_to_real": RecordScores(
                "synthetic",
                np.arange(n_s),
                np.asarray(row_values, dtype=np.float64),
                "1 if the synthetic row is closer to the real table than to the holdout, 0 if farther, "
                "the tie weight if equally close (averaged over size-corrected repeats)",
            ),
            "distance_to_real_or_holdout": RecordScores(
                "synthetic",
                np.arange(n_s),
                nearest if shares.inverse is None else nearest[shares.inverse],
                "distance to the closest row of real + holdout",
            ),
        }
        ci = bootstrap_interval(
            np.mean,
            np.asarray(row_values, dtype=np.float64),
            rng=rng,
            confidence_level=self.confidence_level,
        )
        return Outcome(
            score=score,
            breakdown=breakdown,
            ci=ci,
            records=records,
        )
