# SPDX-License-Identifier: BSD-3-Clause
"""Membership attacks on the shadow outputs: five no-box scores and a set classifier.

For each shadow run the audit has the generator's output; each attack gives every
target a score, higher meaning "the target was in this run's training set":

* ``dcr``: minus the distance from the target to its closest synthetic row (the
  distance of the DCR metrics; Chen et al. 2020, "GAN-Leaks", CCS; the DCR attack of
  Ward et al. 2025, "Synth-MIA", arXiv 2509.18014);
* ``dcr_diff``: the distance from the target to its closest auxiliary (reference) row
  minus its distance to the closest synthetic row (DCR-Diff: Chen et al. 2020; Ward et
  al. 2025, "Synth-MIA"); per target a fixed shift of ``dcr``, so its per-target
  results are those of ``dcr``, but it is pooled over the targets on its own scale
  (the reference distance calibrates the targets against each other) rather than by
  ranks;
* ``knn``: the synthetic rows within the target's isolation radius, its distance to
  the nearest other real person (Meeus et al. 2023, "Achilles' heels", arXiv
  2306.10308, for the radius);
* ``density``: the log ratio of a kernel density of the synthetic rows to the same
  density of the auxiliary pool at the target, with the isolation radius as width
  (DOMIAS: van Breugel et al. 2023, "Membership inference attacks against synthetic
  data through overfitting detection", AISTATS);
* ``gen_lra``: the generative likelihood ratio attack (Gen-LRA: Ward et al. 2025, as
  implemented in their Synth-MIA library, arXiv 2509.18014): the change in log-likelihood of the target's
  ``k`` nearest synthetic rows under a kernel density of the auxiliary rows when the
  target is added to them; the kernel is that of ``density`` (width = the target's
  isolation radius);
* ``classifier``: a Groundhog set classifier (Stadler, Oprisanu & Troncoso 2022,
  "Synthetic data — anonymisation groundhog day", USENIX Security; TAPAS: Houssiau et
  al. 2022, arXiv 2211.06550): naive (per-column mean, standard deviation and
  quantiles), histogram and correlation features of each shadow output, and one
  classifier per target trained on the selection runs only.
"""

from __future__ import annotations

import dataclasses
from typing import Literal, TypeAlias

import numpy as np

from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors import distance_matrix, nearest_neighbors
from synthrisk.schema.encoding import EncodedTable

__all__ = [
    "ATTACKS",
    "CLASSIFIERS",
    "AttackName",
    "ClassifierName",
    "FeatureSpace",
    "Reference",
    "classifier_scores",
    "no_box_scores",
]

AttackName: TypeAlias = Literal[
    "dcr", "dcr_diff", "knn", "density", "gen_lra", "classifier"
]
ClassifierName: TypeAlias = Literal["ridge", "logistic", "boosting"]
#: the attacks, in the order of the result
ATTACKS: tuple[AttackName, ...] = (
    "dcr",
    "dcr_diff",
    "knn",
    "density",
    "gen_lra",
    "classifier",
)
#: attacks pooled over the targets by their own scores, not by per-target ranks
RAW_POOLED: frozenset[str] = frozenset({"dcr_diff"})
CLASSIFIERS: tuple[ClassifierName, ...] = ("ridge", "logistic", "boosting")

#: a synthetic category unknown to the encoding: unequal to every code and to missing (-1)
UNKNOWN_CODE = -2
#: the density kernel's smallest width (distances of the DCR metrics lie in [0, 1])
MIN_WIDTH = 0.01
#: histogram bins per numeric column, categories kept per categorical column
N_BINS = 10
N_CATEGORIES = 20
_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
#: synthetic neighbours of the target whose likelihood ``gen_lra`` compares (Synth-MIA's default)
GEN_LRA_NEIGHBOURS = 5


@dataclasses.dataclass(frozen=True)
class Reference:
    """What the no-box attacks know of the auxiliary sample, computed once per audit.

    Attributes
    ----------
    table : EncodedTable
        The auxiliary rows (``gen_lra``'s density).
    density : ndarray of shape (n_targets,)
        The auxiliary rows' kernel density at each target (:func:`kernel_density`).
    dcr : ndarray of shape (n_targets,)
        Each target's distance to its closest auxiliary row (``dcr_diff``).
    """

    table: EncodedTable
    density: FloatArray
    dcr: FloatArray


