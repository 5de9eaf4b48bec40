# SPDX-License-Identifier: BSD-3-Clause
"""Membership by classification: can a classifier tell synthetic rows from training rows more easily than from unseen rows?

IBM ai-privacy-toolkit 0.2.1's third dataset attack
(``DatasetAttackMembershipClassification``), with scikit-learn classifiers (the
``ml`` extra). Two classifiers are trained, each on half of its rows: real vs
synthetic and holdout vs synthetic; each is scored by ROC AUC on the other half.

A generator that reproduces its training rows makes synthetic rows *harder* to tell
from the real (training) rows than from the holdout, so the risk is
``AUC_holdout / AUC_real - 1`` when positive. APT computes the reverse ratio
``AUC_real / AUC_holdout - 1``, which is 0 exactly when memorisation shows; it stays
in the breakdown as ``normalized_ratio`` and is the score with ``mode="apt"``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from synthrisk._optional import import_optional
from synthrisk._typing import JSONValue
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, integer, number, option
from synthrisk.metrics._threat import AUDIT, TRAINING, ThreatModel
from synthrisk.metrics.membership._space import MODES, numeric_matrix
from synthrisk.neighbors import column_ranges
from synthrisk.schema.encoding import MAX_ONE_HOT_LEVELS, frequent_levels
from synthrisk.schema.tables import Tables
from synthrisk.stats.ranking import roc_auc

__all__ = [
    "CLASSIFIERS",
    "SOLVERS",
    "MembershipClassification",
    "make_classifier",
    "memorisation_auc_ratio",
    "normalized_auc_ratio",
    "one_hot_design",
]

CLASSIFIERS = ("logistic_regression", "random_forest")
#: solvers of the default mode's logistic regression (the same loss, the same optimum)
SOLVERS = ("newton-cholesky", "lbfgs")
#: categories beyond this many (most frequent first) share one "other" column


def make_classifier(
    kind: str, *, random_state: int, apt: bool = False, solver: str = "newton-cholesky"
) -> Any:
    """A scikit-learn classifier as APT builds it (logistic regression or a depth-2 forest).

    ``apt=True`` keeps scikit-learn's defaults for logistic regression (L-BFGS, 100
    iterations) exactly as APT does. Otherwise the same L2-penalised logistic
    regression is fitted by ``solver``: ``"newton-cholesky"`` (a few Newton steps,
    fast on tens of thousands of rows and a few hundred one-hot columns) or
    ``"lbfgs"`` with up to 1000 iterations; both minimise the same convex loss, so
    they agree up to the solvers' tolerance.
    """
    import_optional("sklearn", package="scikit-learn")
    if kind == "logistic_regression":
        from sklearn.linear_model import LogisticRegression

        if apt:
            return LogisticRegression()
        return LogisticRegression(solver=solver, max_iter=1000)
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(max_depth=2, random_state=random_state)


def normalized_auc_ratio(member_auc: float, non_member_auc: float) -> float:
    """APT's score: ``member_auc / non_member_auc - 1`` when ``0 < non_member_auc <= member_auc``, else 0."""
    if 0 < non_member_auc <= member_auc:
        return member_auc / non_member_auc - 1.0
    return 0.0


def memorisation_auc_ratio(member_auc: float, non_member_auc: float) -> float:
    """synthrisk's score: ``non_member_auc / member_auc - 1`` when ``0 < member_auc <= non_member_auc``, else 0.

    Positive when synthetic rows are harder to tell from the training rows than from
    unseen rows, which is what memorisation does.
    """
    if 0 < member_auc <= non_member_auc:
        return non_member_auc / member_auc - 1.0
    return 0.0


def one_hot_design(tables: Tables, names: tuple[str, ...]) -> list[np.ndarray]:
    """Mixed-type tables as classifier features, one matrix per table name.

    Numeric and datetime columns are min-max scaled with the ranges of all the given
    tables together (a missing value becomes 0 plus a 0/1 "missing" column);
    categorical and boolean columns are one-hot encoded (missing is its own level;
    at most ``MAX_ONE_HOT_LEVELS`` levels, the rarest share an "other" column).
    """
    encoded = [tables.encoded(name) for name in names]
    numeric_all = np.vstack([e.numeric for e in encoded])
    lows = np.nanmin(numeric_all, axis=0) if numeric_all.shape[1] else np.zeros(0)
    ranges = column_ranges(numeric_all)
    ranges = np.where((ranges == 0) | np.isnan(ranges), 1.0, ranges)
    any_missing = np.isnan(numeric_all).any(axis=0)
    n_numeric = numeric_all.shape[1] + int(any_missing.sum())
    # each categorical column's one-hot position of every code (codes are -1 for a
    # missing value, then 0, 1, ...): levels by decreasing count, ascending code on
    # ties, at most MAX_ONE_HOT_LEVELS of them, then one "other" column for the rest
    positions = []
    width = n_numeric
    n_cat = encoded[0].codes.shape[1] if encoded else 0
    for c in range(n_cat):
        size = max(
            (int(e.codes[:, c].max()) + 2 for e in encoded if e.n_rows), default=0
        )
        counts = np.zeros(size, dtype=np.int64)
        for e in encoded:
            counts += np.bincount(e.codes[:, c] + 1, minlength=size)
        present = np.flatnonzero(counts)
        levels = frequent_levels(counts, MAX_ONE_HOT_LEVELS)
        position = np.full(counts.size, levels.size, dtype=np.int64)
        position[levels] = np.arange(levels.size)
        positions.append(position + width)
        width += levels.size + (1 if levels.size < present.size else 0)
    out = []
    for e in encoded:
        design = np.zeros((e.n_rows, width))
        if e.numeric.shape[1]:
            scaled = (e.numeric - lows) / ranges
            missing = np.isnan(scaled)
            design[:, : e.numeric.shape[1]] = np.where(missing, 0.0, scaled)
            design[:, e.numeric.shape[1] : n_numeric] = missing[:, any_missing]
        rows = np.arange(e.n_rows)
        for c, position in enumerate(positions):
            design[rows, position[e.codes[:, c] + 1]] = 1.0
        out.append(design)
    return out


