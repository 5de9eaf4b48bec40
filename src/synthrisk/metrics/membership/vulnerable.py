# SPDX-License-Identifier: BSD-3-Clause
"""Vulnerable people: the membership attacks on the most isolated real people.

Averages hide the people an attack can actually expose. Meeus, Guépin, Creţu & de
Montjoye (2023, "Achilles' heels", arXiv 2306.10308) find them by their distance to
their nearest other record; Stadler, Oprisanu & Troncoso (2022) show that a generator
can look private on average while its outliers are exposed. This test ranks every real
person of the pooled training ∪ holdout rows by **isolation** (distance to the nearest
record of another real person, :mod:`synthrisk.metrics.membership._people`), takes the
most isolated strata (1 % and 5 % of the people whose record no one else shares), and
runs four membership attacks that score people on each stratum:

* ``dcr``: the distance to the nearest synthetic row (closer = member);
* ``gan_leaks``: GAN-Leaks' Parzen window (Chen, Yu, Zhang & Fritz 2020), the mean of
  ``exp(-d / h)`` over the 5 nearest synthetic rows, ``h`` the median distance of real
  people to their nearest synthetic row;
* ``monte_carlo``: Hilprecht, Härterich & Bernau (2019), the number of synthetic rows
  within that median distance (of the 20 nearest);
* ``domias``: van Breugel et al. (2023), the log density ratio
  ``log p_synthetic(x) - log p_real(x)`` with Gaussian KDEs (:class:`_KDE`), the real
  density fitted on a seeded sample of the pooled real people.

**The test that gates.** Within a stratum, the training and holdout people were chosen
by a rule that cannot tell them apart (the pooled isolation), so when the generator
memorised no one their attack scores are exchangeable. Take the people of the stratum
that an attack ranks highest — the top 10 % (where a few copied people show) and the
top half (where a stratum-wide shift shows), ties included — and count the training
people among them: without memorisation the count is hypergeometric (Fisher's exact
test, conditional on the scores: exact, whatever the attack). Each attack × stratum ×
tail is one component; their p-values are combined by Bonferroni over the components
that can be significant at all (Tarone 1990: a top of four people among forty cannot
reach the corrected level, and counting it would only cost power). The excess is in
people: training people in the top beyond what their share of the stratum gives.

Reported per stratum and attack: the ROC AUC with its DeLong interval, the TPR at FPR
0.1 % and 1 % with Clopper–Pearson bounds (at FPR 0.1 % of a few hundred non-members
that is the TPR at no false positive), and the tail counts. The whole population's AUC
of the DCR attack is given for comparison.

**The privacy onion.** Deleting the people flagged here does not make the rest safe:
remove the most exposed layer and the next most isolated people become the exposed
ones (Carlini et al. 2022, "The privacy onion effect", NeurIPS). Regenerate instead.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from scipy import stats

from synthrisk._typing import FloatArray, JSONValue
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, custom, integer, probability
from synthrisk.metrics._threat import FULL_RECORD, MEMBERS, ThreatModel
from synthrisk.metrics.membership._people import (
    PERSON,
    Geometry,
    People,
    find_person_column,
    geometry,
    isolation_rank,
    people_of,
    per_person,
    stratum,
)
from synthrisk.metrics.membership._space import Data, Space, n_rows, take_rows
from synthrisk.metrics.membership.density import _KDE, numeric_embedding
from synthrisk.metrics.membership.identification import _shares
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.mia import LOW_FPRS, auc_control, clopper_pearson, tpr_at_fpr

__all__ = ["ATTACKS", "VulnerablePeople", "tail_test"]

#: the attacks that score people, in report order
ATTACKS = ("dcr", "gan_leaks", "monte_carlo", "domias")
#: synthetic neighbours searched per attacked row (Monte Carlo counts within them)
_NEIGHBORS = 20
#: GAN-Leaks' synthetic neighbours
_PARZEN_K = 5
#: the level at which "detectable at this size" is stated: the first Holm step of a
#: default run (about ten gating tests at 0.05), within this test's components
_RUN_LEVEL = 0.05 / 10
#: fewest people of each side a stratum needs to be tested
MIN_PER_SIDE = 10


def _attacks(value: Any, name: str) -> tuple[str, ...]:
    try:
        values = [value] if isinstance(value, str) else list(value)
    except TypeError:
        values = []
    unknown = [v for v in values if v not in ATTACKS]
    if not values or unknown:
        msg = (
            f"`{name}` must be a list of attacks among {list(ATTACKS)}; got {value!r}."
        )
        raise ParameterError(msg)
    return tuple(a for a in ATTACKS if a in values)


def tail_test(
    scores: FloatArray, training: np.ndarray, share: float
) -> dict[str, JSONValue]:
    """Training people among the top ``share`` of ``scores`` (ties included): Fisher's test.

    Conditional on the scores, a rule that cannot tell the sides apart puts a
    hypergeometric number of training people in the top: the one-sided p-value of the
    observed number is exact. Returns the counts, the excess (people) and the p-value.
    """
    n = int(scores.size)
    n_train = int(training.sum())
    size = max(1, math.ceil(share * n))
    cut = np.sort(scores)[::-1][size - 1]
    top = scores >= cut
    m = int(top.sum())
    a = int((top & training).sum())
    p = float(stats.hypergeom.sf(a - 1, n, n_train, m)) if m else 1.0
    return {
        "top": m,
        "training_in_top": a,
        "expected": m * n_train / n if n else 0.0,
        "excess": a - (m * n_train / n if n else 0.0),
        "p_value": min(1.0, p),
        # the smallest p-value the top could give (every one a training person)
        "min_p_value": float(stats.hypergeom.sf(min(m, n_train) - 1, n, n_train, m))
        if m
        else 1.0,
    }


def tarone_count(min_p_values: list[float], level: float) -> int:
    """Tarone's (1990) number of tests to correct for among discrete tests.

    A discrete test whose smallest possible p-value exceeds ``level / K`` can never be
    significant and need not be counted: the smallest ``K`` such that at most ``K``
    tests can reach ``level / K``. The choice depends on the tests' margins only, not
    on the outcome, so Bonferroni over the ``K`` countable tests stays exact.
    """
    ordered = sorted(min_p_values)
    for k in range(1, len(ordered) + 1):
        if sum(p <= level / k for p in ordered) <= k:
            return k
    return max(1, len(ordered))


@functools.lru_cache(maxsize=256)
def _detectable_tail(n: int, n_train: int, m: int, level: float) -> int | None:
    """Fewest training people beyond chance in a top of ``m`` that the tail test detects.

    The top's count is a hypergeometric draw; the smallest excess ``k`` that makes the
    one-sided p-value fall below ``level`` for at least 80 % of those draws. Remembered
    by its arguments: the attacks of one stratum share them (on Adult, 16 calls of
    6 distinct cases, a few milliseconds of scipy each).
    """
    if not (m and n_train and n > n_train):
        return None
    chance = stats.hypergeom(n, n_train, m)
    counts = np.arange(max(0, m - (n - n_train)), min(m, n_train) + 1)
    weights = chance.pmf(counts)
    most = min(m, n_train)
    # the p-value of every possible count, computed once
    p_of = np.ones(most + 1)
    p_of[counts] = chance.sf(counts - 1)

    def detected(k: int) -> bool:
        p_shift = p_of[np.minimum(counts + k, most)]
        return float(weights[p_shift < level].sum()) >= 0.8

    low, high = 1, most
    if high < 1 or not detected(high):
        return None
    while low < high:  # the detection probability grows with k
        middle = (low + high) // 2
        if detected(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _positive_median(values: FloatArray) -> float:
    positive = values[values > 0]
    return float(np.median(positive)) if positive.size else 1.0


def _tpr_bounds(
    members: FloatArray, non_members: FloatArray, level: float
) -> dict[str, JSONValue]:
    """TPR at each low FPR with its Clopper–Pearson interval (over the members)."""
    out: dict[str, JSONValue] = {}
    rates = tpr_at_fpr(members, non_members, LOW_FPRS)
    for fpr in LOW_FPRS:
        tpr = rates[str(fpr)]
        if tpr is None:
            out[str(fpr)] = None
            continue
        k = round(tpr * members.size)
        low, high = clopper_pearson(np.array([k]), np.array([members.size]), level)
        out[str(fpr)] = {
            "tpr": float(tpr),
            "ci": [float(low[0]), float(high[0])],
            "fpr_resolution": 1.0 / non_members.size,
        }
    return out


@register
class VulnerablePeople(Metric):
    """Membership attacks on the most isolated real people, training against holdout.

    See :mod:`synthrisk.metrics.membership.vulnerable`. The score is the highest ROC
    AUC of the attacks on a tested stratum (0.5 = a coin toss).

    Parameters
    ----------
    person : str, "auto" or None, default="auto"
        The column that names people with several rows (see ``identification``).
    strata : list of float, default=[0.01, 0.05]
        The most isolated shares of the pooled real people (whose record no one else
        shares) attacked.
    tails : list of float, default=[0.1, 0.5]
        The top shares of a stratum, by attack score, in which training people are
        counted.
    attacks : list of str, default=all four
        Among ``dcr``, ``gan_leaks``, ``monte_carlo``, ``domias``.
    max_fit_rows : int, default=5000
        Rows each DOMIAS density is fitted on at most (a seeded sample).
    confidence_level : float, default=0.95
        Level of the reported intervals.
    """

    id = "vulnerable_people"
    shares = "real people and synthetic rows"
    cost = 4.0
    report_order = 6
    attack = (
        "An attacker who holds a target's full record and the synthetic table scores how likely the target "
        "was in the training data (closeness of synthetic rows, their number nearby, their density); "
        "the most isolated people are the ones such attacks expose. Deleting the people flagged here does "
        "not make the rest safe: the next most isolated become the exposed ones (the privacy onion, "
        "Carlini et al. 2022) — regenerate instead."
    )
    threat_model = ThreatModel(
        attacker_holds=FULL_RECORD,
        target=MEMBERS,
        meaning=(
            "training people among the most isolated real people that membership attacks rank "
            "highest, beyond their share of those people (holdout people are the control): "
            "0 = the attacks cannot tell the vulnerable training people from new ones"
        ),
    )
    higher_is_safer = False
    requires_holdout = True

    person: Param[str | None] = PERSON
    strata: Param[tuple[float, ...], float | Iterable[float]] = Param(
        custom(_shares, "a list of shares in (0, 1)"),
        (0.01, 0.05),
        "Most isolated shares of the real people attacked.",
    )
    tails: Param[tuple[float, ...], float | Iterable[float]] = Param(
        custom(_shares, "a list of shares in (0, 1)"),
        (0.1, 0.5),
        "Top shares of a stratum (by attack score) where training people are counted.",
    )
    attacks: Param[tuple[str, ...], str | Iterable[str]] = Param(
        custom(_attacks, f"a list among {list(ATTACKS)}"),
        ATTACKS,
        "The membership attacks run on each stratum.",
    )
    max_fit_rows: Param[int] = Param(
        integer(minimum=10), 5000, "Rows each DOMIAS density is fitted on at most."
    )
    confidence_level: Param[float] = Param(
        probability(), 0.95, "Level of the reported intervals."
    )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        column = find_person_column(tables) if self.person == "auto" else self.person
        people = people_of(tables, column)
        geo = geometry(tables, people, context=context)[0]
        n_people = people.n_people
        training = np.arange(n_people) < people.n_train
        isolation = per_person(geo.isolation, people.person, n_people, how="max")
        eligible = isolation > 0
        rank = isolation_rank(np.where(eligible, isolation, -1.0))
        strata = {s: stratum(rank, s, eligible) for s in self.strata}
        if not any(
            (chosen & training).sum() >= MIN_PER_SIDE
            and (chosen & ~training).sum() >= MIN_PER_SIDE
            for chosen in strata.values()
        ):
            msg = (
                f"no stratum of the most isolated people ({', '.join(f'{s:.0%}' for s in strata)} of "
                f"{int(eligible.sum())} people whose record no one else shares) has {MIN_PER_SIDE} training "
                f"and {MIN_PER_SIDE} holdout people: the vulnerable people cannot be tested at this size "
                "(raise `strata`, or give more rows)."
            )
            raise InputError(msg)
        found = geometry(tables, people, context=context)
        by_stratum = self._scores(tables, people, found, strata, context)
        components: list[dict[str, Any]] = []
        per_stratum: list[JSONValue] = []
        for share, chosen in strata.items():
            n_t = int((chosen & training).sum())
            n_h = int((chosen & ~training).sum())
            entry: dict[str, JSONValue] = {
                "stratum": f"most isolated {share:.0%}",
                "share": share,
                "training_people": n_t,
                "holdout_people": n_h,
                "min_isolation": float(isolation[chosen].min())
                if chosen.any()
                else None,
            }
            attacks: dict[str, JSONValue] = {}
            tested = n_t >= MIN_PER_SIDE and n_h >= MIN_PER_SIDE
            if not tested:
                entry["not_tested"] = (
                    f"{n_t} training and {n_h} holdout people: at least {MIN_PER_SIDE} of each are needed"
                )
            for name in self.attacks:
                person_scores = by_stratum[share][name]
                member = person_scores[chosen & training]
                non_member = person_scores[chosen & ~training]
                block: dict[str, JSONValue] = {
                    "auc": auc_control(member, non_member),
                    "tpr_at_fpr": _tpr_bounds(
                        member, non_member, self.confidence_level
                    ),
                }
                if tested:
                    stratum_scores = person_scores[chosen]
                    stratum_training = training[chosen]
                    tails: dict[str, JSONValue] = {}
                    for tail in self.tails:
                        result = tail_test(stratum_scores, stratum_training, tail)
                        tails[f"top {tail:.0%}"] = result
                        components.append(
                            {
                                "part": f"most isolated {share:.0%}, {name}, top {tail:.0%}",
                                "stratum": share,
                                "attack": name,
                                "tail": tail,
                                "n_stratum": int(chosen.sum()),
                                "n_training": n_t,
                                **result,
                            }
                        )
                    block["tails"] = tails
                attacks[name] = block
            entry["attacks"] = attacks
            per_stratum.append(entry)
        # the whole population's DCR attack, for comparison with the strata
        nearest = per_person(geo.to_synthetic, people.person, n_people, how="min")
        population: dict[str, JSONValue] = {
            "dcr": auc_control(-nearest[training], -nearest[~training])["real"]
        }
        test = self._test(components)
        breakdown: dict[str, JSONValue] = {
            "strata": per_stratum,
            "population_auc": population,
            "person_column": people.column,
            "training_people": people.n_train,
            "holdout_people": people.n_holdout,
            "unique_records": float(eligible.mean()),
            "note": (
                "Deleting the people flagged here does not make the rest safe: the next most isolated "
                "people become the exposed ones (the privacy onion). Regenerate instead."
            ),
        }
        if test is not None:
            breakdown["holdout_test"] = test
        aucs = [
            float(block["auc"]["real"])
            for entry in per_stratum
            if isinstance(entry, dict) and "not_tested" not in entry
            for block in entry["attacks"].values()
            if block["auc"]["real"] is not None
        ]
        widest = strata[max(strata)]
        rows = people.rows_of(np.flatnonzero(widest & training))
        rows = rows[rows < people.n_real_rows]
        records = {
            "vulnerable": RecordScores(
                "real",
                rows.astype(np.int64),
                geo.isolation[rows].astype(np.float64),
                f"training rows of the most isolated {max(strata):.0%} of real people: distance to the "
                "nearest record of another real person",
            )
        }
        score = max(aucs) if aucs else None
        reason = None if score is not None else "no stratum large enough to attack"
        return Outcome(score=score, breakdown=breakdown, records=records, reason=reason)

    def _scores(
        self,
        tables: Tables,
        people: People,
        found: tuple[Geometry, Space, Data, Data],
        strata: dict[float, np.ndarray],
        context: Context,
    ) -> dict[float, dict[str, FloatArray]]:
        """Each attack's score per person of each stratum (higher = more likely a member).

        The distance attacks search the ``_NEIGHBORS`` nearest synthetic rows of the
        attacked people's rows only; GAN-Leaks' bandwidth and the Monte Carlo radius
        are the median distance of the stratum's rows to their nearest synthetic row
        (Hilprecht et al.'s choice, on the people attacked).
        """
        geo, space, pool, synthetic = found
        attacked = np.zeros(people.n_people, dtype=bool)
        for chosen in strata.values():
            attacked |= chosen
        rows = people.rows_of(np.flatnonzero(attacked))
        k = min(_NEIGHBORS, n_rows(synthetic))
        distances = np.full((n_rows(pool), k), np.inf)
        if rows.size:
            distances[rows] = space.search(
                take_rows(pool, rows),
                synthetic,
                k=k,
                context=context,
                description="vulnerable people → synthetic",
            ).distances
        domias = (
            self._domias(tables, people, attacked, context)
            if "domias" in self.attacks
            else None
        )
        out: dict[float, dict[str, FloatArray]] = {}
        for share, chosen in strata.items():
            mine = np.isin(people.person, np.flatnonzero(chosen))
            d = distances[mine]
            radius = float(np.median(d[:, 0])) if d.size else 0.0
            h = radius if radius > 0 else _positive_median(d[:, 0])
            row_scores: dict[str, FloatArray] = {}
            if "dcr" in self.attacks:
                row_scores["dcr"] = -geo.to_synthetic
            if "gan_leaks" in self.attacks:
                kernel = np.zeros(n_rows(pool))
                kernel[mine] = np.mean(np.exp(-d[:, :_PARZEN_K] / h), axis=1)
                row_scores["gan_leaks"] = kernel
            if "monte_carlo" in self.attacks:
                counts = np.zeros(n_rows(pool))
                counts[mine] = (d <= radius).sum(axis=1)
                row_scores["monte_carlo"] = counts
            scores = {
                name: per_person(values, people.person, people.n_people, how="max")
                for name, values in row_scores.items()
            }
            if domias is not None:
                scores["domias"] = domias
            out[share] = {name: scores[name] for name in self.attacks}
        return out

    def _domias(
        self, tables: Tables, people: People, attacked: np.ndarray, context: Context
    ) -> FloatArray:
        """DOMIAS' log density ratio of the attacked people (NaN-free; -inf elsewhere)."""
        if people.column is not None:
            tables = tables.select(
                [c for c in tables.real.columns if c != people.column]
            )
        data = numeric_embedding(tables, ["real", "synthetic", "holdout"])
        pool = np.vstack([data["real"], data["holdout"]])
        rows = people.rows_of(np.flatnonzero(attacked))
        rng = context.rng
        limit = self.max_fit_rows
        syn = data["synthetic"]
        if syn.shape[0] > limit:
            syn = syn[np.sort(rng.choice(syn.shape[0], size=limit, replace=False))]
        # the real density: a sample of the pooled people, drawn without regard to
        # which side they are on (so the two sides stay exchangeable)
        fit = pool
        if fit.shape[0] > limit:
            fit = pool[np.sort(rng.choice(pool.shape[0], size=limit, replace=False))]
        out = np.full(people.n_people, -np.inf)
        if rows.size == 0:
            return out
        try:
            log_syn = _KDE(syn).logpdf(pool[rows], context.working_memory)
            log_real = _KDE(fit).logpdf(pool[rows], context.working_memory)
        except InputError as exc:
            context.warn(f"DOMIAS not run: {exc.detail or exc}")
            out[:] = 0.0
            return out
        row_scores = np.full(pool.shape[0], -np.inf)
        row_scores[rows] = log_syn - log_real
        return np.asarray(
            per_person(row_scores, people.person, people.n_people, how="max")
        )

    def _test(self, components: list[dict[str, Any]]) -> dict[str, JSONValue] | None:
        """The holdout test: Bonferroni over the components (see the module docstring)."""
        if not components:
            return None
        m = tarone_count(
            [float(part["min_p_value"]) for part in components], _RUN_LEVEL
        )
        cut = _RUN_LEVEL / m
        for part in components:
            countable = float(part["min_p_value"]) <= cut
            part["counted"] = countable
            part["p_value_adjusted"] = (
                min(1.0, m * float(part["p_value"])) if countable else 1.0
            )
            part["detectable_people"] = (
                _detectable_tail(
                    int(part["n_stratum"]),
                    int(part["n_training"]),
                    int(part["top"]),
                    cut,
                )
                if countable
                else None
            )
        worst = min(
            components,
            key=lambda part: (float(part["p_value_adjusted"]), float(part["p_value"])),
        )
        excess = float(worst["excess"])
        top = int(worst["top"])
        share = int(worst["n_training"]) / int(worst["n_stratum"])
        # the excess's interval: a Wilson interval of the training share in the top,
        # minus the share of the stratum, in people
        z = float(stats.norm.ppf(0.5 + self.confidence_level / 2))
        a = int(worst["training_in_top"])
        centre = (a + z * z / 2) / (top + z * z)
        half = z * math.sqrt(a * (top - a) / top + z * z / 4) / (top + z * z)
        ci = [(centre - half - share) * top, (centre + half - share) * top]
        found = [
            int(part["detectable_people"])
            for part in components
            if part["detectable_people"] is not None
        ]
        return {
            "statistic": "training people among the most isolated that an attack ranks highest, beyond chance (people)",
            "effect": excess,
            "ci": ci,
            "se": (ci[1] - ci[0]) / (2 * z),
            "p_value": float(worst["p_value_adjusted"]),
            "n": int(
                min(
                    int(worst["n_training"]),
                    int(worst["n_stratum"]) - int(worst["n_training"]),
                )
            ),
            "null": 0.0,
            "estimate": float(a),
            "control": float(worst["expected"]),
            "compared": (
                f"{worst['part']}: {a} of the {top} top-ranked people are training people, "
                f"{float(worst['expected']):.3g} by chance"
            ),
            "confidence_level": self.confidence_level,
            "unit": "people",
            "decision": "significance",
            "component": worst["part"],
            "components": components,
            "mde": float(min(found)) if found else None,
            "mde_level": cut,
            "counted_components": m,
        }