def no_box_scores(
    targets: EncodedTable,
    synthetic: EncodedTable,
    *,
    scale: FloatArray,
    radius: FloatArray,
    reference: Reference,
    attacks: frozenset[str] | None = None,
) -> dict[AttackName, FloatArray]:
    """The no-box scores (``dcr``, ``dcr_diff``, ``knn``, ``density``, ``gen_lra``) against one output.

    Parameters
    ----------
    targets : EncodedTable of n_targets rows
    synthetic : EncodedTable
        One shadow output, encoded like the targets.
    scale : ndarray of shape (n_numeric,)
        Column ranges of the real population (the units of the distance).
    radius : ndarray of shape (n_targets,)
        Each target's isolation: the ``knn`` radius and the kernels' width.
    reference : Reference
        The auxiliary sample's rows, density at and distance to each target.
    attacks : set of str, default=None
        The scores wanted; None: all five.

    Returns
    -------
    dict
        Attack name -> scores of shape (n_targets,), higher = member.
    """
    wanted = NO_BOX if attacks is None else attacks
    d, idx = _sorted_neighbours(targets, synthetic, scale=scale)
    width = np.maximum(radius, MIN_WIDTH)
    kernel = np.exp(-d / width[:, None])
    tiny = 1e-300
    out: dict[AttackName, FloatArray] = {}
    if "dcr" in wanted:
        out["dcr"] = -d[:, 0]
    if "dcr_diff" in wanted:
        out["dcr_diff"] = reference.dcr - d[:, 0]
    if "knn" in wanted:
        out["knn"] = (d <= radius[:, None] + 1e-12).sum(axis=1).astype(np.float64)
    if "density" in wanted:
        out["density"] = np.log(kernel.mean(axis=1) + tiny) - np.log(
            reference.density + tiny
        )
    if "gen_lra" in wanted:
        out["gen_lra"] = _gen_lra(
            synthetic, idx, kernel, width, scale=scale, reference=reference.table
        )
    return out


#: the attacks :func:`no_box_scores` computes
NO_BOX: frozenset[str] = frozenset({"dcr", "dcr_diff", "knn", "density", "gen_lra"})


def _gen_lra(
    synthetic: EncodedTable,
    idx: IntArray,
    kernel: FloatArray,
    width: FloatArray,
    *,
    scale: FloatArray,
    reference: EncodedTable,
) -> FloatArray:
    """Gen-LRA: log-likelihood gain of each target's nearest synthetic rows when it joins the reference.

    With the kernel density ``p0(s) = mean_y K(s, y)`` of the ``N`` reference rows,
    adding the target ``x`` gives ``p1(s) = (N p0(s) + K(s, x)) / (N + 1)``; the score
    is ``sum over the k nearest synthetic rows s of log p1(s) - log p0(s)``: large when
    the synthetic rows near the target are where the population is thin.
    """
    n_targets = idx.shape[0]
    k = min(GEN_LRA_NEIGHBOURS, idx.shape[1])
    n_ref = reference.n_rows
    if k == 0 or n_ref == 0:
        return np.zeros(n_targets)
    near = synthetic.take(idx[:, :k].reshape(-1))
    d_ref = all_distances(near, reference, scale=scale).reshape(n_targets, k, n_ref)
    p0 = np.exp(-d_ref / width[:, None, None]).mean(axis=2)
    p1 = (n_ref * p0 + kernel[:, :k]) / (n_ref + 1)
    tiny = 1e-300
    return np.asarray(
        (np.log(p1 + tiny) - np.log(p0 + tiny)).sum(axis=1), dtype=np.float64
    )


def _sorted_neighbours(
    query: EncodedTable, reference: EncodedTable, *, scale: FloatArray
) -> tuple[FloatArray, IntArray]:
    """Distances and indices of every reference row from each query row, nearest first."""
    nn = nearest_neighbors(
        query,
        reference,
        k=reference.n_rows,
        distance="dcr",
        scale=scale,
        backend="numpy",
    )
    return nn.distances, nn.indices