def _fit_score(
    classifier: Any,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    context: Context,
) -> tuple[float, float]:
    """Fit, then (ROC AUC, accuracy) on the test part; solver warnings become result warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        classifier.fit(x_train, y_train)
    for w in caught:
        context.warn(f"{type(classifier).__name__}: {w.message}")
    proba = classifier.predict_proba(x_test)[:, 1]
    accuracy = float(classifier.score(x_test, y_test))
    return roc_auc(y_test, proba), accuracy


@register
class MembershipClassification(Metric):
    """Distinguishability of synthetic rows from training rows vs from holdout rows (APT).

    A classifier is trained to tell real (training) rows from synthetic rows, another
    to tell holdout rows from synthetic rows, each on a 50/50 split; their test ROC
    AUCs are ``member_roc_auc_score`` and ``non_member_roc_auc_score``. The score is
    APT's ``normalized_ratio = AUC_real / AUC_holdout - 1`` (0 when the holdout is at
    least as distinguishable): 0 is ideal, higher is riskier. Either AUC at or above
    ``threshold`` raises the synthetic-data-quality warning (the synthetic rows are
    easy to tell apart, so the ratio says little).

    Parameters
    ----------
    classifier : {"logistic_regression", "random_forest"}, default="logistic_regression"
        Logistic regression (what APT's manager runs) or APT's depth-2 random forest.
    threshold : float, default=0.9
        AUC from which the quality warning is raised.
    mode : {"default", "apt"}, default="default"
        ``"apt"`` reproduces APT: pre-encoded numeric columns as they are, each table
        split with ``random_state=42`` at its own size, scikit-learn defaults. The
        default encodes mixed types (min-max, one-hot), compares real and holdout at
        equal size with the same synthetic rows, and seeds every split.
    n_repeats : int, default=1
        Seeded repetitions (new samples and splits) whose AUCs are averaged; default
        mode only.
    solver : {"newton-cholesky", "lbfgs"}, default="newton-cholesky"
        How the default mode fits its logistic regression: Newton steps with a
        Cholesky solve (fast on the one-hot design), or L-BFGS with up to 1000
        iterations (synthrisk's earlier default). Both minimise the same loss, so
        the AUCs agree up to the solvers' tolerance. ``mode="apt"`` keeps APT's
        L-BFGS.
    """

    id = "membership_classification"
    report_order = 170
    attack = (
        "If synthetic rows are harder to tell from the training rows than from unseen real rows, the "
        "generator reproduced its training data rather than the population."
    )
    threat_model = ThreatModel(
        attacker_holds=AUDIT,
        target=TRAINING,
        meaning=(
            "how much harder synthetic rows are to tell from training rows than from holdout rows (a classifier's AUC against the holdout ÷ its AUC against the training rows − 1, when positive): 0 = no memorisation"
        ),
    )
    higher_is_safer = False
    requires_holdout = True

    classifier: Param[str] = Param(
        option(CLASSIFIERS), "logistic_regression", "The attacker's classifier."
    )
    threshold: Param[float] = Param(
        number(gt=0, le=1), 0.9, "AUC from which the quality warning is raised."
    )
    mode: Param[str] = Param(option(MODES), "default", "'apt' reproduces APT.")
    n_repeats: Param[int] = Param(
        integer(minimum=1), 1, "Seeded repetitions whose AUCs are averaged."
    )
    solver: Param[str] = Param(
        option(SOLVERS),
        "newton-cholesky",
        "How the default mode fits its logistic regression (the same loss either way).",
    )

    def _check_params(self) -> None:
        if self.mode == "apt" and self.n_repeats != 1:
            msg = f"`n_repeats` must be 1 with `mode='apt'` (APT splits once, with random_state=42); got {self.n_repeats}."
            raise ParameterError(msg)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        import_optional("sklearn", package="scikit-learn")
        holdout = tables.table("holdout")
        sizes = {
            "real": len(tables.real),
            "holdout": len(holdout),
            "synthetic": len(tables.synthetic),
        }
        small = {name: n for name, n in sizes.items() if n < 2}
        if small:
            msg = (
                f"metric {self.id!r} trains and tests a classifier on halves of each table and "
                f"needs at least 2 rows in each; got {small}."
            )
            raise InputError(msg)
        if self.mode == "apt":
            member, non_member, acc, sizes = self._apt(tables, context)
        else:
            member, non_member, acc, sizes = self._default(tables, context)
        apt_ratio = normalized_auc_ratio(member, non_member)
        memo_ratio = memorisation_auc_ratio(member, non_member)
        threshold = self.threshold
        quality_warning = bool(member >= threshold or non_member >= threshold)
        if quality_warning:
            context.warn(
                f"a classifier tells synthetic rows apart with ROC AUC >= {threshold} (real: {member:.3f}, "
                f"holdout: {non_member:.3f}): the synthetic data is easy to distinguish, so the ratio says "
                "little about memorisation (APT's synthetic_data_quality_warning)."
            )
        breakdown: dict[str, JSONValue] = {
            "memorisation_ratio": memo_ratio,
            "normalized_ratio": apt_ratio,
            "member_roc_auc_score": member,
            "non_member_roc_auc_score": non_member,
            "synthetic_data_quality_warning": quality_warning,
            "accuracy": {"member": acc[0], "non_member": acc[1]},
            "classifier": self.classifier,
            "expected_ratio_no_memorisation": 0.0,
            **sizes,
        }
        score = apt_ratio if self.mode == "apt" else memo_ratio
        return Outcome(score=score, breakdown=breakdown)

    def _apt(
        self, tables: Tables, context: Context
    ) -> tuple[float, float, tuple[float, float], dict[str, int]]:
        from sklearn.model_selection import train_test_split

        real, holdout, syn = (
            numeric_matrix(tables, n) for n in ("real", "holdout", "synthetic")
        )
        results = []
        for other in (real, holdout):
            other_train, other_test = train_test_split(
                other, test_size=0.5, random_state=42
            )
            syn_train, syn_test = train_test_split(syn, test_size=0.5, random_state=42)
            x_train = np.concatenate([other_train, syn_train])
            y_train = np.r_[
                np.ones(len(other_train), dtype=int),
                np.zeros(len(syn_train), dtype=int),
            ]
            x_test = np.concatenate([other_test, syn_test])
            y_test = np.r_[
                np.ones(len(other_test), dtype=int), np.zeros(len(syn_test), dtype=int)
            ]
            clf = make_classifier(self.classifier, random_state=0, apt=True)
            results.append(_fit_score(clf, x_train, y_train, x_test, y_test, context))
        sizes = {
            "n_real": len(real),
            "n_holdout": len(holdout),
            "n_synthetic": len(syn),
        }
        return results[0][0], results[1][0], (results[0][1], results[1][1]), sizes

    def _default(
        self, tables: Tables, context: Context
    ) -> tuple[float, float, tuple[float, float], dict[str, int]]:
        real, holdout, syn = one_hot_design(tables, ("real", "holdout", "synthetic"))
        rng = context.rng
        m = min(len(real), len(holdout))
        n_syn = min(m, len(syn))
        if min(m, n_syn) < 4:
            context.warn(
                f"only {min(m, n_syn)} rows per class; the AUCs are rough estimates."
            )
        aucs = np.zeros((2, self.n_repeats))
        accs = np.zeros_like(aucs)
        for rep in range(aucs.shape[1]):
            syn_rows = rng.permutation(len(syn))[:n_syn]
            syn_train, syn_test = np.array_split(syn_rows, 2)
            for side, other in enumerate((real, holdout)):
                rows = rng.permutation(len(other))[:m]
                other_train, other_test = np.array_split(rows, 2)
                x_train = np.concatenate([other[other_train], syn[syn_train]])
                y_train = np.r_[
                    np.ones(other_train.size, dtype=int),
                    np.zeros(syn_train.size, dtype=int),
                ]
                x_test = np.concatenate([other[other_test], syn[syn_test]])
                y_test = np.r_[
                    np.ones(other_test.size, dtype=int),
                    np.zeros(syn_test.size, dtype=int),
                ]
                clf = make_classifier(
                    self.classifier,
                    random_state=int(rng.integers(0, 2**31 - 1)),
                    solver=self.solver,
                )
                aucs[side, rep], accs[side, rep] = _fit_score(
                    clf, x_train, y_train, x_test, y_test, context
                )
        sizes = {
            "n_real": len(real),
            "n_holdout": len(holdout),
            "n_synthetic": len(syn),
            "sample_size": m,
        }
        return (
            float(aucs[0].mean()),
            float(aucs[1].mean()),
            (float(accs[0].mean()), float(accs[1].mean())),
            sizes,
        )
