# SPDX-License-Identifier: BSD-3-Clause
"""How many copied people chance explains: the model behind the copied-people finding.

A holdout-controlled test cannot be significant below a floor: with ``k`` identified
people, all of them from training, its p-value is at least ``(n_t / (n_t + n_h)) ** k``
— eight copies among 3,000 training people against a 1,000-person holdout give 0.1,
whatever the data. Where the holdout cannot decide, the real data themselves say how
often a synthetic row would reproduce a real person by chance, *if the generator's rows
behave like draws from the population* (the assumption this model rests on; a generator
that fits badly can break it in either direction, so a finding of this model reads
review, never fail, under the ``statistical`` policy).

Two kinds of copies, two estimates each; the larger of each pair is the model:

* **exact copies** of a record no other real person shares. *Good–Turing*: the
  probability that a new draw from the population equals a record that one real person
  holds is estimated by ``2 N2 / N`` (``N2`` records held by exactly two of the ``N``
  person-records; Good 1953). ``n_synthetic`` draws then hit about
  ``n_synthetic · 2 N2 / N`` such records, the training people's share of them being
  their share of the singletons. A synthetic table that repeats its own records more
  than real people do raises chance matches: by Cauchy–Schwarz the cross rate
  ``Σ p q`` is at most ``sqrt(Σ p² · Σ q²)``, so the estimate is scaled by
  ``sqrt(c_ss / c_rr)`` (the collision rates of synthetic and of real rows) when that
  is above 1. *The holdout's own rate*: exact copies of holdout people, scaled to the
  number of training people with a record of their own.
* **near copies** (a synthetic row closer to a person, relative to their nearest other
  real person, than the threshold ``c``; not exact). *Nearest-neighbour ratios*: where
  people are locally like a Poisson process, the nearest of ``n_s`` new draws falls
  within ``c`` times a person's nearest other real person with probability about
  ``n_s / (N - 1) · F(c)``, ``F`` being the share of real people whose nearest stranger
  is within ``c`` of their second nearest (measured on the real people themselves).
  *The holdout's own rate*, scaled as above.

The p-value is the chance of at least the observed number of training people, for exact
copies, for all identified people, and for near copies far inside the threshold (a scan
of ``c, c/2, c/4``, each with its own chance counts: the model's shrunk as ``(r / c)^d`` —
``F(r) = r^d`` in the lower tail under the same local model, ``d`` read off the real
people's own ratios but at most 1, the heaviest tail one continuous coordinate gives —
the real people's own share below ``r``, and the holdout's own near copies below ``r``),
the largest p-value of the estimates, Bonferroni-combined over the three questions.

**The estimates carry their own uncertainty.** The ratio model's rate rests on the ``m``
real people below the threshold — a handful at the 1-in-1,000 threshold (``c`` is their
``m``-th smallest ratio, so the true share below it is a Beta(``m``, ``N - m + 1``) draw,
nearly Gamma(``m``) / ``N``). A count that is Poisson given such a rate is *negative
binomial* (Gamma–Poisson) with shape ``m`` and the same mean: its tail is what the
p-value reads. Read as exact, the estimate from five people made new people's near
copies look significant about once in thirty tables. Good–Turing's rate rests on ``N2``
doubletons: chance copies ``K`` and ``N2`` are Poisson with means ``a·μ`` and ``μ``, so
the exact conditional test (``K`` given ``K + N2`` is binomial) reads the negative
binomial tail of shape ``N2 + 1`` and mean ``a·(N2 + 1)``. Where no real record repeats
at all (``N2 = 0``) the model assumes exact reproduction by chance does not happen — true
of a record with a continuous coordinate, but on a small table of dates and categories
one chance match can then read beyond chance (a finding at review, never a fail). The holdout's own rates are point estimates (a guard against a
model that misfits, not a test: their own noise would make the model as powerless as
the holdout test it stands in for). Upper bounds (95 %, from the counts the estimates
rest on) are reported beside them; the finding only asks for review.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy import stats

from synthrisk._typing import IntArray, JSONValue

__all__ = ["FINDING_ALPHA", "ChanceModel", "chance_model", "detectable_copies"]

#: the strict policy counts near copies within the threshold at which chance brings
#: this many near copies to the whole table (new people pass it about 99 times in 100
#: where the model holds)
STRICT_CHANCE = 0.01

#: thresholds the near copies are scanned at: c, c/2, … (Bonferroni over them)
NEAR_SCAN = 3

#: the chance model's level for a finding: a count of copied people that chance explains
#: with probability below this reads review (three comparisons, Bonferroni: each at a third)
FINDING_ALPHA = 0.01

ASSUMPTION = (
    "valid when the generator's rows behave like draws from the population the real people "
    "come from; a generator that merely fits badly can trip it, so it asks for review, never "
    "fails by itself"
)
MODEL = (
    "chance matches estimated from the real data: Good–Turing for exact copies of records one "
    "person holds (scaled by the synthetic table's own repetition, Cauchy–Schwarz), nearest-"
    "neighbour distance ratios for near copies, and the holdout's own match rate, whichever is larger"
)


def _poisson_upper(count: float, level: float = 0.95) -> float:
    """One-sided upper confidence bound of a Poisson mean observed as ``count``."""
    return float(stats.chi2.ppf(level, 2 * (count + 1)) / 2)


#: a chance count: its mean and, for a rate estimated from a count, that count (the
#: shape of the Gamma–Poisson mixture; None for a point estimate taken as exact)
Count = tuple[float, float | None]


def _law(count: Count) -> Any:
    """The frozen scipy distribution of a chance count (Poisson, or negative binomial)."""
    mean, shape = count
    if shape is None or not math.isfinite(shape):
        return stats.poisson(mean)
    return stats.nbinom(shape, shape / (shape + mean))


def _tail(observed: int, expected: float, shape: float | None = None) -> float:
    """P(X >= observed) for a chance count X of mean ``expected``.

    Poisson when ``shape`` is None; otherwise the mean is a rate estimated from a count
    of ``shape`` events and X is negative binomial (Gamma–Poisson) with that shape.
    1 for no observation, 0 for none expected.
    """
    if observed <= 0:
        return 1.0
    if expected <= 0 or (shape is not None and shape <= 0):
        return 0.0
    return float(_law((expected, shape)).sf(observed - 1))


def _tail_sum(observed: int, first: Count, second: Count) -> float:
    """P(X + Y >= observed) for independent chance counts X and Y."""
    if observed <= 0:
        return 1.0
    if first[0] <= 0 or (first[1] is not None and first[1] <= 0):
        return _tail(observed, *second)
    if second[0] <= 0 or (second[1] is not None and second[1] <= 0):
        return _tail(observed, *first)
    j = np.arange(observed)
    # P(X = j) P(Y >= observed - j) for j < observed, plus P(X >= observed)
    total = float(
        np.sum(_law(first).pmf(j) * _law(second).sf(observed - j - 1))
        + _law(first).sf(observed - 1)
    )
    return min(1.0, max(0.0, total))


def _worst(observed: int, counts: list[Count]) -> float:
    """The largest tail over the candidate chance counts (the most chance explains)."""
    return max(_tail(observed, *c) for c in counts)


def _worst_sum(observed: int, firsts: list[Count], seconds: list[Count]) -> float:
    """The largest tail of a sum over every pair of candidate chance counts."""
    return max(_tail_sum(observed, a, b) for a in firsts for b in seconds)


@dataclasses.dataclass(frozen=True)
class ChanceModel:
    """Copied training people observed against what chance explains.

    ``exact`` and ``identified`` (exact or near) are counts of training people;
    ``expected_*`` the model's point estimates, ``upper_*`` their 95 % upper bounds;
    ``p_value`` the Bonferroni-combined Poisson p-value of the point estimates.
    """

    exact: int
    identified: int
    expected_exact: float
    expected_identified: float
    upper_exact: float
    upper_identified: float
    p_exact: float
    p_identified: float
    p_value: float
    components: dict[str, Any]
    #: the candidate chance counts of exact and of near copies (mean, shape)
    exact_counts: tuple[Count, ...] = ()
    near_counts: tuple[Count, ...] = ()

    def detectable(self, *, near: bool = False) -> int:
        """Fewest copied people beyond chance that the model flags (see :func:`detectable_copies`).

        Exact copies, or with ``near`` every identified person (exact or near).
        """
        if near:
            return _detectable(
                lambda n: _worst_sum(
                    n, list(self.exact_counts), list(self.near_counts)
                ),
                self.expected_identified,
            )
        return _detectable(
            lambda n: _worst(n, list(self.exact_counts)), self.expected_exact
        )

    @property
    def significant(self) -> bool:
        """More copied people than chance explains at :data:`FINDING_ALPHA`."""
        return self.p_value < FINDING_ALPHA

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form (the ``chance_model`` block of the identification breakdown)."""
        return {
            "model": MODEL,
            "assumption": ASSUMPTION,
            "alpha": FINDING_ALPHA,
            "exact": self.exact,
            "identified": self.identified,
            "expected_exact": self.expected_exact,
            "expected_identified": self.expected_identified,
            "upper_exact": self.upper_exact,
            "upper_identified": self.upper_identified,
            "p_exact": self.p_exact,
            "p_identified": self.p_identified,
            "p_value": self.p_value,
            "significant": self.significant,
            "components": {k: _json(v) for k, v in self.components.items()},
        }


