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
  sampled as members. ``density="kde"``: Gaussian KDEs for both densities (scipy's
  ``gaussian_kde``, as the DOMIAS code); ``density="prior"``: the reference density is
  the product of normal densities of the continuous features (10 or more distinct
  values), as DOMIAS' ``normal_func_feat``.
* :class:`MonteCarloMembership` — Hilprecht, Härterich & Bernau (2019), "Monte Carlo and
  reconstruction membership inference attacks against generative models": the score is
  the number of synthetic rows within distance ``ε`` of the row, ``ε`` the median
  distance of all attacked rows to their nearest synthetic row.
* :class:`CollisionMembership` — the collision attack: the score is the number of
  synthetic rows equal to the row in every column.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, stats

from synthrisk._typing import FloatArray, JSONValue
from synthrisk._validation import check_int, check_option
from synthrisk.exceptions import InputError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics.disclosure._classes import combination_codes
from synthrisk.metrics.membership._space import DISTANCES, Space, n_rows
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.mia import attack_summary, auc_control
from synthrisk.stats.ranking import ranking_scores, thin_curve

__all__ = ["DOMIAS", "CollisionMembership", "MonteCarloMembership", "numeric_embedding"]


def numeric_embedding(tables: Tables, names: list[str]) -> dict[str, FloatArray]:
    """Numbers min-max scaled over the real and holdout rows (missing → the column's mean),
    categories one-hot (missing is a category of its own)."""
    encoded = {name: tables.encoded(name) for name in names}
    ref = np.vstack([encoded[n].numeric for n in names if n != "synthetic"])
    lo = np.nanmin(ref, axis=0) if ref.shape[1] else np.zeros(0)
    span = (np.nanmax(ref, axis=0) - lo) if ref.shape[1] else np.zeros(0)
    span = np.where((span == 0) | np.isnan(span), 1.0, span)
    mean = np.nanmean((ref - lo) / span, axis=0) if ref.shape[1] else np.zeros(0)
    levels = max((int(encoded[n].codes.max(initial=-1)) for n in names), default=-1) + 2
    out = {}
    for name in names:
        table = encoded[name]
        num = (table.numeric - lo) / span
        num = np.where(np.isnan(num), mean, num)
        n_rows_, n_cat = table.codes.shape
        onehot = np.zeros((n_rows_, n_cat * levels))
        for c in range(n_cat):
            onehot[np.arange(n_rows_), c * levels + table.codes[:, c] + 1] = 1.0
        block = np.hstack([num, onehot])
        out[name] = block
    keep = np.concatenate([out[n] for n in names]).std(axis=0) > 0
    return {name: np.ascontiguousarray(block[:, keep]) for name, block in out.items()}