def all_distances(
    query: EncodedTable, reference: EncodedTable, *, scale: FloatArray
) -> FloatArray:
    """Distances (DCR metrics' distance) from each query row to every reference row (unsorted)."""
    return distance_matrix(query, reference, distance="dcr", scale=scale)


def kernel_density(
    targets: EncodedTable,
    reference: EncodedTable,
    *,
    scale: FloatArray,
    radius: FloatArray,
) -> FloatArray:
    """Mean of ``exp(-d / width)`` over ``reference`` at each target (width = radius, at least 0.01)."""
    d = all_distances(targets, reference, scale=scale)
    width = np.maximum(radius, MIN_WIDTH)
    return np.exp(-d / width[:, None]).mean(axis=1)


@dataclasses.dataclass(frozen=True)
class FeatureSpace:
    """Fixed bins and categories of the Groundhog features, taken from the real population.

    Attributes
    ----------
    low, scale : ndarray of shape (n_numeric,)
        Numeric columns are mapped to ``(x - low) / scale`` (range 0 mapped by 1).
    categories : tuple of ndarray
        Per categorical column, the codes whose shares are features (the most
        frequent in the population, at most 20).
    """

    low: FloatArray
    scale: FloatArray
    categories: tuple[IntArray, ...]

    @classmethod
    def fit(cls, population: EncodedTable) -> FeatureSpace:
        """Bins and categories of ``population`` (the real and auxiliary rows)."""
        num = population.numeric
        if num.shape[1]:
            low = (
                np.nan_to_num(np.nanmin(num, axis=0))
                if num.shape[0]
                else np.zeros(num.shape[1])
            )
            high = (
                np.nan_to_num(np.nanmax(num, axis=0))
                if num.shape[0]
                else np.ones(num.shape[1])
            )
            scale = np.where(high - low > 0, high - low, 1.0)
        else:
            low = scale = np.zeros(0)
        cats = []
        for j in range(population.codes.shape[1]):
            codes, counts = np.unique(population.codes[:, j], return_counts=True)
            keep = codes[np.argsort(-counts, kind="stable")][:N_CATEGORIES]
            cats.append(np.sort(keep).astype(np.int64))
        return cls(
            low=low.astype(np.float64),
            scale=scale.astype(np.float64),
            categories=tuple(cats),
        )

    def features(self, table: EncodedTable) -> FloatArray:
        """Naive, histogram and correlation features of one table, shape (n_features,)."""
        x = (table.numeric - self.low) / self.scale
        parts: list[FloatArray] = []
        if x.shape[1]:
            missing = np.isnan(x)
            present = np.maximum((~missing).sum(axis=0), 1)
            column_mean = np.where(missing, 0.0, x).sum(axis=0) / present
            filled = np.where(missing, column_mean[None, :], x)
            # naive: mean, standard deviation, quantiles, missing share
            parts += [
                filled.mean(axis=0),
                filled.std(axis=0),
                np.quantile(filled, _QUANTILES, axis=0).ravel(),
                missing.mean(axis=0),
            ]
            # histogram: fixed bins of the population's range
            bins = np.clip((filled * N_BINS).astype(np.int64), 0, N_BINS - 1)
            for j in range(bins.shape[1]):
                parts.append(np.bincount(bins[:, j], minlength=N_BINS) / bins.shape[0])
        ranked = np.empty((table.n_rows, len(self.categories)))
        for j, keep in enumerate(self.categories):
            codes = table.codes[:, j]
            shares = (codes[:, None] == keep[None, :]).mean(axis=0)
            parts.append(shares)
            # ordinal stand-in for the correlation block: the category's position in `keep`
            position = np.searchsorted(keep, codes)
            ranked[:, j] = np.where(
                (position < keep.size)
                & (keep[np.minimum(position, keep.size - 1)] == codes),
                position,
                keep.size,
            )
        block = np.column_stack([filled, ranked]) if x.shape[1] else ranked
        if block.shape[1] > 1:
            with np.errstate(invalid="ignore", divide="ignore"):
                corr = np.corrcoef(block, rowvar=False)
            upper = corr[np.triu_indices(block.shape[1], k=1)]
            parts.append(np.nan_to_num(upper))
        return np.concatenate(parts).astype(np.float64) if parts else np.zeros(0)


