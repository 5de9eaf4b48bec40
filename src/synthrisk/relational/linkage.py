# SPDX-License-Identifier: BSD-3-Clause
"""The cross-table linkage attack: does a person's root row lead to their real children?

An attacker knows a real person's root row (their customer record) and looks up the
synthetic root rows closest to it. If the generator memorised people with their
children, the synthetic children of those rows match the person's real children far
better than chance. A second attacker knows a person's history (the summaries of their
children: counts, amounts, the first events) and looks for the synthetic person with the
closest history: a generator that copies children and attaches them to new parents is
found this way. A third attacker knows a person's rows below the root as a set (in any
order) and looks for a synthetic person with exactly those rows: a copied sequence whose
events were reordered, or whose values were shuffled among its dates, keeps that set
while its order-aware summaries change.

The attacks are **holdout-controlled**: they are run on every training person and
every holdout person, and a distance attack counts a person as *linked* when the match is far closer than
the person's nearest real stranger: the distance between the person's child summaries
and the matched synthetic person's, divided by the distance to the nearest other real
person's child summaries, is at most ``match_ratio`` — by default the ratio that chance
reaches for only 1 real person in 1,000 (:func:`chance_ratio`, the rule of the
``identification`` test). People whose history another real person shares exactly, and
people without children, cannot be linked and are left out.
A generator that memorised no one links training people no more often than holdout
people; each attack's excess is tested with an exact one-sided test (Boschloo's, or
Fisher's on large tables). The attacks link largely the same people (a whole copy is
found by most of them), so they are combined by the smallest p-value with its null
distribution found by relabelling (:func:`~synthrisk.stats.exact.min_p_resampling`,
Westfall & Young's min-p adjustment): the pool's training and holdout labels are
shuffled, the same shuffle for every attack, and each attack's counts recomputed.
Five attacks that link the same people then cost about one test, where Bonferroni
charged five.

Distances are the DCR distance (:func:`synthrisk.neighbors.distance_spec`): per column
``min(|x - y| / range, 1)``, categorical mismatch 1, one side missing 1, both missing 0,
averaged; ranges over the real people.

References
----------
The attack generalises the linkability attack of Giomi et al. 2023 ("A unified framework
for quantifying privacy risk in synthetic data", PoPETs) to the links between tables;
entity-level relational membership attacks: MT-MIA (arXiv 2602.07126).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import pandas as pd

from synthrisk._rng import metric_generator
from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk._validation import check_int
from synthrisk.exceptions import ParameterError
from synthrisk.neighbors import column_ranges, nearest_neighbors
from synthrisk.schema import EncodedTable, Encoder, schema_from_metadata
from synthrisk.stats.exact import (
    excess_greater_p,
    fisher_greater_p,
    min_p_resampling,
    newcombe_interval,
)

__all__ = ["LinkageAttack", "LinkageResult", "chance_ratio", "linkage_attack"]

#: the combined test's name in :class:`LinkageResult` (``method``)
METHOD = "westfall_young_min_p"
#: share of the level given to the resampling p-value; the rest goes to Bonferroni over
#: the attacks' own p-values, which reaches below the resampling's ``1 / (1 + B)``
RESAMPLING_SHARE = 0.999


@dataclasses.dataclass(frozen=True)
class LinkageAttack:
    """One attack's outcome: linked training people against linked holdout people."""

    name: str
    description: str
    n_training: int
    n_holdout: int
    linked_training: int
    linked_holdout: int
    p_value: float
    #: the table at the top of the subtree whose rows the attack knows (None: all rows)
    subtree: str | None = None

    @property
    def label(self) -> str:
        """The attack's name, with its subtree (``history · admissions``)."""
        return self.name if self.subtree is None else f"{self.name} · {self.subtree}"

    @property
    def excess(self) -> float:
        """Share of training people linked beyond the holdout's share."""
        if self.n_training == 0 or self.n_holdout == 0:
            return 0.0
        return (
            self.linked_training / self.n_training
            - self.linked_holdout / self.n_holdout
        )

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form."""
        ci: list[JSONValue] | None = None
        if self.n_training and self.n_holdout:
            low, high = newcombe_interval(
                self.linked_training,
                self.n_training,
                self.linked_holdout,
                self.n_holdout,
            )
            ci = [float(low), float(high)]
        return {
            "name": self.name,
            "description": self.description,
            "n_training": self.n_training,
            "n_holdout": self.n_holdout,
            "linked_training": self.linked_training,
            "linked_holdout": self.linked_holdout,
            "excess": float(self.excess),
            "excess_ci": ci,
            "p_value": float(self.p_value),
            "subtree": self.subtree,
        }


@dataclasses.dataclass(frozen=True)
class LinkageResult:
    """The cross-table linkage attacks and their holdout-controlled level.

    ``level`` is ``fail`` when the combined p-value is at most ``alpha``, ``pass``
    otherwise, and ``info`` when there was nothing to link (no holdout, no table below
    the root). ``method`` names the combination (``westfall_young_min_p``: see
    :func:`linkage_attack`; ``bonferroni`` in results written before it, ``none`` when
    nothing ran) and ``n_resamples`` the relabellings it drew.
    """

    attacks: tuple[LinkageAttack, ...]
    p_value: float
    alpha: float
    level: str
    match_ratio: float
    n_candidates: int
    reason: str
    method: str = "none"
    n_resamples: int = 0

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form."""
        return {
            "level": self.level,
            "reason": self.reason,
            "p_value": float(self.p_value),
            "alpha": float(self.alpha),
            "match_ratio": float(self.match_ratio),
            "n_candidates": int(self.n_candidates),
            "method": self.method,
            "n_resamples": int(self.n_resamples),
            "attacks": [a.to_dict() for a in self.attacks],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> LinkageResult:
        """Rebuild from :meth:`to_dict` output."""
        attacks = []
        for a in data.get("attacks") or ():  # type: ignore[attr-defined]
            attacks.append(
                LinkageAttack(
                    name=str(a["name"]),
                    description=str(a["description"]),
                    n_training=int(a["n_training"]),
                    n_holdout=int(a["n_holdout"]),
                    linked_training=int(a["linked_training"]),
                    linked_holdout=int(a["linked_holdout"]),
                    p_value=float(a["p_value"]),
                    subtree=None if a.get("subtree") is None else str(a["subtree"]),
                )
            )
        return cls(
            attacks=tuple(attacks),
            p_value=float(data["p_value"]),  # type: ignore[arg-type]
            alpha=float(data["alpha"]),  # type: ignore[arg-type]
            level=str(data["level"]),
            match_ratio=float(data["match_ratio"]),  # type: ignore[arg-type]
            n_candidates=int(data["n_candidates"]),  # type: ignore[call-overload]
            reason=str(data["reason"]),
            # results written before the method was recorded combined by Bonferroni
            method=str(data.get("method", "bonferroni" if attacks else "none")),
            n_resamples=int(data.get("n_resamples", 0)),  # type: ignore[call-overload]
        )


def _pair_distance(a: EncodedTable, b: EncodedTable, ranges: FloatArray) -> FloatArray:
    """DCR distance between row ``i`` of ``a`` and row ``i`` of ``b``."""
    n_cols = a.numeric.shape[1] + a.codes.shape[1]
    total = np.zeros(a.n_rows)
    if a.numeric.shape[1]:
        scale = np.where(ranges > 0, ranges, 1.0)
        diff = np.abs(a.numeric - b.numeric)
        term = np.where(
            ranges > 0, np.minimum(diff / scale, 1.0), (diff > 0).astype(float)
        )
        na_a, na_b = np.isnan(a.numeric), np.isnan(b.numeric)
        term = np.where(na_a & na_b, 0.0, np.where(na_a | na_b, 1.0, term))
        total += term.sum(axis=1)
    if a.codes.shape[1]:
        total += (a.codes != b.codes).sum(axis=1)
    return total / max(n_cols, 1)


def _encode(
    frames: list[pd.DataFrame], metadata: Mapping[str, object]
) -> list[EncodedTable]:
    schema, _ = schema_from_metadata(dict(metadata), frames[0])
    encoder = Encoder.fit(schema, *frames)
    return [encoder.transform(f) for f in frames]


def linkage_attack(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame,
    *,
    root_columns: list[str],
    child_columns: list[str],
    metadata: Mapping[str, object],
    n_candidates: int = 3,
    match_ratio: float | None = None,
    alpha: float = 0.01,
    row_sets: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    subtrees: Mapping[
        str, tuple[list[str], tuple[np.ndarray, np.ndarray, np.ndarray] | None]
    ]
    | None = None,
    seed: int = 0,
    n_resamples: int = 9_999,
) -> LinkageResult:
    """Run the cross-table linkage attack on person feature tables.

    Parameters
    ----------
    real, synthetic, holdout : DataFrame
        Person feature tables (:class:`~synthrisk.relational.features.PersonFeatures`)
        of the training people, the synthetic people and the holdout people.
    root_columns, child_columns : list of str
        The features of the root row, and those that summarise the tables below it.
    metadata : dict
        Single-table metadata of the feature tables.
    n_candidates : int, default=3
        How many synthetic root rows closest to the known root row the attacker
        inspects.
    match_ratio : float, default=None
        A person is linked when the matched history is at most this fraction of the
        distance to the nearest real stranger's history; None: :func:`chance_ratio`
        of the real people's histories.
    alpha : float, default=0.01
        Level of the combined test.
    row_sets : (ndarray, ndarray, ndarray), default=None
        Each training, synthetic and holdout person's order-free code of their rows
        below the root (:meth:`PersonFeatures.row_sets
        <synthrisk.relational.features.PersonFeatures.row_sets>`, 0 for none); given,
        a third attack, ``row_set``, links a person when a synthetic person has
        exactly their rows, in any order.
    subtrees : dict, default=None
        Subtrees of the person judged on their own: the table at the top of each (a
        table below the root, with its descendants) -> (the history columns of its
        tables, each side's row-set codes of the person's rows in it, or None). Each
        runs the ``history`` attack on those columns (with its own chance ratio when
        ``match_ratio`` is None) and, with codes, the ``row_set`` attack: a copied
        history of one child table under a new root row, beside other tables that are
        new, is linked there while the whole person's history stays far.
    seed : int, default=0
        Seed of the relabellings of the combined test.
    n_resamples : int, default=9999
        Relabellings of the combined test (its p-value is at least ``1 / (1 +
        n_resamples)``, below which Bonferroni's share takes over).

    Returns
    -------
    LinkageResult

    Notes
    -----
    The combined p-value is ``min(1, p_resampling / 0.999, m * min_j p_j / 0.001)``: a
    weighted Bonferroni of two valid p-values, so it keeps the level exactly.
    ``p_resampling`` is Westfall & Young's single-step min-p adjustment
    (:func:`~synthrisk.stats.exact.min_p_resampling`): under the null, given the pool
    of real people (training and holdout together) and the synthetic people, every
    choice of which pool people were the training people is equally likely, and each
    person's flags (linked, eligible) do not depend on it — the encoding, the ranges,
    the nearest strangers, the chance ratio and the row-set uniqueness are all computed
    on the pool as a whole. Relabelling the pool, the same relabelling for all attacks,
    recomputes each attack's linked and eligible counts in both arms, and the
    relabelled smallest Fisher p-values give the exact null distribution of the
    observed one (up to the resampling). The second term, Bonferroni over the ``m``
    attacks' Fisher p-values ``p_j`` (valid given the same flags) on a thousandth of
    the level, only matters for leaks far beyond the resampling's resolution and
    reports their strength. Each attack's own ``p_value`` stays Boschloo's where the
    arms are small: alone, it is the more powerful test of that attack.
    """
    seed = check_int(seed, name="seed", minimum=0)
    n_resamples = check_int(n_resamples, name="n_resamples", minimum=1)
    n_train, n_hold = len(real), len(holdout)
    given_ratio = match_ratio
    pool = pd.concat([real, holdout], ignore_index=True)
    syn = synthetic.reset_index(drop=True)
    meta_cols = metadata["columns"]
    assert isinstance(meta_cols, Mapping)
    if (
        not child_columns
        or not root_columns
        or n_train == 0
        or n_hold == 0
        or len(syn) == 0
    ):
        return LinkageResult(
            (),
            1.0,
            alpha,
            "info",
            0.0 if match_ratio is None else match_ratio,
            n_candidates,
            "nothing to link: no table below the root, no root columns or an empty side.",
        )
    root_meta = {"columns": {c: meta_cols[c] for c in root_columns}}
    pool_root, syn_root = _encode([pool[root_columns], syn[root_columns]], root_meta)
    root_ranges = np.nan_to_num(column_ranges(pool_root.numeric), nan=0.0)
    whole = _History.build(pool, syn, child_columns, meta_cols, match_ratio)
    match_ratio = whole.match_ratio
    pool_child, syn_child, child_ranges = whole.pool, whole.syn, whole.ranges
    isolation, eligible = whole.isolation, whole.eligible

    # attack 1: known root row -> the closest synthetic root rows -> their children
    k = min(n_candidates, len(syn))
    cand = nearest_neighbors(
        pool_root, syn_root, k=k, distance="dcr", scale=root_ranges
    )
    via_root = np.full(len(pool), np.inf)
    for j in range(k):
        picked = syn_child.take(cand.indices[:, j].astype(np.intp))
        via_root = np.minimum(
            via_root, _pair_distance(pool_child, picked, child_ranges)
        )

    is_train = np.arange(len(pool)) < n_train
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(isolation > 0, isolation, 1.0)
    found: list[tuple[str, str, np.ndarray, np.ndarray, str | None]] = [
        (
            "root_to_children",
            f"knows a person's root row, inspects the {k} closest synthetic root rows and "
            "compares their children with the person's",
            via_root / scale <= match_ratio,
            eligible,
            None,
        ),
        (
            "history",
            "knows a person's history (the summaries of their child rows) and finds the "
            "synthetic person with the closest history",
            whole.linked,
            eligible,
            None,
        ),
    ]
    if row_sets is not None:
        linked_rows, eligible_rows = _row_set_links(row_sets, n_train, n_hold, len(syn))
        found.append(
            (
                "row_set",
                "knows a person's rows below the root, in any order, and finds a "
                "synthetic person with exactly those rows (reordered or reshuffled "
                "sequences included)",
                linked_rows,
                eligible_rows,
                None,
            )
        )
    for top, (columns, codes) in (subtrees or {}).items():
        if not columns:
            continue
        part = _History.build(pool, syn, list(columns), meta_cols, given_ratio)
        where = f"its rows in the {top!r} subtree ({', '.join(_tables_of(columns))})"
        found.append(
            (
                "history",
                f"knows a person's history in one part of their tree, {where}, and finds "
                "the synthetic person closest there (a copied child history under a new "
                "root row, beside other tables that are new)",
                part.linked,
                part.eligible,
                top,
            )
        )
        if codes is not None:
            linked_rows, eligible_rows = _row_set_links(
                codes, n_train, n_hold, len(syn)
            )
            found.append(
                (
                    "row_set",
                    f"knows {where}, in any order, and finds a synthetic person with "
                    "exactly those rows",
                    linked_rows,
                    eligible_rows,
                    top,
                )
            )
    attacks = []
    linked_all, eligible_all, fisher = [], [], []
    for name, description, hit, can, subtree in found:
        linked = hit & can
        a = int((linked & is_train).sum())
        b = int((linked & ~is_train).sum())
        n_a = int((can & is_train).sum())
        n_b = int((can & ~is_train).sum())
        p = excess_greater_p(a, n_a, b, n_b) if n_a and n_b else 1.0
        attacks.append(
            LinkageAttack(name, description, n_a, n_b, a, b, float(p), subtree=subtree)
        )
        linked_all.append(linked)
        eligible_all.append(can)
        fisher.append(fisher_greater_p(a, n_a, b, n_b))
    bonferroni = min(1.0, len(attacks) * min(fisher))
    by_bonferroni = bonferroni / (1 - RESAMPLING_SHARE)
    floor = 1 / (1 + n_resamples) / RESAMPLING_SHARE
    if by_bonferroni <= floor:  # the resampling cannot go lower: no need to draw
        combined = by_bonferroni
    else:
        resampled = min_p_resampling(
            np.stack(linked_all),
            np.stack(eligible_all),
            is_train,
            n_resamples=n_resamples,
            rng=metric_generator(seed, "linkage"),
        )
        combined = min(1.0, resampled / RESAMPLING_SHARE, by_bonferroni)
    level = "fail" if combined <= alpha else "pass"
    worst = min(attacks, key=lambda a: a.p_value)
    reason = (
        f"{worst.linked_training} of {worst.n_training} training people linked by the "
        f"{worst.label} attack against {worst.linked_holdout} of {worst.n_holdout} holdout "
        f"people (combined p = {combined:.3g} over {len(attacks)} attacks, level "
        f"{alpha:g})"
    )
    reason += (
        ": the synthetic tables reproduce real people's children."
        if level == "fail"
        else ": no more training people are linked than holdout people."
    )
    return LinkageResult(
        tuple(attacks),
        float(combined),
        alpha,
        level,
        match_ratio,
        k,
        reason,
        method=METHOD,
        n_resamples=n_resamples,
    )


def _tables_of(columns: list[str]) -> list[str]:
    """The tables a list of history columns (``T.…``) summarises, in order."""
    out: list[str] = []
    for column in columns:
        table = column.split(".", 1)[0]
        if table not in out:
            out.append(table)
    return out


@dataclasses.dataclass(frozen=True)
class _History:
    """The ``history`` attack on some history columns: whom it links, whom it can."""

    pool: EncodedTable
    syn: EncodedTable
    ranges: FloatArray
    isolation: FloatArray
    match_ratio: float
    eligible: np.ndarray
    linked: np.ndarray

    @classmethod
    def build(
        cls,
        pool: pd.DataFrame,
        syn: pd.DataFrame,
        columns: list[str],
        meta_cols: Mapping[str, object],
        match_ratio: float | None,
    ) -> _History:
        meta = {"columns": {c: meta_cols[c] for c in columns}}
        pool_h, syn_h = _encode([pool[columns], syn[columns]], meta)
        ranges = np.nan_to_num(column_ranges(pool_h.numeric), nan=0.0)
        # each person's nearest real stranger, on these columns
        own = nearest_neighbors(
            pool_h, pool_h, k=min(len(pool), 3), distance="dcr", scale=ranges
        )
        isolation, second = _strangers(own.distances, own.indices)
        ratio = chance_ratio(isolation, second) if match_ratio is None else match_ratio
        n_rows_cols = [c for c in columns if c.endswith(".n_rows")]
        has_rows = (
            pool[n_rows_cols].fillna(0).to_numpy(dtype=np.float64).sum(axis=1) > 0
            if n_rows_cols
            else np.ones(len(pool), dtype=bool)
        )
        nearest = nearest_neighbors(
            pool_h, syn_h, k=1, distance="dcr", scale=ranges
        ).distances[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(isolation > 0, isolation, 1.0)
        return cls(
            pool_h,
            syn_h,
            ranges,
            isolation,
            ratio,
            (isolation > 0) & has_rows,
            nearest / scale <= ratio,
        )


def _row_set_links(
    row_sets: tuple[np.ndarray, np.ndarray, np.ndarray],
    n_train: int,
    n_hold: int,
    n_syn: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Whom the ``row_set`` attack links, and whom it can: training then holdout people.

    A person can be linked when they have rows below the root and no other real person
    has the same rows; they are linked when a synthetic person has exactly those rows.
    """
    train, syn, hold = (np.asarray(r, dtype=np.uint64) for r in row_sets)
    if (train.size, syn.size, hold.size) != (n_train, n_syn, n_hold):
        msg = (
            "`row_sets` must hold one code per training, synthetic and holdout person "
            f"({n_train}, {n_syn}, {n_hold}); got {train.size}, {syn.size}, {hold.size}."
        )
        raise ParameterError(msg)
    pool = np.concatenate([train, hold])
    _, inverse, counts = np.unique(pool, return_inverse=True, return_counts=True)
    can = (pool != 0) & (counts[inverse] == 1)
    linked = np.isin(pool, syn[syn != 0])
    return linked, can


def _strangers(
    distances: FloatArray, indices: IntArray
) -> tuple[FloatArray, FloatArray]:
    """Distances to the nearest and the second-nearest *other* row of each row."""
    others = indices != np.arange(distances.shape[0])[:, None]
    order = np.argsort(~others, axis=1, kind="stable")  # other rows first, in order
    ranked = np.where(
        np.take_along_axis(others, order, axis=1),
        np.take_along_axis(distances, order, axis=1),
        np.inf,
    )
    n = distances.shape[0]
    first = ranked[:, 0] if ranked.shape[1] > 0 else np.full(n, np.inf)
    second = ranked[:, 1] if ranked.shape[1] > 1 else np.full(n, np.inf)
    return first, second


def chance_ratio(
    isolation: FloatArray, second: FloatArray, *, quantile: float = 0.001
) -> float:
    """The match ratio that chance reaches for only a share ``quantile`` of real people.

    For each real person whose history no one else shares, the distance to their
    nearest real stranger over the distance to the next one: how much closer than the
    runner-up a new person comes by chance. A match at most that ratio of the nearest
    stranger's distance is closer than chance brings strangers (the rule of the
    ``identification`` test, on histories; capped at 0.5, and 0 — exact copies only —
    when no person has two strangers at a distance).

    Parameters
    ----------
    isolation, second : ndarray of shape (n_people,)
        Each person's distances to their nearest and second-nearest real strangers.
    quantile : float, default=0.001
        The share of real people whose ratio may fall below the threshold.

    Returns
    -------
    float
        The threshold, in [0, 0.5].

    Examples
    --------
    >>> chance_ratio(np.array([1.0, 2.0, 0.0]), np.array([4.0, 4.0, 1.0]))
    0.25
    """
    ok = (isolation > 0) & np.isfinite(second) & (second > 0)
    if not ok.any():
        return 0.0
    ratios = isolation[ok] / second[ok]
    return float(min(0.5, np.quantile(ratios, quantile, method="lower")))
