# SPDX-License-Identifier: BSD-3-Clause
"""Black-box membership attacks from the synthetic table alone: DOMIAS, Monte Carlo, collisions.

Every attack scores each real row (a member) and each holdout row (a non-member);
the result is the ROC AUC with its DeLong interval, the TPR at 0.1 % and 1 % FPR, the
Clopper–Pearson lower bound of the empirical ε (:mod:`synthrisk.stats.mia`), the ROC
curve, per-record scores, and a ``control`` block (AUC − 0.5, its interval, a one-sided
p-value): a generator that memorised nothing gives the attack no edge over a coin.

* :class:`DOMIAS` — van Breugel et al. (2023), "Membership inference attacks against
  synthetic data through overfitting detection" (AISTATS): the score is the density
  ratio ``p_synthetic(x) / p_reference(x)``. The reference density is fitted on half of
  the holdout (seeded); the other half are the non-members, and as many real rows are
  sampled as members. ``density="kde"``: Gaussian KDEs for both densities (the
  density of scipy's ``gaussian_kde``, which the DOMIAS code uses, computed with BLAS:
  :class:`_KDE`); ``density="prior"``: the reference density is the product of normal
  densities of the continuous features (10 or more distinct values), as DOMIAS'
  ``normal_func_feat``.
* :class:`MonteCarloMembership` — Hilprecht, Härterich & Bernau (2019), "Monte Carlo and
  reconstruction membership inference attacks against generative models": the score is
  the number of synthetic rows within distance ``ε`` of the row, ``ε`` the median
  distance of all attacked rows to their nearest synthetic row.
* :class:`CollisionMembership` — the collision attack: the score is the number of
  synthetic rows equal to the row in every column.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from scipy import linalg, stats

from synthrisk._typing import FloatArray, JSONValue
from synthrisk.exceptions import InputError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._combinations import combination_codes
from synthrisk.metrics._params import Param, integer, option
from synthrisk.metrics._threat import FULL_RECORD, MEMBERS, ThreatModel
from synthrisk.metrics.membership._columns import ALL_COLUMNS, with_columns
from synthrisk.metrics.membership._space import DISTANCES, Space, concat_rows, n_rows
from synthrisk.neighbors import rows_per_block
from synthrisk.results import RecordScores
from synthrisk.schema.encoding import MAX_ONE_HOT_LEVELS, frequent_levels
from synthrisk.schema.tables import Tables
from synthrisk.stats.mia import attack_summary, auc_control
from synthrisk.stats.ranking import ranking_summary

__all__ = ["DOMIAS", "CollisionMembership", "MonteCarloMembership", "numeric_embedding"]


#: scaled numbers are clipped to this many real ranges below 0 and above 1
MAX_RANGES_OUTSIDE = 10.0


def numeric_embedding(tables: Tables, names: list[str]) -> dict[str, FloatArray]:
    """Numbers min-max scaled over the real and holdout rows (missing → the column's mean),
    categories one-hot (missing is a category of its own); columns constant over all
    the tables together are left out. A column of more than ``MAX_ONE_HOT_LEVELS``
    levels keeps its ``MAX_ONE_HOT_LEVELS - 1`` most frequent ones, the rest share one
    "other" column: the width, and the density's cost, stay bounded.

    A scaled number (a synthetic value outside the real range) is clipped to
    ``[-MAX_RANGES_OUTSIDE, 1 + MAX_RANGES_OUTSIDE]``: a synthetic value of 1e160 would
    otherwise overflow the densities' covariance (its square) and end the run. Ten
    ranges out, a kernel adds nothing to the density of the points inside either way;
    only the bandwidth, which such a point inflates, is inflated less."""
    encoded = {name: tables.encoded(name) for name in names}
    ref = np.vstack([encoded[n].numeric for n in names if n != "synthetic"])
    lo = np.nanmin(ref, axis=0) if ref.shape[1] else np.zeros(0)
    span = (np.nanmax(ref, axis=0) - lo) if ref.shape[1] else np.zeros(0)
    span = np.where((span == 0) | np.isnan(span), 1.0, span)
    mean = np.nanmean((ref - lo) / span, axis=0) if ref.shape[1] else np.zeros(0)
    numbers: dict[str, FloatArray] = {}
    for name in names:
        # 1e160 over a range of 1e-300 overflows to ±inf: the clip bounds it
        with np.errstate(over="ignore"):
            scaled = (encoded[name].numeric - lo) / span
        scaled = np.clip(scaled, -MAX_RANGES_OUTSIDE, 1.0 + MAX_RANGES_OUTSIDE)
        numbers[name] = np.where(np.isnan(scaled), mean, scaled)
    stacked = np.vstack([numbers[n] for n in names])
    keep_num = (
        stacked.max(axis=0, initial=-np.inf) > stacked.min(axis=0, initial=np.inf)
        if stacked.shape[0]
        else np.zeros(stacked.shape[1], dtype=bool)
    )
    n_total = stacked.shape[0]
    n_cat = encoded[names[0]].codes.shape[1]
    positions: list[np.ndarray] = []
    widths: list[int] = []
    for c in range(n_cat):
        width = max(int(encoded[n].codes[:, c].max(initial=-1)) for n in names) + 2
        counts = sum(
            np.bincount(encoded[n].codes[:, c] + 1, minlength=width) for n in names
        )
        # a level present in some rows but not all: not a constant column
        levels = np.flatnonzero((counts > 0) & (counts < n_total))
        position = np.full(width, -1)
        if levels.size > MAX_ONE_HOT_LEVELS:
            # the most frequent levels (in code order), then one "other" column
            kept = np.sort(
                frequent_levels(np.asarray(counts, np.int64), MAX_ONE_HOT_LEVELS - 1)
            )
            position[np.flatnonzero(counts)] = kept.size
            position[kept] = np.arange(kept.size)
            widths.append(kept.size + 1)
        else:
            position[levels] = np.arange(levels.size)
            widths.append(levels.size)
        positions.append(position)
    out = {}
    for name in names:
        table = encoded[name]
        rows = np.arange(table.n_rows)
        blocks = [numbers[name][:, keep_num]]
        for c in range(n_cat):
            onehot = np.zeros((table.n_rows, widths[c]))
            column = positions[c][table.codes[:, c] + 1]
            hit = column >= 0
            onehot[rows[hit], column[hit]] = 1.0
            blocks.append(onehot)
        out[name] = np.ascontiguousarray(np.hstack(blocks))
    return out


def _summarise(
    metric: Metric,
    member: FloatArray,
    non_member: FloatArray,
    context: Context,
    what: str,
    member_rows: np.ndarray,
    non_member_rows: np.ndarray,
) -> Outcome:
    scores = ranking_summary(member, non_member)
    breakdown: dict[str, JSONValue] = {
        "roc_auc_score": scores.roc_auc,
        "average_precision_score": scores.average_precision,
        "average_precision_baseline": scores.average_precision_baseline,
        **attack_summary(
            member, non_member, seed=int(context.rng.integers(0, 2**31 - 1))
        ),
        "n_members": int(member.size),
        "n_non_members": int(non_member.size),
        "roc_curve": {"fpr": scores.fpr, "tpr": scores.tpr},
        "control": auc_control(member, non_member),
    }
    control = breakdown["control"]
    ci = None
    if isinstance(control, dict) and control.get("ci") is not None:
        low, high = control["ci"]
        ci = (max(0.0, 0.5 + float(low)), min(1.0, 0.5 + float(high)))
    records = {
        "member_score": RecordScores(
            "real", member_rows, member, f"{what} of each attacked real (member) row"
        ),
        "non_member_score": RecordScores(
            "holdout",
            non_member_rows,
            non_member,
            f"{what} of each attacked holdout (non-member) row",
        ),
    }
    return Outcome(
        score=scores.roc_auc,
        breakdown=breakdown,
        ci=ci,
        records=records,
        params=dict(metric.params),
    )


@numba.njit(parallel=True, nogil=True, cache=True)
def _log_sum_exp_rows(
    cross: FloatArray, q_norms: FloatArray, p_norms: FloatArray, out: FloatArray
) -> None:  # pragma: no cover - compiled
    """``out[i] = log Σ_j exp(-|z_i - p_j|² / 2)`` from ``cross = Z P^T`` and the norms."""
    n, m = cross.shape
    for i in numba.prange(n):
        # one pass, rescaling the running sum whenever a larger exponent appears
        top = -np.inf
        acc = 0.0
        for j in range(m):
            e = -0.5 * max(q_norms[i] + p_norms[j] - 2.0 * cross[i, j], 0.0)
            if e > top:
                acc = acc * math.exp(top - e) + 1.0
                top = e
            else:
                acc += math.exp(e - top)
        out[i] = top + math.log(acc)


class _KDE:
    """Gaussian KDE with Scott's bandwidth (``scipy.stats.gaussian_kde``), fast and guarded.

    **Singular covariance guard.** The data are projected on the principal directions
    of non-negligible variance (eigenvalues above ``1e-10`` of the largest) of the
    fitted points, so one-hot, constant or collinear columns never make the covariance
    singular; ``dropped`` counts the directions left out.

    **The same density as scipy, faster.** On the kept directions the covariance is
    diagonal, so the kernel whitens each direction by ``sqrt(eigenvalue) * factor``
    (Scott's ``factor = n ** (-1 / (d + 4))``) and the log density of a point ``x`` is
    ``log Σ_j exp(-|z - p_j|² / 2) - log n - d/2 log 2π - Σ log(scale)``. The squared
    distances come from one BLAS product per block (``|z|² + |p|² - 2 z·p``, float64:
    the absolute error of an exponent is about ``1e-16 (|z|² + |p|²)``, 1e-13 on
    typical points), and the log-sum-exp runs on all cores. scipy's ``logpdf`` loops
    over fitted × evaluated points × dimensions without BLAS; this is the same number
    (to about 1e-12 relative, checked in the tests) at a fraction of the cost.
    """

    def __init__(self, data: FloatArray) -> None:
        self.mean = data.mean(axis=0)
        centred = data - self.mean
        cov = np.atleast_2d(np.cov(centred, rowvar=False))
        values, vectors = linalg.eigh(cov)
        keep = values > 1e-10 * max(float(values.max(initial=0.0)), 1e-300)
        self.basis = vectors[:, keep]
        self.dropped = int((~keep).sum())
        n, d = data.shape[0], int(keep.sum())
        if d == 0 or n <= d:
            msg = "too few distinct rows to fit a density (fewer rows than independent directions)."
            raise InputError(msg)
        factor = n ** (-1.0 / (d + 4))
        self.scale = np.sqrt(values[keep]) * factor
        self.points = np.ascontiguousarray((centred @ self.basis) / self.scale)
        self.norms = np.einsum("ij,ij->i", self.points, self.points)
        self.log_norm = (
            -math.log(n)
            - 0.5 * d * math.log(2 * math.pi)
            - float(np.log(self.scale).sum())
        )

    def logpdf(
        self, points: FloatArray, working_memory: float | None = None
    ) -> FloatArray:
        """Log density at each row of ``points``."""
        z = np.ascontiguousarray(((points - self.mean) @ self.basis) / self.scale)
        q_norms = np.einsum("ij,ij->i", z, z)
        out = np.empty(z.shape[0])
        step = rows_per_block(
            8 * self.points.shape[0], working_memory=working_memory, n_rows=z.shape[0]
        )
        for start in range(0, z.shape[0], step):
            block = slice(start, min(start + step, z.shape[0]))
            cross = z[block] @ self.points.T
            _log_sum_exp_rows(cross, q_norms[block], self.norms, out[block])
        return out + self.log_norm


def _prior_logpdf(reference: FloatArray, points: FloatArray) -> FloatArray:
    """DOMIAS' prior: independent normals of the continuous features (10 or more values)."""
    continuous = np.array(
        [np.unique(reference[:, j]).size >= 10 for j in range(reference.shape[1])],
        dtype=bool,
    )
    if not continuous.any():
        return np.zeros(points.shape[0])
    mu = reference[:, continuous].mean(axis=0)
    sd = reference[:, continuous].std(axis=0)
    return np.asarray(stats.norm.logpdf(points[:, continuous], mu, sd).sum(axis=1))


@register
class DOMIAS(Metric):
    """DOMIAS: real rows where the synthetic density is high *relative to the population's* are members.

    Parameters
    ----------
    density : {"kde", "prior"}, default="kde"
        Reference density: a Gaussian KDE, or DOMIAS' "prior" (independent normals of the
        continuous features). The synthetic density is always a Gaussian KDE.
    max_fit_rows : int, default=10000
        At most this many rows (seeded samples) fit each KDE (synthetic and reference):
        the cost of a KDE grows with fitted × evaluated rows × dimensions (about 1 s
        on 2 cores for 10,000 fitted and 10,000 evaluated rows of 111 dimensions).
    """

    id = "domias"
    report_order = 206
    attack = (
        "An attacker holding the synthetic table and real people from the same population guesses that "
        "a person was in the training data where synthetic rows are denser than the population."
    )
    threat_model = ThreatModel(
        attacker_holds="the synthetic table, a target person's full record and a sample of real people from the same population (half the holdout)",
        target=MEMBERS,
        meaning=(
            "ROC AUC of telling training people from holdout people by the synthetic table's density at their record over the population's: 0.5 = a coin toss, 1 = always right"
        ),
        compared=("columns",),
    )
    higher_is_safer = False
    requires_holdout = True
    runs_by_default = False

    density: Param[str] = Param(
        option(("kde", "prior")),
        "kde",
        "Reference density: a Gaussian KDE or DOMIAS' prior.",
    )
    max_fit_rows: Param[int] = Param(
        integer(minimum=10), 10_000, "At most this many rows fit each KDE."
    )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        data = numeric_embedding(tables, ["real", "synthetic", "holdout"])
        rng = context.rng
        hold = data["holdout"]
        if hold.shape[0] < 4:
            msg = f"`domias` needs at least 4 holdout rows (half fit the reference density); got {hold.shape[0]}."
            raise InputError(msg)
        order = rng.permutation(hold.shape[0])
        ref_rows, non_rows = (
            np.sort(order[: hold.shape[0] // 2]),
            np.sort(order[hold.shape[0] // 2 :]),
        )
        n_eval = min(non_rows.size, data["real"].shape[0])
        non_rows = non_rows[:n_eval]
        member_rows = np.sort(
            rng.choice(data["real"].shape[0], size=n_eval, replace=False)
        )
        syn = data["synthetic"]
        limit = self.max_fit_rows
        if syn.shape[0] > limit:
            syn = syn[np.sort(rng.choice(syn.shape[0], size=limit, replace=False))]
        points = np.vstack([data["real"][member_rows], hold[non_rows]])
        with context.progress.task("DOMIAS densities", 2) as advance:
            kde_syn = _KDE(syn)
            log_g = kde_syn.logpdf(points, context.working_memory)
            advance(1)
            if self.density == "kde":
                fit_rows = ref_rows
                if fit_rows.size > limit:
                    fit_rows = np.sort(rng.choice(fit_rows, size=limit, replace=False))
                kde_ref = _KDE(hold[fit_rows])
                log_r = kde_ref.logpdf(points, context.working_memory)
                dropped = max(kde_syn.dropped, kde_ref.dropped)
            else:
                log_r = _prior_logpdf(hold[ref_rows], points)
                dropped = kde_syn.dropped
            advance(1)
        if dropped:
            context.warn(
                f"{dropped} direction(s) of zero variance (one-hot or collinear columns) were left out of the "
                "density fit; the densities live on the remaining directions."
            )
        score = log_g - log_r
        outcome = _summarise(
            self,
            score[:n_eval],
            score[n_eval:],
            context,
            "log density ratio log p_synthetic - log p_reference",
            member_rows,
            non_rows,
        )
        outcome.breakdown.update(
            density=self.density,
            n_reference=int(ref_rows.size),
            n_synthetic_fit=int(syn.shape[0]),
            dimensions=int(points.shape[1]),
        )
        why = (
            f"{ALL_COLUMNS}; numbers min-max scaled, categories one-hot, columns constant over the tables "
            "left out of the densities"
        )
        return with_columns(outcome, self, tables, why=why)


@register
class MonteCarloMembership(Metric):
    """Monte Carlo membership attack: real rows with many synthetic rows nearby are members.

    Parameters
    ----------
    max_neighbors : int, default=20
        Synthetic neighbours looked at per row (the count saturates there).
    distance : {"dcr", "gower", "euclidean"}, default="dcr"
        Distance between rows.
    """

    id = "monte_carlo_membership"
    report_order = 207
    attack = (
        "An attacker counts, for each real person, the synthetic rows that fall within a small distance of "
        "their record; many close rows suggest the person was in the training data."
    )
    threat_model = ThreatModel(
        attacker_holds=FULL_RECORD,
        target=MEMBERS,
        meaning=(
            "ROC AUC of telling training people from holdout people by the number of synthetic rows within a small distance of their record: 0.5 = a coin toss, 1 = always right"
        ),
        compared=("columns",),
    )
    higher_is_safer = False
    requires_holdout = True
    runs_by_default = False

    max_neighbors: Param[int] = Param(
        integer(minimum=1), 20, "Synthetic neighbours looked at per row."
    )
    distance: Param[str] = Param(option(DISTANCES), "dcr", "Distance between rows.")

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        space = Space.for_tables(tables, self.distance)
        real, hold, syn = (
            space.data(tables, n) for n in ("real", "holdout", "synthetic")
        )
        k = min(self.max_neighbors, n_rows(syn))
        # one search: real and holdout rows share most category combinations
        both = space.search(
            concat_rows(real, hold),
            syn,
            k=k,
            context=context,
            description="MC real and holdout → synthetic",
        ).distances
        d_real, d_hold = both[: n_rows(real)], both[n_rows(real) :]
        eps = float(np.median(np.r_[d_real[:, 0], d_hold[:, 0]]))
        member = (d_real <= eps).sum(axis=1).astype(np.float64)
        non_member = (d_hold <= eps).sum(axis=1).astype(np.float64)
        outcome = _summarise(
            self,
            member,
            non_member,
            context,
            "synthetic rows within eps",
            np.arange(member.size),
            np.arange(non_member.size),
        )
        outcome.breakdown.update(
            epsilon_distance=eps, max_neighbors=k, distance=self.distance
        )
        if float(np.mean(np.r_[member, non_member] >= k)) > 0.05:
            context.warn(
                f"more than 5% of the rows have all {k} inspected synthetic neighbours within eps; raise "
                "`max_neighbors` for a finer count."
            )
        return with_columns(outcome, self, tables)


@register
class CollisionMembership(Metric):
    """Collision attack: real rows that occur verbatim in the synthetic table are members."""

    id = "collision_membership"
    report_order = 208
    attack = (
        "An attacker guesses that a real person was in the training data when their exact record "
        "occurs in the synthetic table."
    )
    threat_model = ThreatModel(
        attacker_holds=FULL_RECORD,
        target=MEMBERS,
        meaning=(
            "ROC AUC of telling training people from holdout people by the number of synthetic rows identical to their record: 0.5 = a coin toss, 1 = always right"
        ),
        compared=("columns",),
    )
    higher_is_safer = False
    requires_holdout = True
    runs_by_default = False

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        columns = [spec.name for spec in tables.schema.modelable]
        codes, n_codes = combination_codes(
            tables, columns, ["real", "synthetic", "holdout"]
        )
        counts = np.bincount(codes["synthetic"], minlength=n_codes).astype(np.float64)
        member, non_member = counts[codes["real"]], counts[codes["holdout"]]
        outcome = _summarise(
            self,
            member,
            non_member,
            context,
            "number of identical synthetic rows",
            np.arange(member.size),
            np.arange(non_member.size),
        )
        outcome.breakdown.update(
            real_share_with_collision=float(np.mean(member > 0))
            if member.size
            else None,
            holdout_share_with_collision=float(np.mean(non_member > 0))
            if non_member.size
            else None,
        )
        return with_columns(outcome, self, tables)