def _model(classifier: ClassifierName, seed: int) -> object:
    if classifier == "boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=100, random_state=seed)
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=500))


def _fit_score(
    classifier: ClassifierName,
    seed: int,
    x_fit: FloatArray,
    y_fit: np.ndarray,
    x_score: FloatArray,
) -> FloatArray:
    """Probability of membership of ``x_score`` from a model fitted on ``x_fit``; 0.5 when one class is absent."""
    if x_score.shape[0] == 0:
        return np.zeros(0)
    if np.unique(y_fit).size < 2:
        return np.full(x_score.shape[0], 0.5)
    from threadpoolctl import threadpool_limits

    model = _model(classifier, seed)
    # small fits: one thread each (boosting's OpenMP threads cost more than they give)
    with threadpool_limits(limits=1):
        model.fit(x_fit, y_fit)  # type: ignore[attr-defined]
        proba = model.predict_proba(x_score)  # type: ignore[attr-defined]
    return np.asarray(proba[:, 1], dtype=np.float64)


def _ridge_scores(
    x_fit: FloatArray, y_fit: np.ndarray, x_score: FloatArray, alpha: float
) -> FloatArray:
    """Ridge regression of every target's ±1 labels at once (one factorisation), then the scores."""
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if x_score.shape[0] == 0 or x_fit.shape[0] < 2:
        return np.zeros((x_score.shape[0], y_fit.shape[1]))
    model = make_pipeline(StandardScaler(), Ridge(alpha=alpha))
    model.fit(x_fit, 2.0 * y_fit - 1.0)
    out = np.asarray(model.predict(x_score), dtype=np.float64)
    return out.reshape(x_score.shape[0], y_fit.shape[1])


def classifier_scores(
    features: FloatArray,
    included: np.ndarray,
    selection: np.ndarray,
    *,
    classifier: ClassifierName = "ridge",
    n_folds: int = 5,
    seed: int = 0,
) -> FloatArray:
    """Cross-fitted set-classifier scores of every run and target.

    Parameters
    ----------
    features : ndarray of shape (n_runs, n_features)
        Groundhog features of each run's output.
    included : ndarray of shape (n_runs, n_targets), bool
        Whether each target was in each run's training set.
    selection : ndarray of shape (n_runs,), bool
        The selection runs. Each selection run is scored by a model trained on the other
        selection runs (``n_folds`` folds, by run position); each evaluation run by a
        model trained on all selection runs. No evaluation run's membership is ever
        seen by a model, so the evaluation scores are independent given the selection.
    classifier : {"ridge", "logistic", "boosting"}, default="ridge"
        ``"ridge"``: a ridge classifier on standardised features (scikit-learn's
        ``Ridge`` on ±1 labels, all targets in one fit, penalty equal to the number of
        features); ``"logistic"``: logistic regression per target; ``"boosting"``:
        histogram gradient boosting per target (slowest).

    Returns
    -------
    ndarray of shape (n_runs, n_targets)
    """
    n_runs, n_targets = included.shape
    scores = np.zeros((n_runs, n_targets))
    sel = np.flatnonzero(selection)
    ev = np.flatnonzero(~selection)
    fold = np.arange(sel.size) % max(1, min(n_folds, sel.size))
    x = np.nan_to_num(features)
    y = included.astype(np.float64)
    if classifier == "ridge":
        alpha = float(max(x.shape[1], 1))
        scores[ev] = _ridge_scores(x[sel], y[sel], x[ev], alpha)
        for k in np.unique(fold):
            fit, score = sel[fold != k], sel[fold == k]
            scores[score] = _ridge_scores(x[fit], y[fit], x[score], alpha)
        return scores
    for t in range(n_targets):
        labels = included[:, t].astype(np.int64)
        scores[ev, t] = _fit_score(classifier, seed, x[sel], labels[sel], x[ev])
        for k in np.unique(fold):
            fit, score = sel[fold != k], sel[fold == k]
            if fit.size:
                scores[score, t] = _fit_score(
                    classifier, seed, x[fit], labels[fit], x[score]
                )
    return scores