def _summarise(
    metric: Metric,
    member: FloatArray,
    non_member: FloatArray,
    context: Context,
    what: str,
    member_rows: np.ndarray,
    non_member_rows: np.ndarray,
) -> Outcome:
    scores = ranking_scores(member, non_member)
    fpr, tpr = thin_curve(scores.fpr, scores.tpr)
    breakdown: dict[str, JSONValue] = {
        "roc_auc_score": scores.roc_auc,
        "average_precision_score": scores.average_precision,
        "average_precision_baseline": scores.average_precision_baseline,
        **attack_summary(
            member, non_member, seed=int(context.rng.integers(0, 2**31 - 1))
        ),
        "n_members": int(member.size),
        "n_non_members": int(non_member.size),
        "roc_curve": {"fpr": fpr, "tpr": tpr},
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


class _KDE:
    """``scipy.stats.gaussian_kde`` with a guard against singular covariance.

    The data are projected on the principal directions of non-negligible variance
    (eigenvalues above ``1e-10`` of the largest) of the fitted points, so one-hot
    columns, constant or collinear columns never make the covariance singular.
    """

    def __init__(self, data: FloatArray) -> None:
        self.mean = data.mean(axis=0)
        centred = data - self.mean
        cov = np.atleast_2d(np.cov(centred, rowvar=False))
        values, vectors = linalg.eigh(cov)
        keep = values > 1e-10 * max(float(values.max(initial=0.0)), 1e-300)
        self.basis = vectors[:, keep]
        self.dropped = int((~keep).sum())
        projected = centred @ self.basis
        if projected.shape[1] == 0 or projected.shape[0] <= projected.shape[1]:
            msg = "too few distinct rows to fit a density (fewer rows than independent directions)."
            raise InputError(msg)
        self.kde = stats.gaussian_kde(projected.T)

    def logpdf(self, points: FloatArray) -> FloatArray:
        return np.asarray(self.kde.logpdf(((points - self.mean) @ self.basis).T))


def _prior_logpdf(reference: FloatArray, points: FloatArray) -> FloatArray:
    continuous = np.array(
        [np.unique(reference[:, j]).size >= 3 for j in range(reference.shape[1])],
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
    max_fit_rows : int, default=2000
        At most this many rows (seeded samples) fit each KDE (synthetic and reference):
        the cost of a KDE grows with fitted × evaluated rows × dimensions.
    """

    id = "domias"
    report_order = 206
    attack = (
        "An attacker holding the synthetic table and real people from the same population guesses that "
        "a person was in the training data where synthetic rows are denser than the population."
    )
    higher_is_safer = False
    requires_holdout = True
    runs_by_default = False

    def __init__(self, *, density: str = "kde", max_fit_rows: int = 2000) -> None:
        density = check_option(density, name="density", allowed=("kde", "prior"))
        rows = check_int(max_fit_rows, name="max_fit_rows", minimum=10)
        self._set_params(density=density, max_fit_rows=rows)

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
        limit = int(self.params["max_fit_rows"])
        if syn.shape[0] > limit:
            syn = syn[np.sort(rng.choice(syn.shape[0], size=limit, replace=False))]
        points = np.vstack([data["real"][member_rows], hold[non_rows]])
        with context.progress.task("DOMIAS densities", 2) as advance:
            kde_syn = _KDE(syn)
            log_g = kde_syn.logpdf(points)
            advance(1)
            if self.params["density"] == "kde":
                fit_rows = ref_rows
                if fit_rows.size > limit:
                    fit_rows = np.sort(rng.choice(fit_rows, size=limit, replace=False))
                kde_ref = _KDE(hold[fit_rows])
                log_r = kde_ref.logpdf(points)
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
            density=self.params["density"],
            n_reference=int(ref_rows.size),
            n_synthetic_fit=int(syn.shape[0]),
            dimensions=int(points.shape[1]),
        )
        return outcome


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
    higher_is_safer = False
    requires_holdout = True
    runs_by_default = False

    def __init__(self, *, max_neighbors: int = 20, distance: str = "dcr") -> None:
        k = check_int(max_neighbors, name="max_neighbors", minimum=1)
        check_option(distance, name="distance", allowed=DISTANCES)
        self._set_params(max_neighbors=k, distance=distance)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        space = Space.for_tables(tables, str(self.params["distance"]))
        real, hold, syn = (
            space.data(tables, n) for n in ("real", "holdout", "synthetic")
        )
        k = min(int(self.params["max_neighbors"]), n_rows(syn))
        d_real = space.search(
            real, syn, k=k, context=context, description="MC real → synthetic"
        ).distances
        d_hold = space.search(
            hold, syn, k=k, context=context, description="MC holdout → synthetic"
        ).distances
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
            epsilon_distance=eps, max_neighbors=k, distance=self.params["distance"]
        )
        if float(np.mean(np.r_[member, non_member] >= k)) > 0.05:
            context.warn(
                f"more than 5% of the rows have all {k} inspected synthetic neighbours within eps; raise "
                "`max_neighbors` for a finer count."
            )
        return outcome


@register
class CollisionMembership(Metric):
    """Collision attack: real rows that occur verbatim in the synthetic table are members."""

    id = "collision_membership"
    report_order = 208
    attack = (
        "An attacker guesses that a real person was in the training data when their exact record "
        "occurs in the synthetic table."
    )
    higher_is_safer = False
    requires_holdout = True
    runs_by_default = False

    def __init__(self) -> None:
        self._set_params()

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
        return outcome