def _json(value: Any) -> JSONValue:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    return value


def _collision_rate(ids: np.ndarray) -> float:
    """Probability that two distinct rows drawn without replacement are equal."""
    n = ids.size
    if n < 2:
        return 0.0
    _, counts = np.unique(ids, return_counts=True)
    counts = counts.astype(np.float64)
    return float((counts * (counts - 1)).sum() / (n * (n - 1.0)))


def chance_model(
    *,
    pool_ids: np.ndarray,
    synthetic_ids: np.ndarray,
    person: IntArray,
    n_train: int,
    exact: np.ndarray,
    identified: np.ndarray,
    has_unique: np.ndarray,
    isolation_rows: np.ndarray,
    second_rows: np.ndarray,
    threshold: float,
    ratio: np.ndarray | None = None,
) -> ChanceModel:
    """The chance model of copied people (see the module docstring).

    Parameters
    ----------
    pool_ids, synthetic_ids : ndarray of int
        Ids of the distinct records of the pooled real rows (training rows first) and of
        the synthetic rows (equal records, equal ids).
    person : ndarray of int
        The person of each pooled row (training people ``0 .. n_train - 1``).
    exact, identified, has_unique : ndarray of bool, one per person
        Exactly copied (a record of their own reproduced), identified (exact or near),
        and holding a record no other real person shares.
    isolation_rows, second_rows : ndarray of float, one per pooled row
        Distance to the nearest and to the second-nearest other real person.
    threshold : float
        The near-copy threshold ``c`` of the identification test.
    ratio : ndarray of float, one per person, optional
        Each person's distance to the nearest synthetic row over their isolation (for
        the strict policy's near copies).
    """
    n_people = int(exact.size)
    n_syn = int(synthetic_ids.size)
    training = np.arange(n_people) < n_train
    holdout = ~training
    # person-records: each distinct (person, record) pair once
    pairs = np.unique(np.stack([person, pool_ids]).T, axis=0)
    record_people = np.bincount(pairs[:, 1]) if pairs.size else np.zeros(0, np.int64)
    n_pairs = int(pairs.shape[0])
    holders = record_people[pairs[:, 1]] if n_pairs else np.zeros(0, np.int64)
    single = holders == 1
    n1 = int(single.sum())
    n1_train = int((single & (pairs[:, 0] < n_train)).sum()) if n_pairs else 0
    n2 = int((record_people == 2).sum())
    mass = min(1.0, 2.0 * n2 / n_pairs) if n_pairs else 0.0
    mass_upper = min(1.0, 2.0 * _poisson_upper(n2) / n_pairs) if n_pairs else 0.0
    c_rr = _collision_rate(pool_ids)
    c_ss = _collision_rate(synthetic_ids)
    inflation = math.sqrt(c_ss / c_rr) if c_rr > 0 and c_ss > c_rr else 1.0
    share_train = n1_train / n1 if n1 else 0.0
    gt = n_syn * mass * share_train * inflation
    gt_upper = n_syn * mass_upper * share_train * inflation
    # the holdout's own rate, scaled to the training people with a record of their own
    unique_t = int((has_unique & training).sum())
    unique_h = int((has_unique & holdout).sum())
    scale = unique_t / unique_h if unique_h else 0.0
    near = identified & ~exact
    k_h_exact = int((exact & holdout).sum())
    k_h_near = int((near & holdout).sum())
    held_exact = k_h_exact * scale
    held_exact_upper = _poisson_upper(k_h_exact) * scale if unique_h else 0.0
    # near copies: the real people's own nearest / second-nearest ratios
    ok = (
        (isolation_rows > 0)
        & np.isfinite(second_rows)
        & (second_rows > 0)
        & np.isfinite(isolation_rows)
    )
    n_ok = int(ok.sum())
    below = (
        int((isolation_rows[ok] / second_rows[ok] <= threshold).sum()) if n_ok else 0
    )
    # at least one real person below the threshold, as Good–Turing keeps one doubleton:
    # a sample with none says the rate is small, not zero, and a zero expectation would
    # make any chance near copy look impossible
    share_below = max(below, 1) / n_ok if n_ok else 0.0
    share_below_upper = min(1.0, _poisson_upper(below) / n_ok) if n_ok else 0.0
    others = max(n_people - 1, 1)
    train_rows_ok = int((ok & (person < n_train)).sum())
    ratio_model = train_rows_ok * min(1.0, n_syn * share_below / others)
    ratio_upper = train_rows_ok * min(1.0, n_syn * share_below_upper / others)
    held_near = k_h_near * scale
    # the ratio model's rate rests on the people below the threshold (at least one)
    ratio_shape = float(max(below, 1))
    held_near_upper = _poisson_upper(k_h_near) * scale if unique_h else 0.0

    # the strict policy's near copies: within the threshold at which chance brings
    # 0.01 near copies to the whole table. Under the same local Poisson model the ratio
    # R of nearest over second-nearest stranger has P(R <= r) = r^d in its lower tail,
    # so the chance count shrinks as (c' / c)^d. The tail is read off the real people's
    # own ratios (at shares 10 and 1 in 1,000), but far below them a table of mixed
    # kinds has the heaviest tail one continuous coordinate gives (two people alike in
    # everything but one number: d = 1), so the shrinking uses min(d, 1)
    ratios = isolation_rows[ok] / second_rows[ok] if n_ok else np.zeros(0)
    dimension = math.nan
    if n_ok >= 100:
        low, high = np.quantile(ratios, [0.001, 0.01], method="lower")
        if 0 < low < high:
            dimension = float(math.log(10.0) / math.log(high / low))
    tail = min(dimension, 1.0) if math.isfinite(dimension) and dimension > 0 else 1.0
    strict_threshold = threshold
    if ratio_model > STRICT_CHANCE:
        strict_threshold = threshold * (STRICT_CHANCE / ratio_model) ** (1.0 / tail)
    strict_near = 0
    if ratio is not None:
        strict_near = int(
            (training & identified & ~exact & (ratio <= strict_threshold)).sum()
        )
    # near copies far closer than the threshold: a scan of thresholds c, c/2, c/4,
    # each with its own chance count (the model's, shrunk as (r / c)^d; the real
    # people's own share below r; the holdout's own near copies below r; the largest)
    scan: list[dict[str, float]] = []
    if ratio is not None:
        near_t = training & near
        near_h = holdout & near
        for j in range(NEAR_SCAN):
            r = threshold / 2.0**j
            if r <= 0:
                break
            shrink = (r / threshold) ** tail
            own = float((ratios <= r).mean()) if n_ok else 0.0
            own_count = int((ratios <= r).sum()) if n_ok else 0
            counts_r: list[Count] = [
                (ratio_model * shrink, ratio_shape),
                (train_rows_ok * min(1.0, n_syn * own / others), float(own_count)),
                (int((near_h & (ratio <= r)).sum()) * scale, None),
            ]
            k = int((near_t & (ratio <= r)).sum())
            scan.append(
                {
                    "threshold": r,
                    "observed": k,
                    "expected": max(c[0] for c in counts_r),
                    "p": _worst(k, counts_r),
                }
            )
    p_near = min(1.0, len(scan) * min(s["p"] for s in scan)) if scan else 1.0
    expected_exact = max(gt, held_exact)
    upper_exact = max(gt_upper, held_exact_upper)
    expected_near = max(ratio_model, held_near)
    upper_near = max(ratio_upper, held_near_upper)
    k_exact = int((exact & training).sum())
    k_all = int((identified & training).sum())
    expected_all = expected_exact + expected_near
    upper_all = upper_exact + upper_near
    # Good–Turing's rate tested against its own doubletons: K chance copies and N2
    # doubletons are Poisson with means a·μ and μ, so given K + N2 the copies are
    # Binomial(K + N2, a / (1 + a)) — the negative binomial of shape N2 + 1 and mean
    # a·(N2 + 1), valid whatever μ. Where no real record repeats at all (N2 = 0) the
    # model keeps its assumption that exact reproduction by chance does not happen (a
    # continuous coordinate): an exact copy of a unique record then reads beyond chance
    reach = (
        n_syn * min(1.0, 2.0 * (n2 + 1) / n_pairs) * share_train * inflation
        if n_pairs and n2 > 0
        else 0.0
    )
    exact_counts: list[Count] = [(reach, float(n2 + 1)), (held_exact, None)]
    near_counts: list[Count] = [(ratio_model, ratio_shape), (held_near, None)]
    p_exact = _worst(k_exact, exact_counts)
    p_all = _worst_sum(k_all, exact_counts, near_counts)
    p_value = min(1.0, 3.0 * min(p_exact, p_all, p_near))
    components = {
        "good_turing_expected": gt,
        "good_turing_upper": gt_upper,
        "records_held_by_one": n1,
        "records_held_by_two": n2,
        "person_records": n_pairs,
        "collision_real": c_rr,
        "collision_synthetic": c_ss,
        "repetition_factor": inflation,
        "holdout_exact": k_h_exact,
        "holdout_near": k_h_near,
        "holdout_scale": scale,
        "holdout_expected_exact": held_exact,
        "holdout_expected_near": held_near,
        "ratio_share_below": share_below,
        "ratio_expected_near": ratio_model,
        "ratio_upper_near": ratio_upper,
        "synthetic_rows": n_syn,
        "dimension": dimension,
        "tail_exponent": tail,
        "strict_threshold": strict_threshold,
        "strict_near": strict_near,
        "near_scan": scan,
        "p_near_scan": p_near,
        "ratio_people_below": below,
    }
    return ChanceModel(
        exact=k_exact,
        identified=k_all,
        expected_exact=float(expected_exact),
        expected_identified=float(expected_all),
        upper_exact=float(upper_exact),
        upper_identified=float(upper_all),
        p_exact=p_exact,
        p_identified=p_all,
        p_value=float(p_value),
        components=components,
        exact_counts=tuple(exact_counts),
        near_counts=tuple(near_counts),
    )


def detectable_copies(
    expected: float, *, shape: float | None = None, alpha: float = FINDING_ALPHA / 3
) -> int:
    """Fewest copied people beyond the chance count that the model flags at ``alpha``.

    The smallest total ``n`` with ``P(X >= n) < alpha`` for the chance count ``X`` of
    mean ``expected`` (Poisson, or negative binomial of ``shape``: see :func:`_tail`),
    less the whole people chance is expected to bring (1 when chance explains none).
    """
    return _detectable(lambda n: _tail(n, expected, shape), expected, alpha=alpha)


def _detectable(tail: Any, expected: float, *, alpha: float = FINDING_ALPHA / 3) -> int:
    """The smallest total ``n`` with ``tail(n) < alpha``, less the expected whole people."""
    n = 1
    while tail(n) >= alpha:
        n = n + 1 if n < 64 else int(n * 1.05) + 1
    if n > 64:  # refine the geometric steps: the smallest n with the tail below alpha
        low, high = 64, n
        while high - low > 1:
            mid = (low + high) // 2
            if tail(mid) >= alpha:
                low = mid
            else:
                high = mid
        n = high
    return max(1, n - math.floor(expected))
